#!/usr/bin/env python3
"""NetPIPE on the nodes beside NetPIPE on Linux: MPI programs' latency and bandwidth.

Runs NetPIPE's NPmpi (Debian's netpipe source, built unmodified with
boot/mpicc: make netpipe) on 2 nodes with boot/mpirun, over each Madeleine
driver (rmem, req, cell, tcp), on each link asked (--nics: virtio, e1000,
e1000e, igb, shm), every size from 1 byte to --np-max (every 2^k and
1.5 2^k: NetPIPE's -p 0), each size's time NetPIPE's own (the least of
its three trials' mean half round trip).  With --peers, boot/tools/peers runs
Debian's NPmpich2 (MPICH over TCP) and NPtcp (raw Linux TCP) between two
Linux guests on the same emulated NIC (e1000 and virtio; the guests have
no driver for the others, and shm is ours alone), and iperf3 (Linux's
bulk TCP, 64 MiB one way) between the same guests.

The Ethernet NICs, ours and the Linux guests' alike, are on one switch
(--switch): as root the launcher's Linux bridge (tap), else its jumbo
switch (vdeplug4's, a process every frame passes through).

Prints a table per link (latency at 1, 8, 64 and 1024 bytes, bandwidth
at 64 KiB, 1 MiB and 8 MiB), writes build/bench/netpipe.json and, with
gnuplot, one plot per link with every curve side by side
(build/bench/plots/netpipe-<link>-{latency,bandwidth}.png).
boot/tools/bench runs it in make bench (make bench PEERS=1: with the Linux
curves); it runs alone too:

    boot/tools/netpipe.py --nics shm,e1000 --drivers rmem,tcp --np-max 1048576

Timing is reported, never asserted.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import qemufacts  # noqa: E402  (the switch: auto, and whether tap can be made)
NPMPI = os.path.join(ROOT, "build", "netpipe", "NPmpi.elf")
DRIVERS = ("rmem", "req", "cell", "tcp")
LINKS = ("virtio", "e1000", "e1000e", "igb", "shm")
PEER_NICS = ("e1000", "virtio", "igb")          # what boot/tools/peers' Linux guests have drivers for
NP_MAX = 8 * 1024 * 1024
LAT_SIZES = (1, 8, 64, 1024)
BW_SIZES = (65536, 1048576, 8388608)
# np.out's line: bytes, Mbps, seconds one way.
NPOUT_RE = re.compile(r"^\[0\]\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s*$")


def cpus_for(link):
    """As make bench places the nodes: pinned to one host CPU on an Ethernet NIC, spread on shm."""
    return "spread" if link == "shm" else "one"


def run_ours(link, driver, np_max, timeout, switch):
    """NPmpi on 2 nodes: [(bytes, mbps, one-way us)], and the log's tail if it failed."""
    cmd = [os.path.join(ROOT, "boot", "tools", "mpirun"), "-np", "2", "--nic", link, "--driver", driver,
           "--cpus", cpus_for(link), "--timeout", str(timeout), "--switch", switch, "--no-env", NPMPI,
           "-p", "0", "-l", "1", "-u", str(np_max), "-o", "/dev/stdout"]
    p = subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       errors="replace")
    pts = []
    for line in p.stdout.splitlines():
        m = NPOUT_RE.match(line)
        if m:
            pts.append((int(m.group(1)), float(m.group(2)), float(m.group(3)) * 1e6))
    if p.returncode != 0 or not pts:
        return pts, (p.stdout + p.stderr).strip().splitlines()[-12:]
    return pts, None


def run_peers(nic, np_max, iters, out, switch):
    """boot/tools/peers on nic: its JSON (netpipe curves, rows), or None with the log's tail."""
    # Each side where it does best: MPICH's progress polls (UCX has no blocking mode), so its
    # guests get a host CPU each; our nodes halt when idle, and on one host CPU they wake fastest.
    cmd = [os.path.join(ROOT, "boot", "tools", "peers"), "--nic", nic, "--np-max", str(np_max),
           "--iters", str(iters), "--cpus", "spread", "--switch", switch, "--out", out]
    p = subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       errors="replace")
    try:
        with open(out) as f:
            data = json.load(f)
    except (OSError, ValueError):
        data = None
    if p.returncode != 0 or not data:
        return data, (p.stdout + p.stderr).strip().splitlines()[-15:]
    return data, None


def at(pts, size):
    for b, mbps, us in pts:
        if b == size:
            return mbps, us
    return None


