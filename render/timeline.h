/* timeline.h — drawing a scene with cairo (and pango-cairo), no GTK.
 *
 * The figure, top to bottom, all panels sharing one time axis:
 *
 *   title      the trace, the strategy and its headline metrics
 *   layout     address × time: one rectangle per buffer, coloured by call
 *              site, stream or kind; segments as faint bands; races as red
 *              overlaps; the OOM as a red line; the lower-bound tick dashed.
 *              Or (style->plot) the live buffers stacked over time with
 *              no addresses (active.c), or the segments outlined over time
 *              with their buffers inside
 *   curves     live bytes (filled), reserved bytes (line), the lower bound
 *              and the capacity (dashed), the peak points labelled
 *   frag       fragmentation 0..100 %
 *   time axis  ticks, or real time when the trace has it
 *   legend     the colour classes, with their bytes at the peak
 *
 * Each draw function takes a cairo_t, the view (time and address spans and
 * the plot rectangle, see view.h), the scene and a style; the viewer calls
 * them from its snapshot, exports call ml_timeline_draw_figure(). Level of
 * detail: only items overlapping the visible ticks are visited (binary
 * search); items narrower or lower than two pixels are merged into a
 * per-pixel grid that keeps, for each pixel, the largest buffer covering it,
 * painted as one image (one pixel per cell in that buffer's colour), so
 * peaks never vanish and vector outputs stay small; labels are drawn only where they fit. Cost: O(visible items +
 * width × height) per frame.
 *
 * Nothing here keeps state between calls; nothing is printed.
 */
#ifndef ML_TIMELINE_H
#define ML_TIMELINE_H

#include <stdbool.h>
#include <stdio.h>
#include <cairo.h>

#include "render/scene.h"
#include "render/style.h"
#include "render/view.h"

typedef struct { double x, y, w, h; } MlRect;

/* Where the panels of a figure of @width × @height go. */
typedef struct {
  MlRect title;
  MlRect layout;     /* the address × time plot (MlView's rectangle)   */
  MlRect curves;     /* live / reserved bytes                          */
  MlRect frag;       /* fragmentation                                  */
  MlRect time_axis;  /* labels under the last panel                    */
  MlRect legend;
} MlFigureLayout;

void ml_figure_layout (const MlScene *scene, const MlStyle *style, double width, double height,
                       MlFigureLayout *out);

/* The address × time plot inside view->p{x,y,w,h} (clipped to it):
 * background, segment bands, buffers, labels, issues, OOM, peak line. */
void ml_timeline_draw_layout    (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style);
/* Only the buffers of the address × time layout (the merged sub-pixel
 * grid, the rectangles, their outlines) on what is there: no background,
 * segments, grid lines, labels or marks (the HTML page's zoomed-out
 * tiles, page.h). */
void ml_timeline_draw_buffers   (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style);
/* The rectangle of item @item (scene.h) in device pixels under @view,
 * clipped to nothing: it may lie outside the plot. */
void ml_timeline_item_rect      (const MlView *view, const MlScene *scene, size_t item, MlRect *out);
/* How a highlighted item is drawn. */
typedef enum {
  ML_MARK_HOVER = 0,   /* thin outline in the text colour          */
  ML_MARK_SELECTED,    /* heavier outline over a veil              */
  ML_MARK_MATCH,       /* magenta outline: search hits, blame, races */
} MlMark;

/* Hover / selection on top of a cached layout: outlines item @item (grown
 * to at least 3 px each way so sub-pixel buffers show), clipped to the
 * plot. The viewer and exports of what it shows both draw through it. */
void ml_timeline_draw_highlight (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style,
                                 size_t item, MlMark mark);
/* The item (scene.h) under device pixel (@x, @y) in @style's plot: the
 * address plot's ml_scene_hit, or the stacked plot's own; -1 for none. */
long ml_timeline_hit (const MlView *view, const MlScene *scene, const MlStyle *style, double x, double y);

/* The stacked "active memory" plot (active.c): ml_timeline_draw_layout
 * and ml_timeline_draw_highlight call these when style->plot is
 * ML_PLOT_ACTIVE; the view's vertical axis is then the stacked bytes
 * [0, scene->live_max). */
void ml_active_draw           (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style);
long ml_active_hit            (const MlScene *scene, const MlView *view, double x, double y);
void ml_active_draw_highlight (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style,
                               size_t item, MlMark mark);
/* A point inside item @item's part of the stack (the middle of its
 * visible lifetime); false when it is not drawn. */
bool ml_active_item_point     (const MlScene *scene, const MlView *view, size_t item, double *x, double *y);

