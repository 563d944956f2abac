"""QEMU tests: boot nodes and assert on what they print and how they exit.

A Cluster case runs boot/cluster and checks the launcher's exit status and
regular expressions over its output (node lines carry "[n<i>] " prefixes).
A case on a NIC the QEMU on PATH does not emulate (igb before QEMU 8.0) is
skipped, with the reason: run() returns ok None.
A Command case runs any command (QEMU on the ISO, grub-file, ...).  A Check
case runs a Python function over the build directory.  tests/run.py runs
them all; each returns (ok, reason, log).
"""

import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "boot"))
import qemufacts  # noqa: E402  (boot/qemufacts.py)


class Cluster:
    def __init__(self, name, app=None, nodes=1, args="", nic="virtio", status=0,
                 expect=(), absent=(), timeout=90, options=(), count=None):
        self.name = "qemu/" + name
        self.app, self.nodes, self.args, self.nic = app, nodes, args, nic
        self.status, self.expect, self.absent = status, expect, absent
        self.timeout, self.options = timeout, list(options)
        self.count = count or {}  # regex -> exact number of matching lines

    def command(self, root):
        cmd = [os.path.join(root, "boot", "cluster"), "--nodes", str(self.nodes),
               "--nic", self.nic, "--timeout", str(self.timeout)]
        if self.app:
            cmd += ["--app", self.app]
        if self.args:
            cmd += ["--args", self.args]
        return cmd + self.options

    def run(self, root, build):
        missing = qemufacts.nic_missing(self.nic)
        if missing:
            return None, missing, ""
        cmd = [w.format(root=root, build=build) for w in self.command(root)]
        rc, stdout, stderr = run_session(cmd, root, self.timeout + 60)
        if rc is None:
            return False, "launcher itself did not return", stdout + stderr
        log = "$ %s\n%s\n--- stderr ---\n%s" % (" ".join(cmd), stdout, stderr)
        return verify(rc, stdout + stderr, self.status, self.expect,
                      self.absent, self.count, log)


