/* details-page.c — MlDetailsPage. */
#include "gui/details-page.h"

#include "sim/analysis/find.h"
#include "sim/analysis/lanes.h"
#include "sim/base/units.h"

struct _MlDetailsPage {
  GtkWidget  parent;
  GtkWidget *scrolled;
  GtkWidget *details, *stack;
};

G_DEFINE_FINAL_TYPE (MlDetailsPage, ml_details_page, GTK_TYPE_WIDGET)

static void
append_stack (GString *st, const MlTrace *t, const MlBuffer *b)
{
  if (!b->stack || b->stack >= t->n_stacks)
    {
      g_string_append (st, "No stack frames in this trace.\n(PyTorch snapshots and the CUPTI tracer record them.)");
      return;
    }
  const MlStack *sk = &t->stacks[b->stack];
  const char *site = ml_trace_str (t, sk->site);
  g_string_append_printf (st, "Allocated at %s (innermost first):\n\n", site && *site ? site : "(no call site)");
  for (guint32 f = 0; f < sk->n; f++)
    {
      const MlFrame *fr = ml_trace_stack_frame (t, sk, f);
      const char *file = ml_trace_str (t, fr->file);
      if (!file || !*file || g_str_equal (file, "??"))
        g_string_append_printf (st, "%2u  %s\n", f, ml_trace_str (t, fr->func));
      else
        g_string_append_printf (st, "%2u  %s\n    %s:%u\n", f, ml_trace_str (t, fr->func), file, fr->line);
    }
}

void
ml_details_page_set_document (MlDetailsPage *self, MlDocument *d, long k)
{
  if (!d || k < 0 || (gsize) k >= d->bufs->n)
    {
      gtk_label_set_markup (GTK_LABEL (self->details),
                            "<b>No buffer selected</b>\n\nClick a buffer in the timeline, or choose a peak, "
                            "an issue or a search result. Hover a buffer for a quick look.");
      gtk_label_set_text (GTK_LABEL (self->stack), "");
      return;
    }
  const MlTrace *t = ml_document_trace (d);
  const MlBuffer *b = &d->bufs->buf[k];
  char a[32], c[32], tmp[32];
  GString *s = g_string_new (NULL);
  g_autofree char *label = g_markup_escape_text (ml_document_buffer_label (d, (guint32) k, tmp, sizeof tmp), -1);
  g_string_append_printf (s, "<b>%s</b>\n\n", label);
  g_string_append_printf (s, "id\t%" G_GUINT64_FORMAT "\n", b->id);
  g_string_append_printf (s, "size\t%s", ml_format_size (b->size, a, sizeof a));
  if (b->rsize != b->size)
    g_string_append_printf (s, " (%s after alignment)", ml_format_size (b->rsize, c, sizeof c));
  g_string_append_printf (s, "\nbytes\t%" G_GUINT64_FORMAT "\n", b->size);
  g_string_append_printf (s, "lifetime\t[%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ")%s, %" G_GUINT64_FORMAT " ticks\n",
                          b->start, b->end, (b->flags & ML_BUF_NEVER_FREED) ? " never freed" : "", b->end - b->start);
  gint64 t0 = ml_trace_tick_time (ml_document_trace (d), b->start), t1 = ml_trace_tick_time (ml_document_trace (d), b->end);
  if (t0 >= 0 && t1 >= 0)
    g_string_append_printf (s, "time\t%.3f → %.3f ms (%.3f ms)\n", (double) t0 / 1e6, (double) t1 / 1e6,
                            (double) (t1 - t0) / 1e6);
  char sl[ML_STREAM_LABEL_MAX], pl[ML_POOL_NAME_MAX];
  g_string_append_printf (s, "stream\t%s\n", d->bufs->trace ? ml_trace_stream_label (d->bufs->trace, b->stream, sl) : "?");
  uint32_t pool = ml_buffer_pool (d->bufs, (size_t) k);
  if (pool)
    g_string_append_printf (s, "pool\t%s\n", ml_pool_name (t, pool, pl, sizeof pl));
  /* the annotate entries tied to it (a snapshot's _memory._annotate) */
  uint32_t notes[16];
  size_t n_notes = ml_buffer_annotations (d->bufs, (size_t) k, notes, G_N_ELEMENTS (notes));
  for (size_t i = 0; i < n_notes && i < G_N_ELEMENTS (notes); i++)
    {
      g_autofree char *note = g_markup_escape_text (ml_trace_str (t, notes[i]), -1);
      g_string_append_printf (s, "%s\t%s\n", i ? "" : "annotated", note);
    }
  for (int r = 0; r < 2; r++)
    {
      const MlRun *run = d->runs[r];
      if (!run || !run->plan)
        continue;
      g_string_append_printf (s, "offset\t0x%" G_GINT64_MODIFIER "x (%s) in segment %u, %s\n", run->plan->offset[k],
                              ml_format_size (run->plan->offset[k], a, sizeof a), run->plan->segment[k], run->strategy);
      guint64 addr = ml_run_buffer_addr (run, (guint32) k);
      if (run->plan->n_segments && run->plan->segments[run->plan->segment[k]].addr)
        g_string_append_printf (s, "address\t0x%" G_GINT64_MODIFIER "x\n", addr);
    }
  if (b->flags & ML_BUF_HAS_ADDR)
    g_string_append_printf (s, "in trace\t0x%" G_GINT64_MODIFIER "x\n", b->addr);
  static const char *const kinds[] = { "weight", "activation", "input", "output", "pinned" };
  static const guint32 kf[] = { ML_BUF_WEIGHT, ML_BUF_ACTIVATION, ML_BUF_INPUT, ML_BUF_OUTPUT, ML_BUF_PINNED };
  GString *fl = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (b->flags & kf[i])
      g_string_append_printf (fl, "%s%s", fl->len ? ", " : "", kinds[i]);
  if (fl->len)
    g_string_append_printf (s, "kind\t%s\n", fl->str);
  g_string_free (fl, TRUE);
  gtk_label_set_markup (GTK_LABEL (self->details), s->str);
  g_string_free (s, TRUE);

  GString *st = g_string_new (NULL);
  append_stack (st, t, b);
  gtk_label_set_text (GTK_LABEL (self->stack), st->str);
  g_string_free (st, TRUE);
}

