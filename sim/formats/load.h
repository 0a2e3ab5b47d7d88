/* load.h — reading and writing traces in every format memlens knows.
 *
 * ml_trace_load() picks the reader by --format, else by extension, else by
 * sniffing the first bytes. Each reader streams where its format allows,
 * bounds what it allocates by what the file can justify, and names the
 * file, the line (or byte offset) and the value in its errors.
 */
#ifndef ML_LOAD_H
#define ML_LOAD_H

#include "sim/buffers.h"
#include "sim/formats/load-options.h"
#include "sim/plan.h"

/* A format: how to recognise, read and (maybe) write it. */
typedef struct {
  const char *name;          /* "jsonl", "csv", ...                    */
  const char *extensions;    /* space separated: "jsonl ndjson"        */
  const char *description;
  /* Returns true when the first bytes look like this format. */
  bool (*sniff) (const unsigned char *head, size_t len);
  int  (*load)  (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
  /* Writes @trace as this format; NULL when memlens only reads it. */
  int  (*save)  (const MlTrace *trace, const char *path, MlError *err);
} MlTraceFormat;

/* The readers, NULL-terminated. */
const MlTraceFormat *const *ml_trace_formats (void);

int ml_trace_load (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
/* For a caller that needs the buffers, not the events (planning,
 * checking a plan): a reader that can builds them itself (the planning
 * CSV: ml_buffers_load_csv, with @align, 0 = the file's) and sets *@bufs;
 * otherwise *@bufs is NULL and *@trace is what ml_trace_load reads (the
 * caller builds the buffers). @opts must not be NULL. */
int ml_trace_load_buffers (const char *path, const MlLoadOptions *opts, uint64_t align, MlTrace **trace,
                           MlBuffers **bufs, MlError *err);

/* Writes @trace to @path with the writer of the format its extension
 * names (the formats with a save slot: .jsonl, .csv; "-" = JSONL on
 * standard output). */
int ml_trace_save (const MlTrace *trace, const char *path, MlError *err);

#endif
