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
 * The bounds [t_min, t_max) × [a_min, a_max) are the whole data; clamp()
 * keeps the visible span inside them (and no narrower than min_t_span
 * ticks / min_a_span bytes), fit() shows all of it.
 */
#ifndef ML_VIEW_H
#define ML_VIEW_H

#include <stdbool.h>

typedef struct {
  double t0, t1;            /* visible ticks, [t0, t1)                 */
  double a0, a1;            /* visible global addresses, [a0, a1)      */
  double px, py, pw, ph;    /* the plot rectangle, device pixels       */
  double t_min, t_max;      /* data bounds                             */
  double a_min, a_max;
  double min_t_span;        /* zoom limits (default 1 tick, 1 byte)    */
  double min_a_span;
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
/* Ticks / bytes per device pixel. */
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
