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

typedef struct {
  uint64_t off, top;
  uint32_t ls, le;   /* leaf range */
  uint32_t id, pad;
} Ent;

#define CHUNK 64
#define NIL   UINT32_MAX

typedef struct {
  uint32_t n;        /* entries in use; the free list's link when free */
  Ent      e[CHUNK];
} Chunk;

typedef struct {
  uint32_t *chunk;   /* chunk ids in offset order */
  uint32_t  n_chunk, cap_chunk;
  uint64_t  max_top; /* highest top in the bucket, exact unless stale */
  bool      stale;
} Bucket;

/* where one bucket's sweep stands during a placement */
typedef struct {
  uint32_t bucket, ci, ei;
  uint64_t fits_below;  /* the sweep stopped at an entry starting here */
} Sweep;

struct MlPlacer {
  const MlBuffers *bufs;
  uint32_t  leaves, shift, n_buckets;
  uint32_t *ls, *le;      /* per buffer: leaf range [ls, le) */
  uint64_t *offset;       /* per placed buffer */
  Bucket   *bucket;
  Chunk    *pool;
  uint32_t  n_pool, cap_pool, free_chunk;
  Sweep    *sweep;        /* scratch: one per bucket of a query */
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
  p->free_chunk = NIL;
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
  p->bucket = calloc (p->n_buckets, sizeof *p->bucket);
  p->sweep = malloc (p->n_buckets * sizeof *p->sweep);
  p->cap_pool = 64;
  p->pool = malloc (p->cap_pool * sizeof *p->pool);
  if (!p->bucket || !p->sweep || !p->pool)
    goto oom;
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
  if (p->bucket)
    for (uint32_t j = 0; j < p->n_buckets; j++)
      free (p->bucket[j].chunk);
  free (p->bucket);
  free (p->sweep);
  free (p->pool);
  free (p->ls);
  free (p->le);
  free (p->offset);
  free (p);
}

void
_ml_placer_reset (MlPlacer *p)
{
  for (uint32_t j = 0; j < p->n_buckets; j++)
    {
      p->bucket[j].n_chunk = 0;
      p->bucket[j].max_top = 0;
      p->bucket[j].stale = false;
    }
  p->n_pool = 0;
  p->free_chunk = NIL;
}

bool
_ml_placer_failed (const MlPlacer *p)
{
  return p->failed;
}

uint32_t
_ml_placer_bucket_leaves (const MlPlacer *p)
{
  return 1u << p->shift;
}

/* --- one bucket: chunks of entries sorted by (off, id) ---------------- */

static inline bool
before (uint64_t off, uint32_t id, const Ent *e)
{
  return off < e->off || (off == e->off && id < e->id);
}

static uint32_t
chunk_new (MlPlacer *p)
{
  if (p->free_chunk != NIL)
    {
      uint32_t c = p->free_chunk;
      p->free_chunk = p->pool[c].n;
      p->pool[c].n = 0;
      return c;
    }
  if (p->n_pool == p->cap_pool)
    {
      uint32_t cap = p->cap_pool * 2;
      Chunk *pool = cap > p->cap_pool ? realloc (p->pool, (size_t) cap * sizeof *pool) : NULL;
      if (!pool)
        return NIL;
      p->pool = pool;
      p->cap_pool = cap;
    }
  p->pool[p->n_pool].n = 0;
  return p->n_pool++;
}

static void
chunk_release (MlPlacer *p, uint32_t c)
{
  p->pool[c].n = p->free_chunk;
  p->free_chunk = c;
}

/* The chunk of @B that holds (or would hold) key (off, id): the last
 * whose first entry is not after it, or the first. */
static uint32_t
find_chunk (const MlPlacer *p, const Bucket *B, uint64_t off, uint32_t id)
{
  uint32_t lo = 0, hi = B->n_chunk;
  while (hi - lo > 1)
    {
      uint32_t mid = lo + (hi - lo) / 2;
      if (before (off, id, &p->pool[B->chunk[mid]].e[0]))
        hi = mid;
      else
        lo = mid;
    }
  return lo;
}

