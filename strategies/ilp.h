/* ilp.h — the textbook mixed-integer model, solved with GLPK.
 *
 * Model: an offset x_i >= 0 per buffer, the peak z >= x_i + size_i, and
 * for every pair (i, j) of buffers whose lifetimes overlap a binary y_ij
 * with the big-M constraints
 *     x_i + size_i <= x_j + M (1 - y_ij)      (i below j when y_ij = 1)
 *     x_j + size_j <= x_i + M y_ij            (j below i when y_ij = 0)
 * minimising z, with M = the best greedy peak (no optimal plan is higher)
 * and z >= the lower bound. Sizes are divided by their greatest common
 * divisor. GLPK's branch and cut starts from the greedy plan (given as a
 * heuristic solution) and stops at the time limit (default 10 s); the
 * solver's offsets are then compacted (buffers taken in the order of
 * their offsets, each at the lowest offset that fits: never higher), and
 * the plan is the better of that and the greedy one.
 * Options: write-model=FILE.lp|FILE.mps (CPLEX LP or free MPS, for another
 * solver; `memlens plan --write-model`), max-pairs=N (default 100000:
 * larger models are written but not solved; the greedy plan is kept).
 * Complexity: O(n + p) rows and columns for p overlapping pairs; the
 * solve is exponential in the worst case and weak on big-M models: fine
 * for tens of buffers, a reference and an exporter beyond that (exact is
 * the planner to use; docs/strategies.md).
 * Optimality: optimal when GLPK proves it (plan->optimal); otherwise the
 * best plan with GLPK's bound as plan->proven_lb.
 */
#ifndef ML_STRATEGIES_ILP_H
#define ML_STRATEGIES_ILP_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_ilp;

#endif
