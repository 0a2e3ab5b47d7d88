#include "sim/sim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/base/jsonutil.h"
#include "sim/constraints.h"
#include "sim/recorded.h"

double
ml_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

void
ml_knobs_init (MlKnobs *k)
{
  memset (k, 0, sizeof *k);
  k->chunk = 4u << 20;
  k->retries = 3;
  k->seed = 1;
}

const char *
ml_knob_name (MlKnob knob)
{
  switch (knob)
    {
    case ML_KNOB_TIME_LIMIT: return "time-limit";
    case ML_KNOB_SEED:       return "seed";
    case ML_KNOB_OPTIONS:    return "options";
    case ML_KNOB_CHUNK:      return "chunk";
    case ML_KNOB_RETRIES:    return "retries";
    default:                 return "?";
    }
}

struct MlSimContext {
  const MlBuffers *bufs;
  MlPlan          *plan;
  uint64_t         tick;
  uint64_t         reserved;     /* fixed segments + growable high waters */
  uint64_t        *hw;           /* per segment high water (growable) */
  size_t           hw_cap;
  int              oom;          /* ENOMEM while reserving */
  uint64_t         waste;        /* the strategy's internal waste now */
  bool             has_waste;    /* the strategy reports it */
};

static int
ensure_hw (MlSimContext *ctx, size_t n)
{
  if (n <= ctx->hw_cap)
    return 0;
  size_t cap = ctx->hw_cap ? ctx->hw_cap : 8;
  while (cap < n)
    cap *= 2;
  uint64_t *hw = realloc (ctx->hw, cap * sizeof *hw);
  if (!hw)
    return -1;
  memset (hw + ctx->hw_cap, 0, (cap - ctx->hw_cap) * sizeof *hw);
  ctx->hw = hw;
  ctx->hw_cap = cap;
  return 0;
}

long
ml_sim_reserve (MlSimContext *ctx, uint64_t size, uint32_t stream, uint32_t flags)
{
  MlSegment g = { .size = size, .start = ctx->tick, .end = ctx->bufs->end_tick, .stream = stream, .flags = flags };
  long s = ml_plan_add_segment (ctx->plan, &g);
  if (s < 0 || ensure_hw (ctx, (size_t) s + 1) < 0)
    {
      ctx->oom = 1;
      return -1;
    }
  ctx->hw[s] = 0;
  if (!(flags & (ML_SEG_GROWABLE | ML_SEG_PAGED)))
    ctx->reserved += size;
  return s;
}

void
ml_sim_set_pool (MlSimContext *ctx, uint32_t segment, uint32_t pool)
{
  if (segment < ctx->plan->n_segments)
    ctx->plan->segments[segment].pool = pool;
}

int
ml_sim_map (MlSimContext *ctx, uint32_t segment, uint64_t offset, uint64_t size)
{
  MlSegment *g = &ctx->plan->segments[segment];
  MlMapping m = { .segment = segment, .offset = offset, .size = size, .start = ctx->tick, .end = ctx->bufs->end_tick };
  if (ml_plan_add_mapping (ctx->plan, &m) < 0)
    {
      ctx->oom = 1;
      return -1;
    }
  g = &ctx->plan->segments[segment];
  if (offset + size > g->size)
    g->size = offset + size;
  ctx->reserved += size;
  return 0;
}

int
ml_sim_unmap (MlSimContext *ctx, uint32_t segment, uint64_t offset, uint64_t size)
{
  if (ml_plan_unmap (ctx->plan, segment, offset, offset + size, ctx->tick) < 0)
    {
      ctx->oom = 1;
      return -1;
    }
  ctx->reserved -= size;
  return 0;
}

void
ml_sim_out_of_memory (MlSimContext *ctx)
{
  ctx->oom = 1;
}

void
ml_sim_release (MlSimContext *ctx, uint32_t segment)
{
  MlSegment *g = &ctx->plan->segments[segment];
  g->end = ctx->tick;
  if (g->flags & ML_SEG_PAGED)
    {
      /* what is still mapped goes with it */
      for (size_t k = 0; k < ctx->plan->n_maps; k++)
        {
          MlMapping *m = &ctx->plan->maps[k];
          if (m->segment == segment && m->start <= ctx->tick && m->end > ctx->tick)
            {
              m->end = ctx->tick;
              ctx->reserved -= m->size;
            }
        }
      return;
    }
  ctx->reserved -= (g->flags & ML_SEG_GROWABLE) ? ctx->hw[segment] : g->size;
}

