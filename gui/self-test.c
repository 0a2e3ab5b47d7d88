/* self-test.c — the scripted path through a real window (see self-test.h). */
#include "gui/self-test.h"

#ifdef GDK_WINDOWING_X11
#include <gdk/x11/gdkx.h>
#endif

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gui/application.h"
#include "gui/peaks-page.h"
#include "render/timeline.h"
#include "sim/base/units.h"
#include "strategies/registry.h"

typedef struct {
  MlWindow *win;
  char     *dir;
  char     *bench;
  int       step;
  int       n_tests;
  int       failed;
  gboolean  waiting_job;
  gboolean  job_ok;
  guint     timeout_id;
  gint64    deadline;
  /* test state */
  double    full0, full1;
  double    ix, iy;       /* input steps: a point in the plot (widget) */
  double    it0, it1;     /* the span before the input */
  double    itick;        /* the tick under the pointer before */
  char     *xid;          /* the window for xdotool */
  double    ox, oy;       /* timeline origin in the X window */
  long      picked;
  /* bench */
  GArray   *frames;     /* double ms, before-paint -> after-paint */
  GArray   *draws;      /* double ms, the timeline's snapshot */
  GArray   *labels;     /* const char * per frame */
  gint64    before_paint;
  double    before_cpu;
  GArray   *cpu;        /* double ms of main-thread CPU per frame */
  guint     seen_draws;
  const char *phase;
  int       bench_i;
  gboolean  pending;    /* a change waits for its frame */
  const char *shot;     /* a screenshot to take after the next frame */
  guint     step_draws; /* draw count when the last step ran */
  gint64    frame_wait; /* wait for a frame until then */
  gint64    hold_until; /* a step waiting for input repeats until then */
} SelfTest;

static int exit_status;
static gboolean started;

gboolean
ml_self_test_ran (void)
{
  return started;
}

int
ml_self_test_status (void)
{
  return exit_status;
}

static void
check (SelfTest *st, gboolean cond, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  st->n_tests++;
  if (!cond)
    st->failed++;
  printf ("%s %d - %s\n", cond ? "ok" : "not ok", st->n_tests, msg);
  fflush (stdout);
}

static void
finish (SelfTest *st)
{
  if (!st->bench)
    {
      printf ("1..%d\n", st->n_tests);
      fflush (stdout);
    }
  exit_status = st->failed ? 1 : 0;
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (st->win));
  g_application_quit (G_APPLICATION (app));
}

static void
on_job_finished (MlWindow *win, gboolean ok, SelfTest *st)
{
  st->waiting_job = FALSE;
  st->job_ok = ok;
}

static void
activate (SelfTest *st, const char *action, GVariant *param)
{
  g_action_group_activate_action (G_ACTION_GROUP (st->win), action, param);
}

static MlTimelineView *
tv (SelfTest *st, int i)
{
  return ml_window_get_timeline (st->win, i);
}

/* Tick @t in the unit x is linear in: ticks, or time on a real-time axis. */
static double
axis (SelfTest *st, double t)
{
  return ml_view_axis_value (ml_timeline_view_get_view (tv (st, 0)), t);
}

/* The visible span in that unit. */
static double
span (SelfTest *st, int i)
{
  double t0, t1;
  ml_timeline_view_get_time_span (tv (st, i), &t0, &t1);
  return axis (st, t1) - axis (st, t0);
}

/* Saves what the window shows now (its own render nodes, through the
 * window's renderer) as @name in the output folder. */
static void
screenshot (SelfTest *st, const char *name)
{
  GtkWidget *w = GTK_WIDGET (st->win);
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  GtkSnapshot *snap = gtk_snapshot_new ();
  /* the window's own snapshot (it snapshots its children) */
  GTK_WIDGET_GET_CLASS (w)->snapshot (w, snap);
  GskRenderNode *node = gtk_snapshot_free_to_node (snap);
  if (!node)
    fprintf (stderr, "memlens-view: nothing to screenshot for %s\n", name);
  if (node)
    {
      GskRenderer *r = gtk_native_get_renderer (GTK_NATIVE (w));
      GdkTexture *tex = gsk_renderer_render_texture (r, node, &GRAPHENE_RECT_INIT (0, 0, width, height));
      g_autofree char *path = g_build_filename (st->dir, name, NULL);
      if (!gdk_texture_save_to_png (tex, path))
        fprintf (stderr, "memlens-view: could not save %s\n", path);
      g_object_unref (tex);
      gsk_render_node_unref (node);
    }
}

/* A PNG that is not blank: enough distinct colours. */
static guint
png_colours (const char *path, int *w, int *h)
{
  cairo_surface_t *s = cairo_image_surface_create_from_png (path);
  *w = *h = 0;
  if (cairo_surface_status (s) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (s);
      return 0;
    }
  *w = cairo_image_surface_get_width (s);
  *h = cairo_image_surface_get_height (s);
  int stride = cairo_image_surface_get_stride (s);
  const guint8 *data = cairo_image_surface_get_data (s);
  GHashTable *seen = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (int y = 0; y < *h; y += 2)
    for (int x = 0; x < *w; x += 2)
      {
        guint32 px = *(const guint32 *) (data + y * stride + x * 4);
        g_hash_table_add (seen, GUINT_TO_POINTER (px));
      }
  guint n = g_hash_table_size (seen);
  g_hash_table_unref (seen);
  cairo_surface_destroy (s);
  return n;
}

static gsize
file_size (const char *path)
{
  GStatBuf sb;
  return g_stat (path, &sb) == 0 ? (gsize) sb.st_size : 0;
}

static char *
out_path (SelfTest *st, const char *name)
{
  return g_build_filename (st->dir, name, NULL);
}

/* The largest buffer of the document (a stable target for picking). */
static long
largest_buffer (const MlDocument *doc)
{
  long best = -1;
  for (gsize i = 0; i < doc->bufs->n; i++)
    if (best < 0 || doc->bufs->buf[i].rsize > doc->bufs->buf[best].rsize)
      best = (long) i;
  return best;
}

/* Runs xdotool with @fmt (real input through the X server's XTEST). */
static void
xdo (SelfTest *st, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *args = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_autofree char *cmd = g_strconcat ("xdotool ", args, NULL);
  GError *error = NULL;
  int status = 0;
  if (!g_spawn_command_line_sync (cmd, NULL, NULL, &status, &error))
    {
      fprintf (stderr, "memlens-view: %s: %s\n", cmd, error->message);
      g_error_free (error);
    }
}

/* The input steps need X11 and xdotool; without them they are skipped
 * (TAP "# SKIP"). Returns FALSE when skipped. */
static gboolean
input_begin (SelfTest *st)
{
  GtkWidget *w = GTK_WIDGET (st->win);
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");
  const char *why = NULL;
#ifdef GDK_WINDOWING_X11
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (w));
  if (!xdotool)
    why = "xdotool is not installed";
  else if (!GDK_IS_X11_SURFACE (surface))
    why = "not an X11 display";
  else
    {
      st->xid = g_strdup_printf ("%lu", (unsigned long) gdk_x11_surface_get_xid (surface));
      double sx = 0, sy = 0;
      gtk_native_get_surface_transform (GTK_NATIVE (w), &sx, &sy);
      graphene_point_t p;
      if (!gtk_widget_compute_point (GTK_WIDGET (tv (st, 0)), w, &GRAPHENE_POINT_INIT (0, 0), &p))
        why = "the timeline has no position";
      st->ox = p.x + sx, st->oy = p.y + sy;
    }
#else
  why = "built without X11";
#endif
  if (why)
    {
      st->n_tests++;
      printf ("ok %d - input through the X server # SKIP %s\n", st->n_tests, why);
      return FALSE;
    }
  activate (st, "zoom-fit", NULL);
  ml_timeline_view_get_time_span (tv (st, 0), &st->it0, &st->it1);
  gtk_widget_grab_focus (GTK_WIDGET (tv (st, 0)));
  xdo (st, "windowfocus --sync %s key plus", st->xid);
  return TRUE;
}

/* One step of the test script; returns FALSE when it is waiting. */
/* The pixel (@x, @y) of what timeline @i draws now (labels off, so
 * text does not hide the colour under it). */
