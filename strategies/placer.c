/* placer.c — the time-indexed lowest-fit placer the offline planners share
 * (see planner-private.h).
 *
 * Placed buffers are rectangles [start, end) x [off, top). A segment tree
 * over the compressed ticks stores each rectangle in the nodes that cover
 * its lifetime exactly (canonical nodes), and each node keeps two small
 * treaps keyed by offset whose nodes carry the largest top in their
 * subtree:
 *   own  the rectangles stored at the node (they span its whole range),
 *   sub  every rectangle stored in the node's subtree.
 * For a query lifetime [qs, qe), the rectangles that overlap it in time are
 * exactly own() of the nodes the query descends through partially and
 * sub() of its canonical nodes. Each treap node also keeps the lowest
 * offset in its subtree and an upper bound on the widest hole in the union
 * of the subtree's [off, top) ranges, so one walk finds a treap's lowest
 * hole of @size bytes at or above c, skipping subtrees that lie below c or
 * have no such hole. The candidate c starts at min_off and each treap in
 * turn lifts it to its own lowest hole (never past the answer, which is a
 * hole in every treap) until every treap has accepted it since it last
 * moved; a treap's last hole is remembered, so re-checking a candidate
 * still inside it is free. Cost per placement: O(r log n) for r treap
 * walks.
 *
 * Why its own treap and not sim/base/treap.c: these nodes carry what the
 * hole search needs (the lowest offset and the widest-hole bound of each
 * subtree, kept up on every rotation), thousands of small treaps share one
 * node pool that a reset recycles wholesale, and the walk is recursive
 * over children without parent links. MlTreap keeps one maximum per
 * subtree, owns its node array and keeps parent links; adding the gap
 * bounds there would cost every other user of it (the online fit
 * strategies, the caching model, the checker) on each update.
 */
#include "strategies/planner-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/sort.h"
#include "sim/sim.h"

typedef struct {
  uint64_t off, top, max;  /* key, value, max value in subtree */
  uint32_t left, right, prio, id;
  uint64_t minoff;         /* smallest key in subtree */
  uint64_t gap;            /* an upper bound on the widest hole inside the
                            * union of the subtree's [off, top) ranges */
} TNode;

#define NIL UINT32_MAX

struct MlPlacer {
  const MlBuffers *bufs;
  uint32_t  leaves;       /* elementary time intervals */
  uint32_t *ls, *le;      /* per buffer: leaf range [ls, le) */
  uint32_t *own, *sub;    /* 4 * leaves treap roots */
  uint32_t *touched;      /* nodes ever filled since the reset */
  uint8_t  *is_touched;
  size_t    n_touched;
  TNode    *pool;
  uint32_t  n_pool, cap_pool;
  uint32_t  free_list;    /* recycled nodes, linked through left */
  uint64_t  rng;
  uint64_t *offset;       /* per placed buffer */
  uint32_t  qs, qe;
  uint32_t *roots;        /* scratch: treaps of one query */
  uint64_t *hend;         /* scratch: where the hole last found in each ends */
  size_t    n_roots;
  bool      failed;       /* out of memory growing the pool */
};

int
_ml_placer_new (const MlBuffers *bufs, MlPlacer **out, MlError *err)
{
  size_t n = bufs->n;
  MlPlacer *p = calloc (1, sizeof *p);
  uint64_t *t = malloc ((2 * n + 1) * sizeof *t);
  if (!p || !t)
    goto oom;
  p->bufs = bufs;
  p->rng = 0x9e3779b97f4a7c15ull;
  p->free_list = NIL;
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
  p->own = malloc (4 * (size_t) p->leaves * sizeof *p->own);
  p->sub = malloc (4 * (size_t) p->leaves * sizeof *p->sub);
  p->touched = malloc (4 * (size_t) p->leaves * sizeof *p->touched);
  p->roots = malloc (4 * (size_t) p->leaves * sizeof *p->roots);
  p->hend = malloc (4 * (size_t) p->leaves * sizeof *p->hend);
  p->is_touched = calloc (4 * (size_t) p->leaves, 1);
  p->cap_pool = n < 1024 ? 1024 : (uint32_t) (n * 8);
  p->pool = malloc (p->cap_pool * sizeof *p->pool);
  if (!p->ls || !p->le || !p->offset || !p->own || !p->sub || !p->touched || !p->is_touched || !p->roots || !p->hend || !p->pool)
    goto oom;
  for (size_t i = 0; i < 4 * (size_t) p->leaves; i++)
    p->own[i] = p->sub[i] = NIL;
  for (size_t i = 0; i < n; i++)
    {
      p->ls[i] = (uint32_t) ml_lower_bound_u64 (t, u, bufs->buf[i].start);
      p->le[i] = (uint32_t) ml_lower_bound_u64 (t, u, bufs->buf[i].end);
    }
  free (t);
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
  free (p->own);
  free (p->sub);
  free (p->touched);
  free (p->is_touched);
  free (p->roots);
  free (p->hend);
  free (p->pool);
  free (p->ls);
  free (p->le);
  free (p->offset);
  free (p);
}

