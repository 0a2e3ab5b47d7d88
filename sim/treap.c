#include "sim/treap.h"

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
}

void
ml_treap_clear (MlTreap *t)
{
  free (t->nodes);
  ml_treap_init (t);
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

/* Splits @i into keys < (a, b) and keys >= (a, b). */
static void
split (MlTreap *t, uint32_t i, uint64_t a, uint64_t b, uint32_t *l, uint32_t *r)
{
  if (i == ML_TREAP_NIL)
    {
      *l = *r = ML_TREAP_NIL;
      return;
    }
  if (cmp_key (N (t, i).a, N (t, i).b, a, b) < 0)
    {
      split (t, N (t, i).right, a, b, &N (t, i).right, r);
      *l = i;
    }
  else
    {
      split (t, N (t, i).left, a, b, l, &N (t, i).left);
      *r = i;
    }
  update (t, i);
}

static uint32_t
merge (MlTreap *t, uint32_t l, uint32_t r)
{
  if (l == ML_TREAP_NIL)
    return r;
  if (r == ML_TREAP_NIL)
    return l;
  if (N (t, l).prio > N (t, r).prio)
    {
      N (t, l).right = merge (t, N (t, l).right, r);
      update (t, l);
      return l;
    }
  N (t, r).left = merge (t, l, N (t, r).left);
  update (t, r);
  return r;
}

static uint32_t
insert_node (MlTreap *t, uint32_t root, uint32_t node)
{
  if (root == ML_TREAP_NIL)
    return node;
  if (N (t, node).prio > N (t, root).prio)
    {
      split (t, root, N (t, node).a, N (t, node).b, &N (t, node).left, &N (t, node).right);
      update (t, node);
      return node;
    }
  if (cmp_key (N (t, node).a, N (t, node).b, N (t, root).a, N (t, root).b) < 0)
    N (t, root).left = insert_node (t, N (t, root).left, node);
  else
    N (t, root).right = insert_node (t, N (t, root).right, node);
  update (t, root);
  return root;
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
  t->root = insert_node (t, t->root, id);
  return id;
}

static uint32_t
remove_node (MlTreap *t, uint32_t root, uint64_t a, uint64_t b, uint32_t *removed)
{
  if (root == ML_TREAP_NIL)
    return ML_TREAP_NIL;
  int c = cmp_key (a, b, N (t, root).a, N (t, root).b);
  if (c == 0)
    {
      *removed = root;
      return merge (t, N (t, root).left, N (t, root).right);
    }
  if (c < 0)
    N (t, root).left = remove_node (t, N (t, root).left, a, b, removed);
  else
    N (t, root).right = remove_node (t, N (t, root).right, a, b, removed);
  update (t, root);
  return root;
}

bool
ml_treap_remove (MlTreap *t, uint64_t a, uint64_t b)
{
  uint32_t removed = ML_TREAP_NIL;
  t->root = remove_node (t, t->root, a, b, &removed);
  if (removed == ML_TREAP_NIL)
    return false;
  N (t, removed).left = t->free_list;
  t->free_list = removed;
  return true;
}

static bool
set_value (MlTreap *t, uint32_t i, uint64_t a, uint64_t b, uint64_t value)
{
  if (i == ML_TREAP_NIL)
    return false;
  int c = cmp_key (a, b, N (t, i).a, N (t, i).b);
  bool found;
  if (c == 0)
    {
      N (t, i).value = value;
      found = true;
    }
  else
    found = set_value (t, c < 0 ? N (t, i).left : N (t, i).right, a, b, value);
  if (found)
    update (t, i);
  return found;
}

bool
ml_treap_set_value (MlTreap *t, uint64_t a, uint64_t b, uint64_t value)
{
  return set_value (t, t->root, a, b, value);
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
