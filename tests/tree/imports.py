#!/usr/bin/env python3
"""No circle of imports outside kernel/.

usage: tests/tree/imports.py [--build DIR] [--root DIR]

A file imports another when its object uses a symbol (a function or a
variable) the other's object defines: read with gcc-nm from the objects
under the build directory (default build/) whose source is in the tree:
boot, kernel, drivers, net, lib, apps and the test image's apps and
benchmarks under tests (lwIP's and picolibc's own objects are not ours).  Prints every circle (a
strongly connected set of files) that holds a file outside kernel/, with
the symbols along it, and ends with "imports: N files, M imports, no
circle outside kernel/"; exit status 0 iff there is none.

lib/mpi/ counts as one file: MPI is one library whose calls use each
other both ways (a communicator's creation runs a collective, a
collective checks its communicator); nothing outside it may close a
circle through it.
"""
import collections
import os
import subprocess
import sys

from tree_check import ROOT, root_of, verdict

FOLDERS = ("boot", "kernel", "drivers", "net", "lib", "apps", "tests")
PACKAGES = ("lib/mpi/",)


def unit(f):
    """The node a file is in the graph: its package, or itself."""
    for p in PACKAGES:
        if f.startswith(p):
            return p.rstrip("/")
    return f


def objects(root, build):
    """{file (its source path without the extension): object path}."""
    out = {}
    for folder in FOLDERS:
        d = os.path.join(build, folder)
        for dp, _, names in os.walk(d):
            for n in names:
                if not n.endswith(".o"):
                    continue
                src = os.path.relpath(os.path.join(dp, n[:-2]), build)
                if any(os.path.isfile(os.path.join(root, src + e)) for e in (".c", ".S")):
                    out[src] = os.path.join(dp, n)
    return out


def circles(graph):
    """Strongly connected sets of more than one node (Tarjan, iterative)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = n[0]; n[0] += 1; stack.append(start); on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop(); on.discard(w); comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__.strip())
        return 0
    root = root_of(argv)
    build = os.path.join(ROOT, "build")
    if "--build" in argv:
        build = argv[argv.index("--build") + 1]
    objs = objects(root, build)
    if not objs:
        print(f"imports: no objects under {build}: run make first")
        return 1
    defs, uses = {}, collections.defaultdict(set)
    for f, o in sorted(objs.items()):
        r = subprocess.run(["gcc-nm", o], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"imports: gcc-nm {o} failed: {r.stderr.strip()}")
            return 1
        for line in r.stdout.splitlines():
            w = line.split()
            if len(w) == 3 and w[1] in "TDBRVWCG":
                defs.setdefault(w[2], f)
            elif len(w) == 2 and w[0] == "U":
                uses[f].add(w[1])
    graph, why = collections.defaultdict(set), collections.defaultdict(list)
    for f, syms in uses.items():
        for s in sorted(syms):
            g = defs.get(s)
            if g and unit(g) != unit(f):
                graph[unit(f)].add(unit(g))
                why[(unit(f), unit(g))].append(s)
    for f in objs:
        graph.setdefault(unit(f), set())
    bad = [c for c in circles(graph) if any(not f.startswith("kernel/") for f in c)]
    for c in bad:
        print("imports: a circle: " + " ".join(c))
        for f in c:
            for g in sorted(graph[f] & set(c)):
                print(f"  {f} uses {', '.join(why[(f, g)][:4])} of {g}")
    edges = sum(len(v) for v in graph.values())
    return verdict(bad, f"imports: {len(bad)} circle(s) outside kernel/ among {len(objs)} files",
                   f"imports: {len(objs)} files, {edges} imports, no circle outside kernel/")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
