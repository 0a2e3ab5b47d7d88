#include "strategies/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "strategies/block.h"
#include "strategies/buddy.h"
#include "strategies/caching.h"
#include "strategies/fit.h"
#include "strategies/greedy.h"
#include "strategies/exact.h"
#include "strategies/anneal.h"
#include "strategies/genetic.h"
#include "strategies/ilp.h"
#include "strategies/linear.h"
#include "strategies/pool.h"

/* The table: one line per strategy, in the order listings show them. What
 * a call site needs to know (in the default set, proves optimality, the
 * recorded plan, the knobs it reads) is in the entry's flags. */
static const MlStrategy *const all[] = {
  &ml_strategy_recorded,
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
  &ml_strategy_ge_block,
  &ml_strategy_exact,
  &ml_strategy_anneal,
  &ml_strategy_genetic,
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

static char default_list[512];

static void
build_default_list (void)
{
  size_t len = 0;
  for (const MlStrategy *const *s = all; *s; s++)
    if ((*s)->flags & ML_STRATEGY_DEFAULT)
      len += (size_t) snprintf (default_list + len, sizeof default_list - len, "%s%s", len ? "," : "", (*s)->name);
}

const char *
ml_strategies_default (void)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;   /* the viewer asks from worker threads */
  pthread_once (&once, build_default_list);
  return default_list;
}

const MlStrategy *
ml_strategy_initial (bool has_addrs)
{
  return has_addrs ? &ml_strategy_recorded : &ml_strategy_best_fit;
}

const MlStrategy *
ml_strategy_second (const char *first)
{
  return ml_strategy_find (first) == &ml_strategy_best_fit ? &ml_strategy_first_fit : &ml_strategy_best_fit;
}

bool
ml_strategy_reads_option (const MlStrategy *s, const char *key)
{
  for (const char *const *k = s->options; k && *k; k++)
    if (strcmp (*k, key) == 0)
      return true;
  return false;
}
