/* caching-private.h — the model of PyTorch's caching allocator that the
 * `caching` strategy (caching.c) and its conformance replay
 * (caching-conformance.c) both drive; the rules are in caching.h. Not
 * public: only the files of strategies/caching-*.c include it.
 *
 * An MlCache owns its blocks and segments; the owner supplies new_seg /
 * rel_seg / map_seg / unmap_seg, called when the model reserves or
 * releases a segment, or maps or unmaps pages of an expandable one (that
 * is where the strategy reserves plan segments and mappings and the
 * conformance replay hands out the recorded addresses).
 *
 * Expandable segments (PyTorch's ExpandableSegment): a segment is a
 * virtual range of ML_CACHE_EXP_RANGE bytes cut into blocks, each mapped
 * or not; unmapped blocks are never allocated and sit in the pool's
 * `unmapped` set, ordered by (stream, address) as PyTorch's BlockPool
 * keeps them. Reserved bytes are the mapped ones.
 */
#ifndef ML_STRATEGIES_CACHING_PRIVATE_H
#define ML_STRATEGIES_CACHING_PRIVATE_H

#include "sim/alloc-conf.h"
#include "strategies/caching-replay.h"
#include "sim/trace.h"
#include "sim/base/error.h"
#include "sim/base/treap.h"
#include "sim/base/u64map.h"

/* PyTorch's constants (c10/cuda/CUDACachingAllocator.cpp) */
#define ML_CACHE_MIN_BLOCK       ((uint64_t) 512)        /* kMinBlockSize */
#define ML_CACHE_SMALL_SIZE      ((uint64_t) 1 << 20)    /* kSmallSize: largest small-pool request */
#define ML_CACHE_SMALL_BUFFER    ((uint64_t) 2 << 20)    /* kSmallBuffer: small-pool segment */
#define ML_CACHE_LARGE_BUFFER    ((uint64_t) 20 << 20)   /* kLargeBuffer */
#define ML_CACHE_MIN_LARGE_ALLOC ((uint64_t) 10 << 20)   /* kMinLargeAlloc */
#define ML_CACHE_ROUND_LARGE     ((uint64_t) 2 << 20)    /* kRoundLarge */
#define ML_CACHE_NONE            UINT32_MAX              /* no block */
/* The virtual range of an expandable segment. PyTorch reserves 1 1/8 of
 * the device's memory; the emulation, which does not know it, reserves
 * more than any device has (a request never has to span two segments). */
#define ML_CACHE_EXP_RANGE       ((uint64_t) 1 << 42)

/* The settings the model follows (from sim/alloc-conf.h's MlAllocConf). */
typedef struct {
  uint64_t max_split;      /* max_split_size, UINT64_MAX = unset */
  uint64_t max_non_split;  /* max_non_split_rounding: the oversize slack, 20 MiB by default */
  unsigned divisions[ML_AC_INTERVALS];   /* roundup_power2_divisions per interval, 0 = off */
  double   gc_threshold;   /* garbage_collection_threshold, 0 = off */
  double   fraction;       /* per_process_memory_fraction, 0 = not set */
  bool     expandable;
  enum { ML_CACHE_NATIVE = 0, ML_CACHE_ASYNC } backend;  /* ML_CACHE_ASYNC: the cudaMallocAsync model */
} MlCacheConfig;

typedef struct {
  uint64_t addr, size;
  uint32_t seg, prev, next;
  uint32_t stream;          /* dense index */
  bool     allocated, used;
  bool     unmapped;        /* a range of an expandable segment with no pages mapped */
  uint64_t gc_base;         /* gc_calls of its pool when it entered the free set (gc_count_base) */
  uint64_t req;             /* requested bytes of an allocated block */
} MlCacheBlock;

typedef struct {
  uint64_t base, size;      /* size: bytes (an expandable segment: its virtual range) */
  uint64_t mapped;          /* an expandable segment's mapped bytes */
  uint64_t page;            /* an expandable segment's page: 2 MiB small, 20 MiB large */
  uint32_t stream, first;
  bool     small, expandable, alive;
  long     plan_seg;
} MlCacheSegment;

