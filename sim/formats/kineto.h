/* kineto.h — JSON inputs: Kineto / Chrome traces and computation graphs.
 *
 * Kineto / Chrome trace JSON ({"traceEvents": [...]}, plain or gzip) as
 * the PyTorch profiler writes it with profile_memory=True: the "[memory]"
 * instant events carry args Addr, Bytes (negative = a free), Total
 * Allocated, Total Reserved, Device Type (0 = CPU, 1 = CUDA) and Device
 * Id. One device is read (MlLoadOptions.device; -1 = the CUDA device with
 * the most memory events, else the CPU). Events are ordered by ts (stable);
 * allocations get running ids and frees are paired by address; a free of
 * an address the trace never allocated (it was allocated before profiling
 * began) becomes a buffer live from tick 0. ts (µs) becomes time_ns.
 *
 * A .json file is read once by the format registry (load.c), which hands
 * the document to this reader or to the graph reader by its keys.
 */
#ifndef ML_KINETO_H
#define ML_KINETO_H

#include <cjson/cJSON.h>

#include "sim/formats/load.h"

bool ml_kineto_sniff (const unsigned char *head, size_t len);
int  ml_trace_load_kineto (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err);
/* From a parsed document; @name is used in messages. */
int  ml_trace_from_kineto (const cJSON *root, const char *name, const MlLoadOptions *opts, MlTrace **out, MlError *err);

#endif
