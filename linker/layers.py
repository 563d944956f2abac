#!/usr/bin/env python3
"""The layers (DESIGN, "Layers"), enforced by the compiler and the linker.

  linker/layers.py views BUILD
      Make BUILD/layers/<view>/, one folder per layer (its name with "." for
      "/": BUILD/layers/net.fabric/), each the project's tree
      as that layer may see it (symbolic links to the files of its own
      folders and of the layers it may use, nothing else).  The Makefile
      compiles each file through its layer's view, with that view as the
      only include path: an #include of a forbidden header, quoted, in
      angle brackets, relative ("../net/net.h") or from an included .inc
      file, names a file the compiler cannot find.  Idempotent (a link is
      made or changed only when it is missing or points elsewhere; two makes
      at once may run it together); prints nothing unless it fails.

  linker/layers.py layer PATH...
      Print the layer of each project path (kernel/main.c -> kernel).

  linker/layers.py why BUILD SOURCE
      After a failed compile: name each header SOURCE (or a file it
      includes) names that exists in the tree but not in its layer's view,
      as "SOURCE:LINE: includes X: A may not use B".

  linker/layers.py check --obj-root DIR [--obj-root DIR...] OBJ...
      Both checks of the link below: the files each object was compiled
      from (its .d file beside it) and the symbols it uses.  The files: any
      in the tree must be of a layer the object's may use, reached through
      its own view (an include that climbs out of the view with "../../.."
      reaches the tree itself, and is named here).

  linker/layers.py symbols --obj-root DIR [--obj-root DIR...] OBJ...
      Read the objects' symbols (gcc-nm, which reads LTO objects) and fail
      on a reference against the arrows: an object of a lower layer that
      uses a symbol an object of a layer it may not use defines (an extern
      declaration and a call, with no #include at all).  An object's layer
      is that of its path under the first --obj-root that holds it.
      Symbols no object of ours defines (picolibc's, libgcc's, the linker
      script's) are not ours to judge; lwIP's objects (lwip/...) define the
      layer "lwip" and are not judged themselves.

Exit status: 0, 1 (a forbidden arrow: one line each, "what: A may not use
B"), 2 (usage).
"""
import os
import re
import subprocess
import sys

# --- the architecture, in executable form ------------------------------------
# Each layer: the folders that are its own (their files, not their
# subfolders'), and the layers it may use.  Bottom up: kernel -> drivers ->
# net (the demultiplexer, then the fabric, then call, then the three
# mechanisms and the lwIP port) -> lib -> apps -> tests (the test image's
# apps).  "lwip" is lwIP's own headers, given by the Makefile (LWIP_INC) to
# the files that use sockets.  The tests' folders are every folder under
# tests/ that holds C (its files are filed by the feature they test,
# tests/README.md): one layer, whatever the folder.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = sorted(os.path.relpath(d, ROOT) for d, _, names in os.walk(os.path.join(ROOT, "tests"))
               if any(n.endswith((".c", ".h")) for n in names))
NETS = ["net", "net/fabric", "net/call", "net/lwip", "net/rmem", "net/deposit", "net/req"]
LAYERS = {
    "boot": (["boot"], ["kernel"]),
    "kernel": (["kernel"], ["boot"]),
    "drivers": (["drivers"], ["kernel"]),
    "net": (["net"], ["kernel"]),
    "net/fabric": (["net/fabric"], ["kernel", "net"]),
    "net/call": (["net/call"], ["kernel", "net", "net/fabric"]),
    "net/lwip": (["net/lwip", "net/lwip/arch"], ["kernel", "net", "lwip"]),
    "net/rmem": (["net/rmem"], ["kernel", "net", "net/fabric", "net/call"]),
    "net/deposit": (["net/deposit"], ["kernel", "net", "net/fabric", "net/call"]),
    "net/req": (["net/req"], ["kernel", "net", "net/fabric", "net/call"]),
    "lib": (["lib", "lib/mpi"], ["kernel", "lwip"] + NETS),
    "apps": (["apps"], ["kernel", "lib"] + NETS),
    "tests": (TESTS, ["kernel", "lib", "apps", "lwip"] + NETS),
}
# Single files a layer may use beyond its arrows: the network's layers reach
# the drivers through the NIC interface, the packet buffers and the Ethernet
# sizes alone; REQ's message notification writes its body by remote memory
# (net/req/remote.c).
# For symbols, the objects that define what those headers declare.  A
# layer that uses another may use its grants too: their headers include them.
GRANTS = {n: ["drivers/netdev.h", "drivers/pktbuf.h", "drivers/eth.h"] for n in NETS}
GRANTS["net/req"] = GRANTS["net/req"] + ["net/rmem/rmem.h"]
SYMBOL_GRANTS = {n: ["drivers/netdev.o", "drivers/pktbuf.o"] for n in NETS}
SYMBOL_GRANTS["net/req"] = SYMBOL_GRANTS["net/req"] + ["net/rmem/"]
# ------------------------------------------------------------------------------


