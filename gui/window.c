/* window.c — MlWindow: the document swap, linked zoom and the actions.
 *
 * The widgets come from window.ui (a GResource); each side page is its
 * own widget (gui/…-page.c) with a set_document(); every worker job goes
 * through the MlJobBar (gui/job.c); pictures are written by gui/export.c.
 */
#include "gui/window.h"

#include <string.h>

#include "gui/application.h"
#include "gui/details-page.h"
#include "gui/export.h"
#include "gui/find-page.h"
#include "gui/issues-page.h"
#include "gui/job.h"
#include "gui/memlens-resources.h"
#include "gui/knobs-page.h"
#include "gui/overview.h"
#include "gui/peaks-page.h"
#include "gui/state-page.h"
#include "gui/table-page.h"
#include "sim/base/units.h"
#include "strategies/registry.h"

struct _MlWindow {
  GtkApplicationWindow parent;

  MlDocument   *doc;
  MlDocument   *doc2;                  /* a second file on the same axes (view A B), or NULL */
  char         *compare_path;          /* that file, to load once the first has */
  gboolean      rerun_second;          /* a re-run of doc goes on to doc2 */
  MlViewKnobs   knobs;
  char         *pending_strategy[2];   /* for the next load */
  gboolean      applying;              /* guards drop-down / action loops */
  gboolean      linking;               /* guards linked zoom */
  gboolean      from_list;             /* a list row is being chosen: stay on its page */
  char         *loading_path;
  int           pending_device;        /* --device for the first load, -1 = none */

  /* from window.ui */
  GtkWidget *title, *subtitle;
  GtkWidget *strategy_dd, *strategy2_dd, *compare_btn;
  GtkStringList *strategies;
  GtkWidget *device_dd;
  GtkStringList *devices;
  GtkWidget *search_entry;
  GtkWidget *content_stack, *empty_title;
  GtkWidget *banner_revealer, *banner_label;
  GtkWidget *summary0, *summary1;
  GtkWidget *timeline0, *timeline1;
  GtkWidget *timeline_box0, *timeline_box1;
  GtkWidget *overview;
  GtkWidget *paned, *notebook;
  MlJobBar  *job_bar;
  MlDetailsPage *details_page;
  MlPeaksPage   *peaks_page;
  MlIssuesPage  *issues_page;
  MlFindPage    *find_page;
  MlTablePage   *table_page;
  MlStatePage   *state_page;
  MlKnobsPage   *knobs_page;
  GMenu     *open_menu;

  /* index 0 / 1: the two timelines of compare mode */
  GtkWidget *summary[2], *timeline[2], *timeline_box[2];
};

G_DEFINE_FINAL_TYPE (MlWindow, ml_window, GTK_TYPE_APPLICATION_WINDOW)

enum { JOB_FINISHED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void apply_document (MlWindow *self, MlDocument *doc);
static gboolean start_pending_compare (gpointer user);
static void show_page (MlWindow *self, gpointer page);

/* ---- messages and jobs -------------------------------------------------- */

const char *
ml_window_get_message (MlWindow *self)
{
  /* shown means on screen: a banner on a page the stack hides is not */
  return gtk_revealer_get_reveal_child (GTK_REVEALER (self->banner_revealer))
             && (!gtk_widget_get_mapped (GTK_WIDGET (self)) || gtk_widget_get_mapped (self->banner_label))
           ? gtk_label_get_text (GTK_LABEL (self->banner_label)) : NULL;
}

GtkWidget *
ml_window_get_device_selector (MlWindow *self)
{
  return self->device_dd;
}

void
ml_window_show_message (MlWindow *self, const char *text)
{
  gtk_label_set_text (GTK_LABEL (self->banner_label), text);
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->banner_revealer), text && *text);
}

static void
on_banner_close (MlWindow *self)
{
  ml_window_show_message (self, NULL);
}

static void
on_job_finished (MlJobBar *bar, gboolean ok, MlWindow *self)
{
  g_signal_emit (self, signals[JOB_FINISHED], 0, ok);
}

/* ---- loading ---------------------------------------------------------------- */

