#include "strategies/fit.h"

#include <stdlib.h>

#include "sim/treap.h"

typedef enum { FIRST, BEST, NEXT } Policy;

typedef struct {
  Policy   policy;
  uint32_t seg;
  MlTreap  by_addr;   /* (offset, 0) -> size, subtree max size */
  MlTreap  by_size;   /* best-fit: (size, offset)               */
  uint64_t top;       /* start of the free tail                 */
  uint64_t cursor;    /* next-fit: end of the last placement    */
  uint64_t capacity;
} Fit;

static int
fit_create (MlSimContext *ctx, const MlKnobs *knobs, void **state, Policy policy, MlError *err)
{
  Fit *f = calloc (1, sizeof *f);
  if (!f)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  f->policy = policy;
  ml_treap_init (&f->by_addr);
  ml_treap_init (&f->by_size);
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

static int
hole_insert (Fit *f, uint64_t off, uint64_t size)
{
  if (ml_treap_insert (&f->by_addr, off, 0, size) == ML_TREAP_NIL)
    return ML_ENOMEM;
  if (f->policy == BEST && ml_treap_insert (&f->by_size, size, off, 0) == ML_TREAP_NIL)
    return ML_ENOMEM;
  return 0;
}

static void
hole_remove (Fit *f, uint64_t off, uint64_t size)
{
  ml_treap_remove (&f->by_addr, off, 0);
  if (f->policy == BEST)
    ml_treap_remove (&f->by_size, size, off);
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
  uint64_t off = 0, size = 0;
  switch (f->policy)
    {
    case FIRST:
      node = ml_treap_first_with_value (&f->by_addr, n, visited);
      break;
    case BEST:
      {
        uint32_t s = ml_treap_lower_bound (&f->by_size, n, 0, visited);
        if (s != ML_TREAP_NIL)
          node = ml_treap_find (&f->by_addr, f->by_size.nodes[s].b, 0, visited);
      }
      break;
    case NEXT:
      node = ml_treap_first_with_value_from (&f->by_addr, f->cursor, 0, n, visited);
      if (node == ML_TREAP_NIL)
        node = ml_treap_first_with_value (&f->by_addr, n, visited);
      break;
    }
  if (node != ML_TREAP_NIL)
    {
      off = f->by_addr.nodes[node].a;
      size = f->by_addr.nodes[node].value;
      if (size == n || f->policy == BEST)
        {
          hole_remove (f, off, size);
          if (size > n && hole_insert (f, off + n, size - n) < 0)
            return ML_ENOMEM;
        }
      else
        {
          /* shrink in place: the hole's order among holes does not change */
          f->by_addr.nodes[node].a = off + n;
          ml_treap_set_value (&f->by_addr, off + n, 0, size - n);
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
  uint32_t pred = ml_treap_predecessor (&f->by_addr, off, 0, visited);
  if (pred != ML_TREAP_NIL)
    {
      uint64_t po = f->by_addr.nodes[pred].a, ps = f->by_addr.nodes[pred].value;
      if (po + ps == off)
        {
          hole_remove (f, po, ps);
          off = po;
          n += ps;
        }
    }
  uint32_t succ = ml_treap_lower_bound (&f->by_addr, off + n, 0, visited);
  if (succ != ML_TREAP_NIL && f->by_addr.nodes[succ].a == off + n)
    {
      uint64_t ss = f->by_addr.nodes[succ].value;
      hole_remove (f, off + n, ss);
      n += ss;
    }
  if (off + n == f->top)
    f->top = off;
  else
    hole_insert (f, off, n);   /* out of memory here only loses a hole */
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
  free (f);
}

const MlStrategy ml_strategy_first_fit = {
  .name = "first-fit",
  .summary = "online: lowest hole that fits; O(log n) with a max-augmented treap",
  .kind = ML_STRATEGY_ONLINE,
  .create = create_first, .alloc = fit_alloc, .release = fit_release,
  .largest_free = fit_largest_free, .lift_capacity = fit_lift, .destroy = fit_destroy,
};

const MlStrategy ml_strategy_best_fit = {
  .name = "best-fit",
  .summary = "online: smallest hole that fits (lowest offset among equals); O(log n)",
  .kind = ML_STRATEGY_ONLINE,
  .create = create_best, .alloc = fit_alloc, .release = fit_release,
  .largest_free = fit_largest_free, .lift_capacity = fit_lift, .destroy = fit_destroy,
};

const MlStrategy ml_strategy_next_fit = {
  .name = "next-fit",
  .summary = "online: first hole at or after the last placement, wrapping; O(log n)",
  .kind = ML_STRATEGY_ONLINE,
  .create = create_next, .alloc = fit_alloc, .release = fit_release,
  .largest_free = fit_largest_free, .lift_capacity = fit_lift, .destroy = fit_destroy,
};
