/*
 * Files for a program's stdio: open, read, write, lseek, close, stat,
 * fstat, unlink, rename (picolibc's fopen, fread, fwrite, fseek, remove and
 * rename end here).  A node has no disk: a file a program writes lives in
 * the node's memory (the heap) until the node stops, and can be read back,
 * rewritten, renamed and removed as on any system; nothing of it reaches
 * the host.  /dev/stdout and /dev/stderr are the program's stdout and
 * stderr (descriptors 1 and 2, the console), /dev/stdin is descriptor 0
 * (always at its end), and /dev/null takes and gives nothing.  So a program
 * that writes its results to a file named on its command line writes them
 * to the console with -o /dev/stdout, unmodified.
 *
 * One lock over the tables: a program's threads may open and close files
 * at once.  A descriptor's position is its own (no dup).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/sync.h"

#define MAX_FILES 64		/* files at once */
#define MAX_FDS 64		/* descriptors at once, 0 to 2 included */
#define NAME_LEN 128		/* bytes of a path, its 0 included */
#define FILE_LIMIT (256u << 20)	/* bytes of one file */

struct ramfile {
	char name[NAME_LEN];		/* "" once unlinked */
	uint8_t *data;
	size_t len, cap;
	int opens;			/* descriptors open on it */
	int used;
};

enum { D_FREE, D_FILE, D_NULL, D_OUT, D_IN };

struct desc {
	int kind;
	int flags;			/* open's O_ACCMODE and O_APPEND */
	struct ramfile *f;
	size_t pos;
	int out;			/* D_OUT: 1 (stdout) or 2 (stderr) */
};

static struct ramfile files[MAX_FILES];
static struct desc fds[MAX_FDS] = { [0] = { D_IN, O_RDONLY, NULL, 0, 0 },
				    [1] = { D_OUT, O_WRONLY, NULL, 0, 1 },
				    [2] = { D_OUT, O_WRONLY, NULL, 0, 2 } };
static struct mutex lock = MUTEX_INIT;

static int fail(int e)
{
	errno = e;
	return -1;
}

/* The descriptor fd, or NULL (errno EBADF).  Lock held. */
static struct desc *desc(int fd)
{
	if (fd < 0 || fd >= MAX_FDS || fds[fd].kind == D_FREE) {
		errno = EBADF;
		return NULL;
	}
	return &fds[fd];
}

/* A path's length, checked: -1 with errno set if it is not a name a file can have. */
static int name_ok(const char *path)
{
	if (!path)
		return fail(EFAULT);
	size_t n = strnlen(path, NAME_LEN);
	if (n == 0)
		return fail(ENOENT);
	if (n == NAME_LEN)
		return fail(ENAMETOOLONG);
	return 0;
}

static struct ramfile *lookup(const char *path)
{
	for (int i = 0; i < MAX_FILES; i++)
		if (files[i].used && files[i].name[0] && strcmp(files[i].name, path) == 0)
			return &files[i];
	return NULL;
}

static void release(struct ramfile *f)
{
	if (f->opens == 0 && !f->name[0]) {
		free(f->data);
		memset(f, 0, sizeof *f);
	}
}

/* The kind of a device path, or D_FREE for a file's name. */
static int device(const char *path, int *out)
{
	if (strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/fd/1") == 0) {
		*out = 1;
		return D_OUT;
	}
	if (strcmp(path, "/dev/stderr") == 0 || strcmp(path, "/dev/fd/2") == 0) {
		*out = 2;
		return D_OUT;
	}
	if (strcmp(path, "/dev/null") == 0)
		return D_NULL;
	if (strcmp(path, "/dev/stdin") == 0 || strcmp(path, "/dev/fd/0") == 0)
		return D_IN;
	return D_FREE;
}

int open(const char *path, int flags, ...)
{
	int acc = flags & O_ACCMODE, out = 0, fd, r = -1;
	struct ramfile *f = NULL;

	if (name_ok(path) < 0)
		return -1;
	if (acc != O_RDONLY && acc != O_WRONLY && acc != O_RDWR)
		return fail(EINVAL);
	mutex_lock(&lock);
	for (fd = 3; fd < MAX_FDS && fds[fd].kind != D_FREE; fd++)
		;
	int kind = device(path, &out);
	if (fd == MAX_FDS) {
		errno = EMFILE;
	} else if (kind == D_OUT && acc == O_RDONLY) {
		errno = EACCES;
	} else if (kind != D_FREE) {
		fds[fd] = (struct desc){ kind, flags & (O_ACCMODE | O_APPEND), NULL, 0, out };
		r = fd;
	} else if ((f = lookup(path)) && (flags & O_CREAT) && (flags & O_EXCL)) {
		errno = EEXIST;
	} else if (!f && !(flags & O_CREAT)) {
		errno = ENOENT;
	} else {
		if (!f) {
			for (int i = 0; i < MAX_FILES && !f; i++)
				if (!files[i].used)
					f = &files[i];
			if (f) {
				memset(f, 0, sizeof *f);
				f->used = 1;
				strcpy(f->name, path);
			}
		}
		if (!f) {
			errno = ENOSPC;
		} else {
			if ((flags & O_TRUNC) && acc != O_RDONLY)
				f->len = 0;
			f->opens++;
			fds[fd] = (struct desc){ D_FILE, flags & (O_ACCMODE | O_APPEND), f, 0, 0 };
			r = fd;
		}
	}
	mutex_unlock(&lock);
	return r;
}

int close(int fd)
{
	int r = 0;

	mutex_lock(&lock);
	struct desc *d = desc(fd);
	if (!d) {
		r = -1;
	} else if (fd > 2) {
		if (d->kind == D_FILE) {
			d->f->opens--;
			release(d->f);
		}
		*d = (struct desc){ D_FREE, 0, NULL, 0, 0 };
	}
	mutex_unlock(&lock);
	return r;
}

