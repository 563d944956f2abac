"""The cases of net/call/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403

CASES = [
    fuzz_smoke("call", runs=50000),
]
