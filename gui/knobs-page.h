/* knobs-page.h — MlKnobsPage: the side panel's Knobs (the run's settings).
 *
 * Entries for alignment, capacity, pool chunk, time limit, retries and
 * strategy options; Enter in any of them, or Apply, activates
 * win.apply-knobs, which reads them back with ml_knobs_page_read().
 */
#ifndef ML_GUI_KNOBS_PAGE_H
#define ML_GUI_KNOBS_PAGE_H

#include <gtk/gtk.h>

#include "gui/document.h"

G_BEGIN_DECLS

#define ML_TYPE_KNOBS_PAGE (ml_knobs_page_get_type ())
G_DECLARE_FINAL_TYPE (MlKnobsPage, ml_knobs_page, ML, KNOBS_PAGE, GtkWidget)

/* Shows @doc's alignment and capacity (its knobs, else the trace's
 * implied capacity); NULL leaves the entries. */
void     ml_knobs_page_set_document (MlKnobsPage *self, MlDocument *doc);
/* Parses the entries over @base into @out. FALSE (with the reasons shown
 * on the page and the bad entries marked) when one does not parse. */
gboolean ml_knobs_page_read (MlKnobsPage *self, const MlViewKnobs *base, MlViewKnobs *out);
/* Types @text into entry @name ("align", "capacity", "chunk",
 * "time-limit", "options"); FALSE for an unknown name. */
gboolean ml_knobs_page_set_text (MlKnobsPage *self, const char *name, const char *text);

G_END_DECLS

#endif
