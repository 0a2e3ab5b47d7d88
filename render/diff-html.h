/* diff-html.h — `memlens diff` as one self-contained HTML page: both runs'
 * active memory (the live buffers stacked over time) drawn on one time
 * and byte scale, one above the other, then the table of changes per call
 * site (sim/analysis/diff.h). Inline CSS and SVG; a small inline script
 * zooms and pans the two figures together (the wheel at the pointer, a
 * drag, a double-click to reset). Nothing is loaded from anywhere.
 */
#ifndef ML_DIFF_HTML_H
#define ML_DIFF_HTML_H

#include <stdio.h>

#include "sim/analysis/diff.h"
#include "sim/plan.h"

typedef struct {
  const char      *path;   /* the trace, for titles */
  const MlBuffers *bufs;
  const MlPlan    *plan;   /* the plan drawn (recorded, else best-fit) */
} MlDiffSide;

int ml_diff_write_html (FILE *fp, const MlDiff *diff, const MlDiffSide *a, const MlDiffSide *b, MlError *err);
/* The same to @path, atomically. */
int ml_diff_write_html_file (const char *path, const MlDiff *diff, const MlDiffSide *a, const MlDiffSide *b,
                             MlError *err);

#endif
