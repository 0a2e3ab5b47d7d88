/* knobs-page.c — MlKnobsPage. */
#include "gui/knobs-page.h"

#include "sim/base/units.h"

struct _MlKnobsPage {
  GtkWidget  parent;
  GtkWidget *box;
  GtkWidget *align, *capacity, *chunk, *time, *retries, *options;
  GtkWidget *status;
  GtkWidget *sweep_spec, *sweep_strategies, *sweep_plot, *sweep_text;
  MlKnobSweep *sweep;
};

G_DEFINE_FINAL_TYPE (MlKnobsPage, ml_knobs_page, GTK_TYPE_WIDGET)

static gboolean
parse_size_entry (GtkWidget *entry, const char *what, guint64 *out, GString *errors)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));
  while (*text == ' ')
    text++;
  if (!*text || g_ascii_strcasecmp (text, "none") == 0 || g_ascii_strcasecmp (text, "default") == 0)
    {
      *out = 0;
      gtk_widget_remove_css_class (entry, "error");
      return TRUE;
    }
  MlError err = { 0 };
  if (ml_parse_size (text, out, &err) < 0)
    {
      g_string_append_printf (errors, "%s: %s\n", what, err.msg);
      gtk_widget_add_css_class (entry, "error");
      return FALSE;
    }
  gtk_widget_remove_css_class (entry, "error");
  return TRUE;
}

gboolean
ml_knobs_page_read (MlKnobsPage *self, const MlViewKnobs *base, MlViewKnobs *k)
{
  g_autoptr (GString) errors = g_string_new (NULL);
  *k = *base;
  gboolean ok = parse_size_entry (self->align, "alignment", &k->align, errors);
  ok &= parse_size_entry (self->capacity, "capacity", &k->capacity, errors);
  ok &= parse_size_entry (self->chunk, "chunk", &k->chunk, errors);
  if (ok && k->align && (k->align & (k->align - 1)))
    {
      g_string_append_printf (errors, "alignment %" G_GUINT64_FORMAT " is not a power of two\n", k->align);
      gtk_widget_add_css_class (self->align, "error");
      ok = FALSE;
    }
  const char *tl = gtk_editable_get_text (GTK_EDITABLE (self->time));
  if (*tl)
    {
      MlError err = { 0 };
      if (ml_parse_duration (tl, &k->time_limit, &err) < 0)
        {
          g_string_append_printf (errors, "time limit: %s\n", err.msg);
          ok = FALSE;
        }
    }
  else
    k->time_limit = 0;
  k->retries = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->retries));
  g_strlcpy (k->options, gtk_editable_get_text (GTK_EDITABLE (self->options)), sizeof k->options);
  gtk_label_set_text (GTK_LABEL (self->status), ok ? "" : errors->str);
  return ok;
}

gboolean
ml_knobs_page_set_text (MlKnobsPage *self, const char *name, const char *text)
{
  GtkWidget *e = g_str_equal (name, "align") ? self->align
               : g_str_equal (name, "capacity") ? self->capacity
               : g_str_equal (name, "chunk") ? self->chunk
               : g_str_equal (name, "time-limit") ? self->time
               : g_str_equal (name, "options") ? self->options
               : g_str_equal (name, "sweep") ? self->sweep_spec
               : g_str_equal (name, "sweep-strategies") ? self->sweep_strategies : NULL;
  if (!e)
    return FALSE;
  gtk_editable_set_text (GTK_EDITABLE (e), text);
  return TRUE;
}

void
ml_knobs_page_set_document (MlKnobsPage *self, MlDocument *d)
{
  if (!d)
    return;
  char buf[64];
  g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT, d->bufs->align);
  gtk_editable_set_text (GTK_EDITABLE (self->align), buf);
  guint64 cap = d->knobs.capacity ? d->knobs.capacity : ml_document_trace (d)->capacity;
  if (cap)
    g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT, cap);
  else
    buf[0] = 0;
  gtk_editable_set_text (GTK_EDITABLE (self->capacity), buf);
}

/* ---- the sweep ---- */

