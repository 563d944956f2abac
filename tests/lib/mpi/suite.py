"""MPICH's test suite (test/mpi) as files: which program runs on how many
processes with which arguments (each directory's testlist), which sources
and flags build each program (its Makefile.am), and the config header
MPICH's configure would write for the nodes (mpitestconf.h).

Reading only: nothing here builds or runs a test (runtests.py does).
Python 3 standard library only.
"""

import os
import re

# What MPICH's configure substitutes into a testlist.in line that starts with
# @name@: "" keeps the line, "#" comments it out.  --enable-large-tests is off
# by default (configure.ac: largetest="#"); a placeholder not named here is
# an optional part configure would leave out, and is left out too.
CONFIGURE_LINES = {"largetest": "#"}

# Keys of a testlist line that MPICH's runtests reads (runtests.in, RunList).
MPICH_KEYS = {"resultTest", "init", "timeLimit", "xfail", "lock", "mem", "arg", "mpiexecarg", "env",
              "strict", "mpix"}
# Our own keys, for the programs of basic/ that print no " No Errors"
# (tests/lib/mpi/basic.testlist), and mpiversion=, which one MPICH testlist has
# and MPICH's runtests ignores.
OUR_KEYS = {"expect", "reject", "mpiversion"}


class Test:
    """One line of a testlist: one run of a program."""

    def __init__(self, dir, name, np, listfile, lineno):
        self.dir, self.name, self.np = dir, name, np
        self.listfile, self.lineno = listfile, lineno
        self.args, self.envs, self.mpiexecargs = [], [], []
        self.xfail = []                 # tickets; a list, as a line may name several
        self.result_test = None         # TestStatus, TestStatusNoErrors, TestErrFatal
        self.time_limit = None          # seconds, when the line gives a whole number
        self.mem = None                 # GB the whole job needs (mem=)
        self.lock = None                # lock=shared|NAME
        self.strict = None
        self.mpix = None
        self.mpiversion = None
        self.expect, self.reject = [], []
        self.unknown = []               # key=value words no runner knows
        self.occurrence = 1             # k-th line of this dir/name (set by load_dir)
        self.repeated = False           # the name has more than one line

    @property
    def test_id(self):
        """dir/name, with .k when the name has several lines: unique in a run."""
        base = f"{self.dir}/{self.name}"
        return f"{base}.{self.occurrence}" if self.repeated else base

    @property
    def label(self):
        """dir/name with its arguments and environment: how a result line names the run."""
        words = [f"{self.dir}/{self.name}"] + self.args
        words += [f"[{e}]" for e in self.envs]
        return " ".join(words)


def parse_line(line, dir, listfile, lineno):
    """A Test for one testlist line, or None for a blank, comment or !dir:target line.

    Raises ValueError for a line that is not `name [np] [key=value ...]`."""
    line = line.split("#", 1)[0].strip()
    if not line or line.startswith("!"):
        return None
    words = line.split()
    np = 2                              # runtests' $np_default
    if len(words) > 1:
        if not words[1].isdigit():
            raise ValueError(f"{listfile}:{lineno}: '{words[1]}' is not a process count")
        np = int(words[1])
    t = Test(dir, words[0], np, listfile, lineno)
    for w in words[2:]:
        key, eq, val = w.partition("=")
        if not eq:
            continue                    # runtests ignores a word without '='
        if key == "arg":
            t.args.append(val)
        elif key == "env":
            t.envs.append(val)
        elif key == "mpiexecarg":
            t.mpiexecargs.append(val)
        elif key == "xfail":
            t.xfail.append(val)
        elif key == "resultTest":
            t.result_test = val
        elif key == "timeLimit":
            t.time_limit = int(val) if val.isdigit() else None    # runtests: /^\d+$/ only
        elif key == "mem":
            t.mem = float(val)
        elif key == "lock":
            t.lock = val
        elif key == "strict":
            t.strict = val
        elif key == "mpix":
            t.mpix = val
        elif key == "mpiversion":
            t.mpiversion = val
        elif key == "expect":
            t.expect.append(val)
        elif key == "reject":
            t.reject.append(val)
        else:
            t.unknown.append(w)
    return t


