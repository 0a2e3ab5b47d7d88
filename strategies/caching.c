#include "strategies/caching.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/buffers.h"
#include "sim/base/jsonutil.h"
#include "sim/base/treap.h"
#include "sim/base/u64map.h"

#define KiB ((uint64_t) 1 << 10)
#define MiB ((uint64_t) 1 << 20)
#define NONE UINT32_MAX

enum {
  MIN_BLOCK = 512,              /* kMinBlockSize */
};
static const uint64_t SMALL_SIZE = 1 * MiB;      /* kSmallSize: largest small-pool request */
static const uint64_t SMALL_BUFFER = 2 * MiB;    /* kSmallBuffer: small-pool segment */
static const uint64_t LARGE_BUFFER = 20 * MiB;   /* kLargeBuffer */
static const uint64_t MIN_LARGE_ALLOC = 10 * MiB;/* kMinLargeAlloc */
static const uint64_t ROUND_LARGE = 2 * MiB;     /* kRoundLarge */

typedef struct {
  uint64_t max_split;      /* UINT64_MAX = unset */
  unsigned divisions;      /* roundup_power2_divisions, 0 = off */
  bool     expandable;
} Config;

typedef struct {
  uint64_t addr, size;
  uint32_t seg, prev, next;
  uint32_t stream;          /* dense index */
  bool     allocated, used;
} Blk;

typedef struct {
  uint64_t base, size;      /* size: mapped bytes */
  uint32_t stream, first;
  bool     small, expandable, alive;
  long     plan_seg;
} Seg;

typedef struct Cache Cache;
struct Cache {
  Config    cfg;
  Blk      *b;
  size_t    nb, capb;
  uint32_t  free_slots;     /* chain through .next of unused blocks */
  Seg      *s;
  size_t    ns, caps;
  MlTreap   pool[2];        /* free blocks: a = stream << 48 | size, b = addr, value = size */
  MlTreap   segs;           /* alive segments: a = base, value = index */
  MlU64Map  free_at;        /* free block address -> block index */
  MlU64Map  streams;        /* raw stream -> dense index */
  uint32_t  n_streams;
  uint64_t  reserved;
  uint64_t  capacity;       /* 0 = unlimited */
  uint64_t  visited;
  bool      last_new_segment; /* the last malloc reserved a segment */
  /* the owner's side */
  int  (*new_seg)  (Cache *c, uint64_t size, uint32_t stream, Seg *seg);
  void (*rel_seg)  (Cache *c, Seg *seg);
  int  (*grow_seg) (Cache *c, Seg *seg, uint64_t added);
  void *user;
};

/* ---- rounding and sizes ---- */

static uint64_t
round_size (const Config *cfg, uint64_t size)
{
  if (size < MIN_BLOCK)
    return MIN_BLOCK;
  unsigned d = cfg->divisions;
  if (d > 1 && size > (uint64_t) MIN_BLOCK * d)
    {
      if ((size & (size - 1)) == 0)
        return size;
      uint64_t floor2 = (uint64_t) 1 << (63 - __builtin_clzll (size));
      uint64_t step = floor2 >> (31 - __builtin_clz (d));
      if (step == 0)
        return floor2 << 1;
      uint64_t lo = size & ~(step - 1);
      return lo == size ? size : lo + step;
    }
  return (size + MIN_BLOCK - 1) / MIN_BLOCK * MIN_BLOCK;
}

