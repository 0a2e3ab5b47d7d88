#include "gui/render/view.h"

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

double
ml_view_time_to_x (const MlView *v, double t)
{
  return v->px + (t - v->t0) / (v->t1 - v->t0) * v->pw;
}

double
ml_view_x_to_time (const MlView *v, double x)
{
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
      double t = ml_view_x_to_time (v, x);
      double span = (v->t1 - v->t0) / fx;
      if (span < v->min_t_span)
        span = v->min_t_span;
      double frac = (x - v->px) / v->pw;
      v->t0 = t - frac * span;
      v->t1 = v->t0 + span;
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
  double dt = -dx * ml_view_ticks_per_px (v);
  double da = dy * ml_view_bytes_per_px (v);
  v->t0 += dt;
  v->t1 += dt;
  v->a0 += da;
  v->a1 += da;
  ml_view_clamp (v);
}

bool
ml_view_is_fit (const MlView *v)
{
  return v->t0 <= v->t_min && v->t1 >= v->t_max && v->a0 <= v->a_min && v->a1 >= v->a_max;
}
