#include "sim/base/btree.h"

#include <stdlib.h>
#include <string.h>

#define FAN  ML_BTREE_FAN
#define HALF (ML_BTREE_FAN / 2)
#define NIL  ML_BTREE_NIL

static inline bool
key_lt (uint64_t a1, uint64_t b1, uint64_t a2, uint64_t b2)
{
  return a1 < a2 || (a1 == a2 && b1 < b2);
}

void
ml_btree_init (MlBTree *t, bool with_max)
{
  memset (t, 0, sizeof *t);
  t->root = t->free_leaves = t->free_inners = NIL;
  t->with_max = with_max;
}

void
ml_btree_clear (MlBTree *t)
{
  bool with_max = t->with_max;
  free (t->leaves);
  free (t->inners);
  ml_btree_init (t, with_max);
}

/* ---- nodes ---- */

/* Room for one operation's new nodes, so that nothing fails halfway. */
static int
reserve (MlBTree *t)
{
  if (t->cap_leaves - t->n_leaves < 1)
    {
      uint32_t cap = t->cap_leaves ? t->cap_leaves * 2 : 1;
      MlBtLeaf *l = realloc (t->leaves, (size_t) cap * sizeof *l);
      if (!l)
        return -1;
      t->leaves = l;
      t->cap_leaves = cap;
    }
  uint32_t need = t->height + 2;
  if (t->cap_inners - t->n_inners < need)
    {
      uint32_t cap = t->cap_inners ? t->cap_inners * 2 : 2;
      while (cap - t->n_inners < need)
        cap *= 2;
      MlBtInner *in = realloc (t->inners, (size_t) cap * sizeof *in);
      if (!in)
        return -1;
      t->inners = in;
      t->cap_inners = cap;
    }
  return 0;
}

static uint32_t
leaf_new (MlBTree *t)
{
  uint32_t i;
  if (t->free_leaves != NIL)
    {
      i = t->free_leaves;
      t->free_leaves = t->leaves[i].next;
    }
  else
    i = t->n_leaves++;
  MlBtLeaf *f = &t->leaves[i];
  f->n = 0;
  f->prev = f->next = f->parent = NIL;
  return i;
}

static void
leaf_free (MlBTree *t, uint32_t i)
{
  t->leaves[i].next = t->free_leaves;
  t->free_leaves = i;
}

static uint32_t
inner_new (MlBTree *t)
{
  uint32_t i;
  if (t->free_inners != NIL)
    {
      i = t->free_inners;
      t->free_inners = t->inners[i].parent;
    }
  else
    i = t->n_inners++;
  t->inners[i].n = 0;
  t->inners[i].parent = NIL;
  return i;
}

static void
inner_free (MlBTree *t, uint32_t i)
{
  t->inners[i].parent = t->free_inners;
  t->free_inners = i;
}

/* The largest value and lowest key under node @id (not empty). */
static void
summary (const MlBTree *t, uint32_t id, bool leaf, uint64_t *max, uint64_t *ka, uint64_t *kb)
{
  uint64_t m = 0;
  if (leaf)
    {
      const MlBtLeaf *f = &t->leaves[id];
      if (t->with_max)
        for (uint32_t i = 0; i < f->n; i++)
          m = f->v[i] > m ? f->v[i] : m;
      *ka = f->a[0];
      *kb = f->b[0];
    }
  else
    {
      const MlBtInner *q = &t->inners[id];
      if (t->with_max)
        for (uint32_t i = 0; i < q->n; i++)
          m = q->max[i] > m ? q->max[i] : m;
      *ka = q->sa[0];
      *kb = q->sb[0];
    }
  *max = m;
}

static inline uint32_t
slot_of (const MlBtInner *q, uint32_t child)
{
  uint32_t j = 0;
  while (q->child[j] != child)
    j++;
  return j;
}

static inline void
set_parent (MlBTree *t, uint32_t id, bool leaf, uint32_t parent)
{
  if (leaf)
    t->leaves[id].parent = parent;
  else
    t->inners[id].parent = parent;
}

