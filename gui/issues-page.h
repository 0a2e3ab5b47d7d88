/* issues-page.h — MlIssuesPage: the side panel's Issues (an MlListPage).
 *
 * Races and plan errors of each run shown, the OOMs the strategies hit
 * under the capacity, and the OOMs the trace recorded; choosing a row
 * emits "target-chosen" (ML_TARGET_RACE, _OOM_PLAN, _OOM_TRACE).
 */
#ifndef ML_GUI_ISSUES_PAGE_H
#define ML_GUI_ISSUES_PAGE_H

#include "gui/document.h"
#include "gui/list-page.h"

G_BEGIN_DECLS

#define ML_TYPE_ISSUES_PAGE (ml_issues_page_get_type ())
G_DECLARE_FINAL_TYPE (MlIssuesPage, ml_issues_page, ML, ISSUES_PAGE, MlListPage)

void ml_issues_page_set_document (MlIssuesPage *self, MlDocument *doc);

G_END_DECLS

#endif
