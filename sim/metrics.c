#include "sim/metrics.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/sort.h"

/* A cover-count segment tree over elementary address intervals: every
 * range that is added is later removed with the same bounds, so each node
 * keeps its own cover count and the longest uncovered run, prefix and
 * suffix of its range (the classic union-of-rectangles structure). */
typedef struct {
  uint32_t cnt;
  uint64_t pre, suf, best;
} Node;

typedef struct {
  Node     *t;
  uint64_t *xs;     /* m + 1 sorted distinct coordinates */
  size_t    m;      /* elementary intervals */
} Cover;

static void
pull (Cover *c, size_t v, size_t lo, size_t hi)
{
  Node *n = &c->t[v];
  if (n->cnt)
    {
      n->pre = n->suf = n->best = 0;
      return;
    }
  if (hi - lo == 1)
    {
      n->pre = n->suf = n->best = c->xs[hi] - c->xs[lo];
      return;
    }
  size_t mid = (lo + hi) / 2;
  const Node *l = &c->t[2 * v], *r = &c->t[2 * v + 1];
  uint64_t llen = c->xs[mid] - c->xs[lo], rlen = c->xs[hi] - c->xs[mid];
  n->pre = l->pre == llen ? llen + r->pre : l->pre;
  n->suf = r->suf == rlen ? rlen + l->suf : r->suf;
  n->best = l->best > r->best ? l->best : r->best;
  if (l->suf + r->pre > n->best)
    n->best = l->suf + r->pre;
}

static void
build (Cover *c, size_t v, size_t lo, size_t hi)
{
  c->t[v].cnt = 0;
  if (hi - lo > 1)
    {
      size_t mid = (lo + hi) / 2;
      build (c, 2 * v, lo, mid);
      build (c, 2 * v + 1, mid, hi);
    }
  pull (c, v, lo, hi);
}

static void
update (Cover *c, size_t v, size_t lo, size_t hi, size_t a, size_t b, int delta)
{
  if (b <= lo || hi <= a)
    return;
  if (a <= lo && hi <= b)
    {
      c->t[v].cnt += (uint32_t) delta;
      pull (c, v, lo, hi);
      return;
    }
  size_t mid = (lo + hi) / 2;
  update (c, 2 * v, lo, mid, a, b, delta);
  update (c, 2 * v + 1, mid, hi, a, b, delta);
  pull (c, v, lo, hi);
}

static size_t
coord (const Cover *c, uint64_t x)
{
  /* the last coordinate at or below @x (0 when none is) */
  size_t above = ml_upper_bound_u64 (c->xs, c->m + 1, x);
  return above ? above - 1 : 0;
}

static void
cover (Cover *c, uint64_t x0, uint64_t x1, int delta)
{
  if (x1 <= x0 || c->m == 0)
    return;
  update (c, 1, 0, c->m, coord (c, x0), coord (c, x1), delta);
}

/* Segment events on the time line. */
typedef struct {
  uint64_t tick;
  uint32_t seg;
  uint8_t  open;   /* 1 = reserved from here, 0 = released */
} SegEv;

static int
cmp_segev (const void *a, const void *b)
{
  const SegEv *x = a, *y = b;
  if (x->tick != y->tick)
    return x->tick < y->tick ? -1 : 1;
  if (x->open != y->open)
    return x->open < y->open ? -1 : 1;   /* releases first */
  return x->seg < y->seg ? -1 : x->seg > y->seg;
}

typedef struct {
  const MlBuffers *bufs;
  const MlPlan    *plan;
  uint64_t        *base;     /* global base of each segment */
  uint64_t        *extent;   /* size used in the layout (growable: final high water) */
  uint64_t        *hw;       /* growable: current high water */
  Cover            cov;
  SegEv           *sev;
  size_t           n_sev;
  /* growable segments: the high-water steps, per segment in order */
  uint64_t        *steps;     /* all steps, grouped by segment */
  size_t          *step_first;/* ns + 1 */
  size_t          *step_next; /* ns: next step not yet reached */
  /* paged segments: the distinct offsets where its mappings begin or end
   * (0 and the extent included), per segment in order; the unmapped
   * space is covered piece by piece, so that a mapping uncovers (and its
   * end covers again) exactly the pieces that were covered alone */
  uint64_t        *pieces;
  size_t          *piece_first; /* ns + 1 */
} Sweep;

