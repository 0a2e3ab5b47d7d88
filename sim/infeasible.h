/* infeasible.h — why no layout fits a capacity: an irreducible infeasible
 * subset.
 *
 * When a fit search (exact's fit mode) proves that no plan fits under a
 * capacity, it names a set of buffers that alone cannot fit under it
 * and, when minimal, fit once any one of them is left out (MiniMalloc's
 * deletion filter; strategies/exact.h). The caller owns the record: it
 * passes one through MlKnobs.infeasible, and ml_sim_evaluate() keeps one
 * per result.
 */
#ifndef ML_INFEASIBLE_H
#define ML_INFEASIBLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/base/error.h"
#include "sim/buffers.h"

typedef struct {
  uint64_t  capacity;   /* the capacity proven infeasible */
  uint32_t *buffers;    /* owned: indexes into MlBuffers, sorted by start */
  size_t    n;          /* 0: none named */
  uint64_t  bytes;      /* their rounded sizes together */
  bool      together;   /* all live at once, in [from, to) */
  uint64_t  from, to;   /* together: where all are live; else the span of their lifetimes */
  bool      minimal;    /* false: time ran out before the filter finished
                           (infeasible, perhaps not minimal) */
} MlInfeasible;

/* Fills @out (cleared first) with the @n buffers @set (copied, then
 * sorted by start) of @bufs, proven infeasible under @capacity. 0 or
 * ML_ENOMEM (then @out is left empty). */
int  ml_infeasible_set   (MlInfeasible *out, const MlBuffers *bufs, const uint32_t *set, size_t n,
                          uint64_t capacity, bool minimal) ML_MUST_CHECK;
/* Moves @from's subset into @to (cleared first); @from is left empty. */
void ml_infeasible_move  (MlInfeasible *to, MlInfeasible *from);
void ml_infeasible_clear (MlInfeasible *s);

/* "these 7 buffers, live together in [t1, t2), need 1.06 MiB together
 * (the capacity is 1.00 MiB) and cannot fit (without any one of them they
 * do)" into @buf; with @list, then ": id 4 [0, 2) 50, id 1 [1, 3) 20"
 * (bytes), cut with " ..." when @len is short. Returns @buf. */
const char *ml_infeasible_describe (const MlInfeasible *s, const MlBuffers *bufs, bool list, char *buf, size_t len);

/* Writes @s as a JSON object: capacity, bytes, minimal, together, from,
 * to, buffers [{id, start, end, size}] (docs/report-schema.md). 0, or
 * ML_EIO when @fp has an error. */
int  ml_infeasible_write_json (const MlInfeasible *s, const MlBuffers *bufs, FILE *fp, MlError *err) ML_MUST_CHECK;

#endif