void
_ml_placer_reset (MlPlacer *p)
{
  for (size_t i = 0; i < p->n_touched; i++)
    {
      p->own[p->touched[i]] = p->sub[p->touched[i]] = NIL;
      p->is_touched[p->touched[i]] = 0;
    }
  p->n_touched = 0;
  p->n_pool = 0;
  p->free_list = NIL;
  p->rng = 0x9e3779b97f4a7c15ull;
}

bool
_ml_placer_failed (const MlPlacer *p)
{
  return p->failed;
}

/* --- a treap in the shared pool, keyed by (off, id), max of top ------ */

static inline uint64_t
tmax (const MlPlacer *p, uint32_t t)
{
  return t == NIL ? 0 : p->pool[t].max;
}

static inline void
tfix (MlPlacer *p, uint32_t t)
{
  TNode *x = &p->pool[t];
  uint64_t m = x->top, l = tmax (p, x->left), r = tmax (p, x->right);
  x->max = m > l ? (m > r ? m : r) : (l > r ? l : r);
  /* holes of the union of the ranges in key order: those inside the left
   * part (nothing later starts below them), the one between the left part
   * and this range, the one between both and the right part, and those
   * inside the right part (an upper bound: ranges to their left may cover
   * them) */
  uint64_t g = 0, below = x->top;
  x->minoff = x->off;
  if (x->left != NIL)
    {
      const TNode *L = &p->pool[x->left];
      g = L->gap;
      if (x->off > L->max && x->off - L->max > g)
        g = x->off - L->max;
      if (L->max > below)
        below = L->max;
      x->minoff = L->minoff;
    }
  if (x->right != NIL)
    {
      const TNode *R = &p->pool[x->right];
      if (R->gap > g)
        g = R->gap;
      if (R->minoff > below && R->minoff - below > g)
        g = R->minoff - below;
    }
  x->gap = g;
}

static uint32_t
tinsert (MlPlacer *p, uint32_t root, uint32_t nn)
{
  if (root == NIL)
    return nn;
  TNode *x = &p->pool[root], *y = &p->pool[nn];
  bool go_left = y->off < x->off || (y->off == x->off && y->id < x->id);
  if (go_left)
    {
      uint32_t l = tinsert (p, x->left, nn);
      x = &p->pool[root];
      x->left = l;
      if (p->pool[l].prio > x->prio)
        {
          /* rotate right */
          x->left = p->pool[l].right;
          p->pool[l].right = root;
          tfix (p, root);
          tfix (p, l);
          return l;
        }
    }
  else
    {
      uint32_t r = tinsert (p, x->right, nn);
      x = &p->pool[root];
      x->right = r;
      if (p->pool[r].prio > x->prio)
        {
          x->right = p->pool[r].left;
          p->pool[r].left = root;
          tfix (p, root);
          tfix (p, r);
          return r;
        }
    }
  tfix (p, root);
  return root;
}

/* Walks treap @t in key order raising *@h over every range that
 * reaches above it, and stops (true) at the first range that starts at or
 * above *@h + @size: [*h, *h + size) is then free of the whole treap. A
 * subtree whose ranges all end at or below *h cannot move it; one that
 * starts below *h + size and has no inner hole of @size bytes moves it to
 * its highest top at once. Returns false when the treap is exhausted (the
 * hole above *h is then unbounded). */
