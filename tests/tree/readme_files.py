#!/usr/bin/env python3
"""Every source file is named in its folder's README.

usage: tests/tree/readme_files.py [--root DIR]

For each folder of the image (boot, kernel, drivers, net and its
layers, lib, apps, linker) and every folder of tests/ (but the fuzz
targets' regressions, which hold inputs), every file in it (sources,
headers, scripts) must be named in the folder's README.md: by its name,
or, for a header beside a source of the same stem (x.h and x.c), by the
name of either.  A folder without a README of its own (net/lwip/arch,
tests/net/rmem) is covered by its nearest parent's.  Prints each file
not named and ends with "readme-files: N files in M folders, every one
named"; exit status 0 iff none is missing.
"""
import os
import re
import sys

from tree_check import root_of, verdict

FOLDERS = ["boot", "boot/tools", "kernel", "drivers", "net", "net/fabric", "net/call", "net/rmem", "net/req",
           "net/deposit", "net/lwip", "net/lwip/arch", "lib", "lib/mpi", "apps", "linker"]


def test_folders(root):
    """Every folder of tests/, but fuzz regressions (inputs) and Python's caches."""
    out = []
    for dirpath, dirs, _ in os.walk(os.path.join(root, "tests")):
        dirs[:] = sorted(d for d in dirs if not d.startswith("regressions") and d != "__pycache__")
        out.append(os.path.relpath(dirpath, root))
    return out


def readme_of(root, folder):
    """The README.md that covers folder: its own, or the nearest parent's."""
    f = folder
    while f:
        p = os.path.join(root, f, "README.md")
        if os.path.isfile(p):
            return p
        f = os.path.dirname(f)
    return None


def named(text, name):
    return re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", text) is not None


def main(argv):
    if "-h" in argv or "--help" in argv:
        print(__doc__.strip())
        return 0
    root = root_of(argv)
    missing = files = folders = 0
    for folder in FOLDERS + test_folders(root):
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        names = sorted(n for n in os.listdir(d)
                       if os.path.isfile(os.path.join(d, n)) and n != "README.md")
        if not names:
            continue
        folders += 1
        readme = readme_of(root, folder)
        text = open(readme).read() if readme else ""
        for n in names:
            files += 1
            stem, ext = os.path.splitext(n)
            partners = [stem + e for e in (".c", ".h", ".S") if stem + e != n and stem + e in names]
            if named(text, n) or any(named(text, p) for p in partners):
                continue
            where = os.path.relpath(readme, root) if readme else folder + "/README.md (missing)"
            print(f"readme-files: {folder}/{n} is not named in {where}")
            missing += 1
    return verdict(missing, f"readme-files: {missing} of {files} files not named in their folder's README",
                   f"readme-files: {files} files in {folders} folders, every one named")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
