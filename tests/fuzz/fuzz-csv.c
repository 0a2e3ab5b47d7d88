/* fuzz-csv.c — the MiniMalloc CSV reader (ml_trace_load_csv) and
 * everything behind it. */
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  MlTrace *t;
  MlError err = { 0 };
  if (ml_trace_load_csv (fuzz_path (data, size), NULL, &t, &err) == 0)
    {
      fuzz_analyse (t, 0);
      ml_trace_free (t);
    }
  return 0;
}
