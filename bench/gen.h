/* gen.h — synthetic allocation traces for benchmarks: a live set that
 * hovers around a target size, sizes from a chosen distribution, several
 * streams, deterministic for a seed. */
#ifndef ML_BENCH_GEN_H
#define ML_BENCH_GEN_H

#include "sim/sim.h"
#include "sim/trace.h"

typedef enum { GEN_UNIFORM, GEN_LOGNORMAL, GEN_POW2 } GenDist;

typedef struct {
  uint64_t events;     /* alloc + free events */
  uint64_t live;       /* target live-set size (buffers) */
  GenDist  dist;
  uint64_t min_size, max_size;
  uint32_t streams;
  uint64_t seed;
} GenParams;

void gen_params_init (GenParams *p);
/* Parses "uniform", "lognormal", "pow2". */
int  gen_parse_dist  (const char *s, GenDist *d);
/* Appends the events to @t (ids 1.., ticks = indexes, no addresses). */
int  gen_trace       (const GenParams *p, MlTrace *t);

/* The planners' synthetic instance: @buffers buffers, a live set of about
 * @live, log-normal sizes, as lifetimes (alignment 0: the default). On
 * success *t and *b are the caller's (ml_buffers_free, ml_trace_free). */
int  gen_buffers     (uint64_t buffers, uint64_t live, MlTrace **t, MlBuffers **b, MlError *err);

/* Seconds of CPU the process has used (every thread). */
double gen_cpu_now (void);
/* splitmix64: the next 64 random bits of the stream @s, and a double in
 * [0, 1) from its top 53 (every generator here draws from these) */
uint64_t gen_next (uint64_t *s);
double   gen_unit (uint64_t *s);

/* The training-run shape (gen-training.c): parameters that live
 * throughout, activations saved across the forward/backward turn, short
 * temporaries, gradients until the optimizer; about @buffers buffers
 * (whole iterations: a few thousand more), ids 1.., ticks = indexes.
 * Appends to @t; -1 when out of memory. */
int  gen_training    (uint64_t buffers, uint64_t seed, MlTrace *t);

#endif
