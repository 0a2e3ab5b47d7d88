/* trace.h — the event model: what happened, in order.
 *
 * A trace is an array of events plus the tables they point into (interned
 * strings, stack frames) and a header (format, device, source, counters).
 * Every event has a tick, non-decreasing along the array: the event's index
 * for recorded traces, the time coordinate for planning instances (which
 * may be sparse, up to millions). Times in nanoseconds are kept where known
 * (-1 otherwise).
 *
 * The core arrays keep 64 bytes per event (static-asserted in trace.c).
 * Fields whose meaning depends on the kind are listed at MlEvent.
 */
#ifndef ML_TRACE_H
#define ML_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/base/error.h"
#include "sim/base/strtab.h"

/* The alignment of a trace that names none (profiler traces, JSONL and
 * graphs without an "alignment"). */
#define ML_TRACE_ALIGN 256

typedef enum {
  ML_EV_ALLOC = 0,      /* a buffer comes to life                         */
  ML_EV_FREE,           /* it ends (PyTorch: free_completed)              */
  ML_EV_FREE_REQUESTED, /* PyTorch: the free was requested, pending work  */
  ML_EV_SEGMENT_ALLOC,  /* the allocator reserved device memory           */
  ML_EV_SEGMENT_FREE,   /* and gave it back                               */
  ML_EV_SEGMENT_MAP,    /* expandable segments: pages mapped              */
  ML_EV_SEGMENT_UNMAP,  /* and unmapped                                   */
  ML_EV_KERNEL,         /* a kernel ran on a stream                       */
  ML_EV_SYNC,           /* a synchronisation (see MlSyncKind)             */
  ML_EV_OOM,            /* the real allocator failed                      */
  ML_EV_MARK,           /* a user annotation, "optimizer.step"            */
  ML_EV_SNAPSHOT,       /* PyTorch: a snapshot was taken here             */
  ML_EV__COUNT
} MlEventKind;

typedef enum {
  ML_SYNC_NONE = 0,
  ML_SYNC_DEVICE,       /* cudaDeviceSynchronize: everything before, before everything after */
  ML_SYNC_STREAM,       /* host waits for @stream                          */
  ML_SYNC_EVENT,        /* host waits for event @id                        */
  ML_SYNC_EVENT_RECORD, /* event @id recorded on @stream                   */
  ML_SYNC_STREAM_WAIT,  /* @stream waits for event @id recorded on @stream2 */
  ML_SYNC_CONTEXT,      /* context synchronisation, like device            */
  ML_SYNC__COUNT
} MlSyncKind;

/* Event flags. */
enum {
  ML_EVF_HAS_ID   = 1 << 0,  /* @id is meaningful                       */
  ML_EVF_HAS_ADDR = 1 << 1,  /* @addr is meaningful                     */
  ML_EVF_WEIGHT   = 1 << 2,  /* buffer kinds (alloc): weight            */
  ML_EVF_ACTIVATION = 1 << 3,
  ML_EVF_INPUT    = 1 << 4,
  ML_EVF_OUTPUT   = 1 << 5,
  ML_EVF_PINNED   = 1 << 6,  /* alloc: @addr is a fixed offset to keep   */
  ML_EVF_ASYNC    = 1 << 7,  /* stream-ordered (cudaMallocAsync)         */
  /* graph-compiler constraints (docs/formats.md, "Constraints"); a
   * pinned alloc is a fixed one: @addr is its offset for the whole run */
  ML_EVF_ZERO_COPY = 1 << 8, /* user memory outside the arena            */
  ML_EVF_NO_REUSE = 1 << 9,  /* no other buffer shares its bytes, ever   */
  /* a window of the trace (--range): an alloc at the window's first tick
   * of a buffer allocated before it, a free just after its last tick of
   * a buffer freed after it */
  ML_EVF_CLIPPED  = 1 << 10,
};
#define ML_EVF_KIND_MASK (ML_EVF_WEIGHT | ML_EVF_ACTIVATION | ML_EVF_INPUT | ML_EVF_OUTPUT)

