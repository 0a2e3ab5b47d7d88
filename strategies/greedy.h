/* greedy.h — the greedy family of offline planners, and hybrid.
 *
 * Each takes the buffers in one order and puts each at the lowest offset
 * where it does not collide with an already placed buffer whose lifetime
 * overlaps its own (placed buffers are indexed by time: see
 * planner-private.h). They differ only in the order:
 *   greedy-size      largest first (ties: longer lifetime, then input
 *                    order) — TFLite Micro's GreedyMemoryPlanner.
 *   greedy-breadth   TFLite's "greedy by breadth": time steps by their
 *                    breadth (bytes live there) largest first; at each step
 *                    the buffers live there and not yet placed, largest
 *                    first. Equivalently, each buffer is ordered by the
 *                    widest step of its lifetime, then by size.
 *   greedy-conflict  buffers that overlap the most others first (ties:
 *                    larger first).
 *   hybrid           runs five orders (size, breadth, conflict, area =
 *                    size x lifetime, lifetime) and keeps the smallest
 *                    peak; the plan's note names the winner (the idea of
 *                    Ascend GE's hybrid memory assigner).
 * Complexity: O(n log n) for the order, then per buffer O(log T) to find
 * the treaps holding the placed buffers that overlap it and O(r log n) for
 * the r treap walks until they agree on its lowest hole (placer.c; r is
 * about 50 on compiler plans, 600 on random 62k-buffer traces, at most
 * O(k log T) for k overlapping placed buffers). hybrid costs five runs.
 * Optimality: none is optimal (the problem is NP-hard); each is a fast
 * heuristic that is usually within a few percent of the lower bound on
 * compiler-produced instances (docs/performance.md).
 */
#ifndef ML_STRATEGIES_GREEDY_H
#define ML_STRATEGIES_GREEDY_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_greedy_size;
extern const MlStrategy ml_strategy_greedy_breadth;
extern const MlStrategy ml_strategy_greedy_conflict;
extern const MlStrategy ml_strategy_hybrid;

#endif
