#!/bin/bash
# Self-test of the layers' enforcement (linker/layers.py, the Makefile's
# compile and link rules): in a scratch copy of the tree, plant one
# violation at a time and see the build refuse it, naming it; the copy
# without them compiles.  The four ways a script that reads includes was
# fooled are among them: an include in angle brackets, a relative one, an
# extern declaration and call with no include at all, and an include from a
# .inc file.
#
#   tests/tree/layers_test.sh BUILD      (BUILD: a built tree's build directory)
set -u
if [ $# != 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
	[ $# = 1 ]; exit $?
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$1" && pwd) || exit 2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0
ok() { echo "ok   $1"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $1"; FAIL=$((FAIL + 1)); }

# The tracked files with their times, and the built third-party parts the
# compiles need (picolibc's headers, lwIP's), linked from BUILD.
git -C "$ROOT" ls-files -z | tar -C "$ROOT" --null -T - -cf - | tar -C "$T" -xf -
mkdir -p "$T/build"
for d in picolibc dl "$(basename "$BUILD"/lwip-*)"; do ln -s "$BUILD/$d" "$T/build/$d"; done
mk() { make -s -C "$T" BUILD=build "$@" 2>&1; }

# Allowed arrows compile: a driver, REQ's notification (net/rmem/rmem.h
# granted), lib through the fabric's header (which includes the packet
# buffers'), a test app.
out=$(mk build/drivers/uart.o build/net/req/remote.o build/lib/rpc_client.o build/tests/apps/check.o); rc=$?
if [ $rc = 0 ]; then ok "a tree of allowed arrows compiles"; else bad "a tree of allowed arrows compiles:"$'\n'"$out"; fi

# plant FILE OBJECT TEXT WANT: TEXT appended to FILE must fail OBJECT's compile with WANT said.
plant() {
	local file=$1 obj=$2 text=$3 want=$4 out rc
	cp "$T/$file" "$T/$file.orig"
	printf '%s\n' "$text" >> "$T/$file"
	out=$(mk "build/$obj"); rc=$?
	mv "$T/$file.orig" "$T/$file"
	if [ $rc != 0 ] && grep -qF -- "$want" <<<"$out"; then
		ok "$want"
	else
		bad "$want (exit $rc):"$'\n'"$out"
	fi
}
plant drivers/uart.c drivers/uart.o '#include <net/net.h>' \
	"drivers/uart.c:$(($(wc -l < "$T/drivers/uart.c") + 1)): includes net/net.h: drivers may not use net"
plant drivers/uart.c drivers/uart.o '#include "../net/fabric/fabric.h"' \
	"includes net/fabric/fabric.h: drivers may not use net/fabric"
printf '#include "net/net.h"\n' > "$T/drivers/console.inc"
plant drivers/uart.c drivers/uart.o '#include "console.inc"' \
	"drivers/console.inc:1: includes net/net.h: drivers may not use net"
rm "$T/drivers/console.inc"
plant kernel/main.c kernel/main.o '#include "net/net.h"' "includes net/net.h: kernel may not use net"
plant kernel/console.c kernel/console.o '#include "drivers/netdev.h"' \
	"includes drivers/netdev.h: kernel may not use drivers"
plant net/fabric/rx.c net/fabric/rx.o '#include "net/call/call.h"' \
	"includes net/call/call.h: net/fabric may not use net/call"
plant net/rmem/segtab.c net/rmem/segtab.o '#include "drivers/pci.h"' \
	"includes drivers/pci.h: net/rmem may not use drivers"
plant net/req/req.c net/req/req.o '#include "net/rmem/segtab.h"' \
	"includes net/rmem/segtab.h: net/req may not use net/rmem"
plant lib/rpc_client.c lib/rpc_client.o '#include "apps/app.h"' "includes apps/app.h: lib may not use apps"
plant tests/apps/check.c tests/apps/check.o '#include "drivers/pci.h"' \
	"includes drivers/pci.h: tests may not use drivers"

# An include that climbs out of the view ("../../../../", from the view's
# copy of drivers/, reaches the tree itself) compiles; the link's check of
# what each object was compiled from refuses it.
cp "$T/drivers/uart.c" "$T/drivers/uart.c.orig"
printf '#include "../../../../net/net.h"\n' >> "$T/drivers/uart.c"
out=$(mk build/drivers/uart.o); rc=$?
if [ $rc = 0 ]; then
	out=$(python3 "$T/linker/layers.py" check --obj-root "$T/build" "$T/build/drivers/uart.o" 2>&1); rc=$?
	want="drivers/uart.o: includes net/net.h: drivers may not use net"
	if [ $rc = 1 ] && grep -qF "$want" <<<"$out"; then ok "$want (out of the view)"; else bad "$want (exit $rc):"$'\n'"$out"; fi
else
	bad "an include out of the view compiles (to be refused at the link):"$'\n'"$out"
fi
mv "$T/drivers/uart.c.orig" "$T/drivers/uart.c"

# No include at all: an extern declaration and a call compile, and the
# link's symbol check refuses them (the other objects are BUILD's own).
cp "$T/drivers/qemu.c" "$T/drivers/qemu.c.orig"
printf 'extern int fabric_send(int dst, int proto, const void *buf, unsigned long len);\n%s\n' \
	'int qemu_reach_up(void) { return fabric_send(0, 0, 0, 0); }' >> "$T/drivers/qemu.c"
out=$(mk build/drivers/qemu.o); rc=$?
if [ $rc = 0 ]; then ok "an extern declaration compiles"; else bad "an extern declaration compiles:"$'\n'"$out"; fi
objs=$(cd "$BUILD" && find kernel drivers net lib apps boot -name '*.o' ! -path drivers/qemu.o | sed "s|^|$BUILD/|")
out=$(python3 "$T/linker/layers.py" symbols --obj-root "$T/build" --obj-root "$BUILD" $objs "$T/build/drivers/qemu.o" 2>&1); rc=$?
want="drivers/qemu.o: uses fabric_send, defined in net/fabric/send.o: drivers may not use net/fabric"
if [ $rc = 1 ] && grep -qF "$want" <<<"$out"; then ok "$want"; else bad "$want (exit $rc):"$'\n'"$out"; fi
out=$(python3 "$T/linker/layers.py" symbols --obj-root "$BUILD" $objs "$BUILD/drivers/qemu.o" 2>&1); rc=$?
if [ $rc = 0 ]; then ok "the built objects use no symbol against the layers"; else bad "the built objects:"$'\n'"$out"; fi
# The link runs both checks before it links anything.
out=$(make -n -C "$ROOT" BUILD="$BUILD" -W linker/kernel.ld "$BUILD/now.elf" 2>&1)
if grep -q "linker/layers.py check" <<<"$out"; then ok "the link checks includes and symbols"; else bad "the link checks includes and symbols:"$'\n'"$out"; fi
out=$(python3 "$ROOT/linker/layers.py" check --obj-root "$BUILD/hooks" --obj-root "$BUILD" $objs "$BUILD/drivers/qemu.o" 2>&1); rc=$?
if [ $rc = 0 ]; then ok "the built objects include nothing against the layers"; else bad "the built objects' includes:"$'\n'"$out"; fi

echo "layers self-test: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