static void
sweep_free (Sweep *s)
{
  free (s->base);
  free (s->extent);
  free (s->hw);
  free (s->cov.t);
  free (s->cov.xs);
  free (s->sev);
  free (s->steps);
  free (s->step_first);
  free (s->step_next);
  free (s->pieces);
  free (s->piece_first);
  memset (s, 0, sizeof *s);   /* a second call does nothing */
}

static int
oom (MlError *err)
{
  return ml_error_set (err, ML_ENOMEM, "out of memory");
}

/* The segments side by side on one axis (s->base), each as wide as its
 * size or the highest buffer in it (an invalid plan still gets
 * measured), with 1-byte covered separators between. */
static int
lay_out_segments (Sweep *s, MlError *err)
{
  const MlPlan *plan = s->plan;
  size_t ns = plan->n_segments;
  for (size_t g = 0; g < ns; g++)
    s->extent[g] = plan->segments[g].size;
  for (size_t i = 0; i < plan->n; i++)
    {
      uint32_t g = plan->segment[i];
      if (g >= ns)
        return ml_error_set (err, ML_EINPUT, "buffer %zu is in segment %u of %zu", i, g, ns);
      uint64_t top = plan->offset[i] + s->bufs->buf[i].rsize;
      if (top > s->extent[g])
        s->extent[g] = top;
    }
  uint64_t x = 0;
  for (size_t g = 0; g < ns; g++)
    {
      s->base[g] = x;
      if (s->extent[g] >= UINT64_MAX - x)   /* a plan file may claim anything */
        return ml_error_set (err, ML_EINPUT, "the plan's %zu segments add up to more than 2^64 bytes", ns);
      x += s->extent[g] + 1;
    }
  return 0;
}

/* The coverage tree over every boundary on the axis: segment ends and
 * separators, mappings, buffers. */
static int
build_cover (Sweep *s, MlError *err)
{
  const MlPlan *plan = s->plan;
  const MlBuffers *bufs = s->bufs;
  size_t ns = plan->n_segments;
  size_t cap = 2 * plan->n + 3 * ns + 2 * plan->n_maps + 2, m = 0;
  s->cov.xs = malloc (cap * sizeof *s->cov.xs);
  if (!s->cov.xs)
    return oom (err);
  for (size_t g = 0; g < ns; g++)
    {
      s->cov.xs[m++] = s->base[g];
      s->cov.xs[m++] = s->base[g] + s->extent[g];
      s->cov.xs[m++] = s->base[g] + s->extent[g] + 1;
    }
  for (size_t k = 0; k < plan->n_maps; k++)
    {
      const MlMapping *mp = &plan->maps[k];
      if (mp->segment >= ns || mp->offset > s->extent[mp->segment] || mp->size > s->extent[mp->segment] - mp->offset)
        return ml_error_set (err, ML_EINPUT, "mapping %zu is outside segment %u", k, mp->segment);
      s->cov.xs[m++] = s->base[mp->segment] + mp->offset;
      s->cov.xs[m++] = s->base[mp->segment] + mp->offset + mp->size;
    }
  for (size_t i = 0; i < plan->n; i++)
    if (bufs->buf[i].rsize)
      {
        uint64_t a = s->base[plan->segment[i]] + plan->offset[i];
        s->cov.xs[m++] = a;
        s->cov.xs[m++] = a + bufs->buf[i].rsize;
      }
  size_t u = ml_sort_unique_u64 (s->cov.xs, m);
  s->cov.m = u ? u - 1 : 0;
  size_t nodes = 1;
  while (nodes < s->cov.m)
    nodes <<= 1;
  s->cov.t = calloc (2 * nodes + 2, sizeof *s->cov.t);
  if (!s->cov.t)
    return oom (err);
  if (s->cov.m)
    build (&s->cov, 1, 0, s->cov.m);
  return 0;
}

