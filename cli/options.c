/* options.c — the options several commands share, and how each is read.
 *
 * One row per option: its name, argument, help, default and the commands
 * that read it (cli/options.h). A command that does not read an option
 * refuses it ("--seed does not apply to stats"), so that nothing given on
 * the command line is silently ignored. How a value is read into the
 * command's MlCliOpts: cli/option-values.c (this file includes nothing of
 * cli.h, which includes options.h: no circle).
 */
#include "cli/options.h"

#include <inttypes.h>
#include <stdio.h>

#include "sim/formats/snapshot.h"
#include "sim/sim.h"
#include "strategies/registry.h"

/* The commands that load a trace; those that build its buffers (every
 * loader but convert, which writes them unaligned); those that run a
 * strategy; those that read graphs' loader options; those that take a
 * load window (render's --range is its own: the ticks to draw). */
#define LOADERS  (CLI_STATS | CLI_COMPARE | CLI_PLAN | CLI_CHECK | CLI_FIT | CLI_DIAGNOSE | CLI_REPORT | CLI_DIFF \
                  | CLI_RENDER | CLI_CONVERT | CLI_REPLAY)
#define BUILDERS (LOADERS & ~CLI_CONVERT)
#define PLANNERS (CLI_COMPARE | CLI_PLAN | CLI_CHECK | CLI_FIT | CLI_DIAGNOSE | CLI_REPORT | CLI_RENDER | CLI_REPLAY)
#define GRAPHS   (LOADERS & ~CLI_DIFF)
#define WINDOWED (LOADERS & ~(CLI_RENDER | CLI_FIT))
#define PRINTERS (CLI_STATS | CLI_COMPARE | CLI_PLAN | CLI_CHECK | CLI_FIT | CLI_DIAGNOSE | CLI_DIFF | CLI_REPLAY \
                  | CLI_TUNE)

static const char *
knob_size_text (uint64_t v)
{
  static char buf[32];
  static const char units[] = "KMGT";
  int u = -1;
  while (u < 3 && v && v % 1024 == 0)
    v /= 1024, u++;
  snprintf (buf, sizeof buf, "%" PRIu64 "%s", v, u >= 0 ? (char[]) { units[u], 0 } : "");
  return buf;
}

static const char *
default_chunk (void)
{
  MlKnobs k;
  ml_knobs_init (&k);
  return knob_size_text (k.chunk);
}

static const char *
default_retries (void)
{
  static char buf[16];
  MlKnobs k;
  ml_knobs_init (&k);
  snprintf (buf, sizeof buf, "%" PRIu32, k.retries);
  return buf;
}

static const char *
default_seed (void)
{
  static char buf[24];
  MlKnobs k;
  ml_knobs_init (&k);
  snprintf (buf, sizeof buf, "%" PRIu64, k.seed);
  return buf;
}

static const char *
default_align (void)
{
  static char buf[256];
  snprintf (buf, sizeof buf, "the input's own: %d for PyTorch snapshots, a CSV's alignment column (1 without one), "
            "a JSONL trace's or a graph's \"alignment\" (%d without one), %d for profiler traces",
            ML_SNAPSHOT_ALIGN, ML_TRACE_ALIGN, ML_TRACE_ALIGN);
  return buf;
}

const char *
cli_default_strategy (void)
{
  static char buf[128];
  snprintf (buf, sizeof buf, "%s when the trace has addresses, else %s", ml_strategy_initial (true)->name,
            ml_strategy_initial (false)->name);
  return buf;
}

const char *
cli_default_device (void)
{
  return "the device that recorded an OOM, else the one with the most memory: bytes reserved at the end plus bytes "
         "allocated over the trace";
}

static const char *
default_capacity (void)
{
  return "the one the input names (a JSONL trace's \"capacity\", a CSV named NAME.BYTES.csv), else none";
}

static const char *
default_format (void)
{
  return "by extension or content";
}

static const char *
default_reorder (void)
{
  return "none, the graph's own order";
}

