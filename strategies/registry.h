/* registry.h — strategy names to strategies. */
#ifndef ML_STRATEGIES_REGISTRY_H
#define ML_STRATEGIES_REGISTRY_H

#include "sim/strategy.h"

/* Every strategy, NULL-terminated, in the order tables list them. */
const MlStrategy *const *ml_strategies_all (void);
/* The strategy called @name, or NULL. */
const MlStrategy *ml_strategy_find (const char *name);
/* The comma-separated default set for `compare` (fast ones). */
const char *ml_strategies_default (void);

#endif
