/* groups.c — live bytes by group (groups.h). */
#include "sim/analysis/groups.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sites.h"

#define NONE_NAME "(none)"

int
ml_group_by_parse (const char *text, MlGroupBy *out, MlError *err)
{
  if (!text || !*text)
    return ml_error_set (err, ML_EUSAGE, "--group-by: expected compile_context, user_metadata or a regular expression");
  if (strcmp (text, "compile_context") == 0)
    *out = (MlGroupBy) { ML_GROUP_COMPILE_CONTEXT, NULL };
  else if (strcmp (text, "user_metadata") == 0)
    *out = (MlGroupBy) { ML_GROUP_USER_METADATA, NULL };
  else
    {
      regex_t re;
      int rc = regcomp (&re, text, REG_EXTENDED);
      if (rc != 0)
        {
          char why[128];
          regerror (rc, &re, why, sizeof why);
          return ml_error_set (err, ML_EUSAGE, "--group-by %s: not compile_context, user_metadata or a regular "
                               "expression: %s", text, why);
        }
      regfree (&re);
      *out = (MlGroupBy) { ML_GROUP_FRAMES, text };
    }
  return 0;
}

const char *
ml_group_by_name (const MlGroupBy *by)
{
  return by->mode == ML_GROUP_COMPILE_CONTEXT ? "compile_context"
       : by->mode == ML_GROUP_USER_METADATA ? "user_metadata" : by->regex;
}

int
ml_group_check (const MlTrace *t, const MlGroupBy *by, MlError *err)
{
  const char *src = t->source ? ml_trace_str (t, t->source) : "";
  if (by->mode == ML_GROUP_FRAMES)
    {
      for (uint32_t s = 1; s < t->n_stacks; s++)
        if (t->stacks[s].n)
          return 0;
      return ml_error_set (err, ML_EUSAGE, "this trace (%s) records no stacks: every buffer would be in \"(none)\"",
                           *src ? src : "no source");
    }
  if (t->records_meta)
    return 0;
  return ml_error_set (err, ML_EUSAGE, "a %s trace records no %s (only PyTorch snapshots and memlens JSONL do): "
                       "every buffer would be in \"(none)\"", *src ? src : "trace of this format", ml_group_by_name (by));
}

/* Stack @st's group by @re: the first frame that matches (its first
 * subexpression when it took part), malloc'd; NULL when none matches
 * (and *@oom on out of memory). */
static char *
stack_key (const MlTrace *t, const MlStack *st, const regex_t *re, bool *oom)
{
  char frame[1024];
  regmatch_t m[2];
  for (uint32_t k = 0; k < st->n; k++)
    {
      ml_frame_text (t, ml_trace_stack_frame (t, st, k), frame, sizeof frame);
      if (regexec (re, frame, 2, m, 0) != 0)
        continue;
      regmatch_t use = (re->re_nsub > 0 && m[1].rm_so >= 0) ? m[1] : m[0];
      size_t len = (size_t) (use.rm_eo - use.rm_so);
      char *s = malloc (len + 1);
      if (!s)
        return *oom = true, NULL;
      memcpy (s, frame + use.rm_so, len);
      s[len] = '\0';
      return s;
    }
  return NULL;
}

typedef struct {
  const char *text;
  uint32_t    buf;
} Keyed;

static int
keyed_cmp (const void *a, const void *b)
{
  const Keyed *x = a, *y = b;
  int c = strcmp (x->text, y->text);
  return c ? c : (x->buf > y->buf) - (x->buf < y->buf);
}

/* Each buffer's text under @by into @keyed (NULL texts become "(none)");
 * the per-stack texts a regular expression makes go into @stack_texts. */
