/* memlens replay — validate a plan by replaying it on memory (trace/replay.h). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/base/jsonutil.h"
#include "trace/replay.h"

static const char usage_text[] =
  "Usage: memlens replay [OPTIONS] TRACE [--plan PLAN.json | --strategy S]\n"
  "Replays a plan on memory: every allocation writes a tag naming its buffer\n"
  "into its bytes, every free checks the tag is intact. A plan that places two\n"
  "live buffers on the same bytes shows up as a corrupted buffer, reported\n"
  "with both buffers and the tick. The cuda backend runs on a GPU and times the\n"
  "plan against cudaMalloc/cudaFree and cudaMallocAsync/cudaFreeAsync.\n"
  "Without --plan or --strategy: the recorded addresses, else best-fit.\n"
  "Exit code 1 when a buffer was corrupted.\n";

static const char options_text[] =
  "Options:\n"
  "  -p, --plan FILE      the plan to replay (JSON from 'memlens plan')\n"
  "  -s, --strategy S     replay this strategy's plan\n"
  "  -b, --backend B      host (default) or cuda\n"
  "  -n, --iterations N   replay the sequence N times (default 1; timings cover all)\n"
  "      --gpu N          cuda backend: which GPU (default 0)\n";

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

int
cmd_replay (int argc, char **argv)
{
  enum { OPT_GPU = 2001 };
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS, CLI_RANGE_LONGOPT,
    { "plan",       required_argument, 0, 'p' },
    { "strategy",   required_argument, 0, 's' },
    { "backend",    required_argument, 0, 'b' },
    { "iterations", required_argument, 0, 'n' },
    { "gpu",        required_argument, 0, OPT_GPU },
    { 0, 0, 0, 0 },
  };
  MlCliOpts o;
  cli_opts_init (&o);
  const char *backend = "host";
  uint64_t iterations = 1, gpu = 0;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "hp:s:b:n:", longopts, NULL)) != -1)
    {
      switch (c)
        {
        case 'h':
          printf ("%s\n%s%s", usage_text, options_text, CLI_RANGE_HELP CLI_JSON_HELP CLI_COMMON_HELP);
          return EXIT_OK;
        case 'p':
          o.plan_path = optarg;
          break;
        case 's':
          o.strategy = optarg;
          break;
        case 'b':
          if (strcmp (optarg, "host") != 0 && strcmp (optarg, "cuda") != 0)
            return cli_fail ("replay", EXIT_BAD, "--backend %s: expected host or cuda", optarg);
          backend = optarg;
          break;
        case 'n':
          if (ml_parse_u64 (optarg, strlen (optarg), &iterations) < 0 || iterations == 0 || iterations > 1000000)
            return cli_fail ("replay", EXIT_BAD, "--iterations %s: expected a number from 1 to 1000000", optarg);
          break;
        case OPT_GPU:
          if (ml_parse_u64 (optarg, strlen (optarg), &gpu) < 0 || gpu > 1024)
            return cli_fail ("replay", EXIT_BAD, "--gpu %s: not a device number", optarg);
          break;
        default:
          if (c == '?' || !cli_common_option ("replay", &o, c, optarg))
            return cli_usage ("replay", usage_text);
        }
    }
  if (optind + 1 != argc)
    return cli_usage ("replay", usage_text);
  if (o.plan_path && o.strategy)
    return cli_fail ("replay", EXIT_BAD, "give --plan or --strategy, not both");
  bool cuda = strcmp (backend, "cuda") == 0;
  if (cuda && !ml_replay_cuda_available ())
    return cli_fail ("replay", EXIT_BAD, "--backend cuda: this memlens was built without the CUDA replay backend "
                     "(nvcc was not found when it was configured; see meson option cudatoolkit)");
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("replay", path, &o, &t, &bufs);
  if (rc)
    return rc;
  MlPlan *plan = NULL;
  MlReplayProgram *prog = NULL;
  MlReplayResult res;
  MlError err = { 0 };
  ml_replay_result_init (&res);
  if ((rc = cli_get_plan ("replay", bufs, &o, &plan)))
    goto out;
  if (ml_replay_program_build (bufs, plan, &prog, &err) < 0)
    {
      rc = cli_error ("replay", &err);
      goto out;
    }
  if ((cuda ? ml_replay_cuda (prog, (unsigned) iterations, (int) gpu, &res, &err)
            : ml_replay_host (prog, (unsigned) iterations, 0, &res, &err)) < 0)
    {
      rc = cli_error ("replay", &err);
      goto out;
    }
  if (o.json)
    {
      printf ("{\"trace\":");
      ml_json_put_str (stdout, path);
      printf (",\"plan\":");
      ml_json_put_str (stdout, plan->strategy);
      printf (",\"backend\":\"%s\",\"device\":", backend);
      ml_json_put_str (stdout, res.device);
      printf (",\"buffers\":%zu,\"allocations\":%" PRIu64 ",\"iterations\":%u,\"arena_bytes\":%" PRIu64 ",\"span_bytes\":%" PRIu64
              ",\"granule\":%" PRIu64 ",\"streams\":%u,\"corrupted\":%" PRIu64 ",\"baseline_corrupted\":%" PRIu64,
              bufs->n, res.allocations, res.iterations, prog->arena_bytes, prog->span_bytes, prog->granule, prog->n_streams,
              res.corrupted, res.baseline_corrupted);
      printf (",\"timings\":{");
      json_time ("plan", res.plan_s, &res);
      json_time ("cudaMalloc", res.malloc_s, &res);
      json_time ("cudaMallocAsync", res.async_s, &res);
      printf ("},\"corruptions\":[");
      for (size_t i = 0; i < res.n_items; i++)
        {
          const MlCorruption *k = &res.items[i];
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
  else
    {
      printf ("replay of the %s plan of %s (%s backend%s%s, %u iteration%s)\n", plan->strategy, path, backend,
              res.device[0] ? ": " : "", res.device, res.iterations, res.iterations == 1 ? "" : "s");
      printf ("  buffers     %zu on %u stream%s\n", bufs->n, prog->n_streams, prog->n_streams == 1 ? "" : "s");
      printf ("  arena       %s (granule %" PRIu64 " B, %" PRIu64 " tag writes per iteration)\n",
              cli_size (prog->arena_bytes), prog->granule, res.granule_writes);
      if (prog->span_bytes > prog->arena_bytes)
        printf ("              the plan spans %s; the ranges no buffer touches were cut out\n", cli_size (prog->span_bytes));
      for (size_t i = 0; i < res.n_items; i++)
        {
          const MlCorruption *k = &res.items[i];
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
      if (res.corrupted > res.n_items)
        printf ("  ... %" PRIu64 " more corrupted buffers not shown\n", res.corrupted - res.n_items);
      printf ("  corrupted   %" PRIu64 " buffer%s%s\n", res.corrupted, res.corrupted == 1 ? "" : "s",
              res.corrupted ? ": the plan is NOT valid" : ": the plan is valid");
      printf ("\n  %-34s %12s %16s\n", "method", "total", "per allocation");
      print_time ("plan (one arena)", res.plan_s, &res);
      if (cuda)
        {
          print_time ("cudaMalloc / cudaFree", res.malloc_s, &res);
          print_time ("cudaMallocAsync / cudaFreeAsync", res.async_s, &res);
          printf ("  baselines corrupted %" PRIu64 " (must be 0)\n", res.baseline_corrupted);
        }
    }
  rc = res.corrupted ? EXIT_PROBLEMS : EXIT_OK;
out:
  ml_replay_program_free (prog);
  ml_plan_free (plan);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}
