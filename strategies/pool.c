#include "strategies/pool.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/array.h"
#include "sim/base/units.h"

#define NONE UINT32_MAX

typedef struct {
  uint64_t size;        /* slot bytes */
  uint32_t per_chunk;   /* slots in one chunk */
  uint32_t head;        /* chunks of this class with a free slot (list) */
} Class;

typedef struct {
  uint32_t seg;         /* plan segment */
  uint32_t cls;         /* NONE: empty (cached) */
  uint32_t used, bump;  /* live slots; slots ever carved since it was empty */
  uint32_t free_head;   /* freed slots: a list of the buffers that held them */
  uint32_t prev, next;  /* the class's non-full list, or the empty-chunk stack */
} Chunk;

typedef struct {
  MlSimContext *ctx;
  uint64_t  chunk, large, capacity, align;
  bool      release;
  Class    *cls;
  uint32_t  n_cls;
  Chunk    *ch;
  uint32_t  n_ch;
  size_t    cap_ch;
  uint32_t  empty;      /* cached empty chunks (stack through .next) */
  uint32_t  dead;       /* recycled chunk records (stack through .next) */
  /* per buffer */
  uint32_t *chunk_of;   /* NONE: a large request in its own segment */
  uint32_t *link;       /* next buffer in its chunk's freed-slot list */
  uint64_t *slot_off;   /* offset of the slot */
  uint64_t  waste;      /* class size - rounded size, over live slots */
} Pool;

/* ---- options ---- */

typedef struct {
  uint64_t large;
  bool     large_set, release;
} Opts;

static int
parse_option (void *user, const char *key, const char *value, MlError *err)
{
  Opts *o = user;
  if (strcmp (key, "reorder") == 0 || strcmp (key, "exclude") == 0 || strcmp (key, "pin") == 0)
    return 0;   /* graph loader options share --options */
  if (strcmp (key, "large") == 0)
    {
      int rc = ml_parse_size (value, &o->large, err);
      if (rc < 0)
        return err ? ml_error_prefix (err, "pool: option large") : rc;
      o->large_set = true;
      return 0;
    }
  if (strcmp (key, "release") == 0)
    {
      if (strcmp (value, "0") && strcmp (value, "1"))
        return ml_error_set (err, ML_EUSAGE, "pool: option release=%s: use 0 or 1", value);
      o->release = value[0] == '1';
      return 0;
    }
  return ml_error_set (err, ML_EUSAGE, "pool: unknown option \"%s\" (known: large, release)", key);
}

/* ---- classes ---- */

static int
build_classes (Pool *p)
{
  uint64_t a = p->align, v = a;
  uint32_t cap = 64, n = 0;
  Class *c = malloc (cap * sizeof *c);
  if (!c)
    return ML_ENOMEM;
  while (v < p->large)
    {
      if (n == cap)
        {
          Class *g = realloc (c, (cap *= 2) * sizeof *c);
          if (!g)
            {
              free (c);
              return ML_ENOMEM;
            }
          c = g;
        }
      c[n++].size = v;
      uint64_t step = v >= 4 ? (uint64_t) 1 << (61 - __builtin_clzll (v)) : 1;
      v += step > a ? step : a;
    }
  if (n == cap && !(c = realloc (c, (cap + 1) * sizeof *c)))
    return ML_ENOMEM;
  c[n++].size = p->large;
  for (uint32_t i = 0; i < n; i++)
    {
      c[i].per_chunk = (uint32_t) (p->chunk / c[i].size);
      c[i].head = NONE;
    }
  p->cls = c;
  p->n_cls = n;
  return 0;
}

/* The smallest class of at least @n bytes (n <= large). */
static inline uint32_t
class_of (const Pool *p, uint64_t n)
{
  uint32_t lo = 0, hi = p->n_cls - 1;
  while (lo < hi)
    {
      uint32_t mid = (lo + hi) / 2;
      if (p->cls[mid].size >= n)
        hi = mid;
      else
        lo = mid + 1;
    }
  return lo;
}

/* ---- chunk lists ---- */

static void
list_push (Pool *p, uint32_t *head, uint32_t i)
{
  p->ch[i].prev = NONE;
  p->ch[i].next = *head;
  if (*head != NONE)
    p->ch[*head].prev = i;
  *head = i;
}

