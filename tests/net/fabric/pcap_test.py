#!/usr/bin/env python3
"""A captured run, decoded by tshark with boot/tools/now-fabric.lua, field by field.

Runs an app on two nodes with boot/cluster --pcap, then reads node 0's
capture through tshark and the project's dissector and checks what the
fields say against what the run must have sent: every frame of version 3;
the source node named in the header is the one whose MAC sent it; DATA
frames go to the other node, with sequence numbers per direction that
never skip (a step back is a retransmission, counted); with a key every frame carries the trailer, and
its counter grows per direction; and the protocol's messages appear (for
rmem-test: every remote-memory op, each request answered).

Usage: tests/net/fabric/pcap_test.py [--key] [--app rmem-test] [--nic e1000]
"""
import argparse
import collections
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from harness import in_scratch  # noqa: E402  (tests/harness.py)

FIELDS = ["eth.src", "now.version", "now.type", "now.proto", "now.src", "now.dst", "now.seq",
          "now.flags.keyed", "now.trailer.ctr", "now.rmem.op", "now.req.op"]


def main():
    """Run the check in a temporary folder: removed when it passes, kept (and named) if not."""
    return in_scratch("now-pcap-", "pcap: the captures are kept in ", check)


def check(tmp):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--key", action="store_true", help="run with a cluster key")
    ap.add_argument("--app", default="rmem-test")
    ap.add_argument("--nic", default="e1000")
    args = ap.parse_args()
    cmd = [os.path.join(ROOT, "boot", "tools", "cluster"), "-n", "2", "-a", args.app, "--nic", args.nic,
           "--pcap", tmp, "-q"] + (["--key", "random"] if args.key else [])
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    print(p.stderr.strip())
    if p.returncode != 0:
        print("pcap: the run failed")
        return 1
    tshark = ["tshark", "-X", "lua_script:" + os.path.join(ROOT, "boot", "tools", "now-fabric.lua"),
              "-r", os.path.join(tmp, "n0.pcap"), "-Y", "now", "-T", "fields",
              "-E", "separator=\t"] + [a for f in FIELDS for a in ("-e", f)]
    t = subprocess.run(tshark, capture_output=True, text=True)
    if t.returncode != 0:
        print("pcap: tshark failed: " + t.stderr.strip()[-500:])
        return 1
    rows = [dict(zip(FIELDS, line.split("\t"))) for line in t.stdout.splitlines()]
    print("pcap: %d fabric frames decoded" % len(rows))
    bad = []
    types = collections.Counter()
    ops = collections.Counter()
    last_seq, last_ctr = {}, {}
    retx = 0
    for i, r in enumerate(rows):
        again = False
        types[r["now.type"]] += 1
        if r["now.version"] != "3":
            bad.append("frame %d: version %s" % (i, r["now.version"]))
        mac_node = int(r["eth.src"].split(":")[-1], 16)
        if r["now.type"] != "6" and r["now.src"] != str(mac_node):
            bad.append("frame %d: src %s from the MAC of n%d" % (i, r["now.src"], mac_node))
        if args.key != (r["now.flags.keyed"] in ("True", "1")):
            bad.append("frame %d: keyed flag %s" % (i, r["now.flags.keyed"]))
        if args.key and r["now.type"] != "4":
            key = (r["now.src"], r["now.dst"])
            ctr = int(r["now.trailer.ctr"] or -1)
            if ctr <= last_ctr.get(key, 0) and ctr != 1:
                bad.append("frame %d: counter %d after %d on %s" % (i, ctr, last_ctr[key], key))
            last_ctr[key] = ctr
        if r["now.type"] == "1":
            if r["now.dst"] != str(1 - mac_node):
                bad.append("frame %d: DATA from n%d to %s" % (i, mac_node, r["now.dst"]))
            key = (r["now.src"], r["now.dst"])
            seq = int(r["now.seq"])
            prev = last_seq.get(key)
            if prev is not None and seq > prev + 1:
                bad.append("frame %d: seq %d skips from %d on %s" % (i, seq, prev, key))
            if prev is not None and seq <= prev:
                retx += 1	# a frame sent again: lost on the way, or not yet acknowledged
                again = True
            last_seq[key] = seq if prev is None else max(prev, seq)
        if again:
            continue	# its operation is counted once, when first sent
        if r["now.rmem.op"]:
            ops["rmem." + r["now.rmem.op"]] += 1
        if r["now.req.op"]:
            ops["req." + r["now.req.op"]] += 1
    print("pcap: types %s" % dict(sorted(types.items())))
    print("pcap: ops %s" % dict(sorted(ops.items())))
    print("pcap: DATA frames sent again: %d" % retx)
    if args.app == "rmem-test":
        for op in range(1, 8):
            if not ops["rmem.%d" % op]:
                bad.append("no rmem op %d in the capture" % op)
        if ops["rmem.2"] and ops["rmem.3"] < ops["rmem.2"] * 0.9:
            bad.append("READ_REQ %d, READ_RESP only %d" % (ops["rmem.2"], ops["rmem.3"]))
    if args.app == "req-stress" and not ops["req.1"]:
        bad.append("no REQ enqueue in the capture")
    if not types["4"] or not types["1"]:
        bad.append("no HELLO or no DATA")
    for b in bad[:20]:
        print("pcap: " + b)
    print("pcap: %d problems" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
