/* exact.c — the exact planner (exact.h): its options and its two modes.
 * A plan is made in these steps: refuse a capacity below the lower bound;
 * seed every part with the best greedy plan; split the instance into
 * parts (exact-part.c); then either fit every part under the capacity or
 * bisect the capacities between the proven bound and the best plan, each
 * probe a fit search (exact-search.c); name what cannot fit
 * (exact-infeasible.c); note how the search ended. */
#include "strategies/exact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "sim/base/units.h"
#include "strategies/exact-private.h"
#include "strategies/planner-private.h"

static uint64_t
gcd_u64 (uint64_t a, uint64_t b)
{
  while (b)
    {
      uint64_t t = a % b;
      a = b;
      b = t;
    }
  return a;
}

typedef struct {
  int      mode;    /* 0 = auto, 1 = fit, 2 = minimize */
  uint64_t nodes;   /* minimise: stop after about this many nodes (0 = none) */
  uint64_t seed;    /* perturbs the static orders (0 = MiniMalloc's) */
} ExactOptions;

static const char *const exact_keys[] = { "mode", "nodes", "seed", NULL };

static int
exact_option (void *user, const char *key, const char *value, MlError *err)
{
  ExactOptions *o = user;
  if (strcmp (key, "mode") == 0)
    {
      if (strcmp (value, "fit") == 0)
        o->mode = 1;
      else if (strcmp (value, "minimize") == 0 || strcmp (value, "minimise") == 0)
        o->mode = 2;
      else
        return ml_error_set (err, ML_EUSAGE, "exact: mode \"%s\" is not fit or minimize", value);
      return 0;
    }
  if (strcmp (key, "nodes") == 0)
    {
      uint64_t v;
      if (ml_parse_u64 (value, strlen (value), &v) < 0 || v == 0)
        return ml_error_set (err, ML_EUSAGE, "exact: nodes=%s is not a positive number", value);
      o->nodes = v;
      return 0;
    }
  if (strcmp (key, "seed") == 0)
    {
      uint64_t v;
      if (ml_parse_u64 (value, strlen (value), &v) < 0)
        return ml_error_set (err, ML_EUSAGE, "exact: seed=%s is not a number", value);
      o->seed = v;
      return 0;
    }
  return ml_error_set (err, ML_EUSAGE, "exact: unknown option \"%s\" (known: mode=fit|minimize, nodes=N, seed=N)", key);
}

typedef struct {
  const MlBuffers *bufs;
  MlExactPart    *parts;
  uint32_t n_parts;
  MlExactSearch   s;
} Exact;

static void
exact_free (Exact *x)
{
  for (uint32_t p = 0; p < x->n_parts; p++)
    _ml_exact_part_free (&x->parts[p]);
  free (x->parts);
  _ml_exact_search_clear (&x->s);
}

/* Splits at ticks no buffer crosses (static orders perturbed by @seed)
 * and sizes the search scratch for the largest part that will be
 * searched. */
static int
exact_init (Exact *x, const MlBuffers *bufs, uint64_t seed, MlError *err)
{
  size_t n = bufs->n;
  memset (x, 0, sizeof *x);
  x->bufs = bufs;
  x->parts = calloc (n ? n : 1, sizeof *x->parts);
  if (!x->parts || _ml_exact_split (bufs, x->parts, &x->n_parts, seed) < 0)
    goto oom;
  uint32_t max_m = 1, max_S = 1;
  size_t max_adj = 1;
  for (uint32_t p = 0; p < x->n_parts; p++)
    {
      const MlExactPart *P = &x->parts[p];
      if (SEARCHABLE (P))
        {
          if (P->m > max_m) max_m = P->m;
          if (P->S > max_S) max_S = P->S;
          if (P->adj_start[P->m] > max_adj) max_adj = P->adj_start[P->m];
        }
    }
  if (_ml_exact_search_init (&x->s, max_m, max_S, max_adj) < 0)
    goto oom;
  return 0;
oom:
  exact_free (x);
  return ml_error_set (err, ML_ENOMEM, "exact: out of memory preparing %zu buffers", n);
}

/* Each part's best peak is the greedy plan's there (@offset). */
static void
seed_parts (Exact *x, const uint64_t *offset)
{
  for (uint32_t p = 0; p < x->n_parts; p++)
    {
      MlExactPart *P = &x->parts[p];
      P->best = 0;
      for (uint32_t i = 0; i < P->m; i++)
        {
          uint64_t top = offset[P->glob[i]] + P->size[i];
          if (P->size[i] && top > P->best)
            P->best = top;
        }
    }
}

static void
commit_part (Exact *x, MlExactPart *P, uint64_t *offset, const uint64_t *found, uint64_t peak)
{
  for (uint32_t i = 0; i < P->m; i++)
    offset[P->glob[i]] = found[i];
  P->best = peak;
}

static uint64_t
overall_best (const Exact *x)
{
  uint64_t m = 0;
  for (uint32_t p = 0; p < x->n_parts; p++)
    if (x->parts[p].best > m)
      m = x->parts[p].best;
  return m;
}