static guint32
view_pixel (SelfTest *st, int i, double x, double y)
{
  int w = gtk_widget_get_width (GTK_WIDGET (tv (st, i))), h = gtk_widget_get_height (GTK_WIDGET (tv (st, i)));
  if (x < 0 || y < 0 || x >= w || y >= h)
    return 0;
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_RGB24, w, h);
  cairo_t *cr = cairo_create (img);
  MlStyle *style = ml_timeline_view_get_style (tv (st, i));
  gboolean labels = style->show_labels;
  style->show_labels = FALSE;
  ml_timeline_view_draw_to (tv (st, i), cr, w, h);
  style->show_labels = labels;
  cairo_destroy (cr);
  cairo_surface_flush (img);
  guint32 px = *(guint32 *) (cairo_image_surface_get_data (img) + (int) y * cairo_image_surface_get_stride (img) + (int) x * 4);
  cairo_surface_destroy (img);
  return px & 0xffffff;
}

/* A file whose trace recorded an OOM: the recorded run fails there, and
 * the refused request is drawn hatched red at the OOM tick, in the
 * address layout and in the stacked view. */
static void
oom_drawn (SelfTest *st, const MlDocument *doc)
{
  const MlTrace *t = ml_document_trace (doc);
  const MlEvent *ev = NULL;
  for (size_t i = 0; i < t->n_events && !ev; i++)
    if (t->events[i].kind == ML_EV_OOM)
      ev = &t->events[i];
  const MlRun *run = doc->runs[0];
  if (!ev || !run || !run->plan || !(ml_strategy_find (run->strategy)->flags & ML_STRATEGY_RECORDED))
    return;
  check (st, run->plan->oom.hit && run->plan->oom.tick == ev->tick && run->plan->oom.request == ev->size,
         "the recorded run fails at the trace's OOM: tick %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " B requested",
         run->plan->oom.tick, run->plan->oom.request);
  const char *plots[] = { "address", "active" };
  for (int k = 0; k < 2; k++)
    {
      activate (st, "plot", g_variant_new_string (plots[k]));
      const MlView *v = ml_timeline_view_get_view (tv (st, 0));
      MlRect r = { 0 };
      gboolean boxed = ml_timeline_oom_request_box (v, run->scene, ml_timeline_view_get_style (tv (st, 0)), &r);
      double cx = r.x + r.w / 2, cy = r.y + r.h / 2;
      gboolean inside = boxed && r.x >= v->px && r.y >= v->py - 0.5 && r.x + r.w <= v->px + v->pw && r.y + r.h <= v->py + v->ph + 0.5;
      guint32 px = view_pixel (st, 0, cx, cy);
      int red = (int) (px >> 16), green = (int) ((px >> 8) & 255), blue = (int) (px & 255);
      check (st, inside && red > green + 30 && red > blue + 30,
             "%s view: the refused request (%" G_GUINT64_FORMAT " B) is on screen, hatched red (#%06x at %.0f, %.0f)",
             plots[k], run->scene->oom_bytes, px, cx, cy);
    }
  /* hovering the box: the request, and the OOM event's stack (its first
   * Python frame, found here from the trace) */
  const char *func = NULL;
  if (ev->stack && ev->stack < t->n_stacks)
    for (guint32 f = 0; f < t->stacks[ev->stack].n && !func; f++)
      {
        const MlFrame *fr = &t->frames[t->stacks[ev->stack].first + f];
        if (g_str_has_suffix (ml_trace_str (t, fr->file), ".py"))
          func = ml_trace_str (t, fr->func);
      }
  const MlView *v = ml_timeline_view_get_view (tv (st, 0));
  MlRect r = { 0 };
  ml_timeline_oom_request_box (v, run->scene, ml_timeline_view_get_style (tv (st, 0)), &r);
  g_autofree char *markup = ml_timeline_view_dup_markup_at (tv (st, 0), r.x + r.w / 2, r.y + r.h / 2);
  char sz[32];
  g_autofree char *want = g_strdup_printf ("Refused: %s at tick %" G_GUINT64_FORMAT, ml_format_size (ev->size, sz, sizeof sz), ev->tick);
  check (st, markup && strstr (markup, want) && func && strstr (markup, func),
         "hovering it tells \"%s\" and the request's stack (%s)", want, func ? func : "no Python frame");
  activate (st, "plot", g_variant_new_string ("address"));
}

