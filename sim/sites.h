/* sites.h — call sites a user recognises: which frame of a stack names
 * the place that asked for the memory.
 *
 * Every command, report, picture and the viewer shows a buffer by its
 * stack's call site (MlStack.site); ml_trace_set_sites recomputes them
 * all by one rule, chosen with --frames:
 *
 *   user   (the default) the first frame in the user's code: not under
 *          site-packages / dist-packages, not the Python standard library
 *          (lib/pythonX.Y, <frozen ...>, threading.py's kind), not torch
 *          (its package, Inductor's generated code, triton), not C / C++;
 *          when every frame is library code, the top frame that is not
 *          the allocator's own (c10's CachingAllocator, the unwinder,
 *          the interpreter loop): a C++-only stack shows its top C++ frame;
 *   all    the first frame, whatever it is;
 *   REGEX  the first frame whose "file:line:function" matches the POSIX
 *          extended regular expression; none: as `user`.
 *
 * A stack of a block allocated before the trace and freed in it keeps
 * its prefix ("allocated before the trace, freed at ..."); one without
 * frames keeps its text ("allocated before recording"). O(frames).
 */
#ifndef ML_SITES_H
#define ML_SITES_H

#include "sim/trace.h"

typedef enum {
  ML_FRAMES_USER = 0,
  ML_FRAMES_ALL,
  ML_FRAMES_REGEX,
} MlFramesMode;

typedef struct {
  MlFramesMode mode;
  const char  *regex;   /* ML_FRAMES_REGEX: borrowed */
} MlFrames;

/* "user", "all", or a regular expression (checked: ML_EUSAGE names it
 * and what is wrong). @out borrows @text. */
int  ml_frames_parse (const char *text, MlFrames *out, MlError *err);

/* True for a file of installed libraries or of Python's standard
 * library (the frames the `user` rule passes over besides the
 * framework's, ml_frame_is_framework). */
bool ml_frame_is_library (const char *file);

/* Frame @f as rules and groupings read it: "file:line:func", or the
 * function alone for a frame without a file (a C++ frame symbolised
 * without debug information); into @buf of @len bytes. */
void ml_frame_text (const MlTrace *trace, const MlFrame *f, char *buf, size_t len);

/* Recomputes the call site of every stack of @trace that has frames, by
 * @rule (NULL: user). 0, ML_EUSAGE (a bad regular expression), ML_ENOMEM. */
int  ml_trace_set_sites (MlTrace *trace, const MlFrames *rule, MlError *err);

#endif
