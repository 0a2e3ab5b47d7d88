/* fuzz-kineto.c — Kineto / Chrome trace JSON (ml_trace_load_kineto) and
 * everything behind it. */
#include "tests/fuzz/fuzz.h"
#include "sim/formats/kineto.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  MlTrace *t;
  MlError err = { 0 };
  MlLoadOptions opts;
  ml_load_options_init (&opts);
  if (ml_trace_load_kineto (fuzz_path (data, size), &opts, &t, &err) == 0)
    {
      fuzz_analyse (t, 0);
      ml_trace_free (t);
    }
  return 0;
}
