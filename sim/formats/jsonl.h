/* jsonl.h — the native trace format, JSON Lines (docs/formats.md). */
#ifndef ML_JSONL_H
#define ML_JSONL_H

#include "sim/formats/load-options.h"

/* Native JSON Lines (docs/formats.md). */
int ml_trace_load_jsonl  (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
int ml_trace_write_jsonl (const MlTrace *trace, const char *path, MlError *err) ML_MUST_CHECK;
/* The same, reporting its progress through @progress (may be NULL) every
 * 65,536 events ("writing events"); cancelled: ML_ECANCELLED, nothing
 * written. */
int ml_trace_write_jsonl_with (const MlTrace *trace, const char *path, const MlProgress *progress,
                               MlError *err) ML_MUST_CHECK;

#endif