/* The first entry of @c not before (off, id). */
static uint32_t
find_entry (const Chunk *c, uint64_t off, uint32_t id)
{
  uint32_t lo = 0, hi = c->n;
  while (lo < hi)
    {
      uint32_t mid = lo + (hi - lo) / 2;
      if (before (off, id, &c->e[mid]) || (c->e[mid].off == off && c->e[mid].id == id))
        hi = mid;
      else
        lo = mid + 1;
    }
  return lo;
}

static bool
bucket_insert (MlPlacer *p, Bucket *B, const Ent *x)
{
  if (B->n_chunk == 0 || B->n_chunk == B->cap_chunk)
    {
      if (B->n_chunk == B->cap_chunk)
        {
          uint32_t cap = B->cap_chunk ? 2 * B->cap_chunk : 4;
          uint32_t *v = realloc (B->chunk, cap * sizeof *v);
          if (!v)
            return false;
          B->chunk = v;
          B->cap_chunk = cap;
        }
      if (B->n_chunk == 0)
        {
          uint32_t c = chunk_new (p);
          if (c == NIL)
            return false;
          B->chunk[B->n_chunk++] = c;
        }
    }
  uint32_t ci = find_chunk (p, B, x->off, x->id);
  Chunk *c = &p->pool[B->chunk[ci]];
  if (c->n == CHUNK)
    {
      /* split: the upper half goes to a new chunk after this one */
      uint32_t d = chunk_new (p);
      if (d == NIL)
        return false;
      c = &p->pool[B->chunk[ci]];
      Chunk *e = &p->pool[d];
      memcpy (e->e, c->e + CHUNK / 2, CHUNK / 2 * sizeof *e->e);
      e->n = CHUNK / 2;
      c->n = CHUNK / 2;
      memmove (B->chunk + ci + 2, B->chunk + ci + 1, (B->n_chunk - ci - 1) * sizeof *B->chunk);
      B->chunk[ci + 1] = d;
      B->n_chunk++;
      if (!before (x->off, x->id, &e->e[0]))
        c = e;
    }
  uint32_t k = find_entry (c, x->off, x->id);
  memmove (c->e + k + 1, c->e + k, (c->n - k) * sizeof *c->e);
  c->e[k] = *x;
  c->n++;
  if (x->top > B->max_top)
    B->max_top = x->top;
  return true;
}

static void
bucket_remove (MlPlacer *p, Bucket *B, uint64_t off, uint32_t id)
{
  if (B->n_chunk == 0)
    return;
  uint32_t ci = find_chunk (p, B, off, id);
  Chunk *c = &p->pool[B->chunk[ci]];
  uint32_t k = find_entry (c, off, id);
  if (k == c->n || c->e[k].off != off || c->e[k].id != id)
    return;
  if (c->e[k].top >= B->max_top)
    B->stale = true;
  memmove (c->e + k, c->e + k + 1, (c->n - k - 1) * sizeof *c->e);
  if (--c->n == 0)
    {
      chunk_release (p, B->chunk[ci]);
      memmove (B->chunk + ci, B->chunk + ci + 1, (B->n_chunk - ci - 1) * sizeof *B->chunk);
      B->n_chunk--;
    }
}

static uint64_t
bucket_max_top (MlPlacer *p, Bucket *B)
{
  if (B->stale)
    {
      uint64_t m = 0;
      for (uint32_t ci = 0; ci < B->n_chunk; ci++)
        {
          const Chunk *c = &p->pool[B->chunk[ci]];
          for (uint32_t k = 0; k < c->n; k++)
            if (c->e[k].top > m)
              m = c->e[k].top;
        }
      B->max_top = m;
      B->stale = false;
    }
  return B->max_top;
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
  Ent x = { offset, offset + p->bufs->buf[b].rsize, p->ls[b], p->le[b], b, 0 };
  for (uint32_t j = p->ls[b] >> p->shift; j <= (p->le[b] - 1) >> p->shift; j++)
    if (!bucket_insert (p, &p->bucket[j], &x))
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
    bucket_remove (p, &p->bucket[j], p->offset[b], b);
}

