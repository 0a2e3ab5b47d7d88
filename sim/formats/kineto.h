/* kineto.h — Kineto / Chrome trace JSON ({"traceEvents": [...]}, plain
 * or gzip) as the PyTorch profiler writes it with profile_memory=True.
 *
 * The "[memory]" instant events carry args Addr, Bytes (negative = a
 * free), Total Allocated, Total Reserved, Device Type (0 = CPU, else an
 * accelerator: 1 = CUDA) and Device Id. One device is read
 * (MlLoadOptions.device; -1 = the accelerator with the most memory
 * events, else the CPU); a device the file does not hold is an error that
 * lists the ones it does. Events are ordered by ts (stable); allocations
 * get running ids and frees are paired by address; a free of an address
 * the trace never allocated (it was allocated before profiling began)
 * becomes a buffer live from tick 0. ts (µs) becomes time_ns.
 *
 * The document is read as a stream (yajl): memory grows with the
 * [memory] events of the devices that may be read, not with the file.
 * A .json file whose top level is a graph ("tensors" / "ops" before any
 * "traceEvents") goes to the graph reader instead.
 */
#ifndef ML_KINETO_H
#define ML_KINETO_H

#include "sim/formats/load-options.h"

bool ml_kineto_sniff (const unsigned char *head, size_t len);
/* Reads @path (a Kineto / Chrome trace, else a graph by its keys); on
 * success *out is the caller's (ml_trace_free). */
int  ml_trace_load_kineto (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
/* The same over @len bytes of JSON text (@name in messages); no graph. */
int  ml_trace_load_kineto_mem (const char *text, size_t len, const char *name, const MlLoadOptions *opts, MlTrace **out,
                               MlError *err);

#endif