char *
ml_details_page_dup_text (MlDetailsPage *self)
{
  return g_strconcat (gtk_label_get_text (GTK_LABEL (self->details)), "\n",
                      gtk_label_get_text (GTK_LABEL (self->stack)), NULL);
}

static void
ml_details_page_dispose (GObject *obj)
{
  MlDetailsPage *self = ML_DETAILS_PAGE (obj);
  g_clear_pointer (&self->scrolled, gtk_widget_unparent);
  G_OBJECT_CLASS (ml_details_page_parent_class)->dispose (obj);
}

static void
ml_details_page_class_init (MlDetailsPageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ml_details_page_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
ml_details_page_init (MlDetailsPage *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_set_margin_start (box, 10);
  gtk_widget_set_margin_end (box, 10);
  gtk_widget_set_margin_top (box, 10);
  self->details = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->details), 0);
  gtk_label_set_wrap (GTK_LABEL (self->details), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (self->details), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (self->details), TRUE);
  PangoTabArray *tabs = pango_tab_array_new_with_positions (1, TRUE, PANGO_TAB_LEFT, 84);
  gtk_label_set_tabs (GTK_LABEL (self->details), tabs);
  pango_tab_array_free (tabs);
  gtk_box_append (GTK_BOX (box), self->details);
  self->stack = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->stack), 0);
  gtk_label_set_selectable (GTK_LABEL (self->stack), TRUE);
  gtk_label_set_wrap (GTK_LABEL (self->stack), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (self->stack), PANGO_WRAP_CHAR);
  gtk_widget_add_css_class (self->stack, "monospace");
  gtk_box_append (GTK_BOX (box), self->stack);
  self->scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled), box);
  gtk_widget_set_parent (self->scrolled, GTK_WIDGET (self));
  ml_details_page_set_document (self, NULL, -1);
}
