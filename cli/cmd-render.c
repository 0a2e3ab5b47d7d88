/* memlens render — the timeline figure of a trace and a plan, headless. */
#include <getopt.h>
#include <math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/analysis/check.h"
#include "sim/analysis/diagnose.h"
#include "sim/analysis/races.h"

#ifdef HAVE_RENDER
#include "render/state.h"
#include "render/timeline.h"
#include "sim/analysis/state.h"
#endif

static const char usage_text[] =
  "Usage: memlens render [OPTIONS] TRACE [--strategy S | --plan P.json] -o OUT.png|svg|pdf\n"
  "Draws the address x time layout of the plan (one rectangle per buffer),\n"
  "or the live buffers stacked over time (--view active), or the segments\n"
  "(--view segments),\n"
  "the live / reserved / fragmentation curves under it, the peak points,\n"
  "issues in red and the OOM point under --capacity. Without --strategy or\n"
  "--plan: the recorded addresses, else best-fit.\n";

static const char render_help[] =
  "  -s, --strategy S   the plan of this strategy\n"
  "  -p, --plan FILE    a plan written by 'memlens plan'\n"
  "  -o, --output FILE  .png, .svg or .pdf (written atomically)\n"
  "  --view V           address (default), active (stacked, no addresses) or\n"
  "                     segments (each segment outlined)\n"
  "  --at TICK          beside the figure, the allocator state at TICK: every\n"
  "                     segment's blocks, allocated / free (cached) / unmapped\n"
  "  --range T0:T1      only ticks [T0, T1) (either side may be empty)\n"
  "  --size WxH         picture size in pixels (default 1600x900; at most 40 million)\n"
  "  --color-by C       site (default), stream or kind\n"
  "  --axis A           the x axis: time (real time, labels in ns/µs/ms/s) or\n"
  "                     ticks (event index); default: time when every event\n"
  "                     has one (--time-axis is the same)\n"
  "  --title TEXT       replace the title\n"
  "  --dark             dark background\n"
  "  --no-labels        no buffer names on the rectangles\n";

#define OPT_RANGE 2001
#define OPT_SIZE 2002
#define OPT_COLOR 2003
#define OPT_TIMEAXIS 2004
#define OPT_TITLE 2005
#define OPT_DARK 2006
#define OPT_NOLABELS 2007
#define OPT_VIEW 2008
#define OPT_AT 2009

#ifdef HAVE_RENDER
static int
parse_range (const char *arg, double *t0, double *t1)
{
  const char *colon = strchr (arg, ':');
  if (!colon)
    return -1;
  uint64_t v;
  *t0 = -1;
  *t1 = -1;
  if (colon > arg)
    {
      if (ml_parse_u64 (arg, (size_t) (colon - arg), &v) < 0)
        return -1;
      *t0 = (double) v;
    }
  if (colon[1])
    {
      if (ml_parse_u64 (colon + 1, strlen (colon + 1), &v) < 0)
        return -1;
      *t1 = (double) v;
    }
  return *t0 >= 0 && *t1 >= 0 && *t1 <= *t0 ? -1 : 0;
}

static int
parse_wxh (const char *arg, int *w, int *h)
{
  char *end;
  long a = strtol (arg, &end, 10);
  if (end == arg || (*end != 'x' && *end != 'X'))
    return -1;
  const char *p = end + 1;
  long b = strtol (p, &end, 10);
  if (end == p || *end || a < ML_RENDER_MIN_W || b < ML_RENDER_MIN_H || a > ML_RENDER_MAX_SIDE || b > ML_RENDER_MAX_SIDE)
    return -1;
  *w = (int) a;
  *h = (int) b;
  return 0;
}

typedef struct {
  const MlScene *scene;
  const MlStyle *style;
  const MlView  *range;
  const MlState *state;
  uint64_t       tick;
} FigureAndState;

/* The figure on the left two thirds with a marker at the tick, the
 * allocator state at that tick on the right. */
