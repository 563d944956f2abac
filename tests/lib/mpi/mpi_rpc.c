/*
 * The Madeleine paper's RPC ping-pong (section 2.1.4) written on MPI as
 * the lower half of its Figure 6: a receiver posts MPI_Recv of a header
 * from MPI_ANY_SOURCE; the header names the request, its sender and the
 * size of its argument, an array of bytes; the handler then receives the
 * array with a second MPI_Recv of exactly that size from that sender
 * (the two cannot be one: the array's size is known only from the
 * header), and executes the same RPC back on the sender.  Figure 8 times
 * this against Madeleine's single message (tests/lib/mad/mad_bench.c,
 * mad-rpc-*).
 *
 * A plain MPI program: it builds with Debian's mpicc and runs under its
 * mpiexec (boot/tools/peers, between two Linux guests) as it builds with
 * boot/mpicc and runs under boot/mpirun (boot/tools/papers), unmodified.
 *
 * usage: mpi_rpc [-n ITERS] [-w WARMUP] [-s SIZE,SIZE,...]   (2 ranks)
 *
 * Rank 0 times ITERS round trips (an RPC to rank 1 and the one it sends
 * back) per size and prints, per size,
 *   RESULT mpi-rpc size=N iters=K median_us=M p10_us=A p90_us=B min_us=C
 * Every array is checked: its bytes differ from one call to the next, and
 * the header carries the call's number; a wrong one fails the run.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEADER_TAG 1
#define BODY_TAG 2
#define PING_PONG 1
#define MAX_SIZES 32

typedef struct {
	int request_type;
	int sender;
	int size;
	int seq;
} header_t;

static char *body, *want;
static int rank, peer, bad;

static void pattern(char *b, int n, int seq, int who)
{
	for (int i = 0; i < n; i++)
		b[i] = (char)(i * 7 + seq * 13 + who * 101 + (i >> 8));
}

/* Figure 6: the handler takes the argument, then runs the same RPC back on the sender. */
static void send_rpc(int dest, int size, int seq)
{
	header_t h = { PING_PONG, rank, size, seq };

	pattern(body, size, seq, rank);
	MPI_Send(&h, sizeof h, MPI_BYTE, dest, HEADER_TAG, MPI_COMM_WORLD);
	MPI_Send(body, size, MPI_BYTE, dest, BODY_TAG, MPI_COMM_WORLD);
}

static void handle_pingpong_rpc(const header_t *h, int answer)
{
	MPI_Recv(body, h->size, MPI_BYTE, h->sender, BODY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	pattern(want, h->size, h->seq, h->sender);
	if (memcmp(body, want, (size_t)h->size) != 0 && bad++ < 4)
		fprintf(stderr, "mpi_rpc: rank %d: call %d's %d-byte array is not what was sent\n", rank,
			h->seq, h->size);
	if (answer)
		send_rpc(h->sender, h->size, h->seq);
}

/* The receiving side's loop of Figure 6: a header from anyone, then its handler. */
static void serve_one(int answer)
{
	header_t h;

	MPI_Recv(&h, sizeof h, MPI_BYTE, MPI_ANY_SOURCE, HEADER_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	switch (h.request_type) {
	case PING_PONG:
		handle_pingpong_rpc(&h, answer);
		break;
	default:
		fprintf(stderr, "mpi_rpc: rank %d: request type %d\n", rank, h.request_type);
		bad++;
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int iters = 1000, warmup = 50, nsizes = 0, sizes[MAX_SIZES], nprocs, c, max = 0;
	char *list = "0,64,1024,4096,16384,65536";

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	while ((c = getopt(argc, argv, "n:w:s:")) != -1) {
		switch (c) {
		case 'n': iters = atoi(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		case 's': list = optarg; break;
		default:
			if (rank == 0)
				fprintf(stderr, "usage: mpi_rpc [-n ITERS] [-w WARMUP] [-s SIZE,...]\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	for (char *p = list; *p && nsizes < MAX_SIZES; nsizes++) {
		sizes[nsizes] = atoi(p);
		if (sizes[nsizes] < 0 || sizes[nsizes] > 64 * 1024 * 1024 || iters < 1) {
			if (rank == 0)
				fprintf(stderr, "mpi_rpc: a size from 0 to 64 MiB and at least one iteration\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		if (sizes[nsizes] > max)
			max = sizes[nsizes];
		while (*p && *p != ',')
			p++;
		if (*p == ',')
			p++;
	}
	if (nprocs != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_rpc: runs on 2 ranks, not %d\n", nprocs);
		MPI_Finalize();
		return 2;
	}
	peer = !rank;
	body = malloc((size_t)max + 1);
	want = malloc((size_t)max + 1);
	double *t = malloc(sizeof *t * (size_t)iters);
	if (!body || !want || !t) {
		fprintf(stderr, "mpi_rpc: no memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int k = 0; k < nsizes; k++) {
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < warmup + iters; i++) {
			if (rank == 0) {
				double t0 = MPI_Wtime();
				send_rpc(peer, sizes[k], i);
				serve_one(0);
				if (i >= warmup)
					t[i - warmup] = (MPI_Wtime() - t0) * 1e6;
			} else {
				serve_one(1);
			}
		}
		if (rank == 0) {
			qsort(t, (size_t)iters, sizeof *t, cmp);
			printf("RESULT mpi-rpc size=%d iters=%d median_us=%.2f p10_us=%.2f p90_us=%.2f "
			       "min_us=%.2f\n", sizes[k], iters, t[iters / 2], t[iters / 10],
			       t[iters * 9 / 10], t[0]);
			fflush(stdout);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	if (bad)
		fprintf(stderr, "mpi_rpc: rank %d: %d calls wrong\n", rank, bad);
	return bad ? 1 : 0;
}
