#include "render/scene-private.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/analysis/find.h"
#include "sim/base/sort.h"

char *
ml_short_label (const char *text, char *buf, size_t len)
{
  return ml_short_label_keep (text, 1, buf, len);
}

char *
ml_short_label_keep (const char *text, unsigned parts, char *buf, size_t len)
{
  size_t o = 0;
  if (!len)
    return buf;
  while (*text && o + 1 < len)
    {
      if (*text == ' ')
        {
          buf[o++] = *text++;
          continue;
        }
      /* one token: keep what follows its @parts-th last path separator */
      const char *end = text, *keep = text;
      while (*end && *end != ' ')
        end++;
      unsigned seen = 0;
      for (const char *q = end; q > text && seen < parts; q--)
        if (q[-1] == '/' || q[-1] == '\\')
          {
            keep = q;
            seen++;
          }
      if (!*keep || keep == end)
        keep = text;   /* a token that ends with a separator stays whole */
      while (keep < end && o + 1 < len)
        buf[o++] = *keep++;
      text = end;
    }
  buf[o] = 0;
  return buf;
}

static int
u64_cmp (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* note_ids: one pass over the events for the annotate marks' ids. */
static int
build_note_ids (MlScene *s)
{
  const MlTrace *t = s->bufs->trace;
  size_t cap = 0;
  for (size_t e = 0; t && e < t->n_events; e++)
    {
      const MlEvent *ev = &t->events[e];
      if (ev->kind != ML_EV_MARK || !(ev->flags & ML_EVF_HAS_ID) || !ev->name)
        continue;
      if (s->n_note_ids == cap)
        {
          uint64_t *p = realloc (s->note_ids, (cap = cap ? cap * 2 : 16) * sizeof *p);
          if (!p)
            return -1;
          s->note_ids = p;
        }
      s->note_ids[s->n_note_ids++] = ev->id;
    }
  if (s->n_note_ids)
    qsort (s->note_ids, s->n_note_ids, sizeof *s->note_ids, u64_cmp);
  return 0;
}

size_t
ml_scene_buffer_notes (const MlScene *s, uint32_t buffer, char *out, size_t len)
{
  const MlBuffers *bufs = s->bufs;
  if (len)
    out[0] = 0;
  if (!s->n_note_ids || buffer >= bufs->n)
    return 0;
  uint64_t id = bufs->buf[buffer].id;
  if (!bsearch (&id, s->note_ids, s->n_note_ids, sizeof id, u64_cmp))
    return 0;
  uint32_t names[16];
  size_t n = ml_buffer_annotations (bufs, buffer, names, 16), o = 0;
  for (size_t k = 0; k < n && k < 16 && o < len; k++)
    o += (size_t) snprintf (out + o, len - o, "%s%s", k ? "; " : "", ml_trace_str (bufs->trace, names[k]));
  return n;
}

static int
build_times (MlScene *s)
{
  const MlTrace *t = s->bufs->trace;
  if (!t || !t->has_times)
    return 0;
  size_t n = 0;
  for (size_t i = 0; i < t->n_events; i++)
    n += t->events[i].time_ns >= 0;
  if (n < 2)
    return 0;
  s->time_tick = malloc (n * sizeof *s->time_tick);
  s->time_ns = malloc (n * sizeof *s->time_ns);
  if (!s->time_tick || !s->time_ns)
    return -1;
  int64_t last = INT64_MIN;
  for (size_t i = 0; i < t->n_events; i++)
    {
      const MlEvent *e = &t->events[i];
      if (e->time_ns < 0)
        continue;
      if (s->n_times && s->time_tick[s->n_times - 1] == e->tick)
        continue;
      int64_t ns = e->time_ns > last ? e->time_ns : last;
      last = ns;
      s->time_tick[s->n_times] = e->tick;
      s->time_ns[s->n_times] = ns;
      s->n_times++;
    }
  if (s->n_times < 2 || s->time_ns[s->n_times - 1] == s->time_ns[0])
    {
      s->n_times = 0;
      return 0;
    }
  s->all_timed = n == t->n_events;
  /* a real-time axis: ticks at one time keep 1/10000 of the mean time per
   * tick, so a burst of events stays zoomable */
  double ticks = (double) (s->time_tick[s->n_times - 1] - s->time_tick[0]);
  s->warp = (MlTimeWarp) { s->time_tick, s->time_ns, s->n_times,
                           1e-4 * (double) (s->time_ns[s->n_times - 1] - s->time_ns[0]) / (ticks > 0 ? ticks : 1) };
  return 0;
}

/* Segments side by side: by recorded base address when every segment has
 * one, else by index. */
static const MlPlan *sort_plan;
static int
seg_by_addr (const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
  uint64_t ax = sort_plan->segments[x].addr, ay = sort_plan->segments[y].addr;
  if (ax != ay)
    return ax < ay ? -1 : 1;
  return x < y ? -1 : x > y;
}

static const MlMapping *sort_maps;

static int
map_by_start (const void *a, const void *b)
{
  const MlMapping *x = &sort_maps[*(const uint32_t *) a], *y = &sort_maps[*(const uint32_t *) b];
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

typedef struct {
  uint64_t tick;
  int      start;    /* 1 a mapping begins, 0 it ends */
  uint64_t bytes;
} MapEdge;

static int
edge_by_tick (const void *a, const void *b)
{
  const MapEdge *x = a, *y = b;
  if (x->tick != y->tick)
    return x->tick < y->tick ? -1 : 1;
  return x->start - y->start;   /* ends first */
}

/* The mappings of each paged segment: map_order[seg_map_first[g] ..
 * seg_map_first[g + 1]) index plan->maps, by start (a counting sort by
 * segment, then a sort within each). */
static int
build_maps (MlScene *s)
{
  const MlPlan *p = s->plan;
  size_t ns = p->n_segments;
  s->seg_map_first = calloc (ns + 2, sizeof *s->seg_map_first);
  s->map_order = malloc ((p->n_maps ? p->n_maps : 1) * sizeof *s->map_order);
  if (!s->seg_map_first || !s->map_order)
    return -1;
  for (size_t k = 0; k < p->n_maps; k++)
    if (p->maps[k].segment < ns)
      s->seg_map_first[p->maps[k].segment + 2]++;
  for (size_t g = 0; g < ns; g++)
    s->seg_map_first[g + 2] += s->seg_map_first[g + 1];
  for (size_t k = 0; k < p->n_maps; k++)
    if (p->maps[k].segment < ns)
      s->map_order[s->seg_map_first[p->maps[k].segment + 1]++] = (uint32_t) k;
  sort_maps = p->maps;
  for (size_t g = 0; g < ns; g++)
    if (s->seg_map_first[g + 1] - s->seg_map_first[g] > 1)
      qsort (s->map_order + s->seg_map_first[g], s->seg_map_first[g + 1] - s->seg_map_first[g], sizeof *s->map_order,
             map_by_start);
  sort_maps = NULL;
  /* the most bytes mapped at once in each: a sweep over the mappings'
   * starts and ends (an end before a start at one tick) */
  s->seg_mapped_max = calloc (ns + 1, sizeof *s->seg_mapped_max);
  MapEdge *ev = malloc ((2 * p->n_maps + 1) * sizeof *ev);
  if (!s->seg_mapped_max || !ev)
    {
      free (ev);
      return -1;
    }
  for (size_t g = 0; g < ns; g++)
    {
      size_t n = 0;
      for (size_t k = s->seg_map_first[g]; k < s->seg_map_first[g + 1]; k++)
        {
          const MlMapping *m = &p->maps[s->map_order[k]];
          ev[n++] = (MapEdge) { m->start, 1, m->size };
          ev[n++] = (MapEdge) { m->end, 0, m->size };
        }
      if (n > 1)
        qsort (ev, n, sizeof *ev, edge_by_tick);
      uint64_t cur = 0;
      for (size_t k = 0; k < n; k++)
        {
          cur = ev[k].start ? cur + ev[k].bytes : cur - ev[k].bytes;
          if (cur > s->seg_mapped_max[g])
            s->seg_mapped_max[g] = cur;
        }
    }
  free (ev);
  return 0;
}

static int
build_layout (MlScene *s)
{
  const MlPlan *p = s->plan;
  size_t ns = p->n_segments;
  s->seg_base = calloc (ns + 1, sizeof *s->seg_base);
  s->seg_extent = calloc (ns + 1, sizeof *s->seg_extent);
  uint32_t *order = malloc ((ns + 1) * sizeof *order);
  if (!s->seg_base || !s->seg_extent || !order)
    {
      free (order);
      return -1;
    }
  bool all_addr = ns > 0;
  for (size_t g = 0; g < ns; g++)
    {
      s->seg_extent[g] = p->segments[g].size;
      order[g] = (uint32_t) g;
      all_addr = all_addr && p->segments[g].addr;
    }
  for (size_t i = 0; i < p->n; i++)
    {
      uint32_t g = p->segment[i];
      if (g < ns)
        {
          uint64_t top = p->offset[i] + s->bufs->buf[i].rsize;
          if (top > s->seg_extent[g])
            s->seg_extent[g] = top;
        }
    }
  if (all_addr)
    {
      sort_plan = p;   /* qsort has no user pointer in C11 */
      qsort (order, ns, sizeof *order, seg_by_addr);
      sort_plan = NULL;
    }
  /* packed: side by side in address order, the gaps between them left
   * out; raw: at their recorded addresses, from the lowest */
  s->addr_raw = s->addr_raw && all_addr;
  s->addr_origin = s->addr_raw ? p->segments[order[0]].addr : 0;
  /* packed: the segments of each (pool, stream) together, as a band */
  if (_ml_scene_band_order (s, order) < 0)
    {
      free (order);
      return -1;
    }
  uint64_t x = 0;
  for (size_t k = 0; k < ns; k++)
    {
      uint32_t g = order[k];
      s->seg_base[g] = s->addr_raw ? p->segments[g].addr - s->addr_origin : x;
      x = s->seg_base[g] + s->seg_extent[g] > x ? s->seg_base[g] + s->seg_extent[g] : x;
    }
  s->addr_extent = x;
  s->seg_order = order;
  _ml_scene_band_extents (s);
  return build_maps (s);
}

/* rank[i]: item i's place in the stack of the active view: longest
 * lifetime first, then by start, then by buffer. Items are in buffer
 * order, which is by start, so a stable sort by lifetime alone gives that
 * order (a radix sort: qsort of the 1.75M items of a 1 GB snapshot took
 * a third of a second). */
static int
build_ranks (MlScene *s)
{
  size_t n = s->n_items;
  uint64_t *keys = malloc ((n ? n : 1) * sizeof *keys);
  uint32_t *order = malloc ((n ? n : 1) * sizeof *order);
  s->rank = malloc ((n ? n : 1) * sizeof *s->rank);
  if (!keys || !order || !s->rank)
    {
      free (keys);
      free (order);
      return -1;
    }
  for (size_t i = 0; i < n; i++)
    {
      keys[i] = ~(s->items[i].end - s->items[i].start);   /* ascending = longest first */
      order[i] = (uint32_t) i;
    }
  int rc = ml_sort_indexes_by_key (order, n, keys, sizeof *keys);
  if (rc == 0)
    for (size_t k = 0; k < n; k++)
      s->rank[order[k]] = (uint32_t) k;
  free (keys);
  free (order);
  return rc;
}

/* Where the request the plan's OOM refused is drawn (scene.h, oom_*). */
static void
build_oom (MlScene *s)
{
  const MlOom *o = &s->plan->oom;
  if (!o->hit || !o->request)
    return;
  long own = -1;   /* the request's item, when the strategy placed it once the capacity was lifted */
  for (size_t i = 0; i < s->n_items && own < 0; i++)
    if (s->items[i].buffer == o->buffer && s->items[i].start == o->tick)
      own = (long) i;
  uint64_t below = 0;   /* the stack under it at the OOM tick */
  for (size_t i = 0; i < s->n_items && s->items[i].start <= o->tick; i++)
    {
      const MlSceneItem *it = &s->items[i];
      if (it->end > o->tick && (long) i != own && (own < 0 || s->rank[i] < s->rank[own]))
        below += it->size;
    }
  s->oom_drawn = true;
  s->oom_bytes = own >= 0 ? s->items[own].size : o->request;
  s->oom_addr = own >= 0 ? s->items[own].addr : s->addr_extent;
  s->oom_stack = below;
}

uint64_t
ml_scene_extent (const MlScene *s, MlPlot plot)
{
  uint64_t e = plot == ML_PLOT_ACTIVE ? s->live_max : s->addr_extent;
  if (s->oom_drawn)
    {
      uint64_t top = (plot == ML_PLOT_ACTIVE ? s->oom_stack : s->oom_addr) + s->oom_bytes;
      if (top > e)
        e = top;
    }
  return e;
}

int
ml_scene_new (const MlBuffers *bufs, const MlPlan *plan, const MlSceneOptions *opts,
              MlScene **out, MlError *err)
{
  if (plan->n != bufs->n)
    return ml_error_set (err, ML_EINPUT, "the plan places %zu buffers, the trace has %zu", plan->n, bufs->n);
  MlSceneOptions o = { 0 };
  if (opts)
    o = *opts;
  if (!o.max_peaks)
    o.max_peaks = 3;
  MlScene *s = calloc (1, sizeof *s);
  if (!s)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  s->bufs = bufs;
  s->plan = plan;
  s->issues = o.issues;
  s->end_tick = bufs->end_tick;
  s->name = strdup (o.name ? o.name : "");
  s->addr_raw = o.raw_addresses;
  if (!s->name || build_layout (s) < 0)
    goto oom;
  s->items = malloc ((bufs->n ? bufs->n : 1) * sizeof *s->items);
  s->max_end = malloc ((bufs->n ? bufs->n : 1) * sizeof *s->max_end);
  if (!s->items || !s->max_end)
    goto oom;
  uint64_t me = 0;
  s->first_tick = bufs->n ? bufs->buf[0].start : 0;
  for (size_t i = 0; i < bufs->n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      uint32_t g = plan->segment[i];
      if (!b->rsize || g >= plan->n_segments)
        continue;
      MlSceneItem *it = &s->items[s->n_items];
      memset (it, 0, sizeof *it);
      it->start = b->start;
      it->end = b->end > b->start ? b->end : b->start + 1;   /* zero-length lifetimes stay visible */
      it->addr = s->seg_base[g] + plan->offset[i];
      it->size = b->rsize;
      it->buffer = (uint32_t) i;
      if (it->end > me)
        me = it->end;
      s->max_end[s->n_items++] = me;
    }
  if (me > s->end_tick)
    s->end_tick = me;
  size_t nb = (s->n_items + ML_SCENE_BLOCK - 1) / ML_SCENE_BLOCK;
  s->blk_end = calloc (nb + 1, sizeof *s->blk_end);
  s->blk_lo = calloc (nb + 1, sizeof *s->blk_lo);
  s->blk_hi = calloc (nb + 1, sizeof *s->blk_hi);
  if (!s->blk_end || !s->blk_lo || !s->blk_hi)
    goto oom;
  for (size_t k = 0; k < nb; k++)
    s->blk_lo[k] = UINT64_MAX;
  for (size_t i = 0; i < s->n_items; i++)
    {
      const MlSceneItem *it = &s->items[i];
      size_t k = i / ML_SCENE_BLOCK;
      if (it->end > s->blk_end[k])
        s->blk_end[k] = it->end;
      if (it->addr < s->blk_lo[k])
        s->blk_lo[k] = it->addr;
      if (it->addr + it->size > s->blk_hi[k])
        s->blk_hi[k] = it->addr + it->size;
    }
  int rc = ml_metrics_compute (bufs, plan, &s->metrics, &s->curve, err);
  if (rc < 0)
    {
      ml_scene_free (s);
      return rc;
    }
  for (size_t i = 0; i < s->curve.n; i++)
    {
      const MlCurvePoint *pt = &s->curve.pts[i];
      uint64_t v = pt->reserved > pt->live ? pt->reserved : pt->live;
      if (v > s->curve_max)
        s->curve_max = v;
    }
  for (size_t i = 0; i < s->curve.n; i++)
    if (s->curve.pts[i].live > s->live_max)
      s->live_max = s->curve.pts[i].live;
  if (build_ranks (s) < 0)
    goto oom;
  build_oom (s);
  rc = ml_peak_groups_find (bufs, o.max_peaks, &s->groups, err);
  if (rc < 0)
    {
      ml_scene_free (s);
      return rc;
    }
  if (build_times (s) < 0 || build_note_ids (s) < 0)
    goto oom;
  if ((rc = _ml_scene_build_classes (s, o.frames_regex, err)) < 0)
    {
      ml_scene_free (s);
      return rc;
    }
  *out = s;
  return 0;
oom:
  ml_scene_free (s);
  return ml_error_set (err, ML_ENOMEM, "out of memory for the scene of %zu buffers", bufs->n);
}

void
ml_scene_free (MlScene *s)
{
  if (!s)
    return;
  free (s->items);
  free (s->max_end);
  free (s->rank);
  free (s->blk_end);
  free (s->blk_lo);
  free (s->blk_hi);
  free (s->seg_base);
  free (s->seg_extent);
  free (s->seg_order);
  free (s->bands);
  free (s->seg_band);
  free (s->seg_map_first);
  free (s->map_order);
  free (s->seg_mapped_max);
  ml_curve_free (&s->curve);
  ml_peak_groups_free (&s->groups);
  for (int by = 0; by < ML_COLOR_BY__COUNT; by++)
    for (int k = 0; k <= ML_PALETTE_N; k++)
      free (s->classes[by][k].label);
  free (s->time_tick);
  free (s->time_ns);
  free (s->frames_regex);
  free (s->note_ids);
  free (s->name);
  free (s);
}

void
ml_scene_set_issues (MlScene *s, const MlIssues *issues)
{
  s->issues = issues;
}

void
ml_scene_view_init (const MlScene *s, MlView *v, double px, double py, double pw, double ph)
{
  ml_scene_view_init_plot (s, ML_PLOT_ADDRESS, v, px, py, pw, ph);
}

void
ml_scene_view_init_plot (const MlScene *s, MlPlot plot, MlView *v, double px, double py, double pw, double ph)
{
  uint64_t extent = ml_scene_extent (s, plot);
  double a1 = extent ? (double) extent : 1.0;
  ml_view_init (v, 0.0, (double) (s->end_tick ? s->end_tick : 1), 0.0, a1, px, py, pw, ph);
}

bool
ml_scene_real_time (const MlScene *s, MlTimeAxis axis)
{
  if (s->n_times < 2)
    return false;
  return axis == ML_TIME_AXIS_TIME || (axis == ML_TIME_AXIS_AUTO && s->all_timed);
}

void
ml_scene_view_set_axis (const MlScene *s, MlTimeAxis axis, MlView *v)
{
  v->warp = ml_scene_real_time (s, axis) ? &s->warp : NULL;
  /* in real time a tick may last long: zoom on into it */
  v->min_t_span = v->warp ? 1e-3 : 1.0;
}

void
ml_scene_view_init_style (const MlScene *s, const MlStyle *st, MlView *v, double px, double py, double pw, double ph)
{
  ml_scene_view_init_plot (s, st->plot, v, px, py, pw, ph);
  ml_scene_view_set_axis (s, st->time_axis, v);
}

size_t
ml_scene_first_visible (const MlScene *s, double t0)
{
  size_t lo = 0, hi = s->n_items;   /* first i with max_end[i] > t0 */
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if ((double) s->max_end[mid] > t0)
        hi = mid;
      else
        lo = mid + 1;
    }
  return lo;
}

size_t
ml_scene_end_visible (const MlScene *s, double t1)
{
  size_t lo = 0, hi = s->n_items;   /* first i with start >= t1 */
  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if ((double) s->items[mid].start < t1)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

long
ml_scene_hit (const MlScene *s, const MlView *v, double x, double y)
{
  if (x < v->px || x > v->px + v->pw || y < v->py || y > v->py + v->ph)
    return -1;
  double t = ml_view_x_to_time (v, x), a = ml_view_y_to_addr (v, y);
  double bpp = ml_view_bytes_per_px (v);
  double tl = ml_view_x_to_time (v, x - 0.5), th = ml_view_x_to_time (v, x + 0.5), al = a - bpp / 2, ah = a + bpp / 2;
  size_t i0 = ml_scene_first_visible (s, tl), i1 = ml_scene_end_visible (s, th);
  long best = -1;
  uint64_t best_size = 0;
  for (size_t i = i0; i < i1; i++)
    {
      if (i % ML_SCENE_BLOCK == 0 && i + ML_SCENE_BLOCK <= i1)
        {
          size_t k = i / ML_SCENE_BLOCK;
          if ((double) s->blk_end[k] <= tl || (double) s->blk_hi[k] <= al || (double) s->blk_lo[k] >= ah)
            {
              i += ML_SCENE_BLOCK - 1;
              continue;
            }
        }
      const MlSceneItem *it = &s->items[i];
      if ((double) it->end <= tl)
        continue;
      if ((double) it->addr + (double) it->size <= al || (double) it->addr >= ah)
        continue;
      if ((double) it->start <= t && t < (double) it->end && (double) it->addr <= a
          && a < (double) it->addr + (double) it->size)
        return (long) i;   /* valid plans have one such item */
      if (best < 0 || it->size > best_size)
        {
          best = (long) i;
          best_size = it->size;
        }
    }
  return best;
}

static double
interp (const uint64_t *xs_u, const int64_t *xs_i, const int64_t *ys_i, const uint64_t *ys_u,
        size_t n, double x)
{
  /* xs: one of xs_u / xs_i; ys: one of ys_i / ys_u */
#define XS(k) (xs_u ? (double) xs_u[k] : (double) xs_i[k])
#define YS(k) (ys_u ? (double) ys_u[k] : (double) ys_i[k])
  if (x <= XS (0))
    {
      double slope = (YS (1) - YS (0)) / (XS (1) - XS (0) > 0 ? XS (1) - XS (0) : 1);
      return YS (0) + (x - XS (0)) * slope;
    }
  if (x >= XS (n - 1))
    {
      double dx = XS (n - 1) - XS (n - 2);
      double slope = (YS (n - 1) - YS (n - 2)) / (dx > 0 ? dx : 1);
      return YS (n - 1) + (x - XS (n - 1)) * slope;
    }
  size_t lo = 0, hi = n - 1;   /* XS(lo) <= x < XS(hi) */
  while (hi - lo > 1)
    {
      size_t mid = (lo + hi) / 2;
      if (XS (mid) <= x)
        lo = mid;
      else
        hi = mid;
    }
  double dx = XS (hi) - XS (lo);
  return dx > 0 ? YS (lo) + (x - XS (lo)) / dx * (YS (hi) - YS (lo)) : YS (lo);
#undef XS
#undef YS
}

bool
ml_scene_tick_to_ns (const MlScene *s, double tick, double *ns)
{
  if (s->n_times < 2)
    return false;
  *ns = interp (s->time_tick, NULL, s->time_ns, NULL, s->n_times, tick);
  return true;
}

bool
ml_scene_ns_to_tick (const MlScene *s, double ns, double *tick)
{
  if (s->n_times < 2)
    return false;
  *tick = interp (NULL, s->time_ns, NULL, s->time_tick, s->n_times, ns);
  return true;
}
