/* genetic.c — a genetic algorithm over buffer orders (see genetic.h). */
#include "strategies/genetic.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "strategies/peak-order.h"
#include "strategies/planner-private.h"

typedef struct {
  uint64_t generations;   /* 0 = until the time limit */
  uint32_t population;    /* both islands together */
  uint32_t threads;       /* 1 or 2 */
} GeneticOptions;

static const char *const genetic_keys[] = { "generations", "population", "threads", NULL };

static int
genetic_option (void *user, const char *key, const char *value, MlError *err)
{
  GeneticOptions *o = user;
  char *end;
  unsigned long long v = strtoull (value, &end, 10);
  bool number = *value && !*end && value[0] != '-';
  if (strcmp (key, "generations") == 0)
    {
      if (!number || v == 0)
        return ml_error_set (err, ML_EUSAGE, "genetic: generations \"%s\" is not a positive count", value);
      o->generations = v;
      return 0;
    }
  if (strcmp (key, "population") == 0)
    {
      if (!number || v < 4 || v > 1000 || v % 2)
        return ml_error_set (err, ML_EUSAGE, "genetic: population \"%s\" is not an even count from 4 to 1000", value);
      o->population = (uint32_t) v;
      return 0;
    }
  if (strcmp (key, "threads") == 0)
    {
      if (!number || (v != 1 && v != 2))
        return ml_error_set (err, ML_EUSAGE, "genetic: threads \"%s\" is not 1 or 2 (one per population half)", value);
      o->threads = (uint32_t) v;
      return 0;
    }
  return ml_error_set (err, ML_EUSAGE, "genetic: unknown option \"%s\" (known: generations=N, population=N, threads=1|2)", key);
}

