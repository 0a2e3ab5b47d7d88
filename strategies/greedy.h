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
 * Complexity: O(n log n) for the order, then O(sum over buffers of
 * (k + 1) log T + k log k) where k is the number of placed buffers
 * overlapping it: near O(n log n) when few buffers live at once, O(n^2 log
 * n) in the worst case. hybrid costs five runs.
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