static void
draw_with_state (cairo_t *cr, int width, int height, void *data)
{
  const FigureAndState *f = data;
  double fw = floor (width * 0.64);
  MlRgb bg = ml_style_bg (f->style);
  cairo_set_source_rgb (cr, bg.r, bg.g, bg.b);
  cairo_paint (cr);
  cairo_save (cr);
  cairo_rectangle (cr, 0, 0, fw, height);
  cairo_clip (cr);
  ml_timeline_draw_figure (cr, f->scene, f->style, fw, height, f->range);
  MlFigureLayout fl;
  ml_figure_layout (f->scene, f->style, fw, height, &fl);
  MlView v;
  ml_scene_view_init_style (f->scene, f->style, &v, fl.layout.x, fl.layout.y, fl.layout.w, fl.layout.h);
  ml_view_set_time (&v, f->range->t0, f->range->t1);
  ml_timeline_draw_marker (cr, &v, f->scene, f->style, (double) f->tick + 0.5, "state", fl.time_axis.y);
  cairo_restore (cr);
  MlRect area = { fw + 8, 8, width - fw - 16, height - 16 };
  ml_state_draw (cr, &area, f->state, f->scene, f->style);
}
#endif

int
cmd_render (int argc, char **argv)
{
  static const struct option longopts[] = {
    CLI_COMMON_LONGOPTS,
    { "strategy", required_argument, 0, 's' },
    { "plan", required_argument, 0, 'p' },
    { "output", required_argument, 0, 'o' },
    { "range", required_argument, 0, OPT_RANGE },
    { "size", required_argument, 0, OPT_SIZE },
    { "color-by", required_argument, 0, OPT_COLOR },
    { "axis", required_argument, 0, OPT_TIMEAXIS },
    { "time-axis", required_argument, 0, OPT_TIMEAXIS },
    { "title", required_argument, 0, OPT_TITLE },
    { "dark", no_argument, 0, OPT_DARK },
    { "no-labels", no_argument, 0, OPT_NOLABELS },
    { "view", required_argument, 0, OPT_VIEW },
    { "at", required_argument, 0, OPT_AT },
    { 0, 0, 0, 0 },
  };
  MlCliOpts o;
  cli_opts_init (&o);
#ifdef HAVE_RENDER
  MlStyle style;
  ml_style_init (&style);
  double t0 = -1, t1 = -1;
  int width = 1600, height = 900;
  long long at = -1;
#endif
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "hs:p:o:", longopts, NULL)) != -1)
    {
      switch (c)
        {
        case 'h':
          printf ("%s\nOptions:\n%s%s", usage_text, render_help, CLI_COMMON_HELP);
          return EXIT_OK;
        case 's': o.strategy = optarg; break;
        case 'p': o.plan_path = optarg; break;
        case 'o': o.output = optarg; break;
#ifdef HAVE_RENDER
        case OPT_RANGE:
          if (parse_range (optarg, &t0, &t1) < 0)
            return cli_fail ("render", EXIT_BAD, "--range %s: expected T0:T1 with T0 < T1 (ticks)", optarg);
          break;
        case OPT_SIZE:
          if (parse_wxh (optarg, &width, &height) < 0)
            return cli_fail ("render", EXIT_BAD, "--size %s: expected WxH from %dx%d to %dx%d", optarg, ML_RENDER_MIN_W,
                             ML_RENDER_MIN_H, ML_RENDER_MAX_SIDE, ML_RENDER_MAX_SIDE);
          {
            MlError serr = { 0 };
            if (ml_render_check_size (width, height, &serr) < 0)
              return cli_fail ("render", EXIT_BAD, "--size: %s", serr.msg);
          }
          break;
        case OPT_COLOR:
          if (ml_color_by_parse (optarg, &style.color_by) < 0)
            return cli_fail ("render", EXIT_BAD, "--color-by %s: expected site, stream or kind", optarg);
          break;
        case OPT_TIMEAXIS:
          if (ml_time_axis_parse (optarg, &style.time_axis) < 0)
            return cli_fail ("render", EXIT_BAD, "--axis %s: expected time or ticks (auto: time when every event has one)", optarg);
          break;
        case OPT_TITLE: style.title = optarg; break;
        case OPT_DARK: style.dark = true; break;
        case OPT_NOLABELS: style.show_labels = false; break;
        case OPT_VIEW:
          if (ml_plot_parse (optarg, &style.plot) < 0)
            return cli_fail ("render", EXIT_BAD, "--view %s: expected address, active or segments", optarg);
          break;
        case OPT_AT:
          {
            uint64_t v;
            if (ml_parse_u64 (optarg, strlen (optarg), &v) < 0 || v > (uint64_t) INT64_MAX)
              return cli_fail ("render", EXIT_BAD, "--at %s: expected a tick (a whole number)", optarg);
            at = (long long) v;
            break;
          }
#else
        case OPT_RANGE: case OPT_SIZE: case OPT_COLOR: case OPT_TIMEAXIS:
        case OPT_TITLE: case OPT_DARK: case OPT_NOLABELS: case OPT_VIEW: case OPT_AT:
          break;
#endif
        default:
          if (c == '?' || !cli_common_option ("render", &o, c, optarg))
            return cli_usage ("render", usage_text);
        }
    }
  if (optind + 1 != argc || !o.output)
    return cli_usage ("render", usage_text);
  if (cli_no_json ("render", &o))
    return EXIT_BAD;
  if (o.strategy && o.plan_path)
    return cli_fail ("render", EXIT_BAD, "give --strategy or --plan, not both");