/* A dashed red vertical marker at @tick from the plot's top to @bottom,
 * with @label (may be NULL) beside it, moved under the OOM's label of
 * @scene (may be NULL) when they would overlap; nothing when @tick < 0 or
 * off the plot. */
void ml_timeline_draw_marker    (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style,
                                 double tick, const char *label, double bottom);
/* The box the OOM's label takes at the top of the plot (for tests and
 * label placement); false when the plan has no OOM. */
bool ml_timeline_oom_label_box  (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style,
                                 MlRect *box);
/* The box the request refused at the plan's OOM is drawn in, hatched
 * red, in @style's plot (device pixels, unclipped): from the OOM tick,
 * one tick wide and at least 12 px, at scene->oom_addr (the address
 * plots) or oom_stack (the stacked plot), oom_bytes high (scene.h).
 * false when there is none (no OOM, or an OOM without a request: a
 * static plan over the capacity). */
bool ml_timeline_oom_request_box (const MlView *view, const MlScene *scene, const MlStyle *style, MlRect *box);
/* Address labels left of the plot rectangle, with grid lines. */
void ml_timeline_draw_addr_axis (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style);
/* Live / reserved curves in @area over the view's ticks (x from @view);
 * with the bytes axis left of @area. */
void ml_timeline_draw_curves    (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style,
                                 const MlRect *area);
/* The labels of the curves panel in @area and where they go: the panel's
 * legend first, then the capacity, the reserved peak and the peak points'
 * bytes, each at the first of a few places beside its mark that lies
 * inside @area and clear of the legend and of the labels before it (the
 * reserved peak and the first peak point always show, at their first
 * place if none is clear; the other points only where they fit).
 * ml_timeline_draw_curves draws these. Writes at most @cap, returns how
 * many. */
typedef enum {
  ML_CURVE_LEGEND = 0,   /* the panel's legend: live, reserved, lower bound */
  ML_CURVE_CAPACITY,     /* "capacity 40.00 GiB" on its line             */
  ML_CURVE_RESERVED,     /* "peak X" by the reserved peak's marker, or
                            "reserved X" on a line flat from the start   */
  ML_CURVE_LIVE,         /* a peak level, once: "live max X, 17 times,
                            every ~38 ticks (~263 µs)" first, then "X" */
} MlCurveLabelKind;
typedef struct {
  MlCurveLabelKind kind;
  MlRect           box;       /* device pixels                        */
  char             text[112]; /* empty for the legend                 */
  bool             bold;
} MlCurveLabel;
size_t ml_timeline_curve_labels (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style,
                                 const MlRect *area, MlCurveLabel *out, size_t cap);
/* Fragmentation in @area, 0..100 %. */
void ml_timeline_draw_frag      (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style,
                                 const MlRect *area);
/* Time labels and tick marks in @area (under the panels; each panel
 * draws its own vertical grid lines). */
/* The address axis' labels for @view, at least @min_gap px apart. Packed
 * (scene->addr_raw false): "seg 12" where a visible segment starts (the
 * segment the view starts in at its bottom), then "+256 MiB" offsets in
 * the segments at a round step for the visible span where they are clear
 * of the others; raw: round addresses "0x7f3a40000000" (segment -1).
 * Returns how many (at most @cap). */
typedef struct {
  double   y;          /* device pixels */
  uint64_t addr;       /* on the scene's axis */
  int32_t  segment;    /* -1: a raw address */
  uint64_t offset;     /* in the segment */
  char     text[40];
} MlAddrLabel;
size_t ml_timeline_addr_labels (const MlView *view, const MlScene *scene, double min_gap, MlAddrLabel *out,
                                size_t cap);

/* The time axis' labels for @view: where each goes (x in device pixels,
 * and its tick) and its text, with a second line (the real time of a
 * tick label on a tick axis of a timed trace; else empty). On a real-time
 * axis (the view's warp) they are round times, evenly spaced. The drawing
 * leaves out labels that would overlap the one before. Returns how many
 * (at most @cap). */
typedef struct {
  double x, tick;
  char   text[32], text2[32];
} MlTimeLabel;
size_t ml_timeline_time_labels (const MlView *view, const MlScene *scene, const MlStyle *style, MlTimeLabel *out,
                                size_t cap);

void ml_timeline_draw_time_axis (cairo_t *cr, const MlView *view, const MlScene *scene, const MlStyle *style,
                                 const MlRect *area);
void ml_timeline_draw_legend    (cairo_t *cr, const MlScene *scene, const MlStyle *style, const MlRect *area);