static bool
tfit (const MlPlacer *p, uint32_t t, uint64_t *h, uint64_t size, uint64_t *end)
{
  while (t != NIL)
    {
      const TNode *n = &p->pool[t];
      if (n->max <= *h)
        return false;
      if (n->minoff >= *h + size)
        {
          *end = n->minoff;
          return true;
        }
      if (n->gap < size)
        {
          *h = n->max;
          return false;
        }
      if (tfit (p, n->left, h, size, end))
        return true;
      if (n->off >= *h + size)
        {
          *end = n->off;
          return true;
        }
      if (n->top > *h)
        *h = n->top;
      t = n->right;
    }
  return false;
}

static uint32_t
tmerge (MlPlacer *p, uint32_t a, uint32_t b)
{
  if (a == NIL)
    return b;
  if (b == NIL)
    return a;
  if (p->pool[a].prio > p->pool[b].prio)
    {
      p->pool[a].right = tmerge (p, p->pool[a].right, b);
      tfix (p, a);
      return a;
    }
  p->pool[b].left = tmerge (p, a, p->pool[b].left);
  tfix (p, b);
  return b;
}

static uint32_t
tremove (MlPlacer *p, uint32_t t, uint64_t off, uint32_t id)
{
  if (t == NIL)
    return NIL;
  TNode *x = &p->pool[t];
  if (x->off == off && x->id == id)
    {
      uint32_t r = tmerge (p, x->left, x->right);
      p->pool[t].left = p->free_list;
      p->free_list = t;
      return r;
    }
  if (off < x->off || (off == x->off && id < x->id))
    x->left = tremove (p, x->left, off, id);
  else
    x->right = tremove (p, x->right, off, id);
  tfix (p, t);
  return t;
}

static bool
tadd (MlPlacer *p, uint32_t *root, uint32_t b, uint64_t off, uint64_t top)
{
  if (p->free_list != NIL)
    {
      uint32_t nn = p->free_list;
      p->free_list = p->pool[nn].left;
      p->rng ^= p->rng << 13;
      p->rng ^= p->rng >> 7;
      p->rng ^= p->rng << 17;
      p->pool[nn] = (TNode) { off, top, top, NIL, NIL, (uint32_t) (p->rng >> 32), b, off, 0 };
      *root = tinsert (p, *root, nn);
      return true;
    }
  if (p->n_pool == p->cap_pool)
    {
      uint32_t cap = p->cap_pool * 2;
      TNode *pool = cap > p->cap_pool ? realloc (p->pool, (size_t) cap * sizeof *pool) : NULL;
      if (!pool)
        {
          p->failed = true;
          return false;
        }
      p->pool = pool;
      p->cap_pool = cap;
    }
  uint32_t nn = p->n_pool++;
  p->rng ^= p->rng << 13;
  p->rng ^= p->rng >> 7;
  p->rng ^= p->rng << 17;
  p->pool[nn] = (TNode) { off, top, top, NIL, NIL, (uint32_t) (p->rng >> 32), b, off, 0 };
  *root = tinsert (p, *root, nn);
  return true;
}

/* --- the segment tree ------------------------------------------------- */

static void
insert (MlPlacer *p, uint32_t node, uint32_t lo, uint32_t hi, uint32_t b, uint64_t off, uint64_t top)
{
  if (!p->is_touched[node])
    {
      p->is_touched[node] = 1;
      p->touched[p->n_touched++] = node;
    }
  if (!tadd (p, &p->sub[node], b, off, top))
    return;
  if (p->qs <= lo && hi <= p->qe)
    {
      tadd (p, &p->own[node], b, off, top);
      return;
    }
  uint32_t mid = lo + (hi - lo) / 2;
  if (p->qs < mid)
    insert (p, 2 * node, lo, mid, b, off, top);
  if (p->qe > mid)
    insert (p, 2 * node + 1, mid, hi, b, off, top);
}

/* The treaps holding the rectangles that overlap [qs, qe) in time. */
static void
gather (MlPlacer *p, uint32_t node, uint32_t lo, uint32_t hi)
{
  if (p->sub[node] == NIL)
    return;
  if (p->qs <= lo && hi <= p->qe)
    {
      p->roots[p->n_roots++] = p->sub[node];
      return;
    }
  if (p->own[node] != NIL)
    p->roots[p->n_roots++] = p->own[node];
  uint32_t mid = lo + (hi - lo) / 2;
  if (p->qs < mid)
    gather (p, 2 * node, lo, mid);
  if (p->qe > mid)
    gather (p, 2 * node + 1, mid, hi);
}

