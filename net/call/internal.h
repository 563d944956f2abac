/*
 * What the files of net/call share, for them only: the facility's
 * counters (call.c) and the name service's two halves that the
 * facility's protocol handler (service.c) hands lookups and their
 * answers to (names.c).
 */
#ifndef NET_CALL_INTERNAL_H
#define NET_CALL_INTERNAL_H

#include <stdint.h>

#include "net/call/call.h"

extern struct call_counters call_ctr;

/* names.c: a lookup to answer; an answer to the call c that asked.  (irq) */
void names_serve(int src, const struct call_msg *m, const uint8_t *body);
void names_answered(struct call *c, const struct call_msg *m, const uint8_t *body);

#endif
