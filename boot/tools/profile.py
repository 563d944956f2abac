#!/usr/bin/env python3
"""Where a node's CPU spends its time, sampled through QEMU's gdbstub, and
the flat profile of those samples, each address named against the kernel
ELF the node booted.

boot/cluster --profile HZ gives every node's QEMU a gdbstub on 127.0.0.1
and runs a Sampler per node: HZ times a second it interrupts the vCPU
(0x03), reads RIP (`p10`) and lets it run again (`c`).  When the cluster
ends it writes each node's samples to a file (--profile-out, default
build/profile/n<i>.samples) and prints each node's table: how many samples
at what rate, the idle loop's share, and the functions that took the most
samples, each named by addr2line (the innermost inlined function, the
callers it was inlined into, its file and line), or by nm where there is
no line information.  This command prints the same table again from saved
samples.

Sampling stops the vCPU each time: the node runs slower while it is
profiled (samples say where its time goes, not how fast it goes).

example:
  boot/tools/profile.py --elf build/now-test.elf build/profile/n0.samples build/profile/n1.samples

Python 3 standard library, with binutils' nm and addr2line.
"""

import argparse
import bisect
import collections
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
DEFAULT_TOP = 25
# The idle loop: a sample with one of these functions in its chain is the CPU waiting.
IDLE_FUNCS = ("thread_idle_loop", "sti_hlt")
SAMPLES_MAGIC = "# now profile samples"
# GCC's names for its clones and LTO's for a file's local symbols: foo.lto_priv.0,
# foo.constprop.1, foo.isra.0, foo.part.0, foo.cold.
CLONE_SUFFIX = re.compile(r"(\.(lto_priv|constprop|isra|part|cold|llvm)(\.\d+)?)+$")
RIP_REG = "10"          # x86-64's RIP in QEMU's gdb register numbering (rax..r15 are 0..15)


class GdbError(Exception):
    """The gdbstub answered something the sampler did not expect, or not in time."""


class Ended(Exception):
    """The gdbstub's connection closed: its QEMU exited."""


def _checksum(payload):
    return "%02x" % (sum(payload) & 0xFF)


