/* timeline-view-input.c — MlTimelineView: the pointer and the keys.
 *
 * ctrl+scroll and pinch zoom around the pointer (shift: the addresses),
 * plain scroll pans in time (shift: in addresses), drag pans, shift-drag
 * selects a time range and zooms to it, a click selects the buffer under
 * it, hovering outlines it and its tooltip tells what it is.
 */
#include "gui/timeline-view-private.h"

#include <math.h>

static gboolean
on_query_tooltip (GtkWidget *w, int x, int y, gboolean keyboard, GtkTooltip *tip, gpointer user)
{
  MlTimelineView *self = ML_TIMELINE_VIEW (w);
  if (!self->scene || keyboard || self->panning || self->selecting)
    return FALSE;
  g_autofree char *markup = ml_timeline_view_dup_markup_at (self, x, y);
  if (!markup)
    return FALSE;
  gtk_tooltip_set_markup (tip, markup);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *m, double x, double y, MlTimelineView *self)
{
  self->pointer_x = x, self->pointer_y = y;
  if (!self->scene || self->panning || self->selecting)
    return;
  long k = ml_timeline_view_pick (self, x, y);
  if (k != self->hover)
    {
      self->hover = k;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
on_leave (GtkEventControllerMotion *m, MlTimelineView *self)
{
  if (self->hover >= 0)
    {
      self->hover = -1;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

void
_ml_timeline_view_zoom_at (MlTimelineView *self, double factor, double x, double y, gboolean addresses)
{
  if (!self->scene)
    return;
  _ml_timeline_view_update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  x = CLAMP (x, self->view.px, self->view.px + self->view.pw);
  y = CLAMP (y, self->view.py, self->view.py + self->view.ph);
  ml_view_zoom (&self->view, addresses ? 1.0 : factor, addresses ? factor : 1.0, x, y);
  _ml_timeline_view_changed (self);
}

static gboolean
on_scroll (GtkEventControllerScroll *c, double dx, double dy, MlTimelineView *self)
{
  if (!self->scene)
    return FALSE;
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (c));
  if (mods & GDK_CONTROL_MASK)
    {
      double f = pow (1.2, -dy);
      _ml_timeline_view_zoom_at (self, f, self->pointer_x, self->pointer_y, (mods & GDK_SHIFT_MASK) != 0);
      return TRUE;
    }
  _ml_timeline_view_update_layout (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  if (mods & GDK_SHIFT_MASK)
    ml_view_pan (&self->view, 0, -dy * 40);
  else
    ml_view_pan (&self->view, -(dx + dy) * 40, 0);
  _ml_timeline_view_changed (self);
  return TRUE;
}

static void
on_pinch_begin (GtkGesture *g, GdkEventSequence *seq, MlTimelineView *self)
{
  self->zoom_scale = 1.0;
}

static void
on_pinch (GtkGestureZoom *g, double scale, MlTimelineView *self)
{
  double cx, cy;
  if (scale <= 0 || !gtk_gesture_get_bounding_box_center (GTK_GESTURE (g), &cx, &cy))
    return;
  _ml_timeline_view_zoom_at (self, scale / self->zoom_scale, cx, cy, FALSE);
  self->zoom_scale = scale;
}

static void
on_drag_begin (GtkGestureDrag *g, double x, double y, MlTimelineView *self)
{
  if (!self->scene)
    return;
  GdkModifierType mods = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (g));
  self->drag_x = x, self->drag_y = y;
  self->drag_dx = self->drag_dy = 0;
  self->drag_start_view = self->view;
  self->selecting = (mods & GDK_SHIFT_MASK) != 0;
  self->panning = FALSE;
  gtk_widget_grab_focus (GTK_WIDGET (self));
}

static void pan_to (MlTimelineView *self, double dx, double dy);

static void
on_drag_update (GtkGestureDrag *g, double dx, double dy, MlTimelineView *self)
{
  if (!self->scene)
    return;
  self->drag_dx = dx, self->drag_dy = dy;
  if (self->selecting)
    {
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return;
    }
  if (!self->panning && fabs (dx) + fabs (dy) < 4)
    return;
  pan_to (self, dx, dy);
}

/* Pans to the drag's total offset from where it began. */
static void
pan_to (MlTimelineView *self, double dx, double dy)
{
  self->panning = TRUE;
  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "grabbing");
  MlView v = self->drag_start_view;
  v.px = self->view.px, v.py = self->view.py, v.pw = self->view.pw, v.ph = self->view.ph;
  /* pan vertically only when the addresses are zoomed in */
  gboolean addr_zoomed = v.a1 - v.a0 < v.a_max - v.a_min;
  ml_view_pan (&v, dx, addr_zoomed ? dy : 0);
  self->view = v;
  _ml_timeline_view_changed (self);
}

static void
on_drag_end (GtkGestureDrag *g, double dx, double dy, MlTimelineView *self)
{
  if (!self->scene)
    return;
  if (self->selecting)
    {
      self->selecting = FALSE;
      double x0 = MIN (self->drag_x, self->drag_x + dx), x1 = MAX (self->drag_x, self->drag_x + dx);
      if (x1 - x0 >= 3)
        {
          double t0 = ml_view_x_to_time (&self->view, x0), t1 = ml_view_x_to_time (&self->view, x1);
          ml_timeline_view_set_time_span (self, t0, t1);
        }
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
  else if (self->panning || fabs (dx) + fabs (dy) >= 4)
    pan_to (self, dx, dy);   /* the last motion may come with the release */
  else
    {
      /* a click: pick through the hit test */
      ml_timeline_view_select_buffer (self, ml_timeline_view_pick (self, self->drag_x, self->drag_y));
    }
  self->panning = FALSE;
  gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
}

void
_ml_timeline_view_add_controllers (MlTimelineView *self)
{
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (on_query_tooltip), NULL);

  GtkEventController *motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);

  GtkEventController *scroll = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), scroll);

  GtkGesture *zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (on_pinch_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (on_pinch), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (zoom));

  GtkGesture *drag = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drag));
}