void
ml_sim_resize (MlSimContext *ctx, uint32_t segment, uint64_t size)
{
  MlSegment *g = &ctx->plan->segments[segment];
  if (!(g->flags & ML_SEG_GROWABLE))
    ctx->reserved = ctx->reserved - g->size + size;
  g->size = size;
}

uint64_t
ml_sim_reserved (const MlSimContext *ctx)
{
  return ctx->reserved;
}

void
ml_sim_block_waste (MlSimContext *ctx, uint64_t bytes)
{
  ctx->waste = bytes;
  ctx->has_waste = true;
}

const MlBuffers *
ml_sim_buffers (const MlSimContext *ctx)
{
  return ctx->bufs;
}

static void
note_growth (MlSimContext *ctx, const MlPlacement *at, uint64_t size)
{
  MlSegment *g = &ctx->plan->segments[at->segment];
  if (!(g->flags & ML_SEG_GROWABLE))
    return;
  uint64_t top = at->offset + size;
  if (top > ctx->hw[at->segment])
    {
      ctx->reserved += top - ctx->hw[at->segment];
      ctx->hw[at->segment] = top;
      if (top > g->size)
        g->size = top;
    }
}

static void
record_oom (MlPlan *plan, const MlBuffers *bufs, uint32_t b, uint64_t tick, uint64_t live,
            uint64_t reserved, uint64_t largest, uint64_t capacity)
{
  MlOom *o = &plan->oom;
  o->hit = true;
  o->tick = tick;
  o->buffer = b;
  o->request = bufs->buf[b].rsize;
  o->live = live;
  o->reserved = reserved;
  o->free_bytes = capacity > live ? capacity - live : 0;
  o->largest_free = largest;
  o->verdict = ml_oom_verdict_of (o->request, o->free_bytes);
}

static int
run_online (const MlBuffers *bufs, const MlStrategy *s, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  MlSimContext ctx = { .bufs = bufs, .plan = plan };
  void *state = NULL;
  int rc = s->create (&ctx, knobs, &state, err);
  if (rc < 0)
    return rc;
  MlSweep sw;
  MlSweepStep st;
  uint64_t live = 0, visited = 0, ops = 0;
  size_t steps = 0;
  bool capped = knobs->capacity > 0;
  ml_sweep_init (&sw, bufs);
  double t0 = ml_now ();
  while (ml_sweep_next (&sw, &st))
    {
      const MlBuffer *buf = &bufs->buf[st.buffer];
      MlRequest req = { st.buffer, buf->rsize, buf->size, buf->stream, st.tick };
      MlPlacement at = { plan->segment[st.buffer], plan->offset[st.buffer] };
      ctx.tick = st.tick;
      ops++;
      if (st.is_alloc)
        {
          rc = s->alloc (state, &req, &at, &visited);
          uint32_t retries = 0;
          uint64_t released = 0;
          /* a strategy with a cache gives it back and tries again */
          while (rc == ML_EOOM && s->release_cached && retries < knobs->retries)
            {
              uint64_t r = s->release_cached (state, retries + 1, &req);
              if (r == 0)
                break;
              retries++;
              released += r;
              rc = s->alloc (state, &req, &at, &visited);
            }
          plan->retries += retries;
          plan->retry_released += released;
          if (rc == 0)
            note_growth (&ctx, &at, buf->rsize);
          if (rc == 0 && capped && ctx.reserved > knobs->capacity && !plan->oom.hit)
            {
              /* the placement went past the capacity: that is where it fails */
              uint64_t largest = s->largest_free ? s->largest_free (state) : 0;
              record_oom (plan, bufs, st.buffer, st.tick, live, ctx.reserved - buf->rsize, largest, knobs->capacity);
              if (s->lift_capacity)
                s->lift_capacity (state);
              capped = false;
            }
          else if (rc == ML_EOOM)
            {
              if (!plan->oom.hit)
                {
                  uint64_t largest = s->largest_free ? s->largest_free (state) : 0;
                  record_oom (plan, bufs, st.buffer, st.tick, live, ctx.reserved, largest, knobs->capacity);
                  plan->oom.retries = retries;
                  plan->oom.released = released;
                }
              if (s->lift_capacity)
                s->lift_capacity (state);
              capped = false;
              rc = s->alloc (state, &req, &at, &visited);
              if (rc == 0)
                note_growth (&ctx, &at, buf->rsize);
            }
          if (rc < 0)
            {
              if (!err || err->code == 0 || rc != err->code)
                ml_error_set (err, rc, "%s: allocation of buffer %" PRIu64 " failed: %s", s->name, buf->id, ml_error_code_name (rc));
              break;
            }
          plan->segment[st.buffer] = at.segment;
          plan->offset[st.buffer] = at.offset;
          live += buf->rsize;
          if (st.tick == bufs->lower_bound_tick)
            plan->block_waste = ctx.waste;
        }
      else
        {
          s->release (state, &req, &at, &visited);
          live -= buf->rsize;
        }
      if (ctx.oom)
        {
          rc = ml_error_set (err, ML_ENOMEM, "out of memory");
          break;
        }
      if ((steps & 0xffff) == 0xffff && knobs->time_limit > 0 && ml_now () - t0 >= knobs->time_limit)
        {
          rc = ml_error_set (err, ML_ETIMEOUT, "stopped at the time limit (%.3g s) after %zu of %zu allocations and frees; no plan",
                             knobs->time_limit, steps, 2 * bufs->n);
          break;
        }
      if ((++steps & 0xfffff) == 0 && knobs->progress)
        {
          if (knobs->progress->cancelled && *knobs->progress->cancelled)
            {
              rc = ml_error_set (err, ML_ECANCELLED, "cancelled");
              break;
            }
          if (knobs->progress->report)
            knobs->progress->report (knobs->progress->user, (double) steps / (2.0 * (double) bufs->n + 1), s->name);
        }
    }
  plan->seconds = ml_now () - t0;
  plan->has_block_waste = ctx.has_waste;
  plan->ops = ops;
  plan->nodes_visited = visited;
  s->destroy (state);
  free (ctx.hw);
  return rc;
}