class Sampler(threading.Thread):
    """One node's sampler: a thread that connects to the node's gdbstub on 127.0.0.1:port and,
    hz times a second, interrupts the vCPU, reads RIP and continues it.

    QEMU stops the VM as a client connects: the sampler sends `c` at once, after `?` and
    QStartNoAckMode.  The VM is never left stopped by it: on any error with the VM stopped it
    detaches (`D`, which lets it run), and it closes only while the VM runs (QEMU takes any byte
    sent to a running VM as an interrupt, so nothing else is sent then).  It says once why it
    stopped sampling (say), unless the connection closed because the node ended.

    alive() tells whether the node still runs (a node that never listens, or ends, ends
    the sampler quietly); begin() whether to begin (boot/cluster: once the kernel printed its
    first line, so that the firmware's boot is left out).  samples: the RIPs; seconds(): how
    long it sampled."""

    REPLY_TIMEOUT = 10.0        # seconds for any reply of the gdbstub
    CONNECT_TIMEOUT = 60.0      # seconds for QEMU to listen

    def __init__(self, node, port, hz, alive=lambda: True, say=None, begin=lambda: True):
        super().__init__(name=f"profile-{node}", daemon=True)
        self.node, self.port, self.hz = node, port, hz
        self.alive, self.begin = alive, begin
        self.say = say or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.samples = []
        self.problem = None         # why sampling stopped early, if it did
        self.detached = False
        self.t_start = self.t_end = None
        self._halt = threading.Event()
        self._sock = None
        self._buf = b""
        self._ack = True
        self._stopped = False       # the VM is stopped, or will be when QEMU reads our next byte

    def stop(self):
        """Stop sampling (the VM left running); join() to wait for it."""
        self._halt.set()

    def seconds(self):
        if self.t_start is None:
            return 0.0
        return max(0.0, (self.t_end or time.monotonic()) - self.t_start)

    # --- the remote protocol -------------------------------------------------------

    def _send(self, payload):
        data = payload.encode()
        self._sock.sendall(b"$" + data + b"#" + _checksum(data).encode())

    def _recv(self):
        """The next packet's payload (run-length encoding expanded); acknowledged until
        no-ack mode."""
        while True:
            i = self._buf.find(b"$")
            if i >= 0:
                j = self._buf.find(b"#", i)
                if j >= 0 and len(self._buf) >= j + 3:
                    raw = self._buf[i + 1:j]
                    self._buf = self._buf[j + 3:]
                    if self._ack:
                        self._sock.sendall(b"+")
                    return self._expand(raw).decode(errors="replace")
            try:
                data = self._sock.recv(65536)
            except socket.timeout:
                raise GdbError(f"no reply from the gdbstub within {self.REPLY_TIMEOUT:g} s")
            except (ConnectionResetError, BrokenPipeError):
                raise Ended()
            if not data:
                raise Ended()
            self._buf += data

    @staticmethod
    def _expand(raw):
        out = bytearray()
        k = 0
        while k < len(raw):
            c = raw[k]
            if c == ord("*") and out and k + 1 < len(raw):
                out += out[-1:] * (raw[k + 1] - 29)
                k += 2
                continue
            out.append(c)
            k += 1
        return bytes(out)

    def _cmd(self, payload):
        self._send(payload)
        return self._recv()

    def _stop_reply(self, what):
        while True:
            reply = self._recv()
            if reply[:1] in ("T", "S"):
                return
            if reply[:1] in ("W", "X"):
                raise Ended()
            if reply[:1] != "O":        # console output of QEMU's monitor: not ours to read
                raise GdbError(f"{what}: the gdbstub answered {reply[:40]!r}, not a stop reply")

    # --- the thread ----------------------------------------------------------------

    def _connect(self):
        while not self.begin():
            if self._halt.wait(0.01) or not self.alive():
                return False
        end = time.monotonic() + self.CONNECT_TIMEOUT
        while not self._halt.is_set() and self.alive():
            try:
                self._sock = socket.create_connection(("127.0.0.1", self.port), timeout=1.0)
                return True
            except (ConnectionRefusedError, socket.timeout):
                if time.monotonic() > end:
                    raise GdbError(f"nothing listens on 127.0.0.1:{self.port} after "
                                   f"{self.CONNECT_TIMEOUT:g} s")
                time.sleep(0.05)
        return False

    def run(self):
        try:
            if self._connect():
                self._sample()
        except (Ended, BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            # QEMU closed the connection: the node ended (or is ending), unless it still runs.
            end = time.monotonic() + 2.0
            while self.alive() and time.monotonic() < end:
                time.sleep(0.05)
            if self.alive():
                self._give_up("the gdbstub closed the connection")
        except (OSError, GdbError, ValueError) as e:
            self._give_up(str(e) or type(e).__name__)
        finally:
            self.t_end = self.t_end or time.monotonic()
            if self._sock is not None:
                try:
                    self._sock.close()
                except OSError:
                    pass

    def _sample(self):
        s = self._sock
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.settimeout(self.REPLY_TIMEOUT)
        self._stopped = True            # QEMU stopped the VM as we connected
        self._cmd("?")
        if self._cmd("QStartNoAckMode") == "OK":
            self._ack = False
        self._send("c")
        self._stopped = False
        period = 1.0 / self.hz
        self.t_start = time.monotonic()
        due = self.t_start + period
        while not self._halt.is_set():
            wait = due - time.monotonic()
            if wait > 0 and self._halt.wait(wait):
                break
            s.sendall(b"\x03")
            self._stopped = True
            self._stop_reply("an interrupt")
            rip = self._cmd("p" + RIP_REG)
            if not re.fullmatch(r"(?:[0-9a-fA-F]{2}){1,8}", rip):
                raise GdbError(f"RIP read as {rip[:40]!r} (p{RIP_REG})")
            self._send("c")
            self._stopped = False
            self.samples.append(int.from_bytes(bytes.fromhex(rip), "little"))
            # After a slow turn the VM still runs half a period before the next stop.
            now = time.monotonic()
            due = max(due + period, now + period / 2)
        self.t_end = time.monotonic()

    def _give_up(self, why):
        self.t_end = self.t_end or time.monotonic()
        if self._stopped and self._sock is not None:
            try:                        # detach: QEMU lets the VM run on
                self._sock.settimeout(2.0)
                self._send("D")
                self.detached = True
                self._recv()
            except (OSError, GdbError, Ended):
                pass
        self._stopped = False
        self.problem = why
        self.say(f"profile {self.node}: sampling stopped after {len(self.samples)} samples: {why}; "
                 f"the node {'was detached and ' if self.detached else ''}runs on unsampled")


# --- the samples' file -------------------------------------------------------------------------

def elf_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def write_samples(path, node, samples, hz, seconds, elf, problem=None):
    """One address a line (hex), after a header that names the node, the rate, the ELF
    (path and digest) and why sampling stopped early, if it did."""
    try:
        digest = elf_digest(elf)
    except OSError:
        digest = "?"
    with open(path, "w") as f:
        f.write(f"{SAMPLES_MAGIC}\n# node: {node}\n# hz: {hz:g}\n# seconds: {seconds:.3f}\n"
                f"# elf: {os.path.abspath(elf)}\n# elf-sha256: {digest}\n")
        if problem:
            f.write(f"# stopped: {problem}\n")
        f.write("".join("%x\n" % a for a in samples))


def read_samples(path):
    """(header: {key: value}, [addresses]); ValueError for a line that is not an address."""
    head, out = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                k, sep, v = line[1:].partition(":")
                if sep:
                    head[k.strip()] = v.strip()
                continue
            try:
                out.append(int(line, 16))
            except ValueError:
                raise ValueError(f"{path}:{n}: not an address: {line[:40]!r}")
    return head, out


# --- names -------------------------------------------------------------------------------------

class Frame(collections.namedtuple("Frame", "func loc")):
    """One function of an address's chain (innermost first) and its file:line there."""


class Symbolizer:
    """Addresses of one ELF named: by addr2line -f -i (every inlined function and its
    line, innermost first), else by nm's function symbols, else '?'."""

    def __init__(self, elf):
        self.elf = elf
        self.note = None        # what is missing (a tool), said once under the table
        self.cache = {}
        self.syms, self.starts = self._nm()
        self.root = os.path.dirname(os.path.dirname(os.path.abspath(elf)))

    def _nm(self):
        nm = shutil.which("nm")
        if nm is None:
            self.note = "no nm (Debian package binutils): addresses without line information are not named"
            return [], []
        r = subprocess.run([nm, "-S", "-n", "--defined-only", self.elf],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise ValueError(f"nm {self.elf}: {r.stderr.strip() or 'status %d' % r.returncode}")
        syms = []
        for line in r.stdout.splitlines():
            p = line.split()
            if len(p) == 4:
                addr, size, kind, name = int(p[0], 16), int(p[1], 16), p[2], p[3]
            elif len(p) == 3:
                addr, size, kind, name = int(p[0], 16), None, p[1], p[2]
            else:
                continue
            # Functions, in text; a weak symbol without a size is a label LTO puts in the
            # debug information (file.c.1234abcd), at offsets that overlap the text's addresses.
            if kind in "tT" or (kind in "wW" and size):
                syms.append((addr, size, name))
        return syms, [s[0] for s in syms]

    def nm_name(self, addr):
        """The function symbol that covers addr: the nearest below it, or one a little lower
        whose size reaches it (nm lists a function's parts and aliases apart); None if none."""
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            return None
        start, size, name = self.syms[i]
        if size is None:        # a label: up to the next symbol (the last, __text_end, ends the text)
            return name if i + 1 < len(self.syms) else None
        if addr < start + size:
            return name
        for start, size, name in reversed(self.syms[max(0, i - 16):i]):
            if size and addr < start + size:
                return name
        return None

    def _where(self, loc):
        """file:line as a developer finds it: the tree's own files relative to its root,
        others (libraries built under build/) by their name."""
        loc = re.sub(r" \(discriminator \d+\)$", "", loc)
        path, sep, line = loc.rpartition(":")
        if not sep or path in ("", "??"):
            return None
        line = "" if line in ("?", "0") else ":" + line     # assembly: its object, no line
        for root in (self.root, REPO_ROOT):
            rel = os.path.relpath(path, root) if os.path.isabs(path) else path
            if not rel.startswith("..") and not rel.startswith("build" + os.sep):
                return rel + line
        return os.path.basename(path) + line

    def resolve(self, addrs):
        """{address: [Frame, ...] innermost first} for each address (cached)."""
        todo = sorted(set(a for a in addrs if a not in self.cache))
        lines = self._addr2line(todo) if todo else {}
        for a in todo:
            frames = [f for f in lines.get(a, []) if f.func != "??"]
            if not frames:
                name = self.nm_name(a) if self.syms else None
                frames = [Frame(name, None)] if name else []
            self.cache[a] = frames
        return {a: self.cache[a] for a in addrs}

    def _addr2line(self, addrs):
        tool = shutil.which("addr2line")
        if tool is None:
            self.note = "no addr2line (Debian package binutils): functions named by nm only, no lines"
            return {}
        try:
            r = subprocess.run([tool, "-a", "-f", "-i", "-e", self.elf], input="".join(
                "%#x\n" % a for a in addrs), capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            self.note = "addr2line took over 300 s: functions named by nm only"
            return {}
        if r.returncode != 0:
            self.note = f"addr2line failed ({r.stderr.strip()[:200]}): functions named by nm only"
            return {}
        out, cur, rows = {}, None, r.stdout.splitlines()
        k = 0
        while k < len(rows):
            row = rows[k]
            if re.fullmatch(r"0x[0-9a-fA-F]+", row):
                cur = int(row, 16)
                out[cur] = []
                k += 1
                continue
            if cur is not None and k + 1 < len(rows):
                out[cur].append(Frame(row.strip(), self._where(rows[k + 1].strip())))
            k += 2
        return out


def base_name(func):
    return CLONE_SUFFIX.sub("", func)


def is_idle(frames):
    return any(base_name(f.func) in IDLE_FUNCS for f in frames)


def label(frames, chain=3):
    """(group key, shown name, where): the innermost function and the functions it was
    inlined into, up to the first that is in a source file (not a header's inline helper)
    and at most `chain` of them; where: that one's file:line."""
    if not frames:
        return ("?",), "?", None
    keep = []
    where = None
    for f in frames[:chain]:
        keep.append(f.func)
        if f.loc and not f.loc.split(":")[0].endswith(".h") and ":" in f.loc:
            where = f.loc
            break
    if where is None:
        where = next((f.loc for f in frames if f.loc), None)
    return tuple(keep), " < ".join(keep), where


class Table:
    """A flat profile: samples grouped by their label, the idle loop's share."""

    def __init__(self, samples, symbolizer):
        self.total = len(samples)
        named = symbolizer.resolve(samples)
        counts = collections.Counter(samples)
        groups = {}
        self.idle = 0
        for addr, n in counts.items():
            frames = named[addr]
            key, shown, where = label(frames)
            g = groups.setdefault(key, {"shown": shown, "n": 0, "where": collections.Counter(),
                                        "idle": is_idle(frames), "addr": addr})
            g["n"] += n
            if where:
                g["where"][where] += n
            if g["idle"]:
                self.idle += n
        self.rows = sorted(groups.values(), key=lambda g: (-g["n"], g["shown"]))
        self.note = symbolizer.note

    def lines(self, top):
        out = []
        for g in self.rows[:top]:
            where = g["where"].most_common(1)[0][0] if g["where"] else None
            text = g["shown"]
            if text == "?":
                text = "? (in no function of the image; e.g. %#x)" % g["addr"]
            elif where:
                text += f" ({where})"
            out.append("%7.1f %% %6d  %s%s" % (100.0 * g["n"] / self.total, g["n"], text,
                                              "   [idle]" if g["idle"] else ""))
        rest = self.rows[top:]
        if rest:
            n = sum(g["n"] for g in rest)
            out.append("%7.1f %% %6d  (%d more functions)" % (100.0 * n / self.total, n, len(rest)))
        if self.note:
            out.append(f"  ({self.note})")
        return out

    def idle_share(self):
        return 100.0 * self.idle / self.total if self.total else 0.0


def report(node, samples, hz, seconds, symbolizer, top=DEFAULT_TOP, where=None, problem=None):
    """The lines of one node's profile: a heading, then the table."""
    taken = f"; {len(samples) / seconds:.0f} a second over {seconds:.1f} s" if seconds > 0 else ""
    rate = f" at {hz:g} Hz" if hz else ""
    if not samples:
        head = f"profile {node}: no samples{rate}" + (f" ({problem})" if problem else "")
        return [head] + ([f"  raw samples: {where}"] if where else [])
    t = Table(samples, symbolizer)
    head = f"profile {node}: {len(samples)} samples{rate} (idle: {t.idle_share():.1f} %{taken})"
    lines = [head] + t.lines(top)
    if problem:
        lines.append(f"  (sampling stopped early: {problem})")
    if where:
        lines.append(f"  raw samples: {where}")
    return lines


def main(argv):
    ap = argparse.ArgumentParser(
        prog="boot/tools/profile.py",
        description="Print again the flat profile of samples that boot/cluster --profile saved,\n"
                    "a table a file: how many samples, the idle loop's share, and the functions\n"
                    "that took the most, each named by addr2line (the innermost inlined function\n"
                    "< the functions it was inlined into, and its file:line) or by nm; [idle]\n"
                    "marks the idle loop (sti_hlt < thread_idle_loop: the CPU halted, waiting).",
        epilog="example:\n"
               "  boot/tools/profile.py --elf build/now-test.elf build/profile/n0.samples build/profile/n1.samples\n\n"
               "Without --elf, the image the samples' header names is used; samples taken on\n"
               "another build of it are warned about (the image's digest differs).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("samples", nargs="+", metavar="SAMPLES",
                    help="a samples file (boot/cluster --profile-out DIR writes DIR/n<i>.samples)")
    ap.add_argument("--elf", metavar="ELF", default=None,
                    help="the kernel image the nodes booted (default: the one the samples' header names)")
    ap.add_argument("--top", type=int, default=DEFAULT_TOP, metavar="N",
                    help=f"rows of each table (default: {DEFAULT_TOP})")
    ap.add_argument("--merge", action="store_true",
                    help="one table of every file's samples together")
    a = ap.parse_args(argv)
    if a.top < 1:
        ap.error(f"--top must be 1 or more, not {a.top}")
    if a.elf is not None and not os.path.isfile(a.elf):
        ap.error(f"--elf {a.elf}: no such file")
    loaded = []
    for path in a.samples:
        try:
            head, samples = read_samples(path)
        except (OSError, ValueError) as e:
            print(f"profile.py: error: {e}", file=sys.stderr)
            return 2
        elf = a.elf or head.get("elf")
        if elf is None:
            ap.error(f"{path}: its header names no image: give --elf")
        if not os.path.isfile(elf):
            print(f"profile.py: error: {path}: the image {elf} is gone: give --elf", file=sys.stderr)
            return 2
        if head.get("elf-sha256") not in (None, "?") and head["elf-sha256"] != elf_digest(elf):
            print(f"profile.py: warning: {path} was taken on an image other than {elf} (the digest "
                  "its header names differs): the names may be wrong", file=sys.stderr)
        loaded.append((path, head, samples, elf))
    symbolizers = {}

    def sym(elf):
        if elf not in symbolizers:
            symbolizers[elf] = Symbolizer(elf)
        return symbolizers[elf]

    try:
        if a.merge:
            elves = {elf for _, _, _, elf in loaded}
            if len(elves) > 1:
                ap.error("--merge: the files name different images: give --elf")
            hz = {h.get("hz", "?") for _, h, _, _ in loaded}
            samples = [s for _, _, ss, _ in loaded for s in ss]
            secs = sum(float(h.get("seconds", 0) or 0) for _, h, _, _ in loaded)
            for line in report("(" + ", ".join(h.get("node", p) for p, h, _, _ in loaded) + ")", samples,
                               float(hz.pop()) if len(hz) == 1 and hz != {"?"} else None, secs,
                               sym(elves.pop()), a.top):
                print(line)
            return 0
        for path, head, samples, elf in loaded:
            hz = float(head.get("hz", 0) or 0)
            for line in report(head.get("node", os.path.basename(path)), samples, hz,
                               float(head.get("seconds", 0) or 0), sym(elf), a.top, path,
                               head.get("stopped")):
                print(line)
    except ValueError as e:
        print(f"profile.py: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