static void
erase (MlPlacer *p, uint32_t node, uint32_t lo, uint32_t hi, uint32_t b, uint64_t off)
{
  p->sub[node] = tremove (p, p->sub[node], off, b);
  if (p->qs <= lo && hi <= p->qe)
    {
      p->own[node] = tremove (p, p->own[node], off, b);
      return;
    }
  uint32_t mid = lo + (hi - lo) / 2;
  if (p->qs < mid)
    erase (p, 2 * node, lo, mid, b, off);
  if (p->qe > mid)
    erase (p, 2 * node + 1, mid, hi, b, off);
}

void
_ml_placer_remove (MlPlacer *p, uint32_t b)
{
  if (p->bufs->buf[b].rsize == 0 || p->ls[b] >= p->le[b])
    return;
  p->qs = p->ls[b];
  p->qe = p->le[b];
  erase (p, 1, 0, p->leaves, b, p->offset[b]);
}

uint64_t
_ml_placer_peak (const MlPlacer *p)
{
  return tmax (p, p->sub[1]);
}

uint32_t
_ml_placer_random_neighbour (MlPlacer *p, uint32_t b, uint64_t *rng)
{
  if (p->bufs->buf[b].rsize == 0 || p->ls[b] >= p->le[b])
    return b;
  p->qs = p->ls[b];
  p->qe = p->le[b];
  p->n_roots = 0;
  gather (p, 1, 0, p->leaves);
  if (!p->n_roots)
    return b;
  *rng ^= *rng << 13; *rng ^= *rng >> 7; *rng ^= *rng << 17;
  uint32_t t = p->roots[*rng % p->n_roots];
  for (;;)
    {
      *rng ^= *rng << 13; *rng ^= *rng >> 7; *rng ^= *rng << 17;
      unsigned pick = (unsigned) (*rng >> 33) % 3;
      const TNode *x = &p->pool[t];
      if (pick == 0 || (x->left == NIL && x->right == NIL))
        return x->id;
      if (pick == 1 && x->left != NIL)
        t = x->left;
      else if (x->right != NIL)
        t = x->right;
      else
        t = x->left;
    }
}

void
_ml_placer_put (MlPlacer *p, uint32_t b, uint64_t offset)
{
  p->offset[b] = offset;
  uint64_t size = p->bufs->buf[b].rsize;
  if (size == 0 || p->ls[b] >= p->le[b])
    return;
  p->qs = p->ls[b];
  p->qe = p->le[b];
  insert (p, 1, 0, p->leaves, b, offset, offset + size);
}

uint64_t
_ml_placer_place (MlPlacer *p, uint32_t b, uint64_t min_off)
{
  uint64_t size = p->bufs->buf[b].rsize;
  if (size == 0 || p->ls[b] >= p->le[b])
    {
      p->offset[b] = size ? min_off : 0;
      return p->offset[b];
    }
  p->qs = p->ls[b];
  p->qe = p->le[b];
  p->n_roots = 0;
  gather (p, 1, 0, p->leaves);
  /* each treap in turn lifts the candidate to its own lowest hole of
   * @size bytes at or above it (never past the answer, which is such a
   * hole in every treap); stop once every live treap has accepted the
   * candidate since it last moved. A treap whose highest top is at or
   * below the candidate can never move it again and is dropped */
  uint64_t at = min_off;
  size_t live = p->n_roots, i = 0, quiet = 0;
  memset (p->hend, 0, live * sizeof *p->hend);
  while (live && quiet < live)
    {
      if (i >= live)
        i = 0;
      uint32_t t = p->roots[i];
      if (p->pool[t].max <= at)
        {
          /* keep the cyclic order so that quiet counts distinct treaps */
          memmove (&p->roots[i], &p->roots[i + 1], (live - i - 1) * sizeof *p->roots);
          memmove (&p->hend[i], &p->hend[i + 1], (live - i - 1) * sizeof *p->hend);
          live--;
          continue;
        }
      /* the hole this treap gave last time may still hold the candidate */
      if (at + size <= p->hend[i])
        {
          quiet++;
          i++;
          continue;
        }
      uint64_t h = at;
      p->hend[i] = UINT64_MAX;
      tfit (p, t, &h, size, &p->hend[i]);
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
