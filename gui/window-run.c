/* window-run.c — MlWindow: the jobs that run strategies.
 *
 * Re-running the document with other strategies or knobs (the drop-downs,
 * the Compare toggle, win.strategy / strategy2 / compare, the Knobs
 * page's Apply), and the second file's re-run after it; the Knobs page's
 * sweep; the table of every strategy (win.compare-all); win.cancel. Each
 * goes through the window's one MlJobBar (gui/job.c).
 */
#include "gui/window-private.h"

/* ---- re-running with new knobs or strategies ------------------------------ */

static const char *
dropdown_name (GtkWidget *dd)
{
  GtkStringObject *o = gtk_drop_down_get_selected_item (GTK_DROP_DOWN (dd));
  return o ? gtk_string_object_get_string (o) : NULL;
}

/* The second file's re-run, with the first's new strategy. */
static gboolean
rerun2_done (gpointer owner, GAsyncResult *res, MlJob *job, gboolean current)
{
  MlWindow *self = owner;
  g_autoptr (GError) error = NULL;
  g_autoptr (MlDocument) doc = ml_document_rerun_finish (res, &error);
  return _ml_window_second_loaded (self, doc, error, current, self->doc2 != NULL, "Could not re-run the second file");
}

static gboolean
start_rerun_second (gpointer user)
{
  MlWindow *self = user;
  if (self->rerun_second && self->doc && self->doc2)
    {
      const char *s1 = self->doc->runs[0]->strategy;
      g_autofree char *what = g_strdup_printf ("Running %s on the second file", s1);
      MlJob *job = ml_job_bar_begin (self->job_bar, what, rerun2_done, self);
      ml_document_rerun_async (self->doc2, &self->doc2->knobs, s1, NULL, ml_job_cancellable (job), ml_job_bar_progress,
                               self->job_bar, ml_job_ready, job);
    }
  self->rerun_second = FALSE;
  g_object_unref (self);
  return G_SOURCE_REMOVE;
}

static gboolean
rerun_done (gpointer owner, GAsyncResult *res, MlJob *job, gboolean current)
{
  MlWindow *self = owner;
  g_autoptr (GError) error = NULL;
  g_autoptr (MlDocument) doc = ml_document_rerun_finish (res, &error);
  if (!current)
    return doc != NULL;
  if (doc)
    {
      ml_window_show_message (self, NULL);
      _ml_window_apply_document (self, doc);
      if (self->rerun_second)
        g_idle_add (start_rerun_second, g_object_ref (self));   /* after this job has ended */
      return TRUE;
    }
  self->rerun_second = FALSE;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    ml_window_show_message (self, "Cancelled: the view still shows the previous run.");
  else
    {
      g_autofree char *msg = g_strdup_printf ("Could not re-run: %s", error->message);
      ml_window_show_message (self, msg);
    }
  _ml_window_apply_document (self, self->doc);  /* puts the drop-downs back */
  return FALSE;
}

static void
start_rerun (MlWindow *self)
{
  if (!self->doc)
    return;
  const char *s1 = dropdown_name (self->strategy_dd);
  gboolean cmp = gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->compare_btn));
  const char *s2 = cmp ? dropdown_name (self->strategy2_dd) : NULL;
  g_autofree char *what = s2 ? g_strdup_printf ("Running %s and %s", s1, s2) : g_strdup_printf ("Running %s", s1);
  MlJob *job = ml_job_bar_begin (self->job_bar, what, rerun_done, self);
  self->rerun_second = self->doc2 != NULL;
  ml_document_rerun_async (self->doc, &self->knobs, s1, s2, ml_job_cancellable (job), ml_job_bar_progress,
                           self->job_bar, ml_job_ready, job);
}

static void
on_strategy_changed (GObject *dd, GParamSpec *pspec, MlWindow *self)
{
  if (self->applying || !self->doc)
    return;
  GAction *a = g_action_map_lookup_action (G_ACTION_MAP (self), dd == G_OBJECT (self->strategy_dd) ? "strategy" : "strategy2");
  const char *name = dropdown_name (GTK_WIDGET (dd));
  if (name)
    g_simple_action_set_state (G_SIMPLE_ACTION (a), g_variant_new_string (name));
  if (dd == G_OBJECT (self->strategy2_dd) && !gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->compare_btn)))
    return;
  start_rerun (self);
}

static void
on_compare_toggled (GtkToggleButton *b, MlWindow *self)
{
  gboolean on = gtk_toggle_button_get_active (b);
  gtk_widget_set_visible (self->strategy2_dd, on);
  g_simple_action_set_state (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "compare")),
                             g_variant_new_boolean (on));
  if (self->applying || !self->doc)
    return;
  /* both ways re-run: the worker keeps the window responsive */
  start_rerun (self);
}

