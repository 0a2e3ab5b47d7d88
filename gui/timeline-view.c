/* timeline-view.c — MlTimelineView: the type, its document and its view.
 *
 * The run shown and its scene; the view state (time span, addresses,
 * plot, axis scales) that zoom, pan and the linked views of the window
 * change; the selection, highlights and marker. Drawing is in
 * timeline-view-paint.c, hit testing and tooltips in timeline-view-hit.c,
 * gestures in timeline-view-input.c.
 */
#include "gui/timeline-view-private.h"

#include <string.h>

G_DEFINE_FINAL_TYPE (MlTimelineView, ml_timeline_view, GTK_TYPE_WIDGET)

enum { BUFFER_SELECTED, VIEW_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The data or the style changed: the cached picture is stale. */
void
_ml_timeline_view_invalidate (MlTimelineView *self)
{
  self->gen++;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
_ml_timeline_view_changed (MlTimelineView *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[VIEW_CHANGED], 0);
}

void
_ml_timeline_view_update_layout (MlTimelineView *self, int w, int h)
{
  if (!self->scene || w <= 0 || h <= 0)
    return;
  if (w != self->fl_w || h != self->fl_h || self->scene != self->fl_scene
      || memcmp (&self->style, &self->fl_style, sizeof self->style) != 0)
    {
      ml_figure_layout (self->scene, &self->style, w, h, &self->fl);
      self->fl_w = w, self->fl_h = h, self->fl_scene = self->scene, self->fl_style = self->style;
    }
  ml_view_set_plot (&self->view, self->fl.layout.x, self->fl.layout.y, self->fl.layout.w, self->fl.layout.h);
}

/* ---- the document ------------------------------------------------------------- */

void
ml_timeline_view_set_document (MlTimelineView *self, MlDocument *doc, int which)
{
  gboolean same_trace = doc && self->doc && doc->box == self->doc->box;
  MlView old = self->view;
  gboolean had_view = self->view_ready;
  if (doc)
    ml_document_ref (doc);
  g_clear_pointer (&self->doc, ml_document_unref);
  g_clear_pointer (&self->item_of, g_free);
  self->doc = doc;
  self->which = which;
  self->run = doc ? doc->runs[which] : NULL;
  self->scene = self->run ? self->run->scene : NULL;
  self->fl_scene = NULL;   /* a new scene may sit where the old one was */
  self->hover = -1;
  if (!same_trace)
    {
      self->selected = -1;
      g_clear_pointer (&self->highlights, g_free);
      self->n_highlights = 0;
      self->marker = -1;
    }
  if (self->scene)
    {
      gsize n = doc->bufs->n;
      self->item_of = g_new (gint32, n + 1);
      for (gsize i = 0; i < n; i++)
        self->item_of[i] = -1;
      for (size_t i = 0; i < self->scene->n_items; i++)
        self->item_of[self->scene->items[i].buffer] = (gint32) i;
      int w = MAX (gtk_widget_get_width (GTK_WIDGET (self)), 800);
      int h = MAX (gtk_widget_get_height (GTK_WIDGET (self)), 400);
      ml_figure_layout (self->scene, &self->style, w, h, &self->fl);
      ml_scene_view_init_style (self->scene, &self->style, &self->view, self->fl.layout.x, self->fl.layout.y, self->fl.layout.w,
                                self->fl.layout.h);
      if (same_trace && had_view)
        ml_view_set_time (&self->view, old.t0, old.t1);
      self->view_ready = TRUE;
    }
  else
    {
      self->view_ready = FALSE;
      self->view.warp = NULL;   /* it pointed into the scene that went */
    }
  _ml_timeline_view_changed (self);
}

MlDocument *
ml_timeline_view_get_document (MlTimelineView *self)
{
  return self->doc;
}

const MlRun *
ml_timeline_view_get_run (MlTimelineView *self)
{
  return self->run;
}

const MlScene *
ml_timeline_view_get_scene (MlTimelineView *self)
{
  return self->scene;
}

const MlView *
ml_timeline_view_get_view (MlTimelineView *self)
{
  _ml_timeline_view_update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  return &self->view;
}

MlStyle *
ml_timeline_view_get_style (MlTimelineView *self)
{
  return &self->style;
}

void
ml_timeline_view_style_changed (MlTimelineView *self)
{
  if (self->scene)
    ml_scene_view_set_axis (self->scene, self->style.time_axis, &self->view);   /* the spans stay in ticks */
  _ml_timeline_view_update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  _ml_timeline_view_invalidate (self);
}

/* ---- the view state ------------------------------------------------------------ */

static void
zoom_center (MlTimelineView *self, double f)
{
  _ml_timeline_view_zoom_at (self, f, self->view.px + self->view.pw / 2, self->view.py + self->view.ph / 2, FALSE);
}

void ml_timeline_view_zoom_in  (MlTimelineView *self) { zoom_center (self, 2.0); }
void ml_timeline_view_zoom_out (MlTimelineView *self) { zoom_center (self, 0.5); }

void
ml_timeline_view_zoom_fit (MlTimelineView *self)
{
  if (!self->scene)
    return;
  ml_view_fit (&self->view);
  _ml_timeline_view_changed (self);
}

void
ml_timeline_view_pan (MlTimelineView *self, double fraction)
{
  if (!self->scene)
    return;
  ml_view_pan (&self->view, -fraction * self->view.pw, 0);
  _ml_timeline_view_changed (self);
}

void
ml_timeline_view_set_time_span (MlTimelineView *self, double t0, double t1)
{
  if (!self->scene)
    return;
  double o0 = self->view.t0, o1 = self->view.t1;
  ml_view_set_time (&self->view, t0, t1);
  if (o0 != self->view.t0 || o1 != self->view.t1)
    _ml_timeline_view_changed (self);
}

double
ml_timeline_view_get_extent (MlTimelineView *self)
{
  if (!self->scene)
    return 1;
  return (double) MAX (ml_scene_extent (self->scene, self->style.plot), 1);
}

void
ml_timeline_view_set_plot (MlTimelineView *self, MlPlot plot)
{
  if (self->style.plot == plot)
    return;
  self->style.plot = plot;
  if (self->scene)
    {
      double t0 = self->view.t0, t1 = self->view.t1;
      ml_scene_view_init_style (self->scene, &self->style, &self->view, self->view.px, self->view.py, self->view.pw,
                                self->view.ph);
      ml_view_set_time (&self->view, t0, t1);
    }
  self->hover = -1;
  _ml_timeline_view_invalidate (self);
  _ml_timeline_view_changed (self);
}

void
ml_timeline_view_set_addr_extent (MlTimelineView *self, double extent)
{
  if (!self->scene)
    return;
  double own = ml_timeline_view_get_extent (self);
  self->view.a_min = 0;
  self->view.a_max = MAX (extent, own);
  ml_view_set_addr (&self->view, 0, self->view.a_max);
  _ml_timeline_view_invalidate (self);
}

double
ml_timeline_view_get_axis_extent (MlTimelineView *self)
{
  if (!self->scene)
    return 0;
  return ml_view_axis_value (&self->view, (double) MAX (self->scene->end_tick, 1));
}

void
ml_timeline_view_set_axis_extent (MlTimelineView *self, double u_max)
{
  if (!self->scene)
    return;
  double own = (double) MAX (self->scene->end_tick, 1);
  self->view.t_max = MAX (own, ml_view_axis_tick (&self->view, u_max));
  ml_view_clamp (&self->view);
  _ml_timeline_view_invalidate (self);
  _ml_timeline_view_changed (self);
}

void
ml_timeline_view_get_axis_span (MlTimelineView *self, double *u0, double *u1)
{
  *u0 = ml_view_axis_value (&self->view, self->view.t0);
  *u1 = ml_view_axis_value (&self->view, self->view.t1);
}

void
ml_timeline_view_set_axis_span (MlTimelineView *self, double u0, double u1)
{
  if (!self->scene)
    return;
  ml_timeline_view_set_time_span (self, ml_view_axis_tick (&self->view, u0), ml_view_axis_tick (&self->view, u1));
}

void
ml_timeline_view_get_time_span (MlTimelineView *self, double *t0, double *t1)
{
  *t0 = self->view.t0;
  *t1 = self->view.t1;
}

void
ml_timeline_view_focus_tick (MlTimelineView *self, double tick, double span)
{
  if (span <= 0)
    span = self->view.t1 - self->view.t0;
  ml_timeline_view_set_time_span (self, tick - span / 2, tick + span / 2);
}

/* ---- selection, highlights, marker, pointer ---------------------------------------- */

void
ml_timeline_view_select_buffer (MlTimelineView *self, long buffer)
{
  if (!self->doc || buffer < 0 || (gsize) buffer >= self->doc->bufs->n)
    buffer = -1;
  if (self->selected == buffer)
    {
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return;
    }
  self->selected = buffer;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[BUFFER_SELECTED], 0, buffer);
}

