#include "sim/base/treap.h"

#include <stdbool.h>
#include <stdlib.h>

#define N(t, i) ((t)->nodes[i])

static inline int
cmp_key (uint64_t a1, uint64_t b1, uint64_t a2, uint64_t b2)
{
  if (a1 != a2)
    return a1 < a2 ? -1 : 1;
  if (b1 != b2)
    return b1 < b2 ? -1 : 1;
  return 0;
}

static inline void
update (MlTreap *t, uint32_t i)
{
  if (t->plain)
    return;
  MlTreapNode *n = &N (t, i);
  uint64_t m = n->value;
  if (n->left != ML_TREAP_NIL && N (t, n->left).max > m)
    m = N (t, n->left).max;
  if (n->right != ML_TREAP_NIL && N (t, n->right).max > m)
    m = N (t, n->right).max;
  n->max = m;
}

void
ml_treap_init (MlTreap *t)
{
  t->nodes = NULL;
  t->root = t->free_list = ML_TREAP_NIL;
  t->count = t->cap = 0;
  t->rng = 0x9E3779B97F4A7C15ull;
  t->plain = false;
}

void
ml_treap_init_plain (MlTreap *t)
{
  ml_treap_init (t);
  t->plain = true;
}

void
ml_treap_clear (MlTreap *t)
{
  bool plain = t->plain;
  free (t->nodes);
  ml_treap_init (t);
  t->plain = plain;
}

static uint32_t
next_prio (MlTreap *t)
{
  /* xorshift64*: deterministic, so plans are reproducible */
  t->rng ^= t->rng >> 12;
  t->rng ^= t->rng << 25;
  t->rng ^= t->rng >> 27;
  return (uint32_t) ((t->rng * 2685821657736338717ull) >> 32);
}

/* Recomputes maxima from @i up to the root, stopping where nothing
 * changes any more. */
static void
fix_up (MlTreap *t, uint32_t i)
{
  if (t->plain)
    return;
  while (i != ML_TREAP_NIL)
    {
      uint64_t old = N (t, i).max;
      update (t, i);
      if (N (t, i).max == old)
        return;
      i = N (t, i).parent;
    }
}

static void
replace_child (MlTreap *t, uint32_t parent, uint32_t old, uint32_t new_child)
{
  if (parent == ML_TREAP_NIL)
    t->root = new_child;
  else if (N (t, parent).left == old)
    N (t, parent).left = new_child;
  else
    N (t, parent).right = new_child;
  if (new_child != ML_TREAP_NIL)
    N (t, new_child).parent = parent;
}

/* Rotates @x above its parent. */
static void
rotate_up (MlTreap *t, uint32_t x)
{
  uint32_t p = N (t, x).parent, g = N (t, p).parent;
  if (N (t, p).left == x)
    {
      uint32_t b = N (t, x).right;
      N (t, p).left = b;
      if (b != ML_TREAP_NIL)
        N (t, b).parent = p;
      N (t, x).right = p;
    }
  else
    {
      uint32_t b = N (t, x).left;
      N (t, p).right = b;
      if (b != ML_TREAP_NIL)
        N (t, b).parent = p;
      N (t, x).left = p;
    }
  N (t, p).parent = x;
  replace_child (t, g, p, x);
  update (t, p);
  update (t, x);
}

uint32_t
ml_treap_insert (MlTreap *t, uint64_t a, uint64_t b, uint64_t value)
{
  uint32_t id;
  if (t->free_list != ML_TREAP_NIL)
    {
      id = t->free_list;
      t->free_list = N (t, id).left;
    }
  else
    {
      if (t->count == t->cap)
        {
          if (t->cap >= UINT32_MAX / 2)
            return ML_TREAP_NIL;
          uint32_t cap = t->cap ? t->cap * 2 : 64;
          MlTreapNode *nodes = realloc (t->nodes, (size_t) cap * sizeof *nodes);
          if (!nodes)
            return ML_TREAP_NIL;
          t->nodes = nodes;
          t->cap = cap;
        }
      id = t->count++;
    }
  MlTreapNode *n = &N (t, id);
  n->a = a; n->b = b; n->value = n->max = value;
  n->left = n->right = ML_TREAP_NIL;
  n->prio = next_prio (t);
  /* plain BST insertion, then rotations up by priority */
  uint32_t p = ML_TREAP_NIL, i = t->root;
  bool left = false;
  while (i != ML_TREAP_NIL)
    {
      p = i;
      left = cmp_key (a, b, N (t, i).a, N (t, i).b) < 0;
      i = left ? N (t, i).left : N (t, i).right;
    }
  n->parent = p;
  if (p == ML_TREAP_NIL)
    t->root = id;
  else if (left)
    N (t, p).left = id;
  else
    N (t, p).right = id;
  while (N (t, id).parent != ML_TREAP_NIL && N (t, id).prio > N (t, N (t, id).parent).prio)
    rotate_up (t, id);
  fix_up (t, N (t, id).parent);
  return id;
}

void
ml_treap_remove_node (MlTreap *t, uint32_t x)
{
  /* rotate x down until it has at most one child */
  while (N (t, x).left != ML_TREAP_NIL && N (t, x).right != ML_TREAP_NIL)
    {
      uint32_t l = N (t, x).left, r = N (t, x).right;
      rotate_up (t, N (t, l).prio > N (t, r).prio ? l : r);
    }
  uint32_t c = N (t, x).left != ML_TREAP_NIL ? N (t, x).left : N (t, x).right;
  uint32_t p = N (t, x).parent;
  replace_child (t, p, x, c);
  fix_up (t, p);
  N (t, x).left = t->free_list;
  t->free_list = x;
}

