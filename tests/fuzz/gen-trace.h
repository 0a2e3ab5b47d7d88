/* gen-trace.h — what the trace generators (fuzz-snapshot-gen.c,
 * fuzz-kineto-gen.c) share once their document is written: it goes to the
 * reader a command uses (ml_trace_load on a path), and the load is judged
 * by the generator's oracles. The choices and the writers they share are
 * in gen.h (fuzz-plan-gen.c reads a plan, not a trace, and judges its own).
 */
#ifndef ML_FUZZ_GEN_TRACE_H
#define ML_FUZZ_GEN_TRACE_H

#include <inttypes.h>

#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/gen.h"

/* What the generator knows of the document it wrote. */
typedef struct {
  int         dev;          /* --device, or -1 (the reader picks: nothing to judge) */
  bool        must_fail;    /* the device holds a value the reader must refuse */
  bool        exact;        /* what the load holds is the oracle's to say */
  uint64_t    n_alloc, sum_alloc;   /* the device's allocations after tick 0 */
  bool        marks;        /* n_mark is judged too */
  uint64_t    n_mark;       /* its marks after tick 0 */
  const char *refused;      /* what must_fail means, for the message */
} GenOracle;

/* Loads the document @doc (given back here) as @format (NULL: by the
 * sniffer) on device o->dev and judges the load: a failed load names the
 * file (then NULL); a load that succeeds where o->must_fail, or that holds
 * other allocations (and marks) after tick 0 than o says, aborts. Returns
 * the trace, the caller's. */
static inline MlTrace *
gen_load_judged (Buf *doc, const char *format, const GenOracle *o)
{
  MlTrace *t;
  MlError err = { 0 };
  MlLoadOptions opts;
  ml_load_options_init (&opts);
  opts.device = o->dev;
  opts.format = format;
  gen_dump (doc);
  const char *path = fuzz_path (doc->b, doc->n);
  int rc = ml_trace_load (path, &opts, &t, &err);
  free (doc->b);
  *doc = (Buf) { 0 };
  if (rc < 0)
    {
      if (!err.msg[0] || !strstr (err.msg, path))
        {
          fprintf (stderr, "fuzz: an error that does not name the file: \"%s\"\n", err.msg);
          abort ();
        }
      return NULL;
    }
  if (o->must_fail)
    {
      fprintf (stderr, "fuzz: device %d %s, and the load succeeded\n", o->dev, o->refused);
      abort ();
    }
  if (o->dev >= 0 && o->exact)
    {
      uint64_t n_alloc = 0, sum_alloc = 0, n_mark = 0;
      for (size_t i = 0; i < t->n_events; i++)
        if (t->events[i].tick > 0 && t->events[i].kind == ML_EV_ALLOC)
          n_alloc++, sum_alloc += t->events[i].size;
        else if (t->events[i].tick > 0 && t->events[i].kind == ML_EV_MARK)
          n_mark++;
      if (n_alloc != o->n_alloc || sum_alloc != o->sum_alloc || (o->marks && n_mark != o->n_mark))
        {
          fprintf (stderr,
                   "fuzz: device %d: %" PRIu64 " allocations of %" PRIu64 " B and %" PRIu64 " marks after tick 0; the "
                   "file has %" PRIu64 " of %" PRIu64 " B and %" PRIu64 " marks%s\n",
                   o->dev, n_alloc, sum_alloc, n_mark, o->n_alloc, o->sum_alloc, o->n_mark,
                   o->marks ? "" : " (marks not judged)");
          abort ();
        }
    }
  return t;
}

#endif
