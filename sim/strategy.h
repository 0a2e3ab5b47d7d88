/* strategy.h — the contract every allocation strategy implements.
 *
 * sim/ declares it, strategies/ implements it, and the simulation driver
 * (sim.h) calls it; sim/ never includes anything from strategies/.
 *
 * Online strategies replay requests in order with no knowledge of the
 * future: create() -> alloc()/release() ... -> destroy(). They place each
 * buffer in a segment they reserve through the MlSimContext and count the
 * nodes they visit. Offline strategies see every lifetime at once and
 * fill a whole plan in plan().
 *
 * Strategies are deterministic: the same input, knobs and seed give the
 * same plan, byte for byte.
 */
#ifndef ML_STRATEGY_H
#define ML_STRATEGY_H

#include "sim/base/options.h"
#include "sim/base/progress.h"
#include "sim/infeasible.h"
#include "sim/plan.h"

typedef enum { ML_STRATEGY_ONLINE, ML_STRATEGY_OFFLINE } MlStrategyKind;

/* What the call sites need to know about a strategy (MlStrategy.flags). */
enum {
  /* In the default set of compare, report and the viewer: fast on every
   * trace (ml_strategies_default). */
  ML_STRATEGY_DEFAULT  = 1 << 0,
  /* Can prove optimality beyond the lower bound (a search that is
   * optimal when it finishes). Whatever the strategy, the driver marks an
   * offline plan whose peak meets the lower bound optimal. */
  ML_STRATEGY_PROVES_OPTIMAL = 1 << 1,
  /* The recorded plan: what the real allocator did, from the trace's
   * addresses (ML_EUNSUPPORTED without them). Not an allocator: no time,
   * no alternative to diagnose, shown first by comparisons. */
  ML_STRATEGY_RECORDED = 1 << 2,
};

/* The knobs of MlKnobs a strategy reads (MlStrategy.knobs) beyond the two
 * the driver honours for every strategy (align, capacity); a knob given
 * for strategies none of which reads it does not apply. */
typedef enum {
  ML_KNOB_TIME_LIMIT = 1 << 0,
  ML_KNOB_SEED       = 1 << 1,
  ML_KNOB_OPTIONS    = 1 << 2,
  ML_KNOB_CHUNK      = 1 << 3,
  ML_KNOB_RETRIES    = 1 << 4,
  ML_KNOB__END       = 1 << 5,
} MlKnob;

/* The knob's command-line name without the dashes ("time-limit"), "?"
 * for anything but one ML_KNOB_ bit. */
const char *ml_knob_name (MlKnob knob);


/* Knobs every strategy honours where it applies. */
typedef struct {
  uint64_t    align;         /* bytes; 0 = the trace's default           */
  uint64_t    capacity;      /* bytes; 0 = unlimited                      */
  uint64_t    chunk;         /* pool chunk size, default 4 MiB            */
  double      time_limit;    /* seconds; 0 = the strategy's default       */
  uint32_t    retries;       /* retries on allocation failure, default 3  */
  uint64_t    seed;          /* for randomised improvers                  */
  const char *options;       /* strategy-specific "k=v,k=v" (borrowed)    */
  const MlProgress *progress;/* may be NULL                               */
  /* may be NULL: where a fit search that proves the capacity infeasible
   * (ML_EINFEASIBLE) names its irreducible infeasible subset (exact);
   * caller-owned, cleared with ml_infeasible_clear() */
  MlInfeasible *infeasible;
} MlKnobs;

void ml_knobs_init (MlKnobs *knobs);

/* What an online strategy is asked for. */
typedef struct {
  uint32_t buffer;     /* index in MlBuffers */
  uint64_t size;       /* rounded bytes */
  uint64_t requested;  /* requested bytes */
  uint32_t stream;
  uint64_t tick;
} MlRequest;

typedef struct {
  uint32_t segment;
  uint64_t offset;
} MlPlacement;

