/* window.c — MlWindow. */
#include "gui/window.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <string.h>

#include "gui/application.h"
#include "gui/overview.h"
#include "sim/base/units.h"
#include "strategies/registry.h"

struct _MlWindow {
  GtkApplicationWindow parent;

  MlDocument   *doc;
  MlViewKnobs   knobs;
  char         *pending_strategy[2];   /* for the next load */
  GCancellable *job;
  gboolean      applying;              /* guards drop-down / action loops */
  gboolean      linking;               /* guards linked zoom */
  gboolean      from_list;             /* a list row is being chosen: stay on its page */
  char         *loading_path;

  /* header */
  GtkWidget *title, *subtitle;
  GtkWidget *strategy_dd, *strategy2_dd, *compare_btn;
  GtkStringList *strategies;
  GtkWidget *search_entry;
  GtkWidget *panel_btn;

  /* main area */
  GtkWidget *content_stack;            /* "empty" | "main" */
  GtkWidget *empty_title;
  GtkWidget *summary[2];
  GtkWidget *timeline[2];
  GtkWidget *timeline_box[2];
  GtkWidget *overview;
  GtkWidget *progress_revealer, *progress_bar, *progress_label;
  GtkWidget *banner_revealer, *banner_label;
  GtkWidget *paned;

  /* side panel */
  GtkWidget *notebook;
  GtkWidget *details;                  /* label */
  GtkWidget *stack_label;
  GtkWidget *peaks_list, *issues_list, *search_list;
  GtkWidget *search_count;
  GtkWidget *compare_grid, *compare_status;
  GtkWidget *knob_align, *knob_capacity, *knob_chunk, *knob_time, *knob_options, *knob_retries;
  GtkWidget *knob_status;
  GArray    *search_hits;
};

G_DEFINE_FINAL_TYPE (MlWindow, ml_window, GTK_TYPE_APPLICATION_WINDOW)

enum { JOB_FINISHED, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PAGE_DETAILS, PAGE_PEAKS, PAGE_ISSUES, PAGE_SEARCH, PAGE_COMPARE, PAGE_KNOBS };

static void apply_document (MlWindow *self, MlDocument *doc);
static void start_rerun (MlWindow *self);
static void show_buffer_details (MlWindow *self, long buffer);

static const char *
fmt_size (uint64_t bytes, char *buf, gsize len)
{
  return ml_format_size (bytes, buf, len);
}

/* ---- messages and progress ------------------------------------------------ */

void
ml_window_show_message (MlWindow *self, const char *text)
{
  gtk_label_set_text (GTK_LABEL (self->banner_label), text);
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->banner_revealer), text && *text);
}

static void
on_progress (double fraction, const char *what, gpointer user)
{
  MlWindow *self = user;
  if (!self->job)
    return;
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress_bar), fraction);
  gtk_label_set_text (GTK_LABEL (self->progress_label), what);
}

static void
job_begin (MlWindow *self, const char *what)
{
  if (self->job)
    g_cancellable_cancel (self->job);
  g_clear_object (&self->job);
  self->job = g_cancellable_new ();
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->progress_bar), 0);
  gtk_label_set_text (GTK_LABEL (self->progress_label), what);
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->progress_revealer), TRUE);
}

/* Ends the job @c belongs to, if it is still the current one. */
static gboolean
job_end (MlWindow *self, GCancellable *c)
{
  if (self->job != c)
    return FALSE;
  g_clear_object (&self->job);
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->progress_revealer), FALSE);
  return TRUE;
}

typedef struct {
  MlWindow     *self;
  GCancellable *cancellable;
} JobRef;

static JobRef *
job_ref_new (MlWindow *self)
{
  JobRef *r = g_new0 (JobRef, 1);
  r->self = g_object_ref (self);
  r->cancellable = g_object_ref (self->job);
  return r;
}

static void
job_ref_free (JobRef *r)
{
  g_object_unref (r->self);
  g_object_unref (r->cancellable);
  g_free (r);
}

/* ---- loading ---------------------------------------------------------------- */

static void
on_loaded (GObject *src, GAsyncResult *res, gpointer user)
{
  JobRef *r = user;
  MlWindow *self = r->self;
  GError *error = NULL;
  MlDocument *doc = ml_document_load_finish (res, &error);
  gboolean current = job_end (self, r->cancellable);
  if (doc && current)
    {
      ml_window_show_message (self, NULL);
      apply_document (self, doc);
      ml_application_note_recent (ML_APPLICATION (gtk_window_get_application (GTK_WINDOW (self))), doc->box->path);
    }
  else if (error && current && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autofree char *msg = g_strdup_printf ("Could not open %s: %s", self->loading_path, error->message);
      ml_window_show_message (self, msg);
    }
  if (current && !self->doc)
    gtk_label_set_markup (GTK_LABEL (self->empty_title), "<span size='x-large' weight='bold'>Open a memory trace</span>");
  if (current)
    g_signal_emit (self, signals[JOB_FINISHED], 0, doc != NULL);
  if (doc)
    ml_document_unref (doc);
  g_clear_error (&error);
  job_ref_free (r);
}

void
ml_window_open_path (MlWindow *self, const char *path)
{
  g_free (self->loading_path);
  self->loading_path = g_strdup (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *what = g_strdup_printf ("Opening %s", base);
  job_begin (self, what);
  if (!self->doc)
    {
      g_autofree char *m = g_markup_printf_escaped ("<span size='x-large' weight='bold'>Opening %s…</span>", base);
      gtk_label_set_markup (GTK_LABEL (self->empty_title), m);
    }
  /* a new file starts from its own default alignment and capacity */
  MlViewKnobs k = self->knobs;
  k.align = 0;
  k.capacity = 0;
  ml_document_load_async (path, &k, self->pending_strategy[0], self->pending_strategy[1], self->job,
                          on_progress, self, on_loaded, job_ref_new (self));
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

static void
on_rerun_done (GObject *src, GAsyncResult *res, gpointer user)
{
  JobRef *r = user;
  MlWindow *self = r->self;
  GError *error = NULL;
  MlDocument *doc = ml_document_rerun_finish (res, &error);
  gboolean current = job_end (self, r->cancellable);
  if (doc && current)
    {
      ml_window_show_message (self, NULL);
      apply_document (self, doc);
    }
  else if (error && current)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        ml_window_show_message (self, "Cancelled: the view still shows the previous run.");
      else
        {
          g_autofree char *msg = g_strdup_printf ("Could not re-run: %s", error->message);
          ml_window_show_message (self, msg);
        }
      apply_document (self, self->doc);  /* puts the drop-downs back */
    }
  if (current)
    g_signal_emit (self, signals[JOB_FINISHED], 0, doc != NULL);
  if (doc)
    ml_document_unref (doc);
  g_clear_error (&error);
  job_ref_free (r);
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
  job_begin (self, what);
  ml_document_rerun_async (self->doc, &self->knobs, s1, s2, self->job, on_progress, self,
                           on_rerun_done, job_ref_new (self));
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

/* ---- knobs ------------------------------------------------------------------ */

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

static gboolean
read_knobs (MlWindow *self, MlViewKnobs *k)
{
  g_autoptr (GString) errors = g_string_new (NULL);
  *k = self->knobs;
  gboolean ok = parse_size_entry (self->knob_align, "alignment", &k->align, errors);
  ok &= parse_size_entry (self->knob_capacity, "capacity", &k->capacity, errors);
  ok &= parse_size_entry (self->knob_chunk, "chunk", &k->chunk, errors);
  if (ok && k->align && (k->align & (k->align - 1)))
    {
      g_string_append_printf (errors, "alignment %" G_GUINT64_FORMAT " is not a power of two\n", k->align);
      gtk_widget_add_css_class (self->knob_align, "error");
      ok = FALSE;
    }
  const char *tl = gtk_editable_get_text (GTK_EDITABLE (self->knob_time));
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
  k->retries = (guint) gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (self->knob_retries));
  g_strlcpy (k->options, gtk_editable_get_text (GTK_EDITABLE (self->knob_options)), sizeof k->options);
  gtk_label_set_text (GTK_LABEL (self->knob_status), ok ? "" : errors->str);
  return ok;
}

static void
apply_knobs_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  MlViewKnobs k;
  if (!read_knobs (self, &k))
    return;
  self->knobs = k;
  start_rerun (self);
}

