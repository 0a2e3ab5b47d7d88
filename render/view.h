/* view.h — what part of the address × time plane is on screen.
 *
 * MlView is a plain struct with pure functions, shared by the GTK viewer,
 * the headless exports and the tests (no cairo, no GTK here). It maps
 * ticks to x and global addresses (see scene.h) to y inside a plot
 * rectangle given in device pixels:
 *
 *   x = px + (t - t0) / (t1 - t0) * pw        time grows to the right
 *   y = py + ph - (a - a0) / (a1 - a0) * ph   addresses grow upwards
 *
 * With a time warp (a real-time axis) x is linear in the time of a tick
 * rather than in the tick itself:
 *
 *   x = px + (U(t) - U(t0)) / (U(t1) - U(t0)) * pw
 *
 * where U(t) is the time of tick t (piecewise linear between the ticks
 * whose events carry a time) plus a small eps per tick, so that events at
 * one time stay apart when zoomed in far enough and x_to_time() has one
 * answer. Zoom and pan then act on time; the view's span stays in ticks.
 *
 * The bounds [t_min, t_max) × [a_min, a_max) are the whole data; clamp()
 * keeps the visible span inside them (and no narrower than min_t_span
 * ticks / min_a_span bytes), fit() shows all of it.
 */
#ifndef ML_VIEW_H
#define ML_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tick -> time in nanoseconds at n >= 2 points: @tick increasing, @ns
 * non-decreasing, @eps ns added per tick (> 0). Borrowed by the views. */
typedef struct {
  const uint64_t *tick;
  const int64_t  *ns;
  size_t          n;
  double          eps;
} MlTimeWarp;

typedef struct {
  double t0, t1;            /* visible ticks, [t0, t1)                 */
  double a0, a1;            /* visible global addresses, [a0, a1)      */
  double px, py, pw, ph;    /* the plot rectangle, device pixels       */
  double t_min, t_max;      /* data bounds                             */
  double a_min, a_max;
  double min_t_span;        /* zoom limits (default 1 tick, 1 byte)    */
  double min_a_span;
  const MlTimeWarp *warp;   /* NULL: x is linear in ticks            */
} MlView;

/* Sets the data bounds and the plot rectangle, then fits. Empty or
 * reversed bounds become [lo, lo + 1). */
void   ml_view_init     (MlView *v, double t_min, double t_max, double a_min, double a_max,
                         double px, double py, double pw, double ph);
/* Moves / resizes the plot rectangle; the visible spans stay. */
void   ml_view_set_plot (MlView *v, double px, double py, double pw, double ph);
/* Shows everything. */
void   ml_view_fit      (MlView *v);
/* Shows ticks [t0, t1) (clamped); the address span is kept. */
void   ml_view_set_time (MlView *v, double t0, double t1);
/* Shows addresses [a0, a1) (clamped); the time span is kept. */
void   ml_view_set_addr (MlView *v, double a0, double a1);

double ml_view_time_to_x (const MlView *v, double t);
double ml_view_x_to_time (const MlView *v, double x);
double ml_view_addr_to_y (const MlView *v, double a);
double ml_view_y_to_addr (const MlView *v, double y);
/* U(t) above: the time of tick @t in ns (plus eps per tick) with a
 * warp, else @t itself; and its inverse. */
double ml_view_axis_value (const MlView *v, double t);
double ml_view_axis_tick  (const MlView *v, double u);
/* With a warp: the time of tick @t in ns since the warp's first point
 * (without the eps), and the first tick at time @ns; both extrapolate
 * with the mean time per tick. 0 without a warp. */
double ml_view_tick_ns (const MlView *v, double t);
double ml_view_ns_tick (const MlView *v, double ns);
/* Ticks / bytes per device pixel (for a warped view: on average over the
 * visible span; per column use ml_view_x_to_time). */
double ml_view_ticks_per_px (const MlView *v);
double ml_view_bytes_per_px (const MlView *v);

/* Zooms by @fx in time and @fy in addresses (> 1 zooms in, 1 keeps that
 * axis) keeping the data under pixel (@x, @y) fixed, then clamps. */
void   ml_view_zoom (MlView *v, double fx, double fy, double x, double y);
/* Moves the content by (@dx, @dy) pixels (a drag to the right shows
 * earlier ticks), then clamps. */
void   ml_view_pan  (MlView *v, double dx, double dy);
/* Keeps the visible spans within the bounds and the zoom limits. */
void   ml_view_clamp (MlView *v);
/* True when the whole data is visible on both axes. */
bool   ml_view_is_fit (const MlView *v);

#endif