/* The first allocation (sweep order) at which the live bytes pass
 * @capacity: its buffer, tick and the bytes live before it. */
static bool
first_over_capacity (const MlBuffers *bufs, uint64_t capacity, uint32_t *buffer, uint64_t *tick, uint64_t *live_before)
{
  MlSweep sw;
  MlSweepStep st;
  uint64_t live = 0;
  ml_sweep_init (&sw, bufs);
  while (ml_sweep_next (&sw, &st))
    {
      uint64_t sz = bufs->buf[st.buffer].rsize;
      if (!st.is_alloc)
        {
          live -= sz;
          continue;
        }
      if (live + sz > capacity)
        {
          *buffer = st.buffer;
          *tick = st.tick;
          *live_before = live;
          return true;
        }
      live += sz;
    }
  return false;
}

/* An offline plan's reserved bytes at @tick, at most @capacity. */
static uint64_t
plan_reserved_at (const MlBuffers *bufs, const MlPlan *plan, uint64_t tick, uint64_t capacity)
{
  uint64_t r = 0;
  if (plan->n_segments == 1)
    r = plan->segments[0].size;
  else
    for (size_t s = 0; s < plan->n_segments; s++)
      if (plan->segments[s].start <= tick && plan->segments[s].end > tick)
        r += plan->segments[s].size;
  (void) bufs;
  return r < capacity ? r : capacity;
}

