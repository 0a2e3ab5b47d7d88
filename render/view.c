#include "render/view.h"

static void
fix_bounds (double *lo, double *hi)
{
  if (!(*hi > *lo))
    *hi = *lo + 1.0;
}

void
ml_view_init (MlView *v, double t_min, double t_max, double a_min, double a_max,
              double px, double py, double pw, double ph)
{
  fix_bounds (&t_min, &t_max);
  fix_bounds (&a_min, &a_max);
  v->t_min = t_min;
  v->t_max = t_max;
  v->a_min = a_min;
  v->a_max = a_max;
  v->min_t_span = 1.0;
  v->min_a_span = 1.0;
  v->warp = NULL;
  ml_view_set_plot (v, px, py, pw, ph);
  ml_view_fit (v);
}

void
ml_view_set_plot (MlView *v, double px, double py, double pw, double ph)
{
  v->px = px;
  v->py = py;
  v->pw = pw > 1.0 ? pw : 1.0;
  v->ph = ph > 1.0 ? ph : 1.0;
}

void
ml_view_fit (MlView *v)
{
  v->t0 = v->t_min;
  v->t1 = v->t_max;
  v->a0 = v->a_min;
  v->a1 = v->a_max;
}

/* Clamps [*lo, *hi) into [min, max) keeping its width where possible, and
 * widens it to at least @min_span around its centre. */
static void
clamp_axis (double *lo, double *hi, double min, double max, double min_span)
{
  double full = max - min;
  if (min_span > full)
    min_span = full;
  double span = *hi - *lo;
  if (!(span >= min_span))   /* also catches NaN */
    {
      double c = (*lo + *hi) / 2.0;
      if (c != c)
        c = (min + max) / 2.0;
      span = min_span;
      *lo = c - span / 2.0;
    }
  if (span >= full)
    {
      *lo = min;
      *hi = max;
      return;
    }
  if (*lo < min)
    *lo = min;
  if (*lo + span > max)
    *lo = max - span;
  *hi = *lo + span;
}

void
ml_view_clamp (MlView *v)
{
  clamp_axis (&v->t0, &v->t1, v->t_min, v->t_max, v->min_t_span);
  clamp_axis (&v->a0, &v->a1, v->a_min, v->a_max, v->min_a_span);
}

void
ml_view_set_time (MlView *v, double t0, double t1)
{
  v->t0 = t0;
  v->t1 = t1;
  ml_view_clamp (v);
}

void
ml_view_set_addr (MlView *v, double a0, double a1)
{
  v->a0 = a0;
  v->a1 = a1;
  ml_view_clamp (v);
}

/* U at breakpoint k of the warp. */
static double
warp_u (const MlTimeWarp *w, size_t k)
{
  return (double) (w->ns[k] - w->ns[0]) + w->eps * (double) w->tick[k];
}

/* Before the first and after the last timed tick: the mean time per tick. */
static double
warp_slope (const MlTimeWarp *w)
{
  return (warp_u (w, w->n - 1) - warp_u (w, 0)) / (double) (w->tick[w->n - 1] - w->tick[0]);
}

double
ml_view_axis_value (const MlView *v, double t)
{
  const MlTimeWarp *w = v->warp;
  if (!w || w->n < 2)
    return t;
  if (t <= (double) w->tick[0])
    return warp_u (w, 0) + (t - (double) w->tick[0]) * warp_slope (w);
  if (t >= (double) w->tick[w->n - 1])
    return warp_u (w, w->n - 1) + (t - (double) w->tick[w->n - 1]) * warp_slope (w);
  size_t lo = 0, hi = w->n - 1;
  while (hi - lo > 1)   /* tick[lo] <= t < tick[hi] */
      {
        size_t mid = (lo + hi) / 2;
        if ((double) w->tick[mid] <= t)
          lo = mid;
        else
          hi = mid;
      }
  double x0 = (double) w->tick[lo], x1 = (double) w->tick[hi];
  double u0 = warp_u (w, lo), u1 = warp_u (w, hi);
  return u0 + (t - x0) * (u1 - u0) / (x1 - x0);
}

double
ml_view_axis_tick (const MlView *v, double u)
{
  const MlTimeWarp *w = v->warp;
  if (!w || w->n < 2)
    return u;
  if (u <= warp_u (w, 0))
    return (double) w->tick[0] + (u - warp_u (w, 0)) / warp_slope (w);
  if (u >= warp_u (w, w->n - 1))
    return (double) w->tick[w->n - 1] + (u - warp_u (w, w->n - 1)) / warp_slope (w);
  size_t lo = 0, hi = w->n - 1;
  while (hi - lo > 1)
      {
        size_t mid = (lo + hi) / 2;
        if (warp_u (w, mid) <= u)
          lo = mid;
        else
          hi = mid;
      }
  double x0 = (double) w->tick[lo], x1 = (double) w->tick[hi];
  double u0 = warp_u (w, lo), u1 = warp_u (w, hi);
  return x0 + (u - u0) * (x1 - x0) / (u1 - u0);   /* U rises by eps per tick at least */
}

double
ml_view_tick_ns (const MlView *v, double t)
{
  const MlTimeWarp *w = v->warp;
  if (!w || w->n < 2)
    return 0;
  size_t n = w->n;
  double t0 = (double) w->tick[0], t1 = (double) w->tick[n - 1];
  double slope = (double) (w->ns[n - 1] - w->ns[0]) / (t1 - t0);
  if (t <= t0)
    return (t - t0) * slope;
  if (t >= t1)
    return (double) (w->ns[n - 1] - w->ns[0]) + (t - t1) * slope;
  size_t lo = 0, hi = n - 1;
  while (hi - lo > 1)
    {
      size_t mid = (lo + hi) / 2;
      if ((double) w->tick[mid] <= t)
        lo = mid;
      else
        hi = mid;
    }
  double f = (t - (double) w->tick[lo]) / (double) (w->tick[hi] - w->tick[lo]);
  return (double) (w->ns[lo] - w->ns[0]) + f * (double) (w->ns[hi] - w->ns[lo]);
}

