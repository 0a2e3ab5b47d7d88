#include "bench/gen.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void
gen_params_init (GenParams *p)
{
  p->events = 1000000;
  p->live = 1000;
  p->dist = GEN_LOGNORMAL;
  p->min_size = 256;
  p->max_size = 64u << 20;
  p->streams = 1;
  p->seed = 1;
}

int
gen_parse_dist (const char *s, GenDist *d)
{
  if (!strcmp (s, "uniform")) *d = GEN_UNIFORM;
  else if (!strcmp (s, "lognormal")) *d = GEN_LOGNORMAL;
  else if (!strcmp (s, "pow2")) *d = GEN_POW2;
  else return -1;
  return 0;
}

uint64_t
gen_next (uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double
gen_unit (uint64_t *s)
{
  return (double) (gen_next (s) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t
draw_size (const GenParams *p, uint64_t *s)
{
  double lo = (double) p->min_size, hi = (double) p->max_size, v;
  switch (p->dist)
    {
    case GEN_UNIFORM:
      v = lo + gen_unit (s) * (hi - lo);
      break;
    case GEN_POW2:
      {
        int a = (int) log2 (lo), b = (int) log2 (hi);
        v = ldexp (1.0, a + (int) (gen_next (s) % (uint64_t) (b - a + 1)));
      }
      break;
    default:
      {
        /* log-uniform body with a heavy tail: many small, some large */
        double u1 = gen_unit (s), u2 = gen_unit (s);
        double z = sqrt (-2.0 * log (u1 + 1e-300)) * cos (2 * M_PI * u2);
        double mu = log (lo) + 0.35 * (log (hi) - log (lo)), sigma = (log (hi) - log (lo)) / 5;
        v = exp (mu + sigma * z);
      }
    }
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return (uint64_t) v;
}

int
gen_trace (const GenParams *p, MlTrace *t)
{
  uint64_t s = p->seed;
  uint64_t *live = malloc ((p->live * 2 + 16) * sizeof *live);
  uint32_t *lstream = malloc ((p->live * 2 + 16) * sizeof *lstream);
  if (!live || !lstream)
    {
      free (live);
      free (lstream);
      return -1;
    }
  size_t n = 0, cap = p->live * 2 + 16;
  uint64_t id = 1;
  if (t->cap_events < t->n_events + p->events)
    {
      MlEvent *e = realloc (t->events, (t->n_events + p->events) * sizeof *e);
      if (!e)
        return -1;
      t->events = e;
      t->cap_events = t->n_events + p->events;
    }
  for (uint64_t i = 0; i < p->events; i++)
    {
      double fill = (double) n / (double) p->live;
      bool do_alloc = n == 0 || (n < cap && gen_unit (&s) > fill * 0.5);
      /* the tail of the trace frees what is left */
      if (p->events - i <= n)
        do_alloc = false;
      MlEvent ev = { .tick = t->n_events, .time_ns = -1, .flags = ML_EVF_HAS_ID };
      if (do_alloc)
        {
          ev.kind = ML_EV_ALLOC;
          ev.id = id++;
          ev.size = draw_size (p, &s);
          ev.stream = p->streams > 1 ? (uint32_t) (gen_next (&s) % p->streams) : 0;
          live[n] = ev.id;
          lstream[n] = ev.stream;
          n++;
        }
      else
        {
          size_t k = (size_t) (gen_next (&s) % n);
          ev.kind = ML_EV_FREE;
          ev.id = live[k];
          ev.stream = lstream[k];
          live[k] = live[n - 1];
          lstream[k] = lstream[n - 1];
          n--;
        }
      t->events[t->n_events++] = ev;
    }
  free (live);
  free (lstream);
  return 0;
}

int
gen_buffers (uint64_t buffers, uint64_t live, MlTrace **t, MlBuffers **b, MlError *err)
{
  GenParams gp;
  gen_params_init (&gp);
  gp.events = 2 * buffers;
  gp.live = live;
  gp.dist = GEN_LOGNORMAL;
  *t = ml_trace_new ();
  *b = NULL;
  if (!*t || gen_trace (&gp, *t) < 0)
    {
      ml_trace_free (*t);
      *t = NULL;
      return ml_error_set (err, ML_ENOMEM, "out of memory generating %" PRIu64 " buffers", buffers);
    }
  int rc = ml_buffers_build (*t, 0, b, err);
  if (rc < 0)
    {
      ml_trace_free (*t);
      *t = NULL;
    }
  return rc;
}

double
gen_cpu_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}
