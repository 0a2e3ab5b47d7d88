/* timeline-view.c — MlTimelineView. */
#include "gui/timeline-view.h"

#include <math.h>

#include "render/timeline.h"
#include "sim/base/units.h"

/* A full drawing cheaper than this happens in the frame itself. */
#define ML_TIMELINE_SYNC_MS 5.0
/* Scenes with more items than this are drawn in the worker from the start. */
#define ML_TIMELINE_BIG 200000

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

G_DEFINE_FINAL_TYPE (MlTimelineView, ml_timeline_view, GTK_TYPE_WIDGET)

enum { BUFFER_SELECTED, VIEW_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The data or the style changed: the cached picture is stale. */
static void
invalidate (MlTimelineView *self)
{
  self->gen++;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
view_changed (MlTimelineView *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_signal_emit (self, signals[VIEW_CHANGED], 0);
}

/* A node that paints @img (an image surface with its device scale set)
 * at @x, @y: replaying it is one blit, where a node drawn with vector
 * commands replays every command each frame. */
static GskRenderNode *
node_from_image (cairo_surface_t *img, double x, double y, double w, double h)
{
  GskRenderNode *node = gsk_cairo_node_new (&GRAPHENE_RECT_INIT ((float) x, (float) y, (float) w, (float) h));
  cairo_t *cr = gsk_cairo_node_get_draw_context (node);
  cairo_set_source_surface (cr, img, x, y);
  cairo_set_operator (cr, CAIRO_OPERATOR_SOURCE);
  cairo_paint (cr);
  cairo_destroy (cr);
  return node;
}

static void
set_cache (MlTimelineView *self, cairo_surface_t *img, int w, int h, const MlView *view, guint gen)
{
  g_clear_pointer (&self->cache, gsk_render_node_unref);
  g_clear_pointer (&self->cache_img, cairo_surface_destroy);
  self->cache_img = img;
  self->cache = node_from_image (img, 0, 0, w, h);
  self->cache_w = w, self->cache_h = h;
  self->cache_view = *view;
  self->cache_gen = gen;
}

/* ---- layout ----------------------------------------------------------------- */

static void
update_layout (MlTimelineView *self, int w, int h)
{
  if (!self->scene || w <= 0 || h <= 0)
    return;
  ml_figure_layout (self->scene, &self->style, w, h, &self->fl);
  ml_view_set_plot (&self->view, self->fl.layout.x, self->fl.layout.y, self->fl.layout.w, self->fl.layout.h);
}

/* The static layer: pure, so a worker thread can call it too. */
static void
draw_static_layer (cairo_t *cr, const MlScene *s, const MlStyle *style, const MlView *v, const MlFigureLayout *fl)
{
  MlRgb bg = ml_style_bg (style);
  cairo_set_source_rgb (cr, bg.r, bg.g, bg.b);
  cairo_paint (cr);
  ml_timeline_draw_layout (cr, v, s, style);
  ml_timeline_draw_addr_axis (cr, v, s, style);
  if (style->show_curves)
    ml_timeline_draw_curves (cr, v, s, style, &fl->curves);
  if (style->show_frag)
    ml_timeline_draw_frag (cr, v, s, style, &fl->frag);
  ml_timeline_draw_time_axis (cr, v, s, style, &fl->time_axis);
  if (style->show_legend)
    ml_timeline_draw_legend (cr, s, style, &fl->legend);
}

static void
draw_static (MlTimelineView *self, cairo_t *cr, const MlView *v, const MlFigureLayout *fl)
{
  draw_static_layer (cr, self->scene, &self->style, v, fl);
}

/* ---- drawing in a worker ----------------------------------------------------- */

typedef struct {
  MlDocument     *doc;     /* keeps the scene alive */
  const MlScene  *scene;
  MlStyle         style;
  MlView          view;
  MlFigureLayout  fl;
  int             w, h, scale;
  guint           gen;
  double          ms;
} RenderJob;

static void
render_job_free (gpointer p)
{
  RenderJob *j = p;
  ml_document_unref (j->doc);
  g_free (j);
}

static void
render_thread (GTask *task, gpointer src, gpointer data, GCancellable *c)
{
  RenderJob *j = data;
  gint64 t0 = g_get_monotonic_time ();
  cairo_surface_t *surf = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, j->w * j->scale, j->h * j->scale);
  cairo_surface_set_device_scale (surf, j->scale, j->scale);
  cairo_t *cr = cairo_create (surf);
  draw_static_layer (cr, j->scene, &j->style, &j->view, &j->fl);
  cairo_destroy (cr);
  cairo_surface_flush (surf);
  j->ms = (double) (g_get_monotonic_time () - t0) / 1000.0;
  g_task_return_pointer (task, surf, (GDestroyNotify) cairo_surface_destroy);
}

static void
render_done (GObject *src, GAsyncResult *res, gpointer user)
{
  MlTimelineView *self = ML_TIMELINE_VIEW (src);
  RenderJob *j = g_task_get_task_data (G_TASK (res));
  cairo_surface_t *surf = g_task_propagate_pointer (G_TASK (res), NULL);
  self->rendering = FALSE;
  /* a widget disposed while the worker drew has no document any more */
  if (surf && j->gen == self->gen && self->doc)
    {
      set_cache (self, cairo_surface_reference (surf), j->w, j->h, &j->view, j->gen);
      self->render_ms = j->ms;
      g_array_append_val (self->render_times, j->ms);
    }
  if (surf)
    cairo_surface_destroy (surf);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
start_render (MlTimelineView *self, int w, int h)
{
  RenderJob *j = g_new0 (RenderJob, 1);
  j->doc = ml_document_ref (self->doc);
  j->scene = self->scene;
  j->style = self->style;
  j->view = self->view;
  j->fl = self->fl;
  j->w = w, j->h = h;
  j->scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  j->gen = self->gen;
  self->rendering = TRUE;
  GTask *task = g_task_new (self, NULL, render_done, NULL);
  g_task_set_task_data (task, j, render_job_free);
  g_task_run_in_thread (task, render_thread);
  g_object_unref (task);
}

/* Shows the cached picture (drawn for cache_view) at the current view:
 * the plot columns moved and stretched in time, the margins as they are. */
static void
append_transformed_cache (MlTimelineView *self, GtkSnapshot *snap, int width, int height)
{
  const MlView *v = &self->view, *c = &self->cache_view;
  /* in the axis' unit (ticks, or time on a real-time axis): x is linear in it */
  double v0 = ml_view_axis_value (v, v->t0), v1 = ml_view_axis_value (v, v->t1);
  double c0 = ml_view_axis_value (v, c->t0), c1 = ml_view_axis_value (v, c->t1);
  double span = v1 - v0;
  double a = (c1 - c0) / span;
  double b = v->px + (c0 - v0) * v->pw / span - c->px * a;
  double top_fixed = self->style.show_legend && self->fl.legend.h > 0 ? self->fl.legend.y : height;
  MlRgb bg = ml_style_bg (&self->style);
  /* the margins and the legend, as drawn */
  graphene_rect_t fixed[] = {
    GRAPHENE_RECT_INIT (0, 0, (float) v->px, height),
    GRAPHENE_RECT_INIT ((float) (v->px + v->pw), 0, (float) (width - v->px - v->pw), height),
    GRAPHENE_RECT_INIT ((float) v->px, (float) top_fixed, (float) v->pw, (float) (height - top_fixed)),
  };
  for (gsize i = 0; i < G_N_ELEMENTS (fixed); i++)
    {
      gtk_snapshot_push_clip (snap, &fixed[i]);
      gtk_snapshot_append_node (snap, self->cache);
      gtk_snapshot_pop (snap);
    }
  graphene_rect_t cols = GRAPHENE_RECT_INIT ((float) v->px, 0, (float) v->pw, (float) top_fixed);
  /* the plot columns: the old picture moved and stretched in time (only
   * its plot columns move; its margins stay). Done by hand with
   * nearest-pixel sampling: only x scales, so each output column copies
   * one source column, where cairo's scaled paint of a shrinking picture
   * costs more than a frame */
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  cairo_surface_t *dst = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) ceil (cols.size.width * scale),
                                                     (int) ceil (cols.size.height * scale));
  cairo_surface_set_device_scale (dst, scale, scale);
  cairo_surface_t *src = self->cache_img;
  guint32 bgpx = 0xff000000u | ((guint32) (bg.r * 255 + 0.5) << 16) | ((guint32) (bg.g * 255 + 0.5) << 8)
                 | (guint32) (bg.b * 255 + 0.5);
  if (cairo_surface_get_type (dst) == CAIRO_SURFACE_TYPE_IMAGE && src
      && cairo_surface_get_type (src) == CAIRO_SURFACE_TYPE_IMAGE
      && cairo_image_surface_get_format (dst) == CAIRO_FORMAT_ARGB32
      && cairo_image_surface_get_format (src) == CAIRO_FORMAT_ARGB32)
    {
      cairo_surface_flush (dst);
      cairo_surface_flush (src);
      double sx_scale, sy_scale;
      cairo_surface_get_device_scale (src, &sx_scale, &sy_scale);
      int dw = cairo_image_surface_get_width (dst), dh = cairo_image_surface_get_height (dst);
      int sw = cairo_image_surface_get_width (src), sh = cairo_image_surface_get_height (src);
      int dstride = cairo_image_surface_get_stride (dst) / 4, sstride = cairo_image_surface_get_stride (src) / 4;
      guint32 *dd = (guint32 *) cairo_image_surface_get_data (dst);
      const guint32 *sd = (const guint32 *) cairo_image_surface_get_data (src);
      double dscale = dw / MAX (cols.size.width, 1.0f);
      int *map = g_new (int, dw);
      for (int x = 0; x < dw; x++)
        {
          double wx = cols.origin.x + (x + 0.5) / dscale;     /* widget x now */
          double ox = (wx - b) / a;                            /* widget x in the old picture */
          map[x] = ox >= c->px && ox < c->px + c->pw ? (int) (ox * sx_scale) : -1;
          if (map[x] >= sw)
            map[x] = -1;
        }
      for (int y = 0; y < dh; y++)
        {
          int sy = (int) ((y + 0.5) / dscale * sy_scale);
          guint32 *drow = dd + (gsize) y * dstride;
          const guint32 *srow = sd + (gsize) MIN (sy, sh - 1) * sstride;
          for (int x = 0; x < dw; x++)
            drow[x] = map[x] >= 0 ? srow[map[x]] : bgpx;
        }
      g_free (map);
      cairo_surface_mark_dirty (dst);
    }
  GskRenderNode *node = node_from_image (dst, cols.origin.x, cols.origin.y, cols.size.width, cols.size.height);
  cairo_surface_destroy (dst);
  gtk_snapshot_append_node (snap, node);
  gsk_render_node_unref (node);
}