gboolean
ml_window_set_knob (MlWindow *self, const char *name, const char *text)
{
  GtkWidget *e = g_str_equal (name, "align") ? self->knob_align
               : g_str_equal (name, "capacity") ? self->knob_capacity
               : g_str_equal (name, "chunk") ? self->knob_chunk
               : g_str_equal (name, "time-limit") ? self->knob_time
               : g_str_equal (name, "options") ? self->knob_options : NULL;
  if (!e)
    return FALSE;
  gtk_editable_set_text (GTK_EDITABLE (e), text);
  return TRUE;
}

static void
fill_knob_entries (MlWindow *self)
{
  char buf[64];
  const MlDocument *d = self->doc;
  g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT, d ? d->bufs->align : self->knobs.align);
  gtk_editable_set_text (GTK_EDITABLE (self->knob_align), buf);
  guint64 cap = self->knobs.capacity ? self->knobs.capacity : (d ? ml_document_trace (d)->capacity : 0);
  if (cap)
    g_snprintf (buf, sizeof buf, "%" G_GUINT64_FORMAT, cap);
  else
    buf[0] = 0;
  gtk_editable_set_text (GTK_EDITABLE (self->knob_capacity), buf);
}

/* ---- the comparison table -------------------------------------------------- */

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

static void
on_compare_done (GObject *src, GAsyncResult *res, gpointer user)
{
  JobRef *r = user;
  MlWindow *self = r->self;
  GError *error = NULL;
  GPtrArray *runs = ml_document_compare_finish (res, &error);
  gboolean current = job_end (self, r->cancellable);
  if (runs && current)
    {
      grid_clear (self->compare_grid);
      static const char *heads[] = { "strategy", "peak", "overhead", "frag max", "OOM", "time" };
      for (int c = 0; c < 6; c++)
        gtk_grid_attach (GTK_GRID (self->compare_grid), cell (heads[c], c > 0, TRUE), c, 0, 1, 1);
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
              gtk_grid_attach (GTK_GRID (self->compare_grid), cell (run->strategy, FALSE, FALSE), 0, i + 1, 1, 1);
              GtkWidget *l = cell (run->error, FALSE, FALSE);
              gtk_label_set_wrap (GTK_LABEL (l), TRUE);
              gtk_grid_attach (GTK_GRID (self->compare_grid), l, 1, i + 1, 5, 1);
              continue;
            }
          fmt_size (run->metrics.peak, a, sizeof a);
          g_snprintf (b, sizeof b, "%.1f%%", run->metrics.overhead * 100);
          g_snprintf (c, sizeof c, "%.2f", run->metrics.frag_max);
          if (run->plan->oom.hit)
            g_snprintf (d, sizeof d, "@%" G_GUINT64_FORMAT " %s", run->plan->oom.tick,
                        run->plan->oom.fragmentation ? "frag" : "cap");
          else
            g_strlcpy (d, "—", sizeof d);
          if (run->plan->seconds < 1.0)
            g_snprintf (e, sizeof e, "%.2f ms", run->plan->seconds * 1e3);
          else
            g_snprintf (e, sizeof e, "%.2f s", run->plan->seconds);
          gboolean win = run->metrics.peak == best;
          gtk_grid_attach (GTK_GRID (self->compare_grid), cell (run->strategy, FALSE, win), 0, i + 1, 1, 1);
          gtk_grid_attach (GTK_GRID (self->compare_grid), cell (a, TRUE, win), 1, i + 1, 1, 1);
          gtk_grid_attach (GTK_GRID (self->compare_grid), cell (b, TRUE, FALSE), 2, i + 1, 1, 1);
          gtk_grid_attach (GTK_GRID (self->compare_grid), cell (c, TRUE, FALSE), 3, i + 1, 1, 1);
          gtk_grid_attach (GTK_GRID (self->compare_grid), cell (d, TRUE, FALSE), 4, i + 1, 1, 1);
          gtk_grid_attach (GTK_GRID (self->compare_grid), cell (e, TRUE, FALSE), 5, i + 1, 1, 1);
        }
      char lb[32];
      g_autofree char *st = g_strdup_printf ("Lower bound %s. Bold: the smallest peak. Choose two strategies "
                                             "in the header and press Compare to see them stacked.",
                                             fmt_size (self->doc->bufs->lower_bound, lb, sizeof lb));
      gtk_label_set_text (GTK_LABEL (self->compare_status), st);
    }
  else if (error && current)
    gtk_label_set_text (GTK_LABEL (self->compare_status), error->message);
  if (current)
    g_signal_emit (self, signals[JOB_FINISHED], 0, runs != NULL);
  if (runs)
    g_ptr_array_unref (runs);
  g_clear_error (&error);
  job_ref_free (r);
}

static void
compare_all_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  if (!self->doc)
    return;
  job_begin (self, "Comparing strategies");
  gtk_label_set_text (GTK_LABEL (self->compare_status), "Running…");
  ml_document_compare_async (self->doc, NULL, self->job, on_progress, self, on_compare_done, job_ref_new (self));
}

static void
cancel_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  if (self->job)
    g_cancellable_cancel (self->job);
}

/* ---- lists: peaks, issues, search ----------------------------------------- */

static void
list_clear (GtkWidget *list)
{
  GtkWidget *c;
  while ((c = gtk_widget_get_first_child (list)))
    gtk_list_box_remove (GTK_LIST_BOX (list), c);
}

/* A label for lists: call sites are often absolute paths; keep the
 * part after the last '/' ("train.py:54:step"). */
static const char *
short_label (const char *label)
{
  const char *slash = strrchr (label, '/');
  return slash && slash[1] ? slash + 1 : label;
}

/* Rows carry what choosing them does: kind, tick, buffer a, buffer b. */
typedef struct {
  char     kind;     /* 'p' peak, 'r' race, 'o' OOM (plan), 'O' OOM (trace), 's' search */
  guint64  tick;
  long     a, b;
  guint    index;
} RowData;

static GtkWidget *
list_row (GtkWidget *list, const char *title, const char *sub, const RowData *data)
{
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
  if (sub)   /* the subtitle is ellipsized: the whole text on hover */
    gtk_widget_set_tooltip_text (row, sub);
  if (data)
    g_object_set_data_full (G_OBJECT (row), "ml-row", g_memdup2 (data, sizeof *data), g_free);
  else
    {
      gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
      gtk_list_box_row_set_selectable (GTK_LIST_BOX_ROW (row), FALSE);
      gtk_widget_add_css_class (t, "heading");
    }
  gtk_list_box_append (GTK_LIST_BOX (list), row);
  return row;
}

static void
fill_peaks (MlWindow *self)
{
  list_clear (self->peaks_list);
  const MlDocument *d = self->doc;
  char a[32], b[32];
  for (size_t i = 0; i < d->peaks.n; i++)
    {
      const MlPeak *p = &d->peaks.peaks[i];
      g_autofree char *title = g_strdup_printf ("%s %s live at tick %" G_GUINT64_FORMAT,
                                                i == 0 ? "Peak:" : "Local max:",
                                                fmt_size (p->live, a, sizeof a), p->tick);
      GString *sub = g_string_new (NULL);
      g_string_append_printf (sub, "%zu buffers live", p->n_live);
      for (size_t k = 0; k < MIN (p->n_blame, (size_t) 3); k++)
        {
          char tmp[32];
          const MlBuffer *bb = &d->bufs->buf[p->blame[k]];
          g_string_append_printf (sub, "%s %s %s", k ? "," : ";", short_label (ml_document_buffer_label (d, p->blame[k], tmp, sizeof tmp)),
                                  fmt_size (bb->rsize, b, sizeof b));
        }
      RowData rd = { 'p', p->tick, p->n_blame ? (long) p->blame[0] : -1, -1, (guint) i };
      list_row (self->peaks_list, title, sub->str, &rd);
      g_string_free (sub, TRUE);
    }
  if (d->peaks.n == 0)
    list_row (self->peaks_list, "No buffers: nothing to show", NULL, NULL);
}