static void
write_slot (MlBTree *t, MlBtInner *q, uint32_t j, uint32_t id, bool leaf)
{
  summary (t, id, leaf, &q->max[j], &q->sa[j], &q->sb[j]);
}

/* Carries node @id's summary up while it changes its parent's slot. */
static void
refresh (MlBTree *t, uint32_t id, bool leaf)
{
  for (;;)
    {
      uint32_t p = leaf ? t->leaves[id].parent : t->inners[id].parent;
      if (p == NIL)
        return;
      uint64_t m, ka, kb;
      summary (t, id, leaf, &m, &ka, &kb);
      MlBtInner *q = &t->inners[p];
      uint32_t j = slot_of (q, id);
      if (q->max[j] == m && q->sa[j] == ka && q->sb[j] == kb)
        return;
      q->max[j] = m;
      q->sa[j] = ka;
      q->sb[j] = kb;
      id = p;
      leaf = false;
    }
}

static void insert_after (MlBTree *t, uint32_t p, uint32_t left, uint32_t right, bool leaf);

/* Moves the upper half of inner @p to a new inner node after it. */
static uint32_t
inner_split (MlBTree *t, uint32_t p, bool children_leaves)
{
  uint32_t s = inner_new (t);
  MlBtInner *P = &t->inners[p], *S = &t->inners[s];
  uint32_t k = P->n - HALF;
  memcpy (S->max, P->max + HALF, k * sizeof *S->max);
  memcpy (S->sa, P->sa + HALF, k * sizeof *S->sa);
  memcpy (S->sb, P->sb + HALF, k * sizeof *S->sb);
  memcpy (S->child, P->child + HALF, k * sizeof *S->child);
  S->n = k;
  P->n = HALF;
  S->parent = P->parent;
  for (uint32_t j = 0; j < k; j++)
    set_parent (t, S->child[j], children_leaves, s);
  insert_after (t, P->parent, p, s, false);
  return s;
}

/* Puts @right into @left's parent @p just after @left (a new root when
 * @left was the root). */
static void
insert_after (MlBTree *t, uint32_t p, uint32_t left, uint32_t right, bool leaf)
{
  if (p == NIL)
    {
      uint32_t q = inner_new (t);
      MlBtInner *Q = &t->inners[q];
      Q->n = 2;
      Q->child[0] = left;
      Q->child[1] = right;
      set_parent (t, left, leaf, q);
      set_parent (t, right, leaf, q);
      write_slot (t, Q, 0, left, leaf);
      write_slot (t, Q, 1, right, leaf);
      t->root = q;
      t->height++;
      return;
    }
  MlBtInner *P = &t->inners[p];
  uint32_t j = slot_of (P, left);
  if (P->n == FAN)
    {
      uint32_t s = inner_split (t, p, leaf);
      P = &t->inners[p];
      if (j >= HALF)
        {
          j -= HALF;
          p = s;
          P = &t->inners[s];
        }
    }
  uint32_t k = P->n - j - 1;
  memmove (P->max + j + 2, P->max + j + 1, k * sizeof *P->max);
  memmove (P->sa + j + 2, P->sa + j + 1, k * sizeof *P->sa);
  memmove (P->sb + j + 2, P->sb + j + 1, k * sizeof *P->sb);
  memmove (P->child + j + 2, P->child + j + 1, k * sizeof *P->child);
  P->child[j + 1] = right;
  P->n++;
  set_parent (t, right, leaf, p);
  write_slot (t, P, j, left, leaf);
  write_slot (t, P, j + 1, right, leaf);
  refresh (t, p, false);
}

/* ---- updates ---- */

static uint32_t
descend (const MlBTree *t, uint64_t a, uint64_t b, uint64_t *visited)
{
  uint32_t id = t->root;
  for (uint32_t h = t->height; h > 0; h--)
    {
      const MlBtInner *q = &t->inners[id];
      uint32_t j = 0;
      while (j + 1 < q->n && !key_lt (a, b, q->sa[j + 1], q->sb[j + 1]))
        j++;
      id = q->child[j];
    }
  if (visited)
    *visited += t->height + 1;
  return id;
}

