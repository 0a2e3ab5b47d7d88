#include "strategies/fit.h"

#include <stdlib.h>

#include "sim/base/btree.h"
#include "sim/base/u64map.h"

typedef enum { FIRST, BEST, NEXT } Policy;

/* best-fit's size index, TLSF style: the holes in bins of sizes (exact
 * below 32, then 32 bins per power of two), each bin its holes in (size,
 * offset) order, and a bitmap of the bins that are not empty. The
 * smallest (size, offset) of at least n is in n's bin or is the first
 * hole of the next bin that is not empty. */
enum { SUB_BITS = 5, SUB = 1 << SUB_BITS, N_BINS = SUB + (64 - SUB_BITS) * SUB, N_WORDS = (N_BINS + 63) / 64 };

typedef struct {
  MlBTree  bin[N_BINS];
  uint64_t used[N_WORDS];   /* bit: the bin holds a hole */
  uint64_t words;           /* bit: the word of used[] is not zero */
} SizeIndex;

static inline unsigned
bin_of (uint64_t size)
{
  if (size < SUB)
    return (unsigned) size;
  unsigned fl = 63 - (unsigned) __builtin_clzll (size);
  return SUB + (fl - SUB_BITS) * SUB + (unsigned) ((size >> (fl - SUB_BITS)) & (SUB - 1));
}

static inline void
bin_mark (SizeIndex *x, unsigned k, bool on)
{
  if (on)
    {
      x->used[k / 64] |= (uint64_t) 1 << (k % 64);
      x->words |= (uint64_t) 1 << (k / 64);
    }
  else if (!(x->used[k / 64] &= ~((uint64_t) 1 << (k % 64))))
    x->words &= ~((uint64_t) 1 << (k / 64));
}

/* The first bin after @k that holds a hole, or N_BINS. */
static inline unsigned
bin_next (const SizeIndex *x, unsigned k)
{
  unsigned w = (k + 1) / 64, b = (k + 1) % 64;
  if (w < N_WORDS)
    {
      uint64_t m = b ? x->used[w] >> b << b : x->used[w];
      if (m)
        return w * 64 + (unsigned) __builtin_ctzll (m);
      uint64_t ws = w + 1 < 64 ? x->words >> (w + 1) << (w + 1) : 0;
      if (ws)
        {
          w = (unsigned) __builtin_ctzll (ws);
          return w * 64 + (unsigned) __builtin_ctzll (x->used[w]);
        }
    }
  return N_BINS;
}

/* best-fit's holes by address: best-fit never asks for the lowest hole of
 * a size, only for a hole's neighbours, so two hash maps (start -> hole,
 * end -> hole) find them in O(1) where first- and next-fit need the
 * ordered, max-augmented tree. */
typedef struct {
  uint64_t off, size;
} Hole;

typedef struct {
  Hole     *hole;     /* the records; a free one is on the free list      */
  uint32_t  n, cap, free_head;
  MlU64Map  by_start, by_end;
} HoleMap;

typedef struct {
  Policy   policy;
  uint32_t seg;
  MlBTree  by_addr;   /* first/next-fit: (offset, 0) -> size, largest size under each child */
  SizeIndex *by_size; /* best-fit                                            */
  HoleMap  holes;     /* best-fit                                            */
  uint64_t top;       /* start of the free tail                             */
  uint64_t cursor;    /* next-fit: end of the last placement                */
  uint64_t capacity;
  MlSimContext *ctx;  /* to say out of memory from release()              */
} Fit;

#define HOLE_NONE UINT32_MAX

static uint32_t
hole_new (HoleMap *h, uint64_t off, uint64_t size)
{
  uint32_t i;
  if (h->free_head != HOLE_NONE)
    {
      i = h->free_head;
      h->free_head = (uint32_t) h->hole[i].off;
    }
  else
    {
      if (h->n == h->cap)
        {
          uint32_t cap = h->cap ? h->cap * 2 : 256;
          Hole *g = realloc (h->hole, (size_t) cap * sizeof *g);
          if (!g)
            return HOLE_NONE;
          h->hole = g;
          h->cap = cap;
        }
      i = h->n++;
    }
  h->hole[i] = (Hole) { off, size };
  return i;
}

static void
hole_free (HoleMap *h, uint32_t i)
{
  h->hole[i].off = h->free_head;
  h->free_head = i;
}

/* Adds the hole [off, off + size) to both maps; false when out of
 * memory (nothing added). */
static bool
hole_add (HoleMap *h, uint64_t off, uint64_t size)
{
  uint32_t i = hole_new (h, off, size);
  if (i == HOLE_NONE)
    return false;
  if (ml_u64map_put (&h->by_start, off, i) < 0)
    {
      hole_free (h, i);
      return false;
    }
  if (ml_u64map_put (&h->by_end, off + size, i) < 0)
    {
      ml_u64map_del (&h->by_start, off);
      hole_free (h, i);
      return false;
    }
  return true;
}

static void
hole_drop (HoleMap *h, uint32_t i)
{
  ml_u64map_del (&h->by_start, h->hole[i].off);
  ml_u64map_del (&h->by_end, h->hole[i].off + h->hole[i].size);
  hole_free (h, i);
}

