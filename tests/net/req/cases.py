"""The cases of net/req/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [
    Cluster("req-stress-4-shm", app="req-stress", nodes=4, nic="shm", timeout=180,
            expect=[r"RESULT req-stress enqueued=12000 dequeued=12000 lost=0 dup=0 fifo_violations=0 "
                    r"overflows=\d{3,} deferred_overflows=[1-9]"], absent=[r"FAILED"]),
    Command("pcap/req-stress-e1000", ["python3", "{root}/tests/net/fabric/pcap_test.py", "--app",
                                      "req-stress"], timeout=180,
            expect=[r"pcap: ops .*'req\.1': [1-9]", r"pcap: 0 problems"], needs=("tshark",)),

    # Remote enqueue: overflows by the thousand, some during dequeues; FIFO, exactly once.
    Cluster("req-stress-4", app="req-stress", nodes=4, timeout=180,
            expect=[r"RESULT req-stress enqueued=12000 dequeued=12000 lost=0 dup=0 fifo_violations=0 "
                    r"overflows=\d{3,} deferred_overflows=[1-9]"], absent=[r"FAILED"]),
    Cluster("req-stress-4-faults", app="req-stress", nodes=4, timeout=240,
            args="fault=drop:0.05,reorder:0.02",
            expect=[r"RESULT req-stress enqueued=12000 dequeued=12000 lost=0 dup=0 fifo_violations=0 "
                    r"overflows=\d{3,} deferred_overflows=[1-9]"], absent=[r"FAILED"]),
    # The same with the queue's overflow copies capped at 4 KiB: REQs held back, none lost.
    Cluster("req-stress-4-cap", app="req-stress", nodes=4, timeout=180, args="cap=4096",
            expect=[r"RESULT req-stress enqueued=12000 dequeued=12000 lost=0 dup=0 fifo_violations=0 "
                    r"overflows=\d{3,} deferred_overflows=\d+",
                    r"overflow cap 4096 bytes reached [1-9]\d* times, copies held at most \d+"],
            absent=[r"FAILED"]),
    Cluster("req-stress-2-e1000", app="req-stress", nodes=2, nic="e1000", timeout=180,
            expect=[r"lost=0 dup=0 fifo_violations=0 overflows=\d{3,} deferred_overflows=[1-9]"],
            absent=[r"FAILED"]),
    fuzz_smoke("req", runs=50000),
]