/* One event, 64 bytes.
 *   alloc/free/free_requested: id, addr, size (requested bytes), stream, pool
 *   segment_*:                 id (segment), addr, size, stream, pool
 *   kernel:                    name, stream, time_ns = start, size = end ns
 *   sync:                      sync_kind, stream, stream2, id (cuda event)
 *   oom:                       size (request), addr = device free bytes, stream
 *   mark:                      name (the text)
 * stack: index into the trace's stack table (0 = none); name: interned. */
typedef struct {
  uint64_t tick;
  uint64_t id;
  uint64_t addr;
  uint64_t size;
  int64_t  time_ns;
  uint32_t name;
  uint32_t stack;
  uint32_t stream;     /* the trace's stream_ids[stream] when it has them */
  union {
    uint32_t stream2;  /* sync: the other stream */
    uint32_t pool;     /* alloc, free, segment events: the trace's pools[pool], 0 = default */
  };
  uint8_t  kind;       /* MlEventKind */
  uint8_t  sync_kind;  /* MlSyncKind  */
  uint16_t flags;
  uint32_t device;
} MlEvent;

/* A de-duplicated stack: its frames are the frame table's entries
 * frame_table[stack_frames[first + k]] for k in [0, n) (ml_trace_stack_frame),
 * innermost first, and the call site (interned string: the first frame
 * outside the framework, "file:line:function"). */
typedef struct {
  uint32_t site;
  uint32_t first;
  uint32_t n;
  uint32_t kind;   /* MlStackKind: what the call site says besides a frame */
} MlStack;

/* What a stack's call site is (sim/sites.h recomputes sites by rule). */
typedef enum {
  ML_STACK_PLAIN = 0,            /* the chosen frame                                  */
  ML_STACK_FREED_BEFORE_TRACE,   /* "allocated before the trace, freed at FRAME"       */
  ML_STACK_FREED_BEFORE_WINDOW,  /* "allocated before the window, freed at FRAME"      */
  ML_STACK_BEFORE_RECORDING,     /* no frames: its site is the reader's text ("allocated before recording") */
} MlStackKind;

typedef struct {
  uint32_t file;   /* interned */
  uint32_t func;   /* interned */
  uint32_t line;
} MlFrame;

/* A PyTorch memory pool's id (MempoolId_t, c10/cuda/MemPool.cpp): (0,
 * 0) the default pools; (N, 0) a CUDA graph's own private pool (from its
 * capture); (0, N) a torch.cuda.MemPool or graph_pool_handle(). */
typedef struct {
  int64_t first, second;
} MlPoolId;

/* What an allocation entry says besides its stack (PyTorch snapshots):
 * the torch.compile region it ran in and the user's metadata (interned,
 * 0 = none). */
typedef struct {
  uint32_t compile_context;
  uint32_t user_metadata;
} MlEventMeta;

/* An op that writes its output into the bytes of one of its inputs (a
 * graph's in-place pair, e.g. relu_). Graph importers record one per
 * in-place op with ml_trace_add_inplace(); ml_check_races() reports a
 * hazard when the input's old value is still read after the write
 * (last_read > op_tick). Buffers are named by their trace ids; when the
 * importer models the output as the same buffer as the input, both ids
 * are equal. */
typedef struct {
  uint64_t op_tick;    /* tick of the op that writes in place          */
  uint64_t output_id;  /* the op's output buffer (trace id)            */
  uint64_t input_id;   /* the input whose bytes it overwrites          */
  uint64_t last_read;  /* tick of the last op reading the input's value */
  uint32_t op_name;    /* interned op name, 0 = none                   */
} MlInplaceWrite;

/* The largest device number memlens reads: the readers (a snapshot's
 * segments and device traces, Kineto's Device Id) and every --device /
 * --gpu option share it. */
#define ML_DEVICE_MAX 4095

/* One device of an input that records several (a PyTorch snapshot): what
 * the file says about it, whichever device was read. Reserved bytes are
 * the sum of the device's segments at dump time (reserved_end), undone
 * along its trace (segment_alloc / segment_map add, segment_free /
 * segment_unmap take away) for reserved_start, and the running maximum
 * from there (reserved_max). A Kineto trace records "Total Reserved"
 * with every memory event: reserved_start / end / max are its first, last
 * and largest value, entries its memory events. */
