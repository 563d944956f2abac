#!/usr/bin/env python3
"""A multicast connection on Ethernet sends one frame per cell for its group, as the capture shows.

Runs deposit-test on four nodes with boot/cluster --pcap (node 0's
multicast connection to nodes 1, 2 and 3: one cell, a block, then 200
cells that each add 1 to a register of every member), reads the captures
(pcap, read here: no tshark needed) and checks:
  - node 0 sent each multicast cell as one FAB_MCAST frame (type 7), to an
    Ethernet group address, naming the three members, for the deposit
    protocol: as many frames as its fabric counted, and no member sent a
    copy alone (without faults every member's window had room);
  - every member's capture holds every one of those frames;
  - every member took them and applied each increment once (the app's line).

Usage: tests/net/fabric/pcap_mcast.py [--nic e1000] [--args "fault=..."]
"""
import argparse
import os
import re
import struct
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from harness import in_scratch  # noqa: E402  (tests/harness.py)

ETH_HLEN, HDR_LEN = 14, 32
FAB_MCAST, DEP_PROTO = 7, 6
CELLS = 201		# one cell, then 200 increments (the block goes to each member alone)


def frames(path):
    """The frames of a pcap file (classic format, either byte order)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + "IIII", data[off:off + 16])[2]
        off += 16
        yield data[off:off + incl]
        off += incl


def mcast_frames(path):
    """The FAB_MCAST frames of a capture: (source MAC, destination MAC, header src, proto, members, bytes)."""
    out = []
    for fr in frames(path):
        if len(fr) < ETH_HLEN + HDR_LEN + 4 or fr[12:14] != b"\x88\xb5" or fr[ETH_HLEN + 1] != FAB_MCAST:
            continue
        proto = fr[ETH_HLEN + 2]
        src = struct.unpack("<H", fr[ETH_HLEN + 4:ETH_HLEN + 6])[0]
        n = fr[ETH_HLEN + HDR_LEN]
        members = [struct.unpack("<H", fr[ETH_HLEN + HDR_LEN + 4 + 20 * i:ETH_HLEN + HDR_LEN + 6 + 20 * i])[0]
                   for i in range(n)]
        out.append((fr[6:12], fr[0:6], src, proto, members, bytes(fr)))
    return out


def check(tmp, args):
    cmd = [os.path.join(ROOT, "boot", "tools", "cluster"), "-n", "4", "-a", "deposit-test", "--nic", args.nic,
           "--pcap", tmp, "--timeout", "240"] + (["--args", args.args] if args.args else [])
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    out = p.stdout + p.stderr
    if p.returncode != 0:
        print(out[-3000:])
        print("pcap-mcast: the run failed (status %d)" % p.returncode)
        return 1
    m = re.search(r"\[n0\] fabric: multicast frames sent (\d+), members they carried (\d+), members sent to alone (\d+)",
                  out)
    if not m:
        print(out[-3000:])
        print("pcap-mcast: node 0 did not count its multicast frames")
        return 1
    sent, members, alone = (int(x) for x in m.groups())
    faults = bool(args.args and "fault=" in args.args)
    bad = 0
    sent0 = [f for f in mcast_frames(os.path.join(tmp, "n0.pcap")) if f[2] == 0]
    print("pcap-mcast: node 0 counted %d multicast frames for %d members, %d copies sent alone; "
          "its capture holds %d" % (sent, members, alone, len(sent0)))
    for src_mac, dst_mac, src, proto, mem, _ in sent0:
        if not dst_mac[0] & 1 or proto != DEP_PROTO or sorted(mem) != [1, 2, 3]:
            print("pcap-mcast: a frame to %s, proto %d, members %s" % (dst_mac.hex(":"), proto, mem))
            bad += 1
    if len(sent0) != sent or members != 3 * sent:
        print("pcap-mcast: the capture and the counters disagree")
        bad += 1
    if not faults and (sent != CELLS or alone != 0):
        print("pcap-mcast: %d cells went in %d group frames and %d copies alone, not %d frames"
              % (CELLS, sent, alone, CELLS))
        bad += 1
    # Every member's capture has every frame node 0 sent (the fault injection is the receivers').
    mine = {f[5] for f in sent0}
    for node in (1, 2, 3):
        got = {f[5] for f in mcast_frames(os.path.join(tmp, "n%d.pcap" % node))}
        if not mine <= got:
            print("pcap-mcast: node %d's capture lacks %d of node 0's multicast frames"
                  % (node, len(mine - got)))
            bad += 1
    taken = re.findall(r"\[n(\d)\] deposit-test: node \d got the multicast cell and block, and 200 increments once "
                       r"each \(multicast frames taken: (\d+)\)", out)
    if sorted(n for n, _ in taken) != ["1", "2", "3"]:
        print("pcap-mcast: not every member applied the 200 increments once: %s" % taken)
        bad += 1
    if bad:
        return 1
    print("pcap-mcast: %d multicast cells, %d frames on the wire, each in every member's capture, "
          "every increment applied once (frames taken: %s)" % (CELLS, sent, ", ".join(t for _, t in taken)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nic", default="e1000")
    ap.add_argument("--args", default="", help="the nodes' extra command line (fault=...)")
    args = ap.parse_args()
    return in_scratch("now-pcap-mcast-", "pcap-mcast: the captures are kept in ", lambda tmp: check(tmp, args))


if __name__ == "__main__":
    sys.exit(main())
