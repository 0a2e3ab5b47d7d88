/* placer.c — the time-indexed lowest-fit placer the offline planners share
 * (see planner-private.h).
 *
 * Placed buffers are rectangles [ls, le) x [off, top) over the compressed
 * ticks (leaves). The leaves are cut into buckets of 2^shift leaves. A
 * rectangle is kept in the bucket where it starts, in the bucket where it
 * ends when it ends inside a later one (a second tree per bucket: only a
 * query that starts in that bucket counts them, so the others never read
 * them), and, for the buckets it covers whole in between, in the
 * full-cover tree: a segment tree over the buckets whose node holds the
 * rectangles that cover its buckets whole (at most two nodes a level). Each bucket and node keeps its rectangles
 * by offset in a B+ tree with summaries (placer-bucket.c). The rectangles
 * that overlap a query [qs, qe) in time are those of the buckets it
 * touches that pass an exact time test, each counted only where it
 * starts (or in the first bucket when it started before), and those of
 * the tree's nodes above its first bucket, which all overlap it.
 *
 * In one bucket or node the lowest fit of @size bytes at or above c is one
 * sweep in offset order: a rectangle that counts and starts below c + size
 * lifts c to its top (no offset in between can fit), and the first that
 * starts at or above c + size ends the sweep with c the answer; the
 * summaries skip what cannot do either and lift past gapless runs whole.
 * The sweep resumes where it stopped when c is raised, because everything
 * swept lies below the old c. The candidate goes round the sweeps, each
 * lifting it to its own lowest fit, until all have accepted it since it
 * last moved (never past the answer, which fits in every one). Each is
 * swept at most once per placement, so one placement costs the counted
 * rectangles below the answer that the summaries do not skip.
 *
 * The bucket width: see choose_shift. Long lifetimes cost one entry per
 * tree level instead of one per bucket, so buckets can be narrow where
 * short buffers are many and long ones few (a training run).
 */
#include "strategies/planner-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/sort.h"
#include "sim/sim.h"
#include "strategies/placer-private.h"

/* where one sweep stands during a placement: a bucket of partial
 * rectangles or a node of the full-cover tree, its query, its cursor */
typedef struct {
  MlPlacerBucket *B;
  MlPlacerQuery   q;
  uint64_t        fits_below;  /* the sweep stopped at an entry starting here */
  MlPlacerCursor  cur;
} Sweep;

struct MlPlacer {
  const MlBuffers *bufs;
  uint32_t  leaves, shift, n_buckets;
  uint32_t *ls, *le;      /* per buffer: leaf range [ls, le) */
  uint64_t *offset;       /* per placed buffer: own_offset, or the caller's (_ml_place_in_order) */
  uint64_t *own_offset;   /* calloc'd: untouched pages cost no memory while borrowed */
  MlPlacerBucket *bucket; /* 2 n_buckets: [j] the rectangles starting in bucket j,
                           * [n_buckets + j] those that end in j, started before */
  MlPlacerBucket *full;   /* 2 seg: the full-cover tree, node 1 the root */
  uint32_t  seg;          /* its leaves: a power of two >= n_buckets */
  MlPlacerPool    pool;
  Sweep    *sweep;        /* scratch: one per bucket and tree level of a query */
  uint32_t *ring;         /* scratch: the next live sweep of each */
  uint64_t  work;         /* entries and summaries the sweeps looked at */
  bool      failed;       /* out of memory growing the pool */
};

/* Where a rectangle lives: the bucket it starts in (always), the bucket
 * it ends in when it ends inside one after that (e, NIL when none), and
 * the buckets it covers whole after its first, [fa, fb), in the
 * full-cover tree. */
typedef struct {
  uint32_t a, e, fa, fb;
} Home;

static Home
home_of (uint32_t ls, uint32_t le, uint32_t shift, uint32_t leaves)
{
  Home h = { ls >> shift, ML_PLACER_NIL, 0, 0 };
  uint32_t last = (le - 1) >> shift;
  if (last == h.a)
    return h;
  uint64_t end = ((uint64_t) last + 1) << shift;
  if (end > leaves)
    end = leaves;
  h.fa = h.a + 1;
  if (le < end)
    h.e = h.fb = last;
  else
    h.fb = last + 1;
  return h;
}

