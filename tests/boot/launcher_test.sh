#!/usr/bin/env bash
# Tests for boot/cluster, the cluster launcher, without the real kernel: it
# builds a tiny 32-bit multiboot1 test guest in a temp dir (QEMU's -kernel
# boots those too) whose command line says what to do: print lines, write a
# status to isa-debug-exit, hang, triple fault...
#
# Usage: tests/boot/launcher_test.sh        (exit 0 = all passed, 77 = skipped)
# Needs: qemu-system-x86_64, vde_switch, vde_plug, taskset, gcc with -m32, ld.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLUSTER="$ROOT/boot/cluster"
WORK=$(mktemp -d /tmp/launcher-test.XXXXXX)
TAG="lt$$x$RANDOM"      # on every kernel command line: finds our QEMUs only
trap 'rm -rf "$WORK"' EXIT

for tool in qemu-system-x86_64 vde_switch vde_plug taskset gcc ld; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done

# --- the test guest ---------------------------------------------------------
# Words: exit=V  hang  triple  spam=K  partial  crlf  sleep=K  @I:WORD (node I only)
cat >"$WORK/guest.c" <<'EOF'
typedef unsigned int u32;
__attribute__((section(".mbhdr"), used, aligned(4)))
static const u32 mbhdr[3] = {0x1BADB002, 0, -(0x1BADB002)};
static inline void outb(unsigned short p, unsigned char v){__asm__ volatile("outb %0,%1"::"a"(v),"Nd"(p));}
static inline unsigned char inb(unsigned short p){unsigned char v;__asm__ volatile("inb %1,%0":"=a"(v):"Nd"(p));return v;}
static int crlf; static u32 node;
static void putc_(char c){ if(c=='\n'&&crlf) putc_('\r'); while(!(inb(0x3fd)&0x20)); outb(0x3f8,c);}
static void puts_(const char*s){while(*s)putc_(*s++);}
static void putn(u32 n){char b[12];int i=0;do b[i++]='0'+n%10; while(n/=10); while(i) putc_(b[--i]);}
static int pre(const char*s,const char*p){while(*p) if(*s++!=*p++) return 0; return 1;}
static u32 num(const char*s){u32 n=0;while(*s>='0'&&*s<='9') n=n*10+(*s++-'0');return n;}
static const char *next(const char *s){ while(*s && *s!=' ') s++; while(*s==' ') s++; return *s? s:0; }
static void act(const char *w){
  if(pre(w,"@")){ if(num(w+1)!=node) return; while(*w!=':') w++; w++; }
  if(pre(w,"crlf")) crlf=1;
  else if(pre(w,"sleep=")){ volatile u32 i; u32 k=num(w+6)*10000000u; for(i=0;i<k;i++); }
  else if(pre(w,"spam=")){ u32 k=num(w+5); for(u32 i=0;i<k;i++){ puts_("line "); putn(i); puts_(" of node "); putn(node); putc_('\n'); } }
  else if(pre(w,"partial")) puts_("partial-no-newline");
  else if(pre(w,"hang")) for(;;) __asm__ volatile("cli; hlt");
  else if(pre(w,"triple")){ static unsigned short idt[3]; __asm__ volatile("lidt %0; int3"::"m"(idt)); }
  else if(pre(w,"exit=")){ while(!(inb(0x3fd)&0x40)); outb(0xf4,(unsigned char)num(w+5)); for(;;) __asm__ volatile("cli; hlt"); }
}
void kmain(u32 magic, u32 *mbi){
  (void)magic;
  const char *cmd = (mbi[0] & 4) ? (const char*)mbi[4] : "";
  for(const char *w=cmd; w; w=next(w)) if(pre(w,"node=")) node=num(w+5);
  puts_("guest up node="); putn(node); putc_('\n');
  for(const char *w=cmd; w; w=next(w)) act(w);
  puts_("guest: end of commands\n");
  for(;;) __asm__ volatile("cli; hlt");
}
EOF
cat >"$WORK/start.S" <<'EOF'
.text
.globl _start
_start: mov $stack_top, %esp; push %ebx; push %eax; call kmain
1: hlt; jmp 1b
.bss
.space 8192
stack_top:
.section .note.GNU-stack,"",@progbits
EOF
cat >"$WORK/link.ld" <<'EOF'
ENTRY(_start)
SECTIONS { . = 0x100000; .text : { *(.mbhdr) *(.text*) } .rodata : { *(.rodata*) }
           .data : { *(.data*) } .bss : { *(.bss*) *(COMMON) } }
