#!/bin/sh
# Check that the tools the build, the image and the tests need are present.
# As root, install what is missing from Debian's packages; otherwise name
# exactly what to install and fail.  Silent when everything is present.
#
# Usage: boot/deps.sh [--quiet]
set -e

# command:package pairs
need="gcc:gcc ld:binutils make:make
qemu-system-x86_64:qemu-system-x86 vde_switch:vde2
meson:meson ninja:ninja-build
grub-mkrescue:grub-common grub-file:grub-common xorriso:xorriso mformat:mtools
python3:python3 taskset:util-linux xz:xz-utils
apt-get:apt clang:clang
tshark:tshark gnuplot:gnuplot-nox"
# file:package pairs (libraries and data, not commands)
need_files="/usr/include/cmocka.h:libcmocka-dev
/usr/share/grub/ascii.h:grub-common
/usr/lib/grub/i386-pc/modinfo.sh:grub-pc-bin
/usr/lib/grub/x86_64-efi/modinfo.sh:grub-efi-amd64-bin
/usr/share/OVMF/OVMF_CODE.fd:ovmf
/usr/lib/ipxe/qemu/efi-rtl8139.rom:ipxe-qemu
/usr/share/keyrings/debian-archive-keyring.gpg:debian-archive-keyring"

missing=""
for pair in $need; do
	cmd=${pair%%:*}; pkg=${pair#*:}
	command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
for pair in $need_files; do
	f=${pair%%:*}; pkg=${pair#*:}
	[ -e "$f" ] || missing="$missing $pkg"
done
# libFuzzer comes with clang's runtime libraries.
if command -v clang >/dev/null 2>&1; then
	rt=$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a
	[ -e "$rt" ] || missing="$missing libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
fi
missing=$(for p in $missing; do echo " $p"; done | sort -u | tr -d '\n')
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ]; then
	echo "deps: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2 || { echo "deps: apt-get update failed" >&2; exit 1; }
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >&2 || {
		echo "deps: apt-get install failed for:$missing" >&2; exit 1; }
	exit 0
fi
echo "deps: missing Debian packages:$missing" >&2
echo "deps: install them with:  sudo apt-get install$missing" >&2
exit 1