int
ml_sim_run (const MlBuffers *bufs, const MlStrategy *s, const MlKnobs *knobs_in, MlPlan **out, MlError *err)
{
  MlKnobs knobs;
  if (knobs_in)
    knobs = *knobs_in;
  else
    ml_knobs_init (&knobs);
  if (knobs.align == 0)
    knobs.align = bufs->align;
  MlPlan *plan = ml_plan_new (bufs->n, s->name);
  if (!plan)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  plan->align = bufs->align;
  int rc;
  if (err)
    err->code = 0;
  if (s->flags & ML_STRATEGY_RECORDED)
    rc = s->plan (bufs, &knobs, plan, err);   /* not an allocator: no time, the capacity is ml_sim_evaluate's */
  else if (s->kind == ML_STRATEGY_ONLINE && ml_constraints_present (bufs))
    rc = ml_error_set (err, ML_EUNSUPPORTED, "%s is an online allocator: it cannot honour the graph's constraints "
                       "(zero_copy, fixed or pinned, no_reuse, contiguous, max_block); use an offline planner", s->name);
  else if (s->kind == ML_STRATEGY_ONLINE)
    rc = run_online (bufs, s, &knobs, plan, err);
  else
    {
      double t0 = ml_now ();
      rc = ml_constraints_present (bufs) ? ml_constraints_plan (bufs, s, &knobs, plan, err) : s->plan (bufs, &knobs, plan, err);
      plan->seconds = ml_now () - t0;
      if (rc == 0 && plan->n_segments == 0)
        rc = ml_plan_make_arena (plan, bufs) < 0 ? ml_error_set (err, ML_ENOMEM, "out of memory") : 0;
      /* a peak that meets the lower bound cannot be beaten, whoever found it */
      if (rc == 0 && !plan->optimal && plan->n_segments == 1 && ml_plan_arena_size (plan, bufs) == bufs->lower_bound)
        {
          plan->optimal = true;
          plan->proven_lb = bufs->lower_bound;
        }
      if (rc == 0 && knobs.capacity && !plan->oom.hit && bufs->lower_bound > knobs.capacity)
        {
          /* no layout fits: the verdict is capacity, at the first request
           * that the live bytes cannot hold under it, whatever the plan */
          uint32_t b;
          uint64_t tick, live;
          if (first_over_capacity (bufs, knobs.capacity, &b, &tick, &live))
            {
              uint64_t largest = 0, free_bytes = 0;
              ml_metrics_free_at (bufs, plan, tick, &largest, &free_bytes, NULL);
              record_oom (plan, bufs, b, tick, live, plan_reserved_at (bufs, plan, tick, knobs.capacity), largest,
                          knobs.capacity);
            }
        }
      if (rc == 0 && knobs.capacity && !plan->oom.hit && plan->n_segments > 1)
        {
          /* several segments (constraints): the first tick where the
           * reserved total passes the capacity, and the first buffer there */
          MlMetrics m;
          MlCurve curve = { 0 };
          if ((rc = ml_metrics_compute (bufs, plan, &m, &curve, err)) == 0)
            for (size_t k = 0; k < curve.n; k++)
              if (curve.pts[k].reserved > knobs.capacity)
                {
                  for (size_t i = 0; i < bufs->n; i++)
                    if (bufs->buf[i].start == curve.pts[k].tick && bufs->buf[i].rsize)
                      {
                        uint64_t largest = 0, free_bytes = 0;
                        ml_metrics_free_at (bufs, plan, curve.pts[k].tick, &largest, &free_bytes, NULL);
                        record_oom (plan, bufs, (uint32_t) i, curve.pts[k].tick, curve.pts[k].live - bufs->buf[i].rsize,
                                    knobs.capacity, largest, knobs.capacity);
                        break;
                      }
                  break;
                }
          ml_curve_free (&curve);
        }
      if (rc == 0 && knobs.capacity && !plan->oom.hit && plan->n_segments == 1)
        {
          /* the first buffer, in allocation order, that ends past the capacity */
          for (size_t i = 0; i < bufs->n; i++)
            if (bufs->buf[i].rsize && plan->offset[i] + bufs->buf[i].rsize > knobs.capacity)
              {
                uint64_t tick = bufs->buf[i].start;
                /* live before this request: everything live at its tick, less it and the later ones */
                uint64_t live = ml_buffers_live_at (bufs, tick);
                for (size_t j = i; j < bufs->n && bufs->buf[j].start == tick; j++)
                  if (bufs->buf[j].end > tick)
                    live -= bufs->buf[j].rsize;
                uint64_t largest = 0, free_bytes = 0;
                ml_metrics_free_at (bufs, plan, tick, &largest, &free_bytes, NULL);
                record_oom (plan, bufs, (uint32_t) i, tick, live,
                            knobs.capacity < plan->segments[0].size ? knobs.capacity : plan->segments[0].size,
                            largest, knobs.capacity);
                break;
              }
        }
    }
  if (rc < 0)
    {
      ml_plan_free (plan);
      return rc;
    }
  *out = plan;
  return 0;
}

