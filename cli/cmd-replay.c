/* memlens replay — validate a plan by replaying it on memory (trace/replay.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/base/jsonutil.h"
#include "trace/replay.h"

typedef struct {
  const char *backend;
  uint64_t    iterations, gpu;
} ReplayArgs;

static const CliOption replay_options[] = {
  { "backend", 'b', 'b', "host|cuda", "where to replay: host memory, or a GPU", "host" },
  { "iterations", 'n', 'n', "N", "replay the sequence N times (timings cover all)", "1" },
  { "gpu", 0, CLI_OPT_OWN, "N", "cuda backend: which GPU", "0" },
  { NULL },
};

static int
replay_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  ReplayArgs *a = user;
  switch (key)
    {
    case 'b':
      if (strcmp (arg, "host") != 0 && strcmp (arg, "cuda") != 0)
        return cli_fail ("replay", EXIT_BAD, "--backend %s: expected host or cuda", arg);
      a->backend = arg;
      return 0;
    case 'n':
      if (ml_parse_u64 (arg, strlen (arg), &a->iterations) < 0 || a->iterations == 0 || a->iterations > 1000000)
        return cli_fail ("replay", EXIT_BAD, "--iterations %s: expected a number from 1 to 1000000", arg);
      return 0;
    default:
      if (ml_parse_u64 (arg, strlen (arg), &a->gpu) < 0 || a->gpu > ML_DEVICE_MAX)
        return cli_fail ("replay", EXIT_BAD, "--gpu %s: not a device number (0 .. %d)", arg, ML_DEVICE_MAX);
      return 0;
    }
}

static double
per_alloc_us (double s, const MlReplayResult *r)
{
  double n = (double) r->allocations * (r->iterations ? r->iterations : 1);
  return n > 0 ? s * 1e6 / n : 0;
}

static void
print_time (const char *what, double s, const MlReplayResult *r)
{
  if (s < 0)
    printf ("  %-34s %12s %16s\n", what, "-", "-");
  else
    printf ("  %-34s %9.3f ms %13.3f us\n", what, s * 1e3, per_alloc_us (s, r));
}

static void
json_time (const char *key, double s, const MlReplayResult *r)
{
  bool first = strcmp (key, "plan") == 0;
  if (s < 0)
    printf ("%s\"%s\":null", first ? "" : ",", key);
  else
    printf ("%s\"%s\":{\"total_s\":%.9f,\"per_alloc_us\":%.6f}", first ? "" : ",", key, s, per_alloc_us (s, r));
}

static void
print_json (const char *path, const MlBuffers *bufs, const MlPlan *plan, const MlReplayProgram *prog,
            const MlReplayResult *res, const char *backend)
{
  printf ("{\"trace\":");
  ml_json_put_str (stdout, path);
  printf (",\"plan\":");
  ml_json_put_str (stdout, plan->strategy);
  printf (",\"backend\":\"%s\",\"device\":", backend);
  ml_json_put_str (stdout, res->device);
  printf (",\"buffers\":%zu,\"allocations\":%" PRIu64 ",\"iterations\":%u,\"arena_bytes\":%" PRIu64 ",\"span_bytes\":%" PRIu64
          ",\"granule\":%" PRIu64 ",\"streams\":%u,\"corrupted\":%" PRIu64 ",\"baseline_corrupted\":%" PRIu64,
          bufs->n, res->allocations, res->iterations, prog->arena_bytes, prog->span_bytes, prog->granule, prog->n_streams,
          res->corrupted, res->baseline_corrupted);
  printf (",\"timings\":{");
  json_time ("plan", res->plan_s, res);
  json_time ("cudaMalloc", res->malloc_s, res);
  json_time ("cudaMallocAsync", res->async_s, res);
  printf ("},\"corruptions\":[");
  for (size_t i = 0; i < res->n_items; i++)
    {
      const MlCorruption *k = &res->items[i];
      printf ("%s{\"victim\":", i ? "," : "");
      ml_json_put_u64 (stdout, bufs->buf[k->victim].id);
      printf (",\"culprit\":");
      if (k->culprit == UINT32_MAX)
        printf ("null");
      else
        ml_json_put_u64 (stdout, bufs->buf[k->culprit].id);
      printf (",\"tick\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"granules\":%" PRIu64 "}", k->tick, k->offset, k->granules);
    }
  printf ("]}\n");
}

static void
print_corruption (const MlBuffers *bufs, const MlCorruption *k)
{
  const MlBuffer *v = &bufs->buf[k->victim];
  printf ("  corrupted: buffer %" PRIu64 " (%s, ticks [%" PRIu64 ", %" PRIu64 ")) ", v->id, cli_size (v->rsize), v->start, v->end);
  if (k->culprit == UINT32_MAX)
    printf ("lost its tag");
  else
    {
      const MlBuffer *w = &bufs->buf[k->culprit];
      printf ("overwritten by buffer %" PRIu64 " (%s, ticks [%" PRIu64 ", %" PRIu64 "))",
              w->id, cli_size (w->rsize), w->start, w->end);
    }
  printf (" at arena offset %" PRIu64 ", %" PRIu64 " granule%s, found at tick %" PRIu64 "\n",
          k->offset, k->granules, k->granules == 1 ? "" : "s", k->tick);
}

static void
print_text (const char *path, const MlBuffers *bufs, const MlPlan *plan, const MlReplayProgram *prog,
            const MlReplayResult *res, const char *backend)
{
  printf ("replay of the %s plan of %s (%s backend%s%s, %u iteration%s)\n", plan->strategy, path, backend,
          res->device[0] ? ": " : "", res->device, res->iterations, res->iterations == 1 ? "" : "s");
  printf ("  buffers     %zu on %u stream%s\n", bufs->n, prog->n_streams, prog->n_streams == 1 ? "" : "s");
  printf ("  arena       %s (granule %" PRIu64 " B, %" PRIu64 " tag writes per iteration)\n",
          cli_size (prog->arena_bytes), prog->granule, res->granule_writes);
  if (prog->span_bytes > prog->arena_bytes)
    printf ("              the plan spans %s; the ranges no buffer touches were cut out\n", cli_size (prog->span_bytes));
  for (size_t i = 0; i < res->n_items; i++)
    print_corruption (bufs, &res->items[i]);
  if (res->corrupted > res->n_items)
    printf ("  ... %" PRIu64 " more corrupted buffers not shown\n", res->corrupted - res->n_items);
  printf ("  corrupted   %" PRIu64 " buffer%s%s\n", res->corrupted, res->corrupted == 1 ? "" : "s",
          res->corrupted ? ": the plan is NOT valid" : ": the plan is valid");
  printf ("\n  %-34s %12s %16s\n", "method", "total", "per allocation");
  print_time ("plan (one arena)", res->plan_s, res);
  if (strcmp (backend, "cuda") == 0)
    {
      print_time ("cudaMalloc / cudaFree", res->malloc_s, res);
      print_time ("cudaMallocAsync / cudaFreeAsync", res->async_s, res);
      printf ("  baselines corrupted %" PRIu64 " (must be 0)\n", res->baseline_corrupted);
    }
}

/* Builds the replay program of the plan and runs it on the backend. */
static int
replay_plan (const char *path, const MlBuffers *bufs, const MlPlan *plan, const ReplayArgs *a, bool json)
{
  MlReplayProgram *prog = NULL;
  MlReplayResult res;
  MlError err = { 0 };
  bool cuda = strcmp (a->backend, "cuda") == 0;
  int rc;
  ml_replay_result_init (&res);
  if (ml_replay_program_build (bufs, plan, &prog, &err) < 0
      || (cuda ? ml_replay_cuda (prog, (unsigned) a->iterations, (int) a->gpu, &res, &err)
               : ml_replay_host (prog, (unsigned) a->iterations, 0, &res, &err)) < 0)
    rc = cli_error ("replay", &err);
  else
    {
      if (json)
        print_json (path, bufs, plan, prog, &res, a->backend);
      else
        print_text (path, bufs, plan, prog, &res, a->backend);
      rc = res.corrupted ? EXIT_PROBLEMS : EXIT_OK;
    }
  ml_replay_program_free (prog);
  return rc;
}

