#include "sim/analysis/check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/array.h"
#include "sim/base/treap.h"

static const char *const kind_names[ML_ISSUE__COUNT] = {
  "conflict", "misaligned", "outside", "cross-stream", "in-place", "constraint",
};

const char *
ml_issue_kind_name (MlIssueKind kind)
{
  return (unsigned) kind < ML_ISSUE__COUNT ? kind_names[kind] : "?";
}

void
ml_issues_init (MlIssues *is)
{
  memset (is, 0, sizeof *is);
}

void
ml_issues_clear (MlIssues *is)
{
  free (is->items);
  size_t keep = is->max_kept;
  ml_issues_init (is);
  is->max_kept = keep;
}

int
ml_issues_add (MlIssues *is, const MlIssue *issue)
{
  is->total[issue->kind]++;
  size_t max = is->max_kept ? is->max_kept : 1000;
  if (is->n >= max)
    return 0;
  if (ML_ARRAY_RESERVE (is->items, is->n, is->cap, 16) < 0)
    return ML_ENOMEM;
  is->items[is->n++] = *issue;
  return 0;
}

size_t
ml_issues_count (const MlIssues *is)
{
  size_t n = 0;
  for (int k = 0; k < ML_ISSUE__COUNT; k++)
    n += is->total[k];
  return n;
}

typedef struct {
  const MlBuffers *bufs;
  const MlPlan    *plan;
  MlIssues        *issues;
  uint32_t         b;
  uint64_t         lo, hi;
  int              rc;
} ConflictCtx;

/* A buffer as its input names it (a CSV's "01" and "1" are two). */
typedef char IdText[48];
#define ID(bufs, i, tmp) ml_buffer_id_text ((bufs), (i), (tmp), sizeof (tmp))

static bool
on_overlap (void *user, const MlTreapNode *node)
{
  ConflictCtx *c = user;
  uint32_t other = (uint32_t) node->b;
  uint64_t lo = node->a > c->lo ? node->a : c->lo;
  uint64_t hi = node->value < c->hi ? node->value : c->hi;
  const MlBuffer *x = &c->bufs->buf[other], *y = &c->bufs->buf[c->b];
  MlIssue is = {
    .kind = ML_ISSUE_CONFLICT, .a = other, .b = c->b, .tick = y->start, .tick_b = x->start,
    .bytes = hi - lo, .segment = c->plan->segment[c->b], .stream_a = x->stream, .stream_b = y->stream,
  };
  is.offset = c->plan->offset[c->b] > c->plan->offset[other] ? c->plan->offset[c->b] : c->plan->offset[other];
  IdText xs, ys;
  snprintf (is.why, sizeof is.why, "buffer %.40s [%" PRIu64 ", %" PRIu64 ") is still live when buffer %.40s"
            " is placed over %" PRIu64 " of its bytes at tick %" PRIu64,
            ID (c->bufs, other, xs), x->start, x->end, ID (c->bufs, c->b, ys), hi - lo, y->start);
  if (ml_issues_add (c->issues, &is) < 0)
    {
      c->rc = ML_ENOMEM;
      return false;
    }
  return true;
}

static int
constraint_issue (MlIssues *issues, const MlBuffers *bufs, const MlPlan *plan, uint32_t a, uint32_t b, const char *fmt, ...)
  __attribute__ ((format (printf, 6, 7)));

static int
constraint_issue (MlIssues *issues, const MlBuffers *bufs, const MlPlan *plan, uint32_t a, uint32_t b, const char *fmt, ...)
{
  const MlBuffer *x = &bufs->buf[a], *y = &bufs->buf[b];
  MlIssue is = { .kind = ML_ISSUE_CONSTRAINT, .a = a, .b = b, .tick = y->start, .tick_b = x->start,
                 .offset = plan->offset[b], .bytes = y->rsize, .segment = plan->segment[b],
                 .stream_a = x->stream, .stream_b = y->stream };
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (is.why, sizeof is.why, fmt, ap);
  va_end (ap);
  return ml_issues_add (issues, &is);
}