int
ml_sim_evaluate (const MlBuffers *bufs, const MlStrategy *s, const MlKnobs *knobs, MlResult *res, MlError *err)
{
  memset (res, 0, sizeof *res);
  res->strategy = s;
  MlError e = { 0 };
  MlKnobs k;
  if (knobs)
    k = *knobs;
  else
    ml_knobs_init (&k);
  k.infeasible = &res->infeasible;
  int rc = ml_sim_run (bufs, s, &k, &res->plan, &e);
  if (rc == ML_ENOMEM)
    return ml_error_set (err, rc, "%s", e.msg);
  if (rc < 0)
    {
      res->status = rc;
      snprintf (res->error, sizeof res->error, "%s", e.msg);
      return 0;
    }
  rc = ml_metrics_compute (bufs, res->plan, &res->metrics, NULL, &e);
  if (rc < 0)
    return ml_error_set (err, rc, "%s", e.msg);
  /* the recorded run over the capacity: no request to blame */
  if ((s->flags & ML_STRATEGY_RECORDED) && knobs && knobs->capacity && res->metrics.peak > knobs->capacity)
    ml_oom_over_capacity (&res->plan->oom);
  return 0;
}

const MlStrategy **
ml_sim_lineup (const MlBuffers *bufs, const MlStrategy *const *list)
{
  size_t n = 0;
  while (list && list[n])
    n++;
  const MlStrategy **out = calloc (n + 2, sizeof *out);
  if (!out)
    return NULL;
  size_t k = 0;
  if (ml_plan_has_recorded (bufs))
    out[k++] = &ml_strategy_recorded;
  for (size_t i = 0; i < n; i++)
    if (!(list[i]->flags & ML_STRATEGY_RECORDED))
      out[k++] = list[i];
  return out;
}

void
ml_result_clear (MlResult *res)
{
  ml_plan_free (res->plan);
  ml_infeasible_clear (&res->infeasible);
  memset (res, 0, sizeof *res);
}

int
ml_result_write_json_members (const MlResult *r, const char *name, const MlBuffers *bufs, FILE *fp, MlError *err)
{
  fputs ("\"strategy\":", fp);
  ml_json_put_str (fp, name);
  if (r->status < 0 || !r->plan)
    {
      if (r->status == ML_ETIMEOUT)
        fputs (",\"stopped\":\"time limit\"", fp);
      fputs (",\"error\":", fp);
      ml_json_put_str (fp, r->error);
      if (r->infeasible.n)
        {
          fputs (",\"infeasible_subset\":", fp);
          if (ml_infeasible_write_json (&r->infeasible, bufs, fp, err) < 0)
            return ML_EIO;
        }
      return ferror (fp) ? ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO)) : 0;
    }
  const MlMetrics *m = &r->metrics;
  const MlPlan *p = r->plan;
  fprintf (fp, ",\"peak\":%" PRIu64 ",\"peak_tick\":%" PRIu64 ",\"overhead\":%.6f", m->peak, m->peak_tick, m->overhead);
  /* no fragmentation where the plan's free space is not known: null */
  if (m->frag_unknown)
    fputs (",\"frag_max\":null,\"frag_max_tick\":null,\"frag_mean\":null,\"frag_at_peak\":null", fp);
  else
    fprintf (fp, ",\"frag_max\":%.6f,\"frag_max_tick\":%" PRIu64 ",\"frag_mean\":%.6f,\"frag_at_peak\":%.6f", m->frag_max,
             m->frag_max_tick, m->frag_mean, m->frag_at_peak);
  fprintf (fp, ",\"internal_waste\":%" PRIu64 ",\"segments\":%zu"
           ",\"seconds\":%.6f,\"ops\":%" PRIu64 ",\"nodes_visited\":%" PRIu64 ",\"nodes_per_op\":%.3f,\"backtracks\":%" PRIu64
           ",\"optimal\":%s",
           m->internal_waste, p->n_segments, p->seconds, p->ops, p->nodes_visited,
           p->ops ? (double) p->nodes_visited / (double) p->ops : 0.0, p->backtracks, p->optimal ? "true" : "false");
  if (p->proven_lb)
    fprintf (fp, ",\"proven_lower_bound\":%" PRIu64, p->proven_lb);
  if (p->has_block_waste)
    fprintf (fp, ",\"block_waste\":%" PRIu64, p->block_waste);
  if (r->strategy && (r->strategy->knobs & ML_KNOB_RETRIES))
    fprintf (fp, ",\"retries\":%" PRIu64 ",\"retry_released\":%" PRIu64, p->retries, p->retry_released);
  if (p->note)
    {
      fputs (",\"note\":", fp);
      ml_json_put_str (fp, p->note);
    }
  fputs (",\"oom\":", fp);
  return ml_oom_write_json (&p->oom, bufs, fp, err);
}
