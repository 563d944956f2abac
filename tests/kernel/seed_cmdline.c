/*
 * Seeds for fuzz_cmdline: lines the kernel accepts (the launcher's own,
 * an app's keys, fault=, extreme integers) and near misses (a bad key
 * character, a key given twice, an empty value, a key and a value one
 * character too long, one argument too many, numbers out of range or
 * half-numbers, a node outside the cluster), each with every error-buffer
 * size.
 * Usage: seed_cmdline <dir>
 */
#include <string.h>

#include "kernel/cmdline.h"
#include "tests/host/seed_common.h"

static const char *const lines[] = {
	"node=0 nodes=2 app=calc iters=10",
	"node=1 nodes=4 app=hello peer_timeout_ms=500 seed=7",
	"nodes=2 app=calc delta=-5 verbose=on name=x fault=drop:0.05,dup:0.01,reorder:.5,corrupt:1",
	"any=-9223372036854775808 neg=-0x10 on=false",
	"any=9223372036854775807 neg=-01",
	"any=9223372036854775808",
	"any=0x any=1",
	"Node=1",
	"node= nodes=2",
	"=1",
	"nodes",
	"app=nosuch",
	"node=3 nodes=3",
	"node=0 nodes=1 app=calc",
	"fault=drop:1.0000000001",
	"fault=drop:0.1,",
	"fault=jam:0.1",
	"\tnode=0\r\nnodes=1  ",
	"abcdefghijklmnopqrstuvwxyz01234=1",
	"abcdefghijklmnopqrstuvwxyz012345=1",
	"verbose=maybe iters=0 delta=6 peer_timeout_ms=99",
	"a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1 i=1 j=1 k=1 l=1 m=1 n=1 o=1 p=1 "
	"q=1 r=1 s=1 t=1 u=1 v=1 w=1 x=1 y=1 z=1 0=1 1=1 2=1 3=1 4=1 5=1 6=1",
};

int main(int argc, char **argv)
{
	char val[CMDLINE_VAL_MAX + 8];
	int bad = 0, n = 0;

	if (argc != 2)
		return 2;
	for (size_t i = 0; i < sizeof lines / sizeof lines[0] + 2; i++) {
		const char *l = lines[i % (sizeof lines / sizeof lines[0])];
		if (i >= sizeof lines / sizeof lines[0]) {	/* values of the longest length and one more */
			size_t vl = CMDLINE_VAL_MAX - 1 + (i - sizeof lines / sizeof lines[0]);
			memcpy(val, "name=", 5);
			memset(val + 5, 'v', vl);
			val[5 + vl] = '\0';
			l = val;
		}
		for (unsigned flag = 0; flag < 4; flag++) {
			b((int)flag);
			put(l, strlen(l));
			bad |= save(argv[1], n++);
		}
	}
	return bad;
}