static gboolean
loaded (gpointer owner, GAsyncResult *res, MlJob *job, gboolean current)
{
  MlWindow *self = owner;
  g_autoptr (GError) error = NULL;
  g_autoptr (MlDocument) doc = ml_document_load_finish (res, &error);
  if (!current)
    return doc != NULL;
  MlApplication *app = ML_APPLICATION (gtk_window_get_application (GTK_WINDOW (self)));
  if (doc)
    {
      ml_window_show_message (self, NULL);
      g_clear_pointer (&self->doc2, ml_document_unref);   /* a new first file compares with nothing yet */
      apply_document (self, doc);
      ml_application_note_recent (app, doc->box->path);
      ml_application_note_opened (app, TRUE);
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

/* ---- a second file on the same axes ---- */

/* The end of a job that made the second file's document (@doc, or NULL
 * and @error): opened to compare, or re-run with the first file's
 * strategy. Shows it below the first while @wanted (the first file is
 * still there, and for a re-run the comparison too); a failure other than
 * a cancel goes to the banner and stderr as "@failed: reason". Returns
 * whether there is a document, as every job's end does. */
static gboolean
second_loaded (MlWindow *self, MlDocument *doc, const GError *error, gboolean current, gboolean wanted,
               const char *failed)
{
  if (!current)
    return doc != NULL;
  if (doc && self->doc && wanted)
    {
      g_clear_pointer (&self->doc2, ml_document_unref);
      self->doc2 = ml_document_ref (doc);
      apply_document (self, self->doc);
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
  gboolean shown = second_loaded (self, doc, error, current, TRUE, failed);
  if (shown && current && self->doc2 == doc)
    ml_application_note_recent (ML_APPLICATION (gtk_window_get_application (GTK_WINDOW (self))), doc->box->path);
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
  apply_document (self, doc);
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

static GtkFileFilter *trace_filter (void);

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

/* Loads @path reading @device (-1: the reader's choice). */
static void
open_path (MlWindow *self, const char *path, int device)
{
  g_free (self->loading_path);
  self->loading_path = g_strdup (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *what = device >= 0 ? g_strdup_printf ("Opening device %d of %s", device, base)
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
  return second_loaded (self, doc, error, current, self->doc2 != NULL, "Could not re-run the second file");
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
      apply_document (self, doc);
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
  apply_document (self, self->doc);  /* puts the drop-downs back */
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
apply_knobs_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  MlViewKnobs k;
  if (!ml_knobs_page_read (self->knobs_page, &self->knobs, &k))
    return;
  self->knobs = k;
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

/* ---- going where a list row points ------------------------------------------ */

static MlTimelineView *
tl (MlWindow *self, int i)
{
  return ML_TIMELINE_VIEW (self->timeline[i ? 1 : 0]);
}

static void
focus_buffer (MlWindow *self, long buffer)
{
  if (buffer < 0 || !self->doc)
    return;
  const MlBuffer *b = &self->doc->bufs->buf[buffer];
  double t0, t1;
  ml_timeline_view_get_time_span (tl (self, 0), &t0, &t1);
  double life = (double) (b->end - b->start);
  /* keep the zoom when the buffer is visible and not tiny, else frame it */
  if (!(b->start >= t0 && b->end <= t1 && life * 200 > (t1 - t0)))
    {
      double pad = MAX (life, 1.0);
      ml_timeline_view_set_time_span (tl (self, 0), (double) b->start - pad, (double) b->end + pad);
    }
}

static void
on_target_chosen (MlListPage *page, const MlTarget *t, MlWindow *self)
{
  if (!self->doc)
    return;
  MlTimelineView *tv = tl (self, 0);
  double span = MAX ((double) self->doc->bufs->end_tick / 8, 2.0);
  self->from_list = TRUE;
  switch (t->kind)
    {
    case ML_TARGET_PEAK:
      {
        const MlPeak *p = &self->doc->peaks.peaks[t->index];
        ml_timeline_view_set_highlights (tv, p->blame, MIN (p->n_blame, (size_t) 16));
        ml_timeline_view_set_marker (tv, (double) p->tick, "peak");
        ml_overview_set_marker (ML_OVERVIEW (self->overview), (double) p->tick);
        ml_timeline_view_focus_tick (tv, (double) p->tick, span);
        ml_timeline_view_select_buffer (tv, t->a);
        break;
      }
    case ML_TARGET_RACE:
      {
        guint32 hl[2] = { (guint32) t->a, (guint32) t->b };
        ml_timeline_view_set_highlights (tv, hl, 2);
        ml_timeline_view_set_marker (tv, (double) t->tick, "race");
        ml_overview_set_marker (ML_OVERVIEW (self->overview), (double) t->tick);
        focus_buffer (self, t->a);
        ml_timeline_view_select_buffer (tv, t->a);
        break;
      }
    case ML_TARGET_OOM_PLAN:
    case ML_TARGET_OOM_TRACE:
      {
        MlTimelineView *target = t->kind == ML_TARGET_OOM_PLAN && t->index == 1 ? tl (self, 1) : tv;
        ml_timeline_view_set_marker (target, (double) t->tick, "OOM");
        ml_overview_set_marker (ML_OVERVIEW (self->overview), (double) t->tick);
        ml_timeline_view_focus_tick (tv, (double) t->tick, span);
        if (t->a >= 0)
          ml_timeline_view_select_buffer (target, t->a);
        break;
      }
    case ML_TARGET_BUFFER:
      ml_timeline_view_set_marker (tv, -1, NULL);
      focus_buffer (self, t->a);
      ml_timeline_view_select_buffer (tv, t->a);
      break;
    }
  self->from_list = FALSE;
}

/* The State page chose a tick: mark it where the state is taken. */
static void
on_state_tick (MlStatePage *page, guint64 tick, MlWindow *self)
{
  if (!self->doc)
    return;
  ml_timeline_view_set_marker (tl (self, 0), (double) tick + 0.5, "state");
  ml_overview_set_marker (ML_OVERVIEW (self->overview), (double) tick + 0.5);
  double t0, t1;
  ml_timeline_view_get_time_span (tl (self, 0), &t0, &t1);
  if ((double) tick < t0 || (double) tick >= t1)
    ml_timeline_view_focus_tick (tl (self, 0), (double) tick, 0);
}

gboolean
ml_window_show_state (MlWindow *self, guint64 tick)
{
  if (!self->doc)
    return FALSE;
  show_page (self, self->state_page);
  ml_state_page_set_tick (self->state_page, tick);
  on_state_tick (self->state_page, ml_state_page_get_tick (self->state_page), self);
  return TRUE;
}

MlPeaksPage *
ml_window_get_peaks_page (MlWindow *self)
{
  return self->peaks_page;
}

MlStatePage *
ml_window_get_state_page (MlWindow *self)
{
  return self->state_page;
}

gboolean
ml_window_show_peak (MlWindow *self, guint index)
{
  if (!self->doc || index >= self->doc->peaks.n)
    return FALSE;
  gtk_notebook_set_current_page (GTK_NOTEBOOK (self->notebook),
                                 gtk_notebook_page_num (GTK_NOTEBOOK (self->notebook), GTK_WIDGET (self->peaks_page)));
  /* its row: merged plateaus are not listed */
  GArray *shown = ml_peaks_page_get_shown (self->peaks_page);
  for (guint row = 0; row < shown->len; row++)
    if (g_array_index (shown, guint, row) == index)
      return ml_list_page_choose (ML_LIST_PAGE (self->peaks_page), row);
  return FALSE;
}

static void
show_page (MlWindow *self, gpointer page)
{
  gtk_notebook_set_current_page (GTK_NOTEBOOK (self->notebook),
                                 gtk_notebook_page_num (GTK_NOTEBOOK (self->notebook), GTK_WIDGET (page)));
}

static void
run_search (MlWindow *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  ml_find_page_set_document (self->find_page, self->doc, text);
  GArray *hits = ml_find_page_get_hits (self->find_page);
  ml_timeline_view_set_highlights (tl (self, 0), hits ? (const guint32 *) hits->data : NULL, hits ? hits->len : 0);
  if (hits)
    show_page (self, self->find_page);
}

static void
on_search_changed (GtkSearchEntry *e, MlWindow *self)
{
  if (self->doc)
    run_search (self);
}

static void
on_search_activate (GtkSearchEntry *e, MlWindow *self)
{
  GArray *hits = ml_find_page_get_hits (self->find_page);
  if (hits && hits->len)
    {
      long k = g_array_index (hits, guint32, 0);
      focus_buffer (self, k);
      ml_timeline_view_select_buffer (tl (self, 0), k);
    }
}

static void
show_buffer_details (MlWindow *self, long k)
{
  ml_details_page_set_document (self->details_page, self->doc, k);
  if (!self->from_list && self->doc && k >= 0)
    show_page (self, self->details_page);
}

char *
ml_window_dup_details_text (MlWindow *self)
{
  return ml_details_page_dup_text (self->details_page);
}

static void
on_buffer_selected (MlTimelineView *tv, long buffer, MlWindow *self)
{
  /* mirror the selection in the other view */
  if (self->doc2)
    {
      /* two files: their buffers are not the same; the side panel is the
       * first file's */
      if (GTK_WIDGET (tv) == self->timeline[0])
        show_buffer_details (self, buffer);
      return;
    }
  for (int i = 0; i < 2; i++)
    if (self->timeline[i] != GTK_WIDGET (tv) && gtk_widget_get_visible (self->timeline_box[i])
        && ml_timeline_view_get_selected (tl (self, i)) != buffer)
      ml_timeline_view_select_buffer (tl (self, i), buffer);
  show_buffer_details (self, buffer);
}

/* ---- linked zoom ------------------------------------------------------------- */

static void
on_view_changed (MlTimelineView *tv, MlWindow *self)
{
  double t0, t1;
  if (!ml_timeline_view_get_scene (tv))
    return;
  if (!self->linking)
    {
      /* the other view shows the same span, in the axis' unit: the same
       * ticks for two strategies of one trace, the same times (or tick
       * numbers) for two files */
      self->linking = TRUE;
      double u0, u1;
      ml_timeline_view_get_axis_span (tv, &u0, &u1);
      for (int i = 0; i < 2; i++)
        if (self->timeline[i] != GTK_WIDGET (tv))
          ml_timeline_view_set_axis_span (tl (self, i), u0, u1);
      self->linking = FALSE;
    }
  ml_timeline_view_get_time_span (tl (self, 0), &t0, &t1);   /* the overview is the first file's */
  ml_overview_set_window (ML_OVERVIEW (self->overview), t0, t1);
}

static void
on_overview_window (MlOverview *ov, double t0, double t1, MlWindow *self)
{
  ml_timeline_view_set_time_span (tl (self, 0), t0, t1);
}

/* ---- showing a document ----------------------------------------------------- */

static void
update_summary (MlWindow *self, int i)
{
  MlDocument *d = i == 1 && self->doc2 ? self->doc2 : self->doc;
  const MlRun *run = d ? d->runs[self->doc2 ? 0 : i] : NULL;
  if (!run)
    {
      gtk_label_set_text (GTK_LABEL (self->summary[i]), "");
      return;
    }
  if (!run->plan)
    {
      g_autofree char *m = g_markup_printf_escaped ("<b>%s</b> failed: %s", run->strategy, run->error);
      gtk_label_set_markup (GTK_LABEL (self->summary[i]), m);
      return;
    }
  const MlMetrics *m = &run->metrics;
  char a[32], b[32], c[32];
  GString *s = g_string_new (NULL);
  if (self->doc2)
    {
      /* two files: say which file each timeline is */
      g_autofree char *base = g_path_get_basename (d->box->path);
      g_autofree char *esc = g_markup_escape_text (base, -1);
      g_string_append_printf (s, "<b>%s</b> · ", esc);
    }
  g_autofree char *name = g_markup_escape_text (run->strategy, -1);
  g_string_append_printf (s, "<b>%s</b>   peak <b>%s</b>   lower bound %s   overhead %.1f%%   "
                          "fragmentation max %.2f, at peak %.2f   waste %s",
                          name, ml_format_size (m->peak, a, sizeof a), ml_format_size (m->lower_bound, b, sizeof b),
                          m->overhead * 100, m->frag_max, m->frag_at_peak, ml_format_size (m->internal_waste, c, sizeof c));
  if (run->plan->oom.hit)
    g_string_append_printf (s, "   <span foreground='#c0392b'><b>OOM at tick %" G_GUINT64_FORMAT " (%s)</b></span>",
                            run->plan->oom.tick, ml_oom_verdict_name (run->plan->oom.verdict));
  size_t ni = ml_issues_count (&run->issues);
  if (ni)
    g_string_append_printf (s, "   <span foreground='#c0392b'><b>%zu issue%s</b></span>", ni, ni == 1 ? "" : "s");
  if (run->plan->note)
    {
      g_autofree char *note = g_markup_escape_text (run->plan->note, -1);
      g_string_append_printf (s, "   <i>%s</i>", note);
    }
  gtk_label_set_markup (GTK_LABEL (self->summary[i]), s->str);
  g_string_free (s, TRUE);
  gtk_widget_set_tooltip_text (self->summary[i],
                               "fragmentation = 1 − largest free block / free bytes inside the reserved memory: "
                               "the share of the free memory one request cannot use. For a caching allocator the "
                               "free bytes are its cached blocks, so a high value says the cache is split into "
                               "blocks smaller than the largest request, not that memory is lost.");
}


static void
set_dropdown (GtkWidget *dd, GtkStringList *list, const char *name)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (list));
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (gtk_string_list_get_string (list, i), name) == 0)
      {
        gtk_drop_down_set_selected (GTK_DROP_DOWN (dd), i);
        return;
      }
}

static void
apply_document (MlWindow *self, MlDocument *doc)
{
  self->applying = TRUE;
  gboolean same_trace = self->doc && doc && self->doc->box == doc->box;
  if (doc != self->doc)
    {
      if (doc)
        ml_document_ref (doc);
      g_clear_pointer (&self->doc, ml_document_unref);
      self->doc = doc;
    }
  gtk_widget_set_sensitive (self->strategy_dd, doc != NULL);
  gtk_widget_set_sensitive (self->compare_btn, doc != NULL && !self->doc2);
  if (!doc)
    {
      gtk_stack_set_visible_child_name (GTK_STACK (self->content_stack), "empty");
      self->applying = FALSE;
      return;
    }
  gtk_stack_set_visible_child_name (GTK_STACK (self->content_stack), "main");
  const MlTrace *t = ml_document_trace (doc);
  self->knobs = doc->knobs;

  if (!same_trace)
    {
      g_autofree const char **names = ml_document_strategy_names (t);
      guint n_old = g_list_model_get_n_items (G_LIST_MODEL (self->strategies));
      gtk_string_list_splice (self->strategies, 0, n_old, names);
      g_autofree char *base = g_path_get_basename (doc->box->path);
      gtk_label_set_text (GTK_LABEL (self->title), base);
      gtk_window_set_title (GTK_WINDOW (self), base);
      char lb[32];
      g_autofree char *dev = ml_window_dup_device_text (self);
      g_autofree char *sub = g_strdup_printf ("%s%s%s · %zu events · %zu buffers · lower bound %s%s",
                                              dev ? dev : "", dev ? " · " : "", ml_trace_str (t, t->source),
                                              t->n_events, doc->bufs->n,
                                              ml_format_size (doc->bufs->lower_bound, lb, sizeof lb),
                                              t->has_times ? " · timed" : "");
      gtk_label_set_text (GTK_LABEL (self->subtitle), sub);
      gtk_widget_set_tooltip_text (self->subtitle, sub);
      /* the device selector: one row per device the file holds */
      guint n_old_dev = g_list_model_get_n_items (G_LIST_MODEL (self->devices));
      gtk_string_list_splice (self->devices, 0, n_old_dev, NULL);
      guint shown = 0;
      for (size_t d = 0; d < t->n_devices; d++)
        {
          const MlDeviceInfo *di = &t->devices[d];
          g_autofree char *row = di->entries ? g_strdup_printf ("Device %u · %" G_GUINT64_FORMAT " entries%s", di->device,
                                                                di->entries, di->ooms ? " · OOM" : "")
                                             : g_strdup_printf ("Device %u · no trace", di->device);
          gtk_string_list_append (self->devices, row);
          if (di->device == t->device)
            shown = (guint) d;
        }
      gtk_widget_set_visible (self->device_dd, t->n_devices > 1);
      if (t->n_devices > 1)
        gtk_drop_down_set_selected (GTK_DROP_DOWN (self->device_dd), shown);
      g_simple_action_set_state (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "device")),
                                 g_variant_new_int32 ((gint32) t->device));
      gtk_editable_set_text (GTK_EDITABLE (self->search_entry), "");
    }
  set_dropdown (self->strategy_dd, self->strategies, doc->runs[0]->strategy);
  g_simple_action_set_state (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "strategy")),
                             g_variant_new_string (doc->runs[0]->strategy));
  gboolean cmp = doc->runs[1] != NULL;
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->compare_btn), cmp);
  gtk_widget_set_visible (self->strategy2_dd, cmp);
  if (cmp)
    {
      set_dropdown (self->strategy2_dd, self->strategies, doc->runs[1]->strategy);
      g_simple_action_set_state (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "strategy2")),
                                 g_variant_new_string (doc->runs[1]->strategy));
    }
  else if (!same_trace)
    {
      /* suggest a useful second strategy */
      set_dropdown (self->strategy2_dd, self->strategies, ml_strategy_second (doc->runs[0]->strategy)->name);
    }

  long sel = same_trace ? ml_timeline_view_get_selected (tl (self, 0)) : -1;
  /* the second view fits when it first shows: that must not move the
   * first (linked zoom), which keeps its span; the second takes it below */
  self->linking = TRUE;
  gboolean two = self->doc2 != NULL;
  for (int i = 0; i < 2; i++)
    {
      /* two files: the second timeline is the second file's first run */
      MlDocument *d = i == 1 && two ? self->doc2 : doc;
      int which = two ? 0 : i;
      gboolean shown = d->runs[which] != NULL;
      gtk_widget_set_visible (self->timeline_box[i], shown);
      ml_timeline_view_set_document (tl (self, i), shown ? d : NULL, which);
      update_summary (self, i);
    }
  self->linking = FALSE;
  ml_overview_set_document (ML_OVERVIEW (self->overview), doc);
  ml_overview_set_warp (ML_OVERVIEW (self->overview), ml_timeline_view_get_view (tl (self, 0))->warp);
  /* compare mode: one legend (under the lower view), one address scale;
   * two files have a legend each (their call sites differ) */
  ml_timeline_view_get_style (tl (self, 0))->show_legend = !cmp || two;
  ml_timeline_view_style_changed (tl (self, 0));
  gtk_widget_set_sensitive (self->compare_btn, !two);
  if (two && doc->runs[0]->scene && self->doc2->runs[0]->scene)
    {
      /* one byte scale and one time scale, whatever their sizes: the
       * question is which run is taller and longer */
      double e0 = ml_timeline_view_get_extent (tl (self, 0)), e1 = ml_timeline_view_get_extent (tl (self, 1));
      ml_timeline_view_set_addr_extent (tl (self, 0), MAX (e0, e1));
      ml_timeline_view_set_addr_extent (tl (self, 1), MAX (e0, e1));
      double u0 = ml_timeline_view_get_axis_extent (tl (self, 0)), u1 = ml_timeline_view_get_axis_extent (tl (self, 1));
      double t0, t1;
      ml_timeline_view_get_time_span (tl (self, 0), &t0, &t1);
      gboolean was_fit = t0 <= 0 && t1 >= (double) MAX (doc->bufs->end_tick, 1);
      self->linking = TRUE;
      ml_timeline_view_set_axis_extent (tl (self, 0), MAX (u0, u1));
      ml_timeline_view_set_axis_extent (tl (self, 1), MAX (u0, u1));
      if (was_fit)
        ml_timeline_view_zoom_fit (tl (self, 0));
      self->linking = FALSE;
      g_autofree char *a = g_path_get_basename (doc->box->path);
      g_autofree char *b = g_path_get_basename (self->doc2->box->path);
      g_autofree char *title = g_strdup_printf ("%s vs %s", a, b);
      gtk_label_set_text (GTK_LABEL (self->title), title);
      gtk_window_set_title (GTK_WINDOW (self), title);
    }
  if (cmp && doc->runs[0]->scene && doc->runs[1]->scene)
    {
      /* one scale while the two are within 4x of each other; beyond that
       * the smaller would be a flat line, and the summary lines say it */
      double e0 = ml_timeline_view_get_extent (tl (self, 0)), e1 = ml_timeline_view_get_extent (tl (self, 1));
      double ext = MAX (e0, e1) <= 4 * MIN (e0, e1) ? MAX (e0, e1) : 0;
      ml_timeline_view_set_addr_extent (tl (self, 0), ext);
      ml_timeline_view_set_addr_extent (tl (self, 1), ext);
    }
  if (cmp || two)
    {
      double u0, u1;
      ml_timeline_view_get_axis_span (tl (self, 0), &u0, &u1);
      ml_timeline_view_set_axis_span (tl (self, 1), u0, u1);
    }
  on_view_changed (tl (self, 0), self);
  /* the pages */
  ml_knobs_page_set_document (self->knobs_page, doc);
  ml_peaks_page_set_document (self->peaks_page, doc);
  ml_issues_page_set_document (self->issues_page, doc);
  ml_table_page_set_document (self->table_page, doc);
  ml_state_page_set_document (self->state_page, doc);
  if (gtk_editable_get_text (GTK_EDITABLE (self->search_entry))[0])
    run_search (self);
  else
    ml_find_page_set_document (self->find_page, doc, NULL);
  ml_timeline_view_select_buffer (tl (self, 0), sel);
  show_buffer_details (self, sel);   /* the new run's offsets */
  if (!same_trace)
    {
      /* a new trace: start where the question usually is, at the peak,
       * with the keys (+, -, 0, arrows) going to the timeline */
      show_page (self, self->peaks_page);
      gtk_widget_grab_focus (self->timeline[0]);
    }
  self->applying = FALSE;
}

