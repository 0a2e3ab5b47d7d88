/* window-export.c — MlWindow: writing what it shows.
 *
 * win.export((ss)) writes the view (both timelines in compare mode) as a
 * picture through gui/export.c, or the report in a worker;
 * win.export-dialog(s) asks where first.
 */
#include "gui/window-private.h"

#include <string.h>

#include "gui/export.h"

static gboolean
report_done (gpointer owner, GAsyncResult *res, MlJob *job, gboolean current)
{
  MlWindow *self = owner;
  g_autoptr (GError) error = NULL;
  gboolean ok = ml_document_report_finish (res, &error);
  if (current)
    {
      g_autofree char *msg = ok ? g_strdup_printf ("Wrote the report %s", (const char *) ml_job_get_data (job))
                                : g_strdup_printf ("Could not write the report: %s", error->message);
      ml_window_show_message (self, msg);
    }
  return ok;
}

void
ml_window_export_report (MlWindow *self, const char *path)
{
  if (!self->doc)
    return;
  MlJob *job = ml_job_bar_begin (self->job_bar, "Writing the report", report_done, self);
  ml_job_set_data (job, g_strdup (path), g_free);
  /* the report compares the registry's default strategies and those shown */
  g_autofree char *extra = g_strjoin (",", self->doc->runs[0]->strategy,
                                      self->doc->runs[1] ? self->doc->runs[1]->strategy : "", NULL);
  ml_document_report_async (self->doc, extra, path, ml_job_cancellable (job), ml_job_bar_progress, self->job_bar,
                            ml_job_ready, job);
}

gboolean
ml_window_export (MlWindow *self, const char *format, const char *path, GError **error)
{
  if (!self->doc)
    {
      g_set_error_literal (error, ML_GUI_ERROR, 1, "Nothing to export: open a trace first");
      return FALSE;
    }
  if (ml_export_is_report_format (format))
    {
      g_set_error (error, ML_GUI_ERROR, 2, "Reports are written by a worker: use win.export or ml_window_export_report");
      return FALSE;
    }
  MlTimelineView *views[2] = { _ml_window_tl (self, 0), _ml_window_tl (self, 1) };
  return ml_export_views (views, self->doc->runs[1] || self->doc2 ? 2 : 1, format, path, error);
}

static void
export_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  const char *fmt, *path;
  g_variant_get (p, "(&s&s)", &fmt, &path);
  if (ml_export_is_report_format (fmt))
    {
      ml_window_export_report (self, path);
      return;
    }
  g_autoptr (GError) error = NULL;
  if (!ml_window_export (self, fmt, path, &error))
    ml_window_show_message (self, error->message);
  else
    {
      g_autofree char *msg = g_strdup_printf ("Exported %s", path);
      ml_window_show_message (self, msg);
    }
}

static void
on_export_chosen (GtkNativeDialog *dlg, int response, MlWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) f = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dlg));
      g_autofree char *path = f ? g_file_get_path (f) : NULL;
      const char *fmt = g_object_get_data (G_OBJECT (dlg), "ml-format");
      if (path)
        g_action_group_activate_action (G_ACTION_GROUP (self), "export", g_variant_new ("(ss)", fmt, path));
    }
  g_object_unref (dlg);
}

static void
export_dialog_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  if (!self->doc)
    return;
  const char *fmt = g_variant_get_string (p, NULL);
  GtkFileChooserNative *dlg = gtk_file_chooser_native_new (ml_export_is_report_format (fmt) ? "Export the report" : "Export the view",
                                                           GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE,
                                                           "_Export", "_Cancel");
  g_autofree char *base = g_path_get_basename (self->doc->box->path);
  char *dot = strrchr (base, '.');
  if (dot)
    *dot = 0;
  g_autofree char *name = g_strdup_printf ("%s-%s.%s", base, self->doc->runs[0]->strategy, fmt);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dlg), name);
  g_object_set_data_full (G_OBJECT (dlg), "ml-format", g_strdup (fmt), g_free);
  g_signal_connect (dlg, "response", G_CALLBACK (on_export_chosen), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dlg));
}

static const GActionEntry export_actions[] = {
  { "export", export_action, "(ss)", NULL, NULL },
  { "export-dialog", export_dialog_action, "s", NULL, NULL },
};

void
_ml_window_export_init (MlWindow *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self), export_actions, G_N_ELEMENTS (export_actions), self);
}
