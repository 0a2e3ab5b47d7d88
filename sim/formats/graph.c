/* graph.c — a computation graph as a trace (graph.h): the document read
 * (graph-read.c), the order chosen (graph-order.c), then the events. */
#include "sim/formats/graph-private.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/base/jsonutil.h"
#include "sim/base/sort.h"
#include "sim/base/units.h"

bool
ml_graph_sniff (const unsigned char *h, size_t len)
{
  return len > 2 && h[0] == '{' && memmem (h, len, "\"memlens-graph\"", 15) != NULL;
}

unsigned
ml_dtype_size (const char *d)
{
  static const struct { const char *name; unsigned size; } t[] = {
    { "f64", 8 }, { "float64", 8 }, { "f32", 4 }, { "float32", 4 }, { "f16", 2 }, { "float16", 2 },
    { "bf16", 2 }, { "bfloat16", 2 }, { "fp8", 1 }, { "f8", 1 }, { "i64", 8 }, { "int64", 8 },
    { "i32", 4 }, { "int32", 4 }, { "i8", 1 }, { "int8", 1 }, { "u8", 1 }, { "uint8", 1 }, { "bool", 1 },
  };
  for (size_t i = 0; d && i < sizeof t / sizeof t[0]; i++)
    if (strcmp (d, t[i].name) == 0)
      return t[i].size;
  return 0;
}

static int
emit (MlTrace *t, MlEventKind kind, uint64_t tick, uint64_t id, uint64_t size, uint32_t name, uint16_t flags)
{
  MlEvent ev = { .tick = tick, .id = id, .size = size, .time_ns = -1, .name = name, .kind = (uint8_t) kind,
                 .flags = flags };
  return ml_trace_append (t, &ev) ? 0 : ML_ENOMEM;
}

static uint16_t
constraint_flags (const MlGraphTensor *t)
{
  return (uint16_t) ((t->zero_copy ? ML_EVF_ZERO_COPY : 0) | (t->no_reuse ? ML_EVF_NO_REUSE : 0));
}

/* The order the trace takes, its buffers' lifetimes, and a note on the
 * reordering (empty when none was asked for). */
typedef struct {
  uint32_t *order;        /* nops positions */
  uint64_t *start, *end;  /* per tensor (roots) */
  uint64_t  fixed_top;    /* where the fixed tensors end: pinned ones go above */
  char      note[256];
} Layout;

static void
layout_free (Layout *l)
{
  free (l->order);
  free (l->start);
  free (l->end);
}

/* The given order, or the reordering asked for when its peak is lower. */
static int
choose_order (MlGraph *g, Layout *l)
{
  size_t n = g->nops;
  uint32_t *best = calloc (n + 1, sizeof *best);
  uint64_t *scratch = calloc (2 * (n + 2), sizeof *scratch);
  l->order = calloc (n + 1, sizeof *l->order);
  l->start = calloc (g->nt + 1, sizeof *l->start);
  l->end = calloc (g->nt + 1, sizeof *l->end);
  int rc = 0;
  if (!l->order || !best || !l->start || !l->end || !scratch)
    {
      rc = ml_error_set (g->err, ML_ENOMEM, "out of memory");
      goto out;
    }
  for (size_t i = 0; i < n; i++)
    l->order[i] = (uint32_t) i;
  uint64_t peak0 = _ml_graph_lifetimes (g, l->order, l->start, l->end, scratch), peak1 = peak0;
  if (g->reorder == ML_GRAPH_REORDER_NONE)
    goto out;
  bool priority = g->reorder == ML_GRAPH_REORDER_PRIORITY;
  const char *how = priority ? "priority" : "memory";
  if ((rc = priority ? _ml_graph_priority_order (g, best) : _ml_graph_memory_order (g, best)) < 0)
    {
      rc = ml_error_set (g->err, rc, "%s: the ops have a dependency cycle", g->path);
      goto out;
    }
  peak1 = _ml_graph_lifetimes (g, best, l->start, l->end, scratch);
  if (peak1 < peak0)
    {
      memcpy (l->order, best, n * sizeof *l->order);
      snprintf (l->note, sizeof l->note, "reorder=%s: live peak %" PRIu64 " -> %" PRIu64 " bytes (-%.2f%%)", how, peak0,
                peak1, 100.0 * (double) (peak0 - peak1) / (double) peak0);
    }
  else
    snprintf (l->note, sizeof l->note, "reorder=%s: kept the given order (live peak %" PRIu64 "; the %s order needs %" PRIu64 ")",
              how, peak0, priority ? "memory-priority" : "memory-aware", peak1);
  _ml_graph_lifetimes (g, l->order, l->start, l->end, scratch);
out:
  free (best);
  free (scratch);
  return rc;
}