static gboolean
test_step (SelfTest *st)
{
  MlDocument *doc = ml_window_get_document (st->win);
  switch (st->step)
    {
    case 0:   /* the file loads */
      check (st, st->job_ok && doc != NULL, "the file opens in a worker and the window shows it");
      if (!doc)
        {
          /* the reason is on screen, where the user looks */
          const char *msg = ml_window_get_message (st->win);
          check (st, msg && g_str_has_prefix (msg, "Could not open "), "the window shows why: %s", msg ? msg : "(nothing)");
          g_autofree char *path = out_path (st, "error.txt");
          g_file_set_contents (path, msg ? msg : "", -1, NULL);
          st->shot = "window-error.png";
          st->step = 200;
          return TRUE;
        }
      if (ml_window_get_document2 (st->win))
        {
          st->step = 300;   /* two files: the compare script */
          return TRUE;
        }
      if (ml_document_trace (doc)->n_devices > 1)
        {
          st->step = 100;   /* a file with several devices: the device script */
          return TRUE;
        }
      check (st, doc->bufs->n > 0, "it has buffers (%zu)", doc->bufs->n);
      {
        g_autofree char *uri = g_filename_to_uri (doc->box->path, NULL, NULL);
        check (st, uri && gtk_recent_manager_has_item (gtk_recent_manager_get_default (), uri),
               "the file is in the recent files");
      }
      check (st, ml_timeline_view_get_scene (tv (st, 0)) != NULL, "the timeline has a scene");
      break;
    case 1:
      check (st, ml_timeline_view_get_draw_count (tv (st, 0)) > 0, "the timeline drew at least one frame");
      st->shot = "window-open.png";
      activate (st, "zoom-fit", NULL);
      ml_timeline_view_get_time_span (tv (st, 0), &st->full0, &st->full1);
      check (st, st->full1 - st->full0 >= 1, "zoom-fit shows ticks [%g, %g)", st->full0, st->full1);
      st->step = 400;   /* the other views as the file opened, for the pictures */
      return TRUE;
    case 400:
      activate (st, "plot", g_variant_new_string ("active"));
      st->shot = "window-open-active.png";
      break;
    case 401:
      activate (st, "plot", g_variant_new_string ("segments"));
      st->shot = "window-open-segments.png";
      break;
    case 402:
      activate (st, "plot", g_variant_new_string ("address"));
      st->step = 2;
      return TRUE;
    case 2:
      {
        double before = span (st, 0);
        activate (st, "zoom-in", NULL);
        double after = span (st, 0);
        check (st, fabs (after - before / 2) < 1e-6 * before + 1e-9, "win.zoom-in halves the span (%g -> %g)", before, after);
        activate (st, "zoom-out", NULL);
        check (st, fabs (span (st, 0) - before) < 1e-6 * before, "win.zoom-out restores it (%g)", span (st, 0));
        activate (st, "zoom-in", NULL);
        double t0, t1, u0, u1;
        ml_timeline_view_get_time_span (tv (st, 0), &t0, &t1);
        activate (st, "pan-right", NULL);
        ml_timeline_view_get_time_span (tv (st, 0), &u0, &u1);
        double w0 = axis (st, t1) - axis (st, t0), w1 = axis (st, u1) - axis (st, u0);
        check (st, u0 > t0 && fabs (w1 - w0) < 1e-6 * w0, "win.pan-right moves the span later, same width");
        break;
      }
    case 3:
      {
        double a = st->full0 + (st->full1 - st->full0) * 0.25, b = a + MAX ((st->full1 - st->full0) * 0.25, 1.0);
        activate (st, "select-range", g_variant_new ("(dd)", a, b));
        double t0, t1;
        ml_timeline_view_get_time_span (tv (st, 0), &t0, &t1);
        check (st, fabs (t0 - a) < 1e-6 * (b - a) + 1e-9 && fabs (t1 - b) < 1e-6 * (b - a) + 1e-9,
               "win.select-range zooms to [%g, %g) (got [%g, %g))", a, b, t0, t1);
        activate (st, "zoom-fit", NULL);
        ml_timeline_view_get_time_span (tv (st, 0), &t0, &t1);
        check (st, t0 == st->full0 && t1 == st->full1, "win.zoom-fit shows everything again");
        break;
      }
    case 4:   /* pick through the hit test, as a click does */
      {
        long want = largest_buffer (doc);
        double x = 0, y = 0;
        gboolean vis = ml_timeline_view_buffer_point (tv (st, 0), (guint32) want, &x, &y);
        check (st, vis, "the largest buffer (%ld) is drawn at (%.0f, %.0f)", want, x, y);
        long got = ml_timeline_view_pick (tv (st, 0), x, y);
        check (st, got == want, "the hit test at its middle finds it (got %ld)", got);
        ml_timeline_view_select_buffer (tv (st, 0), got);
        check (st, ml_timeline_view_get_selected (tv (st, 0)) == want, "it is the selected buffer");
        g_autofree char *details = ml_window_dup_details_text (st->win);
        g_autofree char *idtxt = g_strdup_printf ("id\t%" G_GUINT64_FORMAT, doc->bufs->buf[want].id);
        check (st, strstr (details, idtxt) != NULL, "the details panel names its id %" G_GUINT64_FORMAT, doc->bufs->buf[want].id);
        long none = ml_timeline_view_pick (tv (st, 0), 1, 1);
        check (st, none == -1, "the hit test outside the plot finds nothing");
        st->picked = want;
        st->shot = "window-selected.png";
        {
          /* the Recent menu shows the file's name as it is: "_" doubled, or
           * GTK would take it for a mnemonic and drop it */
          GMenuModel *recent = ml_application_get_recent_menu (ML_APPLICATION (g_application_get_default ()));
          g_autofree char *base = g_path_get_basename (doc->box->path);
          g_auto (GStrv) parts = g_strsplit (base, "_", -1);
          g_autofree char *menu_label = g_strjoinv ("__", parts);
          gboolean found = FALSE;
          for (int i = 0; i < g_menu_model_get_n_items (recent) && !found; i++)
            {
              g_autofree char *label = NULL, *target = NULL;
              if (g_menu_model_get_item_attribute (recent, i, "label", "s", &label)
                  && g_menu_model_get_item_attribute (recent, i, "target", "s", &target) && g_str_equal (target, doc->box->path))
                found = g_str_equal (label, menu_label);
            }
          check (st, found, "the Recent menu lists %s with its underscores kept (label \"%s\")", base, menu_label);
        }
        break;
      }
    case 5:
      {
        MlDocument *d0 = doc;
        /* switch strategy through the action (it sets the drop-down) */
        const char *other = g_strcmp0 (d0->runs[0]->strategy, "first-fit") == 0 ? "best-fit" : "first-fit";
        activate (st, "strategy", g_variant_new_string (other));
        check (st, ml_window_is_busy (st->win), "choosing %s starts a worker", other);
        st->waiting_job = TRUE;
        break;
      }
    case 6:
      {
        const char *s = doc->runs[0]->strategy;
        check (st, st->job_ok && (g_str_equal (s, "first-fit") || g_str_equal (s, "best-fit")), "the view now shows %s", s);
        check (st, ml_timeline_view_get_run (tv (st, 0)) == doc->runs[0], "the timeline draws the new run");
        check (st, ml_timeline_view_get_selected (tv (st, 0)) == st->picked, "the selection survives the re-run");
        activate (st, "strategy2", g_variant_new_string ("linear"));
        /* a zoomed view stays zoomed when the second timeline comes */
        activate (st, "zoom-in", NULL);
        ml_timeline_view_get_time_span (tv (st, 0), &st->it0, &st->it1);
        activate (st, "compare", g_variant_new_boolean (TRUE));
        st->waiting_job = TRUE;
        break;
      }
    case 7:
      {
        check (st, st->job_ok && doc->runs[1] && g_str_equal (doc->runs[1]->strategy, "linear"),
               "compare mode runs a second strategy (linear)");
        check (st, gtk_widget_get_mapped (GTK_WIDGET (tv (st, 1))), "the second timeline is shown");
        {
          double c0, c1;
          ml_timeline_view_get_time_span (tv (st, 0), &c0, &c1);
          check (st, c0 == st->it0 && c1 == st->it1, "Compare keeps the zoom ([%g, %g), was [%g, %g))", c0, c1, st->it0, st->it1);
        }
        activate (st, "zoom-in", NULL);
        double a0, a1, b0, b1;
        ml_timeline_view_get_time_span (tv (st, 0), &a0, &a1);
        ml_timeline_view_get_time_span (tv (st, 1), &b0, &b1);
        check (st, a0 == b0 && a1 == b1, "zoom is linked: both show [%g, %g)", a0, a1);
        check (st, doc->runs[1]->metrics.peak >= doc->runs[0]->metrics.lower_bound, "linear's peak is at least the lower bound");
        break;
      }
    case 8:
      {
        activate (st, "zoom-fit", NULL);
        st->shot = "window-compare.png";
        break;
      }
    case 9:
      {
        g_autofree char *png = out_path (st, "view.png");
        g_autofree char *svg = out_path (st, "view.svg");
        g_autofree char *pdf = out_path (st, "view.pdf");
        g_autofree char *md = out_path (st, "report.html");
        activate (st, "export", g_variant_new ("(ss)", "png", png));
        int w, h;
        guint colours = png_colours (png, &w, &h);
        check (st, w > 100 && h > 100, "win.export writes a PNG (%d x %d)", w, h);
        check (st, colours > 8, "the PNG is not blank (%u colours)", colours);
        activate (st, "export", g_variant_new ("(ss)", "svg", svg));
        check (st, file_size (svg) > 1000, "and an SVG (%zu bytes)", file_size (svg));
        activate (st, "export", g_variant_new ("(ss)", "pdf", pdf));
        check (st, file_size (pdf) > 1000, "and a PDF (%zu bytes)", file_size (pdf));
        g_autofree char *bad = out_path (st, "view.xyz");
        activate (st, "export", g_variant_new ("(ss)", "xyz", bad));
        check (st, !g_file_test (bad, G_FILE_TEST_EXISTS), "an unknown format writes nothing");
        /* search by name / id */
        GArray *hits = ml_document_search (doc, doc->runs[0], "#999999999999", 10);
        check (st, hits->len == 0, "search for an unknown id finds nothing");
        g_array_unref (hits);
        g_autofree char *q = g_strdup_printf ("#%" G_GUINT64_FORMAT, doc->bufs->buf[st->picked].id);
        hits = ml_document_search (doc, doc->runs[0], q, 10);
        check (st, hits->len == 1 && g_array_index (hits, guint32, 0) == (guint32) st->picked, "search %s finds the picked buffer", q);
        g_array_unref (hits);
        activate (st, "export", g_variant_new ("(ss)", "html", md));
        check (st, ml_window_is_busy (st->win), "win.export of a report starts a worker");
        st->waiting_job = TRUE;
        break;
      }
    case 10:
      {
        g_autofree char *md = out_path (st, "report.html");
        g_autofree char *text = NULL;
        g_file_get_contents (md, &text, NULL, NULL);
        check (st, st->job_ok && text && strstr (text, "<html") && strstr (text, "linear") && strstr (text, "<svg"),
               "the HTML report names the strategies and has pictures");
        activate (st, "compare", g_variant_new_boolean (FALSE));
        st->waiting_job = TRUE;
        break;
      }
    case 11:
      check (st, doc->runs[1] == NULL && !gtk_widget_get_visible (gtk_widget_get_parent (GTK_WIDGET (tv (st, 1)))),
             "leaving compare mode hides the second timeline");
      {
        gboolean shown = ml_window_show_peak (st->win, 0);
        const MlPeak *p = doc->peaks.n ? &doc->peaks.peaks[0] : NULL;
        double t0, t1;
        ml_timeline_view_get_time_span (tv (st, 0), &t0, &t1);
        check (st, shown && p && (double) p->tick >= t0 && (double) p->tick < t1, "choosing the first peak shows its tick");
        check (st, p && p->n_blame && ml_timeline_view_get_selected (tv (st, 0)) == (long) p->blame[0],
               "and selects the largest buffer live there");
        /* the list shows a plateau once: no two listed rows are within the
         * merge rule, and every peak left out is near one listed */
        GArray *listed_rows = ml_peaks_page_get_shown (ml_window_get_peaks_page (st->win));
        gboolean apart = TRUE, covered = TRUE;
        guint64 window = MAX ((guint64) ML_PEAKS_MERGE_TICKS, doc->bufs->end_tick / 100);
        for (guint i = 0; i < listed_rows->len; i++)
          for (guint j = i + 1; j < listed_rows->len; j++)
            {
              const MlPeak *x = &doc->peaks.peaks[g_array_index (listed_rows, guint, i)], *y = &doc->peaks.peaks[g_array_index (listed_rows, guint, j)];
              guint64 dt = x->tick > y->tick ? x->tick - y->tick : y->tick - x->tick;
              if (dt <= window && fabs ((double) x->live - (double) y->live) <= 0.03 * (double) MAX (x->live, y->live))
                apart = FALSE;
            }
        for (gsize i = 0; i < doc->peaks.n; i++)
          {
            gboolean listed = FALSE, near = FALSE;
            for (guint j = 0; j < listed_rows->len; j++)
              {
                const MlPeak *y = &doc->peaks.peaks[g_array_index (listed_rows, guint, j)], *x = &doc->peaks.peaks[i];
                listed |= g_array_index (listed_rows, guint, j) == i;
                guint64 dt = x->tick > y->tick ? x->tick - y->tick : y->tick - x->tick;
                near |= dt <= window && fabs ((double) x->live - (double) y->live) <= 0.03 * (double) MAX (x->live, y->live);
              }
            covered &= listed || near;
          }
        check (st, apart && covered, "the Peaks list shows each plateau once (%u of %zu local maxima listed)", listed_rows->len, doc->peaks.n);
        st->shot = "window-peak.png";
      }
      break;
    case 12:   /* a knob: a capacity below the lower bound makes the run OOM */
      {
        char cap[32];
        g_snprintf (cap, sizeof cap, "%" G_GUINT64_FORMAT, doc->bufs->lower_bound / 2);
        ml_window_set_knob (st->win, "capacity", cap);
        activate (st, "apply-knobs", NULL);
        check (st, ml_window_is_busy (st->win), "Apply re-runs in a worker with capacity %s", cap);
        st->waiting_job = TRUE;
        break;
      }
    case 13:
      check (st, st->job_ok && doc->runs[0]->plan && doc->runs[0]->plan->oom.hit && doc->knobs.capacity == doc->bufs->lower_bound / 2,
             "under half the lower bound the run reports an OOM at tick %" G_GUINT64_FORMAT,
             doc->runs[0]->plan ? doc->runs[0]->plan->oom.tick : 0);
      ml_window_set_knob (st->win, "align", "3");
      activate (st, "apply-knobs", NULL);
      check (st, !ml_window_is_busy (st->win) && ml_window_get_document (st->win) == doc,
             "an alignment that is not a power of two is refused, nothing re-runs");
      ml_window_set_knob (st->win, "align", "");
      ml_window_set_knob (st->win, "capacity", "");
      /* cancel: the table's run is stopped and the view keeps its document */
      activate (st, "compare-all", NULL);
      check (st, ml_window_is_busy (st->win), "Run all starts a worker");
      activate (st, "cancel", NULL);
      st->waiting_job = TRUE;
      break;
    case 14:
      check (st, !ml_window_is_busy (st->win) && ml_window_get_document (st->win) == doc, "Cancel stops it; the view keeps its run");
      /* the Knobs page's sweep: pool and buddy over three chunk sizes */
      ml_window_set_knob (st->win, "sweep", "chunk=256K,1M,16M");
      ml_window_set_knob (st->win, "sweep-strategies", "pool,buddy");
      activate (st, "sweep-knob", NULL);
      check (st, ml_window_is_busy (st->win), "Sweep runs in a worker");
      st->waiting_job = TRUE;
      break;
    case 15:
      {
        const MlKnobSweep *sw = ml_window_get_sweep (st->win);
        check (st, st->job_ok && sw && sw->n_values == 3 && sw->n_strategies == 2, "the sweep has 3 values x 2 strategies");
        /* each row is the run of its own: the same peak as running it alone */
        int same = 0, rows = sw ? (int) (sw->n_values * sw->n_strategies) : 0;
        for (int r = 0; r < rows; r++)
          {
            MlKnobs k;
            ml_knobs_init (&k);
            k.align = doc->bufs->align;
            k.chunk = r / 2 == 0 ? 256 << 10 : r / 2 == 1 ? 1 << 20 : 16 << 20;
            MlResult res;
            if (ml_sim_evaluate (doc->bufs, sw->rows[r].strategy, &k, &res, NULL) == 0 && res.status == 0
                && res.metrics.peak == sw->rows[r].metrics.peak)
              same++;
            ml_result_clear (&res);
          }
        check (st, rows == 6 && same == rows, "every row's peak is that strategy's run with that chunk alone (%d of %d)", same, rows);
        check (st, rows == 6 && sw->rows[0].metrics.peak != sw->rows[4].metrics.peak,
               "the chunk changes pool's peak (%" G_GUINT64_FORMAT " at 256K, %" G_GUINT64_FORMAT " at 16M)",
               rows ? sw->rows[0].metrics.peak : 0, rows ? sw->rows[4].metrics.peak : 0);
        break;
      }
    case 16:
      if (!input_begin (st))
        {
          finish (st);
          return FALSE;
        }
      break;
    case 17:   /* real key presses through the X server */
      {
        double before = axis (st, st->it1) - axis (st, st->it0);
        check (st, fabs (span (st, 0) - before / 2) < 1e-6 * before, "input: the + key zooms in (span %g -> %g)", before, span (st, 0));
      }
      xdo (st, "key 0");
      break;
    case 18:
      {
        double t0, t1;
        ml_timeline_view_get_time_span (tv (st, 0), &t0, &t1);
        check (st, t0 == st->full0 && t1 == st->full1, "input: the 0 key fits");
        const MlView *v = ml_timeline_view_get_view (tv (st, 0));
        st->ix = v->px + v->pw * 0.3;
        st->iy = v->py + v->ph * 0.5;
        st->it0 = t0, st->it1 = t1;
        st->itick = ml_view_x_to_time (v, st->ix);
        xdo (st, "mousemove --window %s %.0f %.0f keydown ctrl click 4 keyup ctrl", st->xid, st->ox + st->ix, st->oy + st->iy);
        break;
      }
    case 19:
      {
        const MlView *v = ml_timeline_view_get_view (tv (st, 0));
        double after = ml_view_x_to_time (v, st->ix);
        double px = fabs (ml_view_x_to_time (v, st->ix + 1) - ml_view_x_to_time (v, st->ix));   /* ticks per px there */
        double before = axis (st, st->it1) - axis (st, st->it0);
        check (st, span (st, 0) < before * 0.95, "input: ctrl+scroll zooms in (span %g -> %g)", before, span (st, 0));
        check (st, fabs (after - st->itick) <= 1.5 * px + 1e-9, "input: around the pointer (tick %.1f stays under it: %.1f)", st->itick, after);
        ml_timeline_view_get_time_span (tv (st, 0), &st->it0, &st->it1);
        /* to the left: the view has room on the right after the zoom */
        xdo (st, "mousemove --window %s %.0f %.0f mousedown 1 mousemove --window %s %.0f %.0f mousemove --window %s %.0f %.0f mouseup 1",
             st->xid, st->ox + st->ix + 100, st->oy + st->iy, st->xid, st->ox + st->ix + 50, st->oy + st->iy,
             st->xid, st->ox + st->ix, st->oy + st->iy);
        break;
      }
    case 20:
      {
        double t0, t1;
        ml_timeline_view_get_time_span (tv (st, 0), &t0, &t1);
        const MlView *v = ml_timeline_view_get_view (tv (st, 0));
        /* in the axis' unit: 100 px of the span */
        double w = axis (st, t1) - axis (st, t0), w0 = axis (st, st->it1) - axis (st, st->it0);
        double want = 100 * w / v->pw, moved = axis (st, t0) - axis (st, st->it0);
        check (st, fabs (moved - want) <= 0.05 * want && fabs (w - w0) < 1e-6 * w,
               "input: dragging 100 px to the left shows later ticks (moved %.1f, want %.1f)", moved, want);
        activate (st, "zoom-fit", NULL);
        v = ml_timeline_view_get_view (tv (st, 0));
        st->it0 = ml_view_x_to_time (v, st->ix);
        st->it1 = ml_view_x_to_time (v, st->ix + 200);
        xdo (st, "mousemove --window %s %.0f %.0f keydown shift mousedown 1 mousemove --window %s %.0f %.0f "
                 "mousemove --window %s %.0f %.0f mouseup 1 keyup shift",
             st->xid, st->ox + st->ix, st->oy + st->iy, st->xid, st->ox + st->ix + 100, st->oy + st->iy,
             st->xid, st->ox + st->ix + 200, st->oy + st->iy);
        break;
      }
    case 21:
      {
        double t0, t1;
        ml_timeline_view_get_time_span (tv (st, 0), &t0, &t1);
        double tol = (st->it1 - st->it0) * 0.03;
        check (st, fabs (t0 - st->it0) <= tol && fabs (t1 - st->it1) <= tol,
               "input: shift-drag over 200 px zooms to that range ([%.1f, %.1f), want [%.1f, %.1f))", t0, t1, st->it0, st->it1);
        activate (st, "zoom-fit", NULL);
        ml_timeline_view_select_buffer (tv (st, 0), -1);
        /* a whole pixel where the hit test finds a buffer (the pointer
         * moves by whole pixels; sub-pixel buffers of a large trace are
         * merged there) */
        const MlView *v = ml_timeline_view_get_view (tv (st, 0));
        long want = -1;
        double x = 0, y = 0;
        for (int gy = 1; gy < 8 && want < 0; gy++)
          for (int gx = 1; gx < 8 && want < 0; gx++)
            {
              x = floor (v->px + v->pw * gx / 8.0), y = floor (v->py + v->ph * gy / 8.0);
              want = ml_timeline_view_pick (tv (st, 0), x, y);
            }
        st->picked = want;
        xdo (st, "mousemove --window %s %.0f %.0f click 1", st->xid, st->ox + x, st->oy + y);
        break;
      }
    case 22:
      check (st, st->picked >= 0 && ml_timeline_view_get_selected (tv (st, 0)) == st->picked,
             "input: a click on a buffer selects it (want %ld, got %ld)", st->picked, ml_timeline_view_get_selected (tv (st, 0)));
      ml_timeline_view_select_buffer (tv (st, 0), -1);
      /* the stacked view, through the View menu's action */
      activate (st, "plot", g_variant_new_string ("active"));
      break;
    case 23:
      {
        const MlScene *sc = ml_timeline_view_get_scene (tv (st, 0));
        const MlView *v = ml_timeline_view_get_view (tv (st, 0));
        /* the top of the stack is the most live bytes: computed here from
         * the lifetimes, not from the renderer */
        guint64 most = 0;
        for (guint64 t = 0; t < doc->bufs->end_tick; t++)
          {
            guint64 live = 0;
            for (gsize i = 0; i < doc->bufs->n; i++)
              if (doc->bufs->buf[i].start <= t && t < doc->bufs->buf[i].end)
                live += doc->bufs->buf[i].rsize;
            most = MAX (most, live);
          }
        check (st, v->a_max == (double) most, "active view: the vertical axis is the most live bytes (%.0f, want %" G_GUINT64_FORMAT ")",
               v->a_max, most);
        /* the bottom of the stack is the longest-lived buffer (of those
         * at least 3 px tall: the pointer moves by whole pixels) */
        double tall = 3 * ml_view_bytes_per_px (v);
        long bottom = -1;
        for (size_t i = 0; i < sc->n_items; i++)
          if ((double) sc->items[i].size >= tall && (bottom < 0 || sc->rank[i] < sc->rank[bottom]))
            bottom = (long) i;
        long want = bottom >= 0 ? (long) sc->items[bottom].buffer : -1;
        for (gsize i = 0; want >= 0 && i < doc->bufs->n; i++)
          {
            const MlBuffer *b = &doc->bufs->buf[i], *w = &doc->bufs->buf[want];
            if ((double) b->rsize >= tall && b->end - b->start > w->end - w->start)
              want = -1;
          }
        double x = 0, y = 0;
        gboolean vis = want >= 0 && ml_timeline_view_buffer_point (tv (st, 0), (guint32) want, &x, &y);
        check (st, vis, "active view: the longest-lived buffer at least 3 px tall (%ld) is the lowest of those in the stack", want);
        check (st, vis && y > v->py + v->ph * 0.5, "and drawn in the lower half (y %.0f of %.0f..%.0f)", y, v->py, v->py + v->ph);
        /* the picture there has the buffer's colour */
        int w = gtk_widget_get_width (GTK_WIDGET (tv (st, 0))), h = gtk_widget_get_height (GTK_WIDGET (tv (st, 0)));
        cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_RGB24, w, h);
        cairo_t *cr = cairo_create (img);
        ml_timeline_view_get_style (tv (st, 0))->show_labels = FALSE;
        ml_timeline_view_draw_to (tv (st, 0), cr, w, h);
        ml_timeline_view_get_style (tv (st, 0))->show_labels = TRUE;
        cairo_destroy (cr);
        cairo_surface_flush (img);
        guint32 px = *(guint32 *) (cairo_image_surface_get_data (img) + (int) y * cairo_image_surface_get_stride (img) + (int) x * 4);
        cairo_surface_destroy (img);
        MlStyle *style = ml_timeline_view_get_style (tv (st, 0));
        const MlSceneItem *it = bottom >= 0 ? &sc->items[bottom] : NULL;
        MlRgb c = ml_style_class_color (style, it ? it->cls[style->color_by] : 0);
        guint32 rgb = (guint32) lround (c.r * 255) << 16 | (guint32) lround (c.g * 255) << 8 | (guint32) lround (c.b * 255);
        check (st, vis && (px & 0xffffff) == rgb, "active view: the pixel there is its call site's colour (#%06x, want #%06x)",
               px & 0xffffff, rgb);
        st->picked = want;
        st->ix = x, st->iy = y;
        xdo (st, "mousemove --window %s %.0f %.0f", st->xid, st->ox + x, st->oy + y);
        st->hold_until = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;
        break;
      }
    case 24:
      {
        /* a frame may come (a worker's drawing) before the motion does */
        double hx, hy;
        ml_timeline_view_get_pointer (tv (st, 0), &hx, &hy);
        if ((fabs (hx - st->ix) > 1 || fabs (hy - st->iy) > 1) && g_get_monotonic_time () < st->hold_until)
          return TRUE;
        /* the pointer reached the point through the X server; what the
         * tooltip shows there (a tooltip popup may take the hover away
         * from the widget meanwhile, so ask at the pointer) */
        double px, py;
        ml_timeline_view_get_pointer (tv (st, 0), &px, &py);
        long hov = ml_timeline_view_pick (tv (st, 0), px, py);
        check (st, fabs (px - st->ix) <= 1 && fabs (py - st->iy) <= 1 && hov == st->picked,
               "input: hovering it in the active view finds it (pointer %.0f,%.0f: %ld, want %ld)", px, py, hov, st->picked);
        g_autofree char *markup = ml_timeline_view_dup_buffer_markup (tv (st, 0), hov);
        /* the innermost Python frame of its stack, read from the trace */
        const MlTrace *t = ml_document_trace (doc);
        const char *func = NULL;
        if (st->picked >= 0)
          {
            const MlBuffer *b = &doc->bufs->buf[st->picked];
            if (b->stack && b->stack < t->n_stacks)
              for (guint32 f = 0; f < t->stacks[b->stack].n && !func; f++)
                {
                  const MlFrame *fr = &t->frames[t->stacks[b->stack].first + f];
                  if (g_str_has_suffix (ml_trace_str (t, fr->file), ".py"))
                    func = ml_trace_str (t, fr->func);
                }
          }
        if (func)
          check (st, markup && strstr (markup, func), "the hover names its stack (frame %s)", func);
        else
          check (st, markup && strstr (markup, "size"), "the hover describes it (no stack in this trace)");
        xdo (st, "click 1");
        break;
      }
    case 25:
      check (st, st->picked >= 0 && ml_timeline_view_get_selected (tv (st, 0)) == st->picked,
             "input: a click in the active view selects it (got %ld)", ml_timeline_view_get_selected (tv (st, 0)));
      st->shot = "window-active.png";
      break;
    case 26:
      {
        /* colour by kind: only where the trace records kinds */
        gboolean kinds = FALSE;
        for (gsize i = 0; i < doc->bufs->n; i++)
          kinds |= (doc->bufs->buf[i].flags & (ML_BUF_WEIGHT | ML_BUF_ACTIVATION | ML_BUF_INPUT | ML_BUF_OUTPUT)) != 0;
        activate (st, "color-by", g_variant_new_string ("kind"));
        MlColorBy by = ml_timeline_view_get_style (tv (st, 0))->color_by;
        const char *msg = ml_window_get_message (st->win);
        if (kinds)
          check (st, by == ML_COLOR_BY_KIND, "colour by kind on a trace with kinds");
        else
          check (st, by == ML_COLOR_BY_SITE && msg && strstr (msg, "no buffer kinds"),
                 "colour by kind on a trace without kinds says so and keeps the call sites");
        activate (st, "color-by", g_variant_new_string ("site"));
        ml_window_show_message (st->win, NULL);
      }
      activate (st, "plot", g_variant_new_string ("segments"));
      st->shot = "window-segments.png";
      break;
    case 27:
      {
        /* the allocator state: open it at the first peak, then choose an
         * event in its list with a real click */
        const MlPeak *p = doc->peaks.n ? &doc->peaks.peaks[0] : NULL;
        check (st, p && ml_window_show_state (st->win, p->tick), "the State page opens at the peak tick");
        st->hold_until = g_get_monotonic_time () + 3 * G_USEC_PER_SEC / 2;   /* for its layout */
        break;
      }
    case 28:
      {
        if (g_get_monotonic_time () < st->hold_until)
          return TRUE;
        MlStatePage *sp = ml_window_get_state_page (st->win);
        const MlTrace *t = ml_document_trace (doc);
        /* the second event before the chosen one: listed, and its row on screen */
        gsize at = 0;
        while (at < t->n_events && t->events[at].tick <= ml_state_page_get_tick (sp))
          at++;
        gsize e = at >= 3 ? at - 3 : 0;
        GtkWidget *row = ml_state_page_get_event_row (sp, e);
        graphene_point_t pt;
        gboolean placed = row && gtk_widget_compute_point (row, GTK_WIDGET (st->win),
                                                           &GRAPHENE_POINT_INIT (20, gtk_widget_get_height (row) / 2.0), &pt);
        check (st, placed, "the event list shows event %zu (tick %" G_GUINT64_FORMAT ")", e, e < t->n_events ? t->events[e].tick : 0);
        st->itick = e < t->n_events ? (double) t->events[e].tick : -1;
        double sx = 0, sy = 0;
        gtk_native_get_surface_transform (GTK_NATIVE (st->win), &sx, &sy);
        if (placed)
          xdo (st, "mousemove --window %s %.0f %.0f click 1", st->xid, pt.x + sx, pt.y + sy);
        break;
      }
    case 29:
      {
        MlStatePage *sp = ml_window_get_state_page (st->win);
        guint64 tick = ml_state_page_get_tick (sp);
        check (st, (double) tick == st->itick, "input: a click on the event shows the state after it (tick %" G_GUINT64_FORMAT
               ", want %.0f)", tick, st->itick);
        g_autofree char *text = ml_state_page_dup_text (sp);
        /* every buffer run 0 holds at that tick is listed, computed here
         * from the lifetimes and the plan */
        const MlRun *run = doc->runs[0];
        gsize live = 0, listed = 0;
        guint64 bytes = 0;
        for (gsize i = 0; run->plan && i < doc->bufs->n; i++)
          {
            const MlBuffer *b = &doc->bufs->buf[i];
            guint32 g = run->plan->segment[i];
            if (!b->rsize || b->start > tick || tick >= b->end || g >= run->plan->n_segments
                || run->plan->segments[g].start > tick || tick >= run->plan->segments[g].end)
              continue;
            bytes += b->rsize;
            /* the text lists whole segments (a long state lists the first) */
            char head[64];
            g_snprintf (head, sizeof head, "\nsegment %u, ", g);
            if (!text || !strstr (text, head))
              continue;
            live++;
            char tmp[32], sz[32], line[256];
            g_snprintf (line, sizeof line, "%10s at +0x%" G_GINT64_MODIFIER "x  %s", ml_format_size (b->rsize, sz, sizeof sz),
                        run->plan->offset[i], ml_document_buffer_label (doc, (guint32) i, tmp, sizeof tmp));
            listed += text && strstr (text, line) != NULL;
          }
        check (st, live > 0 && listed == live, "the state lists every live buffer of the segments it lists, with its size and offset (%zu of %zu)", listed, live);
        char want[64], sz[32];
        g_snprintf (want, sizeof want, "allocated %s,", ml_format_size (bytes, sz, sizeof sz));
        check (st, text && strstr (text, want), "and the allocated total %s", want);
        g_autofree char *path = out_path (st, "state.txt");
        g_file_set_contents (path, text ? text : "", -1, NULL);
        st->shot = "window-state.png";
        break;
      }
    case 30:
      activate (st, "plot", g_variant_new_string ("address"));
      {
        /* the x axis: real time when every event has one, labels at round
         * times, evenly spaced */
        const MlTrace *t = ml_document_trace (doc);
        gboolean all_timed = t->n_events > 0;
        for (gsize i = 0; i < t->n_events; i++)
          all_timed &= t->events[i].time_ns >= 0;
        const MlView *v = ml_timeline_view_get_view (tv (st, 0));
        check (st, (v->warp != NULL) == (all_timed && ml_scene_real_time (doc->runs[0]->scene, ML_TIME_AXIS_TIME)),
               "the automatic axis is %s (every event has a time: %s)", v->warp ? "real time" : "ticks", all_timed ? "yes" : "no");
        st->it0 = v->warp != NULL;
        xdo (st, "windowfocus --sync %s key t", st->xid);
        break;
      }
    case 31:
    case 32:
      {
        /* the T key switched it; labels: evenly spaced, in the axis' unit */
        const MlView *v = ml_timeline_view_get_view (tv (st, 0));
        gboolean timed = v->warp != NULL;
        if (ml_scene_real_time (ml_timeline_view_get_scene (tv (st, 0)), ML_TIME_AXIS_TIME))
          check (st, timed != (st->it0 != 0), "input: the T key switches the axis to %s", timed ? "real time" : "ticks");
        else
          {
            const char *msg = ml_window_get_message (st->win);
            check (st, !timed && (st->step == 32 || (msg && strstr (msg, "no times"))),
                   "input: the T key on a trace without times keeps ticks and says why (%s)", msg ? msg : "no message");
          }
        MlTimeLabel lab[64];
        size_t n = ml_timeline_time_labels (v, ml_timeline_view_get_scene (tv (st, 0)), ml_timeline_view_get_style (tv (st, 0)), lab, 64);
        gboolean even = n >= 3, unit = n >= 1;
        for (size_t i = 2; i < n; i++)
          even &= fabs ((lab[i].x - lab[i - 1].x) - (lab[1].x - lab[0].x)) < 1.0;
        for (size_t i = 0; i < n; i++)
          unit &= timed ? (g_str_has_suffix (lab[i].text, "s") != 0) : g_ascii_isdigit (lab[i].text[strlen (lab[i].text) - 1]);
        check (st, even && unit, "%zu labels, evenly spaced (%.1f px), %s (%s, %s, ...)", n, n > 1 ? lab[1].x - lab[0].x : 0,
               timed ? "in ns/µs/ms/s" : "in ticks", n ? lab[0].text : "", n > 1 ? lab[1].text : "");
        st->it0 = timed;
        st->shot = timed ? "window-time.png" : "window-ticks.png";
        if (st->step == 31)
          xdo (st, "windowfocus --sync %s key t", st->xid);
        break;
      }
    case 33:
      finish (st);
      return FALSE;
    case 100:   /* several devices: the window says which it shows */
      {
        const MlTrace *t = ml_document_trace (doc);
        GtkWidget *dd = ml_window_get_device_selector (st->win);
        g_autofree char *text = ml_window_dup_device_text (st->win);
        g_autofree char *want = g_strdup_printf ("device %u of %zu", t->device, t->n_devices);
        check (st, text && g_str_has_prefix (text, want), "the window names the device it shows (%s)", text ? text : "nothing");
        check (st, gtk_widget_get_mapped (dd), "the device selector is on screen");
        GListModel *m = gtk_drop_down_get_model (GTK_DROP_DOWN (dd));
        guint sel = gtk_drop_down_get_selected (GTK_DROP_DOWN (dd));
        check (st, g_list_model_get_n_items (m) == t->n_devices && sel < t->n_devices && t->devices[sel].device == t->device,
               "it lists the %zu devices and has device %u chosen", t->n_devices, t->device);
        /* for the shell to compare with the file: which device, the rows */
        GString *rows = g_string_new (NULL);
        g_string_append_printf (rows, "%s\n", text ? text : "");
        for (guint i = 0; i < g_list_model_get_n_items (m); i++)
          g_string_append_printf (rows, "%s\n", gtk_string_list_get_string (GTK_STRING_LIST (m), i));
        g_autofree char *path = out_path (st, "devices.txt");
        g_file_set_contents (path, rows->str, -1, NULL);
        g_string_free (rows, TRUE);
        st->itick = t->device;   /* the device before */
        st->shot = "window-device.png";
        oom_drawn (st, doc);
        break;
      }
    case 101:   /* choose another device with a real click and keys */
      {
        const MlTrace *t = ml_document_trace (doc);
        GtkWidget *dd = ml_window_get_device_selector (st->win);
        guint sel = gtk_drop_down_get_selected (GTK_DROP_DOWN (dd));
        guint to = sel > 0 ? sel - 1 : sel + 1;   /* the row above, else below */
        st->picked = t->devices[to].device;
        if (!input_begin (st))
          {
            activate (st, "device", g_variant_new_int32 ((gint32) st->picked));
            st->hold_until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
            st->step = 103;
            return TRUE;
          }
        graphene_point_t pt;
        double sx = 0, sy = 0;
        gtk_native_get_surface_transform (GTK_NATIVE (st->win), &sx, &sy);
        if (gtk_widget_compute_point (dd, GTK_WIDGET (st->win),
                                      &GRAPHENE_POINT_INIT (gtk_widget_get_width (dd) / 2.0, gtk_widget_get_height (dd) / 2.0), &pt))
          xdo (st, "mousemove --window %s %.0f %.0f click 1", st->xid, pt.x + sx, pt.y + sy);
        st->hold_until = g_get_monotonic_time () + G_USEC_PER_SEC;   /* the popup opens */
        break;
      }
    case 102:
      {
        if (g_get_monotonic_time () < st->hold_until)
          return TRUE;
        /* in the open list: the first row, down to the target's, Enter */
        const MlTrace *t = ml_document_trace (doc);
        GString *keys = g_string_new ("key --clearmodifiers Home");
        for (size_t i = 0; i < t->n_devices && t->devices[i].device != (guint32) st->picked; i++)
          g_string_append (keys, " Down");
        g_string_append (keys, " Return");
        xdo (st, "%s", keys->str);
        g_string_free (keys, TRUE);
        st->hold_until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;   /* for the other device to load */
        break;
      }
    case 103:
      {
        const MlTrace *t = ml_document_trace (doc);
        if (t->device != (guint32) st->picked && g_get_monotonic_time () < st->hold_until)
          return TRUE;
        check (st, st->job_ok && t->device == (guint32) st->picked, "input: choosing device %ld in the selector shows it (device %u)",
               st->picked, t->device);
        g_autofree char *text = ml_window_dup_device_text (st->win);
        g_autofree char *want = g_strdup_printf ("device %ld of %zu, as chosen", st->picked, t->n_devices);
        check (st, text && g_str_equal (text, want), "and the window says so (%s)", text ? text : "nothing");
        GtkWidget *dd = ml_window_get_device_selector (st->win);
        guint sel = gtk_drop_down_get_selected (GTK_DROP_DOWN (dd));
        check (st, sel < t->n_devices && t->devices[sel].device == t->device, "the selector shows it chosen");
        g_autofree char *path = out_path (st, "device2.txt");
        g_autofree char *line = g_strdup_printf ("%u %zu %zu\n", t->device, doc->bufs->n, t->n_events);
        g_file_set_contents (path, line, -1, NULL);
        st->shot = "window-device2.png";
        break;
      }
    case 104:
      finish (st);
      return FALSE;
    case 300:   /* two files, one below the other, on one time and byte scale */
      {
        MlDocument *d2 = ml_window_get_document2 (st->win);
        check (st, ml_timeline_view_get_document (tv (st, 1)) == d2 && gtk_widget_get_mapped (GTK_WIDGET (tv (st, 1))),
               "the second file is drawn in the lower timeline");
        check (st, d2->runs[0] && g_str_equal (d2->runs[0]->strategy, doc->runs[0]->strategy),
               "with the same strategy (%s)", doc->runs[0]->strategy);
        const MlView *a = ml_timeline_view_get_view (tv (st, 0)), *b = ml_timeline_view_get_view (tv (st, 1));
        double ea = (double) MAX (doc->runs[0]->scene->addr_extent, 1), eb = (double) MAX (d2->runs[0]->scene->addr_extent, 1);
        check (st, a->a_max == b->a_max && a->a_max == MAX (ea, eb), "one byte scale: both axes reach %.0f B (the larger of %.0f and %.0f)",
               a->a_max, ea, eb);
        double ua0, ua1, ub0, ub1;
        ml_timeline_view_get_axis_span (tv (st, 0), &ua0, &ua1);
        ml_timeline_view_get_axis_span (tv (st, 1), &ub0, &ub1);
        double end_a = ml_view_axis_value (a, (double) doc->runs[0]->scene->end_tick);
        double end_b = ml_view_axis_value (b, (double) d2->runs[0]->scene->end_tick);
        check (st, fabs (ua0 - ub0) < 1e-6 * (ua1 - ua0) + 1e-9 && fabs (ua1 - ub1) < 1e-6 * (ua1 - ua0) + 1e-9
                   && fabs (ua1 - MAX (end_a, end_b)) < 1e-6 * ua1 + 1e-9,
               "one time scale: both show [%g, %g) %s, the longer run's end", ua0, ua1, a->warp ? "ns" : "ticks");
        if (!input_begin (st))
          {
            st->step = 304;
            return TRUE;
          }
        break;   /* input_begin pressed + */
      }
    case 301:
      {
        double ua0, ua1, ub0, ub1;
        ml_timeline_view_get_axis_span (tv (st, 0), &ua0, &ua1);
        ml_timeline_view_get_axis_span (tv (st, 1), &ub0, &ub1);
        double before = axis (st, st->it1) - axis (st, st->it0);
        check (st, fabs ((ua1 - ua0) - before / 2) < 1e-6 * before && fabs (ua0 - ub0) < 1e-6 * before && fabs (ua1 - ub1) < 1e-6 * before,
               "input: the + key zooms both files alike ([%g, %g) and [%g, %g))", ua0, ua1, ub0, ub1);
        xdo (st, "key 0");
        break;
      }
    case 302:
      {
        /* a click on the second file's largest buffer */
        MlDocument *d2 = ml_window_get_document2 (st->win);
        long want = largest_buffer (d2);
        double x = 0, y = 0;
        st->picked = ml_timeline_view_buffer_point (tv (st, 1), (guint32) want, &x, &y) ? want : -1;
        graphene_point_t pt;
        if (st->picked >= 0 && gtk_widget_compute_point (GTK_WIDGET (tv (st, 1)), GTK_WIDGET (st->win), &GRAPHENE_POINT_INIT (x, y), &pt))
          {
            double sx = 0, sy = 0;
            gtk_native_get_surface_transform (GTK_NATIVE (st->win), &sx, &sy);
            xdo (st, "mousemove --window %s %.0f %.0f click 1", st->xid, pt.x + sx, pt.y + sy);
          }
        break;
      }
    case 303:
      check (st, st->picked >= 0 && ml_timeline_view_get_selected (tv (st, 1)) == st->picked,
             "input: a click selects the second file's buffer %ld", st->picked);
      check (st, ml_timeline_view_get_selected (tv (st, 0)) == -1,
             "and not the first file's buffer of that index (their buffers differ)");
      st->shot = "window-two-files.png";
      break;
    case 304:
      {
        g_autofree char *png = out_path (st, "two-files.png");
        activate (st, "export", g_variant_new ("(ss)", "png", png));
        int w, h;
        guint colours = png_colours (png, &w, &h);
        check (st, h > 400 && colours > 8, "the export holds both timelines (%d x %d, %u colours)", w, h, colours);
        activate (st, "stop-comparing", NULL);
        check (st, !ml_window_get_document2 (st->win) && !gtk_widget_get_visible (gtk_widget_get_parent (GTK_WIDGET (tv (st, 1)))),
               "Stop comparing drops the second file");
        finish (st);
        return FALSE;
      }
    case 200:   /* after the error's screenshot */
      finish (st);
      return FALSE;
    }
  st->step++;
  return TRUE;
}

