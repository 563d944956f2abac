/*
 * This boot's incarnation: a 64-bit number drawn once per boot that no
 * other node can guess, so that a node that reboots is told apart from
 * the one that was there before (the fabric binds it to the node's id and
 * MAC at discovery).  Never 0.
 *
 * Where CPUID says the CPU has RDSEED it is drawn from it, else from
 * RDRAND, retrying as Intel's DRNG guide says (RDRAND: up to 10 times;
 * RDSEED: with a pause between tries, for longer).  A value of 0, of all
 * ones (the RDRAND fault some CPUs have, reporting success) or equal to
 * the value drawn before is refused as a failure.  Without either, or if
 * both keep failing, it is gathered from the jitter of the TSC across
 * instructions that exit to the hypervisor or firmware (CPUID, port I/O),
 * mixed with the TSC, the node's id and the boot's TSC deltas.
 */
#ifndef KERNEL_INCARNATION_H
#define KERNEL_INCARNATION_H

#include <stdint.h>

/* This boot's incarnation (drawn at the first call). */
uint64_t incarnation(void);

/* Where it came from: "rdseed", "rdrand" or "tsc jitter". */
const char *incarnation_source(void);

/*
 * Is v, drawn from RDSEED or RDRAND right after before, a value a working
 * DRNG gives?  Not 0, not all ones (the RDRAND fault of some CPUs, which
 * report success), not a repeat.  Pure logic.
 */
int incarnation_value_ok(uint64_t v, uint64_t before);

/* Hardware values refused so far (0, all ones, a repeat). */
int incarnation_refused(void);

/*
 * A random 64-bit number, never 0: SipHash-2-4 of a counter under a key
 * drawn at the first call from the same sources (the fabric's handshake
 * challenges, net/fabric/member.h).  Interrupts may be on or off.
 */
uint64_t random64(void);

/*
 * The jitter fallback's mixer: fold one 64-bit sample into a state (pure
 * logic; a SipHash-like round, so that every input bit reaches every
 * output bit).
 */
uint64_t incarnation_fold(uint64_t state, uint64_t sample);

#endif
