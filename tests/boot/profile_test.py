#!/usr/bin/env python3
"""boot/cluster --profile, and boot/tools/profile.py, as a developer uses them.

usage: tests/boot/profile_test.py [BUILD]

Without QEMU: --profile with --gdb, and --profile-top without --profile, are
refused; a dry run gives every node a gdbstub on 127.0.0.1 and no other
address.  Then two nodes of the test image's selftest app, sampled at 500 Hz:
each node's profile line says at least MIN_SAMPLES samples, its top rows
name functions of the image (names the ELF holds, files of the tree), the
idle loop's row is marked, each node's samples file holds as many addresses
as its line says, and boot/tools/profile.py prints the same table again from
it.  Last, a node sampled by a sampler that fails with the vCPU stopped
(it detaches), then by one stopped while the vCPU runs: the node finishes
its app all the same (left stopped, it would run into the launcher's
timeout).  Prints a line a check and ends with "profile-test: N of M checks
passed"; exit status 0 iff all did.
"""
import importlib.util
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER = os.path.join(ROOT, "boot", "tools", "cluster")
PROFILE = os.path.join(ROOT, "boot", "tools", "profile.py")
MIN_SAMPLES = 50
HEAD_RE = re.compile(r"^(?:cluster: )?profile (n\d+): (\d+) samples at 500 Hz \(idle: ([\d.]+) %", re.M)
ROW_RE = re.compile(r"^ +([\d.]+) % +(\d+)  (.*?)(   \[idle\])?$")

results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print(f"profile-test: {'ok' if ok else 'FAILED'} {name}" + (f": {detail}" if detail and not ok else ""),
          flush=True)
    return ok


def run(argv, timeout=240):
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout + r.stderr


def tables(out):
    """{node: (samples, [(percent, count, text, idle)], raw samples path)} from a run's output."""
    found = {}
    lines = out.splitlines()
    for k, line in enumerate(lines):
        m = HEAD_RE.match(line)
        if not m:
            continue
        rows, path = [], None
        for row in lines[k + 1:]:
            r = ROW_RE.match(row)
            if r:
                rows.append((float(r.group(1)), int(r.group(2)), r.group(3), bool(r.group(4))))
            elif row.startswith("  raw samples: "):
                path = row[len("  raw samples: "):]
            elif not row.startswith("  ("):
                break
        found[m.group(1)] = (int(m.group(2)), rows, path)
    return found


def static_checks():
    rc, out = run([CLUSTER, "-n", "1", "--gdb", "--profile", "100"])
    check("--profile with --gdb refused", rc == 2 and "one or the other" in out, out[-300:])
    rc, out = run([CLUSTER, "-n", "1", "--profile-top", "5"])
    check("--profile-top without --profile refused", rc == 2 and "go with --profile" in out, out[-300:])
    rc, out = run([CLUSTER, "-n", "2", "-a", "selftest", "--profile", "200", "--dry-run"])
    gdbs = re.findall(r"-gdb (\S+)", out)
    check("a dry run gives each node a gdbstub on 127.0.0.1 only",
          rc == 0 and gdbs == ["tcp:127.0.0.1:PORT"] * 2, out[-600:])
    rc, out = run([PROFILE, "--help"])
    check("profile.py --help shows an example", rc == 0 and "example:" in out and "--elf" in out, out[-300:])


def profiled_run(build, elf):
    out_dir = tempfile.mkdtemp(prefix="now-profile-test-")
    rc, out = run([CLUSTER, "-n", "2", "--nic", "virtio", "-a", "selftest", "--kernel", elf,
                   "--timeout", "150", "--profile", "500", "--profile-top", "8", "--profile-out", out_dir])
    if not check("two profiled nodes of selftest end with status 0", rc == 0, out[-2000:]):
        return
    with open(elf, "rb") as f:
        image = f.read()
    found = tables(out)
    check("a profile line for each node", sorted(found) == ["n0", "n1"], out[-1500:])
    for node, (n, rows, path) in sorted(found.items()):
        check(f"{node}: {n} samples, at least {MIN_SAMPLES}", n >= MIN_SAMPLES)
        top = rows[:3]
        bad = []
        for _, _, text, _ in top:
            names = text.split(" (")[0].split(" < ")
            where = re.search(r"\(([^()]+?)(?::\d+)?\)$", text)
            if names[0] == "?" or not all(b"\0" + w.encode() + b"\0" in image for w in names):
                bad.append(text)
            elif where and "/" in where.group(1) and not os.path.exists(os.path.join(ROOT, where.group(1))):
                bad.append(text)
        check(f"{node}: its top rows name functions of the image", top and not bad,
              f"rows {bad or rows}")
        check(f"{node}: the idle loop's row is marked",
              any(idle and "thread_idle_loop" in text for _, _, text, idle in rows), rows)
        check(f"{node}: the rows' counts add up to at most its samples",
              sum(c for _, c, _, _ in rows) <= n)
        sfile = os.path.join(out_dir, f"{node}.samples")
        try:
            with open(sfile) as f:
                addrs = [line for line in f if line.strip() and not line.startswith("#")]
        except OSError as e:
            check(f"{node}: its samples file", False, str(e))
            continue
        check(f"{node}: its samples file holds its {n} samples", len(addrs) == n, f"{len(addrs)} lines")
        check(f"{node}: the table says where its samples went",
              path is not None and os.path.samefile(os.path.join(ROOT, path) if not os.path.isabs(path)
                                                    else path, sfile), f"raw samples: {path}")
        rc, again = run([PROFILE, "--top", "8", sfile])
        same = tables(again)
        check(f"{node}: profile.py prints its table again from the file",
              rc == 0 and node in same and same[node][:2] == (n, rows), again[-1500:])
    subprocess.run(["rm", "-rf", out_dir])


