/* doc.c — what the option rows say, in three forms: each command's
 * --help, the manual page memlens(1) (roff) and the bash completion.
 * meson runs 'memlens --man' and 'memlens --completion' at build time and
 * installs both, so the page and the completion describe the binary they
 * are installed with (its strategies, its default set, its formats).
 */
#include "cli/cli.h"

#include <string.h>

#define MAX_ROWS 96
#define HELP_COLUMN 28
#define HELP_WIDTH 79

/* The row's help with its default: "text (default: X)", into @buf. */
static const char *
row_text (const CliOption *r, char *buf, size_t len)
{
  const char *d = r->dflt_text ? r->dflt_text () : r->dflt;
  if (d)
    snprintf (buf, len, "%s (default: %s)", r->help, d);
  else
    snprintf (buf, len, "%s", r->help);
  return buf;
}

/* Writes @text from column @col, wrapped at HELP_WIDTH, continuation
 * lines indented to @indent; breaks at spaces, and after a comma inside
 * a word too long for a line. */
static void
wrap (FILE *fp, const char *text, int col, int indent)
{
  bool line_start = true;
  for (const char *p = text; *p;)
    {
      while (*p == ' ')
        p++;
      size_t word = strcspn (p, " ");
      if (!word)
        break;
      if (!line_start && col + 1 + (int) word > HELP_WIDTH)
        {
          fprintf (fp, "\n%*s", indent, "");
          col = indent;
          line_start = true;
        }
      if (!line_start)
        {
          fputc (' ', fp);
          col++;
        }
      /* a comma list longer than the line: cut after the last comma that fits */
      while (col + (int) word > HELP_WIDTH)
        {
          size_t cut = 0;
          for (size_t i = 0; i < word; i++)
            if (p[i] == ',' && (col + (int) i + 1 <= HELP_WIDTH || !cut))
              cut = i + 1;
          if (!cut || cut == word)
            break;
          fprintf (fp, "%.*s\n%*s", (int) cut, p, indent, "");
          p += cut;
          word -= cut;
          col = indent;
        }
      fprintf (fp, "%.*s", (int) word, p);
      col += (int) word;
      p += word;
      line_start = false;
    }
  fputc ('\n', fp);
}

void
cli_usage_write (FILE *fp, const CliCommand *cmd)
{
  const char *p = cmd->usage;
  for (bool first = true; *p; first = false)
    {
      size_t n = strcspn (p, "\n");
      fprintf (fp, "%s%.*s\n", first ? "Usage: " : "       ", (int) n, p);
      p += n + (p[n] == '\n');
    }
  fputs (cmd->about, fp);
}