/* ---- export --------------------------------------------------------------------- */

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
  MlTimelineView *views[2] = { tl (self, 0), tl (self, 1) };
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

/* ---- view actions --------------------------------------------------------------- */

#define TV0 tl (self, 0)

static void zoom_in_action  (GSimpleAction *a, GVariant *p, gpointer u) { MlWindow *self = u; ml_timeline_view_zoom_in (TV0); }
static void zoom_out_action (GSimpleAction *a, GVariant *p, gpointer u) { MlWindow *self = u; ml_timeline_view_zoom_out (TV0); }
static void zoom_fit_action (GSimpleAction *a, GVariant *p, gpointer u) { MlWindow *self = u; ml_timeline_view_zoom_fit (TV0); }
static void pan_left_action (GSimpleAction *a, GVariant *p, gpointer u) { MlWindow *self = u; ml_timeline_view_pan (TV0, -0.2); }
static void pan_right_action(GSimpleAction *a, GVariant *p, gpointer u) { MlWindow *self = u; ml_timeline_view_pan (TV0, 0.2); }

static void
select_range_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  double t0, t1;
  g_variant_get (p, "(dd)", &t0, &t1);
  ml_timeline_view_set_time_span (TV0, MIN (t0, t1), MAX (t0, t1));
}

static void
select_buffer_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  gint32 k = g_variant_get_int32 (p);
  if (self->doc && k >= 0 && (gsize) k < self->doc->bufs->n)
    focus_buffer (self, k);
  ml_timeline_view_select_buffer (TV0, self->doc && k >= 0 && (gsize) k < self->doc->bufs->n ? k : -1);
}

