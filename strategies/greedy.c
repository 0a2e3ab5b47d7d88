#include "strategies/greedy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/sort.h"
#include "strategies/planner-private.h"

typedef struct {
  uint64_t k1, k2, k3;   /* sorted ascending, then by index */
  uint32_t idx;
} Key;

static int
cmp_key (const void *a, const void *b)
{
  const Key *x = a, *y = b;
  if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
  if (x->k2 != y->k2) return x->k2 < y->k2 ? -1 : 1;
  if (x->k3 != y->k3) return x->k3 < y->k3 ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Breadth ranks: for each buffer, the rank of the widest time step of its
 * lifetime (steps by live bytes desc, then by time). */
static int
breadth_ranks (const MlBuffers *bufs, uint64_t *rank_of, MlError *err)
{
  size_t n = bufs->n, P = 0;
  uint64_t *pt = malloc ((n ? n : 1) * sizeof *pt);
  uint64_t *starts = malloc ((n ? n : 1) * sizeof *starts);
  uint64_t *ends = malloc ((n ? n : 1) * sizeof *ends);
  Key *keys = malloc ((n ? n : 1) * sizeof *keys);
  uint32_t *rank = malloc ((n ? n : 1) * sizeof *rank);
  uint32_t *sparse = NULL;
  int rc = 0;
  if (!pt || !starts || !ends || !keys || !rank)
    goto oom;
  for (size_t i = 0; i < n; i++)
    {
      starts[i] = bufs->buf[i].start;
      ends[i] = bufs->buf[i].end;
    }
  ml_sort_u64 (starts, n);
  ml_sort_u64 (ends, n);
  for (size_t i = 0; i < n; i++)
    if (P == 0 || pt[P - 1] != starts[i])
      pt[P++] = starts[i];
  /* live bytes at each step: sweep starts and ends by tick */
  {
    uint32_t *bs = malloc ((n ? n : 1) * sizeof *bs), *be = malloc ((n ? n : 1) * sizeof *be);
    if (!bs || !be)
      {
        free (bs); free (be);
        goto oom;
      }
    for (size_t i = 0; i < n; i++)
      bs[i] = be[i] = (uint32_t) i;
    if (ml_sort_indexes_by_key (bs, n, &bufs->buf[0].start, sizeof (MlBuffer)) < 0
        || ml_sort_indexes_by_key (be, n, &bufs->buf[0].end, sizeof (MlBuffer)) < 0)
      {
        free (bs); free (be);
        goto oom;
      }
    uint64_t live = 0;
    size_t a = 0, b = 0;
    for (size_t p = 0; p < P; p++)
      {
        while (b < n && bufs->buf[be[b]].end <= pt[p])
          live -= bufs->buf[be[b++]].rsize;
        while (a < n && bufs->buf[bs[a]].start <= pt[p])
          live += bufs->buf[bs[a++]].rsize;
        keys[p] = (Key) { UINT64_MAX - live, pt[p], 0, (uint32_t) p };
      }
    free (bs);
    free (be);
  }
  qsort (keys, P, sizeof *keys, cmp_key);
  for (size_t r = 0; r < P; r++)
    rank[keys[r].idx] = (uint32_t) r;
  /* sparse table of range minima over rank */
  size_t levels = 1;
  while (((size_t) 1 << levels) <= P)
    levels++;
  sparse = malloc (levels * (P ? P : 1) * sizeof *sparse);
  if (!sparse)
    goto oom;
  memcpy (sparse, rank, P * sizeof *rank);
  for (size_t l = 1; l < levels; l++)
    for (size_t i = 0; i + ((size_t) 1 << l) <= P; i++)
      {
        uint32_t x = sparse[(l - 1) * P + i], y = sparse[(l - 1) * P + i + ((size_t) 1 << (l - 1))];
        sparse[l * P + i] = x < y ? x : y;
      }
  for (size_t i = 0; i < n; i++)
    {
      size_t lo = ml_lower_bound_u64 (pt, P, bufs->buf[i].start);
      size_t hi = ml_lower_bound_u64 (pt, P, bufs->buf[i].end);   /* steps in [start, end) */
      if (hi <= lo)
        {
          rank_of[i] = UINT64_MAX;
          continue;
        }
      size_t len = hi - lo, l = 0;
      while (((size_t) 2 << l) <= len)
        l++;
      uint32_t x = sparse[l * P + lo], y = sparse[l * P + hi - ((size_t) 1 << l)];
      rank_of[i] = x < y ? x : y;
    }
  goto out;
oom:
  rc = ml_error_set (err, ML_ENOMEM, "out of memory ordering %zu buffers by breadth", n);
out:
  free (pt); free (starts); free (ends); free (keys); free (rank); free (sparse);
  return rc;
}

const char *
_ml_order_name (MlOrder kind)
{
  static const char *names[] = { "size", "breadth", "conflict", "area", "lifetime" };
  return kind < ML_ORDER__COUNT ? names[kind] : "?";
}

int
_ml_greedy_order (const MlBuffers *bufs, MlOrder kind, uint32_t *order, MlError *err)
{
  size_t n = bufs->n;
  Key *keys = malloc ((n ? n : 1) * sizeof *keys);
  uint64_t *aux = NULL, *starts = NULL, *ends = NULL;
  int rc = 0;
  if (!keys)
    return ml_error_set (err, ML_ENOMEM, "out of memory ordering %zu buffers", n);
  if (kind == ML_ORDER_BREADTH)
    {
      aux = malloc ((n ? n : 1) * sizeof *aux);
      if (!aux)
        goto oom;
      if ((rc = breadth_ranks (bufs, aux, err)) < 0)
        goto out;
    }
  else if (kind == ML_ORDER_CONFLICT)
    {
      starts = malloc ((n ? n : 1) * sizeof *starts);
      ends = malloc ((n ? n : 1) * sizeof *ends);
      if (!starts || !ends)
        goto oom;
      for (size_t i = 0; i < n; i++)
        {
          starts[i] = bufs->buf[i].start;
          ends[i] = bufs->buf[i].end;
        }
      ml_sort_u64 (starts, n);
      ml_sort_u64 (ends, n);
    }
  for (size_t i = 0; i < n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      uint64_t size = b->rsize, life = b->end - b->start;
      Key k = { 0, 0, 0, (uint32_t) i };
      switch (kind)
        {
        case ML_ORDER_SIZE:
          k.k1 = UINT64_MAX - size; k.k2 = UINT64_MAX - life; break;
        case ML_ORDER_BREADTH:
          k.k1 = aux[i]; k.k2 = UINT64_MAX - size; k.k3 = UINT64_MAX - life; break;
        case ML_ORDER_CONFLICT:
          {
            /* overlapping = n - (ends <= start) - (starts >= end) - itself */
            uint64_t before = ml_lower_bound_u64 (ends, n, b->start + 1);
            uint64_t after = n - ml_lower_bound_u64 (starts, n, b->end);
            uint64_t deg = n - before - after;
            k.k1 = UINT64_MAX - deg; k.k2 = UINT64_MAX - size; k.k3 = UINT64_MAX - life;
            break;
          }
        case ML_ORDER_AREA:
          {
            unsigned __int128 area = (unsigned __int128) size * life;
            k.k1 = area > UINT64_MAX ? 0 : UINT64_MAX - (uint64_t) area;
            k.k2 = UINT64_MAX - size;
            break;
          }
        case ML_ORDER_LIFETIME:
        default:
          k.k1 = UINT64_MAX - life; k.k2 = UINT64_MAX - size; break;
        }
      keys[i] = k;
    }
  qsort (keys, n, sizeof *keys, cmp_key);
  for (size_t i = 0; i < n; i++)
    order[i] = keys[i].idx;
  goto out;
oom:
  rc = ml_error_set (err, ML_ENOMEM, "out of memory ordering %zu buffers", n);
out:
  free (keys); free (aux); free (starts); free (ends);
  return rc;
}

static int
run_order (const MlBuffers *bufs, MlPlacer *p, MlOrder kind, uint32_t *order,
           uint64_t *offsets, uint64_t *peak, const MlKnobs *knobs, double deadline, MlError *err)
{
  int rc = _ml_greedy_order (bufs, kind, order, err);
  if (rc < 0)
    return rc;
  size_t placed = 0;
  rc = _ml_place_in_order (bufs, p, order, offsets, peak, knobs, deadline, &placed);
  if (rc == ML_ETIMEOUT)
    return ml_error_set (err, rc, "stopped at the time limit (%.3g s) after placing %zu of %zu buffers in %s order; no plan",
                         knobs->time_limit, placed, bufs->n, _ml_order_name (kind));
  if (rc == ML_ECANCELLED)
    return ml_error_set (err, rc, "cancelled");
  if (rc < 0)
    return ml_error_set (err, rc, "out of memory placing %zu buffers", bufs->n);
  return 0;
}

int
_ml_greedy_best (const MlBuffers *bufs, uint64_t *offsets, MlOrder *best, uint64_t *peak, const MlKnobs *knobs,
                 double deadline, int *tried, MlError *err)
{
  size_t n = bufs->n;
  MlPlacer *p = NULL;
  uint32_t *order = malloc ((n ? n : 1) * sizeof *order);
  uint64_t *tmp = malloc ((n ? n : 1) * sizeof *tmp);
  int rc;
  if (!order || !tmp)
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory planning %zu buffers", n);
      goto out;
    }
  if ((rc = _ml_placer_new (bufs, &p, err)) < 0)
    goto out;
  uint64_t best_peak = UINT64_MAX;
  if (tried)
    *tried = 0;
  for (int k = 0; k < ML_ORDER__COUNT; k++)
    {
      uint64_t pk;
      MlError e2 = { 0 };
      if ((rc = run_order (bufs, p, (MlOrder) k, order, tmp, &pk, knobs, deadline, &e2)) < 0)
        {
          if (rc == ML_ETIMEOUT && best_peak != UINT64_MAX)
            {
              rc = 0;   /* the best of the orders that finished */
              break;
            }
          if (err)
            *err = e2;
          goto out;
        }
      if (tried)
        *tried = k + 1;
      if (pk < best_peak)
        {
          best_peak = pk;
          memcpy (offsets, tmp, n * sizeof *tmp);
          if (best)
            *best = (MlOrder) k;
        }
    }
  *peak = best_peak;
out:
  _ml_placer_free (p);
  free (order);
  free (tmp);
  return rc;
}