def substitute(line):
    """A testlist.in line as configure would write it into testlist."""
    def repl(m):
        return CONFIGURE_LINES.get(m.group(1), "#")
    return re.sub(r"@(\w+)@", repl, line)


def list_file(suite, dir, own_lists):
    """The testlist of a directory: ours (own_lists/<dir>.testlist, for a
    directory MPICH gives none), else testlist, else testlist.in; None if none."""
    own = os.path.join(own_lists, dir.replace("/", "-") + ".testlist")
    for p in (own, os.path.join(suite, dir, "testlist"), os.path.join(suite, dir, "testlist.in")):
        if os.path.isfile(p):
            return p
    return None


def load_dir(suite, dir, own_lists):
    """Every Test of a directory of the suite, in testlist order; a line that
    names a subdirectory brings in that directory's tests (as runtests'
    ProcessDir).  Raises OSError when the directory has no testlist."""
    path = list_file(suite, dir, own_lists)
    if path is None:
        raise OSError(f"{os.path.join(suite, dir)}: no testlist, testlist.in or "
                      f"{os.path.join(own_lists, dir.replace('/', '-') + '.testlist')}")
    tests = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if path.endswith(".in"):
                line = substitute(line)
            t = parse_line(line, dir, path, lineno)
            if t is None:
                continue
            if os.path.isdir(os.path.join(suite, dir, t.name)):
                tests += load_dir(suite, f"{dir}/{t.name}", own_lists)
            else:
                tests.append(t)
    seen = {}
    for t in tests:
        seen[(t.dir, t.name)] = seen.get((t.dir, t.name), 0) + 1
        t.occurrence = seen[(t.dir, t.name)]
    for t in tests:
        t.repeated = seen[(t.dir, t.name)] > 1
    return tests


# --- Makefile.am ------------------------------------------------------------------

def read_makefile_am(path):
    """{variable: value} of an automake file: continuations joined, comments
    dropped, += appended, both branches of an if/else kept ({} if no file)."""
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].rstrip()
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(\+?=)\s*(.*)$", line)
        if not m:
            continue
        name, op, val = m.groups()
        out[name] = (out.get(name, "") + " " + val).strip() if op == "+=" else val.strip()
    return out