/* While the first picture of a large trace is drawn: the background and
 * a word on what is happening. */
static void
append_placeholder (MlTimelineView *self, GtkSnapshot *snap, int width, int height)
{
  cairo_t *cr = gtk_snapshot_append_cairo (snap, &GRAPHENE_RECT_INIT (0, 0, width, height));
  MlRgb bg = ml_style_bg (&self->style);
  cairo_set_source_rgb (cr, bg.r, bg.g, bg.b);
  cairo_paint (cr);
  PangoLayout *pl = gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL);
  g_autofree char *msg = g_strdup_printf ("Drawing %zu buffers…", self->scene->n_items);
  pango_layout_set_text (pl, msg, -1);
  int tw, th;
  pango_layout_get_pixel_size (pl, &tw, &th);
  cairo_set_source_rgb (cr, 0.45, 0.45, 0.5);
  cairo_move_to (cr, (width - tw) / 2.0, (height - th) / 2.0);
  pango_cairo_show_layout (cr, pl);
  g_object_unref (pl);
  cairo_destroy (cr);
}

/* Outlines @buffer (a buffer index; -1 or not drawn: nothing). */
static void
mark_buffer (MlTimelineView *self, cairo_t *cr, const MlView *v, long buffer, MlMark mark)
{
  if (buffer < 0 || !self->item_of || (gsize) buffer >= self->doc->bufs->n || self->item_of[buffer] < 0)
    return;
  ml_timeline_draw_highlight (cr, v, self->scene, &self->style, (size_t) self->item_of[buffer], mark);
}

