/*
 * What the seed generators share (usage of each: seed_<target> <dir>):
 * a seed written whole as a file of the directory, and the seed being
 * built byte by byte (out, olen), which save() writes as seed<i> and
 * empties.  One translation unit per generator: the buffer is the
 * including file's own.
 */
#ifndef TESTS_HOST_SEED_COMMON_H
#define TESTS_HOST_SEED_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SEED_UNUSED __attribute__((unused))

/* Whether the command line is the directory alone: 1, or 0 with the usage on stderr. */
static SEED_UNUSED int seed_args(int argc, char **argv)
{
	if (argc == 2)
		return 1;
	fprintf(stderr, "usage: %s DIR\n", argv[0]);
	return 0;
}

/* Writes n bytes from p as dir/name: 0, or 1 (and why, on stderr) when the file is not written whole. */
static SEED_UNUSED int seed_write(const char *dir, const char *name, const void *p, size_t n)
{
	char path[512];
	FILE *f;
	int bad;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!(f = fopen(path, "wb"))) {
		perror(path);
		return 1;
	}
	bad = fwrite(p, 1, n, f) != n;
	bad |= fclose(f) != 0;
	if (bad)
		perror(path);
	return bad;
}

/* The same as dir/seed<i>. */
static SEED_UNUSED int seed_write_nth(const char *dir, int i, const void *p, size_t n)
{
	char name[32];

	snprintf(name, sizeof name, "seed%d", i);
	return seed_write(dir, name, p, n);
}

/* The seed being built. */
static SEED_UNUSED uint8_t out[1 << 16];
static SEED_UNUSED size_t olen;

static SEED_UNUSED void b(int v)
{
	out[olen++] = (uint8_t)v;
}

static SEED_UNUSED void put(const void *p, size_t n)
{
	memcpy(out + olen, p, n);
	olen += n;
}

/* Writes the seed built as dir/seed<i> and starts the next. */
static SEED_UNUSED int save(const char *dir, int i)
{
	int bad = seed_write_nth(dir, i, out, olen);

	olen = 0;
	return bad;
}

/* The same as dir/name. */
static SEED_UNUSED int save_as(const char *dir, const char *name)
{
	int bad = seed_write(dir, name, out, olen);

	olen = 0;
	return bad;
}

#endif