static void
list_unlink (Pool *p, uint32_t *head, uint32_t i)
{
  Chunk *c = &p->ch[i];
  if (c->prev != NONE)
    p->ch[c->prev].next = c->next;
  else
    *head = c->next;
  if (c->next != NONE)
    p->ch[c->next].prev = c->prev;
}

static bool
fits (const Pool *p, uint64_t bytes)
{
  return !p->capacity || ml_sim_reserved (p->ctx) + bytes <= p->capacity;
}

/* A chunk record for a new reservation, or NONE (ML_EOOM / ML_ENOMEM in *rc). */
static uint32_t
chunk_reserve (Pool *p, int *rc)
{
  if (!fits (p, p->chunk))
    {
      *rc = ML_EOOM;
      return NONE;
    }
  uint32_t i;
  if (p->dead != NONE)
    {
      i = p->dead;
      p->dead = p->ch[i].next;
    }
  else
    {
      if (ML_ARRAY_RESERVE (p->ch, p->n_ch, p->cap_ch, 64) < 0)
        {
          *rc = ML_ENOMEM;
          return NONE;
        }
      i = p->n_ch++;
    }
  long s = ml_sim_reserve (p->ctx, p->chunk, 0, 0);
  if (s < 0)
    {
      *rc = ML_ENOMEM;
      return NONE;
    }
  p->ch[i] = (Chunk) { .seg = (uint32_t) s, .cls = NONE, .free_head = NONE, .prev = NONE, .next = NONE };
  return i;
}

static void
chunk_give_back (Pool *p, uint32_t i)
{
  ml_sim_release (p->ctx, p->ch[i].seg);
  p->ch[i].next = p->dead;
  p->dead = i;
}

/* ---- the strategy ---- */

static int
pool_create (MlSimContext *ctx, const MlKnobs *knobs, void **state, MlError *err)
{
  Opts o = { 0 };
  int rc = ml_options_foreach (knobs->options, parse_option, &o, err);
  if (rc < 0)
    return rc;
  uint64_t align = knobs->align ? knobs->align : 1;
  uint64_t chunk = knobs->chunk ? knobs->chunk : (uint64_t) 4 << 20;
  if (chunk < align || chunk % align)
    return ml_error_set (err, ML_EUSAGE, "pool: the chunk size %" PRIu64 " is not a multiple of the alignment %" PRIu64,
                         chunk, align);
  uint64_t large = o.large_set ? o.large : chunk;
  if (large > chunk)
    return ml_error_set (err, ML_EUSAGE,
                         "pool: large=%" PRIu64 " is above the chunk size %" PRIu64 " (such requests would fit no chunk)",
                         large, chunk);
  large = large / align * align;
  if (large == 0)
    return ml_error_set (err, ML_EUSAGE, "pool: large=%" PRIu64 " is below the alignment %" PRIu64, o.large, align);
  if (chunk / align > UINT32_MAX)
    return ml_error_set (err, ML_EUSAGE, "pool: the chunk size %" PRIu64 " holds more than 2^32 slots of %" PRIu64 " bytes",
                         chunk, align);
  const MlBuffers *bufs = ml_sim_buffers (ctx);
  Pool *p = calloc (1, sizeof *p);
  size_t n = bufs->n ? bufs->n : 1;
  if (!p || !(p->chunk_of = malloc (n * sizeof *p->chunk_of)) || !(p->link = malloc (n * sizeof *p->link))
      || !(p->slot_off = malloc (n * sizeof *p->slot_off)))
    goto oom;
  p->ctx = ctx;
  p->chunk = chunk;
  p->large = large;
  p->align = align;
  p->capacity = knobs->capacity;
  p->release = o.release;
  p->empty = p->dead = NONE;
  if (build_classes (p) < 0)
    goto oom;
  *state = p;
  return 0;
oom:
  if (p)
    {
      free (p->chunk_of);
      free (p->link);
      free (p->slot_off);
    }
  free (p);
  return ml_error_set (err, ML_ENOMEM, "out of memory");
}