static void
fill_issues (MlWindow *self)
{
  list_clear (self->issues_list);
  const MlDocument *d = self->doc;
  char a[32], b[32];
  for (int r = 0; r < 2; r++)
    {
      const MlRun *run = d->runs[r];
      if (!run)
        continue;
      size_t total = ml_issues_count (&run->issues);
      g_autofree char *h = g_strdup_printf ("Races and plan errors in %s: %zu", run->strategy, total);
      list_row (self->issues_list, h, total ? NULL : "none: the plan is valid", NULL);
      for (size_t i = 0; i < run->issues.n; i++)
        {
          const MlIssue *is = &run->issues.items[i];
          char ta[32], tb[32];
          g_autofree char *title = g_strdup_printf ("%s at tick %" G_GUINT64_FORMAT ": %s / %s",
                                                    ml_issue_kind_name (is->kind), is->tick,
                                                    short_label (ml_document_buffer_label (d, is->a, ta, sizeof ta)),
                                                    short_label (ml_document_buffer_label (d, is->b, tb, sizeof tb)));
          RowData rd = { 'r', is->tick, is->a, is->b, (guint) i };
          list_row (self->issues_list, title, is->why, &rd);
        }
    }
  gsize n_oom = d->n_oom_ticks;
  for (int r = 0; r < 2; r++)
    if (d->runs[r] && d->runs[r]->plan && d->runs[r]->plan->oom.hit)
      n_oom++;
  g_autofree char *h = g_strdup_printf ("Out of memory: %zu", n_oom);
  guint64 cap = d->knobs.capacity ? d->knobs.capacity : ml_document_trace (d)->capacity;
  list_row (self->issues_list, h,
            n_oom ? NULL : cap ? "no strategy shown ran out of the capacity" : "set a capacity in Knobs to simulate OOMs",
            NULL);
  for (int r = 0; r < 2; r++)
    {
      const MlRun *run = d->runs[r];
      if (!run || !run->plan || !run->plan->oom.hit)
        continue;
      const MlOom *o = &run->plan->oom;
      g_autofree char *title = g_strdup_printf ("%s: OOM at tick %" G_GUINT64_FORMAT " (%s)", run->strategy, o->tick,
                                                o->fragmentation ? "fragmentation" : "capacity");
      char c[32], e[32];
      g_autofree char *sub = g_strdup_printf ("request %s; live %s, free %s, largest free block %s",
                                              fmt_size (o->request, a, sizeof a), fmt_size (o->live, b, sizeof b),
                                              fmt_size (o->free_bytes, c, sizeof c), fmt_size (o->largest_free, e, sizeof e));
      RowData rd = { 'o', o->tick, (long) o->buffer, -1, (guint) r };
      list_row (self->issues_list, title, sub, &rd);
    }
  const MlTrace *t = ml_document_trace (d);
  for (gsize i = 0; i < d->n_oom_ticks; i++)
    {
      g_autofree char *title = g_strdup_printf ("Recorded OOM at tick %" G_GUINT64_FORMAT, d->oom_ticks[i]);
      /* find the event for its request */
      const char *sub = "the real allocator failed here";
      g_autofree char *subd = NULL;
      for (size_t e = 0; e < t->n_events; e++)
        if (t->events[e].kind == ML_EV_OOM && t->events[e].tick == d->oom_ticks[i])
          {
            subd = g_strdup_printf ("request %s, device free %s", fmt_size (t->events[e].size, a, sizeof a),
                                    fmt_size (t->events[e].addr, b, sizeof b));
            break;
          }
      RowData rd = { 'O', d->oom_ticks[i], -1, -1, (guint) i };
      list_row (self->issues_list, title, subd ? subd : sub, &rd);
    }
}

static void
focus_buffer (MlWindow *self, long buffer)
{
  if (buffer < 0 || !self->doc)
    return;
  const MlBuffer *b = &self->doc->bufs->buf[buffer];
  double t0, t1;
  ml_timeline_view_get_time_span (ML_TIMELINE_VIEW (self->timeline[0]), &t0, &t1);
  double life = (double) (b->end - b->start);
  /* keep the zoom when the buffer is visible and not tiny, else frame it */
  if (!(b->start >= t0 && b->end <= t1 && life * 200 > (t1 - t0)))
    {
      double pad = MAX (life, 1.0);
      ml_timeline_view_set_time_span (ML_TIMELINE_VIEW (self->timeline[0]), (double) b->start - pad,
                                      (double) b->end + pad);
    }
}

static void
on_row_activated (GtkListBox *list, GtkListBoxRow *row, MlWindow *self)
{
  RowData *rd = g_object_get_data (G_OBJECT (row), "ml-row");
  if (!rd || !self->doc)
    return;
  MlTimelineView *tv = ML_TIMELINE_VIEW (self->timeline[0]);
  self->from_list = TRUE;
  switch (rd->kind)
    {
    case 'p':
      {
        const MlPeak *p = &self->doc->peaks.peaks[rd->index];
        ml_timeline_view_set_highlights (tv, p->blame, MIN (p->n_blame, (size_t) 16));
        ml_timeline_view_set_marker (tv, (double) p->tick, "peak");
        ml_overview_set_marker (ML_OVERVIEW (self->overview), (double) p->tick);
        double span = MAX ((double) self->doc->bufs->end_tick / 8, 2.0);
        ml_timeline_view_focus_tick (tv, (double) p->tick, span);
        ml_timeline_view_select_buffer (tv, rd->a);
        break;
      }
    case 'r':
      {
        guint32 hl[2] = { (guint32) rd->a, (guint32) rd->b };
        ml_timeline_view_set_highlights (tv, hl, 2);
        ml_timeline_view_set_marker (tv, (double) rd->tick, "race");
        ml_overview_set_marker (ML_OVERVIEW (self->overview), (double) rd->tick);
        focus_buffer (self, rd->a);
        ml_timeline_view_select_buffer (tv, rd->a);
        break;
      }
    case 'o':
    case 'O':
      {
        MlTimelineView *target = rd->kind == 'o' && rd->index == 1 && self->timeline[1] ? ML_TIMELINE_VIEW (self->timeline[1]) : tv;
        ml_timeline_view_set_marker (target, (double) rd->tick, "OOM");
        ml_overview_set_marker (ML_OVERVIEW (self->overview), (double) rd->tick);
        double span = MAX ((double) self->doc->bufs->end_tick / 8, 2.0);
        ml_timeline_view_focus_tick (tv, (double) rd->tick, span);
        if (rd->a >= 0)
          ml_timeline_view_select_buffer (target, rd->a);
        break;
      }
    case 's':
      ml_timeline_view_set_marker (tv, -1, NULL);
      focus_buffer (self, rd->a);
      ml_timeline_view_select_buffer (tv, rd->a);
      break;
    }
  self->from_list = FALSE;
}

gboolean
ml_window_show_peak (MlWindow *self, guint index)
{
  if (!self->doc || index >= self->doc->peaks.n)
    return FALSE;
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (GTK_LIST_BOX (self->peaks_list), (int) index);
  if (!row)
    return FALSE;
  gtk_notebook_set_current_page (GTK_NOTEBOOK (self->notebook), PAGE_PEAKS);
  gtk_list_box_select_row (GTK_LIST_BOX (self->peaks_list), row);
  gtk_widget_activate (GTK_WIDGET (row));   /* as a click does: row-activated */
  gtk_notebook_set_current_page (GTK_NOTEBOOK (self->notebook), PAGE_PEAKS);
  return TRUE;
}

static void
run_search (MlWindow *self)
{
  list_clear (self->search_list);
  if (!self->doc)
    return;
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  if (!*text)
    {
      gtk_label_set_text (GTK_LABEL (self->search_count), "Type a name, a call site, a function, #id or 0xADDRESS.");
      ml_timeline_view_set_highlights (ML_TIMELINE_VIEW (self->timeline[0]), NULL, 0);
      return;
    }
  const guint max = 500;
  GArray *hits = ml_document_search (self->doc, self->doc->runs[0], text, max);
  char a[32], tmp[32];
  for (guint i = 0; i < hits->len; i++)
    {
      guint32 k = g_array_index (hits, guint32, i);
      const MlBuffer *b = &self->doc->bufs->buf[k];
      g_autofree char *sub = g_strdup_printf ("#%" G_GUINT64_FORMAT " · %s · ticks [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ")",
                                              b->id, fmt_size (b->size, a, sizeof a), b->start, b->end);
      RowData rd = { 's', b->start, (long) k, -1, i };
      list_row (self->search_list, short_label (ml_document_buffer_label (self->doc, k, tmp, sizeof tmp)), sub, &rd);
    }
  g_autofree char *count = g_strdup_printf (hits->len >= max ? "%u+ buffers match (outlined)" : "%u buffers match (outlined)", hits->len);
  gtk_label_set_text (GTK_LABEL (self->search_count), count);
  ml_timeline_view_set_highlights (ML_TIMELINE_VIEW (self->timeline[0]), (const guint32 *) hits->data, hits->len);
  gtk_notebook_set_current_page (GTK_NOTEBOOK (self->notebook), PAGE_SEARCH);
  if (self->search_hits)
    g_array_unref (self->search_hits);
  self->search_hits = hits;
}

static void
on_search_changed (GtkSearchEntry *e, MlWindow *self)
{
  run_search (self);
}

