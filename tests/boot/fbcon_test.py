#!/usr/bin/env python3
"""The console on a UEFI PC's framebuffer, read off the screen.

Boots the ISO on q35 under OVMF with a standard VGA card (no VGA text mode
under UEFI), waits for the node to halt (no isa-debug-exit), takes a
screendump through QEMU's monitor and looks for lines the kernel printed,
drawn in GRUB's 8x16 font at the start of a text row: every pixel of each
glyph lit where the font has a dot and dark where it has none.

Usage: tests/boot/fbcon_test.py ISO [TEXT ...]
"""
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from harness import in_scratch  # noqa: E402  (tests/harness.py)

FONT = "/usr/share/grub/ascii.h"
OVMF = "/usr/share/OVMF/OVMF_CODE.fd"


def load_font():
    with open(FONT) as f:
        vals = [int(v, 16) for v in re.findall(r"0x[0-9a-fA-F]{2}", f.read())]
    if len(vals) != 128 * 16:
        sys.exit("fbcon: %s: %d bytes, expected 128 glyphs of 16" % (FONT, len(vals)))
    return [vals[i * 16:(i + 1) * 16] for i in range(128)]


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
    if not m:
        sys.exit("fbcon: %s is not a binary PPM" % path)
    w, h = int(m.group(1)), int(m.group(2))
    return w, h, data[m.end():]


def find_line(font, w, h, px, text):
    """The text row where text is drawn from column 0, or None."""
    def lit(x, y):
        o = (y * w + x) * 3
        return px[o] + px[o + 1] + px[o + 2] > 96

    for row in range(h // 16):
        ok = True
        for c, ch in enumerate(text):
            g = font[ord(ch)]
            for y in range(16):
                for x in range(8):
                    if lit(c * 8 + x, row * 16 + y) != bool(g[y] & (0x80 >> x)):
                        ok = False
                        break
                if not ok:
                    break
            if not ok:
                break
        if ok:
            return row
    return None


def monitor(sock, cmd):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.settimeout(5)
    time.sleep(0.2)
    try:
        s.recv(4096)
    except socket.timeout:
        pass
    s.sendall(cmd.encode() + b"\n")
    time.sleep(1.0)
    s.close()


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 2
    iso, texts = sys.argv[1], sys.argv[2:] or ["hello from node 0 of 1"]
    font = load_font()
    return in_scratch("now-fbcon-", "fbcon: the serial log and the screen are kept in ",
                      lambda tmp: check(iso, texts, font, tmp))


def check(iso, texts, font, tmp):
    """Boot the ISO under OVMF, take a screendump once it halts, find each text on it."""
    sock, dump = os.path.join(tmp, "mon.sock"), os.path.join(tmp, "screen.ppm")
    argv = ["qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-m", "128",
            "-bios", OVMF, "-display", "none", "-vga", "std", "-no-reboot",
            "-serial", "stdio", "-monitor", "unix:%s,server,nowait" % sock,
            "-netdev", "hubport,id=n0,hubid=0", "-device", "e1000e,netdev=n0,romfile=",
            "-cdrom", iso]
    log = open(os.path.join(tmp, "serial.log"), "wb")
    q = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            with open(log.name, "rb") as f:
                if b"it is safe to power off" in f.read():
                    break
            if q.poll() is not None:
                break
            time.sleep(0.5)
        else:
            print("fbcon: the node did not halt within 120 s")
            return 1
        with open(log.name, "rb") as f:
            serial = f.read().decode(errors="replace")
        m = re.search(r"console: UEFI framebuffer .*", serial)
        print(m.group(0) if m else "fbcon: no framebuffer line on the serial console")
        monitor(sock, "screendump " + dump)
        monitor(sock, "quit")
        q.wait(timeout=10)
    finally:
        if q.poll() is None:
            q.kill()
    w, h, px = read_ppm(dump)
    print("fbcon: screen %dx%d" % (w, h))
    bad = 0
    for t in texts:
        row = find_line(font, w, h, px, t)
        if row is None:
            print("fbcon: not on the screen: %r" % t)
            bad += 1
        else:
            print("fbcon: on the screen at text row %d: %r" % (row, t))
    print("fbcon: %d of %d lines found" % (len(texts) - bad, len(texts)))
    return 1 if bad or not m else 0


if __name__ == "__main__":
    sys.exit(main())
