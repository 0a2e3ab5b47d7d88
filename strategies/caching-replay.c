/* caching-replay.c — a trace through the caching emulation under one
 * setting, from the recorded state or a cold start (caching-replay.h). */
#include "strategies/caching-replay.h"

#include <stdlib.h>
#include <string.h>

#include "strategies/caching-private.h"

typedef struct {
  const MlTrace *t;
  MlCache        c;
  MlU64Map       ids;          /* live id -> block */
  MlCacheReplay *r;
  uint64_t       next_base;    /* where the next new segment goes */
  uint64_t       running_peak; /* the highest reserved a growth has reached */
  uint64_t       req;          /* the request malloc is serving */
  uint32_t       stream;
  uint32_t       pool;         /* the request's memory pool (MlTrace.pools) */
  size_t         k;            /* its event */
  size_t         cap_curve;
  MlError       *err;
} Replay;

static int
oom (Replay *p)
{
  return ml_error_set (p->err, ML_ENOMEM, "out of memory");
}

static int
rp_new_seg (MlCache *c, uint64_t size, uint32_t stream, MlCacheSegment *seg)
{
  Replay *p = c->user;
  (void) stream;
  seg->base = p->next_base;
  /* an expandable segment is a virtual range that grows in place */
  p->next_base += seg->expandable ? ML_CACHE_EXP_RANGE
                                  : (size + ML_CACHE_ROUND_LARGE - 1) / ML_CACHE_ROUND_LARGE * ML_CACHE_ROUND_LARGE;
  return 0;
}

/* malloc is about to reserve @bytes: a new peak keeps the state the
 * request found */
static void
rp_grow (MlCache *c, uint64_t bytes)
{
  Replay *p = c->user;
  if (c->reserved + bytes <= p->running_peak)
    return;
  p->running_peak = c->reserved + bytes;
  _ml_cache_strands (c, p->req, p->pool, p->stream, &p->r->at_peak);
  p->r->at_peak.event = p->k;
  p->r->at_peak.tick = p->t->events[p->k].tick;
}

static int
bind (Replay *p, uint64_t id, uint32_t block)
{
  return ml_u64map_put (&p->ids, id, block) < 0 ? oom (p) : 0;
}

static int
rebuilt_block (void *user, size_t k, uint32_t i)
{
  Replay *p = user;
  return bind (p, p->t->events[k].id, i);
}

/* One allocation of @req bytes on @stream at event @k, under the capacity
 * until it first refuses; *@out the block. */
static int
allocate (Replay *p, size_t k, uint64_t req, uint32_t stream, bool recorded_oom, uint32_t *out)
{
  MlCacheReplay *r = p->r;
  p->req = req;
  p->stream = stream;
  p->pool = p->t->events[k].kind == ML_EV_ALLOC ? p->t->events[k].pool : 0;
  p->k = k;
  int rc = _ml_cache_malloc (&p->c, req, p->pool, stream, out);
  if (rc == ML_EOOM)
    {
      /* the first refusal: why, then on without the capacity */
      r->oom = true;
      r->oom_recorded = recorded_oom;
      r->oom_tick = p->t->events[k].tick;
      r->oom_request = req;
      r->oom_live = p->c.live;
      r->oom_reserved = p->c.reserved;
      _ml_cache_strands (&p->c, req, p->pool, stream, &r->at_oom);
      r->at_oom.event = k;
      r->at_oom.tick = r->oom_tick;
      p->c.capacity = 0;
      p->c.live_limit = 0;
      rc = _ml_cache_malloc (&p->c, req, p->pool, stream, out);
    }
  if (rc < 0)
    return rc == ML_EOOM ? ml_error_set (p->err, ML_EINPUT, "the emulation failed an allocation with no capacity")
                         : oom (p);
  if (p->c.alloc_bytes > r->allocated_peak)
    r->allocated_peak = p->c.alloc_bytes;
  if (p->c.live > r->requested_peak)
    r->requested_peak = p->c.live;
  return 0;
}

