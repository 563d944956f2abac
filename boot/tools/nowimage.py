"""What a kernel image (build/now.elf) accepts on its command line, read on
the host: its apps (the struct app pointers between __apps_start and
__apps_end, kernel/init.h) and the keys of its argument tables (the
kernel's kernel_args, every struct arg_table between __argtabs_start and
__argtabs_end, each app's args; kernel/cmdline.h's struct argspec).

Used by boot/cluster to name an unknown app or key once, before any node
boots.  Python 3 standard library only; None where the image cannot be read
this way (another format, stripped), and the kernel then says it itself.
"""

import struct

ARGSPEC = struct.Struct("<QiiqqQ")    # key, type, pad, min, max, help: 40 bytes
APP = struct.Struct("<QQQQi")        # name, summary, main, args, min_nodes


class Image:
    def __init__(self, data):
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ValueError("not a little-endian ELF64 image")
        self.d = data
        (phoff, shoff) = struct.unpack_from("<QQ", data, 0x20)
        (phentsize, phnum, shentsize, shnum, shstrndx) = struct.unpack_from("<HHHHH", data, 0x36)
        self.loads = []
        for i in range(phnum):
            (typ, _, off, vaddr, _, filesz, _, _) = struct.unpack_from("<IIQQQQQQ", data,
                                                                        phoff + i * phentsize)
            if typ == 1:
                self.loads.append((vaddr, off, filesz))
        secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        self.syms = {}
        for s in secs:
            if s[1] != 2:                     # SHT_SYMTAB
                continue
            strtab = secs[s[6]]
            for k in range(s[5] // 24):
                (name, _, _, _, value, _) = struct.unpack_from("<IBBHQQ", data, s[4] + k * 24)
                end = data.index(b"\0", strtab[4] + name)
                self.syms.setdefault(data[strtab[4] + name:end].decode(errors="replace"), value)

    def at(self, vaddr, n):
        for (va, off, size) in self.loads:
            if va <= vaddr and vaddr + n <= va + size:
                return self.d[off + vaddr - va:off + vaddr - va + n]
        raise ValueError("address %#x not in the image" % vaddr)

    def cstr(self, vaddr):
        out = bytearray()
        while len(out) < 256:
            c = self.at(vaddr + len(out), 1)
            if c == b"\0":
                break
            out += c
        return out.decode(errors="replace")

    def ptrs(self, start, end):
        a, b = self.syms[start], self.syms[end]
        return [struct.unpack("<Q", self.at(p, 8))[0] for p in range(a, b, 8)]

    def keys(self, table):
        out = []
        while table:
            (key, *_rest) = ARGSPEC.unpack(self.at(table, ARGSPEC.size))
            if not key:
                break
            out.append(self.cstr(key))
            table += ARGSPEC.size
        return out


def read(path):
    """{"apps": {name: [its keys]}, "keys": [the kernel's and the tables' keys]}, or None."""
    try:
        with open(path, "rb") as f:
            img = Image(f.read())
        apps = {}
        for a in img.ptrs("__apps_start", "__apps_end"):
            (name, _, _, args, _) = APP.unpack(img.at(a, APP.size))
            apps[img.cstr(name)] = img.keys(args)
        keys = []
        kernel = [v for k, v in img.syms.items() if k == "kernel_args" or k.startswith("kernel_args.")]
        for t in kernel[:1]:
            keys += img.keys(t)
        for t in img.ptrs("__argtabs_start", "__argtabs_end"):
            (_, spec) = struct.unpack("<QQ", img.at(t, 16))
            keys += img.keys(spec)
        if not apps or not keys:
            return None
        return {"apps": apps, "keys": keys}
    except (OSError, ValueError, KeyError, struct.error, IndexError):
        return None
