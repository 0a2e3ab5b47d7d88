/* bench-viewer — frame times of the viewer while it zooms and pans.
 *
 *   bench-viewer OUT.json [memlens-view options] FILE
 *
 * Opens FILE in a real window as memlens-view does, waits for it to load,
 * then changes the view 130 times along a fixed path (fit and 2x back and
 * forth, zoom in 1.5x at a point 30 times, pan 30 times deep, zoom out 30
 * times, pan 30 times wide), each change once the frame of the one before
 * was painted, and writes as JSON to OUT.json (and stdout): per phase, the
 * frame clock's before-paint -> after-paint time, the main thread's CPU
 * time in it and the timeline's own drawing time; the full drawings'
 * times; and the time from launch to the first frame that showed the
 * drawn trace. bench/viewer.sh runs it under Xvfb (docs/performance.md).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/viewer-driver.h"

typedef struct {
  MlDriver    d;           /* first: the driver's callbacks get it */
  const char *out;
  int         step;
  int         i;           /* the change now */
  GArray     *frames;      /* double ms, before-paint -> after-paint */
  GArray     *draws;       /* double ms, the timeline's snapshot */
  GArray     *cpu;         /* double ms of main-thread CPU per frame */
  GArray     *labels;      /* const char * per frame: its phase */
  gint64      before_paint;
  double      before_cpu;
  guint       seen_draws;
  const char *phase;
  gboolean    pending;     /* a change waits for its frame */
} Bench;

static MlTimelineView *
timeline (Bench *b)
{
  return ml_window_get_timeline (b->d.win, 0);
}

static double
thread_cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void
on_before_paint (GdkFrameClock *fc, Bench *b)
{
  b->before_paint = g_get_monotonic_time ();
  b->before_cpu = thread_cpu_ms ();
}

static void
on_after_paint (GdkFrameClock *fc, Bench *b)
{
  MlTimelineView *v = timeline (b);
  guint n = ml_timeline_view_get_draw_count (v);
  if (n == b->seen_draws || !b->phase)
    return;
  b->seen_draws = n;
  double ms = (double) (g_get_monotonic_time () - b->before_paint) / 1000.0;
  double dms = (double) ml_timeline_view_get_last_draw_us (v) / 1000.0;
  double cms = thread_cpu_ms () - b->before_cpu;
  g_array_append_val (b->cpu, cms);
  g_array_append_val (b->frames, ms);
  g_array_append_val (b->draws, dms);
  g_array_append_val (b->labels, b->phase);
  b->pending = FALSE;
}

static int
cmp_double (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static void
stats (GArray *v, double *med, double *p95, double *max)
{
  *med = *p95 = *max = 0;
  if (!v->len)
    return;
  GArray *c = g_array_copy (v);
  g_array_sort (c, cmp_double);
  *med = g_array_index (c, double, c->len / 2);
  *p95 = g_array_index (c, double, MIN (c->len - 1, (guint) ceil (c->len * 0.95) - 1));
  *max = g_array_index (c, double, c->len - 1);
  g_array_unref (c);
}

/* Seconds since this process started (the kernel's start time of it, so
 * the dynamic linker and GTK's start-up count), -1 when unknown. */
static double
process_age (void)
{
  g_autofree char *stat = NULL;
  struct timespec now;
  if (!g_file_get_contents ("/proc/self/stat", &stat, NULL, NULL) || clock_gettime (CLOCK_BOOTTIME, &now) < 0)
    return -1;
  /* field 22, starttime in clock ticks since boot; fields 3.. follow the
   * last ')' (the command name may hold spaces and parentheses) */
  const char *p = strrchr (stat, ')');
  unsigned long long start = 0;
  if (!p || sscanf (p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &start) != 1)
    return -1;
  long hz = sysconf (_SC_CLK_TCK);
  return hz > 0 ? (double) now.tv_sec + (double) now.tv_nsec / 1e9 - (double) start / (double) hz : -1;
}

/* One phase's line of the JSON ("all": every frame). */
static void
write_phase (Bench *b, GString *s, const char *phase, gboolean last)
{
  GArray *f = g_array_new (FALSE, FALSE, sizeof (double)), *d = g_array_new (FALSE, FALSE, sizeof (double));
  GArray *cp = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < b->frames->len; i++)
    if (g_str_equal (phase, "all") || g_str_equal (g_array_index (b->labels, const char *, i), phase))
      {
        g_array_append_val (f, g_array_index (b->frames, double, i));
        g_array_append_val (d, g_array_index (b->draws, double, i));
        g_array_append_val (cp, g_array_index (b->cpu, double, i));
      }
  double fm, fp, fx, dm, dp, dx, cm, cpp, cx;
  stats (f, &fm, &fp, &fx);
  stats (d, &dm, &dp, &dx);
  stats (cp, &cm, &cpp, &cx);
  g_string_append_printf (s, "    \"%s\": {\"frames\": %u, \"frame_ms_median\": %.2f, \"frame_ms_p95\": %.2f, \"frame_ms_max\": %.2f, "
                          "\"frame_cpu_ms_median\": %.2f, \"frame_cpu_ms_p95\": %.2f, \"frame_cpu_ms_max\": %.2f, "
                          "\"draw_ms_median\": %.2f, \"draw_ms_p95\": %.2f, \"draw_ms_max\": %.2f}%s\n",
                          phase, f->len, fm, fp, fx, cm, cpp, cx, dm, dp, dx, last ? "" : ",");
  g_array_unref (cp);
  g_array_unref (f);
  g_array_unref (d);
}

