/* gen-training.c — the training-run shape of bench/gen.h: the buffers a
 * deep network's training iterations allocate, as a planner sees them.
 *
 * A model of 96 layers, each with 8 parameters (log-normal sizes around
 * 4 MiB, allocated first and never freed: they live through the whole
 * trace, the shape of issue 26's file) is trained for as many iterations
 * as the buffer count asks. An op is one tick: it first frees what is due
 * there, then allocates.
 *   - forward, 24 ops a layer: an output (log-normal around 1 MiB, the
 *     layer's scale), saved for the backward pass one time in three (freed
 *     when the backward pass has gone through its layer: lifetimes nested
 *     around the turn), else freed after a few ops (geometric, mean 3);
 *     one op in two also a workspace freed at the next op;
 *   - backward, 24 ops a layer, last layer first: a gradient freed after a
 *     few ops (mean 2), a workspace one op in two; at the layer's end its
 *     saved outputs are freed and its parameters' gradients allocated
 *     (freed by the optimizer);
 *   - optimizer, one op a parameter: a workspace, and the gradient freed.
 * Sizes are multiples of 512 bytes (PyTorch's rounding). Deterministic for
 * a seed. On the compiler plans (docs/performance.md) half the buffers
 * live 4-6 ticks, 2-6 % over half the trace, with 1,100-3,200 live at the
 * peak; this shape has the same mix at 10^6 buffers. */
#include "bench/gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LAYERS = 96, OPS = 24, PARAMS = 8, RING = 64 };

typedef struct {
  uint64_t *v;
  size_t    n, cap;
} Ids;

typedef struct {
  MlTrace  *t;
  uint64_t  s, id, tick, allocs, want;
  Ids       due[RING];          /* frees due at an op, by op % RING */
  Ids       saved[LAYERS];      /* outputs kept for the backward pass */
  Ids       grads;              /* parameter gradients until the optimizer */
  uint64_t  param_size[LAYERS * PARAMS];
  bool      oom;
} Gen;

/* log-normal around @median with log-sd @sigma, rounded up to 512 bytes */
static uint64_t
lognormal (Gen *g, double median, double sigma)
{
  double u1 = gen_unit (&g->s), u2 = gen_unit (&g->s);
  double z = sqrt (-2.0 * log (u1 + 1e-300)) * cos (2 * M_PI * u2);
  double v = median * exp (sigma * z);
  if (v < 512)
    v = 512;
  if (v > 1e9)
    v = 1e9;
  return ((uint64_t) v + 511) / 512 * 512;
}

/* ops until a short-lived buffer is freed: geometric with @mean, 1 or more */
static uint64_t
geometric (Gen *g, double mean)
{
  uint64_t k = 1;
  while (k < RING - 1 && gen_unit (&g->s) > 1.0 / mean)
    k++;
  return k;
}

static void
push (Gen *g, Ids *l, uint64_t id)
{
  if (l->n == l->cap)
    {
      size_t cap = l->cap ? 2 * l->cap : 16;
      uint64_t *v = realloc (l->v, cap * sizeof *v);
      if (!v)
        {
          g->oom = true;
          return;
        }
      l->v = v;
      l->cap = cap;
    }
  l->v[l->n++] = id;
}

static void
emit (Gen *g, MlEventKind kind, uint64_t id, uint64_t size)
{
  MlTrace *t = g->t;
  if (t->n_events == t->cap_events)
    {
      size_t cap = t->cap_events ? 2 * t->cap_events : 1024;
      MlEvent *e = realloc (t->events, cap * sizeof *e);
      if (!e)
        {
          g->oom = true;
          return;
        }
      t->events = e;
      t->cap_events = cap;
    }
  t->events[t->n_events] = (MlEvent) { .tick = t->n_events, .time_ns = -1, .flags = ML_EVF_HAS_ID,
                                       .kind = (uint8_t) kind, .id = id, .size = size };
  t->n_events++;
}

static uint64_t
alloc (Gen *g, uint64_t size)
{
  uint64_t id = g->id++;
  emit (g, ML_EV_ALLOC, id, size);
  g->allocs++;
  return id;
}

static void
free_list (Gen *g, Ids *l)
{
  for (size_t k = 0; k < l->n; k++)
    emit (g, ML_EV_FREE, l->v[k], 0);
  l->n = 0;
}

/* The next op: the frees due there first. */
static void
op (Gen *g)
{
  g->tick++;
  free_list (g, &g->due[g->tick % RING]);
}

static void
free_after (Gen *g, uint64_t id, uint64_t ops)
{
  push (g, &g->due[(g->tick + ops) % RING], id);
}

static void
iteration (Gen *g)
{
  for (int l = 0; l < LAYERS && !g->oom; l++)
    {
      double scale = 1.0 + (double) (l % 12) / 4;   /* layers of a few widths */
      for (int o = 0; o < OPS; o++)
        {
          op (g);
          uint64_t out = alloc (g, lognormal (g, scale * (1 << 20), 1.0));
          if (gen_unit (&g->s) < 1.0 / 3)
            push (g, &g->saved[l], out);
          else
            free_after (g, out, geometric (g, 3));
          if (gen_unit (&g->s) < 0.5)
            free_after (g, alloc (g, lognormal (g, 256 << 10, 1.5)), 1);
        }
    }
  for (int l = LAYERS - 1; l >= 0 && !g->oom; l--)
    {
      double scale = 1.0 + (double) (l % 12) / 4;
      for (int o = 0; o < OPS; o++)
        {
          op (g);
          free_after (g, alloc (g, lognormal (g, scale * (1 << 20), 1.0)), geometric (g, 2));
          if (gen_unit (&g->s) < 0.5)
            free_after (g, alloc (g, lognormal (g, 256 << 10, 1.5)), 1);
        }
      op (g);
      free_list (g, &g->saved[l]);
      for (int p = 0; p < PARAMS; p++)
        push (g, &g->grads, alloc (g, g->param_size[l * PARAMS + p]));
    }
  for (size_t k = 0; k < g->grads.n && !g->oom; k++)
    {
      op (g);
      free_after (g, alloc (g, lognormal (g, 64 << 10, 1.0)), 1);
      emit (g, ML_EV_FREE, g->grads.v[k], 0);
    }
  g->grads.n = 0;
}

int
gen_training (uint64_t buffers, uint64_t seed, MlTrace *t)
{
  Gen *g = calloc (1, sizeof *g);
  if (!g)
    return -1;
  g->t = t;
  g->s = seed;
  g->id = 1;
  g->want = buffers;
  for (int k = 0; k < LAYERS * PARAMS; k++)
    {
      g->param_size[k] = lognormal (g, 4 << 20, 1.5);
      alloc (g, g->param_size[k]);   /* never freed: lives to the end */
    }
  while (g->allocs < g->want && !g->oom)
    iteration (g);
  /* the frees still due */
  for (int k = 1; k <= RING && !g->oom; k++)
    op (g);
  bool oom = g->oom;
  for (int k = 0; k < RING; k++)
    free (g->due[k].v);
  for (int l = 0; l < LAYERS; l++)
    free (g->saved[l].v);
  free (g->grads.v);
  free (g);
  return oom ? -1 : 0;
}
