/* report-private.h — what the report's section files share (render/report/
 * report-*.c); not public. */
#ifndef ML_REPORT_PRIVATE_H
#define ML_REPORT_PRIVATE_H

#include "render/report/report.h"

/* The allocator settings section of a PyTorch snapshot (report-tune.c):
 * the tune rows, the answer, the strands, the reserved curves; nothing
 * when @r has no tune result. */
void _ml_report_section_tune (MlDoc *d, const MlReport *r);

#endif