static uint64_t
segment_size (uint64_t size)
{
  if (size <= SMALL_SIZE)
    return SMALL_BUFFER;
  if (size < MIN_LARGE_ALLOC)
    return LARGE_BUFFER;
  return (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
}

static bool
rule_sized (uint64_t size, bool small)
{
  if (small)
    return size == SMALL_BUFFER;
  return size == LARGE_BUFFER || (size >= MIN_LARGE_ALLOC && size % ROUND_LARGE == 0);
}

/* ---- blocks ---- */

static uint32_t
stream_index (Cache *c, uint32_t raw)
{
  uint32_t i;
  if (ml_u64map_get (&c->streams, raw, &i))
    return i;
  i = c->n_streams < 0xffff ? c->n_streams++ : 0xffff;
  ml_u64map_put (&c->streams, raw, i);
  return i;
}

static uint32_t
blk_new (Cache *c)
{
  uint32_t i;
  if (c->free_slots != NONE)
    {
      i = c->free_slots;
      c->free_slots = c->b[i].next;
    }
  else
    {
      if (c->nb == c->capb)
        {
          size_t cap = c->capb ? c->capb * 2 : 256;
          Blk *b = realloc (c->b, cap * sizeof *b);
          if (!b)
            return NONE;
          c->b = b;
          c->capb = cap;
        }
      i = (uint32_t) c->nb++;
    }
  memset (&c->b[i], 0, sizeof c->b[i]);
  c->b[i].prev = c->b[i].next = NONE;
  c->b[i].used = true;
  return i;
}

static void
blk_drop (Cache *c, uint32_t i)
{
  c->b[i].used = false;
  c->b[i].next = c->free_slots;
  c->free_slots = i;
}

static inline uint64_t
key_a (const Blk *b)
{
  return (uint64_t) b->stream << 48 | b->size;
}

static int
free_insert (Cache *c, uint32_t i)
{
  Blk *b = &c->b[i];
  if (ml_u64map_put (&c->free_at, b->addr, i) < 0)
    return ML_ENOMEM;
  return ml_treap_insert (&c->pool[c->s[b->seg].small], key_a (b), b->addr, b->size) == ML_TREAP_NIL ? ML_ENOMEM : 0;
}

static void
free_remove (Cache *c, uint32_t i)
{
  Blk *b = &c->b[i];
  ml_treap_remove (&c->pool[c->s[b->seg].small], key_a (b), b->addr);
  ml_u64map_del (&c->free_at, b->addr);
}

/* Cuts block @i at @at bytes: [addr, addr + at) stays @i, the rest is a
 * new block (same allocated state, not in any set). Returns it or NONE. */
static uint32_t
blk_split (Cache *c, uint32_t i, uint64_t at)
{
  uint32_t r = blk_new (c);
  if (r == NONE)
    return NONE;
  Blk *b = &c->b[i], *n = &c->b[r];
  n->addr = b->addr + at;
  n->size = b->size - at;
  n->seg = b->seg;
  n->stream = b->stream;
  n->prev = i;
  n->next = b->next;
  if (b->next != NONE)
    c->b[b->next].prev = r;
  b->next = r;
  b->size = at;
  return r;
}

/* Merges free block @j (the successor of @i) into @i. Neither is in a set. */
static void
blk_merge_next (Cache *c, uint32_t i)
{
  Blk *b = &c->b[i];
  uint32_t j = b->next;
  b->size += c->b[j].size;
  b->next = c->b[j].next;
  if (b->next != NONE)
    c->b[b->next].prev = i;
  blk_drop (c, j);
}

static bool
should_split (const Cache *c, const Blk *b, uint64_t size)
{
  uint64_t remaining = b->size - size;
  if (c->s[b->seg].small)
    return remaining >= MIN_BLOCK;
  return size < c->cfg.max_split && remaining > SMALL_SIZE;
}

/* alloc_found_block: takes free block @i (already out of its set). */
static int
take (Cache *c, uint32_t i, uint64_t size)
{
  if (should_split (c, &c->b[i], size))
    {
      uint32_t r = blk_split (c, i, size);
      if (r == NONE || free_insert (c, r) < 0)
        return ML_ENOMEM;
    }
  c->b[i].allocated = true;
  return 0;
}

/* get_free_block: best fit in the pool, same stream, oversize rules. */
static uint32_t
find_free (Cache *c, uint64_t size, uint32_t stream, bool small)
{
  MlTreap *t = &c->pool[small];
  uint32_t n = ml_treap_lower_bound (t, (uint64_t) stream << 48 | size, 0, &c->visited);
  if (n == ML_TREAP_NIL || t->nodes[n].a >> 48 != stream)
    return NONE;
  uint64_t bsize = t->nodes[n].value;
  if (size < c->cfg.max_split && bsize >= c->cfg.max_split)
    return NONE;
  if (size >= c->cfg.max_split && bsize >= size + LARGE_BUFFER)
    return NONE;
  uint32_t i;
  return ml_u64map_get (&c->free_at, t->nodes[n].b, &i) ? i : NONE;
}

static long
seg_add (Cache *c, uint64_t base, uint64_t size, uint32_t stream, bool small, bool expandable)
{
  if (c->ns == c->caps)
    {
      size_t cap = c->caps ? c->caps * 2 : 32;
      Seg *s = realloc (c->s, cap * sizeof *s);
      if (!s)
        return -1;
      c->s = s;
      c->caps = cap;
    }
  uint32_t si = (uint32_t) c->ns;
  uint32_t bi = blk_new (c);
  if (bi == NONE)
    return -1;
  c->s[si] = (Seg) { .base = base, .size = size, .stream = stream, .first = bi, .small = small,
                     .expandable = expandable, .alive = true, .plan_seg = -1 };
  c->ns++;
  Blk *b = &c->b[bi];
  b->addr = base;
  b->size = size;
  b->seg = si;
  b->stream = stream;
  if (free_insert (c, bi) < 0 || ml_treap_insert (&c->segs, base, 0, si) == ML_TREAP_NIL)
    return -1;
  c->reserved += size;
  return si;
}

/* Releases segment @si when it is one free block. */
static bool
seg_release (Cache *c, uint32_t si)
{
  Seg *g = &c->s[si];
  Blk *b = &c->b[g->first];
  if (!g->alive || b->allocated || b->next != NONE)
    return false;
  free_remove (c, g->first);
  blk_drop (c, g->first);
  ml_treap_remove (&c->segs, g->base, 0);
  g->alive = false;
  c->reserved -= g->size;
  if (c->rel_seg)
    c->rel_seg (c, g);
  return true;
}

/* release_available_cached_blocks (max_split_size set): among the cached
 * large-pool segments of the request's stream that are one free block of
 * at least max_split_size, the smallest that covers max(size,
 * max_split_size); else the largest first until that many bytes went back. */
static bool
release_available (Cache *c, uint64_t size, uint32_t stream)
{
  if (c->cfg.max_split == UINT64_MAX)
    return false;
  uint64_t want = size < c->cfg.max_split ? c->cfg.max_split : size;
  long best = -1;
  for (size_t i = 0; i < c->ns; i++)
    {
      Seg *g = &c->s[i];
      Blk *b = &c->b[g->first];
      if (g->alive && !g->small && !g->expandable && g->stream == stream && !b->allocated && b->next == NONE
          && g->size >= want && (best < 0 || g->size < c->s[best].size))
        best = (long) i;
    }
  if (best >= 0)
    return seg_release (c, (uint32_t) best);
  uint64_t freed = 0;
  while (freed < want)
    {
      long big = -1;
      for (size_t i = 0; i < c->ns; i++)
        {
          Seg *g = &c->s[i];
          Blk *b = &c->b[g->first];
          if (g->alive && !g->small && !g->expandable && g->stream == stream && !b->allocated && b->next == NONE
              && g->size >= c->cfg.max_split && (big < 0 || g->size > c->s[big].size))
            big = (long) i;
        }
      if (big < 0)
        break;
      freed += c->s[big].size;
      seg_release (c, (uint32_t) big);
    }
  return freed >= want;
}

static bool
release_all (Cache *c)
{
  bool any = false;
  for (size_t i = 0; i < c->ns; i++)
    if (!c->s[i].expandable)
      any |= seg_release (c, (uint32_t) i);
  return any;
}

static bool
fits (const Cache *c, uint64_t bytes)
{
  return !c->capacity || c->reserved + bytes <= c->capacity;
}

/* Expandable segments: map pages at the end of the (pool, stream) segment
 * until its free tail holds @size. Returns the tail block or NONE. */
static uint32_t
expand (Cache *c, uint64_t size, uint32_t stream, bool small, int *rc)
{
  uint64_t page = small ? SMALL_BUFFER : LARGE_BUFFER;
  long si = -1;
  for (size_t i = 0; i < c->ns; i++)
    if (c->s[i].alive && c->s[i].expandable && c->s[i].small == small && c->s[i].stream == stream)
      si = (long) i;
  if (si < 0)
    {
      uint64_t bytes = (size + page - 1) / page * page;
      if (!fits (c, bytes))
        return NONE;
      Seg tmp = { .size = bytes, .stream = stream, .small = small, .expandable = true };
      if ((*rc = c->new_seg (c, bytes, stream, &tmp)) < 0)
        return NONE;
      si = seg_add (c, tmp.base, bytes, stream, small, true);
      if (si < 0)
        {
          *rc = ML_ENOMEM;
          return NONE;
        }
      c->s[si].plan_seg = tmp.plan_seg;
      c->last_new_segment = true;
      return c->s[si].first;
    }
  Seg *g = &c->s[si];
  uint32_t last = g->first;
  while (c->b[last].next != NONE)
    last = c->b[last].next;
  uint64_t have = c->b[last].allocated ? 0 : c->b[last].size;
  uint64_t bytes = (size - have + page - 1) / page * page;
  if (!fits (c, bytes))
    return NONE;
  if (c->b[last].allocated)
    {
      uint32_t n = blk_new (c);
      if (n == NONE)
        {
          *rc = ML_ENOMEM;
          return NONE;
        }
      c->b[n].addr = g->base + g->size;
      c->b[n].seg = (uint32_t) si;
      c->b[n].stream = stream;
      c->b[n].prev = last;
      c->b[last].next = n;
      last = n;
    }
  else
    free_remove (c, last);
  c->b[last].size += bytes;
  g->size += bytes;
  c->reserved += bytes;
  if (free_insert (c, last) < 0)
    {
      *rc = ML_ENOMEM;
      return NONE;
    }
  if (c->grow_seg && (*rc = c->grow_seg (c, g, bytes)) < 0)
    return NONE;
  c->last_new_segment = true;
  return last;
}

/* malloc: returns the block through *out; ML_EOOM when the capacity
 * refuses every way PyTorch tries. */
static int
cache_malloc (Cache *c, uint64_t req, uint32_t raw_stream, uint32_t *out)
{
  uint32_t stream = stream_index (c, raw_stream);
  uint64_t size = round_size (&c->cfg, req);
  bool small = size <= SMALL_SIZE;
  c->last_new_segment = false;
  uint32_t i = find_free (c, size, stream, small);
  int rc = 0;
  if (i == NONE && c->cfg.expandable)
    {
      i = expand (c, size, stream, small, &rc);
      if (i == NONE && rc == 0 && release_all (c))
        i = expand (c, size, stream, small, &rc);
      if (rc < 0)
        return rc;
      if (i == NONE)
        return ML_EOOM;
      free_remove (c, i);
    }
  else if (i == NONE)
    {
      uint64_t bytes = segment_size (size);
      if (!fits (c, bytes) && !(release_available (c, size, stream) && fits (c, bytes)) && !(release_all (c) && fits (c, bytes)))
        return ML_EOOM;
      Seg tmp = { .size = bytes, .stream = stream, .small = small };
      if ((rc = c->new_seg (c, bytes, raw_stream, &tmp)) < 0)
        return rc;
      long si = seg_add (c, tmp.base, bytes, stream, small, false);
      if (si < 0)
        return ML_ENOMEM;
      c->s[si].plan_seg = tmp.plan_seg;
      c->last_new_segment = true;
      i = c->s[si].first;
      free_remove (c, i);
    }
  else
    free_remove (c, i);
  if ((rc = take (c, i, size)) < 0)
    return rc;
  *out = i;
  return 0;
}

static int
cache_free (Cache *c, uint32_t i)
{
  Blk *b = &c->b[i];
  b->allocated = false;
  uint32_t p = b->prev;
  if (b->next != NONE && !c->b[b->next].allocated)
    {
      free_remove (c, b->next);
      blk_merge_next (c, i);
    }
  if (p != NONE && !c->b[p].allocated)
    {
      free_remove (c, p);
      blk_merge_next (c, p);
      i = p;
    }
  return free_insert (c, i);
}

/* The block containing @addr (free or not), NONE when no segment has it. */
static uint32_t
block_at (Cache *c, uint64_t addr)
{
  uint32_t s = ml_treap_predecessor (&c->segs, addr, 1, NULL);
  if (s == ML_TREAP_NIL)
    return NONE;
  const Seg *g = &c->s[c->segs.nodes[s].value];
  if (addr >= g->base + g->size)
    return NONE;
  for (uint32_t i = g->first; i != NONE; i = c->b[i].next)
    if (addr >= c->b[i].addr && addr < c->b[i].addr + c->b[i].size)
      return i;
  return NONE;
}

/* Places an allocated block at @addr inside a free block (the rebuilt
 * state, or a resync after a mismatch): its size is the rounded request,
 * plus the rest of the free block when the split rules would not cut it.
 * Returns the block or NONE when @addr is not free. */
static uint32_t
carve (Cache *c, uint64_t addr, uint64_t req)
{
  uint32_t i = block_at (c, addr);
  if (i == NONE || c->b[i].allocated)
    return NONE;
  uint64_t size = round_size (&c->cfg, req);
  if (addr + size > c->b[i].addr + c->b[i].size)
    size = c->b[i].addr + c->b[i].size - addr;
  free_remove (c, i);
  if (addr > c->b[i].addr)
    {
      uint32_t r = blk_split (c, i, addr - c->b[i].addr);
      if (r == NONE || free_insert (c, i) < 0)
        return NONE;
      i = r;
    }
  if (should_split (c, &c->b[i], size))
    {
      uint32_t r = blk_split (c, i, size);
      if (r == NONE || free_insert (c, r) < 0)
        return NONE;
    }
  c->b[i].allocated = true;
  return i;
}

static void
cache_init (Cache *c, const Config *cfg)
{
  memset (c, 0, sizeof *c);
  c->cfg = *cfg;
  c->free_slots = NONE;
  ml_treap_init (&c->pool[0]);
  ml_treap_init (&c->pool[1]);
  ml_treap_init (&c->segs);
  ml_u64map_init (&c->streams);
  ml_u64map_init (&c->free_at);
}

static void
cache_clear (Cache *c)
{
  free (c->b);
  free (c->s);
  ml_treap_clear (&c->pool[0]);
  ml_treap_clear (&c->pool[1]);
  ml_treap_clear (&c->segs);
  ml_u64map_clear (&c->streams);
  ml_u64map_clear (&c->free_at);
}

static uint64_t
cache_largest_free (const Cache *c)
{
  uint64_t a = ml_treap_max_value (&c->pool[0]), b = ml_treap_max_value (&c->pool[1]);
  return a > b ? a : b;
}

/* ---- options ---- */

static int
parse_option (void *user, const char *key, const char *value, MlError *err)
{
  Config *cfg = user;
  char *end;
  if (strcmp (key, "reorder") == 0 || strcmp (key, "exclude") == 0 || strcmp (key, "pin") == 0)
    return 0;   /* graph loader options share --options */
  unsigned long long v = strtoull (value, &end, 10);
  if (*end || !*value)
    return ml_error_set (err, ML_EUSAGE, "caching: option %s=%s is not a number", key, value);
  if (strcmp (key, "max_split_size_mb") == 0)
    {
      if (v > (UINT64_MAX >> 20))
        return ml_error_set (err, ML_EUSAGE, "caching: max_split_size_mb=%s is too large", value);
      cfg->max_split = v ? (uint64_t) v * MiB : UINT64_MAX;
    }
  else if (strcmp (key, "expandable_segments") == 0)
    cfg->expandable = v != 0;
  else if (strcmp (key, "roundup_power2_divisions") == 0)
    {
      if (v > 1 && (v & (v - 1)))
        return ml_error_set (err, ML_EUSAGE, "caching: roundup_power2_divisions=%s is not a power of two", value);
      if (v > 64)
        return ml_error_set (err, ML_EUSAGE, "caching: roundup_power2_divisions=%s is above 64", value);
      cfg->divisions = (unsigned) v;
    }
  else if (strcmp (key, "reorder") == 0 || strcmp (key, "exclude") == 0)
    return 0;   /* graph loader options share --options */
  else
    return ml_error_set (err, ML_EUSAGE,
                         "caching: unknown option \"%s\" (known: max_split_size_mb, expandable_segments, roundup_power2_divisions)", key);
  return 0;
}

static int
parse_config (const char *options, Config *cfg, MlError *err)
{
  memset (cfg, 0, sizeof *cfg);
  cfg->max_split = UINT64_MAX;
  return ml_options_foreach (options, parse_option, cfg, err);
}

static const char *recorded_settings (const MlTrace *t);

/* ---- the strategy ---- */

typedef struct {
  Cache         cache;
  MlSimContext *ctx;
  uint32_t     *block;      /* per buffer */
  uint64_t      next_base;
  uint64_t      align;      /* the alignment knob, when above 512 B */
} Strat;

static int
strat_new_seg (Cache *c, uint64_t size, uint32_t stream, Seg *seg)
{
  Strat *s = c->user;
  long p = ml_sim_reserve (s->ctx, size, stream, seg->expandable ? ML_SEG_EXPANDABLE : 0);
  if (p < 0)
    return ML_ENOMEM;
  seg->plan_seg = p;
  seg->base = s->next_base;
  /* bases far apart: an expandable segment grows in place */
  s->next_base += seg->expandable ? (uint64_t) 1 << 44 : (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
  return 0;
}

static void
strat_rel_seg (Cache *c, Seg *g)
{
  Strat *s = c->user;
  ml_sim_release (s->ctx, (uint32_t) g->plan_seg);
}

static int
strat_grow_seg (Cache *c, Seg *g, uint64_t added)
{
  Strat *s = c->user;
  (void) added;
  ml_sim_resize (s->ctx, (uint32_t) g->plan_seg, g->size);
  return 0;
}

static int
strat_create (MlSimContext *ctx, const MlKnobs *knobs, void **state, MlError *err)
{
  Config cfg;
  const MlBuffers *bufs = ml_sim_buffers (ctx);
  const char *options = knobs->options;
  char settings[256];
  if ((!options || !*options) && bufs->trace && recorded_settings (bufs->trace))
    {
      /* a PyTorch snapshot: run with the settings it recorded */
      snprintf (settings, sizeof settings, "%s", recorded_settings (bufs->trace));
      settings[strcspn (settings, " ")] = 0;
      options = settings;
    }
  int rc = parse_config (options, &cfg, err);
  if (rc < 0)
    return rc;
  Strat *s = calloc (1, sizeof *s);
  if (!s || !(s->block = calloc (bufs->n ? bufs->n : 1, sizeof *s->block)))
    {
      free (s);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  cache_init (&s->cache, &cfg);
  s->cache.capacity = knobs->capacity;
  s->cache.new_seg = strat_new_seg;
  s->cache.rel_seg = strat_rel_seg;
  s->cache.grow_seg = strat_grow_seg;
  s->cache.user = s;
  s->ctx = ctx;
  s->next_base = (uint64_t) 1 << 40;
  s->align = knobs->align > MIN_BLOCK ? knobs->align : 0;
  *state = s;
  return 0;
}

static int
strat_alloc (void *state, const MlRequest *req, MlPlacement *out, uint64_t *visited)
{
  Strat *s = state;
  uint32_t i;
  s->cache.visited = 0;
  /* PyTorch aligns blocks to 512 B; a larger alignment knob is honoured by
   * asking for whole multiples of it (segments are 2 MiB multiples) */
  uint64_t want = req->requested;
  if (s->align)
    want = ml_align_up (want ? want : 1, s->align);
  int rc = cache_malloc (&s->cache, want, req->stream, &i);
  *visited += s->cache.visited;
  if (rc < 0)
    return rc;
  const Blk *b = &s->cache.b[i];
  const Seg *g = &s->cache.s[b->seg];
  s->block[req->buffer] = i;
  out->segment = (uint32_t) g->plan_seg;
  out->offset = b->addr - g->base;
  return 0;
}

static void
strat_release (void *state, const MlRequest *req, const MlPlacement *at, uint64_t *visited)
{
  Strat *s = state;
  (void) at;
  cache_free (&s->cache, s->block[req->buffer]);
  *visited += 1;
}

static uint64_t
strat_largest_free (void *state)
{
  Strat *s = state;
  uint64_t m = cache_largest_free (&s->cache);
  if (s->cache.capacity > s->cache.reserved && s->cache.capacity - s->cache.reserved > m)
    m = s->cache.capacity - s->cache.reserved;
  return m;
}

static void
strat_lift (void *state)
{
  ((Strat *) state)->cache.capacity = 0;
}

static void
strat_destroy (void *state)
{
  Strat *s = state;
  cache_clear (&s->cache);
  free (s->block);
  free (s);
}

const MlStrategy ml_strategy_caching = {
  .name = "caching",
  .summary = "online: PyTorch's CUDA caching allocator (512 B rounding, 2/20 MiB segments, best fit per pool and stream)",
  .kind = ML_STRATEGY_ONLINE,
  .create = strat_create, .alloc = strat_alloc, .release = strat_release,
  .largest_free = strat_largest_free, .lift_capacity = strat_lift, .destroy = strat_destroy,
};

/* ---- conformance ---- */

const char *
ml_caching_rule_name (MlCachingRule r)
{
  static const char *const names[ML_RULE__COUNT] = {
    "best-fit order", "per-stream reuse", "small/large pool", "split position", "new segment vs reuse",
    "state diverged",
  };
  return (unsigned) r < ML_RULE__COUNT ? names[r] : "?";
}

typedef struct {
  const uint64_t *addrs;   /* recorded segment_alloc / map bases, in order */
  size_t          n, next;
  uint64_t        synth;   /* above every recorded address */
  uint64_t       *emu_sizes;
  size_t          n_emu, cap_emu;
} Conf;

/* Appends one emulated segment event's size. */
static int
push_emu_size (Conf *f, uint64_t size)
{
  if (f->n_emu == f->cap_emu)
    {
      size_t cap = f->cap_emu ? f->cap_emu * 2 : 16;
      uint64_t *p = realloc (f->emu_sizes, cap * sizeof *p);
      if (!p)
        return ML_ENOMEM;
      f->emu_sizes = p;
      f->cap_emu = cap;
    }
  f->emu_sizes[f->n_emu++] = size;
  return 0;
}

static int
conf_new_seg (Cache *c, uint64_t size, uint32_t stream, Seg *seg)
{
  Conf *f = c->user;
  (void) stream;
  if (f->next < f->n)
    seg->base = f->addrs[f->next++];
  else
    {
      seg->base = f->synth;
      f->synth += (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
    }
  return push_emu_size (f, size);
}

/* Expandable growth maps pages: an emulated segment_map event, at the
 * address the next recorded map names when it is the segment's end. */
static int
conf_grow_seg (Cache *c, Seg *seg, uint64_t added)
{
  Conf *f = c->user;
  if (f->next < f->n && f->addrs[f->next] == seg->base + seg->size - added)
    f->next++;
  return push_emu_size (f, added);
}

/* The recorded segments at the end: (addr, size) pairs; a map inside or
 * right after an expandable one grows it, an unmap inside shrinks it. */
static void
rec_seg_event (uint64_t *addr, uint64_t *size, size_t *n, const MlEvent *ev)
{
  bool map = ev->kind == ML_EV_SEGMENT_MAP, unmap = ev->kind == ML_EV_SEGMENT_UNMAP;
  if (ev->kind == ML_EV_SEGMENT_ALLOC || map)
    {
      for (size_t e = 0; map && e < *n; e++)
        if (addr[e] <= ev->addr && ev->addr <= addr[e] + size[e])
          {
            if (ev->addr + ev->size - addr[e] > size[e])
              size[e] = ev->addr + ev->size - addr[e];
            return;
          }
      addr[*n] = ev->addr;
      size[(*n)++] = ev->size;
      return;
    }
  for (size_t e = 0; e < *n; e++)
    if (addr[e] <= ev->addr && ev->addr < addr[e] + size[e])
      {
        if (unmap && (ev->addr > addr[e] || ev->size < size[e]))
          size[e] = size[e] > ev->size ? size[e] - ev->size : 0;
        else
          {
            addr[e] = addr[*n - 1];
            size[e] = size[--*n];
          }
        return;
      }
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* Which rule the real choice @want disagrees on, given the emulation's
 * choice (block @got_blk, made before being undone). */
static MlCachingRule
classify (Cache *c, uint64_t want, uint64_t req, uint32_t raw_stream, bool emu_new_segment)
{
  uint32_t i = block_at (c, want);
  if (i == NONE)
    return ML_RULE_NEW_SEGMENT;
  const Blk *b = &c->b[i];
  if (b->allocated)
    return ML_RULE_STATE;
  bool small = round_size (&c->cfg, req) <= SMALL_SIZE;
  if (c->s[b->seg].small != small)
    return ML_RULE_POOL;
  if (b->stream != stream_index (c, raw_stream))
    return ML_RULE_STREAM;
  if (b->addr != want)
    return ML_RULE_SPLIT;
  return emu_new_segment ? ML_RULE_NEW_SEGMENT : ML_RULE_BEST_FIT;
}

/* The settings the snapshot recorded (a mark at tick 0), or NULL. */
static const char *
recorded_settings (const MlTrace *t)
{
  static const char prefix[] = "allocator settings: ";
  for (size_t i = 0; i < t->n_events && t->events[i].tick == 0; i++)
    if (t->events[i].kind == ML_EV_MARK)
      {
        const char *text = ml_trace_str (t, t->events[i].name);
        if (strncmp (text, prefix, sizeof prefix - 1) == 0)
          return text + sizeof prefix - 1;
      }
  return NULL;
}

int
ml_caching_conformance (const MlTrace *t, const char *options, MlCachingConformance *out, MlError *err)
{
  Config cfg;
  char settings[256] = "";
  if (!options || !*options)
    {
      /* the snapshot's own allocator settings ("... (per size range ...)" cut off) */
      const char *rec = recorded_settings (t);
      if (rec)
        {
          snprintf (settings, sizeof settings, "%s", rec);
          settings[strcspn (settings, " ")] = 0;
          options = settings;
        }
    }
  int rc = parse_config (options, &cfg, err);
  if (rc < 0)
    return rc;
  if (!t->has_addrs)
    return ml_error_set (err, ML_EUNSUPPORTED, "the trace has no recorded addresses");
  MlCachingConformance r;
  memset (&r, 0, sizeof r);
  r.first_mismatch = SIZE_MAX;
  snprintf (r.options, sizeof r.options, "%s", options ? options : "");

  /* recorded segment bases after tick 0, recorded end segments, the highest address */
  uint64_t *rec_addrs = NULL, *rec_sizes = NULL, *end_rec = NULL, *end_addr = NULL;
  size_t n_rec = 0, n_end_rec = 0;
  uint64_t top = 0;
  MlU64Map ids;
  ml_u64map_init (&ids);
  Cache c;
  cache_init (&c, &cfg);
  Conf f = { 0 };
  c.new_seg = conf_new_seg;
  c.grow_seg = conf_grow_seg;
  c.user = &f;
  uint32_t *id_blocks = NULL;
  size_t n_id_blocks = 0;

  rec_addrs = malloc ((t->n_events + 1) * sizeof *rec_addrs);
  rec_sizes = malloc ((t->n_events + 1) * sizeof *rec_sizes);
  end_rec = malloc ((t->n_events + 1) * sizeof *end_rec);
  end_addr = malloc ((t->n_events + 1) * sizeof *end_addr);
  id_blocks = malloc ((t->n_events + 1) * sizeof *id_blocks);
  if (!rec_addrs || !rec_sizes || !end_rec || !end_addr || !id_blocks)
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory");
      goto out;
    }
  for (size_t k = 0; k < t->n_events; k++)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->addr + ev->size > top && ev->kind != ML_EV_OOM)
        top = ev->addr + ev->size;
      if ((ev->kind == ML_EV_SEGMENT_ALLOC || ev->kind == ML_EV_SEGMENT_MAP) && ev->tick > 0)
        {
          rec_addrs[n_rec] = ev->addr;
          rec_sizes[n_rec++] = ev->size;
        }
    }
  f.addrs = rec_addrs;
  f.n = n_rec;
  f.synth = (top + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE + ((uint64_t) 1 << 30);
  r.rec_segment_events = n_rec;

  /* tick 0: segments, then blocks from the highest address down (so each
   * free block ends at the next live block, as it did) */
  size_t first_alloc = t->n_events, end0 = 0;
  while (end0 < t->n_events && t->events[end0].tick == 0)
    end0++;
  for (size_t k = 0; k < end0; k++)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->kind == ML_EV_SEGMENT_ALLOC || ev->kind == ML_EV_SEGMENT_MAP)
        {
          const char *pool = ml_trace_str (t, ev->name);
          bool small = pool && *pool ? strcmp (pool, "small") == 0 : ev->size == SMALL_BUFFER;
          if (seg_add (&c, ev->addr, ev->size, stream_index (&c, ev->stream), small, ev->kind == ML_EV_SEGMENT_MAP) < 0)
            {
              rc = ml_error_set (err, ML_ENOMEM, "out of memory");
              goto out;
            }
          r.initial_segments++;
          r.rule_sized_segments += rule_sized (ev->size, small) || ev->kind == ML_EV_SEGMENT_MAP;
          rec_seg_event (end_addr, end_rec, &n_end_rec, ev);
        }
      else if (ev->kind == ML_EV_ALLOC && first_alloc == t->n_events)
        first_alloc = k;
    }
  for (size_t k = end0; k-- > first_alloc && first_alloc < end0;)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->kind != ML_EV_ALLOC)
        continue;
      uint32_t i = carve (&c, ev->addr, ev->size);
      r.initial_blocks++;
      if (i == NONE)
        {
          rc = ml_error_set (err, ML_EINPUT, "event %zu: block at 0x%" PRIx64 " of the rebuilt state is not inside a free part of a segment",
                             k, ev->addr);
          goto out;
        }
      id_blocks[n_id_blocks] = i;
      if (ml_u64map_put (&ids, ev->id, (uint32_t) n_id_blocks++) < 0)
        {
          rc = ml_error_set (err, ML_ENOMEM, "out of memory");
          goto out;
        }
    }

  /* the trace, forward */
  for (size_t k = end0; k < t->n_events; k++)
    {
      const MlEvent *ev = &t->events[k];
      uint32_t slot, i;
      switch (ev->kind)
        {
        case ML_EV_ALLOC:
          {
            r.allocs++;
            size_t emu_before = f.n_emu, next_before = f.next;
            uint64_t synth_before = f.synth;
            rc = cache_malloc (&c, ev->size, ev->stream, &i);
            if (rc < 0)
              {
                ml_error_set (err, rc, "event %zu: emulated allocation failed", k);
                goto out;
              }
            if (c.b[i].addr == ev->addr)
              r.matched++;
            else
              {
                /* undo, attribute, and resync at the real address when it is free */
                bool was_new = c.last_new_segment;
                uint64_t got = c.b[i].addr;
                uint32_t seg = c.b[i].seg;
                cache_free (&c, i);
                if (was_new && !c.s[seg].expandable)
                  {
                    c.rel_seg = NULL;
                    seg_release (&c, seg);
                    f.n_emu = emu_before;
                    f.next = next_before;
                    f.synth = synth_before;
                  }
                MlCachingRule rule = classify (&c, ev->addr, ev->size, ev->stream, was_new);
                r.by_rule[rule]++;
                if (r.first_mismatch == SIZE_MAX)
                  {
                    r.first_mismatch = k;
                    r.first_want = ev->addr;
                    r.first_got = got;
                  }
                i = carve (&c, ev->addr, ev->size);
                if (i == NONE && (rc = cache_malloc (&c, ev->size, ev->stream, &i)) < 0)
                  {
                    ml_error_set (err, rc, "event %zu: emulated allocation failed", k);
                    goto out;
                  }
              }
            id_blocks[n_id_blocks] = i;
            if (ml_u64map_put (&ids, ev->id, (uint32_t) n_id_blocks++) < 0)
              {
                rc = ml_error_set (err, ML_ENOMEM, "out of memory");
                goto out;
              }
          }
          break;
        case ML_EV_FREE:
          if (!ml_u64map_get (&ids, ev->id, &slot))
            {
              r.frees_unknown++;
              break;
            }
          ml_u64map_del (&ids, ev->id);
          if ((rc = cache_free (&c, id_blocks[slot])) < 0)
            {
              ml_error_set (err, rc, "out of memory");
              goto out;
            }
          break;
        case ML_EV_SEGMENT_ALLOC:
        case ML_EV_SEGMENT_MAP:
          rec_seg_event (end_addr, end_rec, &n_end_rec, ev);
          break;
        case ML_EV_SEGMENT_FREE:
        case ML_EV_SEGMENT_UNMAP:
          rec_seg_event (end_addr, end_rec, &n_end_rec, ev);
          {
            uint32_t s = ml_treap_find (&c.segs, ev->addr, 0, NULL);
            if (s != ML_TREAP_NIL)
              seg_release (&c, (uint32_t) c.segs.nodes[s].value);
          }
          break;
        default:
          break;
        }
    }

  /* segments: pairwise in creation order, and at the end */
  r.emu_segment_events = f.n_emu;
  for (size_t k = 0; k < f.n_emu && k < n_rec; k++)
    r.segment_events_matched += f.emu_sizes[k] == rec_sizes[k];
  {
    size_t n_emu_end = 0;
    for (size_t s = 0; s < c.ns; s++)
      if (c.s[s].alive)
        rec_sizes[n_emu_end++] = c.s[s].size, r.end_emu_bytes += c.s[s].size;
    for (size_t s = 0; s < n_end_rec; s++)
      r.end_rec_bytes += end_rec[s];
    r.end_rec_segments = n_end_rec;
    r.end_emu_segments = n_emu_end;
    qsort (rec_sizes, n_emu_end, sizeof *rec_sizes, cmp_u64);
    qsort (end_rec, n_end_rec, sizeof *end_rec, cmp_u64);
    r.end_match = n_emu_end == n_end_rec && memcmp (rec_sizes, end_rec, n_end_rec * sizeof *end_rec) == 0;
  }
  *out = r;
  rc = 0;