static void
on_search_activate (GtkSearchEntry *e, MlWindow *self)
{
  if (self->search_hits && self->search_hits->len)
    {
      long k = g_array_index (self->search_hits, guint32, 0);
      focus_buffer (self, k);
      ml_timeline_view_select_buffer (ML_TIMELINE_VIEW (self->timeline[0]), k);
    }
}

/* ---- details ---------------------------------------------------------------- */

static const char *
stream_name (guint32 s, char *buf, gsize len)
{
  g_snprintf (buf, len, "%u", s);
  return buf;
}

static void
show_buffer_details (MlWindow *self, long k)
{
  if (!self->doc || k < 0 || (gsize) k >= self->doc->bufs->n)
    {
      gtk_label_set_markup (GTK_LABEL (self->details),
                            "<b>No buffer selected</b>\n\nClick a buffer in the timeline, or choose a peak, "
                            "an issue or a search result. Hover a buffer for a quick look.");
      gtk_label_set_text (GTK_LABEL (self->stack_label), "");
      return;
    }
  const MlDocument *d = self->doc;
  const MlTrace *t = ml_document_trace (d);
  const MlBuffer *b = &d->bufs->buf[k];
  char a[32], c[32], tmp[32];
  GString *s = g_string_new (NULL);
  g_autofree char *label = g_markup_escape_text (ml_document_buffer_label (d, (guint32) k, tmp, sizeof tmp), -1);
  g_string_append_printf (s, "<b>%s</b>\n\n", label);
  g_string_append_printf (s, "id\t%" G_GUINT64_FORMAT "\n", b->id);
  g_string_append_printf (s, "size\t%s", fmt_size (b->size, a, sizeof a));
  if (b->rsize != b->size)
    g_string_append_printf (s, " (%s after alignment)", fmt_size (b->rsize, c, sizeof c));
  g_string_append_printf (s, "\nbytes\t%" G_GUINT64_FORMAT "\n", b->size);
  g_string_append_printf (s, "lifetime\t[%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ")%s, %" G_GUINT64_FORMAT " ticks\n",
                          b->start, b->end, (b->flags & ML_BUF_NEVER_FREED) ? " never freed" : "", b->end - b->start);
  gint64 t0 = ml_document_tick_time (d, b->start), t1 = ml_document_tick_time (d, b->end);
  if (t0 >= 0 && t1 >= 0)
    g_string_append_printf (s, "time\t%.3f → %.3f ms (%.3f ms)\n", (double) t0 / 1e6, (double) t1 / 1e6,
                            (double) (t1 - t0) / 1e6);
  g_string_append_printf (s, "stream\t%s\n", stream_name (b->stream, tmp, sizeof tmp));
  for (int r = 0; r < 2; r++)
    {
      const MlRun *run = d->runs[r];
      if (!run || !run->plan)
        continue;
      g_string_append_printf (s, "offset\t0x%" G_GINT64_MODIFIER "x (%s) in segment %u, %s\n", run->plan->offset[k],
                              fmt_size (run->plan->offset[k], a, sizeof a), run->plan->segment[k], run->strategy);
      guint64 addr = ml_run_buffer_addr (run, (guint32) k);
      if (run->plan->n_segments && run->plan->segments[run->plan->segment[k]].addr)
        g_string_append_printf (s, "address\t0x%" G_GINT64_MODIFIER "x\n", addr);
    }
  if (b->flags & ML_BUF_HAS_ADDR)
    g_string_append_printf (s, "in trace\t0x%" G_GINT64_MODIFIER "x\n", b->addr);
  const char *kinds[] = { "weight", "activation", "input", "output", "pinned" };
  const guint32 kf[] = { ML_BUF_WEIGHT, ML_BUF_ACTIVATION, ML_BUF_INPUT, ML_BUF_OUTPUT, ML_BUF_PINNED };
  GString *fl = g_string_new (NULL);
  for (int i = 0; i < 5; i++)
    if (b->flags & kf[i])
      g_string_append_printf (fl, "%s%s", fl->len ? ", " : "", kinds[i]);
  if (fl->len)
    g_string_append_printf (s, "kind\t%s\n", fl->str);
  g_string_free (fl, TRUE);
  gtk_label_set_markup (GTK_LABEL (self->details), s->str);
  g_string_free (s, TRUE);

  GString *st = g_string_new (NULL);
  if (b->stack && b->stack < t->n_stacks)
    {
      const MlStack *sk = &t->stacks[b->stack];
      const char *site = ml_trace_str (t, sk->site);
      g_string_append_printf (st, "Allocated at %s (innermost first):\n\n", site && *site ? site : "(no call site)");
      for (guint32 f = 0; f < sk->n; f++)
        {
          const MlFrame *fr = &t->frames[sk->first + f];
          const char *file = ml_trace_str (t, fr->file);
          if (!file || !*file || g_str_equal (file, "??"))
            g_string_append_printf (st, "%2u  %s\n", f, ml_trace_str (t, fr->func));
          else
            g_string_append_printf (st, "%2u  %s\n    %s:%u\n", f, ml_trace_str (t, fr->func), file, fr->line);
        }
    }
  else
    g_string_append (st, "No stack frames in this trace.\n(PyTorch snapshots and the CUPTI tracer record them.)");
  gtk_label_set_text (GTK_LABEL (self->stack_label), st->str);
  g_string_free (st, TRUE);
  if (!self->from_list)
    gtk_notebook_set_current_page (GTK_NOTEBOOK (self->notebook), PAGE_DETAILS);
}

char *
ml_window_dup_details_text (MlWindow *self)
{
  return g_strconcat (gtk_label_get_text (GTK_LABEL (self->details)), "\n",
                      gtk_label_get_text (GTK_LABEL (self->stack_label)), NULL);
}

static void
on_buffer_selected (MlTimelineView *tv, long buffer, MlWindow *self)
{
  /* mirror the selection in the other view */
  for (int i = 0; i < 2; i++)
    if (self->timeline[i] != GTK_WIDGET (tv) && gtk_widget_get_visible (self->timeline_box[i])
        && ml_timeline_view_get_selected (ML_TIMELINE_VIEW (self->timeline[i])) != buffer)
      ml_timeline_view_select_buffer (ML_TIMELINE_VIEW (self->timeline[i]), buffer);
  show_buffer_details (self, buffer);
}

/* ---- linked zoom ------------------------------------------------------------- */

static void
on_view_changed (MlTimelineView *tv, MlWindow *self)
{
  double t0, t1;
  if (!ml_timeline_view_get_scene (tv))
    return;
  ml_timeline_view_get_time_span (tv, &t0, &t1);
  ml_overview_set_window (ML_OVERVIEW (self->overview), t0, t1);
  if (self->linking)
    return;
  self->linking = TRUE;
  for (int i = 0; i < 2; i++)
    if (self->timeline[i] != GTK_WIDGET (tv))
      ml_timeline_view_set_time_span (ML_TIMELINE_VIEW (self->timeline[i]), t0, t1);
  self->linking = FALSE;
}

static void
on_overview_window (MlOverview *ov, double t0, double t1, MlWindow *self)
{
  ml_timeline_view_set_time_span (ML_TIMELINE_VIEW (self->timeline[0]), t0, t1);
}

/* ---- showing a document ----------------------------------------------------- */