bool
ml_treap_remove (MlTreap *t, uint64_t a, uint64_t b)
{
  uint32_t x = ml_treap_find (t, a, b, NULL);
  if (x == ML_TREAP_NIL)
    return false;
  ml_treap_remove_node (t, x);
  return true;
}

void
ml_treap_set_node (MlTreap *t, uint32_t id, uint64_t a, uint64_t b, uint64_t value)
{
  N (t, id).a = a;
  N (t, id).b = b;
  N (t, id).value = value;
  if (t->plain)
    return;
  /* the maxima above may go up or down: recompute along the path */
  for (uint32_t i = id; i != ML_TREAP_NIL; i = N (t, i).parent)
    {
      uint64_t old = N (t, i).max;
      update (t, i);
      if (i != id && N (t, i).max == old)
        break;
    }
}

bool
ml_treap_set_value (MlTreap *t, uint64_t a, uint64_t b, uint64_t value)
{
  uint32_t x = ml_treap_find (t, a, b, NULL);
  if (x == ML_TREAP_NIL)
    return false;
  ml_treap_set_node (t, x, a, b, value);
  return true;
}

uint32_t
ml_treap_find (const MlTreap *t, uint64_t a, uint64_t b, uint64_t *visited)
{
  uint32_t i = t->root;
  uint64_t v = 0;
  while (i != ML_TREAP_NIL)
    {
      v++;
      int c = cmp_key (a, b, t->nodes[i].a, t->nodes[i].b);
      if (c == 0)
        break;
      i = c < 0 ? t->nodes[i].left : t->nodes[i].right;
    }
  if (visited)
    *visited += v;
  return i;
}

uint32_t
ml_treap_lower_bound (const MlTreap *t, uint64_t a, uint64_t b, uint64_t *visited)
{
  uint32_t i = t->root, best = ML_TREAP_NIL;
  uint64_t v = 0;
  while (i != ML_TREAP_NIL)
    {
      v++;
      if (cmp_key (t->nodes[i].a, t->nodes[i].b, a, b) >= 0)
        {
          best = i;
          i = t->nodes[i].left;
        }
      else
        i = t->nodes[i].right;
    }
  if (visited)
    *visited += v;
  return best;
}

uint32_t
ml_treap_predecessor (const MlTreap *t, uint64_t a, uint64_t b, uint64_t *visited)
{
  uint32_t i = t->root, best = ML_TREAP_NIL;
  uint64_t v = 0;
  while (i != ML_TREAP_NIL)
    {
      v++;
      if (cmp_key (t->nodes[i].a, t->nodes[i].b, a, b) < 0)
        {
          best = i;
          i = t->nodes[i].right;
        }
      else
        i = t->nodes[i].left;
    }
  if (visited)
    *visited += v;
  return best;
}

uint32_t
ml_treap_first_with_value (const MlTreap *t, uint64_t value, uint64_t *visited)
{
  uint32_t i = t->root;
  uint64_t v = 0;
  if (i == ML_TREAP_NIL || t->nodes[i].max < value)
    return ML_TREAP_NIL;
  for (;;)
    {
      v++;
      const MlTreapNode *n = &t->nodes[i];
      if (n->left != ML_TREAP_NIL && t->nodes[n->left].max >= value)
        i = n->left;
      else if (n->value >= value)
        break;
      else
        i = n->right;   /* the subtree max guarantees a match there */
    }
  if (visited)
    *visited += v;
  return i;
}

static uint32_t
first_from (const MlTreap *t, uint32_t i, uint64_t a, uint64_t b, uint64_t value, uint64_t *v)
{
  /* smallest key >= (a, b) with node value >= value */
  while (i != ML_TREAP_NIL)
    {
      (*v)++;
      const MlTreapNode *n = &t->nodes[i];
      if (n->max < value)
        return ML_TREAP_NIL;
      if (cmp_key (n->a, n->b, a, b) >= 0)
        {
          uint32_t l = first_from (t, n->left, a, b, value, v);
          if (l != ML_TREAP_NIL)
            return l;
          if (n->value >= value)
            return i;
          /* everything right of n is >= (a, b): a plain first-with-value */
          uint32_t r = n->right;
          if (r == ML_TREAP_NIL || t->nodes[r].max < value)
            return ML_TREAP_NIL;
          for (;;)
            {
              (*v)++;
              const MlTreapNode *m = &t->nodes[r];
              if (m->left != ML_TREAP_NIL && t->nodes[m->left].max >= value)
                r = m->left;
              else if (m->value >= value)
                return r;
              else
                r = m->right;
            }
        }
      i = n->right;
    }
  return ML_TREAP_NIL;
}

uint32_t
ml_treap_first_with_value_from (const MlTreap *t, uint64_t a, uint64_t b, uint64_t value, uint64_t *visited)
{
  uint64_t v = 0;
  uint32_t r = first_from (t, t->root, a, b, value, &v);
  if (visited)
    *visited += v;
  return r;
}

static bool
overlaps (const MlTreap *t, uint32_t i, uint64_t lo, uint64_t hi_a,
          bool (*fn) (void *user, const MlTreapNode *node), void *user)
{
  if (i == ML_TREAP_NIL || t->nodes[i].max <= lo)
    return true;
  const MlTreapNode *n = &t->nodes[i];
  if (!overlaps (t, n->left, lo, hi_a, fn, user))
    return false;
  if (n->a >= hi_a)
    return true;
  if (n->value > lo && !fn (user, n))
    return false;
  return overlaps (t, n->right, lo, hi_a, fn, user);
}

void
ml_treap_overlaps (const MlTreap *t, uint64_t lo, uint64_t hi_a,
                   bool (*fn) (void *user, const MlTreapNode *node), void *user)
{
  overlaps (t, t->root, lo, hi_a, fn, user);
}
