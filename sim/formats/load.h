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
#include "sim/base/progress.h"
#include "sim/plan.h"

/* --range T0:T1: only a window of the trace. Ticks (plain integers) are
 * the file's own tick numbers (a snapshot: tick N is trace entry N - 1);
 * times ("1.5s", "200ms", "30us", "5ns") count from the trace's first
 * recorded time. Both ends are inclusive; an empty end is open. */
typedef struct {
  bool     set;
  bool     times;   /* from / to are nanoseconds; else ticks */
  uint64_t from;    /* 0 = from the start */
  uint64_t to;      /* UINT64_MAX = to the end */
} MlRange;

/* Parses "T0:T1", ":T1", "T0:" (both ends ticks or both times); 0 or
 * ML_EUSAGE with the value named. */
int ml_range_parse (const char *text, MlRange *out, MlError *err);

typedef struct {
  int         device;   /* snapshots: which device; -1 = the longest trace */
  const char *format;   /* NULL = guess; else a reader's name            */
  const char *graph_options; /* graph reader: "reorder=memory,exclude=weights" */
  const char *dims;          /* graph reader: symbolic dimensions, "B=8,S=128" */
  /* Long reads report the share of the file read and poll cancellation
   * (may be NULL). */
  const MlProgress *progress;
  /* a window of the trace (PyTorch snapshots; set = false: all of it) */
  MlRange     range;
} MlLoadOptions;

void ml_load_options_init (MlLoadOptions *opts);

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

/* For readers: reports progress from @r and polls cancellation; returns
 * ML_ECANCELLED when the caller cancelled. */
int ml_load_progress (const MlLoadOptions *opts, const void *line_reader, MlError *err);

/* The readers, NULL-terminated. */
const MlTraceFormat *const *ml_trace_formats (void);

int ml_trace_load (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);

/* Writes @trace to @path with the writer of the format its extension
 * names (the formats with a save slot: .jsonl, .csv; "-" = JSONL on
 * standard output). */
int ml_trace_save (const MlTrace *trace, const char *path, MlError *err);

/* The capacity a file name implies: "A.1048576.csv" -> 1048576, else 0. */
uint64_t ml_capacity_from_name (const char *path);

#endif
