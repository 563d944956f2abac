#!/usr/bin/env python3
"""Run every test level and end with one line "N passed, N failed".

Levels:
  unit   host unit tests (cmocka binaries named on the command line); each
         test case counts once, read from cmocka's TAP output
  qemu   cluster tests from each feature folder's cases.py (tests/cases.py
         gathers them; tests/README.md): each boots nodes with
         boot/cluster (or QEMU directly) and asserts on console output and
         exit status
  check  static checks of the built image and the tree (cases.py too)

A case that cannot run on this machine's QEMU (a NIC it does not emulate)
is skipped: named with its reason, counted apart, never as passed.

Logs of failed tests go to <build>/tests/logs/.  Exit status 0 iff none fails.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import cases  # noqa: E402  (tests/cases.py: every feature folder's cases.py)


class Outcome:
    """ok: True passed, False failed, None skipped (reason says why)."""

    def __init__(self, name, ok, secs, reason="", log=""):
        self.name, self.ok, self.secs, self.reason, self.log = name, ok, secs, reason, log


def run_unit(binary):
    """Run one cmocka binary; return one Outcome per test case."""
    name = os.path.basename(binary)
    env = dict(os.environ, CMOCKA_MESSAGE_OUTPUT="TAP")
    t0 = time.time()
    try:
        p = subprocess.run([binary], capture_output=True, text=True, env=env, timeout=300,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return [Outcome("unit/" + name, False, time.time() - t0, "timed out after 300 s")]
    except OSError as e:
        return [Outcome("unit/" + name, False, time.time() - t0, "cannot run: %s" % e)]
    secs = time.time() - t0
    out = p.stdout + p.stderr
    results = []
    for line in p.stdout.splitlines():
        m = re.match(r"^(not ok|ok) \d+ - (\S+)", line)
        if m:
            ok = m.group(1) == "ok"
            results.append(Outcome("unit/%s/%s" % (name, m.group(2)), ok, secs,
                                   "" if ok else "assertion failed", out))
    if not results or (p.returncode != 0 and all(r.ok for r in results)):
        results.append(Outcome("unit/" + name, False, secs,
                               "exit status %d without a failed case (crash?)" % p.returncode, out))
    return results


def run_case(case, build):
    t0 = time.time()
    try:
        ok, reason, log = case.run(ROOT, build)
    except Exception as e:  # a broken test is a failed test, never a crash of the runner
        ok, reason, log = False, "test raised %s: %s" % (type(e).__name__, e), ""
    return Outcome(case.name, ok, time.time() - t0, reason, log)



TELLING = re.compile(r"FAILED|\bFAIL\b|\berror\b(?! \d)|failed(?! \d)|[Tt]imeout after|timed out|did not|"
                     r"panic|not found|status [1-9]|expected")


def telling_lines(log, most=8):
    """The first lines of a failed test's log that say what went wrong, for the summary."""
    lines = [l for l in log.splitlines() if TELLING.search(l)]
    return [l[:300] for l in lines[:most]]

def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("units", nargs="*", help="cmocka test binaries")
    ap.add_argument("--build", default="build", help="build directory (default: build)")
    ap.add_argument("-k", "--filter", default="", help="run only tests whose name contains this")
    ap.add_argument("-j", "--jobs", type=int, default=2,
                    help="QEMU tests run at once (default 2: nodes halt when idle)")
    ap.add_argument("--list", action="store_true", help="list the tests and exit")
    ap.add_argument("--match", metavar="REGEX", default=None,
                    help="run only tests whose name this regular expression finds (with -k: both)")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="run each QEMU case N times (make soak: a case whose outcome rests on "
                         "timing fails in some of them); each run counts")
    ap.add_argument("--hog", action="store_true",
                    help="keep a CPU-hungry process running beside the tests (make soak), as a "
                         "busy host would")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat N: N must be 1 or more")
    try:
        match = re.compile(args.match) if args.match else None
    except re.error as e:
        ap.error("--match %r: %s" % (args.match, e))

    build = os.path.abspath(args.build)
    qcases = [c for c in cases.CASES if args.filter in c.name and (not match or match.search(c.name))]
    units = [u for u in args.units if (args.filter in os.path.basename(u) or not args.filter) and
             (not match or match.search("unit/" + os.path.basename(u)))]
    if args.list:
        for u in units:
            print("unit/" + os.path.basename(u))
        for c in qcases:
            print(c.name)
        return 0

    logdir = os.path.join(build, "tests", "logs")
    os.makedirs(logdir, exist_ok=True)
    outcomes = []

    lock = threading.Lock()

    def report(o):
        with lock:
            report_locked(o)

    def report_locked(o):
        outcomes.append(o)
        if o.ok is None:
            print("SKIP %s: %s" % (o.name, o.reason), flush=True)
        elif o.ok:
            print("PASS %s (%.1fs)" % (o.name, o.secs), flush=True)
        else:
            path = os.path.join(logdir, o.name.replace("/", "_") + ".log")
            with open(path, "w") as f:
                f.write(o.log)
            print("FAIL %s (%.1fs): %s" % (o.name, o.secs, o.reason), flush=True)
            tail = o.log.strip().splitlines()[-15:]
            for line in tail:
                print("     | " + line)
            print("     full log: " + os.path.relpath(path, ROOT), flush=True)

    t0 = time.time()
    hog = None
    if args.hog:
        # One host CPU kept busy all along: the nodes get less of the host than they expect.
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        print("a CPU-hungry process (pid %d) runs beside the tests" % hog.pid, flush=True)

    # The host's unit tests beside the QEMU cases (they are short and need no QEMU).
    def run_units():
        for u in units:
            try:
                for o in run_unit(u):
                    report(o)
            except Exception as e:  # a unit the runner cannot run is a failed unit, never lost
                report(Outcome("unit/" + os.path.basename(u), False, 0.0,
                               "runner raised %s: %s" % (type(e).__name__, e)))
    unit_thread = threading.Thread(target=run_units)
    unit_thread.start()

    # A case marked alone (two jobs of up to five nodes each, for minutes) would starve the
    # cases beside it of host CPU until their own timeouts passed: it runs after them, by itself.
    def run_nth(c, n):
        o = run_case(c, build)
        if args.repeat > 1:
            o.name = "%s#%d" % (o.name, n + 1)
        return o

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = [pool.submit(run_nth, c, n) for n in range(args.repeat)
                    for c in qcases if not getattr(c, "alone", False)]
            for f in concurrent.futures.as_completed(futs):
                report(f.result())
        unit_thread.join()
        for n in range(args.repeat):
            for c in qcases:
                if getattr(c, "alone", False):
                    report(run_nth(c, n))
    finally:
        if hog is not None:
            hog.kill()
            hog.wait()

    passed = sum(1 for o in outcomes if o.ok)
    skipped = [o for o in outcomes if o.ok is None]
    failed = len(outcomes) - passed - len(skipped)
    print("tests took %.0f s" % (time.time() - t0))
    if skipped:
        reasons = sorted(set(o.reason for o in skipped))
        print("skipped %d: %s (%s)" % (len(skipped), ", ".join(o.name for o in skipped),
                                        "; ".join(reasons)))
    if failed:
        # Again at the end, where a reader of only the last lines (CI's summary) looks: each
        # failure's reason and the first lines of its log that say what went wrong.
        for o in outcomes:
            if o.ok is False:
                print("FAILED %s: %s" % (o.name, o.reason))
                for line in telling_lines(o.log):
                    print("     | " + line)
        print("failed: " + ", ".join(o.name for o in outcomes if o.ok is False))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
