#!/bin/bash
# The layering check: read every #include "..." of the project's sources and
# fail on an arrow the architecture forbids (README, "Layout").
#
#   tests/layers.sh [--root DIR]     check the tree (default: this repository)
#   tests/layers.sh --help
#
# Prints one line per forbidden include, "file:line: includes X: A may not
# use B", and exits 1; or a one-line summary and exits 0.
set -u

# --- the architecture, in executable form -------------------------------------
# Layers, bottom up.  A file's layer is its path's first folder; net/ is
# split into sub-layers, and tests/apps and tests/bench (the test image's
# apps) are one layer.  ALLOW lists, for each layer, the layers it may
# include (itself always).
#
#   kernel        -> (drivers: the console's and exit's devices only, EXCEPT)
#   drivers       -> kernel
#   net           -> kernel drivers(*)                (the demultiplexer: net/*.h)
#   net/fabric    -> kernel drivers(*) net            (the link)
#   net/call      -> kernel drivers(*) net net/fabric (call, names, barrier: above the link)
#   net/lwip      -> kernel drivers(*) net lwip
#   net/rmem      -> kernel drivers(*) net net/fabric net/call
#   net/deposit   -> kernel drivers(*) net net/fabric net/call
#   net/req       -> kernel drivers(*) net net/fabric net/call
#                    (and net/rmem from remote.c alone: message notification, EXCEPT)
#   lib           -> kernel net net/* lwip
#   apps          -> kernel net net/* lib
#   tests         -> kernel net net/* lib apps lwip   (tests/apps, tests/bench)
#   boot          -> kernel
#
# (*) net's layers reach drivers through drivers/netdev.h and
# drivers/pktbuf.h alone (NETDRV).  "lwip" is lwIP's own headers
# ("lwip/...", "arch/...", "lwipopts.h"): only the port, Madeleine's TCP
# driver and the test apps that use sockets include them.
NETS="net net/fabric net/call net/lwip net/rmem net/deposit net/req"
declare -A ALLOW=(
	[boot]="kernel"
	[kernel]="boot"
	[drivers]="kernel"
	[net]="kernel drivers"
	[net/fabric]="kernel drivers net"
	[net/call]="kernel drivers net net/fabric"
	[net/lwip]="kernel drivers net lwip"
	[net/rmem]="kernel drivers net net/fabric net/call"
	[net/deposit]="kernel drivers net net/fabric net/call"
	[net/req]="kernel drivers net net/fabric net/call"
	[lib]="kernel $NETS lwip"
	[apps]="kernel $NETS lib"
	[tests]="kernel $NETS lib apps lwip"
)
# The drivers' headers net's layers may include.
NETDRV="drivers/netdev.h drivers/pktbuf.h"
# Single arrows outside the table, file:header: the kernel reaches drivers
# only for its console and exit devices (it starts everything else
# through registration, kernel/init.h) and for the files the host hands
# a node beside its command line (QEMU's fw_cfg, kernel/bootinfo.c); REQ's
# message notification writes its body by remote memory.
EXCEPT="kernel/console.c:drivers/uart.h kernel/console.c:drivers/vga.h kernel/console.c:drivers/fbcon.h
	kernel/main.c:drivers/qemu.h kernel/panic.c:drivers/qemu.h kernel/bootinfo.c:drivers/qemu.h
	net/req/remote.c:net/rmem/rmem.h"
# ------------------------------------------------------------------------------

ROOT=$(cd "$(dirname "$0")/.." && pwd)
while [ $# -gt 0 ]; do
	case "$1" in
	--root) ROOT=$2; shift 2 ;;
	-h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "layers: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
cd "$ROOT" || exit 2

# The layer of a project path, or nothing if it is not one of ours.
layer_of() {
	case "$1" in
	net/fabric/*|net/lwip/*|net/rmem/*|net/req/*|net/deposit/*)
		local rest=${1#net/}; echo "net/${rest%%/*}" ;;
	net/*/*) echo "net/${1#net/}" | cut -d/ -f1-2 ;;
	net/*) echo net ;;
	boot/*|kernel/*|drivers/*|lib/*|apps/*) echo "${1%%/*}" ;;
	tests/apps/*|tests/bench/*) echo tests ;;
	esac
}

files=0 includes=0 bad=0
while IFS= read -r f; do
	files=$((files + 1))
	from=$(layer_of "$f")
	while IFS=: read -r line inc; do
		[ -n "$inc" ] || continue
		includes=$((includes + 1))
		# Project paths are written from the root; a bare name is beside the file.
		case "$inc" in
		*/*) path=$inc ;;
		*) path=$(dirname "$f")/$inc ;;
		esac
		to=$(layer_of "$path")
		# lwIP's own headers are a layer of their own; picolibc's are none.
		if [ -z "$to" ] || [ ! -e "$path" ]; then
			case "$inc" in
			lwip/*|arch/*|netif/*|lwipopts.h) to=lwip; path=$inc ;;
			*) continue ;;
			esac
		fi
		[ "$to" = "$from" ] && continue
		case " $(echo $EXCEPT) " in *" $f:$path "*) continue ;; esac
		if [ "$to" = drivers ] && [ "${from%%/*}" = net ]; then
			case " $NETDRV " in *" $path "*) continue ;; esac
			echo "$f:$line: includes $inc: $from may use drivers/netdev.h and drivers/pktbuf.h only"
			bad=$((bad + 1))
			continue
		fi
		case " ${ALLOW[$from]} " in *" $to "*) continue ;; esac
		echo "$f:$line: includes $inc: $from may not use $to"
		bad=$((bad + 1))
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		 sed -E 's/^([0-9]+):[^"]*"([^"]+)".*/\1:\2/')
done < <(find boot kernel drivers net lib apps tests/apps tests/bench -type f \( -name '*.c' -o -name '*.h' -o -name '*.S' \) | sort)

if [ "$bad" -gt 0 ]; then
	echo "layers: $bad forbidden include(s) in $files files; the allowed arrows are at the top of $0"
	exit 1
fi
echo "layers: $files files, $includes includes, every one along an allowed arrow"
