/* memlens tune — which allocator setting would have avoided the OOM, and
 * what it costs (strategies/caching-tune.h, docs/pytorch.md "tune"). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/base/jsonutil.h"
#include "strategies/caching-tune.h"

enum { OPT_SWEEP = CLI_OPT_OWN, OPT_COLD, OPT_BATCH };

typedef struct {
  const char *sweeps[17];
  size_t      n_sweeps;
  bool        cold;
  const char *batch;
} TuneArgs;

static const CliOption tune_options[] = {
  { "capacity", 0, CLI_OPT_CAPACITY, "SIZE", "the device's memory, e.g. 80G (default: the device memory the "
    "recorded OOM implies, reserved + device free; else none: the rows are compared by what they reserve)" },
  { "sweep", 0, OPT_SWEEP, "SETTING=V1,V2,...", "try these values of a PYTORCH_CUDA_ALLOC_CONF setting instead of "
    "the default grid (repeatable: every combination), e.g. max_split_size_mb=64,128 or "
    "roundup_power2_divisions=4,[256:1,>:4]" },
  { "cold", 0, OPT_COLD, NULL, "every row from an empty device (default: from the state the snapshot recorded at the "
    "trace's first event, when it has one)" },
  { "jobs", 0, CLI_OPT_JOBS, "N", "replay N rows at a time", "1" },
  { "batch", 0, OPT_BATCH, "N1,N2,...", "several runs of one program (one file each, in order) at these batch sizes "
    "(default: from the file names, bs16 / batch-16 / b16), or NAME=N1,N2,... for one graph file loaded at each value "
    "of its symbolic dimension NAME: which batch fits" },
  { NULL },
};

static int
tune_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  TuneArgs *a = user;
  if (key == OPT_SWEEP)
    {
      if (a->n_sweeps == 16)
        return cli_fail ("tune", EXIT_BAD, "--sweep: at most 16 settings at once");
      a->sweeps[a->n_sweeps++] = arg;
    }
  else if (key == OPT_COLD)
    a->cold = true;
  else if (key == OPT_BATCH)
    a->batch = arg;
  else
    cli_common_option ("tune", o, key, arg);
  return 0;
}

/* A row's name as the table shows it. */
static const char *
row_name (const MlTuneRow *row, char *buf, size_t len)
{
  if (!*row->change)
    snprintf (buf, len, row->cold ? "(recorded, cold start)" : "(recorded settings)");
  else
    snprintf (buf, len, "%s%s", row->change, row->r.model ? " (model)" : "");
  return buf;
}

/* The width of the setting column. */
static int
name_width (const MlTune *t)
{
  size_t w = 24;
  char name[512];
  for (size_t k = 0; k < t->n_rows; k++)
    if (strlen (row_name (&t->rows[k], name, sizeof name)) > w)
      w = strlen (name);
  return (int) w;
}

static void
print_rows (const MlTune *t)
{
  const MlTuneRow *rec = &t->rows[0];
  int w = name_width (t);
  printf ("%-*s %7s %12s %12s %9s %-22s %10s %8s %12s\n", w, "setting", "changed", "reserved", "allocated", "frag@peak",
          t->capacity ? "OOM" : "OOM (no capacity)", "cudaMalloc", "cudaFree", "vs recorded");
  for (size_t k = 0; k < t->n_rows; k++)
    {
      const MlTuneRow *row = &t->rows[k];
      char name[512], oom[64] = "-", delta[64] = "";
      row_name (row, name, sizeof name);
      if (row->status < 0)
        {
          printf ("%-*s error: %s\n", w, name, row->error);
          continue;
        }
      const MlCacheReplay *r = &row->r;
      if (r->oom)
        snprintf (oom, sizeof oom, "tick %" PRIu64 "%s", r->oom_tick, r->oom_recorded ? " (recorded)" : "");
      else if (t->capacity)
        snprintf (oom, sizeof oom, "fits");
      if (k > 0 && rec->status == 0)
        {
          uint64_t a = r->reserved_peak, b = rec->r.reserved_peak;
          snprintf (delta, sizeof delta, "%s%s", a >= b ? "+" : "-", cli_size (a >= b ? a - b : b - a));
        }
      /* no growth: the peak is the state the replay started from, no request found it */
      char frag[16] = "-";
      if (r->at_peak.valid)
        snprintf (frag, sizeof frag, "%.3f", r->frag_at_peak);
      printf ("%-*s %7u %12s %12s %9s %-22s %10" PRIu64 " %8" PRIu64 " %12s\n", w, name, row->n_changed,
              cli_size (r->reserved_peak), cli_size (r->allocated_peak), frag, oom, r->n_malloc, r->n_free, delta);
    }
}

