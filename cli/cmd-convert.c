#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#include "sim/formats/csv.h"
#include "sim/formats/jsonl.h"

static const char usage_text[] =
  "Usage: memlens convert [OPTIONS] IN OUT\n"
  "Converts a trace. IN: any format memlens reads; OUT by extension:\n"
  ".jsonl (native trace, keeps everything) or .csv (the planning\n"
  "instance: one row per buffer).\n";

int
cmd_convert (int argc, char **argv)
{
  static const struct option longopts[] = { CLI_COMMON_LONGOPTS, { 0, 0, 0, 0 } };
  MlCliOpts o;
  cli_opts_init (&o);
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "h", longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("%s\nOptions:\n%s", usage_text, CLI_COMMON_HELP);
          printf ("\nInput formats (--format NAME; extensions in brackets):\n");
          for (const MlTraceFormat *const *f = ml_trace_formats (); *f; f++)
            printf ("  %-17s [%s] %s\n", (*f)->name, (*f)->extensions, (*f)->description);
          return EXIT_OK;
        }
      if (c == '?' || !cli_common_option ("convert", &o, c, optarg))
        return cli_usage ("convert", usage_text);
    }
  if (optind + 2 != argc)
    return cli_usage ("convert", usage_text);
  const char *in = argv[optind], *out = argv[optind + 1];
  char ext[16];
  ml_path_ext (out, ext, sizeof ext, NULL);
  if (strcmp (ext, "jsonl") && strcmp (ext, "ndjson") && strcmp (ext, "csv"))
    return cli_fail ("convert", EXIT_BAD, "%s: cannot write \"%s\"; use .jsonl or .csv", out, ext);
  MlError err = { 0 };
  MlTrace *t;
  if (ml_trace_load (in, &o.load, &t, &err) < 0)
    return cli_error ("convert", &err);
  int rc = EXIT_OK;
  if (strcmp (ext, "csv") == 0)
    {
      MlBuffers *bufs;
      if (ml_buffers_build (t, 1, &bufs, &err) < 0)
        {
          ml_error_prefix (&err, "%s", in);
          rc = cli_error ("convert", &err);
        }
      else
        {
          if (ml_buffers_write_csv (bufs, NULL, out, &err) < 0)
            rc = cli_error ("convert", &err);
          ml_buffers_free (bufs);
        }
    }
  else if (ml_trace_write_jsonl (t, out, &err) < 0)
    rc = cli_error ("convert", &err);
  if (rc == EXIT_OK && !o.quiet)
    fprintf (stderr, "wrote %s (%zu events)\n", out, t->n_events);
  ml_trace_free (t);
  return rc;
}

int
cmd_strategies (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
    printf ("%-16s %-8s %s\n", (*s)->name, (*s)->kind == ML_STRATEGY_ONLINE ? "online" : "offline", (*s)->summary);
  printf ("%-16s %-8s %s\n", "recorded", "trace", "what the real allocator did (traces with addresses)");
  return EXIT_OK;
}
