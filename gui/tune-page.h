/* tune-page.h — MlTunePage: the side panel's Settings, for a PyTorch
 * snapshot: which allocator setting would have fitted (memlens tune's
 * answer and rows, strategies/caching-tune.h) and the reserved bytes over
 * time under the recorded settings and the answer, on one axis
 * (render/series.h). */
#ifndef ML_GUI_TUNE_PAGE_H
#define ML_GUI_TUNE_PAGE_H

#include <gtk/gtk.h>

#include "gui/document.h"

G_BEGIN_DECLS

#define ML_TYPE_TUNE_PAGE (ml_tune_page_get_type ())
G_DECLARE_FINAL_TYPE (MlTunePage, ml_tune_page, ML, TUNE_PAGE, GtkWidget)

/* Shows @doc's tune result (NULL, or a trace that is not a snapshot: a
 * line saying why there is none). */
void  ml_tune_page_set_document (MlTunePage *self, MlDocument *doc);
/* The text shown (newly allocated), and the curves drawn (0, 1 or 2). */
char *ml_tune_page_dup_text (MlTunePage *self);
guint ml_tune_page_n_curves (MlTunePage *self);

G_END_DECLS

#endif
