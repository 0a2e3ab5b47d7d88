/* stages.c — the stages a trace marks (stages.h). */
#include "sim/analysis/stages.h"

#include <stdlib.h>
#include <string.h>

/* The length of @text's name when it ends in @suffix, else 0. */
static size_t
name_len (const char *text, const char *suffix)
{
  size_t n = text ? strlen (text) : 0, k = strlen (suffix);
  return n > k && strcmp (text + n - k, suffix) == 0 ? n - k : 0;
}

int
ml_stages_find (const MlTrace *t, MlStage **out, size_t *n, MlError *err)
{
  size_t marks = 0;
  for (size_t i = 0; i < t->n_events; i++)
    marks += t->events[i].kind == ML_EV_MARK;
  MlStage *st = calloc (marks ? marks : 1, sizeof *st);
  bool *open = calloc (marks ? marks : 1, sizeof *open);
  if (!st || !open)
    {
      free (st), free (open);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  size_t k = 0;
  uint64_t end = ml_trace_end_tick (t);
  for (size_t i = 0; i < t->n_events; i++)
    {
      const MlEvent *ev = &t->events[i];
      if (ev->kind != ML_EV_MARK || !ev->name)
        continue;
      const char *text = ml_trace_str (t, ev->name);
      size_t len;
      if ((len = name_len (text, " start")))
        {
          open[k] = true;
          st[k++] = (MlStage) { text, len, ev->tick, end };
        }
      else if ((len = name_len (text, " end")))
        for (size_t j = k; j-- > 0;)   /* the innermost open one of the name */
          if (open[j] && st[j].len == len && memcmp (st[j].name, text, len) == 0)
            {
              open[j] = false;
              st[j].end = ev->tick;
              break;
            }
    }
  free (open);
  *out = st;
  *n = k;
  return 0;
}