#ifndef HAVE_RENDER
  return cli_fail ("render", EXIT_BAD, "this memlens was built without cairo; install libcairo2-dev and libpango1.0-dev and rebuild");
#else
  MlError err = { 0 };
  MlRenderFormat fmt;
  if (strcmp (o.output, "-") != 0 && ml_render_format_from_path (o.output, &fmt, &err) < 0)
    return cli_error ("render", &err);
  const char *path = argv[optind];
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("render", path, &o, &t, &bufs);
  if (rc)
    return rc;
  MlPlan *plan = NULL;
  rc = cli_get_plan ("render", bufs, &o, &plan);
  MlIssues issues;
  ml_issues_init (&issues);
  MlScene *scene = NULL;
  if (rc == EXIT_OK)
    {
      const char *base = strrchr (path, '/');
      MlSceneOptions so = { .name = base ? base + 1 : path, .issues = &issues };
      /* the recorded plan fails where the real allocator did */
      const MlStrategy *rec = ml_strategy_find (plan->strategy);
      bool recorded = rec && (rec->flags & ML_STRATEGY_RECORDED);
      if ((recorded && ml_recorded_oom_apply (bufs, plan, &err) < 0) || ml_check_plan (bufs, plan, &issues, &err) < 0
          || ml_check_races (bufs, plan, &issues, &err) < 0 || ml_scene_new (bufs, plan, &so, &scene, &err) < 0)
        rc = cli_error ("render", &err);
    }
  if (rc == EXIT_OK && style.time_axis == ML_TIME_AXIS_TIME && !ml_scene_real_time (scene, style.time_axis) && !o.quiet)
    fprintf (stderr, "memlens render: %s: its events carry no times (or one time): the x axis is in ticks\n", path);
  if (rc == EXIT_OK && at >= (long long) scene->end_tick)
    rc = cli_fail ("render", EXIT_BAD, "--at %lld: past the end of the trace (ticks 0 to %" PRIu64 ")", at,
                   scene->end_tick - 1);
  if (rc == EXIT_OK && t0 >= (double) scene->end_tick)
    rc = cli_fail ("render", EXIT_BAD, "--range: tick %.0f is past the end of the trace (ticks 0 to %" PRIu64 ")",
                   t0, scene->end_tick);
  if (rc == EXIT_OK)
    {
      MlView range;
      ml_scene_view_init_plot (scene, style.plot, &range, 0, 0, width, height);
      if (t0 >= 0 || t1 >= 0)
        ml_view_set_time (&range, t0 >= 0 ? t0 : range.t_min, t1 >= 0 ? t1 : range.t_max);
      MlState state = { 0 };
      int wrc;
      if (at >= 0)
        {
          wrc = ml_state_at (bufs, plan, (uint64_t) at, &state, &err);
          if (wrc == 0)
            {
              FigureAndState fs = { scene, &style, &range, &state, (uint64_t) at };
              wrc = ml_render_to_file (o.output, width, height, draw_with_state, &fs, &err);
            }
        }
      else
        wrc = ml_render_figure_to_file (o.output, scene, &style, width, height, &range, &err);
      ml_state_clear (&state);
      if (wrc < 0)
        rc = cli_error ("render", &err);
      else if (!o.quiet)
        fprintf (stderr, "%s: wrote %s (%dx%d, %s plan, %zu buffers)\n", path, o.output, width, height,
                 plan->strategy, bufs->n);
    }
  ml_scene_free (scene);
  ml_issues_clear (&issues);
  ml_plan_free (plan);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
#endif
}
