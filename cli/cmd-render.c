/* memlens render — the timeline figure of a trace and a plan, headless. */
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

enum { OPT_RANGE = CLI_OPT_OWN, OPT_SIZE, OPT_COLOR, OPT_AXIS, OPT_TITLE, OPT_DARK, OPT_NOLABELS, OPT_VIEW, OPT_AT, OPT_ADDR };

#define STR_(x) #x
#define STR(x) STR_ (x)
#ifdef HAVE_RENDER
#define SIZE_HELP "picture size in pixels, at most " STR (ML_RENDER_MAX_PIXELS) " in all"
#else
#define SIZE_HELP "picture size in pixels"
#endif

static const char *
view_default (void)
{
  return "active for a PyTorch snapshot, else address";
}

static const CliOption render_options[] = {
  { "output", 'o', 'o', "FILE", ".png, .svg or .pdf (written atomically)" },
  { "view", 0, OPT_VIEW, "address|active|segments", "address: one rectangle per buffer at its offset; active: the "
    "live buffers stacked, no addresses; segments: each segment outlined", NULL, view_default },
  { "address-axis", 0, OPT_ADDR, "packed|raw", "packed: the segments side by side in address order, the gaps "
    "between them left out, labelled by segment and offset; raw: at their recorded addresses", "packed" },
  { "at", 0, OPT_AT, "TICK", "beside the figure, the allocator state at TICK: every segment's blocks, allocated / "
    "free (cached) / unmapped" },
  { "range", 0, OPT_RANGE, "T0:T1", "only ticks [T0, T1) (either side may be empty)" },
  { "size", 0, OPT_SIZE, "WxH", SIZE_HELP, "1600x900" },
  { "color-by", 0, OPT_COLOR, "KEY", "what a buffer's colour says: site, stream, kind, compile_context, "
    "user_metadata (a PyTorch snapshot's or memlens JSONL's per-allocation fields; refused on other formats), or "
    "frames:REGEX (a regular expression over the stack's frames, \"file:line:function\", as stats --group-by); the "
    "legend names each group, \"(none)\" for buffers without one", "site" },
  { "axis", 0, OPT_AXIS, "time|ticks|auto", "the x axis: time (real time, labels in ns/µs/ms/s) or ticks (event "
    "index); auto: time when every event has one", "auto" },
  { "time-axis", 0, OPT_AXIS, "time|ticks|auto", "the same as --axis" },
  { "title", 0, OPT_TITLE, "TEXT", "replace the title" },
  { "dark", 0, OPT_DARK, NULL, "dark background" },
  { "no-labels", 0, OPT_NOLABELS, NULL, "no buffer names on the rectangles" },
  { NULL },
};

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

/* The figure's settings beside the common options. */
typedef struct {
#ifdef HAVE_RENDER
  MlStyle   style;
#endif
  double    t0, t1;
  int       width, height;
  long long at;
  bool      view_set;       /* --view given: else active for snapshots */
  bool      raw_addresses;  /* --address-axis raw */
  const char *frames_regex; /* --color-by frames:REGEX */
} RenderArgs;

