/* window.c — MlWindow: the type, its widgets, and the document swap.
 *
 * The widgets come from window.ui (a GResource); each side page is its
 * own widget (gui/…-page.c) with a set_document(); every worker job goes
 * through the MlJobBar (gui/job.c). The rest of the window is in
 * window-open.c, window-run.c, window-view.c and window-export.c
 * (window-private.h says which does what).
 */
#include "gui/window-private.h"

#include "gui/memlens-resources.h"
#include "gui/overview.h"
#include "sim/base/units.h"
#include "strategies/registry.h"

G_DEFINE_FINAL_TYPE (MlWindow, ml_window, GTK_TYPE_APPLICATION_WINDOW)

enum { JOB_FINISHED, FILE_OPENED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- messages and jobs -------------------------------------------------- */

const char *
ml_window_get_message (MlWindow *self)
{
  /* shown means on screen: a banner on a page the stack hides is not */
  return gtk_revealer_get_reveal_child (GTK_REVEALER (self->banner_revealer))
             && (!gtk_widget_get_mapped (GTK_WIDGET (self)) || gtk_widget_get_mapped (self->banner_label))
           ? gtk_label_get_text (GTK_LABEL (self->banner_label)) : NULL;
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
  g_autofree char *frag = m->frag_unknown ? g_strdup ("n/a") : g_strdup_printf ("max %.2f, at peak %.2f", m->frag_max, m->frag_at_peak);
  g_string_append_printf (s, "<b>%s</b>   peak <b>%s</b>   lower bound %s   overhead %.1f%%   "
                          "fragmentation %s   waste %s",
                          name, ml_format_size (m->peak, a, sizeof a), ml_format_size (m->lower_bound, b, sizeof b),
                          m->overhead * 100, frag, ml_format_size (m->internal_waste, c, sizeof c));
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

void
_ml_window_set_dropdown (GtkWidget *dd, GtkStringList *list, const char *name)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (list));
  for (guint i = 0; i < n; i++)
    if (g_strcmp0 (gtk_string_list_get_string (list, i), name) == 0)
      {
        gtk_drop_down_set_selected (GTK_DROP_DOWN (dd), i);
        return;
      }
}

/* The device selector: one row per device the trace's file holds. */
static void
fill_device_selector (MlWindow *self, const MlTrace *t)
{
  guint n_old = g_list_model_get_n_items (G_LIST_MODEL (self->devices));
  gtk_string_list_splice (self->devices, 0, n_old, NULL);
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
}

/* A new trace: the strategies it can run, the title and subtitle, the
 * device selector; the search starts empty. */
static void
show_trace (MlWindow *self, MlDocument *doc)
{
  const MlTrace *t = ml_document_trace (doc);
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
  fill_device_selector (self, t);
  gtk_editable_set_text (GTK_EDITABLE (self->search_entry), "");
}

/* The strategy drop-downs and their actions show the document's runs;
 * returns whether it is in compare mode (a second run). */
static gboolean
show_strategies (MlWindow *self, MlDocument *doc, gboolean same_trace)
{
  _ml_window_set_dropdown (self->strategy_dd, self->strategies, doc->runs[0]->strategy);
  g_simple_action_set_state (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "strategy")),
                             g_variant_new_string (doc->runs[0]->strategy));
  gboolean cmp = doc->runs[1] != NULL;
  gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->compare_btn), cmp);
  gtk_widget_set_visible (self->strategy2_dd, cmp);
  if (cmp)
    {
      _ml_window_set_dropdown (self->strategy2_dd, self->strategies, doc->runs[1]->strategy);
      g_simple_action_set_state (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self), "strategy2")),
                                 g_variant_new_string (doc->runs[1]->strategy));
    }
  else if (!same_trace)
    {
      /* suggest a useful second strategy */
      _ml_window_set_dropdown (self->strategy2_dd, self->strategies, ml_strategy_second (doc->runs[0]->strategy)->name);
    }
  return cmp;
}

/* The timelines: the document's runs, or (two files) each file's first
 * run; their summary lines, the overview and the legend. */
