#!/usr/bin/env python3
"""The README's lists against the kernel image's own tables.

usage: tests/tree/readme_keys.py [README] [IMAGE]

Reads the keys of the table under "Keys every node understands" and the
apps of the "## Apps" table in README (default README.md), and the
kernel's argument tables and app list from IMAGE (default build/now-test.elf, which has every app,
read as boot/tools/nowimage.py reads them).  Prints what either side lacks and
ends with "readme-keys: N keys, M apps, the same in both"; exit status 0
iff both lists match.
"""
import os
import re
import sys

from tree_check import ROOT, verdict

sys.path.insert(0, os.path.join(ROOT, "boot", "tools"))
import nowimage  # noqa: E402


def table_after(text, marker, cell):
    """First-column names (by the regex cell) of the Markdown table after marker."""
    i = text.find(marker)
    if i < 0:
        return None
    rows, started = [], False
    for line in text[i:].splitlines()[1:]:
        if line.startswith("|"):
            started = True
            m = re.match(r"\|\s*" + cell, line)
            if m:
                rows.append(m.group(1))
        elif started:
            break
    return rows


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    readme = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "README.md")
    image = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build", "now-test.elf")
    with open(readme) as f:
        text = f.read()
    img = nowimage.read(image)
    if img is None:
        print(f"readme-keys: cannot read the tables of {image}")
        return 1
    doc_keys = table_after(text, "Keys every node understands", r"`(\w+)=`")
    doc_apps = table_after(text, "\n## Apps", r"`([\w-]+)`")
    if not doc_keys or not doc_apps:
        print(f"readme-keys: {readme} has no key table or no Apps table")
        return 1
    bad = 0
    for what, doc, real in (("key", doc_keys, img["keys"]), ("app", doc_apps, list(img["apps"]))):
        for k in sorted(set(real) - set(doc)):
            print(f"readme-keys: the kernel's {what} '{k}' is not in the README")
            bad += 1
        for k in sorted(set(doc) - set(real)):
            print(f"readme-keys: the README's {what} '{k}' is not in the kernel")
            bad += 1
        for k in sorted({k for k in doc if doc.count(k) > 1}):
            print(f"readme-keys: the README lists the {what} '{k}' twice")
            bad += 1
    return verdict(bad, f"readme-keys: {bad} differences",
                   f"readme-keys: {len(doc_keys)} keys, {len(doc_apps)} apps, the same in both")


if __name__ == "__main__":
    sys.exit(main())