const char *
ml_knobs_page_get_sweep_spec (MlKnobsPage *self)
{
  return gtk_editable_get_text (GTK_EDITABLE (self->sweep_spec));
}

const char *
ml_knobs_page_get_sweep_strategies (MlKnobsPage *self)
{
  return gtk_editable_get_text (GTK_EDITABLE (self->sweep_strategies));
}

const MlKnobSweep *
ml_knobs_page_get_sweep (MlKnobsPage *self)
{
  return self->sweep;
}

char *
ml_knobs_page_dup_sweep_text (MlKnobsPage *self)
{
  const MlKnobSweep *sw = self->sweep;
  GString *s = g_string_new (NULL);
  for (gsize r = 0; sw && r < sw->n_values * sw->n_strategies; r++)
    {
      const MlKnobSweepRow *row = &sw->rows[r];
      char peak[32];
      if (row->status < 0)
        g_string_append_printf (s, "%-6s %-10s error: %s\n", row->value, row->strategy->name, row->error);
      else
        g_string_append_printf (s, "%-6s %-10s %10s %+7.2f%%%s%s\n", row->value, row->strategy->name,
                                ml_format_size (row->metrics.peak, peak, sizeof peak), row->metrics.overhead * 100.0,
                                row->oom.hit ? "  OOM " : "", row->oom.hit ? ml_oom_verdict_name (row->oom.verdict) : "");
    }
  return g_string_free (s, FALSE);
}

/* The peak against the value: values evenly spaced (they are usually
 * powers of two), one line and its dots per strategy. */
static void
draw_sweep (GtkDrawingArea *area, cairo_t *cr, int w, int h, gpointer user)
{
  MlKnobsPage *self = user;
  const MlKnobSweep *sw = self->sweep;
  if (!sw || !sw->n_values || !sw->n_strategies)
    return;
  double lo = 0, hi = 0;
  gboolean any = FALSE;
  for (gsize r = 0; r < sw->n_values * sw->n_strategies; r++)
    if (sw->rows[r].status == 0)
      {
        double p = (double) sw->rows[r].metrics.peak;
        lo = any && lo < p ? lo : p;
        hi = any && hi > p ? hi : p;
        any = TRUE;
      }
  if (!any)
    return;
  if (hi <= lo)
    hi = lo + 1;
  double left = 56, right = w - 8, top = 8, bottom = h - 22;
  cairo_set_source_rgb (cr, 0.55, 0.55, 0.58);
  cairo_set_line_width (cr, 1);
  cairo_move_to (cr, left, top);
  cairo_line_to (cr, left, bottom);
  cairo_line_to (cr, right, bottom);
  cairo_stroke (cr);
  cairo_set_font_size (cr, 10);
  char buf[32];
  for (int t = 0; t < 2; t++)
    {
      double v = t ? hi : lo;
      cairo_move_to (cr, 2, t ? top + 8 : bottom);
      cairo_show_text (cr, ml_format_size ((uint64_t) v, buf, sizeof buf));
    }
  double step = sw->n_values > 1 ? (right - left - 16) / (double) (sw->n_values - 1) : 0;
  for (gsize v = 0; v < sw->n_values; v++)
    {
      cairo_move_to (cr, left + 8 + step * (double) v - 8, h - 6);
      cairo_show_text (cr, sw->values[v]);
    }
  static const double colours[][3] = { { 0.13, 0.40, 0.75 }, { 0.85, 0.37, 0.0 }, { 0.2, 0.6, 0.3 },
                                       { 0.6, 0.2, 0.6 }, { 0.5, 0.5, 0.1 }, { 0.1, 0.6, 0.6 } };
  for (gsize i = 0; i < sw->n_strategies; i++)
    {
      const double *c = colours[i % G_N_ELEMENTS (colours)];
      cairo_set_source_rgb (cr, c[0], c[1], c[2]);
      cairo_set_line_width (cr, 2);
      gboolean started = FALSE;
      for (gsize v = 0; v < sw->n_values; v++)
        {
          const MlKnobSweepRow *row = &sw->rows[v * sw->n_strategies + i];
          if (row->status < 0)
            continue;
          double x = left + 8 + step * (double) v;
          double y = bottom - ((double) row->metrics.peak - lo) / (hi - lo) * (bottom - top - 12) - 4;
          if (started)
            cairo_line_to (cr, x, y);
          else
            cairo_move_to (cr, x, y);
          started = TRUE;
        }
      cairo_stroke (cr);
      for (gsize v = 0; v < sw->n_values; v++)
        {
          const MlKnobSweepRow *row = &sw->rows[v * sw->n_strategies + i];
          if (row->status < 0)
            continue;
          double x = left + 8 + step * (double) v;
          double y = bottom - ((double) row->metrics.peak - lo) / (hi - lo) * (bottom - top - 12) - 4;
          cairo_arc (cr, x, y, row->oom.hit ? 4.5 : 3, 0, 2 * G_PI);
          cairo_fill (cr);
        }
      cairo_move_to (cr, left + 6, top + 10 + 12 * (double) i);
      cairo_show_text (cr, sw->rows[i].strategy->name);
    }
}

