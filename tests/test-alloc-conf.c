/* test-alloc-conf.c — PYTORCH_CUDA_ALLOC_CONF as PyTorch parses it
 * (sim/alloc-conf.h): every key, the list form of
 * roundup_power2_divisions worked by hand from parseRoundUpPower2Divisions,
 * the errors, the round trip, and which settings the emulation refuses. */
#include "sim/alloc-conf.h"
#include "tests/tap.h"

#define MiB ((uint64_t) 1 << 20)

static int
parse (const char *text, MlAllocConf *c, MlError *err)
{
  ml_alloc_conf_init (c);
  return ml_alloc_conf_parse (text, c, err);
}

static void
test_keys (void)
{
  MlAllocConf c;
  MlError err = { 0 };
  ok (parse ("", &c, &err) == 0 && c.set == 0 && c.max_split_size == UINT64_MAX
      && c.max_non_split_rounding == 20 * MiB && c.pinned_num_register_threads == 1, "empty: PyTorch's defaults");
  ml_alloc_conf_clear (&c);
  int rc = parse ("max_split_size_mb:128, expandable_segments:True,garbage_collection_threshold:0.6,"
                  "max_non_split_rounding_mb:64,backend:native,release_lock_on_cudamalloc:True,"
                  "pinned_use_cuda_host_register:True,pinned_num_register_threads:8,pinned_use_background_threads:True,"
                  "pinned_reserve_segment_size_mb:16,graph_capture_record_stream_reuse:True,"
                  "per_process_memory_fraction:0.5", &c, &err);
  ok (rc == 0, "every key PyTorch knows parses (%s)", rc ? err.msg : "");
  is_u64 (c.max_split_size, 128 * MiB, "max_split_size_mb:128");
  ok (c.expandable_segments, "expandable_segments:True");
  ok (c.gc_threshold == 0.6, "garbage_collection_threshold:0.6");
  is_u64 (c.max_non_split_rounding, 64 * MiB, "max_non_split_rounding_mb:64");
  ok (!c.malloc_async && (c.set & ML_AC_BACKEND), "backend:native");
  ok (c.release_lock_on_cudamalloc && c.pinned_use_host_register && c.pinned_use_background_threads
      && c.graph_capture_record_stream_reuse, "the booleans");
  is_u64 (c.pinned_num_register_threads, 8, "pinned_num_register_threads:8");
  is_u64 (c.pinned_reserve_segment_size, 16 * MiB, "pinned_reserve_segment_size_mb:16");
  ok (c.memory_fraction == 0.5, "per_process_memory_fraction:0.5");
  is_u64 (c.n_unknown, 0, "no unknown key");
  ml_alloc_conf_clear (&c);

  ok (parse ("max_split_size_mb=32,expandable_segments=1,roundup_power2_divisions=0", &c, &err) == 0
      && c.max_split_size == 32 * MiB && c.expandable_segments && ml_alloc_conf_divisions (&c, 5 * MiB) == 0,
      "memlens's k=v form with 1 / 0");
  ml_alloc_conf_clear (&c);
  ok (parse ("max_split_size_mb:unlimited", &c, &err) == 0 && c.max_split_size == UINT64_MAX && (c.set & ML_AC_MAX_SPLIT),
      "max_split_size_mb:unlimited");
  ml_alloc_conf_clear (&c);
  ok (parse ("max_split_size:134217728", &c, &err) == 0 && c.max_split_size == 128 * MiB,
      "max_split_size in bytes (a snapshot's allocator_settings)");
  ml_alloc_conf_clear (&c);
  ok (parse ("release_lock_on_hipmalloc:True,pinned_use_hip_host_register:False", &c, &err) == 0
      && c.release_lock_on_cudamalloc && !c.pinned_use_host_register, "the ROCm spellings");
  ml_alloc_conf_clear (&c);
  ok (parse ("backend:cudaMallocAsync", &c, &err) == 0 && c.malloc_async, "backend:cudaMallocAsync");
  ml_alloc_conf_clear (&c);
}

