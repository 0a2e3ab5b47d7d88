/* csv.h — MiniMalloc planning instances (docs/formats.md). */
#ifndef ML_CSV_H
#define ML_CSV_H

#include "sim/formats/load.h"

/* MiniMalloc CSV: id,lower,upper,size[,offset][,alignment]. */
int ml_trace_load_csv    (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
/* Writes the buffers of @bufs; with @plan (may be NULL) adds the offset
 * column (offsets of a one-segment plan). Requested sizes are written. */
int ml_buffers_write_csv (const MlBuffers *bufs, const MlPlan *plan, const char *path, MlError *err);

#endif
