/* caching.c — the `caching` strategy: the cache model (caching-model.c)
 * driven by the simulation, its segments reserved in the plan. */
#include "strategies/caching.h"

#include <stdio.h>
#include <stdlib.h>

#include "sim/buffers.h"
#include "strategies/caching-private.h"

/* A private pool as the trace shows it: a CUDA graph's own pool (id (N,
 * 0)) is being captured from its first allocation to its last; a pool
 * becomes freeable (its graph or MemPool gone) at its first recorded
 * segment_free or segment_unmap. */
typedef struct {
  uint64_t first_alloc, last_alloc;   /* ticks; first_alloc UINT64_MAX: none */
  uint64_t freed;                     /* tick of its first segment release, UINT64_MAX: never */
  bool     graph;
} PoolLife;

typedef struct {
  MlCache       cache;
  MlSimContext *ctx;
  uint32_t     *block;      /* per buffer */
  uint64_t      next_base;
  uint64_t      align;      /* the alignment knob, when above 512 B */
  const MlBuffers *bufs;
  PoolLife     *pools;      /* per trace pool (MlTrace.pools), NULL: none */
  size_t        n_pools;
} Strat;

/* The lives of the trace's private pools (Strat.pools). */
static int
scan_pools (Strat *s, const MlTrace *t)
{
  if (!t || t->n_pools < 2)
    return 0;
  s->pools = malloc (t->n_pools * sizeof *s->pools);
  if (!s->pools)
    return ML_ENOMEM;
  s->n_pools = t->n_pools;
  for (size_t p = 0; p < t->n_pools; p++)
    s->pools[p] = (PoolLife) { UINT64_MAX, 0, UINT64_MAX, t->pools[p].first != 0 && t->pools[p].second == 0 };
  for (size_t k = 0; k < t->n_events; k++)
    {
      const MlEvent *ev = &t->events[k];
      if (ev->kind == ML_EV_SYNC || ev->kind == ML_EV_KERNEL || !ev->pool || ev->pool >= s->n_pools)
        continue;
      PoolLife *l = &s->pools[ev->pool];
      if (ev->kind == ML_EV_ALLOC && ev->tick > 0)
        {
          if (l->first_alloc == UINT64_MAX)
            l->first_alloc = ev->tick;
          l->last_alloc = ev->tick;
        }
      if ((ev->kind == ML_EV_SEGMENT_FREE || ev->kind == ML_EV_SEGMENT_UNMAP) && l->freed == UINT64_MAX)
        l->freed = ev->tick;
    }
  return 0;
}

/* The pool of request @req (its alloc event's), and the cache told what
 * is true at its tick: a capture under way, the pools freeable by then. */
static uint32_t
request_pool (Strat *s, const MlRequest *req)
{
  if (!s->pools)
    return 0;
  s->cache.capturing = false;
  for (size_t p = 1; p < s->n_pools; p++)
    {
      const PoolLife *l = &s->pools[p];
      s->cache.capturing |= l->graph && l->first_alloc <= req->tick && req->tick <= l->last_alloc;
      _ml_cache_pool_freeable (&s->cache, (uint32_t) p, l->freed <= req->tick);
    }
  const MlEvent *ev = &s->bufs->trace->events[s->bufs->alloc_event[req->buffer]];
  return ev->pool < s->n_pools ? ev->pool : 0;
}

static int
strat_new_seg (MlCache *c, uint64_t size, uint32_t stream, MlCacheSegment *seg)
{
  Strat *s = c->user;
  /* an expandable segment is a virtual range: its mappings reserve it */
  long p = ml_sim_reserve (s->ctx, size, stream, seg->expandable ? ML_SEG_EXPANDABLE | ML_SEG_PAGED : 0);
  if (p < 0)
    return ML_ENOMEM;
  seg->plan_seg = p;
  /* the pool its lane serves (caching-private.h: a segment's stream is its lane) */
  ml_sim_set_pool (s->ctx, (uint32_t) p, seg->stream < c->n_streams ? c->lane_pool[seg->stream] : 0);
  seg->base = s->next_base;
  /* bases far apart: an expandable segment grows in place */
  s->next_base += seg->expandable ? (uint64_t) 1 << 44 : (size + ML_CACHE_ROUND_LARGE - 1) / ML_CACHE_ROUND_LARGE * ML_CACHE_ROUND_LARGE;
  return 0;
}

static void
strat_rel_seg (MlCache *c, MlCacheSegment *g)
{
  Strat *s = c->user;
  ml_sim_release (s->ctx, (uint32_t) g->plan_seg);
}

static int
strat_map_seg (MlCache *c, MlCacheSegment *g, uint64_t offset, uint64_t size)
{
  Strat *s = c->user;
  return ml_sim_map (s->ctx, (uint32_t) g->plan_seg, offset, size) < 0 ? ML_ENOMEM : 0;
}

static void
strat_unmap_seg (MlCache *c, MlCacheSegment *g, uint64_t offset, uint64_t size)
{
  Strat *s = c->user;
  ml_sim_unmap (s->ctx, (uint32_t) g->plan_seg, offset, size);   /* out of memory: the driver stops */
}