/* A recorded segment free or unmap at event @k: torch.cuda.empty_cache()
 * when no allocation (or OOM) follows the run of frees it starts; the
 * allocator's own releases inside malloc are the emulation's business. */
static bool
is_empty_cache (const MlTrace *t, size_t k)
{
  if (k > 0 && (t->events[k - 1].kind == ML_EV_SEGMENT_FREE || t->events[k - 1].kind == ML_EV_SEGMENT_UNMAP))
    return false;   /* not the first of its run */
  size_t j = k;
  while (j < t->n_events && (t->events[j].kind == ML_EV_SEGMENT_FREE || t->events[j].kind == ML_EV_SEGMENT_UNMAP))
    j++;
  return j == t->n_events
         || (t->events[j].kind != ML_EV_SEGMENT_ALLOC && t->events[j].kind != ML_EV_SEGMENT_MAP
             && t->events[j].kind != ML_EV_OOM);
}

static int
curve_point (Replay *p, uint64_t tick)
{
  MlCacheReplay *r = p->r;
  uint64_t v = p->c.reserved;
  if (r->n_curve && r->curve_reserved[r->n_curve - 1] == v)
    return 0;
  if (r->n_curve && r->curve_tick[r->n_curve - 1] == tick)
    {
      r->curve_reserved[r->n_curve - 1] = v;
      return 0;
    }
  if (r->n_curve == p->cap_curve)
    {
      size_t cap = p->cap_curve ? p->cap_curve * 2 : 256;
      uint64_t *a = realloc (r->curve_tick, cap * sizeof *a);
      if (a)
        r->curve_tick = a;
      uint64_t *b = a ? realloc (r->curve_reserved, cap * sizeof *b) : NULL;
      if (!b)
        return oom (p);
      r->curve_reserved = b;
      p->cap_curve = cap;
    }
  r->curve_tick[r->n_curve] = tick;
  r->curve_reserved[r->n_curve++] = v;
  return 0;
}

static int
event (Replay *p, size_t k)
{
  const MlEvent *ev = &p->t->events[k];
  uint32_t i;
  int rc = 0;
  switch (ev->kind)
    {
    case ML_EV_ALLOC:
      if ((rc = allocate (p, k, ev->size, ev->stream, false, &i)) == 0)
        rc = bind (p, ev->id, i);
      break;
    case ML_EV_FREE:
      if (ml_u64map_get (&p->ids, ev->id, &i))
        {
          ml_u64map_del (&p->ids, ev->id);
          rc = _ml_cache_free (&p->c, i) < 0 ? oom (p) : 0;
        }
      break;
    case ML_EV_OOM:
      /* the request the real allocator refused, live for this moment */
      if ((rc = allocate (p, k, ev->size, ev->stream, true, &i)) == 0)
        rc = _ml_cache_free (&p->c, i) < 0 ? oom (p) : 0;
      break;
    case ML_EV_SEGMENT_FREE:
    case ML_EV_SEGMENT_UNMAP:
      if (is_empty_cache (p->t, k))
        {
          _ml_cache_empty_cache (&p->c);
          p->r->empty_cache_calls++;
        }
      break;
    default:
      break;
    }
  if (rc == 0 && p->c.failed)
    rc = oom (p);
  return rc;
}

bool
ml_cache_replay_can_warm (const MlTrace *t)
{
  const char *source = ml_trace_str (t, t->source);
  if (!t->has_addrs || !source || strcmp (source, "pytorch-snapshot") != 0)
    return false;
  /* segments, or nothing live (a recording that starts empty) */
  bool segments = false, blocks = false;
  for (size_t k = 0; k < t->n_events && t->events[k].tick == 0; k++)
    {
      segments |= t->events[k].kind == ML_EV_SEGMENT_ALLOC || t->events[k].kind == ML_EV_SEGMENT_MAP;
      blocks |= t->events[k].kind == ML_EV_ALLOC;
    }
  return segments || !blocks;
}

