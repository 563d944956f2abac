"""The cases of net/rmem/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [

    fuzz_smoke("rmem", runs=30000),
    Cluster("rmem-test-4-shm", app="rmem-test", nodes=4, nic="shm",
            expect=[r"counters 1200 and 1200 after 4 nodes x 300 increments"], absent=[r"FAILED"],
            count={r"RESULT rmem-test checks=\d+ failed=0": 4}),
    # Long frames of the shared-memory link read where they lie in the ring: the rmem WRITEs
    # of the bulk rows (each READ's last block checked against node 1's memory) and the
    # hybrid deposit's blocks of cells (Madeleine's cell driver: every byte of every message
    # checked by node 1), none copied first; none under a key, whose tag is over bytes of the
    # node's own.
    Cluster("bulk-in-place-shm", app="bench", nodes=2, nic="shm",
            args="iters=20 only=bulk,mad-bandwidth stats=1",
            expect=[r"\[n1\] fabric: long frames of the shared ring taken where they lie [1-9]\d*, "
                    r"copied first 0", r"\[n1\] deposit: rx frames [1-9]\d*, cells [1-9]\d*; .* aal5 cells [1-9]",
                    r"cluster: 2 nodes, status 0"],
            absent=[r"is not what was sent", r"bench: row .* failed"],
            count={r"RESULT bench row=write-bw-4m .* mb_per_s=": 1,
                   r"RESULT bench row=mad-bw-req-4m .* mb_per_s=": 1,
                   r"RESULT bench row=mad-bw-cell-4m .* mb_per_s=": 1}),
    # A node writing blocks on the shared-memory link asks for no doorbell while it sends: node
    # 1's acknowledgements meanwhile raise no interrupt on node 0, which takes them between its
    # pieces (tests/net/rmem/busy_send.c).  Before, 16 blocks of 4 MiB took 4-20 here.  Spinning
    # nodes: in adaptive mode a writer that waits for credit long enough halts, and then its
    # doorbell is due.
    Cluster("busy-send-shm", app="busy-send", nodes=2, nic="shm", args="blocks=16 shm_wait=spin",
            timeout=120,
            expect=[r"\[n0\] RESULT busy-send blocks=16 mib=4 irqs=[0-2]$",
                    r"\[n1\] busy-send: 16 blocks notified, the last one intact",
                    r"\[n0\] ivshmem: .*taken after a send [1-9]", r"cluster: 2 nodes, status 0"]),
    Cluster("bulk-in-place-shm-keyed", app="bench", nodes=2, nic="shm", options=["--key", "random"],
            args="iters=20 only=bulk stats=1",
            expect=[r"RESULT bench row=write-bw-4m .* mb_per_s=", r"cluster: 2 nodes, status 0"],
            absent=[r"shared ring"]),
    # A captured run (boot/cluster --pcap) decoded by tshark with boot/tools/now-fabric.lua.
    Command("pcap/rmem-test-e1000", ["python3", "{root}/tests/net/fabric/pcap_test.py"], timeout=180,
            expect=[r"pcap: [1-9]\d* fabric frames decoded", r"pcap: 0 problems"],
            needs=("tshark",)),
    Command("pcap/rmem-test-keyed-virtio", ["python3", "{root}/tests/net/fabric/pcap_test.py", "--key",
                                            "--nic", "virtio"], timeout=180,
            expect=[r"pcap: [1-9]\d* fabric frames decoded", r"pcap: 0 problems"],
            needs=("tshark",)),
    Cluster("rmem-test-4-keyed", app="rmem-test", nodes=4, options=["--key", "random"],
            expect=[r"counters 1200 and 1200 after 4 nodes x 300 increments"], absent=[r"FAILED"],
            count={r"RESULT rmem-test checks=\d+ failed=0": 4}),

    # Protected remote memory: every operation and violation, revocation, contention.
    Cluster("rmem-test-2", app="rmem-test", nodes=2,
            expect=[r"RESULT rmem-test checks=\d+ failed=0"], absent=[r"FAILED"],
            count={r"RESULT rmem-test checks=\d+ failed=0": 2}),
    Cluster("rmem-test-4", app="rmem-test", nodes=4,
            expect=[r"counters 1200 and 1200 after 4 nodes x 300 increments"], absent=[r"FAILED"],
            count={r"RESULT rmem-test checks=\d+ failed=0": 4}),
    Cluster("rmem-test-4-drop", app="rmem-test", nodes=4, args="fault=drop:0.05", timeout=180,
            expect=[r"counters 1200 and 1200"], absent=[r"FAILED"],
            count={r"RESULT rmem-test checks=\d+ failed=0": 4}),
    Cluster("rmem-test-4-faults-e1000", app="rmem-test", nodes=4, nic="e1000", timeout=180,
            args="fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            expect=[r"counters 1200 and 1200"], absent=[r"FAILED"],
            count={r"RESULT rmem-test checks=\d+ failed=0": 4}),
]
