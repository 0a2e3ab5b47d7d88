/* snapshot-stacks.c — the snapshot's frames and stacks: each distinct
 * frame and stack interned once into the trace, memo-shared frame lists
 * read once, the stacks of blocks freed before the trace named so. */
#include "sim/formats/snapshot-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The last location a Python traceback text names ('File "F", line N,
 * in FUNC'), interned into @out with @suffix after the function: 1; 0
 * when it names none; ML_ENOMEM. */
static int
py_location (MlSnapCtx *c, const char *text, size_t len, const char *suffix, MlFrame *out)
{
  const char *at = NULL;
  for (const char *p = text; p && (size_t) (p - text) < len; p = memchr (p + 1, 'F', len - (size_t) (p + 1 - text)))
    if ((size_t) (text + len - p) > 6 && memcmp (p, "File \"", 6) == 0)
      at = p;
  if (!at)
    return 0;
  const char *f0 = at + 6, *f1 = memchr (f0, '"', len - (size_t) (f0 - text));
  if (!f1 || (size_t) (text + len - f1) < 9 || memcmp (f1, "\", line ", 8) != 0)
    return 0;
  char *end;
  unsigned long line = strtoul (f1 + 8, &end, 10);
  const char *fn = strstr (end, ", in ") == end ? end + 5 : NULL;
  size_t fn_len = 0;
  while (fn && fn + fn_len < text + len && fn[fn_len] != '\n' && fn[fn_len] != 0)
    fn_len++;
  char file[512], func[512];
  snprintf (file, sizeof file, "%.*s", (int) (f1 - f0), f0);
  snprintf (func, sizeof func, "%.*s%s", (int) fn_len, fn ? fn : "", suffix);
  out->line = line < UINT32_MAX ? (uint32_t) line : 0;
  int rc;
  if ((rc = _ml_snap_intern (c, file, &out->file)) < 0 || (rc = _ml_snap_intern (c, func, &out->func)) < 0)
    return rc;
  return 1;
}

/* FX fields of frame dict @f: the model code's location (the last one
 * of fx_original_trace), its function named "FUNC [FX NAME: TARGET]". */
static int
frame_fx (MlSnapCtx *c, const MlPkValue *fv[K__COUNT], MlSnapFrameInfo *fi)
{
  const MlPkValue *orig = fv[K_FX_ORIGINAL_TRACE], *name = fv[K_FX_NODE_NAME], *target = fv[K_FX_NODE_TARGET],
                  *op = fv[K_FX_NODE_OP];
  if (!orig || orig->kind != ML_PK_STR)
    return 0;
  char suffix[300];
  snprintf (suffix, sizeof suffix, " [FX %s%s%s]", name && name->kind == ML_PK_STR ? name->s : "?",
            target && target->kind == ML_PK_STR ? ": " : "",
            target && target->kind == ML_PK_STR ? target->s : op && op->kind == ML_PK_STR ? op->s : "");
  MlFrame fx;
  int rc = py_location (c, orig->s, orig->len, suffix, &fx);
  if (rc <= 0)
    return rc;
  if ((fi->fx = ml_trace_add_frame (c->t, fx)) == UINT32_MAX)
    return _ml_snap_oom (c);
  fi->has_fx = true;
  return 0;
}

/* The frame of a frame dict, interned once per memo object: its index in
 * the trace's frame table (frame dicts of equal content are one frame:
 * stacks compare by frame), UINT32_MAX when out of memory (the error is
 * set). */
static uint32_t
frame_of (MlSnapCtx *c, MlPkValue *f)
{
  if ((f->tag & TAG_ROLE) == TAG_FRAME)
    return f->tag & ~TAG_ROLE;
  const MlPkValue *fv[K__COUNT];
  _ml_snap_fields (f, fv);
  MlFrame fr = { 0 };
  int64_t line = 0;
  _ml_snap_int_of (fv[K_LINE], &line);
  if (_ml_snap_intern_val (c, fv[K_FILENAME], &fr.file) < 0 || _ml_snap_intern_val (c, fv[K_NAME], &fr.func) < 0)
    return UINT32_MAX;
  fr.line = line > 0 && line < UINT32_MAX ? (uint32_t) line : 0;
  uint32_t idx = ml_trace_add_frame (c->t, fr);
  if (idx == UINT32_MAX || idx > TAG_MAX
      || _ml_snap_grow ((void **) &c->finfo, &c->cap_finfo, (size_t) idx + 1, sizeof *c->finfo) < 0)
    {
      _ml_snap_oom (c);
      return UINT32_MAX;
    }
  for (; c->n_finfo <= idx; c->n_finfo++)
    c->finfo[c->n_finfo] = (MlSnapFrameInfo) { 0 };
  if (!c->finfo[idx].known)
    {
      MlSnapFrameInfo fi = { .known = true };
      fi.framework = ml_frame_is_framework (ml_trace_str (c->t, fr.file), ml_trace_str (c->t, fr.func));
      if (frame_fx (c, fv, &fi) < 0)
        return UINT32_MAX;
      c->finfo[idx] = fi;
    }
  if (!f->tag)
    f->tag = TAG_FRAME | idx;
  return idx;
}