/* Tries to make every part fit under @cap by @deadline. Returns R_FOUND
 * (all parts fit; their plans are committed), R_NONE (a part proven not to
 * fit; *bad names it), R_STOP, R_BUDGET (a part ran past @max_budget
 * nodes, 0 = no limit) or R_TOO_BIG. */
static int
fit_all (Exact *x, uint64_t cap, double deadline, uint64_t max_budget, uint64_t *offset, uint32_t *bad)
{
  for (uint32_t p = 0; p < x->n_parts; p++)
    {
      MlExactPart *P = &x->parts[p];
      if (P->best <= cap)
        continue;
      if (P->lb > cap)
        {
          *bad = p;
          return R_NONE;
        }
      if (!SEARCHABLE (P))
        return R_TOO_BIG;
      int r = _ml_exact_solve (&x->s, P, cap, deadline, max_budget);
      if (r == R_FOUND)
        commit_part (x, P, offset, x->s.found, x->s.found_peak);
      else
        {
          if (r == R_NONE)
            *bad = p;
          return r;
        }
    }
  return R_FOUND;
}

/* The error for a search that ran out of memory or was cancelled (0
 * when neither). */
static int
search_error (const Exact *x, MlError *err)
{
  if (x->s.oom)
    return ml_error_set (err, ML_ENOMEM, "exact: out of memory in the search");
  if (x->s.cancelled)
    return ml_error_set (err, ML_ECANCELLED, "exact: cancelled");
  return 0;
}

/* mode=fit: a plan within the capacity, or the proof that none exists
 * (ML_EINFEASIBLE naming what cannot fit). */
static int
plan_fit (Exact *x, const MlKnobs *knobs, const ExactOptions *opt, double deadline, MlPlan *plan,
          char *note, size_t note_len, MlError *err)
{
  uint64_t cap = knobs->capacity;
  uint32_t bad = 0;
  int r = fit_all (x, cap, deadline, 0, plan->offset, &bad);
  if (r == R_NONE)
    return _ml_exact_refuse_part (x->bufs, &x->s, &x->parts[bad], cap, deadline, knobs, err);
  int rc = search_error (x, err);
  if (rc < 0)
    return rc;
  if (r == R_STOP && x->s.out_of_nodes)
    snprintf (note, note_len, "node limit (%" PRIu64 ") reached before a plan within capacity %" PRIu64
              " was found; the plan is the best greedy one", opt->nodes, cap);
  else if (r == R_STOP)
    snprintf (note, note_len, "time limit (%.3g s) reached before a plan within capacity %" PRIu64
              " was found; the plan is the best greedy one", x->s.limit, cap);
  plan->proven_lb = x->bufs->lower_bound;
  plan->optimal = overall_best (x) == x->bufs->lower_bound;
  return 0;
}

/* The bisection of mode=minimise. Every peak of a canonical plan is a sum
 * of sizes, so a multiple of their gcd g; the optimum lies in [*proven,
 * hi], *proven the bound (raised past each capacity a probe proves
 * infeasible), hi the best plan (lowered by each probe that finds one). A
 * probe runs each static order once with a node budget; one that runs
 * out says nothing about its capacity, so the round goes on above it
 * (more capacity is easier to fit). When a round's interval is empty the
 * budget doubles and the next round bisects [proven, hi) again. The fit
 * search's cost is heavy-tailed and erratic in the capacity (on J only
 * 1029120 and 1032192 of the 15 capacities below 1032193 fit within 6
 * million nodes), so many capacities get a small budget before any gets
 * a large one. The schedule depends on node counts only: with nodes=N
 * the result does not depend on the machine's load. Each round probes
 * the bound itself first, at the round's budget: where the live-bytes
 * peak can be reached (8 of MiniMalloc's 11 challenging instances) that
 * probe is the proof, and the capacities above it, easier to fit, say
 * nothing about it (B, E and F were left 2.7-4.1 % above it in 30 s when
 * only the first round probed it). Returns whether the clock stopped it. */
static bool
bisect_capacities (Exact *x, uint64_t g, double deadline, uint64_t *offset, uint64_t *proven)
{
  uint64_t hi = overall_best (x);
  uint32_t bad = 0;
  bool timed_out = false, too_big = false;
  for (uint64_t budget = EXACT_BUDGET0; !x->s.cancelled && !too_big && !timed_out && *proven < hi;
       budget *= 2)
    {
      uint64_t rlo = *proven;   /* this round's lowest capacity still open */
      bool first = true;        /* each round probes the bound first */
      while (rlo < hi)
        {
          /* the middle of [rlo, hi - g], a multiple of g; the bound
           * itself on the first probe */
          uint64_t c = first ? rlo : rlo + (hi - g - rlo) / g / 2 * g;
          first = false;
          int r = fit_all (x, c, deadline, budget, offset, &bad);
          if (r == R_FOUND)
            hi = overall_best (x);
          else if (r == R_NONE)
            rlo = *proven = c + g;
          else if (r == R_BUDGET)
            rlo = c + g;
          else
            {
              if (r == R_TOO_BIG)
                too_big = true;   /* a part too large to search holds the peak */
              else
                timed_out = true;
              break;
            }
        }
    }
  if (!x->s.out_of_nodes && ml_now () >= deadline && *proven < hi)
    timed_out = true;
  return timed_out;
}

