/* peaks-page.h — MlPeaksPage: the side panel's Peaks (an MlListPage).
 *
 * One row per peak group of the document (sim/analysis/peak-groups.h),
 * the highest first: its level, how often it recurs and how far apart
 * ("19.37 GiB, 17 times, every ~324 ticks"), the buffers live at its first
 * tick and the largest of them; the wiggles beside a higher peak are not
 * listed, and a line over the list says how many and, when the trace
 * repeats, its iterations. Choosing a row emits "target-chosen" with an
 * ML_TARGET_PEAK (index: the group).
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
