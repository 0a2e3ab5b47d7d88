/* knobs-page.c — MlKnobsPage. */
#include "gui/knobs-page.h"

#include "sim/base/units.h"

struct _MlKnobsPage {
  GtkWidget  parent;
  GtkWidget *box;
  GtkWidget *align, *capacity, *chunk, *time, *retries, *options;
  GtkWidget *status;
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
               : g_str_equal (name, "options") ? self->options : NULL;
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
  self->chunk = knob_row (grid, 2, "Pool chunk", "Chunk size of the pool strategy, e.g. 4M", gtk_entry_new ());
  self->time = knob_row (grid, 3, "Time limit", "Per offline planner, e.g. 10s, 2m. Empty: the planner's default.", gtk_entry_new ());
  self->retries = knob_row (grid, 4, "Retries", "Retries on allocation failure", gtk_spin_button_new_with_range (0, 100, 1));
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
  gtk_widget_set_parent (box, GTK_WIDGET (self));
}