/* mode=minimise: the smallest peak, or the best plan and the bound proven
 * when the time or node limit ends the bisection. */
static int
plan_minimise (Exact *x, const ExactOptions *opt, double deadline, uint64_t greedy_peak, MlPlan *plan,
               char *note, size_t note_len, MlError *err)
{
  const MlBuffers *bufs = x->bufs;
  uint64_t g = 0;
  for (size_t i = 0; i < bufs->n; i++)
    g = gcd_u64 (g, bufs->buf[i].rsize);
  if (g == 0)
    g = 1;
  uint64_t proven = (bufs->lower_bound + g - 1) / g * g;
  bool timed_out = bisect_capacities (x, g, deadline, plan->offset, &proven);
  int rc = search_error (x, err);
  if (rc < 0)
    return rc;
  uint64_t hi = overall_best (x);
  if (proven >= hi)
    proven = hi;
  plan->proven_lb = proven;
  plan->optimal = proven == hi;
  if (!plan->optimal && x->s.out_of_nodes)
    snprintf (note, note_len, "node limit (%" PRIu64 ") reached: best peak %" PRIu64 ", proven lower bound %" PRIu64
              " (greedy %" PRIu64 ")", opt->nodes, hi, proven, greedy_peak);
  else if (!plan->optimal && timed_out)
    snprintf (note, note_len, "time limit (%.3g s) reached: best peak %" PRIu64 ", proven lower bound %" PRIu64
              " (greedy %" PRIu64 ")", x->s.limit, hi, proven, greedy_peak);
  return 0;
}

/* Adds to @note that a part too large to search kept its greedy plan. */
static void
note_too_big (const Exact *x, char *note, size_t note_len)
{
  for (uint32_t p = 0; p < x->n_parts; p++)
    if (!SEARCHABLE (&x->parts[p]))
      {
        size_t len = strlen (note);
        snprintf (note + len, note_len - len, "%sa part of %" PRIu32 " buffers with %" PRIu64
                  " overlapping pairs is too large to search; it keeps its greedy plan",
                  len ? "; " : "", x->parts[p].m, x->parts[p].pairs);
        break;
      }
}

static int
exact_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  ExactOptions opt = { 0 };
  int rc = ml_options_foreach (knobs->options, exact_option, &opt, err);
  if (rc < 0)
    return rc;
  bool fit_mode = opt.mode == 1 || (opt.mode == 0 && knobs->capacity > 0);
  if (fit_mode && knobs->capacity == 0)
    return ml_error_set (err, ML_EUSAGE, "exact: mode=fit needs a capacity (--capacity SIZE)");
  double limit = _ml_time_limit (knobs, 10.0);
  double t0 = ml_now (), deadline = t0 + limit;
  if (fit_mode && knobs->capacity < bufs->lower_bound)
    return _ml_exact_refuse_below_bound (bufs, knobs, err);

  /* the best greedy plan is the starting point */
  uint64_t greedy_peak;
  if ((rc = _ml_greedy_best (bufs, plan->offset, NULL, &greedy_peak, knobs, _ml_user_deadline (knobs), NULL, err)) < 0)
    return rc;
  Exact x;
  if ((rc = exact_init (&x, bufs, opt.seed, err)) < 0)
    return rc;
  x.s.knobs = knobs;
  x.s.t0 = t0;
  x.s.limit = limit;
  x.s.phase = "exact";
  x.s.max_nodes = opt.nodes;
  seed_parts (&x, plan->offset);
  char note[256] = "";
  if (fit_mode)
    rc = plan_fit (&x, knobs, &opt, deadline, plan, note, sizeof note, err);
  else
    rc = plan_minimise (&x, &opt, deadline, greedy_peak, plan, note, sizeof note, err);
  if (rc == 0)
    {
      note_too_big (&x, note, sizeof note);
      if (note[0] && ml_plan_set_note (plan, note) < 0)
        rc = ml_error_set (err, ML_ENOMEM, "out of memory");
      plan->nodes_visited = x.s.nodes;
      plan->backtracks = x.s.backtracks;
    }
  exact_free (&x);
  return rc;
}

const MlStrategy ml_strategy_exact = {
  .name = "exact",
  .summary = "offline: branch and bound over canonical placements (MiniMalloc style); anytime, optimal when it finishes",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_PROVES_OPTIMAL,
  .knobs = ML_KNOB_TIME_LIMIT | ML_KNOB_OPTIONS,
  .options = exact_keys,
  .plan = exact_plan,
};
