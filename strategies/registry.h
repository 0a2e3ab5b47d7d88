/* registry.h — the strategy table: names to strategies, and the sets the
 * call sites derive from its flags (sim/strategy.h). Adding a strategy is
 * its file plus one line in the table (registry.c). */
#ifndef ML_STRATEGIES_REGISTRY_H
#define ML_STRATEGIES_REGISTRY_H

#include "sim/recorded.h"

/* Every strategy, NULL-terminated, in the order tables list them; the
 * recorded plan (ML_STRATEGY_RECORDED) first. */
const MlStrategy *const *ml_strategies_all (void);
/* The strategy called @name, or NULL. */
const MlStrategy *ml_strategy_find (const char *name);
/* The comma-separated default set (the ML_STRATEGY_DEFAULT entries, in
 * table order): a static string. */
const char *ml_strategies_default (void);
/* The strategy a plan comes from when none is named: the recorded plan
 * when the trace has addresses, else best-fit. */
const MlStrategy *ml_strategy_initial (bool has_addrs);
/* A strategy worth comparing with the one called @first: best-fit, or
 * first-fit when @first is best-fit. */
const MlStrategy *ml_strategy_second (const char *first);
/* True when @s's options (knobs->options) understand @key. */
bool ml_strategy_reads_option (const MlStrategy *s, const char *key);

#endif
