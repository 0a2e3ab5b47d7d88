/* details-page.h — MlDetailsPage: the side panel's Details.
 *
 * The selected buffer: size, lifetime in ticks and time, stream, offset
 * in every run shown, recorded address, kind, and its stack frames.
 */
#ifndef ML_GUI_DETAILS_PAGE_H
#define ML_GUI_DETAILS_PAGE_H

#include <gtk/gtk.h>

#include "gui/document.h"

G_BEGIN_DECLS

#define ML_TYPE_DETAILS_PAGE (ml_details_page_get_type ())
G_DECLARE_FINAL_TYPE (MlDetailsPage, ml_details_page, ML, DETAILS_PAGE, GtkWidget)

/* Shows buffer @buffer of @doc (-1 or NULL @doc: "No buffer selected"). */
void  ml_details_page_set_document (MlDetailsPage *self, MlDocument *doc, long buffer);
/* The text shown, details and stack (newly allocated). */
char *ml_details_page_dup_text (MlDetailsPage *self);

G_END_DECLS

#endif
