/* csv.h — MiniMalloc planning instances (docs/formats.md). */
#ifndef ML_CSV_H
#define ML_CSV_H

#include "sim/buffers.h"
#include "sim/formats/load-options.h"
#include "sim/plan.h"

/* MiniMalloc CSV: id,lower,upper,size[,offset][,alignment]. */
int ml_trace_load_csv    (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
/* The buffers of a CSV instance without its events, for a caller that
 * needs the buffers only (planning, checking a plan): the same buffers,
 * bounds and errors as ml_trace_load_csv then ml_buffers_build (@align,
 * 0 = the file's), in about a third of the memory (*@trace holds the
 * names and the header, no events; bufs->alloc_event is NULL). Errors in
 * the buffers are prefixed with @path. */
int ml_buffers_load_csv  (const char *path, const MlLoadOptions *opts, uint64_t align, MlTrace **trace, MlBuffers **bufs,
                          MlError *err);
/* Writes the buffers of @bufs; with @plan (may be NULL) adds the offset
 * column (offsets of a one-segment plan). Requested sizes are written. */
int ml_buffers_write_csv (const MlBuffers *bufs, const MlPlan *plan, const char *path, MlError *err);
/* The same, reporting its progress through @progress (may be NULL) every
 * 65,536 buffers ("writing buffers"); cancelled: ML_ECANCELLED, nothing
 * written. */
int ml_buffers_write_csv_with (const MlBuffers *bufs, const MlPlan *plan, const char *path,
                               const MlProgress *progress, MlError *err);
/* The capacity a file name implies: "A.1048576.csv" -> 1048576, else 0. */
uint64_t ml_capacity_from_name (const char *path);

#endif