long
ml_timeline_view_get_selected (MlTimelineView *self)
{
  return self->selected;
}

void
ml_timeline_view_set_highlights (MlTimelineView *self, const guint32 *buffers, gsize n)
{
  g_clear_pointer (&self->highlights, g_free);
  self->n_highlights = buffers ? n : 0;
  if (self->n_highlights)
    self->highlights = g_memdup2 (buffers, n * sizeof *buffers);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gsize
ml_timeline_view_get_highlights (MlTimelineView *self, long *first)
{
  *first = self->n_highlights ? (long) self->highlights[0] : -1;
  return self->n_highlights;
}

void
ml_timeline_view_set_marker (MlTimelineView *self, double tick, const char *label)
{
  self->marker = tick;
  g_free (self->marker_label);
  self->marker_label = g_strdup (label);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ml_timeline_view_get_pointer (MlTimelineView *self, double *x, double *y)
{
  *x = self->pointer_x;
  *y = self->pointer_y;
}

long
ml_timeline_view_get_hover (MlTimelineView *self)
{
  return self->hover;
}

/* ---- frame statistics ------------------------------------------------------------- */

guint
ml_timeline_view_get_draw_count (MlTimelineView *self)
{
  return self->draw_count;
}

gint64
ml_timeline_view_get_last_draw_us (MlTimelineView *self)
{
  return self->last_draw_us;
}

gint64
ml_timeline_view_get_first_picture_us (MlTimelineView *self)
{
  return self->first_picture_us;
}

const GArray *
ml_timeline_view_get_render_times (MlTimelineView *self)
{
  return self->render_times;
}

/* ---- GObject ----------------------------------------------------------------------- */

static void
ml_timeline_view_measure (GtkWidget *w, GtkOrientation o, int for_size, int *min, int *nat, int *minb, int *natb)
{
  *min = o == GTK_ORIENTATION_HORIZONTAL ? 300 : 220;
  *nat = o == GTK_ORIENTATION_HORIZONTAL ? 900 : 520;
}

static void
ml_timeline_view_size_allocate (GtkWidget *w, int width, int height, int baseline)
{
  _ml_timeline_view_update_layout (ML_TIMELINE_VIEW (w), width, height);
}

static void
ml_timeline_view_dispose (GObject *obj)
{
  MlTimelineView *self = ML_TIMELINE_VIEW (obj);
  g_clear_pointer (&self->cache, gsk_render_node_unref);
  g_clear_pointer (&self->cache_img, cairo_surface_destroy);
  g_clear_pointer (&self->doc, ml_document_unref);
  g_clear_pointer (&self->item_of, g_free);
  g_clear_pointer (&self->highlights, g_free);
  g_clear_pointer (&self->marker_label, g_free);
  G_OBJECT_CLASS (ml_timeline_view_parent_class)->dispose (obj);
}

static void
ml_timeline_view_finalize (GObject *obj)
{
  MlTimelineView *self = ML_TIMELINE_VIEW (obj);
  g_array_unref (self->render_times);
  G_OBJECT_CLASS (ml_timeline_view_parent_class)->finalize (obj);
}

static void
ml_timeline_view_class_init (MlTimelineViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ml_timeline_view_dispose;
  G_OBJECT_CLASS (klass)->finalize = ml_timeline_view_finalize;
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);
  wc->snapshot = _ml_timeline_view_snapshot;
  wc->measure = ml_timeline_view_measure;
  wc->size_allocate = ml_timeline_view_size_allocate;
  gtk_widget_class_set_css_name (wc, "mltimeline");
  signals[BUFFER_SELECTED] = g_signal_new ("buffer-selected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                           NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_LONG);
  signals[VIEW_CHANGED] = g_signal_new ("view-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
ml_timeline_view_init (MlTimelineView *self)
{
  ml_style_init (&self->style);
  self->style.show_title = false;
  self->render_times = g_array_new (FALSE, FALSE, sizeof (double));
  self->hover = self->selected = -1;
  self->marker = -1;
  ml_view_init (&self->view, 0, 1, 0, 1, 0, 0, 800, 400);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  _ml_timeline_view_add_controllers (self);
}

GtkWidget *
ml_timeline_view_new (void)
{
  return g_object_new (ML_TYPE_TIMELINE_VIEW, NULL);
}
