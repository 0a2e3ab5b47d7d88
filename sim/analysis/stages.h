/* stages.h — the stages a trace marks: a mark "NAME start" and the next
 * "NAME end" after it (a PyTorch snapshot's external_annotations
 * START / END, which the reader writes as such marks; an inner "NAME
 * start" before the end nests). A stage never ended runs to the end of
 * the trace. Pictures draw them as bands (render/timeline-marks.c);
 * `--range NAME` selects one at load (sim/formats/snapshot-stage.c).
 */
#ifndef ML_ANALYSIS_STAGES_H
#define ML_ANALYSIS_STAGES_H

#include "sim/trace.h"

typedef struct {
  const char *name;   /* the mark's text (borrowed from the trace) */
  size_t      len;    /* the name's length: the text without " start" */
  uint64_t    start;  /* the tick of its start mark */
  uint64_t    end;    /* the tick of its end mark, or the trace's end */
} MlStage;

/* The stages of @trace by their start: *@out (the caller frees it),
 * *@n. */
int ml_stages_find (const MlTrace *trace, MlStage **out, size_t *n, MlError *err) __attribute__ ((warn_unused_result));

#endif
