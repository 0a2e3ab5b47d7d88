/* window-view.c — MlWindow: what the timelines show, and where.
 *
 * The view actions (zoom, pan, a range, a buffer, the plot, colours, the
 * time axis) and their single-key shortcuts; going where a side page's
 * row points (a peak, a race, an OOM, a buffer, a state's tick); search;
 * the selection mirrored between the timelines and shown in Details; the
 * linked zoom of compare mode and the overview's window.
 */
#include "gui/window-private.h"

#include "gui/overview.h"
#include "gui/state-page.h"
#include "sim/analysis/find.h"

/* ---- going where a list row points ------------------------------------------ */

static void
focus_buffer (MlWindow *self, long buffer)
{
  if (buffer < 0 || !self->doc)
    return;
  const MlBuffer *b = &self->doc->bufs->buf[buffer];
  double t0, t1;
  ml_timeline_view_get_time_span (_ml_window_tl (self, 0), &t0, &t1);
  double life = (double) (b->end - b->start);
  /* keep the zoom when the buffer is visible and not tiny, else frame it */
  if (!(b->start >= t0 && b->end <= t1 && life * 200 > (t1 - t0)))
    {
      double pad = MAX (life, 1.0);
      ml_timeline_view_set_time_span (_ml_window_tl (self, 0), (double) b->start - pad, (double) b->end + pad);
    }
}

static void
on_target_chosen (MlListPage *page, const MlTarget *t, MlWindow *self)
{
  if (!self->doc)
    return;
  MlTimelineView *tv = _ml_window_tl (self, 0);
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
        MlTimelineView *target = t->kind == ML_TARGET_OOM_PLAN && t->index == 1 ? _ml_window_tl (self, 1) : tv;
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
  ml_timeline_view_set_marker (_ml_window_tl (self, 0), (double) tick + 0.5, "state");
  ml_overview_set_marker (ML_OVERVIEW (self->overview), (double) tick + 0.5);
  double t0, t1;
  ml_timeline_view_get_time_span (_ml_window_tl (self, 0), &t0, &t1);
  if ((double) tick < t0 || (double) tick >= t1)
    ml_timeline_view_focus_tick (_ml_window_tl (self, 0), (double) tick, 0);
}

gboolean
ml_window_show_state (MlWindow *self, guint64 tick)
{
  if (!self->doc)
    return FALSE;
  _ml_window_show_page (self, self->state_page);
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

MlTunePage *
ml_window_show_tune_page (MlWindow *self)
{
  _ml_window_show_page (self, self->tune_page);
  return self->tune_page;
}

gboolean
ml_window_show_peak (MlWindow *self, guint index)
{
  if (!self->doc || index >= self->doc->peaks.n)
    return FALSE;
  gtk_notebook_set_current_page (GTK_NOTEBOOK (self->notebook),
                                 gtk_notebook_page_num (GTK_NOTEBOOK (self->notebook), GTK_WIDGET (self->peaks_page)));
  return ml_list_page_choose (ML_LIST_PAGE (self->peaks_page), index);   /* row i is group i */
}

void
_ml_window_show_page (MlWindow *self, gpointer page)
{
  gtk_notebook_set_current_page (GTK_NOTEBOOK (self->notebook),
                                 gtk_notebook_page_num (GTK_NOTEBOOK (self->notebook), GTK_WIDGET (page)));
}

/* ---- search and the selection ------------------------------------------------ */

void
_ml_window_run_search (MlWindow *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));
  /* "0xADDR@": at the tick the State page shows */
  g_autofree char *at = NULL;
  MlFindAddr q;
  if (g_str_has_prefix (text, "0x") && ml_find_addr_parse (text, TRUE, &q) == 0 && q.now)
    text = at = g_strdup_printf ("%s%" G_GUINT64_FORMAT, text, ml_state_page_get_tick (self->state_page));
  ml_find_page_set_document (self->find_page, self->doc, text);
  GArray *hits = ml_find_page_get_hits (self->find_page);
  ml_timeline_view_set_highlights (_ml_window_tl (self, 0), hits ? (const guint32 *) hits->data : NULL, hits ? hits->len : 0);
  if (hits)
    _ml_window_show_page (self, self->find_page);
}

static void
on_search_changed (GtkSearchEntry *e, MlWindow *self)
{
  if (self->doc)
    _ml_window_run_search (self);
}

static void
on_search_activate (GtkSearchEntry *e, MlWindow *self)
{
  GArray *hits = ml_find_page_get_hits (self->find_page);
  if (hits && hits->len)
    {
      long k = g_array_index (hits, guint32, 0);
      focus_buffer (self, k);
      ml_timeline_view_select_buffer (_ml_window_tl (self, 0), k);
    }
}

