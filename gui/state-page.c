/* state-page.c — MlStatePage. */
#include "gui/state-page.h"

#include "render/state.h"
#include "sim/analysis/state.h"
#include "sim/base/units.h"

/* events listed around the chosen tick */
#define ML_STATE_EVENTS_BEFORE 15
#define ML_STATE_EVENTS 60
/* blocks listed as text, at most (whole segments; a label taller than
 * cairo's 32767 px draws nothing) */
#define ML_STATE_MAX_LINES 1000

struct _MlStatePage {
  GtkWidget   parent;
  GtkWidget  *scrolled;
  GtkWidget  *spin, *area, *events, *text;
  MlDocument *doc;
  MlState     state;
  guint64     tick;
  gboolean    setting;
  gsize       first_event, n_events;   /* the listed events */
};

G_DEFINE_FINAL_TYPE (MlStatePage, ml_state_page, GTK_TYPE_WIDGET)

enum { TICK_CHOSEN, N_SIGNALS };
static guint signals[N_SIGNALS];

static const MlRun *
run_of (MlStatePage *self)
{
  return self->doc && self->doc->runs[0] && self->doc->runs[0]->plan && self->doc->runs[0]->scene ? self->doc->runs[0]
                                                                                                    : NULL;
}

static void
fill_text (MlStatePage *self)
{
  const MlRun *run = run_of (self);
  GtkTextBuffer *tb = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->text));
  if (!run)
    {
      gtk_text_buffer_set_text (tb, "", -1);
      return;
    }
  GString *s = g_string_new (NULL);
  char a[32], b[32], c[32], tmp[32];
  g_string_append_printf (s, "After tick %" G_GUINT64_FORMAT " (%s): allocated %s, free (cached) %s, unmapped %s\n",
                          self->tick, run->strategy, ml_format_size (self->state.allocated, a, sizeof a),
                          ml_format_size (self->state.free, b, sizeof b), ml_format_size (self->state.unmapped, c, sizeof c));
  gsize lines = 0;
  for (gsize k = 0; k < self->state.n_segs; k++)
    {
      const MlSegmentState *ss = &self->state.segs[k];
      if (lines + ss->n > ML_STATE_MAX_LINES && k > 0)
        {
          g_string_append_printf (s, "\n… and the blocks of %zu more segments (the picture shows them)\n",
                                  self->state.n_segs - k);
          break;
        }
      g_string_append_printf (s, "\nsegment %u, %s:\n", ss->segment, ml_format_size (ss->size, a, sizeof a));
      for (gsize i = ss->first; i < ss->first + ss->n; i++, lines++)
        {
          const MlBlock *bl = &self->state.blocks[i];
          g_string_append_printf (s, "  %-9s %10s at +0x%" G_GINT64_MODIFIER "x", ml_block_kind_name (bl->kind),
                                  ml_format_size (bl->size, a, sizeof a), bl->offset);
          if (bl->kind == ML_BLOCK_ALLOCATED)
            g_string_append_printf (s, "  %s", ml_document_buffer_label (self->doc, bl->buffer, tmp, sizeof tmp));
          g_string_append_c (s, '\n');
        }

    }
  gtk_text_buffer_set_text (tb, s->str, -1);
  g_string_free (s, TRUE);
}

static void
clear_events (MlStatePage *self)
{
  GtkWidget *c;
  while ((c = gtk_widget_get_first_child (self->events)))
    gtk_list_box_remove (GTK_LIST_BOX (self->events), c);
  self->n_events = 0;
}

