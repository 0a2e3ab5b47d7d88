/* load-options.h — what a reader is asked for: the options of a load
 * (MlLoadOptions: the device, the format, graph options and dimensions,
 * a window of the trace, progress), and the progress call readers make.
 * The readers include this, not load.h: load.h is the format table
 * above them, and includes them. */
#ifndef ML_LOAD_OPTIONS_H
#define ML_LOAD_OPTIONS_H

#include "sim/base/progress.h"
#include "sim/sites.h"
#include "sim/trace.h"

/* --range T0:T1: only a window of the trace. Ticks (plain integers) are
 * the file's own tick numbers (a snapshot: tick N is trace entry N - 1);
 * times ("1.5s", "200ms", "30us", "5ns") count from the trace's first
 * recorded time. Both ends are inclusive; an empty end is open. */
typedef struct {
  bool     set;
  bool     times;   /* from / to are nanoseconds; else ticks */
  uint64_t from;    /* 0 = from the start */
  uint64_t to;      /* UINT64_MAX = to the end */
  /* --range NAME[#K]: a PyTorch snapshot's external_annotations stage
   * NAME (its K-th START to the END that closes it; K = 1 by default).
   * The reader finds it and sets from / to as times since the epoch
   * (epoch), the file's own time_us in nanoseconds. */
  const char *stage;   /* borrowed; NULL: none */
  size_t   stage_len;  /* of the name, without "#K" */
  uint64_t stage_nth;  /* K */
  bool     epoch;
} MlRange;

/* Parses "T0:T1", ":T1", "T0:" (both ends ticks or both times), else a
 * stage name: text that does not start with a digit, '.' or ':' (a
 * malformed T0:T1 is an error); 0 or ML_EUSAGE with the value named.
 * @out borrows @text for a stage. */
int ml_range_parse (const char *text, MlRange *out, MlError *err);

/* MlLoadOptions.device: a PyTorch snapshot's pinned host memory
 * (host_segments, host_traces) instead of a device's. */
#define ML_DEVICE_HOST (-2)

/* --device N|host, as every command and the viewer take it: a device
 * number 0 .. ML_DEVICE_MAX, or "host" (ML_DEVICE_HOST); 0 or ML_EUSAGE
 * with a message naming the value. */
int ml_device_parse (const char *text, int *out, MlError *err);

typedef struct {
  int         device;   /* snapshots: which device; -1 = the reader's choice (an OOM's, else the most memory);
                         * ML_DEVICE_HOST the pinned host memory */
  const char *format;   /* NULL = guess; else a reader's name            */
  const char *graph_options; /* graph reader: "reorder=memory,exclude=weights" */
  const char *dims;          /* graph reader: symbolic dimensions, "B=8,S=128" */
  /* Long reads report the share of the file read and poll cancellation
   * (may be NULL). */
  const MlProgress *progress;
  /* a window of the trace (PyTorch snapshots; set = false: all of it) */
  MlRange     range;
  /* which frame of a stack is its call site (sim/sites.h; zeroes: user) */
  MlFrames    frames;
} MlLoadOptions;

void ml_load_options_init (MlLoadOptions *opts);

/* For readers: reports progress from @r and polls cancellation; returns
 * ML_ECANCELLED when the caller cancelled. */
int ml_load_progress (const MlLoadOptions *opts, const void *line_reader, MlError *err);

#endif