def canonical(name):
    """automake's name for a program's variables (prog-name -> prog_name)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


class Program:
    """How to build one test program: its C sources and compiler flags."""

    def __init__(self, dir, name, sources, cflags, libs):
        self.dir, self.name, self.sources, self.cflags, self.libs = dir, name, sources, cflags, libs


def program(suite, dir, name, am):
    """The Program for test `name` of `dir`, from the directory's Makefile.am
    variables `am`: <name>_SOURCES (default name.c), the -D/-U/-I words of
    <name>_CPPFLAGS, <name>_CFLAGS (else AM_CFLAGS) and the -l words of
    <name>_LDADD.  The harness archives are linked by the caller, always."""
    srcdir = os.path.join(suite, dir)
    cn = canonical(name)
    sources = am.get(cn + "_SOURCES", name + ".c").split()
    sources = [os.path.join(srcdir, s) for s in sources if s.endswith(".c")]
    cflags = []
    for w in am.get(cn + "_CPPFLAGS", "").split():
        if w.startswith(("-D", "-U")):
            cflags.append(w)
        elif w.startswith("-I") and "$" not in w and "@" not in w:
            cflags.append("-I" + os.path.join(srcdir, w[2:]))
    for w in am.get(cn + "_CFLAGS", am.get("AM_CFLAGS", "")).split():
        if w.startswith(("-O", "-f", "-W", "-std=", "-D", "-U", "-g")):
            cflags.append(w)
    libs = [w for w in am.get(cn + "_LDADD", "").split() if w.startswith("-l")]
    return Program(dir, name, sources, cflags, libs)


# --- mpitestconf.h ----------------------------------------------------------------

def mpi_h_defines(mpi_h_text, name):
    return re.search(r"^\s*#\s*define\s+" + re.escape(name) + r"\b", mpi_h_text, re.M) is not None


def conf_values(mpi_h_text):
    """{macro: (value or None, why)}: what the nodes have, for mpitestconf.h.in's
    #undef lines.  None leaves the macro undefined; why is the comment."""
    has = lambda n: mpi_h_defines(mpi_h_text, n)   # noqa: E731
    v = {}
    for h in ("STDINT_H", "INTTYPES_H", "STDLIB_H", "STRING_H", "STRINGS_H", "SYS_TIME_H", "UNISTD_H",
              "STDARG_H", "SYS_TYPES_H", "SYS_STAT_H", "MEMORY_H"):
        v["HAVE_" + h] = ("1", "picolibc's header")
    v["STDC_HEADERS"] = ("1", "picolibc")
    v["HAVE_STRDUP"] = ("1", "picolibc, declared in string.h")
    v["HAVE_USLEEP"] = ("1", "kernel/posix.c, declared in picolibc's unistd.h")
    v["HAVE_LONG_LONG"] = ("1", "gcc, x86-64")
    v["HAVE_LONG_DOUBLE"] = ("1", "gcc, x86-64: 80-bit extended in 16 bytes")
    v["HAVE__BOOL"] = ("1", "C99")
    for t in ("FLOAT__COMPLEX", "DOUBLE__COMPLEX", "LONG_DOUBLE__COMPLEX"):
        v["HAVE_" + t] = ("1", "C99 _Complex")
    for t, size in (("SHORT", 2), ("INT", 4), ("LONG", 8), ("LONG_LONG", 8), ("VOID_P", 8)):
        v["SIZEOF_" + t] = (str(size), "x86-64 (LP64)")
    v["SIZEOF_MPI_OFFSET"] = ("8", "lib/mpi/mpi.h: typedef long long MPI_Offset")
    v["POINTERINT_t"] = ("long", "a pointer-sized integer (LP64)")
    v["THREAD_PACKAGE_NAME"] = ("THREAD_PACKAGE_NONE", "one thread a node: no threaded tests")
    if has("MPI_C_LONG_DOUBLE_COMPLEX"):
        v["USE_LONG_DOUBLE_COMPLEX"] = ("1", "lib/mpi/mpi.h has MPI_C_LONG_DOUBLE_COMPLEX")
    else:
        v["USE_LONG_DOUBLE_COMPLEX"] = (None, "lib/mpi/mpi.h has no MPI_C_LONG_DOUBLE_COMPLEX")
    if has("MPI_INTEGER16"):
        v["HAVE_MPI_INTEGER16"] = ("1", "lib/mpi/mpi.h has MPI_INTEGER16")
    else:
        v["HAVE_MPI_INTEGER16"] = (None, "lib/mpi/mpi.h has no MPI_INTEGER16")
    v["HAVE_MPI_WIN_CREATE"] = ("1", "lib/mpi/win.c: one-sided windows")
    v["HAVE_MPI_IO"] = (None, "no MPI-IO: the nodes have no file system")
    v["HAVE_MPI_SPAWN"] = (None, "no dynamic processes: a job is the nodes it booted with")
    v["HAVE_FORTRAN_BINDING"] = (None, "C only: no Fortran")
    for g in ("CUDA", "HIP", "ZE", "LIBCUDART", "LIBAMDHIP64", "LIBZE_LOADER"):
        v["HAVE_" + g] = (None, "no GPU")
    v["USE_STRICT_MPI"] = (None, "the tests of MPICH extensions run (and show what is missing)")
    v["HAVE_GETRUSAGE"] = (None, "no getrusage on the nodes")
    v["HAVE_SYS_RESOURCE_H"] = (None, "no getrusage on the nodes")
    v["HAVE_PTHREAD_H"] = (None, "no threads")
    v["HAVE_DLFCN_H"] = (None, "one static image: no dlopen")
    v["PACKAGE_NAME"] = ('"mpich-testsuite"', "configure.ac's AC_INIT")
    v["PACKAGE_TARNAME"] = ('"mpich-testsuite"', "configure.ac's AC_INIT")
    v["PACKAGE_BUGREPORT"] = ('"discuss@mpich.org"', "configure.ac's AC_INIT")
    v["PACKAGE_URL"] = ('"http://www.mpich.org/"', "configure.ac's AC_INIT")
    return v


