/* anneal.h — simulated annealing over a greedy plan, for instances too
 * large for exact.
 *
 * Algorithm: starts from the best plan of the greedy family (hybrid). A
 * move takes a buffer whose top is the peak plus one to four random
 * buffers whose lifetimes overlap it, takes them out of the plan and puts
 * them back, one by one in a random order (or largest first), each at the
 * lowest offset that fits. A move that does not raise the peak is kept; a
 * worse one is kept with probability exp(-delta / (T * peak)), T falling
 * linearly from 0.2 % to 0 over the time limit (default 5 s; it also
 * stops after 2000 + 50 n moves without a better peak). The best
 * plan seen is returned, so it is never worse than its seed; the random
 * generator is seeded from --seed, so a seed and a move budget give the
 * same plan (with a time limit the number of moves depends on the
 * machine: use --options moves=N for byte-identical runs).
 * Complexity: per move O(k log T log n) to remove and re-place k buffers
 * in the time-indexed placer (planner-private.h).
 * Optimality: none; it stops at the time limit or at the lower bound.
 */
#ifndef ML_STRATEGIES_ANNEAL_H
#define ML_STRATEGIES_ANNEAL_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_anneal;

#endif
