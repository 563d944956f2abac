"""The cases of boot/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [
    # The lwIP fetch takes another Debian revision of the pinned upstream when the pinned one is
    # gone from the index (the same upstream tarball, its sha256 checked), and says so.
    Command("deps/fetch-other-revision", ["bash", "-c",
            "b=$(realpath --relative-to={root} {build}); d={build}/tests/dl-revision; "
            "rm -rf $d && mkdir -p $d && cp {build}/dl/picolibc_*.orig.tar.* $d/ && "
            "make -s -C {root} BUILD=$b DL=$d LWIP_DEB=lwip=2.2.1+dfsg1-1+deb13u99 "
            "$d/lwip_2.2.1+dfsg1.orig.tar.xz && ls $d && rm -rf $d"], timeout=300,
            expect=[r"lwip=2\.2\.1\+dfsg1-1\+deb13u99 is gone from the index; taking lwip=2\.2\.1\+dfsg1-",
                    r"^lwip_2\.2\.1\+dfsg1\.orig\.tar\.xz$"]),
    # make help: every target the Makefile's header lists.
    Command("make/help", ["make", "-s", "-C", "{root}", "help"],
            expect=[r"^make run +boot a cluster", r"^make test ", r"^make clean-bench ",
                    r"^variables: APP="]),
    # make run ends on one sentence: the status, what it means and the first cause seen (the
    # failing node's first error line); make itself exits 2.
    Command("run/status-line", ["bash", "-c",
            "b=$(realpath --relative-to={root} {build}); "
            "make -s -C {root} BUILD=$b run APP=fault ARGS=kind=ud NODES=1 2>&1 | tail -2; "
            "echo \"make exit ${{PIPESTATUS[0]}}\""], timeout=120,
            expect=[r"^make run: status 3: n0 took an exception or panicked: EXCEPTION 6 \(#UD "
                    r"invalid opcode\) .*in thread 'main'\.$",
                    r"Error 3$", r"^make exit 2$"]),
    # A value every node rejects alike is printed once (by the first node), the others say so;
    # the closing sentence names it.
    Command("run/value-error-once", ["bash", "-c",
            "b=$(realpath --relative-to={root} {build}); "
            "make -s -C {root} BUILD=$b run APP=ising NODES=3 ARGS=grid=abc 2>&1; echo \"make exit $?\""],
            timeout=120,
            count={r"cmdline: error: grid=abc: not an integer": 2,      # the first node's, and the sentence
                   r"^\[n\d\] cmdline: rejected, as n\d's command line was \(the same \d+ lines": 2,
                   r"^\[n\d\] cmdline: rejected; the node will not start": 1},
            expect=[r"^make run: status 2: n\d's command line was rejected: cmdline: error: grid=abc: "
                    r"not an integer \(the first of 3 nodes that failed\)\.$", r"^make exit 2$"]),
    # nodes= in ARGS against NODES: refused before any node boots, saying how to give it once.
    Command("run/nodes-conflict", ["bash", "-c",
            "b=$(realpath --relative-to={root} {build}); "
            "make -s -C {root} BUILD=$b run APP=hello NODES=4 ARGS=nodes=2 2>&1; echo \"make exit $?\""],
            timeout=60,
            expect=[r"^cluster: error: nodes=2 in the nodes' words, but 4 nodes boot .*make run NODES=2\)$",
                    r"^make run: status 2: the launcher refused its options", r"^make exit 2$"],
            absent=[r"NOW node kernel", r"^\[n\d\]"]),
    # make run KEY=: the nodes are keyed (the boot line shows the key hidden, never its text).
    Command("run/key", ["bash", "-c",
            "b=$(realpath --relative-to={root} {build}); "
            "make -s -C {root} BUILD=$b run APP=hello NODES=2 KEY=run-test-key-0123456789 2>&1"],
            timeout=120,
            count={r"^\[n\d\] boot: .*command line 'node=\d nodes=2 app=hello .*key=\(hidden\)'$": 2,
                   r"^\[n\d\] fabric: node \d of 2, .* keyed \(SipHash-2-4": 2},
            expect=[r"^make run: status 0: every node's app succeeded \(2 nodes\)\.$"],
            absent=[r"run-test-key"]),
    # make's variables are upper case: one spelt in lower case is refused, with its spelling;
    # KEY= with a goal that does not read it is refused, never ignored.
    Command("make/refuses-what-it-would-ignore", ["bash", "-c",
            "make -s -C {root} run app=hello 2>&1; echo \"exit $?\"; "
            "make -s -C {root} papers KEY=some-key-0123456789abc 2>&1; echo \"exit $?\""],
            expect=[r"app= is not one of this Makefile's variables: they are upper case, APP= \(make help\)",
                    r"KEY= applies to make iso, netboot, run, bench, trace and cost, not to make papers",
                    r"^exit 2$"],
            count={r"^exit 2$": 2}, absent=[r"NOW node kernel"]),
    # make key: a fresh key on stdout (32 characters, safe in the menu), what to do on stderr;
    # two calls, two keys.
    Command("make/key", ["bash", "-c",
            "a=$(make -s -C {root} key 2>/tmp/now-key-err.$$) && b=$(make -s -C {root} key 2>/dev/null) && "
            "[ \"$a\" != \"$b\" ] && echo \"key: $a\" && cat /tmp/now-key-err.$$; rm -f /tmp/now-key-err.$$"],
            expect=[r"^key: [A-Za-z0-9_-]{32}$", r"^make key: a fresh cluster key .*make iso KEY=<it>"]),
    # A second make run in the tree while another make builds waits for it, and says so
    # (the lock held here for 3 s stands for the other make's build).
    Command("run/waits-for-another-build", ["bash", "-c",
            "b=$(realpath --relative-to={root} {build}); mkdir -p {build}; "
            "flock {build}/.build.lock sleep 3 & sleep 0.5; "
            "make -s -C {root} BUILD=$b run APP=hello NODES=1 2>&1; echo \"make exit $?\"; wait"],
            timeout=120,
            expect=[r"^make: another make is building in this tree; waiting for it to finish$",
                    r"^make run: status 0: every node's app succeeded \(1 node\)\.$", r"^make exit 0$"]),
    # make iso and make netboot ask the image whether a PC would take the line before writing
    # anything: a short key, a misspelt app, GRUB's syntax and a count too small for the app
    # are refused with what the PC would print, status 2, nothing written.
    Command("iso/refuses-what-a-pc-would", ["bash", "-c",
            "b=$(realpath --relative-to={root} {build}); rm -rf {build}/tests/refuse.iso* {build}/tests/nb-refuse*; "
            "m() {{ make -s -C {root} BUILD=$b \"$@\" 2>&1; echo \"exit $?\"; }}; "
            "m $b/tests/refuse.iso KEY=short; "
            "m $b/tests/refuse.iso CMDLINE='node=auto nodes=8 app=isng'; "
            "m $b/tests/refuse.iso CMDLINE='node=auto nodes=8 app=ising;reboot'; "
            "m $b/tests/refuse.iso CMDLINE='node=auto nodes=1 app=rpc'; "
            "m netboot NETBOOT_DIR=$b/tests/nb-refuse KEY=short; "
            "ls -d {build}/tests/refuse.iso {build}/tests/refuse.iso.d {build}/tests/nb-refuse 2>&1 | "
            "grep -c 'No such file'; "
            "m $b/tests/refuse.iso CMDLINE='node=auto nodes=2 app=ising' KEY=refuse-test-key-0123 && "
            "rm -rf {build}/tests/refuse.iso*"], timeout=180,
            count={r"^exit 2$": 5, r"nothing written: a PC would not start with this line": 5,
                   r"^  cmdline: error: key: 5 characters; a cluster key has 16 to 128$": 2},
            expect=[r"^make iso: the image build/now\.elf refuses this line; a PC booting it would print:$",
                    r"^  cmdline: error: app=isng: no such app$",
                    r"^make iso: CMDLINE holds ;, which GRUB's menu would read as its own syntax$",
                    r"^  cmdline: error: app rpc needs at least 2 nodes \(nodes=1\)$",
                    r"^make netboot: the image build/now\.elf refuses this line",
                    r"^3$", r"ISO .*refuse\.iso: menu 'node=auto nodes=2 app=ising key=\(hidden\)'$",
                    r"^exit 0$"],
            absent=[r"refuse-test-key"]),
    # An ISO follows its command line: made again when CMDLINE or KEY change, not otherwise.
    Command("iso/menu-follows-cmdline", ["bash", "-c",
            "b=$(realpath --relative-to={root} {build}); "
            "m() {{ make -s -C {root} BUILD=$b $b/tests/menu.iso \"$@\"; }}; "
            "cfg={build}/tests/menu.iso.d/boot/grub/grub.cfg; "
            "m CMDLINE='node=auto nodes=8 app=ising' && grep -q 'nodes=8 app=ising' $cfg && "
            "out=$(m CMDLINE='node=auto nodes=8 app=ising') && [ -z \"$out\" ] && "
            "echo 'same values: nothing made' && "
            "m CMDLINE='node=0 nodes=1 app=circuit' KEY=menu-test-key-0123456 && "
            "grep -q 'nodes=1 app=circuit' $cfg && grep -q 'now_key=\"menu-test-key-0123456\"' $cfg && "
            "rm -rf {build}/tests/menu.iso* && echo 'menu follows'"],
            expect=[r"ISO .*menu\.iso: menu 'node=auto nodes=8 app=ising'$",
                    r"same values: nothing made",
                    r"ISO .*menu\.iso: menu 'node=0 nodes=1 app=circuit key=\(hidden\)'$",
                    r"^menu follows$"],
            absent=[r"menu-test-key"]),
    # The launcher reads the image's apps and keys: an unknown one is named once, no node boots.
    Cluster("launcher-unknown-app", app="nosuchapp", nodes=4, status=2,
            expect=[r"^cluster: error: no app 'nosuchapp' in build/now\.elf; its apps: .*\bhello\b.*\bselftest\b"],
            absent=[r"NOW node kernel", r"\[n\d\]"]),
    Cluster("launcher-unknown-key", app="fabric-stress", nodes=2, args="count=5 colour=red", status=2,
            expect=[r"^cluster: error: unknown key 'colour'; the kernel's keys: node nodes app .*; "
                    r"app fabric-stress's: count slow reboot reboots stall_ms$"],
            absent=[r"NOW node kernel"]),
    # A room of PCs booted from the network (make netboot): each node's firmware fetches GRUB
    # by TFTP on a second NIC, GRUB the menu and the kernel; node=auto nodes=2 in the menu.
    Cluster("netboot-bios-e1000", nodes=2, nic="e1000", timeout=150,
            options=["--netboot", "{build}/netboot-test"],
            expect=[r"^\[n%d\] boot: multiboot2 loader, command line 'node=auto nodes=2 "
                    r"app=fabric-stress count=300'" % i for i in range(2)] +
                   [r"pci: 00:\w+\.\d 10ec:8139 .*no driver"],
            count={r"RESULT fabric-stress sent=300 received=300 lost=0 dup=0 misordered=0": 2}),
    Cluster("netboot-uefi-q35-e1000e", nodes=2, nic="e1000e", timeout=200,
            options=["--netboot", "{build}/netboot-test", "--firmware", "uefi", "--machine", "q35"],
            expect=[r"^\[n%d\] auto: node %d of 2 \(MAC order\)" % (i, i) for i in range(2)],
            count={r"RESULT fabric-stress sent=300 received=300 lost=0 dup=0 misordered=0": 2}),
    # OVMF puts 64-bit BARs above 4 GiB (virtio-net's BAR4, ivshmem's shared memory): mapped
    # there; on shm the menu's node=auto takes the server's peer id.
    Cluster("netboot-uefi-q35-virtio", nodes=2, nic="virtio", timeout=200,
            options=["--netboot", "{build}/netboot-test", "--firmware", "uefi", "--machine", "q35"],
            expect=[r"^\[n%d\] pci: 00:\w+\.\d bar4 at 0x[0-9a-f]{9,}, \d+ KiB: mapped above 4 GiB" % i
                    for i in range(2)] +
                   [r"^\[n%d\] auto: node %d of 2 \(MAC order\)" % (i, i) for i in range(2)],
            count={r"RESULT fabric-stress sent=300 received=300 lost=0 dup=0 misordered=0": 2}),
    Cluster("netboot-uefi-q35-shm", nodes=2, nic="shm", timeout=200,
            options=["--netboot", "{build}/netboot-test", "--firmware", "uefi", "--machine", "q35"],
            expect=[r"^\[n%d\] pci: 00:\w+\.\d bar2 at 0x[0-9a-f]{9,}, \d+ KiB: mapped above 4 GiB" % i
                    for i in range(2)] +
                   [r"^\[n%d\] auto: node %d of 2 \(the shared-memory server's peer id\)" % (i, i)
                    for i in range(2)],
            count={r"RESULT fabric-stress sent=300 received=300 lost=0 dup=0 misordered=0": 2}),
]
CASES += ([
    # One cluster across two hosts (two network namespaces, a veth cable, VXLAN between
    # their bridges): ids typed per host with --first/--total, then agreed by node=auto.
    Command("twohost/fabric-stress", ["bash", "{root}/tests/boot/twohost_test.sh", "fabric-stress", "2",
                                      "count=500"], timeout=240,
            expect=[r"^A \[n[01]\] RESULT fabric-stress sent=1500 received=1500 lost=0 dup=0 "
                    r"misordered=0", r"^B \[n[23]\] RESULT fabric-stress sent=1500 received=1500 "
                    r"lost=0 dup=0 misordered=0", r"twohost: host A status 0, host B status 0"]),
    Command("twohost/auto-rmem-test", ["bash", "{root}/tests/boot/twohost_test.sh", "rmem-test", "1",
                                       "node=auto nodes=2"], timeout=240,
            expect=[r"^A \[n0\] auto: node 0 of 2 \(MAC order\)",
                    r"^B \[n1\] auto: node 1 of 2 \(MAC order\)",
                    r"^[AB] \[n0\] RESULT rmem-test checks=\d+ failed=0",
                    r"^[AB] \[n1\] RESULT rmem-test checks=\d+ failed=0",
                    r"twohost: host A status 0, host B status 0"]),
] if os.geteuid() == 0 else [])
CASES += [
    # The launcher itself, with a tiny test guest (exit codes, prefixes,
    # timeout, grace, Ctrl-C cleanup, pinning, tap namespace).
    Command("launcher/suite", ["bash", "{root}/tests/boot/launcher_test.sh"], timeout=400,
            expect=[r"launcher tests: \d+ passed, 0 failed"]),
    # A QEMU without igb (Debian 12's 7.2 where backports cannot be reached): the igb cases
    # are skipped and named, none passes or fails; boot/cluster --nic igb says why.
    Command("check/old-qemu-skips", ["bash", "{root}/tests/boot/skip_test.sh", "{build}"],
            expect=[r"skip_test: 1\d igb cases skipped and named",
                    r"skip_test: boot/cluster --nic igb refused"], timeout=120),
    # make run and make test bring QEMU 10 as CI does (boot/tools/deps.sh --qemu10 before anything is
    # built), and the framebuffer's font, which a fresh machine has only once deps installed
    # grub-common, waits for it rather than stopping make at "No rule to make target".
    Command("check/make-brings-what-ci-brings", ["bash", "-c",
            "cd {root} && for t in run test bench; do echo \"$t: $(make -n BUILD={build} $t 2>&1 | "
            "grep -c '^boot/tools/deps.sh --qemu10$')\"; done && "
            "make -n -p BUILD={build} /usr/share/grub/ascii.h 2>&1 | grep -A1 '^/usr/share/grub/ascii.h:' | head -2"],
            expect=[r"^run: 1$", r"^test: 1$", r"^bench: 1$",
                    r"^/usr/share/grub/ascii.h: \| deps-check$"]),
    # make deps' backports entry comes from the machine's own Debian source (one-line and
    # deb822 files), its mirror and key; an existing backports entry is used as it is.
    Command("check/deps-backports-entry", ["bash", "-c",
            "d=$(mktemp -d) && mkdir -p $d/sources.list.d && "
            "printf '# a comment\\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.invalid/debian "
            "bookworm main\\ndeb http://other.invalid/debian bookworm-updates main\\n' > $d/sources.list && "
            "NOW_APT_ETC=$d NOW_CODENAME=bookworm {root}/boot/tools/deps.sh --show-backports && "
            "rm $d/sources.list && printf 'Types: deb-src\\nURIs: http://src.invalid/debian\\n"
            "Suites: bookworm\\n\\nTypes: deb\\nURIs: http://deb822.invalid/debian\\n"
            "Suites: bookworm bookworm-updates\\nComponents: main\\n' > $d/sources.list.d/d.sources && "
            "NOW_APT_ETC=$d NOW_CODENAME=bookworm {root}/boot/tools/deps.sh --show-backports && "
            "printf 'deb http://bp.invalid/debian bookworm-backports main\\n' > $d/sources.list && "
            "NOW_APT_ETC=$d NOW_CODENAME=bookworm {root}/boot/tools/deps.sh --show-backports; rm -rf $d"],
            expect=[r"^URIs: http://mirror\.invalid/debian\nSuites: bookworm-backports\n"
                    r"Components: main\nSigned-By: /k\.gpg$",
                    r"^URIs: http://deb822\.invalid/debian\nSuites: bookworm-backports\n"
                    r"Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring\.gpg$",
                    r"bookworm-backports is already a source here \(http://bp\.invalid/debian\)"]),
    Command("launcher/timeout-dump", ["{root}/boot/cluster", "-n", "2", "--nic", "e1000",
                                      "--timeout", "15", "-a", "fabric-stress", "--", "count=10000000"],
            status=124, timeout=120,
            expect=[r"cluster: timeout after 15s; still running: n0 n1$", r"cluster: each says where it stands \(an NMI\), then is killed",
                    r"\[n0\] now: NMI: where this node stands \(thread '\S+'",
                    r"\[n1\]\s+\d+ main\s+prio \d+ blocked .*: thread_join\+0x[0-9a-f]+ < stress_main\+",
                    # Its sender blocked shows the chain down to itself; running, the
                    # NMI caught it wherever it was (deep in a driver's handler, maybe).
                    r"\[n1\]\s+\d+ sender\s+prio \d+ (running .*: \S+|\w+ .*: \S+ < .*sender)",
                    r"\[n0\] timer: \d+ ticks, \d+ timers armed",
                    r"\[n0\] fabric: peer n1 up, snd una \d+ nxt \d+",
                    r"\[n1\] net: e1000: rx frames \d+",
                    r"\[n0\] now: NMI: end of the dump", r"\[n1\] now: NMI: end of the dump",
                    r"cluster: n1: status 255: killed: timeout after 15s"]),
    # boot/cluster --profile: two nodes sampled at 500 Hz print their tables (enough samples,
    # top rows named from the image, the idle loop marked) and keep their samples, which
    # boot/tools/profile.py prints again; a sampler that fails leaves its node running.
    Command("launcher/profile", ["python3", "{root}/tests/boot/profile_test.py", "{build}"], timeout=300,
            expect=[r"^profile-test: (\d+) of \1 checks passed$"], absent=[r"FAILED"]),
    # Every example of boot/cluster --help runs as written and ends well.
    # Alone: its 8-node example pins every node to one host CPU, and beside another case's
    # nodes it ran past its own --timeout 60 (make test's full runs, two of three).
    Command("launcher/help-examples", ["python3", "{root}/tests/boot/help_examples.py", "boot/cluster"],
            timeout=240, expect=[r"help-examples: (\d+) of \1 ran as written"], alone=True),

    # The same kernel from GRUB: the ISO boots to hello.
    # The menu's default entry is node=auto nodes=auto: alone on its segment, node 0 of 1.
    Command("qemu/iso-boots-hello", QEMU_ISO, status=1, timeout=90,
            expect=[r"boot: multiboot2 loader, command line 'node=auto nodes=auto app=hello'",
                    r"auto: node 0 of 1 \(MAC order\)",
                    r"hello from node 0 of 1", r"node exits with status 0"],
            needs=("qemu-system-x86_64",)),
    # The same ISO on a UEFI PC: q35 with Debian's OVMF firmware boots its x86-64 EFI GRUB.
    Command("qemu/iso-uefi-q35-hello", QEMU_ISO_UEFI, status=1, timeout=120,
            expect=[r"boot: multiboot2 loader, command line 'node=auto nodes=auto app=hello'",
                    r"mem: \d+ MiB usable, .* \(EFI memory map\)",
                    r"e1000: 00:\w+\.\d 82574L, msi vector", r"auto: node 0 of 1 \(MAC order\)",
                    r"hello from node 0 of 1", r"node exits with status 0"],
            needs=("qemu-system-x86_64", "/usr/share/OVMF/OVMF_CODE.fd")),
    # virtio-net on a UEFI PC: OVMF puts its 64-bit BAR4 above 4 GiB, where the kernel maps it.
    Command("qemu/iso-uefi-q35-virtio", QEMU_ISO_UEFI[:-4] + [
                "-device", "virtio-net-pci,netdev=n0,romfile=", "-cdrom", "{build}/now.iso"],
            status=1, timeout=120,
            expect=[r"pci: 00:\w+\.\d bar4 at 0x[0-9a-f]{9,}, \d+ KiB: mapped above 4 GiB",
                    r"net: virtio-net \(pci .*\) mac \S+ link up", r"auto: node 0 of 1 \(MAC order\)",
                    r"hello from node 0 of 1", r"node exits with status 0"],
            absent=[r"driver virtio-net failed", r"no supported NIC"],
            needs=("qemu-system-x86_64", "/usr/share/OVMF/OVMF_CODE.fd")),
    # Under UEFI there is no VGA text mode: the console is drawn on the GOP framebuffer, and
    # read back off a screendump glyph by glyph.
    Command("qemu/iso-uefi-framebuffer-console",
            ["python3", "{root}/tests/boot/fbcon_test.py", "{build}/now.iso", "hello from node 0 of 1",
             "app: hello finished with status 0"], timeout=180,
            expect=[r"console: UEFI framebuffer \d+x\d+, (16|24|32) bits a pixel",
                    r"fbcon: 2 of 2 lines found"],
            needs=("qemu-system-x86_64", "/usr/share/OVMF/OVMF_CODE.fd", "/usr/share/grub/ascii.h")),
    # The menu's cluster key (make iso KEY=...) reaches the kernel, which never prints it.
    Command("qemu/iso-keyed", QEMU_ISO[:-1] + ["{build}/now-keyed.iso"], status=1, timeout=90,
            expect=[r"boot: multiboot2 loader, command line 'node=0 nodes=1 app=hello key=\(hidden\)'",
                    r"fabric: node 0 of 1, .*keyed \(SipHash-2-4 MAC, replay window\)",
                    r"node exits with status 0"],
            absent=[r"iso-test-key"], needs=("qemu-system-x86_64",)),
]
