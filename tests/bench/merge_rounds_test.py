#!/usr/bin/env python3
"""boot/tools/bench's rounds of a bulk row (bulkrounds=): one row each, their
median, least and most; latency rows and rows of one round left as they are;
the MB/s table's cells.  Prints "merge-rounds: N checks passed" or fails with
the first check that did not hold."""

import os
import sys
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "boot", "tools"))
loader = SourceFileLoader("bench_tool", os.path.join(ROOT, "boot", "tools", "bench"))
bench = module_from_spec(spec_from_loader("bench_tool", loader))
loader.exec_module(bench)

checks = 0


def check(what, got, want):
    global checks
    if got != want:
        print("merge-rounds: %s: got %r, want %r" % (what, got, want))
        sys.exit(1)
    checks += 1


rows = [
    {"row": "floor", "median_us": 5.0},
    {"row": "write-bw-4m", "bytes": 8, "ms": 3.0, "mb_per_s": 300.0},
    {"row": "tcp-bw-4m", "mb_per_s": 10.0},
    {"row": "write-bw-4m", "bytes": 8, "ms": 1.0, "mb_per_s": 100.0},
    {"row": "tcp-bw-4m", "mb_per_s": 40.0},
    {"row": "write-bw-4m", "bytes": 8, "ms": 2.0, "mb_per_s": 200.0},
    {"row": "once", "mbytes_per_s": 7.5},
]
out = bench.merge_rounds(rows)
check("rows kept, each once, in the order of their first round",
      [r["row"] for r in out], ["floor", "write-bw-4m", "tcp-bw-4m", "once"])
check("a latency row as it was", out[0], {"row": "floor", "median_us": 5.0})
w = out[1]
check("odd count: the middle round", w["mb_per_s"], 200.0)
check("its other fields from that round", w["ms"], 2.0)
check("least, most, count", (w["mb_min"], w["mb_max"], w["rounds"]), (100.0, 300.0, 3))
check("every round, in the order run", w["mb_rounds"], [300.0, 100.0, 200.0])
check("even count: the mean of the middle two", out[2]["mb_per_s"], 25.0)
check("a row of one round as it was", out[3], {"row": "once", "mbytes_per_s": 7.5})
check("the cell of a row of rounds", bench.rate_cell(w), "200.0 (100-300)")
check("the cell of a row of one round", bench.rate_cell(out[3]), "7.5")
small = bench.merge_rounds([{"row": "c", "mb_per_s": v} for v in (1.07, 1.2, 1.14)])
check("small rates keep their figures", bench.rate_cell(small[0]), "1.14 (1.07-1.20)")
table = bench.bandwidth_side_by_side([{"nic": "shm", "cpus": "spread", "rows": out},
                                      {"nic": "e1000", "cpus": "one", "rows": out[:2]}])
check("the table says what its cells are",
      "(the median of 3 rounds, the least and the most in brackets)" in table, True)
check("a row the other run lacks", [l.split() for l in table.splitlines() if l.startswith("  tcp-bw-4m")],
      [["tcp-bw-4m", "25.0", "(10.0-40.0)", "-"]])
print("merge-rounds: %d checks passed" % checks)