#ifdef HAVE_RENDER
static int
render_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  RenderArgs *a = user;
  uint64_t v;
  switch (key)
    {
    case 'o': o->output = arg; return 0;
    case OPT_TITLE: a->style.title = arg; return 0;
    case OPT_DARK: a->style.dark = true; return 0;
    case OPT_NOLABELS: a->style.show_labels = false; return 0;
    case OPT_RANGE:
      if (parse_range (arg, &a->t0, &a->t1) < 0)
        return cli_fail ("render", EXIT_BAD, "--range %s: expected T0:T1 with T0 < T1 (ticks)", arg);
      return 0;
    case OPT_SIZE:
      if (parse_wxh (arg, &a->width, &a->height) < 0)
        return cli_fail ("render", EXIT_BAD, "--size %s: expected WxH from %dx%d to %dx%d", arg, ML_RENDER_MIN_W,
                         ML_RENDER_MIN_H, ML_RENDER_MAX_SIDE, ML_RENDER_MAX_SIDE);
      {
        MlError serr = { 0 };
        if (ml_render_check_size (a->width, a->height, &serr) < 0)
          return cli_fail ("render", EXIT_BAD, "--size: %s", serr.msg);
      }
      return 0;
    case OPT_COLOR:
      if (ml_color_by_parse_arg (arg, &a->style.color_by, &a->frames_regex) < 0
          || (a->style.color_by == ML_COLOR_BY_FRAMES && !a->frames_regex))
        return cli_fail ("render", EXIT_BAD, "--color-by %s: expected site, stream, kind, compile_context, "
                         "user_metadata or frames:REGEX", arg);
      return 0;
    case OPT_AXIS:
      if (ml_time_axis_parse (arg, &a->style.time_axis) < 0)
        return cli_fail ("render", EXIT_BAD, "--axis %s: expected time or ticks (auto: time when every event has one)", arg);
      return 0;
    case OPT_VIEW:
      if (ml_plot_parse (arg, &a->style.plot) < 0)
        return cli_fail ("render", EXIT_BAD, "--view %s: expected address, active or segments", arg);
      a->view_set = true;
      return 0;
    case OPT_ADDR:
      if (strcmp (arg, "packed") != 0 && strcmp (arg, "raw") != 0)
        return cli_fail ("render", EXIT_BAD, "--address-axis %s: expected packed or raw", arg);
      a->raw_addresses = strcmp (arg, "raw") == 0;
      return 0;
    case OPT_AT:
      if (ml_parse_u64 (arg, strlen (arg), &v) < 0 || v > (uint64_t) INT64_MAX)
        return cli_fail ("render", EXIT_BAD, "--at %s: expected a tick (a whole number)", arg);
      a->at = (long long) v;
      return 0;
    }
  return 0;
}

/* The scene of @plan over @bufs, with its issues; the recorded plan
 * fails where the real allocator did. */
static int
build_scene (const char *path, MlBuffers *bufs, MlPlan *plan, MlIssues *issues, const RenderArgs *a,
             MlScene **scene)
{
  MlError err = { 0 };
  const char *base = strrchr (path, '/');
  MlSceneOptions so = { .name = base ? base + 1 : path, .issues = issues, .raw_addresses = a->raw_addresses,
                        .frames_regex = a->frames_regex };
  const MlStrategy *rec = ml_strategy_find (plan->strategy);
  bool recorded = rec && (rec->flags & ML_STRATEGY_RECORDED);
  if ((recorded && ml_recorded_oom_apply (bufs, plan, &err) < 0) || ml_check_plan (bufs, plan, issues, &err) < 0
      || ml_check_races (bufs, plan, issues, &err) < 0 || ml_scene_new (bufs, plan, &so, scene, &err) < 0)
    return cli_error ("render", &err);
  return EXIT_OK;
}

/* --at and --range against the trace's ticks. */
static int
check_ticks (const RenderArgs *a, const MlScene *scene)
{
  if (a->at >= (long long) scene->end_tick)
    return cli_fail ("render", EXIT_BAD, "--at %lld: past the end of the trace (ticks 0 to %" PRIu64 ")", a->at,
                     scene->end_tick - 1);
  if (a->t0 >= (double) scene->end_tick)
    return cli_fail ("render", EXIT_BAD, "--range: tick %.0f is past the end of the trace (ticks 0 to %" PRIu64 ")",
                     a->t0, scene->end_tick);
  return EXIT_OK;
}

/* Draws the figure (with the state at --at beside it) into the output. */
static int
draw (const char *path, const MlBuffers *bufs, const MlPlan *plan, const MlScene *scene, const RenderArgs *a,
      const MlCliOpts *o)
{
  MlError err = { 0 };
  MlView range;
  ml_scene_view_init_plot (scene, a->style.plot, &range, 0, 0, a->width, a->height);
  if (a->t0 >= 0 || a->t1 >= 0)
    ml_view_set_time (&range, a->t0 >= 0 ? a->t0 : range.t_min, a->t1 >= 0 ? a->t1 : range.t_max);
  MlState state = { 0 };
  int wrc;
  if (a->at >= 0)
    {
      wrc = ml_state_at (bufs, plan, (uint64_t) a->at, &state, &err);
      if (wrc == 0)
        {
          FigureAndState fs = { scene, &a->style, &range, &state, (uint64_t) a->at };
          wrc = ml_render_to_file (o->output, a->width, a->height, draw_with_state, &fs, &err);
        }
    }
  else
    wrc = ml_render_figure_to_file (o->output, scene, &a->style, a->width, a->height, &range, &err);
  ml_state_clear (&state);
  if (wrc < 0)
    return cli_error ("render", &err);
  if (!o->quiet)
    fprintf (stderr, "%s: wrote %s (%dx%d, %s plan, %zu buffers)\n", path, o->output, a->width, a->height,
             plan->strategy, bufs->n);
  return EXIT_OK;
}

