"""What the tree's check scripts share (imports.py, readme_files.py,
readme_keys.py): the checkout's root, the --root option, the verdict."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def root_of(argv):
    """The tree a check reads: --root DIR's, else the checkout these scripts are in."""
    return argv[argv.index("--root") + 1] if "--root" in argv else ROOT


def verdict(bad, failed, passed):
    """A check's exit status: 1 with failed printed where bad, else 0 with passed printed."""
    print(failed if bad else passed)
    return 1 if bad else 0
