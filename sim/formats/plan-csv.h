/* plan-csv.h — a one-arena plan as a MiniMalloc CSV with an offset column
 * (what 'memlens plan -o PLAN.csv' writes: id,lower,upper,size,offset). */
#ifndef ML_PLAN_CSV_H
#define ML_PLAN_CSV_H

#include <stdbool.h>

#include "sim/buffers.h"
#include "sim/plan.h"

/* Whether every buffer of @bufs has its own id (a trace may reuse an id
 * after its free): 1, 0, or ML_ENOMEM. */
int ml_buffers_csv_ids_unique (const MlBuffers *bufs, MlError *err) ML_MUST_CHECK;
/* Buffer @i's id in a CSV: the CSV's own (string) id for a trace read
 * from a CSV (borrowed from the trace), else its id when @unique, else
 * its index (written into @buf). */
const char *ml_buffers_csv_id (const MlBuffers *bufs, size_t i, bool unique, char *buf, size_t len);

/* Reads the plan CSV at @path for @bufs: each row names a buffer by the
 * id ml_buffers_csv_id gives it, and its lower, upper and size must be
 * the buffer's start, end and requested size (else an error naming the
 * line, the id and both values); every buffer needs exactly one row. The
 * plan has one segment from tick 0 as large as the highest end. On
 * success *@out is the caller's (ml_plan_free). */
int ml_plan_read_csv (const char *path, const MlBuffers *bufs, MlPlan **out, MlError *err) ML_MUST_CHECK;

#endif