static void
write_results (Bench *b)
{
  MlDocument *doc = ml_window_get_document (b->d.win);
  GString *s = g_string_new ("{\n");
  g_string_append_printf (s, "  \"buffers\": %zu,\n  \"width\": %d,\n  \"height\": %d,\n", doc ? doc->bufs->n : 0,
                          gtk_widget_get_width (GTK_WIDGET (timeline (b))), gtk_widget_get_height (GTK_WIDGET (timeline (b))));
  g_string_append_printf (s, "  \"load_seconds\": %.3f,\n", doc ? doc->load_seconds : 0);
  /* launch to the first frame that showed the drawn trace */
  gint64 first = ml_timeline_view_get_first_picture_us (timeline (b));
  double age = process_age ();
  g_string_append_printf (s, "  \"first_picture_seconds\": %.3f,\n",
                          first && age >= 0 ? age - (double) (g_get_monotonic_time () - first) / 1e6 : -1.0);
  const char *phases[] = { "fit", "zoom-in", "deep-pan", "zoom-out", "pan-fit", "all" };
  g_string_append (s, "  \"phases\": {\n");
  for (gsize p = 0; p < G_N_ELEMENTS (phases); p++)
    write_phase (b, s, phases[p], p + 1 == G_N_ELEMENTS (phases));
  g_string_append (s, "  },\n");
  GArray *c = g_array_copy ((GArray *) ml_timeline_view_get_render_times (timeline (b)));
  double m, p, x;
  stats (c, &m, &p, &x);
  g_string_append_printf (s, "  \"full_drawings\": {\"count\": %u, \"ms_median\": %.2f, \"ms_p95\": %.2f, \"ms_max\": %.2f}\n",
                          c->len, m, p, x);
  g_array_unref (c);
  g_string_append (s, "}\n");
  g_file_set_contents (b->out, s->str, -1, NULL);
  fputs (s->str, stdout);
  g_string_free (s, TRUE);
}

/* Change @i of the path; FALSE after the last. */
static gboolean
change_view (Bench *b, int i)
{
  MlTimelineView *v = timeline (b);
  const MlView *view = ml_timeline_view_get_view (v);
  double cx = view->px + view->pw * 0.37;
  if (i < 10)                      /* back and forth between fit and 2x */
    {
      b->phase = "fit";
      if (i % 2)
        ml_timeline_view_zoom_in (v);
      else
        ml_timeline_view_zoom_fit (v);
    }
  else if (i < 40)                 /* zoom in at a point, 1.5x a step */
    {
      b->phase = "zoom-in";
      double t0 = view->t0, t1 = view->t1, f = 1.5;
      double t = t0 + (cx - view->px) / view->pw * (t1 - t0), sp = (t1 - t0) / f;
      double fr = (cx - view->px) / view->pw;
      ml_timeline_view_set_time_span (v, t - fr * sp, t - fr * sp + sp);
    }
  else if (i < 70)                 /* pan while deep */
    {
      b->phase = "deep-pan";
      ml_timeline_view_pan (v, 0.1);
    }
  else if (i < 100)                /* zoom back out */
    {
      b->phase = "zoom-out";
      double t0 = view->t0, t1 = view->t1;
      double mid = (t0 + t1) / 2, sp = (t1 - t0) * 1.5;
      ml_timeline_view_set_time_span (v, mid - sp / 2, mid + sp / 2);
    }
  else if (i < 130)                /* pan at a wide zoom */
    {
      b->phase = "pan-fit";
      if (i == 100)
        {
          ml_timeline_view_zoom_fit (v);
          ml_timeline_view_zoom_in (v);
        }
      ml_timeline_view_pan (v, i % 2 ? 0.05 : -0.05);
    }
  else
    return FALSE;
  return TRUE;
}

/* Each call changes the view once, once the frame of the change before
 * was painted. */
static gboolean
step (MlDriver *d)
{
  Bench *b = (Bench *) d;
  if (!b->step++)
    {
      if (!d->job_ok || !ml_window_get_document (d->win))
        {
          fprintf (stderr, "bench-viewer: the file did not load\n");
          ml_driver_finish (d, 1);
          return FALSE;
        }
      GdkFrameClock *fc = gtk_widget_get_frame_clock (GTK_WIDGET (d->win));
      g_signal_connect (fc, "before-paint", G_CALLBACK (on_before_paint), b);
      g_signal_connect (fc, "after-paint", G_CALLBACK (on_after_paint), b);
      b->seen_draws = ml_timeline_view_get_draw_count (timeline (b));
      return TRUE;
    }
  if (b->pending)
    return TRUE;
  b->pending = TRUE;
  if (change_view (b, b->i++))
    return TRUE;
  b->pending = FALSE;
  write_results (b);
  ml_driver_finish (d, 0);
  return FALSE;
}

static void
timed_out (MlDriver *d)
{
  fprintf (stderr, "bench-viewer: timed out at change %d of 130\n", ((Bench *) d)->i);
}

int
main (int argc, char **argv)
{
  static Bench b = {
    .d = { .interval_ms = 5, .deadline_s = 600, .step = step, .timed_out = timed_out },
  };
  b.frames = g_array_new (FALSE, FALSE, sizeof (double));
  b.draws = g_array_new (FALSE, FALSE, sizeof (double));
  b.cpu = g_array_new (FALSE, FALSE, sizeof (double));
  b.labels = g_array_new (FALSE, FALSE, sizeof (const char *));
  return ml_driver_main (&b.d, argc, argv, "bench-viewer OUT.json [memlens-view options] FILE", &b.out);
}
