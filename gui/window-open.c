/* window-open.c — MlWindow: opening files.
 *
 * The load of a file in a worker and its end (the document swapped in, or
 * the reason in the banner and on stderr); the open dialog and drag and
 * drop; the device a snapshot is read for (the selector, win.device);
 * and a second file drawn below the first on the same axes
 * (win.compare-file, win.stop-comparing), loaded once the first has.
 */
#include "gui/window-private.h"
#include "sim/formats/load-options.h"

#include <string.h>

static gboolean start_pending_compare (gpointer user);

/* ---- loading ---------------------------------------------------------------- */

static gboolean
loaded (gpointer owner, GAsyncResult *res, MlJob *job, gboolean current)
{
  MlWindow *self = owner;
  g_autoptr (GError) error = NULL;
  g_autoptr (MlDocument) doc = ml_document_load_finish (res, &error);
  if (!current)
    return doc != NULL;
  if (doc)
    {
      ml_window_show_message (self, NULL);
      g_clear_pointer (&self->doc2, ml_document_unref);   /* a new first file compares with nothing yet */
      _ml_window_apply_document (self, doc);
      g_signal_emit_by_name (self, "file-opened", doc->box->path);
      if (self->compare_path)
        g_idle_add (start_pending_compare, g_object_ref (self));   /* after this job has ended */
    }
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* in the window (on whichever page it shows) and on stderr, where a
       * user who started it from a shell looks; the reader's message names
       * the file */
      size_t n = strlen (self->loading_path);
      gboolean named = strncmp (error->message, self->loading_path, n) == 0 && error->message[n] == ':';
      g_autofree char *msg = g_strdup_printf ("Could not open %s: %s", self->loading_path,
                                              named ? error->message + n + 1 + (error->message[n + 1] == ' ') : error->message);
      ml_window_show_message (self, msg);
      g_printerr ("memlens view: %s\n", msg);
    }
  if (!self->doc)
    gtk_label_set_markup (GTK_LABEL (self->empty_title), "<span size='x-large' weight='bold'>Open a memory trace</span>");
  return doc != NULL;
}

/* Loads @path reading @device (-1: the reader's choice; ML_DEVICE_HOST
 * the pinned host memory). */
static void
open_path (MlWindow *self, const char *path, int device)
{
  g_free (self->loading_path);
  self->loading_path = g_strdup (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *what = device >= 0 ? g_strdup_printf ("Opening device %d of %s", device, base)
                          : device == ML_DEVICE_HOST ? g_strdup_printf ("Opening the pinned host memory of %s", base)
                                                     : g_strdup_printf ("Opening %s", base);
  MlJob *job = ml_job_bar_begin (self->job_bar, what, loaded, self);
  if (!self->doc)
    {
      g_autofree char *m = g_markup_printf_escaped ("<span size='x-large' weight='bold'>Opening %s…</span>", base);
      gtk_label_set_markup (GTK_LABEL (self->empty_title), m);
    }
  /* a new file starts from its own default alignment and capacity */
  MlViewKnobs k = self->knobs;
  k.align = 0;
  k.capacity = 0;
  k.device = device;
  ml_document_load_async (path, &k, self->pending_strategy[0], self->pending_strategy[1], ml_job_cancellable (job),
                          ml_job_bar_progress, self->job_bar, ml_job_ready, job);
}

void
ml_window_open_path (MlWindow *self, const char *path)
{
  int device = self->pending_device;
  self->pending_device = -1;   /* a file opened later starts from its own default */
  open_path (self, path, device);
}

void
ml_window_set_initial_device (MlWindow *self, int device)
{
  self->pending_device = device;
}

void
ml_window_set_initial_strategies (MlWindow *self, const char *strategy, const char *compare)
{
  g_free (self->pending_strategy[0]);
  g_free (self->pending_strategy[1]);
  self->pending_strategy[0] = g_strdup (strategy);
  self->pending_strategy[1] = g_strdup (compare);
}

static void
on_file_chosen (GtkNativeDialog *dlg, int response, MlWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) f = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dlg));
      g_autofree char *path = f ? g_file_get_path (f) : NULL;
      if (path)
        ml_window_open_path (self, path);
    }
  g_object_unref (dlg);
}

