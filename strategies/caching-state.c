/* caching-state.c — the cache model put in the state a snapshot recorded at
 * its trace's first event (the tick-0 segments and live blocks,
 * sim/formats/snapshot.h): where the conformance replay, the tune replay
 * and a warm start begin. */
#include "strategies/caching-private.h"

#include <inttypes.h>
#include <string.h>

/* A segment or mapped range that exists at tick 0 (event @k). */
static int
rebuild_segment (MlCache *c, const MlTrace *t, size_t k, const MlCacheRebuildCb *cb, MlError *err)
{
  const MlEvent *ev = &t->events[k];
  char where[ML_TRACE_WHERE_MAX];
  const char *pool = ml_trace_str (t, ev->name);
  bool small = pool && *pool ? strcmp (pool, "small") == 0 : ev->size == ML_CACHE_SMALL_BUFFER;
  uint32_t stream = _ml_cache_lane (c, ev->pool, ev->stream);
  int rc;
  if (c->failed)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  if (ev->kind == ML_EV_SEGMENT_MAP)
    {
      /* a mapped range: the ranges of one (pool, stream) are one segment */
      if ((rc = _ml_cache_exp_add_range (c, ev->addr, ev->size, stream, small)) < 0)
        return ml_error_set (err, rc, rc == ML_ENOMEM ? "out of memory"
                             : "%s: expandable range at 0x%" PRIx64 " overlaps another segment of the rebuilt state",
                               ml_trace_event_where (t, k, where, sizeof where), ev->addr);
    }
  else if (_ml_cache_seg_add (c, ev->addr, ev->size, stream, small, false) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  return cb && cb->segment ? cb->segment (cb->user, k, small) : 0;
}

int
_ml_cache_rebuild (MlCache *c, const MlTrace *t, const MlCacheRebuildCb *cb, size_t *end0, MlError *err)
{
  char where[ML_TRACE_WHERE_MAX];
  size_t first_alloc = t->n_events, e0 = 0;
  int rc;
  while (e0 < t->n_events && t->events[e0].tick == 0)
    e0++;
  *end0 = e0;
  for (size_t k = 0; k < e0; k++)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->kind == ML_EV_SEGMENT_ALLOC || ev->kind == ML_EV_SEGMENT_MAP)
        {
          if ((rc = rebuild_segment (c, t, k, cb, err)) < 0)
            return rc;
        }
      else if (ev->kind == ML_EV_ALLOC && first_alloc == t->n_events)
        first_alloc = k;
    }
  /* blocks from the highest address down, so each free block ends at the
   * next live block, as it did */
  for (size_t k = e0; k-- > first_alloc && first_alloc < e0;)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->kind != ML_EV_ALLOC)
        continue;
      uint32_t i = _ml_cache_carve (c, ev->addr, ev->size);
      if (i == ML_CACHE_NONE)
        return ml_error_set (err, ML_EINPUT, "%s: block at 0x%" PRIx64 " of the rebuilt state is not inside a free part of a segment",
                             ml_trace_event_where (t, k, where, sizeof where), ev->addr);
      if (cb && cb->block && (rc = cb->block (cb->user, k, i)) < 0)
        return rc;
    }
  return 0;
}
