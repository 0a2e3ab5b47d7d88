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
  static const struct option longopts[] = { CLI_COMMON_LONGOPTS, CLI_RANGE_LONGOPT, { 0, 0, 0, 0 } };
  MlCliOpts o;
  cli_opts_init (&o);
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "h", longopts, NULL)) != -1)
    {
      if (c == 'h')
        {
          printf ("%s\nOptions:\n%s", usage_text, CLI_RANGE_HELP CLI_COMMON_HELP);
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
  if (cli_no_json ("convert", &o))
    return EXIT_BAD;
  const char *in = argv[optind], *out = argv[optind + 1];
  char ext[16];
  ml_path_ext (out, ext, sizeof ext, NULL);
  if (strcmp (ext, "jsonl") && strcmp (ext, "ndjson") && strcmp (ext, "csv"))
    return cli_fail ("convert", EXIT_BAD, "%s: cannot write \"%s\"; use .jsonl or .csv", out, ext);
  MlError err = { 0 };
  MlTrace *t;
  ml_out_protect (in);   /* "convert X X" must not replace X */
  if (ml_trace_load (in, &o.load, &t, &err) < 0)
    return cli_error ("convert", &err);
  cli_print_notes ("convert", in, t, o.quiet);
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
    {
      const char *kind = ((*s)->flags & ML_STRATEGY_RECORDED) ? "trace" : (*s)->kind == ML_STRATEGY_ONLINE ? "online" : "offline";
      /* one line each (scripts read the first two fields): what the table
       * says beyond the summary goes in brackets at the end */
      char line[512];
      size_t len = 0;
      line[0] = 0;
      if ((*s)->flags & ML_STRATEGY_DEFAULT)
        len += (size_t) snprintf (line + len, sizeof line - len, "; in the default set");
      if ((*s)->flags & ML_STRATEGY_PROVES_OPTIMAL)
        len += (size_t) snprintf (line + len, sizeof line - len, "; proves optimality");
      const char *sep = "; reads --";
      for (unsigned k = 1; k < ML_KNOB__END && len < sizeof line; k <<= 1)
        if ((*s)->knobs & k)
          {
            len += (size_t) snprintf (line + len, sizeof line - len, "%s%s", sep, ml_knob_name ((MlKnob) k));
            sep = ", --";
          }
      for (const char *const *key = (*s)->options; key && *key && len < sizeof line; key++)
        len += (size_t) snprintf (line + len, sizeof line - len, "%s%s", key == (*s)->options ? " (" : ", ", *key);
      if ((*s)->options && (*s)->options[0] && len < sizeof line)
        len += (size_t) snprintf (line + len, sizeof line - len, ")");
      printf ("%-16s %-8s %s%s%s%s\n", (*s)->name, kind, (*s)->summary, len ? " [" : "", len ? line + 2 : "", len ? "]" : "");
    }
  return EXIT_OK;
}