int
ml_btree_insert (MlBTree *t, uint64_t a, uint64_t b, uint64_t v)
{
  if (reserve (t) < 0)
    return ML_ENOMEM;
  if (t->root == NIL)
    {
      t->root = leaf_new (t);
      t->height = 0;
    }
  uint32_t id = descend (t, a, b, NULL);
  MlBtLeaf *f = &t->leaves[id];
  uint32_t pos = 0;
  while (pos < f->n && key_lt (f->a[pos], f->b[pos], a, b))
    pos++;
  if (f->n == FAN)
    {
      uint32_t r = leaf_new (t);
      f = &t->leaves[id];
      MlBtLeaf *g = &t->leaves[r];
      memcpy (g->a, f->a + HALF, (FAN - HALF) * sizeof *g->a);
      memcpy (g->b, f->b + HALF, (FAN - HALF) * sizeof *g->b);
      memcpy (g->v, f->v + HALF, (FAN - HALF) * sizeof *g->v);
      g->n = FAN - HALF;
      f->n = HALF;
      g->prev = id;
      g->next = f->next;
      if (f->next != NIL)
        t->leaves[f->next].prev = r;
      f->next = r;
      g->parent = f->parent;
      insert_after (t, f->parent, id, r, true);
      if (pos > HALF)
        {
          pos -= HALF;
          id = r;
        }
      f = &t->leaves[id];
    }
  uint32_t k = f->n - pos;
  memmove (f->a + pos + 1, f->a + pos, k * sizeof *f->a);
  memmove (f->b + pos + 1, f->b + pos, k * sizeof *f->b);
  memmove (f->v + pos + 1, f->v + pos, k * sizeof *f->v);
  f->a[pos] = a;
  f->b[pos] = b;
  f->v[pos] = v;
  f->n++;
  t->count++;
  refresh (t, id, true);
  return 0;
}

static void
remove_child (MlBTree *t, uint32_t p, uint32_t c)
{
  MlBtInner *P = &t->inners[p];
  uint32_t j = slot_of (P, c), k = P->n - j - 1;
  memmove (P->max + j, P->max + j + 1, k * sizeof *P->max);
  memmove (P->sa + j, P->sa + j + 1, k * sizeof *P->sa);
  memmove (P->sb + j, P->sb + j + 1, k * sizeof *P->sb);
  memmove (P->child + j, P->child + j + 1, k * sizeof *P->child);
  P->n--;
  if (P->n == 0)
    {
      uint32_t g = P->parent;   /* never the root: the root keeps two children */
      inner_free (t, p);
      remove_child (t, g, p);
      return;
    }
  bool p_alive = true;
  while (t->height > 0 && t->inners[t->root].n == 1)
    {
      /* the root with one child: the child is the root */
      uint32_t r = t->root, only = t->inners[r].child[0];
      t->height--;
      set_parent (t, only, t->height == 0, NIL);
      t->root = only;
      inner_free (t, r);
      p_alive &= r != p;
    }
  if (p_alive)
    refresh (t, p, false);
}

void
ml_btree_remove (MlBTree *t, MlBtPos pos)
{
  MlBtLeaf *f = &t->leaves[pos.leaf];
  uint32_t k = f->n - pos.i - 1;
  memmove (f->a + pos.i, f->a + pos.i + 1, k * sizeof *f->a);
  memmove (f->b + pos.i, f->b + pos.i + 1, k * sizeof *f->b);
  memmove (f->v + pos.i, f->v + pos.i + 1, k * sizeof *f->v);
  f->n--;
  t->count--;
  if (f->n > 0)
    {
      refresh (t, pos.leaf, true);
      return;
    }
  if (t->height == 0)
    return;   /* the empty tree keeps its leaf (the root) */
  if (f->prev != NIL)
    t->leaves[f->prev].next = f->next;
  if (f->next != NIL)
    t->leaves[f->next].prev = f->prev;
  uint32_t p = f->parent;
  leaf_free (t, pos.leaf);
  remove_child (t, p, pos.leaf);
}