void
ml_knobs_page_show_sweep (MlKnobsPage *self, MlKnobSweep *sweep, const char *status)
{
  ml_knob_sweep_free (self->sweep);
  self->sweep = sweep;
  g_autofree char *text = sweep ? ml_knobs_page_dup_sweep_text (self) : g_strdup (status ? status : "");
  gtk_label_set_text (GTK_LABEL (self->sweep_text), text);
  gtk_widget_set_visible (self->sweep_plot, sweep != NULL);
  gtk_widget_queue_draw (self->sweep_plot);
}

static GtkWidget *
knob_row (GtkWidget *grid, int row, const char *label, const char *tip, GtkWidget *w)
{
  GtkWidget *l = gtk_label_new (label);
  gtk_label_set_xalign (GTK_LABEL (l), 0);
  gtk_grid_attach (GTK_GRID (grid), l, 0, row, 1, 1);
  gtk_widget_set_hexpand (w, TRUE);
  gtk_widget_set_tooltip_text (w, tip);
  gtk_grid_attach (GTK_GRID (grid), w, 1, row, 1, 1);
  return w;
}

static void
on_entry_activate (GtkEntry *e, MlKnobsPage *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.apply-knobs", NULL);
}

static void
ml_knobs_page_dispose (GObject *obj)
{
  MlKnobsPage *self = ML_KNOBS_PAGE (obj);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  g_clear_pointer (&self->sweep, ml_knob_sweep_free);
  G_OBJECT_CLASS (ml_knobs_page_parent_class)->dispose (obj);
}