def mpitestconf(template_text, mpi_h_text, version):
    """mpitestconf.h for the nodes, from the suite's include/mpitestconf.h.in:
    each `#undef NAME` becomes a #define of what the nodes have, or stays
    undefined (`/* #undef NAME */`, as autoheader writes it) with the reason."""
    values = conf_values(mpi_h_text)
    values["PACKAGE_VERSION"] = (f'"{version}"', "the suite's version")
    values["VERSION"] = (f'"{version}"', "the suite's version")
    values["PACKAGE_STRING"] = (f'"mpich-testsuite {version}"', "configure.ac's AC_INIT")
    out = ["/* mpitestconf.h for the nodes: written by tests/lib/mpi/runtests.py from the",
           " * suite's include/mpitestconf.h.in, as MPICH's configure would write it on a",
           " * node (x86-64, picolibc, lib/mpi).  MPI_VERSION and MPI_SUBVERSION come",
           " * from lib/mpi/mpi.h itself.  Do not edit: rewritten on every run. */", ""]
    for line in template_text.splitlines():
        m = re.match(r"^#undef (\w+)\s*$", line)
        if not m:
            out.append(line)
            continue
        name = m.group(1)
        val, why = values.get(name, (None, None))
        if val is not None:
            out.append(f"#define {name} {val}" + (f"  /* {why} */" if why else ""))
        else:
            out.append(f"/* #undef {name} */" + (f"  /* {why} */" if why else ""))
    return "\n".join(out) + "\n"


def dtpoolsconf(template_text):
    """dtpools/dtpoolsconf.h for the nodes, from dtpoolsconf.h.in: the C
    headers and functions picolibc has."""
    have = {"HAVE_INTTYPES_H", "HAVE_LIMITS_H", "HAVE_MEMORY_H", "HAVE_MEMSET", "HAVE_STDINT_H",
            "HAVE_STDLIB_H", "HAVE_STRDUP", "HAVE_STRINGS_H", "HAVE_STRING_H", "HAVE_SYS_STAT_H",
            "HAVE_SYS_TYPES_H", "HAVE_UNISTD_H", "STDC_HEADERS"}
    out = ["/* dtpoolsconf.h for the nodes: written by tests/lib/mpi/runtests.py from the",
           " * suite's dtpools/dtpoolsconf.h.in.  Do not edit. */", ""]
    for line in template_text.splitlines():
        m = re.match(r"^#undef (\w+)\s*$", line)
        if m:
            line = f"#define {m.group(1)} 1" if m.group(1) in have else f"/* #undef {m.group(1)} */"
        out.append(line)
    return "\n".join(out) + "\n"


def mpi_version(mpi_h_text):
    """(MPI_VERSION, MPI_SUBVERSION) of an mpi.h, (0, 0) if it names none."""
    def num(name):
        m = re.search(r"^\s*#\s*define\s+" + name + r"\s+(\d+)", mpi_h_text, re.M)
        return int(m.group(1)) if m else 0
    return num("MPI_VERSION"), num("MPI_SUBVERSION")
