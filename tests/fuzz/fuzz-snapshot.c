/* fuzz-snapshot.c — PyTorch memory snapshots (ml_trace_load_snapshot_mem:
 * the pickle reader and the mapping to events) and everything behind. */
#include "tests/fuzz/fuzz.h"
#include "sim/formats/snapshot.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  MlTrace *t;
  MlError err = { 0 };
  MlLoadOptions opts;
  ml_load_options_init (&opts);
  if (ml_trace_load_snapshot_mem (data, size, "fuzz.pickle", &opts, &t, &err) == 0)
    {
      fuzz_analyse (t, 0);
      ml_trace_free (t);
    }
  return 0;
}
