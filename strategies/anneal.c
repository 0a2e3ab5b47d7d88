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

/* The annealing state: the current plan in the placer and in cur, its
 * peak and how many buffers reach it, the buffers known to be at the
 * peak (crit, refreshed by a rescan), the random generator. */
typedef struct {
  const MlBuffers *bufs;
  size_t    n;
  MlPlacer *p;
  uint64_t *cur;
  uint32_t *crit;
  size_t    n_crit;
  bool      rescan;
  uint64_t  rng;
  uint64_t  cur_peak;
  size_t    cur_count;
} Anneal;

/* A move: the buffers taken out (set[0] the one at the peak) and their
 * old offsets. */
typedef struct {
  uint32_t set[MAX_MOVE];
  uint64_t old[MAX_MOVE];
  size_t   k;
} Move;

/* How many buffers of the current plan reach @peak. */
static size_t
count_at (const Anneal *a, uint64_t peak)
{
  size_t c = 0;
  for (size_t i = 0; i < a->n; i++)
    c += a->bufs->buf[i].rsize && a->cur[i] + a->bufs->buf[i].rsize == peak;
  return c;
}

/* A buffer at the peak, drawn among crit (dropping the ones that no
 * longer are; rescanning the plan when asked). False when crit ran dry:
 * the next move rescans. */
static bool
peak_buffer (Anneal *a, uint32_t *out)
{
  const MlBuffer *buf = a->bufs->buf;
  if (a->rescan)
    {
      a->n_crit = 0;
      for (size_t i = 0; i < a->n; i++)
        if (buf[i].rsize && a->cur[i] + buf[i].rsize == a->cur_peak)
          a->crit[a->n_crit++] = (uint32_t) i;
      a->rescan = false;
    }
  while (a->n_crit)
    {
      size_t k = next_rand (&a->rng) % a->n_crit;
      uint32_t c = a->crit[k];
      if (a->cur[c] + buf[c].rsize == a->cur_peak)
        {
          *out = c;
          return true;
        }
      a->crit[k] = a->crit[--a->n_crit];
    }
  a->rescan = true;
  return false;
}

/* The move around @c: the buffers right under it (sample overlapping
 * ones, keep the highest tops below c's offset), 1 to 4 of them, all
 * taken out of the placer. */
static void
take_out (Anneal *a, uint32_t c, Move *mv)
{
  const MlBuffer *buf = a->bufs->buf;
  const uint64_t *cur = a->cur;
  size_t want = 2 + next_rand (&a->rng) % (MAX_MOVE - 1);
  mv->k = 1;
  mv->set[0] = c;
  uint32_t pool[24];
  size_t np = 0;
  for (size_t tries = 0; tries < 24; tries++)
    {
      uint32_t b = _ml_placer_random_neighbour (a->p, c, &a->rng);
      if (b == c || !buf[b].rsize || cur[b] >= cur[c])
        continue;
      bool dup = false;
      for (size_t j = 0; j < np; j++)
        dup |= pool[j] == b;
      if (!dup)
        pool[np++] = b;
    }
  for (size_t i = 1; i < np; i++)
    for (size_t j = i; j > 0 && cur[pool[j]] + buf[pool[j]].rsize > cur[pool[j - 1]] + buf[pool[j - 1]].rsize; j--)
      {
        uint32_t t = pool[j]; pool[j] = pool[j - 1]; pool[j - 1] = t;
      }
  for (size_t j = 0; j < np && mv->k < want; j++)
    mv->set[mv->k++] = pool[j];
  for (size_t j = 0; j < mv->k; j++)
    {
      mv->old[j] = cur[mv->set[j]];
      _ml_placer_remove (a->p, mv->set[j]);
    }
}

static void
move_swap (Move *mv, size_t x, size_t y)
{
  uint32_t t = mv->set[x]; mv->set[x] = mv->set[y]; mv->set[y] = t;
  uint64_t o = mv->old[x]; mv->old[x] = mv->old[y]; mv->old[y] = o;
}

/* Puts the move's buffers back, each at the lowest fit: the one at the
 * peak first (it drops into the room just freed), then the others
 * largest first, or (one move in four) all in a random order. */
static void
put_back (Anneal *a, Move *mv)
{
  const MlBuffer *buf = a->bufs->buf;
  size_t k = mv->k;
  if (next_rand (&a->rng) % 4 == 0)
    for (size_t j = k; j > 1; j--)
      move_swap (mv, j - 1, next_rand (&a->rng) % j);
  else
    for (size_t i = 2; i < k; i++)
      for (size_t j = i; j > 1 && buf[mv->set[j]].rsize > buf[mv->set[j - 1]].rsize; j--)
        move_swap (mv, j, j - 1);
  for (size_t j = 0; j < k; j++)
    a->cur[mv->set[j]] = _ml_placer_place (a->p, mv->set[j], 0);
}