static void
strategy_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  const char *name = g_variant_get_string (p, NULL);
  gboolean second = g_str_equal (g_action_get_name (G_ACTION (a)), "strategy2");
  g_simple_action_set_state (a, p);
  _ml_window_set_dropdown (second ? self->strategy2_dd : self->strategy_dd, self->strategies, name);
}

static void
compare_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->compare_btn), g_variant_get_boolean (p));
}

static void
apply_knobs_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  MlViewKnobs k;
  if (!ml_knobs_page_read (self->knobs_page, &self->knobs, &k))
    return;
  self->knobs = k;
  start_rerun (self);
}

/* The address axis: packed (the default) or the recorded addresses; the
 * scenes are built again. */
static void
address_axis_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  const char *mode = g_variant_get_string (p, NULL);
  if (!g_str_equal (mode, "packed") && !g_str_equal (mode, "raw"))
    return;
  g_simple_action_set_state (a, p);
  gboolean raw = g_str_equal (mode, "raw");
  if (raw == self->knobs.raw_addresses)
    return;
  self->knobs.raw_addresses = raw;
  start_rerun (self);
}

/* ---- a knob over values (the Knobs page) ---- */

static gboolean
swept (gpointer owner, GAsyncResult *res, MlJob *job, gboolean current)
{
  MlWindow *self = owner;
  g_autoptr (GError) error = NULL;
  MlKnobSweep *sw = ml_document_sweep_finish (res, &error);
  gboolean ok = sw != NULL;
  if (current)
    ml_knobs_page_show_sweep (self->knobs_page, sw, sw ? NULL : error->message);
  else
    ml_knob_sweep_free (sw);
  return ok;
}

const MlKnobSweep *
ml_window_get_sweep (MlWindow *self)
{
  return ml_knobs_page_get_sweep (self->knobs_page);
}

static void
sweep_knob_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  MlViewKnobs k;
  if (!self->doc || !ml_knobs_page_read (self->knobs_page, &self->knobs, &k))
    return;
  MlJob *job = ml_job_bar_begin (self->job_bar, "Sweeping a knob", swept, self);
  ml_knobs_page_show_sweep (self->knobs_page, NULL, "Running…");
  ml_document_sweep_async (self->doc, &k, ml_knobs_page_get_sweep_strategies (self->knobs_page),
                           ml_knobs_page_get_sweep_spec (self->knobs_page), ml_job_cancellable (job), ml_job_bar_progress,
                           self->job_bar, ml_job_ready, job);
}

gboolean
ml_window_set_knob (MlWindow *self, const char *name, const char *text)
{
  return ml_knobs_page_set_text (self->knobs_page, name, text);
}

/* ---- the table of strategies ---------------------------------------------- */

static gboolean
compared (gpointer owner, GAsyncResult *res, MlJob *job, gboolean current)
{
  MlWindow *self = owner;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) runs = ml_document_compare_finish (res, &error);
  if (current && runs)
    ml_table_page_set_runs (self->table_page, self->doc, runs);
  else if (current)
    ml_table_page_set_status (self->table_page, error->message);
  return runs != NULL;
}

static void
compare_all_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  if (!self->doc)
    return;
  MlJob *job = ml_job_bar_begin (self->job_bar, "Comparing strategies", compared, self);
  ml_table_page_set_status (self->table_page, "Running…");
  ml_document_compare_async (self->doc, NULL, ml_job_cancellable (job), ml_job_bar_progress, self->job_bar,
                             ml_job_ready, job);
}

static void
cancel_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  ml_job_bar_cancel (self->job_bar);
}

static const GActionEntry run_actions[] = {
  { "strategy", strategy_action, "s", "'best-fit'", NULL },
  { "strategy2", strategy_action, "s", "'first-fit'", NULL },
  { "compare", compare_action, "b", "false", NULL },
  { "apply-knobs", apply_knobs_action, NULL, NULL, NULL },
  { "address-axis", address_axis_action, "s", "'packed'", NULL },
  { "sweep-knob", sweep_knob_action, NULL, NULL, NULL },
  { "compare-all", compare_all_action, NULL, NULL, NULL },
  { "cancel", cancel_action, NULL, NULL, NULL },
};

void
_ml_window_run_init (MlWindow *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self), run_actions, G_N_ELEMENTS (run_actions), self);
}

void
_ml_window_run_class_init (GtkWidgetClass *wc)
{
  gtk_widget_class_bind_template_callback (wc, on_strategy_changed);
  gtk_widget_class_bind_template_callback (wc, on_compare_toggled);
}
