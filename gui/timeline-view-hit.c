/* timeline-view-hit.c — MlTimelineView: what is where.
 *
 * The buffer under a point (the renderer's hit test over the same layout
 * the frame draws), where a buffer is drawn, and what hovering shows:
 * a buffer's label, size, lifetime, placement and stack, or the refused
 * request of an OOM.
 */
#include "gui/timeline-view-private.h"

#include "sim/base/units.h"

long
ml_timeline_view_pick (MlTimelineView *self, double x, double y)
{
  if (!self->scene)
    return -1;
  _ml_timeline_view_update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  long item = ml_timeline_hit (&self->view, self->scene, &self->style, x, y);
  return item < 0 ? -1 : (long) self->scene->items[item].buffer;
}

gboolean
ml_timeline_view_buffer_point (MlTimelineView *self, guint32 buffer, double *x, double *y)
{
  if (!self->scene || buffer >= self->doc->bufs->n || self->item_of[buffer] < 0)
    return FALSE;
  _ml_timeline_view_update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
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

/* ---- tooltips ------------------------------------------------------------------- */

static void
append_tick (MlTimelineView *self, GString *s, guint64 tick)
{
  g_string_append_printf (s, "%" G_GUINT64_FORMAT, tick);
  gint64 ns = ml_trace_tick_time (ml_document_trace (self->doc), tick);
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
    n_py += is_python_frame (ml_trace_str (t, ml_trace_stack_frame (t, sk, f)->file));
  g_string_append (s, "\n<small>");
  guint shown = 0, limit = 12;
  for (guint32 f = 0; f < sk->n && shown < limit; f++)
    {
      const MlFrame *fr = ml_trace_stack_frame (t, sk, f);
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
  char sl[ML_STREAM_LABEL_MAX];
  const MlTrace *tr = self->doc->bufs->trace;
  g_string_append_printf (s, "%s\nstream %s · id %" G_GUINT64_FORMAT "\n", (b->flags & ML_BUF_NEVER_FREED) ? " (never freed)" : "",
                          tr ? ml_trace_stream_label (tr, b->stream, sl) : "?", b->id);
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
  MlLegendEntry e;
  if (self->style.show_legend && ml_timeline_legend_hit (self->scene, &self->style, &self->fl.legend, x, y, &e))
    return g_markup_escape_text (e.full, -1);   /* the whole label, where the legend shortened it */
  long k = ml_timeline_view_pick (self, x, y);
  long band = k < 0 && self->style.plot != ML_PLOT_ACTIVE && x >= self->view.px && x <= self->view.px + self->view.pw
                ? ml_scene_band_at (self->scene, &self->view, y) : -1;
  if (band >= 0)
    {
      /* no buffer there: the band of (pool, stream) it is in, whose label
       * a thin band may lack */
      const MlSceneBand *b = &self->scene->bands[band];
      return g_markup_printf_escaped ("<b>%s</b>\n%zu segment%s", b->label, b->n, b->n == 1 ? "" : "s");
    }
  return ml_timeline_view_dup_buffer_markup (self, k);
}
