/* graph-order.c — the order the ops run in: the buffers' lifetimes under
 * an order, and the two reorderings of graph.h (memory-aware list
 * scheduling, GE's memory priority). */
#include "sim/formats/graph-private.h"

#include <stdlib.h>
#include <string.h>

#include "sim/base/units.h"

static uint32_t
root_of (const MlGraph *g, uint32_t t)
{
  return g->t[t].root;
}

/* Lifetimes of the roots under @order: start / end ticks; returns the
 * peak of live aligned bytes. */
uint64_t
_ml_graph_lifetimes (const MlGraph *g, const uint32_t *order, uint64_t *start, uint64_t *end,
                     uint64_t *scratch)
{
  size_t n = g->nops;
  for (size_t i = 0; i < g->nt; i++)
    start[i] = UINT64_MAX, end[i] = 0;
  for (size_t i = 0; i < g->nt; i++)
    if (g->t[i].producer < 0 && root_of (g, (uint32_t) i) == i)
      start[i] = 0, end[i] = 1;
  for (size_t p = 0; p < n; p++)
    {
      const MlGraphOp *o = &g->ops[order[p]];
      uint64_t tick = p + 1;
      for (size_t k = 0; k < o->n_out; k++)
        {
          uint32_t r = root_of (g, o->out[k]);
          if (start[r] == UINT64_MAX)
            start[r] = tick;
          if (end[r] < tick + 1)
            end[r] = tick + 1;
        }
      for (size_t k = 0; k < o->n_in; k++)
        {
          uint32_t r = root_of (g, o->in[k]);
          if (end[r] < tick + 1)
            end[r] = tick + 1;
        }
    }
  for (size_t i = 0; i < g->nt; i++)
    {
      uint32_t r = root_of (g, (uint32_t) i);
      if (g->t[i].kind == K_OUTPUT || g->t[i].kind == K_WEIGHT || g->pin[g->t[i].kind] || g->t[r].fixed)
        end[r] = n + 1;
      if (g->pin[g->t[i].kind] || g->t[r].fixed)
        start[r] = 0;
    }
  /* peak: a difference array over ticks 0 .. n + 1 */
  memset (scratch, 0, (n + 2) * sizeof *scratch);
  uint64_t *minus = scratch + n + 2;
  memset (minus, 0, (n + 2) * sizeof *minus);
  for (size_t i = 0; i < g->nt; i++)
    if (root_of (g, (uint32_t) i) == i && start[i] != UINT64_MAX && !g->exclude[g->t[i].kind])
      {
        uint64_t b = ml_align_up (g->t[i].bytes, g->align);
        scratch[start[i]] += b;
        if (end[i] < n + 2)
          minus[end[i]] += b;
      }
  uint64_t live = 0, peak = 0;
  for (size_t k = 0; k < n + 2; k++)
    {
      live = live + scratch[k] - minus[k];
      if (live > peak)
        peak = live;
    }
  return peak;
}

/* The memory-aware topological order (see graph.h). */
int
_ml_graph_memory_order (const MlGraph *g, uint32_t *order)
{
  size_t n = g->nops, nt = g->nt;
  uint32_t *uses = calloc (nt ? nt : 1, sizeof *uses);     /* remaining reads per root */
  uint32_t *missing = calloc (n ? n : 1, sizeof *missing); /* unfinished producers per op */
  bool *done = calloc (n ? n : 1, 1), *made = calloc (nt ? nt : 1, 1);
  size_t n_reads = 0;
  for (size_t o = 0; o < n; o++)
    n_reads += g->ops[o].n_in;
  /* the readers of each tensor (CSR), one entry per read */
  size_t *first = calloc (nt + 1, sizeof *first);
  uint32_t *readers = calloc (n_reads ? n_reads : 1, sizeof *readers);
  if (!uses || !missing || !done || !made || !first || !readers)
    {
      free (uses), free (missing), free (done), free (made), free (first), free (readers);
      return ML_ENOMEM;
    }
  for (size_t o = 0; o < n; o++)
    for (size_t k = 0; k < g->ops[o].n_in; k++)
      {
        uses[root_of (g, g->ops[o].in[k])]++;
        if (g->t[g->ops[o].in[k]].producer >= 0)
          missing[o]++;
        first[g->ops[o].in[k] + 1]++;
      }
  for (size_t i = 0; i < nt; i++)
    first[i + 1] += first[i];
  {
    size_t *fill = calloc (nt + 1, sizeof *fill);
    if (!fill)
      {
        free (uses), free (missing), free (done), free (made), free (first), free (readers);
        return ML_ENOMEM;
      }
    for (size_t o = 0; o < n; o++)
      for (size_t k = 0; k < g->ops[o].n_in; k++)
        {
          uint32_t t = g->ops[o].in[k];
          readers[first[t] + fill[t]++] = (uint32_t) o;
        }
    free (fill);
  }
  for (size_t i = 0; i < nt; i++)
    made[i] = g->t[i].producer < 0;
  for (size_t p = 0; p < n; p++)
    {
      long best = -1;
      int64_t best_score = 0;
      uint64_t best_alloc = 0;
      for (size_t o = 0; o < n; o++)
        {
          if (done[o] || missing[o])
            continue;
          const MlGraphOp *op = &g->ops[o];
          int64_t freed = 0, alloc = 0;
          for (size_t k = 0; k < op->n_out; k++)
            {
              uint32_t r = root_of (g, op->out[k]);
              if (r == op->out[k])
                alloc += (int64_t) ml_align_up (g->t[r].bytes, g->align);
            }
          for (size_t k = 0; k < op->n_in; k++)
            {
              uint32_t r = root_of (g, op->in[k]);
              size_t here = 0;
              for (size_t j = 0; j < op->n_in; j++)
                here += root_of (g, op->in[j]) == r;
              bool first_read = true;
              for (size_t j = 0; j < k; j++)
                first_read &= root_of (g, op->in[j]) != r;
              bool persistent = g->t[r].kind == K_OUTPUT || g->t[r].kind == K_WEIGHT;
              for (size_t j = 0; j < op->n_out; j++)
                persistent |= root_of (g, op->out[j]) == r;
              if (first_read && !persistent && uses[r] == here)
                freed += (int64_t) ml_align_up (g->t[r].bytes, g->align);
            }
          int64_t score = freed - alloc;
          if (best < 0 || score > best_score || (score == best_score && (uint64_t) alloc > best_alloc))
            best = (long) o, best_score = score, best_alloc = (uint64_t) alloc;
        }
      if (best < 0)
        {
          free (uses), free (missing), free (done), free (made), free (first), free (readers);
          return ML_EINPUT;   /* a cycle: cannot happen after validation */
        }
      order[p] = (uint32_t) best;
      done[best] = true;
      const MlGraphOp *op = &g->ops[best];
      for (size_t k = 0; k < op->n_in; k++)
        uses[root_of (g, op->in[k])]--;
      for (size_t k = 0; k < op->n_out; k++)
        if (!made[op->out[k]])
          {
            uint32_t t = op->out[k];
            made[t] = true;
            for (size_t r = first[t]; r < first[t + 1]; r++)
              missing[readers[r]]--;
          }
    }
  free (uses), free (missing), free (done), free (made), free (first), free (readers);
  return 0;
}

