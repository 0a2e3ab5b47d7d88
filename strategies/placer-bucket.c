/* placer-bucket.c — one time bucket of the placer: its entries in a B+
 * tree with a summary per child, the lowest-fit sweep that skips what the
 * summaries rule out, and the counting a random neighbour needs (see
 * placer-private.h). */
#include "strategies/placer-private.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/error.h"

#define NIL ML_PLACER_NIL

/* --- the pool of leaves and inner nodes ------------------------------- */

int
_ml_placer_pool_init (MlPlacerPool *pool)
{
  memset (pool, 0, sizeof *pool);
  pool->free_leaf = pool->free_node = NIL;
  pool->leaf_cap = ML_PLACER_LEAF;
  pool->fan = ML_PLACER_FAN;
  pool->cap_leaves = 64;
  pool->cap_nodes = 16;
  pool->leaves = malloc (pool->cap_leaves * sizeof *pool->leaves);
  pool->nodes = malloc (pool->cap_nodes * sizeof *pool->nodes);
  return pool->leaves && pool->nodes ? 0 : ML_ENOMEM;
}

void
_ml_placer_pool_clear (MlPlacerPool *pool)
{
  free (pool->leaves);
  free (pool->nodes);
}

void
_ml_placer_pool_reset (MlPlacerPool *pool)
{
  pool->n_leaves = pool->n_nodes = 0;
  pool->free_leaf = pool->free_node = NIL;
}

/* Grows @arr (elements of @size, *cap of them) to hold one more. */
static bool
grow (void **arr, uint32_t *cap, size_t size)
{
  uint32_t c = *cap * 2;
  void *a = c > *cap ? realloc (*arr, (size_t) c * size) : NULL;
  if (!a)
    return false;
  *arr = a;
  *cap = c;
  return true;
}

/* A new empty leaf (NIL when out of memory); pointers into the pool are
 * invalid afterwards. */
static uint32_t
leaf_new (MlPlacerPool *pool)
{
  uint32_t l = pool->free_leaf;
  if (l != NIL)
    pool->free_leaf = pool->leaves[l].next_free;
  else if (pool->n_leaves < pool->cap_leaves || grow ((void **) &pool->leaves, &pool->cap_leaves, sizeof *pool->leaves))
    l = pool->n_leaves++;
  else
    return NIL;
  pool->leaves[l].n = 0;
  return l;
}

static uint32_t
node_new (MlPlacerPool *pool)
{
  uint32_t d = pool->free_node;
  if (d != NIL)
    pool->free_node = pool->nodes[d].next_free;
  else if (pool->n_nodes < pool->cap_nodes || grow ((void **) &pool->nodes, &pool->cap_nodes, sizeof *pool->nodes))
    d = pool->n_nodes++;
  else
    return NIL;
  pool->nodes[d].n = 0;
  return d;
}

static void
leaf_free (MlPlacerPool *pool, uint32_t l)
{
  pool->leaves[l].next_free = pool->free_leaf;
  pool->free_leaf = l;
}

static void
node_free (MlPlacerPool *pool, uint32_t d)
{
  pool->nodes[d].next_free = pool->free_node;
  pool->free_node = d;
}

/* --- summaries ---------------------------------------------------------- */

static void
sum_leaf (const MlPlacerLeaf *l, MlPlacerSum *s)
{
  const MlPlacerEnt *e = l->e;
  *s = (MlPlacerSum) { e[0].off, e[0].top, 0, e[0].id, l->n, e[0].ls, e[0].ls, e[0].le, e[0].le };
  for (uint32_t k = 1; k < l->n; k++)
    {
      if (e[k].off > s->max_top && e[k].off - s->max_top > s->gap)
        s->gap = e[k].off - s->max_top;
      if (e[k].top > s->max_top)
        s->max_top = e[k].top;
      if (e[k].ls < s->min_ls) s->min_ls = e[k].ls;
      if (e[k].ls > s->max_ls) s->max_ls = e[k].ls;
      if (e[k].le < s->min_le) s->min_le = e[k].le;
      if (e[k].le > s->max_le) s->max_le = e[k].le;
    }
}

