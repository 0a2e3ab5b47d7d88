/* list-page.h — MlListPage: a side-panel page that lists places to go.
 *
 * The base of the Peaks, Issues and Find pages: an optional line of text
 * over a list whose rows each carry an MlTarget (a peak, a race, an OOM,
 * a buffer). Choosing a row (click, Enter, or ml_list_page_choose) emits
 * "target-chosen" with the row's target; the window moves the views.
 */
#ifndef ML_GUI_LIST_PAGE_H
#define ML_GUI_LIST_PAGE_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef enum {
  ML_TARGET_PEAK,        /* peak point @index; a = its largest buffer      */
  ML_TARGET_RACE,        /* issue between buffers a and b at @tick         */
  ML_TARGET_OOM_PLAN,    /* the OOM of run @index (0 or 1); a = its buffer */
  ML_TARGET_OOM_TRACE,   /* the trace's own OOM event at @tick             */
  ML_TARGET_BUFFER,      /* buffer a (a search result)                     */
} MlTargetKind;

typedef struct {
  MlTargetKind kind;
  guint64      tick;
  long         a, b;     /* buffer indexes, -1 = none */
  guint        index;
} MlTarget;

#define ML_TYPE_LIST_PAGE (ml_list_page_get_type ())
G_DECLARE_DERIVABLE_TYPE (MlListPage, ml_list_page, ML, LIST_PAGE, GtkWidget)

struct _MlListPageClass {
  GtkWidgetClass parent_class;
};

void ml_list_page_clear  (MlListPage *self);
/* Appends a row: @title, an optional dimmed @sub (also its tooltip), and
 * @target (copied; NULL: a heading that cannot be chosen). */
void ml_list_page_append (MlListPage *self, const char *title, const char *sub, const MlTarget *target);
/* The same with more text for the row's tooltip (may be NULL). */
void ml_list_page_append_full (MlListPage *self, const char *title, const char *sub, const char *tooltip,
                               const MlTarget *target);
/* The line over the list (NULL hides it). */
void ml_list_page_set_header (MlListPage *self, const char *text);
const char *ml_list_page_get_header (MlListPage *self);
/* Chooses row @index as a click does; FALSE when there is no such row
 * or it is a heading. */
gboolean ml_list_page_choose (MlListPage *self, guint index);
/* Rows (headings included). */
guint ml_list_page_get_n_rows (MlListPage *self);
/* The row's title text (for tests; NULL past the end). */
const char *ml_list_page_get_title (MlListPage *self, guint index);

G_END_DECLS

#endif