static void
strategy_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  const char *name = g_variant_get_string (p, NULL);
  gboolean second = g_str_equal (g_action_get_name (G_ACTION (a)), "strategy2");
  g_simple_action_set_state (a, p);
  set_dropdown (second ? self->strategy2_dd : self->strategy_dd, self->strategies, name);
}

static void
compare_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->compare_btn), g_variant_get_boolean (p));
}

static void
color_by_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  MlColorBy by;
  if (ml_color_by_parse (g_variant_get_string (p, NULL), &by) < 0)
    return;
  if (by == ML_COLOR_BY_KIND && self->doc)
    {
      /* PyTorch snapshots and CSV instances record no kinds: every buffer
       * would be one colour */
      gboolean any = FALSE;
      for (gsize i = 0; i < self->doc->bufs->n && !any; i++)
        any = (self->doc->bufs->buf[i].flags & (ML_BUF_WEIGHT | ML_BUF_ACTIVATION | ML_BUF_INPUT | ML_BUF_OUTPUT)) != 0;
      if (!any)
        {
          ml_window_show_message (self, "This trace records no buffer kinds (weight, activation, input, output): "
                                        "PyTorch snapshots and planning instances have none. The colours stay by "
                                        "call site.");
          return;
        }
    }
  g_simple_action_set_state (a, p);
  for (int i = 0; i < 2; i++)
    {
      ml_timeline_view_get_style (tl (self, i))->color_by = by;
      ml_timeline_view_style_changed (tl (self, i));
    }
}

