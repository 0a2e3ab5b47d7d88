/* snapshot-private.h — what the files of the snapshot reader share (not public).
 *
 * load() in snapshot.c runs the steps in order, each in its own file:
 *
 *   snapshot-entries.c   step 0: each device trace entry as the pickle
 *                        streams it: counted for the device table, placed
 *                        against the --range window, kept as an MlSnapEnt
 *   snapshot-document.c  steps 1, 2, 5: the device table and the device
 *                        to read; the segments and live blocks at dump
 *                        time; the external annotations
 *   snapshot-state.c     steps 3, 4: the state at the trace's first entry,
 *                        rebuilt by undoing the trace backwards from the
 *                        dump-time state, and emitted as tick 0
 *   snapshot-replay.c    step 6: the trace forward, one tick per entry
 *
 * beside snapshot-fields.c (the keys and values of the pickle's dicts and
 * the errors that name them; where an event came from) and
 * snapshot-stacks.c (frames and stacks, each interned once).
 *
 * A new field of a trace entry goes into MlSnapEnt and read_entry
 * (snapshot-entries.c); one of a segment or block into
 * _ml_snap_read_segments (snapshot-document.c); a key looked up in every
 * entry or frame into the K_ list below and key_of's names.
 */
#ifndef ML_SNAPSHOT_PRIVATE_H
#define ML_SNAPSHOT_PRIVATE_H

#include "sim/formats/snapshot.h"
#include "sim/formats/pickle.h"
#include "sim/base/u64map.h"

/* ---- what the pickle holds, for one device ---- */

typedef struct {
  uint64_t addr, size;
  uint64_t origin;        /* where the file has it (ORG_*), 0 = not known */
  uint32_t stream;        /* dense index (MlTrace.stream_ids) */
  uint32_t pool;          /* MlTrace.pools index */
  MlPkValue *frames;      /* a dump-time segment's stack at cudaMalloc */
  bool     small, expandable, gone;
} MlSnapSeg;

typedef struct {
  uint64_t addr, req;
  uint64_t origin;        /* where the file has it (ORG_*) */
  uint32_t stream;
  uint32_t stack;         /* from a trace entry (frames NULL) */
  MlPkValue *frames;      /* from a dump-time block */
  uint32_t pool;
  bool     gone;
  bool     freed_frames;  /* frames are the free's: allocated before the trace */
  bool     pending;       /* active_pending_free at dump time, its free_requested not in the trace */
} MlSnapBlk;

/* A trace entry as the steps read it: what the pickle's dict says, kept
 * while the pickle streams (the entry dict itself is gone by then). */
enum { ENT_OK, ENT_NOT_DICT, ENT_BAD_ACTION, ENT_BAD_FIELD, ENT_BAD_POOL };
typedef struct {
  uint64_t addr, size;    /* oom: addr = device_free */
  int64_t  time_us;       /* -1: none (or past what ns can hold) */
  uint32_t stack, stream; /* stream: dense index (MlTrace.stream_ids) */
  uint32_t pool;          /* the entry's pool_id (MlTrace.pools), else the pool of the segment holding addr */
  MlEventMeta meta;       /* compile_context, user_metadata */
  uint32_t name;          /* mark: its text; ENT_NOT_DICT: the pickle kind; ENT_BAD_ACTION: the action;
                           * ENT_BAD_FIELD: the value, described */
  uint8_t  kind;          /* MlEventKind; ENT_BAD_FIELD: which field (_ml_snap_entry_fields) */
  uint8_t  bad;           /* ENT_* */
  bool     has_pool;      /* the entry says its pool_id */
} MlSnapEnt;

/* An address's first entries after the window (--range), as undoing
 * them backwards from the dump-time state needs them: the first is an
 * alloc (P_ALLOC: not live at the window's end); frees (P_FREES: live,
 * with the last free's size and stack); frees, then an alloc (P_FROZEN:
 * live with the last free's, and no dump-time block there is). */
enum { P_ALLOC = 1, P_FREES, P_FROZEN };
typedef struct {
  uint64_t addr, size;
  uint64_t origin;        /* the last free's entry (ORG_ENTRY) */
  uint32_t stream, stack, pool;
  uint8_t  state;
} MlSnapPost;

typedef struct {
  uint64_t index, request, device_free;
  int64_t  prefix;        /* segment bytes the trace added before it */
} MlSnapOom;

/* Where the entries of a device trace fall against the window. */
enum { W_BEFORE, W_IN, W_AFTER };

