/* find.h — search a trace's buffers, as `stats --find` / `--find-frame`
 * and the viewer's search entry do: by address (any address inside a
 * buffer's bytes finds it, at a tick or at any tick: which buffer held
 * this address at tick T) and by frame (a frame of its stack, as
 * "file:line:function", contains a text).
 */
#ifndef ML_ANALYSIS_FIND_H
#define ML_ANALYSIS_FIND_H

#include "sim/buffers.h"

/* An address query: ADDR, ADDR@TICK, or ADDR@ (at the caller's current
 * tick: now set). */
typedef struct {
  uint64_t addr;
  uint64_t tick;   /* UINT64_MAX: at any tick */
  bool     now;    /* "ADDR@": the tick is the caller's to fill in */
} MlFindAddr;

/* Parses "0x7f0000001000", "4096@17", "0x7f00@" (@allow_now: else a
 * bare '@' is refused); an address in hex with 0x or decimal. 0, or -1
 * when @text is none of these. */
int  ml_find_addr_parse (const char *text, bool allow_now, MlFindAddr *out);

/* Whether the @size bytes at @base, live over ticks [@start, @end), hold
 * @q->addr (at @q->tick). */
bool ml_find_addr_holds (const MlFindAddr *q, uint64_t base, uint64_t size, uint64_t start, uint64_t end);

/* Per stack of @trace (n_stacks flags, owned by the caller: free()):
 * whether a frame of it, as ml_frame_text writes it ("model.py:12:forward"),
 * contains @text (@fold: ignoring ASCII case; @text then in lower case).
 * Each frame is tested once. NULL when out of memory. */
uint8_t *ml_find_frame_stacks (const MlTrace *trace, const char *text, bool fold);

/* The texts of the `annotate` entries tied to buffer @i (a mark with the
 * buffer's id, from its alloc to its end), interned in its trace, in time
 * order: writes at most @cap into @out and returns how many there are. */
size_t ml_buffer_annotations (const MlBuffers *bufs, size_t i, uint32_t *out, size_t cap);

#endif