typedef struct MlCache MlCache;
struct MlCache {
  MlCacheConfig   cfg;
  MlCacheBlock   *b;
  size_t          nb, capb;
  uint32_t        free_slots;     /* chain through .next of unused blocks */
  MlCacheSegment *s;
  size_t          ns, caps;
  MlTreap         pool[2];        /* free blocks: a = stream << 48 | size, b = addr, value = size */
  MlTreap         unmapped[2];    /* unmapped blocks: a = stream, b = addr, value = block index */
  MlTreap         segs;           /* alive segments: a = base, value = index */
  MlU64Map        free_at;        /* free block address -> block index */
  /* blocks are kept per (pool, stream), PyTorch's BlockPool per private
   * pool and its (stream, size, address) order: a lane is one such
   * pair, a block's and a segment's `stream` is its lane */
  MlU64Map        streams;        /* pool << 32 | raw stream -> lane */
  uint32_t        n_streams;
  uint32_t       *lane_pool;      /* lane -> pool (the trace's pools index) */
  size_t          cap_lanes;
  bool           *freeable;       /* pool -> no graph or MemPool uses it (released with the default pools) */
  size_t          n_freeable;
  bool            capturing;      /* a CUDA graph capture is under way: release_cached_blocks is skipped */
  uint64_t        reserved;
  uint64_t        capacity;       /* 0 = unlimited (the allowed maximum when a fraction is set) */
  /* per_process_memory_fraction: allowed_memory_maximum (0 = unset), which
   * garbage_collection_threshold is a fraction of; the cudaMallocAsync
   * model limits the requested bytes live instead (live_limit) */
  uint64_t        allowed, live_limit, live;
  uint64_t        alloc_bytes;    /* bytes of the allocated blocks (PyTorch's allocated_bytes) */
  uint64_t        gc_calls[2];    /* get_free_block calls per pool (large, small) */
  uint64_t        gc_released;    /* bytes garbage collection gave back */
  uint64_t        n_seg_alloc, n_seg_free;  /* cudaMalloc / cudaFree (map / unmap) calls */
  uint64_t        visited;
  bool            last_new_segment; /* the last malloc reserved a segment */
  /* The owner retries: malloc returns ML_EOOM at the first refusal, and
   * the owner gives the cache back step by step (_ml_cache_release_cached)
   * and calls malloc again. Unset, malloc runs PyTorch's releases itself. */
  bool            owner_retries;
  bool            failed;         /* out of memory in the stream index */
  uint32_t       *tmp;            /* scratch list of blocks (a release) */
  size_t          n_tmp, cap_tmp;
  /* the owner's side; map_seg / unmap_seg may be NULL */
  int  (*new_seg)  (MlCache *c, uint64_t size, uint32_t stream, MlCacheSegment *seg);
  void (*rel_seg)  (MlCache *c, MlCacheSegment *seg);
  int  (*map_seg)  (MlCache *c, MlCacheSegment *seg, uint64_t offset, uint64_t size);
  void (*unmap_seg)(MlCache *c, MlCacheSegment *seg, uint64_t offset, uint64_t size);
  /* may be NULL: called when malloc is about to reserve or map @bytes
   * more, the capacity having agreed, before anything changed */
  void (*grow)     (MlCache *c, uint64_t bytes);
  void *user;
};

/* An empty cache with @cfg (copied); _ml_cache_clear frees what it holds. */
void     _ml_cache_init (MlCache *c, const MlCacheConfig *cfg);
/* The device's memory is @device_bytes (0 = unlimited): the capacity, or
 * with per_process_memory_fraction F < 1 the allowed maximum F x
 * @device_bytes (setMemoryFraction; garbage collection needs it), or in
 * the cudaMallocAsync model a limit of F x @device_bytes on the requested
 * bytes live. */
void     _ml_cache_set_capacity (MlCache *c, uint64_t device_bytes);
void     _ml_cache_clear (MlCache *c);

/* The settings from @options, PYTORCH_CUDA_ALLOC_CONF's "k:v,k:v" or
 * memlens's "k=v,k=v" (sim/alloc-conf.h; NULL: PyTorch's defaults; the
 * graph loader's reorder / exclude / pin are passed over); ML_EUSAGE
 * names a bad key or value, or a setting the model does not emulate. */
int      _ml_cache_parse_config (const char *options, MlCacheConfig *cfg, MlError *err);
/* The settings to run @t with: @options, else those @t recorded
 * (_ml_cache_options), parsed into @cfg; *@used (may be NULL) the text,
 * in @buf (@n bytes) when recorded. */
int      _ml_cache_config_for (const MlTrace *t, const char *options, MlCacheConfig *cfg, const char **used, char *buf,
                               size_t n, MlError *err);
/* The model's settings from parsed ones (caching-config.c). */
void     _ml_cache_config_from (const MlAllocConf *ac, MlCacheConfig *cfg);
/* The options to run with: @options when given, else the settings a
 * PyTorch snapshot @t (may be NULL) recorded in its tick-0 "allocator
 * settings: ..." mark, copied into @buf (@n bytes), else @options. */
const char *_ml_cache_options (const MlTrace *t, const char *options, char *buf, size_t n);

/* The request size PyTorch rounds @size to. */
uint64_t _ml_cache_round_size (const MlCacheConfig *cfg, uint64_t size);
/* True when a new segment may start at @addr: no live segment holds it,
 * or only the unmapped end of an expandable one (which then ends there). */
bool     _ml_cache_can_start_segment (MlCache *c, uint64_t addr);
/* True when a segment of @size in the @small pool is one the size rules
 * can produce. */
bool     _ml_cache_rule_sized (uint64_t size, bool small);
/* The lane (dense index) of pool @pool and raw stream @raw, assigned on
 * first sight; sets c->failed when out of memory (_ml_cache_malloc then
 * fails). */
