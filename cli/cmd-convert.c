#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/export-sqlite.h"

#include "sim/formats/csv.h"
#include "sim/formats/jsonl.h"

static void
list_formats (FILE *fp)
{
  fprintf (fp, "\nInput formats (--format NAME; extensions in brackets):\n");
  for (const MlTraceFormat *const *f = ml_trace_formats (); *f; f++)
    fprintf (fp, "  %-17s [%s] %s\n", (*f)->name, (*f)->extensions, (*f)->description);
}

/* Writes @t as the planning instance: one CSV row per buffer, unaligned. */
static int
write_csv (const char *in, const MlTrace *t, const char *out, bool quiet)
{
  MlError err = { 0 };
  MlBuffers *bufs;
  if (ml_buffers_build (t, 1, &bufs, &err) < 0)
    {
      ml_error_prefix (&err, "%s", in);
      return cli_error ("convert", &err);
    }
  int rc = ml_buffers_write_csv_with (bufs, NULL, out, cli_progress (quiet), &err);
  cli_progress_done ();
  rc = rc < 0 ? cli_error ("convert", &err) : EXIT_OK;
  ml_buffers_free (bufs);
  return rc;
}

enum { OPT_OUTPUT = CLI_OPT_OWN };

static const CliOption convert_options[] = {
  { "output", 'o', OPT_OUTPUT, "FILE",
    "write every TRACE given into this SQLite database (.db, .sqlite; replaced once whole; docs/export.md)" },
  { NULL },
};

static int
convert_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  (void) o;
  if (key == OPT_OUTPUT)
    *(const char **) user = arg;
  return 0;
}

static bool
is_sqlite (const char *ext)
{
  return strcmp (ext, "db") == 0 || strcmp (ext, "sqlite") == 0 || strcmp (ext, "sqlite3") == 0;
}

static int
cmd_convert (int argc, char **argv)
{
  MlCliOpts o;
  const char *db = NULL;
  int rc = cli_parse (&cli_cmd_convert, argc, argv, &o, &db);
  if (rc != CLI_PARSED)
    return rc;
  char ext[16];
  if (db)
    {
      ml_path_ext (db, ext, sizeof ext, NULL);
      if (optind >= argc)
        return cli_usage (&cli_cmd_convert);
      if (!is_sqlite (ext))
        return cli_fail ("convert", EXIT_BAD, "%s: -o writes a SQLite database (.db, .sqlite); for .%s give IN OUT", db,
                         ext);
      for (int k = optind; k < argc; k++)
        ml_out_protect (argv[k]);
      return cli_export_sqlite (db, argv + optind, (size_t) (argc - optind), &o);
    }
  if (optind + 2 != argc)
    return cli_usage (&cli_cmd_convert);
  const char *in = argv[optind], *out = argv[optind + 1];
  ml_path_ext (out, ext, sizeof ext, NULL);
  if (is_sqlite (ext))
    {
      ml_out_protect (in);
      return cli_export_sqlite (out, argv + optind, 1, &o);
    }
  if (strcmp (ext, "jsonl") && strcmp (ext, "ndjson") && strcmp (ext, "csv"))
    return cli_fail ("convert", EXIT_BAD, "%s: cannot write \"%s\"; use .jsonl, .csv or .db", out, ext);
  MlError err = { 0 };
  MlTrace *t;
  ml_out_protect (in);   /* "convert X X" must not replace X */
  o.load.progress = cli_progress (o.quiet);
  rc = ml_trace_load (in, &o.load, &t, &err);
  cli_progress_done ();
  if (rc < 0)
    return cli_error ("convert", &err);
  cli_print_notes ("convert", in, t, o.quiet);
  if (cli_check_device ("convert", in, &o, t))
    {
      ml_trace_free (t);
      return EXIT_BAD;
    }
  if (strcmp (ext, "csv") == 0)
    rc = write_csv (in, t, out, o.quiet);
  else
    {
      rc = ml_trace_write_jsonl_with (t, out, cli_progress (o.quiet), &err);
      cli_progress_done ();
      rc = rc < 0 ? cli_error ("convert", &err) : EXIT_OK;
    }
  if (rc == EXIT_OK && !o.quiet)
    fprintf (stderr, "%s: wrote %s (%zu events)\n", in, out, t->n_events);
  ml_trace_free (t);
  return rc;
}

const CliCommand cli_cmd_convert = {
  .name = "convert",
  .bit = CLI_CONVERT,
  .summary = "convert between trace formats (.jsonl, .csv), or many traces into one SQLite database",
  .usage = "memlens convert [OPTIONS] IN OUT\n"
           "memlens convert [OPTIONS] TRACE... -o OUT.db\n",
  .about = "Converts a trace. IN: any format memlens reads; OUT by extension:\n"
           ".jsonl (native trace, keeps everything), .csv (the planning\n"
           "instance: one row per buffer) or .db (SQLite). With -o, every TRACE\n"
           "goes into one SQLite database, a rank column from each file's name:\n"
           "tables files, devices, segments, buffers, events, stacks, frames and\n"
           "call_sites (docs/export.md).\n",
  .options = convert_options,
  .option = convert_option,
  .more_help = list_formats,
  .run = cmd_convert,
};

static int
cmd_strategies (int argc, char **argv)
{
  MlCliOpts o;
  int rc = cli_parse (&cli_cmd_strategies, argc, argv, &o, NULL);
  if (rc != CLI_PARSED)
    return rc;
  if (optind != argc)
    return cli_usage (&cli_cmd_strategies);
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

const CliCommand cli_cmd_strategies = {
  .name = "strategies",
  .bit = CLI_STRATEGIES,
  .summary = "list the allocation strategies",
  .usage = "memlens strategies\n",
  .about = "Lists the allocation strategies, one a line: name, kind (online, offline,\n"
           "trace), what it does, and in brackets whether it is in the default set,\n"
           "whether it proves optimality, and the knobs and --options keys it reads.\n",
  .run = cmd_strategies,
};