/* The pieces of each paged segment: its ends and its mappings' ends,
 * sorted (s->pieces[piece_first[g] .. piece_first[g + 1])). */
static int
paged_pieces (Sweep *s, MlError *err)
{
  const MlPlan *plan = s->plan;
  size_t ns = plan->n_segments, np = 0;
  s->piece_first = calloc (ns + 1, sizeof *s->piece_first);
  s->pieces = malloc ((2 * plan->n_maps + 2 * ns + 1) * sizeof *s->pieces);
  if (!s->piece_first || !s->pieces)
    return oom (err);
  for (size_t g = 0; g < ns; g++)
    {
      s->piece_first[g] = np;
      if (!(plan->segments[g].flags & ML_SEG_PAGED))
        continue;
      size_t first = np;
      s->pieces[np++] = 0;
      s->pieces[np++] = s->extent[g];
      for (size_t k = 0; k < plan->n_maps; k++)
        if (plan->maps[k].segment == g)
          {
            s->pieces[np++] = plan->maps[k].offset;
            s->pieces[np++] = plan->maps[k].offset + plan->maps[k].size;
          }
      np = first + ml_sort_unique_u64 (s->pieces + first, np - first);
    }
  s->piece_first[ns] = np;
  return 0;
}

/* Everything starts covered: separators forever, segments until
 * reserved; the reservations (segments, then a paged segment's mappings
 * as seg = ns + k) in time order. */
static void
cover_unreserved (Sweep *s)
{
  const MlPlan *plan = s->plan;
  size_t ns = plan->n_segments;
  for (size_t g = 0; g < ns; g++)
    {
      cover (&s->cov, s->base[g] + s->extent[g], s->base[g] + s->extent[g] + 1, +1);
      if (plan->segments[g].flags & ML_SEG_PAGED)
        for (size_t i = s->piece_first[g]; i + 1 < s->piece_first[g + 1]; i++)
          cover (&s->cov, s->base[g] + s->pieces[i], s->base[g] + s->pieces[i + 1], +1);
      else
        cover (&s->cov, s->base[g], s->base[g] + s->extent[g], +1);
      s->sev[s->n_sev++] = (SegEv) { plan->segments[g].start, (uint32_t) g, 1 };
      s->sev[s->n_sev++] = (SegEv) { plan->segments[g].end, (uint32_t) g, 0 };
    }
  for (size_t k = 0; k < plan->n_maps; k++)
    if (plan->maps[k].start < plan->maps[k].end)
      {
        s->sev[s->n_sev++] = (SegEv) { plan->maps[k].start, (uint32_t) (ns + k), 1 };
        s->sev[s->n_sev++] = (SegEv) { plan->maps[k].end, (uint32_t) (ns + k), 0 };
      }
  qsort (s->sev, s->n_sev, sizeof *s->sev, cmp_segev);
}

/* The high-water steps of growable segments: allocations happen in
 * buffer order, so one pass over the buffers finds them (a first pass
 * counts them per segment, a second stores them). */
static int
growable_steps (Sweep *s, MlError *err)
{
  const MlPlan *plan = s->plan;
  const MlBuffers *bufs = s->bufs;
  size_t ns = plan->n_segments;
  s->step_first = calloc (ns + 2, sizeof *s->step_first);
  s->step_next = calloc (ns + 1, sizeof *s->step_next);
  if (!s->step_first || !s->step_next)
    return oom (err);
  for (size_t pass = 0; pass < 2; pass++)
    {
      memset (s->hw, 0, (ns + 1) * sizeof *s->hw);
      size_t *fill = pass ? s->step_next : NULL;
      for (size_t i = 0; i < plan->n; i++)
        {
          uint32_t g = plan->segment[i];
          if (!(plan->segments[g].flags & ML_SEG_GROWABLE) || !bufs->buf[i].rsize)
            continue;
          uint64_t top = plan->offset[i] + bufs->buf[i].rsize;
          if (top > s->hw[g])
            {
              s->hw[g] = top;
              if (pass == 0)
                s->step_first[g + 1]++;
              else
                s->steps[fill[g]++] = top;
            }
        }
      if (pass == 0)
        {
          for (size_t g = 0; g < ns; g++)
            s->step_first[g + 1] += s->step_first[g];
          size_t total = s->step_first[ns];
          s->steps = malloc ((total ? total : 1) * sizeof *s->steps);
          if (!s->steps)
            return oom (err);
          for (size_t g = 0; g < ns; g++)
            s->step_next[g] = s->step_first[g];
        }
    }
  for (size_t g = 0; g < ns; g++)
    {
      s->step_next[g] = s->step_first[g];
      s->hw[g] = 0;
    }
  return 0;
}

