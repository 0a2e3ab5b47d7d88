/* fuzz-load.c — ml_trace_load() on a path without an extension, so the
 * format is sniffed from the first bytes and any reader may get the input:
 * the sniffers and the dispatch, then everything behind the reader. */
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  MlTrace *t;
  MlError err = { 0 };
  if (ml_trace_load (fuzz_path (data, size), NULL, &t, &err) == 0)
    {
      fuzz_analyse (t, 0);
      ml_trace_free (t);
    }
  return 0;
}