typedef struct {
  uint32_t device;
  uint64_t entries;         /* trace entries                          */
  uint64_t segments;        /* segments at dump time                  */
  uint64_t segment_bytes;   /* their total_size                       */
  uint64_t reserved_start, reserved_end, reserved_max;
  uint64_t actions[ML_EV__COUNT]; /* trace entries by the kind they map to */
  uint64_t ooms;            /* `oom` entries (listed in device_ooms)  */
  uint64_t allocated_bytes; /* snapshots: the bytes of the trace's alloc entries */
  uint64_t allocated_max;   /* Kineto: the largest "Total Allocated" (0 = not recorded) */
} MlDeviceInfo;

/* An `oom` entry of any device: its index in that device's trace, the
 * request, the device's free bytes, and the bytes reserved just before
 * it (reserved_start plus the segment entries before it). */
typedef struct {
  uint32_t device;
  uint64_t index, request, device_free, reserved;
} MlDeviceOom;

/* MlTrace.device of a snapshot's pinned host memory (--device host). */
#define ML_TRACE_HOST UINT32_MAX

typedef struct MlTrace {
  MlEvent  *events;
  size_t    n_events, cap_events;
  MlStrtab *strings;
  MlStack  *stacks;          /* stacks[0] is the empty stack */
  size_t    n_stacks, cap_stacks;
  /* the frame table: each distinct (file, func, line) once (a 12-byte
   * frame is named by a 4-byte index in every stack that holds it) */
  MlFrame  *frame_table;
  size_t    n_frame_table, cap_frame_table;
  uint32_t *frame_slots;     /* frames by content: open addressing, index + 1, 0 = empty */
  size_t    n_frame_slots;
  uint32_t *stack_frames;    /* the stacks' frames, as indices into frame_table */
  size_t    n_stack_frames, cap_stack_frames;

  /* header */
  uint32_t  source;          /* interned: "jsonl", "csv", "pytorch-snapshot", "cupti", ... */
  uint32_t  device;
  uint64_t  default_align;   /* the format's natural alignment: 1 for CSV, 256 otherwise */
  uint64_t  capacity;        /* a capacity the input implies (CSV file name), 0 = none */
  uint64_t  dropped_records; /* tracer: CUPTI records lost */
  uint64_t  device_total;    /* bytes of device memory, when known */
  bool      has_times;       /* some events carry time_ns */
  bool      has_addrs;       /* allocations carry real addresses */
  bool      records_meta;    /* the format has per-allocation compile_context /
                                user_metadata fields (a PyTorch snapshot,
                                memlens JSONL), set or not */
  bool      has_rank;        /* the file names its rank (Kineto's distributedInfo.rank) */
  uint32_t  rank;

  MlInplaceWrite *inplace;   /* graph inputs: in-place writes, in op order */
  size_t    n_inplace, cap_inplace;

  /* inputs with several devices: every device the file holds (owned),
   * and why @device was read (interned, 0 = chosen by the caller) */
  MlDeviceInfo *devices;
  size_t    n_devices;
  /* The reserved bytes the input recorded itself, as steps: from tick
   * reserved_steps[k].tick on, reserved_steps[k].bytes (Kineto's "Total
   * Reserved" with each memory event). The recorded plan's reserved curve
   * follows them when the trace has no segment events (owned). */
  struct { uint64_t tick, bytes; } *reserved_steps;
  size_t    n_reserved_steps;
  MlDeviceOom *device_ooms;  /* by device, then index (owned) */
  size_t    n_device_ooms;
  uint32_t  device_reason;
  /* a window of the input (MlLoadOptions.range): its first and last tick
   * in the file's numbering (the carried-in state sits at window_first) */
  bool      windowed;
  uint64_t  window_first, window_last;
  /* graph-compiler constraints (docs/formats.md); 0 / none by default */
  uint64_t  zero_copy_align; /* alignment of zero-copy buffers, 0 = default_align */
  uint64_t  max_block;       /* arena blocks of at most this many bytes, 0 = one arena */
  uint64_t *group_ids;       /* contiguous groups: buffer ids, group after group */
  size_t    n_group_ids, cap_group_ids;
  size_t   *group_end;       /* n_groups: one past each group's last id */
  size_t    n_groups, cap_groups;
  /* where each event came from, for messages: events[i] came from
   * event_origin[i] (0 = not known), a line of the file unless the reader
   * set origin_text to say what its numbers mean (a PyTorch snapshot's
   * "device_traces[0][17] (alloc at 0x...)", a Kineto trace's
   * "traceEvents[12]"); NULL when the reader records none (then messages
   * say "event i", 0-based) */
  uint64_t *event_origin;
  size_t    cap_origins;
  const char *(*origin_text) (const struct MlTrace *trace, size_t i, uint64_t origin, char *buf, size_t len);
  /* warnings about the input that did not stop the read (interned
   * texts: "segment 2 [...] overlaps segment 5 [...]"); the CLI prints them */
  uint32_t *notes;
  size_t    n_notes, cap_notes;
  /* streams wider than 32 bits (a PyTorch snapshot's cudaStream_t values,
   * pointers): the reader gives each value a dense index, which events
   * carry, and stream_ids[index] is the value (ml_trace_stream_id);
   * none: event streams are the values themselves */
  uint64_t *stream_ids;
  size_t    n_stream_ids, cap_stream_ids;
  /* memory pools (ml_trace_add_pool): pools[0] is the default (0, 0)
   * once there are any; none: every event is in the default pool */
  MlPoolId *pools;
  size_t    n_pools, cap_pools;
  /* per event, what an allocation entry adds (ml_trace_set_meta):
   * event_meta[i] for events[i]; NULL when the input records none */
  MlEventMeta *event_meta;
  size_t    cap_meta;
  /* a PyTorch snapshot's own account of its trace */
  char     *alloc_conf;      /* the allocator settings, PyTorch's syntax (sim/alloc-conf.h; owned, NULL = none) */
  uint64_t  ring_entries;    /* trace_alloc_max_entries, 0 = not recorded */
  int8_t    ring_wrapped;    /* trace_alloc_overflowed: 1 yes, 0 no, -1 not recorded */
  uint32_t  skipped_actions; /* bit k: entries of MlEventKind k were not recorded (skip_actions) */
} MlTrace;