static int
plan_order (const MlBuffers *bufs, MlOrder kind, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  MlPlacer *p = NULL;
  uint32_t *order = malloc ((bufs->n ? bufs->n : 1) * sizeof *order);
  int rc;
  if (!order)
    return ml_error_set (err, ML_ENOMEM, "out of memory planning %zu buffers", bufs->n);
  uint64_t peak;
  if ((rc = _ml_placer_new (bufs, &p, err)) == 0)
    rc = run_order (bufs, p, kind, order, plan->offset, &peak, knobs, _ml_user_deadline (knobs), err);
  _ml_placer_free (p);
  free (order);
  return rc;
}

static int
size_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  return plan_order (bufs, ML_ORDER_SIZE, knobs, plan, err);
}

static int
breadth_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  return plan_order (bufs, ML_ORDER_BREADTH, knobs, plan, err);
}

static int
conflict_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  return plan_order (bufs, ML_ORDER_CONFLICT, knobs, plan, err);
}

static int
hybrid_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  MlOrder best = ML_ORDER_SIZE;
  uint64_t peak;
  int tried = 0;
  int rc = _ml_greedy_best (bufs, plan->offset, &best, &peak, knobs, _ml_user_deadline (knobs), &tried, err);
  if (rc < 0)
    return rc;
  char note[128];
  if (tried < ML_ORDER__COUNT)
    snprintf (note, sizeof note, "best order: %s; stopped at the time limit (%.3g s) after %d of %d orders",
              _ml_order_name (best), knobs->time_limit, tried, ML_ORDER__COUNT);
  else
    snprintf (note, sizeof note, "best order: %s", _ml_order_name (best));
  if (ml_plan_set_note (plan, note) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  return 0;
}