def layer_of(path):
    """The layer of a project path (a source or an object), or None."""
    path = os.path.normpath(path)
    if path.startswith("lwip/"):
        return "lwip"
    best = None
    for name, (dirs, _) in LAYERS.items():
        for d in dirs:
            if os.path.dirname(path) == d and (best is None or len(d) > len(best[1])):
                best = (name, d)
    return best[0] if best else None


def view_files(layer):
    """Project paths (files) the layer's view holds."""
    dirs = list(LAYERS[layer][0])
    for used in LAYERS[layer][1]:
        if used in LAYERS:
            dirs += LAYERS[used][0]
    files = set()
    for g in [layer] + LAYERS[layer][1]:
        files.update(GRANTS.get(g, []))
    for d in dirs:
        full = os.path.join(ROOT, d)
        for f in os.listdir(full):
            if os.path.isfile(os.path.join(full, f)):
                files.add(os.path.join(d, f))
    return files


def view_dir(build, layer):
    return os.path.join(build, "layers", layer.replace("/", "."))


def make_views(build):
    for layer in LAYERS:
        top = view_dir(build, layer)
        want = view_files(layer)
        for dirpath, _, names in os.walk(top):
            for n in names:
                path = os.path.join(dirpath, n)
                if os.path.relpath(path, top) not in want:
                    try:
                        os.unlink(path)
                    except FileNotFoundError:
                        pass        # another make's run took it first
        for rel in sorted(want):
            link, target = os.path.join(top, rel), os.path.join(ROOT, rel)
            try:
                if os.readlink(link) == target:
                    continue
                os.unlink(link)     # points elsewhere: a moved or copied tree
            except OSError:
                pass
            os.makedirs(os.path.dirname(link), exist_ok=True)
            try:
                os.symlink(target, link)
            except FileExistsError:
                pass                # another make's run made it
    return 0


INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def why(build, source):
    """Print the includes of source (followed through the view) that its view lacks."""
    layer = layer_of(source)
    if layer is None:
        return 0
    view = view_dir(build, layer)
    seen, found = set(), 0

    def walk(path):  # path: as the compiler sees it, under the view
        nonlocal found
        if path in seen or not os.path.isfile(path):
            return
        seen.add(path)
        with open(path, errors="replace") as f:
            lines = f.readlines()
        for n, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(2)
            here = [os.path.join(os.path.dirname(path), name)] if m.group(1) == '"' else []
            cands = here + [os.path.join(view, name)]
            hit = next((c for c in cands if os.path.exists(c)), None)
            if hit:
                walk(hit)
                continue
            # Not in the view: where would it be in the tree?
            for c in cands:
                rel = os.path.normpath(os.path.relpath(c, view))
                if not rel.startswith("..") and os.path.exists(os.path.join(ROOT, rel)):
                    who = os.path.relpath(path, view)
                    print("%s:%d: includes %s: %s may not use %s (linker/layers.py; DESIGN, \"Layers\")"
                          % (who, n, rel, layer, layer_of(rel) or os.path.dirname(rel)), file=sys.stderr)
                    found += 1
                    break
    walk(os.path.join(view, source))
    return 1 if found else 0


def may_use(user, owner, owner_obj):
    if owner == user or owner in LAYERS[user][1]:
        return True
    return any(owner_obj == g or (g.endswith("/") and owner_obj.startswith(g))
               for u in [user] + LAYERS[user][1] for g in SYMBOL_GRANTS.get(u, []))


def report(bad, what):
    """Each violation once, then their count: 1 if any, else 0."""
    for line in sorted(set(bad)):
        print(line)
    if bad:
        print("layers: %d %s against the layers (linker/layers.py; DESIGN, \"Layers\")" % (len(set(bad)), what))
    return 1 if bad else 0


