#!/usr/bin/env python3
"""Judge lib/mpi with MPICH's own test suite (MPICH 4.0.2's test/mpi, which
make mpich-tests unpacks): build each test program with boot/mpicc, run it on
N nodes with boot/mpirun, and decide as MPICH's runtests decides (" No Errors"
and status 0, or the testlist's resultTest=); ends with one line
"N passed, N failed, N skipped".

Each directory's testlist names the runs (program, processes, arguments,
environment, time limit, xfail); its Makefile.am names a program's sources
and flags.  basic/ has no testlist: tests/lib/mpi/basic.testlist is its.  The
harness (util/mtest*.c, util/dtypes.c, dtpools/) is built once a run into
libmtest.a, libdtypes.a and libdtpools.a, against an mpitestconf.h written
for the nodes.  A program that does not link only because lib/mpi lacks
MPI_* calls is skipped, naming them; any other build failure fails.

Everything goes under --out: include/, lib/, bin/, logs/ (one log a run, its
whole output), summary.json (every result).  Exit status 0 iff none failed;
2 on bad options.
"""

import argparse
import collections
import concurrent.futures
import json
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)

import judge  # noqa: E402  (tests/lib/mpi/judge.py)
import suite  # noqa: E402  (tests/lib/mpi/suite.py)

DEFAULT_SUITE = os.path.join(ROOT, "build", "mpich-4.0.2", "test", "mpi")
DEFAULT_OUT = os.path.join(ROOT, "build", "mpi-test")
DEFAULT_DIRS = "pt2pt,coll,comm,group,init,datatype,basic"
MPI_H = os.path.join(ROOT, "lib", "mpi", "mpi.h")

# How every test program and the harness are compiled.  MPICH's configure
# would use -g -O2; at -O2 gcc takes 30 s for coll/allred.c alone, at -O1 the
# seven directories' 300 sources take a minute on two CPUs.
CFLAGS = ["-O1"]

# The harness: util/Makefile.am's libmtest.la (+ libmtest_single.la, which
# every single-threaded test links) and libdtypes.la; dtpools/src/Makefile.am's
# libdtpools.la.
HARNESS = {
    "libmtest.a": ["util/mtest.c", "util/mtest_common.c", "util/mtest_single.c"],
    "libdtypes.a": ["util/dtypes.c"],
    "libdtpools.a": ["dtpools/src/dtpools.c", "dtpools/src/dtpools_misc.c", "dtpools/src/dtpools_init_verify.c",
                     "dtpools/src/dtpools_desc.c", "dtpools/src/dtpools_attr.c", "dtpools/src/dtpools_custom.c"],
}

DEFAULT_TIME_LIMIT = 180            # runtests' $defaultTimeLimit
MEMORY_TOTAL_GB = 20                # runtests' memory_total (MPITEST_MEMORY_TOTAL)
# Memory a node gets.  MPICH's tests are written for processes with memory to
# spare (a testlist marks only jobs over 1 GB, mem=): coll/uoplong takes
# 80 MB, coll/allgatherv4 260 MB a rank; a node's heap is half its memory,
# and boot/cluster's default 64 MiB leaves 30.  QEMU allocates what a node
# touches only; a node of 1 GiB boots in about a second more than one of 64 MiB.
NODE_MEM_MIB = 1024
# The kernel uses the memory below 4 GiB only: 3 GiB usable, a heap of 1.5.
NODE_HEAP_MAX_MIB = 1536
# With --jobs above 1, a run of more ranks than this a host CPU runs alone (Runner.crowds).
RANKS_A_CPU = 4
# runtests stops when this many runs timed out and they are more than half.
TIMEOUT_STOP = 5
# An MPI call lib/mpi does not have: the program is skipped, not failed.
MPI_SYMBOL = re.compile(r"^P?MPIX?_\w+$")
UNDEFINED = re.compile(r"^mpicc: undefined: (\S+)", re.M)
# Variables of the runner's environment every rank gets (MPICH's runtests
# hands mpiexec its whole environment; these are the ones a test reads).
PASS_ENV = re.compile(r"^(MPITEST_|MPIR_CVAR_|MPICH_)")