const MlStrategy ml_strategy_greedy_size = {
  .name = "greedy-size",
  .summary = "offline: largest first, each at the lowest fitting offset (TFLite); ~O(n log n)",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_DEFAULT,
  .knobs = ML_KNOB_TIME_LIMIT,
  .plan = size_plan,
};

const MlStrategy ml_strategy_greedy_breadth = {
  .name = "greedy-breadth",
  .summary = "offline: widest time steps first, their buffers largest first (TFLite by breadth)",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_DEFAULT,
  .knobs = ML_KNOB_TIME_LIMIT,
  .plan = breadth_plan,
};

const MlStrategy ml_strategy_greedy_conflict = {
  .name = "greedy-conflict",
  .summary = "offline: buffers overlapping the most others first, lowest fitting offset",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_DEFAULT,
  .knobs = ML_KNOB_TIME_LIMIT,
  .plan = conflict_plan,
};

const MlStrategy ml_strategy_hybrid = {
  .name = "hybrid",
  .summary = "offline: five greedy orders, keeps the smallest peak (Ascend GE style)",
  .kind = ML_STRATEGY_OFFLINE,
  .flags = ML_STRATEGY_DEFAULT,
  .knobs = ML_KNOB_TIME_LIMIT,
  .plan = hybrid_plan,
};
