"""The cases of drivers/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [

    fuzz_smoke("e1000", runs=5000),

    fuzz_smoke("igb", runs=5000),

    fuzz_smoke("virtio_net", runs=3000, name="virtio-net"),

    # The shared-memory link (drivers/ivshmem.c, boot/tools/ivshmem-server): the tests that run on
    # both NICs run on it too, and a cluster of 16 on two host CPUs.
    Cluster("nictest-shm", app="nictest", nodes=2, nic="shm",
            expect=[r"RESULT nictest role=sender nic=ivshmem echoes=1455 retries=\d+ corrupted=0",
                    r"net: ivshmem \(pci [^)]*msi-x\) mac 02:4e:4f:57:00:01"]),
    # A node out of packet buffers: the frames wait in the ring while its own thread runs and
    # gives the buffers back (the driver's drain is bounded; it does not spin in the interrupt
    # or in the polling loop on a frame it cannot take), then every message arrives.
    Cluster("rx-starve-shm", app="rx-starve", nodes=2, nic="shm", timeout=120,
            expect=[r"^\[n0\] rx-starve: gave them back \(0 messages taken meanwhile\)",
                    r"^\[n0\] RESULT rx-starve held=\d+ received=200 misordered=0"]),
    Cluster("rx-starve-shm-spin", app="rx-starve", nodes=2, nic="shm", timeout=120,
            args="shm_wait=spin",
            expect=[r"^\[n0\] rx-starve: gave them back \(0 messages taken meanwhile\)",
                    r"^\[n0\] RESULT rx-starve held=\d+ received=200 misordered=0"]),

    # NIC drivers: every frame size echoed byte for byte, then a burst.
    Cluster("nictest-virtio", app="nictest", nodes=2, nic="virtio",
            expect=[r"RESULT nictest role=sender nic=virtio-net echoes=1455 retries=\d+ corrupted=0",
                    r"RESULT nictest role=echoer"]),
    Cluster("nictest-e1000", app="nictest", nodes=2, nic="e1000",
            expect=[r"RESULT nictest role=sender nic=e1000 echoes=1455 retries=\d+ corrupted=0",
                    r"net: e1000 \(82540EM\)"]),
    Cluster("nictest-e1000e", app="nictest", nodes=2, nic="e1000e",
            expect=[r"RESULT nictest role=sender nic=e1000 echoes=1455 retries=\d+ corrupted=0",
                    r"net: e1000 \(82574L\)"]),
]
CASES += [
    # The Intel 82576 (drivers/igb.c; QEMU 8.0 and later, skipped on older ones): on the pc
    # machine by INTx (igb_irq=intx), on q35 by MSI-X, the driver's two interrupt paths.
    Cluster("%s-igb%s" % (name, "-q35" if machine == "q35" else ""), app=app, nodes=nodes,
            nic="igb", timeout=timeout,
            args=" ".join(a for a in (args, "igb_irq=intx" if machine == "pc" else "") if a),
            options=["--machine", machine],
            expect=[r"igb: 00:\w+\.\d 82576, %s" % ("intx gsi" if machine == "pc" else
                                                     r"msi-x vectors 0x\w+ \(queues\)"),
                    r"net: igb \(82576\) mac 02:4e:4f:57:00:00 link up",
                    r"cluster: %d nodes, status 0$" % nodes] + expect,
            absent=[r"FAILED", r"PANIC", r"EXCEPTION", r"bytes wrong"],
            count=count)
    for machine in ("pc", "q35")
    for (name, app, nodes, args, timeout, expect, count) in [
        ("nictest", "nictest", 2, "", 120,
         [r"RESULT nictest role=sender nic=igb echoes=1455 retries=\d+ corrupted=0"], {}),
        ("pingpong", "pingpong", 2, "iters=300 warmup=20 mode=both wait=both", 150,
         [r"RESULT pingpong nic=igb wait=%s mode=%s size=64 iters=300" % (w, m)
          for w in ("halt", "spin") for m in ("raw", "reliable")], {}),
        ("fabric-stress-3-faults", "fabric-stress", 3,
         "count=1000 fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01", 180,
         [r"injected drop [1-9]\d*, dup [1-9]\d*, reorder [1-9]\d*, corrupt [1-9]\d*"],
         {r"RESULT fabric-stress sent=2000 received=2000 lost=0 dup=0 misordered=0": 3}),
        ("rmem-test", "rmem-test", 2, "", 150, [], {r"RESULT rmem-test checks=\d+ failed=0": 2}),
        ("mad-test-2-req", "mad-test", 2, "driver=req", 240, [r"I received the strings"],
         {r"RESULT mad-test driver=req messages=70 bytes=\d+ failures=0 misuse=11": 2}),
        ("tcp-echo", "tcp-echo", 2, "", 120,
         [TCP_ECHO % 1, TCP_ECHO % 65536, r"^\[n0\] lwip: 10\.0\.0\.1/24 up on igb, MTU (1500|7858)$"], {}),
    ]
]

# The Q35 chipset (PCI Express, ICH9): NIC interrupts by MSI or MSI-X, the IOAPIC from the MADT.
CASES += [
    Cluster("q35-%s-%s" % (app, nic), app=app, nodes=nodes, nic=nic, timeout=150, args=args,
            options=["--machine", "q35"],
            expect=[irq, r"cluster: %d nodes, status 0$" % nodes],
            count={result: count})
    for (nic, irq) in [("e1000e", r"e1000: 00:\w+\.\d 82574L, msi vector"),
                       ("virtio", r"net: virtio-net \(pci .*msi-x\)")]
    for (app, nodes, args, result, count) in [
        ("pingpong", 2, "iters=300 warmup=20 mode=both",
         r"RESULT pingpong nic=\S+ wait=halt mode=(raw|reliable) size=64 iters=300", 2),
        ("fabric-stress", 3, "count=1000",
         r"RESULT fabric-stress sent=2000 received=2000 lost=0 dup=0 misordered=0", 3),
        ("rmem-test", 2, "", r"RESULT rmem-test checks=\d+ failed=0", 2),
    ]
]
