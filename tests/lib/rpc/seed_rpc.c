/*
 * Seeds for fuzz_rpc: a binding and calls in turn (one frame, several
 * frames, raw frames with a CRC), a repeated call, a frame left out and a
 * timeout, a wrong CRC, an unbinding and another client's binding, a
 * third node writing into a claimed stack, a call number out of turn,
 * calls of two bindings on both stacks with releases, a wrong secret.
 * Usage: seed_rpc <dir>
 */
#include <stdint.h>
#include <string.h>

#include "tests/host/seed_common.h"

/* Operations as fuzz_rpc reads them; node k is 1..3. */
static void bind(int k, int fl) { b((k - 1) << 3); b(fl); }
static void unbind(int k) { b(1 | (k - 1) << 3); b(0); }
static void release(int k, int st) { b(6 | (k - 1) << 3 | st << 6); }
static void call_on(int st, int k, int mode, unsigned len, int fl)
{
	b(2 | (k - 1) << 3 | st << 6);
	b(mode);
	b((int)(len & 0xff));
	b((int)(len >> 8));
	b(fl);
	b(0);
}
static void call(int k, int mode, unsigned len, int fl, int drop)
{
	b(2 | (k - 1) << 3);
	b(mode);
	b((int)(len & 0xff));
	b((int)(len >> 8));
	b(fl);
	b(drop);
}
static void timeout(void) { b(3 | 8); }

int main(int argc, char **argv)
{
	int bad = 0, i = 0;

	if (argc != 2)
		return 2;
	bind(1, 0); call(1, 0, 16, 0, 0); call(1, 0, 3000, 0, 0); call(1, 1, 16, 0, 0);
	bad |= save(argv[1], i++);
	bind(1, 1); call(1, 0, 100, 1 | 2, 0); call(1, 0, 5000, 1 | 2 | 32, 2); timeout(); timeout();
	call(1, 0, 5000, 1 | 2, 0);
	bad |= save(argv[1], i++);
	bind(2, 0); call(2, 0, 64, 2 | 4, 0); call(2, 1, 64, 2, 0); call(3, 0, 8, 0, 0); call(2, 2, 8, 0, 0);
	bad |= save(argv[1], i++);
	b(0x80 | 2 | 2 << 3); b(0); b(8); b(0); b(0); b(0);	/* node 3's call on the free stack, no step */
	bind(1, 0); call(1, 0, 8, 0, 0);
	bad |= save(argv[1], i++);
	bind(1, 0); call(1, 0, 8, 0, 0); unbind(1); bind(3, 0); call(3, 0, 8, 0, 0); call(1, 0, 8, 0, 0);
	bad |= save(argv[1], i++);
	bind(1, 2); bind(1, 4); bind(2, 8); call(1, 0, 20000, 8, 0); call(1, 0, 1376, 64, 0);
	call(1, 0, 1377, 16, 0);
	bad |= save(argv[1], i++);
	bind(1, 0); release(1, 0); bind(2, 0); release(2, 0);
	call_on(0, 1, 0, 16, 0); call_on(1, 2, 0, 16, 0); call_on(1, 1, 0, 3000, 0);
	release(1, 0); call_on(0, 2, 0, 16, 0); release(2, 0); call_on(0, 1, 1, 16, 0);
	call_on(0, 1, 0, 16, 128); release(1, 0); release(2, 1); call_on(1, 1, 1, 16, 0);
	bad |= save(argv[1], i++);
	return bad;
}