/* @acc followed by @s. A gap inside @s measured from @s's own tops is at
 * least the gap measured from everything before it, so the bound holds. */
static void
sum_join (MlPlacerSum *acc, const MlPlacerSum *s)
{
  if (s->first_off > acc->max_top && s->first_off - acc->max_top > acc->gap)
    acc->gap = s->first_off - acc->max_top;
  if (s->gap > acc->gap)
    acc->gap = s->gap;
  if (s->max_top > acc->max_top)
    acc->max_top = s->max_top;
  acc->n += s->n;
  if (s->min_ls < acc->min_ls) acc->min_ls = s->min_ls;
  if (s->max_ls > acc->max_ls) acc->max_ls = s->max_ls;
  if (s->min_le < acc->min_le) acc->min_le = s->min_le;
  if (s->max_le > acc->max_le) acc->max_le = s->max_le;
}

static void
sum_node (const MlPlacerNode *nd, MlPlacerSum *s)
{
  *s = nd->sum[0];
  for (uint32_t i = 1; i < nd->n; i++)
    sum_join (s, &nd->sum[i]);
}

/* --- keys ---------------------------------------------------------------- */

static inline bool
before (uint64_t off, uint32_t id, uint64_t off2, uint32_t id2)
{
  return off < off2 || (off == off2 && id < id2);
}

/* The child of @nd whose keys hold (off, id): the last whose first key is
 * not after it, or the first. */
static uint32_t
child_for (const MlPlacerNode *nd, uint64_t off, uint32_t id)
{
  uint32_t i = 0;
  for (uint32_t k = 1; k < nd->n && !before (off, id, nd->sum[k].first_off, nd->sum[k].first_id); k++)
    i = k;
  return i;
}

