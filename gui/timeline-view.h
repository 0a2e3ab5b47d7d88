/* timeline-view.h — MlTimelineView: one plan drawn by address × time.
 *
 * A GtkWidget that draws a document's run through render/ (the same
 * renderer the exports use) with its own MlView: the address × time plot
 * on top and the live / reserved / fragmentation curves under it on the
 * same time axis. The static layer (buffers, curves, axes) is cached in a
 * GskRenderNode and redrawn only when the view or the data changes; hover,
 * selection and markers are drawn on top. When a full drawing costs more
 * than a frame (hundreds of thousands of buffers on screen), a worker
 * thread draws it and the frames in between show the last picture moved
 * and stretched to the current time span, so zooming and panning never
 * wait for the renderer.
 *
 * Input: ctrl+scroll and pinch zoom around the pointer, plain scroll pans
 * in time, drag pans, shift-drag selects a time range and zooms to it,
 * hover shows a tooltip from the hit test, a click selects a buffer
 * ("buffer-selected"). The window links two views' time spans in compare
 * mode through "view-changed".
 */
#ifndef ML_GUI_TIMELINE_VIEW_H
#define ML_GUI_TIMELINE_VIEW_H

#include <gtk/gtk.h>

#include "gui/document.h"
#include "render/scene.h"
#include "render/style.h"
#include "render/view.h"

G_BEGIN_DECLS

#define ML_TYPE_TIMELINE_VIEW (ml_timeline_view_get_type ())
G_DECLARE_FINAL_TYPE (MlTimelineView, ml_timeline_view, ML, TIMELINE_VIEW, GtkWidget)

GtkWidget *ml_timeline_view_new (void);

/* Shows run @which (0 or 1) of @doc (NULL clears). Keeps the time span
 * when @doc has the same trace as before, else fits. */
void ml_timeline_view_set_document (MlTimelineView *self, MlDocument *doc, int which);
MlDocument *ml_timeline_view_get_document (MlTimelineView *self);
const MlRun *ml_timeline_view_get_run (MlTimelineView *self);
/* The scene drawn (borrowed; NULL when nothing is shown). */
const MlScene *ml_timeline_view_get_scene (MlTimelineView *self);
/* The current view state (borrowed; plot rectangle in widget pixels). */
const MlView *ml_timeline_view_get_view (MlTimelineView *self);
MlStyle *ml_timeline_view_get_style (MlTimelineView *self);
void ml_timeline_view_style_changed (MlTimelineView *self);

void ml_timeline_view_zoom_in  (MlTimelineView *self);
void ml_timeline_view_zoom_out (MlTimelineView *self);
void ml_timeline_view_zoom_fit (MlTimelineView *self);
/* Pans by a fraction of the visible span (negative: earlier). */
void ml_timeline_view_pan      (MlTimelineView *self, double fraction);
/* Shows ticks [t0, t1). */
void ml_timeline_view_set_time_span (MlTimelineView *self, double t0, double t1);
void ml_timeline_view_get_time_span (MlTimelineView *self, double *t0, double *t1);
/* Centres @tick, zooming in to @span ticks when @span > 0. */
void ml_timeline_view_focus_tick (MlTimelineView *self, double tick, double span);

/* What the plot shows (render/style.h): the address layout, the
 * live buffers stacked, or the segments; keeps the time span. */
void ml_timeline_view_set_plot (MlTimelineView *self, MlPlot plot);
/* The vertical extent of the data in the current plot: the address space,
 * or the most live bytes (active). */
double ml_timeline_view_get_extent (MlTimelineView *self);

/* Makes the address axis at least @extent bytes tall (compare mode: both
 * strategies on one scale, so the one that wastes memory looks taller)
 * and shows all of it. 0 = the scene's own extent. */
void ml_timeline_view_set_addr_extent (MlTimelineView *self, double extent);

/* Two traces on one time scale. The axis' unit is ticks, or ns since the
 * first event on a real-time axis (ml_view_axis_value), so it is shared
 * by two traces where ticks are not: get/set the visible span in it, the
 * end of this trace in it, and let the axis reach @u_max (past this
 * trace's own end). */
void   ml_timeline_view_get_axis_span   (MlTimelineView *self, double *u0, double *u1);
void   ml_timeline_view_set_axis_span   (MlTimelineView *self, double u0, double u1);
double ml_timeline_view_get_axis_extent (MlTimelineView *self);
void   ml_timeline_view_set_axis_extent (MlTimelineView *self, double u_max);

/* The buffer under widget point (@x, @y), or -1 (the renderer's hit test). */
long ml_timeline_view_pick (MlTimelineView *self, double x, double y);
/* Widget coordinates of the middle of @buffer's rectangle; FALSE when it
 * is not drawn. */
gboolean ml_timeline_view_buffer_point (MlTimelineView *self, guint32 buffer, double *x, double *y);
/* Selects @buffer (-1 = none): outlined, and "buffer-selected" emitted. */
void ml_timeline_view_select_buffer (MlTimelineView *self, long buffer);
long ml_timeline_view_get_selected (MlTimelineView *self);
/* Where the pointer last moved over the view (widget pixels). */
void ml_timeline_view_get_pointer (MlTimelineView *self, double *x, double *y);
/* The buffer under the pointer (-1 none). */
long ml_timeline_view_get_hover (MlTimelineView *self);
/* What hovering @buffer shows (Pango markup: name, size, lifetime,
 * placement, the stack with Python frames first and framework frames
 * folded); NULL for no buffer. Free with g_free. */
char *ml_timeline_view_dup_buffer_markup (MlTimelineView *self, long buffer);
/* The tooltip of the refused request of the plan's OOM (drawn where
 * ml_timeline_oom_request_box says): the request, the tick, why, and its
 * stack (the buffer's, or the trace's OOM event's). NULL without one.
 * Caller frees. */
char *ml_timeline_view_dup_oom_markup (MlTimelineView *self);
/* The tooltip at widget pixel (@x, @y): the refused request's over its
 * box, else the buffer's there; NULL for none. Caller frees. */
char *ml_timeline_view_dup_markup_at (MlTimelineView *self, double x, double y);
/* Extra buffers outlined (search results, a race's pair); NULL clears. */
void ml_timeline_view_set_highlights (MlTimelineView *self, const guint32 *buffers, gsize n);
/* How many buffers are outlined so, and the first (-1: none). */
gsize ml_timeline_view_get_highlights (MlTimelineView *self, long *first);
/* A vertical marker at @tick (< 0: none), e.g. a peak or an OOM. */
void ml_timeline_view_set_marker (MlTimelineView *self, double tick, const char *label);

/* Draws what the view shows (static layer + overlays) on @cr, @width ×
 * @height pixels, for exports of "the current view". */
void ml_timeline_view_draw_to (MlTimelineView *self, cairo_t *cr, int width, int height);

/* Frame statistics for bench/viewer: snapshot times in microseconds. */
guint ml_timeline_view_get_draw_count (MlTimelineView *self);
gint64 ml_timeline_view_get_last_draw_us (MlTimelineView *self);
/* g_get_monotonic_time () of the first frame that showed a full drawing of
 * a document (not a placeholder or a stretched stand-in); 0 before. */
gint64 ml_timeline_view_get_first_picture_us (MlTimelineView *self);
/* Milliseconds of every full drawing of the static layer, in the frame or
 * in the worker (borrowed). */
const GArray *ml_timeline_view_get_render_times (MlTimelineView *self);
/* TRUE when the picture shown is the full drawing of the current view. */
gboolean ml_timeline_view_is_settled (MlTimelineView *self);

G_END_DECLS

#endif
