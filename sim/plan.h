/* plan.h — where each buffer lives: a (segment, offset) per buffer.
 *
 * Online allocators and offline planners both produce plans, so every
 * metric, check, report and view works the same for every strategy. A
 * static arena is one segment alive for the whole trace. A "growable"
 * segment is an arena that reserves up to its high-water mark as it goes
 * (the online first-fit family): its reserved size at tick t is the
 * largest offset + size placed so far.
 */
#ifndef ML_PLAN_H
#define ML_PLAN_H

#include <stdio.h>

#include "sim/buffers.h"

enum {
  ML_SEG_GROWABLE = 1 << 0,
  ML_SEG_EXPANDABLE = 1 << 1,  /* PyTorch expandable segment */
  ML_SEG_PAGED = 1 << 2,       /* reserved by its mappings (MlMapping), not its size */
};

typedef struct {
  uint64_t size;     /* bytes reserved                 */
  uint64_t start;    /* tick reserved                  */
  uint64_t end;      /* tick released (end of trace if never) */
  uint64_t addr;     /* recorded or emulated base address, 0 = none */
  uint32_t stream;   /* the trace's stream index */
  uint32_t flags;
  uint32_t pool;     /* the trace's pool (MlTrace.pools index; 0 = the default pools) */
} MlSegment;

/* Pages of a paged segment (a PyTorch expandable segment: a virtual
 * range whose pages are mapped and unmapped as it goes) mapped at
 * [offset, offset + size) of the segment during [start, end) ticks. A
 * paged segment's size is the extent of its range; its reserved bytes at
 * tick t are those of its mappings live at t. */
typedef struct {
  uint32_t segment;
  uint64_t offset, size;
  uint64_t start, end;
} MlMapping;

/* Why a capacity refused: the OOM verdict. */
typedef enum {
  ML_OOM_CAPACITY = 0,    /* fewer free bytes under the capacity than the request */
  ML_OOM_FRAGMENTATION,   /* enough free bytes, but no free block large enough */
  ML_OOM_OVER_CAPACITY,   /* a layout past the capacity with no single failing
                           * request (a static plan, the recorded one) */
  ML_OOM_EMPTY_REQUEST,   /* the refused request is of 0 bytes: neither the free
                           * bytes nor their layout can be why */
} MlOomVerdict;

/* The verdict of a refused request of @request bytes with @free bytes
 * free: empty-request, fragmentation or capacity. */
MlOomVerdict ml_oom_verdict_of (uint64_t request, uint64_t free);

/* "capacity", "fragmentation", "over-capacity", "empty-request" (the JSON
 * verdicts). */
const char *ml_oom_verdict_name (MlOomVerdict verdict);

/* The first allocation a capacity refused. */
typedef struct {
  bool     hit;
  uint64_t tick;
  uint32_t buffer;        /* the request */
  uint64_t request;       /* rounded bytes */
  uint64_t live;          /* bytes in live buffers at that moment */
  uint64_t reserved;      /* bytes reserved (segments / high water) */
  uint64_t free_bytes;    /* capacity - live */
  uint64_t largest_free;  /* largest block that could have been used */
  MlOomVerdict verdict;
  uint32_t retries;       /* retries run for this request before it failed */
  uint64_t released;      /* bytes those retries gave back to the device */
} MlOom;

/* Marks @oom hit by a layout over the capacity with no request to blame
 * (ML_OOM_OVER_CAPACITY). */
void ml_oom_over_capacity (MlOom *oom);

typedef struct {
  char      *strategy;     /* owned */
  size_t     n;            /* == bufs->n */
  uint32_t  *segment;      /* n */
  uint64_t  *offset;       /* n, within the segment */
  MlSegment *segments;
  size_t     n_segments, cap_segments;
  MlMapping *maps;          /* of the ML_SEG_PAGED segments */
  size_t     n_maps, cap_maps;
  uint64_t   align;

  /* what the strategy knows about its own result */
  bool       optimal;        /* proven optimal peak */
  uint64_t   proven_lb;      /* a proven lower bound on the peak (0 = none) */
  double     seconds;        /* wall time of the strategy alone */
  uint64_t   ops;            /* allocator operations performed */
  uint64_t   nodes_visited;  /* free-list / tree nodes visited; search: placements tried */
  uint64_t   backtracks;     /* search: nodes whose every candidate failed (exact) */
  uint64_t   block_waste;    /* bytes inside the strategy's blocks beyond the
                                rounded sizes (pool classes, buddy powers of
                                two), live at the lower-bound tick */
  bool       has_block_waste;/* the strategy reports block_waste */
  uint64_t   retries;        /* retries run over the whole replay */
  uint64_t   retry_released; /* bytes they gave back */
  MlOom      oom;
  char      *note;           /* owned, optional: "time limit reached", ... */
  /* the plan knows how many bytes it reserved, not which (the recorded
   * plan of a Kineto trace: its Total Reserved counter, no segments):
   * its free blocks and fragmentation mean nothing (MlMetrics.frag_unknown) */
  bool       free_unknown;
} MlPlan;

/* Writes @oom as a JSON object ("null" when none hit) with its verdict
 * (ml_oom_verdict_name) into @fp. Like every JSON writer: 0, or ML_EIO
 * when @fp has an error. */
int ml_oom_write_json (const MlOom *oom, const MlBuffers *bufs, FILE *fp, MlError *err) ML_MUST_CHECK;

/* A plan for @n buffers, every buffer in segment 0 at offset 0, no
 * segments. Returns NULL when out of memory. */
MlPlan *ml_plan_new  (size_t n, const char *strategy);
void    ml_plan_free (MlPlan *plan);
/* Appends a segment; returns its index or -1 when out of memory. */
long    ml_plan_add_segment (MlPlan *plan, const MlSegment *seg) ML_MUST_CHECK;
/* Appends a mapping; returns its index or -1 when out of memory. */
long    ml_plan_add_mapping (MlPlan *plan, const MlMapping *map) ML_MUST_CHECK;
int     ml_plan_set_note (MlPlan *plan, const char *note) ML_MUST_CHECK;
/* Ends, at @tick, the parts of segment @seg's live mappings inside
 * [@lo, @hi) (offsets); what is left of a mapping goes on as a new one
 * from @tick. 0 or ML_ENOMEM. */
int     ml_plan_unmap (MlPlan *plan, uint32_t seg, uint64_t lo, uint64_t hi, uint64_t tick) ML_MUST_CHECK;

/* For a plan of one static arena: max(offset + size) over buffers. */
uint64_t ml_plan_arena_size (const MlPlan *plan, const MlBuffers *bufs);
/* Makes @plan a single static arena of its arena size, alive [0, end). */
int     ml_plan_make_arena (MlPlan *plan, const MlBuffers *bufs) ML_MUST_CHECK;

/* Plan files (JSON). Writing is atomic (temporary file + rename). The
 * reader matches buffers by id to @bufs and errors on unknown, missing or
 * duplicate ids. */
int ml_plan_write_json (const MlPlan *plan, const MlBuffers *bufs, const char *path, MlError *err) ML_MUST_CHECK;
int ml_plan_read_json  (const char *path, const MlBuffers *bufs, MlPlan **out, MlError *err) ML_MUST_CHECK;

#endif