void
cli_help_write (FILE *fp, const CliCommand *cmd)
{
  const CliOption *rows[MAX_ROWS];
  size_t n = cli_command_options (cmd, rows, MAX_ROWS);
  cli_usage_write (fp, cmd);
  fputs ("\nOptions:\n", fp);
  for (size_t i = 0; i < n; i++)
    {
      const CliOption *r = rows[i];
      char left[128], text[1024];
      int len = snprintf (left, sizeof left, "  %c%c%s--%s%s%s", r->letter ? '-' : ' ', r->letter ? r->letter : ' ',
                          r->letter ? ", " : "  ", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
      fputs (left, fp);
      if (len + 2 > HELP_COLUMN)
        fprintf (fp, "\n%*s", HELP_COLUMN, "");
      else
        fprintf (fp, "%*s", HELP_COLUMN - len, "");
      wrap (fp, row_text (r, text, sizeof text), HELP_COLUMN, HELP_COLUMN);
    }
  if (cmd->more_help)
    cmd->more_help (fp);
}

/* ---- memlens(1) ---- */

/* roff text: backslashes escaped, dashes as \-, a line starting with a
 * dot or a quote protected. */
static void
roff (FILE *fp, const char *s, size_t n)
{
  bool line_start = true;
  for (size_t i = 0; i < n && s[i]; i++)
    {
      char ch = s[i];
      if (line_start && (ch == '.' || ch == '\''))
        fputs ("\\&", fp);
      if (ch == '\\')
        fputs ("\\e", fp);
      else if (ch == '-')
        fputs ("\\-", fp);
      else if (ch == ',' && i + 1 < n && s[i + 1] && s[i + 1] != ' ' && s[i + 1] != '\n')
        fputs (",\\:", fp);   /* a long comma list may break here */
      else
        fputc (ch, fp);
      line_start = ch == '\n';
    }
}

static void
roff_str (FILE *fp, const char *s)
{
  roff (fp, s, strlen (s));
}

/* A paragraph per blank-line-separated block of @text. */
static void
roff_paragraphs (FILE *fp, const char *text)
{
  const char *p = text;
  while (*p)
    {
      while (*p == '\n')
        p++;
      if (!*p)
        break;
      const char *end = strstr (p, "\n\n");
      size_t n = end ? (size_t) (end - p) : strlen (p);
      fputs (".PP\n", fp);
      roff (fp, p, n);
      if (n && p[n - 1] != '\n')
        fputc ('\n', fp);
      p += n;
    }
}

static void
man_command (FILE *fp, const CliCommand *cmd)
{
  fputs (".SS \"", fp);
  roff_str (fp, cmd->name);
  fputs ("\"\n.nf\n", fp);
  roff_str (fp, cmd->usage);
  fputs (".fi\n", fp);
  roff_paragraphs (fp, cmd->about);
  const CliOption *rows[MAX_ROWS];
  size_t n = cli_command_options (cmd, rows, MAX_ROWS);
  for (size_t i = 0; i < n; i++)
    {
      const CliOption *r = rows[i];
      char text[1024];
      fputs (".TP\n", fp);
      if (r->letter)
        fprintf (fp, "\\fB\\-%c\\fR, ", r->letter);
      fputs ("\\fB\\-\\-", fp);
      roff_str (fp, r->name);
      fputs ("\\fR", fp);
      if (r->arg)
        {
          fputs (" \\fI", fp);
          roff_str (fp, r->arg);
          fputs ("\\fR", fp);
        }
      fputc ('\n', fp);
      roff_str (fp, row_text (r, text, sizeof text));
      fputc ('\n', fp);
    }
}

void
cli_man_write (FILE *fp, const char *version)
{
  fprintf (fp, ".\\\" memlens(1), written by 'memlens --man' from the command's option tables\n"
               ".TH MEMLENS 1 \"\" \"memlens %s\" \"User Commands\"\n.SH NAME\nmemlens \\- GPU and deep-learning memory: "
               "timelines, allocators, planners\n.SH SYNOPSIS\n.B memlens\n.I COMMAND\n[\\fIOPTIONS\\fR] ...\n.br\n"
               ".B memlens\n\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR | \\fB\\-\\-man\\fR | \\fB\\-\\-completion\\fR\n"
               ".SH DESCRIPTION\nmemlens reads allocation timelines (PyTorch snapshots, profiler traces, its own JSONL "
               "traces, MiniMalloc CSVs, computation graphs), runs allocation strategies and planners over them, "
               "explains out-of-memory errors and draws and reports what it finds.\n"
               "Sizes are bytes or 4K, 256M, 40G.\n"
               "Every command has \\fB\\-\\-help\\fR, which shows what this page shows for it.\n"
               ".SH COMMANDS\n.ad l\n", version);
  for (const CliCommand *const *c = cli_commands (); *c; c++)
    man_command (fp, *c);
  fputs (".SS \"sim\"\nThe same as \\fBcompare\\fR.\n", fp);
  fputs (".SH \"EXIT STATUS\"\n.TP\n0\nok\n.TP\n1\nproblems found (a check, a corrupted replay) or out of memory\n"
         ".TP\n2\nbad usage or bad input (the message names the file, the line or entry and the value)\n"
         ".SH ENVIRONMENT\n.TP\n.B MEMLENS_INJECT\nthe CUPTI tracer library for \\fBmemlens trace\\fR\n"
         ".TP\n.B MEMLENS_VIEW\nthe viewer program for \\fBmemlens view\\fR\n"
         ".SH \"SEE ALSO\"\nThe documents in the source's docs/ folder: formats.md, strategies.md, diagnose.md, "
         "render.md, report\\-schema.md, tracing.md, viewer.md.\n", fp);
}

/* ---- bash completion ---- */

/* What the completion offers for an option's argument, by its name as
 * help shows it (cli/options.h): a word list, files, or nothing. */
static void
complete_arg (FILE *fp, const CliOption *r)
{
  const char *a = r->arg;
  size_t n = strlen (a);
  if (strchr (a, '|'))
    {
      fputs ("COMPREPLY=($(compgen -W \"", fp);
      for (const char *p = a; *p; p++)
        fputc (*p == '|' ? ' ' : *p, fp);
      fputs ("\" -- \"$cur\"));;\n", fp);
    }
  else if (strcmp (a, "S") == 0)
    fputs ("COMPREPLY=($(compgen -W \"$_memlens_strategies\" -- \"$cur\"));;\n", fp);
  else if (strcmp (a, "A,B,...") == 0)
    fputs ("_memlens_list \"$_memlens_strategies all\";;\n", fp);
  else if (strcmp (r->name, "format") == 0)
    fputs ("COMPREPLY=($(compgen -W \"$_memlens_formats\" -- \"$cur\"));;\n", fp);
  else if ((n >= 4 && strcmp (a + n - 4, "FILE") == 0) || strcmp (a, "PATTERN") == 0)
    fputs ("COMPREPLY=($(compgen -f -- \"$cur\"));;\n", fp);
  else
    fputs ("COMPREPLY=();;\n", fp);
}

static void
completion_command (FILE *fp, const CliCommand *cmd, const char *name)
{
  const CliOption *rows[MAX_ROWS];
  size_t n = cli_command_options (cmd, rows, MAX_ROWS);
  fprintf (fp, "    %s)\n      opts=\"", name);
  for (size_t i = 0; i < n; i++)
    {
      if (rows[i]->letter)
        fprintf (fp, "-%c ", rows[i]->letter);
      fprintf (fp, "--%s%s", rows[i]->name, i + 1 < n ? " " : "");
    }
  fputs ("\"\n      case $prev in\n", fp);
  for (size_t i = 0; i < n; i++)
    if (rows[i]->arg)
      {
        fputs ("        ", fp);
        if (rows[i]->letter)
          fprintf (fp, "-%c|", rows[i]->letter);
        fprintf (fp, "--%s) ", rows[i]->name);
        complete_arg (fp, rows[i]);
      }
  fputs ("        *) return 1;;\n      esac;;\n", fp);
}

void
cli_completion_write (FILE *fp)
{
  fputs ("# bash completion for memlens, written by 'memlens --completion' from the command's option tables\n", fp);
  fputs ("_memlens_strategies=\"", fp);
  for (const MlStrategy *const *s = ml_strategies_all (); *s; s++)
    fprintf (fp, "%s%s", s == ml_strategies_all () ? "" : " ", (*s)->name);
  fputs ("\"\n_memlens_formats=\"", fp);
  for (const MlTraceFormat *const *f = ml_trace_formats (); *f; f++)
    fprintf (fp, "%s%s", f == ml_trace_formats () ? "" : " ", (*f)->name);
  fputs ("\"\n_memlens_commands=\"", fp);
  for (const CliCommand *const *c = cli_commands (); *c; c++)
    fprintf (fp, "%s ", (*c)->name);
  fputs ("sim\"\n\n"
         "# a comma list: complete the word after the last comma\n"
         "_memlens_list ()\n{\n  local pre=\"\"\n  [[ $cur == *,* ]] && pre=${cur%,*},\n"
         "  COMPREPLY=($(compgen -P \"$pre\" -W \"$1\" -- \"${cur##*,}\"))\n}\n\n"
         "# the options of a command (in $opts) and what its option before the cursor takes;\n"
         "# returns 1 when the word is not an option's argument\n"
         "_memlens_command ()\n{\n  case $1 in\n", fp);
  for (const CliCommand *const *c = cli_commands (); *c; c++)
    completion_command (fp, *c, (*c)->name);
  completion_command (fp, cli_command_find ("sim"), "sim");
  fputs ("    *) return 1;;\n  esac\n}\n\n"
         "_memlens ()\n{\n  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opts=\"\"\n"
         "  COMPREPLY=()\n  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
         "    COMPREPLY=($(compgen -W \"$_memlens_commands --help --version --man --completion\" -- \"$cur\"))\n"
         "    return 0\n  fi\n"
         "  local i\n  for ((i = 2; i < COMP_CWORD; i++)); do\n"
         "    [ \"${COMP_WORDS[i]}\" = -- ] && { COMPREPLY=($(compgen -f -- \"$cur\")); return 0; }\n  done\n"
         "  _memlens_command \"${COMP_WORDS[1]}\" && return 0\n"
         "  if [[ $cur == -* ]]; then\n    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
         "  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n  fi\n}\n"
         "complete -o filenames -F _memlens memlens\n", fp);
}
