/* fuzz-plan.c — the plan reader (ml_plan_read_json) against a fixed small
 * trace, then the checker and the metrics over the plan it returns (a plan
 * from a file may be wrong in every way; the checker must say so, not
 * crash). */
#include "tests/fuzz/fuzz.h"

/* Six buffers, ids 1..6 (id 3 reused after its free, so it is found by
 * index), two streams, one never freed. */
static const char trace_text[] =
  "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":256}\n"
  "{\"kind\":\"alloc\",\"id\":1,\"size\":1024}\n"
  "{\"kind\":\"alloc\",\"id\":2,\"size\":512,\"stream\":1}\n"
  "{\"kind\":\"alloc\",\"id\":3,\"size\":100}\n"
  "{\"kind\":\"free\",\"id\":1}\n"
  "{\"kind\":\"alloc\",\"id\":4,\"size\":2048}\n"
  "{\"kind\":\"free\",\"id\":3}\n"
  "{\"kind\":\"alloc\",\"id\":3,\"size\":300}\n"
  "{\"kind\":\"free\",\"id\":2}\n"
  "{\"kind\":\"alloc\",\"id\":5,\"size\":0}\n"
  "{\"kind\":\"free\",\"id\":4}\n"
  "{\"kind\":\"alloc\",\"id\":6,\"size\":4096}\n";

static MlTrace   *trace;
static MlBuffers *bufs;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  MlError err = { 0 };
  if (!bufs)
    {
      if (ml_trace_load_jsonl (fuzz_path ((const uint8_t *) trace_text, sizeof trace_text - 1), NULL, &trace, &err) < 0
          || ml_buffers_build (trace, 0, &bufs, &err) < 0)
        {
          fprintf (stderr, "fuzz-plan: fixture: %s\n", err.msg);
          abort ();
        }
    }
  MlPlan *plan;
  if (ml_plan_read_json (fuzz_path (data, size), bufs, &plan, &err) == 0)
    {
      fuzz_plan (bufs, plan, 0);
      ml_plan_arena_size (plan, bufs);
      ml_plan_free (plan);
    }
  return 0;
}