static const uint16_t kind_flag[] = { ML_EVF_ACTIVATION, ML_EVF_INPUT, ML_EVF_OUTPUT, ML_EVF_WEIGHT };

/* Tick 0: the buffers live from the start (inputs, weights, pinned and
 * fixed tensors); pinned ones packed in declaration order from the end
 * of the fixed ones (0 when none). */
static int
emit_start (MlGraph *g, const Layout *l, MlTrace *tr)
{
  uint64_t pin_at = l->fixed_top;
  for (size_t i = 0; i < g->nt; i++)
    if (g->t[i].root == i && l->start[i] == 0 && !g->exclude[g->t[i].kind])
      {
        uint16_t flags = ML_EVF_HAS_ID | kind_flag[g->t[i].kind] | constraint_flags (&g->t[i]);
        MlEvent ev = { .tick = 0, .id = i + 1, .size = g->t[i].bytes, .time_ns = -1,
                       .name = ml_strtab_intern0 (tr->strings, g->t[i].name), .kind = ML_EV_ALLOC, .flags = flags };
        if (g->t[i].fixed)
          {
            ev.flags |= ML_EVF_PINNED;
            ev.addr = g->t[i].fixed_at;
          }
        else if (g->pin[g->t[i].kind] && !g->t[i].zero_copy)
          {
            ev.flags |= ML_EVF_PINNED;
            ev.addr = pin_at;
            pin_at += ml_align_up (g->t[i].bytes, g->align);
          }
        if (!ml_trace_append (tr, &ev))
          return ML_ENOMEM;
      }
  return 0;
}

/* The positions that read each tensor, ascending (CSR): an in-place write
 * finds its input's next and last readers by binary search instead of
 * scanning every later op (quadratic in a chain of in-place ops). */
typedef struct {
  size_t   *first;   /* nt + 1: tensor t's readers are pos[first[t] .. first[t + 1]) */
  uint32_t *pos;
} Readers;

static int
readers_index (const MlGraph *g, const uint32_t *order, Readers *r)
{
  size_t n = g->nops, n_reads = 0;
  for (size_t q = 0; q < n; q++)
    n_reads += g->ops[order[q]].n_in;
  r->first = calloc (g->nt + 2, sizeof *r->first);
  r->pos = calloc (n_reads + 1, sizeof *r->pos);
  size_t *fill = calloc (g->nt + 1, sizeof *fill);
  if (!r->first || !r->pos || !fill)
    {
      free (fill);
      return ML_ENOMEM;
    }
  for (size_t q = 0; q < n; q++)
    for (size_t j = 0; j < g->ops[order[q]].n_in; j++)
      r->first[g->ops[order[q]].in[j] + 1]++;
  for (size_t t = 0; t < g->nt; t++)
    r->first[t + 1] += r->first[t];
  for (size_t q = 0; q < n; q++)
    for (size_t j = 0; j < g->ops[order[q]].n_in; j++)
      {
        uint32_t t = g->ops[order[q]].in[j];
        r->pos[r->first[t] + fill[t]++] = (uint32_t) q;
      }
  free (fill);
  return 0;
}