static uint32_t
ceil_log2 (uint64_t v)
{
  uint32_t k = 0;
  while ((1ull << k) < v)
    k++;
  return k;
}

/* The bucket width 2^shift. The expected number of bucket entries a
 * query meets if every rectangle were copied into each bucket it touches
 * is copies^2 / buckets (copies: those entries over all buffers); that
 * width is near the mean lifetime when lifetimes are alike, and one
 * bucket when every buffer overlaps every other. Here a rectangle lives
 * only in the buckets where it starts or ends, and the full-cover tree
 * holds it elsewhere, where its summaries let a sweep lift past whole
 * stacks: wider buckets then cost less than that estimate says, and
 * measured best four times wider (S_1, pangu_2.6B, a 62,000-buffer random
 * trace and a 10^6-buffer training run: docs/performance.md). */
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
  uint32_t one = ceil_log2 (p->leaves);   /* one bucket for the whole trace */
  return best + 2 < one ? best + 2 : best > one ? best : one;
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
  p->offset = p->own_offset = calloc (n ? n : 1, sizeof *p->offset);
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
  p->seg = 1u << ceil_log2 (p->n_buckets);
  p->bucket = malloc (2 * (size_t) p->n_buckets * sizeof *p->bucket);
  p->full = malloc (2 * (size_t) p->seg * sizeof *p->full);
  p->sweep = malloc ((p->n_buckets + ceil_log2 (p->seg) + 3) * sizeof *p->sweep);
  p->ring = malloc ((p->n_buckets + ceil_log2 (p->seg) + 3) * sizeof *p->ring);
  if (!p->bucket || !p->full || !p->sweep || !p->ring || _ml_placer_pool_init (&p->pool) < 0)
    goto oom;
  _ml_placer_reset (p);
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
  free (p->full);
  free (p->sweep);
  free (p->ring);
  _ml_placer_pool_clear (&p->pool);
  free (p->ls);
  free (p->le);
  free (p->own_offset);
  free (p);
}