static void
update_summary (MlWindow *self, int i)
{
  const MlRun *run = self->doc ? self->doc->runs[i] : NULL;
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
  g_autofree char *name = g_markup_escape_text (run->strategy, -1);
  g_string_append_printf (s, "<b>%s</b>   peak <b>%s</b>   lower bound %s   overhead %.1f%%   "
                          "fragmentation max %.2f, at peak %.2f   waste %s",
                          name, fmt_size (m->peak, a, sizeof a), fmt_size (m->lower_bound, b, sizeof b),
                          m->overhead * 100, m->frag_max, m->frag_at_peak, fmt_size (m->internal_waste, c, sizeof c));
  if (run->plan->oom.hit)
    g_string_append_printf (s, "   <span foreground='#c0392b'><b>OOM at tick %" G_GUINT64_FORMAT " (%s)</b></span>",
                            run->plan->oom.tick, run->plan->oom.fragmentation ? "fragmentation" : "capacity");
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
  gtk_widget_set_sensitive (self->compare_btn, doc != NULL);
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
      g_autofree char *sub = g_strdup_printf ("%s · %zu events · %zu buffers · lower bound %s%s",
                                              ml_trace_str (t, t->source), t->n_events, doc->bufs->n,
                                              fmt_size (doc->bufs->lower_bound, lb, sizeof lb),
                                              t->has_times ? " · timed" : "");
      gtk_label_set_text (GTK_LABEL (self->subtitle), sub);
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
      /* suggest a useful second strategy: the other of recorded / best-fit */
      set_dropdown (self->strategy2_dd, self->strategies,
                    strcmp (doc->runs[0]->strategy, "best-fit") == 0 ? "first-fit" : "best-fit");
    }

  long sel = ml_timeline_view_get_selected (ML_TIMELINE_VIEW (self->timeline[0]));
  if (!same_trace)
    sel = -1;
  for (int i = 0; i < 2; i++)
    {
      gboolean shown = doc->runs[i] != NULL;
      gtk_widget_set_visible (self->timeline_box[i], shown);
      ml_timeline_view_set_document (ML_TIMELINE_VIEW (self->timeline[i]), shown ? doc : NULL, i);
      update_summary (self, i);
    }
  ml_overview_set_document (ML_OVERVIEW (self->overview), doc);
  /* compare mode: one legend (under the lower view), one address scale */
  ml_timeline_view_get_style (ML_TIMELINE_VIEW (self->timeline[0]))->show_legend = !cmp;
  ml_timeline_view_style_changed (ML_TIMELINE_VIEW (self->timeline[0]));
  if (cmp && doc->runs[0]->scene && doc->runs[1]->scene)
    {
      /* one scale while the two are within 4x of each other; beyond that
       * the smaller would be a flat line, and the summary lines say it */
      double e0 = (double) MAX (doc->runs[0]->scene->addr_extent, 1), e1 = (double) MAX (doc->runs[1]->scene->addr_extent, 1);
      double ext = MAX (e0, e1) <= 4 * MIN (e0, e1) ? MAX (e0, e1) : 0;
      ml_timeline_view_set_addr_extent (ML_TIMELINE_VIEW (self->timeline[0]), ext);
      ml_timeline_view_set_addr_extent (ML_TIMELINE_VIEW (self->timeline[1]), ext);
    }
  if (cmp)
    {
      double t0, t1;
      ml_timeline_view_get_time_span (ML_TIMELINE_VIEW (self->timeline[0]), &t0, &t1);
      ml_timeline_view_set_time_span (ML_TIMELINE_VIEW (self->timeline[1]), t0, t1);
    }
  on_view_changed (ML_TIMELINE_VIEW (self->timeline[0]), self);
  fill_knob_entries (self);
  fill_peaks (self);
  fill_issues (self);
  if (gtk_editable_get_text (GTK_EDITABLE (self->search_entry))[0])
    run_search (self);
  ml_timeline_view_select_buffer (ML_TIMELINE_VIEW (self->timeline[0]), sel);
  show_buffer_details (self, sel);   /* the new run's offsets */
  if (!same_trace)
    {
      /* a new trace: start where the question usually is, at the peak,
       * with the keys (+, -, 0, arrows) going to the timeline */
      gtk_notebook_set_current_page (GTK_NOTEBOOK (self->notebook), PAGE_PEAKS);
      gtk_widget_grab_focus (self->timeline[0]);
      grid_clear (self->compare_grid);
      gtk_label_set_text (GTK_LABEL (self->compare_status),
                          "Press \"Run all\" to measure every fast strategy on this trace with the current knobs.");
    }
  self->applying = FALSE;
}

/* ---- export --------------------------------------------------------------------- */

static int
visible_views (MlWindow *self)
{
  return self->doc && self->doc->runs[1] ? 2 : 1;
}

static gboolean
is_report_format (const char *fmt)
{
  return g_strcmp0 (fmt, "html") == 0 || g_strcmp0 (fmt, "md") == 0 || g_strcmp0 (fmt, "json") == 0
         || g_strcmp0 (fmt, "csv") == 0;
}

static void
on_report_done (GObject *src, GAsyncResult *res, gpointer user)
{
  JobRef *r = user;
  MlWindow *self = r->self;
  GError *error = NULL;
  gboolean ok = ml_document_report_finish (res, &error);
  gboolean current = job_end (self, r->cancellable);
  const char *path = g_object_get_data (G_OBJECT (r->cancellable), "ml-path");
  if (current)
    {
      g_autofree char *msg = ok ? g_strdup_printf ("Wrote the report %s", path)
                                : g_strdup_printf ("Could not write the report: %s", error->message);
      ml_window_show_message (self, msg);
      g_signal_emit (self, signals[JOB_FINISHED], 0, ok);
    }
  g_clear_error (&error);
  job_ref_free (r);
}

void
ml_window_export_report (MlWindow *self, const char *path)
{
  if (!self->doc)
    return;
  job_begin (self, "Writing the report");
  g_object_set_data_full (G_OBJECT (self->job), "ml-path", g_strdup (path), g_free);
  /* the report compares the registry's default strategies and those shown */
  g_autofree char *extra = g_strjoin (",", self->doc->runs[0]->strategy,
                                      self->doc->runs[1] ? self->doc->runs[1]->strategy : "", NULL);
  ml_document_report_async (self->doc, extra, path, self->job, on_progress, self, on_report_done, job_ref_new (self));
}

gboolean
ml_window_export (MlWindow *self, const char *format, const char *path, GError **error)
{
  if (!self->doc)
    {
      g_set_error_literal (error, ML_GUI_ERROR, 1, "Nothing to export: open a trace first");
      return FALSE;
    }
  if (is_report_format (format))
    {
      g_set_error (error, ML_GUI_ERROR, 2, "Reports are written by a worker: use win.export or ml_window_export_report");
      return FALSE;
    }
  int nv = visible_views (self);
  int w = MAX (gtk_widget_get_width (self->timeline[0]), 400);
  int hs[2], h = 0;
  for (int i = 0; i < nv; i++)
    h += hs[i] = MAX (gtk_widget_get_height (self->timeline[i]), 200);
  g_autofree char *tmp = g_strconcat (path, ".part", NULL);
  cairo_surface_t *surf;
  if (g_strcmp0 (format, "png") == 0)
    surf = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
  else if (g_strcmp0 (format, "svg") == 0)
    surf = cairo_svg_surface_create (tmp, w, h);
  else if (g_strcmp0 (format, "pdf") == 0)
    surf = cairo_pdf_surface_create (tmp, w, h);
  else
    {
      g_set_error (error, ML_GUI_ERROR, 2, "Unknown export format \"%s\" (png, svg, pdf; reports: html, md, json, csv)", format);
      return FALSE;
    }
  cairo_t *cr = cairo_create (surf);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  int y = 0;
  for (int i = 0; i < nv; i++)
    {
      cairo_save (cr);
      cairo_translate (cr, 0, y);
      cairo_rectangle (cr, 0, 0, w, hs[i]);
      cairo_clip (cr);
      ml_timeline_view_draw_to (ML_TIMELINE_VIEW (self->timeline[i]), cr, w, hs[i]);
      cairo_restore (cr);
      y += hs[i];
    }
  cairo_destroy (cr);
  cairo_surface_flush (surf);
  if (g_strcmp0 (format, "png") == 0)
    cairo_surface_write_to_png (surf, tmp);
  cairo_surface_finish (surf);
  cairo_status_t st = cairo_surface_status (surf);
  cairo_surface_destroy (surf);
  if (st != CAIRO_STATUS_SUCCESS)
    {
      g_unlink (tmp);
      g_set_error (error, ML_GUI_ERROR, 3, "Could not write %s: %s", path, cairo_status_to_string (st));
      return FALSE;
    }
  if (g_rename (tmp, path) != 0)
    {
      int e = errno;
      g_unlink (tmp);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (e), "Could not write %s: %s", path, g_strerror (e));
      return FALSE;
    }
  return TRUE;
}

static void
export_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlWindow *self = user;
  const char *fmt, *path;
  g_variant_get (p, "(&s&s)", &fmt, &path);
  if (is_report_format (fmt))
    {
      ml_window_export_report (self, path);
      return;
    }
  GError *error = NULL;
  if (!ml_window_export (self, fmt, path, &error))
    {
      ml_window_show_message (self, error->message);
      g_error_free (error);
    }
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
  GtkFileChooserNative *dlg = gtk_file_chooser_native_new (is_report_format (fmt) ? "Export the report" : "Export the view",
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

#define TV0 ML_TIMELINE_VIEW (self->timeline[0])

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
  g_simple_action_set_state (a, p);
  for (int i = 0; i < 2; i++)
    {
      ml_timeline_view_get_style (ML_TIMELINE_VIEW (self->timeline[i]))->color_by = by;
      ml_timeline_view_style_changed (ML_TIMELINE_VIEW (self->timeline[i]));
    }
}