/* The constraints of sim/constraints.h on any plan. */
static int
check_constraints (const MlBuffers *bufs, const MlPlan *plan, MlIssues *issues)
{
  size_t n = bufs->n;
  uint64_t zc_align = bufs->zero_copy_align ? bufs->zero_copy_align : bufs->align;
  /* buffers per segment, to find who shares a zero-copy buffer's segment */
  size_t *per_seg = calloc (plan->n_segments + 1, sizeof *per_seg);
  if (!per_seg)
    return ML_ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (bufs->buf[i].rsize && bufs->buf[i].end > bufs->buf[i].start)
      per_seg[plan->segment[i]]++;
  int rc = 0;
  IdText bs, os, cs, as;   /* the buffers named in a message */
  for (size_t i = 0; i < n && rc == 0; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      uint32_t g = plan->segment[i];
      if (b->flags & ML_BUF_ZERO_COPY)
        {
          if (per_seg[g] > 1 && b->rsize && b->end > b->start)
            rc = constraint_issue (issues, bufs, plan, (uint32_t) i, (uint32_t) i,
                                   "zero-copy buffer %.40s shares segment %u with %zu other buffers (it is user memory, outside the arena)",
                                   ID (bufs, i, bs), g, per_seg[g] - 1);
          else if (zc_align > 1 && plan->offset[i] % zc_align)
            rc = constraint_issue (issues, bufs, plan, (uint32_t) i, (uint32_t) i,
                                   "zero-copy buffer %.40s at offset %" PRIu64 " is not aligned to %" PRIu64, ID (bufs, i, bs),
                                   plan->offset[i], zc_align);
        }
      else if (bufs->max_block && g < plan->n_segments && plan->segments[g].size > bufs->max_block)
        rc = constraint_issue (issues, bufs, plan, (uint32_t) i, (uint32_t) i,
                               "segment %u is %" PRIu64 " bytes, over max_block %" PRIu64, g, plan->segments[g].size,
                               bufs->max_block);
      if (rc == 0 && (b->flags & ML_BUF_PINNED) && (g != 0 || plan->offset[i] != b->addr))
        rc = constraint_issue (issues, bufs, plan, (uint32_t) i, (uint32_t) i,
                               "fixed buffer %.40s is at segment %u offset %" PRIu64 ", not at its offset %" PRIu64
                               " of segment 0", ID (bufs, i, bs), g, plan->offset[i], b->addr);
    }
  /* no_reuse and fixed: nobody else in those bytes, at any time */
  for (size_t i = 0; i < n && rc == 0; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      if (!(b->flags & (ML_BUF_NO_REUSE | ML_BUF_PINNED)) || !b->rsize)
        continue;
      uint64_t lo = plan->offset[i], hi = lo + b->rsize;
      for (size_t j = 0; j < n && rc == 0; j++)
        {
          const MlBuffer *o = &bufs->buf[j];
          if (j == i || !o->rsize || o->end <= o->start || plan->segment[j] != plan->segment[i])
            continue;
          if (plan->offset[j] < hi && lo < plan->offset[j] + o->rsize)
            rc = constraint_issue (issues, bufs, plan, (uint32_t) i, (uint32_t) j,
                                   "buffer %.40s uses bytes of %s buffer %.40s [%" PRIu64 ", %" PRIu64 "), which no other buffer may share",
                                   ID (bufs, j, os), (b->flags & ML_BUF_PINNED) ? "fixed" : "no_reuse", ID (bufs, i, bs), lo, hi);
        }
    }
  /* contiguous groups: back to back, in order, in one segment */
  for (size_t g = 0, k = 0; g < bufs->n_groups && rc == 0; g++)
    {
      for (k = g ? bufs->group_end[g - 1] : 0; k + 1 < bufs->group_end[g] && rc == 0; k++)
        {
          uint32_t a = bufs->group_member[k], c = bufs->group_member[k + 1];
          if (plan->segment[a] != plan->segment[c] || plan->offset[c] != plan->offset[a] + bufs->buf[a].rsize)
            rc = constraint_issue (issues, bufs, plan, a, c,
                                   "contiguous group %zu: buffer %.40s is at segment %u offset %" PRIu64
                                   ", not right after buffer %.40s (segment %u, ends at %" PRIu64 ")",
                                   g, ID (bufs, c, cs), plan->segment[c], plan->offset[c], ID (bufs, a, as),
                                   plan->segment[a], plan->offset[a] + bufs->buf[a].rsize);
        }
    }
  free (per_seg);
  return rc;
}