static void
plot_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  MlPlot plot;
  if (ml_plot_parse (g_variant_get_string (p, NULL), &plot) < 0)
    return;
  g_simple_action_set_state (a, p);
  for (int i = 0; i < 2; i++)
    ml_timeline_view_set_plot (tl (self, i), plot);
  if (self->doc && self->doc->runs[1])
    apply_document (self, self->doc);   /* the shared scale of compare mode, in the new units */
}

static void
time_axis_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  MlTimeAxis ax;
  if (ml_time_axis_parse (g_variant_get_string (p, NULL), &ax) < 0)
    return;
  g_simple_action_set_state (a, p);
  for (int i = 0; i < 2; i++)
    {
      ml_timeline_view_get_style (tl (self, i))->time_axis = ax;
      ml_timeline_view_style_changed (tl (self, i));
    }
  ml_overview_set_warp (ML_OVERVIEW (self->overview), ml_timeline_view_get_view (tl (self, 0))->warp);
  if (ax == ML_TIME_AXIS_TIME && self->doc && self->doc->runs[0]->scene
      && !ml_scene_real_time (self->doc->runs[0]->scene, ax))
    ml_window_show_message (self, "This trace's events carry no times (or all the same one): the axis stays in ticks.");
}

/* T: real time <-> ticks (what the axis shows now, the other way). */
static void
toggle_time_axis_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  gboolean timed = ml_timeline_view_get_view (tl (self, 0))->warp != NULL;
  g_action_group_activate_action (G_ACTION_GROUP (self), "time-axis", g_variant_new_string (timed ? "ticks" : "time"));
}

