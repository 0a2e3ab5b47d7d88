/* test-cli.c — the option tables of the memlens command (cli/options.h):
 * each command's rows are consistent, and its --help, the manual page
 * and the bash completion show every row it accepts and no other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "tests/tap.h"

#define MAX_ROWS 96

/* What @write writes, in a malloc'd string (through a temporary file:
 * the text is read back whole). */
static char *
written (void (*write) (FILE *, const void *), const void *arg)
{
  FILE *fp = tmpfile ();
  if (!fp)
    return strdup ("");
  write (fp, arg);
  long len = ftell (fp);
  char *text = calloc (1, (size_t) len + 1);
  rewind (fp);
  if (text && fread (text, 1, (size_t) len, fp) != (size_t) len)
    text[0] = 0;
  fclose (fp);
  return text;
}

static void
help_of (FILE *fp, const void *cmd)
{
  cli_help_write (fp, cmd);
}

static void
man_of (FILE *fp, const void *unused)
{
  cli_man_write (fp, "test");
}

static void
completion_of (FILE *fp, const void *unused)
{
  cli_completion_write (fp);
}

/* Whether the option list of @text (help lines "  -x, --name" or
 * "      --name") names --@name. */
static bool
help_lists (const char *help, const CliOption *r)
{
  char line[160];
  if (r->letter)
    snprintf (line, sizeof line, "\n  -%c, --%s%s", r->letter, r->name, r->arg ? " " : "");
  else
    snprintf (line, sizeof line, "\n      --%s%s", r->name, r->arg ? " " : "");
  const char *p = strstr (help, "\nOptions:\n");
  if (!p)
    return false;
  for (p = strstr (p, line); p; p = strstr (p + 1, line))
    {
      char after = p[strlen (line)];
      if (r->arg || after == ' ' || after == '\n')
        return true;
    }
  return false;
}

/* The rows of every command hold together. */
static void
test_rows (void)
{
  for (const CliCommand *const *c = cli_commands (); *c; c++)
    {
      const CliOption *rows[MAX_ROWS];
      size_t n = cli_command_options (*c, rows, MAX_ROWS);
      bool names_unique = true, letters_unique = true, described = true, has_help = false, handled = true;
      for (size_t i = 0; i < n; i++)
        {
          has_help |= strcmp (rows[i]->name, "help") == 0;
          described &= rows[i]->help && rows[i]->help[0] && !strchr (rows[i]->help, '\n');
          /* an own row goes to the command's handler, a shared one to cli_common_option */
          handled &= rows[i]->commands || (*c)->option;
          for (size_t j = i + 1; j < n; j++)
            {
              names_unique &= strcmp (rows[i]->name, rows[j]->name) != 0;
              letters_unique &= !rows[i]->letter || rows[i]->letter != rows[j]->letter;
            }
        }
      ok (n < MAX_ROWS, "%s: %zu options", (*c)->name, n);
      ok (names_unique, "%s: no option name twice", (*c)->name);
      ok (letters_unique, "%s: no short letter twice", (*c)->name);
      ok (described, "%s: every option has a one-line help", (*c)->name);
      ok (has_help, "%s: takes --help", (*c)->name);
      ok (handled, "%s: its own options have a handler", (*c)->name);
      ok ((*c)->usage && strncmp ((*c)->usage, "memlens ", 8) == 0 && (*c)->about && (*c)->summary,
          "%s: usage, description and summary", (*c)->name);
    }
  /* a name means one thing to the parser: with or without an argument */
  bool same_arity = true, applies = true;
  for (const CliCommand *const *a = cli_commands (); *a; a++)
    for (const CliCommand *const *b = cli_commands (); *b; b++)
      {
        const CliOption *ra[MAX_ROWS], *rb[MAX_ROWS];
        size_t na = cli_command_options (*a, ra, MAX_ROWS), nb = cli_command_options (*b, rb, MAX_ROWS);
        for (size_t i = 0; i < na; i++)
          for (size_t j = 0; j < nb; j++)
            if (strcmp (ra[i]->name, rb[j]->name) == 0 && !ra[i]->arg != !rb[j]->arg)
              {
                printf ("#   --%s: %s takes an argument, %s not\n", ra[i]->name, ra[i]->arg ? (*a)->name : (*b)->name,
                      ra[i]->arg ? (*b)->name : (*a)->name);
                same_arity = false;
              }
      }
  for (const CliOption *r = cli_shared_options; r->name; r++)
    applies &= (r->commands & CLI_ALL) != 0 && !(r->commands & ~CLI_ALL);
  ok (same_arity, "an option name takes an argument in every command or in none");
  ok (applies, "every shared option applies to some command");
  ok (cli_command_find ("sim") == cli_command_find ("compare"), "sim is compare");
}

