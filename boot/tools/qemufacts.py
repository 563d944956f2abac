"""What the QEMU on PATH (or a given one) can do, asked once per process:
its version and the devices it lists, whether it emulates a NIC that only
newer QEMUs have, and whether its e1000 still takes mitigation=off; the
frame that crosses the launcher's switch best; and the launcher's tap
switch (a Linux bridge in a network namespace): whether this process can
make it, and the commands that do.

Used by boot/cluster, boot/tools/bench, boot/tools/peers and the test cases
(tests/*/cases.py), so that they all say the same thing the same way.
Python 3 standard library only.
"""

import os
import re
import shutil
import subprocess

# The frame boot/cluster gives its nodes on its jumbo switch (frame=), and
# boot/tools/peers its Linux guests (MTU 7858).  The switch passes
# 9234 bytes, but a frame crosses it as a unix datagram, and Linux charges
# a datagram of n bytes to the sender's socket buffer (212992 bytes by
# default) as a kmalloc of n + 320 (skb_shared_info) rounded up to a power
# of two: 8 KiB up to 7872 bytes, 16 KiB for 9014.  With 9014-byte frames
# the switch's socket to a node fills at 12 frames in flight and drops the
# next; with 7872-byte ones it holds 24 (measured: retransmissions in
# make bench's bulk rows fell from 50-380 to 4-8 a run).
JUMBO_SWITCH_FRAME = 7872

# NICs only newer QEMUs emulate (boot/cluster --nic): the device, and the first QEMU with it.
NEWER_NICS = {"igb": ("igb", "8.0")}

_asked = {}


def _ask(qemu, *args):
    try:
        return subprocess.run([qemu] + list(args), capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def facts(qemu="qemu-system-x86_64"):
    """{"version": "10.0.2" or "?", "devices": set of names, "e1000_mitigation": bool}."""
    if qemu not in _asked:
        m = re.search(r"version (\S+)", _ask(qemu, "--version"))
        _asked[qemu] = {
            "version": m.group(1) if m else "?",
            "devices": set(re.findall(r'^name "([^"]+)"', _ask(qemu, "-device", "help"), re.M)),
            "e1000_mitigation": bool(re.search(r"^\s*mitigation=",
                                               _ask(qemu, "-device", "e1000,help"), re.M)),
        }
    return _asked[qemu]


def nic_missing(nic, qemu="qemu-system-x86_64"):
    """None, or why qemu cannot run nic, said for a user (a case or run to skip)."""
    if nic not in NEWER_NICS:
        return None
    device, since = NEWER_NICS[nic]
    f = facts(qemu)
    if device in f["devices"]:
        return None
    return ("QEMU %s has no %s device (QEMU %s or later has it; make deps installs QEMU 10 "
            "from Debian's bookworm-backports)" % (f["version"], device, since))


def e1000_mitigation_off(qemu="qemu-system-x86_64"):
    """",mitigation=off" where qemu's e1000 has the switch (up to 9.0), else ""."""
    return ",mitigation=off" if facts(qemu)["e1000_mitigation"] else ""


# The switch boot/cluster starts for an Ethernet NIC (--switch), and what the tools that run
# it for measurements (boot/tools/bench, netpipe.py, peers, boot/mpirun) pass on.
SWITCHES = ("jumbo", "vde", "tap")
# The MTU of the tap switch's ports (a bridge takes its ports' smallest): the most a tap
# takes, so that virtio-net's 64 KiB frames (drivers/eth.h: ETH_LONGEST_FRAME, 65535 bytes
# with its header) and the other NICs' jumbo frames (9014) cross it whole.
TAP_MTU = 65521
# The longest MTU each NIC's Linux driver takes (boot/tools/peers' guests on the tap switch).
LINUX_MTU = {"virtio": 65521, "e1000": 9000, "igb": 9000}


def tap_unavailable():
    """None where this process can make the tap switch (root, ip, /dev/net/tun), else why not."""
    if os.geteuid() != 0:
        return "it needs root (a network namespace, a bridge, taps)"
    if shutil.which("ip") is None:
        return "no 'ip' (Debian package iproute2)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun (the tun module)"
    return None


def measuring_switch(choice, error):
    """The switch a measuring tool's --switch names: 'auto' is tap where this process can make
    it (the Linux bridge, in the kernel: no process hop per frame), else vdeplug4's (jumbo);
    'tap' where it cannot be made is error(why), the tool's argparse error."""
    why = tap_unavailable()
    if choice == "tap" and why:
        error("--switch tap: %s" % why)
    if choice != "auto":
        return choice
    return "jumbo" if why else "tap"


def bridge_commands(ip, ns, taps, mtu=TAP_MTU):
    """The commands that make network namespace ns with a learning bridge br0 (no STP,
    multicast flooded as vde floods it) and each tap in taps on it, up, at mtu; the host's
    side stays silent (no IPv6 link-local addresses either).  Undone by 'ip netns delete ns'."""
    cmds = [
        [ip, "netns", "add", ns],
        [ip, "netns", "exec", ns, "sh", "-c",
         "echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6 && "
         "echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6"],
        [ip, "-n", ns, "link", "add", "br0", "type", "bridge", "stp_state", "0", "mcast_snooping", "0"],
        [ip, "-n", ns, "link", "set", "br0", "up"],
    ]
    for tap in taps:
        cmds += [[ip, "-n", ns, "tuntap", "add", "dev", tap, "mode", "tap"],
                 [ip, "-n", ns, "link", "set", tap, "mtu", str(mtu)],
                 [ip, "-n", ns, "link", "set", tap, "master", "br0"],
                 [ip, "-n", ns, "link", "set", tap, "up"]]
    return cmds
