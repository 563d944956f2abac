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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "boot", "tools"))
import qemufacts  # noqa: E402  (boot/tools/qemufacts.py)


class Cluster:
    def __init__(self, name, app=None, nodes=1, args="", nic="virtio", status=0,
                 expect=(), absent=(), timeout=90, options=(), count=None):
        self.name = "qemu/" + name
        self.app, self.nodes, self.args, self.nic = app, nodes, args, nic
        self.status, self.expect, self.absent = status, expect, absent
        self.timeout, self.options = timeout, list(options)
        self.count = count or {}  # regex -> exact number of matching lines

    def command(self, root):
        cmd = [os.path.join(root, "boot", "tools", "cluster"), "--nodes", str(self.nodes),
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


def in_scratch(prefix, kept, check):
    """check(folder) in a new temporary folder (its name starting with prefix), its status
    returned: the folder removed where it is 0, else kept and named (kept + its path)."""
    import tempfile
    tmp = tempfile.mkdtemp(prefix=prefix)
    status = 1
    try:
        status = check(tmp)
    finally:
        if status == 0:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(kept + tmp)
    return status


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
    sys.path.insert(0, os.path.join(root, "boot", "tools"))
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
    user = set(re.findall(r'^APP\(\w+, "([\w-]+)"', "".join(
        open(os.path.join(root, "apps", f)).read() for f in os.listdir(os.path.join(root, "apps"))
        if f.endswith(".c")), re.M))
    if apps - user or not apps < tapps:
        return False, "build/now.elf's apps are not apps/'s alone: %s" % " ".join(sorted(apps - user)), log
    return True, "", log


def imports_selftest(root, build):
    """tests/tree/imports.py names a circle of two files outside kernel/, and lets one inside it be."""
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
        r = subprocess.run(["python3", os.path.join(root, "tests", "tree", "imports.py"), "--root", t,
                            "--build", os.path.join(t, "build")], capture_output=True, text=True)
        if r.returncode != 1 or "a circle: net/a net/b" not in r.stdout or "kernel/a" in r.stdout:
            return False, "the circle in net/ was not reported alone", r.stdout
    return True, "", r.stdout


def readme_files_selftest(root, build):
    """tests/tree/readme_files.py names a file its README does not, and takes a header by its source."""
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "lib"))
        for n in ("a.c", "a.h", "b.c"):
            open(os.path.join(t, "lib", n), "w").close()
        open(os.path.join(t, "lib", "README.md"), "w").write("- `a.c`: a.\n")
        r = subprocess.run(["python3", os.path.join(root, "tests", "tree", "readme_files.py"), "--root", t],
                           capture_output=True, text=True)
        if r.returncode != 1 or "lib/b.c is not named" not in r.stdout or "a.h" in r.stdout:
            return False, "an unnamed file was not reported alone", r.stdout
        open(os.path.join(t, "lib", "README.md"), "a").write("- `b.c`: b.\n")
        r = subprocess.run(["python3", os.path.join(root, "tests", "tree", "readme_files.py"), "--root", t],
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

def fuzz_smoke(target, runs=20000, regressions=None, name=None):
    """A fuzz target, briefly, over its seeds, the inputs that once crashed it
    (regressions-<target>, or the folder named, beside its fuzz_<target>.c, where there is
    one) and its corpus from earlier runs, with a fixed random seed: the same inputs in every
    run of make test (make fuzz explores)."""
    tests = os.path.dirname(os.path.abspath(__file__))
    src = sorted(os.path.join(d, n) for d, _, names in os.walk(tests) for n in names
                 if n == "fuzz_%s.c" % target)
    reg = os.path.join(os.path.relpath(os.path.dirname(src[0]), tests) if src else ".",
                       regressions or "regressions-" + target)
    return Command("fuzz/%s-smoke" % (name or target),
                   ["bash", "-c", "mkdir -p {build}/fuzz/smoke_%s && "
                    "{build}/fuzz/fuzz_%s -seed=1 -runs=%d -max_len=8192 {build}/fuzz/smoke_%s "
                    "{build}/fuzz/seeds_%s $(ls -d {root}/tests/%s 2>/dev/null)" %
                    (target, target, runs, target, target, reg)],
                   expect=[r"Done \d+ runs"], timeout=300)


def own_program(prog, options, args=""):
    """The command that builds tests/lib/mpi/progs/<prog>.c with boot/mpicc in a directory of its own,
    outside the checkout, and runs it with boot/mpirun <options> <prog>.elf <args>."""
    return ["bash", "-c", "d=$(mktemp -d) && trap 'rm -rf $d' EXIT && cd $d && "
            "{root}/boot/mpicc {root}/tests/lib/mpi/progs/%s.c -o %s.elf && "
            "{root}/boot/mpirun %s %s.elf%s" % (prog, prog, options, prog, " " + args if args else "")]