static void
search_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  gtk_widget_grab_focus (self->search_entry);
}

static void
show_panel_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  GVariant *st = g_action_get_state (G_ACTION (a));
  gboolean on = !g_variant_get_boolean (st);
  g_variant_unref (st);
  g_simple_action_set_state (a, g_variant_new_boolean (on));
  gtk_widget_set_visible (gtk_paned_get_end_child (GTK_PANED (self->paned)), on);
}

static void
close_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  gtk_window_close (GTK_WINDOW (u));
}

static const GActionEntry win_actions[] = {
  { "zoom-in", zoom_in_action, NULL, NULL, NULL },
  { "zoom-out", zoom_out_action, NULL, NULL, NULL },
  { "zoom-fit", zoom_fit_action, NULL, NULL, NULL },
  { "pan-left", pan_left_action, NULL, NULL, NULL },
  { "pan-right", pan_right_action, NULL, NULL, NULL },
  { "select-range", select_range_action, "(dd)", NULL, NULL },
  { "select-buffer", select_buffer_action, "i", NULL, NULL },
  { "strategy", strategy_action, "s", "'best-fit'", NULL },
  { "strategy2", strategy_action, "s", "'first-fit'", NULL },
  { "compare", compare_action, "b", "false", NULL },
  { "device", device_action, "i", "0", NULL },
  { "compare-file", compare_file_action, NULL, NULL, NULL },
  { "stop-comparing", stop_comparing_action, NULL, NULL, NULL },
  { "color-by", color_by_action, "s", "'site'", NULL },
  { "time-axis", time_axis_action, "s", "'auto'", NULL },
  { "toggle-time-axis", toggle_time_axis_action, NULL, NULL, NULL },
  { "plot", plot_action, "s", "'address'", NULL },
  { "export", export_action, "(ss)", NULL, NULL },
  { "export-dialog", export_dialog_action, "s", NULL, NULL },
  { "apply-knobs", apply_knobs_action, NULL, NULL, NULL },
  { "sweep-knob", sweep_knob_action, NULL, NULL, NULL },
  { "compare-all", compare_all_action, NULL, NULL, NULL },
  { "cancel", cancel_action, NULL, NULL, NULL },
  { "search", search_action, NULL, NULL, NULL },
  { "show-panel", show_panel_action, NULL, "true", NULL },
  { "close", close_action, NULL, NULL, NULL },
};