EPILOG = """examples:
  tests/lib/mpi/runtests.py --list
      every run of the default directories and its process count
  tests/lib/mpi/runtests.py --only pt2pt/anyall -v
      one test, with its build and run commands
  tests/lib/mpi/runtests.py --tests tests/lib/mpi/named.txt --jobs 2
      the tests that must pass
  MPI_TESTS=coll,pt2pt/sendrecv3 tests/lib/mpi/runtests.py --nic e1000 --driver tcp
      all of coll/ and one pt2pt test, over e1000 and Madeleine's TCP driver

environment:
  MPI_TESTS                  the default of --dirs
  MPITEST_TIMEOUT            the time limit of a run without timeLimit= (180)
  MPITEST_TIMEOUT_MULTIPLIER every time limit times this (1)
  MPITEST_MEMORY_TOTAL       GB a mem= run may need at most (20)
  MPITEST_*, MPIR_CVAR_*, MPICH_*   passed to every rank"""


class Result:
    """The outcome of one run: result is "pass", "fail" or "skip"."""

    def __init__(self, test, result, reason="", secs=None, status=None, log=None, build=None):
        self.test, self.result, self.reason, self.secs = test, result, reason, secs
        self.status, self.log = status, log
        self.missing = build.missing if build else []
        self.harness_missing = build.harness_missing if build else []
        self.tail = []                  # a failed run's last lines, with -v

    def line(self):
        t = self.test
        where = f"{t.np} rank{'s' if t.np != 1 else ''}"
        if getattr(t, "np_listed", None):
            where += f" of the testlist's {t.np_listed}"
        if self.secs is not None:
            where += f", {self.secs:.1f} s"
        if self.result == "pass":
            return f"PASS {t.label} ({where})"
        if self.result == "fail":
            return f"FAIL {t.label} ({where}): {self.reason}"
        if self.secs is None:
            return f"SKIP {t.label}: {self.reason}"
        return f"SKIP {t.label} ({where}): {self.reason}"

    def record(self):
        t = self.test
        return {"test": t.test_id, "dir": t.dir, "name": t.name, "np": t.np, "args": t.args, "env": t.envs,
                "result": self.result, "reason": self.reason,
                "seconds": None if self.secs is None else round(self.secs, 2), "status": self.status,
                "xfail": t.xfail, "missing": self.missing, "harness_missing": self.harness_missing,
                "log": self.log, "testlist": f"{show(t.listfile)}:{t.lineno}"}


class Build:
    """A program's build: kind "ok" (elf is the image), "skip" (lib/mpi lacks
    the MPI calls missing names, those of the test's own objects, and
    harness_missing, those only the harness calls) or "fail" (reason)."""

    def __init__(self):
        self.kind, self.elf, self.reason, self.log = None, None, "", ""
        self.missing, self.harness_missing = [], []


class Gate:
    """runtests' lock files (/tmp/runtests-NAME.lock): any number of shared
    holders at once, an exclusive holder alone."""

    def __init__(self):
        self.cv = threading.Condition()
        self.shared, self.exclusive = 0, False

    def acquire(self, exclusive):
        with self.cv:
            if exclusive:
                self.cv.wait_for(lambda: not self.exclusive and self.shared == 0)
                self.exclusive = True
            else:
                self.cv.wait_for(lambda: not self.exclusive)
                self.shared += 1

    def release(self, exclusive):
        with self.cv:
            if exclusive:
                self.exclusive = False
            else:
                self.shared -= 1
            self.cv.notify_all()


def first_error(text):
    """The compiler's or linker's first error line of a failed build."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if re.search(r"\berror\b|undefined reference|mpicc: undefined", l):
            return l
    return lines[0] if lines else "no message"


def names(symbols, most):
    """The first `most` of symbols, and how many more."""
    text = ", ".join(symbols[:most])
    return text + (f" and {len(symbols) - most} more" if len(symbols) > most else "")


def undefined_in(objs):
    """The symbols objects use and do not define (nm -u)."""
    p = subprocess.run(["nm", "-u"] + objs, capture_output=True, text=True)
    return {l.split()[-1] for l in p.stdout.splitlines() if l.strip() and not l.endswith(":")}


def show(path):
    """path as a user would type it: relative to the tree if inside, else absolute."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def shell_words(cmd):
    return " ".join(w if re.match(r"^[\w@%+=:,./-]+$", w) else "'" + w.replace("'", "'\\''") + "'"
                    for w in cmd)


