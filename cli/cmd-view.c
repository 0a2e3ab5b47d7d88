/* cmd-view.c — `memlens view [FILE]`: runs the GTK4 viewer.
 *
 * The viewer is a separate program, memlens-view (gui/), so that this
 * command never links GTK: it looks for memlens-view beside this binary
 * (installed), in ../gui/ (the build tree), in MEMLENS_BINDIR, then on
 * PATH; $MEMLENS_VIEW overrides them all. Arguments pass through, but
 * --range (checked here) travels as $MEMLENS_VIEW_RANGE, which the
 * viewer's loading job reads (gui/document.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#ifndef MEMLENS_BINDIR
#define MEMLENS_BINDIR "/usr/local/bin"
#endif

static const char usage_text[] =
  "Usage: memlens view [OPTIONS] [FILE]\n\n"
  "Opens FILE (any format memlens reads: PyTorch snapshot, memlens trace, profiler trace,\n"
  "MiniMalloc CSV, graph) in the GTK4 viewer: buffers by address and time, live /\n"
  "reserved / fragmentation curves, strategies side by side, peaks, races and OOMs.\n\n"
  "Options:\n"
  "  -s, --strategy NAME  strategy to show first (default: recorded when the trace\n"
  "                       has addresses, else best-fit)\n"
  "  -c, --compare NAME   show a second strategy below, with linked zoom\n"
  "  --range T0:T1        PyTorch snapshots: load only ticks T0..T1 (1000:2000) or\n"
  "                       times from the first entry (1.5s:3s); either end may be\n"
  "                       left out\n"
  "  -h, --help           this help\n\n"
  "Keys: + / - zoom, 0 fit, arrows pan, Ctrl+F find, Ctrl+E export, Ctrl+O open.\n"
  "Mouse: Ctrl+scroll zooms at the pointer, drag pans, Shift+drag zooms to a range,\n"
  "click a buffer for its details and stack.\n";

static int
try_exec (const char *path, char **argv)
{
  if (access (path, X_OK) != 0)
    return -1;
  argv[0] = (char *) path;
  execv (path, argv);
  return -1;
}

int
cmd_view (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
        {
          fputs (usage_text, stdout);
          return EXIT_OK;
        }
      if (strcmp (argv[i], "--") == 0)
        break;
    }
  char **args = calloc ((size_t) argc + 1, sizeof *args);
  if (!args)
    return cli_fail ("view", EXIT_BAD, "out of memory");
  int n_args = 1;
  bool files = false;
  for (int i = 1; i < argc; i++)
    {
      const char *range = NULL;
      if (!files && strcmp (argv[i], "--range") == 0)
        {
          if (i + 1 >= argc)
            {
              free (args);
              return cli_fail ("view", EXIT_BAD, "--range needs a value (T0:T1)");
            }
          range = argv[++i];
        }
      else if (!files && strncmp (argv[i], "--range=", 8) == 0)
        range = argv[i] + 8;
      if (range)
        {
          MlRange r;
          MlError err = { 0 };
          if (ml_range_parse (range, &r, &err) < 0)
            {
              free (args);
              return cli_error ("view", &err);
            }
          setenv ("MEMLENS_VIEW_RANGE", range, 1);
          continue;
        }
      files = files || strcmp (argv[i], "--") == 0;
      args[n_args++] = argv[i];
    }

  const char *env = getenv ("MEMLENS_VIEW");
  if (env && *env)
    {
      try_exec (env, args);
      free (args);
      return cli_fail ("view", EXIT_BAD, "cannot run $MEMLENS_VIEW (%s): %s", env, strerror (errno));
    }
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n > 0)
    {
      self[n] = 0;
      char *slash = strrchr (self, '/');
      if (slash)
        {
          *slash = 0;
          char path[PATH_MAX + 32];
          snprintf (path, sizeof path, "%s/memlens-view", self);
          try_exec (path, args);
          snprintf (path, sizeof path, "%s/../gui/memlens-view", self);
          try_exec (path, args);
        }
    }
  try_exec (MEMLENS_BINDIR "/memlens-view", args);
  args[0] = (char *) "memlens-view";
  execvp ("memlens-view", args);
  free (args);
  return cli_fail ("view", EXIT_BAD,
                   "the viewer (memlens-view) is not installed: this memlens was built without GTK 4.8 "
                   "(meson -Dgui=enabled needs libgtk-4-dev)");
}