/* GE's memory-priority order (see graph.h): a depth-first walk back from
 * the ops nobody waits for, each op emitted right after the producers of
 * its inputs, the producer of the largest input first, so each chain runs
 * just before its consumer. Iterative: O(ops + reads log reads). */
int
_ml_graph_priority_order (const MlGraph *g, uint32_t *order)
{
  size_t n = g->nops, nt = g->nt, emitted = 0;
  uint8_t *state = calloc (n ? n : 1, 1);   /* 0 new, 1 on the stack, 2 emitted */
  bool *read = calloc (nt ? nt : 1, 1);
  size_t max_in = 1;
  for (size_t o = 0; o < n; o++)
    if (g->ops[o].n_in > max_in)
      max_in = g->ops[o].n_in;
  uint32_t *stack = malloc ((n ? n : 1) * sizeof *stack);
  size_t *pos = calloc (n ? n : 1, sizeof *pos);      /* next input to visit */
  uint32_t *prod = malloc ((n ? n : 1) * max_in * sizeof *prod);   /* per op: producers, largest input first */
  size_t *n_prod = calloc (n ? n : 1, sizeof *n_prod);
  if (!state || !read || !stack || !pos || !prod || !n_prod)
    {
      free (state), free (read), free (stack), free (pos), free (prod), free (n_prod);
      return ML_ENOMEM;
    }
  for (size_t o = 0; o < n; o++)
    {
      const MlGraphOp *op = &g->ops[o];
      uint32_t *p = prod + o * max_in;
      for (size_t k = 0; k < op->n_in; k++)
        {
          read[op->in[k]] = true;
          long pr = g->t[op->in[k]].producer;
          if (pr < 0 || (size_t) pr == o)
            continue;
          bool dup = false;
          for (size_t j = 0; j < n_prod[o]; j++)
            dup |= p[j] == (uint32_t) pr;
          if (dup)
            continue;
          /* insertion by the size of the input, largest first (stable) */
          size_t j = n_prod[o]++;
          uint64_t b = g->t[op->in[k]].bytes;
          while (j > 0 && g->t[op->in[k]].bytes > 0 && b > 0)
            {
              uint64_t bj = 0;
              const MlGraphOp *q = &g->ops[p[j - 1]];
              for (size_t m = 0; m < q->n_out; m++)
                for (size_t r = 0; r < op->n_in; r++)
                  if (q->out[m] == op->in[r] && g->t[op->in[r]].bytes > bj)
                    bj = g->t[op->in[r]].bytes;
              if (bj >= b)
                break;
              p[j] = p[j - 1];
              j--;
            }
          p[j] = (uint32_t) pr;
        }
    }
  /* roots: ops none of whose outputs is read (sinks), in the given order,
   * then anything left */
  for (int pass = 0; pass < 2; pass++)
    for (size_t r = 0; r < n; r++)
      {
        if (state[r])
          continue;
        if (pass == 0)
          {
            bool sink = true;
            for (size_t k = 0; k < g->ops[r].n_out; k++)
              sink &= !read[g->ops[r].out[k]];
            if (!sink)
              continue;
          }
        size_t sp = 0;
        stack[sp++] = (uint32_t) r;
        state[r] = 1;
        while (sp)
          {
            uint32_t o = stack[sp - 1];
            if (pos[o] < n_prod[o])
              {
                uint32_t p = prod[o * max_in + pos[o]++];
                if (state[p] == 0)
                  {
                    state[p] = 1;
                    stack[sp++] = p;
                  }
                continue;
              }
            state[o] = 2;
            order[emitted++] = o;
            sp--;
          }
      }
  free (state), free (read), free (stack), free (pos), free (prod), free (n_prod);
  return emitted == n ? 0 : ML_EINPUT;
}