static uint64_t
hash_stack (uint32_t site, const uint32_t *fr, size_t n)
{
  uint64_t h = 0x9e3779b97f4a7c15ull ^ site;
  for (size_t k = 0; k < n; k++)
    {
      h = (h ^ fr[k]) * 0xff51afd7ed558ccdull;
      h ^= h >> 29;
    }
  return h;
}

/* A stack by content: torch gives every traceback its own frames list, so
 * the iterations of a training loop repeat the same stacks as different
 * objects; the stack table keeps each distinct one once. */
static int
add_stack (MlSnapCtx *c, uint32_t site, const uint32_t *fr, size_t n, uint32_t *out)
{
  uint64_t h = hash_stack (site, fr, n);
  uint32_t idx;
  if (ml_u64map_get (&c->by_content, h, &idx))
    {
      const MlStack *st = &c->t->stacks[idx];
      /* a stack of no frames (a frames list without a dict) may come
       * before the table has any: no pointer into it then */
      if (st->site == site && st->n == n
          && (n == 0 || memcmp (c->t->stack_frames + st->first, fr, n * sizeof *fr) == 0))
        {
          *out = idx;
          return 0;
        }
    }
  idx = ml_trace_add_stack_ix (c->t, site, fr, n);
  if (idx == UINT32_MAX || ml_u64map_put (&c->by_content, h, idx) < 0)
    return _ml_snap_oom (c);
  *out = idx;
  return 0;
}

static int remember_ptrs (MlSnapCtx *c, uint64_t ph, const MlPkValue *frames, uint32_t idx);

/* The stack of a frames list: memo-shared lists give one stack, read
 * once (the list's tag; the streaming reader may keep a tagged list
 * without its items). */
int
_ml_snap_stack_of (MlSnapCtx *c, MlPkValue *frames, uint32_t *out)
{
  *out = 0;
  if (!frames || (frames->kind != ML_PK_LIST && frames->kind != ML_PK_TUPLE))
    return 0;
  if ((frames->tag & TAG_ROLE) == TAG_STACK)
    {
      *out = frames->tag & ~TAG_ROLE;
      return 0;
    }
  if (frames->n == 0)
    {
      frames->tag = TAG_STACK;   /* stack 0: the memo keeps one empty list for all */
      return 0;
    }
  uint64_t ph = 0x51ed270b27a3f1d5ull;
  for (size_t k = 0; k < frames->n; k++)
    {
      ph = (ph ^ (uint64_t) (uintptr_t) frames->items[k]) * 0x9e3779b97f4a7c15ull;
      ph ^= ph >> 29;
    }
  uint32_t pi;
  if (ml_u64map_get (&c->by_ptrs, ph, &pi) && c->pents[pi].n == frames->n
      && memcmp (c->ptrs + c->pents[pi].off, frames->items, frames->n * sizeof *frames->items) == 0)
    {
      *out = c->pents[pi].stack;
      if (!frames->tag && *out <= TAG_MAX)
        frames->tag = TAG_STACK | *out;
      return 0;
    }
  /* by frame (one per distinct content), not by its strings: a list
   * whose content is a known stack (every iteration of a training loop)
   * is only compared; one pass over the items */
  if (_ml_snap_grow ((void **) &c->scratch, &c->cap_scratch, 2 * frames->n, sizeof *c->scratch) < 0)
    return _ml_snap_oom (c);
  uint32_t *fr = c->scratch;
  size_t n = 0;
  uint32_t site = 0, idx;
  for (size_t k = 0; k < frames->n; k++)
    {
      MlPkValue *f = frames->items[k];
      if (f->kind != ML_PK_DICT)
        continue;
      uint32_t fi = (f->tag & TAG_ROLE) == TAG_FRAME ? f->tag & ~TAG_ROLE : frame_of (c, f);
      if (fi == UINT32_MAX)
        return ML_ENOMEM;
      if (c->finfo[fi].has_fx)
        fr[n++] = c->finfo[fi].fx;   /* the model code an Inductor frame runs */
      fr[n++] = fi;
      if (!site && !c->finfo[fi].framework)
        {
          if (!c->finfo[fi].site)
            {
              const MlFrame *g = &c->t->frame_table[fi];
              char buf[1024];
              snprintf (buf, sizeof buf, "%s:%u:%s", ml_trace_str (c->t, g->file), g->line,
                        ml_trace_str (c->t, g->func));
              int rc = _ml_snap_intern (c, buf, &c->finfo[fi].site);
              if (rc < 0)
                return rc;
            }
          site = c->finfo[fi].site;
        }
    }
  int rc = add_stack (c, site, fr, n, &idx);
  if (rc < 0)
    return rc;
  if (!frames->tag && idx <= TAG_MAX)
    frames->tag = TAG_STACK | idx;
  *out = idx;
  return remember_ptrs (c, ph, frames, idx);
}