static void
print_answer (const char *path, const MlTune *t)
{
  const MlTuneRow *rec = &t->rows[0], *best = t->best >= 0 ? &t->rows[t->best] : NULL;
  printf ("answer: ");
  switch (t->verdict)
    {
    case ML_TUNE_FIX:
      printf ("set %s%s: it fits under %s (reserved peak %s, %s to spare; %" PRIu64 " cudaMalloc, %" PRIu64
              " cudaFree)\n", best->change, best->r.model ? " (a model: no conformance data can exist)" : "",
              cli_size (t->capacity), cli_size (best->r.reserved_peak), cli_size (t->capacity - best->r.reserved_peak),
              best->r.n_malloc, best->r.n_free);
      break;
    case ML_TUNE_NONE_FITS:
      if (t->shortfall)
        printf ("no allocator setting can fit: the bytes live at the OOM and its request need %s, %s more than the "
                "%s there is; free or shrink buffers: memlens diagnose %s lists them\n", cli_size (t->need),
                cli_size (t->shortfall), cli_size (t->capacity), path);
      else
        printf ("no setting tried fits, though the bytes live at the OOM and its request (%s) are within %s: the "
                "rest is fragmentation (memlens diagnose %s; --sweep tries others)\n", cli_size (t->need),
                cli_size (t->capacity), path);
      break;
    case ML_TUNE_FITS:
    case ML_TUNE_NO_CAPACITY:
      if (t->verdict == ML_TUNE_FITS)
        printf ("the recorded settings fit under %s (reserved peak %s); ", cli_size (t->capacity),
                cli_size (rec->r.reserved_peak));
      if (best)
        printf ("%s reserves least: %s, %s less\n", best->change, cli_size (best->r.reserved_peak),
                cli_size (rec->r.reserved_peak - best->r.reserved_peak));
      else
        printf ("no setting tried reserves less than the recorded %s\n", cli_size (rec->r.reserved_peak));
      break;
    }
}

/* One strand line: the moment's bytes by rule, and the viewer's measures. */
static void
print_strand_line (int w, const char *name, const char *moment, const MlStrandBreakdown *s)
{
  printf ("%-*s %-5s", w, name, moment);
  for (int k = 0; k < ML_STRAND__COUNT; k++)
    printf (" %11s", cli_size (s->bytes[k]));
  printf ("  %5.1f%% %8.4f\n", s->viz_internal * 100.0, s->viz_fragmentation);
}

/* The strands of every row, or (@brief) of the recorded settings and the answer. */
static void
print_strands (const MlTune *t, bool brief)
{
  printf ("\nwhy the cache held free bytes (reserved - requested), by the rule that kept the request from them:\n");
  int w = name_width (t);
  printf ("%-*s %-5s", w, "setting", "when");
  for (int k = 0; k < ML_STRAND__COUNT; k++)
    printf (" %11s", ml_strand_name ((MlStrand) k));
  printf ("  %6s %8s\n", "viz int", "viz frag");
  for (size_t k = 0; k < t->n_rows; k++)
    {
      const MlTuneRow *row = &t->rows[k];
      char name[512];
      if (brief && k != 0 && (long) k != t->best)
        continue;
      row_name (row, name, sizeof name);
      if (row->status == 0 && row->r.at_peak.valid)
        print_strand_line (w, name, "peak", &row->r.at_peak);
      if (row->status == 0 && row->r.at_oom.valid)
        print_strand_line (w, name, "OOM", &row->r.at_oom);
    }
  printf ("(peak: the state the request that raised the reserved bytes to their peak found; OOM: after PyTorch's "
          "releases; viz int: memory_viz's share of the free bytes that is rounding; viz frag: MemoryViz.js "
          "calculate_fragmentation, the squared free gaps over the squared reserved bytes)\n");
}

void
cli_tune_print (const char *path, const MlTrace *tr, const MlTune *t)
{
  printf ("%s: device %u", path, tr->device);
  if (t->capacity)
    printf (", device memory %s (%s)", cli_size (t->capacity),
            t->capacity_from_oom ? "the recorded OOM's reserved + device free" : "--capacity");
  printf ("\nrecorded settings: %s\n", *t->recorded ? t->recorded : "PyTorch's defaults");
  printf ("rows replayed %s\n\n", t->warm ? "from the state recorded at the trace's first event (the cold start row "
                                            "for comparison)" : "from an empty device");
  print_rows (t);
  putchar ('\n');
  print_answer (path, t);
  print_strands (t, false);
}

