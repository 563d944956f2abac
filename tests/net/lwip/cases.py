"""The cases of net/lwip/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [
    # lwIP's input path through the project's netif: ARP, ICMP, UDP, fragments, TCP.
    fuzz_smoke("lwip"),

    # TCP data nobody reads pins lwIP's share of the packet pool and no more:
    # the fabric beside it loses nothing, barriers pass, no peer is declared dead.
    Cluster("lwip-pin-share-64", app="lwip-pin", nodes=2, args="lwip_bufs=64", timeout=180,
            expect=[r"RESULT lwip-pin pinned=\d+ share=64 fabric_messages=2000 bad=0 checks=\d+ failed=0"],
            absent=[r"FAILED"]),
]
CASES += [
    Cluster("lwip-pin-%s" % nic, app="lwip-pin", nodes=2, nic=nic, timeout=180,
            expect=[r"RESULT lwip-pin pinned=\d+ share=256 fabric_messages=2000 bad=0 checks=\d+ failed=0",
                    r"cluster: 2 nodes, status 0"] +
                   ([r"lwIP holds \d+ packet buffers \(share 256\), refused [1-9]"] if nic == "virtio" else []),
            absent=[r"FAILED"])
    for nic in ("virtio", "e1000")
]
CASES += [
    # TCP over lwIP: node 0 echoes 1 B..64 KiB through node 1, every byte checked; the MTU is
    # Ethernet's, or the jumbo switch's frames if every path passed them by then.
    Cluster("tcp-echo-%s" % nic, app="tcp-echo", nodes=2, nic=nic, timeout=120,
            expect=[TCP_ECHO % 1, TCP_ECHO % 65536,
                    r"^\[n0\] lwip: 10\.0\.0\.1/24 up on %s, MTU (1500|7858)$" % name,
                    r"^\[n1\] lwip: 10\.0\.0\.2/24 up on %s, MTU (1500|7858)$" % name,
                    r"cluster: 2 nodes, status 0"],
            absent=[r"bytes wrong", r"PANIC", r"EXCEPTION"])
    for nic, name in (("virtio", "virtio-net"), ("e1000", "e1000"))
]
CASES += [
    Cluster("tcp-echo-shm", app="tcp-echo", nodes=2, nic="shm", timeout=120,
            expect=[TCP_ECHO % 1, TCP_ECHO % 65536, r"^\[n0\] lwip: 10\.0\.0\.1/24 up on ivshmem, MTU 16384, no checksums$",
                    r"cluster: 2 nodes, status 0"],
            absent=[r"bytes wrong", r"PANIC", r"EXCEPTION"]),
]
