/* find-page.h — MlFindPage: the side panel's Find (an MlListPage).
 *
 * The buffers that match the search text (ml_document_search), at most
 * 500, with a count over the list; choosing one emits "target-chosen"
 * with an ML_TARGET_BUFFER.
 */
#ifndef ML_GUI_FIND_PAGE_H
#define ML_GUI_FIND_PAGE_H

#include "gui/document.h"
#include "gui/list-page.h"

G_BEGIN_DECLS

#define ML_TYPE_FIND_PAGE (ml_find_page_get_type ())
G_DECLARE_FINAL_TYPE (MlFindPage, ml_find_page, ML, FIND_PAGE, MlListPage)

/* Searches @doc (run 0's addresses) for @text, "" clears; NULL @doc
 * clears. */
void ml_find_page_set_document (MlFindPage *self, MlDocument *doc, const char *text);
/* The matching buffer indexes (borrowed; NULL when nothing is searched). */
GArray *ml_find_page_get_hits (MlFindPage *self);

G_END_DECLS

#endif
