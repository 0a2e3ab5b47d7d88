#include "strategies/buddy.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/array.h"
#include "sim/base/u64map.h"

#define NONE UINT32_MAX
#define OWN  0xff           /* order of a request in its own segment */

typedef struct {
  uint64_t off;
  uint32_t seg;
  uint32_t prev, next;      /* its order's free list; next chains recycled nodes */
  uint32_t order;
} FreeBlk;

typedef struct {
  MlSimContext *ctx;
  uint64_t  capacity;
  unsigned  min_order;      /* log2 of the smallest block (the alignment) */
  unsigned  seg_order;      /* log2 of a segment */
  bool      release;
  /* the arena: one segment cut into roots */
  bool      arena_only;     /* before the first OOM: no segments beyond it */
  uint32_t  arena_seg;      /* NONE when there is none */
  uint64_t  root_off[64];
  unsigned  root_order[64];
  unsigned  n_roots;
  /* free blocks */
  FreeBlk  *fb;
  uint32_t  n_fb, recycled;
  size_t    cap_fb;
  uint32_t  head[64];
  uint64_t  mask;           /* bit k: the list of order k is not empty */
  MlU64Map  at;             /* (segment, offset) -> free block */
  uint8_t  *order;          /* per buffer */
  uint64_t  waste;
} Buddy;

static inline uint64_t
key_of (const Buddy *b, uint32_t seg, uint64_t off)
{
  return (uint64_t) seg << 40 | off >> b->min_order;
}

static inline unsigned
ceil_log2 (uint64_t n)
{
  return n <= 1 ? 0 : 64 - (unsigned) __builtin_clzll (n - 1);
}

/* ---- free lists ---- */

static int
free_push (Buddy *b, uint32_t seg, uint64_t off, unsigned order)
{
  uint32_t i;
  if (b->recycled != NONE)
    {
      i = b->recycled;
      b->recycled = b->fb[i].next;
    }
  else
    {
      if (ML_ARRAY_RESERVE (b->fb, b->n_fb, b->cap_fb, 256) < 0)
        return ML_ENOMEM;
      i = b->n_fb++;
    }
  if (ml_u64map_put (&b->at, key_of (b, seg, off), i) < 0)
    return ML_ENOMEM;
  FreeBlk *f = &b->fb[i];
  f->off = off;
  f->seg = seg;
  f->order = order;
  f->prev = NONE;
  f->next = b->head[order];
  if (f->next != NONE)
    b->fb[f->next].prev = i;
  b->head[order] = i;
  b->mask |= (uint64_t) 1 << order;
  return 0;
}

static void
free_unlink (Buddy *b, uint32_t i)
{
  FreeBlk *f = &b->fb[i];
  if (f->prev != NONE)
    b->fb[f->prev].next = f->next;
  else if ((b->head[f->order] = f->next) == NONE)
    b->mask &= ~((uint64_t) 1 << f->order);
  if (f->next != NONE)
    b->fb[f->next].prev = f->prev;
  ml_u64map_del (&b->at, key_of (b, f->seg, f->off));
  f->next = b->recycled;
  b->recycled = i;
}

/* The order of the buddy tree that holds @off in segment @seg. */
static inline unsigned
root_order (const Buddy *b, uint32_t seg, uint64_t off)
{
  if (seg != b->arena_seg)
    return b->seg_order;
  unsigned r = 0;
  while (r + 1 < b->n_roots && off >= b->root_off[r + 1])
    r++;
  return b->root_order[r];
}

static bool
fits (const Buddy *b, uint64_t bytes)
{
  return !b->capacity || ml_sim_reserved (b->ctx) + bytes <= b->capacity;
}

/* ---- options ---- */

typedef struct {
  bool release, arena;
} Opts;

static int
parse_option (void *user, const char *key, const char *value, MlError *err)
{
  Opts *o = user;
  if (strcmp (key, "reorder") == 0 || strcmp (key, "exclude") == 0 || strcmp (key, "pin") == 0)
    return 0;   /* graph loader options share --options */
  bool *flag = strcmp (key, "release") == 0 ? &o->release : strcmp (key, "arena") == 0 ? &o->arena : NULL;
  if (!flag)
    return ml_error_set (err, ML_EUSAGE, "buddy: unknown option \"%s\" (known: release, arena)", key);
  if (strcmp (value, "0") && strcmp (value, "1"))
    return ml_error_set (err, ML_EUSAGE, "buddy: option %s=%s: use 0 or 1", key, value);
  *flag = value[0] == '1';
  return 0;
}