class Runner:
    def __init__(self, a):
        self.a = a
        self.out = a.out
        self.inc = os.path.join(self.out, "include")
        self.lib = os.path.join(self.out, "lib")
        self.print_lock = threading.Lock()
        self.build_lock = threading.Lock()
        self.builds = {}                # (dir, name) -> [lock, result or None]
        self.makefiles = {}             # dir -> Makefile.am variables
        self.gates = collections.defaultdict(Gate)
        self.procs = set()              # mpirun processes running
        self.harness_error = None       # (reason, log path) when the harness did not build
        self.stats_lock = threading.Lock()
        self.runs = self.timeouts = 0
        self.stopped = None             # why no more runs start
        with open(MPI_H) as f:
            self.mpi_version = suite.mpi_version(f.read())

    def say(self, text):
        with self.print_lock:
            print(text, flush=True)

    def verbose(self, text):
        if self.a.verbose:
            self.say(text)

    # --- the harness --------------------------------------------------------------

    def write_headers(self):
        """mpitestconf.h and dtpoolsconf.h for the nodes, under --out/include."""
        os.makedirs(os.path.join(self.inc, "dtpools"), exist_ok=True)
        with open(MPI_H) as f:
            mpi_h = f.read()
        with open(os.path.join(self.a.suite, "include", "mpitestconf.h.in")) as f:
            conf = suite.mpitestconf(f.read(), mpi_h, self.suite_version())
        with open(os.path.join(self.inc, "mpitestconf.h"), "w") as f:
            f.write(conf)
        # dtpools_internal.h includes "../dtpoolsconf.h": found through
        # -I include/dtpools, an empty directory beside it.
        with open(os.path.join(self.a.suite, "dtpools", "dtpoolsconf.h.in")) as f:
            conf = suite.dtpoolsconf(f.read())
        with open(os.path.join(self.inc, "dtpoolsconf.h"), "w") as f:
            f.write(conf)

    def suite_version(self):
        """MPICH's version, from the suite's version.m4."""
        try:
            with open(os.path.join(self.a.suite, "version.m4")) as f:
                m = re.search(r"MPICH_VERSION_m4\],\[([^\]]+)\]", f.read())
        except OSError:
            m = None
        return m.group(1) if m else "unknown"

    def include_flags(self):
        return ["-I" + self.inc, "-I" + os.path.join(self.a.suite, "include"),
                "-I" + os.path.join(self.a.suite, "dtpools", "include")]

    def build_harness(self):
        """Compile the harness and archive it; sets self.harness_error when it
        fails.  The first mpicc runs make (the kernel bundle), the rest not."""
        t0 = time.time()
        objdir = os.path.join(self.out, "harness")
        os.makedirs(objdir, exist_ok=True)
        os.makedirs(self.lib, exist_ok=True)
        logpath = os.path.join(self.out, "logs", "harness.log")
        os.makedirs(os.path.dirname(logpath), exist_ok=True)
        log = []
        first = True
        for archive, sources in HARNESS.items():
            objs = []
            for src in sources:
                obj = os.path.join(objdir, os.path.basename(src)[:-2] + ".o")
                cmd = [self.a.mpicc] + ([] if first else ["--no-make"]) + CFLAGS + self.include_flags()
                if src.startswith("dtpools/"):
                    cmd += ["-I" + os.path.join(self.inc, "dtpools")]
                cmd += ["-c", os.path.join(self.a.suite, src), "-o", obj]
                first = False
                p = self.tool(cmd, log)
                if p.returncode != 0:
                    self.harness_error = (f"the harness did not build: {first_error(p.stderr)}", show(logpath))
                    break
                objs.append(obj)
            if self.harness_error:
                break
            path = os.path.join(self.lib, archive)
            if os.path.exists(path):
                os.unlink(path)
            p = self.tool(["ar", "rcs", path] + objs, log)
            if p.returncode != 0:
                self.harness_error = (f"the harness did not build: {first_error(p.stderr)}", show(logpath))
                break
        with open(logpath, "w") as f:
            f.write("\n".join(log))
        if self.harness_error:
            self.say(f"runtests: {self.harness_error[0]} (log: {show(logpath)})")
        else:
            self.say(f"runtests: harness built in {time.time() - t0:.1f} s: "
                     f"{', '.join(n for n in HARNESS)} in {show(self.lib)}")

    # --- one program ----------------------------------------------------------------

    def program(self, t):
        am = self.makefiles.get(t.dir)
        if am is None:
            am = self.makefiles[t.dir] = suite.read_makefile_am(os.path.join(self.a.suite, t.dir, "Makefile.am"))
        return suite.program(self.a.suite, t.dir, t.name, am)

    def build(self, t):
        """The Build of test t's program, built once a run whatever the
        number of testlist lines that run it."""
        key = (t.dir, t.name)
        with self.build_lock:
            entry = self.builds.setdefault(key, [threading.Lock(), None])
        with entry[0]:
            if entry[1] is None:
                entry[1] = self.build_once(t)
            return entry[1]

    def build_once(self, t):
        """Compile each source of t's program, then link it: a Build."""
        prog = self.program(t)
        b = Build()
        missing_src = [s for s in prog.sources if not os.path.isfile(s)]
        if not prog.sources or missing_src:
            b.kind, b.reason = "fail", f"no source: {show(missing_src[0] if missing_src else t.name + '.c')}"
            return b
        objdir = os.path.join(self.out, "obj", t.dir, t.name)
        elf = os.path.join(self.out, "bin", t.dir, t.name + ".elf")
        os.makedirs(objdir, exist_ok=True)
        os.makedirs(os.path.dirname(elf), exist_ok=True)
        objs, log = [], []
        for src in prog.sources:
            obj = os.path.join(objdir, os.path.basename(src)[:-2] + ".o")
            cmd = ([self.a.mpicc, "--no-make"] + CFLAGS + self.include_flags() + prog.cflags
                   + ["-c", src, "-o", obj])
            p = self.tool(cmd, log)
            if p.returncode != 0:
                b.kind, b.reason, b.log = "fail", "build: " + first_error(p.stderr), "\n".join(log)
                return b
            objs.append(obj)
        if os.path.exists(elf):
            os.unlink(elf)
        libs = [os.path.join(self.lib, n) for n in HARNESS]
        p = self.tool([self.a.mpicc, "--no-make"] + objs + libs + prog.libs + ["-o", elf], log)
        b.log = "\n".join(log)
        if p.returncode == 0 and os.path.isfile(elf):
            b.kind, b.elf = "ok", elf
            return b
        undefined = UNDEFINED.findall(p.stderr)
        if undefined and all(MPI_SYMBOL.match(s) for s in undefined):
            own = undefined_in(objs)
            b.missing = [s for s in undefined if s in own]
            b.harness_missing = [s for s in undefined if s not in own]
            b.kind = "skip"
            if b.missing:
                b.reason = "missing " + names(b.missing, 8)
                if b.harness_missing:
                    b.reason += f" (and {len(b.harness_missing)} the harness calls)"
            else:
                b.reason = "missing only calls of the harness: " + names(b.harness_missing, 4)
            return b
        other = [l.strip() for l in p.stderr.splitlines()
                 if UNDEFINED.match(l) and not MPI_SYMBOL.match(UNDEFINED.match(l).group(1))]
        b.kind, b.reason = "fail", "build: " + (other[0] if other else first_error(p.stderr))
        return b

    def tool(self, cmd, log):
        """Run mpicc (or ar); its CompletedProcess, the command and output added to log."""
        self.verbose("  " + shell_words(cmd))
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
        log.append("$ " + shell_words(cmd) + "\n" + p.stdout + p.stderr)
        return p

    # --- one run --------------------------------------------------------------------

    def time_limit(self, t):
        if self.a.timeout is not None:
            return self.a.timeout
        limit = t.time_limit if t.time_limit is not None else float(os.environ.get("MPITEST_TIMEOUT",
                                                                                  DEFAULT_TIME_LIMIT))
        return limit * float(os.environ.get("MPITEST_TIMEOUT_MULTIPLIER", "1"))

    def node_mem(self, t):
        """MiB each node gets: --mem, and for a mem= test room on top for a
        heap (half a node's memory) that holds its share of the job's GB."""
        if t.mem is None:
            return self.a.mem
        return self.a.mem + 2 * self.mem_share(t)

    def mem_share(self, t):
        """MiB a rank of a mem= test needs."""
        return math.ceil(t.mem * 1024 / t.np)

    def skip_reason(self, t):
        """Why test t does not run here at all, else None (runtests' own
        reasons first, then this machine's)."""
        if t.np > self.a.max_np:
            return f"needs {t.np} processes, more than --max-np {self.a.max_np}"
        total = float(os.environ.get("MPITEST_MEMORY_TOTAL", MEMORY_TOTAL_GB))
        if t.mem is not None and t.mem > total:
            return f"needs {t.mem:g} GB (mem=), more than MPITEST_MEMORY_TOTAL {total:g}"
        if t.mem is not None and self.mem_share(t) > NODE_HEAP_MAX_MIB:
            return (f"needs {self.mem_share(t) / 1024:.1f} GB a rank (mem={t.mem:g} over {t.np}), more than a "
                    f"node's heap holds ({NODE_HEAP_MAX_MIB / 1024:g} GB: the kernel uses the memory below 4 GiB)")
        if t.mpiversion:
            want = tuple(int(x) for x in re.findall(r"\d+", t.mpiversion)[:2])
            if want > self.mpi_version:
                return f"needs MPI {t.mpiversion}, lib/mpi is MPI {self.mpi_version[0]}.{self.mpi_version[1]}"
        return None

    def lock_for(self, t):
        """(gate, exclusive) runtests would take for t, or None."""
        if t.lock:
            return self.gates["lock:" + t.lock], t.lock != "shared"
        if t.mem is not None:
            total = float(os.environ.get("MPITEST_MEMORY_TOTAL", MEMORY_TOTAL_GB))
            return self.gates["mem"], t.mem * self.a.jobs > total
        return None

    def crowds(self, t):
        """Does t's run want the host's CPUs alone?  A run of more than
        RANKS_A_CPU ranks a host CPU (10 ranks on a 2-CPU host) spins
        through MPICH's progress loops on all of them: beside another run
        it came within a few seconds of its time limit (coll/nonblocking3,
        10 ranks: 117 s alone, past 180 s beside another)."""
        return self.a.jobs > 1 and t.np > RANKS_A_CPU * (os.cpu_count() or 1)

    def mpirun_command(self, t, elf, limit):
        cmd = [self.a.mpirun, "-np", str(t.np), "--nic", self.a.nic, "--driver", self.a.driver,
               "--timeout", f"{limit:g}", "--no-env"]
        if self.a.fault:
            cmd += ["--fault", self.a.fault]
        cmd += ["--mem", str(self.node_mem(t))]
        cmd += ["-x", f"MPIEXEC_TIMEOUT={limit:g}"]
        for k in sorted(os.environ):
            if PASS_ENV.match(k):
                cmd += ["-x", k]
        for e in t.envs:
            cmd += ["-x", e]
        return cmd + [elf] + t.args

    def run_test(self, t):
        """Build (once) and run test t; its Result."""
        why = self.skip_reason(t)
        if why:
            return Result(t, "skip", why)
        if self.stopped:
            return Result(t, "skip", self.stopped)
        if self.harness_error:
            return Result(t, "fail", self.harness_error[0], log=self.harness_error[1])
        logpath = os.path.join(self.out, "logs", t.dir, t.test_id.split("/", 1)[1] + ".log")
        os.makedirs(os.path.dirname(logpath), exist_ok=True)
        rel_log = show(logpath)
        header = [f"test {t.label}: {t.np} processes ({show(t.listfile)}:{t.lineno})"]
        if t.unknown:
            header.append("keys no runner knows (ignored): " + " ".join(t.unknown))
        if t.mpiexecargs:
            header.append("mpiexecarg= (options of MPICH's mpiexec, ignored): " + " ".join(t.mpiexecargs))

        b = self.build(t)
        if b.kind != "ok":
            with open(logpath, "w") as f:
                f.write("\n".join(header) + "\n\n" + b.log + f"\n{b.kind}: {b.reason}\n")
            if t.xfail:
                return Result(t, "skip", f"xfail={','.join(t.xfail)} ({b.reason})", log=rel_log, build=b)
            return Result(t, b.kind, b.reason, log=rel_log, build=b)

        limit = self.time_limit(t)
        cmd = self.mpirun_command(t, b.elf, limit)
        lock = self.lock_for(t)
        cpus = self.crowds(t)
        self.verbose(f"start {t.label} ({t.np} rank{'s' if t.np != 1 else ''}"
                     f"{', alone on the CPUs' if cpus else ''}): {shell_words(cmd)}")
        # The CPUs' gate first, then the testlist's: every run takes them in that order.
        self.gates["cpus"].acquire(cpus)
        if lock:
            lock[0].acquire(lock[1])
        try:
            t0 = time.time()
            status, output = self.mpirun(cmd, limit)
            secs = time.time() - t0
        finally:
            if lock:
                lock[0].release(lock[1])
            self.gates["cpus"].release(cpus)
        lines = output.splitlines()
        try:
            ok, reason = judge.judge(t.result_test, status, lines, t.expect, t.reject)
        except ValueError as e:
            ok, reason = False, str(e)
        with open(logpath, "w") as f:
            f.write("\n".join(header) + "\n\n" + b.log + "\n$ " + shell_words(cmd) + "\n" + output
                    + f"\nmpirun status {status}\nverdict: {'pass' if ok else 'fail: ' + reason}\n")
        self.count_run(status, lines, limit, secs)
        if ok:
            return Result(t, "pass", secs=secs, status=status, log=rel_log)
        if t.xfail:
            return Result(t, "skip", f"xfail={','.join(t.xfail)} ({reason})", secs=secs, status=status,
                          log=rel_log)
        res = Result(t, "fail", reason, secs=secs, status=status, log=rel_log)
        if self.a.verbose:
            res.tail = [l for l in lines if l.strip()][-12:]
        return res

    def mpirun(self, cmd, limit):
        """Run mpirun; (status, its whole output, stderr merged).  mpirun stops
        the job at --timeout itself; if it is still there two minutes later,
        it is stopped here (status 124)."""
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                             start_new_session=True)
        with self.stats_lock:
            self.procs.add(p)
        if self.stopped == "interrupted":
            stop(p)
        try:
            out, _ = p.communicate(timeout=limit + 120 if limit else None)
            return p.returncode, out
        except subprocess.TimeoutExpired:
            stop(p)
            out, _ = p.communicate()
            return 124, out + f"\nmpirun: timeout after {limit:g} s: mpirun itself did not end; stopped\n"
        finally:
            with self.stats_lock:
                self.procs.discard(p)

    def count_run(self, status, lines, limit, secs):
        """runtests' brake: once TIMEOUT_STOP runs with a limit over 60 s ran
        into it and they are more than half of all runs, no more start."""
        with self.stats_lock:
            self.runs += 1
            if limit > 60 and secs >= limit - 10 and status == 124:
                self.timeouts += 1
            if self.timeouts >= TIMEOUT_STOP and self.timeouts / self.runs > 0.5 and not self.stopped:
                self.stopped = (f"not run: {self.timeouts} of the {self.runs} runs before it timed out "
                                f"(runtests stops there)")
                self.say("runtests: " + self.stopped)

    def stop_all(self):
        with self.stats_lock:
            procs = list(self.procs)
        for p in procs:
            stop(p)


