"""The cases of lib/rpc/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [

    fuzz_smoke("rpc", runs=20000),
    Cluster("rpc-test-4-shm", app="rpc-test", nodes=4, nic="shm", timeout=180,
            expect=[r"RESULT rpc-test calls=1809 failed=0 rewritten=0 role=server", r"cluster: 4 nodes, status 0"],
            absent=[r"FAILED"]),

    # RPC over remote memory (paper 3.1): the paper's calls, multi-frame calls, concurrent
    # clients, write protection while a procedure runs, every call run exactly once; under
    # loss the reliable channel hides it, raw argument frames need the SACK transport.
    *[Cluster("rpc-test-%d" % n, app="rpc-test", nodes=n,
              expect=[r"RESULT rpc-test calls=%d failed=0 rewritten=0 role=server" % calls],
              absent=[r"FAILED"], count={r"RESULT rpc-test calls=\d+ failed=0 ": n})
      for n, calls in ((2, 607), (4, 1809))],
    Cluster("rpc-test-4-drop", app="rpc-test", nodes=4, args="fault=drop:0.05", timeout=180,
            expect=[r"RESULT rpc-test calls=1809 failed=0 rewritten=0 role=server masks=0",
                    r"injected drop [1-9]"], absent=[r"FAILED"],
            count={r"RESULT rpc-test calls=\d+ failed=0 rewritten=0 ": 4}),
    # Stacks per call and call-by-reference on e1000 too, and under every fault
    # the fabric injects: on the reliable channel nothing shows; with raw
    # frames the doubled and reordered ones are told apart by call number
    # and CRC, the lost ones rewritten.
    Cluster("rpc-test-3-e1000", app="rpc-test", nodes=3, nic="e1000", timeout=180,
            expect=[r"RESULT rpc-test calls=1208 failed=0 rewritten=0 role=server .* forged=[1-9]"],
            absent=[r"FAILED"], count={r"RESULT rpc-test calls=\d+ failed=0 ": 3}),
    Cluster("rpc-test-4-faults", app="rpc-test", nodes=4, timeout=180,
            args="fault=drop:0.03,dup:0.03,reorder:0.03",
            expect=[r"RESULT rpc-test calls=1809 failed=0 rewritten=0 role=server",
                    r"injected drop [1-9]\d*, dup [1-9]\d*, reorder [1-9]"], absent=[r"FAILED"],
            count={r"RESULT rpc-test calls=\d+ failed=0 ": 4}),
    Cluster("rpc-test-4-unreliable-faults-shm", app="rpc-test", nodes=4, nic="shm", timeout=180,
            args="transport=unreliable fault=drop:0.03,dup:0.03,reorder:0.03",
            expect=[r"RESULT rpc-test calls=1809 failed=0 rewritten=[1-9]\d* role=server"],
            absent=[r"FAILED"], count={r"RESULT rpc-test calls=\d+ failed=0 ": 4}),
    Cluster("rpc-test-4-unreliable-drop", app="rpc-test", nodes=4, timeout=180,
            args="transport=unreliable fault=drop:0.05",
            expect=[r"RESULT rpc-test calls=1809 failed=0 rewritten=[1-9]\d* role=server masks=[1-9]",
                    r"RESULT rpc-test calls=\d+ failed=0 rewritten=[1-9]\d* role=client"],
            absent=[r"FAILED"],
            count={r"RESULT rpc-test calls=\d+ failed=0 ": 4}),
    # The RPC table of the remote-memory paper 3.1.3 over remote memory and Madeleine: every
    # result checked; the speedup runner on a small case (a table and its JSON).
    Cluster("rpc-table-2", app="rpc", nodes=2, timeout=180,
            args="calls=100 transports=rmem,mad-tcp,mad-rmem,mad-req,mad-cell",
            expect=[r"RESULT rpc transport=rmem calls=100 simple_us=\S+ mw32_us=\S+ mw64_us=\S+ mw128_us=\S+ failed=0",
                    r"RESULT rpc transport=mad-tcp calls=100 .* failed=0",
                    r"RESULT rpc transport=mad-rmem calls=100 .* failed=0",
                    r"RESULT rpc transport=mad-req calls=100 .* failed=0",
                    r"RESULT rpc transport=mad-cell calls=100 .* failed=0",
                    r"paper: DEC 5000/200, ATM\s+93\s+300\s+488\s+698"],
            absent=[r"FAILED"]),
    Cluster("rpc-table-4", app="rpc", nodes=4, timeout=180, args="calls=50",
            count={r"RESULT rpc transport=\S+ calls=50 .* failed=0": 3}, absent=[r"FAILED"]),
]