static GtkFileFilter *
trace_filter (void)
{
  GtkFileFilter *f = gtk_file_filter_new ();
  gtk_file_filter_set_name (f, "Traces, snapshots, plans (memlens formats)");
  for (const MlTraceFormat *const *fmt = ml_trace_formats (); *fmt; fmt++)
    {
      g_auto (GStrv) exts = g_strsplit ((*fmt)->extensions, " ", -1);
      for (char **e = exts; *e; e++)
        if (**e)
          {
            g_autofree char *pat = g_strdup_printf ("*.%s", *e);
            gtk_file_filter_add_pattern (f, pat);
            g_autofree char *gz = g_strdup_printf ("*.%s.gz", *e);
            gtk_file_filter_add_pattern (f, gz);
          }
    }
  return f;
}

void
ml_window_choose_file (MlWindow *self)
{
  GtkFileChooserNative *dlg = gtk_file_chooser_native_new ("Open a trace", GTK_WINDOW (self),
                                                           GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  GtkFileFilter *f = trace_filter ();
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dlg), f);
  GtkFileFilter *all = gtk_file_filter_new ();
  gtk_file_filter_set_name (all, "All files");
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dlg), all);
  g_object_unref (f);
  g_object_unref (all);
  g_signal_connect (dlg, "response", G_CALLBACK (on_file_chosen), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dlg));
}

static gboolean
on_drop (GtkDropTarget *t, const GValue *value, double x, double y, MlWindow *self)
{
  if (G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    {
      GSList *files = g_value_get_boxed (value);
      if (files)
        {
          g_autofree char *path = g_file_get_path (files->data);
          if (path)
            {
              ml_window_open_path (self, path);
              return TRUE;
            }
        }
    }
  else if (G_VALUE_HOLDS (value, G_TYPE_FILE))
    {
      g_autofree char *path = g_file_get_path (g_value_get_object (value));
      if (path)
        {
          ml_window_open_path (self, path);
          return TRUE;
        }
    }
  return FALSE;
}

/* ---- the device of a snapshot ------------------------------------------------- */

gboolean
ml_window_show_device (MlWindow *self, guint device)
{
  MlDocument *doc = self->doc;
  if (!doc)
    return FALSE;
  const MlTrace *t = ml_document_trace (doc);
  gboolean known = FALSE;
  for (size_t d = 0; d < t->n_devices; d++)
    known |= t->devices[d].device == device;
  if (!known)
    return FALSE;
  if (device == t->device)
    return TRUE;
  /* the same strategies on the other device's trace, and the same second file */
  ml_window_set_initial_strategies (self, doc->runs[0]->strategy, doc->runs[1] ? doc->runs[1]->strategy : NULL);
  if (self->doc2)
    {
      g_free (self->compare_path);
      self->compare_path = g_strdup (self->doc2->box->path);
    }
  open_path (self, doc->box->path, (int) device);
  return TRUE;
}

char *
ml_window_dup_device_text (MlWindow *self)
{
  const MlTrace *t = self->doc ? ml_document_trace (self->doc) : NULL;
  if (t && t->device == ML_TRACE_HOST)
    return g_strdup ("the pinned host memory (host_segments, host_traces)");
  if (!t || t->n_devices < 2)
    return NULL;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "device %u of %zu", t->device, t->n_devices);
  if (t->device_reason)
    {
      /* the reader's "reading device 1 of 3: it recorded an OOM (14 trace
       * entries); --device N reads another": the reason */
      const char *r = ml_trace_str (t, t->device_reason);
      const char *colon = strstr (r, ": ");
      const char *end = strstr (r, "; --device");
      if (colon && end && end > colon)
        g_string_append_printf (s, ": %.*s", (int) (end - colon - 2), colon + 2);
    }
  else
    g_string_append (s, ", as chosen");
  return g_string_free (s, FALSE);
}

static void
on_device_changed (GObject *dd, GParamSpec *pspec, MlWindow *self)
{
  if (self->applying || !self->doc)
    return;
  const MlTrace *t = ml_document_trace (self->doc);
  guint i = gtk_drop_down_get_selected (GTK_DROP_DOWN (dd));
  if (i < t->n_devices)
    ml_window_show_device (self, t->devices[i].device);
}

static void
device_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  gint32 d = g_variant_get_int32 (p);
  if (d >= 0)
    ml_window_show_device (self, (guint) d);
}

/* ---- a second file on the same axes ------------------------------------------- */

/* The end of a job that made the second file's document (@doc, or NULL
 * and @error): opened to compare, or re-run with the first file's
 * strategy. Shows it below the first while @wanted (the first file is
 * still there, and for a re-run the comparison too); a failure other than
 * a cancel goes to the banner and stderr as "@failed: reason". Returns
 * whether there is a document, as every job's end does. */
