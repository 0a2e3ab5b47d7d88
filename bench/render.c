/* bench-render — the renderer on a large plan: a synthetic trace of
 * --buffers buffers (default 1M; live set ~10,000, log-normal sizes, 4
 * streams) planned by best-fit, drawn as a 1600x900 figure. Prints a
 * Markdown table for docs/performance.md: scene building, the whole
 * figure to PNG (fit and zoomed to 1% of the ticks), to SVG, and hit
 * tests; "vs sweep" divides by one metrics sweep over the same plan
 * (ml_metrics_compute), the baseline measured in the same run.
 * Usage: bench-render [--buffers N] [--keep DIR] */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/gen.h"
#include "render/scene.h"
#include "render/timeline.h"
#include "sim/sim.h"
#include "sim/base/units.h"
#include "strategies/registry.h"

static long
file_size (const char *path)
{
  FILE *fp = fopen (path, "rb");
  if (!fp)
    return -1;
  fseek (fp, 0, SEEK_END);
  long n = ftell (fp);
  fclose (fp);
  return n;
}

int
main (int argc, char **argv)
{
  static const struct option opts[] = {
    { "buffers", required_argument, 0, 'b' }, { "keep", required_argument, 0, 'k' },
    { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
  };
  uint64_t nbuf = 1000000;
  const char *keep = "/tmp";
  MlError err = { 0 };
  int c;
  while ((c = getopt_long (argc, argv, "b:k:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'b':
        if (ml_parse_size (optarg, &nbuf, &err) < 0)
          {
            fprintf (stderr, "%s\n", err.msg);
            return 2;
          }
        break;
      case 'k': keep = optarg; break;
      case 'h': printf ("Usage: bench-render [--buffers N] [--keep DIR]\n"); return 0;
      default: return 2;
      }
  GenParams p;
  gen_params_init (&p);
  p.events = nbuf * 2;
  p.live = 10000;
  p.streams = 4;
  MlTrace *t = ml_trace_new ();
  MlBuffers *b = NULL;
  MlPlan *plan = NULL;
  if (!t || gen_trace (&p, t) < 0 || ml_buffers_build (t, 256, &b, &err) < 0)
    {
      fprintf (stderr, "bench-render: %s\n", err.msg[0] ? err.msg : "out of memory");
      return 1;
    }
  MlKnobs k;
  ml_knobs_init (&k);
  if (ml_sim_run (b, ml_strategy_find ("best-fit"), &k, &plan, &err) < 0)
    {
      fprintf (stderr, "bench-render: %s\n", err.msg);
      return 1;
    }
  double t0 = ml_now ();
  MlMetrics m;
  ml_metrics_compute (b, plan, &m, NULL, &err);
  double sweep = ml_now () - t0;

  t0 = ml_now ();
  MlScene *s = NULL;
  if (ml_scene_new (b, plan, &(MlSceneOptions) { .name = "bench" }, &s, &err) < 0)
    {
      fprintf (stderr, "bench-render: %s\n", err.msg);
      return 1;
    }
  double scene = ml_now () - t0;
  MlStyle st;
  ml_style_init (&st);
  char png[4096], png2[4096], svg[4096];
  snprintf (png, sizeof png, "%s/memlens-bench-render.png", keep);
  snprintf (png2, sizeof png2, "%s/memlens-bench-render-zoom.png", keep);
  snprintf (svg, sizeof svg, "%s/memlens-bench-render.svg", keep);

  /* best of three for each drawing */
  double fit = 1e9, zoom = 1e9, vec = 1e9;
  MlView range;
  ml_scene_view_init (s, &range, 0, 0, 1600, 900);
  MlView z = range;
  ml_view_set_time (&z, (double) s->end_tick * 0.50, (double) s->end_tick * 0.51);
  for (int r = 0; r < 3; r++)
    {
      t0 = ml_now ();
      if (ml_render_figure_to_file (png, s, &st, 1600, 900, NULL, &err) < 0)
        {
          fprintf (stderr, "bench-render: %s\n", err.msg);
          return 1;
        }
      double d = ml_now () - t0;
      fit = d < fit ? d : fit;
      t0 = ml_now ();
      ml_render_figure_to_file (png2, s, &st, 1600, 900, &z, &err);
      d = ml_now () - t0;
      zoom = d < zoom ? d : zoom;
      t0 = ml_now ();
      ml_render_figure_to_file (svg, s, &st, 1600, 900, NULL, &err);
      d = ml_now () - t0;
      vec = d < vec ? d : vec;
    }
  /* hit tests over the fitted view of the plot */
  MlFigureLayout fl;
  ml_figure_layout (s, &st, 1600, 900, &fl);
  MlView v;
  ml_scene_view_init (s, &v, fl.layout.x, fl.layout.y, fl.layout.w, fl.layout.h);
  t0 = ml_now ();
  long hits = 0;
  for (int i = 0; i < 1000; i++)
    hits += ml_scene_hit (s, &v, fl.layout.x + (i * 7919 % 1000) / 1000.0 * fl.layout.w,
                          fl.layout.y + (i * 104729 % 1000) / 1000.0 * fl.layout.h) >= 0;
  double hit = (ml_now () - t0) / 1000.0;

  char lb[32];
  printf ("### %zu buffers (best-fit plan, peak %s, %zu curve points), 1600x900\n\n", b->n,
          ml_format_size (m.peak, lb, sizeof lb), s->curve.n);
  printf ("| step | time | vs sweep |\n|---|---:|---:|\n");
  printf ("| metrics sweep (baseline) | %.0f ms | 1.00x |\n", sweep * 1e3);
  printf ("| scene (layout, classes, curve, peaks) | %.0f ms | %.2fx |\n", scene * 1e3, scene / sweep);
  printf ("| figure to PNG, whole trace | %.0f ms | %.2fx |\n", fit * 1e3, fit / sweep);
  printf ("| figure to PNG, 1%% of the ticks | %.0f ms | %.2fx |\n", zoom * 1e3, zoom / sweep);
  printf ("| figure to SVG, whole trace (%ld KiB) | %.0f ms | %.2fx |\n", file_size (svg) / 1024, vec * 1e3, vec / sweep);
  printf ("| hit test (mean of 1000, %ld hits) | %.1f µs | |\n", hits, hit * 1e6);
  printf ("\nscene: %zu bytes per buffer; pictures in %s\n", sizeof (MlSceneItem) + sizeof (uint64_t), keep);
  ml_scene_free (s);
  ml_plan_free (plan);
  ml_buffers_free (b);
  ml_trace_free (t);
  return 0;
}
