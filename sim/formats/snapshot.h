/* snapshot.h — PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot).
 *
 * The pickle is read with sim/formats/pickle.h (no Python). One device is mapped
 * to events (MlLoadOptions.device; -1 = the device that recorded an OOM,
 * else the one with the most memory: reserved at the dump + allocated
 * over its trace):
 *
 *   tick 0      the allocator state at the trace's first event, rebuilt by
 *               undoing the trace backwards from the `segments` recorded
 *               at dump time (as memory_viz does for its Allocator State
 *               History): one segment_alloc (segment_map when expandable)
 *               per segment, name "small" / "large" (the pool), then one
 *               alloc per block live at that moment. With no trace this is
 *               simply the state at dump time.
 *   tick i + 1  trace entry i: alloc, free_requested, free (free_completed:
 *               the buffer ends here), segment_alloc / free / map / unmap,
 *               oom (size = request, addr = device_free), snapshot, and
 *               annotations as marks (external_annotations are merged in
 *               by time_us).
 * Allocations get running ids; frees are paired by address. Sizes are the
 * requested bytes; time_us becomes time_ns; the stack frames are kept
 * (memo-shared frame lists become one stack) with the call site = the
 * first frame outside the framework (torch, Python/C++ internals).
 * The legacy form (a plain list of segments) loads as a snapshot without
 * a trace. The trace's default alignment is 512 (kMinBlockSize).
 */
#ifndef ML_SNAPSHOT_H
#define ML_SNAPSHOT_H

#include "sim/formats/load-options.h"

/* The name PyTorch gives the trace action that maps to @kind
 * ("free_completed" for ML_EV_FREE, "annotate" for a mark), "?" else. */
const char *ml_snapshot_action_name (MlEventKind kind);

/* A snapshot's default alignment: the caching allocator's kMinBlockSize. */
#define ML_SNAPSHOT_ALIGN 512

bool ml_snapshot_sniff (const unsigned char *head, size_t len);
int  ml_trace_load_snapshot (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
/* The same from bytes in memory; @name is used in messages. */
int  ml_trace_load_snapshot_mem (const unsigned char *data, size_t len, const char *name,
                                 const MlLoadOptions *opts, MlTrace **out, MlError *err);

#endif
