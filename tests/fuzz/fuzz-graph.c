/* fuzz-graph.c — computation graph JSON (ml_trace_load_graph), in the
 * given order and with reorder=memory, then everything behind it (the race
 * checks include the graph's in-place hazards). */
#include "tests/fuzz/fuzz.h"
#include "sim/formats/graph.h"

static void
one (const char *path, const char *options)
{
  MlTrace *t;
  MlError err = { 0 };
  MlLoadOptions opts;
  ml_load_options_init (&opts);
  opts.graph_options = options;
  if (ml_trace_load_graph (path, &opts, &t, &err) < 0)
    return;
  fuzz_analyse (t, 0);   /* ml_check_races finds the in-place hazards */
  ml_trace_free (t);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *path = fuzz_path (data, size);
  one (path, NULL);
  one (path, "reorder=memory");
  return 0;
}