def run_session(argv, root, timeout):
    """(status, stdout, stderr) of argv run in a session of its own; status None if it ran out
    of time: then the whole session goes, everything it started with it (a launcher's QEMUs
    left spinning would starve the cases after it): told to stop (launchers clean up on
    SIGTERM), killed 10 s later."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=root, stdin=subprocess.DEVNULL, errors="replace",
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        pass
    except BaseException:           # Ctrl-C: the case's session goes too
        os.killpg(p.pid, signal.SIGKILL)
        raise
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            out, err = p.communicate(timeout=wait)
            return None, out or "", err or ""
        except subprocess.TimeoutExpired:
            continue
    # Something outside the session still holds the pipes: give them up.
    p.stdout.close()
    p.stderr.close()
    p.wait()
    return None, "", "(its output lost: the pipes stayed open after the kill)"


class Command:
    def __init__(self, name, argv, status=0, expect=(), absent=(), timeout=120, needs=(),
                 alone=False, count=None):
        self.name = name
        self.argv, self.status, self.expect, self.absent = argv, status, expect, absent
        self.count = count or {}    # pattern: the number of lines it must match
        self.timeout, self.needs = timeout, needs
        self.alone = alone      # runs by itself after the others: it keeps the host's CPUs busy

    def run(self, root, build):
        argv = [a.format(root=root, build=build) for a in self.argv]
        for tool in self.needs:
            if not (shutil.which(tool) or (tool.startswith("/") and os.path.exists(tool))):
                return False, "%s is not installed (make deps)" % tool, ""
        rc, stdout, stderr = run_session(argv, root, self.timeout)
        if rc is None:
            return False, "timed out after %d s" % self.timeout, stdout + stderr
        log = "$ %s\n%s\n--- stderr ---\n%s" % (" ".join(argv), stdout, stderr)
        return verify(rc, stdout + stderr, self.status, self.expect,
                      self.absent, self.count, log)


class Check:
    def __init__(self, name, fn):
        self.name, self.fn = name, fn

    def run(self, root, build):
        return self.fn(root, build)


def verify(rc, out, status, expect, absent, count, log):
    """status: the exit status expected, or a tuple of those allowed."""
    allowed = status if isinstance(status, tuple) else (status,)
    if rc not in allowed:
        return False, "exit status %d, expected %s" % (rc, " or ".join(map(str, allowed))), log
    for rx in expect:
        if not re.search(rx, out, re.M):
            return False, "missing output matching %r" % rx, log
    for rx in absent:
        m = re.search(rx, out, re.M)
        if m:
            return False, "unexpected output %r" % m.group(0), log
    for rx, n in count.items():
        got = len(re.findall(rx, out, re.M))
        if got != n:
            return False, "%d lines match %r, expected %d" % (got, rx, n), log
    return True, "", log


def static_elf(root, build):
    """now.elf is a static ELF64 for x86-64, no interpreter, picolibc inside."""
    elf = os.path.join(build, "now.elf")
    h = subprocess.run(["readelf", "-hlsW", elf], capture_output=True, text=True)
    log = h.stdout[-4000:]
    if h.returncode != 0:
        return False, "readelf failed", h.stderr
    if "ELF64" not in h.stdout or "Advanced Micro Devices X86-64" not in h.stdout:
        return False, "not an ELF64 x86-64 image", log
    if "INTERP" in h.stdout or "DYNAMIC" in h.stdout:
        return False, "image is dynamically linked", log
    if "EXEC (Executable file)" not in h.stdout:
        return False, "image is not a fixed-address executable", log
    # picolibc's tinystdio printf core, and our sbrk replacing picolibc's.
    for sym in ("__d_vfprintf", "sbrk", "__retarget_lock_acquire_recursive"):
        if not re.search(r"\s%s$" % re.escape(sym), h.stdout, re.M):
            return False, "symbol %s missing: not linked with picolibc?" % sym, log
    if re.search(r"GLIBC|__libc_start_main", h.stdout):
        return False, "host glibc symbols in the image", log
    return True, "", log


def ksyms_match(root, build):
    """The panic symbol table names the same functions nm sees."""
    elf = os.path.join(build, "now.elf")
    nm = subprocess.run(["nm", elf], capture_output=True, text=True).stdout
    if not re.search(r" [tT] kmain$", nm, re.M):
        return False, "kmain not found by nm", nm[-2000:]
    sec = subprocess.run(["readelf", "-SW", elf], capture_output=True, text=True).stdout
    m = re.search(r"\.ksyms\s+PROGBITS\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", sec)
    if not m or int(m.group(1), 16) < 1024:
        return False, "the .ksyms section is missing or nearly empty", sec
    return True, "", ""


# The test hooks (#ifdef NOW_TEST_HOOKS): in the test image, never in build/now.elf.
TEST_HOOKS = ("rmem_test_forge", "req_test_dequeue_hook", "req_test_body_hook", "dep_test_send_raw",
              "mad_req_test_inhibit", "mad_req_test_words")


def image_apart(root, build):
    """build/now.elf carries the user apps only: no compile unit of tests/, no test
    hook, no test or bench app; the test image has all three (so the check can fail)."""
    sys.path.insert(0, os.path.join(root, "boot"))
    import nowimage
    out = []
    seen = {}
    for name in ("now.elf", "now-test.elf"):
        elf = os.path.join(build, name)
        info = subprocess.run(["readelf", "--debug-dump=info", elf], capture_output=True, text=True).stdout
        units = set(re.findall(r"DW_TAG_compile_unit.*?DW_AT_name\s*:.*?(\S+)\n", info, re.S))
        # Symbols, and the debug information's names (LTO inlines a hook into its caller).
        syms = set(re.findall(r" [tTdDrRbBwW] (\S+?)(?:\.\S*)?$",
                              subprocess.run(["nm", elf], capture_output=True, text=True).stdout, re.M))
        syms |= set(re.findall(r"DW_AT_name\s*:.*?(\w+)$", info, re.M))
        img = nowimage.read(elf)
        seen[name] = (sorted(u for u in units if u.startswith("tests/")),
                      sorted(h for h in TEST_HOOKS if h in syms), set(img["apps"]) if img else None)
        out.append("%s: %d units of tests/, hooks %s, apps %s" % (
            name, len(seen[name][0]), " ".join(seen[name][1]) or "none",
            " ".join(sorted(seen[name][2] or []))))
    log = "\n".join(out)
    (units, hooks, apps), (tunits, thooks, tapps) = seen["now.elf"], seen["now-test.elf"]
    if apps is None or tapps is None:
        return False, "cannot read the images' app tables", log
    if units or hooks:
        return False, "build/now.elf carries test code: %s" % " ".join(units + hooks), log
    if len(tunits) < 20 or len(thooks) != len(TEST_HOOKS):
        return False, "the test image lacks its test code (the check cannot see it)", log
    user = set(re.findall(r'\.name = "([\w-]+)"', "".join(
        open(os.path.join(root, "apps", f)).read() for f in os.listdir(os.path.join(root, "apps"))
        if f.endswith(".c"))))
    if apps - user or not apps < tapps:
        return False, "build/now.elf's apps are not apps/'s alone: %s" % " ".join(sorted(apps - user)), log
    return True, "", log


def imports_selftest(root, build):
    """tests/imports.py names a circle of two files outside kernel/, and lets one inside it be."""
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        for folder in ("net", "kernel"):
            os.makedirs(os.path.join(t, "build", folder))
            os.makedirs(os.path.join(t, folder))
            for me, other in (("a", "b"), ("b", "a")):
                src = os.path.join(t, folder, me + ".c")
                open(src, "w").write("int %s_%s(void);\nint %s_%s(void) { return %s_%s(); }\n"
                                     % (other, folder, me, folder, other, folder))
                subprocess.run(["gcc", "-c", "-o", os.path.join(t, "build", folder, me + ".o"), src],
                               check=True)
        r = subprocess.run(["python3", os.path.join(root, "tests", "imports.py"), "--root", t,
                            "--build", os.path.join(t, "build")], capture_output=True, text=True)
        if r.returncode != 1 or "a circle: net/a net/b" not in r.stdout or "kernel/a" in r.stdout:
            return False, "the circle in net/ was not reported alone", r.stdout
    return True, "", r.stdout


def readme_files_selftest(root, build):
    """tests/readme_files.py names a file its README does not, and takes a header by its source."""
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "lib"))
        for n in ("a.c", "a.h", "b.c"):
            open(os.path.join(t, "lib", n), "w").close()
        open(os.path.join(t, "lib", "README.md"), "w").write("- `a.c`: a.\n")
        r = subprocess.run(["python3", os.path.join(root, "tests", "readme_files.py"), "--root", t],
                           capture_output=True, text=True)
        if r.returncode != 1 or "lib/b.c is not named" not in r.stdout or "a.h" in r.stdout:
            return False, "an unnamed file was not reported alone", r.stdout
        open(os.path.join(t, "lib", "README.md"), "a").write("- `b.c`: b.\n")
        r = subprocess.run(["python3", os.path.join(root, "tests", "readme_files.py"), "--root", t],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return False, "a README naming every file was refused", r.stdout
    return True, "", ""


# A NIC on a hub of its own (node=auto needs one; its frames reach nobody), without a boot ROM.
QEMU_ISO = ["qemu-system-x86_64", "-machine", "pc", "-accel", "tcg", "-m", "64",
            "-display", "none", "-vga", "none", "-no-reboot", "-monitor", "none",
            "-serial", "stdio", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
            "-netdev", "hubport,id=n0,hubid=0", "-device", "e1000,netdev=n0,romfile=",
            "-cdrom", "{build}/now.iso"]

# A UEFI PC: the Q35 chipset and OVMF (no -nic none: the firmware would try network boot first).
QEMU_ISO_UEFI = ["qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-m", "128",
                 "-bios", "/usr/share/OVMF/OVMF_CODE.fd",
                 "-display", "none", "-vga", "none", "-no-reboot", "-monitor", "none",
                 "-serial", "stdio", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
                 "-netdev", "hubport,id=n0,hubid=0", "-device", "e1000e,netdev=n0,romfile=",
                 "-cdrom", "{build}/now.iso"]

NODE_HELLO = r"^\[n%d\] hello from node %d of %d, tsc \d+\.\d+ MHz$"
TCP_ECHO = (r"^\[n0\] RESULT tcp-echo size=%d iters=\d+ median_us=\d+\.\d+ p99_us=\d+\.\d+ "
            r"throughput_mbps=\d+\.\d+$")

def fuzz_smoke(target, runs=20000):
    """A fuzz target, briefly, over its seeds, the inputs that once crashed it
    (tests/fuzz/regressions-<target>, where there is one) and its corpus from earlier runs,
    with a fixed random seed: the same inputs in every run of make test (make fuzz explores)."""
    return Command("fuzz/%s-smoke" % target,
                   ["bash", "-c", "mkdir -p {build}/fuzz/smoke_%s && "
                    "{build}/fuzz/fuzz_%s -seed=1 -runs=%d -max_len=8192 {build}/fuzz/smoke_%s "
                    "{build}/fuzz/seeds_%s $(ls -d {root}/tests/fuzz/regressions-%s 2>/dev/null)" %
                    (target, target, runs, target, target, target)],
                   expect=[r"Done \d+ runs"], timeout=300)


def own_program(prog, options, args=""):
    """The command that builds tests/mpi/progs/<prog>.c with boot/mpicc in a directory of its own,
    outside the checkout, and runs it with boot/mpirun <options> <prog>.elf <args>."""
    return ["bash", "-c", "d=$(mktemp -d) && trap 'rm -rf $d' EXIT && cd $d && "
            "{root}/boot/mpicc {root}/tests/mpi/progs/%s.c -o %s.elf && "
            "{root}/boot/mpirun %s %s.elf%s" % (prog, prog, options, prog, " " + args if args else "")]


CASES = [
    Check("check/static-elf-picolibc", static_elf),
    Check("check/ksyms", ksyms_match),
    Check("check/image-apart", image_apart),
    # The layers (README, "Layout"): no #include against an arrow the architecture forbids,
    # and the check itself fails on each kind of forbidden arrow.
    # The bench driver end to end on a few iterations: a table per run, the
    # side-by-side table and the halting line (timing is not asserted).
    # Every sample kept, the plots drawn and the report page written (tests/check_bench_report.py).
    Command("bench/smoke", ["bash", "-c", "{root}/boot/bench --nics e1000,shm,shm-halt --iters 20 "
                            "--only floor --stages '' --out {build}/tests/bench-smoke/results.json && "
                            "python3 {root}/tests/check_bench_report.py {build}/tests/bench-smoke"],
            expect=[r"median_us side by side", r"row +e1000 +shm +shm-halt",
                    r"shm-halt: \d+ of \d+ latency rows below the e1000 floor \(\d+\.\d+ us\)",
                    r"bench: every sample under .*, \d+ plots, report",
                    r"report: [1-9]\d* latency rows with every sample, [1-9]\d* plots, 0 problems",
                    # The shared memory's own round trip beside the link's rows, and every shm
                    # row as a multiple of it.
                    r"^  floor-line +\d+\.\d+ +\d+\.\d+ .* size=8 wait=spin",
                    r"^  floor-spin +\d+\.\d+ +\d+\.\d+ +\d+\.\d+ +\d+\.\d+ +\d+\.\d+  size=64",
                    r"shared-memory targets", r"the memory itself \(floor-line, round trip\): \d"],
            timeout=300, needs=("gnuplot",)),
    # make trace: every operation kind broken down by stage across two nodes, clocks aligned by
    # the fabric; a table per NIC and the JSON.
    Command("trace/smoke", ["{root}/boot/bench", "--trace-only", "--stages", "shm,e1000", "--ops",
                            "write,read,cas,req,deposit", "--stage-iters", "10",
                            "--out", "{build}/tests/trace/trace.json"], timeout=300,
            expect=[r"where the time goes on shm", r"where the time goes on e1000"] +
                   [r"  %s +sum of the step medians: \d+ ns" % op
                    for op in ("write", "read", "cas", "req", "deposit")] +
                   [r"  req +n1\.mech_rx +n1\.mech_done +\d+ +\d+ +10$",
                    r"  deposit +n1\.mech_rx +n1\.mech_done +\d+ +\d+ +10$",
                    r"  cas +n1\.nic_tx +n0\.nic_rx +\d+ +\d+ +10  \(between the nodes\)",
                    r"clocks aligned by the fabric within \d+ ns", r"bench: wrote .*trace\.json"]),
    # A stages run that fails fails make trace, and says where its logs are.
    Command("trace/failed-run", ["{root}/boot/bench", "--trace-only", "--stages", "shm", "--ops",
                                 "nosuchop", "--stage-iters", "2",
                                 "--out", "{build}/tests/trace-fail/trace.json"], status=1, timeout=120,
            expect=[r"bench: the stages run on shm failed \(status 2\); its logs are "]),
    # Each paper named by its own title and report number; every figure it reports, with where
    # in the paper and the row of ours beside it (or "-": none of ours measures it).
    Command("papers/titles", ["{root}/boot/papers", "--list"],
            expect=[r"^Remote memory \(Thekkath, Levy, Lazowska: Efficient Support for "
                    r"Multicomputing on ATM Networks, UW TR 93-04-03, 1993\)$",
                    r"^Remote enqueue \(Markatos, Katevenis, Vatsolaki: The Remote Enqueue "
                    r"Operation on Networks of Workstations, FORTH-ICS\)$",
                    r"^Madeleine \(Bouge, Mehaut, Namyst: Madeleine: An Efficient and Portable "
                    r"Communication Interface for RPC-based Multithreaded Environments, INRIA "
                    r"RR-3845, 1999\)$",
                    r"^Hybrid deposit \(Osborne: A Hybrid Deposit Model for Low Overhead "
                    r"Communication in High Speed LANs, MERL TR94-02c, 1994\)$",
                    r"^  Figure 6's RPC, 1 KiB array, over TCP +Figures 6, 8",
                    r"^    note: 35\.4 Mb/s = 4\.43 MB/s; ours in MB/s",
                    r"^  elsewhere: Tables 5 and 6 \(speedups of the Ising optimizer",
                    r"^    Reading data and writing destination addr +58$",
                    r"^    Total +209  \(ours: make cost's write-unreliable\)",
                    r"^    Total +375  \(ours: make cost's read-unreliable\)"] +
                   [r"^  %s +%s +%s  \(our row %s\)$" % tuple(map(re.escape, f)) for f in (
                       ("WRITE 40 B, one way", "Table 2", "37 us", "write-40"),
                       ("READ 40 B, round trip, no switch", "2.3", "45 us", "read-40"),
                       ("raw interface WRITE, polled, unprotected", "2.3", "11 us", "floor"),
                       ("what the software adds to a WRITE", "2.3", "19 us", "write-40"),
                       ("what the software adds to a READ", "2.3", "23 us", "read-40"),
                       ("ATM switch, per cell", "2.2", "7 us", "-"),
                       ("4K remote block transfer", "2.3", "35.4 Mb/s", "block-4k"),
                       ("the same by remote writes (40 B cells)", "2.3", "34.7 Mb/s",
                        "block-4k-cells"),
                       ("sustained WRITE throughput", "Table 3", "4.3 MB/s", "block-4k-cells"),
                       ("sustained WRITE throughput, 1408 B WRITEs", "Table 3", "4.3 MB/s",
                        "write-throughput"),
                       ("RPC Simple", "Table 4", "93 us", "rpc-simple"),
                       ("RPC Simple, raw frames", "Table 4, 3.1.2", "93 us", "rpc-simple-raw"),
                       ("Local RPC (same machine, null)", "Table 4", "57 us", "-"),
                       ("Madeleine's overhead over TCP", "3.1, Figure 9", "30 us", "mad-tcp-null"),
                       ("null RPC, Madeleine over BIP/Myrinet", "3.2", "8 us", "mad-rmem-null"),
                       ("null RPC, MPICH over BIP/Myrinet", "3.2", "12 us", "mpi-rmem-0"),
                       ("raw BIP message of 4 bytes", "3.2", "5.5 us", "write-40"),
                       ("Madeleine's overhead over BIP (8 - 5.5)", "3.2", "2.5 us", "mad-rmem-null"),
                       ("Madeleine's overhead over BIP, any size", "3.2", "<10 us", "mad-rmem-null"),
                       ("raw BIP bandwidth", "3.2", "126 MB/s", "write-bw-4m"),
                       ("latency, Madeleine over M-VIA/FE", "3.3", "37 us", "mad-rmem-null"),
                       ("latency, Madeleine over TCP/FE (beside VIA)", "3.3", "150 us",
                        "mad-tcp-null"),
                       ("bandwidth over M-VIA/FE, 64 kB messages", "3.3", ">11.5 MB/s",
                        "mad-bw-rmem-64k"),
                       ("null message, Madeleine over SISCI/SCI", "3.4", "5.4 us", "mad-req-null"),
                       ("null message over SISCI, our cell driver", "3.4", "5.4 us",
                        "mad-cell-null"),
                       ("raw SISCI latency", "3.4", "2.5 us", "req"),
                       ("Madeleine's overhead over SISCI, copy apart", "3.4", "3 us", "mad-req-null"),
                       ("Madeleine over SISCI, asymptotic", "3.4", "70 MB/s", "mad-bw-req-4m"),
                       ("raw SISCI, asymptotic", "3.4", "70 MB/s", "write-bw-4m"),
                       ("raw SISCI, 100 kB-1 MB messages", "3.4", "74 MB/s", "write-bw-256k"),
                       ("SCI DMA engine, start", "3.4", "200 us", "-"),
                       ("PM2 thread switch", "3.5", "<1 us", "-"),
                       ("PM2 thread migration, SISCI/SCI", "3.5", "25 us", "-"),
                       ("PM2 thread migration, BIP/Myrinet", "3.5", "57 us", "-"),
                       ("PM2 thread migration, MPI/BIP/Myrinet", "3.5", "79 us", "-"),
                       ("PM2 thread migration, TCP/Fast-Ethernet", "3.5", "245 us", "-"),
                       ("PM2 thread migration, MPI/TCP/Fast-Ethernet", "3.5", "330 us", "-"),
                       ("best null message latency, SISCI/SCI", "4 (table)", "6 us", "mad-req-null"),
                       ("best null message latency, BIP/Myrinet", "4 (table)", "8 us",
                        "mad-rmem-null"),
                       ("best bandwidth, SISCI/SCI", "4 (table)", "70 MB/s", "mad-bw-req-4m"),
                       ("best bandwidth, BIP/Myrinet", "4 (table)", "125 MB/s", "mad-bw-rmem-4m"),
                       ("32 B remote write, round trip", "5", "49 us", "deposit-rtt"),
                       ("32 B send to receive, through a switch", "abstract, 5", "30 us",
                        "deposit"))],
            # Ours beside each figure measures the same thing: the SCI null message on the
            # driver built as the paper's SCI queues, Table 3 by cell-size WRITEs.
            absent=[r"separating data", r"overhead over BIP +3\.2 +10 us",
                    r"SISCI/SCI +3\.4 .*\(our row mad-rmem-null\)",
                    r"^  sustained WRITE throughput +Table 3 .*\(our row write-throughput\)"]),
    # make papers: every figure of the four papers beside ours on e1000 and shm, none missing:
    # a number on each link where a row of ours measures it, "-" where none does.
    Command("papers/smoke", ["{root}/boot/papers", "--iters", "20",
                             "--out", "{build}/tests/papers/papers.json"], timeout=300,
            expect=[r"^Remote memory \(", r"^Remote enqueue \(", r"^Madeleine \(", r"^Hybrid deposit \(",
                    r"  REQ returns to its caller .*<1 us +\d+\.\d+",
                    r"^    note: 34\.7 Mb/s = 4\.34 MB/s; ours in MB/s: the same 256 KiB as 40-byte WRITEs",
                    r"^    note: ours: 8 MiB as full-frame 1408-byte WRITEs, not the paper's cell-size",
                    r"^    note: ours: \(mad-tcp-null - tcp-1B\) / 2, one way",
                    r"a paper's Mb/s \(megabits\) is divided by 8 for the ratio",
                    # Figure 8: Figure 6's RPC over Madeleine/TCP and over our MPI, per link.
                    r"^Figure 8 \(Madeleine paper 3\.1\): RPC of Figure 6 over Madeleine/TCP and over MPI/TCP",
                    r"^  +1024 +\d+\.\d +\d+\.\d +\d+\.\d\d",
                    # Table 1: the paper's rows beside make cost's stages of the same work.
                    r"^    MIPS interrupt dispatcher \(on destination\) +73 +\d+  the shared-memory",
                    r"^    Total +209 +\d+  ours / paper \d+\.\d\d",
                    r"^    Total +375 +\d+  ours / paper \d+\.\d\d",
                    r"papers: wrote .*papers\.json$"] +
                   # A figure with ours on both links: value and ratio on e1000, then on shm
                   # (an overhead, a difference of two medians, may come out below zero).
                   [r"^  %s +%s +%s" % tuple(map(re.escape, f)) + r" +-?\d+\.\d+" * 4 + "$" for f in (
                       ("WRITE 40 B, one way", "Table 2", "37 us"),
                       ("raw interface WRITE, polled, unprotected", "2.3", "11 us"),
                       ("what the software adds to a WRITE", "2.3", "19 us"),
                       ("what the software adds to a READ", "2.3", "23 us"),
                       ("4K remote block transfer", "2.3", "35.4 Mb/s"),
                       ("the same by remote writes (40 B cells)", "2.3", "34.7 Mb/s"),
                       ("sustained WRITE throughput", "Table 3", "4.3 MB/s"),
                       ("sustained WRITE throughput, 1408 B WRITEs", "Table 3", "4.3 MB/s"),
                       ("RPC Simple, raw frames", "Table 4, 3.1.2", "93 us"),
                       ("RPC MW-128", "Table 4", "698 us"),
                       ("TCP empty message latency", "3.1", "120 us"),
                       ("Madeleine's overhead over TCP", "3.1, Figure 9", "30 us"),
                       ("null RPC, Madeleine over BIP/Myrinet", "3.2", "8 us"),
                       ("null RPC, MPICH over BIP/Myrinet", "3.2", "12 us"),
                       ("Madeleine's overhead over BIP (8 - 5.5)", "3.2", "2.5 us"),
                       ("Madeleine's overhead over BIP, any size", "3.2", "<10 us"),
                       ("raw BIP bandwidth", "3.2", "126 MB/s"),
                       ("latency, Madeleine over M-VIA/FE", "3.3", "37 us"),
                       ("latency, Madeleine over TCP/FE (beside VIA)", "3.3", "150 us"),
                       ("bandwidth over M-VIA/FE, 64 kB messages", "3.3", ">11.5 MB/s"),
                       ("null message, Madeleine over SISCI/SCI", "3.4", "5.4 us"),
                       ("null message over SISCI, our cell driver", "3.4", "5.4 us"),
                       ("raw SISCI latency", "3.4", "2.5 us"),
                       ("Madeleine's overhead over SISCI, copy apart", "3.4", "3 us"),
                       ("Madeleine over SISCI, asymptotic", "3.4", "70 MB/s"),
                       ("raw SISCI, asymptotic", "3.4", "70 MB/s"),
                       ("raw SISCI, 100 kB-1 MB messages", "3.4", "74 MB/s"),
                       ("best null message latency, SISCI/SCI", "4 (table)", "6 us"),
                       ("best null message latency, BIP/Myrinet", "4 (table)", "8 us"),
                       ("best bandwidth, SISCI/SCI", "4 (table)", "70 MB/s"),
                       ("best bandwidth, BIP/Myrinet", "4 (table)", "125 MB/s"),
                       ("32 B remote write, round trip", "5", "49 us"),
                       ("32 B send to receive, through a switch", "abstract, 5", "30 us"))] +
                   # A figure no row of ours measures: "-" on both links, and the note says why.
                   [r"^  %s +%s +%s +- +-\s*$" % tuple(map(re.escape, f)) for f in (
                       ("ATM switch, per cell", "2.2", "7 us"),
                       ("Local RPC (same machine, null)", "Table 4", "57 us"),
                       ("SCI DMA engine, start", "3.4", "200 us"),
                       ("PM2 thread switch", "3.5", "<1 us"),
                       ("PM2 thread migration, SISCI/SCI", "3.5", "25 us"),
                       ("PM2 thread migration, MPI/TCP/Fast-Ethernet", "3.5", "330 us"))] +
                   [r"^    note: no row of ours: every RPC of ours is between two nodes",
                    r"^    note: no row of ours: we do not migrate threads"],
            absent=[r"missing"]),
    # Linux peers (make bench PEERS=1): two Debian Linux guests built from Debian's packages
    # measure UDP, TCP, soft-RoCE WRITE, READ and CAS and bulk TCP on the same switch and NIC.
    # (NetPIPE to 1 MiB and iperf3 16 MiB: the rows run, in half the time of make bench's.)
    # Its own --timeout ends it before the case's, saying where each guest stood.
    # Two Linux guests under TCG: by itself after the other cases, NetPIPE's curves to 64 KiB,
    # each guest on a CPU of its own (--cpus spread): MPICH polls, so on one host CPU each MPI
    # round trip waits for the host scheduler to switch guests (8 ms here, and on CI neither
    # MPI row was reached in 330 s); spread, the whole case takes about 65 s here.
    Command("peers/smoke", ["{root}/boot/peers", "--cpus", "spread", "--iters", "50", "--np-max", "65536",
                            "--bulk", "16777216", "--timeout", "330",
                            "--out", "{build}/tests/peers-smoke.json"],
            timeout=400, alone=True,
            expect=[r"^RESULT peer row=%s tool=\S+ n=50 median_us=[1-9][\d.]* " % row
                    for row in ("udp-64", "tcp-1B", "rxe-write", "rxe-read", "rxe-cas")] +
                   # Linux's bulk TCP (iperf3), beside which make bench puts our bulk rows.
                   [r"^RESULT peer row=iperf3-tcp bytes=[1-9]\d+ seconds=[\d.]+ mb_per_s=\d*[1-9]",
                    r"peers: wrote "],
            absent=[r"peer: MTU \d+ refused"],
            needs=("qemu-system-x86_64", "vde_plug", "apt-get")),
    # The rows of the papers' last features run and print their figures (not asserted).
    Command("bench/new-rows", ["bash", "-c", "{root}/boot/bench --nics shm --iters 20 --no-plots --stages '' "
                               "--only deposit-seq,deposit-mcast,rpc-ref-1k,rpc-concurrent "
                               "--out {build}/tests/bench-new/results.json && rm -rf {build}/tests/bench-new"],
            expect=[r"^  deposit-seq +\d+\.\d+ .*instructions=3",
                    r"^  deposit-mcast +\d+\.\d+ .* members=1",
                    r"^  rpc-ref-1k +\d+\.\d+ .* ref=1024",
                    r"^  rpc-concurrent +\d+\.\d+ .* threads=4 busy_calls=[1-9]"]),
    # The bulk rows on shm and e1000: every size of the block WRITE and READ (each READ's
    # last block compared with what node 1 holds: the row fails otherwise), the paper's 2.3
    # pair, memcpy-4m both ways, and the MB/s table side by side.  Alone: its shm nodes spin
    # on both host CPUs, and its e1000 pair, on one CPU with the cases beside it (Linux guests
    # among them), once went 10 s without a frame between its nodes.
    # Beside them, lwIP TCP one way (tcp-bw) and each Madeleine driver's curve (mad-bandwidth).
    Command("bench/bulk", ["bash", "-c", "{root}/boot/bench --nics shm,e1000 --no-plots --stages '' "
                           "--only bulk,tcp-bw,mad-bandwidth --out {build}/tests/bench-bulk/results.json && "
                           "rm -rf {build}/tests/bench-bulk"], timeout=400, alone=True,
            count={r"^  (write|read)-bw-(4k|16k|64k|256k|1m|4m) +- .* mb_per_s=\d+\.\d+": 24,
                   r"^  tcp-bw-(4k|16k|64k|256k|1m|4m) +- .* bytes=8388608 .* mb_per_s=\d+\.\d+": 12,
                   r"^  mad-bw-(tcp|rmem|req|cell)(-4k|-16k|-64k|-1m|-4m)? +- .* bytes=4194304 .* mb_per_s=\d+\.\d+": 48,
                   r"^  block-4k(-cells)? +- .* bytes=262144 .* mb_per_s=\d+\.\d+": 4,
                   r"^  memcpy-4m(-aligned)? +- .* mb_per_s=\d+\.\d+": 4},
            expect=[r"^MB/s side by side", r"^  read-bw-4m +\d+\.\d+ +\d+\.\d+$"],
            absent=[r"bench: (read|write)-bw: ", r"failed"]),
    # make cost's report of the instructions QEMU's TCG runs in a helper, from the image alone.
    Command("cost/helpers", ["{root}/boot/cost", "--helpers"],
            expect=[r"^  on the data path ", r"^    crc32 +x\d+ +in \d+ functions? \(crc32c_hw",
                    r"^    rdtsc +x\d+ +in \d+ functions", r"^    wrmsr +x\d+ +in 1 function \(schedule\)",
                    r"^    fxsave +x1 +in 1 function \(trap_common\)", r"^  elsewhere .*rdrand x\d+"]),
    Command("bench/unknown-run", ["{root}/boot/bench", "--nics", "e1000,token-ring"], status=2,
            expect=[r"token-ring: not one of virtio, e1000, e1000e, igb, shm, shm-halt"]),
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
    # make run names the cluster's status and what it means; make itself exits 2.
    Command("run/status-line", ["bash", "-c",
            "b=$(realpath --relative-to={root} {build}); "
            "make -s -C {root} BUILD=$b run APP=fault ARGS=kind=ud NODES=1 2>&1 | tail -2; "
            "echo \"make exit ${{PIPESTATUS[0]}}\""], timeout=120,
            expect=[r"^make run: cluster status 3: a node took an exception or panicked",
                    r"Error 3$", r"^make exit 2$"]),
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
    # The layers, enforced by the build (linker/layers.py): a violation planted in a scratch
    # copy (an include quoted, in angle brackets, relative or from a .inc; an extern and a call)
    # is refused by the compiler or the link's symbol check, naming it.
    Command("check/layers-selftest", ["{root}/tests/layers_test.sh", "{build}"], timeout=180,
            expect=[r"layers self-test: 1\d passed, 0 failed"]),
    Command("check/grub-multiboot2", ["grub-file", "--is-x86-multiboot2", "{build}/now.elf"],
            needs=("grub-file",)),

    # Fuzz targets, briefly, over their seeds and every input that once
    # crashed them (tests/fuzz/regressions); `make fuzz` runs them for long.
    Command("fuzz/fabric-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_fabric && "
             "{build}/fuzz/fuzz_fabric -seed=1 -runs=20000 -max_len=8192 {build}/fuzz/smoke_fabric "
             "{build}/fuzz/seeds_fabric {root}/tests/fuzz/regressions"],
            expect=[r"Done \d+ runs"], timeout=300),

    # The kernel's receive path with three simulated peers, keyed and not.
    fuzz_smoke("fabric_rx"),
    # lwIP's input path through the project's netif: ARP, ICMP, UDP, fragments, TCP.
    fuzz_smoke("lwip"),
    # Madeleine's TCP driver: its set-up's hellos and its stream, with any bytes and read sizes.
    fuzz_smoke("madtcp"),
    Command("fuzz/cmdline-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_cmdline && "
             "{build}/fuzz/fuzz_cmdline -runs=50000 {build}/fuzz/smoke_cmdline {build}/fuzz/seeds_cmdline"],
            expect=[r"Done \d+ runs"], timeout=300),

    Command("fuzz/mad-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_mad && "
             "{build}/fuzz/fuzz_mad -runs=30000 {build}/fuzz/smoke_mad {build}/fuzz/seeds_mad"],
            expect=[r"Done \d+ runs"], timeout=300),

    Command("fuzz/rpc-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_rpc && "
             "{build}/fuzz/fuzz_rpc -runs=20000 {build}/fuzz/smoke_rpc {build}/fuzz/seeds_rpc"],
            expect=[r"Done \d+ runs"], timeout=300),

    Command("fuzz/net-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_net && "
             "{build}/fuzz/fuzz_net -runs=50000 {build}/fuzz/smoke_net {build}/fuzz/seeds_net"],
            expect=[r"Done \d+ runs"], timeout=300),

    Command("fuzz/e1000-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_e1000 && "
             "{build}/fuzz/fuzz_e1000 -runs=5000 {build}/fuzz/smoke_e1000 {build}/fuzz/seeds_e1000"],
            expect=[r"Done \d+ runs"], timeout=300),

    Command("fuzz/igb-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_igb && "
             "{build}/fuzz/fuzz_igb -runs=5000 {build}/fuzz/smoke_igb {build}/fuzz/seeds_igb"],
            expect=[r"Done \d+ runs"], timeout=300),

    Command("fuzz/madcell-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_madcell && "
             "{build}/fuzz/fuzz_madcell -runs=10000 {build}/fuzz/smoke_madcell {build}/fuzz/seeds_madcell"],
            expect=[r"Done \d+ runs"], timeout=300),

    Command("fuzz/virtio-net-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_virtio_net && "
             "{build}/fuzz/fuzz_virtio_net -runs=3000 {build}/fuzz/smoke_virtio_net {build}/fuzz/seeds_virtio_net"],
            expect=[r"Done \d+ runs"], timeout=300),

    Command("fuzz/madreq-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_madreq && "
             "{build}/fuzz/fuzz_madreq -runs=10000 {build}/fuzz/smoke_madreq {build}/fuzz/seeds_madreq"],
            expect=[r"Done \d+ runs"], timeout=300),

    Command("fuzz/rmem-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_rmem && "
             "{build}/fuzz/fuzz_rmem -runs=30000 {build}/fuzz/smoke_rmem {build}/fuzz/seeds_rmem"],
            expect=[r"Done \d+ runs"], timeout=300),

    # Boot, hello and the cluster.
    Cluster("hello-1", app="hello", nodes=1,
            expect=[NODE_HELLO % (0, 0, 1), r"RESULT hello node=0 nodes=1 tsc_hz=\d+",
                    r"cpu: tsc .* \(calibrated against (hpet|pit)\)", r"^\[n0\] pci: 00:00\.0"]),
    Cluster("hello-4-default", nodes=4,
            expect=[NODE_HELLO % (i, i, 4) for i in range(4)] + [r"cluster: 4 nodes, status 0"]),
    Cluster("hello-8", app="hello", nodes=8, timeout=120,
            expect=[NODE_HELLO % (i, i, 8) for i in range(8)]),
    # Under QEMU's TCG (boot/cluster's default) the fabric's CRC-32C is the tables', not SSE4.2's
    # crc32 instruction, which TCG runs as a helper call (kernel/crc.c).
    Cluster("hello-e1000", app="hello", nodes=2, nic="e1000",
            expect=[NODE_HELLO % (i, i, 2) for i in range(2)] + [r"8086:100e ethernet controller"] +
                   [r"^\[n%d\] fabric: node %d of 2, .*crc32c tables \(QEMU TCG" % (i, i) for i in range(2)]),

    # The in-kernel tests of the core.
    Cluster("selftest", app="selftest", nodes=1, timeout=120,
            expect=[r"RESULT selftest passed=\d+ failed=0", r"selftest: vm_map_above_4g ok"],
            absent=[r"FAILED", r"EXCEPTION", r"PANIC"]),

    # Failures are reported, with a status.
    Cluster("fault-pagefault", app="fault", args="kind=pagefault", status=3,
            expect=[r"EXCEPTION 14 \(#PF page fault\)", r"fault address \(cr2\) = 0x0000004000000000",
                    r"rip=0x[0-9a-f]{16} rsp=", r"rax=0x[0-9a-f]{16}", r"backtrace:",
                    r"#\d+ 0x[0-9a-f]+ do_fault\+0x", r"node exits with status 3"]),
    Cluster("fault-ud", app="fault", args="kind=ud", status=3,
            expect=[r"EXCEPTION 6 \(#UD invalid opcode\)", r"do_fault\+0x"]),
    Cluster("fault-div0", app="fault", args="kind=div0", status=3,
            expect=[r"EXCEPTION 0 \(#DE divide error\)"]),
    Cluster("fault-gp", app="fault", args="kind=gp", status=3,
            expect=[r"EXCEPTION 13 \(#GP general protection\)"]),
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
                    r"\[n0\] rmem: applied write \d+ read \d+ atomic \d+; refused bad_segment",
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
    # The launcher reads the image's apps and keys: an unknown one is named once, no node boots.
    Cluster("launcher-unknown-app", app="nosuchapp", nodes=4, status=2,
            expect=[r"^cluster: error: no app 'nosuchapp' in build/now\.elf; its apps: .*\bhello\b.*\bselftest\b"],
            absent=[r"NOW node kernel", r"\[n\d\]"]),
    Cluster("launcher-unknown-key", app="fabric-stress", nodes=2, args="count=5 colour=red", status=2,
            expect=[r"^cluster: error: unknown key 'colour'; the kernel's keys: node nodes app .*; "
                    r"app fabric-stress's: count slow reboot reboots stall_ms$"],
            absent=[r"NOW node kernel"]),
    Cluster("cmdline-bad-value", app="hello", args="peer_timeout_ms=abc", status=2,
            expect=[r"peer_timeout_ms=abc: not an integer"]),
    Cluster("cmdline-out-of-range", app="hello", args="peer_timeout_ms=5", status=2,
            expect=[r"peer_timeout_ms=5: out of range \(100\.\.3600000\)"]),
    Cluster("cmdline-duplicate", app="hello", args="node=0 node=3", status=2,
            expect=[r"key 'node' is given more than once"]),
    Cluster("cmdline-app-arg-wrong-app", app="hello", args="kind=ud", status=2,
            options=["--no-image-check"],
            expect=[r"unknown key 'kind'", r"app 'hello' keys: none"]),

    # TCP over lwIP: node 0 echoes 1 B..64 KiB through node 1, every byte checked.
    Cluster("tcp-echo-virtio", app="tcp-echo", nodes=2, nic="virtio", timeout=120,
            expect=[TCP_ECHO % 1, TCP_ECHO % 65536,
                    # Ethernet's MTU, or the jumbo switch's frames if every path passed them by then
                    r"^\[n0\] lwip: 10\.0\.0\.1/24 up on virtio-net, MTU (1500|7858)$",
                    r"^\[n1\] lwip: 10\.0\.0\.2/24 up on virtio-net, MTU (1500|7858)$",
                    r"cluster: 2 nodes, status 0"],
            absent=[r"bytes wrong", r"PANIC", r"EXCEPTION"]),
    # TCP data nobody reads pins lwIP's share of the packet pool and no more:
    # the fabric beside it loses nothing, barriers pass, no peer is declared dead.
    Cluster("lwip-pin-virtio", app="lwip-pin", nodes=2, nic="virtio", timeout=180,
            expect=[r"lwIP holds \d+ packet buffers \(share 256\), refused [1-9]",
                    r"RESULT lwip-pin pinned=\d+ share=256 fabric_messages=2000 bad=0 checks=\d+ failed=0",
                    r"cluster: 2 nodes, status 0"],
            absent=[r"FAILED"]),
    Cluster("lwip-pin-share-64", app="lwip-pin", nodes=2, args="lwip_bufs=64", timeout=180,
            expect=[r"RESULT lwip-pin pinned=\d+ share=64 fabric_messages=2000 bad=0 checks=\d+ failed=0"],
            absent=[r"FAILED"]),
    Cluster("cmdline-lwip-bufs-range", app="hello", args="lwip_bufs=5000", status=2,
            expect=[r"cmdline: error: lwip_bufs=5000: out of range \(16\.\.512\)"]),
    Cluster("lwip-pin-e1000", app="lwip-pin", nodes=2, nic="e1000", timeout=180,
            expect=[r"RESULT lwip-pin pinned=\d+ share=256 fabric_messages=2000 bad=0 checks=\d+ failed=0",
                    r"cluster: 2 nodes, status 0"],
            absent=[r"FAILED"]),
    Cluster("tcp-echo-e1000", app="tcp-echo", nodes=2, nic="e1000", timeout=120,
            expect=[TCP_ECHO % 1, TCP_ECHO % 65536,
                    r"^\[n0\] lwip: 10\.0\.0\.1/24 up on e1000, MTU (1500|7858)$",
                    r"^\[n1\] lwip: 10\.0\.0\.2/24 up on e1000, MTU (1500|7858)$",
                    r"cluster: 2 nodes, status 0"],
            absent=[r"bytes wrong", r"PANIC", r"EXCEPTION"]),

    # The shared-memory link (drivers/ivshmem.c, boot/ivshmem-server): the tests that run on
    # both NICs run on it too, and a cluster of 16 on two host CPUs.
    Cluster("nictest-shm", app="nictest", nodes=2, nic="shm",
            expect=[r"RESULT nictest role=sender nic=ivshmem echoes=1455 retries=\d+ corrupted=0",
                    r"net: ivshmem \(pci [^)]*msi-x\) mac 02:4e:4f:57:00:01"]),
    Cluster("pingpong-shm", app="pingpong", nodes=2, nic="shm", timeout=150,
            args="iters=300 spin_iters=300 warmup=20 mode=both wait=all",
            expect=[r"RESULT pingpong nic=ivshmem wait=%s mode=%s size=64 iters=300 lost=0 " % (w, m)
                    for w in ("halt", "spin", "adaptive") for m in ("raw", "reliable")]),
    Cluster("cmdline-bad-shm-wait", app="hello", nodes=1, nic="shm", args="shm_wait=sometimes",
            status=2, expect=[r"cmdline: error: shm_wait=sometimes: not halt, adaptive or spin"]),
    # On a lossless link the channel drops CRCs and retransmission timers; fault= on a node
    # makes its link lossy, and its peers talk to it with both again (and nothing is lost).
    Cluster("fabric-stress-4-shm", app="fabric-stress", nodes=4, nic="shm",
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4,
                   r"lossless link \(no CRC, acks for credit\)": 4}),
    Cluster("fabric-stress-4-shm-faults", app="fabric-stress", nodes=4, nic="shm", timeout=180,
            args="fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            expect=[r"injected drop [1-9]\d* dup [1-9]\d* reorder [1-9]\d* corrupt [1-9]\d*"],
            absent=[r"lossless link"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4}),
    Cluster("fabric-stress-4-shm-one-lossy", app="fabric-stress", nodes=4, nic="shm", timeout=180,
            args="fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01 fault_node=2",
            expect=[r"^\[n2\] fabric: injected drop [1-9]\d* dup [1-9]\d* reorder [1-9]\d* corrupt [1-9]"],
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
                    r"\[n0\] ivshmem: .*bad lengths [1-9]\d*, .*most bad slots in one poll "
                    r"(?:[1-9]|[1-5][0-9]|6[0-4]) \(its budget 64\)", r"cluster: 2 nodes, status 0"],
            count={r"RESULT fabric-stress sent=5000 received=5000 lost=0 dup=0 misordered=0": 2}),
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
    # 64 nodes on the shared-memory link (4 slots a ring, a window of 4 frames a peer): the
    # acks that free credit get through a ring full of data, and discovery backs off.
    Cluster("fabric-stress-64-shm", app="fabric-stress", nodes=64, nic="shm", timeout=400,
            args="count=20",
            count={r"RESULT fabric-stress sent=1260 received=1260 lost=0 dup=0 misordered=0": 64}),
    # One WRITE and one READ broken down by stage across the two nodes (kernel/trace.h):
    # every step of each path has its line (timing is not asserted).
    Cluster("stages-shm", app="stages", nodes=2, nic="shm", args="iters=50",
            expect=[r"node 1's TSC is node 0's [-+]\d+ cycles",
                    r"RESULT stages op=write from=n0.app_call to=n0.mech_send n=\d+ median_ns=\d+",
                    r"RESULT stages op=write from=n1.mech_rx to=n1.mech_done n=\d+",
                    r"RESULT stages op=read from=n1.mech_rx to=n1.mech_send n=\d+",
                    r"RESULT stages op=read from=n0.mech_done to=n0.app_wake n=\d+"],
            count={r"RESULT stages op=write ": 7, r"RESULT stages op=read ": 14}),
    # The primitives' costs: every probe reports (timing is not asserted), both CRC-32C
    # implementations among them (QEMU's -cpu max has SSE4.2).
    Cluster("cost", app="cost", nodes=1, args="iters=2000",
            expect=[r"RESULT cost op=thread_switch ns=\d+", r"RESULT cost op=fxsave_fxrstor ns=\d+",
                    r"RESULT cost op=siphash_104 ns=\d+", r"RESULT cost op=crc32c_tables_1408 ns=\d+",
                    r"RESULT cost op=crc32c_sse42_1408 ns=\d+"],
            count={r"RESULT cost op=\w+ ns=\d+": 18}),
    Cluster("stages-e1000", app="stages", nodes=2, nic="e1000", args="iters=20",
            count={r"RESULT stages op=write ": 7, r"RESULT stages op=read ": 14}),
    Cluster("fabric-junk-shm", app="fabric-junk", nodes=2, nic="shm",
            expect=[r"RESULT fabric-junk kinds=16 per_kind=20 mismatches=0"]),
    Cluster("rmem-test-4-shm", app="rmem-test", nodes=4, nic="shm",
            expect=[r"counters 1200 and 1200 after 4 nodes x 300 increments"], absent=[r"FAILED"],
            count={r"RESULT rmem-test checks=\d+ failed=0": 4}),
    # Long frames of the shared-memory link read where they lie in the ring: the rmem WRITEs
    # of the bulk rows (each READ's last block checked against node 1's memory), the req
    # driver's copied first; none under a key, whose tag is over bytes of the node's own.
    Cluster("bulk-in-place-shm", app="bench", nodes=2, nic="shm",
            args="iters=20 only=bulk,mad-bandwidth stats=1",
            expect=[r"\[n1\] fabric: long frames of the shared ring taken where they lie [1-9]\d*, "
                    r"copied first [1-9]", r"cluster: 2 nodes, status 0"],
            count={r"RESULT bench row=write-bw-4m .* mb_per_s=": 1,
                   r"RESULT bench row=mad-bw-req-4m .* mb_per_s=": 1}),
    Cluster("bulk-in-place-shm-keyed", app="bench", nodes=2, nic="shm", options=["--key", "random"],
            args="iters=20 only=bulk stats=1",
            expect=[r"RESULT bench row=write-bw-4m .* mb_per_s=", r"cluster: 2 nodes, status 0"],
            absent=[r"shared ring"]),
    Cluster("rpc-test-4-shm", app="rpc-test", nodes=4, nic="shm", timeout=180,
            expect=[r"RESULT rpc-test calls=1809 failed=0 rewritten=0 role=server", r"cluster: 4 nodes, status 0"],
            absent=[r"FAILED"]),
    Cluster("req-stress-4-shm", app="req-stress", nodes=4, nic="shm", timeout=180,
            expect=[r"RESULT req-stress enqueued=12000 dequeued=12000 lost=0 dup=0 fifo_violations=0 "
                    r"overflows=\d{3,} deferred_overflows=[1-9]"], absent=[r"FAILED"]),
    Cluster("deposit-test-4-shm", app="deposit-test", nodes=4, nic="shm", timeout=180,
            expect=[r"counters 400 and 400 after 4 nodes x 100 increments",
                    r"a block of 44 cells went in 1 frames of up to 617 cells"],
            absent=[r"FAILED", r"unexpected"],
            count={r"cells ran 3 instructions each through the sequencer": 1,
                   r"a deposit into a read-only page was refused \(a page fault\), and landed once it was writable": 1,
                   r"^\[n1\] deposit-test: a send from a page the sender may not read was refused: a page fault at the sender": 1,
                   r"its sender stopped, the node's other connection went on; 300 flood cells landed in order": 1,
                   r"said stop and no go came in \d+ ms; the send fails \(-ETIMEDOUT\)": 1,
                   r"got the multicast cell and block": 3, r"RESULT deposit-test checks=\d+ failed=0": 4}),
    Cluster("tcp-echo-shm", app="tcp-echo", nodes=2, nic="shm", timeout=120,
            expect=[TCP_ECHO % 1, TCP_ECHO % 65536, r"^\[n0\] lwip: 10\.0\.0\.1/24 up on ivshmem, MTU 16384, no checksums$",
                    r"cluster: 2 nodes, status 0"],
            absent=[r"bytes wrong", r"PANIC", r"EXCEPTION"]),

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

] + [
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
         [r"injected drop [1-9]\d* dup [1-9]\d* reorder [1-9]\d* corrupt [1-9]\d*"],
         {r"RESULT fabric-stress sent=2000 received=2000 lost=0 dup=0 misordered=0": 3}),
        ("rmem-test", "rmem-test", 2, "", 150, [], {r"RESULT rmem-test checks=\d+ failed=0": 2}),
        ("mad-test-2-req", "mad-test", 2, "driver=req", 240, [r"I received the strings"],
         {r"RESULT mad-test driver=req messages=70 bytes=\d+ failures=0 misuse=11": 2}),
        ("tcp-echo", "tcp-echo", 2, "", 120,
         [TCP_ECHO % 1, TCP_ECHO % 65536, r"^\[n0\] lwip: 10\.0\.0\.1/24 up on igb, MTU (1500|7858)$"], {}),
    ]
] + [
    # The floor and the reliable channel, both wait modes (values are not asserted).
    Cluster("pingpong-virtio", app="pingpong", nodes=2, nic="virtio", timeout=150,
            args="iters=300 warmup=20 mode=both wait=both",
            expect=[r"RESULT pingpong nic=virtio-net wait=%s mode=%s size=64 iters=300 lost=\d+ "
                    r"median_us=[\d.]+ p99_us=[\d.]+ median_cycles=\d+" % (w, m)
                    for w in ("halt", "spin") for m in ("raw", "reliable")]),
    Cluster("pingpong-e1000", app="pingpong", nodes=2, nic="e1000", timeout=150,
            args="iters=300 warmup=20 mode=both wait=both",
            expect=[r"RESULT pingpong nic=e1000 wait=%s mode=%s size=64 iters=300" % (w, m)
                    for w in ("halt", "spin") for m in ("raw", "reliable")]),

    # The Q35 chipset (PCI Express, ICH9): NIC interrupts by MSI or MSI-X, the IOAPIC from the MADT.
] + [
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
] + [
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
    # A captured run (boot/cluster --pcap) decoded by tshark with boot/now-fabric.lua.
    Command("pcap/rmem-test-e1000", ["python3", "{root}/tests/pcap_test.py"], timeout=180,
            expect=[r"pcap: [1-9]\d* fabric frames decoded", r"pcap: 0 problems"],
            needs=("tshark",)),
    Command("pcap/rmem-test-keyed-virtio", ["python3", "{root}/tests/pcap_test.py", "--key",
                                            "--nic", "virtio"], timeout=180,
            expect=[r"pcap: [1-9]\d* fabric frames decoded", r"pcap: 0 problems"],
            needs=("tshark",)),
    Command("pcap/req-stress-e1000", ["python3", "{root}/tests/pcap_test.py", "--app",
                                      "req-stress"], timeout=180,
            expect=[r"pcap: ops .*'req\.1': [1-9]", r"pcap: 0 problems"], needs=("tshark",)),
    # Multicast as one frame (hybrid deposit 3.2): node 0's 201 multicast cells to nodes 1-3 are
    # 201 FAB_MCAST frames in its capture, each in every member's, and each member applies every
    # increment once; with frames dropped and doubled at the members too.
    Command("pcap/mcast-e1000", ["python3", "{root}/tests/pcap_mcast.py"], timeout=300,
            expect=[r"pcap-mcast: 201 multicast cells, 201 frames on the wire, each in every member's capture, "
                    r"every increment applied once"],
            needs=("qemu-system-x86_64",)),
    Command("pcap/mcast-e1000-faults", ["python3", "{root}/tests/pcap_mcast.py", "--args",
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
                    r"^\[n0\] fabric: auto: frames \d+, rejected 0, other nodes= 0, answers [1-9]"]),
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
    # A station in the middle (boot/hostile's relay: ARP replies make each node send the other's
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
    Cluster("mad-test-3-tcp-intruder", app="mad-test", nodes=3, args="driver=tcp intrude=1",
            timeout=180,
            count={r"RESULT mad-test driver=tcp messages=\d+ bytes=\d+ failures=0": 3,
                   r"^\[n0\] mad: tcp: a connection that did not prove a node's id": 2}),
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
] + [
    # The reliable channel: exactly once, in order, under faults and back-pressure.
    Cluster("fabric-stress-4", app="fabric-stress", nodes=4,
            expect=[r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4}),
    Cluster("fabric-stress-4-faults", app="fabric-stress", nodes=4, timeout=180,
            args="fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            expect=[r"injected drop [1-9]\d* dup [1-9]\d* reorder [1-9]\d* corrupt [1-9]\d*",
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
    Cluster("fabric-junk-virtio", app="fabric-junk", nodes=2, nic="virtio",
            expect=[r"RESULT fabric-junk kinds=16 per_kind=20 mismatches=0"]),
    Cluster("fabric-junk-e1000", app="fabric-junk", nodes=2, nic="e1000",
            expect=[r"RESULT fabric-junk kinds=16 per_kind=20 mismatches=0"]),
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
                    r"^\[n1\] ivshmem: .* rejected: bad counts 0, bad lengths 0"]),
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
                    r"bad_mac [1-9]\d* replay [1-9]\d*", r"key=\(hidden\)"],
            absent=[r"fabric-stress-test-key"],
            count={r"RESULT fabric-stress sent=6000 received=6000 lost=0 dup=0 misordered=0": 4}),
    Cluster("fabric-stress-3-keyed-e1000", app="fabric-stress", nodes=3, nic="e1000",
            args="count=1000", options=["--key", "random"],
            expect=[r"key_mismatch 0 bad_mac 0 replay 0"],
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
    Cluster("rmem-test-4-keyed", app="rmem-test", nodes=4, options=["--key", "random"],
            expect=[r"counters 1200 and 1200 after 4 nodes x 300 increments"], absent=[r"FAILED"],
            count={r"RESULT rmem-test checks=\d+ failed=0": 4}),
    Cluster("cmdline-short-key", app="hello", nodes=1, args="key=short", status=2,
            expect=[r"cmdline: error: key: 5 characters; a cluster key has 16 to 128"]),
    # The key from a passphrase: scrypt, salted with the cluster's name; the same on both nodes.
    Cluster("keyed-passphrase-cluster-name", app="fabric-stress", nodes=2, nic="e1000", timeout=90,
            args="count=100 key=correct-horse-battery-staple cluster=lab-3",
            count={r"fabric: the cluster key derived from key= by scrypt \(N 4096, r 8: 4096 KiB\) "
                   r"in \d+ ms, salted with cluster=lab-3": 2,
                   r"RESULT fabric-stress sent=100 received=100 lost=0 dup=0 misordered=0": 2}),
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
    # A hostile station on the switch (boot/hostile, boot/cluster --hostile): malformed
    # frames, frames forged in the nodes' names (DATA, ACK, PROBE, raw remote memory, HELLOs
    # of a forged reboot, barrier releases) and replays of frames it heard.  With a key the
    # apps complete, nothing lost, every forgery counted; without one the fabric trusts its
    # segment, and the nodes only must not crash nor outlive the peer timeout by much.
] + [
    Cluster("hostile-%s-keyed-%s" % (app, nic), app=app, nodes=nodes, nic=nic, timeout=180,
            args=args, options=["--key", "random", "--hostile"],
            expect=[r"cluster: hostile: sent [1-9]\d* frames"] +
                   ([r"bad_mac [1-9]\d* replay"] if app == "fabric-stress" else []),
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
] + [
    Cluster("hostile-%s-%s" % (app, nic), app=app, nodes=3, nic=nic, timeout=120,
            args="peer_timeout_ms=2000", options=["--hostile"], status=(0, 1),
            expect=[r"cluster: hostile: sent [1-9]\d* frames", r"cluster: 3 nodes, status [01]$"],
            absent=[r"panic", r"EXCEPTION", r"\(timeout\)", r"no exit status"])
    for nic in ("virtio", "e1000") for app in ("fabric-stress", "rmem-test")
] + ([
    # The same station on the launcher's Linux bridge (root only: a namespace, taps).
    Cluster("hostile-rmem-test-keyed-tap", app="rmem-test", nodes=2, nic="e1000", timeout=120,
            options=["--switch", "tap", "--key", "random", "--hostile"],
            expect=[r"cluster: hostile: sent [1-9]\d* frames .*heard [1-9]"],
            absent=[r"rebooted", r"FAILED"], count={r"RESULT rmem-test checks=\d+ failed=0": 2}),
    # One cluster across two hosts (two network namespaces, a veth cable, VXLAN between
    # their bridges): ids typed per host with --first/--total, then agreed by node=auto.
    Command("twohost/fabric-stress", ["bash", "{root}/tests/twohost_test.sh", "fabric-stress", "2",
                                      "count=500"], timeout=240,
            expect=[r"^A \[n[01]\] RESULT fabric-stress sent=1500 received=1500 lost=0 dup=0 "
                    r"misordered=0", r"^B \[n[23]\] RESULT fabric-stress sent=1500 received=1500 "
                    r"lost=0 dup=0 misordered=0", r"twohost: host A status 0, host B status 0"]),
    Command("twohost/auto-rmem-test", ["bash", "{root}/tests/twohost_test.sh", "rmem-test", "1",
                                       "node=auto nodes=2"], timeout=240,
            expect=[r"^A \[n0\] auto: node 0 of 2 \(MAC order\)",
                    r"^B \[n1\] auto: node 1 of 2 \(MAC order\)",
                    r"^[AB] \[n0\] RESULT rmem-test checks=\d+ failed=0",
                    r"^[AB] \[n1\] RESULT rmem-test checks=\d+ failed=0",
                    r"twohost: host A status 0, host B status 0"]),
] if os.geteuid() == 0 else []) + [
    # Node 1 resets itself halfway through fabric-stress and rejoins: the others report the
    # sends to its old incarnation that failed, send its new one everything again, and finish.
] + [
    Cluster("fabric-stress-reboot-%s%s" % (nic, "-keyed" if extra else ""), app="fabric-stress", nodes=3, nic=nic, timeout=120,
            args="reboot=1 count=1000", options=["--reboot", "1"] + extra,
            expect=[r"^\[n1\] fabric-stress: node 1, second boot",
                    r"^\[n0\] fabric-stress: n1 rebooted", r"^\[n2\] fabric-stress: n1 rebooted"],
            absent=[r"FAILED", r"never"],
            count={r"RESULT fabric-stress sent=2000 received=2000 lost=0 dup=0 misordered=0": 3,
                   r"^\[n[02]\] RESULT fabric-stress reboot node=1 restarts=1 old_received=\d+": 2})
    for (nic, extra) in [("virtio", []), ("e1000", []), ("virtio", ["--key", "random"])]
] + [
    # Barrier messages from a node that may not send them: counted, dropped, nothing released.
    Cluster("fabric-barrier-forge", app="barrier-forge", nodes=3, timeout=120,
            expect=[r"^\[n1\] RESULT barrier-forge forged=3 dropped=3 barrier2=-\d+ checks=\d+ failed=0",
                    r"^\[n0\] RESULT barrier-forge forged=3 dropped=3 barrier2=-\d+ checks=\d+ failed=0",
                    r"cluster: 3 nodes, status 0"],
            absent=[r"FAILED"]),
    Cluster("fabric-peer-timeout", app="peer-timeout", nodes=2, args="peer_timeout_ms=1000",
            expect=[r"node 1 stopped answering", r"RESULT peer-timeout error=-\d+ ms=\d+ sent=\d+ dead=1"]),
    Cluster("cmdline-bad-fault", app="fabric-stress", nodes=1, args="fault=drop:2", status=2,
            expect=[r"cmdline: error: fault=drop:2: rate '2' is not a probability"]),

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

    # RPC over remote memory (paper 3.1): the paper's calls, multi-frame calls, concurrent
    # clients, write protection while a procedure runs, every call run exactly once; under
    # loss the reliable channel hides it, raw argument frames need the SACK transport.
    Cluster("rpc-test-2", app="rpc-test", nodes=2,
            expect=[r"RESULT rpc-test calls=607 failed=0 rewritten=0 role=server"], absent=[r"FAILED"],
            count={r"RESULT rpc-test calls=\d+ failed=0 ": 2}),
    Cluster("rpc-test-4", app="rpc-test", nodes=4,
            expect=[r"RESULT rpc-test calls=1809 failed=0 rewritten=0 role=server"], absent=[r"FAILED"],
            count={r"RESULT rpc-test calls=\d+ failed=0 ": 4}),
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
                    r"injected drop [1-9]\d* dup [1-9]\d* reorder [1-9]"], absent=[r"FAILED"],
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
    Command("fuzz/req-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_req && "
             "{build}/fuzz/fuzz_req -runs=50000 {build}/fuzz/smoke_req {build}/fuzz/seeds_req"],
            expect=[r"Done \d+ runs"], timeout=300),

    # Hybrid deposit: every primitive, every exception class (each checked byte for byte and
    # blocking only its own connection), a read storm whose READs wait for reply room, fetch-and-increment
    # and compare-and-swap under contention, a barrier of register operations.
    # (On the jumbo switch, frames of 7872 bytes: 147 cells each.)
    Cluster("deposit-test-2", app="deposit-test", nodes=2, timeout=180,
            expect=[r"counters 200 and 200 after 2 nodes x 100 increments",
                    r"a block of 44 cells went in 1 frames of up to 147 cells"],
            absent=[r"FAILED", r"unexpected"],
            count={r"cells ran 3 instructions each through the sequencer": 1,
                   r"a deposit into a read-only page was refused \(a page fault\), and landed once it was writable": 1,
                   r"^\[n1\] deposit-test: a send from a page the sender may not read was refused: a page fault at the sender": 1,
                   r"its sender stopped, the node's other connection went on; 300 flood cells landed in order": 1,
                   r"said stop and no go came in \d+ ms; the send fails \(-ETIMEDOUT\)": 1,
                   r"got the multicast cell and block": 1, r"RESULT deposit-test checks=\d+ failed=0": 2}),
    Cluster("deposit-test-4", app="deposit-test", nodes=4, timeout=180,
            expect=[r"counters 400 and 400 after 4 nodes x 100 increments",
                    r"20 barrier rounds over 4 nodes"],
            absent=[r"FAILED", r"unexpected"],
            count={r"cells ran 3 instructions each through the sequencer": 1,
                   r"a deposit into a read-only page was refused \(a page fault\), and landed once it was writable": 1,
                   r"^\[n1\] deposit-test: a send from a page the sender may not read was refused: a page fault at the sender": 1,
                   r"its sender stopped, the node's other connection went on; 300 flood cells landed in order": 1,
                   r"said stop and no go came in \d+ ms; the send fails \(-ETIMEDOUT\)": 1,
                   r"got the multicast cell and block": 3, r"RESULT deposit-test checks=\d+ failed=0": 4}),
    Cluster("deposit-test-4-faults", app="deposit-test", nodes=4, timeout=240,
            args="fault=drop:0.05,corrupt:0.01",
            expect=[r"counters 400 and 400", r"injected drop [1-9]\d* dup 0 reorder 0 corrupt [1-9]"],
            absent=[r"FAILED", r"unexpected"],
            count={r"cells ran 3 instructions each through the sequencer": 1,
                   r"a deposit into a read-only page was refused \(a page fault\), and landed once it was writable": 1,
                   r"^\[n1\] deposit-test: a send from a page the sender may not read was refused: a page fault at the sender": 1,
                   r"its sender stopped, the node's other connection went on; 300 flood cells landed in order": 1,
                   r"said stop and no go came in \d+ ms; the send fails \(-ETIMEDOUT\)": 1,
                   r"got the multicast cell and block": 3, r"RESULT deposit-test checks=\d+ failed=0": 4}),
    # At Ethernet's frames (frame=1514): a block's cells 27 to a frame, its 44 in two.
    # One member's stop holds it alone (6.4 with 3.2): node 3 blocks its end of the multicast
    # connection behind an exception and says stop; node 0's next cell goes to nodes 1 and 2 at
    # once and to node 3 at its go; every member ends with every cell once.
    Cluster("deposit-test-4-mcast-stop", app="deposit-test", nodes=4, nic="e1000", timeout=240,
            args="mcast_stop=1",
            expect=[r"^\[n0\] deposit-test: node 3 said stop: [1-9]\d* multicast cells went to the other members "
                    r"first, and to it at its go"],
            absent=[r"FAILED", r"unexpected"],
            count={r"deposit-test: node \d has the WRITE and the 100 increments sent behind the stop, once each": 3,
                   r"RESULT deposit-test checks=\d+ failed=0": 4}),
    Cluster("deposit-test-4-faults-e1000", app="deposit-test", nodes=4, nic="e1000", timeout=240,
            args="frame=1514 fault=drop:0.05,dup:0.02,reorder:0.02,corrupt:0.01",
            expect=[r"counters 400 and 400", r"a block of 44 cells went in 2 frames of up to 27 cells"],
            absent=[r"FAILED", r"unexpected"],
            count={r"cells ran 3 instructions each through the sequencer": 1,
                   r"a deposit into a read-only page was refused \(a page fault\), and landed once it was writable": 1,
                   r"^\[n1\] deposit-test: a send from a page the sender may not read was refused: a page fault at the sender": 1,
                   r"its sender stopped, the node's other connection went on; 300 flood cells landed in order": 1,
                   r"said stop and no go came in \d+ ms; the send fails \(-ETIMEDOUT\)": 1,
                   r"got the multicast cell and block": 3, r"RESULT deposit-test checks=\d+ failed=0": 4}),
    Command("fuzz/cell-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_cell && "
             "{build}/fuzz/fuzz_cell -runs=30000 -max_len=8192 {build}/fuzz/smoke_cell "
             "{build}/fuzz/seeds_cell"],
            expect=[r"Done \d+ runs"], timeout=300),
    Command("fuzz/call-smoke",
            ["bash", "-c", "mkdir -p {build}/fuzz/smoke_call && "
             "{build}/fuzz/fuzz_call -runs=50000 {build}/fuzz/smoke_call {build}/fuzz/seeds_call"],
            expect=[r"Done \d+ runs"], timeout=300),

    # Madeleine (lib/mad.h) on each driver, the same app: Figures 4/5, every mode pair,
    # 0 B to 1 MiB, misuse refused and the next message intact, none lost or doubled.
    # 2 nodes: 70 messages each (73 sent, 3 misused on purpose); 4 nodes: 206.  One of them
    # is packed once and sent to every other node (SND_LATER to many, mad_sendbuf_resend).
    # mad-test turns Madeleine's debug mode on (every message with its pack descriptor, a
    # wrong unpack refused at once); the 2-node shm cases run it with mad_debug=0, messages
    # of data only, where the same misuse is refused at receive_data.
] + [
    Cluster("mad-test-%d-%s%s%s" % (n, d, "-faults" if f else "", "-shm" if nic == "shm" else ""),
            app="mad-test", nodes=n,
            args="driver=%s%s%s" % (d, " fault=drop:0.05,dup:0.01,reorder:0.01,corrupt:0.01" if f else "",
                                    " mad_debug=0" if (n, nic) == (2, "shm") else ""),
            nic=nic, timeout=240,
            expect=[r"I received the strings",
                    r"^\[n0\] mad-test: node 0 of %d on driver %s, %s" % (
                        n, d, "messages of data only" if (n, nic) == (2, "shm") else
                        r"messages with their pack descriptor \(mad_debug\)")],
            absent=[r"FAILED", r"malformed"],
            count=dict([(r"RESULT mad-test driver=%s messages=%d bytes=\d+ failures=0 misuse=%d" %
                         (d, 70 if n == 2 else 206, 11 if n == 2 else 19), n)] +
                       # req sends asynchronously: a MiB outruns the ring, send_poll says "not yet".
                       ([(r"RESULT mad-test driver=req .* send_pending=[1-9]", n)] if d == "req" else [])))
    for (n, d, f, nic) in [(2, "tcp", 0, "virtio"), (4, "tcp", 0, "e1000"),
                           (2, "rmem", 0, "virtio"), (4, "rmem", 0, "virtio"), (4, "rmem", 1, "e1000"),
                           (2, "req", 0, "e1000"), (4, "req", 0, "virtio"), (4, "req", 1, "virtio"),
                           (2, "cell", 0, "virtio"), (4, "cell", 0, "e1000"), (4, "cell", 1, "virtio"),
                           (2, "tcp", 0, "shm"), (2, "rmem", 0, "shm"), (2, "req", 0, "shm"),
                           (2, "cell", 0, "shm"), (4, "req", 0, "shm"), (4, "cell", 1, "shm")]
] + [
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
] + [
    # A Madeleine stream recovers from a chunk its receiver refused: node 1 breaks node 0's
    # stream 64 KiB into a 1 MiB message (req: its ring refuses the WRITEs, so the words
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
] + [
    # Madeleine's debug mode: the same program, every message with its descriptor (a word a pack).
    Cluster("mad-figure6-2-req-shm-debug", app="mad-figure6", nodes=2, nic="shm",
            args="driver=req mad_debug=1", timeout=150,
            expect=[r"^\[n0\] mad-figure6: node 0 on driver req, messages with their pack descriptor"],
            count={r"RESULT mad-figure6 driver=req rpcs=140 bytes=6664500 overhead=24 .* failures=0": 2}),
] + [
    # The shared-memory link's 64 KiB slots: a pair agrees on frames of 65532 bytes, and a
    # 4 MiB message on each driver (64 such frames on the fabric's channel, blocks of 63 KiB
    # WRITEs for rmem) arrives intact with frames dropped, doubled and corrupted.
    Cluster("mad-test-2-%s-shm-64k-faults" % d, app="mad-test", nodes=2, nic="shm",
            args="driver=%s big=4194304 fault=drop:0.03,dup:0.03,corrupt:0.01" % d, timeout=300,
            expect=[r"I received the strings", r"frames to 65532 bytes"],
            absent=[r"FAILED", r"malformed"],
            count={r"RESULT mad-test driver=%s messages=70 bytes=\d+ failures=0 misuse=11" % d: 2})
    for d in ("rmem", "req", "cell", "tcp")
] + [
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
                   r"10\.0\.0\.\d+/24 up on [\w-]+, MTU 9000)$": 2})
    for d, nic in (("rmem", "e1000"), ("req", "e1000"), ("cell", "e1000"), ("tcp", "e1000"),
                   ("rmem", "virtio"), ("rmem", "igb"))
] + [
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
] + [
    # A node forging another's REQ notification (word naming node 0, sent by node 2) is
    # refused by node 1, and node 0's stream to node 1 stays in step.
    Cluster("mad-test-3-req-forge", app="mad-test", nodes=3, args="driver=req forge=1", timeout=240,
            expect=[r"I received the strings", r"\[n1\] mad-req: a word naming node 0 on node 2's queue: refused"],
            absent=[r"FAILED", r"malformed", r"out of step"],
            count={r"RESULT mad-test driver=req messages=138 bytes=\d+ failures=0 misuse=15": 3}),
] + [
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
] + [
    Cluster("ising-%d-grid%d%s" % (n, g, "-faults" if f else ""), app="ising", nodes=n, timeout=180,
            args="grid=%d%s" % (g, " fault=drop:0.05,dup:0.01,reorder:0.01,corrupt:0.01" if f else ""),
            expect=[r"RESULT ising nodes=%d grid=%d sweeps=40 energy=\S+ .* ok=1" % (n, g)],
            absent=[r"FAILED"])
    for (n, g, f) in [(1, 40, 0), (2, 20, 0), (4, 80, 0), (4, 40, 1), (8, 40, 0)]
] + [
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
    # An app that prints no time or check: speedup names what it missed, not "status 0".
    Command("speedup/says-what-it-missed",
            ["{root}/boot/speedup", "--app", "hello", "--vary", "x=1", "--nodes", "1",
             "--out", "{build}/tests/speedup-hello.json"], status=1, timeout=120,
            expect=[r"speedup: hello on 1 node \(x=1\) failed: boot/cluster exited with status 2 "
                    r"\(a node rejected its command line",
                    r"node 0 printed no 'RESULT hello \.\.\.' line"]),
    Command("speedup/says-what-it-missed-ok",
            ["{root}/boot/speedup", "--app", "hello", "--vary", "seed=1", "--nodes", "1",
             "--out", "{build}/tests/speedup-hello.json"], status=1, timeout=120,
            expect=[r"speedup: hello on 1 node \(seed=1\) failed: node 0's RESULT line has no ms=",
                    r"says ok=<none>, not ok=1 \(no check against a sequential computation\)"],
            absent=[r"exit status 0"]),
    Command("speedup/ising-small",
            ["{root}/boot/speedup", "--app", "ising", "--vary", "grid=20", "--nodes", "1,2",
             "--out", "{build}/tests/speedup-ising.json"],
            expect=[r"ising speedup over the one-node run", r"^1\s+1\.00 ", r"^2\s+\d+\.\d\d",
                    r"the paper's Table 5", r"wrote .*speedup-ising.json"], timeout=300),
] + [
    # The circuit simulator (remote-memory paper 3.2.2): Chandy-Misra with null messages over
    # event rings written remotely; node 0 checks every output change (time and value)
    # against a sequential simulation on one node and every sum or product against the
    # arithmetic.  Seed 1: 100 vectors of adder32 are 27582 events, 20 are 5634; 10 of mul16
    # (1440 gates) 173520; 5 of mul32 (5952) 962187.  ring=8 batch=1: the smallest rings,
    # written back every 2 records.
    Cluster("circuit-%d-%s" % (n, tag), app="circuit", nodes=n, nic=nic, timeout=240, args=args,
            expect=[r"RESULT circuit nodes=%d place=%s circuit=%s gates=%d vectors=%d events=%d "
                    r"null_messages=%s ms=\d+\.\d+ ok=1" %
                    (n, "random" if "random" in args else "linear", ckt,
                     {"adder32": 225, "mul16": 1440, "mul32": 5952}[ckt],
                     vec, ev, "0" if n == 1 else r"\d+")],
            absent=[r"FAILED"])
    for (n, tag, args, nic, ckt, vec, ev) in [
        (1, "adder32", "", "virtio", "adder32", 100, 27582),
        (2, "linear", "", "virtio", "adder32", 100, 27582),
        (2, "random-e1000", "place=random vectors=20", "e1000", "adder32", 20, 5634),
        (2, "ring8", "place=random vectors=20 ring=8 batch=1", "virtio", "adder32", 20, 5634),
        (4, "linear", "", "virtio", "adder32", 100, 27582),
        (4, "random", "place=random vectors=20", "virtio", "adder32", 20, 5634),
        (4, "random-drop", "place=random vectors=20 fault=drop:0.05", "virtio", "adder32", 20, 5634),
        (4, "mul16", "circuit=mul16 vectors=10", "e1000", "mul16", 10, 173520),
        (4, "mul32-random", "circuit=mul32 vectors=5 place=random", "virtio", "mul32", 5, 962187),
        (8, "linear", "", "virtio", "adder32", 100, 27582)]
] + [
    # A grid the node's memory cannot hold: said, and the run fails.
    Cluster("ising-1-no-memory", app="ising", nodes=1, args="grid=2000 sweeps=1", status=1,
            expect=[r"ising: node 0: no memory for its 2000 rows of a 2000x2000 grid"]),
    # The check itself: one output change inverted on node 0 must fail the run.
    Cluster("circuit-2-checker", app="circuit", nodes=2, args="flip=100", status=1,
            expect=[r"circuit: FAILED: output change \d+: expected s\d+=\d at \d+, got",
                    r"RESULT circuit nodes=2 .* ok=0"]),
    # The default make run: Ising 1000x1000 in three rounds, each beside the one-node run, the
    # median's speedup line with its ceiling (boot/cluster passes host_cpus), then the circuit simulator.
    Cluster("tour-4", app="tour", nodes=4, timeout=240,
            count={r"tour: node \d of 4, tsc \d+\.\d{3} MHz": 4,
                   r"tour: round \d of 3: 4 nodes \d+\.\d+ ms, alone on node 0 \d+\.\d+ ms, speedup \d+\.\d\d": 3},
            expect=[r"tour: ising 1000x1000: energy \S+, bit for bit the same as the one-node run",
                    r"tour: ising 1000x1000 on 4 nodes: \d+\.\d+ ms; alone on node 0: \d+\.\d+ ms "
                    r"\(the median of 3 rounds\); speedup \d+\.\d\d \(ceiling [12]: 4 nodes on \d+ host CPUs?\)",
                    r"RESULT tour part=ising nodes=4 grid=1000 sweeps=6 rounds=3 .* ok=1",
                    r"RESULT tour part=circuit nodes=4 .* ok=1", r"tour: every result checked"],
            absent=[r"FAILED"]),
    # The launcher itself, with a tiny test guest (exit codes, prefixes,
    # timeout, grace, Ctrl-C cleanup, pinning, tap namespace).
    Command("launcher/suite", ["bash", "{root}/tests/launcher_test.sh"], timeout=400,
            expect=[r"launcher tests: \d+ passed, 0 failed"]),
    # The README's keys and apps are the kernel image's own (its argument tables, its apps).
    Command("check/readme-keys", ["python3", "{root}/tests/readme_keys.py", "{root}/README.md",
                                  "{build}/now-test.elf"],
            expect=[r"readme-keys: \d+ keys, \d+ apps, the same in both"]),
    # Every source file is named in its folder's README.
    Command("check/readme-files", ["python3", "{root}/tests/readme_files.py"],
            expect=[r"readme-files: \d+ files in \d+ folders, every one named"]),
    Check("check/readme-files-selftest", readme_files_selftest),
    # No file outside kernel/ uses a file that uses it back (by their objects' symbols).
    Command("check/imports", ["python3", "{root}/tests/imports.py", "--build", "{build}"],
            expect=[r"imports: \d+ files, \d+ imports, no circle outside kernel/"]),
    Check("check/imports-selftest", imports_selftest),
    # A QEMU without igb (Debian 12's 7.2 where backports cannot be reached): the igb cases
    # are skipped and named, none passes or fails; boot/cluster --nic igb says why.
    Command("check/old-qemu-skips", ["bash", "{root}/tests/skip_test.sh", "{build}"],
            expect=[r"skip_test: 1\d igb cases skipped and named",
                    r"skip_test: boot/cluster --nic igb refused"], timeout=120),
    # make run and make test bring QEMU 10 as CI does (boot/deps.sh --qemu10 before anything is
    # built), and the framebuffer's font, which a fresh machine has only once deps installed
    # grub-common, waits for it rather than stopping make at "No rule to make target".
    Command("check/make-brings-what-ci-brings", ["bash", "-c",
            "cd {root} && for t in run test bench; do echo \"$t: $(make -n BUILD={build} $t 2>&1 | "
            "grep -c '^boot/deps.sh --qemu10$')\"; done && "
            "make -n -p BUILD={build} /usr/share/grub/ascii.h 2>&1 | grep -A1 '^/usr/share/grub/ascii.h:' | head -2"],
            expect=[r"^run: 1$", r"^test: 1$", r"^bench: 1$",
                    r"^/usr/share/grub/ascii.h: \| deps-check$"]),
    # make deps' backports entry comes from the machine's own Debian source (one-line and
    # deb822 files), its mirror and key; an existing backports entry is used as it is.
    Command("check/deps-backports-entry", ["bash", "-c",
            "d=$(mktemp -d) && mkdir -p $d/sources.list.d && "
            "printf '# a comment\\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.invalid/debian "
            "bookworm main\\ndeb http://other.invalid/debian bookworm-updates main\\n' > $d/sources.list && "
            "NOW_APT_ETC=$d NOW_CODENAME=bookworm {root}/boot/deps.sh --show-backports && "
            "rm $d/sources.list && printf 'Types: deb-src\\nURIs: http://src.invalid/debian\\n"
            "Suites: bookworm\\n\\nTypes: deb\\nURIs: http://deb822.invalid/debian\\n"
            "Suites: bookworm bookworm-updates\\nComponents: main\\n' > $d/sources.list.d/d.sources && "
            "NOW_APT_ETC=$d NOW_CODENAME=bookworm {root}/boot/deps.sh --show-backports && "
            "printf 'deb http://bp.invalid/debian bookworm-backports main\\n' > $d/sources.list && "
            "NOW_APT_ETC=$d NOW_CODENAME=bookworm {root}/boot/deps.sh --show-backports; rm -rf $d"],
            expect=[r"^URIs: http://mirror\.invalid/debian\nSuites: bookworm-backports\n"
                    r"Components: main\nSigned-By: /k\.gpg$",
                    r"^URIs: http://deb822\.invalid/debian\nSuites: bookworm-backports\n"
                    r"Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring\.gpg$",
                    r"bookworm-backports is already a source here \(http://bp\.invalid/debian\)"]),
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
                    r"\[n1\] net: e1000 rx \d+ frames",
                    r"\[n0\] now: NMI: end of the dump", r"\[n1\] now: NMI: end of the dump",
                    r"cluster: n1: status 255: killed: timeout after 15s"]),
    # Every example of boot/cluster --help runs as written and ends well.
    # Alone: its 8-node example pins every node to one host CPU, and beside another case's
    # nodes it ran past its own --timeout 60 (make test's full runs, two of three).
    Command("launcher/help-examples", ["python3", "{root}/tests/help_examples.py", "boot/cluster"],
            timeout=240, expect=[r"help-examples: (\d+) of \1 ran as written"], alone=True),

    # The same kernel from GRUB: the ISO boots to hello.
    # The menu's default entry is node=auto nodes=auto: alone on its segment, node 0 of 1.
    Command("qemu/iso-boots-hello", QEMU_ISO, status=1, timeout=90,
            expect=[r"boot: multiboot2 loader, command line 'node=auto nodes=auto app=hello'",
                    r"auto: node 0 of 1 \(MAC order\)",
                    r"hello from node 0 of 1", r"node exits with status 0"],
            needs=("qemu-system-x86_64",)),
    # A PC turns itself off when the app ends (exit=poweroff): ACPI S5 from the FADT and the
    # DSDT's \_S5, on both chipsets; no isa-debug-exit here, so only S5 can end QEMU.
] + [
    Command("qemu/acpi-poweroff-%s" % m,
            ["qemu-system-x86_64", "-machine", m, "-accel", "tcg", "-m", "64", "-display", "none",
             "-vga", "none", "-no-reboot", "-monitor", "none", "-serial", "stdio", "-nic", "none",
             "-kernel", "{build}/now.elf", "-append", "node=0 nodes=1 app=hello exit=poweroff"],
            status=0, timeout=60,
            expect=[r"hello from node 0 of 1", r"now: powering off \(ACPI S5\)"],
            needs=("qemu-system-x86_64",))
    for m in ("pc", "q35")
] + [
    Cluster("exit-bad-value", app="hello", nodes=1, args="exit=sleep", status=2, timeout=60,
            expect=[r"cmdline: error: exit=sleep: halt or poweroff"]),
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
            ["python3", "{root}/tests/fbcon_test.py", "{build}/now.iso", "hello from node 0 of 1",
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
    # A user's own MPI program, as it would build with Debian's mpicc, copied to a folder outside
    # the checkout, built there with boot/mpicc and run with boot/mpirun -np 4: its output lines
    # (prefixed with their ranks), its checks and its status (tests/mpi/progs/ring.c); on shm also
    # over each other Madeleine driver (tcp: the receiving thread's select is cut short when a
    # program's thread takes the receive over).
] + [
    Command("mpi/own-program-%s%s" % (nic, "-" + drv if drv else ""), ["bash", "-c",
            "d=$(mktemp -d) && trap 'rm -rf $d' EXIT && cp {root}/tests/mpi/progs/ring.c $d && cd $d && "
            "{root}/boot/mpicc -O2 ring.c -o ring.elf -lm && {root}/boot/mpirun -np 4 --nic %s%s ring.elf"
            % (nic, " --driver " + drv if drv else "")], timeout=240,
            expect=[r"^\[0\] ring: 4 hops, every value came back, sum 46$",
                    r"^\[0\] allreduce: 8 on every rank$",
                    r"^\[3\] alltoallv: 22 ints from 4 ranks, every one checked$",
                    r"^\[0\]  No Errors$"],
            absent=[r"mpirun: rank", r"rank \d+: .*: got"])
    for nic, drv in (("shm", None), ("virtio", None), ("shm", "req"), ("shm", "cell"), ("shm", "tcp"))
] + [
    # One rank's exit(3) is the job's status 3, and mpirun names the rank and its status.
    Command("mpi/exit-status", own_program("exit3", "-np 3 --grace 2"), status=3, timeout=180,
            expect=[r"^\[2\] rank 2: exit\(3\)$", r"^mpirun: rank 2 exited with status 3$",
                    r"^mpirun: ranks 0, 1 stopped after rank 2 failed"]),
    # A program's files (kernel/files.c): written, read back, sought in, appended to, renamed
    # and removed through stdio on every rank; /dev/stdout is the console, /dev/null takes all.
    Command("mpi/files", own_program("files", "-np 2"), timeout=180,
            expect=[r"^\[0\] rank 0: a line through /dev/stdout$", r"^\[1\] rank 1: a line through /dev/stdout$",
                    r"^\[0\]  No Errors$"]),
    # NetPIPE's NPmpi (Debian's netpipe source, make netpipe), unmodified, on 2 shm nodes: every
    # size from 1 to 1024 bytes measured, its output file /dev/stdout (np.out's lines: bytes,
    # Mbps, seconds).  Its figures are make bench's business; here, that it runs and reports.
    Command("mpi/netpipe-shm", ["{root}/boot/mpirun", "-np", "2", "{build}/netpipe/NPmpi.elf",
                                "-u", "1024", "-p", "0", "-o", "/dev/stdout"], timeout=240,
            expect=[r"^\[0\] Now starting the main loop$",
                    r"^\[0\]\s+0:\s+1 bytes\s+\d+ times -->\s+[\d.]+ Mbps in\s+[\d.]+ usec$",
                    r"^\[0\]\s+19:\s+1024 bytes\s+\d+ times -->\s+[\d.]+ Mbps in\s+[\d.]+ usec$",
                    r"^\[0\]\s+1 [\d.]+\s+[\d.]+$", r"^\[0\]\s+1024 [\d.]+\s+[\d.]+$"],
            absent=[r"Can't open", r"mpirun: rank"]),
    # Bad arguments: the class MPICH raises, with a message naming the call; with the default
    # handler a bad rank ends the job, named.
    Command("mpi/bad-arguments", own_program("badargs", "-np 2", "fatal"), status=1, timeout=180,
            expect=[r"^\[0\] rank: MPI_Send: Invalid rank", r"^\[0\] tag: MPI_Send: ",
                    r"^\[0\] count: MPI_Send: ", r"^\[0\] datatype: MPI_Send: ",
                    r"^\[0\] communicator: MPI_Send: ", r"^\[0\] buffer: MPI_Send: ",
                    r"^\[0\] root: MPI_Bcast: ", r"^\[0\] op: MPI_Reduce: ", r"^\[0\]  No Errors$",
                    r"^\[1\] Fatal error in MPI_Send: Invalid rank",
                    r"^mpirun: rank 1 aborted the job \(code 1\): .*MPI_Send"]),
    # A rank that dies: the other's receive from it fails (MPI_ERR_PROC_FAILED), it does not hang.
    Command("mpi/dead-rank", own_program("deadpeer", "-np 2 --timeout 90"), timeout=180,
            expect=[r"^\[1\] rank 1: leaving without a word$",
                    r"^\[0\] rank 0: MPI_Recv from rank 1 returned class 101 after",
                    r"^\[0\]  No Errors$"]),
    # Cancelled sends (MPI-3.1 3.8.4): a rendezvous, a synchronous and a self send nobody receives
    # are cancelled and their Waits return; one already received is not cancelled and arrives.
    Command("mpi/cancel-send", own_program("cancelsend", "-np 2 --timeout 60"), timeout=120,
            expect=[r"^\[0\] rank 0: a rendezvous send nobody receives cancelled$",
                    r"^\[0\] rank 0: a synchronous send nobody receives cancelled$",
                    r"^\[0\] rank 0: a synchronous send to itself cancelled$",
                    r"^\[0\] rank 0: a send already received not cancelled$",
                    r"^\[0\]  No Errors$"]),
    # Dynamic windows (regions attached at any time, found by absolute address, one refused
    # outside every region, one attached over another refused) and shared windows (a
    # communicator of one per node; across nodes refused with MPI_ERR_RMA_SHARED), and
    # accumulates of 16-byte elements (long double, MPI_DOUBLE_INT) from every rank at once.
    Command("mpi/dynamic-shared-windows", own_program("dynwin", "-np 3 --timeout 60"), timeout=120,
            expect=[r"^\[0\]  No Errors$"], absent=[r"^\[\d\] rank \d: "]),
    # A job that hangs: mpirun's timeout names the ranks still running and where each was, from
    # the NMI dump boot/cluster asks every node for before it kills it.
    Command("mpi/timeout-says-where", own_program("hang", "-np 2 --timeout 15"), status=124, timeout=120,
            expect=[r"^\[1\] rank 1: waiting$",
                    r"^mpirun: timeout after 15 s: ranks 0, 1 still running, stopped$",
                    r"^mpirun: rank 0 was blocked in .*< MPI_Finalize\+0x[0-9a-f]+ < main\+",
                    r"^mpirun: rank 1 was blocked in .*< MPI_Recv\+0x[0-9a-f]+ < main\+"]),
    # MPICH's own test suite (test/mpi of Debian 12's mpich source), the tests the library must
    # pass (tests/mpi/named.txt), and the rma tests MPI's one-sided windows on remote memory
    # (lib/mpi/win.c) pass so far (tests/mpi/rma.txt: the issue's set; tests/mpi/rma-more.txt:
    # dynamic and shared windows, accesses across attached regions, a thousand windows, info
    # hints, wide pair types), on the shared-memory link: one run of the sets, two jobs at once
    # to the end (two runs, one after the other, left a CPU idle while each one's last jobs ran).
    # A run whose testlist line asks for more than 5 ranks runs on 5 (coll7 needs 5, a divisor of
    # 10; bcasttest, redscat2, uoplong and allred ask for up to 16): time, not coverage.
    Command("mpi/mpich-named-rma-shm", ["python3", "{root}/tests/mpi/runtests.py", "--tests",
                                        "{root}/tests/mpi/named.txt,{root}/tests/mpi/rma.txt,"
                                        "{root}/tests/mpi/rma-more.txt", "--nic",
                                        "shm", "--jobs", "2", "--cap-np", "5", "--out", "{build}/tests/mpi-named"],
            timeout=1500, expect=[r"^rma: 43 passed, 0 failed, 0 skipped$",
                                  r"^114 passed, 0 failed, 0 skipped$"], alone=True),
] + [
    # make cost on the shared-memory link: every operation's instructions on each node under
    # -icount, twice: the counts the same in both runs, every operation within its budget
    # (tests/cost/budgets).  Instructions are cost, not time: a slow host fails nothing.  On
    # host CPU 1 only, and last: its nodes spin, and the tests pinned to CPU 0 (the Linux
    # peers) must not share a host CPU with spinning nodes while they run.
    Command("cost/budgets", ["{root}/boot/cost", "--links", "shm", "--check", "--runs", "2",
                             "--cpu", "1", "--out", "{build}/tests/cost/cost.json"], timeout=500,
            expect=[r"^  write +\d+ +\d+ +\d+ +\d+  40-byte remote WRITE",
                    r"^  siphash_104 +\d+ +\d+", r"^  crc32c_96 +\d+ +\d+",
                    r"cost: every operation within its budget"],
            absent=[r"cost: FAIL"]),
]