/* parseRoundUpPower2Divisions: interval k covers [2^k MiB, 2^(k+1) MiB);
 * the first entry fills the intervals below it, '>' fills from the last
 * entry named (that one included) to the end. */
static void
test_roundup (void)
{
  MlAllocConf c;
  MlError err = { 0 };
  ok (parse ("roundup_power2_divisions:4", &c, &err) == 0, "one number");
  ok (ml_alloc_conf_divisions (&c, 1000) == 4 && ml_alloc_conf_divisions (&c, (uint64_t) 100 << 30) == 4,
      "one number covers every size");
  ml_alloc_conf_clear (&c);
  int rc = parse ("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]", &c, &err);
  ok (rc == 0, "the list form parses (%s)", rc ? err.msg : "");
  is_u64 (ml_alloc_conf_divisions (&c, 1000), 1, "below 1 MiB: the first interval, filled by the first entry");
  is_u64 (ml_alloc_conf_divisions (&c, 100 * MiB), 1, "100 MiB: below 256, the first entry's value");
  is_u64 (ml_alloc_conf_divisions (&c, 300 * MiB), 1, "300 MiB: the 256 MiB interval");
  is_u64 (ml_alloc_conf_divisions (&c, 600 * MiB), 2, "600 MiB: the 512 MiB interval");
  is_u64 (ml_alloc_conf_divisions (&c, 1100 * MiB), 8, "1100 MiB: the 1024 MiB interval, overwritten by '>' (PyTorch fills from the last index)");
  is_u64 (ml_alloc_conf_divisions (&c, (uint64_t) 1 << 40), 8, "1 TiB: the last interval");
  char buf[512];
  ml_alloc_conf_format (&c, buf, sizeof buf);
  MlAllocConf d;
  ok (parse (buf, &d, &err) == 0 && memcmp (c.divisions, d.divisions, sizeof c.divisions) == 0,
      "the list written back reads back the same (%s)", buf);
  ml_alloc_conf_clear (&d);
  ml_alloc_conf_clear (&c);
}

