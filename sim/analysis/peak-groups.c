/* peak-groups.c — peaks grouped by level, and the iterations of a trace
 * that repeats (peak-groups.h). */
#include "sim/analysis/peak-groups.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/units.h"

/* The prominence of every local maximum of @pts (peak-groups.h, step 2):
 * prom[i] for a maximum i, 0 elsewhere. Two passes with a stack of the
 * points that may still be the nearest higher one; each entry keeps the
 * lowest live strictly between it and the entry above it (or the point
 * being read; a point's own value joins the entry below it when it is
 * popped). Left of a point, "higher" is >= (ties go to the first);
 * right of it, >. */
typedef struct {
  size_t   idx;
  uint64_t gap_min;
} StackEntry;

static bool is_local_max (const MlLiveStep *pts, size_t n, size_t i);

/* col and has are kept for the local maxima only (their slot: the
 * maxima in order; @n_max of them), not for every point: on a trace of
 * millions of steps the two passes' arrays were most of the memory. */
static void
col_pass (const MlLiveStep *pts, size_t n, bool left, StackEntry *stack, uint64_t *col, bool *has, size_t n_max)
{
  size_t top = 0, slot = left ? 0 : n_max;
  for (size_t k = 0; k < n; k++)
    {
      size_t i = left ? k : n - 1 - k;
      uint64_t v = pts[i].live;
      while (top && (left ? pts[stack[top - 1].idx].live < v : pts[stack[top - 1].idx].live <= v))
        {
          StackEntry e = stack[--top];
          uint64_t m = e.gap_min < pts[e.idx].live ? e.gap_min : pts[e.idx].live;
          if (top && m < stack[top - 1].gap_min)
            stack[top - 1].gap_min = m;
        }
      if (is_local_max (pts, n, i))
        {
          size_t at = left ? slot++ : --slot;
          has[at] = top > 0;
          col[at] = top ? stack[top - 1].gap_min : 0;
        }
      stack[top++] = (StackEntry) { i, UINT64_MAX };
    }
}

static bool
is_local_max (const MlLiveStep *pts, size_t n, size_t i)
{
  if (pts[i].live == 0 || (i > 0 && pts[i - 1].live >= pts[i].live))
    return false;   /* not the first point of a rise (a plateau counts at its first) */
  size_t j = i;
  while (j + 1 < n && pts[j + 1].live == pts[i].live)
    j++;
  return j + 1 == n || pts[j + 1].live < pts[i].live;
}

typedef struct {
  uint64_t live;
  size_t   idx;   /* in the steps */
} Cand;

