/*
 * The DART operation logic (hybrid deposit 3.4, Fig. 2; DART 6.2, 6.5):
 * one cell of a connection, checked completely, then committed.  Used by
 * net/deposit/dart.c only; pure.
 */
#ifndef NET_DART_OP_H
#define NET_DART_OP_H

#include "net/deposit/dart.h"

/*
 * Apply cell (whose header parsed, with payload type pt) to connection
 * vci, which is open: a control cell, or an AAL5 cell of the block in
 * progress.  Return 0 (committed, or consumed: a cell of a skipped
 * block), -EBUSY (it needs room for a reply: nothing changed) or -EFAULT
 * (nothing changed; e->cls, e->detail and e->skip_block say why).
 */
int dart_exec(struct dart *d, int vci, const struct cell *cell, uint8_t pt,
			const struct dart_sink *s, struct dart_exc *e);

/*
 * count AAL5 cells of the block in progress on vci (open), none the
 * block's last (PT 0): first, then count - 1 cells CELL_SIZE bytes apart
 * at rest: as count calls of dart_exec, their CRC taken together on the
 * bytes deposited (each payload is read once).  0, or -1 if one of them
 * would fault (nothing changed: they go one by one, and the fault is that
 * cell's).
 */
int dart_exec_data_run(struct dart *d, int vci, const struct cell *first, const uint8_t *rest, size_t count);

#endif
