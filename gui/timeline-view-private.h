/* timeline-view-private.h — what the files of MlTimelineView share.
 *
 * MlTimelineView is written in four files: timeline-view.c (the type,
 * the document and the view state: zoom, pan, spans, scales, selection),
 * timeline-view-paint.c (the frame: the cached static layer, the worker,
 * the overlays), timeline-view-hit.c (hit testing and tooltips) and
 * timeline-view-input.c (pointer gestures).
 */
#ifndef ML_GUI_TIMELINE_VIEW_PRIVATE_H
#define ML_GUI_TIMELINE_VIEW_PRIVATE_H

#include "gui/timeline-view.h"
#include "render/timeline.h"

G_BEGIN_DECLS

struct _MlTimelineView {
  GtkWidget    parent;

  MlDocument  *doc;
  int          which;
  const MlRun *run;          /* borrowed from doc */
  const MlScene *scene;      /* borrowed from run */
  gint32      *item_of;      /* buffer index -> scene item, or -1 */

  MlView       view;
  gboolean     view_ready;   /* the view has bounds from a scene */
  MlStyle      style;
  MlFigureLayout fl;
  /* what fl was laid out for: the legend's layout measures text, so it
   * is done again only when one of them changes */
  int            fl_w, fl_h;
  const MlScene *fl_scene;
  MlStyle        fl_style;

  /* the static layer, cached while nothing changes; when drawing it
   * costs more than a frame, a worker draws it and the snapshot shows the
   * last picture moved / stretched to the current time span meanwhile */
  GskRenderNode *cache;       /* paints cache_img */
  cairo_surface_t *cache_img; /* the picture, device pixels */
  int          cache_w, cache_h;
  MlView       cache_view;
  guint        cache_gen;
  guint        gen;           /* bumps when the data or the style change */
  gboolean     rendering;     /* a worker is drawing */
  double       render_ms;     /* the last full drawing's cost */
  GArray      *render_times;  /* ms of every full drawing (bench) */

  /* overlays */
  long         hover;        /* buffer */
  long         selected;
  guint32     *highlights;
  gsize        n_highlights;
  double       marker;
  char        *marker_label;

  /* input */
  double       pointer_x, pointer_y;
  gboolean     selecting, panning;
  double       drag_x, drag_y, drag_dx, drag_dy;
  MlView       drag_start_view;
  double       zoom_scale;   /* pinch: the last scale */

  /* statistics */
  guint        draw_count;
  gint64       last_draw_us;
  gint64       first_picture_us;   /* monotonic time of the first full drawing shown */
};

/* timeline-view.c */
/* Lays the figure out for @w x @h pixels (the plot rectangle of the view). */
void _ml_timeline_view_update_layout (MlTimelineView *self, int w, int h);
/* The view state changed: redraw, and emit "view-changed". */
void _ml_timeline_view_changed (MlTimelineView *self);
/* The data or the style changed: the cached picture is stale. */
void _ml_timeline_view_invalidate (MlTimelineView *self);

/* timeline-view-paint.c: GtkWidget's snapshot. */
void _ml_timeline_view_snapshot (GtkWidget *w, GtkSnapshot *snap);

/* timeline-view-input.c */
/* Zooms by @factor around widget point (@x, @y): in time, or in
 * addresses when @addresses. */
void _ml_timeline_view_zoom_at (MlTimelineView *self, double factor, double x, double y, gboolean addresses);
/* The event controllers and the tooltip of the widget. */
void _ml_timeline_view_add_controllers (MlTimelineView *self);

G_END_DECLS

#endif