/* On an error the caller frees what was made (sweep_free). */
static int
sweep_init (Sweep *s, const MlBuffers *bufs, const MlPlan *plan, MlError *err)
{
  memset (s, 0, sizeof *s);
  s->bufs = bufs;
  s->plan = plan;
  size_t ns = plan->n_segments;
  s->base = calloc (ns + 1, sizeof *s->base);
  s->extent = calloc (ns + 1, sizeof *s->extent);
  s->hw = calloc (ns + 1, sizeof *s->hw);
  s->sev = malloc ((2 * ns + 2 * plan->n_maps + 1) * sizeof *s->sev);
  if (!s->base || !s->extent || !s->hw || !s->sev)
    return oom (err);
  int rc;
  if ((rc = lay_out_segments (s, err)) < 0 || (rc = build_cover (s, err)) < 0 || (rc = paged_pieces (s, err)) < 0)
    return rc;
  cover_unreserved (s);
  return growable_steps (s, err);
}

/* Growable segment g: the pieces above the high water are covered, one
 * cover per step so that each is later removed with the same bounds. */
static void
grow_pieces (Sweep *s, uint32_t g, int delta, size_t from)
{
  uint64_t b = s->base[g], prev = from == s->step_first[g] ? 0 : s->steps[from - 1];
  for (size_t k = from; k < s->step_first[g + 1]; k++)
    {
      cover (&s->cov, b + prev, b + s->steps[k], delta);
      prev = s->steps[k];
    }
  cover (&s->cov, b + prev, b + s->extent[g], delta);
}

/* Runs the sweep; calls @point after each tick's changes, up to @stop
 * (inclusive). Reserved space: a segment between its start and end; a
 * growable one up to its high-water mark. */
typedef void (*PointFn) (void *user, uint64_t tick, uint64_t live, uint64_t reserved, uint64_t largest);

static void
seg_event (Sweep *s, const SegEv *e, uint64_t *reserved)
{
  size_t ns = s->plan->n_segments;
  if (e->seg >= ns)
    {
      /* pages of a paged segment: reserved, and free where no buffer is */
      const MlMapping *mp = &s->plan->maps[e->seg - ns];
      size_t lo = s->piece_first[mp->segment], hi = s->piece_first[mp->segment + 1];
      while (hi - lo > 1)   /* the piece that starts at the mapping */
        {
          size_t mid = (lo + hi) / 2;
          if (s->pieces[mid] <= mp->offset)
            lo = mid;
          else
            hi = mid;
        }
      uint64_t b = s->base[mp->segment];
      for (size_t i = lo; i + 1 < s->piece_first[mp->segment + 1] && s->pieces[i] < mp->offset + mp->size; i++)
        cover (&s->cov, b + s->pieces[i], b + s->pieces[i + 1], e->open ? -1 : +1);
      if (e->open)
        *reserved += mp->size;
      else
        *reserved -= mp->size;
      return;
    }
  const MlSegment *g = &s->plan->segments[e->seg];
  if (g->flags & ML_SEG_PAGED)
    return;   /* its mappings reserve it */
  uint64_t b = s->base[e->seg], ext = s->extent[e->seg];
  if (g->flags & ML_SEG_GROWABLE)
    {
      if (e->open)
        {
          cover (&s->cov, b, b + ext, -1);
          s->step_next[e->seg] = s->step_first[e->seg];
          s->hw[e->seg] = 0;
          grow_pieces (s, e->seg, +1, s->step_first[e->seg]);
        }
      else
        {
          grow_pieces (s, e->seg, -1, s->step_next[e->seg]);
          cover (&s->cov, b, b + ext, +1);
          *reserved -= s->hw[e->seg];
          s->hw[e->seg] = 0;
        }
    }
  else if (e->open)
    {
      cover (&s->cov, b, b + ext, -1);
      *reserved += g->size;
    }
  else
    {
      cover (&s->cov, b, b + ext, +1);
      *reserved -= g->size;
    }
}

