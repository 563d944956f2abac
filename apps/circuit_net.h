/*
 * Gate-level netlists for the circuit simulator (remote-memory-atm paper,
 * section 3.2.2): gate types, their delays and logic, the bundled circuits,
 * input vectors, the arithmetic each circuit computes, and the placement of
 * gates on nodes.  Pure logic (no kernel headers): the app and the host
 * unit tests build this file as it is.
 *
 * A netlist is an array of gates in topological order (every gate's inputs
 * come from lower-numbered gates).  A gate has at most two input pins and
 * one output, which fans out to pins of later gates.  Primary inputs are
 * INPUT gates: a buffer whose pin 0 is driven by the stimulus (the input
 * vectors).  Primary outputs are PROBE gates at the end of the array: a
 * zero-delay sink that records each change of its one input.  Probes are
 * not counted as gates and are not placed on their own: each sits on the
 * node of the gate that drives it.
 *
 * Time is in abstract ticks.  A gate whose inputs change at t schedules
 * its new output at t + delay(type) (transport delay); every type that
 * drives other gates has delay >= 1, which is the lookahead that makes the
 * conservative simulation progress.
 */
#ifndef APPS_CIRCUIT_NET_H
#define APPS_CIRCUIT_NET_H

#include <stdint.h>

enum gate_type {
	G_INPUT,	/* primary input: buffer of the stimulus on pin 0 */
	G_BUF,
	G_NOT,
	G_AND,
	G_OR,
	G_XOR,
	G_PROBE,	/* primary output: records changes of pin 0 */
	G_NTYPES
};

#define CKT_MAX_FANIN 2
#define CKT_MAX_NODES 64
#define CKT_MAX_GATES (1u << 24)	/* gate ids fit the event code (circuit_sim.h) */

struct gate {
	uint8_t type;
	uint8_t nin;			/* pins used: 1 or 2 (INPUT: 1, the stimulus) */
	uint32_t in[CKT_MAX_FANIN];	/* driving gate of each pin (INPUT: unused) */
	uint32_t fo, nfo;		/* fanout entries [fo, fo + nfo) of netlist.fanout */
};

struct fanout {
	uint32_t gate;
	uint32_t pin;
};

enum ckt_kind { CKT_ADDER, CKT_MUL };

struct netlist {
	const char *name;
	enum ckt_kind kind;
	uint32_t width;			/* operand bits */
	uint32_t ngates;		/* every gate, probes included */
	uint32_t nplaced;		/* gates [0, nplaced) are placed; probes follow */
	struct gate *g;
	struct fanout *fanout;
	uint32_t ninputs, noutputs;
	uint32_t *input;		/* INPUT gates: a bits, b bits (low first), then cin */
	uint32_t *output;		/* PROBE gates, result bits low first */
	uint32_t count[G_NTYPES];	/* gates of each type */
	uint32_t crit;			/* longest stimulus-to-probe delay */
	uint32_t cap;			/* builder: gates allocated */
};

/* The bundled circuits, by name. */
struct ckt_info {
	const char *name;
	enum ckt_kind kind;
	uint32_t width;
	const char *what;
};
extern const struct ckt_info ckt_bundled[];	/* ended by { NULL } */

/* Delay of a gate type in ticks (PROBE: 0). */
uint32_t gate_delay(unsigned type);

/* Output of a gate type for input values a (pin 0) and b (pin 1). */
static inline unsigned gate_eval(unsigned type, unsigned a, unsigned b)
{
	switch (type) {
	case G_NOT: return !a;
	case G_AND: return a & b;
	case G_OR: return a | b;
	case G_XOR: return a ^ b;
	default: return a;	/* INPUT, BUF, PROBE */
	}
}

const char *gate_name(unsigned type);

/*
 * Build the bundled circuit `name` (adder32, mul16, mul32) into n.
 * Return 0, -ENOENT (no such circuit) or -ENOMEM.
 */
int ckt_build(struct netlist *n, const char *name);
void ckt_free(struct netlist *n);

/* Gates a user counts: every gate but the probes. */
static inline uint32_t ckt_gates(const struct netlist *n) { return n->nplaced; }

/*
 * Check the structure: topological order, pins in range, fanout lists
 * the exact inverse of the input pins, probes last and driven.  0 or -1.
 */
int ckt_check(const struct netlist *n);

/* One input vector: the operands (and the adder's carry in). */
struct ckt_vec {
	uint64_t a, b;
	uint32_t cin;
};

/*
 * Vectors for a circuit: the first two are fixed worst cases (the adder's
 * full carry ripple, the multiplier's all-ones), the rest come from a
 * generator seeded with seed.
 */
void ckt_vectors(const struct netlist *n, uint64_t seed, struct ckt_vec *v, uint32_t nvec);

/* Value of input i (index into n->input) under vector v. */
unsigned ckt_input_bit(const struct netlist *n, const struct ckt_vec *v, uint32_t i);

/* What the outputs must read once settled: a+b+cin, or a*b (bit j = output j). */
uint64_t ckt_expected(const struct netlist *n, const struct ckt_vec *v);

/* Ticks between vectors: the critical path plus one, so each vector settles. */
static inline uint32_t ckt_period(const struct netlist *n) { return n->crit + 1; }

/* The xorshift-style generator the vectors and random placement use. */
uint64_t ckt_rand(uint64_t *state);

enum ckt_place { PLACE_LINEAR, PLACE_RANDOM };

/*
 * Place gates on nodes (paper 3.2.2): linear gives the first N/P of the
 * N placed gates to node 0, the next N/P to node 1, and so on; random
 * draws each gate's node from the generator seeded with seed.  Probes go
 * with their driver.  owner has n->ngates entries.
 */
void ckt_place(const struct netlist *n, int nodes, enum ckt_place how, uint64_t seed, uint8_t *owner);

#endif
