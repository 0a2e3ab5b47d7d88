/* option-values.c — how each option of cli_shared_options (cli/options.c)
 * is read into a command's MlCliOpts: sizes, devices, knobs, graph loader
 * options, and what is wrong with a value.
 */
#include "cli/cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/formats/snapshot.h"

/* A graph loader option appended to @o's list for the graph reader
 * ("reorder=memory", "max_block=N"); the list lives as long as the run. */
static void
append_graph_option (const char *cmd, MlCliOpts *o, const char *item)
{
  static char buf[1024];
  const char *prev = o->load.graph_options;
  char tmp[1024];
  int n = snprintf (tmp, sizeof tmp, "%s%s%s", prev ? prev : "", prev ? "," : "", item);
  if (n < 0 || (size_t) n >= sizeof tmp)
    exit (cli_fail (cmd, EXIT_BAD, "%s: too many graph options", item));
  memcpy (buf, tmp, (size_t) n + 1);
  o->load.graph_options = buf;
}

/* --dim NAME=N, accumulated into "B=8,S=128" for the graph reader. */
static void
add_dim (const char *cmd, MlCliOpts *o, const char *arg)
{
  static char buf[1024];
  uint64_t v;
  const char *eq = strchr (arg, '=');
  if (!eq || eq == arg || ml_parse_u64 (eq + 1, strlen (eq + 1), &v) < 0 || strchr (arg, ','))
    exit (cli_fail (cmd, EXIT_BAD, "--dim %s: use NAME=SIZE, e.g. --dim B=8", arg));
  if (strlen (buf) + strlen (arg) + 2 > sizeof buf)
    exit (cli_fail (cmd, EXIT_BAD, "--dim %s: too many dimensions", arg));
  if (buf[0])
    strcat (buf, ",");
  strcat (buf, arg);
  o->load.dims = buf;
}

/* A size that must be more than 0 (--capacity, --chunk, --max-block). */
static uint64_t
positive_size (const char *cmd, const char *opt, const char *arg)
{
  MlError err = { 0 };
  uint64_t v;
  if (ml_parse_size (arg, &v, &err) < 0)
    exit (cli_error (cmd, &err));
  if (v == 0)
    exit (cli_fail (cmd, EXIT_BAD, "--%s %s: must be more than 0", opt, arg));
  return v;
}

/* The options that steer loading and lifetimes. */
static int
load_option (const char *cmd, MlCliOpts *o, int opt, const char *arg)
{
  MlError err = { 0 };
  uint64_t v;
  char item[64];
  switch (opt)
    {
    case CLI_OPT_ALIGN:
      if (ml_parse_size (arg, &v, &err) < 0)
        exit (cli_error (cmd, &err));
      if (v == 0 || (v & (v - 1)))
        exit (cli_fail (cmd, EXIT_BAD, "--align %s: the alignment must be a power of two", arg));
      o->knobs.align = v;
      return 1;
    case CLI_OPT_FORMAT:
      o->load.format = arg;
      return 1;
    case CLI_OPT_RANGE:
      if (ml_range_parse (arg, &o->load.range, &err) < 0)
        exit (cli_error (cmd, &err));
      return 1;
    case CLI_OPT_FRAMES:
      if (ml_frames_parse (arg, &o->load.frames, &err) < 0)
        exit (cli_error (cmd, &err));
      return 1;
    case CLI_OPT_DEVICE:
      if (ml_device_parse (arg, &o->load.device, &err) < 0)
        exit (cli_error (cmd, &err));
      return 1;
    case CLI_OPT_REORDER:
      if (strcmp (arg, "memory") != 0 && strcmp (arg, "priority") != 0 && strcmp (arg, "none") != 0)
        exit (cli_fail (cmd, EXIT_BAD, "--reorder %s: use memory, priority or none", arg));
      snprintf (item, sizeof item, "reorder=%s", arg);
      append_graph_option (cmd, o, item);
      return 1;
    case CLI_OPT_MAXBLOCK:
      v = positive_size (cmd, "max-block", arg);
      snprintf (item, sizeof item, "max_block=%" PRIu64, v);
      append_graph_option (cmd, o, item);
      return 1;
    case CLI_OPT_DIM:
      add_dim (cmd, o, arg);
      return 1;
    }
  return 0;
}

/* The knobs of the strategies. */
static int
knob_option (const char *cmd, MlCliOpts *o, int opt, const char *arg)
{
  MlError err = { 0 };
  uint64_t v;
  switch (opt)
    {
    case CLI_OPT_CAPACITY:
      o->knobs.capacity = positive_size (cmd, "capacity", arg);
      return 1;
    case CLI_OPT_CHUNK:
      o->knobs.chunk = positive_size (cmd, "chunk", arg);
      o->knobs_given |= ML_KNOB_CHUNK;
      return 1;
    case CLI_OPT_TIMELIMIT:
      if (ml_parse_duration (arg, &o->knobs.time_limit, &err) < 0)
        exit (cli_error (cmd, &err));
      o->knobs_given |= ML_KNOB_TIME_LIMIT;
      return 1;
    case CLI_OPT_OPTIONS:
      o->knobs.options = arg;
      o->load.graph_options = arg;
      return 1;
    case CLI_OPT_SEED:
      if (ml_parse_u64 (arg, strlen (arg), &o->knobs.seed) < 0)
        exit (cli_fail (cmd, EXIT_BAD, "--seed %s: not a non-negative integer", arg));
      o->knobs_given |= ML_KNOB_SEED;
      return 1;
    case CLI_OPT_RETRIES:
      if (ml_parse_u64 (arg, strlen (arg), &v) < 0 || v > 1000)
        exit (cli_fail (cmd, EXIT_BAD, "--retries %s: not a number from 0 to 1000", arg));
      o->knobs.retries = (uint32_t) v;
      o->knobs_given |= ML_KNOB_RETRIES;
      return 1;
    }
  return 0;
}

int
cli_common_option (const char *cmd, MlCliOpts *o, int opt, const char *arg)
{
  if (load_option (cmd, o, opt, arg) || knob_option (cmd, o, opt, arg))
    return 1;
  switch (opt)
    {
    case CLI_OPT_JSON:
      o->json = true;
      return 1;
    case CLI_OPT_QUIET:
      o->quiet = true;
      return 1;
    case CLI_OPT_STRATEGY:
      o->strategy = arg;
      return 1;
    case CLI_OPT_STRATEGIES:
      o->strategies = arg;
      return 1;
    case CLI_OPT_PLAN:
      o->plan_path = arg;
      return 1;
    case CLI_OPT_JOBS:
      if (!cli_jobs_option (cmd, arg, &o->jobs))
        exit (EXIT_BAD);
      return 1;
    }
  return 0;
}
