/* peaks-page.h — MlPeaksPage: the side panel's Peaks (an MlListPage).
 *
 * One row per peak point of the document (the highest first), with the
 * buffers live there and the largest of them; choosing a row emits
 * "target-chosen" with an ML_TARGET_PEAK. A local maximum within
 * ML_PEAKS_MERGE_FRACTION of the bytes and ML_PEAKS_MERGE_TICKS ticks (or
 * 1 % of the trace, if more) of one already listed is the same plateau and
 * is not repeated; a line over the list counts them.
 */
#ifndef ML_GUI_PEAKS_PAGE_H
#define ML_GUI_PEAKS_PAGE_H

#include "gui/document.h"
#include "gui/list-page.h"

G_BEGIN_DECLS

#define ML_TYPE_PEAKS_PAGE (ml_peaks_page_get_type ())
G_DECLARE_FINAL_TYPE (MlPeaksPage, ml_peaks_page, ML, PEAKS_PAGE, MlListPage)

#define ML_PEAKS_MERGE_FRACTION 0.03
#define ML_PEAKS_MERGE_TICKS    8

void ml_peaks_page_set_document (MlPeaksPage *self, MlDocument *doc);
/* The indexes (guint) in doc->peaks of the rows listed (borrowed). */
GArray *ml_peaks_page_get_shown (MlPeaksPage *self);
/* Whether two peak points are one plateau by the rule above. */
gboolean ml_peaks_near (const MlPeak *p, const MlPeak *q, guint64 end_tick);

G_END_DECLS

#endif
