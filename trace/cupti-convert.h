/* cupti-convert.h — CUPTI activity records to memlens events, and the
 * collector that turns a process's records into native traces.
 *
 * ml_cupti_convert() is a pure function of one record: it needs the CUPTI
 * headers for the record layouts but not libcupti, a driver or a GPU, so
 * the tests fill the structs by hand. The collector keeps the converted
 * items of a whole run and, at the end, orders them by correlation id
 * (the order the program issued its CUDA calls in: records arrive per
 * buffer, not in time order), resolves what one record cannot know alone
 * (the stream that recorded the event a stream-wait-event waits for, the
 * device of a context) and pairs frees with allocations by address.
 *
 * Record layouts are those of CUDA 13 (CUPTI_API_VERSION 130001):
 *   MEMORY2            CUpti_ActivityMemory4      -> alloc / free (call site =
 *                      the file name of the record's source, the library that
 *                      allocated, when the tracer enabled it)
 *   MEMORY_POOL        CUpti_ActivityMemoryPool3  -> segment_alloc / segment_free / mark (trim)
 *   CONCURRENT_KERNEL  CUpti_ActivityKernel10     -> kernel (start, end, stream, name)
 *   SYNCHRONIZATION    CUpti_ActivitySynchronization2 -> sync (stream, event, context, stream_wait);
 *                      calls that did not succeed (a query of unfinished work) are skipped
 *   CUDA_EVENT         CUpti_ActivityCudaEvent2   -> sync event_record (id = CUDA event id)
 * Host memory (pageable, pinned) and static device memory are not kept:
 * the trace is a timeline of device memory a program allocates.
 */
#ifndef ML_CUPTI_CONVERT_H
#define ML_CUPTI_CONVERT_H

#include <cupti_activity.h>

#include "sim/trace.h"

/* One converted record. @name borrows the record's string (CUPTI keeps
 * kernel names for the life of the process) or points into @text. */
typedef struct {
  MlEvent     ev;             /* tick, name and stack are left 0          */
  const char *name;           /* NULL = none                              */
  const char *site;           /* memory: the library that asked, or NULL  */
  char        text[80];       /* generated names (pool trims)            */
  uint32_t    correlation;    /* CUPTI correlation id, 0 = none          */
  uint32_t    context;        /* CUPTI context id, UINT32_MAX = unknown  */
  uint64_t    event_sync_id;  /* CUDA event / sync: cudaEventSyncId      */
  bool        device_known;   /* ev.device came from the record          */
} MlCuptiItem;

/* Converts @record. Returns 1 and fills @out when memlens keeps it, 0 when
 * it is of a kind or memory kind memlens does not keep (@out is then
 * untouched). Never fails: unknown values become 0 / "none". */
int ml_cupti_convert (const CUpti_Activity *record, MlCuptiItem *out);

typedef struct MlCuptiCollector MlCuptiCollector;

typedef struct {
  uint64_t records;         /* records handed to the collector            */
  uint64_t kept;            /* converted into events                      */
  uint64_t skipped;         /* of kinds / memory kinds not kept           */
  uint64_t dropped;         /* records CUPTI reported lost                */
  uint64_t unmatched_frees; /* frees of addresses never seen allocated    */
  uint64_t implied_frees;   /* an address allocated again while live      */
  uint64_t by_kind[ML_EV__COUNT];
} MlCuptiStats;

MlCuptiCollector *ml_cupti_collector_new  (void);
void              ml_cupti_collector_free (MlCuptiCollector *c);

/* Converts and keeps @record. Returns 0, or ML_ENOMEM. */
int  ml_cupti_collector_add     (MlCuptiCollector *c, const CUpti_Activity *record);
/* Keeps an already converted item (copied, with its name). */
int  ml_cupti_collector_add_item(MlCuptiCollector *c, const MlCuptiItem *item);
void ml_cupti_collector_dropped (MlCuptiCollector *c, uint64_t n);
void ml_cupti_collector_stats   (const MlCuptiCollector *c, MlCuptiStats *stats);

/* Orders, resolves and pairs everything kept so far and builds one trace
 * per device, in the order devices first appear (*n_traces may be 0 when
 * nothing was kept). The caller owns the array and the traces (free each
 * with ml_trace_free(), then the array with free()). The collector keeps
 * its items: calling again gives the same result. */
int  ml_cupti_collector_finish  (MlCuptiCollector *c, MlTrace ***traces, size_t *n_traces, MlError *err);

/* Walks a buffer of activity records with libcupti's
 * cuptiActivityGetNextRecord() and adds each to @c; *n_records (may be
 * NULL) gets the number walked. Returns 0, ML_ENOMEM, or ML_EINPUT when
 * libcupti reports a malformed record. Defined in cupti-walk.c, which
 * links libcupti. */
int  ml_cupti_walk_buffer (MlCuptiCollector *c, uint8_t *buffer, size_t valid_bytes,
                           size_t *n_records, MlError *err);

#endif