uint64_t
_ml_placer_peak (MlPlacer *p)
{
  uint64_t m = 0;
  for (uint32_t j = 0; j < p->n_buckets; j++)
    {
      uint64_t t = bucket_max_top (p, &p->bucket[j]);
      if (t > m)
        m = t;
    }
  return m;
}

/* Whether entry @e of bucket @j counts for the query [qs, qe) whose
 * first bucket is @j0: it overlaps in time, and @j is the first of the
 * query's buckets that holds it. */
static inline bool
counts (const Ent *e, uint32_t qs, uint32_t qe, uint32_t j, uint32_t j0, uint32_t shift)
{
  return e->ls < qe && e->le > qs && (j == j0 || e->ls >> shift == j);
}

/* Sweeps bucket @s->bucket from where it stopped with the candidate
 * *@at: raises *at past every rectangle of the query [qs, qe) that blocks
 * it and returns true when one starting at or above *at + size stopped
 * the sweep (false: the bucket is exhausted and fits anything at or above
 * *at). j0 is the query's first bucket: an entry counts only in the first
 * of the query's buckets that holds it. */
static bool
sweep (const MlPlacer *p, Sweep *s, uint32_t qs, uint32_t qe, uint32_t j0, uint64_t size, uint64_t *at)
{
  const Bucket *B = &p->bucket[s->bucket];
  uint64_t c = *at;
  uint32_t j = s->bucket, sh = p->shift;
  for (; s->ci < B->n_chunk; s->ci++, s->ei = 0)
    {
      const Chunk *ch = &p->pool[B->chunk[s->ci]];
      for (uint32_t k = s->ei; k < ch->n; k++)
        {
          const Ent *e = &ch->e[k];
          if (!counts (e, qs, qe, j, j0, sh))
            continue;
          if (e->off >= c + size)
            {
              s->ei = k;
              s->fits_below = e->off;
              *at = c;
              return true;
            }
          if (e->top > c)
            c = e->top;
        }
    }
  *at = c;
  return false;
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
  uint32_t qs = p->ls[b], qe = p->le[b], j0 = qs >> p->shift, j1 = (qe - 1) >> p->shift;
  size_t live = 0;
  for (uint32_t j = j0; j <= j1; j++)
    if (p->bucket[j].n_chunk)
      p->sweep[live++] = (Sweep) { j, 0, 0, 0 };
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
      if (!sweep (p, s, qs, qe, j0, size, &h))
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
  uint32_t qs = p->ls[b], qe = p->le[b], j0 = qs >> p->shift, j1 = (qe - 1) >> p->shift;
  /* count the placed rectangles that overlap b in time, then take the
   * r-th of them in the same order */
  uint64_t count = 0, r = 0;
  for (int pass = 0; pass < 2; pass++)
    {
      if (pass == 1)
        {
          if (count == 0)
            return b;
          *rng ^= *rng << 13; *rng ^= *rng >> 7; *rng ^= *rng << 17;
          r = *rng % count;
          count = 0;
        }
      for (uint32_t j = j0; j <= j1; j++)
        {
          const Bucket *B = &p->bucket[j];
          for (uint32_t ci = 0; ci < B->n_chunk; ci++)
            {
              const Chunk *ch = &p->pool[B->chunk[ci]];
              for (uint32_t k = 0; k < ch->n; k++)
                {
                  const Ent *e = &ch->e[k];
                  if (!counts (e, qs, qe, j, j0, p->shift))
                    continue;
                  if (pass == 1 && count == r)
                    return e->id;
                  count++;
                }
            }
        }
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