/* The replay itself, once @p is set up. */
static int
run (Replay *p, const MlCacheReplayOpts *opts)
{
  const MlTrace *t = p->t;
  MlCacheReplay *r = p->r;
  size_t from = 0;
  int rc = 0;
  if (opts->warm)
    {
      rc = _ml_cache_rebuild (&p->c, t, &(MlCacheRebuildCb) { NULL, rebuilt_block, p }, &from, p->err);
      p->running_peak = r->reserved_peak = p->c.reserved;
      r->allocated_peak = p->c.alloc_bytes;
      r->requested_peak = p->c.live;
    }
  for (size_t k = from; rc == 0 && k < t->n_events; k++)
    {
      const MlEvent *ev = &t->events[k];
      bool segment = ev->kind >= ML_EV_SEGMENT_ALLOC && ev->kind <= ML_EV_SEGMENT_UNMAP;
      if (opts->warm || ev->tick > 0 || !segment)   /* cold: the recorded state's segments are not there */
        rc = event (p, k);
      if (rc == 0 && p->c.reserved > r->reserved_peak)
        {
          r->reserved_peak = p->c.reserved;
          r->peak_tick = t->events[k].tick;
        }
      if (rc == 0 && opts->curve)
        rc = curve_point (p, t->events[k].tick);
    }
  if (rc == 0 && t->n_events == 0)
    r->reserved_peak = 0;
  return rc;
}

int
ml_cache_replay (const MlTrace *t, const char *options, const MlCacheReplayOpts *opts, MlCacheReplay *out,
                 MlError *err)
{
  MlCacheConfig cfg;
  char settings[512];
  int rc = _ml_cache_config_for (t, options, &cfg, NULL, settings, sizeof settings, err);
  if (rc < 0)
    return rc;
  if (cfg.fraction > 0 && cfg.fraction < 1 && !opts->capacity)
    return ml_error_set (err, ML_EUSAGE, "per_process_memory_fraction needs the device's memory (--capacity)");
  if (opts->warm && !ml_cache_replay_can_warm (t))
    return ml_error_set (err, ML_EUSAGE, "the trace recorded no state to start from (segments at its first event)");
  MlCacheReplay r;
  memset (&r, 0, sizeof r);
  r.warm = opts->warm;
  r.model = cfg.backend == ML_CACHE_ASYNC;
  Replay p = { .t = t, .r = &r, .err = err };
  ml_u64map_init (&p.ids);
  _ml_cache_init (&p.c, &cfg);
  _ml_cache_set_capacity (&p.c, opts->capacity);
  p.c.new_seg = rp_new_seg;
  p.c.grow = rp_grow;
  p.c.user = &p;
  /* new segments above every recorded address */
  uint64_t top = 0;
  for (size_t k = 0; k < t->n_events; k++)
    if (t->events[k].kind != ML_EV_OOM && t->events[k].addr + t->events[k].size > top)
      top = t->events[k].addr + t->events[k].size;
  p.next_base = ((top >> 30) + 2) << 30;
  rc = run (&p, opts);
  if (rc == 0)
    {
      r.reserved_end = p.c.reserved;
      r.n_malloc = p.c.n_seg_alloc;
      r.n_free = p.c.n_seg_free;
      r.gc_released = p.c.gc_released;
      const MlStrandBreakdown *s = &r.at_peak;
      uint64_t free_bytes = s->reserved - s->allocated;
      r.frag_at_peak = s->valid && free_bytes ? 1.0 - (double) s->largest_free / (double) free_bytes : 0;
      *out = r;
    }
  else
    ml_cache_replay_clear (&r);
  ml_u64map_clear (&p.ids);
  _ml_cache_clear (&p.c);
  return rc;
}

void
ml_cache_replay_clear (MlCacheReplay *r)
{
  if (!r)
    return;
  free (r->curve_tick);
  free (r->curve_reserved);
  memset (r, 0, sizeof *r);
}
