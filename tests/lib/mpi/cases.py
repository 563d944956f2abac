"""The cases of lib/mpi/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

# A user's own MPI program, as it would build with Debian's mpicc, copied to a folder outside
# the checkout, built there with boot/mpicc and run with boot/mpirun -np 4: its output lines
# (prefixed with their ranks), its checks and its status (tests/lib/mpi/progs/ring.c); on shm also
# over each other Madeleine driver (tcp: the receiving thread's select is cut short when a
# program's thread takes the receive over).
CASES = [
    Command("mpi/own-program-%s%s" % (nic, "-" + drv if drv else ""), ["bash", "-c",
            "d=$(mktemp -d) && trap 'rm -rf $d' EXIT && cp {root}/tests/lib/mpi/progs/ring.c $d && cd $d && "
            "{root}/boot/mpicc -O2 ring.c -o ring.elf -lm && {root}/boot/mpirun -np 4 --nic %s%s ring.elf"
            % (nic, " --driver " + drv if drv else "")], timeout=240,
            expect=[r"^\[0\] ring: 4 hops, every value came back, sum 46$",
                    r"^\[0\] allreduce: 8 on every rank$",
                    r"^\[3\] alltoallv: 22 ints from 4 ranks, every one checked$",
                    r"^\[0\]  No Errors$"],
            absent=[r"mpirun: rank", r"rank \d+: .*: got"])
    for nic, drv in (("shm", None), ("virtio", None), ("shm", "req"), ("shm", "cell"), ("shm", "tcp"))
]
# As root, the same program with its nodes' e1000s on the launcher's Linux bridge (mpirun
# --switch tap: the switch make bench gives NetPIPE there).
CASES += ([
    Command("mpi/own-program-e1000-tap", ["bash", "-c",
            "d=$(mktemp -d) && trap 'rm -rf $d' EXIT && cp {root}/tests/lib/mpi/progs/ring.c $d && cd $d && "
            "{root}/boot/mpicc -O2 ring.c -o ring.elf -lm && "
            "{root}/boot/mpirun -np 4 --nic e1000 --switch tap -v ring.elf"], timeout=240,
            expect=[r"^\[0\] ring: 4 hops, every value came back, sum 46$", r"^\[0\]  No Errors$",
                    # The bridge's ports pass the NICs' 9014-byte frames (the jumbo switch's 7872).
                    r"^\[n0\] fabric: node 0 of 4, .* frames to 9014 bytes,"],
            absent=[r"mpirun: rank", r"rank \d+: .*: got"]),
] if os.geteuid() == 0 else [])
CASES += [
    # One rank's exit(3) is the job's status 3, and mpirun names the rank and its status.
    Command("mpi/exit-status", own_program("exit3", "-np 3 --grace 2"), status=3, timeout=180,
            expect=[r"^\[2\] rank 2: exit\(3\)$", r"^mpirun: rank 2 exited with status 3$",
                    r"^mpirun: ranks 0, 1 stopped after rank 2 failed"]),
    # A program's files (kernel/files.c): written, read back, sought in, appended to, renamed
    # and removed through stdio on every rank; /dev/stdout is the console, /dev/null takes all.
    Command("mpi/files", own_program("files", "-np 2"), timeout=180,
            expect=[r"^\[0\] rank 0: a line through /dev/stdout$", r"^\[1\] rank 1: a line through /dev/stdout$",
                    r"^\[0\]  No Errors$"]),
    # NetPIPE's NPmpi (Debian's netpipe source, make netpipe), unmodified, on 2 shm nodes: every
    # size from 1 to 1024 bytes measured, its output file /dev/stdout (np.out's lines: bytes,
    # Mbps, seconds).  Its figures are make bench's business; here, that it runs and reports.
    Command("mpi/netpipe-shm", ["{root}/boot/mpirun", "-np", "2", "{build}/netpipe/NPmpi.elf",
                                "-u", "1024", "-p", "0", "-o", "/dev/stdout"], timeout=240,
            expect=[r"^\[0\] Now starting the main loop$",
                    r"^\[0\]\s+0:\s+1 bytes\s+\d+ times -->\s+[\d.]+ Mbps in\s+[\d.]+ usec$",
                    r"^\[0\]\s+19:\s+1024 bytes\s+\d+ times -->\s+[\d.]+ Mbps in\s+[\d.]+ usec$",
                    r"^\[0\]\s+1 [\d.]+\s+[\d.]+$", r"^\[0\]\s+1024 [\d.]+\s+[\d.]+$"],
            absent=[r"Can't open", r"mpirun: rank"]),
    # Bad arguments: the class MPICH raises, with a message naming the call; with the default
    # handler a bad rank ends the job, named.
    Command("mpi/bad-arguments", own_program("badargs", "-np 2", "fatal"), status=1, timeout=180,
            expect=[r"^\[0\] rank: MPI_Send: Invalid rank", r"^\[0\] tag: MPI_Send: ",
                    r"^\[0\] count: MPI_Send: ", r"^\[0\] datatype: MPI_Send: ",
                    r"^\[0\] communicator: MPI_Send: ", r"^\[0\] buffer: MPI_Send: ",
                    r"^\[0\] root: MPI_Bcast: ", r"^\[0\] op: MPI_Reduce: ", r"^\[0\]  No Errors$",
                    r"^\[1\] Fatal error in MPI_Send: Invalid rank",
                    r"^mpirun: rank 1 aborted the job \(code 1\): .*MPI_Send"]),
    # A job of one rank over the tcp driver, which then has no connection at all: sends to
    # itself and nonblocking collectives complete by kicking the driver's wait, which must
    # end at the kick (a wait that slept out its timeout made MPICH's coll/nonblocking3 on one
    # rank take more than 180 s); e1000, so that lwIP and the tcp driver are up.
    Command("mpi/one-rank-tcp", own_program("alone", "-np 1 --nic e1000 --driver tcp --timeout 60"),
            timeout=120,
            expect=[r"^\[0\] rank 0: 1000 messages to itself and 1000 nonblocking allreduces on 1 rank, every "
                    r"value checked$", r"^\[0\]  No Errors$"],
            absent=[r"mpirun: "]),
    # A rank that dies: the other's receive from it fails (MPI_ERR_PROC_FAILED), it does not hang.
    Command("mpi/dead-rank", own_program("deadpeer", "-np 2 --timeout 90"), timeout=180,
            expect=[r"^\[1\] rank 1: leaving without a word$",
                    r"^\[0\] rank 0: MPI_Recv from rank 1 returned class 101 after",
                    r"^\[0\]  No Errors$"]),
    # Cancelled sends (MPI-3.1 3.8.4): a rendezvous, a synchronous and a self send nobody receives
    # are cancelled and their Waits return; one already received is not cancelled and arrives.
    Command("mpi/cancel-send", own_program("cancelsend", "-np 2 --timeout 60"), timeout=120,
            expect=[r"^\[0\] rank 0: a rendezvous send nobody receives cancelled$",
                    r"^\[0\] rank 0: a synchronous send nobody receives cancelled$",
                    r"^\[0\] rank 0: a synchronous send to itself cancelled$",
                    r"^\[0\] rank 0: a send already received not cancelled$",
                    r"^\[0\]  No Errors$"]),
    # Dynamic windows (regions attached at any time, found by absolute address, one refused
    # outside every region, one attached over another refused) and shared windows (a
    # communicator of one per node; across nodes refused with MPI_ERR_RMA_SHARED), and
    # accumulates of 16-byte elements (long double, MPI_DOUBLE_INT) from every rank at once.
    Command("mpi/dynamic-shared-windows", own_program("dynwin", "-np 3 --timeout 60"), timeout=120,
            expect=[r"^\[0\]  No Errors$"], absent=[r"^\[\d\] rank \d: "]),
    # Accumulates of many elements (lib/mpi/win.c atomic_words, net/rmem's blocks of compare-and-
    # swaps): 4 ranks add 20000 ints each to rank 0's at once under a shared lock, Fetch_and_op
    # on some of the same ints among them, and none is lost; bytes XORed from the middle of a
    # word; doubles summed under the exclusive lock, Get_accumulate giving the old ones.
    Command("mpi/accumulate-many", own_program("accmany", "-np 4 --timeout 60"), timeout=120,
            expect=[r"^\[0\] ints: 20000 from 4 ranks, 4 rounds, with Fetch_and_op among them: none lost$",
                    r"^\[0\] bytes: 10001 XORed by 4 ranks from byte 3 of a word$",
                    r"^\[0\] doubles: 3000 summed by 4 ranks under the exclusive lock$",
                    r"^\[0\]  No Errors$"], absent=[r"^\[\d\] rank \d: "]),
    # A job that hangs: mpirun's timeout names the ranks still running and where each was, from
    # the NMI dump boot/cluster asks every node for before it kills it.
    Command("mpi/timeout-says-where", own_program("hang", "-np 2 --timeout 15"), status=124, timeout=120,
            expect=[r"^\[1\] rank 1: waiting$",
                    r"^mpirun: timeout after 15 s: ranks 0, 1 still running, stopped$",
                    r"^mpirun: rank 0 was blocked in .*< MPI_Finalize\+0x[0-9a-f]+ < main\+",
                    r"^mpirun: rank 1 was blocked in .*< MPI_Recv\+0x[0-9a-f]+ < main\+"]),
    # MPICH's own test suite (test/mpi of Debian 12's mpich source), the tests the library must
    # pass (tests/lib/mpi/named.txt), and the rma tests MPI's one-sided windows on remote memory
    # (lib/mpi/win.c) pass so far (tests/lib/mpi/rma.txt: the set; tests/lib/mpi/rma-more.txt:
    # dynamic and shared windows, accesses across attached regions, a thousand windows, info
    # hints, wide pair types), on the shared-memory link: one run of the sets, two jobs at once
    # to the end (two runs, one after the other, left a CPU idle while each one's last jobs ran).
    # A run whose testlist line asks for more than 5 ranks runs on 5 (coll7 needs 5, a divisor of
    # 10; bcasttest, redscat2, uoplong and allred ask for up to 16): time, not coverage.
    Command("mpi/mpich-named-rma-shm", ["python3", "{root}/tests/lib/mpi/runtests.py", "--tests",
                                        "{root}/tests/lib/mpi/named.txt,{root}/tests/lib/mpi/rma.txt,"
                                        "{root}/tests/lib/mpi/rma-more.txt", "--nic",
                                        "shm", "--jobs", "2", "--cap-np", "5", "--out", "{build}/tests/mpi-named"],
            timeout=1500, expect=[r"^rma: 43 passed, 0 failed, 0 skipped$",
                                  r"^114 passed, 0 failed, 0 skipped$"], alone=True),
]
