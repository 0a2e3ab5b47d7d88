/* caching-model.c — the model of PyTorch's caching allocator (the rules are
 * in caching.h, the interface in caching-private.h). */
#include "strategies/caching-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/array.h"
#include "sim/base/options.h"

#define MiB ((uint64_t) 1 << 20)

/* ---- rounding and sizes ---- */

uint64_t
_ml_cache_round_size (const MlCacheConfig *cfg, uint64_t size)
{
  if (size < ML_CACHE_MIN_BLOCK)
    return ML_CACHE_MIN_BLOCK;
  unsigned d = cfg->divisions;
  if (d > 1 && size > (uint64_t) ML_CACHE_MIN_BLOCK * d)
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
  return (size + ML_CACHE_MIN_BLOCK - 1) / ML_CACHE_MIN_BLOCK * ML_CACHE_MIN_BLOCK;
}

static uint64_t
segment_size (uint64_t size)
{
  if (size <= ML_CACHE_SMALL_SIZE)
    return ML_CACHE_SMALL_BUFFER;
  if (size < ML_CACHE_MIN_LARGE_ALLOC)
    return ML_CACHE_LARGE_BUFFER;
  return (size + ML_CACHE_ROUND_LARGE - 1) / ML_CACHE_ROUND_LARGE * ML_CACHE_ROUND_LARGE;
}

bool
_ml_cache_rule_sized (uint64_t size, bool small)
{
  if (small)
    return size == ML_CACHE_SMALL_BUFFER;
  return size == ML_CACHE_LARGE_BUFFER || (size >= ML_CACHE_MIN_LARGE_ALLOC && size % ML_CACHE_ROUND_LARGE == 0);
}

/* ---- blocks ---- */

uint32_t
_ml_cache_stream_index (MlCache *c, uint32_t raw)
{
  uint32_t i;
  if (ml_u64map_get (&c->streams, raw, &i))
    return i;
  i = c->n_streams < 0xffff ? c->n_streams++ : 0xffff;
  if (ml_u64map_put (&c->streams, raw, i) < 0)
    c->failed = true;
  return i;
}

static uint32_t
blk_new (MlCache *c)
{
  uint32_t i;
  if (c->free_slots != ML_CACHE_NONE)
    {
      i = c->free_slots;
      c->free_slots = c->b[i].next;
    }
  else
    {
      if (ML_ARRAY_RESERVE (c->b, c->nb, c->capb, 256) < 0)
        return ML_CACHE_NONE;
      i = (uint32_t) c->nb++;
    }
  memset (&c->b[i], 0, sizeof c->b[i]);
  c->b[i].prev = c->b[i].next = ML_CACHE_NONE;
  c->b[i].used = true;
  return i;
}

static void
blk_drop (MlCache *c, uint32_t i)
{
  c->b[i].used = false;
  c->b[i].next = c->free_slots;
  c->free_slots = i;
}

static inline uint64_t
key_a (const MlCacheBlock *b)
{
  return (uint64_t) b->stream << 48 | b->size;
}

static int
free_insert (MlCache *c, uint32_t i)
{
  MlCacheBlock *b = &c->b[i];
  if (ml_u64map_put (&c->free_at, b->addr, i) < 0)
    return ML_ENOMEM;
  return ml_treap_insert (&c->pool[c->s[b->seg].small], key_a (b), b->addr, b->size) == ML_TREAP_NIL ? ML_ENOMEM : 0;
}

static void
free_remove (MlCache *c, uint32_t i)
{
  MlCacheBlock *b = &c->b[i];
  ml_treap_remove (&c->pool[c->s[b->seg].small], key_a (b), b->addr);
  ml_u64map_del (&c->free_at, b->addr);
}

/* Cuts block @i at @at bytes: [addr, addr + at) stays @i, the rest is a
 * new block (same allocated state, not in any set). Returns it or ML_CACHE_NONE. */
static uint32_t
blk_split (MlCache *c, uint32_t i, uint64_t at)
{
  uint32_t r = blk_new (c);
  if (r == ML_CACHE_NONE)
    return ML_CACHE_NONE;
  MlCacheBlock *b = &c->b[i], *n = &c->b[r];
  n->addr = b->addr + at;
  n->size = b->size - at;
  n->seg = b->seg;
  n->stream = b->stream;
  n->prev = i;
  n->next = b->next;
  if (b->next != ML_CACHE_NONE)
    c->b[b->next].prev = r;
  b->next = r;
  b->size = at;
  return r;
}