static void
test_errors (void)
{
  static const struct { const char *text, *says; } cases[] = {
    { "max_split_size_mb:8", "below 20, PyTorch's smallest" },
    { "max_split_size_mb:abc", "expected a number of MiB or unlimited" },
    { "max_non_split_rounding_mb:10", "below 20" },
    { "garbage_collection_threshold:1.5", "expected a number in (0, 1)" },
    { "garbage_collection_threshold:0", "expected a number in (0, 1)" },
    { "expandable_segments:yes", "expected True or False" },
    { "roundup_power2_divisions:3", "power of two" },
    { "roundup_power2_divisions:[300:2]", "an interval must be a power of two" },
    { "roundup_power2_divisions:[256:2", "expected ','" },
    { "pinned_num_register_threads:256", "a power of two up to 128" },
    { "backend:tcmalloc", "expected native or cudaMallocAsync" },
    { "per_process_memory_fraction:2", "expected a number in [0, 1]" },
    { "expandable_segments", "expected ':'" },
    { "max_split_size_mb:", "has no value" },
    { "a:1,,b:2", "an empty setting" },
    { "max_split_size_mb:128 expandable_segments:True", "expected" },
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    {
      MlAllocConf c;
      MlError err = { 0 };
      int rc = parse (cases[k].text, &c, &err);
      ok (rc == ML_EUSAGE && strstr (err.msg, cases[k].says) && strstr (err.msg, cases[k].text),
          "\"%s\" is refused: %s", cases[k].text, err.msg);
      ml_alloc_conf_clear (&c);
    }
}

static void
test_unknown_and_emulated (void)
{
  MlAllocConf c;
  MlError err = { 0 };
  ok (parse ("expandable_segments:True,future_knob:[1:2,3:4],other:7", &c, &err) == 0 && c.n_unknown == 2
      && !strcmp (c.unknown[0].key, "future_knob") && !strcmp (c.unknown[0].value, "[1:2,3:4]")
      && !strcmp (c.unknown[1].value, "7"), "unknown keys are kept with their values");
  char buf[256];
  ml_alloc_conf_format (&c, buf, sizeof buf);
  is_str (buf, "expandable_segments:True,future_knob:[1:2,3:4],other:7", "and written back");
  ok (ml_alloc_conf_check_emulated (&c, &err) == ML_EUSAGE && strstr (err.msg, "future_knob:[1:2,3:4]"),
      "an unknown key is refused by name: %s", err.msg);
  ml_alloc_conf_clear (&c);

  static const struct { const char *text; bool emulated; const char *says; } cases[] = {
    { "max_split_size_mb:128,max_non_split_rounding_mb:40,roundup_power2_divisions:[64:4,>:8],expandable_segments:True", true, "" },
    { "release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:True,pinned_num_register_threads:4,"
      "pinned_use_background_threads:True,pinned_reserve_segment_size_mb:8,graph_capture_record_stream_reuse:True,"
      "backend:native,per_process_memory_fraction:1", true, "" },
    { "garbage_collection_threshold:0.6,per_process_memory_fraction:0.5", true, "" },
    { "backend:cudaMallocAsync,per_process_memory_fraction:0.5", true, "" },
    { "backend:cudaMallocAsync,expandable_segments:False", true, "" },
    { "backend:cudaMallocAsync,max_split_size_mb:64", false, "cudaMallocAsync ignores max_split_size_mb" },
    { "backend:cudaMallocAsync,roundup_power2_divisions:[256:4]", false, "leave them out" },
    { "garbage_collection_threshold:0.6,backend:cudaMallocAsync", false, "cudaMallocAsync ignores" },
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    {
      must (parse (cases[k].text, &c, &err) == 0);
      int rc = ml_alloc_conf_check_emulated (&c, &err);
      if (cases[k].emulated)
        ok (rc == 0, "emulated or without effect on device memory: %s", cases[k].text);
      else
        ok (rc == ML_EUSAGE && strstr (err.msg, cases[k].says) && strstr (err.msg, "--options"),
            "refused: %s", err.msg);
      ml_alloc_conf_clear (&c);
    }
}

/* Everything that parses writes back to text that parses to the same
 * settings (the tune engineer replays the text). */
static void
test_round_trip (void)
{
  static const char *const texts[] = {
    "max_split_size_mb:128,max_non_split_rounding_mb:40,garbage_collection_threshold:0.75,"
    "roundup_power2_divisions:16,expandable_segments:False,backend:native,release_lock_on_cudamalloc:False,"
    "pinned_use_cuda_host_register:True,pinned_num_register_threads:2,pinned_use_background_threads:False,"
    "pinned_reserve_segment_size_mb:4,graph_capture_record_stream_reuse:False,per_process_memory_fraction:0.3",
    "max_split_size:25165824",
    "roundup_power2_divisions:[1:2,>:4]",
    "roundup_power2_divisions:[2:1,4:2,64:8,>:16]",
    "roundup_power2_divisions:[1:4,2:8,4:4]",
  };
  for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++)
    {
      MlAllocConf a, b;
      MlError err = { 0 };
      char buf[1024];
      must (parse (texts[k], &a, &err) == 0);
      size_t len = ml_alloc_conf_format (&a, buf, sizeof buf);
      ok (len == strlen (buf) && parse (buf, &b, &err) == 0 && a.set == b.set && a.max_split_size == b.max_split_size
          && a.max_non_split_rounding == b.max_non_split_rounding && a.gc_threshold == b.gc_threshold
          && !memcmp (a.divisions, b.divisions, sizeof a.divisions) && a.memory_fraction == b.memory_fraction
          && a.pinned_num_register_threads == b.pinned_num_register_threads
          && a.pinned_reserve_segment_size == b.pinned_reserve_segment_size, "round trip of %s", buf);
      char small[8];
      ok (ml_alloc_conf_format (&a, small, sizeof small) == len && strlen (small) == sizeof small - 1,
          "a short buffer is cut and terminated, the length needed returned");
      ml_alloc_conf_clear (&a);
      ml_alloc_conf_clear (&b);
    }
}

int
main (void)
{
  test_keys ();
  test_roundup ();
  test_errors ();
  test_unknown_and_emulated ();
  test_round_trip ();
  return tap_done ();
}