/* ---- bench ---------------------------------------------------------------------- */

static double
thread_cpu_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void
on_before_paint (GdkFrameClock *fc, SelfTest *st)
{
  st->before_paint = g_get_monotonic_time ();
  st->before_cpu = thread_cpu_ms ();
}

static void
on_after_paint (GdkFrameClock *fc, SelfTest *st)
{
  MlTimelineView *v = tv (st, 0);
  guint n = ml_timeline_view_get_draw_count (v);
  if (n == st->seen_draws || !st->phase)
    return;
  st->seen_draws = n;
  double ms = (double) (g_get_monotonic_time () - st->before_paint) / 1000.0;
  double dms = (double) ml_timeline_view_get_last_draw_us (v) / 1000.0;
  double cms = thread_cpu_ms () - st->before_cpu;
  g_array_append_val (st->cpu, cms);
  g_array_append_val (st->frames, ms);
  g_array_append_val (st->draws, dms);
  g_array_append_val (st->labels, st->phase);
  st->pending = FALSE;
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

static void
bench_write (SelfTest *st)
{
  MlDocument *doc = ml_window_get_document (st->win);
  GString *s = g_string_new ("{\n");
  g_string_append_printf (s, "  \"buffers\": %zu,\n  \"width\": %d,\n  \"height\": %d,\n", doc ? doc->bufs->n : 0,
                          gtk_widget_get_width (GTK_WIDGET (tv (st, 0))), gtk_widget_get_height (GTK_WIDGET (tv (st, 0))));
  g_string_append_printf (s, "  \"load_seconds\": %.3f,\n", doc ? doc->load_seconds : 0);
  /* launch to the first frame that showed the drawn trace */
  gint64 first = ml_timeline_view_get_first_picture_us (tv (st, 0));
  double age = process_age ();
  g_string_append_printf (s, "  \"first_picture_seconds\": %.3f,\n",
                          first && age >= 0 ? age - (double) (g_get_monotonic_time () - first) / 1e6 : -1.0);
  const char *phases[] = { "fit", "zoom-in", "deep-pan", "zoom-out", "pan-fit", "all" };
  g_string_append (s, "  \"phases\": {\n");
  for (gsize p = 0; p < G_N_ELEMENTS (phases); p++)
    {
      GArray *f = g_array_new (FALSE, FALSE, sizeof (double)), *d = g_array_new (FALSE, FALSE, sizeof (double));
      GArray *cp = g_array_new (FALSE, FALSE, sizeof (double));
      for (guint i = 0; i < st->frames->len; i++)
        if (p == G_N_ELEMENTS (phases) - 1 || g_str_equal (g_array_index (st->labels, const char *, i), phases[p]))
          {
            g_array_append_val (f, g_array_index (st->frames, double, i));
            g_array_append_val (d, g_array_index (st->draws, double, i));
            g_array_append_val (cp, g_array_index (st->cpu, double, i));
          }
      double fm, fp, fx, dm, dp, dx, cm, cpp, cx;
      stats (f, &fm, &fp, &fx);
      stats (d, &dm, &dp, &dx);
      stats (cp, &cm, &cpp, &cx);
      g_string_append_printf (s, "    \"%s\": {\"frames\": %u, \"frame_ms_median\": %.2f, \"frame_ms_p95\": %.2f, \"frame_ms_max\": %.2f, "
                              "\"frame_cpu_ms_median\": %.2f, \"frame_cpu_ms_p95\": %.2f, \"frame_cpu_ms_max\": %.2f, "
                              "\"draw_ms_median\": %.2f, \"draw_ms_p95\": %.2f, \"draw_ms_max\": %.2f}%s\n",
                              phases[p], f->len, fm, fp, fx, cm, cpp, cx, dm, dp, dx, p + 1 < G_N_ELEMENTS (phases) ? "," : "");
      g_array_unref (cp);
      g_array_unref (f);
      g_array_unref (d);
    }
  g_string_append (s, "  },\n");
  {
    const GArray *rt = ml_timeline_view_get_render_times (tv (st, 0));
    GArray *c = g_array_copy ((GArray *) rt);
    double m, p, x;
    stats (c, &m, &p, &x);
    g_string_append_printf (s, "  \"full_drawings\": {\"count\": %u, \"ms_median\": %.2f, \"ms_p95\": %.2f, \"ms_max\": %.2f}\n",
                            c->len, m, p, x);
    g_array_unref (c);
  }
  g_string_append (s, "}\n");
  g_file_set_contents (st->bench, s->str, -1, NULL);
  fputs (s->str, stdout);
  g_string_free (s, TRUE);
}

/* The scripted path: each call changes the view once and waits for the
 * frame that shows it. */
static gboolean
bench_step (SelfTest *st)
{
  MlTimelineView *v = tv (st, 0);
  if (st->step == 0)
    {
      if (!st->job_ok || !ml_window_get_document (st->win))
        {
          fprintf (stderr, "memlens-view: bench: the file did not load\n");
          exit_status = 1;
          finish (st);
          return FALSE;
        }
      GdkFrameClock *fc = gtk_widget_get_frame_clock (GTK_WIDGET (st->win));
      g_signal_connect (fc, "before-paint", G_CALLBACK (on_before_paint), st);
      g_signal_connect (fc, "after-paint", G_CALLBACK (on_after_paint), st);
      st->step = 1;
      st->seen_draws = ml_timeline_view_get_draw_count (v);
      return TRUE;
    }
  /* wait for the frame of the previous change */
  if (st->pending)
    return TRUE;
  st->pending = TRUE;
  const MlView *view = ml_timeline_view_get_view (v);
  double cx = view->px + view->pw * 0.37;
  int i = st->bench_i++;
  if (i < 10)                      /* back and forth between fit and 2x */
    {
      st->phase = "fit";
      if (i % 2)
        ml_timeline_view_zoom_in (v);
      else
        ml_timeline_view_zoom_fit (v);
    }
  else if (i < 40)                 /* zoom in at a point, 1.5x a step */
    {
      st->phase = "zoom-in";
      double t0 = view->t0, t1 = view->t1, f = 1.5;
      double t = t0 + (cx - view->px) / view->pw * (t1 - t0), sp = (t1 - t0) / f;
      double fr = (cx - view->px) / view->pw;
      ml_timeline_view_set_time_span (v, t - fr * sp, t - fr * sp + sp);
    }
  else if (i < 70)                 /* pan while deep */
    {
      st->phase = "deep-pan";
      ml_timeline_view_pan (v, 0.1);
    }
  else if (i < 100)                /* zoom back out */
    {
      st->phase = "zoom-out";
      double t0 = view->t0, t1 = view->t1;
      double mid = (t0 + t1) / 2, sp = (t1 - t0) * 1.5;
      ml_timeline_view_set_time_span (v, mid - sp / 2, mid + sp / 2);
    }
  else if (i < 130)                /* pan at a wide zoom */
    {
      st->phase = "pan-fit";
      if (i == 100)
        {
          ml_timeline_view_zoom_fit (v);
          ml_timeline_view_zoom_in (v);
        }
      /* wait for the full drawing of the wide view before panning */
      ml_timeline_view_pan (v, i % 2 ? 0.05 : -0.05);
    }
  else
    {
      st->pending = FALSE;
      bench_write (st);
      finish (st);
      return FALSE;
    }
  return TRUE;
}

static gboolean
tick (gpointer data)
{
  SelfTest *st = data;
  if (g_get_monotonic_time () > st->deadline)
    {
      printf ("not ok %d - the scripted run timed out at step %d\n1..%d\n", st->n_tests + 1, st->step, st->n_tests + 1);
      exit_status = 1;
      GtkApplication *app = gtk_window_get_application (GTK_WINDOW (st->win));
      g_application_quit (G_APPLICATION (app));
      st->timeout_id = 0;
      return G_SOURCE_REMOVE;
    }
  if (st->waiting_job || ml_window_is_busy (st->win))
    return G_SOURCE_CONTINUE;
  /* let a frame happen between steps */
  if (!gtk_widget_get_mapped (GTK_WIDGET (st->win)))
    return G_SOURCE_CONTINUE;
  if (!st->bench)
    {
      /* one frame between steps, so screenshots see a laid-out window */
      guint n = ml_timeline_view_get_draw_count (tv (st, 0));
      gint64 now = g_get_monotonic_time ();
      if (n == st->step_draws && now < st->frame_wait)
        return G_SOURCE_CONTINUE;
      st->step_draws = n;
      st->frame_wait = now + G_USEC_PER_SEC / 2;
      gboolean settled = ml_timeline_view_is_settled (tv (st, 0))
                         && (!gtk_widget_get_mapped (GTK_WIDGET (tv (st, 1))) || ml_timeline_view_is_settled (tv (st, 1)));
      if (st->shot && !settled && now < st->frame_wait + 5 * G_USEC_PER_SEC)
        return G_SOURCE_CONTINUE;   /* a worker is still drawing */
      if (st->shot)
        {
          screenshot (st, st->shot);
          st->shot = NULL;
          return G_SOURCE_CONTINUE;
        }
    }
  gboolean more = st->bench ? bench_step (st) : test_step (st);
  if (!more)
    {
      st->timeout_id = 0;
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

void
ml_self_test_start (MlWindow *win, const char *dir, const char *bench_file)
{
  SelfTest *st = g_new0 (SelfTest, 1);
  started = TRUE;
  st->win = win;
  st->dir = g_strdup (dir ? dir : ".");
  st->bench = g_strdup (bench_file);
  st->waiting_job = TRUE;
  st->frames = g_array_new (FALSE, FALSE, sizeof (double));
  st->draws = g_array_new (FALSE, FALSE, sizeof (double));
  st->labels = g_array_new (FALSE, FALSE, sizeof (const char *));
  st->cpu = g_array_new (FALSE, FALSE, sizeof (double));
  st->deadline = g_get_monotonic_time () + (gint64) (bench_file ? 600 : 120) * G_USEC_PER_SEC;
  g_signal_connect (win, "job-finished", G_CALLBACK (on_job_finished), st);
  /* screenshots show the end state, not a revealer half way */
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
  /* the test paces itself by frames: 30 ms between steps */
  st->timeout_id = g_timeout_add (bench_file ? 5 : 30, tick, st);
  /* st lives as long as the process */
}
