/* groups.h — a trace's live bytes by group (stats --group-by): what a
 * PyTorch snapshot says each allocation belongs to.
 *
 * A buffer's group is its alloc entry's
 *   compile_context  the torch.compile region it ran in ("Torch-Compiled
 *                    Region: 0/1"), or
 *   user_metadata    the user's metadata (torch.cuda.memory.
 *                    _set_memory_metadata), or
 *   a regular expression (POSIX extended) over its stack's frames,
 *                    innermost first, each read as "file:line:function":
 *                    the first frame that matches gives the group, its
 *                    first parenthesised subexpression when the
 *                    expression has one and it took part, else the whole
 *                    match ("model\.py:[0-9]+:(\w+)" groups by function).
 * A buffer without one (an entry that records none, a block live before
 * the trace, no frame matching) is in the group "(none)".
 */
#ifndef ML_ANALYSIS_GROUPS_H
#define ML_ANALYSIS_GROUPS_H

#include "sim/buffers.h"

typedef enum {
  ML_GROUP_COMPILE_CONTEXT = 0,
  ML_GROUP_USER_METADATA,
  ML_GROUP_FRAMES,
} MlGroupMode;

typedef struct {
  MlGroupMode mode;
  const char *regex;     /* ML_GROUP_FRAMES: borrowed */
} MlGroupBy;

/* The key every buffer has for one grouping. */
typedef struct {
  char    **names;       /* names[g]: group g's text; names[0] is "(none)" */
  size_t    n_names;
  uint32_t *of_buffer;   /* the group of each buffer (bufs->n) */
  size_t    n;
} MlGroupKeys;

/* One group's share at a tick. */
typedef struct {
  uint32_t group;        /* index in MlGroupKeys.names */
  uint64_t bytes;        /* rounded bytes live in it */
  uint64_t buffers;      /* buffers live in it */
} MlGroupRow;

/* "compile_context", "user_metadata", else a regular expression (checked:
 * ML_EUSAGE names it). @out borrows @text. */
int  ml_group_by_parse (const char *text, MlGroupBy *out, MlError *err);
/* The word the grouping is shown with: "compile_context", "user_metadata"
 * or the expression. */
const char *ml_group_by_name (const MlGroupBy *by);

/* Whether @trace's format can say what @by asks: compile_context and
 * user_metadata are fields of a PyTorch snapshot's entries (and of
 * memlens JSONL, which keeps them: MlTrace.records_meta); a CSV, a Kineto
 * trace, a graph or a CUPTI trace has no such field. A frames expression needs stacks. 0, or
 * ML_EUSAGE saying why not (every buffer would be "(none)"). */
int  ml_group_check (const MlTrace *trace, const MlGroupBy *by, MlError *err);

int  ml_group_keys (const MlBuffers *bufs, const MlGroupBy *by, MlGroupKeys *out, MlError *err)
  __attribute__ ((warn_unused_result));
void ml_group_keys_clear (MlGroupKeys *keys);

/* The groups live at @tick (start <= tick < end), most bytes first (ties:
 * "(none)" first, then by name): *@rows (the caller frees it), *@n. */
int  ml_group_at (const MlBuffers *bufs, const MlGroupKeys *keys, uint64_t tick, MlGroupRow **rows, size_t *n,
                  MlError *err) __attribute__ ((warn_unused_result));

#endif