const CliOption cli_shared_options[] = {
  { "strategies", 's', CLI_OPT_STRATEGIES, "A,B,...", "the strategies to run, or \"all\"", NULL,
    ml_strategies_default, CLI_COMPARE | CLI_REPORT | CLI_FIT },
  { "strategy", 's', CLI_OPT_STRATEGY, "S", "use this strategy's plan", NULL, cli_default_strategy,
    CLI_CHECK | CLI_RENDER | CLI_REPLAY },
  { "plan", 'p', CLI_OPT_PLAN, "FILE", "use this plan, written by 'memlens plan' (.json or .csv); not with --strategy", NULL,
    NULL, CLI_RENDER | CLI_REPLAY },
  { "jobs", 0, CLI_OPT_JOBS, "N", "several files: N at a time, then a summary table and the view across the ranks", "1", NULL,
    CLI_STATS | CLI_COMPARE | CLI_DIAGNOSE | CLI_REPORT },
  { "range", 0, CLI_OPT_RANGE, "T0:T1|STAGE[#K]",
    "PyTorch snapshots, Kineto traces: only ticks T0..T1 (1000:2000) or times from the first entry (1.5s:3s, 200ms:); either end "
    "may be left out; the rest of the file is skipped as it streams. A snapshot's external_annotations stage by name: its K-th "
    "START (the first by default) to the END that closes it", NULL, NULL, WINDOWED | CLI_TUNE },
  { "frames", 0, CLI_OPT_FRAMES, "user|all|REGEX", "which frame of a stack is a buffer's call site: user, the first in "
    "the user's code (not site-packages / dist-packages, the standard library, torch, C++; a stack of library code "
    "alone: its top frame); all, the first frame; or the first whose file:line:function matches the regular expression",
    "user", NULL, LOADERS },
  { "json", 0, CLI_OPT_JSON, NULL, "machine-readable output on stdout", NULL, NULL, PRINTERS },
  { "align", 0, CLI_OPT_ALIGN, "N", "alignment in bytes: every size is rounded up to it", NULL, default_align,
    BUILDERS },
  { "capacity", 0, CLI_OPT_CAPACITY, "SIZE", "device capacity, e.g. 40G, 80G, 1048576", NULL, default_capacity,
    PLANNERS & ~(CLI_DIAGNOSE | CLI_FIT) },
  { "format", 0, CLI_OPT_FORMAT, "NAME", "input format (the list: memlens convert --help)", NULL, default_format,
    LOADERS | CLI_TUNE },
  { "device", 0, CLI_OPT_DEVICE, "N|host", "PyTorch snapshots: which device, or host: the pinned host memory (host_segments, host_traces)", NULL, cli_default_device,
    LOADERS | CLI_TUNE },
  { "time-limit", 0, CLI_OPT_TIMELIMIT, "T", "per strategy, e.g. 10s, 2m (the offline planners)", NULL, NULL, PLANNERS },
  { "options", 0, CLI_OPT_OPTIONS, "K=V,...", "strategy options (memlens strategies lists each one's keys) and the "
    "graph reader's (docs/formats.md)", NULL, NULL, GRAPHS },
  { "seed", 0, CLI_OPT_SEED, "N", "seed for the randomised strategies", NULL, default_seed, PLANNERS },
  { "chunk", 0, CLI_OPT_CHUNK, "SIZE", "pool chunk / buddy segment size (pool, buddy only)", NULL, default_chunk,
    PLANNERS },
  { "retries", 0, CLI_OPT_RETRIES, "N", "after a refusal under --capacity, give the cache back and retry up to N "
    "times (caching, pool, buddy: the fit strategies and the planners cache nothing)", NULL, default_retries,
    PLANNERS },
  { "reorder", 0, CLI_OPT_REORDER, "memory|priority|none", "graphs: a memory-aware op order, GE's memory priority, "
    "or the graph's own", NULL, default_reorder, GRAPHS },
  { "dim", 0, CLI_OPT_DIM, "NAME=N", "graphs: bind a symbolic dimension (repeatable)", NULL, NULL, GRAPHS & ~CLI_FIT },
  { "max-block", 0, CLI_OPT_MAXBLOCK, "SIZE", "graphs: arena blocks of at most SIZE (offline planners)", NULL, NULL,
    GRAPHS },
  { "quiet", 0, CLI_OPT_QUIET, NULL, "no progress on stderr", NULL, NULL, LOADERS | CLI_TUNE },
  { "help", 'h', 'h', NULL, "this help", NULL, NULL, CLI_ALL },
  { NULL },
};