/* The colour legend's entries, computed once for every drawing of it (the
 * PNG / SVG / PDF figure, the viewer, the HTML page): each entry's class,
 * row and place (x from the legend's first column, w its columns, in the
 * units @measure returns), the text drawn and the whole text (for hover).
 * A label too long for its place loses the start of its text ("…freed at
 * optimizer.py:71:step"), never its last word (a call site's
 * file:line:function) nor the amount "(579.31 MiB at peak)"; the entry
 * spans as many columns (at least ML_LEGEND_COLUMN wide, at most 5 a row)
 * as that needs, and entries wrap to more rows. Returns the entries (at
 * most @cap: ML_PALETTE_N + 1 holds them all) and sets *@rows. */
#define ML_LEGEND_COLUMN 150.0
#define ML_LEGEND_SWATCH 14.0   /* the colour square and its gap   */
#define ML_LEGEND_GAP    8.0    /* after an entry's text            */
#define ML_LEGEND_SCALE  0.85   /* the entries' font, of the style's */
typedef struct {
  unsigned cls;        /* class index; ML_PALETTE_N = the others */
  unsigned row;
  double   x, w;
  char     text[320];  /* what is drawn                          */
  char     full[320];  /* the whole label and amount             */
} MlLegendEntry;
typedef double (*MlTextWidth) (const char *text, void *data);
size_t ml_legend_layout (const MlScene *scene, MlColorBy by, double width, MlTextWidth measure, void *data,
                         MlLegendEntry *out, size_t cap, unsigned *rows);
/* The legend entry drawn (by ml_timeline_draw_legend in @area) under the
 * pixel (@x, @y), for hover: its whole text is out->full. */
bool   ml_timeline_legend_hit (const MlScene *scene, const MlStyle *style, const MlRect *area, double x, double y,
                               MlLegendEntry *out);
void ml_timeline_draw_title     (cairo_t *cr, const MlScene *scene, const MlStyle *style, const MlRect *area);

/* The whole figure on @cr at @width × @height. @range gives the visible
 * ticks and addresses (its plot rectangle is ignored), and its bounds may
 * reach past the scene's (two runs on one scale); NULL shows all. */
void ml_timeline_draw_figure (cairo_t *cr, const MlScene *scene, const MlStyle *style,
                              double width, double height, const MlView *range);

typedef enum { ML_RENDER_PNG, ML_RENDER_SVG, ML_RENDER_PDF } MlRenderFormat;

/* The format a file name asks for (.png, .svg, .pdf); ML_EUSAGE otherwise. */
int ml_render_format_from_path (const char *path, MlRenderFormat *fmt, MlError *err);

/* Draws a picture of @width × @height on @cr (a PNG, SVG or PDF surface). */
typedef void (*MlDrawFunc) (cairo_t *cr, int width, int height, void *data);

/* The sizes a picture may have: each side from ML_RENDER_MIN_W x
 * ML_RENDER_MIN_H to ML_RENDER_MAX_SIDE, and ML_RENDER_MAX_PIXELS pixels
 * in all (an 8K screen, 7680x4320, is 33 million). Drawing takes about 9
 * bytes and 30-45 ns per pixel, whatever the trace: 20000x20000 took 3.5 GB
 * and 18 s for more than any screen or printer shows (docs/render.md). */
#define ML_RENDER_MIN_W      200
#define ML_RENDER_MIN_H      150
#define ML_RENDER_MAX_SIDE   20000
#define ML_RENDER_MAX_PIXELS 40000000

/* 0 when a picture may be @width x @height, else ML_EUSAGE with a message
 * naming the limit it passes. */
int ml_render_check_size (int width, int height, MlError *err);

/* Writes what @draw draws to @fp as @fmt (SVG sized in px, as the PNG).
 * Sizes ml_render_check_size refuses are refused (ML_EUSAGE). */
int ml_render_write   (FILE *fp, MlRenderFormat fmt, int width, int height, MlDrawFunc draw, void *data,
                       MlError *err);
/* The same to @path, format by extension, atomically (sim/base/io.h: a
 * temporary file renamed into place only when complete; "-" = stdout as
 * PNG). */
int ml_render_to_file (const char *path, int width, int height, MlDrawFunc draw, void *data, MlError *err);

/* Renders the figure to @fp (PNG / SVG / PDF) through ml_render_write. */
int ml_render_figure_write (FILE *fp, MlRenderFormat fmt, const MlScene *scene, const MlStyle *style,
                            int width, int height, const MlView *range, MlError *err);

/* Renders the figure to @path, format by extension, atomically (a
 * temporary file renamed into place only when complete; "-" = stdout,
 * format PNG unless the name says otherwise). */
int ml_render_figure_to_file (const char *path, const MlScene *scene, const MlStyle *style,
                              int width, int height, const MlView *range, MlError *err);

#endif
