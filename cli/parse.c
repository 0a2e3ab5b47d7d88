/* parse.c — a command's command line, read with the rows that describe it.
 *
 * The getopt_long table is built from the command's rows (its own, then
 * the shared ones that name it); an option another command reads is
 * refused as one that does not apply here, an unknown one as unknown.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <string.h>

#define MAX_ROWS 96
#define ROW_VAL 256   /* getopt's val of row i: ROW_VAL + i */

size_t
cli_command_options (const CliCommand *cmd, const CliOption **rows, size_t max)
{
  size_t n = 0;
  for (const CliOption *r = cmd->options; r && r->name && n < max; r++)
    rows[n++] = r;
  for (const CliOption *r = cli_shared_options; r->name && n < max; r++)
    if (r->commands & cmd->bit)
      rows[n++] = r;
  return n;
}

const CliOption *
cli_command_option (const CliCommand *cmd, const char *name)
{
  const CliOption *rows[MAX_ROWS];
  size_t n = cli_command_options (cmd, rows, MAX_ROWS);
  for (size_t i = 0; i < n; i++)
    if (strcmp (rows[i]->name, name) == 0)
      return rows[i];
  return NULL;
}

bool
cli_given (const MlCliOpts *o, int key)
{
  for (unsigned i = 0; i < o->n_given; i++)
    if (o->given[i] == key)
      return true;
  return false;
}

/* The commands other than @self that read an option named @name (long,
 * or the letter when @name is one character), as ", a, b" into @out;
 * false when none does. */
static bool
read_elsewhere (const CliCommand *self, const char *name, char *out, size_t len)
{
  size_t used = 0;
  out[0] = 0;
  for (const CliCommand *const *c = cli_commands (); *c; c++)
    {
      const CliOption *rows[MAX_ROWS];
      size_t n = cli_command_options (*c, rows, MAX_ROWS);
      bool reads = false;
      for (size_t i = 0; i < n && !reads; i++)
        reads = name[1] ? strcmp (rows[i]->name, name) == 0 : rows[i]->letter == name[0];
      if (reads && *c != self && used < len)
        used += (size_t) snprintf (out + used, len - used, ", %s", (*c)->name);
    }
  return out[0] != 0;
}

/* "--seed does not apply to stats (it is read by compare, ...)". */
static int
not_here (const CliCommand *cmd, const char *dashes, const char *name, const char *others)
{
  cli_fail (cmd->name, EXIT_BAD, "%s%s does not apply to %s (it is read by %s)", dashes, name, cmd->name, others);
  fprintf (stderr, "Run 'memlens %s --help' for the options.\n", cmd->name);
  return EXIT_BAD;
}

/* The name as typed when getopt matched @row by a prefix of its name
 * ("--max" for --max-block), into @typed; NULL when it was typed whole
 * or as a letter. @word = the option's word in argv. */
static const char *
abbreviated (const CliOption *row, const char *word, char *typed, size_t len)
{
  if (strncmp (word, "--", 2) != 0)
    return NULL;
  snprintf (typed, len, "%.*s", (int) strcspn (word + 2, "="), word + 2);
  return strcmp (typed, row->name) != 0 ? typed : NULL;
}

/* Says what is wrong with the option getopt refused (@c '?' or ':'). */
static int
refuse (const CliCommand *cmd, const CliOption *const *rows, int c, char **argv)
{
  const char *arg = argv[optind - 1];
  char name[64], others[512];
  if (c == ':' || (optopt >= ROW_VAL && optopt < ROW_VAL + MAX_ROWS))
    {
      const CliOption *r = optopt >= ROW_VAL ? rows[optopt - ROW_VAL] : NULL;
      if (!r)
        return cli_fail (cmd->name, EXIT_BAD, "option -%c needs an argument", optopt);
      return cli_fail (cmd->name, EXIT_BAD, r->arg ? "option --%s needs an argument (%s)" : "option --%s takes no argument",
                       r->name, r->arg ? r->arg : "");
    }
  if (optopt)
    snprintf (name, sizeof name, "%c", optopt);
  else
    snprintf (name, sizeof name, "%.*s", (int) strcspn (arg + 2, "="), arg + 2);
  if (read_elsewhere (cmd, name, others, sizeof others))
    return not_here (cmd, optopt ? "-" : "--", name, others + 2);
  if (optopt)
    cli_fail (cmd->name, EXIT_BAD, "invalid option -- '%c'", optopt);
  else
    cli_fail (cmd->name, EXIT_BAD, "unrecognized option '%s'", arg);
  return cli_usage (cmd);
}

