#!/bin/sh
# Check that the tools the build, the image and the tests need are present.
# As root, install what is missing from Debian's packages; otherwise name
# exactly what to install and fail.  Silent when everything is present.
#
# With --qemu10 (make deps, .ci/run), also bring QEMU 10 (its igb NIC, the
# Intel 82576) from Debian's backports suite for this release: the suite is
# derived from the machine's own Debian source entry (its mirror and key),
# and only QEMU's packages (and the SeaBIOS it needs) are pinned to it.
# Where that suite cannot be reached, QEMU stays the release's own (7.2 on
# Debian 12): said once, not an error; make test then skips, and names, the
# cases that need a device only QEMU 8.0 and later emulate.
#
# --show-backports prints the source entry --qemu10 would add (derived from
# the files under $NOW_APT_ETC, default /etc/apt) and changes nothing.
#
# Usage: boot/tools/deps.sh [--qemu10] [--show-backports] [--help]
set -e

APT_ETC=${NOW_APT_ETC:-/etc/apt}
qemu10=0
show=0
for a in "$@"; do
	case $a in
	--qemu10) qemu10=1 ;;
	--show-backports) show=1 ;;
	-h|--help)
		sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
		exit 0 ;;
	*) echo "deps: unknown option '$a' (boot/tools/deps.sh --help)" >&2; exit 2 ;;
	esac
done

# command:package pairs
need="gcc:gcc ld:binutils make:make
qemu-system-x86_64:qemu-system-x86 vde_switch:vde2 vde_plug:vdeplug
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

# QEMU's packages that move to the backports suite together (apt_preferences
# globs), and the files the step writes.
QEMU_PKGS="qemu-system-* qemu-block-extra qemu-utils seabios"
BP_SOURCES=/etc/apt/sources.list.d/now-backports.sources
BP_PIN=/etc/apt/preferences.d/now-qemu-backports

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

qemu_version() {
	qemu-system-x86_64 --version 2>/dev/null | sed -n 's/^QEMU emulator version \([^ ]*\).*/\1/p'
}

# The QEMU on PATH emulates the igb NIC (QEMU 8.0 and later).
qemu_has_igb() {
	qemu-system-x86_64 -device help 2>/dev/null | grep -q '^name "igb"'
}

# Print "URI signed-by" of the machine's first "deb" entry for suite $1
# (one-line .list files and deb822 .sources files alike); nothing if none.
apt_entry() {
	for f in "$APT_ETC"/sources.list "$APT_ETC"/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v suite="$1" '
			$1 != "deb" { next }
			{ key = ""; i = 2 }
			$2 ~ /^\[/ {	# [options]: signed-by= among them
				while (i <= NF) {
					o = $i; gsub(/[][]/, "", o)
					if (o ~ /^signed-by=/) { key = o; sub(/^signed-by=/, "", key) }
					if ($i ~ /\]$/) { i++; break }
					i++
				}
			}
			$(i + 1) == suite { print $i, (key == "" ? "-" : key); exit }
		' "$f"
	done
	for f in "$APT_ETC"/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$1" '
			function flush() {
				if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") &&
				    enabled != "no" && uri != "" && !done) {
					print uri, (key == "" ? "-" : key); done = 1
				}
				types = suites = uri = key = enabled = ""
			}
			/^#/ { next }
			/^[ \t]*$/ { flush(); next }
			{ k = tolower($1); sub(/:$/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v) }
			k == "types" { types = v }
			k == "suites" { suites = v }
			k == "uris" { split(v, u, " "); uri = u[1] }
			k == "signed-by" { key = v }
			k == "enabled" { enabled = tolower(v) }
			END { flush() }
		' "$f"
	done
}

