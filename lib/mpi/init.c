/*
 * MPI's environment (MPI-3.1 chapter 8): Init and Finalize, the clock,
 * the processor's name, the version, Abort.  Every node is one rank of
 * MPI_COMM_WORLD: its node id is its rank, the cluster its world.
 *
 * The Madeleine driver MPI runs on is the command line's mpi= (rmem, the
 * default, req, cell or tcp; boot/mpirun --driver sets it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/node.h"
#include "kernel/panic.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lib/mpi/pt2pt.h"

int mpii_world_rank, mpii_world_size;
int mpii_initialized, mpii_finalized;
static int thread_level;
static struct thread *main_thread;
static const char *driver = "rmem";

static const char *const drivers[] = { "rmem", "req", "cell", "tcp" };

static int check_args(const struct cmdline *c, char *err, size_t errlen)
{
	const char *v = cmdline_get(c, "mpi");

	if (!v)
		return 0;
	for (size_t i = 0; i < sizeof drivers / sizeof drivers[0]; i++)
		if (strcmp(v, drivers[i]) == 0)
			return 0;
	snprintf(err, errlen, "mpi=%s: Madeleine's driver under MPI is rmem, req, cell or tcp", v);
	return -EINVAL;
}

static const struct argspec mpi_args[] = {
	{ "mpi", ARG_STR, 0, 0, "Madeleine's driver under MPI: rmem (default), req, cell or tcp" },
	{ NULL, 0, 0, 0, NULL },
};

static const struct arg_table mpi_table = { "mpi", mpi_args, check_args };
ARGS_REGISTER(mpi_table);

double mpii_wtime(void)
{
	return (double)cycles() / (double)tsc_hz;
}

static int init(int required, int *provided, const char *fn)
{
	int e;

	if (mpii_initialized || mpii_finalized)
		return mpii_err(NULL, MPI_ERR_OTHER, fn, "MPI is already %s", mpii_finalized ? "finalized" : "initialized");
	mpii_world_rank = node_id;
	mpii_world_size = num_nodes;
	driver = arg_str("mpi", "rmem");
	if ((e = mpii_err_init()) != MPI_SUCCESS || (e = mpii_type_init()) != MPI_SUCCESS ||
	    (e = mpii_op_init()) != MPI_SUCCESS || (e = mpii_comm_init()) != MPI_SUCCESS) {
		printf("mpi: %s: cannot set up the library (error class %d)\n", fn, e);
		return MPI_ERR_OTHER;
	}
	int r = mpii_pt2pt_start(driver);
	/* MPI_COMM_WORLD's handler (fatal by default): no rank goes on without its link. */
	if (r < 0)
		return mpii_err(NULL, MPI_ERR_OTHER, fn, "Madeleine's %s driver did not start (error %d)",
				driver, r);
	/* Every call is safe from any thread (one lock; Madeleine's state is per thread). */
	thread_level = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE :
		       required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
	if (provided)
		*provided = thread_level;
	main_thread = thread_current();
	mpii_initialized = 1;
	return MPI_SUCCESS;
}

int MPI_Init(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	return init(MPI_THREAD_SINGLE, NULL, "MPI_Init");
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	(void)argc, (void)argv;
	return init(required, provided, "MPI_Init_thread");
}

int MPI_Initialized(int *flag)
{
	if (!flag)
		return MPI_ERR_ARG;
	*flag = mpii_initialized;
	return MPI_SUCCESS;
}

int MPI_Finalized(int *flag)
{
	if (!flag)
		return MPI_ERR_ARG;
	*flag = mpii_finalized;
	return MPI_SUCCESS;
}

int MPI_Finalize(void)
{
	static const char fn[] = "MPI_Finalize";

	if (!mpii_initialized)
		return mpii_err(NULL, MPI_ERR_OTHER, fn, "MPI is %s", mpii_finalized ? "already finalized" : "not initialized");
	/* COMM_SELF's attributes go first (MPI-3.1 8.7.1), then every rank's traffic ends together. */
	mpii_comm_finalize();
	struct mpi_comm *w = mpii_comm_get(MPI_COMM_WORLD);
	if (w)
		mpii_barrier(w);
	mpii_pt2pt_stop();
	mpii_initialized = 0;
	mpii_finalized = 1;
	return MPI_SUCCESS;
}

int MPI_Query_thread(int *provided)
{
	if (!provided)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Query_thread", "Null pointer in parameter provided");
	*provided = thread_level;
	return MPI_SUCCESS;
}

int MPI_Is_thread_main(int *flag)
{
	if (!flag)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Is_thread_main", "Null pointer in parameter flag");
	*flag = thread_current() == main_thread;
	return MPI_SUCCESS;
}

double MPI_Wtime(void)
{
	return mpii_wtime();
}

double MPI_Wtick(void)
{
	return 1.0 / (double)tsc_hz;
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
	if (!name || !resultlen)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Get_processor_name", "Null pointer in parameter %s",
				name ? "resultlen" : "name");
	*resultlen = snprintf(name, MPI_MAX_PROCESSOR_NAME, "node%d", node_id);
	return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion)
{
	if (!version || !subversion)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Get_version", "Null pointer in parameter %s",
				version ? "subversion" : "version");
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
	if (!version || !resultlen)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Get_library_version", "Null pointer in parameter %s",
				version ? "resultlen" : "version");
	*resultlen = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
			      "NOW MPI %d.%d over Madeleine (driver %s), bare-metal x86-64 nodes", MPI_VERSION,
			      MPI_SUBVERSION, driver);
	return MPI_SUCCESS;
}

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	(void)info;
	if (size < 0)
		return mpii_err(NULL, MPI_ERR_SIZE, "MPI_Alloc_mem", "Invalid size %ld", (long)size);
	if (!baseptr)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Alloc_mem", "Null pointer in parameter baseptr");
	void *p = malloc(size ? (size_t)size : 1);
	if (!p)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "no memory for %ld bytes", (long)size);
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
	free(base);
	return MPI_SUCCESS;
}

int MPI_Pcontrol(const int level, ...)
{
	(void)level;
	return MPI_SUCCESS;
}

void mpii_abort(int code, const char *why)
{
	struct thread *t = thread_current();

	console_flush();
	if (t)
		t->conprog = 0;		/* the line below is the kernel's, for boot/mpirun */
	printf("mpi: rank %d aborts the job (code %d): %s\n", mpii_world_rank, code, why);
	/* Status 0 would read as success: an abort is a failure whatever its code. */
	kernel_exit(code & 0xff ? code & 0xff : 1);
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
	(void)comm;
	mpii_abort(errorcode, "MPI_Abort called");
}