def deps_of(dfile):
    """The prerequisites a gcc -MMD file lists (every target's, once each)."""
    try:
        text = open(dfile).read().replace("\\\n", " ")
    except OSError:
        return None
    out = []
    for line in text.splitlines():
        _, colon, rest = line.partition(": ")
        if colon:
            out += rest.split()
    return out


def check_deps(roots, objs):
    """Every file of the tree an object was compiled from, of a layer it may use, through its view."""
    roots = [os.path.normpath(r) for r in roots]
    bad = []
    for o in objs:
        o = os.path.normpath(o)
        root = next((r for r in roots if o.startswith(r + os.sep)), None)
        rel = os.path.relpath(o, root) if root else None
        layer = layer_of(rel) if rel else None
        if layer in (None, "lwip"):
            continue
        deps = deps_of(o[:-2] + ".d")
        if deps is None:
            continue
        for d in deps:
            a = os.path.normpath(os.path.join(ROOT, d))    # make runs in the tree's root
            if not a.startswith(ROOT + os.sep):
                continue            # the toolchain's, picolibc's, lwIP's (outside the tree)
            t = os.path.relpath(a, ROOT)
            if any(t.startswith(os.path.relpath(os.path.abspath(r), ROOT) + os.sep) for r in roots):
                # under BUILD: generated headers, or a view (its own only)
                parts = t.split(os.sep)
                i = parts.index("layers") if "layers" in parts else -1
                if i >= 0 and i + 1 < len(parts) and parts[i + 1] != layer.replace("/", "."):
                    bad.append("%s: compiled from %s, another layer's view" % (rel, d))
                continue
            owner = layer_of(t)
            if owner is None or owner == layer or owner in LAYERS[layer][1] or t in GRANTS.get(layer, []):
                continue
            if any(t in GRANTS.get(u, []) for u in LAYERS[layer][1]):
                continue
            bad.append("%s: includes %s: %s may not use %s" % (rel, t, layer, owner))
    return report(bad, "includes")


def check_symbols(roots, objs):
    roots = [os.path.normpath(r) for r in roots]

    def rel(o):
        o = os.path.normpath(o)
        for r in roots:
            if o.startswith(r + os.sep):
                return os.path.relpath(o, r)
        return None

    placed = []
    for o in objs:
        r = rel(o)
        if r is None:
            print("layers: %s is under no --obj-root" % o, file=sys.stderr)
            return 2
        placed.append((o, r, layer_of(r)))
    # One gcc-nm for all: "file:symbol-line", or a "file:" header before each file's lines.
    out = subprocess.run(["gcc-nm", "-A", "--no-sort"] + [o for o, _, _ in placed],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print("layers: gcc-nm failed: " + out.stderr.strip(), file=sys.stderr)
        return 2
    byfile = {o: r for o, r, _ in placed}
    defined, used = {}, []
    for line in out.stdout.splitlines():
        path, _, rest = line.partition(":")
        f = rest.split()
        if path not in byfile or not f:
            continue
        r = byfile[path]
        if len(f) == 2 and f[0] == "U":
            used.append((r, f[1]))
        elif len(f) == 3 and f[1].isupper() and f[1] != "U":
            defined.setdefault(f[2], r)     # global definitions only: a static one is no one else's
    bad = []
    for r, sym in used:
        user = layer_of(r)
        owner_obj = defined.get(sym)
        if user in (None, "lwip") or owner_obj is None:
            continue
        owner = layer_of(owner_obj)
        if owner is not None and not may_use(user, owner, owner_obj):
            bad.append("%s: uses %s, defined in %s: %s may not use %s" % (r, sym, owner_obj, user, owner))
    return report(bad, "references")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    cmd, args = argv[0], argv[1:]
    if cmd == "views" and len(args) == 1:
        return make_views(args[0])
    if cmd == "why" and len(args) == 2:
        return why(args[0], args[1])
    if cmd == "layer" and args:
        for a in args:
            print(layer_of(a) or "(none)")
        return 0
    if cmd in ("symbols", "check"):
        roots, objs = [], []
        while args:
            if args[0] == "--obj-root" and len(args) > 1:
                roots.append(args[1])
                args = args[2:]
            else:
                objs.append(args[0])
                args = args[1:]
        if roots and objs:
            if cmd == "check":
                r = check_deps(roots, objs)
                if r:
                    return r
            return check_symbols(roots, objs)
    print("layers: usage: linker/layers.py views BUILD | layer PATH... | why BUILD SOURCE | "
          "check|symbols --obj-root DIR... OBJ... (--help)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
