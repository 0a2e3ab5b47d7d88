/* overview.h — MlOverview: the whole trace's live bytes in a strip, with
 * the main view's visible time span as a window that can be dragged.
 *
 * Clicking centres the window on the clicked tick; dragging the window
 * moves it; dragging outside it draws a new one. Either way
 * "window-changed" (double t0, double t1) asks the timeline to show that
 * span.
 */
#ifndef ML_GUI_OVERVIEW_H
#define ML_GUI_OVERVIEW_H

#include <gtk/gtk.h>

#include "gui/document.h"

G_BEGIN_DECLS

#define ML_TYPE_OVERVIEW (ml_overview_get_type ())
G_DECLARE_FINAL_TYPE (MlOverview, ml_overview, ML, OVERVIEW, GtkWidget)

GtkWidget *ml_overview_new (void);
/* Shows run 0's curve of @doc (NULL clears). */
void ml_overview_set_document (MlOverview *self, MlDocument *doc);
/* The window: ticks [t0, t1). */
void ml_overview_set_window (MlOverview *self, double t0, double t1);
/* A marker (peak, OOM) at @tick; < 0 clears. */
void ml_overview_set_marker (MlOverview *self, double tick);
/* Draws along the timeline's real-time axis (@warp, borrowed from the
 * shown scene), or in ticks (NULL). */
void ml_overview_set_warp (MlOverview *self, const MlTimeWarp *warp);

G_END_DECLS

#endif