/* Highlights, hover, selection and the marker: the renderer draws them,
 * in the widget and in exports of what it shows alike. */
static void
draw_overlays (MlTimelineView *self, cairo_t *cr, const MlView *v, const MlFigureLayout *fl, gboolean interactive)
{
  for (gsize i = 0; i < self->n_highlights; i++)
    mark_buffer (self, cr, v, self->highlights[i], ML_MARK_MATCH);
  if (interactive && self->hover >= 0 && self->hover != self->selected)
    mark_buffer (self, cr, v, self->hover, ML_MARK_HOVER);
  mark_buffer (self, cr, v, self->selected, ML_MARK_SELECTED);
  double bottom = fl->time_axis.y;
  ml_timeline_draw_marker (cr, v, self->scene, &self->style, self->marker, self->marker_label, bottom);
  if (interactive && self->selecting)
    {
      double x0 = MIN (self->drag_x, self->drag_x + self->drag_dx), x1 = MAX (self->drag_x, self->drag_x + self->drag_dx);
      x0 = MAX (x0, v->px), x1 = MIN (x1, v->px + v->pw);
      cairo_set_source_rgba (cr, 0.2, 0.45, 0.85, 0.18);
      cairo_rectangle (cr, x0, v->py, x1 - x0, bottom - v->py);
      cairo_fill_preserve (cr);
      cairo_set_source_rgba (cr, 0.2, 0.45, 0.85, 0.8);
      cairo_set_line_width (cr, 1);
      cairo_stroke (cr);
    }
}