ssize_t read(int fd, void *buf, size_t n)
{
	ssize_t r = 0;

	mutex_lock(&lock);
	struct desc *d = desc(fd);
	if (!d || d->kind == D_OUT || (d->flags & O_ACCMODE) == O_WRONLY) {
		errno = EBADF;
		r = -1;
	} else if (n && !buf) {
		errno = EFAULT;
		r = -1;
	} else if (d->kind == D_FILE && d->pos < d->f->len) {
		size_t k = d->f->len - d->pos < n ? d->f->len - d->pos : n;
		memcpy(buf, d->f->data + d->pos, k);
		d->pos += k;
		r = (ssize_t)k;
	}
	mutex_unlock(&lock);
	return r;
}

/* Make room for end bytes in f; 0, or -1 with errno set.  Lock held. */
static int grow(struct ramfile *f, size_t end)
{
	if (end > FILE_LIMIT)
		return fail(EFBIG);
	if (end <= f->cap)
		return 0;
	size_t cap = f->cap ? f->cap : 4096;
	while (cap < end)
		cap *= 2;
	uint8_t *p = realloc(f->data, cap);
	if (!p)
		return fail(ENOSPC);
	f->data = p;
	f->cap = cap;
	return 0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t r = -1;
	int out = 0;

	mutex_lock(&lock);
	struct desc *d = desc(fd);
	if (!d || d->kind == D_IN || (d->flags & O_ACCMODE) == O_RDONLY) {
		errno = EBADF;
	} else if (n && !buf) {
		errno = EFAULT;
	} else if (d->kind == D_OUT) {
		out = d->out;
	} else if (d->kind == D_NULL) {
		r = (ssize_t)n;
	} else {
		struct ramfile *f = d->f;
		if (d->flags & O_APPEND)
			d->pos = f->len;
		if (grow(f, d->pos + n) == 0) {
			if (d->pos > f->len)
				memset(f->data + f->len, 0, d->pos - f->len);	/* a hole reads as zeros */
			memcpy(f->data + d->pos, buf, n);
			d->pos += n;
			if (d->pos > f->len)
				f->len = d->pos;
			r = (ssize_t)n;
		}
	}
	mutex_unlock(&lock);
	/* The console's own stream, outside the lock: it may block on the console. */
	if (out)
		r = (ssize_t)fwrite(buf, 1, n, out == 1 ? stdout : stderr);
	return r;
}

off_t lseek(int fd, off_t off, int whence)
{
	off_t r = -1;

	mutex_lock(&lock);
	struct desc *d = desc(fd);
	if (d && d->kind == D_NULL) {
		r = 0;
	} else if (d && d->kind != D_FILE) {
		errno = ESPIPE;
	} else if (d) {
		int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)d->pos :
			       whence == SEEK_END ? (int64_t)d->f->len : -1;
		if (base < 0 || (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)) {
			errno = EINVAL;
		} else if (base + off < 0 || base + off > (int64_t)FILE_LIMIT) {
			errno = EINVAL;
		} else {
			d->pos = (size_t)(base + off);
			r = (off_t)d->pos;
		}
	}
	mutex_unlock(&lock);
	return r;
}

static void fill(struct stat *st, int kind, const struct ramfile *f)
{
	memset(st, 0, sizeof *st);
	if (kind == D_FILE) {
		st->st_mode = S_IFREG | 0644;
		st->st_size = (off_t)f->len;
		st->st_nlink = f->name[0] ? 1 : 0;
	} else {
		st->st_mode = S_IFCHR | 0620;
		st->st_nlink = 1;
	}
	st->st_blksize = 4096;
}

int stat(const char *path, struct stat *st)
{
	int out, r = -1;

	if (name_ok(path) < 0)
		return -1;
	if (!st)
		return fail(EFAULT);
	mutex_lock(&lock);
	int kind = device(path, &out);
	struct ramfile *f = kind == D_FREE ? lookup(path) : NULL;
	if (kind != D_FREE || f) {
		fill(st, kind == D_FREE ? D_FILE : kind, f);
		r = 0;
	} else {
		errno = ENOENT;
	}
	mutex_unlock(&lock);
	return r;
}

int fstat(int fd, struct stat *st)
{
	int r = -1;

	if (!st)
		return fail(EFAULT);
	mutex_lock(&lock);
	struct desc *d = desc(fd);
	if (d) {
		fill(st, d->kind, d->f);
		r = 0;
	}
	mutex_unlock(&lock);
	return r;
}

int unlink(const char *path)
{
	int out, r = -1;

	if (name_ok(path) < 0)
		return -1;
	mutex_lock(&lock);
	struct ramfile *f = device(path, &out) == D_FREE ? lookup(path) : NULL;
	if (f) {
		f->name[0] = 0;		/* its data goes with its last descriptor */
		release(f);
		r = 0;
	} else {
		errno = device(path, &out) == D_FREE ? ENOENT : EACCES;
	}
	mutex_unlock(&lock);
	return r;
}

int rename(const char *from, const char *to)
{
	int out, r = -1;

	if (name_ok(from) < 0 || name_ok(to) < 0)
		return -1;
	mutex_lock(&lock);
	struct ramfile *f = device(from, &out) == D_FREE ? lookup(from) : NULL;
	if (!f) {
		errno = ENOENT;
	} else if (device(to, &out) != D_FREE) {
		errno = EACCES;
	} else {
		struct ramfile *old = lookup(to);
		if (old && old != f) {
			old->name[0] = 0;
			release(old);
		}
		strcpy(f->name, to);
		r = 0;
	}
	mutex_unlock(&lock);
	return r;
}
