/* linear.h — the naive baseline: no reuse at all.
 *
 * Algorithm: each buffer gets the next offset after the previous one, in
 * allocation order; nothing is ever reused.
 * Complexity: O(n). Optimality: only when no two lifetimes are disjoint;
 * its peak is the sum of all sizes, the worst any planner can do.
 */
#ifndef ML_STRATEGIES_LINEAR_H
#define ML_STRATEGIES_LINEAR_H

#include "sim/strategy.h"

extern const MlStrategy ml_strategy_linear;

#endif