static void
time_axis_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  const char *s = g_variant_get_string (p, NULL);
  MlTimeAxis ax = g_str_equal (s, "ticks") ? ML_TIME_AXIS_TICKS : g_str_equal (s, "time") ? ML_TIME_AXIS_TIME : ML_TIME_AXIS_AUTO;
  g_simple_action_set_state (a, p);
  for (int i = 0; i < 2; i++)
    {
      ml_timeline_view_get_style (ML_TIMELINE_VIEW (self->timeline[i]))->time_axis = ax;
      ml_timeline_view_style_changed (ML_TIMELINE_VIEW (self->timeline[i]));
    }
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
  { "color-by", color_by_action, "s", "'site'", NULL },
  { "time-axis", time_axis_action, "s", "'auto'", NULL },
  { "export", export_action, "(ss)", NULL, NULL },
  { "export-dialog", export_dialog_action, "s", NULL, NULL },
  { "apply-knobs", apply_knobs_action, NULL, NULL, NULL },
  { "compare-all", compare_all_action, NULL, NULL, NULL },
  { "cancel", cancel_action, NULL, NULL, NULL },
  { "search", search_action, NULL, NULL, NULL },
  { "show-panel", show_panel_action, NULL, "true", NULL },
  { "close", close_action, NULL, NULL, NULL },
};

/* ---- building the window ------------------------------------------------------------ */

static GtkWidget *
scrolled (GtkWidget *child)
{
  GtkWidget *sw = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (sw), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (sw), child);
  gtk_widget_set_vexpand (sw, TRUE);
  return sw;
}

static GtkWidget *
new_list (MlWindow *self)
{
  GtkWidget *l = gtk_list_box_new ();
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (l), GTK_SELECTION_SINGLE);
  gtk_list_box_set_activate_on_single_click (GTK_LIST_BOX (l), TRUE);
  g_signal_connect (l, "row-activated", G_CALLBACK (on_row_activated), self);
  gtk_widget_add_css_class (l, "rich-list");
  return l;
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
on_entry_activate (GtkEntry *e, MlWindow *self)
{
  g_action_group_activate_action (G_ACTION_GROUP (self), "apply-knobs", NULL);
}

static GtkWidget *
build_knobs_page (MlWindow *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_set_margin_start (box, 10);
  gtk_widget_set_margin_end (box, 10);
  gtk_widget_set_margin_top (box, 10);
  GtkWidget *grid = gtk_grid_new ();
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 8);
  self->knob_align = knob_row (grid, 0, "Alignment", "Bytes each buffer is rounded up to (power of two). Default: 256, CSV: 1.",
                               gtk_entry_new ());
  self->knob_capacity = knob_row (grid, 1, "Capacity", "Device memory, e.g. 40G, 80G. Strategies that need more report an OOM. Empty: none.",
                                  gtk_entry_new ());
  self->knob_chunk = knob_row (grid, 2, "Pool chunk", "Chunk size of the pool strategy, e.g. 4M", gtk_entry_new ());
  self->knob_time = knob_row (grid, 3, "Time limit", "Per offline planner, e.g. 10s, 2m. Empty: the planner's default.", gtk_entry_new ());
  self->knob_retries = knob_row (grid, 4, "Retries", "Retries on allocation failure", gtk_spin_button_new_with_range (0, 100, 1));
  self->knob_options = knob_row (grid, 5, "Options", "Strategy options k=v,k=v (e.g. the caching allocator's settings)", gtk_entry_new ());
  gtk_entry_set_placeholder_text (GTK_ENTRY (self->knob_capacity), "none");
  gtk_entry_set_placeholder_text (GTK_ENTRY (self->knob_time), "default");
  gtk_entry_set_placeholder_text (GTK_ENTRY (self->knob_options), "k=v,k=v");
  gtk_editable_set_text (GTK_EDITABLE (self->knob_chunk), "4M");
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->knob_retries), 3);
  GtkWidget *entries[] = { self->knob_align, self->knob_capacity, self->knob_chunk, self->knob_time, self->knob_options };
  for (gsize i = 0; i < G_N_ELEMENTS (entries); i++)
    g_signal_connect (entries[i], "activate", G_CALLBACK (on_entry_activate), self);
  gtk_box_append (GTK_BOX (box), grid);
  GtkWidget *apply = gtk_button_new_with_mnemonic ("_Apply and re-run");
  gtk_widget_add_css_class (apply, "suggested-action");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (apply), "win.apply-knobs");
  gtk_box_append (GTK_BOX (box), apply);
  self->knob_status = gtk_label_new ("");
  gtk_label_set_wrap (GTK_LABEL (self->knob_status), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->knob_status), 0);
  gtk_widget_add_css_class (self->knob_status, "error");
  gtk_box_append (GTK_BOX (box), self->knob_status);
  GtkWidget *help = gtk_label_new ("Runs in the background: the view keeps the previous result until the new one is ready, "
                                   "and Cancel (under the timeline) stops it.");
  gtk_label_set_wrap (GTK_LABEL (help), TRUE);
  gtk_label_set_xalign (GTK_LABEL (help), 0);
  gtk_widget_add_css_class (help, "dim-label");
  gtk_box_append (GTK_BOX (box), help);
  return box;
}

static GtkWidget *
build_compare_page (MlWindow *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_set_margin_start (box, 10);
  gtk_widget_set_margin_end (box, 10);
  gtk_widget_set_margin_top (box, 10);
  GtkWidget *run = gtk_button_new_with_mnemonic ("_Run all strategies");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (run), "win.compare-all");
  gtk_box_append (GTK_BOX (box), run);
  self->compare_grid = gtk_grid_new ();
  gtk_grid_set_column_spacing (GTK_GRID (self->compare_grid), 10);
  gtk_grid_set_row_spacing (GTK_GRID (self->compare_grid), 4);
  gtk_box_append (GTK_BOX (box), self->compare_grid);
  self->compare_status = gtk_label_new ("");
  gtk_label_set_wrap (GTK_LABEL (self->compare_status), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->compare_status), 0);
  gtk_widget_add_css_class (self->compare_status, "dim-label");
  gtk_box_append (GTK_BOX (box), self->compare_status);
  return scrolled (box);
}

static GtkWidget *
build_details_page (MlWindow *self)
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
  self->stack_label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->stack_label), 0);
  gtk_label_set_selectable (GTK_LABEL (self->stack_label), TRUE);
  gtk_label_set_wrap (GTK_LABEL (self->stack_label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (self->stack_label), PANGO_WRAP_CHAR);
  gtk_widget_add_css_class (self->stack_label, "monospace");
  gtk_box_append (GTK_BOX (box), self->stack_label);
  return scrolled (box);
}

static GtkWidget *
build_search_page (MlWindow *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  self->search_count = gtk_label_new ("Type a name, a call site, a function, #id or 0xADDRESS.");
  gtk_label_set_wrap (GTK_LABEL (self->search_count), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->search_count), 0);
  gtk_widget_set_margin_start (self->search_count, 8);
  gtk_widget_set_margin_top (self->search_count, 6);
  gtk_widget_add_css_class (self->search_count, "dim-label");
  gtk_box_append (GTK_BOX (box), self->search_count);
  self->search_list = new_list (self);
  gtk_box_append (GTK_BOX (box), scrolled (self->search_list));
  return box;
}