def stop(p):
    """Stop one mpirun this runner started, and the nodes it booted (its process group)."""
    for sig in (signal.SIGINT, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


# --- what to run ------------------------------------------------------------------------


def parse_entries(text):
    return [e.strip().strip("/") for e in re.split(r"[,\s]+", text) if e.strip()]


def read_names(path):
    """dir/name entries of a --tests file: one a line, # comments."""
    with open(path) as f:
        return [w for line in f for w in line.split("#", 1)[0].split()]


def select(a, own_lists):
    """The Tests to run, in order: the --tests/--only names (each with every
    testlist line of that name), else every test of --dirs' entries (a
    directory, or dir/name).  Raises ValueError naming an entry that matches
    nothing."""
    loaded = {}

    def tests_of(d):
        if d not in loaded:
            loaded[d] = suite.load_dir(a.suite, d, own_lists)
        return loaded[d]

    def is_dir(e):
        return os.path.isdir(os.path.join(a.suite, e)) or suite.list_file(a.suite, e, own_lists) is not None

    names = []
    for f in (a.tests or "").split(","):
        if f:
            names += read_names(f)
    if a.only:
        names += parse_entries(a.only)
    dirs = parse_entries(a.dirs)
    entries = names if names else dirs
    out, seen = [], set()
    for e in entries:
        if is_dir(e) and not names:
            picked = tests_of(e)
        elif "/" in e and is_dir(e.rsplit("/", 1)[0]):
            d, n = e.rsplit("/", 1)
            picked = [t for t in tests_of(d) if t.name == n]
            if not picked:
                raise ValueError(f"{e}: {d}'s testlist has no test {n}")
        elif "/" not in e and names:
            picked = [t for d in dirs if is_dir(d) for t in tests_of(d) if t.name == e]
            if not picked:
                raise ValueError(f"{e}: no test of that name in {', '.join(dirs)}")
        else:
            raise ValueError(f"{e}: not a directory of {a.suite} (nor dir/name)")
        for t in picked:
            if id(t) not in seen:
                seen.add(id(t))
                out.append(t)
    return out


# --- the report -------------------------------------------------------------------------


def report(results, a, secs):
    """The closing lines and summary.json; the exit status."""
    counts = collections.Counter(r.result for r in results)
    per_dir = collections.OrderedDict()
    for r in results:
        per_dir.setdefault(r.test.dir, collections.Counter())[r.result] += 1
    missing = collections.Counter(s for r in results for s in r.missing)
    harness_missing = sorted({s for r in results for s in r.harness_missing})
    failed = [r for r in results if r.result == "fail"]

    summary = {
        "suite": show(a.suite), "nic": a.nic, "driver": a.driver, "fault": a.fault,
        "max_np": a.max_np, "jobs": a.jobs, "seconds": round(secs, 1),
        "counts": {"passed": counts["pass"], "failed": counts["fail"], "skipped": counts["skip"]},
        "dirs": {d: {"passed": c["pass"], "failed": c["fail"], "skipped": c["skip"]} for d, c in per_dir.items()},
        "missing": dict(missing.most_common()), "harness_missing": harness_missing,
        "tests": [r.record() for r in results],
    }
    path = os.path.join(a.out, "summary.json")
    with open(path, "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")

    print(f"runtests: {len(results)} runs in {secs:.0f} s; logs and summary.json in {show(a.out)}")
    if missing:
        print("missing MPI calls, each with the runs whose own code calls it: " +
              ", ".join(f"{s} {n}" for s, n in missing.most_common(20)) +
              (f", and {len(missing) - 20} more" if len(missing) > 20 else ""))
    if harness_missing:
        print(f"missing MPI calls the harness calls ({len(harness_missing)}): " +
              ", ".join(harness_missing))
    if failed:
        print("failed: " + ", ".join(r.test.test_id for r in failed))
    for d, c in per_dir.items():
        print(f"{d}: {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped")
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped", flush=True)
    return 1 if failed else 0


def list_tests(tests, runner):
    for t in tests:
        notes = []
        why = runner.skip_reason(t)
        if why:
            notes.append("skip: " + why)
        if t.xfail:
            notes.append("xfail=" + ",".join(t.xfail))
        if t.result_test:
            notes.append("resultTest=" + t.result_test)
        if t.time_limit:
            notes.append(f"timeLimit={t.time_limit}")
        print(f"{t.np:3d}  {t.label}" + (f"   ({'; '.join(notes)})" if notes else ""))
    skipped = sum(1 for t in tests if runner.skip_reason(t))
    print(f"{len(tests)} runs, {skipped} of them skipped before building")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="tests/lib/mpi/runtests.py", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", default=DEFAULT_SUITE, metavar="DIR",
                   help="MPICH's test/mpi (default: build/mpich-4.0.2/test/mpi, from make mpich-tests)")
    p.add_argument("--dirs", default=os.environ.get("MPI_TESTS") or DEFAULT_DIRS, metavar="LIST",
                   help="comma list of the suite's directories, or dir/name entries (default: $MPI_TESTS, "
                        f"else {DEFAULT_DIRS})")
    p.add_argument("--tests", metavar="FILE",
                   help="run only the tests these files name (comma list; dir/name a line, # comments; "
                        "every testlist line of that name), e.g. tests/lib/mpi/named.txt")
    p.add_argument("--only", metavar="NAMES",
                   help="run only these tests: comma list of dir/name, or names searched in --dirs")
    p.add_argument("--nic", default="shm", choices=["shm", "virtio", "e1000", "e1000e", "igb"],
                   help="the link between the nodes (boot/mpirun --nic; default: shm)")
    p.add_argument("--driver", default="rmem", choices=["rmem", "req", "cell", "tcp"],
                   help="Madeleine's driver under MPI (boot/mpirun --driver; default: rmem)")
    p.add_argument("--fault", metavar="SPEC", help="fabric fault injection, e.g. drop:0.02 (boot/mpirun --fault)")
    p.add_argument("--max-np", type=int, default=16, metavar="N",
                   help="skip a test that needs more than N processes (default: 16; on shm, more nodes than "
                        "host CPUs halt when idle, and 16 share two CPUs well enough)")
    p.add_argument("--cap-np", type=int, metavar="N",
                   help="run a test whose testlist asks for more than N processes on N instead (before --max-np; "
                        "the result line says so); make test runs the named set with --cap-np 4")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="time limit of every run (default: its timeLimit=, else 180)")
    p.add_argument("--mem", type=int, default=NODE_MEM_MIB, metavar="MIB",
                   help=f"memory per node (default: {NODE_MEM_MIB}; a mem= test gets its share of the job's on "
                        f"top; coll/allgatherv4 needs 1024)")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="J",
                   help="runs at once (default: 1; each rank is a QEMU VM); a run of more than "
                        f"{RANKS_A_CPU} ranks a host CPU still runs alone")
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                   help="objects, images, logs and summary.json (default: build/mpi-test)")
    p.add_argument("--list", action="store_true", help="print the runs and their process counts; build nothing")
    p.add_argument("--mpicc", default=os.path.join(ROOT, "boot", "tools", "mpicc"), help=argparse.SUPPRESS)
    p.add_argument("--mpirun", default=os.path.join(ROOT, "boot", "tools", "mpirun"), help=argparse.SUPPRESS)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print each build and run command, and the last lines of a failed run")
    a = p.parse_args(argv)
    if a.jobs < 1:
        p.error("--jobs: at least 1")
    if not 1 <= a.max_np <= 64:
        p.error("--max-np: 1..64 (boot/mpirun's range)")
    if a.cap_np is not None and not 1 <= a.cap_np <= 64:
        p.error("--cap-np: 1..64 (boot/mpirun's range)")
    a.suite, a.out = os.path.abspath(a.suite), os.path.abspath(a.out)
    if not os.path.isfile(os.path.join(a.suite, "include", "mpitestconf.h.in")):
        p.error(f"--suite {a.suite}: not MPICH's test/mpi (no include/mpitestconf.h.in); "
                f"make mpich-tests unpacks it")
    for f in (a.tests or "").split(","):
        if f and not os.path.isfile(f):
            p.error(f"--tests {f}: no such file")
    return a