EOF
G="$WORK/guest.elf"
if ! { gcc -m32 -ffreestanding -fno-pic -fno-stack-protector -O1 -c "$WORK/guest.c" -o "$WORK/guest.o" &&
       gcc -m32 -c "$WORK/start.S" -o "$WORK/start.o" &&
       ld -m elf_i386 -T "$WORK/link.ld" --no-warn-rwx-segments -o "$G" "$WORK/start.o" "$WORK/guest.o"; } \
       >"$WORK/build.log" 2>&1; then
    cat "$WORK/build.log"; echo "SKIP: cannot build the 32-bit test guest"; exit 77
fi

# --- helpers -------------------------------------------------------------------
PASS=0 FAIL=0
ok()   { PASS=$((PASS + 1)); echo "ok   $1"; }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL $1"; sed 's/^/     | /' "$WORK/out" "$WORK/err" 2>/dev/null | tail -20; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }   # check NAME CONDITION
# run ARGS...: launcher with the test guest; sets RC, $WORK/out, $WORK/err
run() { "$CLUSTER" --kernel "$G" "$@" >"$WORK/out" 2>"$WORK/err"; RC=$?; }
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${st#Z}" = "$st" ]; }  # not a zombie
ours() { pgrep -f "$TAG" | grep -vx "$$" | wc -l; }      # our QEMUs still alive
wait_for_nodes() {   # wait_for_nodes N: until N of our QEMUs run (max 10s)
    for _ in $(seq 100); do [ "$(pgrep -f "qemu-system.*$TAG" | wc -l)" -ge "$1" ] && return 0; sleep 0.1; done
    return 1
}

# --- options and errors ---------------------------------------------------------
"$CLUSTER" --help >"$WORK/out" 2>&1; RC=$?
check "--help exits 0 and documents every option" '[ $RC = 0 ] && for o in --nodes --app --args --nic \
    --kernel --mem --accel --cpus --cpu --switch --timeout --grace --log --gdb --qemu-arg --key \
    --hostile --dry-run --quiet; do
    grep -q -- "$o" "$WORK/out" || exit 1; done'

"$CLUSTER" -n 3 -a ping --args "x=1  y=2" --nic e1000 --kernel /nonexistent/now.elf --dry-run -- z=3 \
    >"$WORK/out" 2>"$WORK/err"; RC=$?
check "dry run: exit 0 even without a kernel" '[ $RC = 0 ] && grep -q "run make first" "$WORK/err"'
# mitigation=off where the QEMU has the switch (up to 9.0), nothing after it.
MIT=$(qemu-system-x86_64 -device e1000,help 2>/dev/null | grep -q "mitigation=" && echo ",mitigation=off")
# frame=7872: the jumbo switch's frame (boot/tools/qemufacts.py), before the words given.
check "dry run: command line, MAC, e1000 mitigation off (where QEMU has the switch)" \
    'grep -q "node=2 nodes=3 app=ping frame=7872 x=1 y=2 z=3" "$WORK/out" &&
     grep -Eq "e1000,netdev=net0,mac=02:4e:4f:57:00:02$MIT( |$)" "$WORK/out" &&
     [ "$(grep -c "^[^#].*qemu-system-x86_64" "$WORK/out")" = 3 ]'
"$CLUSTER" -n 2 --node-args 1:frame=1514 --dry-run >"$WORK/out" 2>"$WORK/err"
check "dry run: a node's own frame= wins over the jumbo switch's; one node, or shm, gets none" \
    'grep -q "node=0 nodes=2 frame=7872'"'"'" "$WORK/out" &&
     grep -q "node=1 nodes=2 frame=1514'"'"'" "$WORK/out" &&
     ! "$CLUSTER" -n 1 --dry-run | grep -q "frame=" &&
     ! "$CLUSTER" -n 2 --nic shm --dry-run | grep -q "frame=" &&
     ! "$CLUSTER" -n 2 --switch vde --dry-run | grep -q "frame="'
"$CLUSTER" -n 2 --key short --dry-run >"$WORK/out" 2>"$WORK/err"; RC=$?
check "--key: too short is refused" '[ $RC = 2 ] && grep -q "16 to 128" "$WORK/err"'
"$CLUSTER" -n 2 --key random --hostile="--rate 50" --dry-run >"$WORK/out" 2>"$WORK/err"; RC=$?
check "--key random and --hostile: a fresh key on every node, the station keyed, the switch a hub" \
    '[ $RC = 0 ] && [ "$(grep -o "key=[0-9a-f]\{32\}" "$WORK/out" | sort -u | wc -l)" = 1 ] &&
     [ "$(grep -c "key=[0-9a-f]\{32\}" "$WORK/out")" = 2 ] &&
     grep -q "boot/tools/hostile --stop-on-eof --vde .*/switch --rate 50 --keyed" "$WORK/out" &&
     grep -q "vde_switch .* -x" "$WORK/out"'
"$CLUSTER" -n 2 --nic shm --hostile --dry-run >"$WORK/out" 2>"$WORK/err"; RC=$?
check "--hostile needs an Ethernet switch" '[ $RC = 2 ] && grep -q "not with --nic shm" "$WORK/err"'
"$ROOT/boot/tools/hostile" --help >"$WORK/out" 2>&1; RC=$?
check "boot/tools/hostile --help documents its options" '[ $RC = 0 ] && for o in --vde --iface --rate \
    --duration --kinds --keyed --seed; do grep -q -- "$o" "$WORK/out" || exit 1; done'
"$ROOT/boot/tools/hostile" --vde /nonexistent --kinds junk,teleport >"$WORK/out" 2>&1; RC=$?
check "boot/tools/hostile: an unknown kind is named" '[ $RC = 2 ] && grep -q "teleport" "$WORK/out"'
"$CLUSTER" -n 300 --dry-run >"$WORK/out" 2>"$WORK/err"; RC=$?
check "-n 300 is rejected" '[ $RC = 2 ]'
"$CLUSTER" -n 2 --gdb --dry-run >"$WORK/out" 2>"$WORK/err"; RC=$?
check "--gdb needs -n 1" '[ $RC = 2 ] && grep -q -- "-n 1" "$WORK/err"'
"$CLUSTER" -n 1 --kernel /nonexistent/now.elf >"$WORK/out" 2>"$WORK/err"; RC=$?
check "missing kernel: clear error" '[ $RC = 2 ] && grep -q "run make first" "$WORK/err"'
mkdir -p "$WORK/bin" && ln -sf "$(command -v qemu-system-x86_64)" "$WORK/bin/"
PY=$(python3 -c 'import sys; print(sys.executable)')
PATH="$WORK/bin" "$PY" "$CLUSTER" -n 1 --kernel "$G" >"$WORK/out" 2>"$WORK/err"; RC=$?
check "missing switch: names the package" '[ $RC = 2 ] && grep -q "vdeplug" "$WORK/err"'

# --- exit statuses and console ----------------------------------------------------
run -n 3 -- "$TAG" spam=3 @0:exit=0 @1:exit=3 @2:crlf @2:partial @2:exit=5
check "worst status wins (0, 3, 5 -> 5)" '[ $RC = 5 ] && grep -q "3 nodes, status 5$" "$WORK/err"'
check "failed nodes are listed" 'grep -q "n1: status 3" "$WORK/err" && grep -q "n2: status 5" "$WORK/err" &&
    ! grep -q "n0: status" "$WORK/err"'
check "console lines are prefixed, whole, in order" \
    '[ "$(grep -c "^\[n[012]\] line [012] of node [012]$" "$WORK/out")" = 9 ] &&
     [ "$(grep "^\[n1\]" "$WORK/out" | sed -n 2,4p | tr -d "\n")" = "[n1] line 0 of node 1[n1] line 1 of node 1[n1] line 2 of node 1" ] &&
     [ "$(grep -v "^\[n[012]\] " "$WORK/out" | wc -l)" = 0 ]'
check "carriage returns stripped" '! grep -q $'"'\r'"' "$WORK/out"'
check "partial last line printed" 'grep -qx "\[n2\] partial-no-newline" "$WORK/out"'

run -n 2 -- "$TAG" @0:exit=0 @1:triple
check "triple fault: 255, reason given" '[ $RC = 255 ] && grep -q "n1: status 255: no exit status" "$WORK/err"'
run -n 1 --qemu-arg "-device no-such-device" -- exit=0
check "QEMU error (exit 1) is a failure, not status 0" '[ $RC = 255 ] && grep -q "qemu error" "$WORK/err"'
run -n 2 --nic e1000e -- exit=0
check "e1000e, all succeed: 0" '[ $RC = 0 ] && grep -q "2 nodes, status 0$" "$WORK/err"'

# --- timeout and grace ---------------------------------------------------------------
start=$(date +%s)
run -n 4 --timeout 2 -- "$TAG" @0:exit=0 @2:exit=0 hang
check "timeout: 124, names the nodes still running" \
    '[ $RC = 124 ] && grep -q "cluster: timeout after 2s; still running: n1 n3$" "$WORK/err" &&
     grep -q "(timeout)" "$WORK/err" && [ $(($(date +%s) - start)) -lt 8 ] && [ "$(ours)" = 0 ]'
start=$(date +%s)
run -n 3 --grace 1 --timeout 60 -- "$TAG" @1:exit=7 hang
check "grace: peers of a failed node are killed and fail" \
    '[ $RC = 255 ] && grep -q "n1: status 7" "$WORK/err" && grep -q "n0: status 255: killed" "$WORK/err" &&
     [ $(($(date +%s) - start)) -lt 10 ] && [ "$(ours)" = 0 ]'

# --- logs, quiet, CPU pinning -----------------------------------------------------------
run -n 2 -q --log "$WORK/logs" -- crlf spam=1 exit=0
check "--quiet prints no console, --log keeps the raw console" \
    '[ $RC = 0 ] && [ ! -s "$WORK/out" ] && grep -q $'"'^line 0 of node 1\r$'"' "$WORK/logs/n1.log"'

"$CLUSTER" --kernel "$G" -n 2 --cpus one --cpu 0 --timeout 20 -- "$TAG" hang >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_for_nodes 2; sleep 0.3
masks=$(for p in $(pgrep -f "qemu-system.*$TAG") $(pgrep -P "$pid" -x 'vde_switch|vde_plug'); do
    taskset -pc "$p" | sed 's/.*: //'; done | sort | uniq -c | tr -s ' ' | tr '\n' ' ')
kill -INT "$pid"; wait "$pid"; RC=$?
check "--cpus one pins the switch and QEMUs to CPU 0" '[ "$masks" = " 3 0 " ]'

# --- signals: nothing may survive ---------------------------------------------------------
for sig in INT TERM; do
    "$CLUSTER" --kernel "$G" -n 3 --timeout 0 -- "$TAG" hang >"$WORK/out" 2>"$WORK/err" &
    pid=$!
    wait_for_nodes 3
    sw=$(pgrep -P "$pid" -x 'vde_switch|vde_plug')
    tmp=$(pgrep -af "qemu-system.*$TAG" | grep -o "sock=[^ ]*" | head -1 | sed 's/sock=//; s,/switch$,,')
    kill -"$sig" "$pid"; wait "$pid"; RC=$?
    want=$([ $sig = INT ] && echo 130 || echo 143)
    check "SIG$sig: exit $want, no QEMU, switch or temp dir left" \
        '[ $RC = $want ] && [ "$(ours)" = 0 ] && [ -n "$sw" ] && ! alive "$sw" &&
         [ -n "$tmp" ] && [ ! -e "$tmp" ]'
done

"$CLUSTER" --kernel "$G" -n 2 --timeout 0 -- "$TAG" hang >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_for_nodes 2
sockdir=$(pgrep -af "qemu-system.*$TAG" | grep -o "sock=[^ ]*" | head -1 | sed 's/sock=//; s,/switch$,,')
sw=$(pgrep -P "$pid" -x 'vde_switch|vde_plug')
kill -KILL "$pid"; wait "$pid" 2>/dev/null
sleep 0.5
check "SIGKILL of the launcher: QEMUs (PDEATHSIG) and switch (stdin EOF) die too" \
    '[ "$(ours)" = 0 ] && ! alive "$sw"'
[ -n "$sockdir" ] && rm -rf "$sockdir"   # nobody is left to remove it

# --- optional: tap switch (root), kvm --------------------------------------------------------
# The steal watch, on a made-up /proc/stat: 0 ms says nothing; 30 ticks on
# cpu1 in one piece and 10 on cpu0 are 400 ms, the longest piece 300 ms.
steal=$(python3 - "$CLUSTER" "$WORK/stat" <<'PY'
import sys, time
from importlib.machinery import SourceFileLoader
cl = SourceFileLoader("cluster", sys.argv[1]).load_module()
def stat(a, b):
    with open(sys.argv[2], "w") as f:
        f.write(f"cpu  1 2 3 4 5 6 7 {a + b} 0 0\ncpu0 1 2 3 4 5 6 7 {a} 0 0\ncpu1 1 2 3 4 5 6 7 {b} 0 0\nintr 1\n")
cl.StealWatch.STAT = sys.argv[2]
cl.StealWatch.PERIOD = 0.01
stat(5, 7)
w = cl.StealWatch()
time.sleep(0.1)
print("none:", w.report())
stat(5, 7)
w = cl.StealWatch()
w.hz = 100
stat(5, 37); time.sleep(0.1)
stat(15, 37); time.sleep(0.1)
print("some:", w.report())
PY
)
check "steal watch: nothing taken says nothing; taken time and its longest piece said" \
    'grep -qx "none: None" <<<"$steal" && grep -q "^some: the hypervisor .* took 400 ms .*longest piece about 300 ms" <<<"$steal"'

if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && ip netns list >/dev/null 2>&1; then
    "$CLUSTER" --kernel "$G" -n 3 --switch tap --timeout 3 -- "$TAG" hang >"$WORK/out" 2>"$WORK/err" &
    pid=$!
    wait_for_nodes 3; sleep 0.5
    links=$(ip -n "now-$pid" -o link show 2>&1)
    addrs=$(ip -n "now-$pid" -o addr show 2>&1 | grep -v " lo " | grep -c inet)
    wait "$pid"; RC=$?
    check "tap: bridge + 3 taps in namespace now-<pid>, no addresses, removed at exit" \
        '[ $RC = 124 ] && [ "$(grep -c "master br0" <<<"$links")" = 3 ] && [ "$addrs" = 0 ] &&
         ! ip netns list | grep -q "now-$pid" && [ "$(ours)" = 0 ]'
else
    echo "skip tap switch (needs root and ip netns)"
fi
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
    run -n 2 --accel kvm -- "$TAG" @0:exit=0 @1:exit=2
    # /dev/kvm can exist on a host whose KVM QEMU cannot use (nested
    # virtualisation refusing an MSR, say): that is the machine, not the launcher.
    kvm_broken=$(grep -m1 -E "qemu-system-x86_64: (error: failed to set MSR|.*kvm.*(Assertion|failed|error))" \
                 "$WORK/out" "$WORK/err" 2>/dev/null)
    if [ $RC != 2 ] && [ -n "$kvm_broken" ]; then
        echo "skip kvm (QEMU cannot use this host's KVM: ${kvm_broken#*:})"
    else
        check "kvm: exit codes" '[ $RC = 2 ]'
    fi
else
    echo "skip kvm (no /dev/kvm access)"
fi

echo "launcher tests: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
