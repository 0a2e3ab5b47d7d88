/* trace-text.h — traces written inline in a test: the memlens-trace JSONL
 * lines as string macros, a builder for random ones, loading such a text through the real loader,
 * and counting what the plan checker finds (shared by test-sim.c,
 * test-pools.c, test-planners.c and test-render.c). Include after tests/tap.h. */
#ifndef ML_TESTS_TRACE_TEXT_H
#define ML_TESTS_TRACE_TEXT_H

#include <inttypes.h>

#include "sim/analysis/check.h"
#include "sim/formats/load.h"
#include "sim/sim.h"

/* The header line of a memlens-trace with alignment @align bytes, and an
 * alloc / free line (all three string literals, to be concatenated). */
#define TRACE_HEADER(align) "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":" #align "}\n"
#define A(id, size) "{\"kind\":\"alloc\",\"id\":" #id ",\"size\":" #size "}\n"
#define F(id) "{\"kind\":\"free\",\"id\":" #id "}\n"

/* A trace text built line by line (random traces): tt_begin () starts it
 * with the header at @align, tt_alloc () / tt_free () append a line. The
 * caller keeps @buf (@cap bytes) large enough; tt_room () says how much is
 * left. */
typedef struct {
  char  *buf;
  size_t len, cap;
} TraceText;

static inline void
tt_begin (TraceText *tt, char *buf, size_t cap, int align)
{
  tt->buf = buf;
  tt->cap = cap;
  tt->len = (size_t) snprintf (buf, cap, "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":%d}\n", align);
}

static inline void
tt_alloc (TraceText *tt, int id, uint64_t size)
{
  tt->len += (size_t) snprintf (tt->buf + tt->len, tt->cap - tt->len, "{\"kind\":\"alloc\",\"id\":%d,\"size\":%" PRIu64 "}\n",
                                id, size);
}

static inline void
tt_free (TraceText *tt, int id)
{
  tt->len += (size_t) snprintf (tt->buf + tt->len, tt->cap - tt->len, "{\"kind\":\"free\",\"id\":%d}\n", id);
}

static inline size_t
tt_room (const TraceText *tt)
{
  return tt->cap - tt->len;
}

/* Loads @text as a file named *@suffix (".jsonl", ".csv": the format
 * goes by it); NULL (the error printed as a TAP comment) when it does
 * not load. The caller frees the trace. */
static inline MlTrace *
load_text (const char *text, const char *suffix)
{
  char *path = tap_write_temp (text, suffix);
  MlTrace *t = NULL;
  MlError err = { 0 };
  if (ml_trace_load (path, NULL, &t, &err) < 0)
    printf ("# load: %s\n", err.msg);
  unlink (path);
  free (path);
  return t;
}

/* load_text (@text, ".jsonl") and its buffers at the trace's alignment;
 * NULL when either fails. The caller frees *@t and the buffers. */
static inline MlBuffers *
build_text (const char *text, MlTrace **t)
{
  MlBuffers *b = NULL;
  *t = load_text (text, ".jsonl");
  if (*t && ml_buffers_build (*t, 0, &b, NULL) < 0)
    b = NULL;
  return b;
}

/* How many issues ml_check_plan finds in @p. */
static inline size_t
issues_of (const MlBuffers *b, const MlPlan *p)
{
  MlIssues is;
  ml_issues_init (&is);
  ml_check_plan (b, p, &is, NULL);
  size_t n = ml_issues_count (&is);
  ml_issues_clear (&is);
  return n;
}

#endif
