/* report-private.h — what the report's section files share (render/report/
 * report-*.c); not public. */
#ifndef ML_REPORT_PRIVATE_H
#define ML_REPORT_PRIVATE_H

#include "render/report/report.h"
#include "sim/base/units.h"

/* @bytes as "1.50 GiB", in @d's arena. */
static inline const char *
_ml_report_size (MlDoc *d, uint64_t bytes)
{
  char buf[32];
  return ml_doc_strdup (d, ml_format_size (bytes, buf, sizeof buf));
}

/* "… and N more" (@text) across a whole row of @t. */
static inline void
_ml_report_row_more (MlDoc *d, MlDocTable *t, const char *text)
{
  MlDocCell *c = ml_doc_cellf (d, ml_doc_row (d, t), 0, "%s", text);
  c->tone = ML_DOC_TONE_MUTED;
  c->span = ML_DOC_SPAN_REST;
}

/* The peaks section (report-peaks.c): one entry per peak group with its
 * blame, the iterations when the trace repeats; JSON "peaks" and
 * "iterations". */
void _ml_report_section_peaks (MlDoc *d, const MlReport *r);

/* The allocator settings section of a PyTorch snapshot (report-tune.c):
 * the tune rows, the answer, the strands, the reserved curves; nothing
 * when @r has no tune result. */
void _ml_report_section_tune (MlDoc *d, const MlReport *r);

#endif
