#!/bin/sh
# Generate the kernel symbol table (.ksyms) from a first-pass link.
# Usage: linker/mksyms.sh <elf> > ksyms.S
# Output: .quad count; count x (.quad addr, .long name_offset, .long 0); names.
set -e
nm -n --defined-only "$1" | awk '
BEGIN { n = 0 }
# Functions only: not local labels, not section-boundary markers, not the
# "<file>.c.<hash>" anchors LTO leaves inside functions.
$2 ~ /^[tTwW]$/ && $3 !~ /^\.L/ && $3 !~ /^__.*_(start|end)$/ && $3 !~ /\.c\.[0-9a-f]+$/ {
	if ($1 == last) next
	last = $1
	addr[n] = $1; name[n] = $3; n++
}
END {
	print "\t.section .ksyms, \"a\""
	print "\t.balign 8"
	printf "\t.quad %d\n", n
	off = 0
	for (i = 0; i < n; i++) {
		printf "\t.quad 0x%s\n\t.long %d\n\t.long 0\n", addr[i], off
		off += length(name[i]) + 1
	}
	for (i = 0; i < n; i++)
		printf "\t.asciz \"%s\"\n", name[i]
}'