MlTrace *ml_trace_new  (void);
void     ml_trace_free (MlTrace *trace);

/* Appends a copy of @ev; returns a pointer to the stored event (valid until
 * the next append) or NULL when out of memory. */
MlEvent *ml_trace_append (MlTrace *trace, const MlEvent *ev);
/* Room for @n events in all without growing (a reader that knows its
 * count: no copies, no doubling past it); 0 or ML_ENOMEM. */
int      ml_trace_reserve (MlTrace *trace, size_t n);

/* Records where the last appended event came from: a line of the file
 * (line readers: JSONL, CSV), or the reader's own number that its
 * origin_text reads; 0 or ML_ENOMEM. */
int      ml_trace_set_origin (MlTrace *trace, uint64_t origin);
/* Records what the last appended event's allocation entry adds
 * (compile context, user metadata); 0 or ML_ENOMEM. */
int      ml_trace_set_meta (MlTrace *trace, MlEventMeta meta);
/* Event @i's meta, zeroes when none. */
MlEventMeta ml_trace_event_meta (const MlTrace *trace, size_t i);

/* Streams: appends @value to the stream table (the caller keeps it
 * distinct) and returns its index, UINT32_MAX when out of memory. */
uint32_t ml_trace_add_stream (MlTrace *trace, uint64_t value);
/* The real value of event stream @stream. */
uint64_t ml_trace_stream_id (const MlTrace *trace, uint32_t stream);
/* Stream @stream as shown: "0", "7", or "0x5a1200000e10" for a value
 * past 16 bits (a pointer); @buf holds ML_STREAM_LABEL_MAX bytes. */
#define ML_STREAM_LABEL_MAX 24
const char *ml_trace_stream_label (const MlTrace *trace, uint32_t stream, char *buf);

/* Pools: the index of pool (@first, @second), added when new (the first
 * pool added is preceded by the default (0, 0) at index 0); UINT32_MAX
 * when out of memory. */
uint32_t ml_trace_add_pool (MlTrace *trace, int64_t first, int64_t second);
/* Pool @pool's id, (0, 0) for 0 or one past the table. */
MlPoolId ml_trace_pool_id (const MlTrace *trace, uint32_t pool);
/* "(1, 0)"; @buf holds ML_POOL_LABEL_MAX bytes. */
#define ML_POOL_LABEL_MAX 48
const char *ml_trace_pool_label (const MlTrace *trace, uint32_t pool, char *buf);