void
cli_tune_print_brief (const char *path, const MlTune *t)
{
  printf ("\nallocator settings (the default grid of memlens tune; every row: memlens tune %s)\n  ", path);
  print_answer (path, t);
  print_strands (t, true);
}

/* The trace alone (tune builds no lifetimes), with the loader's notes. */
int
cli_tune_load (const char *path, MlCliOpts *o, MlTrace **t)
{
  MlError err = { 0 };
  o->load.progress = cli_progress (o->quiet);
  int rc = ml_trace_load (path, &o->load, t, &err);
  cli_progress_done ();
  if (rc < 0)
    return cli_error ("tune", &err);
  cli_print_notes ("tune", path, *t, o->quiet);
  if ((*t)->device_reason && !o->quiet)
    fprintf (stderr, "memlens tune: %s: %s\n", path, ml_trace_str (*t, (*t)->device_reason));
  return EXIT_OK;
}

static int
cmd_tune (int argc, char **argv)
{
  MlCliOpts o;
  TuneArgs a = { .n_sweeps = 0 };
  int rc = cli_parse (&cli_cmd_tune, argc, argv, &o, &a);
  if (rc != CLI_PARSED)
    return rc;
  if (optind == argc)
    return cli_usage (&cli_cmd_tune);
  MlTuneOpts to = { .capacity = o.knobs.capacity, .sweeps = a.n_sweeps ? a.sweeps : NULL, .jobs = o.jobs,
                    .cold = a.cold, .curves = false };
  if (optind + 1 < argc || a.batch)
    return cli_tune_batches (argv + optind, (size_t) (argc - optind), a.batch, &o, &to);
  const char *path = argv[optind];
  MlTrace *t;
  if ((rc = cli_tune_load (path, &o, &t)) != EXIT_OK)
    return rc;
  MlTune *tune = NULL;
  MlError err = { 0 };
  if (ml_tune_run (t, &to, &tune, &err) < 0)
    rc = cli_error ("tune", &err);
  else if (o.json)
    {
      printf ("{\"trace\":");
      ml_json_put_str (stdout, path);
      printf (",\"device\":%u,\"tune\":", t->device);
      if (ml_tune_write_json (stdout, tune, &err) < 0)
        rc = cli_error ("tune", &err);
      printf ("}\n");
    }
  else
    cli_tune_print (path, t, tune);
  if (rc == EXIT_OK && tune->verdict == ML_TUNE_NONE_FITS)
    rc = EXIT_PROBLEMS;
  ml_tune_free (tune);
  ml_trace_free (t);
  return rc;
}

const CliCommand cli_cmd_tune = {
  .name = "tune",
  .bit = CLI_TUNE,
  .summary = "which PyTorch allocator setting would have avoided the OOM, and what it costs",
  .usage = "memlens tune [OPTIONS] TRACE\n"
           "memlens tune [OPTIONS] RUN1 RUN2 ... [--batch N1,N2,...]\n"
           "memlens tune [OPTIONS] GRAPH --batch NAME=N1,N2,...\n",
  .about = "Replays the trace through the caching allocator's emulation under a grid of\n"
           "PYTORCH_CUDA_ALLOC_CONF settings (or --sweep's), each from the state the snapshot\n"
           "recorded at the trace's first event (a cold-start row for comparison), and prints\n"
           "one row per setting: reserved and allocated peaks, fragmentation at the peak, the\n"
           "OOM under the capacity, cudaMalloc / cudaFree calls, the change against the\n"
           "recorded settings; then the answer (the setting that fits with the fewest changes,\n"
           "then the least reserved, or the shortfall when none does) and why the cache held\n"
           "free bytes at the peak and at the OOM, rule by rule (docs/pytorch.md, \"tune\").\n"
           "With several runs of one program at different batch sizes it also fits each\n"
           "allocation's size as fixed + per-sample x batch and names the largest batch that\n"
           "fits the capacity, under the recorded settings and the answer's.\n"
           "Exit code 1 when the recorded settings run out of memory and no setting tried fits.\n",
  .options = tune_options,
  .option = tune_option,
  .run = cmd_tune,
};
