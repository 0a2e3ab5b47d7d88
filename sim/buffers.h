/* buffers.h — lifetimes: the buffers a trace allocates, in allocation order.
 *
 * ml_buffers_build() pairs each alloc with its free (by id, or by the
 * address of the live buffer when the trace has only addresses), rounds
 * sizes up to the alignment (size = ceil(bytes / align) * align) and gives
 * never-freed buffers the end of the trace. Lifetimes are half-open
 * [start, end) in ticks. Buffers keep the order of their allocations, which
 * is also sorted by start; by_end lists them by end (stable).
 */
#ifndef ML_BUFFERS_H
#define ML_BUFFERS_H

#include "sim/trace.h"

enum {
  ML_BUF_WEIGHT     = ML_EVF_WEIGHT,
  ML_BUF_ACTIVATION = ML_EVF_ACTIVATION,
  ML_BUF_INPUT      = ML_EVF_INPUT,
  ML_BUF_OUTPUT     = ML_EVF_OUTPUT,
  ML_BUF_PINNED     = ML_EVF_PINNED,
  ML_BUF_NEVER_FREED = 1 << 8,   /* lives to the end of the trace */
  ML_BUF_NAMED_ID    = 1 << 9,   /* the input named it by a string (name) */
  ML_BUF_HAS_ADDR    = 1 << 10,  /* addr is the recorded address          */
  /* graph-compiler constraints (sim/constraints.h); ML_BUF_PINNED is a
   * fixed buffer: addr is its offset in the arena for the whole run */
  ML_BUF_ZERO_COPY   = 1 << 11,  /* outside the arena, own alignment      */
  ML_BUF_NO_REUSE    = 1 << 12,  /* no other buffer shares its bytes      */
  ML_BUF_GROUPED     = 1 << 13,  /* member of a contiguous group          */
  ML_BUF_CLIPPED     = 1 << 14,  /* a window's edge cut its lifetime (ML_EVF_CLIPPED) */
  ML_BUF_PENDING     = 1 << 15,  /* its free was requested and never completed (PyTorch's
                                  * active_pending_free at the end) */
};

/* 64 bytes. */
typedef struct {
  uint64_t id;       /* the trace's id (or a running number)     */
  uint64_t size;     /* requested bytes                          */
  uint64_t rsize;    /* rounded to the alignment                 */
  uint64_t addr;     /* recorded address when ML_BUF_HAS_ADDR    */
  uint64_t start;    /* tick of the alloc                        */
  uint64_t end;      /* tick of the free, or the end of trace    */
  uint32_t name;     /* interned, in the trace's string table    */
  uint32_t stack;    /* the alloc's stack (trace stack table)    */
  uint32_t stream;
  uint32_t flags;
} MlBuffer;

typedef struct {
  MlBuffer       *buf;        /* n, by start (allocation order)            */
  uint32_t       *by_end;     /* n indexes, sorted by end, stable          */
  uint32_t       *alloc_event;/* n: index of each buffer's alloc event     */
  /* n: the tick its free was requested (PyTorch's free_requested: the
   * block waits for other streams' work until `end`), UINT64_MAX when
   * never; NULL when the trace requests none */
  uint64_t       *free_requested;
  size_t          n;
  uint64_t        align;
  uint64_t        end_tick;   /* one past the last tick                    */
  uint64_t        lower_bound;/* max over ticks of live rounded bytes      */
  uint64_t        lower_bound_tick;  /* first tick where it is reached     */
  const MlTrace  *trace;      /* borrowed: names, stacks, streams          */

  /* graph-compiler constraints (sim/constraints.h), from the trace */
  uint64_t        zero_copy_align; /* rsize of zero-copy buffers rounds to it */
  uint64_t        max_block;       /* 0 = none                                */
  uint32_t       *group_member;    /* buffer indexes, group after group       */
  size_t         *group_end;       /* n_groups: one past each group's last    */
  size_t          n_groups;
} MlBuffers;

/* The most bytes all buffers of a trace may add up to (after alignment):
 * 2^60 (1 EiB), so that offsets, arena sizes and sums in every strategy,
 * check and metric stay inside 64 bits. Larger inputs get ML_EINPUT. */
