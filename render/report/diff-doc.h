/* diff-doc.h — `memlens diff` as a document (render/report/doc.h): both
 * runs' peaks, their active memory (the live buffers stacked over time)
 * as two linked figures on one time and byte scale, and the table of
 * changes per call site (sim/analysis/diff.h). The HTML page is
 * render/diff-html.h.
 */
#ifndef ML_DIFF_DOC_H
#define ML_DIFF_DOC_H

#include "render/report/doc.h"
#include "sim/analysis/diff.h"
#include "sim/plan.h"

typedef struct {
  const char      *path;   /* the trace, for titles */
  const MlBuffers *bufs;
  const MlPlan    *plan;   /* the plan drawn (recorded, else best-fit) */
} MlDiffSide;

/* The diff of @a and @b as a document; it borrows the sides' buffers and
 * plans (for the figures). Free with ml_doc_free(). */
int ml_diff_document (const MlDiff *diff, const MlDiffSide *a, const MlDiffSide *b, MlDoc **out, MlError *err)
  ML_MUST_CHECK;

#endif
