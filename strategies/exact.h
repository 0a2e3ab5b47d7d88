/* exact.h — an exact branch-and-bound planner (the MiniMalloc approach).
 *
 * Algorithm: every instance has an optimal plan in which each buffer sits
 * at offset 0 or on top of a buffer it overlaps in time ("canonical"), and
 * the buffers of such a plan, sorted by (offset, rank), can be placed one
 * by one, each at the lowest offset its placed neighbours allow. The search
 * builds exactly those sequences: at each node the candidates are the
 * unplaced buffers whose lowest offset keeps the sequence sorted (so each
 * layout is reached by one order only), tried lowest first, then by a
 * static rank (MiniMalloc's three preorderings in round robin). It prunes
 *   - a buffer that can no longer fit under the capacity (its lowest
 *     offset only rises),
 *   - a time section whose floor (the last offset placed, the tops placed
 *     there, the lowest offset left there) plus the sizes still unplaced
 *     there exceeds the capacity, and dominated and hatless siblings.
 * The instance is split at ticks no buffer crosses, and again during the
 * search whenever a placement leaves a section boundary that no unplaced
 * buffer crosses (each piece re-ranked and solved on its own).
 * Modes (--options mode=fit|minimize; nodes=N, seed=N, see below):
 *   fit       (default when a capacity is given) find a plan within the
 *             capacity or prove that none exists (ML_EINFEASIBLE);
 *   minimize  (default without a capacity) the smallest peak: a binary
 *             search over capacities (multiples of the sizes' gcd)
 *             between the proven bound and the best plan, each probe a
 *             fit search with a node budget; a proof raises the bound, a
 *             plan lowers the best, a probe out of budget sends the round
 *             higher, and each round doubles the budget. When the time
 *             limit (default 10 s) or nodes=N (placements tried, in either
 *             mode; the result then does not depend on the machine's load)
 *             stops it, the plan is the best found and plan->proven_lb
 *             the bound proven so far.
 *   seed=N    (either mode) perturbs the three static orders (about 3 %
 *             of neighbouring pairs swapped, a xorshift from N; 0, the
 *             default: MiniMalloc's): a restart. The search stays
 *             complete, so proofs are unchanged; only which plans it
 *             meets first differs (on hard instances a lottery: D 1007616
 *             with seed=5, 1031168 without, at nodes=8000000).
 * Complexity: exponential in the worst case (the problem is NP-hard);
 * O(n + sum of lifetimes in sections) work per search node.
 * Optimality: optimal when it finishes (plan->optimal), otherwise anytime.
 */
#ifndef ML_STRATEGIES_EXACT_H
#define ML_STRATEGIES_EXACT_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_exact;

#endif
