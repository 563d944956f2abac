"""The cases of lib/mad/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [
    # Madeleine's TCP driver: its set-up's hellos and its stream, with any bytes and read sizes.
    fuzz_smoke("madtcp"),

    fuzz_smoke("mad", runs=30000),

    fuzz_smoke("madcell", runs=10000),

    fuzz_smoke("madreq", runs=10000),
    # Madeleine over TCP: each connection proves its node id (under the key, with one), and
    # a silent connection or one that claims another node's id is closed, the set-up goes on.
    Cluster("mad-test-3-tcp-keyed-intruder", app="mad-test", nodes=3, args="driver=tcp intrude=1",
            options=["--key", "random"], timeout=180,
            expect=[r"^\[n2\] mad-test: intruding with connections \d+ \(silent\) and \d+"],
            count={r"RESULT mad-test driver=tcp messages=\d+ bytes=\d+ failures=0": 3,
                   r"^\[n0\] mad: tcp: a connection that did not prove a node's id": 2}),
    # Eight silent connections and one false claim ahead of node 2's own: node 0 lets them
    # prove themselves at once, each within its 5 s, so node 2's waits behind none of them
    # (one at a time, 45 s of silence passed its 30 s and it had to try again).  How many
    # node 0 takes before its set-up is complete is timing (the listen backlog is the
    # cluster's size: a SYN refused comes again later, maybe after node 2's own); one left
    # in the backlog then is refused with the listening socket.
    Cluster("mad-test-3-tcp-keyed-intruders", app="mad-test", nodes=3, args="driver=tcp intrude=8",
            options=["--key", "random"], timeout=180,
            expect=[r"^\[n2\] mad-test: intruding with connections \d+ \(silent, the first of them\) and \d+",
                    r"^\[n0\] mad: tcp: a connection that did not prove a node's id"],
            absent=[r"did not prove itself; trying again"],
            count={r"RESULT mad-test driver=tcp messages=\d+ bytes=\d+ failures=0": 3}),
    # A station in the middle (boot/tools/hostile's relay: ARP replies make each node send the other's
    # TCP through it) passes the set-up on as it is and changes one byte of a later Madeleine
    # message.  Without a key the change reaches the app; with one the message fails its tag,
    # its connection is closed, and both nodes end (the relay can stop them, never feed them).
    # e1000: its MAC filter keeps the hub's unchanged copy out.
    Cluster("mad-test-2-tcp-relayed", app="mad-test", nodes=2, nic="e1000", args="driver=tcp",
            options=["--hostile=--kinds relay --rate 20"], timeout=90, status=1,
            expect=[r"mad-test: FAILED .*(differs from the one sent|wrong at)",
                    r"cluster: hostile: .*relay [1-9]\d*\), heard \d+, relayed [1-9]\d*, changed 1$"],
            absent=[r"failed its tag"]),
    Cluster("mad-test-2-tcp-keyed-relayed", app="mad-test", nodes=2, nic="e1000", args="driver=tcp",
            options=["--key", "random", "--hostile=--kinds relay --rate 20"], timeout=90, status=1,
            expect=[r"^\[n\d\] mad-tcp: a message from node \d failed its tag \(its (header|body)",
                    r"cluster: hostile: .*relay [1-9]\d*\), heard \d+, relayed [1-9]\d*, changed 1$"],
            count={r"^\[n\d\] RESULT mad-test driver=tcp": 2},
            absent=[r"differs from the one sent|wrong at"]),
    # A chunk the receiver refuses (its ring write-inhibited) is never announced, and the
    # sender's next send says so (issue 25, defect 5).
    Cluster("mad-test-2-req-refused-chunk", app="mad-test", nodes=2, nic="e1000",
            args="driver=req refuse=1 big=0", timeout=180,
            expect=[r"^\[n1\] mad-test: node 0's refused chunk: no word taken, no message"],
            count={r"RESULT mad-test driver=req messages=\d+ bytes=\d+ failures=0": 2},
            absent=[r"FAILED"]),
    # Node 1 reaches node 0's segments and sends its first message (a body to deposit, after
    # node 0's READY) while node 0's set-up pauses after their export: that message must still
    # be seen. Its WRITE used to land before the ring's notification was set and count no
    # arrival: node 0 never took it, node 1's send timed out, and node 0 then waited for its
    # body for ever (the hang under a hostile station, which a busy host's stall exposed).
    Cluster("mad-test-2-rmem-export-gap", app="mad-test", nodes=2, nic="e1000",
            args="driver=rmem export_gap_ms=3000 big=0", timeout=120,
            count={r"RESULT mad-test driver=rmem messages=\d+ bytes=\d+ failures=0": 2},
            absent=[r"FAILED", r"does not answer"]),
    # A message whose sender gave it up (no READY in time) fails at its receiver, which
    # does not wait for its body for ever, and the next message comes whole.
    Cluster("mad-test-2-rmem-abandoned", app="mad-test", nodes=2, nic="shm",
            args="driver=rmem abandon=1 big=0", timeout=120,
            expect=[r"^\[n1\] mad-test: node 0's abandoned message failed here, not waited for; "
                    r"the next came whole",
                    r"^\[n1\] mad-rmem: node 0 gave up sending message \d+"],
            count={r"RESULT mad-test driver=rmem messages=\d+ bytes=\d+ failures=0": 2},
            absent=[r"FAILED"]),
    # A header slot that claims more early bytes than the eager area holds is dropped and
    # its message refused; the sender's send fails and its next body, early part and all,
    # comes whole.
    Cluster("mad-test-2-rmem-bad-eager", app="mad-test", nodes=2, nic="shm",
            args="driver=rmem bad_eager=1 big=0", timeout=120,
            expect=[r"^\[n1\] mad-test: node 0's header claiming too many early bytes dropped here; "
                    r"the next came whole",
                    r"^\[n1\] mad-rmem: malformed header slot \d+ from node 0: dropped",
                    r"^\[n0\] mad-test: node 0: rmem bodies sent with an early part [1-9]\d*, all by READY 0"],
            count={r"RESULT mad-test driver=rmem messages=\d+ bytes=\d+ failures=0": 2},
            absent=[r"FAILED"]),
    Cluster("mad-test-3-tcp-intruder", app="mad-test", nodes=3, args="driver=tcp intrude=1",
            timeout=180,
            count={r"RESULT mad-test driver=tcp messages=\d+ bytes=\d+ failures=0": 3,
                   r"^\[n0\] mad: tcp: a connection that did not prove a node's id": 2}),
]

# Madeleine (lib/mad.h) on each driver, the same app: Figures 4/5, every mode pair,
# 0 B to 1 MiB, misuse refused and the next message intact, none lost or doubled.
# 2 nodes: 70 messages each (73 sent, 3 misused on purpose); 4 nodes: 206.  One of them
# is packed once and sent to every other node (SND_LATER to many, mad_sendbuf_resend).
# mad-test turns Madeleine's debug mode on (every message with its pack descriptor, a
# wrong unpack refused at once); the 2-node shm cases run it with mad_debug=0, messages
# of data only, where the same misuse is refused at receive_data.
CASES += [
    Cluster("mad-test-%d-%s%s%s" % (n, d, "-faults" if f else "", "-shm" if nic == "shm" else ""),
            app="mad-test", nodes=n,
            args="driver=%s%s%s" % (d, " fault=drop:0.05,dup:0.01,reorder:0.01,corrupt:0.01" if f else "",
                                    " mad_debug=0" if (n, nic) == (2, "shm") else ""),
            nic=nic, timeout=240,
            expect=[r"I received the strings",
                    r"^\[n0\] mad-test: node 0 of %d on driver %s, %s" % (
                        n, d, "messages of data only" if (n, nic) == (2, "shm") else
                        r"messages with their pack descriptor \(mad_debug\)")] +
                   # req sends asynchronously: a MiB outruns the ring, send_poll says "not yet" (on
                   # some node: one whose receivers kept up with it all the run may never see it).
                   ([r"RESULT mad-test driver=req .* send_pending=[1-9]"] if d == "req" else []),
            absent=[r"FAILED", r"malformed"],
            count={r"RESULT mad-test driver=%s messages=%d bytes=\d+ failures=0 misuse=%d" %
                   (d, 70 if n == 2 else 206, 11 if n == 2 else 19): n})
    for (n, d, f, nic) in [(2, "tcp", 0, "virtio"), (4, "tcp", 0, "e1000"),
                           (2, "rmem", 0, "virtio"), (4, "rmem", 0, "virtio"), (4, "rmem", 1, "e1000"),
                           (2, "req", 0, "e1000"), (4, "req", 0, "virtio"), (4, "req", 1, "virtio"),
                           (2, "cell", 0, "virtio"), (4, "cell", 0, "e1000"), (4, "cell", 1, "virtio"),
                           (2, "tcp", 0, "shm"), (2, "rmem", 0, "shm"), (2, "req", 0, "shm"),
                           (2, "cell", 0, "shm"), (4, "req", 0, "shm"), (4, "cell", 1, "shm")]
]
CASES += [
    # The Madeleine paper's RPC as it writes it (2.1.4, Figure 6): the header unpacked
    # EXPRESS, the array CHEAPER into the buffer the header sizes, the same RPC executed back;
    # 20 round trips of 0 B to 256 KiB, every array compared.  Messages carry data only
    # (2.1.2): on the wire, Madeleine's 16-byte header is all it adds to a message.
    Cluster("mad-figure6-2-%s-%s" % (d, nic), app="mad-figure6", nodes=2, nic=nic,
            args="driver=%s" % d, timeout=150,
            expect=[r"^\[n0\] mad-figure6: 20 round trips of 262144 bytes, every array intact",
                    r"^\[n0\] mad-figure6: node 0 on driver %s, messages of data only" % d],
            absent=[r"FAILED", r"malformed", r"misuse"],
            count={r"RESULT mad-figure6 driver=%s rpcs=140 bytes=6664500 overhead=16 .* failures=0" % d: 2})
    for d in ("rmem", "req", "cell", "tcp") for nic in ("shm", "e1000")
]
CASES += [
    # A Madeleine stream recovers from a chunk its receiver refused: node 1 breaks node 0's
    # stream 64 KiB into a 4 MiB message (req: its ring refuses the WRITEs, so the words
    # too; cell: the deposits raise an exception); the message fails at both ends, the stream
    # starts again, and the 100 messages after it arrive whole and in order.
    Cluster("mad-recover-2-%s-%s" % (d, nic), app="mad-recover", nodes=2, nic=nic,
            args="driver=%s" % d, timeout=200,
            expect=[r"^\[n0\] mad-recover: the broken message's send failed \(-\d+\)",
                    r"^\[n1\] mad-recover: the broken message's receive failed \(-\d+\): at this end too",
                    r"^\[n1\] mad-recover: 100 messages after the broken one, every one intact and in order",
                    r"^\[n1\] RESULT mad-recover driver=%s send_failed=0 receive_failed=1 intact=100 failures=0" % d,
                    r"^\[n0\] RESULT mad-recover driver=%s send_failed=1 receive_failed=0 intact=0 failures=0" % d],
            absent=[r"FAILED"])
    for d in ("req", "cell") for nic in ("shm", "e1000")
]
CASES += [
    # The same, with node 0's req driver cutting every other chunk after its first WRITE (as
    # when the frames queued to go have no room): a cut chunk whose message the break fails
    # leaves WRITEs without their word, and their refusal held at node 1; the resynchronising
    # word takes it, so the first message after the break is not refused in its turn.
    Cluster("mad-recover-2-req-e1000-partial", app="mad-recover", nodes=2, nic="e1000",
            args="driver=req partial=1", timeout=200,
            expect=[r"^\[n0\] mad-recover: the broken message's send failed \(-\d+\)",
                    r"^\[n1\] mad-recover: 100 messages after the broken one, every one intact and in order",
                    r"^\[n1\] RESULT mad-recover driver=req send_failed=0 receive_failed=1 intact=100 failures=0",
                    r"^\[n0\] RESULT mad-recover driver=req send_failed=1 receive_failed=0 intact=0 failures=0"],
            absent=[r"FAILED", r"came where \d+ was due"])
]
CASES += [
    # Madeleine's debug mode: the same program, every message with its descriptor (a word a pack).
    Cluster("mad-figure6-2-req-shm-debug", app="mad-figure6", nodes=2, nic="shm",
            args="driver=req mad_debug=1", timeout=150,
            expect=[r"^\[n0\] mad-figure6: node 0 on driver req, messages with their pack descriptor"],
            count={r"RESULT mad-figure6 driver=req rpcs=140 bytes=6664500 overhead=24 .* failures=0": 2}),
]
CASES += [
    # The shared-memory link's 64 KiB slots: a pair agrees on frames of 65532 bytes, and a
    # 4 MiB message on each driver (64 such frames on the fabric's channel, blocks of 63 KiB
    # WRITEs for rmem) arrives intact with frames dropped, doubled and corrupted.
    Cluster("mad-test-2-%s-shm-64k-faults" % d, app="mad-test", nodes=2, nic="shm",
            args="driver=%s big=4194304 fault=drop:0.03,dup:0.03,corrupt:0.01" % d, timeout=300,
            expect=[r"I received the strings", r"frames to 65532 bytes"],
            absent=[r"FAILED", r"malformed"],
            count={r"RESULT mad-test driver=%s messages=70 bytes=\d+ failures=0 misuse=11" % d: 2})
    for d in ("rmem", "req", "cell", "tcp")
]
CASES += [
    # The same on the NICs with jumbo frames (boot/cluster's default switch passes 9234-byte
    # frames; frame=9014, the NICs' own longest, where the launcher would give 7872): each pair
    # agrees on 9014-byte frames once a probe of that length came through, and a 4 MiB message
    # on each driver arrives intact under faults (e1000: every driver; virtio and igb: rmem,
    # the block WRITEs in 8 KiB pieces).
    Cluster("mad-test-2-%s-jumbo-faults-%s" % (d, nic), app="mad-test", nodes=2, nic=nic,
            args="driver=%s big=4194304 frame=9014 fault=drop:0.03,dup:0.03,corrupt:0.01" % d,
            timeout=300,
            expect=[r"I received the strings", r"fabric: node 0 of 2, .*frames to 9014 bytes"],
            absent=[r"FAILED", r"malformed", r"no frame of \d+ bytes reached"],
            count={r"RESULT mad-test driver=%s messages=70 bytes=\d+ failures=0 misuse=11" % d: 2,
                   r"fabric: node \d takes frames of 9014 bytes from this node": 2,
                   # lwIP's segments follow, once every path passed long frames (tcp's MSS
                   # 8960): said when it rises, or in the line lwIP comes up with if later
                   r"lwip: (MTU 9000: every node's path takes frames of 9014 bytes|"
                   r"10\.0\.0\.\d+/24 up on [\w-]+, MTU 9000)$": 2,
                   # and Madeleine's tcp connections wait for that (fabric_wait_path)
                   **({r"mad-test: node \d: the shortest segment size of a TCP connection: 8960 bytes$": 2}
                      if d == "tcp" else {})})
    for d, nic in (("rmem", "e1000"), ("req", "e1000"), ("cell", "e1000"), ("tcp", "e1000"),
                   ("rmem", "virtio"), ("rmem", "igb"))
]
CASES += ([
    # virtio-net's 64 KiB frames on the launcher's Linux bridge (root: its taps at MTU 65521,
    # the most a tap takes): the pair agrees on 65535-byte frames once a probe of that length
    # came through, and a 4 MiB message on each driver with a body of its own arrives intact
    # under faults (rmem's WRITEs in 63 KiB pieces, req's chunks, cell's 1236 cells a frame).
    Cluster("mad-test-2-%s-64k-faults-virtio-tap" % d, app="mad-test", nodes=2, nic="virtio",
            args="driver=%s big=4194304 fault=drop:0.03,dup:0.03,corrupt:0.01" % d,
            options=["--switch", "tap"], timeout=300,
            expect=[r"I received the strings", r"fabric: node 0 of 2, .*frames to 65535 bytes"],
            absent=[r"FAILED", r"malformed", r"no frame of \d+ bytes reached"],
            count={r"RESULT mad-test driver=%s messages=70 bytes=\d+ failures=0 misuse=11" % d: 2,
                   r"fabric: node \d takes frames of 65535 bytes from this node": 2,
                   # lwIP keeps to the jumbo frames' MTU on a NIC (its window's segments)
                   r"lwip: (MTU 9000: every node's path takes frames of 65535 bytes|"
                   r"10\.0\.0\.\d+/24 up on [\w-]+, MTU 9000)$": 2})
    for d in ("rmem", "req", "cell")
] + [
    # A bridge whose ports pass 9000 bytes (--tap-mtu 9000) under a virtio pair that takes 64 KiB:
    # no 65535-byte probe gets through, so both nodes say so and try 9014, which does.
    Cluster("mad-test-2-rmem-virtio-tap-step", app="mad-test", nodes=2, nic="virtio",
            args="driver=rmem big=4194304", options=["--switch", "tap", "--tap-mtu", "9000"], timeout=300,
            expect=[r"I received the strings"],
            absent=[r"FAILED", r"frames of 1514 bytes to it"],
            count={r"RESULT mad-test driver=rmem messages=70 bytes=\d+ failures=0 misuse=11": 2,
                   r"fabric: node \d: no frame of 65535 bytes reached it in 5 tries: trying 9014$": 2,
                   r"fabric: node \d takes frames of 9014 bytes from this node": 2}),
] if os.geteuid() == 0 else [])
CASES += [
    # A switch that cuts frames to 1518 bytes (vde_switch, as a plain Ethernet switch drops
    # longer ones): both nodes find that no 9014-byte frame gets through, say so, and keep
    # to 1514; the 4 MiB message arrives all the same.
    Cluster("mad-test-2-rmem-e1000-jumbo-cut", app="mad-test", nodes=2, nic="e1000",
            args="driver=rmem big=4194304", options=["--switch", "vde"], timeout=300,
            expect=[r"I received the strings"],
            absent=[r"FAILED", r"takes frames of", r"lwip: MTU \d+: every node's path"],
            count={r"RESULT mad-test driver=rmem messages=70 bytes=\d+ failures=0 misuse=11": 2,
                   r"fabric: node \d: no frame of 9014 bytes reached it in 5 tries .*frames of "
                   r"1514 bytes to it": 2}),
    # One jumbo node and one that keeps to Ethernet's frames (frame=1514 on node 1 alone): the
    # pair uses 1514, probes nothing, and the message arrives.  Node 0 has the launcher's
    # frame for its jumbo switch (boot/cluster: JUMBO_SWITCH_FRAME), node 1's own word wins.
    Cluster("mad-test-2-rmem-virtio-jumbo-mixed", app="mad-test", nodes=2, nic="virtio",
            args="driver=rmem big=4194304 fault=drop:0.03,dup:0.03,corrupt:0.01",
            options=["--node-args", "1:frame=1514"], timeout=300,
            expect=[r"I received the strings", r"^\[n0\] fabric: node 0 of 2, .*frames to 7872 bytes",
                    r"^\[n1\] fabric: node 1 of 2, .*frames to 1514 bytes"],
            absent=[r"FAILED", r"takes frames of", r"no frame of \d+ bytes reached",
                    r"lwip: MTU \d+: every node's path"],
            count={r"RESULT mad-test driver=rmem messages=70 bytes=\d+ failures=0 misuse=11": 2}),
    # A node forging another's REQ notification (word naming node 0, sent by node 2) is
    # refused by node 1, and node 0's stream to node 1 stays in step.
    Cluster("mad-test-3-req-forge", app="mad-test", nodes=3, args="driver=req forge=1", timeout=240,
            expect=[r"I received the strings", r"\[n1\] mad-req: a word naming node 0 on node 2's queue: refused"],
            absent=[r"FAILED", r"malformed", r"out of step"],
            count={r"RESULT mad-test driver=req messages=138 bytes=\d+ failures=0 misuse=15": 3}),
]
CASES += [
    # Madeleine's tcp driver connects once both ends know how long their frames are
    # (fabric_wait_path): on e1000's jumbo switch its connections' segments are the long
    # frames' (7872 - 14 - 40), where one made before the probes came through kept 1460;
    # on a switch that cuts long frames, the probes give up first and 1460 it is.
    Cluster("mad-bw-tcp-e1000-segments", app="bench", nodes=2, nic="e1000",
            args="only=mad-bandwidth bw=tcp,256k bulkrounds=1 stats=1", timeout=180,
            count={r"^\[n[01]\] lwip: the shortest segment size of a connection: 7818 bytes$": 2},
            expect=[r"RESULT bench row=mad-bw-tcp nic=e1000 bytes=4194304 ", r"cluster: 2 nodes, status 0"]),
    Cluster("mad-bw-tcp-e1000-jumbo-cut-segments", app="bench", nodes=2, nic="e1000",
            args="only=mad-bandwidth bw=tcp,256k bulkrounds=1 stats=1", options=["--switch", "vde"],
            timeout=180,
            count={r"^\[n[01]\] lwip: the shortest segment size of a connection: 1460 bytes$": 2,
                   r"fabric: node \d: no frame of \d+ bytes reached it in 5 tries": 2},
            expect=[r"RESULT bench row=mad-bw-tcp nic=e1000 bytes=4194304 ", r"cluster: 2 nodes, status 0"]),
]
CASES += [
    # Each driver on a link of its own: every array checked byte for byte, each message's
    # pattern its own (a body left from an earlier message fails).
    Cluster("mad-pingpong-2-%s%s" % (d, "-" + nic if nic != "virtio" or d != "rmem" else ""),
            app="mad-pingpong", nodes=2, nic=nic, args="driver=%s iters=%d" % (d, iters),
            timeout=180,
            count={r"RESULT mad-pingpong driver=%s size=\d+ median_us=\S+ p99_us=\S+ n=\d+ "
                   r"checked=\d+ bad=0" % d: 8},
            expect=[r"RESULT mad-pingpong row=mad-bw-%s .* mb_per_s=\d+\.\d+" % d,
                    r"RESULT mad-pingpong driver=%s size=262144 .* checked=[1-9]\d* bad=0" % d],
            absent=[r"FAILED"])
    for (d, nic, iters) in [("rmem", "virtio", 40), ("tcp", "e1000", 20), ("req", "shm", 20),
                            ("cell", "virtio", 20),
                            # more null messages (32 bytes each in its buffer) than the
                            # 64 KiB buffer holds: the receiver's credit must come back
                            ("cell", "shm", 2200)]
    # The Ising optimizer (remote-memory paper 3.2.1): rows split over the nodes, boundary
    # spins by remote WRITE, neighbours in step by compare-and-swap; node 0 checks the
    # energy and every spin against the same optimizer alone on one node, bit for bit.
]