static gboolean
same_view (const MlView *a, const MlView *b)
{
  return a->t0 == b->t0 && a->t1 == b->t1 && a->a0 == b->a0 && a->a1 == b->a1 && a->warp == b->warp
         && a->px == b->px && a->py == b->py && a->pw == b->pw && a->ph == b->ph;
}

static void
ml_timeline_view_snapshot (GtkWidget *w, GtkSnapshot *snap)
{
  MlTimelineView *self = ML_TIMELINE_VIEW (w);
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  if (width <= 0 || height <= 0)
    return;
  if (!self->scene)
    {
      cairo_t *cr = gtk_snapshot_append_cairo (snap, &GRAPHENE_RECT_INIT (0, 0, width, height));
      cairo_set_source_rgb (cr, 1, 1, 1);
      cairo_paint (cr);
      if (self->run && self->run->status < 0)
        {
          PangoLayout *pl = gtk_widget_create_pango_layout (w, NULL);
          g_autofree char *msg = g_strdup_printf ("%s failed: %s", self->run->strategy, self->run->error);
          pango_layout_set_text (pl, msg, -1);
          pango_layout_set_width (pl, (width - 40) * PANGO_SCALE);
          cairo_set_source_rgb (cr, 0.7, 0.1, 0.1);
          cairo_move_to (cr, 20, 20);
          pango_cairo_show_layout (cr, pl);
          g_object_unref (pl);
        }
      cairo_destroy (cr);
      return;
    }
  gint64 t0 = g_get_monotonic_time ();
  update_layout (self, width, height);
  gboolean fresh = self->cache && self->cache_gen == self->gen && self->cache_w == width
                   && self->cache_h == height && same_view (&self->cache_view, &self->view);
  /* a stale picture that can stand in while a worker draws: same data,
   * same size, same addresses (time moves and zooms are transformed) */
  gboolean usable = self->cache && self->cache_w == width && self->cache_h == height
                    && self->cache_view.a0 == self->view.a0 && self->cache_view.a1 == self->view.a1;
  /* expensive: the last drawing took more than the budget, or there are
   * so many buffers that the first one will (a new large trace) */
  gboolean expensive = self->render_ms >= ML_TIMELINE_SYNC_MS || self->scene->n_items > ML_TIMELINE_BIG;
  if (!fresh && !expensive)
    {
      /* cheap enough (or nothing to show meanwhile): draw it now */
      gint64 r0 = g_get_monotonic_time ();
      int scale = gtk_widget_get_scale_factor (w);
      cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width * scale, height * scale);
      cairo_surface_set_device_scale (img, scale, scale);
      cairo_t *cr = cairo_create (img);
      draw_static (self, cr, &self->view, &self->fl);
      cairo_destroy (cr);
      cairo_surface_flush (img);
      set_cache (self, img, width, height, &self->view, self->gen);
      self->render_ms = (double) (g_get_monotonic_time () - r0) / 1000.0;
      g_array_append_val (self->render_times, self->render_ms);
      fresh = TRUE;
    }
  if (fresh && !self->first_picture_us)
    self->first_picture_us = g_get_monotonic_time ();
  if (fresh)
    gtk_snapshot_append_node (snap, self->cache);
  else
    {
      if (usable)
        append_transformed_cache (self, snap, width, height);
      else
        append_placeholder (self, snap, width, height);
      if (!self->rendering)
        start_render (self, width, height);
    }
  cairo_t *cr = gtk_snapshot_append_cairo (snap, &GRAPHENE_RECT_INIT (0, 0, width, height));
  draw_overlays (self, cr, &self->view, &self->fl, TRUE);
  cairo_destroy (cr);
  self->draw_count++;
  self->last_draw_us = g_get_monotonic_time () - t0;
}