/* ---- building the window ------------------------------------------------------------ */

static void
add_key (GtkShortcutController *sc, guint key, GdkModifierType mods, const char *action)
{
  gtk_shortcut_controller_add_shortcut (sc, gtk_shortcut_new (gtk_keyval_trigger_new (key, mods),
                                                              gtk_named_action_new (action)));
}

static void
ml_window_init (MlWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  ml_view_knobs_init (&self->knobs);
  self->pending_device = -1;
  self->summary[0] = self->summary0, self->summary[1] = self->summary1;
  self->timeline[0] = self->timeline0, self->timeline[1] = self->timeline1;
  self->timeline_box[0] = self->timeline_box0, self->timeline_box[1] = self->timeline_box1;
  g_action_map_add_action_entries (G_ACTION_MAP (self), win_actions, G_N_ELEMENTS (win_actions), self);

  /* the application's recent files under Open */
  GMenuModel *recent = ml_application_get_recent_menu (ML_APPLICATION (g_application_get_default ()));
  g_menu_append_section (self->open_menu, "Recent", recent);

  /* drag and drop */
  GtkDropTarget *drop = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  GType types[] = { GDK_TYPE_FILE_LIST, G_TYPE_FILE };
  gtk_drop_target_set_gtypes (drop, types, G_N_ELEMENTS (types));
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));

  /* single keys (+, −, 0, arrows) only when no entry takes them: bubble phase */
  GtkEventController *sc = gtk_shortcut_controller_new ();
  gtk_event_controller_set_propagation_phase (sc, GTK_PHASE_BUBBLE);
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_plus, 0, "win.zoom-in");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_equal, 0, "win.zoom-in");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_KP_Add, 0, "win.zoom-in");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_minus, 0, "win.zoom-out");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_KP_Subtract, 0, "win.zoom-out");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_0, 0, "win.zoom-fit");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_KP_0, 0, "win.zoom-fit");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_Left, 0, "win.pan-left");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_Right, 0, "win.pan-right");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_Escape, 0, "win.cancel");
  add_key (GTK_SHORTCUT_CONTROLLER (sc), GDK_KEY_t, 0, "win.toggle-time-axis");
  gtk_widget_add_controller (GTK_WIDGET (self), sc);

  apply_document (self, NULL);
  show_buffer_details (self, -1);
}