void
_ml_window_show_buffer_details (MlWindow *self, long k)
{
  ml_details_page_set_document (self->details_page, self->doc, k);
  if (!self->from_list && self->doc && k >= 0)
    _ml_window_show_page (self, self->details_page);
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
        _ml_window_show_buffer_details (self, buffer);
      return;
    }
  for (int i = 0; i < 2; i++)
    if (self->timeline[i] != GTK_WIDGET (tv) && gtk_widget_get_visible (self->timeline_box[i])
        && ml_timeline_view_get_selected (_ml_window_tl (self, i)) != buffer)
      ml_timeline_view_select_buffer (_ml_window_tl (self, i), buffer);
  _ml_window_show_buffer_details (self, buffer);
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
          ml_timeline_view_set_axis_span (_ml_window_tl (self, i), u0, u1);
      self->linking = FALSE;
    }
  ml_timeline_view_get_time_span (_ml_window_tl (self, 0), &t0, &t1);   /* the overview is the first file's */
  ml_overview_set_window (ML_OVERVIEW (self->overview), t0, t1);
}

void
_ml_window_views_changed (MlWindow *self)
{
  on_view_changed (_ml_window_tl (self, 0), self);
}

static void
on_overview_window (MlOverview *ov, double t0, double t1, MlWindow *self)
{
  ml_timeline_view_set_time_span (_ml_window_tl (self, 0), t0, t1);
}

/* ---- view actions --------------------------------------------------------------- */

#define TV0 _ml_window_tl (self, 0)

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

/* Why @self's trace cannot be coloured @by (@regex for frames): a
 * message for the window, or NULL when it can. */
static char *
color_refusal (MlWindow *self, MlColorBy by, const char *regex)
{
  if (!self->doc)
    return NULL;
  if (by == ML_COLOR_BY_KIND)
    {
      /* PyTorch snapshots and CSV instances record no kinds: every buffer
       * would be one colour */
      gboolean any = FALSE;
      for (gsize i = 0; i < self->doc->bufs->n && !any; i++)
        any = (self->doc->bufs->buf[i].flags & (ML_BUF_WEIGHT | ML_BUF_ACTIVATION | ML_BUF_INPUT | ML_BUF_OUTPUT)) != 0;
      return any ? NULL : g_strdup ("This trace records no buffer kinds (weight, activation, input, output): PyTorch "
                                    "snapshots and planning instances have none. The colours stay as they were.");
    }
  if (by == ML_COLOR_BY_FRAMES && (!regex || !*regex))
    return g_strdup ("Colour by frames takes the search box's text as a regular expression over the stacks' frames "
                     "(file:line:function; its first parenthesised part names the group): type one there first, "
                     "e.g. model\\.py:[0-9]+:([a-z_]+).");
  MlError err = { 0 };
  if (ml_color_by_check (ml_document_trace (self->doc), by, regex, &err) < 0)
    return g_strdup_printf ("This trace cannot be coloured by %s: %s. The colours stay as they were.",
                            ml_color_by_name (by), err.msg);
  return NULL;
}

/* Every shown scene coloured by frames under @regex; FALSE (and a
 * message) for a bad expression. */
static gboolean
color_scenes_by_frames (MlWindow *self, const char *regex)
{
  MlRun *runs[3] = { self->doc ? self->doc->runs[0] : NULL, self->doc ? self->doc->runs[1] : NULL,
                     self->doc2 ? self->doc2->runs[0] : NULL };
  for (int i = 0; i < 3; i++)
    {
      MlError err = { 0 };
      if (runs[i] && runs[i]->scene && ml_scene_color_frames (runs[i]->scene, regex, &err) < 0)
        {
          ml_window_show_message (self, err.msg);
          return FALSE;
        }
    }
  return TRUE;
}

static void
set_color_by (MlWindow *self, MlColorBy by)
{
  for (int i = 0; i < 2; i++)
    {
      ml_timeline_view_get_style (_ml_window_tl (self, i))->color_by = by;
      ml_timeline_view_style_changed (_ml_window_tl (self, i));
    }
}

static void
color_by_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  MlColorBy by;
  if (ml_color_by_parse (g_variant_get_string (p, NULL), &by) < 0)
    return;
  const char *regex = by == ML_COLOR_BY_FRAMES ? gtk_editable_get_text (GTK_EDITABLE (self->search_entry)) : NULL;
  g_autofree char *why = color_refusal (self, by, regex);
  if (why)
    {
      ml_window_show_message (self, why);
      return;
    }
  if (by == ML_COLOR_BY_FRAMES)
    {
      if (!color_scenes_by_frames (self, regex))
        return;
      g_free (self->frames_regex);
      self->frames_regex = g_strdup (regex);
    }
  g_simple_action_set_state (a, p);
  set_color_by (self, by);
}