/* The in-place writes of the op at position @p: recorded for
 * ml_check_races(); a mark names each hazard (the overwritten input is
 * read by a later op). */
static int
emit_inplace (MlGraph *g, const Layout *l, const Readers *rd, size_t p, MlTrace *tr)
{
  const MlGraphOp *op = &g->ops[l->order[p]];
  uint64_t tick = p + 1;
  for (size_t k = 0; k < op->n_ip; k++)
    {
      uint32_t victim = op->ip_in[k];
      uint64_t last_read = tick;
      const MlGraphOp *reader = NULL;
      size_t lo = rd->first[victim], hi = rd->first[victim + 1], end_r = hi;
      while (lo < hi)   /* the first reading position after p */
        {
          size_t mid = lo + (hi - lo) / 2;
          if (rd->pos[mid] <= p)
            lo = mid + 1;
          else
            hi = mid;
        }
      if (lo < end_r)
        {
          reader = &g->ops[l->order[rd->pos[lo]]];
          last_read = (uint64_t) rd->pos[end_r - 1] + 1;
        }
      MlInplaceWrite w = { .op_tick = tick, .output_id = g->t[op->ip_out[k]].root + 1,
                           .input_id = g->t[victim].root + 1, .last_read = last_read,
                           .op_name = ml_strtab_intern0 (tr->strings, op->name) };
      if (g->exclude[g->t[g->t[victim].root].kind])
        continue;   /* the buffer is not in the trace */
      if (ml_trace_add_inplace (tr, &w) < 0)
        return ML_ENOMEM;
      if (reader)
        {
          char msg[400];
          snprintf (msg, sizeof msg, "in-place hazard: op \"%s\" writes \"%s\" over \"%s\", which op \"%s\" reads later",
                    op->name, g->t[op->ip_out[k]].name, g->t[victim].name, reader->name);
          if (emit (tr, ML_EV_MARK, tick, g->t[victim].root + 1, 0, ml_strtab_intern0 (tr->strings, msg), ML_EVF_HAS_ID) < 0)
            return ML_ENOMEM;
        }
    }
  return 0;
}

/* Each op at its tick: the frees of the buffers whose last use was
 * before it, its outputs' allocations, its in-place writes. */
static int
emit_ops (MlGraph *g, const Layout *l, MlTrace *tr)
{
  size_t n = g->nops, n_by_end = 0, next_end = 0;
  Readers rd = { 0 };
  /* the roots by end tick (stable), for the frees */
  uint32_t *by_end = calloc (g->nt + 1, sizeof *by_end);
  int rc = ML_ENOMEM;
  if (!by_end)
    goto out;
  for (size_t i = 0; i < g->nt; i++)
    if (g->t[i].root == i && l->start[i] != UINT64_MAX && l->end[i] <= n && !g->exclude[g->t[i].kind])
      by_end[n_by_end++] = (uint32_t) i;
  if (ml_sort_indexes_by_key (by_end, n_by_end, l->end, sizeof *l->end) < 0 || readers_index (g, l->order, &rd) < 0)
    goto out;
  for (size_t p = 0; p < n; p++)
    {
      uint64_t tick = p + 1;
      for (; next_end < n_by_end && l->end[by_end[next_end]] == tick; next_end++)
        if (emit (tr, ML_EV_FREE, tick, by_end[next_end] + 1, 0, 0, ML_EVF_HAS_ID) < 0)
          goto out;
      const MlGraphOp *op = &g->ops[l->order[p]];
      for (size_t k = 0; k < op->n_out; k++)
        {
          uint32_t r = op->out[k];
          if (g->t[r].root != r || l->start[r] != tick || g->exclude[g->t[r].kind])
            continue;
          if (emit (tr, ML_EV_ALLOC, tick, r + 1, g->t[r].bytes, ml_strtab_intern0 (tr->strings, g->t[r].name),
                    ML_EVF_HAS_ID | kind_flag[g->t[r].kind] | constraint_flags (&g->t[r])) < 0)
            goto out;
        }
      if (emit_inplace (g, l, &rd, p, tr) < 0)
        goto out;
    }
  rc = 0;
out:
  free (by_end);
  free (rd.first);
  free (rd.pos);
  return rc;
}

