/*
 * A program's files on a node (kernel/files.c), through stdio as a
 * program written for Linux uses them: a file written, read back,
 * appended to, sought in, renamed and removed; /dev/stdout and /dev/null;
 * the errors a missing file gives.  Every rank does it with its own file
 * names; each check that fails prints what it got.  Ends with " No Errors"
 * on rank 0 when every rank passed.
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int errs;

#define CHECK(c, ...)                                \
	do {                                         \
		if (!(c)) {                          \
			errs++;                      \
			printf(__VA_ARGS__);         \
			printf("\n");                \
		}                                    \
	} while (0)

int main(int argc, char **argv)
{
	char name[64], other[64], line[128];
	int rank, total;
	struct stat st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(name, sizeof name, "results-%d.txt", rank);
	snprintf(other, sizeof other, "moved-%d.txt", rank);

	FILE *f = fopen(name, "r");
	CHECK(!f && errno == ENOENT, "fopen of a missing file: %p, errno %d", (void *)f, errno);

	f = fopen(name, "w");
	CHECK(f != NULL, "fopen %s for writing failed: errno %d", name, errno);
	if (f) {
		for (int i = 0; i < 1000; i++)
			fprintf(f, "%8d %12.6f\n", i, i * 0.5);	/* 22 bytes a line */
		CHECK(fclose(f) == 0, "fclose after writing failed");
	}
	CHECK(stat(name, &st) == 0 && st.st_size == 1000 * 22 && S_ISREG(st.st_mode),
	      "stat %s: size %ld, mode %o", name, (long)st.st_size, (unsigned)st.st_mode);

	f = fopen(name, "r");
	CHECK(f != NULL, "fopen %s for reading failed: errno %d", name, errno);
	if (f) {
		int n = 0, i;
		double x;
		while (fscanf(f, "%d %lf", &i, &x) == 2) {
			CHECK(i == n && x == n * 0.5, "line %d read back as %d %f", n, i, x);
			n++;
		}
		CHECK(n == 1000, "%d lines read back of 1000", n);
		CHECK(fseek(f, 22 * 500, SEEK_SET) == 0 && fgets(line, sizeof line, f) &&
		      strcmp(line, "     500   250.000000\n") == 0, "fseek to line 500 read '%s'", line);
		fclose(f);
	}

	f = fopen(name, "a");
	CHECK(f && fputs("the end\n", f) >= 0 && fclose(f) == 0, "appending failed");
	CHECK(stat(name, &st) == 0 && st.st_size == 1000 * 22 + 8, "size after append %ld",
	      (long)st.st_size);

	CHECK(rename(name, other) == 0, "rename %s to %s: errno %d", name, other, errno);
	CHECK(stat(name, &st) == -1 && errno == ENOENT, "the old name is still there");
	f = fopen(other, "r");
	CHECK(f && fseek(f, -8, SEEK_END) == 0 && fgets(line, sizeof line, f) && strcmp(line, "the end\n") == 0,
	      "the renamed file ends with '%s'", line);
	if (f)
		fclose(f);
	CHECK(remove(other) == 0 && stat(other, &st) == -1 && errno == ENOENT, "remove %s failed", other);

	FILE *out = fopen("/dev/stdout", "w");
	CHECK(out != NULL, "fopen /dev/stdout failed: errno %d", errno);
	if (out) {
		fprintf(out, "rank %d: a line through /dev/stdout\n", rank);
		fclose(out);
	}
	FILE *null = fopen("/dev/null", "w");
	CHECK(null && fprintf(null, "nothing\n") > 0 && fclose(null) == 0, "/dev/null refused a line");

	MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0 && total == 0)
		printf(" No Errors\n");
	MPI_Finalize();
	return errs != 0;
}