static inline uint64_t
next_rand (uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* --- individuals ------------------------------------------------------ */

typedef struct {
  uint32_t *order;     /* a permutation of 0..n-1 */
  uint64_t *off;       /* its decoded plan */
  uint64_t  peak;
  double    excess;    /* bytes x ticks above the lower bound */
  uint64_t  born;      /* decode number in its island: a total order on ties */
} Ind;

/* Better: lower peak, then less above the lower bound, then older. */
static bool
better (const Ind *a, const Ind *b)
{
  if (a->peak != b->peak)
    return a->peak < b->peak;
  if (a->excess != b->excess)
    return a->excess < b->excess;
  return a->born < b->born;
}

static void
ind_copy (Ind *dst, const Ind *src, size_t n)
{
  memcpy (dst->order, src->order, n * sizeof *dst->order);
  memcpy (dst->off, src->off, n * sizeof *dst->off);
  dst->peak = src->peak;
  dst->excess = src->excess;
  dst->born = src->born;
}

typedef struct {
  uint64_t top;
  uint32_t b;
} TopKey;

static int
cmp_top (const void *x, const void *y)
{
  const TopKey *a = x, *b = y;
  if (a->top != b->top)
    return a->top < b->top ? -1 : 1;
  return a->b < b->b ? -1 : a->b > b->b;
}

/* --- an island: half the population and the thread that evolves it ---- */

typedef struct {
  const MlBuffers *bufs;
  const MlKnobs   *knobs;
  double           deadline;   /* ml_now () seconds; 0 = none */
  size_t           mu, lambda; /* per island: kept, children per generation */
} Shared;

typedef struct {
  const Shared *sh;
  int        id;
  MlPlacer  *p;
  uint64_t   rng;
  Ind       *slot;       /* mu + lambda individuals' storage */
  Ind      **pop;        /* the first n_pop are the population, best first */
  size_t     n_pop;
  uint32_t  *pos;        /* scratch: position of each buffer in an order */
  uint8_t   *mark;       /* scratch: OX, lift */
  uint32_t  *scratch;    /* scratch: lift */
  TopKey    *bytop;      /* scratch: buffers by top, for the chain */
  uint32_t  *chain;      /* scratch: the critical chain, top first */
  uint32_t  *held;       /* the order the placer holds, held_len placed */
  size_t     held_len;
  uint64_t  *held_top;   /* peak of held[0..i] */
  uint64_t  *cur_off;    /* offsets of what the placer holds */
  uint64_t   placed;     /* placements made (a decode shares a prefix) */
  uint64_t   decoded;
  bool       out_of_time;
  int        rc;
  MlError    err;
  /* the seed epoch: the greedy orders this island decodes */
  MlOrder    seeds[ML_ORDER__COUNT];
  size_t     n_seeds;
  MlPeakKey  peak_seed[2];   /* then the peak-first order: clique, rest keys */
} Island;

static bool
time_up (Island *is)
{
  if (is->out_of_time)
    return true;
  if ((is->sh->deadline > 0 && ml_now () >= is->sh->deadline) || _ml_cancelled (is->sh->knobs))
    is->out_of_time = true;
  return is->out_of_time;
}

/* Decodes @x's order into its plan. The placer keeps the last decode
 * (held[0..held_len), possibly cut short): only the buffers from the first
 * position where @x's order differs from it are taken out and placed
 * again (the lowest fit depends only on the set already placed, so this is
 * the plan a fresh decode gives). Returns 1 when decoded, 0 when it gave
 * up because the running peak passed @cutoff or the time ran out (@timed:
 * whether the deadline applies), ML_ENOMEM. */
static int
decode (Island *is, Ind *x, uint64_t cutoff, bool timed)
{
  const MlBuffers *bufs = is->sh->bufs;
  size_t n = bufs->n, k = 0;
  while (k < is->held_len && is->held[k] == x->order[k])
    k++;
  if (2 * k < is->held_len - k)
    {
      _ml_placer_reset (is->p);
      k = 0;
    }
  else
    for (size_t i = k; i < is->held_len; i++)
      _ml_placer_remove (is->p, is->held[i]);
  is->held_len = k;
  uint64_t top = k ? is->held_top[k - 1] : 0;
  for (size_t i = k; i < n; i++)
    {
      uint32_t b = x->order[i];
      uint64_t off = _ml_placer_place (is->p, b, 0);
      is->cur_off[b] = off;
      is->held[i] = b;
      is->held_len = i + 1;
      if (bufs->buf[b].rsize && off + bufs->buf[b].rsize > top)
        top = off + bufs->buf[b].rsize;
      is->held_top[i] = top;
      if (top > cutoff)
        return 0;
      if (timed && (i & 255) == 255 && time_up (is))
        return 0;
    }
  if (_ml_placer_failed (is->p))
    return ML_ENOMEM;
  memcpy (x->off, is->cur_off, n * sizeof *x->off);
  is->placed += n - k;
  uint64_t lb = bufs->lower_bound;
  double excess = 0;
  for (size_t b = 0; b < n; b++)
    {
      const MlBuffer *m = &bufs->buf[b];
      uint64_t t = x->off[b] + m->rsize, from = x->off[b] > lb ? x->off[b] : lb;
      if (m->rsize && t > from)
        excess += (double) (t - from) * (double) (m->end - m->start);
    }
  x->peak = top;
  x->excess = excess;
  x->born = is->decoded++;
  return 1;
}

/* Sorts pop[0..k) best first (insertion: small arrays, stable), drops
 * duplicates (same peak and excess: almost surely the same plan) and keeps
 * at most mu. */
static void
truncate_pop (Island *is, size_t k)
{
  Ind **a = is->pop;
  for (size_t i = 1; i < k; i++)
    for (size_t j = i; j > 0 && better (a[j], a[j - 1]); j--)
      {
        Ind *t = a[j]; a[j] = a[j - 1]; a[j - 1] = t;
      }
  size_t kept = 0;
  for (size_t i = 0; i < k; i++)
    {
      if (kept && a[i]->peak == a[kept - 1]->peak && a[i]->excess == a[kept - 1]->excess)
        continue;
      if (kept == is->sh->mu)
        break;
      Ind *t = a[kept]; a[kept] = a[i]; a[i] = t;
      kept++;
    }
  is->n_pop = kept;
}

/* The critical chain of @x's plan: a buffer at the peak, the buffer whose
 * top is its offset and whose lifetime overlaps it, and so on down to
 * offset 0 (the lowest fit puts a buffer at 0 or on a neighbour's top, so
 * the chain always reaches 0). Ties are broken at random. Returns its
 * length; chain[0] is the peak buffer. */
static size_t
critical_chain (Island *is, const Ind *x)
{
  const MlBuffers *bufs = is->sh->bufs;
  size_t n = bufs->n, m = 0;
  for (size_t b = 0; b < n; b++)
    if (bufs->buf[b].rsize && bufs->buf[b].end > bufs->buf[b].start)
      is->bytop[m++] = (TopKey) { x->off[b] + bufs->buf[b].rsize, (uint32_t) b };
  if (!m)
    return 0;
  qsort (is->bytop, m, sizeof *is->bytop, cmp_top);
  /* a random buffer among those at the peak */
  size_t first = m - 1;
  while (first > 0 && is->bytop[first - 1].top == is->bytop[m - 1].top)
    first--;
  uint32_t c = is->bytop[first + next_rand (&is->rng) % (m - first)].b;
  size_t len = 0;
  is->chain[len++] = c;
  while (x->off[c] > 0 && len < n)
    {
      uint64_t want = x->off[c];
      size_t lo = 0, hi = m;
      while (lo < hi)
        {
          size_t mid = lo + (hi - lo) / 2;
          if (is->bytop[mid].top < want)
            lo = mid + 1;
          else
            hi = mid;
        }
      uint32_t pick = UINT32_MAX;
      uint64_t seen = 0;
      for (size_t i = lo; i < m && is->bytop[i].top == want; i++)
        {
          uint32_t b = is->bytop[i].b;
          if (bufs->buf[b].start < bufs->buf[c].end && bufs->buf[c].start < bufs->buf[b].end
              && next_rand (&is->rng) % ++seen == 0)
            pick = b;
        }
      if (pick == UINT32_MAX)
        break;
      c = pick;
      is->chain[len++] = c;
    }
  return len;
}

/* Moves the element at @from to index @to, keeping @pos up to date. */
static void
move_to (uint32_t *order, uint32_t *pos, size_t from, size_t to)
{
  if (from == to)
    return;
  uint32_t e = order[from];
  if (from < to)
    memmove (order + from, order + from + 1, (to - from) * sizeof *order);
  else
    memmove (order + to + 1, order + to, (from - to) * sizeof *order);
  order[to] = e;
  size_t lo = from < to ? from : to, hi = from < to ? to : from;
  for (size_t i = lo; i <= hi; i++)
    pos[order[i]] = (uint32_t) i;
}

/* One mutation of @order (with @pos its inverse) aimed at the critical
 * chain @ch of length @len (of the parent's plan). */
static void
mutate (Island *is, uint32_t *order, uint32_t *pos, const uint32_t *ch, size_t len)
{
  size_t n = is->sh->bufs->n;
  uint64_t r = next_rand (&is->rng) % 10;
  if (len < 2 || r == 9)
    {
      /* anywhere: one buffer to a random place */
      size_t from = next_rand (&is->rng) % n, to = next_rand (&is->rng) % n;
      move_to (order, pos, from, to);
      return;
    }
  /* x: a chain buffer above the bottom, by size (the large ones make the
   * peak; the chain often ends in many tiny ones); y: one under it */
  const MlBuffer *buf = is->sh->bufs->buf;
  uint64_t total = 0;
  for (size_t a = 0; a + 1 < len; a++)
    total += buf[ch[a]].rsize;
  size_t i = 0;
  if (total)
    {
      uint64_t u = next_rand (&is->rng) % total;
      while (i + 2 < len && u >= buf[ch[i]].rsize)
        u -= buf[ch[i++]].rsize;
    }
  size_t j = i + 1 + next_rand (&is->rng) % (len - 1 - i);
  uint32_t x = ch[i], y = ch[j];   /* x rests (through the chain) on y */
  size_t px = pos[x], py = pos[y];
  switch (r)
    {
    case 0: case 1: case 2: case 3:
      /* x before y, so y no longer lifts it */
      if (px > py)
        move_to (order, pos, px, py);
      else if (px > 0)
        move_to (order, pos, px, next_rand (&is->rng) % px);
      break;
    case 4:
      order[px] = y; order[py] = x;
      pos[x] = (uint32_t) py; pos[y] = (uint32_t) px;
      break;
    case 5:
      if (px > 0)
        move_to (order, pos, px, next_rand (&is->rng) % px);
      break;
    case 7: case 8:
      /* lift: every chain buffer above y that overlaps it in time and
       * comes after it goes just before it (in their order), so y rests
       * on them instead of lifting them all */
      {
        const MlBuffer *yb = &buf[y];
        size_t moved = 0;
        memset (is->mark, 0, n);
        for (size_t a = 0; a < j; a++)
          if (pos[ch[a]] > py && buf[ch[a]].start < yb->end && yb->start < buf[ch[a]].end)
            {
              is->mark[ch[a]] = 1;
              moved++;
            }
        if (!moved)
          break;
        /* rebuild [py, n): the marked ones first, then the rest */
        size_t w = py;
        for (size_t a = py; a < n; a++)
          if (is->mark[order[a]])
            is->scratch[w++] = order[a];
        for (size_t a = py; a < n; a++)
          if (!is->mark[order[a]])
            is->scratch[w++] = order[a];
        memcpy (order + py, is->scratch + py, (n - py) * sizeof *order);
        for (size_t a = py; a < n; a++)
          pos[order[a]] = (uint32_t) a;
      }
      break;
    default:
      /* y later: what rests on it may find room below */
      if (py + 1 < n)
        move_to (order, pos, py, py + 1 + next_rand (&is->rng) % (n - py - 1));
      break;
    }
}

/* Order crossover (OX): @child keeps @a's order on a random slice
 * [s, e) and takes the other buffers in @b's order, from e on, wrapping. */
static void
crossover (Island *is, const uint32_t *a, const uint32_t *b, uint32_t *child)
{
  size_t n = is->sh->bufs->n;
  size_t s = next_rand (&is->rng) % n, e = next_rand (&is->rng) % n;
  if (s > e)
    {
      size_t t = s; s = e; e = t;
    }
  e++;
  memset (is->mark, 0, n);
  for (size_t i = s; i < e; i++)
    {
      child[i] = a[i];
      is->mark[a[i]] = 1;
    }
  size_t w = e % n;
  for (size_t k = 0; k < n; k++)
    {
      uint32_t g = b[(e + k) % n];
      if (is->mark[g])
        continue;
      child[w] = g;
      w = (w + 1) % n;
    }
}

/* A parent by binary tournament (the population is sorted best first). */
static const Ind *
tournament (Island *is)
{
  size_t a = next_rand (&is->rng) % is->n_pop, b = next_rand (&is->rng) % is->n_pop;
  return is->pop[a < b ? a : b];
}

/* The seed epoch: decodes this island's greedy orders. */
static void
island_seed (Island *is)
{
  const MlBuffers *bufs = is->sh->bufs;
  for (size_t k = 0; k <= is->n_seeds; k++)   /* the greedy orders, then the peak-first one */
    {
      /* greedy-size's order (island 0's first) is decoded in full under
       * the default limit: there must be a plan; a limit the user gave
       * stops it too, as it stops greedy-size itself */
      bool must = is->id == 0 && k == 0 && !(is->sh->knobs->time_limit > 0);
      if (!must && time_up (is))
        break;
      Ind *x = is->pop[is->n_pop];
      if (k < is->n_seeds)
        is->rc = _ml_greedy_order (bufs, is->seeds[k], x->order, &is->err);
      else
        is->rc = _ml_peak_order (bufs, is->peak_seed[0], is->peak_seed[1], x->order, &is->err);
      if (is->rc < 0)
        return;
      int rc = decode (is, x, UINT64_MAX, !must);
      if (rc < 0)
        {
          is->rc = ml_error_set (&is->err, rc, "genetic: out of memory placing %zu buffers", bufs->n);
          return;
        }
      if (rc == 1)
        is->n_pop++;
    }
  truncate_pop (is, is->n_pop);
}

static void
island_generation (Island *is)
{
  const MlBuffers *bufs = is->sh->bufs;
  size_t n = bufs->n, made = 0;
  if (!is->n_pop)
    return;
  for (size_t c = 0; c < is->sh->lambda; c++)
    {
      if (time_up (is))
        break;
      Ind *child = is->pop[is->n_pop + made];
      const Ind *a = tournament (is);
      if (is->n_pop >= 2 && next_rand (&is->rng) % 4 == 0)
        {
          const Ind *b = tournament (is);
          crossover (is, a->order, b->order, child->order);
        }
      else
        memcpy (child->order, a->order, n * sizeof *child->order);
      for (size_t i = 0; i < n; i++)
        is->pos[child->order[i]] = (uint32_t) i;
      size_t len = critical_chain (is, a);
      size_t times = 1 + (next_rand (&is->rng) % 4 == 0 ? next_rand (&is->rng) % 4 : 0);
      for (size_t t = 0; t < times; t++)
        mutate (is, child->order, is->pos, is->chain, len);
      /* a child above the worst kept cannot enter a full population */
      uint64_t cutoff = is->n_pop == is->sh->mu ? is->pop[is->n_pop - 1]->peak : UINT64_MAX;
      int rc = decode (is, child, cutoff, true);
      if (rc < 0)
        {
          is->rc = ml_error_set (&is->err, rc, "genetic: out of memory placing %zu buffers", n);
          return;
        }
      made += rc == 1;
    }
  truncate_pop (is, is->n_pop + made);
}

typedef struct {
  Island *is;
  bool    seed;   /* the seed epoch, else one generation */
} Job;

static void *
island_run (void *arg)
{
  Job *j = arg;
  if (j->seed)
    island_seed (j->is);
  else
    island_generation (j->is);
  return NULL;
}

/* Runs one epoch on both islands: island 1 on a thread of its own when
 * @threads is 2 (and the thread starts), island 0 on the caller's. */
static void
epoch (Island *isl, bool seed, uint32_t threads)
{
  Job j0 = { &isl[0], seed }, j1 = { &isl[1], seed };
  pthread_t t;
  bool started = threads == 2 && pthread_create (&t, NULL, island_run, &j1) == 0;
  island_run (&j0);
  if (started)
    pthread_join (t, NULL);
  else
    island_run (&j1);
}

/* Each island's best goes to the other when it is strictly better than
 * the other's best (it replaces the other's worst when that one is full). */
static void
migrate (Island *isl, size_t n)
{
  Ind *b0 = isl[0].n_pop ? isl[0].pop[0] : NULL, *b1 = isl[1].n_pop ? isl[1].pop[0] : NULL;
  if (!b0 && !b1)
    return;
  Island *to;
  const Ind *from;
  if (b0 && (!b1 || better (b0, b1)))
    {
      to = &isl[1];
      from = b0;
    }
  else
    {
      to = &isl[0];
      from = b1;
    }
  if (to->n_pop && to->pop[0]->peak == from->peak && to->pop[0]->excess == from->excess)
    return;
  size_t at = to->n_pop < to->sh->mu ? to->n_pop++ : to->n_pop - 1;
  ind_copy (to->pop[at], from, n);
  truncate_pop (to, to->n_pop);
}

static int
island_init (Island *is, const Shared *sh, int id, MlError *err)
{
  size_t n = sh->bufs->n, slots = sh->mu + sh->lambda;
  memset (is, 0, sizeof *is);
  is->sh = sh;
  is->id = id;
  is->rng = (sh->knobs->seed + 1) * 0x9e3779b97f4a7c15ull + (uint64_t) (id + 1) * 0xbf58476d1ce4e5b9ull;
  if (!is->rng)
    is->rng = 1;
  is->slot = calloc (slots, sizeof *is->slot);
  is->pop = calloc (slots, sizeof *is->pop);
  is->pos = malloc (n * sizeof *is->pos);
  is->mark = malloc (n);
  is->bytop = malloc (n * sizeof *is->bytop);
  is->chain = malloc (n * sizeof *is->chain);
  is->held = malloc (n * sizeof *is->held);
  is->scratch = malloc (n * sizeof *is->scratch);
  is->held_top = malloc (n * sizeof *is->held_top);
  is->cur_off = malloc (n * sizeof *is->cur_off);
  if (!is->slot || !is->pop || !is->pos || !is->mark || !is->bytop || !is->chain || !is->held || !is->scratch || !is->held_top || !is->cur_off)
    return ml_error_set (err, ML_ENOMEM, "genetic: out of memory for %zu buffers", n);
  for (size_t i = 0; i < slots; i++)
    {
      is->slot[i].order = malloc (n * sizeof *is->slot[i].order);
      is->slot[i].off = malloc (n * sizeof *is->slot[i].off);
      if (!is->slot[i].order || !is->slot[i].off)
        return ml_error_set (err, ML_ENOMEM, "genetic: out of memory for a population of %zu x %zu buffers", slots, n);
      is->pop[i] = &is->slot[i];
    }
  return _ml_placer_new (sh->bufs, &is->p, err);
}

static void
island_clear (Island *is)
{
  size_t slots = is->sh ? is->sh->mu + is->sh->lambda : 0;
  for (size_t i = 0; is->slot && i < slots; i++)
    {
      free (is->slot[i].order);
      free (is->slot[i].off);
    }
  free (is->slot);
  free (is->pop);
  free (is->pos);
  free (is->mark);
  free (is->bytop);
  free (is->chain);
  free (is->held);
  free (is->scratch);
  free (is->held_top);
  free (is->cur_off);
  _ml_placer_free (is->p);
}

/* converged: no lower peak in this many generations (without generations=N) */
#define STALL 200

static int
genetic_plan (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err)
{
  GeneticOptions opt = { 0, 16, 2 };
  int rc = ml_options_foreach (knobs->options, genetic_option, &opt, err);
  if (rc < 0)
    return rc;
  size_t n = bufs->n;
  if (n == 0)
    return 0;
  double t0 = ml_now ();
  /* generations=N alone runs exactly N (byte-identical runs); a time
   * limit given beside it still stops it */
  double limit = opt.generations && !(knobs->time_limit > 0) ? 0 : _ml_time_limit (knobs, 10.0);
  Shared sh = { bufs, knobs, limit > 0 ? t0 + limit : 0, opt.population / 2, opt.population / 2 };
  Island isl[2];
  memset (isl, 0, sizeof isl);
  if ((rc = island_init (&isl[0], &sh, 0, err)) < 0 || (rc = island_init (&isl[1], &sh, 1, err)) < 0)
    goto out;
  /* the five greedy orders, greedy-size's first: hybrid's plan is in the
   * population from the start */
  static const MlOrder seeds[2][3] = {
    { ML_ORDER_SIZE, ML_ORDER_CONFLICT, ML_ORDER_LIFETIME },
    { ML_ORDER_BREADTH, ML_ORDER_AREA },
  };
  memcpy (isl[0].seeds, seeds[0], 3 * sizeof (MlOrder));
  isl[0].n_seeds = 3;
  memcpy (isl[1].seeds, seeds[1], 2 * sizeof (MlOrder));
  isl[1].n_seeds = 2;
  /* and one peak-first order each (peak-order.h): S_1's first reaches its
   * lower bound */
  isl[0].peak_seed[0] = ML_PEAK_BY_LIFETIME;
  isl[0].peak_seed[1] = ML_PEAK_BY_SIZE;
  isl[1].peak_seed[0] = ML_PEAK_BY_SIZE;
  isl[1].peak_seed[1] = ML_PEAK_BY_LIFETIME;
  epoch (isl, true, opt.threads);
  for (int k = 0; k < 2; k++)
    if (isl[k].rc < 0)
      {
        rc = isl[k].rc;
        *err = isl[k].err;
        goto out;
      }
  migrate (isl, n);
  if (!isl[0].n_pop)
    {
      /* no seed finished within the time limit (migrate moved island 1's
       * into island 0 if it had one) */
      rc = ml_error_set (err, ML_ETIMEOUT, "stopped at the time limit (%.3g s) after placing %zu of %zu buffers in size order; no plan",
                         knobs->time_limit, isl[0].held_len, n);
      goto out;
    }
  uint64_t seed_peak = isl[0].pop[0]->peak, lb = bufs->lower_bound, gen = 0;
  uint64_t best_gen = 0, best_peak = seed_peak;
  for (;;)
    {
      if (_ml_cancelled (knobs))
        {
          rc = ml_error_set (err, ML_ECANCELLED, "genetic: cancelled");
          goto out;
        }
      const Ind *best = isl[0].pop[0];
      if (best->peak <= lb || (opt.generations ? gen >= opt.generations : gen - best_gen >= STALL)
          || isl[0].out_of_time || isl[1].out_of_time || (sh.deadline > 0 && ml_now () >= sh.deadline))
        break;
      epoch (isl, false, opt.threads);
      for (int k = 0; k < 2; k++)
        if (isl[k].rc < 0)
          {
            rc = isl[k].rc;
            *err = isl[k].err;
            goto out;
          }
      migrate (isl, n);
      gen++;
      if (isl[0].pop[0]->peak < best_peak)
        {
          best_peak = isl[0].pop[0]->peak;
          best_gen = gen;
        }
      _ml_report (knobs, opt.generations ? (double) gen / (double) opt.generations
                                         : (ml_now () - t0) / limit, "genetic");
    }
  /* after a migration island 0 holds the best */
  const Ind *best = isl[0].pop[0];
  memcpy (plan->offset, best->off, n * sizeof *plan->offset);
  char note[240];
  snprintf (note, sizeof note,
            "%" PRIu64 " generations, %" PRIu64 " plans decoded; greedy seed peak %" PRIu64 ", best %" PRIu64
            " (generation %" PRIu64 ")%s",
            gen, isl[0].decoded + isl[1].decoded, seed_peak, best->peak, best_gen,
            isl[0].out_of_time || isl[1].out_of_time ? "; time limit reached" : "");
  if (ml_plan_set_note (plan, note) < 0)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory");
  plan->ops = isl[0].decoded + isl[1].decoded;
out:
  island_clear (&isl[0]);
  island_clear (&isl[1]);
  return rc;
}

const MlStrategy ml_strategy_genetic = {
  .name = "genetic",
  .summary = "offline: a genetic algorithm over buffer orders seeded with hybrid's, two threads; never worse than hybrid",
  .kind = ML_STRATEGY_OFFLINE,
  .knobs = ML_KNOB_TIME_LIMIT | ML_KNOB_SEED | ML_KNOB_OPTIONS,
  .options = genetic_keys,
  .plan = genetic_plan,
};
