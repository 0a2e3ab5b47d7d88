/* memlens — the command: thin, parses arguments, calls the libraries. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#ifndef MEMLENS_VERSION
#define MEMLENS_VERSION "dev"
#endif

static const MlCommand commands[] = {
  { "stats",      "events, buffers, streams, the lower bound and the peak points with blame", cmd_stats },
  { "compare",    "run strategies over a trace: peak, overhead, fragmentation, OOM, time", cmd_compare },
  { "sim",        "same as compare", cmd_compare },
  { "plan",       "run one strategy and write its plan (JSON, or CSV with offsets)", cmd_plan },
  { "check",      "validate a plan against a trace: conflicts, alignment, bounds", cmd_check },
  { "fit",        "the largest batch (a graph's symbolic dimension) whose plan fits a capacity, per strategy", cmd_fit },
  { "diagnose",   "explain an out-of-memory under a capacity: verdict, blame, what would fit", cmd_diagnose },
  { "report",     "write a tuning report: strategies, peaks with blame, OOM, races (.html/.md/.json/.csv)", cmd_report },
  { "diff",       "compare two runs: each peak, the change, bytes per call site at each peak", cmd_diff },
  { "render",     "draw the timeline of a plan: address x time, curves, peaks, races (.png/.svg/.pdf)", cmd_render },
  { "convert",    "convert between trace formats (.jsonl, .csv)", cmd_convert },
  { "strategies", "list the allocation strategies", cmd_strategies },
  { "view",       "open a trace in the GTK4 viewer (memlens-view)", cmd_view },
  { "trace",      "run a CUDA program under the CUPTI tracer and write its allocation timeline", cmd_trace },
  { "replay",     "validate a plan by replaying it on memory (host, or a GPU with --backend cuda)", cmd_replay },
};

static void
usage (FILE *fp)
{
  fprintf (fp,
           "memlens %s — GPU and deep-learning memory: timelines, allocators, planners\n\n"
           "Usage: memlens COMMAND [OPTIONS] ...\n\nCommands:\n", MEMLENS_VERSION);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf (fp, "  %-11s %s\n", commands[i].name, commands[i].summary);
  fprintf (fp,
           "\nSizes are bytes or 4K, 256M, 40G. Every command has --help.\n"
           "Exit codes: 0 ok, 1 problems found or out of memory, 2 bad usage or input.\n");
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      usage (stderr);
      return EXIT_BAD;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 || strcmp (argv[1], "help") == 0)
    {
      usage (stdout);
      return EXIT_OK;
    }
  if (strcmp (argv[1], "--version") == 0)
    {
      printf ("memlens %s\n", MEMLENS_VERSION);
      return EXIT_OK;
    }
  cli_install_signals ();
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      {
        int rc = commands[i].run (argc - 1, argv + 1);
        /* what went to stdout must have arrived: a full disk or a closed
         * pipe is an error, not a quiet 0 (fclose flushes what is left) */
        errno = 0;
        bool failed = ferror (stdout) != 0;
        if (fclose (stdout) != 0 || failed)
          {
            fprintf (stderr, "memlens %s: cannot write to standard output: %s\n", argv[1],
                     errno ? strerror (errno) : "a write failed");
            return EXIT_BAD;
          }
        return rc;
      }
  fprintf (stderr, "memlens: unknown command \"%s\"\n\n", argv[1]);
  usage (stderr);
  return EXIT_BAD;
}