/* The trace of the laid-out graph. */
static int
emit_trace (MlGraph *g, const cJSON *root, const Layout *l, MlTrace **out)
{
  MlTrace *tr = ml_trace_new ();
  if (!tr)
    return ml_error_set (g->err, ML_ENOMEM, "out of memory");
  tr->source = ml_strtab_intern0 (tr->strings, "graph");
  tr->default_align = g->align;
  tr->zero_copy_align = g->zero_copy_align;
  tr->max_block = g->max_block;
  int rc;
  if ((rc = _ml_graph_add_groups (g, root, tr)) < 0)
    goto fail;
  if ((l->note[0] && emit (tr, ML_EV_MARK, 0, 0, 0, ml_strtab_intern0 (tr->strings, l->note), 0) < 0)
      || emit_start (g, l, tr) < 0 || emit_ops (g, l, tr) < 0)
    {
      rc = ml_error_set (g->err, ML_ENOMEM, "out of memory");
      goto fail;
    }
  *out = tr;
  return 0;
fail:
  ml_trace_free (tr);
  return rc;
}

/* The steps, in order. */
static int
build (MlGraph *g, const cJSON *root, const MlLoadOptions *opts, MlTrace **out)
{
  const cJSON *tensors = cJSON_GetObjectItemCaseSensitive (root, "tensors");
  const cJSON *ops = cJSON_GetObjectItemCaseSensitive (root, "ops");
  if (!cJSON_IsArray (tensors) || !cJSON_IsArray (ops))
    return ml_error_set (g->err, ML_EINPUT, "%s: a graph needs \"tensors\" and \"ops\" arrays", g->path);
  int rc;
  if ((rc = _ml_graph_read_settings (g, root, opts)) < 0)
    return rc;
  g->nt = 0;
  g->t = calloc ((size_t) cJSON_GetArraySize (tensors) + 1, sizeof *g->t);
  Layout l = { 0 };
  if ((rc = _ml_graph_flatten_ops (g, ops)) < 0 || (rc = _ml_graph_read_tensors (g, tensors)) < 0
      || (rc = _ml_graph_read_ops (g)) < 0 || (rc = _ml_graph_check_fixed (g, &l.fixed_top)) < 0)
    return rc;
  if ((rc = choose_order (g, &l)) == 0)
    rc = emit_trace (g, root, &l, out);
  layout_free (&l);
  return rc;
}

int
ml_trace_from_graph (const cJSON *root, const char *name, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  MlLoadOptions defaults;
  if (!opts)
    {
      ml_load_options_init (&defaults);
      opts = &defaults;
    }
  MlGraph g = { .path = name, .err = err };
  ml_u64map_init (&g.names);
  int rc = cJSON_IsObject (root) ? build (&g, root, opts, out)
                                 : ml_error_set (err, ML_EINPUT, "%s: a graph is a JSON object", name);
  for (size_t i = 0; g.ops && i < g.nops; i++)
    {
      free (g.ops[i].in);
      free (g.ops[i].out);
      free (g.ops[i].ip_in);
      free (g.ops[i].ip_out);
    }
  free (g.ops);
  free (g.flat);
  free (g.t);
  ml_u64map_clear (&g.names);
  return rc;
}

int
ml_trace_load_graph (const char *path, const MlLoadOptions *opts, MlTrace **out, MlError *err)
{
  cJSON *root;
  int rc = ml_json_read_file (path, (size_t) 1 << 32, &root, err);
  if (rc < 0)
    return rc;
  rc = ml_trace_from_graph (root, path, opts, out, err);
  cJSON_Delete (root);
  return rc;
}