/* ---- the strategy ---- */

static int
buddy_create (MlSimContext *ctx, const MlKnobs *knobs, void **state, MlError *err)
{
  Opts o = { 0 };
  int rc = ml_options_foreach (knobs->options, parse_option, &o, err);
  if (rc < 0)
    return rc;
  uint64_t align = knobs->align ? knobs->align : 1;
  uint64_t chunk = knobs->chunk ? knobs->chunk : (uint64_t) 4 << 20;
  unsigned min_order = ceil_log2 (align), seg_order = ceil_log2 (chunk);
  if (seg_order >= 63)
    return ml_error_set (err, ML_EUSAGE, "buddy: the chunk size %" PRIu64 " is too large", chunk);
  if (seg_order < min_order)
    seg_order = min_order;
  if (seg_order - min_order >= 40)
    return ml_error_set (err, ML_EUSAGE, "buddy: a segment of 2^%u bytes holds more than 2^40 blocks of the alignment %" PRIu64,
                         seg_order, align);
  if (o.arena && !knobs->capacity)
    return ml_error_set (err, ML_EUSAGE, "buddy: arena=1 needs a capacity (--capacity): the arena is the whole device");
  uint64_t arena = knobs->capacity >> min_order << min_order;
  if (o.arena && arena == 0)
    return ml_error_set (err, ML_EUSAGE, "buddy: the capacity %" PRIu64 " holds no block of the alignment %" PRIu64,
                         knobs->capacity, align);
  if (o.arena && (arena >> min_order) >> 40)
    return ml_error_set (err, ML_EUSAGE, "buddy: an arena of %" PRIu64 " bytes holds more than 2^40 blocks of the alignment %" PRIu64,
                         arena, align);
  const MlBuffers *bufs = ml_sim_buffers (ctx);
  Buddy *b = calloc (1, sizeof *b);
  if (!b || !(b->order = malloc (bufs->n ? bufs->n : 1)))
    {
      free (b);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  b->ctx = ctx;
  b->capacity = knobs->capacity;
  b->min_order = min_order;
  b->seg_order = seg_order;
  b->release = o.release;
  b->arena_seg = NONE;
  b->recycled = NONE;
  for (int k = 0; k < 64; k++)
    b->head[k] = NONE;
  ml_u64map_init (&b->at);
  if (o.arena)
    {
      long s = ml_sim_reserve (ctx, arena, 0, 0);
      if (s < 0)
        goto oom;
      b->arena_seg = (uint32_t) s;
      b->arena_only = true;
      uint64_t off = 0;
      for (int k = 63; k >= (int) min_order; k--)
        if (arena >> k & 1)
          {
            b->root_off[b->n_roots] = off;
            b->root_order[b->n_roots++] = (unsigned) k;
            if (free_push (b, b->arena_seg, off, (unsigned) k) < 0)
              goto oom;
            off += (uint64_t) 1 << k;
          }
    }
  *state = b;
  return 0;
oom:
  ml_u64map_clear (&b->at);
  free (b->fb);
  free (b->order);
  free (b);
  return ml_error_set (err, ML_ENOMEM, "out of memory");
}

static int
buddy_alloc (void *state, const MlRequest *req, MlPlacement *out, uint64_t *visited)
{
  Buddy *b = state;
  uint64_t n = req->size > ((uint64_t) 1 << b->min_order) ? req->size : (uint64_t) 1 << b->min_order;
  unsigned k = ceil_log2 (n);
  (*visited)++;
  uint64_t avail = k < 64 ? b->mask >> k << k : 0;
  if (avail == 0)
    {
      if (b->arena_only)
        return ML_EOOM;
      if (k > b->seg_order)
        {
          /* larger than a segment: a segment of its own */
          if (!fits (b, req->size))
            return ML_EOOM;
          long s = ml_sim_reserve (b->ctx, req->size, 0, 0);
          if (s < 0)
            return ML_ENOMEM;
          b->order[req->buffer] = OWN;
          out->segment = (uint32_t) s;
          out->offset = 0;
          return 0;
        }
      uint64_t bytes = (uint64_t) 1 << b->seg_order;
      if (!fits (b, bytes))
        return ML_EOOM;
      long s = ml_sim_reserve (b->ctx, bytes, 0, 0);
      if (s < 0 || (uint64_t) s >> 24 || free_push (b, (uint32_t) s, 0, b->seg_order) < 0)
        return ML_ENOMEM;
      avail = b->mask >> k << k;
    }
  unsigned j = (unsigned) __builtin_ctzll (avail);
  uint32_t i = b->head[j];
  uint32_t seg = b->fb[i].seg;
  uint64_t off = b->fb[i].off;
  free_unlink (b, i);
  while (j > k)
    {
      j--;
      (*visited)++;
      if (free_push (b, seg, off + ((uint64_t) 1 << j), j) < 0)
        return ML_ENOMEM;
    }
  b->order[req->buffer] = (uint8_t) k;
  b->waste += ((uint64_t) 1 << k) - req->size;
  ml_sim_block_waste (b->ctx, b->waste);
  out->segment = seg;
  out->offset = off;
  return 0;
}

static void
buddy_release (void *state, const MlRequest *req, const MlPlacement *at, uint64_t *visited)
{
  Buddy *b = state;
  unsigned k = b->order[req->buffer];
  (*visited)++;
  if (k == OWN)
    {
      ml_sim_release (b->ctx, at->segment);
      return;
    }
  b->waste -= ((uint64_t) 1 << k) - req->size;
  ml_sim_block_waste (b->ctx, b->waste);
  uint32_t seg = at->segment;
  uint64_t off = at->offset;
  unsigned top = root_order (b, seg, off);
  while (k < top)
    {
      uint32_t i;
      (*visited)++;
      if (!ml_u64map_get (&b->at, key_of (b, seg, off ^ ((uint64_t) 1 << k)), &i) || b->fb[i].order != k)
        break;
      free_unlink (b, i);
      off &= ~((uint64_t) 1 << k);
      k++;
    }
  if (k == b->seg_order && seg != b->arena_seg && b->release)
    {
      ml_sim_release (b->ctx, seg);   /* wholly free: back to the device */
      return;
    }
  free_push (b, seg, off, k);   /* out of host memory only loses the block */
}

static uint64_t
buddy_release_cached (void *state, uint32_t attempt, const MlRequest *req)
{
  Buddy *b = state;
  (void) attempt;
  (void) req;
  uint64_t bytes = 0;
  for (uint32_t i = b->head[b->seg_order], next; i != NONE; i = next)
    {
      next = b->fb[i].next;
      uint32_t seg = b->fb[i].seg;
      if (seg == b->arena_seg)
        continue;
      free_unlink (b, i);
      ml_sim_release (b->ctx, seg);
      bytes += (uint64_t) 1 << b->seg_order;
    }
  return bytes;
}

static uint64_t
buddy_largest_free (void *state)
{
  Buddy *b = state;
  uint64_t m = b->mask ? (uint64_t) 1 << (63 - __builtin_clzll (b->mask)) : 0;
  uint64_t reserved = ml_sim_reserved (b->ctx);
  if (!b->arena_only && b->capacity > reserved && b->capacity - reserved > m)
    m = b->capacity - reserved;
  return m;
}

static void
buddy_lift (void *state)
{
  Buddy *b = state;
  b->capacity = 0;
  b->arena_only = false;
}

static void
buddy_destroy (void *state)
{
  Buddy *b = state;
  ml_u64map_clear (&b->at);
  free (b->fb);
  free (b->order);
  free (b);
}

static const char *const buddy_keys[] = { "release", "arena", NULL };

const MlStrategy ml_strategy_buddy = {
  .name = "buddy",
  .summary = "online: binary buddy blocks in power-of-two segments of --chunk (or one arena: --options arena=1); O(log)",
  .kind = ML_STRATEGY_ONLINE,
  .knobs = ML_KNOB_CHUNK | ML_KNOB_RETRIES | ML_KNOB_OPTIONS,
  .options = buddy_keys,
  .create = buddy_create, .alloc = buddy_alloc, .release = buddy_release,
  .release_cached = buddy_release_cached,
  .largest_free = buddy_largest_free, .lift_capacity = buddy_lift, .destroy = buddy_destroy,
};
