/* placer.c — the time-indexed lowest-fit placer the offline planners share
 * (see planner-private.h).
 *
 * Placed buffers are rectangles [ls, le) x [off, top) over the compressed
 * ticks (leaves). The leaves are cut into buckets of 2^shift leaves, and
 * each bucket keeps, sorted by offset, every rectangle that touches it (a
 * rectangle of L leaves is in about L / 2^shift + 1 buckets). The
 * rectangles that overlap a query [qs, qe) in time are those of the
 * buckets it touches that pass an exact time test, each counted only in
 * the first of those buckets that holds it.
 *
 * In one bucket the lowest fit of @size bytes at or above c is one sweep
 * in offset order: a rectangle that overlaps the query and starts below
 * c + size lifts c to its top (no offset in between can fit), and the
 * first that starts at or above c + size ends the sweep with c the
 * answer. The sweep resumes where it stopped when c is raised, because
 * everything swept lies below the old c. Over the buckets of a query the
 * candidate goes round them, each lifting it to its own lowest fit, until
 * all have accepted it since it last moved (never past the answer, which
 * fits in every bucket). Each bucket is swept at most once per placement,
 * so one placement costs the rectangles of its buckets below the answer.
 *
 * The bucket width is the power of two that minimises copies^2 / buckets
 * (copies: bucket entries over all buffers), which is the expected number
 * of entries in the buckets of a query: about 4x the live set at the best
 * width when lifetimes are alike, one bucket (a plain scan) when every
 * buffer lives through the whole trace. Buckets hold their entries in
 * chunks of 64 so that inserting costs a short move, not a bucket's
 * length.
 *
 * Why not a segment tree of treaps (the previous placer): a query there
 * met ~28 treaps whose holes rarely lined up (about 600 treap walks per
 * placement on a random 62k-buffer trace, each a few cache misses), and
 * each buffer went into ~35 treaps; the buckets' sweeps read contiguous
 * memory. docs/strategies.md, "The shared placer", has the measurements.
 */
#include "strategies/planner-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/sort.h"
#include "sim/sim.h"
#include "strategies/placer-private.h"

/* where one bucket's sweep stands during a placement */
typedef struct {
  uint32_t       bucket;
  uint64_t       fits_below;  /* the sweep stopped at an entry starting here */
  MlPlacerCursor cur;
} Sweep;

struct MlPlacer {
  const MlBuffers *bufs;
  uint32_t  leaves, shift, n_buckets;
  uint32_t *ls, *le;      /* per buffer: leaf range [ls, le) */
  uint64_t *offset;       /* per placed buffer */
  MlPlacerBucket *bucket;
  MlPlacerPool    pool;
  Sweep    *sweep;        /* scratch: one per bucket of a query */
  uint64_t  work;         /* entries and summaries the sweeps looked at */
  bool      failed;       /* out of memory growing the pool */
};

/* The bucket width 2^shift with the fewest expected entries per query. */
static uint32_t
choose_shift (const MlPlacer *p)
{
  const MlBuffers *bufs = p->bufs;
  uint32_t best = 0;
  double best_cost = -1;
  for (uint32_t sh = 0; sh < 32; sh++)
    {
      double copies = 0;
      for (size_t i = 0; i < bufs->n; i++)
        if (bufs->buf[i].rsize && p->ls[i] < p->le[i])
          copies += (double) (((p->le[i] - 1) >> sh) - (p->ls[i] >> sh) + 1);
      double buckets = (double) (((uint64_t) p->leaves + (1ull << sh) - 1) >> sh);
      double cost = copies * copies / buckets;
      if (best_cost < 0 || cost < best_cost)
        {
          best_cost = cost;
          best = sh;
        }
      if ((1ull << sh) >= p->leaves)
        break;
    }
  return best;
}