static void
ml_knobs_page_class_init (MlKnobsPageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ml_knobs_page_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
ml_knobs_page_init (MlKnobsPage *self)
{
  GtkWidget *box = self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_set_margin_start (box, 10);
  gtk_widget_set_margin_end (box, 10);
  gtk_widget_set_margin_top (box, 10);
  GtkWidget *grid = gtk_grid_new ();
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 8);
  self->align = knob_row (grid, 0, "Alignment", "Bytes each buffer is rounded up to (power of two). Default: 256, CSV: 1.",
                          gtk_entry_new ());
  self->capacity = knob_row (grid, 1, "Capacity", "Device memory, e.g. 40G, 80G. Strategies that need more report an OOM. Empty: none.",
                             gtk_entry_new ());
  self->chunk = knob_row (grid, 2, "Pool chunk", "Chunk size of the pool strategy and the buddy segments, e.g. 4M (pool and buddy only)",
                          gtk_entry_new ());
  self->time = knob_row (grid, 3, "Time limit", "Per offline planner, e.g. 10s, 2m. Empty: the planner's default.", gtk_entry_new ());
  self->retries = knob_row (grid, 4, "Retries",
                            "After a refusal under the capacity, give the cache back and retry up to this many times "
                            "(caching, pool and buddy; the fit strategies and the planners cache nothing)",
                            gtk_spin_button_new_with_range (0, 100, 1));
  self->options = knob_row (grid, 5, "Options", "Strategy options k=v,k=v (e.g. the caching allocator's settings)", gtk_entry_new ());
  gtk_entry_set_placeholder_text (GTK_ENTRY (self->capacity), "none");
  gtk_entry_set_placeholder_text (GTK_ENTRY (self->time), "default");
  gtk_entry_set_placeholder_text (GTK_ENTRY (self->options), "k=v,k=v");
  gtk_editable_set_text (GTK_EDITABLE (self->chunk), "4M");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->retries), 3);
  GtkWidget *entries[] = { self->align, self->capacity, self->chunk, self->time, self->options };
  for (gsize i = 0; i < G_N_ELEMENTS (entries); i++)
    g_signal_connect (entries[i], "activate", G_CALLBACK (on_entry_activate), self);
  gtk_box_append (GTK_BOX (box), grid);
  GtkWidget *apply = gtk_button_new_with_mnemonic ("_Apply and re-run");
  gtk_widget_add_css_class (apply, "suggested-action");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (apply), "win.apply-knobs");
  gtk_box_append (GTK_BOX (box), apply);
  self->status = gtk_label_new ("");
  gtk_label_set_wrap (GTK_LABEL (self->status), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->status), 0);
  gtk_widget_add_css_class (self->status, "error");
  gtk_box_append (GTK_BOX (box), self->status);
  GtkWidget *help = gtk_label_new ("Runs in the background: the view keeps the previous result until the new one is ready, "
                                   "and Cancel (under the timeline) stops it.");
  gtk_label_set_wrap (GTK_LABEL (help), TRUE);
  gtk_label_set_xalign (GTK_LABEL (help), 0);
  gtk_widget_add_css_class (help, "dim-label");
  gtk_box_append (GTK_BOX (box), help);

  /* a knob over values */
  GtkWidget *title = gtk_label_new ("Sweep a knob");
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_widget_add_css_class (title, "heading");
  gtk_widget_set_margin_top (title, 12);
  gtk_box_append (GTK_BOX (box), title);
  GtkWidget *sgrid = gtk_grid_new ();
  gtk_grid_set_row_spacing (GTK_GRID (sgrid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (sgrid), 8);
  self->sweep_spec = knob_row (sgrid, 0, "Knob",
                               "KNOB=V1,V2,...: chunk, align, capacity, retries, seed, time-limit or an option key (large, "
                               "max_split_size_mb, ...); the other knobs are those above", gtk_entry_new ());
  self->sweep_strategies = knob_row (sgrid, 1, "Strategies", "Comma-separated strategies to run once per value", gtk_entry_new ());
  gtk_editable_set_text (GTK_EDITABLE (self->sweep_spec), "chunk=1M,2M,4M,8M,16M");
  gtk_editable_set_text (GTK_EDITABLE (self->sweep_strategies), "pool,buddy");
  gtk_box_append (GTK_BOX (box), sgrid);
  GtkWidget *run = gtk_button_new_with_mnemonic ("_Sweep");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (run), "win.sweep-knob");
  gtk_box_append (GTK_BOX (box), run);
  self->sweep_plot = gtk_drawing_area_new ();
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (self->sweep_plot), 160);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->sweep_plot), draw_sweep, self, NULL);
  gtk_widget_set_visible (self->sweep_plot, FALSE);
  gtk_box_append (GTK_BOX (box), self->sweep_plot);
  self->sweep_text = gtk_label_new ("");
  gtk_label_set_wrap (GTK_LABEL (self->sweep_text), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->sweep_text), 0);
  gtk_label_set_selectable (GTK_LABEL (self->sweep_text), TRUE);
  gtk_widget_add_css_class (self->sweep_text, "monospace");
  gtk_widget_set_tooltip_text (self->sweep_text, "value, strategy, peak, overhead over the lower bound (and the OOM verdict)");
  GtkWidget *scroll = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroll), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_max_content_height (GTK_SCROLLED_WINDOW (scroll), 180);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scroll), TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroll), self->sweep_text);
  gtk_box_append (GTK_BOX (box), scroll);
  gtk_widget_set_parent (box, GTK_WIDGET (self));
}