typedef struct {
  MlSnapEnt *e;           /* the entries kept: all of them, or the window's */
  size_t  n, cap;
  /* every entry, counted as it streams (the device table) */
  uint64_t n_all;
  uint64_t actions[ML_EV__COUNT];
  int64_t  net, max_net;  /* segment bytes added so far, and at most */
  uint64_t alloc_bytes;   /* the bytes of its alloc entries (saturating) */
  MlSnapOom *ooms;
  size_t   n_ooms, cap_ooms;
  /* the window (MlLoadOptions.range) */
  uint8_t  where;
  uint64_t first;         /* index of the window's first entry */
  int64_t  origin_us;     /* the first time_us of the trace, -1 = none yet */
  int64_t  last_us;       /* the latest time_us so far, -1 = none */
  int64_t  start_us;      /* the latest time_us before the window */
  MlSnapEnt *post;        /* segment entries after the window */
  size_t   n_post, cap_post;
  MlSnapPost *pb;         /* addresses allocated or freed after it */
  size_t   n_pb, cap_pb;
  MlU64Map pb_by_addr;
  bool     has_bad;       /* the first bad entry outside the window */
  uint64_t bad_index;
  MlSnapEnt bad;
  /* time running backwards: entries whose time_us is before the latest
   * one so far (max_us, of entry max_index); the first such, and the
   * entry whose time it is before */
  uint64_t n_timed, max_index, n_back, back_index, back_prev_index;
  int64_t  max_us, back_us, back_prev_us;
  uint8_t  back_kind;     /* the first such entry's action (MlEventKind) */
} MlSnapDevTrace;

/* What the reader knows of a frame of the trace's frame table (finfo[i]
 * of frame i): a frame dict's tag names its index. */
typedef struct {
  uint32_t site;          /* "file:line:func", interned on first use; 0 = not yet */
  /* a frame of compiled code with its FX node (fx_node_* and the model
   * code it came from, fx_original_trace): that code's location (a frame
   * index), its function named with the node; stacks carry it just
   * before this frame */
  uint32_t fx;
  bool     known;         /* read from a frame dict (else the fields are unset) */
  bool     framework;
  bool     has_fx;
} MlSnapFrameInfo;

typedef struct {
  const char *path;
  MlError    *err;
  MlTrace    *t;
  MlPkDoc    *doc;        /* the pickle's document: until the start state is emitted */
  MlU64Map    freed;      /* frames list pointer -> stack, for stacks seen only at a free */
  MlU64Map    by_content; /* hash of (site, frames) -> stack index */
  MlSnapFrameInfo *finfo; /* by frame index (MlTrace.frame_table) */
  size_t      n_finfo, cap_finfo;
  uint32_t   *scratch;    /* frames (indices) of the stack being interned */
  size_t      cap_scratch;
  /* stacks by the frame dicts' identities: a frames list whose items are
   * the same document objects as one read before is that stack, known
   * without reading its frames (bounded: PTR_CACHE_MAX pointers) */
  MlU64Map    by_ptrs;    /* hash of the item pointers -> pents index */
  struct PtrEnt { uint32_t stack, n; size_t off; } *pents;
  size_t      n_pents, cap_pents;
  MlPkValue **ptrs;
  size_t      n_ptrs, cap_ptrs;
  MlSnapSeg  *segs;
  size_t      n_segs, cap_segs;
  MlSnapBlk  *blks;
  size_t      n_blks, cap_blks;
  MlU64Map    live;       /* addr -> index in blks; after the rebuild: addr -> buffer id */
  int64_t     dev;        /* the device read */
  /* the forward walk */
  uint64_t    tick, seg_id, next_id;
  uint32_t    small_name, large_name;
  struct MlSnapAnn *anns; /* external annotations of the device, by time */
  size_t      n_anns, next_ann;
  /* the device traces, one entry at a time from the pickle */
  MlSnapDevTrace *dt;
  size_t      n_dt;
  MlRange     range;      /* set: only a window of the trace */
  MlU64Map    streams;    /* stream value -> dense index (MlTrace.stream_ids) */
  /* the dump-time segments of the device read, by address, with their
   * pools: an entry without pool_id (files before it) is in the pool of
   * the segment that holds its address, as memory_viz's find_pool_id */
  struct MlSnapSpan { uint64_t addr, size; uint32_t pool; } *spans;
  size_t      n_spans, cap_spans;
  uint32_t    before_stack;   /* the stack "allocated before recording", 0 until needed */
  bool        entry_failed;  /* the error came from _ml_snap_on_entry (it names the file) */
  bool        host;          /* --device host: host_segments, host_traces */
  /* entries the walk reads past, with a warning: a free of a block that
   * is already free, an alloc over a live block (entries missing inside
   * the trace); how many, and the first of each */
  size_t      n_refree, n_realloc;
  uint64_t    refree_at, realloc_at;  /* ORG_ENTRY */
  uint64_t    refree_addr, realloc_addr;
} MlSnapCtx;