int
_ml_placer_new (const MlBuffers *bufs, MlPlacer **out, MlError *err)
{
  size_t n = bufs->n;
  MlPlacer *p = calloc (1, sizeof *p);
  uint64_t *t = malloc ((2 * n + 1) * sizeof *t);
  if (!p || !t)
    goto oom;
  p->bufs = bufs;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    {
      t[m++] = bufs->buf[i].start;
      t[m++] = bufs->buf[i].end;
    }
  size_t u = ml_sort_unique_u64 (t, m);
  p->leaves = u > 1 ? (uint32_t) (u - 1) : 1;
  p->ls = malloc ((n ? n : 1) * sizeof *p->ls);
  p->le = malloc ((n ? n : 1) * sizeof *p->le);
  p->offset = calloc (n ? n : 1, sizeof *p->offset);
  if (!p->ls || !p->le || !p->offset)
    goto oom;
  for (size_t i = 0; i < n; i++)
    {
      p->ls[i] = (uint32_t) ml_lower_bound_u64 (t, u, bufs->buf[i].start);
      p->le[i] = (uint32_t) ml_lower_bound_u64 (t, u, bufs->buf[i].end);
    }
  free (t);
  t = NULL;
  p->shift = choose_shift (p);
  p->n_buckets = (uint32_t) (((uint64_t) p->leaves + (1ull << p->shift) - 1) >> p->shift);
  p->bucket = malloc (p->n_buckets * sizeof *p->bucket);
  p->sweep = malloc (p->n_buckets * sizeof *p->sweep);
  if (!p->bucket || !p->sweep || _ml_placer_pool_init (&p->pool) < 0)
    goto oom;
  for (uint32_t j = 0; j < p->n_buckets; j++)
    p->bucket[j] = (MlPlacerBucket) { .root = ML_PLACER_NIL };
  *out = p;
  return 0;
oom:
  free (t);
  _ml_placer_free (p);
  return ml_error_set (err, ML_ENOMEM, "out of memory indexing %zu buffers by time", n);
}

void
_ml_placer_free (MlPlacer *p)
{
  if (!p)
    return;
  free (p->bucket);
  free (p->sweep);
  _ml_placer_pool_clear (&p->pool);
  free (p->ls);
  free (p->le);
  free (p->offset);
  free (p);
}

void
_ml_placer_reset (MlPlacer *p)
{
  for (uint32_t j = 0; j < p->n_buckets; j++)
    p->bucket[j].root = ML_PLACER_NIL;
  _ml_placer_pool_reset (&p->pool);
}

bool
_ml_placer_failed (const MlPlacer *p)
{
  return p->failed;
}

uint64_t
_ml_placer_work (const MlPlacer *p)
{
  return p->work;
}

uint32_t
_ml_placer_bucket_leaves (const MlPlacer *p)
{
  return 1u << p->shift;
}

void
_ml_placer_set_node_limits (MlPlacer *p, uint32_t leaf, uint32_t fan)
{
  p->pool.leaf_cap = leaf >= 2 && leaf <= ML_PLACER_LEAF ? leaf : ML_PLACER_LEAF;
  p->pool.fan = fan >= 2 && fan <= ML_PLACER_FAN ? fan : ML_PLACER_FAN;
}

/* --- placements ------------------------------------------------------- */

static inline bool
placed_rect (const MlPlacer *p, uint32_t b)
{
  return p->bufs->buf[b].rsize != 0 && p->ls[b] < p->le[b];
}

void
_ml_placer_put (MlPlacer *p, uint32_t b, uint64_t offset)
{
  p->offset[b] = offset;
  if (!placed_rect (p, b))
    return;
  MlPlacerEnt x = { offset, offset + p->bufs->buf[b].rsize, p->ls[b], p->le[b], b, 0 };
  for (uint32_t j = p->ls[b] >> p->shift; j <= (p->le[b] - 1) >> p->shift; j++)
    if (!_ml_bucket_insert (&p->pool, &p->bucket[j], &x))
      {
        p->failed = true;
        return;
      }
}

void
_ml_placer_remove (MlPlacer *p, uint32_t b)
{
  if (!placed_rect (p, b))
    return;
  for (uint32_t j = p->ls[b] >> p->shift; j <= (p->le[b] - 1) >> p->shift; j++)
    _ml_bucket_remove (&p->pool, &p->bucket[j], p->offset[b], b);
}

uint64_t
_ml_placer_peak (MlPlacer *p)
{
  uint64_t m = 0;
  for (uint32_t j = 0; j < p->n_buckets; j++)
    {
      uint64_t t = _ml_bucket_max_top (&p->bucket[j]);
      if (t > m)
        m = t;
    }
  return m;
}

/* The query of buffer @b on bucket @j, whose first bucket is @j0. */
static inline MlPlacerQuery
query (const MlPlacer *p, uint32_t b, uint32_t j, uint32_t j0)
{
  return (MlPlacerQuery) { p->ls[b], p->le[b], j << p->shift, j == j0, p->bufs->buf[b].rsize };
}

