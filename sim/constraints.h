/* constraints.h — the graph-compiler constraints every offline planner
 * honours (after Ascend GE's memory assigners; docs/formats.md,
 * "Constraints").
 *
 *   zero-copy   buffers the user provides (model inputs and outputs): not
 *               in the arena; each is its own segment, alive over its
 *               lifetime, rounded to the zero-copy alignment
 *   fixed       (ML_BUF_PINNED) at offset addr of the arena for the whole
 *               run; the planned buffers go above the highest fixed byte
 *   no_reuse    no other buffer shares its bytes over the whole run: it
 *               is planned as if alive from the first tick to the last
 *   contiguous  a group placed as one block, members back to back in order
 *   max_block   the arena cut into blocks (segments) of at most N bytes;
 *               buffers that would straddle a block border move to extra
 *               blocks (lowest fit among them); a buffer over N is an error
 *
 * One pre/post pass around any offline planner (ml_sim_run calls it when
 * the buffers carry a constraint): it builds a reduced instance (no
 * zero-copy or fixed buffers, one buffer per group, no_reuse lifetimes
 * widened), runs the planner on it, and maps the plan back. The planner's
 * search never sees the constraints, so every planner honours them the
 * same way; ml_check_plan() verifies them on any plan.
 */
#ifndef ML_CONSTRAINTS_H
#define ML_CONSTRAINTS_H

#include "sim/strategy.h"

/* True when @bufs has zero-copy, fixed, no_reuse or grouped buffers or a
 * max_block. */
bool ml_constraints_present (const MlBuffers *bufs);

/* Runs offline strategy @s over @bufs under the constraints, into @plan
 * (of bufs->n buffers, no segments yet). */
int  ml_constraints_plan (const MlBuffers *bufs, const MlStrategy *s, const MlKnobs *knobs, MlPlan *plan,
                          MlError *err);

#endif