void
ml_btree_set (MlBTree *t, MlBtPos pos, uint64_t a, uint64_t b, uint64_t v)
{
  MlBtLeaf *f = &t->leaves[pos.leaf];
  f->a[pos.i] = a;
  f->b[pos.i] = b;
  f->v[pos.i] = v;
  refresh (t, pos.leaf, true);
}

/* ---- searches ---- */

MlBtPos
ml_btree_lower_bound (const MlBTree *t, uint64_t a, uint64_t b, uint64_t *visited)
{
  MlBtPos p = { NIL, 0 };
  if (t->root == NIL)
    return p;
  p.leaf = descend (t, a, b, visited);
  const MlBtLeaf *f = &t->leaves[p.leaf];
  while (p.i < f->n && key_lt (f->a[p.i], f->b[p.i], a, b))
    p.i++;
  return p;
}

bool
ml_btree_at_or_next (const MlBTree *t, MlBtPos *pos)
{
  if (pos->leaf == NIL)
    return false;
  if (pos->i < t->leaves[pos->leaf].n)
    return true;
  pos->leaf = t->leaves[pos->leaf].next;
  pos->i = 0;
  return pos->leaf != NIL;
}

bool
ml_btree_before (const MlBTree *t, MlBtPos at, MlBtPos *out)
{
  if (at.leaf == NIL)
    return false;
  if (at.i > 0)
    {
      *out = (MlBtPos) { at.leaf, at.i - 1 };
      return true;
    }
  uint32_t p = t->leaves[at.leaf].prev;
  if (p == NIL)
    return false;
  *out = (MlBtPos) { p, t->leaves[p].n - 1 };
  return true;
}

uint64_t
ml_btree_max (const MlBTree *t)
{
  if (t->root == NIL || t->count == 0)
    return 0;
  uint64_t m, ka, kb;
  summary (t, t->root, t->height == 0, &m, &ka, &kb);
  return m;
}

/* The first entry under inner @id (at @level above the leaves) whose value >= @v. */
static bool
first_under (const MlBTree *t, uint32_t id, uint32_t level, uint64_t v, MlBtPos *pos, uint64_t *visited)
{
  for (; level > 0; level--)
    {
      const MlBtInner *q = &t->inners[id];
      uint32_t j = 0;
      while (j < q->n && q->max[j] < v)
        j++;
      if (j == q->n)
        return false;
      id = q->child[j];
      if (visited)
        (*visited)++;
    }
  const MlBtLeaf *f = &t->leaves[id];
  for (uint32_t i = 0; i < f->n; i++)
    if (f->v[i] >= v)
      {
        *pos = (MlBtPos) { id, i };
        return true;
      }
  return false;
}

bool
ml_btree_first_fit (const MlBTree *t, uint64_t v, MlBtPos *pos, uint64_t *visited)
{
  if (t->root == NIL)
    return false;
  if (visited)
    (*visited)++;
  return first_under (t, t->root, t->height, v, pos, visited);
}

bool
ml_btree_next_fit (const MlBTree *t, MlBtPos from, uint64_t v, MlBtPos *pos, uint64_t *visited)
{
  if (from.leaf == NIL)
    return false;
  const MlBtLeaf *f = &t->leaves[from.leaf];
  for (uint32_t i = from.i; i < f->n; i++)
    if (f->v[i] >= v)
      {
        *pos = (MlBtPos) { from.leaf, i };
        return true;
      }
  uint32_t id = from.leaf, level = 0;
  for (uint32_t p = f->parent; p != NIL; id = p, p = t->inners[p].parent, level++)
    {
      const MlBtInner *q = &t->inners[p];
      if (visited)
        (*visited)++;
      for (uint32_t j = slot_of (q, id) + 1; j < q->n; j++)
        if (q->max[j] >= v)
          {
            if (visited)
              (*visited)++;
            return first_under (t, q->child[j], level, v, pos, visited);
          }
    }
  return false;
}
