/* caching-model.c — the model of PyTorch's caching allocator (the rules are
 * in caching.h, the interface in caching-private.h). */
#include "strategies/caching-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/array.h"

/* ---- rounding and sizes ---- */

/* get_allocation_size; the cudaMallocAsync model's pool grows by the
 * request rounded up to 2 MiB. */
static uint64_t
segment_size (const MlCache *c, uint64_t size)
{
  if (c->cfg.backend == ML_CACHE_ASYNC)
    return (size + ML_CACHE_ROUND_LARGE - 1) / ML_CACHE_ROUND_LARGE * ML_CACHE_ROUND_LARGE;
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
_ml_cache_lane (MlCache *c, uint32_t pool, uint32_t raw)
{
  uint32_t i;
  uint64_t key = (uint64_t) pool << 32 | raw;
  if (ml_u64map_get (&c->streams, key, &i))
    return i;
  i = c->n_streams < 0xffff ? c->n_streams++ : 0xffff;
  if (ml_u64map_put (&c->streams, key, i) < 0 || ML_ARRAY_RESERVE (c->lane_pool, i, c->cap_lanes, 16) < 0)
    {
      c->failed = true;
      return i;
    }
  c->lane_pool[i] = pool;
  return i;
}

void
_ml_cache_pool_freeable (MlCache *c, uint32_t pool, bool freeable)
{
  if (pool >= c->n_freeable)
    {
      if (!freeable)
        return;
      size_t n = pool + 1;
      bool *f = realloc (c->freeable, n * sizeof *f);
      if (!f)
        {
          c->failed = true;
          return;
        }
      memset (f + c->n_freeable, 0, (n - c->n_freeable) * sizeof *f);
      c->freeable = f;
      c->n_freeable = n;
    }
  c->freeable[pool] = freeable;
}

/* release_cached_blocks gives back the default pools' cached segments and
 * those of the private pools no graph or MemPool uses any more
 * (graph_pools_freeable). */
static bool
releasable (const MlCache *c, const MlCacheSegment *g)
{
  uint32_t pool = g->stream < c->n_streams ? c->lane_pool[g->stream] : 0;
  return pool == 0 || (pool < c->n_freeable && c->freeable[pool]);
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
  b->gc_base = c->gc_calls[c->s[b->seg].small];   /* BlockPool::insert_into_blocks */
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
  n->unmapped = b->unmapped;
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
  /* with expandable segments on, every pool splits like the small one
   * (so does the cudaMallocAsync model) */
  if (c->s[b->seg].small || c->cfg.expandable || c->cfg.backend == ML_CACHE_ASYNC)
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

static inline bool
is_free (const MlCache *c, uint32_t i)
{
  return i != ML_CACHE_NONE && !c->b[i].allocated && !c->b[i].unmapped;
}

/* get_free_block's "expandable size": a free block followed by unmapped
 * pages counts them, since it can grow into them. */
static uint64_t
expandable_size (const MlCache *c, uint32_t i)
{
  uint32_t n = c->b[i].next;
  return c->b[i].size + (n != ML_CACHE_NONE && c->b[n].unmapped ? c->b[n].size : 0);
}

/* get_free_block: best fit in the pool, same stream, oversize rules; with
 * expandable segments on, a block of an expandable segment gives way to
 * the next larger one while that one's expandable size is smaller (so the
 * tail of a segment, which can grow, is kept for last). */
static uint32_t
find_free (MlCache *c, uint64_t size, uint32_t stream, bool small)
{
  MlTreap *t = &c->pool[small];
  c->gc_calls[small]++;   /* get_free_blocks_call_count: the blocks' age */
  uint32_t n = ml_treap_lower_bound (t, (uint64_t) stream << 48 | size, 0, &c->visited);
  if (n == ML_TREAP_NIL || t->nodes[n].a >> 48 != stream)
    return ML_CACHE_NONE;
  uint32_t i;
  if (!ml_u64map_get (&c->free_at, t->nodes[n].b, &i))
    return ML_CACHE_NONE;
  while (c->cfg.expandable && c->s[c->b[i].seg].expandable)
    {
      uint32_t nx = ml_treap_lower_bound (t, t->nodes[n].a, t->nodes[n].b + 1, &c->visited), j;
      if (nx == ML_TREAP_NIL || t->nodes[nx].a >> 48 != stream || !ml_u64map_get (&c->free_at, t->nodes[nx].b, &j)
          || expandable_size (c, j) >= expandable_size (c, i))
        break;
      n = nx;
      i = j;
    }
  uint64_t bsize = t->nodes[n].value;
  if (size < c->cfg.max_split && bsize >= c->cfg.max_split)
    return ML_CACHE_NONE;
  if (size >= c->cfg.max_split && bsize >= size + c->cfg.max_non_split)
    return ML_CACHE_NONE;
  return i;
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
  if (!g->alive || b->allocated || b->next != ML_CACHE_NONE || b->unmapped != g->expandable)
    return false;
  if (g->expandable)
    ml_treap_remove (&c->unmapped[g->small], b->stream, b->addr);
  else
    free_remove (c, g->first);
  blk_drop (c, g->first);
  ml_treap_remove (&c->segs, g->base, 0);
  g->alive = false;
  c->reserved -= g->expandable ? g->mapped : g->size;
  c->n_seg_free += !g->expandable;   /* release_block: cudaFree */
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
fits (const MlCache *c, uint64_t bytes)
{
  return !c->capacity || c->reserved + bytes <= c->capacity;
}

/* ---- expandable segments (ExpandableSegment, find_expandable_block,
 * map_block, unmap_block in CUDACachingAllocator.cpp) ---- */

static int
unmapped_insert (MlCache *c, uint32_t i)
{
  const MlCacheBlock *b = &c->b[i];
  return ml_treap_insert (&c->unmapped[c->s[b->seg].small], b->stream, b->addr, i) == ML_TREAP_NIL ? ML_ENOMEM : 0;
}

static void
unmapped_remove (MlCache *c, uint32_t i)
{
  const MlCacheBlock *b = &c->b[i];
  ml_treap_remove (&c->unmapped[c->s[b->seg].small], b->stream, b->addr);
}

/* The live segment whose range holds @addr, -1 when none. */
static long
seg_at (MlCache *c, uint64_t addr)
{
  uint32_t n = ml_treap_predecessor (&c->segs, addr, 1, NULL);
  if (n == ML_TREAP_NIL)
    return -1;
  const MlCacheSegment *g = &c->s[c->segs.nodes[n].value];
  return addr < g->base + g->size ? (long) c->segs.nodes[n].value : -1;
}

/* The last block of segment @si when it is unmapped and starts below
 * @addr (the free virtual end a new segment at @addr may cut). */
static uint32_t
clippable_tail (MlCache *c, long si, uint64_t addr)
{
  if (si < 0 || !c->s[si].expandable)
    return ML_CACHE_NONE;
  uint32_t i = c->s[si].first;
  while (c->b[i].next != ML_CACHE_NONE)
    i = c->b[i].next;
  return c->b[i].unmapped && c->b[i].addr < addr ? i : ML_CACHE_NONE;
}

bool
_ml_cache_can_start_segment (MlCache *c, uint64_t addr)
{
  long si = seg_at (c, addr);
  return si < 0 || clippable_tail (c, si, addr) != ML_CACHE_NONE;
}

/* A new expandable segment at @base: one unmapped block over its virtual
 * range, which ends at the next segment's base and cuts the unmapped end
 * of the one below. Returns its index, -1 when out of memory or when
 * @base is taken. */
static long
exp_seg_new (MlCache *c, uint64_t base, uint32_t stream, bool small)
{
  long below = seg_at (c, base);
  uint32_t tail = clippable_tail (c, below, base);
  if (below >= 0 && tail == ML_CACHE_NONE)
    return -1;
  uint64_t range = ML_CACHE_EXP_RANGE;
  uint32_t above = ml_treap_lower_bound (&c->segs, base + 1, 0, NULL);
  if (above != ML_TREAP_NIL && c->segs.nodes[above].a - base < range)
    range = c->segs.nodes[above].a - base;
  if (ML_ARRAY_RESERVE (c->s, c->ns, c->caps, 32) < 0)
    return -1;
  uint32_t bi = blk_new (c);
  if (bi == ML_CACHE_NONE)
    return -1;
  if (tail != ML_CACHE_NONE)
    {
      c->b[tail].size = base - c->b[tail].addr;   /* its key (stream, addr) stays */
      c->s[below].size = base - c->s[below].base;
    }
  uint32_t si = (uint32_t) c->ns++;
  c->s[si] = (MlCacheSegment) { .base = base, .size = range, .stream = stream, .first = bi, .small = small,
                                .expandable = true, .alive = true, .plan_seg = -1,
                                .page = small ? ML_CACHE_SMALL_BUFFER : ML_CACHE_LARGE_BUFFER };
  c->b[bi].addr = base;
  c->b[bi].size = range;
  c->b[bi].seg = si;
  c->b[bi].stream = stream;
  c->b[bi].unmapped = true;
  if (unmapped_insert (c, bi) < 0 || ml_treap_insert (&c->segs, base, 0, si) == ML_TREAP_NIL)
    return -1;
  return si;
}

/* Maps [addr, addr + bytes) at the start of unmapped block @i (bytes
 * within it); merges the mapped block with its free neighbours and
 * returns it (in the free set), ML_CACHE_NONE when out of memory. */
static uint32_t
map_range (MlCache *c, uint32_t i, uint64_t bytes)
{
  unmapped_remove (c, i);
  if (bytes < c->b[i].size)
    {
      uint32_t r = blk_split (c, i, bytes);
      if (r == ML_CACHE_NONE || unmapped_insert (c, r) < 0)
        return ML_CACHE_NONE;
    }
  c->b[i].unmapped = false;
  c->s[c->b[i].seg].mapped += bytes;
  c->reserved += bytes;
  uint32_t n = c->b[i].next, p = c->b[i].prev;
  if (is_free (c, n))
    {
      free_remove (c, n);
      blk_merge_next (c, i);
    }
  if (is_free (c, p))
    {
      free_remove (c, p);
      blk_merge_next (c, p);
      i = p;
    }
  return free_insert (c, i) < 0 ? ML_CACHE_NONE : i;
}

/* map_block: maps the pages that hold the first @size bytes of unmapped
 * block @i; ML_CACHE_NONE with *rc 0 when the capacity refuses them. */
static uint32_t
map_block (MlCache *c, uint32_t i, uint64_t size, int *rc)
{
  MlCacheSegment *g = &c->s[c->b[i].seg];
  uint64_t off = c->b[i].addr - g->base;
  uint64_t bytes = (size + g->page - 1) / g->page * g->page;
  if (bytes > c->b[i].size)
    bytes = c->b[i].size;
  if (!fits (c, bytes))
    return ML_CACHE_NONE;
  if (c->grow)
    c->grow (c, bytes);
  uint32_t seg = c->b[i].seg;
  uint32_t m = map_range (c, i, bytes);
  if (m == ML_CACHE_NONE)
    {
      *rc = ML_ENOMEM;
      return ML_CACHE_NONE;
    }
  if (c->map_seg && (*rc = c->map_seg (c, &c->s[seg], off, bytes)) < 0)
    return ML_CACHE_NONE;
  c->last_new_segment = true;
  c->n_seg_alloc++;
  return m;
}

/* find_expandable_block: the lowest-addressed unmapped block of the
 * stream in the pool (with the free block before it) that starts @size
 * bytes of unallocated room; else a new segment. */
static uint32_t
find_expandable (MlCache *c, uint64_t size, uint32_t stream, uint32_t raw, bool small, int *rc)
{
  MlTreap *t = &c->unmapped[small];
  for (uint32_t n = ml_treap_lower_bound (t, stream, 0, &c->visited); n != ML_TREAP_NIL && t->nodes[n].a == stream;
       n = ml_treap_lower_bound (t, stream, t->nodes[n].b + 1, &c->visited))
    {
      uint32_t cand = (uint32_t) t->nodes[n].value;
      if (is_free (c, c->b[cand].prev))
        cand = c->b[cand].prev;
      uint64_t room = 0;
      for (uint32_t k = cand; k != ML_CACHE_NONE && room < size && !c->b[k].allocated; k = c->b[k].next)
        room += c->b[k].size;
      if (room >= size)
        return cand;
    }
  MlCacheSegment tmp = { .size = 0, .stream = stream, .small = small, .expandable = true };
  if ((*rc = c->new_seg (c, 0, raw, &tmp)) < 0)
    return ML_CACHE_NONE;
  long si = exp_seg_new (c, tmp.base, stream, small);
  if (si < 0)
    {
      *rc = ML_ENOMEM;
      return ML_CACHE_NONE;
    }
  c->s[si].plan_seg = tmp.plan_seg;
  return c->s[si].first;
}

/* try_allocate_expandable_block: maps what the candidate lacks, page
 * range by page range; returns the block (out of the free set), or
 * ML_CACHE_NONE (*rc 0: the capacity refused a mapping; pages mapped
 * before that stay mapped, as in PyTorch). */
static uint32_t
alloc_expandable (MlCache *c, uint64_t size, uint32_t stream, uint32_t raw, bool small, int *rc)
{
  uint32_t cand = find_expandable (c, size, stream, raw, small, rc);
  if (cand == ML_CACHE_NONE)
    return ML_CACHE_NONE;
  if (c->b[cand].unmapped
      && (cand = map_block (c, cand, c->b[cand].size < size ? c->b[cand].size : size, rc)) == ML_CACHE_NONE)
    return ML_CACHE_NONE;
  while (c->b[cand].size < size)
    {
      uint32_t nx = c->b[cand].next;
      if (nx == ML_CACHE_NONE || !c->b[nx].unmapped)
        return ML_CACHE_NONE;
      uint64_t rest = size - c->b[cand].size;
      if ((cand = map_block (c, nx, c->b[nx].size < rest ? c->b[nx].size : rest, rc)) == ML_CACHE_NONE)
        return ML_CACHE_NONE;
    }
  free_remove (c, cand);
  return cand;
}

/* unmap_block: unmaps the whole pages of free block @i that lie inside
 * [lo, hi); the parts before and after stay free and mapped; the
 * unmapped range joins its unmapped neighbours, and a segment left with
 * no page mapped is released. Returns the bytes unmapped. */
static uint64_t
unmap_block (MlCache *c, uint32_t i, uint64_t lo, uint64_t hi)
{
  uint32_t si = c->b[i].seg;
  const MlCacheSegment *g = &c->s[si];
  uint64_t a = c->b[i].addr > lo ? c->b[i].addr : lo;
  uint64_t e = c->b[i].addr + c->b[i].size < hi ? c->b[i].addr + c->b[i].size : hi;
  if (e <= a)
    return 0;
  uint64_t from = g->base + (a - g->base + g->page - 1) / g->page * g->page;
  uint64_t to = g->base + (e - g->base) / g->page * g->page;
  if (from >= to)
    return 0;
  free_remove (c, i);
  if (from > c->b[i].addr)
    {
      uint32_t r = blk_split (c, i, from - c->b[i].addr);
      if (r == ML_CACHE_NONE || free_insert (c, i) < 0)
        return c->failed = true, 0;
      i = r;
    }
  if (to < c->b[i].addr + c->b[i].size)
    {
      uint32_t r = blk_split (c, i, to - c->b[i].addr);
      if (r == ML_CACHE_NONE || free_insert (c, r) < 0)
        return c->failed = true, 0;
    }
  c->b[i].unmapped = true;
  c->s[si].mapped -= to - from;
  c->reserved -= to - from;
  c->n_seg_free++;
  if (c->unmap_seg)
    c->unmap_seg (c, &c->s[si], from - c->s[si].base, to - from);
  uint32_t n = c->b[i].next, p = c->b[i].prev;
  if (n != ML_CACHE_NONE && c->b[n].unmapped)
    {
      unmapped_remove (c, n);
      blk_merge_next (c, i);
    }
  if (p != ML_CACHE_NONE && c->b[p].unmapped)
    blk_merge_next (c, p);   /* p keeps its place in the set: same (stream, addr) */
  else if (unmapped_insert (c, i) < 0)
    return c->failed = true, 0;
  _ml_cache_seg_release (c, si);
  return to - from;
}

/* release_cached_blocks: every cached segment that is one free block goes
 * back (release_block), and the whole free pages of expandable segments
 * are unmapped (unmap_block), the large pool first, each pool's free
 * blocks in their (stream, size, address) order. */
static bool
release_all (MlCache *c)
{
  bool any = false;
  if (c->capturing)
    return false;   /* malloc's retry skips it while a CUDA graph capture is under way */
  for (size_t i = 0; i < c->ns; i++)
    if (!c->s[i].expandable && releasable (c, &c->s[i]))
      any |= _ml_cache_seg_release (c, (uint32_t) i);
  for (int small = 0; small < 2; small++)
    {
      MlTreap *t = &c->pool[small];
      c->n_tmp = 0;
      for (uint32_t n = ml_treap_lower_bound (t, 0, 0, NULL); n != ML_TREAP_NIL;
           n = ml_treap_lower_bound (t, t->nodes[n].a, t->nodes[n].b + 1, NULL))
        {
          uint32_t i;
          if (ml_u64map_get (&c->free_at, t->nodes[n].b, &i) && c->s[c->b[i].seg].expandable
              && releasable (c, &c->s[c->b[i].seg]))
            {
              if (ML_ARRAY_RESERVE (c->tmp, c->n_tmp, c->cap_tmp, 64) < 0)
                {
                  c->failed = true;
                  return any;
                }
              c->tmp[c->n_tmp++] = i;
            }
        }
      for (size_t k = 0; k < c->n_tmp; k++)
        any |= unmap_block (c, c->tmp[k], 0, UINT64_MAX) > 0;
    }
  return any;
}

uint64_t
_ml_cache_unmap_range (MlCache *c, uint64_t addr, uint64_t size)
{
  long si = seg_at (c, addr);
  if (si < 0 || !c->s[si].expandable)
    return 0;
  c->n_tmp = 0;
  for (uint32_t i = c->s[si].first; i != ML_CACHE_NONE; i = c->b[i].next)
    if (is_free (c, i) && c->b[i].addr < addr + size && c->b[i].addr + c->b[i].size > addr)
      {
        if (ML_ARRAY_RESERVE (c->tmp, c->n_tmp, c->cap_tmp, 64) < 0)
          return c->failed = true, 0;
        c->tmp[c->n_tmp++] = i;
      }
  uint64_t bytes = 0;
  for (size_t k = 0; k < c->n_tmp; k++)
    bytes += unmap_block (c, c->tmp[k], addr, addr + size);
  return bytes;
}

int
_ml_cache_exp_add_range (MlCache *c, uint64_t addr, uint64_t size, uint32_t stream, bool small)
{
  long si = seg_at (c, addr);
  uint32_t i = si >= 0 ? _ml_cache_block_at (c, addr) : ML_CACHE_NONE;
  bool ours = si >= 0 && c->s[si].expandable && c->s[si].small == small && c->s[si].stream == stream
              && i != ML_CACHE_NONE && c->b[i].unmapped;
  if (!ours)
    {
      si = exp_seg_new (c, addr, stream, small);
      if (si < 0)
        return _ml_cache_can_start_segment (c, addr) ? ML_ENOMEM : ML_EINPUT;
      i = c->s[si].first;
    }
  if (addr + size > c->b[i].addr + c->b[i].size)
    return ML_EINPUT;
  if (addr > c->b[i].addr)
    {
      unmapped_remove (c, i);
      uint32_t r = blk_split (c, i, addr - c->b[i].addr);
      if (r == ML_CACHE_NONE || unmapped_insert (c, i) < 0 || unmapped_insert (c, r) < 0)
        return ML_ENOMEM;
      i = r;
    }
  return map_range (c, i, size) == ML_CACHE_NONE ? ML_ENOMEM : 0;
}

/* malloc: returns the block through *out; ML_EOOM when the capacity
 * refuses every way PyTorch tries. */
int
_ml_cache_malloc (MlCache *c, uint64_t req, uint32_t pool, uint32_t raw_stream, uint32_t *out)
{
  uint32_t stream = _ml_cache_lane (c, pool, raw_stream);
  if (c->failed)
    return ML_ENOMEM;
  uint64_t size = _ml_cache_round_size (&c->cfg, req);
  bool small = size <= ML_CACHE_SMALL_SIZE && c->cfg.backend != ML_CACHE_ASYNC;
  c->last_new_segment = false;
  /* the cudaMallocAsync model: PyTorch's limit on the bytes it holds */
  if (c->live_limit && c->live + req > c->live_limit)
    return ML_EOOM;
  uint32_t i = find_free (c, size, stream, small);
  int rc = 0;
  if (i == ML_CACHE_NONE && c->allowed && c->cfg.gc_threshold > 0)
    _ml_cache_garbage_collect (c);
  if (i == ML_CACHE_NONE && c->cfg.expandable)
    {
      /* alloc_block, then release_available_cached_blocks and
       * release_cached_blocks, each followed by alloc_block again */
      i = alloc_expandable (c, size, stream, raw_stream, small, &rc);
      if (i == ML_CACHE_NONE && rc == 0 && !c->owner_retries && release_available (c, size, stream))
        i = alloc_expandable (c, size, stream, raw_stream, small, &rc);
      if (i == ML_CACHE_NONE && rc == 0 && !c->owner_retries && release_all (c))
        i = alloc_expandable (c, size, stream, raw_stream, small, &rc);
      if (rc == 0 && c->failed)
        rc = ML_ENOMEM;
      if (rc < 0)
        return rc;
      if (i == ML_CACHE_NONE)
        return ML_EOOM;
    }
  else if (i == ML_CACHE_NONE)
    {
      uint64_t bytes = segment_size (c, size);
      if (!fits (c, bytes)
          && (c->owner_retries || c->cfg.backend == ML_CACHE_ASYNC
              || (!(release_available (c, size, stream) && fits (c, bytes)) && !(release_all (c) && fits (c, bytes)))))
        return ML_EOOM;
      if (c->grow)
        c->grow (c, bytes);
      MlCacheSegment tmp = { .size = bytes, .stream = stream, .small = small };
      if ((rc = c->new_seg (c, bytes, raw_stream, &tmp)) < 0)
        return rc;
      long si = _ml_cache_seg_add (c, tmp.base, bytes, stream, small, false);
      if (si < 0)
        return ML_ENOMEM;
      c->s[si].plan_seg = tmp.plan_seg;
      c->last_new_segment = true;
      c->n_seg_alloc++;
      i = c->s[si].first;
      free_remove (c, i);
    }
  else
    free_remove (c, i);
  if ((rc = take (c, i, size)) < 0)
    return rc;
  c->b[i].req = req;
  c->live += req;
  c->alloc_bytes += c->b[i].size;
  *out = i;
  return 0;
}

uint64_t
_ml_cache_empty_cache (MlCache *c)
{
  uint64_t before = c->reserved;
  release_all (c);
  return before - c->reserved;
}

uint64_t
_ml_cache_release_cached (MlCache *c, uint32_t attempt, uint64_t req, uint32_t pool, uint32_t raw_stream)
{
  uint64_t before = c->reserved;
  if (c->cfg.backend == ML_CACHE_ASYNC)
    return 0;   /* the pool keeps its memory (release threshold UINT64_MAX) */
  if (attempt == 1)
    release_available (c, _ml_cache_round_size (&c->cfg, req), _ml_cache_lane (c, pool, raw_stream));
  if (c->reserved == before)
    release_all (c);
  return before - c->reserved;
}

int
_ml_cache_free (MlCache *c, uint32_t i)
{
  MlCacheBlock *b = &c->b[i];
  b->allocated = false;
  c->live -= b->req < c->live ? b->req : c->live;
  c->alloc_bytes -= b->size;
  uint32_t p = b->prev;
  if (is_free (c, b->next))
    {
      free_remove (c, b->next);
      blk_merge_next (c, i);
    }
  if (is_free (c, p))
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
  if (!is_free (c, i))
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
  c->b[i].req = req;
  c->live += req;
  c->alloc_bytes += c->b[i].size;
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
  ml_treap_init_plain (&c->unmapped[0]);
  ml_treap_init_plain (&c->unmapped[1]);
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
  ml_treap_clear (&c->unmapped[0]);
  ml_treap_clear (&c->unmapped[1]);
  ml_treap_clear (&c->segs);
  free (c->tmp);
  ml_u64map_clear (&c->streams);
  free (c->lane_pool);
  free (c->freeable);
  ml_u64map_clear (&c->free_at);
}

uint64_t
_ml_cache_largest_free (const MlCache *c)
{
  uint64_t a = ml_treap_max_value (&c->pool[0]), b = ml_treap_max_value (&c->pool[1]);
  return a > b ? a : b;
}
