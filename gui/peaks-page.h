/* peaks-page.h — MlPeaksPage: the side panel's Peaks (an MlListPage).
 *
 * One row per peak point of the document (the highest first), with the
 * buffers live there and the largest of them; choosing a row emits
 * "target-chosen" with an ML_TARGET_PEAK.
 */
#ifndef ML_GUI_PEAKS_PAGE_H
#define ML_GUI_PEAKS_PAGE_H

#include "gui/document.h"
#include "gui/list-page.h"

G_BEGIN_DECLS

#define ML_TYPE_PEAKS_PAGE (ml_peaks_page_get_type ())
G_DECLARE_FINAL_TYPE (MlPeaksPage, ml_peaks_page, ML, PEAKS_PAGE, MlListPage)

void ml_peaks_page_set_document (MlPeaksPage *self, MlDocument *doc);

G_END_DECLS

#endif
