/* caching-strand.c — why the emulated cache holds free bytes at one moment
 * (caching-replay.h, "the strands"): each free block put under the first
 * rule that kept a request from it. */
#include "strategies/caching-private.h"

#include <string.h>

const char *
ml_strand_name (MlStrand s)
{
  static const char *const names[ML_STRAND__COUNT] = {
    "small pool", "large pool", "other stream", "oversize", "cached segments", "too small", "usable", "rounding",
  };
  return (unsigned) s < ML_STRAND__COUNT ? names[s] : "?";
}

/* The rule that keeps a request of @size bytes (rounded) in the @small
 * pool on dense stream @stream from free block @i. */
static MlStrand
strand_of (const MlCache *c, uint32_t i, uint64_t size, bool small, uint32_t stream)
{
  const MlCacheBlock *b = &c->b[i];
  const MlCacheSegment *g = &c->s[b->seg];
  if (g->small != small)
    return g->small ? ML_STRAND_SMALL_POOL : ML_STRAND_LARGE_POOL;
  if (b->stream != stream)
    return ML_STRAND_STREAM;
  uint64_t ms = c->cfg.max_split;
  if ((size < ms && b->size >= ms) || (size >= ms && b->size >= size + c->cfg.max_non_split))
    return ML_STRAND_OVERSIZE;
  if (b->prev == ML_CACHE_NONE && b->next == ML_CACHE_NONE && !g->expandable)
    return ML_STRAND_CACHED;
  if (b->size < size)
    return ML_STRAND_TOO_SMALL;
  return ML_STRAND_USABLE;
}

void
_ml_cache_strands (MlCache *c, uint64_t req, uint32_t mem_pool, uint32_t raw_stream, MlStrandBreakdown *out)
{
  memset (out, 0, sizeof *out);
  uint64_t size = _ml_cache_round_size (&c->cfg, req);
  bool small = size <= ML_CACHE_SMALL_SIZE && c->cfg.backend != ML_CACHE_ASYNC;
  uint32_t stream = _ml_cache_lane (c, mem_pool, raw_stream);
  double squares = 0;
  for (int pool = 0; pool < 2; pool++)
    {
      const MlTreap *t = &c->pool[pool];
      for (uint32_t n = ml_treap_lower_bound (t, 0, 0, NULL); n != ML_TREAP_NIL;
           n = ml_treap_lower_bound (t, t->nodes[n].a, t->nodes[n].b + 1, NULL))
        {
          uint32_t i;
          if (!ml_u64map_get (&c->free_at, t->nodes[n].b, &i))
            continue;
          uint64_t bsize = c->b[i].size;
          out->bytes[strand_of (c, i, size, small, stream)] += bsize;
          squares += (double) bsize * (double) bsize;
          if (bsize > out->largest_free)
            out->largest_free = bsize;
        }
    }
  out->valid = true;
  out->request = size;
  out->reserved = c->reserved;
  out->allocated = c->alloc_bytes;
  out->requested = c->live;
  out->bytes[ML_STRAND_ROUNDING] = c->alloc_bytes > c->live ? c->alloc_bytes - c->live : 0;
  uint64_t free_all = c->reserved > c->live ? c->reserved - c->live : 0;
  out->viz_internal = free_all ? (double) out->bytes[ML_STRAND_ROUNDING] / (double) free_all : 0;
  out->viz_fragmentation = c->reserved ? squares / ((double) c->reserved * (double) c->reserved) : 0;
}
