/* alloc-conf.h — PyTorch's CUDA allocator settings
 * (PYTORCH_CUDA_ALLOC_CONF), parsed once, every key kept.
 *
 * The syntax is PyTorch's (c10/core/AllocatorConfig.cpp, lexArgs and
 * parseArgs; c10/cuda/CUDAAllocatorConfig.cpp, parseArgs): "key:value"
 * pairs separated by commas, spaces ignored, and for
 * roundup_power2_divisions either one number or a list
 * "[256:1,512:2,>:8]" of power-of-two interval sizes in MiB (the first
 * entry also covers every smaller interval, ">" every interval from the
 * last one named). memlens's own "k=v" option form is the same with '='
 * for ':', and a few extensions: max_split_size_mb:unlimited, 1 / 0 /
 * true / false for booleans, roundup_power2_divisions:0 (off),
 * max_split_size:BYTES (as a snapshot's allocator_settings has it).
 *
 * Every key PyTorch knows is parsed and range-checked as PyTorch checks
 * it; a key it does not know is kept (text and value) so that a setting
 * of a newer PyTorch is named, never dropped. Which settings the caching
 * emulation models is ml_alloc_conf_check_emulated's business: it refuses
 * the rest by name (docs/pytorch.md, "Allocator settings").
 */
#ifndef ML_ALLOC_CONF_H
#define ML_ALLOC_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/base/error.h"

/* PyTorch's roundup_power2_divisions intervals: one per power of two from
 * 1 MiB (kRoundUpPowerOfTwoStart) to 64 GiB; smaller sizes use the first,
 * larger the last. */
#define ML_AC_INTERVALS 16

/* Which keys a settings string named (MlAllocConf.set). */
enum {
  ML_AC_MAX_SPLIT          = 1 << 0,
  ML_AC_MAX_NON_SPLIT      = 1 << 1,
  ML_AC_ROUNDUP            = 1 << 2,
  ML_AC_GC_THRESHOLD       = 1 << 3,
  ML_AC_EXPANDABLE         = 1 << 4,
  ML_AC_BACKEND            = 1 << 5,
  ML_AC_RELEASE_LOCK       = 1 << 6,
  ML_AC_PINNED_REGISTER    = 1 << 7,
  ML_AC_PINNED_THREADS     = 1 << 8,
  ML_AC_PINNED_BACKGROUND  = 1 << 9,
  ML_AC_PINNED_RESERVE     = 1 << 10,
  ML_AC_GRAPH_STREAM_REUSE = 1 << 11,
  ML_AC_MEMORY_FRACTION    = 1 << 12,
};

/* An unknown key and its value, as written ("[1:2]" for a list). */
typedef struct {
  char *key, *value;
} MlAllocConfUnknown;

typedef struct {
  unsigned set;                       /* ML_AC_* of the keys given */
  uint64_t max_split_size;            /* bytes; UINT64_MAX = unlimited (the default) */
  uint64_t max_non_split_rounding;    /* bytes; default 20 MiB (kLargeBuffer) */
  unsigned divisions[ML_AC_INTERVALS];/* roundup_power2_divisions per interval, 0 = off */
  double   gc_threshold;              /* garbage_collection_threshold, 0 = off */
  bool     expandable_segments;
  bool     malloc_async;              /* backend:cudaMallocAsync (else native) */
  bool     release_lock_on_cudamalloc;
  bool     pinned_use_host_register;
  unsigned pinned_num_register_threads;   /* default 1 */
  bool     pinned_use_background_threads;
  uint64_t pinned_reserve_segment_size;   /* bytes, 0 = not set */
  bool     graph_capture_record_stream_reuse;
  double   memory_fraction;           /* per_process_memory_fraction, 0 = not set */
  MlAllocConfUnknown *unknown;        /* owned */
  size_t   n_unknown;
} MlAllocConf;

/* PyTorch's defaults (nothing set, nothing owned). */
void ml_alloc_conf_init  (MlAllocConf *conf);
/* Frees what @conf owns and resets it to the defaults. */
void ml_alloc_conf_clear (MlAllocConf *conf);

/* Parses @text (PyTorch's or memlens's form, see above) on top of @conf
 * (the keys it names replace theirs: call ml_alloc_conf_init first for a
 * fresh parse). ML_EUSAGE names the key, the value and what PyTorch
 * accepts ("max_split_size_mb:8: below 20, PyTorch's smallest");
 * ML_ENOMEM. On failure @conf keeps what was parsed before the bad key. */
int  ml_alloc_conf_parse (const char *text, MlAllocConf *conf, MlError *err) ML_MUST_CHECK;

/* The roundup_power2_divisions interval of a request of @size bytes
 * (AllocatorConfig::roundup_power2_divisions: log2 of the size from 1 MiB,
 * clamped to 0 .. ML_AC_INTERVALS - 1), and the divisions that apply. */
unsigned ml_alloc_conf_interval  (uint64_t size);
unsigned ml_alloc_conf_divisions (const MlAllocConf *conf, uint64_t size);

/* Writes @conf in PyTorch's syntax, the keys that differ from the
 * defaults (and the unknown ones) in PyTorch's order, into @buf (@n
 * bytes, always terminated); returns the length it needed. "" for the
 * defaults. ml_alloc_conf_parse reads it back to an equal @conf. */
size_t ml_alloc_conf_format (const MlAllocConf *conf, char *buf, size_t n);

/* 0 when every setting of @conf is one the caching emulation models or
 * one that cannot change where device memory goes (host pinned memory,
 * lock timing); else ML_EUSAGE naming the first that is not, and why: a
 * key memlens does not know, or backend:cudaMallocAsync together with
 * the native allocator's settings (which PyTorch ignores with a
 * warning). */
int  ml_alloc_conf_check_emulated (const MlAllocConf *conf, MlError *err) ML_MUST_CHECK;

#endif