void
ml_timeline_view_draw_to (MlTimelineView *self, cairo_t *cr, int width, int height)
{
  if (!self->scene)
    return;
  MlFigureLayout fl;
  ml_figure_layout (self->scene, &self->style, width, height, &fl);
  MlView v = self->view;
  ml_view_set_plot (&v, fl.layout.x, fl.layout.y, fl.layout.w, fl.layout.h);
  cairo_save (cr);
  draw_static (self, cr, &v, &fl);
  draw_overlays (self, cr, &v, &fl, FALSE);
  /* the title the widget shows in a label above it */
  if (self->run)
    {
      PangoLayout *pl = pango_cairo_create_layout (cr);
      PangoFontDescription *fd = pango_font_description_from_string ("Sans 9");
      pango_layout_set_font_description (pl, fd);
      char a[32], b[32];
      g_autofree char *base = g_path_get_basename (self->doc->box->path);
      g_autofree char *m = g_markup_printf_escaped ("<b>%s</b> · <b>%s</b>   peak %s   lower bound %s   overhead %.1f%%",
                                                    base, self->run->strategy,
                                                    ml_format_size (self->run->metrics.peak, a, sizeof a),
                                                    ml_format_size (self->run->metrics.lower_bound, b, sizeof b),
                                                    self->run->metrics.overhead * 100);
      pango_layout_set_markup (pl, m, -1);
      cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
      cairo_move_to (cr, fl.layout.x, 2);
      pango_cairo_show_layout (cr, pl);
      pango_font_description_free (fd);
      g_object_unref (pl);
    }
  cairo_restore (cr);
}

/* ---- hit testing and tooltips ------------------------------------------------ */

long
ml_timeline_view_pick (MlTimelineView *self, double x, double y)
{
  if (!self->scene)
    return -1;
  update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  long item = ml_timeline_hit (&self->view, self->scene, &self->style, x, y);
  return item < 0 ? -1 : (long) self->scene->items[item].buffer;
}

gboolean
ml_timeline_view_buffer_point (MlTimelineView *self, guint32 buffer, double *x, double *y)
{
  if (!self->scene || buffer >= self->doc->bufs->n || self->item_of[buffer] < 0)
    return FALSE;
  update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  if (self->style.plot == ML_PLOT_ACTIVE)
    return ml_active_item_point (self->scene, &self->view, (size_t) self->item_of[buffer], x, y);
  const MlSceneItem *it = &self->scene->items[self->item_of[buffer]];
  double t0 = MAX ((double) it->start, self->view.t0), t1 = MIN ((double) it->end, self->view.t1);
  double a0 = MAX ((double) it->addr, self->view.a0), a1 = MIN ((double) (it->addr + it->size), self->view.a1);
  if (t1 <= t0 || a1 <= a0)
    return FALSE;
  *x = ml_view_time_to_x (&self->view, (t0 + t1) / 2);
  *y = ml_view_addr_to_y (&self->view, (a0 + a1) / 2);
  return TRUE;
}

static void
append_tick (MlTimelineView *self, GString *s, guint64 tick)
{
  g_string_append_printf (s, "%" G_GUINT64_FORMAT, tick);
  gint64 ns = ml_document_tick_time (self->doc, tick);
  if (ns >= 0)
    g_string_append_printf (s, " (%.3f ms)", (double) ns / 1e6);
}

static gboolean
is_python_frame (const char *file)
{
  return file && g_str_has_suffix (file, ".py");
}