uint64_t
_ml_placer_place (MlPlacer *p, uint32_t b, uint64_t min_off)
{
  uint64_t size = p->bufs->buf[b].rsize;
  if (!placed_rect (p, b))
    {
      p->offset[b] = size ? min_off : 0;
      return p->offset[b];
    }
  uint32_t j0 = p->ls[b] >> p->shift, j1 = (p->le[b] - 1) >> p->shift;
  size_t live = 0;
  for (uint32_t j = j0; j <= j1; j++)
    if (p->bucket[j].root != ML_PLACER_NIL)
      {
        p->sweep[live].bucket = j;
        p->sweep[live].fits_below = 0;
        p->sweep[live++].cur.depth = 0;
      }
  /* each bucket in turn lifts the candidate to its own lowest fit at or
   * above it; stop once every live bucket has accepted the candidate
   * since it last moved. A bucket swept to its end fits everything above
   * and is dropped */
  uint64_t at = min_off;
  size_t i = 0, quiet = 0;
  while (live && quiet < live)
    {
      if (i >= live)
        i = 0;
      Sweep *s = &p->sweep[i];
      if (at + size <= s->fits_below)
        {
          /* the entry that stopped this sweep still lies above */
          quiet++;
          i++;
          continue;
        }
      uint64_t h = at;
      MlPlacerQuery q = query (p, b, s->bucket, j0);
      if (!_ml_bucket_sweep (&p->pool, &p->bucket[s->bucket], &s->cur, &q, &h, &s->fits_below, &p->work))
        {
          if (h > at)
            {
              at = h;
              quiet = 0;
            }
          /* keep the cyclic order so that quiet counts distinct buckets */
          memmove (s, s + 1, (live - i - 1) * sizeof *s);
          live--;
          continue;
        }
      if (h > at)
        {
          at = h;
          quiet = 1;
        }
      else
        quiet++;
      i++;
    }
  _ml_placer_put (p, b, at);
  return at;
}

uint32_t
_ml_placer_random_neighbour (MlPlacer *p, uint32_t b, uint64_t *rng)
{
  if (!placed_rect (p, b))
    return b;
  uint32_t j0 = p->ls[b] >> p->shift, j1 = (p->le[b] - 1) >> p->shift;
  /* count the placed rectangles that overlap b in time, then take the
   * r-th of them in the same order (buckets in turn, each by offset) */
  uint64_t count = 0;
  for (uint32_t j = j0; j <= j1; j++)
    {
      MlPlacerQuery q = query (p, b, j, j0);
      count += _ml_bucket_count (&p->pool, &p->bucket[j], &q);
    }
  if (count == 0)
    return b;
  *rng ^= *rng << 13; *rng ^= *rng >> 7; *rng ^= *rng << 17;
  uint64_t r = *rng % count;
  for (uint32_t j = j0; j <= j1; j++)
    {
      MlPlacerQuery q = query (p, b, j, j0);
      uint64_t c = _ml_bucket_count (&p->pool, &p->bucket[j], &q);
      if (r < c)
        return _ml_bucket_nth (&p->pool, &p->bucket[j], &q, r);
      r -= c;
    }
  return b;
}

double
_ml_user_deadline (const MlKnobs *knobs)
{
  return knobs && knobs->time_limit > 0 ? ml_now () + knobs->time_limit : 0;
}

int
_ml_place_in_order (const MlBuffers *bufs, MlPlacer *p, const uint32_t *order,
                    uint64_t *offsets, uint64_t *peak, const MlKnobs *knobs, double deadline,
                    size_t *placed)
{
  uint64_t top = 0;
  _ml_placer_reset (p);
  if (placed)
    *placed = 0;
  for (size_t i = 0; i < bufs->n; i++)
    {
      if ((i & 255) == 255)
        {
          if (placed)
            *placed = i;
          if (deadline > 0 && ml_now () >= deadline)
            return ML_ETIMEOUT;
          if (_ml_cancelled (knobs))
            return ML_ECANCELLED;
          if ((i & 16383) == 16383)
            _ml_report (knobs, (double) i / (double) bufs->n, "placing");
        }
      uint32_t b = order[i];
      uint64_t off = _ml_placer_place (p, b, 0);
      offsets[b] = off;
      if (off + bufs->buf[b].rsize > top)
        top = off + bufs->buf[b].rsize;
    }
  *peak = top;
  if (placed)
    *placed = bufs->n;
  return p->failed ? ML_ENOMEM : 0;
}

uint64_t
_ml_offsets_peak (const MlBuffers *bufs, const uint64_t *offsets)
{
  uint64_t top = 0;
  for (size_t i = 0; i < bufs->n; i++)
    if (bufs->buf[i].rsize && offsets[i] + bufs->buf[i].rsize > top)
      top = offsets[i] + bufs->buf[i].rsize;
  return top;
}
