#include "strategies/registry.h"

#include <string.h>

#include "strategies/buddy.h"
#include "strategies/caching.h"
#include "strategies/fit.h"
#include "strategies/greedy.h"
#include "strategies/exact.h"
#include "strategies/anneal.h"
#include "strategies/ilp.h"
#include "strategies/linear.h"
#include "strategies/pool.h"

static const MlStrategy *const all[] = {
  &ml_strategy_first_fit,
  &ml_strategy_best_fit,
  &ml_strategy_next_fit,
  &ml_strategy_linear,
  &ml_strategy_caching,
  &ml_strategy_pool,
  &ml_strategy_buddy,
  &ml_strategy_greedy_size,
  &ml_strategy_greedy_breadth,
  &ml_strategy_greedy_conflict,
  &ml_strategy_hybrid,
  &ml_strategy_exact,
  &ml_strategy_anneal,
#ifdef ML_HAVE_GLPK
  &ml_strategy_ilp,
#endif
  NULL,
};

const MlStrategy *const *
ml_strategies_all (void)
{
  return all;
}

const MlStrategy *
ml_strategy_find (const char *name)
{
  for (const MlStrategy *const *s = all; *s; s++)
    if (strcmp ((*s)->name, name) == 0)
      return *s;
  return NULL;
}

const char *
ml_strategies_default (void)
{
  return "first-fit,best-fit,next-fit,linear,caching,greedy-size,greedy-breadth,greedy-conflict,hybrid";
}