/* Tags (MlPkValue.tag) this reader sets: the role in the top two bits so
 * a value met in another role is never mistaken, an index below. */
#define TAG_FRAME (1u << 30)   /* a frame dict; on a string (TAG_TEXT): its interned text */
#define TAG_TEXT  TAG_FRAME
#define TAG_STACK (2u << 30)
#define TAG_KEY   (3u << 30)
#define TAG_ROLE  (3u << 30)
#define TAG_MAX   ((1u << 30) - 2)

/* The keys the reader looks up in frames and trace entries. */
enum { K_OTHER, K_FILENAME, K_NAME, K_LINE, K_ACTION, K_ADDR, K_SIZE, K_STREAM, K_TIME_US, K_FRAMES,
       K_DEVICE_FREE, K_USER_METADATA, K_STATE, K_ADDRESS, K_REQUESTED_SIZE, K_HISTORY, K_REAL_SIZE,
       K_POOL_ID, K_COMPILE_CONTEXT, K_FORWARD_FRAMES, K_FX_NODE_OP, K_FX_NODE_NAME, K_FX_NODE_TARGET,
       K_FX_ORIGINAL_TRACE, K__COUNT };

/* The largest value the reader takes for an address, a size, a stream:
 * 2^63-1 (an address plus a size then never wraps around 2^64); for a
 * time in microseconds, what nanoseconds in an int64 hold. */
#define UINT_MAX_FIELD ((uint64_t) INT64_MAX)
#define TIME_US_MAX    ((uint64_t) INT64_MAX / 1000)

/* Where a field is, for messages: "segment 3", "segment 3 block 7"
 * (formatted only when there is something to tell). */
typedef struct {
  const char *what;   /* "segment", "external annotation" */
  size_t      k, b;   /* b = SIZE_MAX: no block */
} MlSnapWhere;

#define SMALL_BUFFER ((uint64_t) 2 << 20)   /* kSmallBuffer: a small-pool segment, an expandable small page */
#define LARGE_BUFFER ((uint64_t) 20 << 20)  /* kLargeBuffer: an expandable large page */

typedef struct MlSnapAnn {
  uint64_t time;
  uint32_t name;
} MlSnapAnn;

/* Where an event came from (MlTrace.event_origin), in the file's own
 * terms: the type in the top two bits. */
#define ORG_ENTRY   (UINT64_C (1) << 62)   /* device_traces[device][index]: the action (MlEventKind) in bits 56..61 */
#define ORG_SEGMENT (2ull << 62)   /* segments[k] */
#define ORG_BLOCK   (3ull << 62)   /* segments[k]["blocks"][b]: k in bits 32..61, b below */
#define ORG_INDEX   ((UINT64_C (1) << 56) - 1)


/* ---- snapshot-fields.c: the pickle's values ---- */

/* Grows *@p (of *@cap elements of @elem bytes) to hold @need; ML_ENOMEM. */
int  _ml_snap_grow (void **p, size_t *cap, size_t need, size_t elem);
/* Sets the out-of-memory error naming the file; returns ML_ENOMEM. */
int  _ml_snap_oom (MlSnapCtx *c);
/* Interns @s (NULL: "") / the string of @v (not a string: 0) into the trace's strings. */
int  _ml_snap_intern (MlSnapCtx *c, const char *s, uint32_t *out);
int  _ml_snap_intern_val (MlSnapCtx *c, const MlPkValue *v, uint32_t *out);
/* The values of dict @d under the K_ keys (NULL when absent; the last wins). */
void _ml_snap_fields (const MlPkValue *d, const MlPkValue *out[K__COUNT]);
bool _ml_snap_int_of (const MlPkValue *v, int64_t *out);
/* The error for field @key of @where holding @said where 0 .. @max belongs. */
int  _ml_snap_bad_uint (MlSnapCtx *c, const char *where, const char *key, const char *said, uint64_t max);
/* The error for segment bytes of device @dev's entry @entry that take the reserved bytes past 2^63. */
int  _ml_snap_reserved_overflow (MlSnapCtx *c, size_t dev, size_t entry, uint64_t size);
/* Value @v (or field @key of dict @d) as an integer 0 .. @max of @w:
 * absent leaves *out (an error when @required), anything else is an
 * error naming the value. */
