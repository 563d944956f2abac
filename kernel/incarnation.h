/*
 * This boot's incarnation: a 64-bit number drawn once per boot that no
 * other node can guess, so that a node that reboots is told apart from
 * the one that was there before (the fabric binds it to the node's id and
 * MAC at discovery).  Never 0.
 *
 * Where CPUID says the CPU has RDSEED it is drawn from it, else from
 * RDRAND, retrying as Intel's DRNG guide says (RDRAND: up to 10 times;
 * RDSEED: with a pause between tries, for longer).  Without either, or if
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
 * The jitter fallback's mixer: fold one 64-bit sample into a state (pure
 * logic; a SipHash-like round, so that every input bit reaches every
 * output bit).
 */
uint64_t incarnation_fold(uint64_t state, uint64_t sample);

#endif