#define PTR_CACHE_MAX ((size_t) 1 << 22)

/* Remembers that @frames's items (when all are document objects: their
 * addresses stay theirs) make stack @idx; for a stack met again. */
static int
remember_ptrs (MlSnapCtx *c, uint64_t ph, const MlPkValue *frames, uint32_t idx)
{
  size_t n = frames->n;
  if (c->n_ptrs + n > PTR_CACHE_MAX)
    return 0;
  for (size_t k = 0; k < n; k++)
    if (!ml_pk_in_document (frames->items[k]))
      return 0;
  if (_ml_snap_grow ((void **) &c->ptrs, &c->cap_ptrs, c->n_ptrs + n, sizeof *c->ptrs) < 0
      || _ml_snap_grow ((void **) &c->pents, &c->cap_pents, c->n_pents + 1, sizeof *c->pents) < 0
      || ml_u64map_put (&c->by_ptrs, ph, (uint32_t) c->n_pents) < 0)
    return _ml_snap_oom (c);
  memcpy (c->ptrs + c->n_ptrs, frames->items, n * sizeof *c->ptrs);
  c->pents[c->n_pents++] = (struct PtrEnt) { idx, (uint32_t) n, c->n_ptrs };
  c->n_ptrs += n;
  return 0;
}

int
_ml_snap_stack_with_forward (MlSnapCtx *c, uint32_t st, const MlPkValue *forward, uint32_t *out)
{
  *out = st;
  const MlPkValue *l = _ml_snap_as_list (forward);
  if (!l || !l->n || st >= c->t->n_stacks)
    return 0;
  /* the traceback lines, joined */
  size_t len = 0;
  for (size_t k = 0; k < l->n; k++)
    len += l->items[k]->kind == ML_PK_STR ? l->items[k]->len : 0;
  char *text = malloc (len + 1);
  if (!text)
    return _ml_snap_oom (c);
  size_t at = 0;
  for (size_t k = 0; k < l->n; k++)
    if (l->items[k]->kind == ML_PK_STR)
      memcpy (text + at, l->items[k]->s, l->items[k]->len), at += l->items[k]->len;
  text[at] = 0;
  MlFrame fwd;
  int found = py_location (c, text, at, " (forward of this backward)", &fwd);
  free (text);
  if (found <= 0)
    return found;
  const MlStack *s = &c->t->stacks[st];
  uint32_t n = s->n, site = s->site, fwd_ix = ml_trace_add_frame (c->t, fwd);
  if (fwd_ix == UINT32_MAX || _ml_snap_grow ((void **) &c->scratch, &c->cap_scratch, n + 1, sizeof *c->scratch) < 0)
    return _ml_snap_oom (c);
  if (n)
    memcpy (c->scratch, c->t->stack_frames + s->first, n * sizeof *c->scratch);
  c->scratch[n++] = fwd_ix;
  return add_stack (c, site, c->scratch, n, out);
}

/* The same frames as the stack of the free of a block allocated before
 * the trace: the call site says so instead of naming an allocation site. */
int
_ml_snap_stack_at_free (MlSnapCtx *c, uint32_t st, uint32_t *out)
{
  *out = 0;
  if (!st || st >= c->t->n_stacks)
    return 0;
  uint32_t idx;
  if (ml_u64map_get (&c->freed, st, &idx))
    {
      *out = idx;
      return 0;
    }
  const MlStack *s = &c->t->stacks[st];
  if (_ml_snap_grow ((void **) &c->scratch, &c->cap_scratch, s->n, sizeof *c->scratch) < 0)
    return _ml_snap_oom (c);
  if (s->n)
    memcpy (c->scratch, c->t->stack_frames + s->first, s->n * sizeof *c->scratch);
  uint32_t site = 0, n = s->n;
  int rc;
  for (uint32_t k = 0; k < n && !site; k++)
    {
      const MlFrame *g = &c->t->frame_table[c->scratch[k]];
      const char *file = ml_trace_str (c->t, g->file), *func = ml_trace_str (c->t, g->func);
      if (ml_frame_is_framework (file, func))
        continue;
      char buf[1024];
      snprintf (buf, sizeof buf, "allocated before the %s, freed at %s:%u:%s", c->tick ? "window" : "trace", file,
                g->line, func);
      if ((rc = _ml_snap_intern (c, buf, &site)) < 0)
        return rc;
    }
  /* a site of its own in any case (sites.c puts the frame the rule picks
   * after the prefix): never the same stack as the free's */
  if (!site && (rc = _ml_snap_intern (c, c->tick ? "allocated before the window" : "allocated before the trace", &site)) < 0)
    return rc;
  if ((rc = add_stack (c, site, c->scratch, n, &idx)) < 0)
    return rc;
  c->t->stacks[idx].kind = c->tick ? ML_STACK_FREED_BEFORE_WINDOW : ML_STACK_FREED_BEFORE_TRACE;
  if (ml_u64map_put (&c->freed, st, idx) < 0)
    return _ml_snap_oom (c);
  *out = idx;
  return 0;
}