static GMenuModel *
build_menus (MlWindow *self, GMenuModel **export_menu, GMenuModel **open_menu)
{
  GMenu *view = g_menu_new ();
  GMenu *zoom = g_menu_new ();
  g_menu_append (zoom, "Zoom _In", "win.zoom-in");
  g_menu_append (zoom, "Zoom _Out", "win.zoom-out");
  g_menu_append (zoom, "_Fit All", "win.zoom-fit");
  g_menu_append_section (view, NULL, G_MENU_MODEL (zoom));
  GMenu *color = g_menu_new ();
  g_menu_append (color, "Colour by call site", "win.color-by::site");
  g_menu_append (color, "Colour by stream", "win.color-by::stream");
  g_menu_append (color, "Colour by kind", "win.color-by::kind");
  g_menu_append_section (view, NULL, G_MENU_MODEL (color));
  GMenu *axis = g_menu_new ();
  g_menu_append (axis, "Time axis: automatic", "win.time-axis::auto");
  g_menu_append (axis, "Time axis: ticks", "win.time-axis::ticks");
  g_menu_append (axis, "Time axis: real time", "win.time-axis::time");
  g_menu_append_section (view, NULL, G_MENU_MODEL (axis));
  GMenu *misc = g_menu_new ();
  g_menu_append (misc, "Side _Panel", "win.show-panel");
  g_menu_append (misc, "_New Window", "app.new-window");
  g_menu_append (misc, "_About memlens", "app.about");
  g_menu_append (misc, "_Quit", "app.quit");
  g_menu_append_section (view, NULL, G_MENU_MODEL (misc));
  g_object_unref (zoom);
  g_object_unref (color);
  g_object_unref (axis);
  g_object_unref (misc);

  GMenu *exp = g_menu_new ();
  g_menu_append (exp, "View as _PNG…", "win.export-dialog::png");
  g_menu_append (exp, "View as _SVG…", "win.export-dialog::svg");
  g_menu_append (exp, "View as P_DF…", "win.export-dialog::pdf");
  g_menu_append (exp, "_Report (HTML with pictures)…", "win.export-dialog::html");
  g_menu_append (exp, "Report as _Markdown…", "win.export-dialog::md");
  *export_menu = G_MENU_MODEL (exp);

  GMenu *open = g_menu_new ();
  GMenu *first = g_menu_new ();
  g_menu_append (first, "_Open…", "app.open");
  g_menu_append_section (open, NULL, G_MENU_MODEL (first));
  g_object_unref (first);
  GMenuModel *recent = ml_application_get_recent_menu (ML_APPLICATION (g_application_get_default ()));
  g_menu_append_section (open, "Recent", recent);
  *open_menu = G_MENU_MODEL (open);
  return G_MENU_MODEL (view);
}

static GtkWidget *
build_empty_page (MlWindow *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_valign (box, GTK_ALIGN_CENTER);
  gtk_widget_set_halign (box, GTK_ALIGN_CENTER);
  GtkWidget *icon = gtk_image_new_from_icon_name ("document-open-symbolic");
  gtk_image_set_pixel_size (GTK_IMAGE (icon), 64);
  gtk_widget_add_css_class (icon, "dim-label");
  gtk_box_append (GTK_BOX (box), icon);
  GtkWidget *t = gtk_label_new (NULL);
  gtk_label_set_markup (GTK_LABEL (t), "<span size='x-large' weight='bold'>Open a memory trace</span>");
  self->empty_title = t;
  gtk_box_append (GTK_BOX (box), t);
  GtkWidget *s = gtk_label_new ("PyTorch snapshots (.pickle), memlens traces (.jsonl), profiler traces,\n"
                                "MiniMalloc CSV, graphs. Drop a file here or press Ctrl+O.");
  gtk_label_set_justify (GTK_LABEL (s), GTK_JUSTIFY_CENTER);
  gtk_widget_add_css_class (s, "dim-label");
  gtk_box_append (GTK_BOX (box), s);
  GtkWidget *b = gtk_button_new_with_mnemonic ("_Open…");
  gtk_widget_add_css_class (b, "suggested-action");
  gtk_widget_add_css_class (b, "pill");
  gtk_widget_set_halign (b, GTK_ALIGN_CENTER);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (b), "app.open");
  gtk_box_append (GTK_BOX (box), b);
  return box;
}

static GtkWidget *
build_timeline_box (MlWindow *self, int i)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  self->summary[i] = gtk_label_new ("");
  gtk_label_set_xalign (GTK_LABEL (self->summary[i]), 0);
  gtk_label_set_ellipsize (GTK_LABEL (self->summary[i]), PANGO_ELLIPSIZE_END);
  gtk_widget_set_margin_start (self->summary[i], 8);
  gtk_widget_set_margin_top (self->summary[i], 3);
  gtk_widget_set_margin_bottom (self->summary[i], 3);
  gtk_box_append (GTK_BOX (box), self->summary[i]);
  self->timeline[i] = ml_timeline_view_new ();
  gtk_widget_set_vexpand (self->timeline[i], TRUE);
  gtk_widget_set_hexpand (self->timeline[i], TRUE);
  g_signal_connect (self->timeline[i], "buffer-selected", G_CALLBACK (on_buffer_selected), self);
  g_signal_connect (self->timeline[i], "view-changed", G_CALLBACK (on_view_changed), self);
  gtk_box_append (GTK_BOX (box), self->timeline[i]);
  gtk_widget_set_vexpand (box, TRUE);
  self->timeline_box[i] = box;
  return box;
}

static void
on_banner_close (MlWindow *self)
{
  ml_window_show_message (self, NULL);
}

static void
add_key (GtkShortcutController *sc, guint key, GdkModifierType mods, const char *action)
{
  gtk_shortcut_controller_add_shortcut (sc, gtk_shortcut_new (gtk_keyval_trigger_new (key, mods),
                                                              gtk_named_action_new (action)));
}

static void
ml_window_init (MlWindow *self)
{
  ml_view_knobs_init (&self->knobs);
  gtk_window_set_default_size (GTK_WINDOW (self), 1400, 860);
  gtk_window_set_title (GTK_WINDOW (self), "memlens");
  gtk_window_set_icon_name (GTK_WINDOW (self), "utilities-system-monitor");
  g_action_map_add_action_entries (G_ACTION_MAP (self), win_actions, G_N_ELEMENTS (win_actions), self);
}