/* The events around the tick, the last one at or before it chosen. */
static void
fill_events (MlStatePage *self)
{
  clear_events (self);
  if (!self->doc)
    return;
  const MlTrace *t = ml_document_trace (self->doc);
  gsize lo = 0, hi = t->n_events;   /* the first event after the tick */
  while (lo < hi)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (t->events[mid].tick <= self->tick)
        lo = mid + 1;
      else
        hi = mid;
    }
  gsize at = lo;
  self->first_event = at > ML_STATE_EVENTS_BEFORE ? at - ML_STATE_EVENTS_BEFORE : 0;
  GtkListBoxRow *chosen = NULL;
  char a[32];
  for (gsize e = self->first_event; e < t->n_events && e < self->first_event + ML_STATE_EVENTS; e++)
    {
      const MlEvent *ev = &t->events[e];
      const char *name = ev->name ? ml_trace_str (t, ev->name) : NULL;
      g_autofree char *text = g_strdup_printf ("%6" G_GUINT64_FORMAT "  %-14s %s%s%s", ev->tick,
                                               ml_event_kind_name ((MlEventKind) ev->kind),
                                               ev->size ? ml_format_size (ev->size, a, sizeof a) : "",
                                               name && *name ? "  " : "", name && *name ? name : "");
      GtkWidget *l = gtk_label_new (text);
      gtk_label_set_xalign (GTK_LABEL (l), 0);
      gtk_label_set_ellipsize (GTK_LABEL (l), PANGO_ELLIPSIZE_END);
      gtk_widget_add_css_class (l, "monospace");
      GtkWidget *row = gtk_list_box_row_new ();
      gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), l);
      g_object_set_data (G_OBJECT (row), "ml-tick", GSIZE_TO_POINTER ((gsize) ev->tick));
      gtk_list_box_append (GTK_LIST_BOX (self->events), row);
      if (ev->tick <= self->tick)
        chosen = GTK_LIST_BOX_ROW (row);
      self->n_events++;
    }
  self->setting = TRUE;
  gtk_list_box_select_row (GTK_LIST_BOX (self->events), chosen);
  self->setting = FALSE;
}

static void
refresh (MlStatePage *self)
{
  ml_state_clear (&self->state);
  const MlRun *run = run_of (self);
  if (run && ml_state_at (self->doc->bufs, run->plan, self->tick, &self->state, NULL) < 0)
    ml_state_clear (&self->state);
  fill_text (self);
  fill_events (self);
  gtk_widget_queue_draw (self->area);
}

void
ml_state_page_set_tick (MlStatePage *self, guint64 tick)
{
  if (self->doc && self->doc->bufs->end_tick && tick >= self->doc->bufs->end_tick)
    tick = self->doc->bufs->end_tick - 1;
  self->tick = tick;
  self->setting = TRUE;
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (self->spin), (double) tick);
  self->setting = FALSE;
  refresh (self);
}

guint64
ml_state_page_get_tick (MlStatePage *self)
{
  return self->tick;
}

void
ml_state_page_set_document (MlStatePage *self, MlDocument *doc)
{
  if (doc)
    ml_document_ref (doc);
  g_clear_pointer (&self->doc, ml_document_unref);
  self->doc = doc;
  double end = doc && doc->bufs->end_tick ? (double) (doc->bufs->end_tick - 1) : 0;
  self->setting = TRUE;
  gtk_spin_button_set_range (GTK_SPIN_BUTTON (self->spin), 0, MAX (end, 0));
  self->setting = FALSE;
  ml_state_page_set_tick (self, self->tick);
}

char *
ml_state_page_dup_text (MlStatePage *self)
{
  GtkTextBuffer *tb = gtk_text_view_get_buffer (GTK_TEXT_VIEW (self->text));
  GtkTextIter a, b;
  gtk_text_buffer_get_bounds (tb, &a, &b);
  return gtk_text_buffer_get_text (tb, &a, &b, FALSE);
}

GtkWidget *
ml_state_page_get_event_row (MlStatePage *self, gsize event)
{
  if (event < self->first_event || event >= self->first_event + self->n_events)
    return NULL;
  return GTK_WIDGET (gtk_list_box_get_row_at_index (GTK_LIST_BOX (self->events), (int) (event - self->first_event)));
}