/* The allocation's stack for the tooltip: its Python frames (innermost
 * first), the framework's C++ frames folded into one line; without
 * Python frames the first ones of the stack. */
static void
append_stack (MlTimelineView *self, GString *s, guint32 stack)
{
  const MlTrace *t = ml_document_trace (self->doc);
  if (!stack || stack >= t->n_stacks || !t->stacks[stack].n)
    return;
  const MlStack *sk = &t->stacks[stack];
  guint n_py = 0;
  for (guint32 f = 0; f < sk->n; f++)
    n_py += is_python_frame (ml_trace_str (t, t->frames[sk->first + f].file));
  g_string_append (s, "\n<small>");
  guint shown = 0, limit = 12;
  for (guint32 f = 0; f < sk->n && shown < limit; f++)
    {
      const MlFrame *fr = &t->frames[sk->first + f];
      const char *file = ml_trace_str (t, fr->file);
      if (n_py && !is_python_frame (file))
        continue;
      char sl[256];
      g_autofree char *func = g_markup_escape_text (ml_trace_str (t, fr->func), -1);
      g_autofree char *where = g_markup_escape_text (file && *file ? ml_short_label (file, sl, sizeof sl) : "", -1);
      g_string_append_printf (s, "\n%s  <tt>%s:%u</tt>", func, where, fr->line);
      shown++;
    }
  guint folded = sk->n - shown;
  if (folded)
    g_string_append_printf (s, "\n<i>+ %u %s</i>", folded,
                            n_py ? (folded == 1 ? "framework frame (C++)" : "framework frames (C++)")
                                 : (folded == 1 ? "more frame" : "more frames"));
  g_string_append (s, "</small>");
}

static gboolean
on_query_tooltip (GtkWidget *w, int x, int y, gboolean keyboard, GtkTooltip *tip, gpointer user)
{
  MlTimelineView *self = ML_TIMELINE_VIEW (w);
  if (!self->scene || keyboard || self->panning || self->selecting)
    return FALSE;
  g_autofree char *markup = ml_timeline_view_dup_markup_at (self, x, y);
  if (!markup)
    return FALSE;
  gtk_tooltip_set_markup (tip, markup);
  return TRUE;
}

char *
ml_timeline_view_dup_buffer_markup (MlTimelineView *self, long k)
{
  if (!self->scene || k < 0 || (gsize) k >= self->doc->bufs->n)
    return NULL;
  const MlBuffer *b = &self->doc->bufs->buf[k];
  char tmp[32], a[32], c[32];
  GString *s = g_string_new (NULL);
  g_autofree char *label = g_markup_escape_text (ml_document_buffer_label (self->doc, (guint32) k, tmp, sizeof tmp), -1);
  g_string_append_printf (s, "<b>%s</b>\n", label);
  g_string_append_printf (s, "size %s", ml_format_size (b->size, a, sizeof a));
  if (b->rsize != b->size)
    g_string_append_printf (s, " (%s aligned)", ml_format_size (b->rsize, c, sizeof c));
  g_string_append (s, "\nlifetime ");
  append_tick (self, s, b->start);
  g_string_append (s, " → ");
  append_tick (self, s, b->end);
  g_string_append_printf (s, "%s\nstream %u · id %" G_GUINT64_FORMAT "\n", (b->flags & ML_BUF_NEVER_FREED) ? " (never freed)" : "",
                          b->stream, b->id);
  const MlPlan *p = self->run->plan;
  g_string_append_printf (s, "offset 0x%" G_GINT64_MODIFIER "x in segment %u", p->offset[k], p->segment[k]);
  guint64 addr = ml_run_buffer_addr (self->run, (guint32) k);
  if (p->n_segments && p->segments[p->segment[k]].addr)
    g_string_append_printf (s, "\naddress 0x%" G_GINT64_MODIFIER "x", addr);
  append_stack (self, s, b->stack);
  return g_string_free (s, FALSE);
}

