/* table-page.h — MlTablePage: the side panel's Table of strategies.
 *
 * A "Run all strategies" button (win.compare-all) and the table of the
 * runs it measured: peak, overhead, fragmentation, OOM and time per
 * strategy, the smallest peak in bold.
 */
#ifndef ML_GUI_TABLE_PAGE_H
#define ML_GUI_TABLE_PAGE_H

#include <gtk/gtk.h>

#include "gui/document.h"

G_BEGIN_DECLS

#define ML_TYPE_TABLE_PAGE (ml_table_page_get_type ())
G_DECLARE_FINAL_TYPE (MlTablePage, ml_table_page, ML, TABLE_PAGE, GtkWidget)

/* A new trace empties the table (the same trace with new knobs keeps it). */
void ml_table_page_set_document (MlTablePage *self, MlDocument *doc);
/* Shows @runs (MlRun, from ml_document_compare_finish) of @doc. */
void ml_table_page_set_runs     (MlTablePage *self, MlDocument *doc, GPtrArray *runs);
/* The line under the table ("Running…", an error). */
void ml_table_page_set_status   (MlTablePage *self, const char *text);

G_END_DECLS

#endif
