#include "strategies/fit.h"

#include <stdlib.h>

#include "sim/base/treap.h"

typedef enum { FIRST, BEST, NEXT } Policy;

typedef struct {
  Policy   policy;
  uint32_t seg;
  MlTreap  by_addr;   /* (offset, 0) -> size, subtree max size */
  MlTreap  by_size;   /* best-fit: (size, offset)               */
  uint64_t top;       /* start of the free tail                 */
  uint64_t cursor;    /* next-fit: end of the last placement    */
  uint64_t capacity;
  uint32_t *xref;     /* best-fit: by_addr handle -> by_size handle */
  uint32_t  xcap;
} Fit;

static int
fit_create (MlSimContext *ctx, const MlKnobs *knobs, void **state, Policy policy, MlError *err)
{
  Fit *f = calloc (1, sizeof *f);
  if (!f)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  f->policy = policy;
  ml_treap_init (&f->by_addr);
  ml_treap_init_plain (&f->by_size);
  f->capacity = knobs->capacity;
  long s = ml_sim_reserve (ctx, 0, 0, ML_SEG_GROWABLE);
  if (s < 0)
    {
      free (f);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  f->seg = (uint32_t) s;
  *state = f;
  return 0;
}

static int create_first (MlSimContext *c, const MlKnobs *k, void **s, MlError *e) { return fit_create (c, k, s, FIRST, e); }
static int create_best  (MlSimContext *c, const MlKnobs *k, void **s, MlError *e) { return fit_create (c, k, s, BEST, e); }
static int create_next  (MlSimContext *c, const MlKnobs *k, void **s, MlError *e) { return fit_create (c, k, s, NEXT, e); }

/* best-fit keeps a second index by (size, offset) whose nodes point back
 * at the hole's by_addr node, and xref points forward, so neither side
 * ever searches for the other. */
static int
size_index_add (Fit *f, uint32_t hole, uint64_t off, uint64_t size)
{
  if (f->policy != BEST)
    return 0;
  if (hole >= f->xcap)
    {
      uint32_t cap = f->xcap ? f->xcap : 64;
      while (cap <= hole)
        cap *= 2;
      uint32_t *x = realloc (f->xref, cap * sizeof *x);
      if (!x)
        return ML_ENOMEM;
      f->xref = x;
      f->xcap = cap;
    }
  uint32_t id = ml_treap_insert (&f->by_size, size, off, hole);
  if (id == ML_TREAP_NIL)
    return ML_ENOMEM;
  f->xref[hole] = id;
  return 0;
}

static void
size_index_del (Fit *f, uint32_t hole)
{
  if (f->policy == BEST)
    ml_treap_remove_node (&f->by_size, f->xref[hole]);
}

static int
fit_alloc (void *state, const MlRequest *req, MlPlacement *out, uint64_t *visited)
{
  Fit *f = state;
  out->segment = f->seg;
  uint64_t n = req->size;
  if (n == 0)
    {
      out->offset = 0;
      return 0;
    }
  uint32_t node = ML_TREAP_NIL;
  switch (f->policy)
    {
    case FIRST:
      node = ml_treap_first_with_value (&f->by_addr, n, visited);
      break;
    case BEST:
      {
        uint32_t s = ml_treap_lower_bound (&f->by_size, n, 0, visited);
        if (s != ML_TREAP_NIL)
          {
            node = (uint32_t) f->by_size.nodes[s].value;
            ml_treap_remove_node (&f->by_size, s);
          }
      }
      break;
    case NEXT:
      node = ml_treap_first_with_value_from (&f->by_addr, f->cursor, 0, n, visited);
      if (node == ML_TREAP_NIL)
        node = ml_treap_first_with_value (&f->by_addr, n, visited);
      break;
    }
  uint64_t off;
  if (node != ML_TREAP_NIL)
    {
      off = f->by_addr.nodes[node].a;
      uint64_t size = f->by_addr.nodes[node].value;
      if (size == n)
        ml_treap_remove_node (&f->by_addr, node);
      else
        {
          /* shrink in place: the hole keeps its place among the holes */
          ml_treap_set_node (&f->by_addr, node, off + n, 0, size - n);
          if (size_index_add (f, node, off + n, size - n) < 0)
            return ML_ENOMEM;
        }
    }
  else
    {
      off = f->top;
      f->top += n;
    }
  out->offset = off;
  f->cursor = off + n;
  return 0;
}

static void
fit_release (void *state, const MlRequest *req, const MlPlacement *at, uint64_t *visited)
{
  Fit *f = state;
  uint64_t off = at->offset, n = req->size;
  if (n == 0)
    return;
  MlTreap *t = &f->by_addr;
  /* one descent finds both neighbours */
  uint32_t pred = ML_TREAP_NIL, succ = ML_TREAP_NIL;
  for (uint32_t i = t->root; i != ML_TREAP_NIL;)
    {
      if (visited)
        (*visited)++;
      if (t->nodes[i].a < off)
        {
          pred = i;
          i = t->nodes[i].right;
        }
      else
        {
          succ = i;
          i = t->nodes[i].left;
        }
    }
  bool join_pred = pred != ML_TREAP_NIL && t->nodes[pred].a + t->nodes[pred].value == off;
  bool join_succ = succ != ML_TREAP_NIL && t->nodes[succ].a == off + n;
  uint64_t start = off, size = n;
  if (join_pred)
    {
      start = t->nodes[pred].a;
      size += t->nodes[pred].value;
      size_index_del (f, pred);
    }
  if (join_succ)
    {
      size += t->nodes[succ].value;
      size_index_del (f, succ);
    }
  if (start + size == f->top)
    {
      /* the free block reaches the tail: the tail grows down */
      if (join_succ)
        ml_treap_remove_node (t, succ);
      if (join_pred)
        ml_treap_remove_node (t, pred);
      f->top = start;
      return;
    }
  uint32_t hole;
  if (join_pred && join_succ)
    {
      ml_treap_remove_node (t, succ);   /* node handles stay valid */
      ml_treap_set_node (t, hole = pred, start, 0, size);
    }
  else if (join_pred)
    ml_treap_set_node (t, hole = pred, start, 0, size);
  else if (join_succ)
    ml_treap_set_node (t, hole = succ, start, 0, size);
  else if ((hole = ml_treap_insert (t, start, 0, size)) == ML_TREAP_NIL)
    return;   /* out of memory only loses a hole */
  size_index_add (f, hole, start, size);
}

static uint64_t
fit_largest_free (void *state)
{
  Fit *f = state;
  uint64_t m = ml_treap_max_value (&f->by_addr);
  if (f->capacity > f->top && f->capacity - f->top > m)
    m = f->capacity - f->top;
  return m;
}

static void
fit_lift (void *state)
{
  ((Fit *) state)->capacity = 0;
}

static void
fit_destroy (void *state)
{
  Fit *f = state;
  ml_treap_clear (&f->by_addr);
  ml_treap_clear (&f->by_size);
  free (f->xref);
  free (f);
}

const MlStrategy ml_strategy_first_fit = {
  .name = "first-fit",
  .summary = "online: lowest hole that fits; O(log n) with a max-augmented treap",
  .kind = ML_STRATEGY_ONLINE,
  .flags = ML_STRATEGY_DEFAULT,
  .create = create_first, .alloc = fit_alloc, .release = fit_release,
  .largest_free = fit_largest_free, .lift_capacity = fit_lift, .destroy = fit_destroy,
};

const MlStrategy ml_strategy_best_fit = {
  .name = "best-fit",
  .summary = "online: smallest hole that fits (lowest offset among equals); O(log n)",
  .kind = ML_STRATEGY_ONLINE,
  .flags = ML_STRATEGY_DEFAULT,
  .create = create_best, .alloc = fit_alloc, .release = fit_release,
  .largest_free = fit_largest_free, .lift_capacity = fit_lift, .destroy = fit_destroy,
};

const MlStrategy ml_strategy_next_fit = {
  .name = "next-fit",
  .summary = "online: first hole at or after the last placement, wrapping; O(log n)",
  .kind = ML_STRATEGY_ONLINE,
  .flags = ML_STRATEGY_DEFAULT,
  .create = create_next, .alloc = fit_alloc, .release = fit_release,
  .largest_free = fit_largest_free, .lift_capacity = fit_lift, .destroy = fit_destroy,
};
