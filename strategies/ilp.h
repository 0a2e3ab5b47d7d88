/* ilp.h — the mixed-integer model, solved with GLPK.
 *
 * Every model: an offset x_i >= 0 per buffer and the peak z >= x_i +
 * size_i, minimised, with M = the best greedy peak (no optimal plan is
 * higher) and z >= the lower bound; sizes are divided by their greatest
 * common divisor. options model= (ilp-model.c):
 *   bigm (default): for every pair (i, j) of buffers whose lifetimes
 *     overlap a binary y_ij with the big-M constraints
 *         x_i + size_i <= x_j + M (1 - y_ij)   (i below j when y_ij = 1)
 *         x_j + size_j <= x_i + M y_ij         (j below i when y_ij = 0)
 *   order: the same, with twins' (equal size and lifetime) order and one
 *     pair's (against the mirror image) fixed, per maximal clique K and
 *     member i  x_i >= sum of K's sizes below i  and  z - x_i >= size_i +
 *     sum of those above, and transitivity per three buffers live at once;
 *   time: a binary X[i][o] = [x_i <= o] per buffer and address unit, per
 *     unit u an h_u (in use, from the bottom; z >= sum h_u) and per clique
 *     and unit at most one covering member (sum X[i][u] - X[i][u - size_i]
 *     <= h_u): sum (M - size_i) binaries.
 * GLPK's branch and cut starts from the greedy plan (given as a heuristic
 * solution) and stops at the time limit (default 10 s); the solver's
 * offsets are then compacted (buffers taken in the order of their offsets,
 * each at the lowest offset that fits: never higher), and the plan is the
 * better of that and the greedy one. The note names the model and its
 * binaries and rows.
 * Options: write-model=FILE.lp|FILE.mps (CPLEX LP or free MPS, for another
 * solver; `memlens plan --write-model`), max-pairs=N (default 100000:
 * models with more overlapping pairs, or time models (order models'
 * clique rows) with more than 100 N matrix entries, are not solved; the greedy plan is kept; write-model
 * raises the pair limit to 10^7).
 * Complexity: O(n + p) rows and columns for p overlapping pairs (bigm;
 * order adds 2 sum |K| + triples rows; time O(n M) columns, O(cliques M)
 * rows); the solve is exponential in the worst case: fine for tens of
 * buffers (order: 40), a reference and an exporter beyond that (exact is
 * the planner to use; docs/strategies.md).
 * Optimality: optimal when GLPK proves it (plan->optimal); otherwise the
 * best plan with GLPK's bound as plan->proven_lb.
 */
#ifndef ML_STRATEGIES_ILP_H
#define ML_STRATEGIES_ILP_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_ilp;

#endif