static void
show_timelines (MlWindow *self, MlDocument *doc, gboolean cmp)
{
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
      ml_timeline_view_set_document (_ml_window_tl (self, i), shown ? d : NULL, which);
      update_summary (self, i);
    }
  self->linking = FALSE;
  ml_overview_set_document (ML_OVERVIEW (self->overview), doc);
  ml_overview_set_warp (ML_OVERVIEW (self->overview), ml_timeline_view_get_view (_ml_window_tl (self, 0))->warp);
  /* compare mode: one legend (under the lower view), one address scale;
   * two files have a legend each (their call sites differ) */
  ml_timeline_view_get_style (_ml_window_tl (self, 0))->show_legend = !cmp || two;
  ml_timeline_view_style_changed (_ml_window_tl (self, 0));
  gtk_widget_set_sensitive (self->compare_btn, !two);
}

/* Two files: one byte scale and one time scale, whatever their sizes
 * (the question is which run is taller and longer), and both names in
 * the title. */
static void
share_file_scales (MlWindow *self, MlDocument *doc)
{
  MlTimelineView *a = _ml_window_tl (self, 0), *b = _ml_window_tl (self, 1);
  double e0 = ml_timeline_view_get_extent (a), e1 = ml_timeline_view_get_extent (b);
  ml_timeline_view_set_addr_extent (a, MAX (e0, e1));
  ml_timeline_view_set_addr_extent (b, MAX (e0, e1));
  double u0 = ml_timeline_view_get_axis_extent (a), u1 = ml_timeline_view_get_axis_extent (b);
  double t0, t1;
  ml_timeline_view_get_time_span (a, &t0, &t1);
  gboolean was_fit = t0 <= 0 && t1 >= (double) MAX (doc->bufs->end_tick, 1);
  self->linking = TRUE;
  ml_timeline_view_set_axis_extent (a, MAX (u0, u1));
  ml_timeline_view_set_axis_extent (b, MAX (u0, u1));
  if (was_fit)
    ml_timeline_view_zoom_fit (a);
  self->linking = FALSE;
  g_autofree char *na = g_path_get_basename (doc->box->path);
  g_autofree char *nb = g_path_get_basename (self->doc2->box->path);
  g_autofree char *title = g_strdup_printf ("%s vs %s", na, nb);
  gtk_label_set_text (GTK_LABEL (self->title), title);
  gtk_window_set_title (GTK_WINDOW (self), title);
}

/* The scales the two timelines share: two files' (share_file_scales),
 * two strategies' address scale, and the visible span. */
static void
share_scales (MlWindow *self, MlDocument *doc, gboolean cmp)
{
  gboolean two = self->doc2 != NULL;
  if (two && doc->runs[0]->scene && self->doc2->runs[0]->scene)
    share_file_scales (self, doc);
  if (cmp && doc->runs[0]->scene && doc->runs[1]->scene)
    {
      /* one scale while the two are within 4x of each other; beyond that
       * the smaller would be a flat line, and the summary lines say it */
      double e0 = ml_timeline_view_get_extent (_ml_window_tl (self, 0)), e1 = ml_timeline_view_get_extent (_ml_window_tl (self, 1));
      double ext = MAX (e0, e1) <= 4 * MIN (e0, e1) ? MAX (e0, e1) : 0;
      ml_timeline_view_set_addr_extent (_ml_window_tl (self, 0), ext);
      ml_timeline_view_set_addr_extent (_ml_window_tl (self, 1), ext);
    }
  if (cmp || two)
    {
      double u0, u1;
      ml_timeline_view_get_axis_span (_ml_window_tl (self, 0), &u0, &u1);
      ml_timeline_view_set_axis_span (_ml_window_tl (self, 1), u0, u1);
    }
  _ml_window_views_changed (self);
}