/* Loads @path, makes the plan and its scene, and draws it. */
static int
render_trace (const char *path, RenderArgs *a, MlCliOpts *o)
{
  MlTrace *t;
  MlBuffers *bufs;
  int rc = cli_load ("render", path, o, &t, &bufs);
  if (rc)
    return rc;
  MlPlan *plan = NULL;
  MlIssues issues;
  ml_issues_init (&issues);
  MlScene *scene = NULL;
  MlError err = { 0 };
  if (ml_color_by_check (t, a->style.color_by, a->frames_regex, &err) < 0)
    rc = cli_fail ("render", EXIT_BAD, "%s: --color-by %s%s%s: %s", path, ml_color_by_name (a->style.color_by),
                   a->frames_regex ? ":" : "", a->frames_regex ? a->frames_regex : "", err.msg);
  if (rc == EXIT_OK)
    rc = cli_get_plan ("render", bufs, o, &plan);
  if (rc == EXIT_OK)
    rc = build_scene (path, bufs, plan, &issues, a, &scene);
  /* a snapshot opens on its active memory, as memory_viz does */
  if (!a->view_set && strcmp (ml_trace_str (t, t->source), "pytorch-snapshot") == 0)
    a->style.plot = ML_PLOT_ACTIVE;
  if (rc == EXIT_OK && a->style.time_axis == ML_TIME_AXIS_TIME && !ml_scene_real_time (scene, a->style.time_axis) && !o->quiet)
    fprintf (stderr, "memlens render: %s: its events carry no times (or one time): the x axis is in ticks\n", path);
  if (rc == EXIT_OK)
    rc = check_ticks (a, scene);
  if (rc == EXIT_OK)
    rc = draw (path, bufs, plan, scene, a, o);
  ml_scene_free (scene);
  ml_issues_clear (&issues);
  ml_plan_free (plan);
  ml_buffers_free (bufs);
  ml_trace_free (t);
  return rc;
}
#else
static int
render_option (MlCliOpts *o, void *user, int key, const char *arg)
{
  if (key == 'o')
    o->output = arg;
  return 0;   /* the figure's settings: refused below, with the reason */
}
#endif

static int
cmd_render (int argc, char **argv)
{
  MlCliOpts o;
  RenderArgs a = { .t0 = -1, .t1 = -1, .at = -1 };
#ifdef HAVE_RENDER
  ml_style_init (&a.style);
#endif
  int rc = cli_parse (&cli_cmd_render, argc, argv, &o, &a);
  if (rc != CLI_PARSED)
    return rc;
  if (optind + 1 != argc || !o.output)
    return cli_usage (&cli_cmd_render);
  if (o.strategy && o.plan_path)
    return cli_fail ("render", EXIT_BAD, "give --strategy or --plan, not both");
#ifndef HAVE_RENDER
  return cli_fail ("render", EXIT_BAD, "this memlens was built without cairo; install libcairo2-dev and libpango1.0-dev and rebuild");
#else
  MlError err = { 0 };
  MlRenderFormat fmt;
  if (strcmp (o.output, "-") != 0 && ml_render_format_from_path (o.output, &fmt, &err) < 0)
    return cli_error ("render", &err);
  return render_trace (argv[optind], &a, &o);
#endif
}

const CliCommand cli_cmd_render = {
  .name = "render",
  .bit = CLI_RENDER,
  .summary = "draw the timeline of a plan: address x time, curves, peaks, races (.png/.svg/.pdf)",
  .usage = "memlens render [OPTIONS] TRACE [--strategy S | --plan P.json] -o OUT.png|svg|pdf\n",
  .about = "Draws the address x time layout of the plan (one rectangle per buffer),\n"
           "or the live buffers stacked over time (--view active), or the segments\n"
           "(--view segments),\n"
           "the live / reserved / fragmentation curves under it, the peak points,\n"
           "issues in red and the OOM point under --capacity. Without --strategy or\n"
           "--plan: the recorded addresses, else best-fit.\n",
  .options = render_options,
  .option = render_option,
  .run = cmd_render,
};