static void
ml_window_dispose (GObject *obj)
{
  MlWindow *self = ML_WINDOW (obj);
  ml_job_bar_cancel (self->job_bar);
  g_clear_pointer (&self->doc, ml_document_unref);
  g_clear_pointer (&self->doc2, ml_document_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), ML_TYPE_WINDOW);
  G_OBJECT_CLASS (ml_window_parent_class)->dispose (obj);
}

static void
ml_window_finalize (GObject *obj)
{
  MlWindow *self = ML_WINDOW (obj);
  g_free (self->pending_strategy[0]);
  g_free (self->pending_strategy[1]);
  g_free (self->loading_path);
  g_free (self->compare_path);
  G_OBJECT_CLASS (ml_window_parent_class)->finalize (obj);
}

static void
ml_window_class_init (MlWindowClass *klass)
{
  GObjectClass *oc = G_OBJECT_CLASS (klass);
  oc->dispose = ml_window_dispose;
  oc->finalize = ml_window_finalize;
  signals[JOB_FINISHED] = g_signal_new ("job-finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);

  ml_viewer_register_resource ();
  /* the window's style, once for the display */
  GtkCssProvider *css = gtk_css_provider_new ();
  gtk_css_provider_load_from_resource (css, "/org/memlens/Viewer/style.css");
  gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_object_unref (css);
  /* the types window.ui names */
  g_type_ensure (ML_TYPE_TIMELINE_VIEW);
  g_type_ensure (ML_TYPE_OVERVIEW);
  g_type_ensure (ML_TYPE_JOB_BAR);
  g_type_ensure (ML_TYPE_DETAILS_PAGE);
  g_type_ensure (ML_TYPE_PEAKS_PAGE);
  g_type_ensure (ML_TYPE_ISSUES_PAGE);
  g_type_ensure (ML_TYPE_FIND_PAGE);
  g_type_ensure (ML_TYPE_TABLE_PAGE);
  g_type_ensure (ML_TYPE_STATE_PAGE);
  g_type_ensure (ML_TYPE_KNOBS_PAGE);

  GtkWidgetClass *wc = GTK_WIDGET_CLASS (klass);
  gtk_widget_class_set_template_from_resource (wc, "/org/memlens/Viewer/window.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (wc, MlWindow, name)
  CHILD (title);
  CHILD (subtitle);
  CHILD (strategy_dd);
  CHILD (strategy2_dd);
  CHILD (compare_btn);
  CHILD (strategies);
  CHILD (device_dd);
  CHILD (devices);
  CHILD (search_entry);
  CHILD (content_stack);
  CHILD (empty_title);
  CHILD (banner_revealer);
  CHILD (banner_label);
  CHILD (summary0);
  CHILD (summary1);
  CHILD (timeline0);
  CHILD (timeline1);
  CHILD (timeline_box0);
  CHILD (timeline_box1);
  CHILD (overview);
  CHILD (paned);
  CHILD (notebook);
  CHILD (job_bar);
  CHILD (details_page);
  CHILD (peaks_page);
  CHILD (issues_page);
  CHILD (find_page);
  CHILD (table_page);
  CHILD (state_page);
  CHILD (knobs_page);
  CHILD (open_menu);
#undef CHILD
  gtk_widget_class_bind_template_callback (wc, on_strategy_changed);
  gtk_widget_class_bind_template_callback (wc, on_compare_toggled);
  gtk_widget_class_bind_template_callback (wc, on_device_changed);
  gtk_widget_class_bind_template_callback (wc, on_search_changed);
  gtk_widget_class_bind_template_callback (wc, on_search_activate);
  gtk_widget_class_bind_template_callback (wc, on_banner_close);
  gtk_widget_class_bind_template_callback (wc, on_buffer_selected);
  gtk_widget_class_bind_template_callback (wc, on_view_changed);
  gtk_widget_class_bind_template_callback (wc, on_overview_window);
  gtk_widget_class_bind_template_callback (wc, on_job_finished);
  gtk_widget_class_bind_template_callback (wc, on_target_chosen);
  gtk_widget_class_bind_template_callback (wc, on_state_tick);
}

MlWindow *
ml_window_new (GtkApplication *app)
{
  return g_object_new (ML_TYPE_WINDOW, "application", app, NULL);
}

MlDocument *
ml_window_get_document (MlWindow *self)
{
  return self->doc;
}

MlTimelineView *
ml_window_get_timeline (MlWindow *self, int i)
{
  return tl (self, i);
}

gboolean
ml_window_is_busy (MlWindow *self)
{
  /* a second file or its re-run waiting to start counts */
  return ml_job_bar_is_busy (self->job_bar) || (self->compare_path && self->doc) || self->rerun_second;
}