/* Whether to keep a move to @new_peak (@new_count buffers there): a lower
 * peak, or an equal one with no more buffers at it; a worse one with
 * probability exp(-delta / T), T falling linearly from 0.2 % to 0 as
 * @frac (of the moves or the time) runs out. */
static bool
accept_move (Anneal *a, uint64_t new_peak, size_t new_count, double frac)
{
  if (new_peak < a->cur_peak || (new_peak == a->cur_peak && new_count <= a->cur_count))
    return true;
  double temp = 0.002 * (1.0 - (frac < 1 ? frac : 1));
  double delta = (double) (new_peak - a->cur_peak) / (double) a->cur_peak;
  double u = (double) (next_rand (&a->rng) >> 11) * (1.0 / 9007199254740992.0);
  return temp > 0 && u < exp (-delta / temp);
}

/* The kept move becomes the current plan. */
static void
keep_move (Anneal *a, const Move *mv, uint64_t new_peak, size_t new_count)
{
  if (new_peak != a->cur_peak)
    {
      a->rescan = true;
      new_count = count_at (a, new_peak);
    }
  else
    for (size_t j = 0; j < mv->k; j++)
      if (a->cur[mv->set[j]] + a->bufs->buf[mv->set[j]].rsize == new_peak && a->n_crit < a->n)
        a->crit[a->n_crit++] = mv->set[j];
  a->cur_count = new_count;
  a->cur_peak = new_peak;
}

/* The refused move is undone: its buffers back at their old offsets. */
static void
undo_move (Anneal *a, const Move *mv)
{
  for (size_t j = 0; j < mv->k; j++)
    _ml_placer_remove (a->p, mv->set[j]);
  for (size_t j = 0; j < mv->k; j++)
    {
      a->cur[mv->set[j]] = mv->old[j];
      _ml_placer_put (a->p, mv->set[j], mv->old[j]);
    }
}

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
  Anneal a = { .bufs = bufs, .n = n, .rescan = true, .cur_peak = peak };
  a.cur = malloc (n * sizeof *a.cur);
  a.crit = malloc (n * sizeof *a.crit);
  if (!a.cur || !a.crit)
    {
      rc = ml_error_set (err, ML_ENOMEM, "anneal: out of memory for %zu buffers", n);
      goto out;
    }
  if ((rc = _ml_placer_new (bufs, &a.p, err)) < 0)
    goto out;
  memcpy (a.cur, plan->offset, n * sizeof *a.cur);
  for (size_t i = 0; i < n; i++)
    _ml_placer_put (a.p, (uint32_t) i, a.cur[i]);
  a.rng = knobs->seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  if (!a.rng)
    a.rng = 1;
  a.cur_count = count_at (&a, peak);
  uint64_t best_peak = peak, moves = 0, accepted = 0;
  /* converged: no better peak in this many moves */
  uint64_t last_gain = 0, stall = 2000 + 50 * (uint64_t) n;
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
      uint32_t c;
      if (!peak_buffer (&a, &c))
        continue;
      Move mv;
      take_out (&a, c, &mv);
      put_back (&a, &mv);
      if (_ml_placer_failed (a.p))
        {
          rc = ml_error_set (err, ML_ENOMEM, "anneal: out of memory");
          goto out;
        }
      uint64_t new_peak = _ml_placer_peak (a.p);
      /* at an equal peak, fewer buffers reaching it is progress */
      size_t new_count = new_peak == a.cur_peak ? count_at (&a, new_peak) : 0;
      double frac = opt.moves ? (double) moves / (double) opt.moves : (now - t0) / limit;
      if (!accept_move (&a, new_peak, new_count, frac))
        {
          undo_move (&a, &mv);
          continue;
        }
      accepted++;
      keep_move (&a, &mv, new_peak, new_count);
      if (a.cur_peak < best_peak)
        {
          last_gain = moves;
          best_peak = a.cur_peak;
          memcpy (plan->offset, a.cur, n * sizeof *a.cur);
          if (best_peak <= lb)
            break;
        }
    }
  char note[200];
  snprintf (note, sizeof note, "%" PRIu64 " moves, %" PRIu64 " kept; seed: greedy by %s, peak %" PRIu64,
            moves, accepted, _ml_order_name (seed_order), greedy_peak);
  if (ml_plan_set_note (plan, note) < 0)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  plan->ops = moves;
out:
  _ml_placer_free (a.p);
  free (a.cur);
  free (a.crit);
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