char *
ml_timeline_view_dup_oom_markup (MlTimelineView *self)
{
  if (!self->scene || !self->scene->oom_drawn)
    return NULL;
  const MlOom *o = &self->run->plan->oom;
  const MlTrace *t = ml_document_trace (self->doc);
  char a[32], b[32], c[32], d[32], e[32];
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "<b>Refused: %s at tick ", ml_format_size (o->request, a, sizeof a));
  append_tick (self, s, o->tick);
  g_string_append_printf (s, "</b>\n%s (%s)\nlive %s · reserved %s · free %s · largest free block %s",
                          o->buffer < self->doc->bufs->n ? "the strategy ran out of the capacity"
                                                         : "the real allocator's OOM, recorded in the trace",
                          ml_oom_verdict_name (o->verdict), ml_format_size (o->live, b, sizeof b),
                          ml_format_size (o->reserved, c, sizeof c), ml_format_size (o->free_bytes, d, sizeof d),
                          ml_format_size (o->largest_free, e, sizeof e));
  /* the request's stack: the buffer's, or the trace's OOM event's */
  guint32 stack = 0;
  if (o->buffer < self->doc->bufs->n)
    stack = self->doc->bufs->buf[o->buffer].stack;
  else
    for (size_t i = 0; i < t->n_events && !stack; i++)
      if (t->events[i].kind == ML_EV_OOM && t->events[i].tick == o->tick)
        stack = t->events[i].stack;
  append_stack (self, s, stack);
  return g_string_free (s, FALSE);
}

