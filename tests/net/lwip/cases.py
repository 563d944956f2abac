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
# The window at work, lwIP's bulk rows one way (tcp-bw: 8 MiB in sends of 4 KiB to 4 MiB):
# on the shared-memory link the scaled window (lwipopts.h) lets node 0 have more in flight
# than the 64240 bytes an unscaled one allows; on a NIC the congestion window is held at
# TCP_NIC_INFLIGHT (64240), with at most the two segments an acknowledgement adds before
# the next one holds it again (frames of 7872 bytes at most: 64240 + 2 * 7832 = 79904).
NIC_FLIGHT = r"([1-9]\d{0,3}|[1-6]\d{4}|7[0-8]\d{3}|79[0-8]\d\d|7990[0-4])"
CASES += [
    Cluster("lwip-window-shm", app="bench", nodes=2, nic="shm", args="only=tcp-bw", timeout=120,
            expect=[r"row=tcp-bw-4m nic=ivshmem bytes=8388608 inflight_most=(6[5-9]\d{3}|[7-9]\d{4}|[12]\d{5}) ",
                    r"cluster: 2 nodes, status 0"]),
    # Its connection made once both ends' frames settled (fabric_wait_path): the long frames' segments.
    Cluster("lwip-window-e1000", app="bench", nodes=2, nic="e1000", args="only=tcp-bw stats=1", timeout=180,
            count={r"row=tcp-bw-(4k|16k|64k|256k|1m|4m) nic=e1000 bytes=8388608 inflight_most=%s " % NIC_FLIGHT: 6,
                   r"^\[n[01]\] lwip: the shortest segment size of a connection: 7818 bytes$": 2},
            expect=[r"cluster: 2 nodes, status 0"]),
]
# Bulk TCP over Ethernet's segments (frame=1514: MSS 1460) on a NIC: the receive window
# there (TCP_WND_NIC, lwipopts.h) is what a connection's mailbox holds, so a reader that
# lags never has a segment refused, and no segment is dropped for the sender to wait out
# a retransmission timer (with the shared-memory link's window, 2-6 MB/s and drops).
CASES += [
    Cluster("lwip-window-1500-e1000", app="bench", nodes=2, nic="e1000",
            args="only=tcp-bw frame=1514 stats=1", timeout=180,
            count={r"row=tcp-bw-(4k|16k|64k|256k|1m|4m) nic=e1000 bytes=8388608 ": 6,
                   r"^\[n[01]\] lwip: tcp xmit [1-9]\d* recv [1-9]\d* drop 0 ": 2},
            expect=[r"^\[n1\] lwip: tcp xmit \d+ recv [1-9]\d{4,} ",
                    r"^\[n[01]\] lwip: 10\.0\.0\.\d/24 up on e1000, MTU 1500$",
                    r"cluster: 2 nodes, status 0"],
            absent=[r"MTU 78\d\d"]),
]