uint32_t _ml_cache_lane (MlCache *c, uint32_t pool, uint32_t raw);
/* Marks private pool @pool freeable (its graph or MemPool is gone:
 * release_cached_blocks may give back its cached segments) or not. */
void     _ml_cache_pool_freeable (MlCache *c, uint32_t pool, bool freeable);

/* malloc: returns the block through *out; ML_EOOM when the capacity
 * refuses every way PyTorch tries. c->last_new_segment says whether it
 * reserved (or grew) a segment. */
int      _ml_cache_malloc (MlCache *c, uint64_t req, uint32_t pool, uint32_t raw_stream, uint32_t *out);
/* The retry after refusal number @attempt (from 1) of a request of @req
 * bytes on @raw_stream, in PyTorch's order: first the oversize cached
 * segments (release_available_cached_blocks, with max_split_size set),
 * then every wholly free cached segment (release_cached_blocks). Returns
 * the bytes given back (0: nothing left to give). */
uint64_t _ml_cache_release_cached (MlCache *c, uint32_t attempt, uint64_t req, uint32_t pool, uint32_t raw_stream);
/* garbage_collect_cached_blocks: when reserved is above
 * garbage_collection_threshold x the allowed maximum, gives back the
 * large pool's wholly free segments, oldest first (caching-limits.c);
 * malloc calls it. */
void     _ml_cache_garbage_collect (MlCache *c);
/* torch.cuda.empty_cache(): release_cached_blocks (every wholly free
 * segment back, the whole free pages of expandable ones unmapped; the
 * cudaMallocAsync model: its wholly free chunks, cudaMemPoolTrimTo).
 * Returns the bytes given back. */
uint64_t _ml_cache_empty_cache (MlCache *c);
/* Frees block @i, merging it with its free neighbours. */
int      _ml_cache_free (MlCache *c, uint32_t i);
/* The largest free block (either pool). */
uint64_t _ml_cache_largest_free (const MlCache *c);

/* Adds a segment at @base (one free block; the owner is not called);
 * returns its index or -1 when out of memory. */
long     _ml_cache_seg_add (MlCache *c, uint64_t base, uint64_t size, uint32_t stream, bool small, bool expandable);
/* Adds the mapped range [@addr, @addr + @size) of an expandable segment
 * (a rebuilt state lists each contiguous mapped range as a segment): it
 * joins the (pool, stream) segment whose virtual range holds it, else
 * starts one at @addr. The owner is not called. ML_EINPUT when the range
 * is not unmapped there, ML_ENOMEM. */
int      _ml_cache_exp_add_range (MlCache *c, uint64_t addr, uint64_t size, uint32_t stream, bool small);
/* Unmaps the whole pages of the free blocks inside [@addr, @addr + @size)
 * (a recorded segment_unmap replayed); returns the bytes unmapped. */
uint64_t _ml_cache_unmap_range (MlCache *c, uint64_t addr, uint64_t size);
/* Releases segment @si when it is one free block (calls rel_seg). */
bool     _ml_cache_seg_release (MlCache *c, uint32_t si);
/* The block containing @addr (free or not), ML_CACHE_NONE when no segment
 * has it. */
uint32_t _ml_cache_block_at (MlCache *c, uint64_t addr);
/* Places an allocated block at @addr inside a free block (the rebuilt
 * state, or a resync after a mismatch): its size is the rounded request,
 * plus the rest of the free block when the split rules would not cut it.
 * Returns the block or ML_CACHE_NONE when @addr is not free. */
uint32_t _ml_cache_carve (MlCache *c, uint64_t addr, uint64_t req);

/* Why the cache holds its free bytes now, against a request of @req
 * bytes on @raw_stream (caching-replay.h, caching-strand.c). O(free
 * blocks). */
void     _ml_cache_strands (MlCache *c, uint64_t req, uint32_t pool, uint32_t raw_stream, MlStrandBreakdown *out);

/* Callbacks of _ml_cache_rebuild (either may be NULL): @segment after the
 * segment (or mapped range) of tick-0 event @k went in, @block after the
 * live block of alloc event @k was carved as block @i. A negative return
 * stops the rebuild with it. */
typedef struct {
  int  (*segment) (void *user, size_t k, bool small);
  int  (*block)   (void *user, size_t k, uint32_t i);
  void  *user;
} MlCacheRebuildCb;

/* Puts @c (empty, its owner's callbacks set) in the state the snapshot
 * @t recorded at its trace's first event: its tick-0 segments (plain, and
 * the mapped ranges of expandable ones, one segment per pool and stream)
 * at their addresses, then its live blocks carved at their addresses from
 * the highest down (caching-state.c). The owner is not called. Sets
 * *@end0 to the first event after tick 0. ML_EINPUT names a block or
 * range that does not fit, ML_ENOMEM. */
int      _ml_cache_rebuild (MlCache *c, const MlTrace *t, const MlCacheRebuildCb *cb, size_t *end0, MlError *err);

#endif
