"""The verdict on one run of an MPICH test, as MPICH's own runner gives it
(test/mpi/runtests.in: RunMPIProgram and the resultTest routines), from
boot/mpirun's exit status and its output.

boot/mpirun prints each line a rank prints as "[rank] line" (stdout and
stderr alike, merged here as runtests merges mpiexec's 2>&1); its own lines
("mpirun: rank 1 exited with status 1", a failed rank's kernel lines) are
not the program's output and are not judged, but they name the reason.

Pure functions of their arguments: no process is run here.
"""

import re

PROGRAM_LINE = re.compile(r"^\[(\d+)\] ?(.*)$")

# runtests.in's patterns, as written there.
NO_ERRORS = re.compile(r"^\s*No [Ee]rrors\s*$")
TEST_PASSED = re.compile(r"^\s*Test Passed\s*$")
CHECKPOINT = re.compile(r"(requesting checkpoint|checkpoint completed)\s*$")
SRUN_NOISE = re.compile(r"^srun: error: .*: signal: Communication connection failure")
# What MTest_Finalize prints on rank 0 when the test failed its own checks.
FOUND_ERRORS = re.compile(r"^\s*(Found \d+ errors?)\s*$")
# What an error handler that aborts prints (MPICH's words, lib/mpi's too).
FATAL = re.compile(r"^\s*Fatal error in ")

# runtests' three, then ours (tests/lib/mpi/basic.testlist).
RESULT_TESTS = ("TestStatus", "TestStatusNoErrors", "TestErrFatal", "TestOutput")


def split_output(lines):
    """([(rank, text)] of the program's lines, [line] of mpirun's own)."""
    prog, launcher = [], []
    for line in lines:
        m = PROGRAM_LINE.match(line)
        if m:
            prog.append((int(m.group(1)), m.group(2)))
        elif line.strip():
            launcher.append(line)
    return prog, launcher


def launcher_failed(status, prog, launcher):
    """The reason when mpirun could not start the job at all (bad options, the
    cluster refused the image), else None: then no resultTest can pass, even
    one that wants a nonzero status."""
    if status != 2 or prog:
        return None
    for line in launcher:
        if "error" in line:
            return "mpirun could not start the job: " + line.removeprefix("mpirun: ")
    return None


def failure_reason(status, prog, launcher):
    """The first useful line for a run that failed, else None: the timeout,
    the count of errors the test found, the error MPI reported as fatal,
    the rank mpirun names (a job that ended with a nonzero status) with the
    first line that rank printed."""
    for line in launcher:
        if line.startswith("mpirun: timeout"):
            return line.removeprefix("mpirun: ")
    for _, text in prog:
        m = FOUND_ERRORS.match(text)
        if m:
            return m.group(1)
    for rank, text in prog:
        if FATAL.search(text):
            return f"[{rank}] {text.strip()}"
    if status == 0:
        return None
    for line in launcher:
        m = re.match(r"mpirun: rank (\d+) ", line)
        if m:
            said = [t for r, t in prog if r == int(m.group(1)) and t.strip()]
            return line + (f"; [{m.group(1)}] {said[0].strip()}" if said else "")
    for line in launcher:
        if line.startswith("mpirun:") and "last kernel lines" not in line:
            return line
    return None


def judge_default(status, prog):
    """runtests' default: exactly one " No Errors" line (a second one is
    unexpected output), no other line but "Test Passed" and checkpoint
    notes, and status 0.  Returns (ok, why) with why the first problem."""
    found_noerror, unexpected = False, None
    for rank, text in prog:
        if "FORTRAN STOP" in text:
            continue
        if NO_ERRORS.match(text) and not found_noerror:
            found_noerror = True
        elif SRUN_NOISE.match(text):
            pass
        elif not TEST_PASSED.match(text) and not CHECKPOINT.search(text):
            unexpected = unexpected or f"unexpected output: [{rank}] {text}"
    if unexpected:
        return False, unexpected
    if not found_noerror:
        return False, "no ' No Errors' line"
    if status != 0:
        return False, f"' No Errors', but mpirun status {status}"
    return True, ""


def judge_output(status, lines, expect, reject):
    """resultTest=TestOutput (ours, for basic/'s programs, which print no
    " No Errors"): status 0, each expect= regex found in some line as mpirun
    printed it ("[rank] text"), no reject= regex in any."""
    for pat in reject:
        for line in lines:
            if re.search(pat, line):
                return False, f"reject={pat} matches: {line}"
    for pat in expect:
        if not any(re.search(pat, line) for line in lines):
            return False, f"no line matches expect={pat}"
    if status != 0:
        return False, f"mpirun status {status}"
    return True, ""


def judge(result_test, status, lines, expect=(), reject=()):
    """(ok, reason) for one run: result_test is the testlist's resultTest=
    (None for the default), status mpirun's exit status, lines its whole
    output (stdout and stderr).  reason is "" when ok.  Raises ValueError
    for a resultTest no runner knows."""
    if result_test is not None and result_test not in RESULT_TESTS:
        raise ValueError(f"resultTest={result_test}: runtests knows {', '.join(RESULT_TESTS[:3])}, "
                         f"and we TestOutput")
    prog, launcher = split_output(lines)
    why = launcher_failed(status, prog, launcher)
    if why:
        return False, why

    if result_test is None:
        ok, why = judge_default(status, prog)
    elif result_test == "TestOutput":
        ok, why = judge_output(status, lines, expect, reject)
    elif result_test == "TestStatusNoErrors":
        # Every line " No Errors" or "Test Passed", one " No Errors", and a
        # nonzero status (fault-tolerance tests: a rank died on purpose).
        ok, why = True, ""
        for rank, text in prog:
            if "FORTRAN STOP" in text or NO_ERRORS.match(text) or TEST_PASSED.match(text):
                continue
            ok, why = False, f"unexpected output: [{rank}] {text}"
            break
        if ok and not any(NO_ERRORS.match(t) for _, t in prog):
            ok, why = False, "no ' No Errors' line"
        if ok and status == 0:
            ok, why = False, "status 0, but the test must end with a nonzero status (resultTest=TestStatusNoErrors)"
        return ok, why
    else:
        # TestStatus and TestErrFatal: only a nonzero status passes.  Output
        # is allowed: TestErrFatal says so; TestStatus means to forbid it, but
        # its loop stops at the first line (/=*/ matches every line), so
        # runtests never fails it for output either.
        if status != 0:
            return True, ""
        return False, f"status 0, but the test must end with a nonzero status (resultTest={result_test})"

    if ok:
        return True, ""
    return False, failure_reason(status, prog, launcher) or why
