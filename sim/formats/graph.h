/* graph.h — computation graphs (docs/formats.md, "Graph JSON").
 *
 * A graph names tensors (shape, dtype, kind) and ops in an order (inputs,
 * outputs, in-place pairs). It becomes a trace: tick 0 holds the graph
 * inputs and the weights, op i runs at tick i + 1 and allocates its
 * outputs there; a tensor is freed at the tick after its last use (graph
 * outputs live to the end). Requested size = elements × dtype size; the
 * buffers round it to the alignment (the graph's "alignment", default
 * 256). The output of an in-place pair is no new buffer: it extends the
 * input's. An in-place pair whose input is still read by a later op is a
 * hazard: the loader records every in-place write in the trace
 * (ml_trace_add_inplace: ml_check_races() reports the hazards) and adds a
 * mark "in-place hazard: ..." at the op's tick for `stats`.
 *
 * Options (MlLoadOptions.graph_options, "k=v,..."; other keys are left to
 * the strategies): exclude=weights|inputs|outputs (repeatable) leaves
 * those tensors out; pin=weights|inputs|outputs (repeatable) keeps them
 * resident for the whole graph, flagged pinned, at offsets (addr) packed
 * from 0 in declaration order; reorder=memory runs the ops in a memory-aware
 * topological order (below) and keeps it when its peak is lower; a mark
 * at tick 0 reports both peaks.
 *
 * Branches: an op's "branch" alternatives run right after it, one after
 * the other (the worst case: a plan of the laid-out graph holds for each
 * alternative alone); a tensor made in an alternative is read only there.
 *
 * reorder=priority: GE's memory-priority order: a depth-first walk back
 * from the sinks that emits each op right after the producers of its
 * inputs (the largest input's producer first), so a chain runs just
 * before its consumer.
 *
 * Memory-aware order (after Ascend GE's memory-priority ordering): list
 * scheduling over the ready ops, taking first the op that frees the most
 * bytes net of what it allocates (so consumers run right after their
 * producers and chains are delayed until their inputs can die), ties by
 * larger outputs first, then by the original order. O(n · r) for n ops
 * and r ready ops per step (at most O(n^2)), O(reads) for the bookkeeping.
 * Not optimal (the problem is NP-hard); never worse, since the original
 * order is kept when it is better.
 */
#ifndef ML_GRAPH_H
#define ML_GRAPH_H

#include <cjson/cJSON.h>

#include "sim/formats/load-options.h"

bool ml_graph_sniff (const unsigned char *head, size_t len);
int  ml_trace_load_graph (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
int  ml_trace_from_graph (const cJSON *root, const char *name, const MlLoadOptions *opts, MlTrace **out, MlError *err);

/* Bytes of one element of @dtype ("f32", "bf16", ...); 0 when unknown. */
unsigned ml_dtype_size (const char *dtype);

#endif
