/* table-page.c — MlTablePage. */
#include "gui/table-page.h"

#include "sim/base/units.h"

struct _MlTablePage {
  GtkWidget   parent;
  GtkWidget  *scrolled;
  GtkWidget  *grid, *status;
  MlTraceBox *box;   /* the trace shown, to tell a new one */
};

G_DEFINE_FINAL_TYPE (MlTablePage, ml_table_page, GTK_TYPE_WIDGET)

static void
grid_clear (GtkWidget *grid)
{
  GtkWidget *c;
  while ((c = gtk_widget_get_first_child (grid)))
    gtk_grid_remove (GTK_GRID (grid), c);
}

static GtkWidget *
cell (const char *text, gboolean numeric, gboolean bold)
{
  GtkWidget *l = gtk_label_new (NULL);
  if (bold)
    {
      g_autofree char *m = g_markup_printf_escaped ("<b>%s</b>", text);
      gtk_label_set_markup (GTK_LABEL (l), m);
    }
  else
    gtk_label_set_text (GTK_LABEL (l), text);
  gtk_label_set_xalign (GTK_LABEL (l), numeric ? 1.0f : 0.0f);
  if (numeric)
    gtk_widget_add_css_class (l, "numeric");
  return l;
}

void
ml_table_page_set_status (MlTablePage *self, const char *text)
{
  gtk_label_set_text (GTK_LABEL (self->status), text);
}

void
ml_table_page_set_document (MlTablePage *self, MlDocument *doc)
{
  MlTraceBox *box = doc ? doc->box : NULL;
  if (box == self->box)
    return;
  self->box = box;
  grid_clear (self->grid);
  ml_table_page_set_status (self, doc ? "Press \"Run all\" to measure every fast strategy on this trace with the current knobs."
                                      : "");
}

void
ml_table_page_set_runs (MlTablePage *self, MlDocument *doc, GPtrArray *runs)
{
  GtkGrid *g = GTK_GRID (self->grid);
  grid_clear (self->grid);
  static const char *heads[] = { "strategy", "peak", "overhead", "frag max", "OOM", "time" };
  for (int c = 0; c < 6; c++)
    gtk_grid_attach (g, cell (heads[c], c > 0, TRUE), c, 0, 1, 1);
  guint64 best = G_MAXUINT64;
  for (guint i = 0; i < runs->len; i++)
    {
      MlRun *run = runs->pdata[i];
      if (run->plan && run->metrics.peak < best)
        best = run->metrics.peak;
    }
  for (guint i = 0; i < runs->len; i++)
    {
      MlRun *run = runs->pdata[i];
      char a[32], b[32], c[32], d[48], e[32];
      if (!run->plan)
        {
          gtk_grid_attach (g, cell (run->strategy, FALSE, FALSE), 0, i + 1, 1, 1);
          GtkWidget *l = cell (run->error, FALSE, FALSE);
          gtk_label_set_wrap (GTK_LABEL (l), TRUE);
          gtk_grid_attach (g, l, 1, i + 1, 5, 1);
          continue;
        }
      ml_format_size (run->metrics.peak, a, sizeof a);
      g_snprintf (b, sizeof b, "%.1f%%", run->metrics.overhead * 100);
      if (run->metrics.frag_unknown)
        g_snprintf (c, sizeof c, "n/a");
      else
        g_snprintf (c, sizeof c, "%.2f", run->metrics.frag_max);
      if (run->plan->oom.hit)
        g_snprintf (d, sizeof d, "@%" G_GUINT64_FORMAT " %s", run->plan->oom.tick,
                    ml_oom_verdict_name (run->plan->oom.verdict));
      else
        g_strlcpy (d, "—", sizeof d);
      if (run->plan->seconds < 1.0)
        g_snprintf (e, sizeof e, "%.2f ms", run->plan->seconds * 1e3);
      else
        g_snprintf (e, sizeof e, "%.2f s", run->plan->seconds);
      gboolean win = run->metrics.peak == best;
      gtk_grid_attach (g, cell (run->strategy, FALSE, win), 0, i + 1, 1, 1);
      gtk_grid_attach (g, cell (a, TRUE, win), 1, i + 1, 1, 1);
      gtk_grid_attach (g, cell (b, TRUE, FALSE), 2, i + 1, 1, 1);
      gtk_grid_attach (g, cell (c, TRUE, FALSE), 3, i + 1, 1, 1);
      gtk_grid_attach (g, cell (d, TRUE, FALSE), 4, i + 1, 1, 1);
      gtk_grid_attach (g, cell (e, TRUE, FALSE), 5, i + 1, 1, 1);
    }
  char lb[32];
  g_autofree char *st = g_strdup_printf ("Lower bound %s. Bold: the smallest peak. Choose two strategies "
                                         "in the header and press Compare to see them stacked.",
                                         ml_format_size (doc->bufs->lower_bound, lb, sizeof lb));
  ml_table_page_set_status (self, st);
}

static void
ml_table_page_dispose (GObject *obj)
{
  MlTablePage *self = ML_TABLE_PAGE (obj);
  g_clear_pointer (&self->scrolled, gtk_widget_unparent);
  G_OBJECT_CLASS (ml_table_page_parent_class)->dispose (obj);
}

static void
ml_table_page_class_init (MlTablePageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ml_table_page_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
ml_table_page_init (MlTablePage *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_set_margin_start (box, 10);
  gtk_widget_set_margin_end (box, 10);
  gtk_widget_set_margin_top (box, 10);
  GtkWidget *run = gtk_button_new_with_mnemonic ("_Run all strategies");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (run), "win.compare-all");
  gtk_box_append (GTK_BOX (box), run);
  self->grid = gtk_grid_new ();
  gtk_grid_set_column_spacing (GTK_GRID (self->grid), 10);
  gtk_grid_set_row_spacing (GTK_GRID (self->grid), 4);
  gtk_box_append (GTK_BOX (box), self->grid);
  self->status = gtk_label_new ("");
  gtk_label_set_wrap (GTK_LABEL (self->status), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->status), 0);
  gtk_widget_add_css_class (self->status, "dim-label");
  gtk_box_append (GTK_BOX (box), self->status);
  self->scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled), box);
  gtk_widget_set_parent (self->scrolled, GTK_WIDGET (self));
}