/* The driver's side of an online run. */
typedef struct MlSimContext MlSimContext;

/* Reserves a new segment of @size bytes at the current tick; returns its
 * index in the plan, or -1 when out of memory. When @growable is set the
 * segment's reserved size follows its high-water mark. */
long ml_sim_reserve (MlSimContext *ctx, uint64_t size, uint32_t stream, uint32_t flags);
/* Says which of the trace's memory pools (MlTrace.pools index) segment
 * @segment serves (0, the default pools, unless said). */
void ml_sim_set_pool (MlSimContext *ctx, uint32_t segment, uint32_t pool);
/* Says that the strategy could not allocate its own state (from
 * release(), which returns nothing): the driver ends the run with
 * ML_ENOMEM "out of memory" after this step. */
void ml_sim_out_of_memory (MlSimContext *ctx);
/* Releases segment @segment at the current tick. */
void ml_sim_release (MlSimContext *ctx, uint32_t segment);
/* Grows a segment (expandable segments map more pages). */
void ml_sim_resize  (MlSimContext *ctx, uint32_t segment, uint64_t size);
/* Pages of a segment reserved with ML_SEG_PAGED: maps [@offset, @offset +
 * @size) from the current tick (its reserved bytes) / ends the mappings
 * inside it. 0, or -1 when out of memory. */
int  ml_sim_map     (MlSimContext *ctx, uint32_t segment, uint64_t offset, uint64_t size);
int  ml_sim_unmap   (MlSimContext *ctx, uint32_t segment, uint64_t offset, uint64_t size);
/* Bytes reserved right now (all live segments; growable: high water). */
uint64_t ml_sim_reserved (const MlSimContext *ctx);
/* The strategy's internal waste right now: bytes of its live blocks beyond
 * the rounded sizes; the driver keeps its value at the lower-bound tick
 * (plan->block_waste). */
void ml_sim_block_waste (MlSimContext *ctx, uint64_t bytes);
const MlBuffers *ml_sim_buffers (const MlSimContext *ctx);

typedef struct MlStrategy {
  const char     *name;
  const char     *summary;   /* one line for --help and reports */
  MlStrategyKind  kind;
  unsigned        flags;     /* ML_STRATEGY_DEFAULT | ... */
  unsigned        knobs;     /* the MlKnob bits it reads */
  /* The keys its knobs->options understand, NULL-terminated (NULL: none). */
  const char *const *options;

  /* online */
  int  (*create)  (MlSimContext *ctx, const MlKnobs *knobs, void **state, MlError *err);
  /* Places @req; returns 0, ML_EOOM when the capacity refuses it (the
   * driver records the OOM and replays the request without a capacity so
   * the run can go on), or another error. Adds to *visited. */
  int  (*alloc)   (void *state, const MlRequest *req, MlPlacement *out, uint64_t *visited);
  void (*release) (void *state, const MlRequest *req, const MlPlacement *at, uint64_t *visited);
  /* Largest block the strategy could hand out now without reserving more
   * (for the OOM diagnosis); may be NULL. */
  uint64_t (*largest_free) (void *state);
  /* Retries: after a refusal, gives cached memory back to the device
   * (retry @attempt, from 1) and returns the bytes released; the driver
   * then asks alloc() again, up to knobs->retries times, and stops at a
   * retry that released nothing. NULL: the strategy caches nothing, so
   * --retries does not apply to it. */
  uint64_t (*release_cached) (void *state, uint32_t attempt, const MlRequest *req);
  /* Called after an OOM: go on without the capacity. May be NULL. */
  void (*lift_capacity) (void *state);
  void (*destroy) (void *state);

  /* offline */
  int  (*plan)    (const MlBuffers *bufs, const MlKnobs *knobs, MlPlan *plan, MlError *err);
} MlStrategy;

/* The recorded plan (ML_STRATEGY_RECORDED) is declared in sim/recorded.h. */

#endif