/* The side pages take the document; buffer @sel stays selected. */
static void
show_pages (MlWindow *self, MlDocument *doc, long sel, gboolean same_trace)
{
  ml_knobs_page_set_document (self->knobs_page, doc);
  ml_peaks_page_set_document (self->peaks_page, doc);
  ml_issues_page_set_document (self->issues_page, doc);
  ml_table_page_set_document (self->table_page, doc);
  ml_state_page_set_document (self->state_page, doc);
  ml_tune_page_set_document (self->tune_page, doc);
  if (gtk_editable_get_text (GTK_EDITABLE (self->search_entry))[0])
    _ml_window_run_search (self);
  else
    ml_find_page_set_document (self->find_page, doc, NULL);
  ml_timeline_view_select_buffer (_ml_window_tl (self, 0), sel);
  _ml_window_show_buffer_details (self, sel);   /* the new run's offsets */
  if (!same_trace)
    {
      /* a new trace: start where the question usually is, at the peak,
       * with the keys (+, -, 0, arrows) going to the timeline */
      _ml_window_show_page (self, self->peaks_page);
      gtk_widget_grab_focus (self->timeline[0]);
    }
}

void
_ml_window_apply_document (MlWindow *self, MlDocument *doc)
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
  self->knobs = doc->knobs;
  if (!same_trace)
    show_trace (self, doc);
  gboolean cmp = show_strategies (self, doc, same_trace);
  long sel = same_trace ? ml_timeline_view_get_selected (_ml_window_tl (self, 0)) : -1;
  show_timelines (self, doc, cmp);
  share_scales (self, doc, cmp);
  show_pages (self, doc, sel, same_trace);
  _ml_window_check_colouring (self, !same_trace);
  self->applying = FALSE;
  /* a new snapshot opens on its active memory, as memory_viz does */
  const MlTrace *t = ml_document_trace (doc);
  const char *source = t ? ml_trace_str (t, t->source) : NULL;
  if (!same_trace && source && g_str_equal (source, "pytorch-snapshot"))
    g_action_group_activate_action (G_ACTION_GROUP (self), "plot", g_variant_new_string ("active"));
}

/* ---- the window's own actions ------------------------------------------------ */

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
  { "show-panel", show_panel_action, NULL, "true", NULL },
  { "close", close_action, NULL, NULL, NULL },
};

/* ---- building the window ------------------------------------------------------------ */

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
  _ml_window_open_init (self);   /* and drag and drop */
  _ml_window_run_init (self);
  _ml_window_view_init (self);   /* and the single keys */
  _ml_window_export_init (self);

  _ml_window_apply_document (self, NULL);
  _ml_window_show_buffer_details (self, -1);
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
  g_free (self->frames_regex);
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
  signals[FILE_OPENED] = g_signal_new ("file-opened", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                       NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

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
  g_type_ensure (ML_TYPE_TUNE_PAGE);
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
  CHILD (tune_page);
  CHILD (knobs_page);
  CHILD (open_menu);
#undef CHILD
  gtk_widget_class_bind_template_callback (wc, on_banner_close);
  gtk_widget_class_bind_template_callback (wc, on_job_finished);
  _ml_window_open_class_init (wc);
  _ml_window_run_class_init (wc);
  _ml_window_view_class_init (wc);
}

MlWindow *
ml_window_new (GtkApplication *app)
{
  return g_object_new (ML_TYPE_WINDOW, "application", app, NULL);
}

void
ml_window_set_recent_menu (MlWindow *self, GMenuModel *recent)
{
  g_menu_append_section (self->open_menu, "Recent", recent);
}

MlDocument *
ml_window_get_document (MlWindow *self)
{
  return self->doc;
}

MlTimelineView *
ml_window_get_timeline (MlWindow *self, int i)
{
  return _ml_window_tl (self, i);
}

GtkWidget *
ml_window_get_device_selector (MlWindow *self)
{
  return self->device_dd;
}

GtkWidget *
ml_window_get_search_entry (MlWindow *self)
{
  return self->search_entry;
}

const GArray *
ml_window_get_search_hits (MlWindow *self)
{
  return ml_find_page_get_hits (self->find_page);
}

gboolean
ml_window_is_busy (MlWindow *self)
{
  /* a second file or its re-run waiting to start counts */
  return ml_job_bar_is_busy (self->job_bar) || (self->compare_path && self->doc) || self->rerun_second;
}