double
ml_view_ns_tick (const MlView *v, double ns)
{
  const MlTimeWarp *w = v->warp;
  if (!w || w->n < 2)
    return 0;
  size_t n = w->n;
  double t0 = (double) w->tick[0], t1 = (double) w->tick[n - 1];
  double span = (double) (w->ns[n - 1] - w->ns[0]);
  if (ns <= 0)
    return t0 + ns * (t1 - t0) / span;
  if (ns >= span)
    return t1 + (ns - span) * (t1 - t0) / span;
  size_t lo = 0, hi = n - 1;   /* the first breakpoint hi with ns >= @ns */
  while (hi - lo > 1)
    {
      size_t mid = (lo + hi) / 2;
      if ((double) (w->ns[mid] - w->ns[0]) < ns)
        lo = mid;
      else
        hi = mid;
    }
  double a = (double) (w->ns[lo] - w->ns[0]), b = (double) (w->ns[hi] - w->ns[0]);
  return (double) w->tick[lo] + (b > a ? (ns - a) / (b - a) : 1.0) * (double) (w->tick[hi] - w->tick[lo]);
}

double
ml_view_time_to_x (const MlView *v, double t)
{
  if (v->warp)
    {
      double u0 = ml_view_axis_value (v, v->t0), u1 = ml_view_axis_value (v, v->t1);
      return v->px + (ml_view_axis_value (v, t) - u0) / (u1 - u0) * v->pw;
    }
  return v->px + (t - v->t0) / (v->t1 - v->t0) * v->pw;
}

double
ml_view_x_to_time (const MlView *v, double x)
{
  if (v->warp)
    {
      double u0 = ml_view_axis_value (v, v->t0), u1 = ml_view_axis_value (v, v->t1);
      return ml_view_axis_tick (v, u0 + (x - v->px) / v->pw * (u1 - u0));
    }
  return v->t0 + (x - v->px) / v->pw * (v->t1 - v->t0);
}

double
ml_view_addr_to_y (const MlView *v, double a)
{
  return v->py + v->ph - (a - v->a0) / (v->a1 - v->a0) * v->ph;
}

double
ml_view_y_to_addr (const MlView *v, double y)
{
  return v->a0 + (v->py + v->ph - y) / v->ph * (v->a1 - v->a0);
}

double
ml_view_ticks_per_px (const MlView *v)
{
  return (v->t1 - v->t0) / v->pw;
}

double
ml_view_bytes_per_px (const MlView *v)
{
  return (v->a1 - v->a0) / v->ph;
}

void
ml_view_zoom (MlView *v, double fx, double fy, double x, double y)
{
  if (fx > 0.0 && fx != 1.0)
    {
      /* in the axis' own unit (ticks, or time with a warp) */
      double u0 = ml_view_axis_value (v, v->t0), u1 = ml_view_axis_value (v, v->t1);
      double frac = (x - v->px) / v->pw;
      double u = u0 + frac * (u1 - u0);
      double span = (u1 - u0) / fx;
      double n0 = ml_view_axis_tick (v, u - frac * span), n1 = ml_view_axis_tick (v, u - frac * span + span);
      if (n1 - n0 < v->min_t_span)
        {
          double t = ml_view_axis_tick (v, u);
          n0 = t - frac * v->min_t_span;
          n1 = n0 + v->min_t_span;
        }
      v->t0 = n0;
      v->t1 = n1;
    }
  if (fy > 0.0 && fy != 1.0)
    {
      double a = ml_view_y_to_addr (v, y);
      double span = (v->a1 - v->a0) / fy;
      if (span < v->min_a_span)
        span = v->min_a_span;
      double frac = (v->py + v->ph - y) / v->ph;
      v->a0 = a - frac * span;
      v->a1 = v->a0 + span;
    }
  ml_view_clamp (v);
}

void
ml_view_pan (MlView *v, double dx, double dy)
{
  double da = dy * ml_view_bytes_per_px (v);
  if (v->warp && dx != 0.0)
    {
      double u0 = ml_view_axis_value (v, v->t0), u1 = ml_view_axis_value (v, v->t1);
      double du = -dx * (u1 - u0) / v->pw;
      double n0 = ml_view_axis_tick (v, u0 + du), n1 = ml_view_axis_tick (v, u1 + du);
      /* at either end of the data: keep the width in time, not in ticks */
      if (n0 < v->t_min)
        n0 = v->t_min, n1 = ml_view_axis_tick (v, ml_view_axis_value (v, v->t_min) + (u1 - u0));
      if (n1 > v->t_max)
        n1 = v->t_max, n0 = ml_view_axis_tick (v, ml_view_axis_value (v, v->t_max) - (u1 - u0));
      v->t0 = n0;
      v->t1 = n1;
    }
  else if (!v->warp)
    {
      double dt = -dx * ml_view_ticks_per_px (v);
      v->t0 += dt;
      v->t1 += dt;
    }
  v->a0 += da;
  v->a1 += da;
  ml_view_clamp (v);
}

bool
ml_view_is_fit (const MlView *v)
{
  return v->t0 <= v->t_min && v->t1 >= v->t_max && v->a0 <= v->a_min && v->a1 >= v->a_max;
}