int
ml_check_plan (const MlBuffers *bufs, const MlPlan *plan, MlIssues *issues, MlError *err)
{
  if (plan->n != bufs->n)
    return ml_error_set (err, ML_EINPUT, "the plan places %zu buffers, the trace has %zu", plan->n, bufs->n);
  uint64_t align = plan->align ? plan->align : bufs->align;
  /* One interval tree of live byte ranges over a global address space:
   * segments side by side, each as wide as its real extent (an invalid
   * plan may place past a segment's end). */
  uint64_t *base = calloc (plan->n_segments + 1, sizeof *base);
  uint64_t *ext = calloc (plan->n_segments + 1, sizeof *ext);
  if (!base || !ext)
    {
      free (base);
      free (ext);
      return ml_error_set (err, ML_ENOMEM, "out of memory");
    }
  for (size_t g = 0; g < plan->n_segments; g++)
    ext[g] = plan->segments[g].size;
  int rc = 0;
  for (size_t i = 0; i < plan->n && rc == 0; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      uint32_t g = plan->segment[i];
      if (g >= plan->n_segments)
        {
          IdText bs;
          rc = ml_error_set (err, ML_EINPUT, "buffer %.40s is in segment %u of %zu", ID (bufs, i, bs), g, plan->n_segments);
          break;
        }
      uint64_t top = plan->offset[i] + b->rsize;
      if (top > ext[g])
        ext[g] = top;
      if (align > 1 && plan->offset[i] % align && b->rsize && !(b->flags & ML_BUF_ZERO_COPY))
        {
          MlIssue is = { .kind = ML_ISSUE_MISALIGNED, .a = (uint32_t) i, .b = (uint32_t) i, .tick = b->start,
                         .offset = plan->offset[i], .bytes = b->rsize, .segment = g, .stream_a = b->stream, .stream_b = b->stream };
          snprintf (is.why, sizeof is.why, "offset %" PRIu64 " is not a multiple of the alignment %" PRIu64, plan->offset[i], align);
          if (ml_issues_add (issues, &is) < 0)
            rc = ML_ENOMEM;
        }
      const MlSegment *seg = &plan->segments[g];
      bool grow = seg->flags & ML_SEG_GROWABLE;
      if (b->rsize && b->end > b->start && ((!grow && top > seg->size) || b->start < seg->start || (b->end > seg->end && b->start < b->end)))
        {
          MlIssue is = { .kind = ML_ISSUE_OUTSIDE, .a = (uint32_t) i, .b = (uint32_t) i, .tick = b->start,
                         .offset = plan->offset[i], .bytes = b->rsize, .segment = g, .stream_a = b->stream, .stream_b = b->stream };
          if (!grow && top > seg->size)
            snprintf (is.why, sizeof is.why, "ends at %" PRIu64 ", past the end of segment %u (%" PRIu64 " bytes)", top, g, seg->size);
          else
            snprintf (is.why, sizeof is.why, "lives [%" PRIu64 ", %" PRIu64 ") but segment %u is reserved [%" PRIu64 ", %" PRIu64 ")",
                      b->start, b->end, g, seg->start, seg->end);
          if (ml_issues_add (issues, &is) < 0)
            rc = ML_ENOMEM;
        }
    }
  uint64_t x = 0;
  for (size_t g = 0; g < plan->n_segments && rc == 0; g++)
    {
      base[g] = x;
      if (ext[g] >= UINT64_MAX - x)   /* a plan file may claim anything */
        rc = ml_error_set (err, ML_EINPUT, "the plan's %zu segments add up to more than 2^64 bytes", plan->n_segments);
      else
        x += ext[g] + 1;
    }
  free (ext);
  if (rc < 0)
    {
      free (base);
      return rc;
    }
  MlTreap live;
  ml_treap_init (&live);
  MlSweep sw;
  MlSweepStep st;
  ml_sweep_init (&sw, bufs);
  ConflictCtx c = { bufs, plan, issues, 0, 0, 0, 0 };
  while (rc == 0 && ml_sweep_next (&sw, &st))
    {
      const MlBuffer *b = &bufs->buf[st.buffer];
      /* an empty lifetime [t, t) (freed at the tick it was allocated) or
       * an empty buffer holds no bytes at any tick: it cannot conflict */
      if (!b->rsize || b->end <= b->start)
        continue;
      uint64_t lo = base[plan->segment[st.buffer]] + plan->offset[st.buffer], hi = lo + b->rsize;
      if (st.is_alloc)
        {
          c.b = st.buffer;
          c.lo = lo;
          c.hi = hi;
          ml_treap_overlaps (&live, lo, hi, on_overlap, &c);
          if (c.rc < 0)
            rc = c.rc;
          else if (ml_treap_insert (&live, lo, st.buffer, hi) == ML_TREAP_NIL)
            rc = ML_ENOMEM;
        }
      else
        ml_treap_remove (&live, lo, st.buffer);
    }
  ml_treap_clear (&live);
  free (base);
  if (rc == 0)
    rc = check_constraints (bufs, plan, issues);
  if (rc == ML_ENOMEM)
    return ml_error_set (err, rc, "out of memory");
  return rc;
}
