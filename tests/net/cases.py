"""The cases of net/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [

    fuzz_smoke("net", runs=50000),
]