static void
sweep_run (Sweep *s, uint64_t stop, PointFn point, void *user)
{
  const MlBuffers *bufs = s->bufs;
  const MlPlan *plan = s->plan;
  MlSweep sw;
  MlSweepStep st;
  size_t si = 0;
  uint64_t live = 0, reserved = 0, cur = 0;
  bool have = false, more;
  ml_sweep_init (&sw, bufs);
#define EMIT() do { if (have && point) point (user, cur, live, reserved, s->cov.m ? s->cov.t[1].best : 0); } while (0)
  do
    {
      more = ml_sweep_next (&sw, &st);
      uint64_t next_tick = more ? st.tick : UINT64_MAX;
      /* segment reservations open at or before the buffers of their tick,
       * releases at a tick come before that tick's allocations too */
      while (si < s->n_sev && s->sev[si].tick <= next_tick && s->sev[si].tick <= stop)
        {
          if (have && s->sev[si].tick != cur)
            EMIT ();
          have = true;
          cur = s->sev[si].tick;
          seg_event (s, &s->sev[si], &reserved);
          si++;
        }
      if (!more || st.tick > stop)
        break;
      if (have && st.tick != cur)
        EMIT ();
      have = true;
      cur = st.tick;
      const MlBuffer *buf = &bufs->buf[st.buffer];
      uint32_t g = plan->segment[st.buffer];
      uint64_t a = s->base[g] + plan->offset[st.buffer];
      if (st.is_alloc)
        {
          live += buf->rsize;
          if (buf->rsize && (plan->segments[g].flags & ML_SEG_GROWABLE))
            {
              uint64_t top = plan->offset[st.buffer] + buf->rsize;
              if (top > s->hw[g])
                {
                  /* reach the steps up to top: uncover those pieces */
                  size_t k = s->step_next[g];
                  uint64_t prev = k == s->step_first[g] ? 0 : s->steps[k - 1];
                  while (k < s->step_first[g + 1] && s->steps[k] <= top)
                    {
                      cover (&s->cov, s->base[g] + prev, s->base[g] + s->steps[k], -1);
                      prev = s->steps[k];
                      k++;
                    }
                  s->step_next[g] = k;
                  reserved += top - s->hw[g];
                  s->hw[g] = top;
                }
            }
          cover (&s->cov, a, a + buf->rsize, +1);
        }
      else
        {
          live -= buf->rsize;
          cover (&s->cov, a, a + buf->rsize, -1);
        }
    }
  while (more);
  if (cur <= stop)
    EMIT ();
#undef EMIT
}

typedef struct {
  MlMetrics *m;
  MlCurve   *curve;
  size_t     cap;
  bool       oom;
  uint64_t   end_tick;
  /* time-weighted mean */
  bool       have_prev;
  uint64_t   prev_tick;
  double     prev_frag, area;
  uint64_t   first_tick;
} Acc;

static void
acc_point (void *user, uint64_t tick, uint64_t live, uint64_t reserved, uint64_t largest)
{
  Acc *a = user;
  uint64_t free_bytes = reserved > live ? reserved - live : 0;
  if (largest > free_bytes)
    largest = free_bytes;
  double frag = free_bytes ? 1.0 - (double) largest / (double) free_bytes : 0.0;
  MlMetrics *m = a->m;
  if (reserved > m->peak)
    {
      m->peak = reserved;
      m->peak_tick = tick;
    }
  if (frag > m->frag_max)
    {
      m->frag_max = frag;
      m->frag_max_tick = tick;
    }
  if (tick == m->lower_bound_tick)
    m->frag_at_peak = frag;
  if (a->have_prev)
    a->area += a->prev_frag * (double) (tick - a->prev_tick);
  else
    a->first_tick = tick;
  a->have_prev = true;
  a->prev_tick = tick;
  a->prev_frag = frag;
  if (a->curve && !a->oom)
    {
      if (a->curve->n == a->cap)
        {
          size_t cap = a->cap ? a->cap * 2 : 1024;
          MlCurvePoint *p = realloc (a->curve->pts, cap * sizeof *p);
          if (!p)
            {
              a->oom = true;
              return;
            }
          a->curve->pts = p;
          a->cap = cap;
        }
      a->curve->pts[a->curve->n++] = (MlCurvePoint) { tick, live, reserved, largest, (float) frag };
    }
}