static int
pool_alloc (void *state, const MlRequest *req, MlPlacement *out, uint64_t *visited)
{
  Pool *p = state;
  uint64_t n = req->size ? req->size : 1;
  int rc = 0;
  (*visited)++;
  if (n > p->large)
    {
      if (!fits (p, n))
        return ML_EOOM;
      long s = ml_sim_reserve (p->ctx, n, 0, 0);
      if (s < 0)
        return ML_ENOMEM;
      p->chunk_of[req->buffer] = NONE;
      out->segment = (uint32_t) s;
      out->offset = 0;
      return 0;
    }
  uint32_t k = class_of (p, n);
  Class *c = &p->cls[k];
  uint32_t i = c->head;
  if (i == NONE)
    {
      /* every chunk of the class is full: a cached empty chunk, else a new one */
      if (p->empty != NONE)
        {
          i = p->empty;
          p->empty = p->ch[i].next;
        }
      else if ((i = chunk_reserve (p, &rc)) == NONE)
        return rc;
      Chunk *h = &p->ch[i];
      h->cls = k;
      h->used = h->bump = 0;
      h->free_head = NONE;
      list_push (p, &c->head, i);
    }
  Chunk *h = &p->ch[i];
  uint64_t off;
  uint32_t b = h->free_head;
  if (b != NONE)
    {
      off = p->slot_off[b];
      h->free_head = p->link[b];
    }
  else
    off = (uint64_t) h->bump++ * c->size;
  if (++h->used == c->per_chunk)
    list_unlink (p, &c->head, i);
  p->chunk_of[req->buffer] = i;
  p->slot_off[req->buffer] = off;
  p->waste += c->size - req->size;
  ml_sim_block_waste (p->ctx, p->waste);
  out->segment = h->seg;
  out->offset = off;
  return 0;
}

static void
pool_release (void *state, const MlRequest *req, const MlPlacement *at, uint64_t *visited)
{
  Pool *p = state;
  uint32_t i = p->chunk_of[req->buffer];
  (*visited)++;
  if (i == NONE)
    {
      ml_sim_release (p->ctx, at->segment);
      return;
    }
  Chunk *h = &p->ch[i];
  Class *c = &p->cls[h->cls];
  p->waste -= c->size - req->size;
  ml_sim_block_waste (p->ctx, p->waste);
  if (h->used-- == c->per_chunk)
    list_push (p, &c->head, i);
  if (h->used == 0)
    {
      list_unlink (p, &c->head, i);
      h->cls = NONE;
      if (p->release)
        chunk_give_back (p, i);
      else
        {
          h->next = p->empty;
          p->empty = i;
        }
      return;
    }
  p->link[req->buffer] = h->free_head;
  h->free_head = req->buffer;
}

static uint64_t
pool_release_cached (void *state, uint32_t attempt, const MlRequest *req)
{
  Pool *p = state;
  (void) attempt;
  (void) req;
  uint64_t bytes = 0;
  while (p->empty != NONE)
    {
      uint32_t i = p->empty;
      p->empty = p->ch[i].next;
      chunk_give_back (p, i);
      bytes += p->chunk;
    }
  return bytes;
}

static uint64_t
pool_largest_free (void *state)
{
  Pool *p = state;
  uint64_t m = 0;
  for (uint32_t k = 0; k < p->n_cls; k++)
    if (p->cls[k].head != NONE)
      m = p->cls[k].size;
  if (p->empty != NONE && p->large > m)
    m = p->large;
  uint64_t reserved = ml_sim_reserved (p->ctx);
  if (p->capacity > reserved && p->capacity - reserved > m)
    m = p->capacity - reserved;
  return m;
}

static void
pool_lift (void *state)
{
  ((Pool *) state)->capacity = 0;
}

static void
pool_destroy (void *state)
{
  Pool *p = state;
  free (p->cls);
  free (p->ch);
  free (p->chunk_of);
  free (p->link);
  free (p->slot_off);
  free (p);
}

static const char *const pool_keys[] = { "large", "release", NULL };

const MlStrategy ml_strategy_pool = {
  .name = "pool",
  .summary = "online: size-classed pool in --chunk chunks (4 classes per doubling), large requests in their own segments; O(log classes)",
  .kind = ML_STRATEGY_ONLINE,
  .knobs = ML_KNOB_CHUNK | ML_KNOB_RETRIES | ML_KNOB_OPTIONS,
  .options = pool_keys,
  .create = pool_create, .alloc = pool_alloc, .release = pool_release,
  .release_cached = pool_release_cached,
  .largest_free = pool_largest_free, .lift_capacity = pool_lift, .destroy = pool_destroy,
};