def main(argv):
    a = parse_args(argv)
    runner = Runner(a)
    try:
        tests = select(a, HERE)
    except (ValueError, OSError) as e:
        print(f"runtests: error: {e}", file=sys.stderr)
        return 2
    if a.cap_np:
        for t in tests:
            if t.np > a.cap_np:
                t.np_listed, t.np = t.np, a.cap_np
    if a.list:
        list_tests(tests, runner)
        return 0

    t0 = time.time()
    os.makedirs(a.out, exist_ok=True)
    runner.write_headers()
    print(f"runtests: {len(tests)} runs from {', '.join(dict.fromkeys(t.dir for t in tests))} "
          f"on --nic {a.nic} --driver {a.driver}, {a.jobs} at once", flush=True)
    runner.build_harness()

    results = []

    def done(r):
        results.append(r)
        text = r.line()
        for l in r.tail:
            text += "\n     | " + l
        if r.result == "fail" and a.verbose and r.log:
            text += "\n     log: " + r.log
        runner.say(text)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs)
    try:
        futs = [pool.submit(runner.run_test, t) for t in tests]
        for f in concurrent.futures.as_completed(futs):
            done(f.result())
    except KeyboardInterrupt:
        runner.stopped = "interrupted"
        runner.stop_all()
        pool.shutdown(wait=False, cancel_futures=True)
        print("runtests: interrupted; every node this run booted is stopped", file=sys.stderr)
        return 130
    pool.shutdown()
    order = {id(t): i for i, t in enumerate(tests)}
    results.sort(key=lambda r: order[id(r.test)])
    return report(results, a, time.time() - t0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
