/* diff-html.h — `memlens diff` as one self-contained HTML page: the diff's
 * document (render/report/diff-doc.h) written by render/html.h, its two
 * figures linked (the wheel zooms both at the pointer, a drag pans both,
 * a double-click resets). Nothing is loaded from anywhere.
 */
#ifndef ML_DIFF_HTML_H
#define ML_DIFF_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include "render/report/diff-doc.h"

int ml_diff_write_html (FILE *fp, const MlDiff *diff, const MlDiffSide *a, const MlDiffSide *b, MlError *err)
  ML_MUST_CHECK;
/* The same to @path, atomically; @interactive: both runs drawn in the
 * browser (render/page.h), linked, instead of as SVG. */
int ml_diff_write_html_file (const char *path, const MlDiff *diff, const MlDiffSide *a, const MlDiffSide *b,
                             bool interactive, MlError *err) ML_MUST_CHECK;

#endif
