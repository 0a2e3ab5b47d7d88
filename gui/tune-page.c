/* tune-page.c — MlTunePage. */
#include "gui/tune-page.h"

#include "render/series.h"
#include "sim/base/units.h"

struct _MlTunePage {
  GtkWidget    parent;
  GtkWidget   *box, *label, *area;
  MlDocument  *doc;
  MlDocSeries  series[2];
  guint        n_series;
  char         line_label[64];
};

G_DEFINE_FINAL_TYPE (MlTunePage, ml_tune_page, GTK_TYPE_WIDGET)

static void
draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  MlTunePage *self = data;
  (void) area;
  const MlTune *t = self->doc ? self->doc->tune : NULL;
  ml_render_series (cr, self->series, self->n_series, t ? t->capacity : 0, self->line_label, width, height, NULL);
}

/* The answer and one line per row, as tune prints them. */
static void
describe (GString *s, const MlTune *t)
{
  char a[32], b[32];
  const MlTuneRow *rec = &t->rows[0], *best = t->best >= 0 ? &t->rows[t->best] : NULL;
  g_autofree char *settings = g_markup_escape_text (*t->recorded ? t->recorded : "PyTorch's defaults", -1);
  g_string_append_printf (s, "<b>Allocator settings</b>\n\nrecorded: %s\n", settings);
  if (t->capacity)
    g_string_append_printf (s, "device memory %s\n\n", ml_format_size (t->capacity, a, sizeof a));
  if (t->verdict == ML_TUNE_FIX)
    g_string_append_printf (s, "<b>Set %s</b>: it fits (reserved peak %s)%s.\n", best->change,
                            ml_format_size (best->r.reserved_peak, a, sizeof a),
                            best->r.model ? ", a model" : "");
  else if (t->verdict == ML_TUNE_NONE_FITS)
    g_string_append_printf (s, "<b>No setting fits</b>: %s needed, %s short.\n", ml_format_size (t->need, a, sizeof a),
                            ml_format_size (t->shortfall, b, sizeof b));
  else if (best)
    g_string_append_printf (s, "%s reserves least: %s (recorded %s).\n", best->change,
                            ml_format_size (best->r.reserved_peak, a, sizeof a),
                            ml_format_size (rec->r.reserved_peak, b, sizeof b));
  else
    g_string_append (s, "No setting tried reserves less than the recorded settings.\n");
  g_string_append (s, "\n");
  for (size_t k = 0; k < t->n_rows; k++)
    {
      const MlTuneRow *row = &t->rows[k];
      g_autofree char *name = g_markup_escape_text (*row->change ? row->change : row->cold ? "(recorded, cold start)"
                                                                                          : "(recorded settings)", -1);
      if (row->status < 0)
        g_string_append_printf (s, "%s: error\n", name);
      else
        g_string_append_printf (s, "%s%s: %s%s\n", name, row->r.model ? " (model)" : "",
                                ml_format_size (row->r.reserved_peak, a, sizeof a), row->r.oom ? ", OOM" : "");
    }
}

void
ml_tune_page_set_document (MlTunePage *self, MlDocument *d)
{
  g_clear_pointer (&self->doc, ml_document_unref);
  self->n_series = 0;
  self->line_label[0] = 0;
  const MlTune *t = d ? d->tune : NULL;
  if (!t)
    {
      gtk_label_set_markup (GTK_LABEL (self->label),
                            d && *d->tune_error ? "<b>Allocator settings</b>\n\nThey could not be replayed."
                                                : "<b>Allocator settings</b>\n\nFor PyTorch memory snapshots: which "
                                                  "PYTORCH_CUDA_ALLOC_CONF setting would have fitted (memlens tune).");
      gtk_widget_set_visible (self->area, FALSE);
      return;
    }
  self->doc = ml_document_ref (d);
  GString *s = g_string_new (NULL);
  describe (s, t);
  gtk_label_set_markup (GTK_LABEL (self->label), s->str);
  g_string_free (s, TRUE);
  const MlTuneRow *rec = &t->rows[0], *best = t->best >= 0 ? &t->rows[t->best] : NULL;
  uint64_t end = d->bufs->end_tick;
  if (rec->status == 0 && rec->r.n_curve)
    self->series[self->n_series++] = (MlDocSeries) { "reserved, recorded settings", rec->r.curve_tick,
                                                     rec->r.curve_reserved, rec->r.n_curve, end, false };
  if (best && best->r.n_curve)
    self->series[self->n_series++] = (MlDocSeries) { best->change, best->r.curve_tick, best->r.curve_reserved,
                                                     best->r.n_curve, end, true };
  if (t->capacity)
    {
      char a[32];
      g_snprintf (self->line_label, sizeof self->line_label, "device memory %s", ml_format_size (t->capacity, a, sizeof a));
    }
  gtk_widget_set_visible (self->area, self->n_series > 0);
  gtk_widget_queue_draw (self->area);
}

char *
ml_tune_page_dup_text (MlTunePage *self)
{
  return g_strdup (gtk_label_get_text (GTK_LABEL (self->label)));
}

guint
ml_tune_page_n_curves (MlTunePage *self)
{
  return self->n_series;
}

static void
ml_tune_page_dispose (GObject *obj)
{
  MlTunePage *self = ML_TUNE_PAGE (obj);
  g_clear_pointer (&self->doc, ml_document_unref);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (ml_tune_page_parent_class)->dispose (obj);
}

static void
ml_tune_page_class_init (MlTunePageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ml_tune_page_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
ml_tune_page_init (MlTunePage *self)
{
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  GtkWidget *scrolled = gtk_scrolled_window_new ();
  gtk_widget_set_vexpand (scrolled, TRUE);
  self->label = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (self->label), TRUE);
  gtk_label_set_selectable (GTK_LABEL (self->label), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->label), 0);
  gtk_label_set_yalign (GTK_LABEL (self->label), 0);
  gtk_widget_set_margin_start (self->label, 10);
  gtk_widget_set_margin_end (self->label, 10);
  gtk_widget_set_margin_top (self->label, 10);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), self->label);
  self->area = gtk_drawing_area_new ();
  gtk_widget_set_size_request (self->area, 360, 240);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->area), draw, self, NULL);
  gtk_box_append (GTK_BOX (self->box), self->area);
  gtk_box_append (GTK_BOX (self->box), scrolled);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  ml_tune_page_set_document (self, NULL);
}
