/* genetic.h — a genetic algorithm over buffer orders, for instances too
 * large for exact.
 *
 * Algorithm: an individual is an order of the buffers; it is decoded by
 * the shared placer (planner-private.h: each buffer in turn at the lowest
 * offset that fits), and ranked by its peak, then by the bytes x ticks its
 * buffers reach above the lower bound. The population starts from the five
 * greedy orders of hybrid, so the best plan is never worse than hybrid's
 * (when the time limit leaves room to decode all five; greedy-size's order
 * always is). A child is a copy of one parent, or the order crossover (OX)
 * of two, then mutated where the peak is made: the decoded plan's
 * critical chain (the peak buffer, the buffer it rests on, the one under
 * that, down to offset 0) names the buffers worth moving, and a mutation
 * moves one of them before one lower in the chain, or swaps two, or moves
 * one to a random earlier or later place. Each generation, parents and
 * children compete and the best are kept (the elite is never lost).
 * The population is two islands, each evolved by its own thread; after
 * every generation each island sends its best to the other. Every island
 * has its own random generator seeded from --seed, and the islands meet
 * only between generations, so a seed and a generation count give the same
 * plan byte for byte, with one thread or two (with a time limit, the number
 * of generations depends on the machine: use --options generations=N for
 * byte-identical runs).
 * Complexity: per child O(n r log n) to decode (the placer's cost per
 * buffer, planner-private.h) plus O(n log n) to find the critical chain.
 * Optimality: none; it stops at the time limit (default 10 s), after the
 * given generations (else after 200 generations without a lower peak), or
 * at the lower bound.
 */
#ifndef ML_STRATEGIES_GENETIC_H
#define ML_STRATEGIES_GENETIC_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_genetic;

#endif