int  _ml_snap_uint_value (MlSnapCtx *c, const MlPkValue *v, const char *key, uint64_t max, bool required,
                          uint64_t *out, MlSnapWhere w);
int  _ml_snap_uint_field (MlSnapCtx *c, const MlPkValue *d, const char *key, uint64_t max, bool required,
                          uint64_t *out, MlSnapWhere w);
/* The unsigned integer fields of a trace entry, in MlSnapEnt's order. */
typedef struct { int key; const char *name; uint64_t max; } MlSnapEntryField;
enum { ML_SNAP_ENTRY_FIELDS = 5 };
extern const MlSnapEntryField _ml_snap_entry_fields[ML_SNAP_ENTRY_FIELDS];
/* @v when a list or tuple, else NULL. */
const MlPkValue *_ml_snap_as_list (const MlPkValue *v);
/* A "device" of @d (@what @k) that is present and not an integer is an error. */
int  _ml_snap_check_device (MlSnapCtx *c, const MlPkValue *d, const char *what, size_t k);
/* The "device" of a segment (0 when absent). */
int64_t _ml_snap_dev_of (const MlPkValue *seg);
/* The trace list of @device as the file names it: "device_traces[1]",
 * "host_traces" (ML_TRACE_HOST); into @buf, returned. */
const char *_ml_snap_list_name (uint32_t device, char *buf, size_t len);
/* The same for trace list @list of the read under way (--device host:
 * "host_traces" whatever @list). */
const char *_ml_snap_ctx_list (const MlSnapCtx *c, size_t list, char *buf, size_t len);
/* The dense index of stream value @value (MlTrace.stream_ids). */
int  _ml_snap_stream (MlSnapCtx *c, uint64_t value, uint32_t *out);
/* The pool index (MlTrace.pools) of a pool id value, a pair of
 * integers (segment_pool_id, pool_id); ML_EINPUT (no message) when @v is
 * no such pair. */
int  _ml_snap_pool_of (MlSnapCtx *c, const MlPkValue *v, uint32_t *out);
/* The pool of the dump-time segment holding @addr, 0 when none. */
uint32_t _ml_snap_pool_at (const MlSnapCtx *c, uint64_t addr);
/* An entry's pool: its pool_id, else that of the segment holding its address. */
static inline uint32_t
_ml_snap_ent_pool (const MlSnapCtx *c, const MlSnapEnt *e)
{
  return e->has_pool ? e->pool : _ml_snap_pool_at (c, e->addr);
}
/* The event kind of an action string (cached in its tag); -1: no action. */
int  _ml_snap_action_of (const MlPkValue *cv, MlEventKind *k);
/* Origins (MlTrace.event_origin): trace entry @index; segments[k] (@b =
 * SIZE_MAX) or its block @b; 0 when the index does not fit. */
uint64_t _ml_snap_org_entry (uint64_t index, MlEventKind action);
uint64_t _ml_snap_org_block (size_t k, size_t b);
/* The action's name as the file writes it ("free_completed"). */
const char *_ml_snap_action_name (MlEventKind k);
/* MlTrace.origin_text of a snapshot. */
const char *_ml_snap_origin_text (const MlTrace *t, size_t i, uint64_t o, char *buf, size_t len);

/* ---- snapshot-stacks.c: frames and stacks ---- */

/* The stack of a frames list (0: none), interned by content; memo-shared
 * lists are read once (their tag). */
int  _ml_snap_stack_of (MlSnapCtx *c, MlPkValue *frames, uint32_t *out);
/* Stack @st with one more frame at its end: the forward pass's location
 * of a backward allocation (its entry's forward_frames, a list of
 * traceback lines); @st unchanged when the lines name no location. */
int  _ml_snap_stack_with_forward (MlSnapCtx *c, uint32_t st, const MlPkValue *forward, uint32_t *out);
/* The stack of a free of a block allocated before the trace: stack @st's
 * frames, with a call site that says so. */
int  _ml_snap_stack_at_free (MlSnapCtx *c, uint32_t st, uint32_t *out);

/* ---- snapshot-entries.c: step 0 ---- */

/* The pickle's item callback (MlPkStream.item): entry @index of device @list. */
int  _ml_snap_on_entry (void *user, size_t list, size_t index, MlPkValue *e);

/* ---- snapshot-document.c: steps 1, 2, 5 ---- */