def table(link, curves):
    """curves: [(label, pts)].  Latency one way (us) and bandwidth (MB/s) at the chosen sizes."""
    head = "  %-22s" % "" + "".join("%9s" % ("%d B" % s) for s in LAT_SIZES) + \
        "".join("%10s" % (("%d KiB" % (s // 1024)) if s < 1 << 20 else ("%d MiB" % (s >> 20)))
                for s in BW_SIZES)
    lines = ["", "NetPIPE on %s: one-way latency (us) at 1-1024 B, bandwidth (MB/s) above "
             "(ours on %s, Linux guests on a host CPU each)" % (
                 link, "a host CPU each" if cpus_for(link) == "spread" else "one host CPU"), head]
    for label, pts in curves:
        cells = []
        for s in LAT_SIZES:
            v = at(pts, s)
            cells.append("%9.1f" % v[1] if v else "%9s" % "-")
        for s in BW_SIZES:
            v = at(pts, s)
            cells.append("%10.1f" % (v[0] / 8) if v else "%10s" % "-")
        lines.append("  %-22s" % label + "".join(cells))
    return "\n".join(lines)


def goals(link, curves):
    """The issue's two goals, said per link where Linux MPICH ran beside: our MPI latency
    at 1 byte at most half of MPICH's, our bandwidth at 1 MiB at least MPICH's."""
    lin = dict(curves).get("Linux MPICH")
    if not lin:
        return []
    out = []
    for label, pts in curves:
        if not label.startswith("ours"):
            continue
        a, b = at(pts, 1), at(lin, 1)
        c, d = at(pts, 1 << 20), at(lin, 1 << 20)
        if a and b:
            out.append("  %s on %s: 1 B latency %.1f us, %.2f of Linux MPICH's %.1f (goal: at most 0.5)"
                       % (label, link, a[1], a[1] / b[1], b[1]))
        if c and d:
            out.append("  %s on %s: 1 MiB bandwidth %.1f MB/s, %.2f of Linux MPICH's %.1f (goal: at least 1)"
                       % (label, link, c[0] / 8, c[0] / d[0], d[0] / 8))
    return out


def plots(outdir, link, curves):
    """Two PNGs per link, every curve side by side: latency and bandwidth against size."""
    plotdir = os.path.join(outdir, "plots")
    datdir = os.path.join(outdir, "netpipe")
    os.makedirs(plotdir, exist_ok=True)
    os.makedirs(datdir, exist_ok=True)
    files = []
    for label, pts in curves:
        f = os.path.join(datdir, "%s-%s.txt" % (link, re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")))
        with open(f, "w") as g:
            g.write("# bytes mbps one_way_us (%s on %s)\n" % (label, link))
            for b, mbps, us in pts:
                g.write("%d %.4f %.3f\n" % (b, mbps, us))
        files.append((label, f))
    lat = os.path.join(plotdir, "netpipe-%s-latency.png" % link)
    bw = os.path.join(plotdir, "netpipe-%s-bandwidth.png" % link)
    script = ["set terminal pngcairo size 800,480 font ',10'", "set grid", "set logscale x 2",
              "set key top left",
              "set output '%s'" % lat, "set title 'NetPIPE on %s: one-way latency'" % link,
              "set xlabel 'message size (bytes)'", "set ylabel 'us, log scale'", "set logscale y",
              "plot " + ", ".join("'%s' using 1:3 with linespoints lw 2 title '%s'" % (f, l)
                                  for l, f in files),
              "unset logscale y",
              "set output '%s'" % bw, "set title 'NetPIPE on %s: bandwidth'" % link,
              "set ylabel 'MB/s'",
              "plot " + ", ".join("'%s' using 1:($2/8) with linespoints lw 2 title '%s'" % (f, l)
                                  for l, f in files)]
    path = os.path.join(plotdir, "netpipe-%s.gnuplot" % link)
    with open(path, "w") as f:
        f.write("\n".join(script) + "\n")
    try:
        g = subprocess.run(["gnuplot", path], capture_output=True, text=True)
    except OSError:
        return []
    if g.returncode != 0:
        print("netpipe: gnuplot failed: " + g.stderr.strip()[-400:], flush=True)
        return []
    return [lat, bw]


def run(links, drivers, peers, np_max, outdir, iters=1000, timeout=900, draw=True, switch="auto"):
    """Every run; prints the tables; returns (report, failures).  switch: the Ethernet
    NICs' (qemufacts.SWITCHES, or auto: tap where this process can make it)."""
    os.makedirs(outdir, exist_ok=True)
    switch = qemufacts.measuring_switch(switch, sys.exit)
    report, failed = {"np_max": np_max, "links": {}, "switch": switch}, 0
    if not os.path.exists(NPMPI):
        print("netpipe: %s is missing: make netpipe" % os.path.relpath(NPMPI, ROOT), flush=True)
        return report, 1
    for link in links:
        curves, entry = [], {"ours": {}, "linux": {}}
        for drv in drivers:
            print("netpipe: NPmpi on 2 %s nodes over Madeleine's %s driver, 1 to %d bytes" % (
                link, drv, np_max), flush=True)
            pts, err = run_ours(link, drv, np_max, timeout, switch)
            if err:
                failed += 1
                print("netpipe: the %s run over %s failed:" % (link, drv), flush=True)
                for line in err:
                    print("  | " + line)
            if pts:
                curves.append(("ours, " + drv, pts))
                entry["ours"][drv] = pts
        if peers and link in PEER_NICS:
            print("netpipe: Linux guests on %s: NPmpich2 (Debian's MPICH) and NPtcp" % link, flush=True)
            data, err = run_peers(link, np_max, iters, os.path.join(outdir, "peers-%s.json" % link), switch)
            if err:
                failed += 1
                print("netpipe: the Linux peers on %s failed:" % link, flush=True)
                for line in err:
                    print("  | " + line)
            if data:
                for kind, label in (("mpich", "Linux MPICH"), ("tcp", "Linux TCP")):
                    pts = [tuple(p) for p in data.get("netpipe", {}).get(kind, [])]
                    if pts:
                        curves.append((label, pts))
                        entry["linux"][kind] = pts
                entry["linux_rows"] = data.get("rows", [])
                entry["linux_bulk"] = data.get("bulk")
        print(table(link, curves), flush=True)
        if entry.get("linux_bulk"):
            b = entry["linux_bulk"]
            print("  Linux bulk TCP on %s (iperf3, %d MiB one way%s): %.1f MB/s" % (
                link, b["bytes"] >> 20, ", at MTU %d, the better of its runs (%s)" % (b["mtu"], ", ".join(
                    "MTU %d: %.1f" % (r["mtu"], r["mb_per_s"]) for r in b.get("runs", [])))
                if b.get("mtu") else "", b["mb_per_s"]), flush=True)
        for line in goals(link, curves):
            print(line, flush=True)
        if draw and curves:
            entry["plots"] = [os.path.relpath(p, ROOT) for p in plots(outdir, link, curves)]
        report["links"][link] = entry
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "netpipe.json"), "w") as f:
        json.dump(report, f, indent=1)
    return report, failed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nics", default="virtio,e1000,e1000e,igb,shm",
                    help="links, comma-separated: %s (default all)" % ", ".join(LINKS))
    ap.add_argument("--drivers", default=",".join(DRIVERS),
                    help="Madeleine drivers under MPI (default %s)" % ",".join(DRIVERS))
    ap.add_argument("--peers", action="store_true",
                    help="also Debian's NPmpich2 and NPtcp between two Linux guests (boot/tools/peers) "
                         "on e1000 and virtio")
    ap.add_argument("--np-max", type=int, default=NP_MAX, metavar="BYTES",
                    help="NetPIPE's largest message (default %d)" % NP_MAX)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"), metavar="DIR",
                    help="where netpipe.json and the plots go (default build/bench)")
    ap.add_argument("--switch", choices=("auto",) + qemufacts.SWITCHES, default="auto",
                    help="the switch between the Ethernet NICs, ours and the Linux guests' alike "
                         "(boot/cluster --switch; default auto: tap, a Linux bridge, as root, else jumbo)")
    ap.add_argument("--no-plots", action="store_true", help="no gnuplot")
    a = ap.parse_args(argv)
    links = [n for n in a.nics.split(",") if n]
    drivers = [d for d in a.drivers.split(",") if d]
    for n in links:
        if n not in LINKS:
            ap.error("--nics %s: not one of %s" % (n, ", ".join(LINKS)))
    for d in drivers:
        if d not in DRIVERS:
            ap.error("--drivers %s: not one of %s" % (d, ", ".join(DRIVERS)))
    if not 1 <= a.np_max <= 64 << 20:
        ap.error("--np-max: 1 to 64 MiB")
    switch = qemufacts.measuring_switch(a.switch, ap.error)
    _, failed = run(links, drivers, a.peers, a.np_max, a.out, draw=not a.no_plots, switch=switch)
    print("netpipe: wrote %s" % os.path.relpath(os.path.join(a.out, "netpipe.json"), ROOT))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