void
ml_curve_free (MlCurve *curve)
{
  if (!curve)
    return;
  free (curve->pts);
  curve->pts = NULL;
  curve->n = 0;
}

int
ml_metrics_compute (const MlBuffers *bufs, const MlPlan *plan, MlMetrics *out, MlCurve *curve, MlError *err)
{
  if (plan->n != bufs->n)
    return ml_error_set (err, ML_EINPUT, "the plan places %zu buffers, the trace has %zu", plan->n, bufs->n);
  MlMetrics m = { .lower_bound = bufs->lower_bound, .lower_bound_tick = bufs->lower_bound_tick,
                  .frag_unknown = plan->free_unknown };
  Sweep s;
  int rc = sweep_init (&s, bufs, plan, err);
  if (rc < 0)
    {
      sweep_free (&s);   /* what sweep_init allocated before the error */
      return rc;
    }
  if (curve)
    curve->pts = NULL, curve->n = 0;
  Acc a = { .m = &m, .curve = curve, .end_tick = bufs->end_tick };
  sweep_run (&s, UINT64_MAX, acc_point, &a);
  sweep_free (&s);
  if (a.oom)
    {
      ml_curve_free (curve);
      return ml_error_set (err, ML_ENOMEM, "out of memory for the curve");
    }
  if (a.have_prev && bufs->end_tick > a.prev_tick)
    a.area += a.prev_frag * (double) (bufs->end_tick - a.prev_tick);
  uint64_t span = a.have_prev && bufs->end_tick > a.first_tick ? bufs->end_tick - a.first_tick : 0;
  m.frag_mean = span ? a.area / (double) span : 0.0;
  m.overhead = m.lower_bound ? (double) m.peak / (double) m.lower_bound - 1.0 : 0.0;
  for (size_t i = 0; i < bufs->n && bufs->buf[i].start <= m.lower_bound_tick; i++)
    if (bufs->buf[i].end > m.lower_bound_tick)
      {
        m.internal_waste += bufs->buf[i].rsize - bufs->buf[i].size;
        m.requested_at_peak += bufs->buf[i].size;
      }
  if (m.frag_unknown)
    {
      m.frag_max = m.frag_mean = m.frag_at_peak = 0;
      m.frag_max_tick = 0;
      for (size_t i = 0; curve && i < curve->n; i++)
        curve->pts[i].frag = 0;
    }
  *out = m;
  return 0;
}

typedef struct { uint64_t tick, largest, free_bytes; } At;

static void
at_point (void *user, uint64_t tick, uint64_t live, uint64_t reserved, uint64_t largest)
{
  At *a = user;
  a->tick = tick;
  a->free_bytes = reserved > live ? reserved - live : 0;
  a->largest = largest < a->free_bytes ? largest : a->free_bytes;
}

int
ml_metrics_free_at (const MlBuffers *bufs, const MlPlan *plan, uint64_t tick,
                    uint64_t *largest_free, uint64_t *free_bytes, MlError *err)
{
  Sweep s;
  int rc = sweep_init (&s, bufs, plan, err);
  if (rc < 0)
    {
      sweep_free (&s);   /* what sweep_init allocated before the error */
      return rc;
    }
  At a = { 0 };
  sweep_run (&s, tick, at_point, &a);
  sweep_free (&s);
  *largest_free = a.largest;
  *free_bytes = a.free_bytes;
  return 0;
}