void
_ml_placer_reset (MlPlacer *p)
{
  p->offset = p->own_offset;
  for (uint32_t j = 0; j < 2 * p->n_buckets; j++)
    p->bucket[j].root = ML_PLACER_NIL;
  for (uint32_t k = 0; k < 2 * p->seg; k++)
    p->full[k].root = ML_PLACER_NIL;
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

/* Inserts (or removes) @x in the full-cover tree's nodes that cover
 * [fa, fb) exactly (at most two a level). */
static bool
full_apply (MlPlacer *p, uint32_t fa, uint32_t fb, const MlPlacerEnt *x, bool insert)
{
  for (uint32_t l = fa + p->seg, r = fb + p->seg; l < r; l >>= 1, r >>= 1)
    for (int side = 0; side < 2; side++)
      {
        uint32_t k;
        if (side == 0 && (l & 1))
          k = l++;
        else if (side == 1 && (r & 1))
          k = --r;
        else
          continue;
        if (!insert)
          _ml_bucket_remove (&p->pool, &p->full[k], x->off, x->id);
        else if (!_ml_bucket_insert (&p->pool, &p->full[k], x))
          return false;
      }
  return true;
}

void
_ml_placer_put (MlPlacer *p, uint32_t b, uint64_t offset)
{
  p->offset[b] = offset;
  if (!placed_rect (p, b))
    return;
  MlPlacerEnt x = { offset, offset + p->bufs->buf[b].rsize, p->ls[b], p->le[b], b, 0 };
  Home h = home_of (p->ls[b], p->le[b], p->shift, p->leaves);
  if (!_ml_bucket_insert (&p->pool, &p->bucket[h.a], &x)
      || (h.e != ML_PLACER_NIL && !_ml_bucket_insert (&p->pool, &p->bucket[p->n_buckets + h.e], &x))
      || !full_apply (p, h.fa, h.fb, &x, true))
    p->failed = true;
}

void
_ml_placer_remove (MlPlacer *p, uint32_t b)
{
  if (!placed_rect (p, b))
    return;
  MlPlacerEnt x = { p->offset[b], 0, 0, 0, b, 0 };
  Home h = home_of (p->ls[b], p->le[b], p->shift, p->leaves);
  _ml_bucket_remove (&p->pool, &p->bucket[h.a], x.off, b);
  if (h.e != ML_PLACER_NIL)
    _ml_bucket_remove (&p->pool, &p->bucket[p->n_buckets + h.e], x.off, b);
  full_apply (p, h.fa, h.fb, &x, false);
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

/* The sweeps of buffer @b's query into p->sweep: the buckets its
 * lifetime touches (a rectangle counts in the first of them that holds
 * it: there where it starts, or in the first when it started before),
 * then the full-cover tree's nodes above the first bucket (their
 * rectangles cover it whole: they all count). Returns how many; empty
 * ones are left out. */
static size_t
query_sweeps (MlPlacer *p, uint32_t b)
{
  uint32_t j0 = p->ls[b] >> p->shift, j1 = (p->le[b] - 1) >> p->shift;
  uint64_t size = p->bufs->buf[b].rsize;
  size_t live = 0;
  for (uint32_t j = j0; j <= j1 + 1; j++)
    {
      /* the first bucket's rectangles that end there come last */
      uint32_t at = j <= j1 ? j : p->n_buckets + j0, jj = j <= j1 ? j : j0;
      if (p->bucket[at].root == ML_PLACER_NIL)
        continue;
      Sweep *s = &p->sweep[live++];
      s->B = &p->bucket[at];
      s->q = (MlPlacerQuery) { p->ls[b], p->le[b], jj << p->shift, jj == j0, size };
      s->fits_below = 0;
      s->cur.depth = 0;
    }
  for (uint32_t k = j0 + p->seg; k >= 1; k >>= 1)
    if (p->full[k].root != ML_PLACER_NIL)
      {
        Sweep *s = &p->sweep[live++];
        s->B = &p->full[k];
        s->q = (MlPlacerQuery) { p->ls[b], p->le[b], 0, true, size };
        s->fits_below = 0;
        s->cur.depth = 0;
      }
  return live;
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
  size_t live = query_sweeps (p, b);
  /* each sweep in turn lifts the candidate to its own lowest fit at or
   * above it; stop once every live one has accepted the candidate since
   * it last moved. A sweep that reached its end fits everything above
   * and leaves the ring (which keeps the cyclic order, so that quiet
   * counts distinct sweeps) */
  uint32_t *next = p->ring;
  for (size_t k = 0; k < live; k++)
    next[k] = (uint32_t) (k + 1 < live ? k + 1 : 0);
  uint64_t at = min_off;
  size_t i = 0, prev = live ? live - 1 : 0, quiet = 0;
  while (live && quiet < live)
    {
      Sweep *s = &p->sweep[i];
      if (at + size <= s->fits_below)
        {
          /* the entry that stopped this sweep still lies above */
          quiet++;
          prev = i;
          i = next[i];
          continue;
        }
      uint64_t h = at;
      if (!_ml_bucket_sweep (&p->pool, s->B, &s->cur, &s->q, &h, &s->fits_below, &p->work))
        {
          if (h > at)
            {
              at = h;
              quiet = 0;
            }
          next[prev] = next[i];
          i = next[i];
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
      prev = i;
      i = next[i];
    }
  _ml_placer_put (p, b, at);
  return at;
}

uint32_t
_ml_placer_random_neighbour (MlPlacer *p, uint32_t b, uint64_t *rng)
{
  if (!placed_rect (p, b))
    return b;
  /* count the placed rectangles that overlap b in time, then take the
   * r-th of them in the same order (the query's sweeps in turn, each by
   * offset; each rectangle counts in one of them) */
  size_t live = query_sweeps (p, b);
  uint64_t count = 0;
  for (size_t i = 0; i < live; i++)
    count += _ml_bucket_count (&p->pool, p->sweep[i].B, &p->sweep[i].q);
  if (count == 0)
    return b;
  *rng ^= *rng << 13; *rng ^= *rng >> 7; *rng ^= *rng << 17;
  uint64_t r = *rng % count;
  for (size_t i = 0; i < live; i++)
    {
      uint64_t c = _ml_bucket_count (&p->pool, p->sweep[i].B, &p->sweep[i].q);
      if (r < c)
        return _ml_bucket_nth (&p->pool, p->sweep[i].B, &p->sweep[i].q, r);
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
  p->offset = offsets;   /* one array of offsets, not two (issue 30: 8 bytes a buffer) */
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
