#!/usr/bin/env python3
"""Run every example of a launcher's --help exactly as written.

usage: tests/boot/help_examples.py [--wait-secs S] SCRIPT

SCRIPT is run with --help from the project root; each example line of its
"examples:" section (an indented line that starts with the script's own
path) is run as written, from the root.  An example must end with status 0,
except one with --gdb: it waits for a debugger by design, so it must say so
within S seconds (default 20) and is then stopped.  Prints one line per
example and ends with "help-examples: N of M ran as written"; exit status 0
iff all did.
"""
import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def examples(script):
    out = subprocess.run([script, "--help"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    lines, inside = [], False
    for line in out.splitlines():
        if line.rstrip() == "examples:":
            inside = True
        elif inside and line and not line[0].isspace():
            break
        elif inside and line.strip().startswith(script + " "):
            lines.append(line.strip())
    return lines


def run_gdb_example(argv, wait):
    p = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    os.set_blocking(p.stdout.fileno(), False)
    seen, end = b"", time.monotonic() + wait
    while time.monotonic() < end and b"waits for gdb" not in seen and p.poll() is None:
        time.sleep(0.2)
        try:
            seen += os.read(p.stdout.fileno(), 65536)
        except BlockingIOError:
            pass
    ok = b"waits for gdb" in seen and p.poll() is None
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(timeout=30)
    p.stdout.close()
    if not ok:
        sys.stdout.write(seen.decode(errors="replace")[-3000:])
    return ok, "said it waits for gdb, then stopped" if ok else "never said it waits for gdb"


def last_node_lines(out):
    """Each node's last kernel line ('[n3] ...'), for a failure's summary: where every node stood."""
    last = {}
    for line in out.splitlines():
        if line.startswith("[n") and "]" in line:
            last[line[1:line.index("]")]] = line
    return [last[k] for k in sorted(last, key=lambda n: int(n[1:]) if n[1:].isdigit() else -1)]


DUMP_THREAD_RE = re.compile(r"^\[(n\d+)\]\s+\d+ (\S+)\s+prio \d+ (\w+) .*?: (.*)$")
DUMP_PEER_RE = re.compile(r"^\[(n\d+)\] fabric: peer (n\d+) (up|bound, has not bound us|not bound)"
                          r"(.*?), snd una (\d+) nxt (\d+) tx \d+ limit \d+, rcv nxt \d+ dlv \d+ ooo (\d+)"
                          r"(, blocked)?, rto in (-?\d+) ms, quiet in -?\d+ ms, heard (\d+) ms ago$")
DUMP_NIC_RE = re.compile(r"^\[(n\d+)\] net: (\S+): rx frames (\d+), .* irqs (\d+)")


def dump_digest(out):
    """What the NMI dumps of a timed-out run say (boot/cluster asks every node for one), a line
    a node: where its main thread was, which peers had frames outstanding or were not up, and
    its NIC's frames and interrupts.  Short enough for a CI log's tail."""
    nodes = {}
    for line in out.splitlines():
        m = DUMP_THREAD_RE.match(line)
        if m and m.group(2) == "main":
            stack = " < ".join(f.split("+")[0] for f in m.group(4).split(" < ")[:4])
            nodes.setdefault(m.group(1), []).insert(0, f"main {m.group(3)} in {stack}")
            continue
        m = DUMP_PEER_RE.match(line)
        if m:
            una, nxt = int(m.group(5)), int(m.group(6))
            if m.group(3) != "up" or una != nxt or m.group(4) or m.group(8):
                nodes.setdefault(m.group(1), []).append(
                    f"{m.group(2)} {m.group(3)}{m.group(4)} out {nxt - una}{m.group(8) or ''} "
                    f"rto {m.group(9)} heard {m.group(10)} ms")
            continue
        m = DUMP_NIC_RE.match(line)
        if m:
            nodes.setdefault(m.group(1), []).append(f"{m.group(2)} rx {m.group(3)} irqs {m.group(4)}")
    return [f"{n}: " + "; ".join(parts)
            for n, parts in sorted(nodes.items(), key=lambda kv: int(kv[0][1:]))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("script", help="the launcher, relative to the project root (boot/cluster)")
    ap.add_argument("--wait-secs", type=float, default=20.0,
                    help="how long a --gdb example has to say it waits (default 20)")
    a = ap.parse_args()
    ex = examples(a.script)
    if not ex:
        print(f"help-examples: {a.script} --help has no examples", flush=True)
        return 1
    good = 0
    for line in ex:
        argv = shlex.split(line)
        t0 = time.monotonic()
        if "--gdb" in argv:
            ok, why = run_gdb_example(argv, a.wait_secs)
        else:
            r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
            ok, why = r.returncode == 0, f"status {r.returncode}"
            if not ok:
                sys.stdout.write((r.stdout + r.stderr)[-3000:])
                digest = dump_digest(r.stdout + r.stderr)
                if digest:
                    print("help-examples: where each node stood (its NMI dump at the timeout):")
                    for d in digest:
                        print("  " + d[:400])
                else:
                    print("help-examples: each node's last line:")
                    for node_line in last_node_lines(r.stdout + r.stderr):
                        print("  " + node_line[:160])
        good += ok
        print(f"help-examples: {'ok' if ok else 'FAILED'} {line} ({why}, "
              f"{time.monotonic() - t0:.1f} s)", flush=True)
    print(f"help-examples: {good} of {len(ex)} ran as written", flush=True)
    return 0 if good == len(ex) else 1


if __name__ == "__main__":
    sys.exit(main())