/* The getopt tables of @rows: short letters into @shorts. */
static void
build_tables (const CliCommand *cmd, const CliOption *const *rows, size_t n, struct option *longopts, char *shorts)
{
  char *s = shorts;
  if (cmd->in_order)
    *s++ = '+';
  *s++ = ':';
  for (size_t i = 0; i < n; i++)
    {
      longopts[i] = (struct option) { rows[i]->name, rows[i]->arg ? required_argument : no_argument, NULL,
                                      (int) (ROW_VAL + i) };
      if (rows[i]->letter)
        {
          *s++ = rows[i]->letter;
          if (rows[i]->arg)
            *s++ = ':';
        }
    }
  *s = 0;
  longopts[n] = (struct option) { 0 };
}

/* Hands @arg to the row's reader: the command's own, else the shared one. */
static int
take (const CliCommand *cmd, const CliOption *row, MlCliOpts *o, void *user, const char *arg)
{
  if (!row->commands)   /* a row of the command's own table */
    return cmd->option (o, user, row->key, arg);
  if (!cli_common_option (cmd->name, o, row->key, arg))
    return cli_fail (cmd->name, EXIT_BAD, "--%s: no code reads this option", row->name);
  return 0;
}

int
cli_parse (const CliCommand *cmd, int argc, char **argv, MlCliOpts *o, void *user)
{
  cli_opts_init (o);
  const CliOption *rows[MAX_ROWS];
  size_t n = cli_command_options (cmd, rows, MAX_ROWS);
  struct option longopts[MAX_ROWS + 1];
  char shorts[3 * MAX_ROWS + 3];
  build_tables (cmd, rows, n, longopts, shorts);
  for (size_t i = 0; i < n; i++)
    if (rows[i]->dflt)
      {
        int rc = take (cmd, rows[i], o, user, rows[i]->dflt);
        if (rc)
          return rc;
      }
  optind = 0;
  opterr = 0;
  int c;
  while ((c = getopt_long (argc, argv, shorts, longopts, NULL)) != -1)
    {
      const CliOption *row = NULL;
      if (c >= ROW_VAL && c < ROW_VAL + (int) n)
        row = rows[c - ROW_VAL];
      for (size_t i = 0; i < n && !row && c != '?' && c != ':'; i++)
        if (rows[i]->letter == c)
          row = rows[i];
      if (!row)
        return refuse (cmd, rows, c, argv);
      /* a prefix that is another command's option by its whole name (fit's
       * --max, not --max-block) does not apply here */
      char typed[64], others[512];
      const char *word = argv[optind - (row->arg && optarg == argv[optind - 1] ? 2 : 1)];
      if (abbreviated (row, word, typed, sizeof typed) && read_elsewhere (cmd, typed, others, sizeof others))
        return not_here (cmd, "--", typed, others + 2);
      if (row->key == 'h')
        {
          cli_help_write (stdout, cmd);
          return EXIT_OK;
        }
      int rc = take (cmd, row, o, user, row->arg ? optarg : NULL);
      if (rc)
        return rc;
      if (o->n_given < sizeof o->given / sizeof o->given[0])
        o->given[o->n_given++] = row->key;
    }
  return CLI_PARSED;
}
