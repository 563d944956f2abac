"""The cases of tree/ (tests/README.md: where a feature's tests are, how to add one)."""

from harness import *  # noqa: F401,F403


def readme_targets_in_help(root, build):
    """Every make target README shows (a line of a code block that starts with `make X`,
    or `make X` in backquotes) is in make help's list, and make knows it (make -n)."""
    import re
    shown = set()
    with open(os.path.join(root, "README.md")) as f:
        for line in f:
            shown |= set(re.findall(r"(?:^|`)make ([a-z][a-z0-9-]*)", line.strip()))
    h = subprocess.run(["make", "-s", "-C", root, "help"], capture_output=True, text=True)
    listed = set(re.findall(r"^make ([a-z][a-z0-9-]*)", h.stdout, re.M))
    missing = sorted(shown - listed)
    if h.returncode != 0 or missing or len(shown) < 10:
        return False, "README names make targets make help does not list: %s" % " ".join(missing), h.stdout
    unknown = [t for t in sorted(listed) if subprocess.run(
        ["make", "-n", "-C", root, t], capture_output=True, text=True).returncode != 0
        and t not in ("test", "fuzz", "soak", "clean", "distclean", "clean-bench", "deps")]
    if unknown:
        return False, "make help lists targets make does not know: %s" % " ".join(unknown), ""
    return True, "", "README's %d make targets all in make help's %d" % (len(shown), len(listed))

CASES = [
    Check("make/help-lists-readme-targets", readme_targets_in_help),
    Check("check/static-elf-picolibc", static_elf),
    Check("check/ksyms", ksyms_match),
    Check("check/image-apart", image_apart),
    # The layers, enforced by the build (linker/layers.py): a violation planted in a scratch
    # copy (an include quoted, in angle brackets, relative or from a .inc; an extern and a call)
    # is refused by the compiler or the link's symbol check, naming it.
    Command("check/layers-selftest", ["{root}/tests/tree/layers_test.sh", "{build}"], timeout=180,
            expect=[r"layers self-test: 1\d passed, 0 failed"]),
    Command("check/grub-multiboot2", ["grub-file", "--is-x86-multiboot2", "{build}/now.elf"],
            needs=("grub-file",)),
    # The README's keys and apps are the kernel image's own (its argument tables, its apps).
    Command("check/readme-keys", ["python3", "{root}/tests/tree/readme_keys.py", "{root}/README.md",
                                  "{build}/now-test.elf"],
            expect=[r"readme-keys: \d+ keys, \d+ apps, the same in both"]),
    # Every source file is named in its folder's README.
    Command("check/readme-files", ["python3", "{root}/tests/tree/readme_files.py"],
            expect=[r"readme-files: \d+ files in \d+ folders, every one named"]),
    Check("check/readme-files-selftest", readme_files_selftest),
    # No file outside kernel/ uses a file that uses it back (by their objects' symbols).
    Command("check/imports", ["python3", "{root}/tests/tree/imports.py", "--build", "{build}"],
            expect=[r"imports: \d+ files, \d+ imports, no circle outside kernel/"]),
    Check("check/imports-selftest", imports_selftest),
]
