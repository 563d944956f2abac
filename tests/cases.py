"""Every case tests/run.py runs, gathered from the feature folders.

Each folder under tests/ that mirrors a part of the product (tests/net/rmem/
for net/rmem/, tests/drivers/ for drivers/, ...) holds that part's cases in
its own cases.py: a list CASES of Cluster, Command and Check cases (the
classes and shared helpers are tests/harness.py's).  FEATURES is the order
they run in (the benchmarks' early, as before the split: papers/smoke's MPI
rows beside cost/budgets' spinning nodes once lost a race between rows);
cost/budgets runs alone, after every other case.  tests/README.md says where a feature's tests are and how to add one.
"""
import importlib.util
import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TESTS)

FEATURES = ["tree", "bench", "boot", "kernel", "drivers", "net", "net/fabric", "net/call", "net/rmem",
            "net/req", "net/deposit", "net/lwip", "lib/mad", "lib/rpc", "lib/mpi", "apps"]


def load(feature):
    path = os.path.join(TESTS, feature, "cases.py")
    spec = importlib.util.spec_from_file_location("cases_" + feature.replace("/", "_"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.CASES


def found():
    """The feature folders that hold a cases.py (for the check that FEATURES names them all)."""
    out = []
    for dirpath, _, names in os.walk(TESTS):
        if "cases.py" in names and dirpath != TESTS:
            out.append(os.path.relpath(dirpath, TESTS))
    return sorted(out)


CASES = [c for f in FEATURES for c in load(f)]
_missing = sorted(set(found()) - set(FEATURES))
if _missing:
    raise SystemExit("tests/cases.py: cases.py in %s, not in FEATURES" % ", ".join(_missing))
