#!/bin/bash
# Self-test of tests/layers.sh: a small tree with one forbidden include per
# rule must fail, naming each; the same tree without them must pass.
set -u
CHECK=$(cd "$(dirname "$0")" && pwd)/layers.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0
ok() { echo "ok   $1"; PASS=$((PASS + 1)); }
bad() { echo "FAIL $1"; FAIL=$((FAIL + 1)); }

mkdir -p "$T"/{boot,kernel,drivers,net/fabric,net/call,net/rmem,net/req,net/deposit,net/lwip,lib,apps,tests/apps}
for h in boot/boot.h kernel/x86.h drivers/uart.h drivers/pktbuf.h drivers/pci.h net/net.h net/fabric/fabric.h net/call/call.h \
	 net/rmem/rmem.h net/req/req.h net/deposit/deposit.h net/lwip/lwip_port.h lib/mad.h apps/app.h; do
	echo "/* $h */" > "$T/$h"
done
# Allowed arrows only.
cat > "$T/kernel/main.c" <<'C'
#include "boot/boot.h"
#include "kernel/x86.h"
C
echo '#include "drivers/uart.h"' > "$T/kernel/console.c"
echo '#include "boot.h"' > "$T/boot/entry.S"
echo '#include "kernel/x86.h"' > "$T/drivers/e1000.c"
printf '#include "drivers/pktbuf.h"\n#include "kernel/x86.h"\n' > "$T/net/net.c"
printf '#include "net/net.h"\n' > "$T/net/fabric/send.c"
printf '#include "net/fabric/fabric.h"\n#include "net/call/call.h"\n' > "$T/net/rmem/rmem.c"
printf '#include "net/fabric/fabric.h"\n#include "drivers/pktbuf.h"\n' > "$T/net/call/names.c"
printf '#include "net/rmem/rmem.h"\n#include "net/fabric/fabric.h"\n' > "$T/net/req/remote.c"
printf '#include "net/net.h"\n#include "lwip/tcp.h"\n' > "$T/net/lwip/netif.c"
printf '#include "net/rmem/rmem.h"\n#include "kernel/x86.h"\n' > "$T/lib/rpc.c"
printf '#include "lib/mad.h"\n#include "net/net.h"\n#include "apps/app.h"\n' > "$T/apps/hello.c"
printf '#include "lwip/sockets.h"\n#include "net/net.h"\n' > "$T/lib/mad_tcp.c"
printf '#include "apps/app.h"\n#include "lib/mad.h"\n#include "lwip/sockets.h"\n' > "$T/tests/apps/t.c"

out=$("$CHECK" --root "$T" 2>&1); rc=$?
if [ $rc = 0 ]; then ok "a tree of allowed arrows passes"; else bad "a tree of allowed arrows passes ($out)"; fi

# One forbidden include per rule: file, include, the layer pair named.
rules=(
	"drivers/e1000.c|net/net.h|drivers may not use net"
	"drivers/virtio.c|lib/mad.h|drivers may not use lib"
	"drivers/pci.c|apps/app.h|drivers may not use apps"
	"net/fabric/rx.c|lib/mad.h|net/fabric may not use lib"
	"net/net.c|apps/app.h|net may not use apps"
	"net/fabric/member.c|net/rmem/rmem.h|net/fabric may not use net/rmem"
	"net/fabric/rx.c|net/call/call.h|net/fabric may not use net/call"
	"net/call/barrier.c|net/rmem/rmem.h|net/call may not use net/rmem"
	"net/rmem/segtab.c|drivers/pci.h|net/rmem may use drivers/netdev.h and drivers/pktbuf.h only"
	"net/req/req.c|net/rmem/rmem.h|net/req may not use net/rmem"
	"net/fabric/send.c|lwip/tcp.h|net/fabric may not use lwip"
	"apps/ising.c|lwip/sockets.h|apps may not use lwip"
	"tests/apps/u.c|drivers/pktbuf.h|tests may not use drivers"
	"net/rmem/serve.c|net/req/req.h|net/rmem may not use net/req"
	"net/deposit/conn.c|net/lwip/lwip_port.h|net/deposit may not use net/lwip"
	"net/lwip/sys_arch.c|net/rmem/rmem.h|net/lwip may not use net/rmem"
	"lib/mad_tcp.c|drivers/pktbuf.h|lib may not use drivers"
	"lib/rpc_client.c|apps/app.h|lib may not use apps"
	"apps/nictest.c|drivers/pktbuf.h|apps may not use drivers"
	"kernel/config.c|apps/app.h|kernel may not use apps"
	"kernel/main.c|net/net.h|kernel may not use net"
	"kernel/panic.c|lib/mad.h|kernel may not use lib"
	"kernel/pci_glue.c|drivers/pktbuf.h|kernel may not use drivers"
	"boot/entry2.S|net/net.h|boot may not use net"
)
for r in "${rules[@]}"; do
	IFS='|' read -r file inc want <<<"$r"
	echo "#include \"$inc\"" >> "$T/$file"
done
out=$("$CHECK" --root "$T" 2>&1); rc=$?
if [ $rc = 1 ]; then ok "forbidden includes fail the check"; else bad "forbidden includes fail the check (exit $rc)"; fi
for r in "${rules[@]}"; do
	IFS='|' read -r file inc want <<<"$r"
	if grep -q "^$file:[0-9]*: includes $inc: $want\$" <<<"$out"; then
		ok "$want ($file)"
	else
		bad "$want ($file): not reported; got:"$'\n'"$out"
	fi
done
n=$(grep -c ": includes " <<<"$out")
if [ "$n" = "${#rules[@]}" ]; then ok "nothing else reported"; else bad "$n reported, expected ${#rules[@]}"; fi

echo "layers self-test: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