static int
cmd_replay (int argc, char **argv)
{
  MlCliOpts o;
  ReplayArgs a;
  int rc = cli_parse (&cli_cmd_replay, argc, argv, &o, &a);
  if (rc != CLI_PARSED)
    return rc;
  if (optind + 1 != argc)
    return cli_usage (&cli_cmd_replay);
  if (o.plan_path && o.strategy)
    return cli_fail ("replay", EXIT_BAD, "give --plan or --strategy, not both");
  if (strcmp (a.backend, "cuda") == 0 && !ml_replay_cuda_available ())
    return cli_fail ("replay", EXIT_BAD, "--backend cuda: this memlens was built without the CUDA replay backend "
                     "(nvcc was not found when it was configured; see meson option cudatoolkit)");
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  if ((rc = cli_load ("replay", path, &o, &t, &bufs)))
    return rc;
  MlPlan *plan = NULL;
  if ((rc = cli_get_plan ("replay", bufs, &o, &plan)) == EXIT_OK)
    rc = replay_plan (path, bufs, plan, &a, o.json);
  ml_plan_free (plan);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}

const CliCommand cli_cmd_replay = {
  .name = "replay",
  .bit = CLI_REPLAY,
  .summary = "validate a plan by replaying it on memory (host, or a GPU with --backend cuda)",
  .usage = "memlens replay [OPTIONS] TRACE [--plan PLAN.json | --strategy S]\n",
  .about = "Replays a plan on memory: every allocation writes a tag naming its buffer\n"
           "into its bytes, every free checks the tag is intact. A plan that places two\n"
           "live buffers on the same bytes shows up as a corrupted buffer, reported\n"
           "with both buffers and the tick. The cuda backend runs on a GPU and times the\n"
           "plan against cudaMalloc/cudaFree and cudaMallocAsync/cudaFreeAsync.\n"
           "Without --plan or --strategy: the recorded addresses, else best-fit.\n"
           "Exit code 1 when a buffer was corrupted.\n",
  .options = replay_options,
  .option = replay_option,
  .run = cmd_replay,
};