/* The first entry of @l not before (off, id). */
static uint32_t
find_entry (const MlPlacerLeaf *l, uint64_t off, uint32_t id)
{
  uint32_t lo = 0, hi = l->n;
  while (lo < hi)
    {
      uint32_t mid = lo + (hi - lo) / 2;
      if (before (l->e[mid].off, l->e[mid].id, off, id))
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* --- insertion ------------------------------------------------------------ */

/* Inserts @x into leaf @id; a full leaf splits in halves, or, when @x goes
 * at its end (buffers stacked in order), keeps its entries and gives @x a
 * leaf of its own. *s: the leaf's summary; *sib, *sib_s: the new right
 * sibling (NIL when none). -1 when out of memory. */
static int
leaf_insert (MlPlacerPool *pool, uint32_t id, const MlPlacerEnt *x, MlPlacerSum *s, uint32_t *sib, MlPlacerSum *sib_s)
{
  MlPlacerLeaf *l = &pool->leaves[id];
  uint32_t k = find_entry (l, x->off, x->id);
  *sib = NIL;
  if (l->n == pool->leaf_cap)
    {
      uint32_t d = leaf_new (pool);
      if (d == NIL)
        return -1;
      l = &pool->leaves[id];
      MlPlacerLeaf *m = &pool->leaves[d];
      uint32_t keep = k == l->n ? l->n : l->n / 2;
      memcpy (m->e, l->e + keep, (l->n - keep) * sizeof *m->e);
      m->n = l->n - keep;
      l->n = keep;
      if (!(k <= keep && l->n < pool->leaf_cap))
        {
          l = m;
          k -= keep;
        }
      memmove (l->e + k + 1, l->e + k, (l->n - k) * sizeof *l->e);
      l->e[k] = *x;
      l->n++;
      sum_leaf (&pool->leaves[id], s);
      sum_leaf (&pool->leaves[d], sib_s);
      *sib = d;
      return 0;
    }
  memmove (l->e + k + 1, l->e + k, (l->n - k) * sizeof *l->e);
  l->e[k] = *x;
  l->n++;
  sum_leaf (l, s);
  return 0;
}

/* Puts child @c (summary @cs) at position @i of @nd (which has room). */
static void
node_put (MlPlacerNode *nd, uint32_t i, uint32_t c, const MlPlacerSum *cs)
{
  memmove (nd->child + i + 1, nd->child + i, (nd->n - i) * sizeof *nd->child);
  memmove (nd->sum + i + 1, nd->sum + i, (nd->n - i) * sizeof *nd->sum);
  nd->child[i] = c;
  nd->sum[i] = *cs;
  nd->n++;
}

/* Inserts @x under node @id at level @lvl (0: a leaf), splitting what
 * overflows as leaf_insert does. */
static int
insert_at (MlPlacerPool *pool, uint32_t id, uint32_t lvl, const MlPlacerEnt *x, MlPlacerSum *s, uint32_t *sib,
           MlPlacerSum *sib_s)
{
  if (lvl == 0)
    return leaf_insert (pool, id, x, s, sib, sib_s);
  uint32_t i = child_for (&pool->nodes[id], x->off, x->id), cs;
  MlPlacerSum csum, ssum;
  *sib = NIL;
  if (insert_at (pool, pool->nodes[id].child[i], lvl - 1, x, &csum, &cs, &ssum) < 0)
    return -1;
  pool->nodes[id].sum[i] = csum;
  if (cs == NIL)
    {
      sum_node (&pool->nodes[id], s);
      return 0;
    }
  if (pool->nodes[id].n < pool->fan)
    {
      node_put (&pool->nodes[id], i + 1, cs, &ssum);
      sum_node (&pool->nodes[id], s);
      return 0;
    }
  uint32_t d = node_new (pool);
  if (d == NIL)
    return -1;
  MlPlacerNode *nd = &pool->nodes[id], *dn = &pool->nodes[d];
  uint32_t keep = i + 1 == nd->n ? nd->n : nd->n / 2;
  memcpy (dn->child, nd->child + keep, (nd->n - keep) * sizeof *dn->child);
  memcpy (dn->sum, nd->sum + keep, (nd->n - keep) * sizeof *dn->sum);
  dn->n = nd->n - keep;
  nd->n = keep;
  if (i + 1 <= keep && nd->n < pool->fan)
    node_put (nd, i + 1, cs, &ssum);
  else
    node_put (dn, i + 1 - keep, cs, &ssum);
  sum_node (nd, s);
  sum_node (dn, sib_s);
  *sib = d;
  return 0;
}

bool
_ml_bucket_insert (MlPlacerPool *pool, MlPlacerBucket *B, const MlPlacerEnt *x)
{
  if (B->root == NIL)
    {
      uint32_t l = leaf_new (pool);
      if (l == NIL)
        return false;
      pool->leaves[l].e[0] = *x;
      pool->leaves[l].n = 1;
      B->root = l;
      B->height = 0;
      sum_leaf (&pool->leaves[l], &B->sum);
      return true;
    }
  uint32_t sib;
  MlPlacerSum s, ss;
  if (insert_at (pool, B->root, B->height, x, &s, &sib, &ss) < 0)
    return false;
  if (sib == NIL)
    {
      B->sum = s;
      return true;
    }
  uint32_t r = B->height + 2 < ML_PLACER_DEPTH ? node_new (pool) : NIL;
  if (r == NIL)
    return false;
  MlPlacerNode *nd = &pool->nodes[r];
  nd->n = 2;
  nd->child[0] = B->root, nd->sum[0] = s;
  nd->child[1] = sib, nd->sum[1] = ss;
  B->root = r;
  B->height++;
  sum_node (nd, &B->sum);
  return true;
}

/* --- removal ----------------------------------------------------------------- */

/* Removes key (off, id) under node @id at level @lvl: -1 when it is not
 * there, 1 when the node emptied (it is freed), 0 otherwise (*s: its
 * summary). */
static int
remove_at (MlPlacerPool *pool, uint32_t id, uint32_t lvl, uint64_t off, uint32_t eid, MlPlacerSum *s)
{
  if (lvl == 0)
    {
      MlPlacerLeaf *l = &pool->leaves[id];
      uint32_t k = find_entry (l, off, eid);
      if (k == l->n || l->e[k].off != off || l->e[k].id != eid)
        return -1;
      memmove (l->e + k, l->e + k + 1, (l->n - k - 1) * sizeof *l->e);
      if (--l->n == 0)
        {
          leaf_free (pool, id);
          return 1;
        }
      sum_leaf (l, s);
      return 0;
    }
  MlPlacerNode *nd = &pool->nodes[id];
  uint32_t i = child_for (nd, off, eid);
  MlPlacerSum cs;
  int r = remove_at (pool, nd->child[i], lvl - 1, off, eid, &cs);
  if (r < 0)
    return -1;
  if (r == 0)
    nd->sum[i] = cs;
  else
    {
      memmove (nd->child + i, nd->child + i + 1, (nd->n - i - 1) * sizeof *nd->child);
      memmove (nd->sum + i, nd->sum + i + 1, (nd->n - i - 1) * sizeof *nd->sum);
      if (--nd->n == 0)
        {
          node_free (pool, id);
          return 1;
        }
    }
  sum_node (nd, s);
  return 0;
}

void
_ml_bucket_remove (MlPlacerPool *pool, MlPlacerBucket *B, uint64_t off, uint32_t id)
{
  if (B->root == NIL)
    return;
  MlPlacerSum s;
  int r = remove_at (pool, B->root, B->height, off, id, &s);
  if (r < 0)
    return;
  if (r == 1)
    {
      B->root = NIL;
      B->height = 0;
      return;
    }
  B->sum = s;
  /* a root with one child gives way to it */
  while (B->height > 0 && pool->nodes[B->root].n == 1)
    {
      uint32_t old = B->root;
      B->root = pool->nodes[old].child[0];
      node_free (pool, old);
      B->height--;
    }
}

/* --- queries ---------------------------------------------------------------- */

static inline bool
counts (const MlPlacerEnt *e, const MlPlacerQuery *q)
{
  return e->ls < q->qe && e->le > q->qs && (q->first || e->ls >= q->bstart);
}

/* No entry under @s counts for @q. */
static inline bool
none_count (const MlPlacerSum *s, const MlPlacerQuery *q)
{
  return s->min_ls >= q->qe || s->max_le <= q->qs || (!q->first && s->max_ls < q->bstart);
}

/* Every entry under @s counts for @q. */
static inline bool
all_count (const MlPlacerSum *s, const MlPlacerQuery *q)
{
  return s->max_ls < q->qe && s->min_le > q->qs && (q->first || s->min_ls >= q->bstart);
}

enum { SKIP, LIFT, DESCEND };

/* What the sweep does with the entries under @s, the candidate at @c:
 * SKIP when none can lift or stop it (none counts, or every top is at or
 * below c); LIFT when all count, the first starts below c + size (does
 * not stop it) and no gap between them holds size bytes (so none stops
 * it: the candidate only rises to their highest top); else DESCEND. */
static inline int
judge (const MlPlacerSum *s, const MlPlacerQuery *q, uint64_t c)
{
  if (s->max_top <= c || none_count (s, q))
    return SKIP;
  if (s->first_off < c + q->size && s->gap < q->size && all_count (s, q))
    return LIFT;
  return DESCEND;
}

bool
_ml_bucket_sweep (const MlPlacerPool *pool, const MlPlacerBucket *B, MlPlacerCursor *cur, const MlPlacerQuery *q,
                  uint64_t *at, uint64_t *fits_below, uint64_t *work)
{
  uint64_t c = *at, looked = 0;
  bool stopped = false;
  if (B->root == NIL)
    return false;
  if (cur->depth == 0)
    {
      ++*work;
      int j = judge (&B->sum, q, c);
      if (j != DESCEND)
        {
          if (j == LIFT && B->sum.max_top > c)
            *at = B->sum.max_top;
          return false;
        }
      cur->depth = 1;
      cur->node[0] = B->root;
      cur->idx[0] = 0;
    }
  for (;;)
    {
      uint32_t L = cur->depth - 1;
      if (L == B->height)
        {
          const MlPlacerLeaf *l = &pool->leaves[cur->node[L]];
          uint32_t k = cur->idx[L];
          for (; k < l->n; k++)
            {
              const MlPlacerEnt *e = &l->e[k];
              if (!counts (e, q))
                continue;
              if (e->off >= c + q->size)
                {
                  stopped = true;
                  break;
                }
              if (e->top > c)
                c = e->top;
            }
          looked += k - cur->idx[L];
          if (stopped)
            {
              cur->idx[L] = k;
              *fits_below = l->e[k].off;
              break;
            }
        }
      else
        {
          const MlPlacerNode *nd = &pool->nodes[cur->node[L]];
          uint32_t i = cur->idx[L];
          if (i < nd->n)
            {
              looked++;
              int j = judge (&nd->sum[i], q, c);
              if (j == DESCEND)
                {
                  cur->node[L + 1] = nd->child[i];
                  cur->idx[L + 1] = 0;
                  cur->depth++;
                  continue;
                }
              if (j == LIFT && nd->sum[i].max_top > c)
                c = nd->sum[i].max_top;
              cur->idx[L]++;
              continue;
            }
        }
      /* this node is done: back to its parent's next child */
      if (L == 0)
        break;
      cur->depth--;
      cur->idx[L - 1]++;
    }
  *at = c;
  *work += looked;
  return stopped;
}

static uint64_t
count_at (const MlPlacerPool *pool, uint32_t id, uint32_t lvl, const MlPlacerQuery *q)
{
  uint64_t c = 0;
  if (lvl == 0)
    {
      const MlPlacerLeaf *l = &pool->leaves[id];
      for (uint32_t k = 0; k < l->n; k++)
        c += counts (&l->e[k], q);
      return c;
    }
  const MlPlacerNode *nd = &pool->nodes[id];
  for (uint32_t i = 0; i < nd->n; i++)
    if (all_count (&nd->sum[i], q))
      c += nd->sum[i].n;
    else if (!none_count (&nd->sum[i], q))
      c += count_at (pool, nd->child[i], lvl - 1, q);
  return c;
}

uint64_t
_ml_bucket_count (const MlPlacerPool *pool, const MlPlacerBucket *B, const MlPlacerQuery *q)
{
  if (B->root == NIL || none_count (&B->sum, q))
    return 0;
  if (all_count (&B->sum, q))
    return B->sum.n;
  return count_at (pool, B->root, B->height, q);
}

uint32_t
_ml_bucket_nth (const MlPlacerPool *pool, const MlPlacerBucket *B, const MlPlacerQuery *q, uint64_t r)
{
  uint32_t id = B->root;
  for (uint32_t lvl = B->height; lvl > 0; lvl--)
    {
      const MlPlacerNode *nd = &pool->nodes[id];
      uint32_t i = 0;
      for (; i + 1 < nd->n; i++)
        {
          uint64_t c = all_count (&nd->sum[i], q) ? nd->sum[i].n
                       : none_count (&nd->sum[i], q) ? 0 : count_at (pool, nd->child[i], lvl - 1, q);
          if (r < c)
            break;
          r -= c;
        }
      id = nd->child[i];
    }
  const MlPlacerLeaf *l = &pool->leaves[id];
  for (uint32_t k = 0; k < l->n; k++)
    if (counts (&l->e[k], q) && r-- == 0)
      return l->e[k].id;
  return NIL;
}