/* The device table (MlTrace.devices, device_ooms) from every device's entries and the segments. */
int  _ml_snap_summarize_devices (MlSnapCtx *c, const MlPkValue *segments, const MlPkValue *traces);
/* The device to read: MlLoadOptions.device, else the default (the reason kept in MlTrace.device_reason). */
int  _ml_snap_pick_device (MlSnapCtx *c, const MlPkValue *segments, const MlPkValue *traces,
                           const MlLoadOptions *opts, int64_t *out);
/* The device's segments and live blocks at dump time (MlSnapCtx.segs, blks, live). */
int  _ml_snap_read_segments (MlSnapCtx *c, const MlPkValue *segments);
/* A note when the device's segments, or one segment's blocks, overlap. */
int  _ml_snap_check_overlaps (MlSnapCtx *c, const MlPkValue *segments);
/* The device's external annotations, by time (MlSnapCtx.anns). */
int  _ml_snap_read_annotations (MlSnapCtx *c, const MlPkValue *annotations);
/* --range NAME[#K] (snapshot-stage.c): a pass over the file for the
 * stage's times; sets c->range to them (times since the epoch). */
int  _ml_snap_resolve_stage (MlSnapCtx *c, const unsigned char *data, size_t len, bool mapped, const MlLoadOptions *opts);

/* The actions the recording skipped (MlTrace.skipped_actions), with a note. */
int  _ml_snap_read_history (MlSnapCtx *c, const MlSnapDevTrace *dt, const MlPkValue *settings, const MlPkValue *root);
/* A note when the ring buffer wrapped (after _ml_snap_emit_settings read it). */
int  _ml_snap_note_history (MlSnapCtx *c);
/* The kind entry @e acts as: a free_requested ends its block when
 * free_completed was not recorded. */
static inline MlEventKind
_ml_snap_kind (const MlSnapCtx *c, const MlSnapEnt *e)
{
  return e->kind == ML_EV_FREE_REQUESTED && (c->t->skipped_actions & (1u << ML_EV_FREE)) ? ML_EV_FREE
         : (MlEventKind) e->kind;
}

/* ---- snapshot-state.c: steps 3, 4 ---- */

int  _ml_snap_add_seg (MlSnapCtx *c, uint64_t addr, uint64_t size, uint32_t stream, uint32_t pool, bool small,
                       bool expandable, uint64_t origin);
int  _ml_snap_add_blk (MlSnapCtx *c, uint64_t addr, uint64_t req, uint32_t stream, uint32_t pool, uint32_t stack,
                       MlPkValue *frames, uint64_t origin);
/* True when @size is a whole number of large-pool pages (expandable segments). */
bool _ml_snap_is_large_pages (uint64_t size);
/* Undoes trace entry @e on the state (@origin: where the file has it). */
int  _ml_snap_undo_entry (MlSnapCtx *c, const MlSnapEnt *e, uint64_t origin);
/* Undoes @dt's entries from the dump-time state back to its first kept
 * entry (what comes after a window first). */
int  _ml_snap_undo_trace (MlSnapCtx *c, const MlSnapDevTrace *dt);
/* Tick 0: the allocator settings as a mark; the segments, then the live blocks by address. */
int  _ml_snap_emit_settings (MlSnapCtx *c, const MlPkValue *settings, const MlPkValue *root);
int  _ml_snap_emit_start_state (MlSnapCtx *c);

/* ---- snapshot-replay.c: step 6 ---- */

/* Appends an event; @origin: where the file has it (ORG_*), 0 = nowhere. */
int  _ml_snap_emit (MlSnapCtx *c, MlEventKind kind, uint64_t tick, uint64_t id, uint64_t addr, uint64_t size,
                    uint32_t stream, int64_t time_ns, uint32_t name, uint32_t stack, uint16_t flags, uint64_t origin);
/* Sets the pool and meta of the event just emitted. */
int  _ml_snap_tag_last (MlSnapCtx *c, uint32_t pool, MlEventMeta meta);
/* The annotations up to @time_us (UINT64_MAX: all that are left), one tick each. */
int  _ml_snap_emit_annotations_until (MlSnapCtx *c, uint64_t time_us);
/* Trace entry @i (the file's index) forward; a bad entry is an error here. */
int  _ml_snap_walk_entry (MlSnapCtx *c, size_t i, const MlSnapEnt *e);
/* The warnings for entries the walk read past (MlTrace notes). */
int  _ml_snap_note_lost_entries (MlSnapCtx *c);
/* @dt's kept entries forward (NULL: none), the annotations left, the
 * ends of a window's buffers. */
int  _ml_snap_replay (MlSnapCtx *c, const MlSnapDevTrace *dt);
/* An alloc past the end of the segment it starts in: refused. */
int  _ml_snap_check_allocs (MlSnapCtx *c);

#endif