static int
texts_of (const MlBuffers *bufs, const MlGroupBy *by, Keyed *keyed, char **stack_texts, MlError *err)
{
  const MlTrace *t = bufs->trace;
  regex_t re;
  bool *done = NULL, oom = false;
  if (by->mode == ML_GROUP_FRAMES)
    {
      if (regcomp (&re, by->regex, REG_EXTENDED) != 0)
        return ml_error_set (err, ML_EUSAGE, "--group-by %s: not a regular expression", by->regex);
      if (!(done = calloc (t->n_stacks ? t->n_stacks : 1, sizeof *done)))
        oom = true;
    }
  for (size_t i = 0; i < bufs->n && !oom; i++)
    {
      const char *text = NULL;
      if (by->mode == ML_GROUP_FRAMES)
        {
          uint32_t s = bufs->buf[i].stack;
          if (s && s < t->n_stacks && !done[s])
            stack_texts[s] = stack_key (t, &t->stacks[s], &re, &oom), done[s] = true;
          text = s < t->n_stacks ? stack_texts[s] : NULL;
        }
      else if (bufs->alloc_event)
        {
          MlEventMeta meta = ml_trace_event_meta (t, bufs->alloc_event[i]);
          uint32_t idx = by->mode == ML_GROUP_COMPILE_CONTEXT ? meta.compile_context : meta.user_metadata;
          text = idx ? ml_trace_str (t, idx) : NULL;
        }
      keyed[i] = (Keyed) { text && *text ? text : NONE_NAME, (uint32_t) i };
    }
  if (by->mode == ML_GROUP_FRAMES)
    regfree (&re);
  free (done);
  return oom ? ml_error_set (err, ML_ENOMEM, "out of memory") : 0;
}

void
ml_group_keys_clear (MlGroupKeys *keys)
{
  for (size_t g = 0; g < keys->n_names; g++)
    free (keys->names[g]);
  free (keys->names);
  free (keys->of_buffer);
  memset (keys, 0, sizeof *keys);
}

int
ml_group_keys (const MlBuffers *bufs, const MlGroupBy *by, MlGroupKeys *out, MlError *err)
{
  const MlTrace *t = bufs->trace;
  memset (out, 0, sizeof *out);
  Keyed *keyed = calloc (bufs->n ? bufs->n : 1, sizeof *keyed);
  char **stack_texts = calloc (t->n_stacks ? t->n_stacks : 1, sizeof *stack_texts);
  out->names = calloc (bufs->n + 1, sizeof *out->names);
  out->of_buffer = calloc (bufs->n ? bufs->n : 1, sizeof *out->of_buffer);
  int rc = (keyed && stack_texts && out->names && out->of_buffer) ? 0 : ml_error_set (err, ML_ENOMEM, "out of memory");
  if (rc == 0)
    rc = texts_of (bufs, by, keyed, stack_texts, err);
  if (rc == 0)
    {
      qsort (keyed, bufs->n, sizeof *keyed, keyed_cmp);
      out->n = bufs->n;
      if (!(out->names[out->n_names++] = strdup (NONE_NAME)))
        rc = ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  for (size_t i = 0; rc == 0 && i < bufs->n; i++)
    {
      if (strcmp (keyed[i].text, NONE_NAME) == 0)
        {
          out->of_buffer[keyed[i].buf] = 0;
          continue;
        }
      if (out->n_names == 1 || strcmp (out->names[out->n_names - 1], keyed[i].text) != 0)
        if (!(out->names[out->n_names++] = strdup (keyed[i].text)))
          rc = ml_error_set (err, ML_ENOMEM, "out of memory");
      out->of_buffer[keyed[i].buf] = (uint32_t) (out->n_names - 1);
    }
  for (size_t s = 0; s < t->n_stacks && stack_texts; s++)
    free (stack_texts[s]);
  free (stack_texts);
  free (keyed);
  if (rc < 0)
    ml_group_keys_clear (out);
  return rc;
}

static int
row_cmp (const void *a, const void *b)
{
  const MlGroupRow *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  /* the groups are numbered in their names' order ("(none)" first) */
  return (x->group > y->group) - (x->group < y->group);
}

int
ml_group_at (const MlBuffers *bufs, const MlGroupKeys *keys, uint64_t tick, MlGroupRow **rows, size_t *n,
             MlError *err)
{
  MlGroupRow *sum = calloc (keys->n_names ? keys->n_names : 1, sizeof *sum);
  if (!sum)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0; i < bufs->n && i < keys->n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      if (b->start > tick)
        break;   /* buffers are sorted by start */
      if (b->end <= tick)
        continue;
      MlGroupRow *r = &sum[keys->of_buffer[i]];
      r->bytes += b->rsize;
      r->buffers++;
    }
  size_t k = 0;
  for (size_t g = 0; g < keys->n_names; g++)
    if (sum[g].buffers)
      sum[k] = sum[g], sum[k++].group = (uint32_t) g;
  qsort (sum, k, sizeof *sum, row_cmp);
  *rows = sum;
  *n = k;
  return 0;
}