/* Merges free block @j (the successor of @i) into @i. Neither is in a set. */
static void
blk_merge_next (MlCache *c, uint32_t i)
{
  MlCacheBlock *b = &c->b[i];
  uint32_t j = b->next;
  b->size += c->b[j].size;
  b->next = c->b[j].next;
  if (b->next != ML_CACHE_NONE)
    c->b[b->next].prev = i;
  blk_drop (c, j);
}

static bool
should_split (const MlCache *c, const MlCacheBlock *b, uint64_t size)
{
  uint64_t remaining = b->size - size;
  if (c->s[b->seg].small)
    return remaining >= ML_CACHE_MIN_BLOCK;
  return size < c->cfg.max_split && remaining > ML_CACHE_SMALL_SIZE;
}

/* alloc_found_block: takes free block @i (already out of its set). */
static int
take (MlCache *c, uint32_t i, uint64_t size)
{
  if (should_split (c, &c->b[i], size))
    {
      uint32_t r = blk_split (c, i, size);
      if (r == ML_CACHE_NONE || free_insert (c, r) < 0)
        return ML_ENOMEM;
    }
  c->b[i].allocated = true;
  return 0;
}

/* get_free_block: best fit in the pool, same stream, oversize rules. */
static uint32_t
find_free (MlCache *c, uint64_t size, uint32_t stream, bool small)
{
  MlTreap *t = &c->pool[small];
  uint32_t n = ml_treap_lower_bound (t, (uint64_t) stream << 48 | size, 0, &c->visited);
  if (n == ML_TREAP_NIL || t->nodes[n].a >> 48 != stream)
    return ML_CACHE_NONE;
  uint64_t bsize = t->nodes[n].value;
  if (size < c->cfg.max_split && bsize >= c->cfg.max_split)
    return ML_CACHE_NONE;
  if (size >= c->cfg.max_split && bsize >= size + ML_CACHE_LARGE_BUFFER)
    return ML_CACHE_NONE;
  uint32_t i;
  return ml_u64map_get (&c->free_at, t->nodes[n].b, &i) ? i : ML_CACHE_NONE;
}

