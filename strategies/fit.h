/* fit.h — the online fit family: first-fit, best-fit, next-fit.
 *
 * Algorithm: one growable arena. Free holes are kept in a treap keyed by
 * offset whose nodes carry the hole's size and the largest size in their
 * subtree; the free tail above the highest live byte is kept apart.
 *   first-fit  the lowest hole of at least n bytes: one descent guided by
 *              the subtree maxima.
 *   best-fit   the smallest hole of at least n bytes (lowest offset among
 *              equals), from a second treap keyed by (size, offset).
 *   next-fit   the first hole at or after the end of the previous
 *              placement, wrapping around to the start.
 * When no hole fits, the tail is used and the arena grows. Frees coalesce
 * with both neighbours (and with the tail).
 * Complexity: O(log h) expected per operation, h = number of holes.
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
