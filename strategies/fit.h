/* fit.h — the online fit family: first-fit, best-fit, next-fit.
 *
 * Algorithm: one growable arena. Free holes are kept in a B+ tree keyed
 * by offset (sim/base/btree.h, 32 wide) whose inner nodes carry the
 * largest hole under each child; the free tail above the highest live
 * byte is kept apart.
 *   first-fit  the lowest hole of at least n bytes: one descent guided by
 *              the children's largest holes.
 *   best-fit   the smallest hole of at least n bytes (lowest offset among
 *              equals), from a TLSF-style size index: bins of sizes (32
 *              per power of two), each in (size, offset) order, behind a
 *              bitmap of the bins that are not empty.
 *   next-fit   the first hole at or after the end of the previous
 *              placement, wrapping around to the start.
 * When no hole fits, the tail is used and the arena grows. Frees coalesce
 * with both neighbours (and with the tail).
 * Complexity: O(log h) per operation, h = number of holes (three nodes
 * for 10,000 holes). --chunk and --retries do not apply: nothing is cached.
 * Optimality: none of them is optimal (online placement cannot be); they
 * are the classic baselines.
 */
#ifndef ML_STRATEGIES_FIT_H
#define ML_STRATEGIES_FIT_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_first_fit;
extern const MlStrategy ml_strategy_best_fit;
extern const MlStrategy ml_strategy_next_fit;

#endif
