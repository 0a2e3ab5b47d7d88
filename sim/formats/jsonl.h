/* jsonl.h — the native trace format, JSON Lines (docs/formats.md). */
#ifndef ML_JSONL_H
#define ML_JSONL_H

#include "sim/formats/load-options.h"

/* Native JSON Lines (docs/formats.md). */
int ml_trace_load_jsonl  (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
int ml_trace_write_jsonl (const MlTrace *trace, const char *path, MlError *err) ML_MUST_CHECK;

#endif