static void
ml_window_constructed (GObject *obj)
{
  MlWindow *self = ML_WINDOW (obj);
  G_OBJECT_CLASS (ml_window_parent_class)->constructed (obj);

  /* header */
  GtkWidget *hb = gtk_header_bar_new ();
  GtkWidget *tbox = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_valign (tbox, GTK_ALIGN_CENTER);
  self->title = gtk_label_new ("memlens");
  gtk_widget_add_css_class (self->title, "title");
  self->subtitle = gtk_label_new ("");
  gtk_widget_add_css_class (self->subtitle, "subtitle");
  gtk_label_set_ellipsize (GTK_LABEL (self->subtitle), PANGO_ELLIPSIZE_END);
  gtk_box_append (GTK_BOX (tbox), self->title);
  gtk_box_append (GTK_BOX (tbox), self->subtitle);
  gtk_header_bar_set_title_widget (GTK_HEADER_BAR (hb), tbox);

  GMenuModel *export_menu, *open_menu;
  GMenuModel *view_menu = build_menus (self, &export_menu, &open_menu);
  GtkWidget *open_btn = gtk_menu_button_new ();
  gtk_menu_button_set_label (GTK_MENU_BUTTON (open_btn), "Open");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (open_btn), open_menu);
  gtk_widget_set_tooltip_text (open_btn, "Open a trace (Ctrl+O) or a recent one");
  gtk_header_bar_pack_start (GTK_HEADER_BAR (hb), open_btn);

  self->strategies = gtk_string_list_new (NULL);
  self->strategy_dd = gtk_drop_down_new (G_LIST_MODEL (g_object_ref (self->strategies)), NULL);
  gtk_widget_set_tooltip_text (self->strategy_dd, "Allocation strategy to replay the trace with (\"recorded\": what the real allocator did)");
  g_signal_connect (self->strategy_dd, "notify::selected", G_CALLBACK (on_strategy_changed), self);
  gtk_header_bar_pack_start (GTK_HEADER_BAR (hb), self->strategy_dd);
  self->compare_btn = gtk_toggle_button_new_with_label ("Compare");
  gtk_widget_set_tooltip_text (self->compare_btn, "Show a second strategy below, with the same time axis");
  g_signal_connect (self->compare_btn, "toggled", G_CALLBACK (on_compare_toggled), self);
  gtk_header_bar_pack_start (GTK_HEADER_BAR (hb), self->compare_btn);
  self->strategy2_dd = gtk_drop_down_new (G_LIST_MODEL (g_object_ref (self->strategies)), NULL);
  gtk_widget_set_visible (self->strategy2_dd, FALSE);
  g_signal_connect (self->strategy2_dd, "notify::selected", G_CALLBACK (on_strategy_changed), self);
  gtk_header_bar_pack_start (GTK_HEADER_BAR (hb), self->strategy2_dd);

  GtkWidget *menu_btn = gtk_menu_button_new ();
  gtk_menu_button_set_icon_name (GTK_MENU_BUTTON (menu_btn), "open-menu-symbolic");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (menu_btn), view_menu);
  gtk_header_bar_pack_end (GTK_HEADER_BAR (hb), menu_btn);
  GtkWidget *exp_btn = gtk_menu_button_new ();
  gtk_menu_button_set_label (GTK_MENU_BUTTON (exp_btn), "Export");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (exp_btn), export_menu);
  gtk_header_bar_pack_end (GTK_HEADER_BAR (hb), exp_btn);
  GtkWidget *zoom_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_add_css_class (zoom_box, "linked");
  static const struct { const char *icon, *action, *tip; } zb[] = {
    { "zoom-out-symbolic", "win.zoom-out", "Zoom out (−)" },
    { "zoom-fit-best-symbolic", "win.zoom-fit", "Fit all (0)" },
    { "zoom-in-symbolic", "win.zoom-in", "Zoom in (+)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (zb); i++)
    {
      GtkWidget *b = gtk_button_new_from_icon_name (zb[i].icon);
      gtk_actionable_set_action_name (GTK_ACTIONABLE (b), zb[i].action);
      gtk_widget_set_tooltip_text (b, zb[i].tip);
      gtk_box_append (GTK_BOX (zoom_box), b);
    }
  gtk_header_bar_pack_end (GTK_HEADER_BAR (hb), zoom_box);
  self->search_entry = gtk_search_entry_new ();
  g_object_set (self->search_entry, "placeholder-text", "Find buffer: name, site, #id, 0xaddr", NULL);
  gtk_editable_set_width_chars (GTK_EDITABLE (self->search_entry), 28);
  g_signal_connect (self->search_entry, "search-changed", G_CALLBACK (on_search_changed), self);
  g_signal_connect (self->search_entry, "activate", G_CALLBACK (on_search_activate), self);
  gtk_header_bar_pack_end (GTK_HEADER_BAR (hb), self->search_entry);
  gtk_window_set_titlebar (GTK_WINDOW (self), hb);
  g_object_unref (view_menu);
  g_object_unref (export_menu);
  g_object_unref (open_menu);

  /* main area */
  GtkWidget *main_box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  self->banner_revealer = gtk_revealer_new ();
  GtkWidget *banner = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_add_css_class (banner, "ml-banner");
  self->banner_label = gtk_label_new ("");
  gtk_label_set_wrap (GTK_LABEL (self->banner_label), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->banner_label), 0);
  gtk_label_set_selectable (GTK_LABEL (self->banner_label), TRUE);
  gtk_widget_set_hexpand (self->banner_label, TRUE);
  gtk_widget_set_margin_start (self->banner_label, 8);
  gtk_box_append (GTK_BOX (banner), self->banner_label);
  GtkWidget *close = gtk_button_new_from_icon_name ("window-close-symbolic");
  gtk_widget_add_css_class (close, "flat");
  g_signal_connect_swapped (close, "clicked", G_CALLBACK (on_banner_close), self);
  gtk_box_append (GTK_BOX (banner), close);
  gtk_revealer_set_child (GTK_REVEALER (self->banner_revealer), banner);
  gtk_box_append (GTK_BOX (main_box), self->banner_revealer);

  GtkWidget *views = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_box_append (GTK_BOX (views), build_timeline_box (self, 0));
  GtkWidget *sep = gtk_separator_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_box_append (GTK_BOX (views), sep);
  gtk_box_append (GTK_BOX (views), build_timeline_box (self, 1));
  gtk_widget_set_visible (self->timeline_box[1], FALSE);
  g_object_bind_property (self->timeline_box[1], "visible", sep, "visible", G_BINDING_SYNC_CREATE);
  gtk_widget_set_vexpand (views, TRUE);
  gtk_box_append (GTK_BOX (main_box), views);
  self->overview = ml_overview_new ();
  gtk_widget_set_margin_start (self->overview, 4);
  gtk_widget_set_margin_end (self->overview, 4);
  gtk_widget_set_margin_bottom (self->overview, 4);
  g_signal_connect (self->overview, "window-changed", G_CALLBACK (on_overview_window), self);
  gtk_box_append (GTK_BOX (main_box), self->overview);

  self->progress_revealer = gtk_revealer_new ();
  GtkWidget *pbox = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_set_margin_start (pbox, 8);
  gtk_widget_set_margin_end (pbox, 8);
  gtk_widget_set_margin_bottom (pbox, 4);
  self->progress_label = gtk_label_new ("");
  gtk_box_append (GTK_BOX (pbox), self->progress_label);
  self->progress_bar = gtk_progress_bar_new ();
  gtk_widget_set_hexpand (self->progress_bar, TRUE);
  gtk_widget_set_valign (self->progress_bar, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (pbox), self->progress_bar);
  GtkWidget *cancel = gtk_button_new_with_mnemonic ("_Cancel");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (cancel), "win.cancel");
  gtk_box_append (GTK_BOX (pbox), cancel);
  gtk_revealer_set_child (GTK_REVEALER (self->progress_revealer), pbox);

  self->content_stack = gtk_stack_new ();
  gtk_stack_add_named (GTK_STACK (self->content_stack), build_empty_page (self), "empty");
  gtk_stack_add_named (GTK_STACK (self->content_stack), main_box, "main");
  gtk_widget_set_vexpand (self->content_stack, TRUE);
  GtkWidget *left = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_box_append (GTK_BOX (left), self->content_stack);
  gtk_box_append (GTK_BOX (left), self->progress_revealer);

  /* side panel */
  self->notebook = gtk_notebook_new ();
  gtk_notebook_set_scrollable (GTK_NOTEBOOK (self->notebook), TRUE);
  gtk_notebook_append_page (GTK_NOTEBOOK (self->notebook), build_details_page (self), gtk_label_new ("Details"));
  self->peaks_list = new_list (self);
  gtk_notebook_append_page (GTK_NOTEBOOK (self->notebook), scrolled (self->peaks_list), gtk_label_new ("Peaks"));
  self->issues_list = new_list (self);
  gtk_notebook_append_page (GTK_NOTEBOOK (self->notebook), scrolled (self->issues_list), gtk_label_new ("Issues"));
  gtk_notebook_append_page (GTK_NOTEBOOK (self->notebook), build_search_page (self), gtk_label_new ("Find"));
  gtk_notebook_append_page (GTK_NOTEBOOK (self->notebook), build_compare_page (self), gtk_label_new ("Table"));
  gtk_notebook_append_page (GTK_NOTEBOOK (self->notebook), build_knobs_page (self), gtk_label_new ("Knobs"));
  gtk_widget_set_size_request (self->notebook, 400, -1);

  self->paned = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_paned_set_start_child (GTK_PANED (self->paned), left);
  gtk_paned_set_end_child (GTK_PANED (self->paned), self->notebook);
  gtk_paned_set_resize_end_child (GTK_PANED (self->paned), FALSE);
  gtk_paned_set_shrink_end_child (GTK_PANED (self->paned), FALSE);
  gtk_paned_set_position (GTK_PANED (self->paned), 980);
  gtk_window_set_child (GTK_WINDOW (self), self->paned);

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
  gtk_widget_add_controller (GTK_WIDGET (self), sc);

  /* a little CSS */
  GtkCssProvider *css = gtk_css_provider_new ();
  gtk_css_provider_load_from_data (css,
    ".ml-banner { background: #fdf3d0; border-bottom: 1px solid #e0c870; padding: 4px; }\n"
    "label.numeric { font-feature-settings: \"tnum\"; }\n"
    "notebook > header > tabs > tab { padding: 4px 7px; min-width: 0; }\n", -1);
  gtk_style_context_add_provider_for_display (gdk_display_get_default (), GTK_STYLE_PROVIDER (css),
                                              GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
  g_object_unref (css);

  apply_document (self, NULL);
  show_buffer_details (self, -1);
}

static void
ml_window_dispose (GObject *obj)
{
  MlWindow *self = ML_WINDOW (obj);
  if (self->job)
    g_cancellable_cancel (self->job);
  g_clear_object (&self->job);
  g_clear_pointer (&self->doc, ml_document_unref);
  g_clear_object (&self->strategies);
  g_clear_pointer (&self->search_hits, g_array_unref);
  G_OBJECT_CLASS (ml_window_parent_class)->dispose (obj);
}

static void
ml_window_finalize (GObject *obj)
{
  MlWindow *self = ML_WINDOW (obj);
  g_free (self->pending_strategy[0]);
  g_free (self->pending_strategy[1]);
  g_free (self->loading_path);
  G_OBJECT_CLASS (ml_window_parent_class)->finalize (obj);
}

static void
ml_window_class_init (MlWindowClass *klass)
{
  GObjectClass *oc = G_OBJECT_CLASS (klass);
  oc->constructed = ml_window_constructed;
  oc->dispose = ml_window_dispose;
  oc->finalize = ml_window_finalize;
  signals[JOB_FINISHED] = g_signal_new ("job-finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);
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
  return ML_TIMELINE_VIEW (self->timeline[i ? 1 : 0]);
}

gboolean
ml_window_is_busy (MlWindow *self)
{
  return self->job != NULL;
}
