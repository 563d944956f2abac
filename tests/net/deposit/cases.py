"""The cases of net/deposit/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403


def whole_run(nodes):
    """What a whole deposit-test run of this many nodes prints once: every part's outcome."""
    return {r"cells ran 3 instructions each through the sequencer": 1,
            r"a deposit into a read-only page was refused \(a page fault\), and landed once it was writable": 1,
            r"^\[n1\] deposit-test: a send from a page the sender may not read was refused: a page fault at the sender": 1,
            r"its sender stopped, the node's other connection went on; 300 flood cells landed in order": 1,
            r"said stop and no go came in \d+ ms; the send fails \(-ETIMEDOUT\)": 1,
            r"got the multicast cell and block": nodes - 1, r"RESULT deposit-test checks=\d+ failed=0": nodes}


CASES = [
    Cluster("deposit-test-4-shm", app="deposit-test", nodes=4, nic="shm", timeout=180,
            expect=[r"counters 400 and 400 after 4 nodes x 100 increments",
                    r"a block of 44 cells went in 1 frames of up to 617 cells"],
            absent=[r"FAILED", r"unexpected"],
            count=whole_run(4)),

    # Hybrid deposit: every primitive, every exception class (each checked byte for byte and
    # blocking only its own connection), a read storm whose READs wait for reply room, fetch-and-increment
    # and compare-and-swap under contention, a barrier of register operations.
    # (On the jumbo switch, frames of 7872 bytes: 147 cells each.)
    Cluster("deposit-test-2", app="deposit-test", nodes=2, timeout=180,
            expect=[r"counters 200 and 200 after 2 nodes x 100 increments",
                    r"a block of 44 cells went in 1 frames of up to 147 cells"],
            absent=[r"FAILED", r"unexpected"],
            count=whole_run(2)),
    Cluster("deposit-test-4", app="deposit-test", nodes=4, timeout=180,
            expect=[r"counters 400 and 400 after 4 nodes x 100 increments",
                    r"20 barrier rounds over 4 nodes"],
            absent=[r"FAILED", r"unexpected"],
            count=whole_run(4)),
    Cluster("deposit-test-4-faults", app="deposit-test", nodes=4, timeout=240,
            args="fault=drop:0.05,corrupt:0.01",
            expect=[r"counters 400 and 400", r"injected drop [1-9]\d*, dup 0, reorder 0, corrupt [1-9]"],
            absent=[r"FAILED", r"unexpected"],
            count=whole_run(4)),
    # At Ethernet's frames (frame=1514): a block's cells 27 to a frame, its 44 in two.
    # One member's stop holds it alone (6.4 with 3.2): node 3 blocks its end of the multicast
    # connection behind an exception and says stop; node 0's next cell goes to nodes 1 and 2 at
    # once and to node 3 at its go; every member ends with every cell once.
    Cluster("deposit-test-4-mcast-stop", app="deposit-test", nodes=4, nic="e1000", timeout=240,
            args="mcast_stop=1",
            expect=[r"^\[n0\] deposit-test: node 3 said stop: [1-9]\d* multicast cells went to the other members "
                    r"first, and to it at its go"],
            absent=[r"FAILED", r"unexpected"],
            count={r"deposit-test: node \d has the WRITE and the 100 increments sent behind the stop, once each": 3,
                   r"RESULT deposit-test checks=\d+ failed=0": 4}),
    Cluster("deposit-test-4-faults-e1000", app="deposit-test", nodes=4, nic="e1000", timeout=240,
            args="frame=1514 fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            expect=[r"counters 400 and 400", r"a block of 44 cells went in 2 frames of up to 27 cells"],
            absent=[r"FAILED", r"unexpected"],
            count=whole_run(4)),
    fuzz_smoke("cell", runs=30000),
]