#define ML_BUFFERS_MAX_TOTAL ((uint64_t) 1 << 60)

/* Builds the lifetimes of @trace with alignment @align (0 = the trace's
 * default). Errors name the event where the file has it
 * (ml_trace_event_where: "line 17: free of unknown id 42",
 * "device_traces[0][16] (alloc at 0x7f0000000000): ..."). The result
 * borrows @trace, which must outlive it. */
int  ml_buffers_build (const MlTrace *trace, uint64_t align, MlBuffers **out, MlError *err);
void ml_buffers_free  (MlBuffers *bufs);

/* Buffer @i's id as its input wrote it: a CSV's own text id when the CSV
 * has ids that are not all numbers ("01" and "1" are then two buffers,
 * borrowed from the trace), else the id's decimal (written into @buf). */
const char *ml_buffer_id_text (const MlBuffers *bufs, size_t i, char *buf, size_t len);

/* A copy of @bufs with @extra added as one more buffer: after every buffer
 * that starts at or before it (so at its tick it is the last allocation),
 * its alloc event @alloc_event. Used to replay a trace with the request a
 * real allocator refused (diagnose). The copy borrows @bufs->trace; the
 * caller frees it with ml_buffers_free(). */
int  ml_buffers_with (const MlBuffers *bufs, const MlBuffer *extra, uint32_t alloc_event, MlBuffers **out,
                      MlError *err);

static inline uint64_t
ml_align_up (uint64_t bytes, uint64_t align)
{
  return align <= 1 ? bytes : (bytes + align - 1) / align * align;
}

/* Sorts by_end and computes the lower bound of @bufs, whose buf[] (sorted
 * by start) is filled in: for instances built by hand (sim/constraints.c). */
int  ml_buffers_index (MlBuffers *bufs, MlError *err);

/* The buffer-level event sequence every sweep walks: at one tick, frees
 * before allocations; allocations keep their input order. */
typedef struct {
  const MlBuffers *bufs;
  size_t next_start, next_end;
} MlSweep;

typedef struct {
  uint64_t tick;
  uint32_t buffer;
  bool     is_alloc;
} MlSweepStep;

void ml_sweep_init (MlSweep *sw, const MlBuffers *bufs);
/* Returns false at the end. */
bool ml_sweep_next (MlSweep *sw, MlSweepStep *step);

/* Peak points: ticks where live bytes reach the lower bound, then the
 * highest other local maxima, each with the live buffers largest first. */
typedef struct {
  uint64_t  tick;
  uint64_t  live;        /* rounded bytes live at the tick */
  uint32_t *blame;       /* buffer indexes, largest first  */
  size_t    n_blame;     /* entries in blame (capped)      */
  size_t    n_live;      /* all live buffers at the tick   */
} MlPeak;

typedef struct {
  MlPeak *peaks;
  size_t  n;
} MlPeaks;

/* Live rounded bytes after each tick at which a buffer starts or ends
 * (frees before allocations at one tick, as every sweep counts), in tick
 * order: *@out (the caller frees it) and *@n. */
typedef struct { uint64_t tick, live; } MlLiveStep;
int  ml_buffers_live_steps (const MlBuffers *bufs, MlLiveStep **out, size_t *n, MlError *err);

/* The buffers live at @tick, largest first, at most @max_blame (0 = all)
 * kept: fills @pk (tick, live, blame, n_blame, n_live; free pk->blame). */
int  ml_peak_blame (const MlBuffers *bufs, uint64_t tick, size_t max_blame, MlPeak *pk, MlError *err);

/* Finds up to @max_points peak points, each blaming at most @max_blame
 * buffers (0 = all). Caller frees with ml_peaks_free(). */
int  ml_peaks_find (const MlBuffers *bufs, size_t max_points, size_t max_blame, MlPeaks *out, MlError *err);
void ml_peaks_free (MlPeaks *peaks);

/* The number of distinct streams that allocate buffers; 0 on out of
 * memory with buffers present (callers treat it as unknown). */
size_t ml_buffers_count_streams (const MlBuffers *bufs);

/* Live rounded bytes at @tick (O(n)). */
uint64_t ml_buffers_live_at (const MlBuffers *bufs, uint64_t tick);

#endif