static int
strat_create (MlSimContext *ctx, const MlKnobs *knobs, void **state, MlError *err)
{
  MlCacheConfig cfg;
  const MlBuffers *bufs = ml_sim_buffers (ctx);
  char settings[256];
  /* a PyTorch snapshot without options: run with the settings it recorded */
  int rc = _ml_cache_config_for (bufs->trace, knobs->options, &cfg, NULL, settings, sizeof settings, err);
  if (rc < 0)
    return rc;
  if (cfg.fraction > 0 && cfg.fraction < 1 && !knobs->capacity)
    return ml_error_set (err, ML_EUSAGE, "caching: per_process_memory_fraction needs the device's memory (--capacity)");
  Strat *s = calloc (1, sizeof *s);
  if (!s || !(s->block = calloc (bufs->n ? bufs->n : 1, sizeof *s->block)) || scan_pools (s, bufs->trace) < 0)
    {
      if (s)
        free (s->block);
      free (s);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  s->bufs = bufs;
  _ml_cache_init (&s->cache, &cfg);
  _ml_cache_set_capacity (&s->cache, knobs->capacity);
  s->cache.owner_retries = true;   /* the driver retries, up to --retries */
  s->cache.new_seg = strat_new_seg;
  s->cache.rel_seg = strat_rel_seg;
  s->cache.map_seg = strat_map_seg;
  s->cache.unmap_seg = strat_unmap_seg;
  s->cache.user = s;
  s->ctx = ctx;
  s->next_base = (uint64_t) 1 << 40;
  s->align = knobs->align > ML_CACHE_MIN_BLOCK ? knobs->align : 0;
  *state = s;
  return 0;
}

/* PyTorch aligns blocks to 512 B; a larger alignment knob is honoured by
 * asking for whole multiples of it (segments are 2 MiB multiples) */
static uint64_t
wanted (const Strat *s, const MlRequest *req)
{
  uint64_t want = req->requested;
  if (s->align)
    want = ml_align_up (want ? want : 1, s->align);
  return want;
}

static int
strat_alloc (void *state, const MlRequest *req, MlPlacement *out, uint64_t *visited)
{
  Strat *s = state;
  uint32_t i;
  s->cache.visited = 0;
  int rc = _ml_cache_malloc (&s->cache, wanted (s, req), request_pool (s, req), req->stream, &i);
  *visited += s->cache.visited;
  if (rc < 0)
    return rc;
  const MlCacheBlock *b = &s->cache.b[i];
  const MlCacheSegment *g = &s->cache.s[b->seg];
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
  _ml_cache_free (&s->cache, s->block[req->buffer]);
  *visited += 1;
}

/* The driver's retries (--retries) are PyTorch's: release and try again. */
static uint64_t
strat_release_cached (void *state, uint32_t attempt, const MlRequest *req)
{
  Strat *s = state;
  return _ml_cache_release_cached (&s->cache, attempt, wanted (s, req), request_pool (s, req), req->stream);
}

static uint64_t
strat_largest_free (void *state)
{
  Strat *s = state;
  uint64_t m = _ml_cache_largest_free (&s->cache);
  if (s->cache.capacity > s->cache.reserved && s->cache.capacity - s->cache.reserved > m)
    m = s->cache.capacity - s->cache.reserved;
  return m;
}

static void
strat_lift (void *state)
{
  Strat *s = state;
  s->cache.capacity = 0;
  s->cache.live_limit = 0;
}

static void
strat_destroy (void *state)
{
  Strat *s = state;
  _ml_cache_clear (&s->cache);
  free (s->pools);
  free (s->block);
  free (s);
}

/* the allocator settings it emulates (sim/alloc-conf.h; the others it
 * parses, keeps or refuses by name) */
static const char *const caching_keys[] = { "max_split_size_mb", "max_non_split_rounding_mb", "expandable_segments",
                                            "roundup_power2_divisions", "backend", "release_lock_on_cudamalloc",
                                            "graph_capture_record_stream_reuse", "garbage_collection_threshold",
                                            "per_process_memory_fraction", "release_lock_on_hipmalloc",
                                            "pinned_use_cuda_host_register", "pinned_use_hip_host_register",
                                            "pinned_num_register_threads", "pinned_use_background_threads",
                                            "pinned_reserve_segment_size_mb", NULL };

const MlStrategy ml_strategy_caching = {
  .name = "caching",
  .summary = "online: PyTorch's CUDA caching allocator (512 B rounding, 2/20 MiB segments, best fit per pool and stream)",
  .kind = ML_STRATEGY_ONLINE,
  .flags = ML_STRATEGY_DEFAULT,
  .knobs = ML_KNOB_OPTIONS | ML_KNOB_RETRIES,
  .options = caching_keys,
  .create = strat_create, .alloc = strat_alloc, .release = strat_release,
  .release_cached = strat_release_cached,
  .largest_free = strat_largest_free, .lift_capacity = strat_lift, .destroy = strat_destroy,
};