out:
  free (rec_addrs);
  free (rec_sizes);
  free (end_rec);
  free (end_addr);
  free (id_blocks);
  free (f.emu_sizes);
  ml_u64map_clear (&ids);
  cache_clear (&c);
  return rc;
}

void
ml_caching_conformance_print (FILE *fp, const MlCachingConformance *r, bool json)
{
  double addr_share = r->allocs ? (double) r->matched / (double) r->allocs : 1.0;
  size_t seg_den = r->rec_segment_events > r->emu_segment_events ? r->rec_segment_events : r->emu_segment_events;
  if (json)
    {
      fprintf (fp, "{\"options\":");
      ml_json_put_str (fp, r->options);
      fprintf (fp, ",\"initial_segments\":%zu,\"initial_blocks\":%zu,\"allocs\":%zu,\"address_matched\":%zu,"
                   "\"address_conformance\":",
               r->initial_segments, r->initial_blocks, r->allocs, r->matched);
      if (r->allocs)
        fprintf (fp, "%.6f", addr_share);
      else
        fputs ("null", fp);   /* nothing to replay */
      fputs (",\"mismatches\":{", fp);
      for (int k = 0; k < ML_RULE__COUNT; k++)
        fprintf (fp, "%s\"%s\":%zu", k ? "," : "", ml_caching_rule_name ((MlCachingRule) k), r->by_rule[k]);
      fprintf (fp, "},\"segment_events_recorded\":%zu,\"segment_events_emulated\":%zu,\"segment_events_matched\":%zu,"
                   "\"end_segments_recorded\":%zu,\"end_segments_emulated\":%zu,\"end_bytes_recorded\":%" PRIu64
                   ",\"end_bytes_emulated\":%" PRIu64 ",\"end_segments_match\":%s,\"rule_sized_segments\":%zu}",
               r->rec_segment_events, r->emu_segment_events, r->segment_events_matched, r->end_rec_segments,
               r->end_emu_segments, r->end_rec_bytes, r->end_emu_bytes, r->end_match ? "true" : "false",
               r->rule_sized_segments);
      return;
    }
  fprintf (fp, "  options         %s\n", r->options[0] ? r->options : "(defaults)");
  fprintf (fp, "  rebuilt state   %zu segments, %zu live blocks at the trace's first event (%zu of the segments sized by the rules)\n",
           r->initial_segments, r->initial_blocks, r->rule_sized_segments);
  if (r->allocs)
    fprintf (fp, "  addresses       %zu / %zu allocations at the real address (%.2f%%)\n", r->matched, r->allocs,
             addr_share * 100.0);
  else
    fprintf (fp, "  addresses       no allocation in the trace: nothing to replay\n");
  for (int k = 0; k < ML_RULE__COUNT; k++)
    if (r->by_rule[k])
      fprintf (fp, "    %-20s %zu\n", ml_caching_rule_name ((MlCachingRule) k), r->by_rule[k]);
  if (r->first_mismatch != SIZE_MAX)
    fprintf (fp, "    first mismatch at event %zu: real 0x%" PRIx64 ", emulated 0x%" PRIx64 "\n", r->first_mismatch,
             r->first_want, r->first_got);
  if (seg_den)
    fprintf (fp, "  segment events  %zu recorded, %zu emulated, %zu the same size in order (%.2f%%)\n",
             r->rec_segment_events, r->emu_segment_events, r->segment_events_matched,
             100.0 * (double) r->segment_events_matched / (double) seg_den);
  else
    fprintf (fp, "  segment events  none recorded, none emulated\n");
  fprintf (fp, "  segments at end %zu recorded (%" PRIu64 " B), %zu emulated (%" PRIu64 " B): %s\n", r->end_rec_segments,
           r->end_rec_bytes, r->end_emu_segments, r->end_emu_bytes, r->end_match ? "match" : "differ");
}
