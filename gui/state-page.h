/* state-page.h — MlStatePage: the side panel's State (the allocator at a
 * chosen event).
 *
 * A tick (spin button), the trace's events around it (choose one to see
 * the state right after it), the picture of every segment split into its
 * blocks (render/state.h) and the same as text: each block with its
 * kind (allocated / free (cached) / unmapped), offset, size and, when
 * allocated, its buffer. The state is of run 0's plan: what the recorded
 * allocator held, or what the strategy shown would hold. Choosing a tick
 * emits "tick-chosen" (guint64 tick) so the window can mark it.
 */
#ifndef ML_GUI_STATE_PAGE_H
#define ML_GUI_STATE_PAGE_H

#include <gtk/gtk.h>

#include "gui/document.h"

G_BEGIN_DECLS

#define ML_TYPE_STATE_PAGE (ml_state_page_get_type ())
G_DECLARE_FINAL_TYPE (MlStatePage, ml_state_page, ML, STATE_PAGE, GtkWidget)

/* Shows @doc's run 0 at the page's tick (clamped to the trace). */
void    ml_state_page_set_document (MlStatePage *self, MlDocument *doc);
/* Shows the state right after the events of @tick. */
void    ml_state_page_set_tick     (MlStatePage *self, guint64 tick);
guint64 ml_state_page_get_tick     (MlStatePage *self);
/* The blocks as text (for tests; newly allocated). */
char   *ml_state_page_dup_text     (MlStatePage *self);
/* The event list's row for trace event @event, when it is listed (for
 * tests that click it); NULL otherwise. */
GtkWidget *ml_state_page_get_event_row (MlStatePage *self, gsize event);

G_END_DECLS

#endif
