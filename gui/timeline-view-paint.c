/* timeline-view-paint.c — MlTimelineView: drawing.
 *
 * The static layer (buffers, curves, axes: render/timeline.h) is kept as
 * a picture and replayed with one blit while nothing changes. When a full
 * drawing costs more than a frame, a worker thread draws it, and the
 * frames in between show the last picture with its plot columns moved and
 * stretched to the current time span (or, for a new large trace, a word
 * on what is being drawn). Highlights, hover, selection and the marker
 * are drawn on top every frame, and by ml_timeline_view_draw_to() for
 * exports of what the view shows.
 */
#include "gui/timeline-view-private.h"

#include <math.h>

#include "sim/base/units.h"

/* A full drawing cheaper than this happens in the frame itself. */
#define ML_TIMELINE_SYNC_MS 5.0
/* Scenes with more items than this are drawn in the worker from the start. */
#define ML_TIMELINE_BIG 200000

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

/* ---- the static layer ---------------------------------------------------------- */

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

/* ---- the frame ------------------------------------------------------------------ */

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

/* Nothing to draw: a blank, and why when the run failed. */
static void
append_no_scene (MlTimelineView *self, GtkSnapshot *snap, int width, int height)
{
  cairo_t *cr = gtk_snapshot_append_cairo (snap, &GRAPHENE_RECT_INIT (0, 0, width, height));
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  if (self->run && self->run->status < 0)
    {
      PangoLayout *pl = gtk_widget_create_pango_layout (GTK_WIDGET (self), NULL);
      g_autofree char *msg = g_strdup_printf ("%s failed: %s", self->run->strategy, self->run->error);
      pango_layout_set_text (pl, msg, -1);
      pango_layout_set_width (pl, (width - 40) * PANGO_SCALE);
      cairo_set_source_rgb (cr, 0.7, 0.1, 0.1);
      cairo_move_to (cr, 20, 20);
      pango_cairo_show_layout (cr, pl);
      g_object_unref (pl);
    }
  cairo_destroy (cr);
}

/* Draws the static layer of the current view in the frame, as the cache. */
static void
draw_cache_now (MlTimelineView *self, int width, int height)
{
  gint64 r0 = g_get_monotonic_time ();
  int scale = gtk_widget_get_scale_factor (GTK_WIDGET (self));
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, width * scale, height * scale);
  cairo_surface_set_device_scale (img, scale, scale);
  cairo_t *cr = cairo_create (img);
  draw_static (self, cr, &self->view, &self->fl);
  cairo_destroy (cr);
  cairo_surface_flush (img);
  set_cache (self, img, width, height, &self->view, self->gen);
  self->render_ms = (double) (g_get_monotonic_time () - r0) / 1000.0;
  g_array_append_val (self->render_times, self->render_ms);
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

void
_ml_timeline_view_snapshot (GtkWidget *w, GtkSnapshot *snap)
{
  MlTimelineView *self = ML_TIMELINE_VIEW (w);
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  if (width <= 0 || height <= 0)
    return;
  if (!self->scene)
    {
      append_no_scene (self, snap, width, height);
      return;
    }
  gint64 t0 = g_get_monotonic_time ();
  _ml_timeline_view_update_layout (self, width, height);
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
      draw_cache_now (self, width, height);
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

gboolean
ml_timeline_view_is_settled (MlTimelineView *self)
{
  return !self->rendering && (!self->scene || (self->cache && self->cache_gen == self->gen
                                               && same_view (&self->cache_view, &self->view)));
}
