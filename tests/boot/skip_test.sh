#!/bin/bash
# make test where the QEMU on PATH has no igb (Debian 12's own 7.2, when
# Debian's backports cannot be reached): a shim in front of the real QEMU
# hides the device and says 7.2.  Every igb case must then be reported as
# skipped, with the reason, none as passed or failed; and boot/cluster
# --nic igb must refuse with a message that says why.
#
# Usage: tests/boot/skip_test.sh [BUILD]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
real=$(command -v qemu-system-x86_64) || { echo "skip_test: no qemu-system-x86_64" >&2; exit 1; }
shim=$(mktemp -d)
trap 'rm -rf "$shim"' EXIT
cat > "$shim/qemu-system-x86_64" <<SHIM
#!/bin/sh
case "\$*" in
--version) echo "QEMU emulator version 7.2.0 (a shim hiding igb)"; exit 0 ;;
"-device help") "$real" -device help | grep -v '^name "igb"'; exit 0 ;;
esac
exec "$real" "\$@"
SHIM
chmod +x "$shim/qemu-system-x86_64"
export PATH="$shim:$PATH"

out=$(python3 "$root/tests/run.py" --build "$build" --filter=-igb 2>&1) || true
echo "$out"
n=$(grep -c '^SKIP qemu/[a-z0-9-]*-igb\(-q35\)\?: QEMU 7.2.0 has no igb device (QEMU 8.0 or later has it' <<<"$out" || true)
grep -q '^0 passed, 0 failed$' <<<"$out" || { echo "skip_test: FAILED: igb cases ran or failed" >&2; exit 1; }
grep -q "^skipped $n: " <<<"$out" || { echo "skip_test: FAILED: no skipped summary of $n" >&2; exit 1; }
[ "$n" -ge 12 ] || { echo "skip_test: FAILED: only $n igb cases skipped" >&2; exit 1; }
echo "skip_test: $n igb cases skipped and named"

msg=$("$root/boot/cluster" --nic igb --nodes 1 --timeout 10 2>&1) && { echo "skip_test: FAILED: boot/cluster ran" >&2; exit 1; }
grep -q "cluster: error: --nic igb: .*(QEMU 7.2.0) has no igb device" <<<"$msg" ||
	{ echo "skip_test: FAILED: boot/cluster said: $msg" >&2; exit 1; }
echo "skip_test: boot/cluster --nic igb refused: ${msg#cluster: error: }"
