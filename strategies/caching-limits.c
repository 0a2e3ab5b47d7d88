/* caching-limits.c — the device's limits in the caching emulation: the
 * capacity, the allowed maximum a per_process_memory_fraction sets, and
 * the garbage collection a threshold of it starts
 * (garbage_collect_cached_blocks in CUDACachingAllocator.cpp). */
#include "strategies/caching-private.h"

#include "sim/base/array.h"

void
_ml_cache_set_capacity (MlCache *c, uint64_t device_bytes)
{
  c->capacity = device_bytes;
  c->allowed = c->live_limit = 0;
  if (!device_bytes || c->cfg.fraction <= 0 || c->cfg.fraction >= 1)
    return;
  uint64_t limit = (uint64_t) (c->cfg.fraction * (double) device_bytes);
  if (c->cfg.backend == ML_CACHE_ASYNC)
    c->live_limit = limit;   /* pytorch_memory_limits */
  else
    c->capacity = c->allowed = limit;
}

/* garbage_collect_cached_blocks (garbage_collection_threshold, with the
 * allowed maximum a per_process_memory_fraction sets): once reserved
 * passes the threshold's share of the allowed bytes, the large pool's
 * free blocks that are whole segments (not expandable) go back, those at
 * least as old as the average first (age: get_free_block calls on the
 * pool since the block became free), pass after pass, until the excess
 * is reclaimed or nothing more goes. */
void
_ml_cache_garbage_collect (MlCache *c)
{
  uint64_t threshold = (uint64_t) (c->cfg.gc_threshold * (double) c->allowed);
  if (c->reserved <= threshold)
    return;
  uint64_t target = c->reserved - threshold, reclaimed = 0, total_age = 0;
  MlTreap *t = &c->pool[0];
  c->n_tmp = 0;
  for (uint32_t n = ml_treap_lower_bound (t, 0, 0, NULL); n != ML_TREAP_NIL;
       n = ml_treap_lower_bound (t, t->nodes[n].a, t->nodes[n].b + 1, NULL))
    {
      uint32_t i;
      if (!ml_u64map_get (&c->free_at, t->nodes[n].b, &i) || c->b[i].prev != ML_CACHE_NONE || c->b[i].next != ML_CACHE_NONE)
        continue;
      if (ML_ARRAY_RESERVE (c->tmp, c->n_tmp, c->cap_tmp, 64) < 0)
        {
          c->failed = true;
          return;
        }
      c->tmp[c->n_tmp++] = i;   /* freeable, in the pool's (stream, size, address) order */
      total_age += c->gc_calls[0] - c->b[i].gc_base;
    }
  size_t count = c->n_tmp;
  bool freed = true;
  while (reclaimed < target && freed && count > 0)
    {
      double age_threshold = (double) total_age / (double) count;
      freed = false;
      for (size_t k = 0; k < c->n_tmp; k++)
        {
          uint32_t i = c->tmp[k];
          if (i == ML_CACHE_NONE || c->s[c->b[i].seg].expandable)
            continue;
          uint64_t age = c->gc_calls[0] - c->b[i].gc_base, size = c->b[i].size;
          if ((double) age >= age_threshold && _ml_cache_seg_release (c, c->b[i].seg))
            {
              freed = true;
              reclaimed += size;
              total_age -= age;
              count--;
              c->tmp[k] = ML_CACHE_NONE;
            }
        }
    }
  c->gc_released += reclaimed;
}
