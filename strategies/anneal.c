#include "strategies/anneal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "strategies/planner-private.h"

typedef struct {
  uint64_t moves;   /* 0 = until the time limit */
} AnnealOptions;

static const char *const anneal_keys[] = { "moves", NULL };

static int
anneal_option (void *user, const char *key, const char *value, MlError *err)
{
  AnnealOptions *o = user;
  if (strcmp (key, "moves") == 0)
    {
      char *end;
      unsigned long long v = strtoull (value, &end, 10);
      if (*value == 0 || *end || v == 0)
        return ml_error_set (err, ML_EUSAGE, "anneal: moves \"%s\" is not a positive count", value);
      o->moves = v;
      return 0;
    }
  return ml_error_set (err, ML_EUSAGE, "anneal: unknown option \"%s\" (known: moves=N)", key);
}

static inline uint64_t
next_rand (uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

#define MAX_MOVE 5

static int
anneal_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  AnnealOptions opt = { 0 };
  int rc = ml_options_foreach (knobs->options, anneal_option, &opt, err);
  if (rc < 0)
    return rc;
  size_t n = bufs->n;
  double limit = _ml_time_limit (knobs, 5.0), t0 = ml_now ();
  uint64_t peak;
  MlOrder seed_order;
  if ((rc = _ml_greedy_best (bufs, plan->offset, &seed_order, &peak, knobs, _ml_user_deadline (knobs), NULL, err)) < 0)
    return rc;
  uint64_t greedy_peak = peak, lb = bufs->lower_bound;
  if (n == 0 || peak <= lb)
    return 0;   /* nothing to improve (the driver marks it optimal) */
  MlPlacer *p = NULL;
  uint64_t *cur = malloc (n * sizeof *cur);
  uint32_t *crit = malloc (n * sizeof *crit);
  if (!cur || !crit)
    {
      rc = ml_error_set (err, ML_ENOMEM, "anneal: out of memory for %zu buffers", n);
      goto out;
    }
  if ((rc = _ml_placer_new (bufs, &p, err)) < 0)
    goto out;
  memcpy (cur, plan->offset, n * sizeof *cur);
  for (size_t i = 0; i < n; i++)
    _ml_placer_put (p, (uint32_t) i, cur[i]);
  uint64_t rng = knobs->seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  if (!rng)
    rng = 1;
  uint64_t cur_peak = peak, best_peak = peak, moves = 0, accepted = 0;
  size_t n_crit = 0, cur_count = 0;
  /* converged: no better peak in this many moves */
  uint64_t last_gain = 0, stall = 2000 + 50 * (uint64_t) n;
  for (size_t i = 0; i < n; i++)
    cur_count += bufs->buf[i].rsize && cur[i] + bufs->buf[i].rsize == peak;
  bool rescan = true;
  double now = t0;
  for (;;)
    {
      if (opt.moves ? moves >= opt.moves
                    : ((moves & 63) == 0 && (now = ml_now ()) - t0 >= limit) || moves - last_gain > stall)
        break;
      if ((moves & 1023) == 0)
        {
          if (_ml_cancelled (knobs))
            {
              rc = ml_error_set (err, ML_ECANCELLED, "anneal: cancelled");
              goto out;
            }
          if ((moves & 0xffff) == 0)
            _ml_report (knobs, opt.moves ? (double) moves / (double) opt.moves : (now - t0) / limit, "anneal");
        }
      moves++;
      if (rescan)
        {
          n_crit = 0;
          for (size_t i = 0; i < n; i++)
            if (bufs->buf[i].rsize && cur[i] + bufs->buf[i].rsize == cur_peak)
              crit[n_crit++] = (uint32_t) i;
          rescan = false;
        }
      /* a buffer at the peak (drop the ones that no longer are) */
      uint32_t c = 0;
      while (n_crit)
        {
          size_t k = next_rand (&rng) % n_crit;
          c = crit[k];
          if (cur[c] + bufs->buf[c].rsize == cur_peak)
            break;
          crit[k] = crit[--n_crit];
        }
      if (!n_crit)
        {
          rescan = true;
          continue;
        }
      uint32_t set[MAX_MOVE];
      uint64_t old[MAX_MOVE];
      size_t k = 1, want = 2 + next_rand (&rng) % (MAX_MOVE - 1);
      set[0] = c;
      /* the buffers right under c: sample overlapping ones, keep the
       * highest tops at or below c's offset */
      uint32_t pool[24];
      size_t np = 0;
      for (size_t tries = 0; tries < 24; tries++)
        {
          uint32_t b = _ml_placer_random_neighbour (p, c, &rng);
          if (b == c || !bufs->buf[b].rsize || cur[b] >= cur[c])
            continue;
          bool dup = false;
          for (size_t j = 0; j < np; j++)
            dup |= pool[j] == b;
          if (!dup)
            pool[np++] = b;
        }
      for (size_t a = 1; a < np; a++)
        for (size_t j = a; j > 0 && cur[pool[j]] + bufs->buf[pool[j]].rsize > cur[pool[j - 1]] + bufs->buf[pool[j - 1]].rsize; j--)
          {
            uint32_t t = pool[j]; pool[j] = pool[j - 1]; pool[j - 1] = t;
          }
      for (size_t j = 0; j < np && k < want; j++)
        set[k++] = pool[j];
      for (size_t j = 0; j < k; j++)
        {
          old[j] = cur[set[j]];
          _ml_placer_remove (p, set[j]);
        }
      /* re-place c first (it drops into the room just freed), then the
       * others largest first, or all in a random order */
      if (next_rand (&rng) % 4 == 0)
        {
          for (size_t j = k; j > 1; j--)
            {
              size_t r = next_rand (&rng) % j;
              uint32_t t = set[j - 1]; set[j - 1] = set[r]; set[r] = t;
              uint64_t o = old[j - 1]; old[j - 1] = old[r]; old[r] = o;
            }
        }
      else
        {
          for (size_t a = 2; a < k; a++)
            for (size_t j = a; j > 1 && bufs->buf[set[j]].rsize > bufs->buf[set[j - 1]].rsize; j--)
              {
                uint32_t t = set[j]; set[j] = set[j - 1]; set[j - 1] = t;
                uint64_t o = old[j]; old[j] = old[j - 1]; old[j - 1] = o;
              }
        }
      for (size_t j = 0; j < k; j++)
        cur[set[j]] = _ml_placer_place (p, set[j], 0);
      if (_ml_placer_failed (p))
        {
          rc = ml_error_set (err, ML_ENOMEM, "anneal: out of memory");
          goto out;
        }
      uint64_t new_peak = _ml_placer_peak (p);
      /* at an equal peak, fewer buffers reaching it is progress */
      size_t new_count = 0;
      if (new_peak == cur_peak)
        for (size_t i = 0; i < n; i++)
          new_count += bufs->buf[i].rsize && cur[i] + bufs->buf[i].rsize == new_peak;
      bool accept = new_peak < cur_peak || (new_peak == cur_peak && new_count <= cur_count);
      if (!accept)
        {
          double frac = opt.moves ? (double) moves / (double) opt.moves : (now - t0) / limit;
          double temp = 0.002 * (1.0 - (frac < 1 ? frac : 1));
          double delta = (double) (new_peak - cur_peak) / (double) cur_peak;
          double u = (double) (next_rand (&rng) >> 11) * (1.0 / 9007199254740992.0);
          accept = temp > 0 && u < exp (-delta / temp);
        }
      if (accept)
        {
          accepted++;
          if (new_peak != cur_peak)
            rescan = true;
          else
            for (size_t j = 0; j < k; j++)
              if (cur[set[j]] + bufs->buf[set[j]].rsize == new_peak && n_crit < n)
                crit[n_crit++] = set[j];
          if (new_peak != cur_peak)
            {
              new_count = 0;
              for (size_t i = 0; i < n; i++)
                new_count += bufs->buf[i].rsize && cur[i] + bufs->buf[i].rsize == new_peak;
            }
          cur_count = new_count;
          cur_peak = new_peak;
          if (cur_peak < best_peak)
            {
              last_gain = moves;
              best_peak = cur_peak;
              memcpy (plan->offset, cur, n * sizeof *cur);
              if (best_peak <= lb)
                break;
            }
        }
      else
        {
          for (size_t j = 0; j < k; j++)
            _ml_placer_remove (p, set[j]);
          for (size_t j = 0; j < k; j++)
            {
              cur[set[j]] = old[j];
              _ml_placer_put (p, set[j], old[j]);
            }
        }
    }
  char note[200];
  snprintf (note, sizeof note, "%" PRIu64 " moves, %" PRIu64 " kept; seed: greedy by %s, peak %" PRIu64,
            moves, accepted, _ml_order_name (seed_order), greedy_peak);
  if (ml_plan_set_note (plan, note) < 0)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  plan->ops = moves;
out:
  _ml_placer_free (p);
  free (cur);
  free (crit);
  return rc;
}

const MlStrategy ml_strategy_anneal = {
  .name = "anneal",
  .summary = "offline: simulated annealing from the best greedy plan (re-places buffers at the peak); never worse than greedy",
  .kind = ML_STRATEGY_OFFLINE,
  .knobs = ML_KNOB_TIME_LIMIT | ML_KNOB_SEED | ML_KNOB_OPTIONS,
  .options = anneal_keys,
  .plan = anneal_plan,
};
