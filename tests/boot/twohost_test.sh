#!/bin/bash
# One cluster across two hosts: two network namespaces stand for two Linux
# hosts joined by a veth "cable" (192.168.250.0/30, nothing else).  Each
# runs boot/cluster --switch tap for its half of the nodes, its bridge
# joined to the other's by VXLAN, and the app must finish on all of them.
#
# Usage: tests/boot/twohost_test.sh [APP [NODES_PER_HOST [ARGS...]]]
#   (default: fabric-stress, 2 per host, count=500).  Root only.
set -u
case "${1:-}" in
-h|--help)
	sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
	exit 0 ;;
esac
app=${1:-fabric-stress}
per=${2:-2}
shift 2 2>/dev/null || shift $#
args=${*:-count=500}
root=$(cd "$(dirname "$0")/../.." && pwd)

if [ "$(id -u)" != 0 ]; then
	echo "twohost: needs root (network namespaces, veth, bridges, taps)" >&2
	exit 2
fi
a=nowhostA-$$ b=nowhostB-$$
cleanup() {
	ip netns delete "$a" 2>/dev/null
	ip netns delete "$b" 2>/dev/null
	rm -f "/tmp/twohost-$$-a.log" "/tmp/twohost-$$-b.log"
}
trap cleanup EXIT
set -e
ip netns add "$a"
ip netns add "$b"
ip link add "nowca$$" netns "$a" type veth peer name "nowcb$$" netns "$b"
ip -n "$a" addr add 192.168.250.1/30 dev "nowca$$"
ip -n "$b" addr add 192.168.250.2/30 dev "nowcb$$"
for h in "$a" "$b"; do
	ip -n "$h" link set lo up
done
ip -n "$a" link set "nowca$$" up
ip -n "$b" link set "nowcb$$" up
set +e

total=$((2 * per))
echo "twohost: $app on $total nodes, $per on each of two hosts ($a, $b)"
ip netns exec "$a" "$root/boot/cluster" --switch tap --vxlan 192.168.250.2 \
	--first 0 -n "$per" --total "$total" -a "$app" --args "$args" --timeout 150 \
	> "/tmp/twohost-$$-a.log" 2>&1 &
pa=$!
ip netns exec "$b" "$root/boot/cluster" --switch tap --vxlan 192.168.250.1 \
	--first "$per" -n "$per" --total "$total" -a "$app" --args "$args" --timeout 150 \
	> "/tmp/twohost-$$-b.log" 2>&1 &
pb=$!
wait "$pa"; ra=$?
wait "$pb"; rb=$?
sed 's/^/A /' "/tmp/twohost-$$-a.log"
sed 's/^/B /' "/tmp/twohost-$$-b.log"
rm -f "/tmp/twohost-$$-a.log" "/tmp/twohost-$$-b.log"
echo "twohost: host A status $ra, host B status $rb"
[ "$ra" = 0 ] && [ "$rb" = 0 ]
