"""The cases of net/fabric/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [

    # Fuzz targets, briefly, over their seeds and every input that once
    # crashed them (tests/net/fabric/regressions); `make fuzz` runs them for long.
    fuzz_smoke("fabric", runs=20000, regressions="regressions"),

    # The kernel's receive path with three simulated peers, keyed and not.
    fuzz_smoke("fabric_rx"),
    # On a lossless link the channel drops CRCs and retransmission timers; fault= on a node
    # makes its link lossy, and its peers talk to it with both again (and nothing is lost).
    Cluster("fabric-stress-4-shm", app="fabric-stress", nodes=4, nic="shm",
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4,
                   r"lossless link \(no CRC, acks for credit\)": 4}),
    Cluster("fabric-stress-4-shm-faults", app="fabric-stress", nodes=4, nic="shm", timeout=180,
            args="fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            expect=[r"injected drop [1-9]\d*, dup [1-9]\d*, reorder [1-9]\d*, corrupt [1-9]\d*"],
            absent=[r"lossless link"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4}),
    Cluster("fabric-stress-4-shm-one-lossy", app="fabric-stress", nodes=4, nic="shm", timeout=180,
            args="fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01 fault_node=2",
            expect=[r"^\[n2\] fabric: injected drop [1-9]\d*, dup [1-9]\d*, reorder [1-9]\d*, corrupt [1-9]"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4,
                   r"lossless link \(no CRC, acks for credit\)": 3}),
    Cluster("fabric-stress-16-shm", app="fabric-stress", nodes=16, nic="shm", timeout=240,
            count={r"RESULT fabric-stress sent=30000 received=30000 lost=0 dup=0 misordered=0": 16}),
    # The shared memory is writable by any process that opens it: the ivshmem server
    # zeroes frames' stamps and lengths and moves published heads while the nodes stream.
    # Every frame lost in the link is sent again (SACK, quiet timer), rings are put right.
    Cluster("fabric-stress-4-shm-damaged", app="fabric-stress", nodes=4, nic="shm", timeout=240,
            args="count=20000", options=["--shm-damage", "2"],
            expect=[r"cluster: ivshmem-server: damaged [1-9]\d* frames, moved [1-9]\d* heads",
                    r"damaged slots skipped [1-9]", r"heads put back [1-9]"],
            count={r"RESULT fabric-stress sent=60000 received=60000 lost=0 dup=0 misordered=0": 4}),
    # The key against a co-resident writer: the ivshmem server flips a payload byte in the
    # slot each node is about to fill and in the one it is about to read, all the time.
    # A keyed frame is sealed in the sender's own memory and checked on the receiver's own
    # copy, so a change made in the ring fails its tag (bad_mac), is sent again, and no
    # changed byte is delivered.  (Sealed in the slot, as before, 190 of 5000 were.)
    Cluster("fabric-stress-2-shm-keyed-raced", app="fabric-stress", nodes=2, nic="shm",
            timeout=180, args="count=5000", options=["--key", "random", "--shm-race", "payload"],
            expect=[r"cluster: ivshmem-server: raced [1-9]\d* writes", r"bad_mac [1-9]"],
            count={r"RESULT fabric-stress sent=5000 received=5000 lost=0 dup=0 misordered=0": 2}),
    # A co-resident writer at the host's full speed keeps every slot of the ring from n1 to
    # n0 stamped as a bad frame ahead of n0's head for 2 s: each counts against the polling
    # budget, so no poll takes more than its 64 (interrupts off); before, one poll took
    # 479,058.  The frames it destroyed are sent again once it stops.
    Cluster("fabric-stress-2-shm-stamps-raced", app="fabric-stress", nodes=2, nic="shm",
            timeout=120, args="count=5000", options=["--shm-race", "stamps"],
            expect=[r"cluster: ivshmem-racer: stamped [1-9]\d* slots ahead of node 0's head",
                    r"\[n0\] ivshmem: .*bad lengths [1-9]\d*, .*most bad slots in one poll \(its budget 64\) "
                    r"(?:[1-9]|[1-5][0-9]|6[0-4])$", r"cluster: 2 nodes, status 0"],
            count={r"RESULT fabric-stress sent=5000 received=5000 lost=0 dup=0 misordered=0": 2}),
    # 64 nodes on the shared-memory link (4 slots a ring, a window of 4 frames a peer): the
    # acks that free credit get through a ring full of data, and discovery backs off.
    Cluster("fabric-stress-64-shm", app="fabric-stress", nodes=64, nic="shm", timeout=400,
            args="count=20",
            count={r"RESULT fabric-stress sent=1260 received=1260 lost=0 dup=0 misordered=0": 64}),
    # Multicast as one frame (hybrid deposit 3.2): node 0's 201 multicast cells to nodes 1-3 are
    # 201 FAB_MCAST frames in its capture, each in every member's, and each member applies every
    # increment once; with frames dropped and doubled at the members too.
    Command("pcap/mcast-e1000", ["python3", "{root}/tests/net/fabric/pcap_mcast.py"], timeout=300,
            expect=[r"pcap-mcast: 201 multicast cells, 201 frames on the wire, each in every member's capture, "
                    r"every increment applied once"],
            needs=("qemu-system-x86_64",)),
    Command("pcap/mcast-e1000-faults", ["python3", "{root}/tests/net/fabric/pcap_mcast.py", "--args",
                                        "fault=drop:0.05,dup:0.05,reorder:0.02"], timeout=300,
            expect=[r"pcap-mcast: 201 multicast cells, \d+ frames on the wire, each in every member's capture, "
                    r"every increment applied once"],
            needs=("qemu-system-x86_64",)),
    # node=auto: every node the same command line; ids agreed in MAC order, the size too.
    Cluster("auto-fabric-stress-4", app="fabric-stress", nodes=4, timeout=150,
            args="node=auto nodes=auto count=1000",
            expect=[r"^\[n%d\] auto: node %d of 4 \(MAC order\), agreed in \d+ ms: "
                    r"0=02:4e:4f:57:00:00 1=02:4e:4f:57:00:01 2=02:4e:4f:57:00:02 "
                    r"3=02:4e:4f:57:00:03$" % (i, i) for i in range(4)] +
                   [r"cluster: 4 nodes, status 0$"],
            absent=[r"command line '.*node=\d"],
            count={r"RESULT fabric-stress sent=3000 received=3000 lost=0 dup=0 misordered=0": 4}),
    Cluster("auto-fabric-stress-4-keyed-e1000", app="fabric-stress", nodes=4, nic="e1000",
            timeout=150, args="node=auto nodes=4 count=1000", options=["--key", "random"],
            expect=[r"^\[n%d\] auto: node %d of 4 " % (i, i) for i in range(4)],
            count={r"RESULT fabric-stress sent=3000 received=3000 lost=0 dup=0 misordered=0": 4}),
    # A node=auto node that reboots learns its id again from the members' answers.
    Cluster("auto-reboot-virtio", app="fabric-stress", nodes=3, timeout=180,
            args="node=auto nodes=3 count=1000 reboot=1", options=["--reboot", "1"],
            count={r"^\[n1\] auto: node 1 of 3 \(MAC order\)": 2,
                   r"RESULT fabric-stress sent=2000 received=2000 lost=0 dup=0 misordered=0": 3},
            expect=[r"^\[n0\] RESULT fabric-stress reboot node=1 restarts=1",
                    r"^\[n0\] fabric: auto: frames \d+, other nodes= 0, answers [1-9]"],
            absent=[r"^\[n0\] fabric: auto: rejected:"]),
    # More stations than nodes= says: an error that names them, never a wrong cluster of 3.
    # (Two that have heard each other decide after auto_confirm_ms without a newcomer: the
    # window is wide here so that a third booting late on a loaded host is heard first.)
    Cluster("auto-too-many", app="hello", nodes=3, args="node=auto nodes=2 auto_confirm_ms=5000",
            status=2, timeout=60,
            expect=[r"auto: error: more stations with node=auto nodes=2 than 2; live: "
                    r"02:4e:4f:57:00:0\d 02:4e:4f:57:00:0\d 02:4e:4f:57:00:0\d"],
            absent=[r"of 3 \(MAC order\)"]),
    # Fewer stations than nodes= says: after auto_timeout_ms, an error naming those heard.
    Cluster("auto-timeout", app="hello", nodes=2, args="node=auto nodes=3 auto_timeout_ms=3000",
            status=2, timeout=60,
            expect=[r"auto: error: no agreement after 3 s \(auto_timeout_ms\); 2 of the expected "
                    r"stations live; live: 02:4e:4f:57:00:0\d 02:4e:4f:57:00:0\d; heard but never "
                    r"answering: none"]),
    # A keyed cluster and a station that recorded every frame of the first boots (HELLOs and
    # DATA of node 3's first incarnation among them): node 3 reboots ten times, more than the
    # refused list remembers, and the station replays the first boots' frames from then on.
    # Nothing of a past boot is taken (each peer took exactly the 50 boot messages sent
    # live), node 3 stays bound to its last incarnation (10 rebinds a peer), nothing is lost.
    Cluster("hostile-past-boot-keyed-virtio", app="fabric-stress", nodes=4, timeout=240,
            args="reboot=3 reboots=10 count=1000",
            options=["--key", "random", "--reboot", "3",
                     "--hostile=--kinds replay --past 10 --rate 500"],
            expect=[r"cluster: hostile: sent [1-9]\d* frames .*replay [1-9]\d*\), heard \d+, "
                    r"past frames kept [1-9]", r"^\[n3\] fabric-stress: node 3, boot 11 of 11"],
            count={r"RESULT fabric-stress sent=3000 received=3000 lost=0 dup=0 misordered=0": 4,
                   r"^\[n[012]\] RESULT fabric-stress reboots=10 boot_msgs=50$": 3,
                   r"^\[n[012]\] fabric: node 3 rebooted": 30,
                   r"^\[n[012]\] fabric: rejected: .* rebinds 10$": 3}),
    Cluster("auto-needs-count", app="hello", nodes=1, args="node=auto nodes=auto", status=0,
            timeout=60, expect=[r"auto: node 0 of 1 \(MAC order\)", r"hello from node 0 of 1"]),
    Cluster("auto-bad-args", app="hello", nodes=1, args="nodes=auto node=0", status=2, timeout=60,
            expect=[r"cmdline: error: nodes=auto goes with node=auto"]),
    # On the shared-memory link node=auto takes the server's peer id; the count must be given.
    Cluster("auto-shm", app="fabric-stress", nodes=2, nic="shm",
            args="node=auto nodes=2 count=200", timeout=60,
            expect=[r"^\[n%d\] auto: node %d of 2 \(the shared-memory server's peer id\)" % (i, i)
                    for i in range(2)],
            count={r"RESULT fabric-stress sent=200 received=200 lost=0 dup=0 misordered=0": 2}),
    Cluster("auto-shm-needs-count", app="hello", nodes=2, nic="shm", args="node=auto nodes=auto",
            status=2, timeout=60,
            expect=[r"ivshmem: node=auto on the shared-memory link takes its id from the server "
                    r"\(ID [01]\) but needs nodes=<count>"]),
    # The reliable channel: exactly once, in order, under faults and back-pressure.
    Cluster("fabric-stress-4", app="fabric-stress", nodes=4,
            expect=[r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4}),
    Cluster("fabric-stress-4-faults", app="fabric-stress", nodes=4, timeout=180,
            args="fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            expect=[r"injected drop [1-9]\d*, dup [1-9]\d*, reorder [1-9]\d*, corrupt [1-9]\d*",
                    r"retransmits=[1-9]"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4}),
    # The send queues' share of the packet pool, made small: senders wait, nothing is lost.
    Cluster("fabric-stress-4-tx-share", app="fabric-stress", nodes=4, args="fabric_tx_bufs=6",
            expect=[r"for pool share [1-9]"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4}),
    Cluster("fabric-stress-backpressure", app="fabric-stress", nodes=3, timeout=180,
            args="slow=1 count=1500 fault=drop:0.03,reorder:0.02",
            expect=[r"refusals=[1-9]\d* sender_waits=[1-9]"],
            count={r"RESULT fabric-stress sent=3000 received=3000 lost=0 dup=0 misordered=0": 3}),
    Cluster("fabric-stress-e1000-faults", app="fabric-stress", nodes=3, nic="e1000", timeout=180,
            args="count=1000 fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            count={r"RESULT fabric-stress sent=2000 received=2000 lost=0 dup=0 misordered=0": 3}),
    # Node 1 really reboots (a reset, QEMU without -no-reboot) and is bound again:
    # what was in flight to its old incarnation fails, nothing of it reaches the new one.
    Cluster("fabric-rejoin-virtio", app="rejoin", nodes=2, options=["--reboot", "1"],
            expect=[r"^\[n1\] rejoin: node 1, second boot",
                    r"^\[n0\] fabric: node 1 rebooted \(incarnation [0-9a-f]{16}\)",
                    r"^\[n0\] RESULT rejoin node=0 old_op=-\d+ new_op=0 epoch_before=1 "
                    r"epoch_after=2 queued=16 dead=0 ok=1",
                    r"^\[n1\] RESULT rejoin node=1 boot=2 old=0 new=16 misordered=0 ok=1"]),
    # The same on the shared-memory link: the rebooted node's rings continue where they were.
    Cluster("fabric-rejoin-shm", app="rejoin", nodes=2, nic="shm", options=["--reboot", "1"],
            expect=[r"^\[n1\] rejoin: node 1, second boot",
                    r"^\[n0\] fabric: node 1 rebooted \(incarnation [0-9a-f]{16}\)",
                    r"^\[n0\] RESULT rejoin node=0 old_op=-\d+ new_op=0 epoch_before=1 "
                    r"epoch_after=2 queued=16 dead=0 ok=1",
                    r"^\[n1\] RESULT rejoin node=1 boot=2 old=0 new=16 misordered=0 ok=1",
                    r"^\[n1\] ivshmem: rejected: bad counts 0, bad lengths 0"]),
    Cluster("fabric-rejoin-after-death", app="rejoin", nodes=2, options=["--reboot", "1"],
            args="freeze_ms=3000 peer_timeout_ms=1000",
            expect=[r"^\[n0\] fabric: node 1 stopped answering",
                    r"^\[n0\] fabric: node 1 rebooted",
                    r"^\[n0\] RESULT rejoin node=0 old_op=-\d+ new_op=0 epoch_before=1 "
                    r"epoch_after=2 queued=16 dead=1 ok=1",
                    r"^\[n1\] RESULT rejoin node=1 boot=2 old=0 new=16 misordered=0 ok=1"]),
    Cluster("fabric-rejoin-e1000-faults", app="rejoin", nodes=2, nic="e1000", timeout=120,
            options=["--reboot", "1"], args="fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            expect=[r"^\[n0\] RESULT rejoin node=0 old_op=-\d+ new_op=0 epoch_before=1 "
                    r"epoch_after=2 queued=16 dead=0 ok=1",
                    r"^\[n1\] RESULT rejoin node=1 boot=2 old=0 new=16 misordered=0 ok=1"]),
    # With a cluster key (--key): every frame sealed, copies and corrupted frames refused
    # by the tag and the window before the channel; nothing lost; the key never printed.
    Cluster("fabric-stress-4-keyed-faults", app="fabric-stress", nodes=4, timeout=180,
            args="fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            options=["--key", "fabric-stress-test-key"],
            expect=[r"keyed \(SipHash-2-4 MAC, replay window\)",
                    r"bad_mac [1-9]\d*, replay [1-9]\d*", r"key=\(hidden\)"],
            absent=[r"fabric-stress-test-key"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4}),
    Cluster("fabric-stress-3-keyed-e1000", app="fabric-stress", nodes=3, nic="e1000",
            args="count=1000", options=["--key", "random"],
            expect=[r"key_mismatch 0, bad_mac 0, replay 0"],
            count={r"RESULT fabric-stress sent=2000 received=2000 lost=0 dup=0 misordered=0": 3}),
    Cluster("fabric-stress-4-keyed-shm", app="fabric-stress", nodes=4, nic="shm",
            options=["--key", "random"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4}),
    # A reboot under a key: the pair's keys follow the new incarnation.
    Cluster("fabric-rejoin-keyed", app="rejoin", nodes=2, options=["--reboot", "1", "--key", "random"],
            expect=[r"^\[n0\] fabric: node 1 rebooted \(incarnation [0-9a-f]{16}\)",
                    r"^\[n0\] RESULT rejoin node=0 old_op=-\d+ new_op=0 epoch_before=1 "
                    r"epoch_after=2 queued=16 dead=0 ok=1",
                    r"^\[n1\] RESULT rejoin node=1 boot=2 old=0 new=16 misordered=0 ok=1"]),
    # The key from a passphrase: scrypt, salted with the cluster's name; the same on both nodes.
    Cluster("keyed-passphrase-cluster-name", app="fabric-stress", nodes=2, nic="e1000", timeout=90,
            args="count=100 key=correct-horse-battery-staple cluster=lab-3",
            count={r"fabric: the cluster key derived from key= by scrypt \(N 4096, r 8: 4096 KiB\) "
                   r"in \d+ ms, salted with cluster=lab-3": 2,
                   r"RESULT fabric-stress sent=100 received=100 lost=0 dup=0 misordered=0": 2}),
]
# A hostile station on the switch (boot/tools/hostile, boot/cluster --hostile): malformed
# frames, frames forged in the nodes' names (DATA, ACK, PROBE, raw remote memory, HELLOs
# of a forged reboot, barrier releases) and replays of frames it heard.  With a key the
# apps complete, nothing lost, every forgery counted; without one the fabric trusts its
# segment, and the nodes only must not crash nor outlive the peer timeout by much.
CASES += [
    Cluster("hostile-%s-keyed-%s" % (app, nic), app=app, nodes=nodes, nic=nic, timeout=180,
            args=args, options=["--key", "random", "--hostile"],
            expect=[r"cluster: hostile: sent [1-9]\d* frames"] +
                   ([r"bad_mac [1-9]\d*, replay"] if app == "fabric-stress" else []),
            absent=[r"rebooted", r"FAILED", r"panic", r"EXCEPTION"],
            count={result: 1 if app == "req-stress" else nodes})
    for nic in ("virtio", "e1000")
    for (app, nodes, args, result) in [
        ("fabric-stress", 3, "count=1000",
         r"RESULT fabric-stress sent=2000 received=2000 lost=0 dup=0 misordered=0"),
        ("rmem-test", 2, "", r"RESULT rmem-test checks=\d+ failed=0"),
        ("req-stress", 3, "", r"RESULT req-stress enqueued=12000 dequeued=12000 lost=0 dup=0 "
                              r"fifo_violations=0"),
        ("mad-test", 2, "driver=%s" % ("rmem" if nic == "virtio" else "req"),
         r"RESULT mad-test driver=\w+ messages=70 bytes=\d+ failures=0"),
    ]
]
CASES += [
    Cluster("hostile-%s-%s" % (app, nic), app=app, nodes=3, nic=nic, timeout=120,
            args="peer_timeout_ms=2000", options=["--hostile"], status=(0, 1),
            expect=[r"cluster: hostile: sent [1-9]\d* frames", r"cluster: 3 nodes, status [01]$"],
            absent=[r"panic", r"EXCEPTION", r"\(timeout\)", r"no exit status"])
    for nic in ("virtio", "e1000") for app in ("fabric-stress", "rmem-test")
]
CASES += ([
    # The same station on the launcher's Linux bridge (root only: a namespace, taps).
    Cluster("hostile-rmem-test-keyed-tap", app="rmem-test", nodes=2, nic="e1000", timeout=120,
            options=["--switch", "tap", "--key", "random", "--hostile"],
            expect=[r"cluster: hostile: sent [1-9]\d* frames .*heard [1-9]"],
            absent=[r"rebooted", r"FAILED"], count={r"RESULT rmem-test checks=\d+ failed=0": 2}),
] if os.geteuid() == 0 else [])
# Node 1 resets itself halfway through fabric-stress and rejoins: the others report the
# sends to its old incarnation that failed, send its new one everything again, and finish.
CASES += [
    Cluster("fabric-stress-reboot-%s%s" % (nic, "-keyed" if extra else ""), app="fabric-stress", nodes=3, nic=nic, timeout=120,
            args="reboot=1 count=1000", options=["--reboot", "1"] + extra,
            expect=[r"^\[n1\] fabric-stress: node 1, second boot",
                    r"^\[n0\] fabric-stress: n1 rebooted", r"^\[n2\] fabric-stress: n1 rebooted"],
            absent=[r"FAILED", r"never"],
            count={r"RESULT fabric-stress sent=2000 received=2000 lost=0 dup=0 misordered=0": 3,
                   r"^\[n[02]\] RESULT fabric-stress reboot node=1 restarts=1 old_received=\d+": 2})
    for (nic, extra) in [("virtio", []), ("e1000", []), ("virtio", ["--key", "random"])]
]
CASES += [
    # Barrier messages from a node that may not send them: counted, dropped, nothing released.
    Cluster("fabric-barrier-forge", app="barrier-forge", nodes=3, timeout=120,
            expect=[r"^\[n1\] RESULT barrier-forge forged=3 dropped=3 barrier2=-\d+ checks=\d+ failed=0",
                    r"^\[n0\] RESULT barrier-forge forged=3 dropped=3 barrier2=-\d+ checks=\d+ failed=0",
                    r"cluster: 3 nodes, status 0"],
            absent=[r"FAILED"]),
    Cluster("fabric-peer-timeout", app="peer-timeout", nodes=2, args="peer_timeout_ms=1000",
            expect=[r"node 1 stopped answering", r"RESULT peer-timeout error=-\d+ ms=\d+ sent=\d+ dead=1"]),
]
CASES += [
    Cluster("fabric-junk-" + nic, app="fabric-junk", nodes=2, nic=nic,
            expect=[r"RESULT fabric-junk kinds=16 per_kind=20 mismatches=0"])
    for nic in ("shm", "virtio", "e1000")
]