/* --help lists exactly the command's rows, each with its default. */
static void
test_help (void)
{
  for (const CliCommand *const *c = cli_commands (); *c; c++)
    {
      char *help = written (help_of, *c);
      const CliOption *rows[MAX_ROWS];
      size_t n = cli_command_options (*c, rows, MAX_ROWS);
      bool all = true, only = true, defaults = true;
      for (size_t i = 0; i < n; i++)
        {
          all &= help_lists (help, rows[i]);
          const char *d = rows[i]->dflt_text ? rows[i]->dflt_text () : rows[i]->dflt;
          char want[512];
          snprintf (want, sizeof want, "(default: %.400s)", d ? d : "");
          /* the help wraps: compare with every run of blanks as one space */
          char flat[16384];
          size_t k = 0;
          for (const char *p = help; *p && k + 1 < sizeof flat; p++)
            if (*p == ' ' || *p == '\n')
              {
                if (k && flat[k - 1] != ' ')
                  flat[k++] = ' ';
              }
            else
              flat[k++] = *p;
          flat[k] = 0;
          /* a comma list is cut after a comma, without a space */
          char nospace[16384];
          k = 0;
          for (size_t i2 = 0; flat[i2]; i2++)
            if (!(flat[i2] == ' ' && i2 && flat[i2 - 1] == ','))
              nospace[k++] = flat[i2];
          nospace[k] = 0;
          if (d && !strstr (flat, want) && !strstr (nospace, want))
            {
              printf ("#   %s --%s: help lacks \"%s\"\n", (*c)->name, rows[i]->name, want);
              defaults = false;
            }
        }
      /* every "--name" at the start of an option line is a row of the command */
      const char *p = strstr (help, "\nOptions:\n");
      for (p = p ? strstr (p, "\n  ") : NULL; p; p = strstr (p + 1, "\n  "))
        {
          const char *dash = strstr (p, "--");
          if (!dash || dash - p > 8)
            continue;
          char name[64];
          snprintf (name, sizeof name, "%.*s", (int) strcspn (dash + 2, " \n"), dash + 2);
          if (!cli_command_option (*c, name))
            {
              printf ("#   %s: help lists --%s, which it does not read\n", (*c)->name, name);
              only = false;
            }
        }
      ok (all, "%s --help lists each of its %zu options", (*c)->name, n);
      ok (only, "%s --help lists no other option", (*c)->name);
      ok (defaults, "%s --help gives each default", (*c)->name);
      free (help);
    }
}

/* memlens(1): a section per command with exactly its rows. */
static void
test_man (void)
{
  char *man = written (man_of, NULL);
  for (const CliCommand *const *c = cli_commands (); *c; c++)
    {
      char head[64];
      snprintf (head, sizeof head, "\n.SS \"%s\"\n", (*c)->name);
      const char *sec = strstr (man, head);
      ok (sec != NULL, "the manual page has a section for %s", (*c)->name);
      if (!sec)
        continue;
      const char *end = strstr (sec + 1, "\n.SS ");
      if (!end)
        end = strstr (sec + 1, "\n.SH ");
      size_t len = end ? (size_t) (end - sec) : strlen (sec);
      size_t listed = 0;
      for (const char *p = strstr (sec, "\n.TP\n"); p && p < sec + len; p = strstr (p + 1, "\n.TP\n"))
        listed++;
      const CliOption *rows[MAX_ROWS];
      size_t n = cli_command_options (*c, rows, MAX_ROWS);
      bool all = true;
      for (size_t i = 0; i < n; i++)
        {
          char want[96];
          size_t w = (size_t) snprintf (want, sizeof want, "\\fB\\-\\-");
          for (const char *q = rows[i]->name; *q && w + 3 < sizeof want; q++)
            w += (size_t) snprintf (want + w, sizeof want - w, *q == '-' ? "\\-" : "%c", *q);
          snprintf (want + w, sizeof want - w, "\\fR");
          /* "\fR" after the name: --a is not found inside --ab */
          all &= memmem (sec, len, want, strlen (want)) != NULL;
        }
      ok (all && listed == n, "%s: the manual page lists its %zu options (%zu entries)", (*c)->name, n, listed);
    }
  free (man);
}

/* The completion offers each command's options, and nothing more. */
static void
test_completion (void)
{
  char *comp = written (completion_of, NULL);
  for (const CliCommand *const *c = cli_commands (); *c; c++)
    {
      char want[4096];
      size_t len = (size_t) snprintf (want, sizeof want, "\n    %s)\n      opts=\"", (*c)->name);
      const CliOption *rows[MAX_ROWS];
      size_t n = cli_command_options (*c, rows, MAX_ROWS);
      for (size_t i = 0; i < n; i++)
        {
          if (rows[i]->letter)
            len += (size_t) snprintf (want + len, sizeof want - len, "-%c ", rows[i]->letter);
          len += (size_t) snprintf (want + len, sizeof want - len, "--%s%s", rows[i]->name, i + 1 < n ? " " : "\"\n");
        }
      ok (strstr (comp, want) != NULL, "the completion of %s offers exactly its options", (*c)->name);
    }
  free (comp);
}

int
main (void)
{
  test_rows ();
  test_help ();
  test_man ();
  test_completion ();
  return tap_done ();
}