def load_profile():
    spec = importlib.util.spec_from_file_location("now_profile", PROFILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def vm_status(monitor):
    """QEMU's run state ('running', 'paused', ...), asked on a monitor socket of its own."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.settimeout(5)
        c.connect(monitor)
        got = b""
        while got.count(b"(qemu)") < 1:
            got += c.recv(4096) or b"(qemu)"
        c.sendall(b"info status\n")
        while not re.search(rb"VM status: \w+", got):
            data = c.recv(4096)
            if not data:
                break
            got += data
    m = re.search(rb"VM status: (\w+)", got)
    return m.group(1).decode() if m else "unknown"


def failing_sampler(elf):
    """A node's gdbstub sampled by a sampler that fails with the vCPU stopped, then by one
    stopped between samples: after each the VM runs (QEMU's monitor says so), and the node
    finishes its app."""
    prof = load_profile()
    tmp = tempfile.mkdtemp(prefix="now-profile-test-")
    monitor = os.path.join(tmp, "monitor.sock")

    class Failing(prof.Sampler):
        def _cmd(self, payload):
            if payload.startswith("p") and len(self.samples) == 20:
                raise prof.GdbError("a reply the test made up")
            return super()._cmd(payload)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    said = []
    node = subprocess.Popen([CLUSTER, "-n", "1", "-a", "ising", "--kernel", elf, "--timeout", "90",
                             f"--qemu-arg=-gdb tcp:127.0.0.1:{port}",
                             f"--qemu-arg=-monitor unix:{monitor},server=on,wait=off", "--", "sweeps=6000"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=subprocess.DEVNULL)
    out = []
    reader = threading.Thread(target=lambda: out.extend(node.stdout), daemon=True)
    reader.start()
    alive = lambda: node.poll() is None   # noqa: E731
    first = Failing("n0", port, 200, alive=alive, say=said.append)
    first.start()
    first.join(60)
    after_first = vm_status(monitor) if alive() else "ended"
    second = prof.Sampler("n0", port, 200, alive=alive, say=said.append)
    second.start()
    while alive() and len(second.samples) < 20 and second.is_alive():
        second.join(0.01)
    second.stop()
    second.join(20)
    after_second = vm_status(monitor) if alive() else "ended"
    try:
        rc = node.wait(120)
    except subprocess.TimeoutExpired:
        node.kill()
        rc = node.wait()
    reader.join(5)
    subprocess.run(["rm", "-rf", tmp])
    text = "".join(out)
    check("a sampler that fails with the vCPU stopped detaches and says so once",
          first.detached and len(first.samples) == 20 and len(said) == 1
          and said[0].startswith("profile n0: sampling stopped after 20 samples: a reply the test made up")
          and "detached" in said[0], f"{said} detached={first.detached} samples={len(first.samples)}")
    check("then the VM runs", after_first == "running", f"VM status: {after_first}")
    check("a sampler stopped between samples leaves the VM running",
          len(second.samples) >= 20 and second.problem is None and after_second == "running",
          f"{len(second.samples)} samples, VM status: {after_second}, {said}")
    check("the node then finishes its app (status 0, no timeout)",
          rc == 0 and re.search(r"RESULT ising .* ok=1", text), text[-1500:])


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    elf = os.path.join(build, "now-test.elf")
    static_checks()
    profiled_run(build, elf)
    failing_sampler(elf)
    good = sum(results)
    print(f"profile-test: {good} of {len(results)} checks passed", flush=True)
    return 0 if good == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
