#include "sim/constraints.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/sort.h"

bool
ml_constraints_present (const MlBuffers *bufs)
{
  if (bufs->max_block || bufs->n_groups)
    return true;
  for (size_t i = 0; i < bufs->n; i++)
    if (bufs->buf[i].flags & (ML_BUF_ZERO_COPY | ML_BUF_PINNED | ML_BUF_NO_REUSE))
      return true;
  return false;
}

static bool
in_arena (const MlBuffer *b)
{
  return !(b->flags & (ML_BUF_ZERO_COPY | ML_BUF_PINNED));
}

/* Straddlers of the block borders, re-placed into extra blocks: the
 * lowest offset in the first extra block where the buffer meets none of
 * the buffers already there that overlap it in time. */
typedef struct {
  uint32_t *members;   /* buffer indexes */
  size_t    n, cap;
} Block;

static bool
overlap_time (const MlBuffer *a, const MlBuffer *b)
{
  return a->start < b->end && b->start < a->end && a->start < a->end && b->start < b->end;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* The lowest offset in @blk for buffer @b under @limit; UINT64_MAX if none. */
static uint64_t
block_fit (const MlBuffers *bufs, const uint64_t *off, const Block *blk, uint32_t b, uint64_t limit, uint64_t *cand)
{
  const MlBuffer *x = &bufs->buf[b];
  size_t nc = 0;
  cand[nc++] = 0;
  for (size_t i = 0; i < blk->n; i++)
    if (overlap_time (&bufs->buf[blk->members[i]], x))
      cand[nc++] = off[blk->members[i]] + bufs->buf[blk->members[i]].rsize;
  qsort (cand, nc, sizeof *cand, cmp_u64);
  for (size_t c = 0; c < nc; c++)
    {
      uint64_t at = cand[c];
      if (at + x->rsize > limit)
        break;
      bool clash = false;
      for (size_t i = 0; i < blk->n && !clash; i++)
        {
          const MlBuffer *y = &bufs->buf[blk->members[i]];
          clash = overlap_time (y, x) && off[blk->members[i]] < at + x->rsize && at < off[blk->members[i]] + y->rsize;
        }
      if (!clash)
        return at;
    }
  return UINT64_MAX;
}

static int
block_add (Block *blk, uint32_t b)
{
  if (blk->n == blk->cap)
    {
      size_t cap = blk->cap ? blk->cap * 2 : 16;
      uint32_t *m = realloc (blk->members, cap * sizeof *m);
      if (!m)
        return ML_ENOMEM;
      blk->members = m;
      blk->cap = cap;
    }
  blk->members[blk->n++] = b;
  return 0;
}

/* Cuts the arena (segment 0 of @seg, offsets @off) into blocks of at most
 * bufs->max_block bytes: fills @seg with a block number per buffer and
 * makes @off block-relative; returns the number of blocks in *n_blocks. */
static int
split_blocks (const MlBuffers *bufs, uint32_t *seg, uint64_t *off, uint64_t **sizes, size_t *n_blocks, MlError *err)
{
  uint64_t N = bufs->max_block, top = 0;
  size_t n = bufs->n;
  for (size_t i = 0; i < n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      if (!in_arena (b) && !(b->flags & ML_BUF_PINNED))
        continue;
      if (b->rsize > N)
        return ml_error_set (err, ML_EINPUT, "buffer %" PRIu64 " (%" PRIu64 " bytes) is larger than max_block %" PRIu64,
                             b->id, b->rsize, N);
      if ((b->flags & ML_BUF_PINNED) && off[i] + b->rsize > N)
        return ml_error_set (err, ML_EINPUT, "fixed buffer %" PRIu64 " at offset %" PRIu64 " ends past max_block %" PRIu64
                             " (fixed buffers sit in the first block)", b->id, off[i], N);
      if (off[i] + b->rsize > top)
        top = off[i] + b->rsize;
    }
  size_t regular = (size_t) (top / N + 1);
  uint32_t *stray = malloc ((n ? n : 1) * sizeof *stray);
  uint64_t *cand = malloc ((n + 1) * sizeof *cand);
  uint64_t *sz = calloc (regular + n + 1, sizeof *sz);
  Block *extra = NULL;
  size_t n_extra = 0, n_stray = 0;
  int rc = 0;
  if (!stray || !cand || !sz)
    goto oom;
  for (size_t i = 0; i < n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      if (b->flags & ML_BUF_ZERO_COPY)
        continue;
      uint64_t k = off[i] / N;
      if (!b->rsize || (off[i] + b->rsize - 1) / N == k)
        {
          seg[i] = (uint32_t) k;
          off[i] -= k * N;
          if (off[i] + b->rsize > sz[k])
            sz[k] = off[i] + b->rsize;
        }
      else
        stray[n_stray++] = (uint32_t) i;
    }
  /* largest first, then allocation order */
  {
    uint64_t *key = malloc ((n_stray ? n_stray : 1) * sizeof *key);
    if (!key)
      goto oom;
    for (size_t j = 0; j < n_stray; j++)
      key[j] = UINT64_MAX - bufs->buf[stray[j]].rsize;
    uint32_t *ord = malloc ((n_stray ? n_stray : 1) * sizeof *ord);
    if (!ord)
      {
        free (key);
        goto oom;
      }
    for (size_t j = 0; j < n_stray; j++)
      ord[j] = (uint32_t) j;
    rc = ml_sort_indexes_by_key (ord, n_stray, key, sizeof *key);
    for (size_t j = 0; j < n_stray; j++)
      key[j] = stray[ord[j]];
    for (size_t j = 0; j < n_stray; j++)
      stray[j] = (uint32_t) key[j];
    free (ord);
    free (key);
    if (rc < 0)
      goto oom;
  }
  extra = calloc (n_stray + 1, sizeof *extra);
  if (!extra)
    goto oom;
  for (size_t j = 0; j < n_stray; j++)
    {
      uint32_t b = stray[j];
      size_t e;
      uint64_t at = UINT64_MAX;
      for (e = 0; e < n_extra; e++)
        if ((at = block_fit (bufs, off, &extra[e], b, N, cand)) != UINT64_MAX)
          break;
      if (e == n_extra)
        n_extra++, at = 0;
      if (block_add (&extra[e], b) < 0)
        goto oom;
      off[b] = at;
      seg[b] = (uint32_t) (regular + e);
      if (at + bufs->buf[b].rsize > sz[regular + e])
        sz[regular + e] = at + bufs->buf[b].rsize;
    }
  /* drop empty regular blocks (block 0 stays: fixed buffers live there) */
  {
    size_t total = regular + n_extra, m = 0;
    uint32_t *renum = malloc (total * sizeof *renum);
    if (!renum)
      goto oom;
    for (size_t k = 0; k < total; k++)
      {
        bool used = k == 0 || k >= regular || sz[k] > 0;
        if (!used)
          for (size_t i = 0; i < n && !used; i++)
            used = !(bufs->buf[i].flags & ML_BUF_ZERO_COPY) && seg[i] == k;
        renum[k] = (uint32_t) m;
        if (used)
          sz[m++] = sz[k];
      }
    for (size_t i = 0; i < n; i++)
      if (!(bufs->buf[i].flags & ML_BUF_ZERO_COPY))
        seg[i] = renum[seg[i]];
    free (renum);
    *n_blocks = m;
  }
  *sizes = sz;
  sz = NULL;
  goto out;
oom:
  rc = ml_error_set (err, ML_ENOMEM, "out of memory splitting the arena into blocks");
out:
  for (size_t e = 0; extra && e < n_extra; e++)
    free (extra[e].members);
  free (extra);
  free (stray);
  free (cand);
  free (sz);
  return rc;
}

/* The reduced instance the strategy plans: one unit per contiguous
 * group (its members back to back), one per other arena buffer;
 * zero-copy and pinned buffers are left out. */
typedef struct {
  MlBuffers *red;
  uint32_t  *unit_of;   /* buffer -> unit, UINT32_MAX = none */
  uint32_t  *rep;       /* unit -> first buffer */
  uint64_t  *prefix;    /* a member's offset in its group */
  size_t     units;
} Reduced;

static void
reduced_free (Reduced *r)
{
  ml_buffers_free (r->red);
  free (r->unit_of);
  free (r->rep);
  free (r->prefix);
}

/* A unit per group: from its first member's start to its last one's
 * end (the whole run when a member may not be reused), its members'
 * sizes summed. */
static void
reduce_groups (const MlBuffers *bufs, Reduced *r)
{
  for (size_t g = 0, k = 0; g < bufs->n_groups; g++)
    {
      MlBuffer *u = &r->red->buf[r->units];
      uint64_t at = 0;
      bool no_reuse = false;
      *u = bufs->buf[bufs->group_member[k]];
      u->start = UINT64_MAX;
      u->end = 0;
      r->rep[r->units] = bufs->group_member[k];
      for (; k < bufs->group_end[g]; k++)
        {
          const MlBuffer *m = &bufs->buf[bufs->group_member[k]];
          r->unit_of[bufs->group_member[k]] = (uint32_t) r->units;
          r->prefix[bufs->group_member[k]] = at;
          at += m->rsize;
          if (m->start < u->start)
            u->start = m->start;
          if (m->end > u->end)
            u->end = m->end;
          no_reuse |= (m->flags & ML_BUF_NO_REUSE) != 0;
        }
      u->size = u->rsize = at;
      if (no_reuse)
        u->start = 0, u->end = bufs->end_tick;
      r->units++;
    }
}

/* The units in allocation order (by start, stable). */
static int
sort_units (const MlBuffers *bufs, Reduced *r)
{
  size_t units = r->units, n = bufs->n;
  MlBuffers *red = r->red;
  uint32_t *ord = malloc ((units ? units : 1) * sizeof *ord);
  MlBuffer *sorted = malloc ((units ? units : 1) * sizeof *sorted);
  uint32_t *rep2 = malloc ((units ? units : 1) * sizeof *rep2), *pos = malloc ((units ? units : 1) * sizeof *pos);
  int rc = ML_ENOMEM;
  if (!ord || !sorted || !rep2 || !pos)
    goto out;
  for (size_t u = 0; u < units; u++)
    ord[u] = (uint32_t) u;
  if (ml_sort_indexes_by_key (ord, units, &red->buf[0].start, sizeof (MlBuffer)) < 0)
    goto out;
  for (size_t u = 0; u < units; u++)
    {
      sorted[u] = red->buf[ord[u]];
      rep2[u] = r->rep[ord[u]];
      pos[ord[u]] = (uint32_t) u;
      red->alloc_event[u] = bufs->alloc_event ? bufs->alloc_event[rep2[u]] : 0;
    }
  memcpy (red->buf, sorted, units * sizeof *sorted);
  memcpy (r->rep, rep2, units * sizeof *rep2);
  for (size_t i = 0; i < n; i++)
    if (r->unit_of[i] != UINT32_MAX)
      r->unit_of[i] = pos[r->unit_of[i]];
  rc = 0;
out:
  free (ord), free (sorted), free (rep2), free (pos);
  return rc;
}

static int
reduce (const MlBuffers *bufs, Reduced *r, MlError *err)
{
  size_t n = bufs->n;
  r->unit_of = malloc ((n ? n : 1) * sizeof *r->unit_of);
  r->rep = malloc ((n ? n : 1) * sizeof *r->rep);
  r->prefix = calloc (n ? n : 1, sizeof *r->prefix);
  MlBuffers *red = r->red = calloc (1, sizeof *red);
  if (!r->unit_of || !r->rep || !r->prefix || !red)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++)
    r->unit_of[i] = UINT32_MAX;
  red->buf = calloc (n ? n : 1, sizeof *red->buf);
  red->by_end = calloc (n ? n : 1, sizeof *red->by_end);
  red->alloc_event = calloc (n ? n : 1, sizeof *red->alloc_event);
  if (!red->buf || !red->by_end || !red->alloc_event)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  reduce_groups (bufs, r);
  for (size_t i = 0; i < n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      if (!in_arena (b) || (b->flags & ML_BUF_GROUPED))
        continue;
      MlBuffer *u = &red->buf[r->units];
      *u = *b;
      if (b->flags & ML_BUF_NO_REUSE)
        u->start = 0, u->end = bufs->end_tick;
      r->unit_of[i] = (uint32_t) r->units;
      r->rep[r->units++] = (uint32_t) i;
    }
  if (sort_units (bufs, r) < 0)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t u = 0; u < r->units; u++)
    red->buf[u].flags &= ~(uint32_t) (ML_BUF_GROUPED | ML_BUF_NO_REUSE);
  red->n = r->units;
  red->align = bufs->align;
  red->end_tick = bufs->end_tick;
  red->trace = bufs->trace;
  red->zero_copy_align = bufs->zero_copy_align;
  return ml_buffers_index (red, err);
}