# The deb822 stanza for suite $2 from entry $1 ("URI signed-by").
backports_stanza() {
	uri=${1% *}; key=${1#* }
	[ "$key" = - ] && key=/usr/share/keyrings/debian-archive-keyring.gpg
	echo "# Added by boot/tools/deps.sh --qemu10 (the NOW node image): QEMU 10 from $2."
	echo "Types: deb"
	echo "URIs: $uri"
	echo "Suites: $2"
	echo "Components: main"
	echo "Signed-By: $key"
}

# This release's codename, if it is Debian.
debian_codename() {
	[ -r /etc/os-release ] || return 0
	# shellcheck disable=SC1091
	(. /etc/os-release && [ "$ID" = debian ] && echo "$VERSION_CODENAME") || true
}

# --show-backports: what --qemu10 would add.
show_backports() {
	codename=${NOW_CODENAME:-$(debian_codename)}
	[ -n "$codename" ] || { echo "deps: not a Debian release" >&2; return 1; }
	entry=$(apt_entry "$codename-backports" | head -n 1)
	if [ -n "$entry" ]; then
		echo "deps: $codename-backports is already a source here (${entry% *}); nothing to add"
		return 0
	fi
	entry=$(apt_entry "$codename" | head -n 1)
	[ -n "$entry" ] || { echo "deps: no Debian source entry for $codename under $APT_ETC" >&2; return 1; }
	backports_stanza "$entry" "$codename-backports"
}

# QEMU 10 from <release>-backports, pinned; see the top of this file.
qemu_from_backports() {
	qemu_has_igb && return 0
	codename=$(debian_codename)
	if [ -z "$codename" ]; then
		echo "deps: not a Debian release: QEMU stays $(qemu_version) (the igb tests are skipped)" >&2
		return 0
	fi
	suite=$codename-backports
	added=""
	entry=$(apt_entry "$suite" | head -n 1)
	if [ -z "$entry" ]; then
		entry=$(apt_entry "$codename" | head -n 1)
		if [ -z "$entry" ]; then
			echo "deps: no Debian source entry for $codename in /etc/apt: QEMU stays" \
			     "$(qemu_version) (the igb tests are skipped)" >&2
			return 0
		fi
		uri=${entry% *}
		backports_stanza "$entry" "$suite" > "$BP_SOURCES"
		added=$BP_SOURCES
		echo "deps: added $suite from this machine's own Debian mirror ($uri): $BP_SOURCES" >&2
	fi
	{
		echo "# Written by boot/tools/deps.sh --qemu10 (the NOW node image): QEMU's packages only"
		echo "# come from $suite; nothing else is taken from it."
		echo "Package: $QEMU_PKGS"
		echo "Pin: release n=$suite"
		echo "Pin-Priority: 990"
	} > "$BP_PIN"
	echo "deps: pinned $QEMU_PKGS to $suite: $BP_PIN" >&2
	apt-get update -q >&2 || true
	if ! apt-cache madison qemu-system-x86 2>/dev/null | grep -q " $suite/"; then
		echo "deps: Debian's $suite cannot be reached (or has no qemu-system-x86): QEMU stays" \
		     "$(qemu_version); make test skips, and names, the cases that need QEMU 10's igb" >&2
		rm -f "$BP_PIN" $added
		apt-get update -q >/dev/null 2>&1 || true
		return 0
	fi
	apt-get install -y -q --no-install-recommends qemu-system-x86 >&2 || {
		echo "deps: apt-get install of qemu-system-x86 from $suite failed; QEMU stays" \
		     "$(qemu_version)" >&2
		return 0
	}
	echo "deps: QEMU $(qemu_version) installed from $suite" >&2
}

if [ "$show" = 1 ]; then
	show_backports
	exit $?
fi
if [ -n "$missing" ] && [ "$(id -u)" = 0 ]; then
	echo "deps: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >&2 || { echo "deps: apt-get update failed" >&2; exit 1; }
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing >&2 || {
		echo "deps: apt-get install failed for:$missing" >&2; exit 1; }
	missing=""
fi
if [ -n "$missing" ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: install them with:  sudo apt-get install$missing" >&2
	exit 1
fi
if [ "$qemu10" = 1 ]; then
	if [ "$(id -u)" = 0 ]; then
		export DEBIAN_FRONTEND=noninteractive
		qemu_from_backports
	elif ! qemu_has_igb; then
		echo "deps: QEMU $(qemu_version) has no igb NIC; as root, make deps installs QEMU 10" \
		     "from Debian's backports (until then make test skips the igb cases)" >&2
	fi
fi
exit 0