static void
choose (MlStatePage *self, guint64 tick)
{
  ml_state_page_set_tick (self, tick);
  g_signal_emit (self, signals[TICK_CHOSEN], 0, self->tick);
}

static void
on_spin (GtkSpinButton *spin, MlStatePage *self)
{
  if (!self->setting)
    choose (self, (guint64) gtk_spin_button_get_value (spin));
}

static void
on_event_activated (GtkListBox *list, GtkListBoxRow *row, MlStatePage *self)
{
  if (!self->setting)
    choose (self, (guint64) GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (row), "ml-tick")));
}

static void
draw_area (GtkDrawingArea *area, cairo_t *cr, int w, int h, gpointer user)
{
  MlStatePage *self = user;
  const MlRun *run = run_of (self);
  if (!run)
    return;
  MlStyle st;
  ml_style_init (&st);
  MlRect r = { 0, 0, w, h };
  ml_state_draw (cr, &r, &self->state, run->scene, &st);
}

static void
ml_state_page_dispose (GObject *obj)
{
  MlStatePage *self = ML_STATE_PAGE (obj);
  g_clear_pointer (&self->scrolled, gtk_widget_unparent);
  g_clear_pointer (&self->doc, ml_document_unref);
  ml_state_clear (&self->state);
  G_OBJECT_CLASS (ml_state_page_parent_class)->dispose (obj);
}

static void
ml_state_page_class_init (MlStatePageClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ml_state_page_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  signals[TICK_CHOSEN] = g_signal_new ("tick-chosen", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                       NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT64);
}

static void
ml_state_page_init (MlStatePage *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  gtk_widget_set_margin_start (box, 8);
  gtk_widget_set_margin_end (box, 8);
  gtk_widget_set_margin_top (box, 8);
  GtkWidget *line = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_box_append (GTK_BOX (line), gtk_label_new ("After the events of tick"));
  self->spin = gtk_spin_button_new_with_range (0, 0, 1);
  gtk_widget_set_hexpand (self->spin, TRUE);
  g_signal_connect (self->spin, "value-changed", G_CALLBACK (on_spin), self);
  gtk_box_append (GTK_BOX (line), self->spin);
  gtk_box_append (GTK_BOX (box), line);
  self->area = gtk_drawing_area_new ();
  gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (self->area), 230);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (self->area), draw_area, self, NULL);
  gtk_box_append (GTK_BOX (box), self->area);
  GtkWidget *hint = gtk_label_new ("Each segment split into its blocks: allocated (the buffer's colour), free but "
                                   "cached (grey), unmapped (dashed). Choose an event to see the state after it.");
  gtk_label_set_wrap (GTK_LABEL (hint), TRUE);
  gtk_label_set_xalign (GTK_LABEL (hint), 0);
  gtk_widget_add_css_class (hint, "dim-label");
  gtk_box_append (GTK_BOX (box), hint);
  self->events = gtk_list_box_new ();
  gtk_list_box_set_activate_on_single_click (GTK_LIST_BOX (self->events), TRUE);
  g_signal_connect (self->events, "row-activated", G_CALLBACK (on_event_activated), self);
  gtk_box_append (GTK_BOX (box), self->events);
  /* a text view, not a label: thousands of blocks lay out lazily */
  self->text = gtk_text_view_new ();
  gtk_text_view_set_editable (GTK_TEXT_VIEW (self->text), FALSE);
  gtk_text_view_set_cursor_visible (GTK_TEXT_VIEW (self->text), FALSE);
  gtk_text_view_set_monospace (GTK_TEXT_VIEW (self->text), TRUE);
  gtk_text_view_set_wrap_mode (GTK_TEXT_VIEW (self->text), GTK_WRAP_CHAR);
  gtk_box_append (GTK_BOX (box), self->text);
  self->scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->scrolled), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled), box);
  gtk_widget_set_parent (self->scrolled, GTK_WIDGET (self));
}