static int
fit_create (MlSimContext *ctx, const MlKnobs *knobs, void **state, Policy policy, MlError *err)
{
  Fit *f = calloc (1, sizeof *f);
  if (!f)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  f->policy = policy;
  ml_btree_init (&f->by_addr, policy != BEST);
  if (policy == BEST)
    {
      if (!(f->by_size = calloc (1, sizeof *f->by_size)))
        {
          free (f);
          return ml_error_set (err, ML_ENOMEM, "out of memory");
        }
      for (unsigned k = 0; k < N_BINS; k++)
        ml_btree_init (&f->by_size->bin[k], false);
      f->holes.free_head = HOLE_NONE;
      ml_u64map_init (&f->holes.by_start);
      ml_u64map_init (&f->holes.by_end);
    }
  f->capacity = knobs->capacity;
  f->ctx = ctx;
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

static inline int
size_index_add (Fit *f, uint64_t off, uint64_t size)
{
  if (f->policy != BEST)
    return 0;
  unsigned k = bin_of (size);
  MlBTree *t = &f->by_size->bin[k];
  if (ml_btree_insert (t, size, off, 0) < 0)
    return ML_ENOMEM;
  if (t->count == 1)
    bin_mark (f->by_size, k, true);
  return 0;
}

static inline void
size_index_del (Fit *f, uint64_t off, uint64_t size)
{
  if (f->policy != BEST)
    return;
  unsigned k = bin_of (size);
  MlBTree *t = &f->by_size->bin[k];
  ml_btree_remove (t, ml_btree_lower_bound (t, size, off, NULL));
  if (t->count == 0)
    bin_mark (f->by_size, k, false);
}

/* Takes the smallest hole of at least @n bytes (lowest offset among
 * equals) out of the size index; returns its offset or UINT64_MAX. */
static inline uint64_t
size_index_take (Fit *f, uint64_t n, uint64_t *size, uint64_t *visited)
{
  SizeIndex *x = f->by_size;
  unsigned k = bin_of (n);
  MlBTree *t = &x->bin[k];
  MlBtPos p = ml_btree_lower_bound (t, n, 0, visited);
  if (!ml_btree_at_or_next (t, &p))
    {
      if ((k = bin_next (x, k)) == N_BINS)
        return UINT64_MAX;
      t = &x->bin[k];
      p = ml_btree_lower_bound (t, 0, 0, visited);
    }
  uint64_t off = ml_btree_b (t, p);
  *size = ml_btree_a (t, p);
  ml_btree_remove (t, p);
  if (t->count == 0)
    bin_mark (x, k, false);
  return off;
}

/* best-fit: the hole from the size index, shrunk from its start (it keeps
 * its end, so only its start key moves) or dropped when used up. */
static int
best_alloc (Fit *f, uint64_t n, MlPlacement *out, uint64_t *visited)
{
  HoleMap *h = &f->holes;
  uint64_t size = 0, off = size_index_take (f, n, &size, visited);
  if (off == UINT64_MAX)
    {
      off = f->top;
      f->top += n;
    }
  else
    {
      uint32_t i = HOLE_NONE;
      ml_u64map_get (&h->by_start, off, &i);
      if (visited)
        (*visited)++;
      if (size == n)
        hole_drop (h, i);
      else
        {
          ml_u64map_del (&h->by_start, off);
          h->hole[i].off = off + n;
          h->hole[i].size = size - n;
          if (ml_u64map_put (&h->by_start, off + n, i) < 0)
            {
              /* out of memory only loses the rest of the hole */
              ml_u64map_del (&h->by_end, off + size);
              hole_free (h, i);
            }
          else if (size_index_add (f, off + n, size - n) < 0)
            return ML_ENOMEM;
        }
    }
  out->offset = off;
  return 0;
}

static void
best_release (Fit *f, uint64_t off, uint64_t n, uint64_t *visited)
{
  HoleMap *h = &f->holes;
  uint32_t p = HOLE_NONE, q = HOLE_NONE;
  bool join_pred = ml_u64map_get (&h->by_end, off, &p);
  bool join_succ = ml_u64map_get (&h->by_start, off + n, &q);
  if (visited)
    *visited += 2;
  uint64_t start = off, size = n;
  if (join_pred)
    {
      start = h->hole[p].off;
      size += h->hole[p].size;
      size_index_del (f, h->hole[p].off, h->hole[p].size);
    }
  if (join_succ)
    {
      size += h->hole[q].size;
      size_index_del (f, h->hole[q].off, h->hole[q].size);
    }
  if (start + size == f->top)
    {
      /* the free block reaches the tail: the tail grows down */
      if (join_pred)
        hole_drop (h, p);
      if (join_succ)
        hole_drop (h, q);
      f->top = start;
      return;
    }
  if (join_pred && join_succ)
    {
      /* pred swallows the block and succ: pred's end key moves to succ's end */
      ml_u64map_del (&h->by_end, off);
      hole_drop (h, q);
      h->hole[p].size = size;
      if (ml_u64map_put (&h->by_end, start + size, p) < 0)
        {
          ml_u64map_del (&h->by_start, start);
          hole_free (h, p);
          return;   /* out of memory only loses a hole */
        }
    }
  else if (join_pred)
    {
      ml_u64map_del (&h->by_end, off);
      h->hole[p].size = size;
      if (ml_u64map_put (&h->by_end, start + size, p) < 0)
        {
          ml_u64map_del (&h->by_start, start);
          hole_free (h, p);
          return;
        }
    }
  else if (join_succ)
    {
      ml_u64map_del (&h->by_start, off + n);
      h->hole[q].off = start;
      h->hole[q].size = size;
      if (ml_u64map_put (&h->by_start, start, q) < 0)
        {
          ml_u64map_del (&h->by_end, start + size);
          hole_free (h, q);
          return;
        }
    }
  else if (!hole_add (h, start, size))
    return;
  size_index_add (f, start, size);
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
  MlBtPos node;
  bool found = false;
  switch (f->policy)
    {
    case FIRST:
      found = ml_btree_first_fit (&f->by_addr, n, &node, visited);
      break;
    case BEST:
      return best_alloc (f, n, out, visited);
    case NEXT:
      found = ml_btree_next_fit (&f->by_addr, ml_btree_lower_bound (&f->by_addr, f->cursor, 0, visited), n, &node, visited)
              || ml_btree_first_fit (&f->by_addr, n, &node, visited);
      break;
    }
  uint64_t off;
  if (found)
    {
      off = ml_btree_a (&f->by_addr, node);
      uint64_t size = ml_btree_v (&f->by_addr, node);
      if (size == n)
        ml_btree_remove (&f->by_addr, node);
      else
        {
          /* shrink in place: the hole keeps its place among the holes */
          ml_btree_set (&f->by_addr, node, off + n, 0, size - n);
          if (size_index_add (f, off + n, size - n) < 0)
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
  if (f->policy == BEST)
    {
      best_release (f, off, n, visited);
      return;
    }
  MlBTree *t = &f->by_addr;
  /* one descent finds both neighbours */
  MlBtPos here = ml_btree_lower_bound (t, off, 0, visited), pred, succ = here;
  bool has_pred = ml_btree_before (t, here, &pred), has_succ = ml_btree_at_or_next (t, &succ);
  uint64_t pred_off = has_pred ? ml_btree_a (t, pred) : 0, pred_size = has_pred ? ml_btree_v (t, pred) : 0;
  uint64_t succ_off = has_succ ? ml_btree_a (t, succ) : 0, succ_size = has_succ ? ml_btree_v (t, succ) : 0;
  bool join_pred = has_pred && pred_off + pred_size == off;
  bool join_succ = has_succ && succ_off == off + n;
  uint64_t start = off, size = n;
  if (join_pred)
    {
      start = pred_off;
      size += pred_size;
      size_index_del (f, pred_off, pred_size);
    }
  if (join_succ)
    {
      size += succ_size;
      size_index_del (f, succ_off, succ_size);
    }
  if (start + size == f->top)
    {
      /* the free block reaches the tail: the tail grows down */
      if (join_succ)
        ml_btree_remove (t, succ);   /* pred, before it, keeps its position */
      if (join_pred)
        ml_btree_remove (t, pred);
      f->top = start;
      return;
    }
  if (join_pred && join_succ)
    {
      ml_btree_remove (t, succ);
      ml_btree_set (t, pred, start, 0, size);
    }
  else if (join_pred)
    ml_btree_set (t, pred, start, 0, size);
  else if (join_succ)
    ml_btree_set (t, succ, start, 0, size);
  else if (ml_btree_insert (t, start, 0, size) < 0)
    {
      ml_sim_out_of_memory (f->ctx);   /* the run ends: "out of memory" */
      return;
    }
  if (size_index_add (f, start, size) < 0)
    ml_sim_out_of_memory (f->ctx);
}

static uint64_t
fit_largest_free (void *state)
{
  Fit *f = state;
  uint64_t m = 0;
  if (f->policy != BEST)
    m = ml_btree_max (&f->by_addr);
  else
    for (unsigned k = N_BINS; k-- > 0;)
      if (f->by_size->bin[k].count)
        {
          /* the bin's last hole is its largest */
          MlBtPos p = ml_btree_lower_bound (&f->by_size->bin[k], UINT64_MAX, UINT64_MAX, NULL);
          if (ml_btree_before (&f->by_size->bin[k], p, &p))
            m = ml_btree_a (&f->by_size->bin[k], p);
          break;
        }
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
  ml_btree_clear (&f->by_addr);
  if (f->by_size)
    for (unsigned k = 0; k < N_BINS; k++)
      ml_btree_clear (&f->by_size->bin[k]);
  free (f->holes.hole);
  ml_u64map_clear (&f->holes.by_start);
  ml_u64map_clear (&f->holes.by_end);
  free (f->by_size);
  free (f);
}

const MlStrategy ml_strategy_first_fit = {
  .name = "first-fit",
  .summary = "online: lowest hole that fits; O(log n) with a max-augmented B+ tree",
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
