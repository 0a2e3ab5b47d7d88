/* overview.c — MlOverview. */
#include "gui/overview.h"

#include <math.h>

struct _MlOverview {
  GtkWidget   parent;
  MlDocument *doc;
  double      t0, t1;        /* the window */
  double      marker;
  /* drag */
  gboolean    dragging_window;
  double      grab_tick;     /* tick under the pointer when the drag began */
  double      grab_t0, grab_t1;
  double      press_x;
  /* a per-column cache of the curve's maxima */
  float      *cols;
  int         n_cols;
  double      cols_max;
  const MlTimeWarp *warp;    /* the timeline's real-time axis, or NULL */
};

G_DEFINE_FINAL_TYPE (MlOverview, ml_overview, GTK_TYPE_WIDGET)

enum { WINDOW_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static double
end_tick (MlOverview *self)
{
  return self->doc ? (double) MAX (self->doc->bufs->end_tick, 1) : 1.0;
}

/* The whole trace across the widget, on the timeline's axis (ticks, or
 * real time). */
static MlView
whole (MlOverview *self, int width)
{
  MlView v;
  ml_view_init (&v, 0, end_tick (self), 0, 1, 0, 0, MAX (width, 1), 1);
  v.warp = self->warp;
  return v;
}

static double
x_to_tick (MlOverview *self, double x)
{
  int w = MAX (gtk_widget_get_width (GTK_WIDGET (self)), 1);
  MlView v = whole (self, w);
  return CLAMP (ml_view_x_to_time (&v, CLAMP (x, 0, w)), 0.0, end_tick (self));
}

static double
tick_to_x (MlOverview *self, double t)
{
  MlView v = whole (self, gtk_widget_get_width (GTK_WIDGET (self)));
  return ml_view_time_to_x (&v, t);
}

void
ml_overview_set_warp (MlOverview *self, const MlTimeWarp *warp)
{
  if (self->warp == warp)
    return;
  self->warp = warp;
  self->n_cols = 0;   /* the columns again */
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* The largest live (and reserved) bytes per pixel column, so that narrow
 * peaks stay visible at any width. */
static void
build_columns (MlOverview *self, int width)
{
  g_clear_pointer (&self->cols, g_free);
  self->n_cols = 0;
  const MlRun *run = self->doc ? self->doc->runs[0] : NULL;
  if (!run || !run->scene || !run->scene->curve.n || width <= 0)
    return;
  self->n_cols = width;
  self->cols = g_new0 (float, 2 * (gsize) width);
  double end = end_tick (self);
  double max = 1;
  const MlCurve *c = &run->scene->curve;
  for (size_t i = 0; i < c->n; i++)
    {
      /* the value holds from pts[i].tick to the next point */
      double a = (double) c->pts[i].tick;
      double b = i + 1 < c->n ? (double) c->pts[i + 1].tick : end;
      MlView v = whole (self, width);
      int ca = CLAMP ((int) floor (ml_view_time_to_x (&v, a)), 0, width - 1);
      int cb = CLAMP ((int) floor (ml_view_time_to_x (&v, MAX (b - 1e-9, a))), 0, width - 1);
      for (int k = ca; k <= cb; k++)
        {
          self->cols[2 * k] = MAX (self->cols[2 * k], (float) c->pts[i].live);
          self->cols[2 * k + 1] = MAX (self->cols[2 * k + 1], (float) c->pts[i].reserved);
        }
      max = MAX (max, (double) MAX (c->pts[i].live, c->pts[i].reserved));
    }
  self->cols_max = max;
}

static void
ml_overview_snapshot (GtkWidget *w, GtkSnapshot *snap)
{
  MlOverview *self = ML_OVERVIEW (w);
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  cairo_t *cr = gtk_snapshot_append_cairo (snap, &GRAPHENE_RECT_INIT (0, 0, width, height));
  cairo_set_source_rgb (cr, 0.97, 0.97, 0.98);
  cairo_paint (cr);
  if (self->doc)
    {
      if (self->n_cols != width)
        build_columns (self, width);
      double h = height - 4;
      if (self->cols)
        {
          /* reserved as a light band, live filled */
          cairo_set_source_rgb (cr, 0.80, 0.85, 0.93);
          for (int k = 0; k < self->n_cols; k++)
            {
              double v = (double) self->cols[2 * k + 1] / self->cols_max * h;
              cairo_rectangle (cr, k, height - v, 1, v);
            }
          cairo_fill (cr);
          cairo_set_source_rgb (cr, 0.20, 0.40, 0.70);
          for (int k = 0; k < self->n_cols; k++)
            {
              double v = (double) self->cols[2 * k] / self->cols_max * h;
              cairo_rectangle (cr, k, height - v, 1, v);
            }
          cairo_fill (cr);
        }
      if (self->marker >= 0)
        {
          double x = round (tick_to_x (self, self->marker)) + 0.5;
          cairo_set_source_rgb (cr, 0.85, 0.15, 0.10);
          cairo_set_line_width (cr, 1);
          cairo_move_to (cr, x, 0);
          cairo_line_to (cr, x, height);
          cairo_stroke (cr);
        }
      /* dim what is outside the window */
      double x0 = tick_to_x (self, self->t0), x1 = tick_to_x (self, self->t1);
      if (x1 - x0 < 3)
        {
          double m = (x0 + x1) / 2;
          x0 = m - 1.5, x1 = m + 1.5;
        }
      cairo_set_source_rgba (cr, 0.2, 0.2, 0.25, 0.25);
      cairo_rectangle (cr, 0, 0, x0, height);
      cairo_rectangle (cr, x1, 0, width - x1, height);
      cairo_fill (cr);
      cairo_set_source_rgb (cr, 0.15, 0.15, 0.2);
      cairo_set_line_width (cr, 1.5);
      cairo_rectangle (cr, x0 + 0.75, 0.75, x1 - x0 - 1.5, height - 1.5);
      cairo_stroke (cr);
    }
  else
    {
      cairo_set_source_rgb (cr, 0.5, 0.5, 0.5);
      cairo_select_font_face (cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
      cairo_set_font_size (cr, 11);
      cairo_move_to (cr, 8, height / 2.0 + 4);
      cairo_show_text (cr, "overview: live bytes over the whole trace");
    }
  cairo_set_source_rgb (cr, 0.75, 0.75, 0.78);
  cairo_rectangle (cr, 0.5, 0.5, width - 1, height - 1);
  cairo_set_line_width (cr, 1);
  cairo_stroke (cr);
  cairo_destroy (cr);
}

static void
emit_window (MlOverview *self, double t0, double t1)
{
  double span = t1 - t0, end = end_tick (self);
  if (t0 < 0)
    t0 = 0, t1 = span;
  if (t1 > end)
    t1 = end, t0 = MAX (0, end - span);
  g_signal_emit (self, signals[WINDOW_CHANGED], 0, t0, t1);
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, MlOverview *self)
{
  if (!self->doc)
    return;
  double t = x_to_tick (self, x);
  self->press_x = x;
  self->grab_tick = t;
  self->dragging_window = t >= self->t0 && t <= self->t1;
  if (!self->dragging_window)
    {
      /* centre the window on the click, then drag it from there */
      double span = self->t1 - self->t0;
      self->t0 = t - span / 2, self->t1 = t + span / 2;
      emit_window (self, self->t0, self->t1);
      self->dragging_window = TRUE;
    }
  self->grab_t0 = self->t0, self->grab_t1 = self->t1;
}

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, MlOverview *self)
{
  if (!self->doc || !self->dragging_window)
    return;
  double dt = x_to_tick (self, self->press_x + dx) - x_to_tick (self, self->press_x);
  emit_window (self, self->grab_t0 + dt, self->grab_t1 + dt);
}

static void
ml_overview_size_allocate (GtkWidget *w, int width, int height, int baseline)
{
  MlOverview *self = ML_OVERVIEW (w);
  if (self->n_cols != width)
    {
      g_clear_pointer (&self->cols, g_free);
      self->n_cols = 0;
    }
}

static void
ml_overview_measure (GtkWidget *w, GtkOrientation o, int for_size, int *min, int *nat, int *minb, int *natb)
{
  *min = o == GTK_ORIENTATION_HORIZONTAL ? 100 : 40;
  *nat = o == GTK_ORIENTATION_HORIZONTAL ? 400 : 48;
}

static void
ml_overview_dispose (GObject *obj)
{
  MlOverview *self = ML_OVERVIEW (obj);
  g_clear_pointer (&self->doc, ml_document_unref);
  g_clear_pointer (&self->cols, g_free);
  G_OBJECT_CLASS (ml_overview_parent_class)->dispose (obj);
}

static void
ml_overview_class_init (MlOverviewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ml_overview_dispose;
  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);
  wc->snapshot = ml_overview_snapshot;
  wc->measure = ml_overview_measure;
  wc->size_allocate = ml_overview_size_allocate;
  gtk_widget_class_set_css_name (wc, "mloverview");
  signals[WINDOW_CHANGED] = g_signal_new ("window-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
}

static void
ml_overview_init (MlOverview *self)
{
  self->marker = -1;
  self->t1 = 1;
  GtkGesture *drag = gtk_gesture_drag_new ();
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self), "Live bytes over the whole trace. Drag the window or click to move the view.");
}

GtkWidget *
ml_overview_new (void)
{
  return g_object_new (ML_TYPE_OVERVIEW, NULL);
}

void
ml_overview_set_document (MlOverview *self, MlDocument *doc)
{
  if (doc)
    ml_document_ref (doc);
  self->warp = NULL;   /* it was the old document's; the window sets the new one's */
  g_clear_pointer (&self->doc, ml_document_unref);
  self->doc = doc;
  g_clear_pointer (&self->cols, g_free);
  self->n_cols = 0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ml_overview_set_window (MlOverview *self, double t0, double t1)
{
  if (self->t0 == t0 && self->t1 == t1)
    return;
  self->t0 = t0, self->t1 = t1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ml_overview_set_marker (MlOverview *self, double tick)
{
  self->marker = tick;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}