void
_ml_window_check_colouring (MlWindow *self, gboolean new_trace)
{
  GAction *a = g_action_map_lookup_action (G_ACTION_MAP (self), "color-by");
  g_autoptr (GVariant) st = a ? g_action_get_state (a) : NULL;
  MlColorBy by;
  if (!st || ml_color_by_parse (g_variant_get_string (st, NULL), &by) < 0 || by == ML_COLOR_BY_SITE)
    return;
  g_autofree char *why = new_trace ? color_refusal (self, by, self->frames_regex) : NULL;
  if (!why && by == ML_COLOR_BY_FRAMES && color_scenes_by_frames (self, self->frames_regex))
    set_color_by (self, by);   /* new scenes (another strategy, another trace): their classes */
  else if (why || by == ML_COLOR_BY_FRAMES)
    {
      if (why)
        ml_window_show_message (self, why);
      g_simple_action_set_state (G_SIMPLE_ACTION (a), g_variant_new_string ("site"));
      set_color_by (self, ML_COLOR_BY_SITE);
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
    ml_timeline_view_set_plot (_ml_window_tl (self, i), plot);
  if (self->doc && self->doc->runs[1])
    _ml_window_apply_document (self, self->doc);   /* the shared scale of compare mode, in the new units */
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
      ml_timeline_view_get_style (_ml_window_tl (self, i))->time_axis = ax;
      ml_timeline_view_style_changed (_ml_window_tl (self, i));
    }
  ml_overview_set_warp (ML_OVERVIEW (self->overview), ml_timeline_view_get_view (_ml_window_tl (self, 0))->warp);
  if (ax == ML_TIME_AXIS_TIME && self->doc && self->doc->runs[0]->scene
      && !ml_scene_real_time (self->doc->runs[0]->scene, ax))
    ml_window_show_message (self, "This trace's events carry no times (or all the same one): the axis stays in ticks.");
}

/* T: real time <-> ticks (what the axis shows now, the other way). */
static void
toggle_time_axis_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  gboolean timed = ml_timeline_view_get_view (_ml_window_tl (self, 0))->warp != NULL;
  g_action_group_activate_action (G_ACTION_GROUP (self), "time-axis", g_variant_new_string (timed ? "ticks" : "time"));
}

static void
search_action (GSimpleAction *a, GVariant *p, gpointer u)
{
  MlWindow *self = u;
  gtk_widget_grab_focus (self->search_entry);
}

static const GActionEntry view_actions[] = {
  { "zoom-in", zoom_in_action, NULL, NULL, NULL },
  { "zoom-out", zoom_out_action, NULL, NULL, NULL },
  { "zoom-fit", zoom_fit_action, NULL, NULL, NULL },
  { "pan-left", pan_left_action, NULL, NULL, NULL },
  { "pan-right", pan_right_action, NULL, NULL, NULL },
  { "select-range", select_range_action, "(dd)", NULL, NULL },
  { "select-buffer", select_buffer_action, "i", NULL, NULL },
  { "color-by", color_by_action, "s", "'site'", NULL },
  { "time-axis", time_axis_action, "s", "'auto'", NULL },
  { "toggle-time-axis", toggle_time_axis_action, NULL, NULL, NULL },
  { "plot", plot_action, "s", "'address'", NULL },
  { "search", search_action, NULL, NULL, NULL },
};

static void
add_key (GtkShortcutController *sc, guint key, GdkModifierType mods, const char *action)
{
  gtk_shortcut_controller_add_shortcut (sc, gtk_shortcut_new (gtk_keyval_trigger_new (key, mods),
                                                              gtk_named_action_new (action)));
}

void
_ml_window_view_init (MlWindow *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self), view_actions, G_N_ELEMENTS (view_actions), self);
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
}

void
_ml_window_view_class_init (GtkWidgetClass *wc)
{
  gtk_widget_class_bind_template_callback (wc, on_search_changed);
  gtk_widget_class_bind_template_callback (wc, on_search_activate);
  gtk_widget_class_bind_template_callback (wc, on_buffer_selected);
  gtk_widget_class_bind_template_callback (wc, on_view_changed);
  gtk_widget_class_bind_template_callback (wc, on_overview_window);
  gtk_widget_class_bind_template_callback (wc, on_target_chosen);
  gtk_widget_class_bind_template_callback (wc, on_state_tick);
}