/* Adds a warning about the input (copied); 0 or ML_ENOMEM. */
int      ml_trace_add_note (MlTrace *trace, const char *text);
/* Where event @i came from, for a message: "line 12" when the reader
 * recorded it, what its origin_text says of the origin, else "event 5";
 * written into @buf (ML_TRACE_WHERE_MAX bytes hold any), which is
 * returned. */
#define ML_TRACE_WHERE_MAX 192
const char *ml_trace_event_where (const MlTrace *trace, size_t i, char *buf, size_t len);

/* Appends a copy of @w; 0 or ML_ENOMEM. */
int      ml_trace_add_inplace (MlTrace *trace, const MlInplaceWrite *w);

/* Adds a contiguous group: buffers @ids[0..n) back to back, in order, in
 * one block; 0 or ML_ENOMEM. */
int      ml_trace_add_group (MlTrace *trace, const uint64_t *ids, size_t n);

/* Interns a stack of @n frames with call site @site (each frame interned
 * into the frame table as by ml_trace_add_frame); returns its index
 * (> 0), 0 for an empty stack, UINT32_MAX when out of memory. */
uint32_t ml_trace_add_stack (MlTrace *trace, uint32_t site, const MlFrame *frames, size_t n);

/* The same with frames named by their indices in the frame table (each
 * < n_frame_table); the stack is not compared with the others (the caller
 * de-duplicates). */
uint32_t ml_trace_add_stack_ix (MlTrace *trace, uint32_t site, const uint32_t *frames, size_t n);

/* Interns frame @f into the frame table: its index (an equal frame's, if
 * the table has one), UINT32_MAX when out of memory. */
uint32_t ml_trace_add_frame (MlTrace *trace, MlFrame f);

/* Frame @k (< st->n) of stack @st, innermost first: a borrowed pointer,
 * valid until the next frame is added. */
static inline const MlFrame *
ml_trace_stack_frame (const MlTrace *trace, const MlStack *st, uint32_t k)
{
  return &trace->frame_table[trace->stack_frames[st->first + k]];
}

static inline const char *
ml_trace_str (const MlTrace *trace, uint32_t idx)
{
  return ml_strtab_get (trace->strings, idx);
}

/* The allocator settings a PyTorch snapshot recorded (its tick-0 mark
 * "allocator settings: max_split_size_mb=...,expandable_segments=...,
 * roundup_power2_divisions=..."): the text after the prefix, or NULL. */
const char *ml_trace_allocator_settings (const MlTrace *trace);

/* Whether @di holds no memory: no allocation in its trace, no segment at
 * the dump, no OOM. */
bool        ml_device_info_empty (const MlDeviceInfo *di);
/* "device 0 (1 trace entry, 0 B reserved at the end, 0 B allocated over
 * the trace), ..." for every device of @trace but @skip (UINT32_MAX:
 * none), into @buf; returns @buf. */
const char *ml_trace_list_devices (const MlTrace *trace, uint32_t skip, char *buf, size_t len);

/* True when @file names a frame inside the framework (torch, its
 * generated code, triton, the Python / C / C++ runtime: "??", "<frozen
 * ...>", .c / .cpp / .h files), i.e. not a call site. */
bool ml_frame_is_framework (const char *file, const char *func);

/* One past the last tick: the end of every never-freed buffer. */
uint64_t ml_trace_end_tick (const MlTrace *trace);

/* The real time of @tick in ns since the trace's first timed event: the
 * time of the last event at or before it that carries one (else of the
 * first after it); -1 when the trace has no times. O(log events). The one
 * place a tick becomes a time (peaks, the viewer, the reports). */
int64_t  ml_trace_tick_time (const MlTrace *trace, uint64_t tick);

const char *ml_event_kind_name  (MlEventKind kind);
int         ml_event_kind_parse (const char *name, MlEventKind *kind);
const char *ml_sync_kind_name   (MlSyncKind kind);
int         ml_sync_kind_parse  (const char *name, MlSyncKind *kind);

#endif
