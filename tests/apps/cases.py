"""The cases of apps/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [
    Cluster("ising-%d-grid%d%s" % (n, g, "-faults" if f else ""), app="ising", nodes=n, timeout=180,
            args="grid=%d%s" % (g, " fault=drop:0.05,dup:0.01,reorder:0.01,corrupt:0.01" if f else ""),
            expect=[r"RESULT ising nodes=%d grid=%d sweeps=40 energy=\S+ .* ok=1" % (n, g)],
            absent=[r"FAILED"])
    for (n, g, f) in [(1, 40, 0), (2, 20, 0), (4, 80, 0), (4, 40, 1), (8, 40, 0)]
]
CASES += [
    # The circuit simulator (remote-memory paper 3.2.2): Chandy-Misra with null messages over
    # event rings written remotely; node 0 checks every output change (time and value)
    # against a sequential simulation on one node and every sum or product against the
    # arithmetic.  Seed 1: 100 vectors of adder32 are 27582 events, 20 are 5634; 10 of mul16
    # (1440 gates) 173520; 5 of mul32 (5952) 962187.  ring=8 batch=1: the smallest rings,
    # written back every 2 records.
    Cluster("circuit-%d-%s" % (n, tag), app="circuit", nodes=n, nic=nic, timeout=240, args=args,
            expect=[r"RESULT circuit nodes=%d place=%s circuit=%s gates=%d vectors=%d events=%d "
                    r"null_messages=%s ms=\d+\.\d+ ok=1" %
                    (n, "random" if "random" in args else "linear", ckt,
                     {"adder32": 225, "mul16": 1440, "mul32": 5952}[ckt],
                     vec, ev, "0" if n == 1 else r"\d+")],
            absent=[r"FAILED"])
    for (n, tag, args, nic, ckt, vec, ev) in [
        (1, "adder32", "", "virtio", "adder32", 100, 27582),
        (2, "linear", "", "virtio", "adder32", 100, 27582),
        (2, "random-e1000", "place=random vectors=20", "e1000", "adder32", 20, 5634),
        (2, "ring8", "place=random vectors=20 ring=8 batch=1", "virtio", "adder32", 20, 5634),
        (4, "linear", "", "virtio", "adder32", 100, 27582),
        (4, "random", "place=random vectors=20", "virtio", "adder32", 20, 5634),
        (4, "random-drop", "place=random vectors=20 fault=drop:0.05", "virtio", "adder32", 20, 5634),
        (4, "mul16", "circuit=mul16 vectors=10", "e1000", "mul16", 10, 173520),
        (4, "mul32-random", "circuit=mul32 vectors=5 place=random", "virtio", "mul32", 5, 962187),
        (8, "linear", "", "virtio", "adder32", 100, 27582)]
]
CASES += [
    # A grid the node's memory cannot hold: said, and the run fails.
    Cluster("ising-1-no-memory", app="ising", nodes=1, args="grid=2000 sweeps=1", status=1,
            expect=[r"ising: node 0: no memory for its 2000 rows of a 2000x2000 grid"]),
    # The check itself: one output change inverted on node 0 must fail the run.
    Cluster("circuit-2-checker", app="circuit", nodes=2, args="flip=100", status=1,
            expect=[r"circuit: FAILED: output change \d+: expected s\d+=\d at \d+, got",
                    r"RESULT circuit nodes=2 .* ok=0"]),
    # The default make run: Ising 1000x1000 in three rounds, each beside the one-node run, the
    # median's speedup line with its ceiling (boot/cluster passes host_cpus), then the circuit simulator.
    Cluster("tour-4", app="tour", nodes=4, timeout=240,
            count={r"tour: node \d of 4, tsc \d+\.\d{3} MHz": 4,
                   r"tour: round \d of 3: 4 nodes \d+\.\d+ ms, alone on node 0 \d+\.\d+ ms, speedup \d+\.\d\d": 3},
            expect=[r"tour: ising 1000x1000: energy \S+, bit for bit the same as the one-node run",
                    r"tour: ising 1000x1000 on 4 nodes: \d+\.\d+ ms; alone on node 0: \d+\.\d+ ms "
                    r"\(the median of 3 rounds\); speedup \d+\.\d\d \(ceiling [12]: 4 nodes on \d+ host CPUs?\)",
                    r"RESULT tour part=ising nodes=4 grid=1000 sweeps=6 rounds=3 .* ok=1",
                    r"RESULT tour part=circuit nodes=4 .* ok=1", r"tour: every result checked"],
            absent=[r"FAILED"]),
]
