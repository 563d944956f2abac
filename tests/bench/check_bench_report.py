#!/usr/bin/env python3
"""Check what boot/tools/bench wrote beside results.json: every sample of every latency row
(as many as the row's n), a PNG for every plot the report shows, and the run's conditions.

Usage: tests/bench/check_bench_report.py DIR   (DIR holds results.json, report.md, plots/, samples/)
"""
import json
import os
import re
import sys


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 2
    d = sys.argv[1]
    bad = []
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
    rows = 0
    for run in res["runs"]:
        for r in run["rows"]:
            if "median_us" not in r or "n" not in r:
                continue
            path = os.path.join(d, "samples", run["nic"], r["row"] + ".txt")
            if not os.path.exists(path):
                bad.append("no samples for %s on %s" % (r["row"], run["nic"]))
                continue
            with open(path) as f:
                v = [int(x) for x in f.read().split()]
            rows += 1
            if len(v) != r["n"]:
                bad.append("%s on %s: %d samples, the row says n=%d" % (r["row"], run["nic"], len(v), r["n"]))
            # The row's median (in us) is one of its samples' (ns), to the printed precision.
            # apps/stats.c: the sample at index q*(n-1), rounded.
            med = sorted(v)[int(0.5 * (len(v) - 1) + 0.5)] / 1000.0 if v else -1
            if v and abs(med - r["median_us"]) > 0.02 + 0.02 * r["median_us"] and r.get("oneway") != 1:
                bad.append("%s on %s: median %.2f us from the samples, %.2f in the row" % (
                    r["row"], run["nic"], med, r["median_us"]))
    for run in res["runs"]:
        if not isinstance(run.get("stolen_ms"), int) or run["stolen_ms"] < 0:
            bad.append("run %s: no CPU time stolen by the hypervisor counted (stolen_ms)" % run["nic"])
    with open(os.path.join(d, "report.md")) as f:
        page = f.read()
    for k in ("## Conditions", "| qemu | QEMU emulator version", "| host_cpus |", "| switch | ", "| run | NIC | placement",
              "CPU stolen (ms) |"):
        if k not in page:
            bad.append("report.md lacks %r" % k)
    pngs = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page)
    for p in pngs:
        path = os.path.join(d, p)
        if not os.path.exists(path) or os.path.getsize(path) < 1000:
            bad.append("plot %s missing or empty" % p)
            continue
        with open(path, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                bad.append("plot %s is not a PNG" % p)
    if not pngs:
        bad.append("report.md shows no plots")
    for b in bad:
        print("report: " + b)
    print("report: %d latency rows with every sample, %d plots, %d problems" % (rows, len(pngs), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