gboolean
_ml_window_second_loaded (MlWindow *self, MlDocument *doc, const GError *error, gboolean current, gboolean wanted,
               const char *failed)
{
  if (!current)
    return doc != NULL;
  if (doc && self->doc && wanted)
    {
      g_clear_pointer (&self->doc2, ml_document_unref);
      self->doc2 = ml_document_ref (doc);
      _ml_window_apply_document (self, self->doc);
    }
  else if (error && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autofree char *msg = g_strdup_printf ("%s: %s", failed, error->message);
      ml_window_show_message (self, msg);
      g_printerr ("memlens view: %s\n", msg);
    }
  return doc != NULL;
}

static gboolean
compare_loaded (gpointer owner, GAsyncResult *res, MlJob *job, gboolean current)
{
  MlWindow *self = owner;
  g_autoptr (GError) error = NULL;
  g_autoptr (MlDocument) doc = ml_document_load_finish (res, &error);
  g_autofree char *failed = g_strdup_printf ("Could not open %s to compare", (const char *) ml_job_get_data (job));
  gboolean shown = _ml_window_second_loaded (self, doc, error, current, TRUE, failed);
  if (shown && current && self->doc2 == doc)
    g_signal_emit_by_name (self, "file-opened", doc->box->path);
  return shown;
}

void
ml_window_compare_with (MlWindow *self, const char *path)
{
  if (!self->doc)
    {
      /* after the first file has loaded */
      g_free (self->compare_path);
      self->compare_path = g_strdup (path);
      return;
    }
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *what = g_strdup_printf ("Opening %s to compare", base);
  MlJob *job = ml_job_bar_begin (self->job_bar, what, compare_loaded, self);
  ml_job_set_data (job, g_strdup (path), g_free);
  MlViewKnobs k = self->knobs;
  k.align = 0;
  k.capacity = 0;
  k.device = -1;
  /* the strategy the first file shows: recorded against recorded, or both
   * replayed through the same strategy */
  ml_document_load_async (path, &k, self->doc->runs[0]->strategy, NULL, ml_job_cancellable (job),
                          ml_job_bar_progress, self->job_bar, ml_job_ready, job);
}

void
ml_window_stop_comparing (MlWindow *self)
{
  if (!self->doc2)
    return;
  g_clear_pointer (&self->doc2, ml_document_unref);
  MlDocument *doc = self->doc ? ml_document_ref (self->doc) : NULL;
  g_clear_pointer (&self->doc, ml_document_unref);   /* a new trace for the widgets: titles, scales */
  _ml_window_apply_document (self, doc);
  if (doc)
    ml_document_unref (doc);
}

MlDocument *
ml_window_get_document2 (MlWindow *self)
{
  return self->doc2;
}

static gboolean
start_pending_compare (gpointer user)
{
  MlWindow *self = user;
  g_autofree char *path = g_steal_pointer (&self->compare_path);
  if (path && self->doc)
    ml_window_compare_with (self, path);
  g_object_unref (self);
  return G_SOURCE_REMOVE;
}

static void
on_compare_file_chosen (GtkNativeDialog *dlg, int response, MlWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) f = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dlg));
      g_autofree char *path = f ? g_file_get_path (f) : NULL;
      if (path)
        ml_window_compare_with (self, path);
    }
  g_object_unref (dlg);
}

static void
compare_file_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  if (!self->doc)
    return;
  GtkFileChooserNative *dlg = gtk_file_chooser_native_new ("Compare with", GTK_WINDOW (self),
                                                           GTK_FILE_CHOOSER_ACTION_OPEN, "_Compare", "_Cancel");
  GtkFileFilter *f = trace_filter ();
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (dlg), f);
  g_object_unref (f);
  g_signal_connect (dlg, "response", G_CALLBACK (on_compare_file_chosen), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dlg));
}

static void
stop_comparing_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  ml_window_stop_comparing (u);
}

static const GActionEntry open_actions[] = {
  { "device", device_action, "i", "0", NULL },
  { "compare-file", compare_file_action, NULL, NULL, NULL },
  { "stop-comparing", stop_comparing_action, NULL, NULL, NULL },
};

void
_ml_window_open_init (MlWindow *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self), open_actions, G_N_ELEMENTS (open_actions), self);
  /* drag and drop */
  GtkDropTarget *drop = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  GType types[] = { GDK_TYPE_FILE_LIST, G_TYPE_FILE };
  gtk_drop_target_set_gtypes (drop, types, G_N_ELEMENTS (types));
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
}

void
_ml_window_open_class_init (GtkWidgetClass *wc)
{
  gtk_widget_class_bind_template_callback (wc, on_device_changed);
}