static int
cand_by_live_desc (const void *a, const void *b)
{
  const Cand *x = a, *y = b;
  if (x->live != y->live)
    return x->live < y->live ? 1 : -1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int
cand_by_idx (const void *a, const void *b)
{
  const Cand *x = a, *y = b;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The prominent maxima of @pts, highest first: *@out (owned), *@n_out. */
static int
prominent_maxima (const MlLiveStep *pts, size_t n, Cand **out, size_t *n_out, size_t *n_maxima)
{
  size_t n_max = 0;
  for (size_t i = 0; i < n; i++)
    n_max += is_local_max (pts, n, i);
  size_t room = n_max ? n_max : 1;
  StackEntry *stack = malloc ((n ? n : 1) * sizeof *stack);
  uint64_t *col_l = malloc (room * sizeof *col_l), *col_r = malloc (room * sizeof *col_r);
  bool *has_l = malloc (room), *has_r = malloc (room);
  Cand *c = malloc (room * sizeof *c);
  int rc = 0;
  if (!stack || !col_l || !col_r || !has_l || !has_r || !c)
    rc = ML_ENOMEM;
  size_t m = 0, maxima = 0;
  if (rc == 0)
    {
      col_pass (pts, n, true, stack, col_l, has_l, n_max);
      col_pass (pts, n, false, stack, col_r, has_r, n_max);
      uint64_t top = 0;
      for (size_t i = 0; i < n; i++)
        if (pts[i].live > top)
          top = pts[i].live;
      double floor_bytes = ML_PEAK_PROMINENCE * (double) top;
      for (size_t i = 0; i < n; i++)
        {
          if (!is_local_max (pts, n, i))
            continue;
          size_t at = maxima++;
          uint64_t col = 0;
          if (has_l[at])
            col = col_l[at];
          if (has_r[at] && col_r[at] > col)
            col = col_r[at];
          if (col > pts[i].live)
            col = pts[i].live;
          if ((double) (pts[i].live - col) >= floor_bytes)
            c[m++] = (Cand) { pts[i].live, i };
        }
      qsort (c, m, sizeof *c, cand_by_live_desc);
    }
  free (stack);
  free (col_l);
  free (col_r);
  free (has_l);
  free (has_r);
  if (rc < 0)
    {
      free (c);
      return rc;
    }
  *out = c;
  *n_out = m;
  *n_maxima = maxima;
  return 0;
}

/* Fills @g from the members @c[0 .. k) (in time order now). */
static int
fill_group (const MlBuffers *bufs, const MlLiveStep *pts, const Cand *c, size_t k, MlPeakGroup *g)
{
  g->ticks = malloc (k * sizeof *g->ticks);
  g->lives = malloc (k * sizeof *g->lives);
  if (!g->ticks || !g->lives)
    return ML_ENOMEM;
  g->n = k;
  g->live_min = UINT64_MAX;
  for (size_t j = 0; j < k; j++)
    {
      g->ticks[j] = pts[c[j].idx].tick;
      g->lives[j] = c[j].live;
      if (c[j].live > g->live)
        {
          g->live = c[j].live;
          g->top_tick = g->ticks[j];
        }
      if (c[j].live < g->live_min)
        g->live_min = c[j].live;
    }
  g->every_ns = -1;
  if (k < 2)
    return 0;
  g->every_ticks = (double) (g->ticks[k - 1] - g->ticks[0]) / (double) (k - 1);
  int64_t a = ml_trace_tick_time (bufs->trace, g->ticks[0]);
  int64_t b = ml_trace_tick_time (bufs->trace, g->ticks[k - 1]);
  if (a >= 0 && b >= 0)
    g->every_ns = (double) (b - a) / (double) (k - 1);
  g->regular = k >= 3;
  for (size_t j = 1; j < k && g->regular; j++)
    g->regular = fabs ((double) (g->ticks[j] - g->ticks[j - 1]) - g->every_ticks) <= ML_PEAK_REGULAR * g->every_ticks;
  return 0;
}

/* The iteration boundaries of the repeating group @c[0 .. k) (time
 * order): the first lowest point between each two occurrences. */
static int
fill_boundaries (const MlLiveStep *pts, const Cand *c, size_t k, MlPeakGroups *out)
{
  out->boundaries = malloc (k * sizeof *out->boundaries);
  if (!out->boundaries)
    return ML_ENOMEM;
  for (size_t j = 0; j + 1 < k; j++)
    {
      size_t lo = c[j].idx + 1, best = lo;
      for (size_t i = lo; i < c[j + 1].idx; i++)
        if (pts[i].live < pts[best].live)
          best = i;
      out->boundaries[out->n_boundaries++] = pts[best].tick;
    }
  return 0;
}

int
ml_peak_groups_find (const MlBuffers *bufs, size_t max_groups, MlPeakGroups *out, MlError *err)
{
  MlPeakGroups r = { .iter_group = -1 };
  MlLiveStep *pts = NULL;
  size_t n = 0, m = 0;
  Cand *c = NULL;
  int rc = bufs->n ? ml_buffers_live_steps (bufs, &pts, &n, err) : 0;
  if (rc < 0)
    return rc;
  if (n && (rc = prominent_maxima (pts, n, &c, &m, &r.n_maxima)) < 0)
    goto fail;
  r.groups = calloc (m ? m : 1, sizeof *r.groups);
  if (!r.groups)
    {
      rc = ML_ENOMEM;
      goto fail;
    }
  /* c is highest first: each group takes the run of candidates within
   * ML_PEAK_SAME of its first, then sorts them by time */
  for (size_t i = 0; i < m;)
    {
      double floor_live = (double) c[i].live * (1.0 - ML_PEAK_SAME);
      size_t k = i + 1;
      while (k < m && (double) c[k].live >= floor_live)
        k++;
      qsort (c + i, k - i, sizeof *c, cand_by_idx);
      MlPeakGroup *g = &r.groups[r.n_all++];
      if ((rc = fill_group (bufs, pts, c + i, k - i, g)) < 0)
        goto fail;
      if (r.iter_group < 0 && g->regular)
        {
          r.iter_group = (int) (r.n_all - 1);
          if ((rc = fill_boundaries (pts, c + i, k - i, &r)) < 0)
            goto fail;
        }
      i = k;
    }
  r.n = max_groups && r.n_all > max_groups ? max_groups : r.n_all;
  free (pts);
  free (c);
  *out = r;
  return 0;
fail:
  free (pts);
  free (c);
  ml_peak_groups_free (&r);
  return ml_error_set (err, ML_ENOMEM, "out of memory grouping the peaks of %zu buffers", bufs->n);
}

void
ml_peak_groups_free (MlPeakGroups *g)
{
  if (!g)
    return;
  for (size_t i = 0; i < g->n_all; i++)
    {
      free (g->groups[i].ticks);
      free (g->groups[i].lives);
    }
  free (g->groups);
  free (g->boundaries);
  memset (g, 0, sizeof *g);
  g->iter_group = -1;
}

/* "1.21 s", "324 ms", "12.5 µs": three significant digits. */
static void
format_ns (double ns, char *buf, size_t len)
{
  static const char *const unit[] = { "ns", "µs", "ms", "s" };
  int k = 0;
  while (k < 3 && ns >= 1000.0)
    {
      ns /= 1000.0;
      k++;
    }
  snprintf (buf, len, ns >= 100 ? "%.0f %s" : ns >= 10 ? "%.1f %s" : "%.2f %s", ns, unit[k]);
}

char *
ml_peak_group_describe (const MlPeakGroup *g, char *buf, size_t len)
{
  char hi[32], lo[32];
  ml_format_size (g->live, hi, sizeof hi);
  ml_format_size (g->live_min, lo, sizeof lo);
  int o = snprintf (buf, len, "%s%s", strcmp (hi, lo) ? "up to " : "", hi);
  if (g->n < 2 || o < 0 || (size_t) o >= len)
    return buf;
  bool exact = true;
  for (size_t j = 2; j < g->n && exact; j++)
    exact = g->ticks[j] - g->ticks[j - 1] == g->ticks[1] - g->ticks[0];
  if (g->n == 2)
    o += snprintf (buf + o, len - (size_t) o, ", 2 times, %" PRIu64 " ticks apart", g->ticks[1] - g->ticks[0]);
  else
    o += snprintf (buf + o, len - (size_t) o, ", %zu times, every %s%.0f ticks", g->n, exact ? "" : "~", g->every_ticks);
  if (g->every_ns >= 0 && (size_t) o < len)
    {
      char t[32];
      format_ns (g->every_ns, t, sizeof t);
      snprintf (buf + o, len - (size_t) o, " (~%s)", t);
    }
  return buf;
}