long
_ml_cache_seg_add (MlCache *c, uint64_t base, uint64_t size, uint32_t stream, bool small, bool expandable)
{
  if (ML_ARRAY_RESERVE (c->s, c->ns, c->caps, 32) < 0)
    return -1;
  uint32_t si = (uint32_t) c->ns;
  uint32_t bi = blk_new (c);
  if (bi == ML_CACHE_NONE)
    return -1;
  c->s[si] = (MlCacheSegment) { .base = base, .size = size, .stream = stream, .first = bi, .small = small,
                     .expandable = expandable, .alive = true, .plan_seg = -1 };
  c->ns++;
  MlCacheBlock *b = &c->b[bi];
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
bool
_ml_cache_seg_release (MlCache *c, uint32_t si)
{
  MlCacheSegment *g = &c->s[si];
  MlCacheBlock *b = &c->b[g->first];
  if (!g->alive || b->allocated || b->next != ML_CACHE_NONE)
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
release_available (MlCache *c, uint64_t size, uint32_t stream)
{
  if (c->cfg.max_split == UINT64_MAX)
    return false;
  uint64_t want = size < c->cfg.max_split ? c->cfg.max_split : size;
  long best = -1;
  for (size_t i = 0; i < c->ns; i++)
    {
      MlCacheSegment *g = &c->s[i];
      MlCacheBlock *b = &c->b[g->first];
      if (g->alive && !g->small && !g->expandable && g->stream == stream && !b->allocated && b->next == ML_CACHE_NONE
          && g->size >= want && (best < 0 || g->size < c->s[best].size))
        best = (long) i;
    }
  if (best >= 0)
    return _ml_cache_seg_release (c, (uint32_t) best);
  uint64_t freed = 0;
  while (freed < want)
    {
      long big = -1;
      for (size_t i = 0; i < c->ns; i++)
        {
          MlCacheSegment *g = &c->s[i];
          MlCacheBlock *b = &c->b[g->first];
          if (g->alive && !g->small && !g->expandable && g->stream == stream && !b->allocated && b->next == ML_CACHE_NONE
              && g->size >= c->cfg.max_split && (big < 0 || g->size > c->s[big].size))
            big = (long) i;
        }
      if (big < 0)
        break;
      freed += c->s[big].size;
      _ml_cache_seg_release (c, (uint32_t) big);
    }
  return freed >= want;
}

static bool
release_all (MlCache *c)
{
  bool any = false;
  for (size_t i = 0; i < c->ns; i++)
    if (!c->s[i].expandable)
      any |= _ml_cache_seg_release (c, (uint32_t) i);
  return any;
}

static bool
fits (const MlCache *c, uint64_t bytes)
{
  return !c->capacity || c->reserved + bytes <= c->capacity;
}

/* Expandable segments: map pages at the end of the (pool, stream) segment
 * until its free tail holds @size. Returns the tail block or ML_CACHE_NONE. */
static uint32_t
expand (MlCache *c, uint64_t size, uint32_t stream, bool small, int *rc)
{
  uint64_t page = small ? ML_CACHE_SMALL_BUFFER : ML_CACHE_LARGE_BUFFER;
  long si = -1;
  for (size_t i = 0; i < c->ns; i++)
    if (c->s[i].alive && c->s[i].expandable && c->s[i].small == small && c->s[i].stream == stream)
      si = (long) i;
  if (si < 0)
    {
      uint64_t bytes = (size + page - 1) / page * page;
      if (!fits (c, bytes))
        return ML_CACHE_NONE;
      MlCacheSegment tmp = { .size = bytes, .stream = stream, .small = small, .expandable = true };
      if ((*rc = c->new_seg (c, bytes, stream, &tmp)) < 0)
        return ML_CACHE_NONE;
      si = _ml_cache_seg_add (c, tmp.base, bytes, stream, small, true);
      if (si < 0)
        {
          *rc = ML_ENOMEM;
          return ML_CACHE_NONE;
        }
      c->s[si].plan_seg = tmp.plan_seg;
      c->last_new_segment = true;
      return c->s[si].first;
    }
  MlCacheSegment *g = &c->s[si];
  uint32_t last = g->first;
  while (c->b[last].next != ML_CACHE_NONE)
    last = c->b[last].next;
  uint64_t have = c->b[last].allocated ? 0 : c->b[last].size;
  uint64_t bytes = (size - have + page - 1) / page * page;
  if (!fits (c, bytes))
    return ML_CACHE_NONE;
  if (c->b[last].allocated)
    {
      uint32_t n = blk_new (c);
      if (n == ML_CACHE_NONE)
        {
          *rc = ML_ENOMEM;
          return ML_CACHE_NONE;
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
      return ML_CACHE_NONE;
    }
  if (c->grow_seg && (*rc = c->grow_seg (c, g, bytes)) < 0)
    return ML_CACHE_NONE;
  c->last_new_segment = true;
  return last;
}

/* malloc: returns the block through *out; ML_EOOM when the capacity
 * refuses every way PyTorch tries. */
int
_ml_cache_malloc (MlCache *c, uint64_t req, uint32_t raw_stream, uint32_t *out)
{
  uint32_t stream = _ml_cache_stream_index (c, raw_stream);
  if (c->failed)
    return ML_ENOMEM;
  uint64_t size = _ml_cache_round_size (&c->cfg, req);
  bool small = size <= ML_CACHE_SMALL_SIZE;
  c->last_new_segment = false;
  uint32_t i = find_free (c, size, stream, small);
  int rc = 0;
  if (i == ML_CACHE_NONE && c->cfg.expandable)
    {
      i = expand (c, size, stream, small, &rc);
      if (i == ML_CACHE_NONE && rc == 0 && !c->owner_retries && release_all (c))
        i = expand (c, size, stream, small, &rc);
      if (rc < 0)
        return rc;
      if (i == ML_CACHE_NONE)
        return ML_EOOM;
      free_remove (c, i);
    }
  else if (i == ML_CACHE_NONE)
    {
      uint64_t bytes = segment_size (size);
      if (!fits (c, bytes)
          && (c->owner_retries
              || (!(release_available (c, size, stream) && fits (c, bytes)) && !(release_all (c) && fits (c, bytes)))))
        return ML_EOOM;
      MlCacheSegment tmp = { .size = bytes, .stream = stream, .small = small };
      if ((rc = c->new_seg (c, bytes, raw_stream, &tmp)) < 0)
        return rc;
      long si = _ml_cache_seg_add (c, tmp.base, bytes, stream, small, false);
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

uint64_t
_ml_cache_release_cached (MlCache *c, uint32_t attempt, uint64_t req, uint32_t raw_stream)
{
  uint64_t before = c->reserved;
  if (attempt == 1 && !c->cfg.expandable)
    release_available (c, _ml_cache_round_size (&c->cfg, req), _ml_cache_stream_index (c, raw_stream));
  if (c->reserved == before)
    release_all (c);
  return before - c->reserved;
}

int
_ml_cache_free (MlCache *c, uint32_t i)
{
  MlCacheBlock *b = &c->b[i];
  b->allocated = false;
  uint32_t p = b->prev;
  if (b->next != ML_CACHE_NONE && !c->b[b->next].allocated)
    {
      free_remove (c, b->next);
      blk_merge_next (c, i);
    }
  if (p != ML_CACHE_NONE && !c->b[p].allocated)
    {
      free_remove (c, p);
      blk_merge_next (c, p);
      i = p;
    }
  return free_insert (c, i);
}

/* The block containing @addr (free or not), ML_CACHE_NONE when no segment has it. */
uint32_t
_ml_cache_block_at (MlCache *c, uint64_t addr)
{
  uint32_t s = ml_treap_predecessor (&c->segs, addr, 1, NULL);
  if (s == ML_TREAP_NIL)
    return ML_CACHE_NONE;
  const MlCacheSegment *g = &c->s[c->segs.nodes[s].value];
  if (addr >= g->base + g->size)
    return ML_CACHE_NONE;
  for (uint32_t i = g->first; i != ML_CACHE_NONE; i = c->b[i].next)
    if (addr >= c->b[i].addr && addr < c->b[i].addr + c->b[i].size)
      return i;
  return ML_CACHE_NONE;
}

/* Places an allocated block at @addr inside a free block (the rebuilt
 * state, or a resync after a mismatch): its size is the rounded request,
 * plus the rest of the free block when the split rules would not cut it.
 * Returns the block or ML_CACHE_NONE when @addr is not free. */
uint32_t
_ml_cache_carve (MlCache *c, uint64_t addr, uint64_t req)
{
  uint32_t i = _ml_cache_block_at (c, addr);
  if (i == ML_CACHE_NONE || c->b[i].allocated)
    return ML_CACHE_NONE;
  uint64_t size = _ml_cache_round_size (&c->cfg, req);
  if (addr + size > c->b[i].addr + c->b[i].size)
    size = c->b[i].addr + c->b[i].size - addr;
  free_remove (c, i);
  if (addr > c->b[i].addr)
    {
      uint32_t r = blk_split (c, i, addr - c->b[i].addr);
      if (r == ML_CACHE_NONE || free_insert (c, i) < 0)
        return ML_CACHE_NONE;
      i = r;
    }
  if (should_split (c, &c->b[i], size))
    {
      uint32_t r = blk_split (c, i, size);
      if (r == ML_CACHE_NONE || free_insert (c, r) < 0)
        return ML_CACHE_NONE;
    }
  c->b[i].allocated = true;
  return i;
}

void
_ml_cache_init (MlCache *c, const MlCacheConfig *cfg)
{
  memset (c, 0, sizeof *c);
  c->cfg = *cfg;
  c->free_slots = ML_CACHE_NONE;
  ml_treap_init (&c->pool[0]);
  ml_treap_init (&c->pool[1]);
  ml_treap_init (&c->segs);
  ml_u64map_init (&c->streams);
  ml_u64map_init (&c->free_at);
}

void
_ml_cache_clear (MlCache *c)
{
  free (c->b);
  free (c->s);
  ml_treap_clear (&c->pool[0]);
  ml_treap_clear (&c->pool[1]);
  ml_treap_clear (&c->segs);
  ml_u64map_clear (&c->streams);
  ml_u64map_clear (&c->free_at);
}

uint64_t
_ml_cache_largest_free (const MlCache *c)
{
  uint64_t a = ml_treap_max_value (&c->pool[0]), b = ml_treap_max_value (&c->pool[1]);
  return a > b ? a : b;
}

/* ---- options ---- */

static int
parse_option (void *user, const char *key, const char *value, MlError *err)
{
  MlCacheConfig *cfg = user;
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
  else
    return ml_error_set (err, ML_EUSAGE,
                         "caching: unknown option \"%s\" (known: max_split_size_mb, expandable_segments, roundup_power2_divisions)", key);
  return 0;
}

int
_ml_cache_parse_config (const char *options, MlCacheConfig *cfg, MlError *err)
{
  memset (cfg, 0, sizeof *cfg);
  cfg->max_split = UINT64_MAX;
  return ml_options_foreach (options, parse_option, cfg, err);
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

const char *
_ml_cache_options (const MlTrace *t, const char *options, char *buf, size_t n)
{
  const char *rec;
  if ((options && *options) || !t || !(rec = recorded_settings (t)))
    return options;
  /* the snapshot's own allocator settings ("... (per size range ...)" cut off) */
  snprintf (buf, n, "%s", rec);
  buf[strcspn (buf, " ")] = 0;
  return buf;
}
