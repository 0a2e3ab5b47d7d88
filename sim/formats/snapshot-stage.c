/* snapshot-stage.c — --range NAME[#K]: a stage of the external
 * annotations as the window (record_function ranges written with the
 * memory history: {name, stage: START / END, time_us, device}). A pass
 * over the file before the load reads the annotations (the device
 * traces stream past and are let go), and the stage becomes a window of
 * times since the epoch: its K-th START to the END that closes it (a
 * nested START of the same name counts its own END), both inclusive; a
 * stage never closed runs to the end. */
#include "sim/formats/snapshot-private.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
skip_entry (void *user, size_t list, size_t index, MlPkValue *item)
{
  (void) user, (void) list, (void) index, (void) item;
  return 0;
}

typedef struct {
  uint64_t time;
  bool     start;
} Mark;

static int
cmp_mark (const void *a, const void *b)
{
  const Mark *x = a, *y = b;
  return x->time < y->time ? -1 : x->time > y->time;
}

/* The stages the file holds, for the message: "a, b, c" (at most 10). */
static void
list_stages (const MlPkValue *anns, char *buf, size_t len)
{
  size_t used = 0, n = 0;
  buf[0] = 0;
  for (size_t k = 0; anns && k < anns->n && n < 10; k++)
    {
      const char *name = ml_pk_get_str (anns->items[k], "name");
      if (!name)
        continue;
      bool seen = false;
      for (size_t j = 0; j < k && !seen; j++)
        {
          const char *other = ml_pk_get_str (anns->items[j], "name");
          seen = other && strcmp (other, name) == 0;
        }
      if (seen)
        continue;
      int w = snprintf (buf + used, len - used, "%s%s", n ? ", " : "", name);
      if (w < 0 || (size_t) w >= len - used)
        break;
      used += (size_t) w, n++;
    }
}

/* The K-th START of the stage and the END that closes it, in *@from /
 * *@to (UINT64_MAX: never closed); the number of STARTs when fewer. */
static size_t
find_stage (const Mark *m, size_t n, uint64_t nth, uint64_t *from, uint64_t *to)
{
  size_t starts = 0;
  for (size_t k = 0; k < n; k++)
    if (m[k].start && ++starts == nth)
      {
        *from = m[k].time;
        *to = UINT64_MAX;
        long depth = 0;
        for (size_t j = k + 1; j < n; j++)
          if (m[j].start)
            depth++;
          else if (depth-- == 0)
            {
              *to = m[j].time;
              break;
            }
        return starts;
      }
  return starts;
}

static int
resolve (MlSnapCtx *c, const MlPkValue *root, int device)
{
  MlRange *r = &c->range;
  const MlPkValue *anns = root && root->kind == ML_PK_DICT ? _ml_snap_as_list (ml_pk_get (root, "external_annotations")) : NULL;
  Mark *m = calloc (anns && anns->n ? anns->n : 1, sizeof *m);
  if (!m)
    return _ml_snap_oom (c);
  size_t n = 0;
  for (size_t k = 0; anns && k < anns->n; k++)
    {
      const MlPkValue *a = anns->items[k];
      const char *name = ml_pk_get_str (a, "name"), *stage = ml_pk_get_str (a, "stage");
      int64_t d = 0;
      uint64_t time;
      if (!name || !stage || strlen (name) != r->stage_len || memcmp (name, r->stage, r->stage_len) != 0
          || !ml_pk_get_u64 (a, "time_us", &time) || time > UINT64_MAX / 1000)
        continue;
      if (device >= 0 && ml_pk_get_int (a, "device", &d) && d != device)
        continue;
      bool start = strcmp (stage, "START") == 0 || strcmp (stage, "start") == 0;
      if (start || strcmp (stage, "END") == 0 || strcmp (stage, "end") == 0)
        m[n++] = (Mark) { time * 1000, start };
    }
  qsort (m, n, sizeof *m, cmp_mark);
  uint64_t from = 0, to = UINT64_MAX;
  size_t starts = find_stage (m, n, r->stage_nth, &from, &to);
  free (m);
  if (starts < r->stage_nth)
    {
      char names[512];
      list_stages (anns, names, sizeof names);
      if (starts)
        return ml_error_set (c->err, ML_EUSAGE, "%s: --range %s: stage \"%.*s\" starts %zu time%s, not %" PRIu64, c->path,
                             r->stage, (int) r->stage_len, r->stage, starts, starts == 1 ? "" : "s", r->stage_nth);
      return ml_error_set (c->err, ML_EUSAGE, "%s: --range %s: not T0:T1, and no external annotation starts a stage "
                           "\"%.*s\"%s (%s%s)", c->path, r->stage, (int) r->stage_len, r->stage,
                           device >= 0 ? " on this device" : "", *names ? "its stages: " : "the file has no stage",
                           names);
    }
  r->from = from, r->to = to, r->times = true, r->epoch = true;
  return 0;
}

int
_ml_snap_resolve_stage (MlSnapCtx *c, const unsigned char *data, size_t len, bool mapped, const MlLoadOptions *opts)
{
  MlPkStream st = { .key = "device_traces", .item = skip_entry, .progress = opts->progress, .drop_input = mapped };
  MlPkDoc *doc = NULL;
  int rc = ml_pk_parse_stream (data, len, &st, &doc, c->err);
  if (rc < 0)
    ml_error_prefix (c->err, "%s", c->path);
  else
    rc = resolve (c, ml_pk_root (doc), opts->device);
  ml_pk_free (doc);
  return rc;
}
