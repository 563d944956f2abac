"""The cases of kernel/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [
    fuzz_smoke("cmdline", runs=50000),

    # Boot, hello and the cluster.
    # Under TCG, RAM in 4 KiB pages and QEMU's software TLB grown to what it fills (kernel/vm.c):
    # 64 MiB of RAM, 32768 entries; memcpy's TLB twins are pages that far apart (kernel/memcpy.c).
    Cluster("hello-1", app="hello", nodes=1,
            expect=[NODE_HELLO % (0, 0, 1), r"RESULT hello node=0 nodes=1 tsc_hz=\d+",
                    r"cpu: tsc .* \(calibrated against (hpet|pit)\)", r"^\[n0\] pci: 00:00\.0",
                    r"^\[n0\] vm: QEMU TCG: RAM in 4 KiB pages \(3\d of 2 MiB split\), its TLB grown toward "
                    r"32768 entries in \d+ us \(kernel/vm\.c\), memcpy's twins 32768 pages apart$"]),
    Cluster("hello-4-default", nodes=4,
            expect=[NODE_HELLO % (i, i, 4) for i in range(4)] + [r"cluster: 4 nodes, status 0"]),
    Cluster("hello-8", app="hello", nodes=8, timeout=120,
            expect=[NODE_HELLO % (i, i, 8) for i in range(8)]),
    # Under QEMU's TCG (boot/cluster's default, -cpu max) the fabric's CRC-32C is PCLMULQDQ
    # folding and the tables, not SSE4.2's crc32 instruction, which TCG runs as a helper call
    # a few bytes at a time (kernel/crc.c).
    Cluster("hello-e1000", app="hello", nodes=2, nic="e1000",
            expect=[NODE_HELLO % (i, i, 2) for i in range(2)] + [r"8086:100e ethernet controller"] +
                   [r"^\[n%d\] fabric: node %d of 2, .*crc32c pclmul folding from 256 bytes, tables below "
                    r"\(QEMU TCG" % (i, i) for i in range(2)]),

    # The in-kernel tests of the core.
    Cluster("selftest", app="selftest", nodes=1, timeout=120,
            expect=[r"RESULT selftest passed=\d+ failed=0", r"selftest: vm_map_above_4g ok",
                    r"selftest: vm_tcg_small_pages ok"],
            absent=[r"FAILED", r"EXCEPTION", r"PANIC"]),

    # Failures are reported, with a status.
    Cluster("fault-pagefault", app="fault", args="kind=pagefault", status=3,
            expect=[r"EXCEPTION 14 \(#PF page fault\)", r"fault address \(cr2\) = 0x0000004000000000",
                    r"rip=0x[0-9a-f]{16} rsp=", r"rax=0x[0-9a-f]{16}", r"backtrace:",
                    r"#\d+ 0x[0-9a-f]+ do_fault\+0x", r"node exits with status 3"]),
    Cluster("fault-stack-overflow", app="fault", args="kind=stack", status=3,
            expect=[r"STACK OVERFLOW", r"recurse"]),
    Cluster("fault-panic", app="fault", args="kind=panic", status=3,
            expect=[r"PANIC in thread 'main': fault app: deliberate panic", r"do_fault\+0x"]),
    Cluster("fault-assert", app="fault", args="kind=assert", status=3,
            expect=[r"PANIC .*assertion failed: kind\[0\] == 'x'"]),
    Cluster("fault-status-1", app="fault", args="kind=return", nodes=2, status=1,
            expect=[r"cluster: 2 nodes, status 1"]),
    # Before the kill, each node's NMI dump: threads, fabric, and what rmem applied and refused.
    Cluster("hang-timeout", app="fault", args="kind=hang", nodes=2, timeout=8, status=124,
            expect=[r"timeout after 8", r"\[n1\] now: NMI: where this node stands",
                    r"\[n0\] rmem: applied write \d+, read \d+, atomic \d+, of them in blocks \d+; refused bad_segment",
                    r"\[n1\] now: NMI: end of the dump"]),

    # The command line is untrusted: every problem is named, the node stops (the launcher's
    # own check of the image's apps and keys is off here, so that the kernel's is tested).
    Cluster("cmdline-unknown-key", app="hello", args="colour=red", status=2,
            options=["--no-image-check"],
            expect=[r"cmdline: error: unknown key 'colour'", r"cmdline: rejected"],
            absent=[r"hello from node"]),
    Cluster("cmdline-malformed", app="hello", args="justaword grid=", status=2,
            options=["--no-image-check"],
            expect=[r"malformed argument 'justaword': expected key=value",
                    r"key 'grid' has an empty value"]),
    Cluster("cmdline-bad-app", app="nosuchapp", status=2, options=["--no-image-check"],
            expect=[r"app=nosuchapp: no such app", r"selftest"]),
    Cluster("cmdline-app-arg-wrong-app", app="hello", args="kind=ud", status=2,
            options=["--no-image-check"],
            expect=[r"unknown key 'kind'", r"app 'hello' keys: none"]),
    Cluster("cmdline-bad-shm-wait", app="hello", nodes=1, nic="shm", args="shm_wait=sometimes",
            status=2, expect=[r"cmdline: error: shm_wait=sometimes: not halt, adaptive or spin"]),
    Cluster("cmdline-short-key", app="hello", nodes=1, args="key=short", status=2,
            expect=[r"cmdline: error: key: 5 characters; a cluster key has 16 to 128"]),
    Cluster("cmdline-long-cluster-name", app="hello", nodes=1, args="cluster=" + "x" * 65, status=2,
            expect=[r"cmdline: error: cluster: 65 characters; a cluster's name has 1 to 64"]),
    # A keyed node without RDSEED and RDRAND says that its randomness is TSC jitter.
    Cluster("keyed-without-drng", app="hello", nodes=2, timeout=60,
            options=["--key", "random", "--qemu-arg=-cpu", "--qemu-arg=max,rdrand=off,rdseed=off"],
            count={r"incarnation [0-9a-f]+ \(tsc jitter\)": 2,
                   r"fabric: warning: this CPU gave no usable RDSEED or RDRAND": 2}),
    # A key with spaces in it: refused, and no word of it on the console.
    Cluster("cmdline-key-with-spaces", app="hello", nodes=1,
            args="key=correct-horse-battery staple-words", status=2,
            expect=[r"command line '.*key=\(hidden\)'", r"malformed argument after key=: a key "
                    r"cannot contain spaces \(the word is not shown\)"],
            absent=[r"\[n0\].*staple", r"\[n0\].*correct-horse"]),
    Cluster("cmdline-bad-fault", app="fabric-stress", nodes=1, args="fault=drop:2", status=2,
            expect=[r"cmdline: error: fault=drop:2: rate '2' is not a probability"]),
    # A node its --timeout kills first says where it stands (an NMI through QEMU's monitor,
    # kernel/trap.c): its threads with their stacks, its timers, the fabric's peers and counters.
    # The watchdog: node 0's app thread stopped on purpose for 3.5 s with watchdog_s=1; the node
    # says so once and where its threads are (the app thread blocked in its wait, under
    # stress_main), then goes on, and the streams complete.
    Cluster("watchdog-names-a-stopped-app-thread", app="fabric-stress", nodes=2, nic="shm",
            args="count=200 stall_ms=3500 watchdog_s=1", timeout=90,
            expect=[r"^\[n0\] now: watchdog: the app thread 'main' has not run for [12] s: where this "
                    r"node stands", r"^\[n0\]\s+\d+ main\s+prio \d+ blocked .*: \S+ < .*stress_main\+",
                    r"^\[n0\] fabric: peer n1 up", r"^\[n0\] now: watchdog: .*: end of the dump"],
            count={r"now: watchdog: the app thread 'main' has not run for \d+ s: where": 2,
                   r"RESULT fabric-stress sent=200 received=200 lost=0 dup=0 misordered=0": 2}),
]
# A PC turns itself off when the app ends (exit=poweroff): ACPI S5 from the FADT and the
# DSDT's \_S5, on both chipsets; no isa-debug-exit here, so only S5 can end QEMU.
CASES += [
    Command("qemu/acpi-poweroff-%s" % m,
            ["qemu-system-x86_64", "-machine", m, "-accel", "tcg", "-m", "64", "-display", "none",
             "-vga", "none", "-no-reboot", "-monitor", "none", "-serial", "stdio", "-nic", "none",
             "-kernel", "{build}/now.elf", "-append", "node=0 nodes=1 app=hello exit=poweroff"],
            status=0, timeout=60,
            expect=[r"hello from node 0 of 1", r"now: powering off \(ACPI S5\)"],
            needs=("qemu-system-x86_64",))
    for m in ("pc", "q35")
]
CASES += [
    Cluster("exit-bad-value", app="hello", nodes=1, args="exit=sleep", status=2, timeout=60,
            expect=[r"cmdline: error: exit=sleep: halt or poweroff"]),
]
CASES += [
    # More exceptions, each reported with its vector and name.
    Cluster("fault-%s" % kind, app="fault", args="kind=" + kind, status=3, expect=expect)
    for kind, expect in (("ud", [r"EXCEPTION 6 \(#UD invalid opcode\)", r"do_fault\+0x"]),
                         ("div0", [r"EXCEPTION 0 \(#DE divide error\)"]),
                         ("gp", [r"EXCEPTION 13 \(#GP general protection\)"]))
]
CASES += [
    # More command-line errors, each named before the node does anything.
    Cluster("cmdline-" + name, app="hello", args=args, status=2, expect=[error])
    for name, args, error in (
        ("bad-value", "peer_timeout_ms=abc", r"peer_timeout_ms=abc: not an integer"),
        ("out-of-range", "peer_timeout_ms=5", r"peer_timeout_ms=5: out of range \(100\.\.3600000\)"),
        ("duplicate", "node=0 node=3", r"key 'node' is given more than once"),
        ("lwip-bufs-range", "lwip_bufs=5000", r"cmdline: error: lwip_bufs=5000: out of range \(16\.\.512\)"))
]
