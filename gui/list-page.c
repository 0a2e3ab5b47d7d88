/* list-page.c — MlListPage. */
#include "gui/list-page.h"

typedef struct {
  GtkWidget *box, *header, *list;
  guint      n_rows;
} MlListPagePrivate;

G_DEFINE_TYPE_WITH_PRIVATE (MlListPage, ml_list_page, GTK_TYPE_WIDGET)

enum { TARGET_CHOSEN, N_SIGNALS };
static guint signals[N_SIGNALS];

void
ml_list_page_clear (MlListPage *self)
{
  MlListPagePrivate *p = ml_list_page_get_instance_private (self);
  GtkWidget *c;
  while ((c = gtk_widget_get_first_child (p->list)))
    gtk_list_box_remove (GTK_LIST_BOX (p->list), c);
  p->n_rows = 0;
}

void
ml_list_page_append (MlListPage *self, const char *title, const char *sub, const MlTarget *target)
{
  ml_list_page_append_full (self, title, sub, NULL, target);
}

void
ml_list_page_append_full (MlListPage *self, const char *title, const char *sub, const char *tooltip,
                          const MlTarget *target)
{
  MlListPagePrivate *p = ml_list_page_get_instance_private (self);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *t = gtk_label_new (title);
  gtk_label_set_xalign (GTK_LABEL (t), 0);
  gtk_label_set_ellipsize (GTK_LABEL (t), PANGO_ELLIPSIZE_END);
  gtk_box_append (GTK_BOX (box), t);
  if (sub)
    {
      GtkWidget *s = gtk_label_new (sub);
      gtk_label_set_xalign (GTK_LABEL (s), 0);
      gtk_label_set_ellipsize (GTK_LABEL (s), PANGO_ELLIPSIZE_END);
      gtk_widget_add_css_class (s, "dim-label");
      gtk_widget_add_css_class (s, "caption");
      gtk_box_append (GTK_BOX (box), s);
    }
  gtk_widget_set_margin_start (box, 6);
  gtk_widget_set_margin_end (box, 6);
  gtk_widget_set_margin_top (box, 4);
  gtk_widget_set_margin_bottom (box, 4);
  GtkWidget *row = gtk_list_box_row_new ();
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  g_object_set_data_full (G_OBJECT (row), "ml-title", g_strdup (title), g_free);
  if (sub || tooltip)   /* the subtitle is ellipsized: the whole text on hover */
    {
      g_autofree char *tip = g_strjoin (sub && tooltip ? "\n\n" : "", sub ? sub : "", tooltip ? tooltip : "", NULL);
      gtk_widget_set_tooltip_text (row, tip);
    }
  if (target)
    g_object_set_data_full (G_OBJECT (row), "ml-target", g_memdup2 (target, sizeof *target), g_free);
  else
    {
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
      gtk_list_box_row_set_selectable (GTK_LIST_BOX_ROW (row), FALSE);
      gtk_widget_add_css_class (t, "heading");
    }
  gtk_list_box_append (GTK_LIST_BOX (p->list), row);
  p->n_rows++;
}

void
ml_list_page_set_header (MlListPage *self, const char *text)
{
  MlListPagePrivate *p = ml_list_page_get_instance_private (self);
  gtk_label_set_text (GTK_LABEL (p->header), text ? text : "");
  gtk_widget_set_visible (p->header, text != NULL);
}

const char *
ml_list_page_get_header (MlListPage *self)
{
  MlListPagePrivate *p = ml_list_page_get_instance_private (self);
  return gtk_label_get_text (GTK_LABEL (p->header));
}

gboolean
ml_list_page_choose (MlListPage *self, guint index)
{
  MlListPagePrivate *p = ml_list_page_get_instance_private (self);
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (GTK_LIST_BOX (p->list), (int) index);
  if (!row || !g_object_get_data (G_OBJECT (row), "ml-target"))
    return FALSE;
  gtk_list_box_select_row (GTK_LIST_BOX (p->list), row);
  gtk_widget_activate (GTK_WIDGET (row));   /* as a click does: row-activated */
  return TRUE;
}

guint
ml_list_page_get_n_rows (MlListPage *self)
{
  MlListPagePrivate *p = ml_list_page_get_instance_private (self);
  return p->n_rows;
}

const char *
ml_list_page_get_title (MlListPage *self, guint index)
{
  MlListPagePrivate *p = ml_list_page_get_instance_private (self);
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (GTK_LIST_BOX (p->list), (int) index);
  return row ? g_object_get_data (G_OBJECT (row), "ml-title") : NULL;
}

static void
on_row_activated (GtkListBox *list, GtkListBoxRow *row, MlListPage *self)
{
  const MlTarget *t = g_object_get_data (G_OBJECT (row), "ml-target");
  if (t)
    g_signal_emit (self, signals[TARGET_CHOSEN], 0, t);
}

static void
ml_list_page_dispose (GObject *obj)
{
  MlListPagePrivate *p = ml_list_page_get_instance_private (ML_LIST_PAGE (obj));
  g_clear_pointer (&p->box, gtk_widget_unparent);
  G_OBJECT_CLASS (ml_list_page_parent_class)->dispose (obj);
}

static void
ml_list_page_class_init (MlListPageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ml_list_page_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  /* (const MlTarget *target), valid during the emission */
  signals[TARGET_CHOSEN] = g_signal_new ("target-chosen", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                         NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
}

static void
ml_list_page_init (MlListPage *self)
{
  MlListPagePrivate *p = ml_list_page_get_instance_private (self);
  p->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  p->header = gtk_label_new ("");
  gtk_label_set_wrap (GTK_LABEL (p->header), TRUE);
  gtk_label_set_xalign (GTK_LABEL (p->header), 0);
  gtk_widget_set_margin_start (p->header, 8);
  gtk_widget_set_margin_top (p->header, 6);
  gtk_widget_add_css_class (p->header, "dim-label");
  gtk_widget_set_visible (p->header, FALSE);
  gtk_box_append (GTK_BOX (p->box), p->header);
  p->list = gtk_list_box_new ();
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (p->list), GTK_SELECTION_SINGLE);
  gtk_list_box_set_activate_on_single_click (GTK_LIST_BOX (p->list), TRUE);
  g_signal_connect (p->list, "row-activated", G_CALLBACK (on_row_activated), self);
  gtk_widget_add_css_class (p->list, "rich-list");
  GtkWidget *sw = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (sw), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (sw), p->list);
  gtk_widget_set_vexpand (sw, TRUE);
  gtk_box_append (GTK_BOX (p->box), sw);
  gtk_widget_set_parent (p->box, GTK_WIDGET (self));
}