/* What the constraints add to the plan of the reduced instance. */
typedef struct {
  bool   any_fixed, any_zc;
  size_t n_blocks;
} Added;

/* Back to the whole instance: fixed buffers at their offsets, the
 * planned ones above the highest fixed byte, groups expanded; the arena
 * (cut into max_block blocks), then each zero-copy buffer in a segment
 * of its own. */
static int
expand (const MlBuffers *bufs, const Reduced *r, const MlPlan *rp, MlPlan *plan, Added *added, MlError *err)
{
  size_t n = bufs->n;
  uint64_t fixed_top = 0, *sizes = NULL;
  for (size_t i = 0; i < n; i++)
    if (bufs->buf[i].flags & ML_BUF_PINNED)
      {
        added->any_fixed = true;
        if (bufs->buf[i].addr + bufs->buf[i].rsize > fixed_top)
          fixed_top = bufs->buf[i].addr + bufs->buf[i].rsize;
      }
  fixed_top = ml_align_up (fixed_top, bufs->align);
  uint64_t arena = 0;
  for (size_t i = 0; i < n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      plan->segment[i] = 0;
      if (b->flags & ML_BUF_ZERO_COPY)
        {
          added->any_zc = true;
          plan->offset[i] = 0;
          continue;
        }
      plan->offset[i] = (b->flags & ML_BUF_PINNED) ? b->addr : fixed_top + rp->offset[r->unit_of[i]] + r->prefix[i];
      if (b->rsize && plan->offset[i] + b->rsize > arena)
        arena = plan->offset[i] + b->rsize;
    }
  added->n_blocks = 1;
  int rc;
  if (bufs->max_block && (rc = split_blocks (bufs, plan->segment, plan->offset, &sizes, &added->n_blocks, err)) < 0)
    return rc;
  rc = 0;
  for (size_t k = 0; k < added->n_blocks && rc == 0; k++)
    {
      MlSegment seg = { .size = sizes ? sizes[k] : arena, .start = 0, .end = bufs->end_tick };
      if (ml_plan_add_segment (plan, &seg) < 0)
        rc = ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  free (sizes);
  for (size_t i = 0; i < n && rc == 0; i++)
    if (bufs->buf[i].flags & ML_BUF_ZERO_COPY)
      {
        const MlBuffer *b = &bufs->buf[i];
        MlSegment seg = { .size = b->rsize, .start = b->start, .end = b->end > b->start ? b->end : b->start,
                          .stream = b->stream };
        long g = ml_plan_add_segment (plan, &seg);
        if (g < 0)
          rc = ml_error_set (err, ML_ENOMEM, "out of memory");
        else
          plan->segment[i] = (uint32_t) g;
      }
  return rc;
}

int
ml_constraints_plan (const MlBuffers *bufs, const MlStrategy *s, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  Reduced r = { 0 };
  MlPlan *rp = NULL;
  Added added = { 0 };
  int rc;
  if ((rc = reduce (bufs, &r, err)) < 0)
    goto out;
  if (!(rp = ml_plan_new (r.units, s->name)))
    {
      rc = ml_error_set (err, ML_ENOMEM, "out of memory");
      goto out;
    }
  rp->align = plan->align;
  if ((rc = s->plan (r.red, knobs, rp, err)) < 0)
    goto out;
  if (rp->n_segments > 1)
    {
      rc = ml_error_set (err, ML_EUNSUPPORTED, "%s: its plan has %zu segments; the graph's constraints need one arena",
                         s->name, rp->n_segments);
      goto out;
    }
  if ((rc = expand (bufs, &r, rp, plan, &added, err)) < 0)
    goto out;
  plan->ops = rp->ops;
  plan->nodes_visited = rp->nodes_visited;
  /* a proof about the reduced instance holds for the whole one only when
   * the pass added nothing of its own (fixed region, blocks, user memory) */
  if (!added.any_fixed && !added.any_zc && added.n_blocks == 1)
    {
      plan->optimal = rp->optimal;
      plan->proven_lb = rp->proven_lb;
    }
  char note[320];
  snprintf (note, sizeof note, "%s%sconstraints: %zu planned units%s%s%s", rp->note ? rp->note : "", rp->note ? "; " : "",
            r.units, added.any_fixed ? ", fixed region below" : "",
            added.any_zc ? ", zero-copy buffers in their own segments" : "",
            added.n_blocks > 1 ? ", arena cut into max_block blocks" : "");
  if (ml_plan_set_note (plan, note) < 0)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
out:
  ml_plan_free (rp);
  reduced_free (&r);
  return rc;
}