char *
ml_timeline_view_dup_markup_at (MlTimelineView *self, double x, double y)
{
  if (!self->scene)
    return NULL;
  MlRect r;
  if (self->style.show_oom && ml_timeline_oom_request_box (&self->view, self->scene, &self->style, &r) && x >= r.x
      && x < r.x + r.w && y >= r.y && y < r.y + r.h && y >= self->view.py && y <= self->view.py + self->view.ph)
    return ml_timeline_view_dup_oom_markup (self);
  return ml_timeline_view_dup_buffer_markup (self, ml_timeline_view_pick (self, x, y));
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

/* ---- input -------------------------------------------------------------------- */

static void
on_motion (GtkEventControllerMotion *m, double x, double y, MlTimelineView *self)
{
  self->pointer_x = x, self->pointer_y = y;
  if (!self->scene || self->panning || self->selecting)
    return;
  long k = ml_timeline_view_pick (self, x, y);
  if (k != self->hover)
    {
      self->hover = k;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
on_leave (GtkEventControllerMotion *m, MlTimelineView *self)
{
  if (self->hover >= 0)
    {
      self->hover = -1;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
zoom_at (MlTimelineView *self, double factor, double x, double y, gboolean addresses)
{
  if (!self->scene)
    return;
  update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  x = CLAMP (x, self->view.px, self->view.px + self->view.pw);
  y = CLAMP (y, self->view.py, self->view.py + self->view.ph);
  ml_view_zoom (&self->view, addresses ? 1.0 : factor, addresses ? factor : 1.0, x, y);
  view_changed (self);
}

static gboolean
on_scroll (GtkEventControllerScroll *c, double dx, double dy, MlTimelineView *self)
{
  if (!self->scene)
    return FALSE;
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (c));
  if (mods & GDK_CONTROL_MASK)
    {
      double f = pow (1.2, -dy);
      zoom_at (self, f, self->pointer_x, self->pointer_y, (mods & GDK_SHIFT_MASK) != 0);
      return TRUE;
    }
  update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  if (mods & GDK_SHIFT_MASK)
    ml_view_pan (&self->view, 0, -dy * 40);
  else
    ml_view_pan (&self->view, -(dx + dy) * 40, 0);
  view_changed (self);
  return TRUE;
}

static void
on_pinch_begin (GtkGesture *g, GdkEventSequence *seq, MlTimelineView *self)
{
  self->zoom_scale = 1.0;
}

static void
on_pinch (GtkGestureZoom *g, double scale, MlTimelineView *self)
{
  double cx, cy;
  if (scale <= 0 || !gtk_gesture_get_bounding_box_center (GTK_GESTURE (g), &cx, &cy))
    return;
  zoom_at (self, scale / self->zoom_scale, cx, cy, FALSE);
  self->zoom_scale = scale;
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, MlTimelineView *self)
{
  if (!self->scene)
    return;
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (g));
  self->drag_x = x, self->drag_y = y;
  self->drag_dx = self->drag_dy = 0;
  self->drag_start_view = self->view;
  self->selecting = (mods & GDK_SHIFT_MASK) != 0;
  self->panning = FALSE;
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void pan_to (MlTimelineView *self, double dx, double dy);

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, MlTimelineView *self)
{
  if (!self->scene)
    return;
  self->drag_dx = dx, self->drag_dy = dy;
  if (self->selecting)
    {
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return;
    }
  if (!self->panning && fabs (dx) + fabs (dy) < 4)
    return;
  pan_to (self, dx, dy);
}

/* Pans to the drag's total offset from where it began. */
static void
pan_to (MlTimelineView *self, double dx, double dy)
{
  self->panning = TRUE;
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
  MlView v = self->drag_start_view;
  v.px = self->view.px, v.py = self->view.py, v.pw = self->view.pw, v.ph = self->view.ph;
  /* pan vertically only when the addresses are zoomed in */
  gboolean addr_zoomed = v.a1 - v.a0 < v.a_max - v.a_min;
  ml_view_pan (&v, dx, addr_zoomed ? dy : 0);
  self->view = v;
  view_changed (self);
}

static void
on_drag_end (GtkGestureDrag *g, double dx, double dy, MlTimelineView *self)
{
  if (!self->scene)
    return;
  if (self->selecting)
    {
      self->selecting = FALSE;
      double x0 = MIN (self->drag_x, self->drag_x + dx), x1 = MAX (self->drag_x, self->drag_x + dx);
      if (x1 - x0 >= 3)
        {
          double t0 = ml_view_x_to_time (&self->view, x0), t1 = ml_view_x_to_time (&self->view, x1);
          ml_timeline_view_set_time_span (self, t0, t1);
        }
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  else if (self->panning || fabs (dx) + fabs (dy) >= 4)
    pan_to (self, dx, dy);   /* the last motion may come with the release */
  else
    {
      /* a click: pick through the hit test */
      ml_timeline_view_select_buffer (self, ml_timeline_view_pick (self, self->drag_x, self->drag_y));
    }
  self->panning = FALSE;
  gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
}

/* ---- public API --------------------------------------------------------------- */

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
  view_changed (self);
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
  update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
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
  update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  invalidate (self);
}

static void
zoom_center (MlTimelineView *self, double f)
{
  zoom_at (self, f, self->view.px + self->view.pw / 2, self->view.py + self->view.ph / 2, FALSE);
}

void ml_timeline_view_zoom_in  (MlTimelineView *self) { zoom_center (self, 2.0); }
void ml_timeline_view_zoom_out (MlTimelineView *self) { zoom_center (self, 0.5); }

void
ml_timeline_view_zoom_fit (MlTimelineView *self)
{
  if (!self->scene)
    return;
  ml_view_fit (&self->view);
  view_changed (self);
}

void
ml_timeline_view_pan (MlTimelineView *self, double fraction)
{
  if (!self->scene)
    return;
  ml_view_pan (&self->view, -fraction * self->view.pw, 0);
  view_changed (self);
}

void
ml_timeline_view_set_time_span (MlTimelineView *self, double t0, double t1)
{
  if (!self->scene)
    return;
  double o0 = self->view.t0, o1 = self->view.t1;
  ml_view_set_time (&self->view, t0, t1);
  if (o0 != self->view.t0 || o1 != self->view.t1)
    view_changed (self);
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
  invalidate (self);
  view_changed (self);
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
  invalidate (self);
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
  invalidate (self);
  view_changed (self);
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

void
ml_timeline_view_set_marker (MlTimelineView *self, double tick, const char *label)
{
  self->marker = tick;
  g_free (self->marker_label);
  self->marker_label = g_strdup (label);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

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

gboolean
ml_timeline_view_is_settled (MlTimelineView *self)
{
  return !self->rendering && (!self->scene || (self->cache && self->cache_gen == self->gen
                                               && same_view (&self->cache_view, &self->view)));
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
  update_layout (ML_TIMELINE_VIEW (w), width, height);
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
  wc->snapshot = ml_timeline_view_snapshot;
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
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (on_query_tooltip), NULL);

  GtkEventController *motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);

  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);

  GtkGesture *zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (on_pinch_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (on_pinch), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (zoom));

  GtkGesture *drag = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
}

GtkWidget *
ml_timeline_view_new (void)
{
  return g_object_new (ML_TYPE_TIMELINE_VIEW, NULL);
}
