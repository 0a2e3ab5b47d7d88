/* test-viewer-window.c — the viewer in a real window, step by step.
 *
 *   test-viewer-window DIR [memlens-view options] FILE [FILE2]
 *
 * Opens FILE as memlens-view does (the same application, options and
 * window), waits for it to load, then drives the window through its
 * actions and widgets (zoom, select a range, pick a buffer by the hit
 * test, switch strategy, compare, search, export, knobs, then real key
 * presses, scrolls, drags and clicks through the X server with xdotool),
 * checking each step's effect. Prints TAP to stdout, writes screenshots
 * and exports to DIR, exits 0 when every check passed.
 *
 * Each step is one function of a script (a table); a step runs once the
 * window is idle and has drawn a frame since the step before, and a
 * failing check names its step. The script taken follows the file: one
 * that does not open (error_script), several devices (device_script), two
 * files (two_files_script), else the main script; MEMLENS_TEST_SCRIPT=snapshot
 * asks for the snapshot script (pools and streams as bands, search by
 * address and frame, the pinned host memory). tests/test-viewer.sh
 * runs it under Xvfb.
 */
#include "tests/viewer-driver.h"

#ifdef GDK_WINDOWING_X11
#include <gdk/x11/gdkx.h>
#endif

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gui/application.h"
#include "render/timeline.h"
#include "sim/base/units.h"
#include "strategies/registry.h"

typedef struct _WindowTest WindowTest;

/* What a step asks for next: the step after it, the same step again (it
 * waits for something, or it skipped to another), the end; or, from the
 * first step, the script that the file calls for. */
typedef enum { NEXT, STAY, END, TO_ERROR, TO_DEVICES, TO_TWO_FILES, TO_SNAPSHOT } Next;

typedef Next (*StepFn) (WindowTest *t, MlDocument *doc);

typedef struct {
  const char *name;
  StepFn      fn;
} Step;

#define STEP(f) { #f, f }

struct _WindowTest {
  MlDriver     d;          /* first: the driver's callbacks get it */
  const Step  *script;     /* the script being run, ends with { NULL } */
  guint        at;         /* its step now */
  const char  *dir;
  int          n_tests;
  int          failed;
  const char  *shot;       /* a screenshot to take after the next frame */
  guint        step_draws; /* draw count when the last step ran */
  gint64       frame_wait; /* wait for a frame until then */
  gint64       hold_until; /* a step waiting for input repeats until then */
  /* what a step leaves for the next */
  double       full0, full1; /* the span zoom-fit shows */
  double       ix, iy;     /* input steps: a point in the plot (widget) */
  double       it0, it1;   /* the span before the input */
  double       itick;      /* the tick under the pointer before */
  char        *xid;        /* the window for xdotool */
  double       ox, oy;     /* timeline origin in the X window */
  long         picked;
};

static void
check (WindowTest *t, gboolean cond, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  t->n_tests++;
  if (!cond)
    t->failed++;
  printf ("%s %d - %s\n", cond ? "ok" : "not ok", t->n_tests, msg);
  if (!cond)
    printf ("#   in step %s\n", t->script[t->at].name);
  fflush (stdout);
}

static void
activate (WindowTest *t, const char *action, GVariant *param)
{
  ml_driver_activate (&t->d, action, param);
}

static MlTimelineView *
tv (WindowTest *t, int i)
{
  return ml_window_get_timeline (t->d.win, i);
}

/* Tick @x in the unit the x axis is linear in: ticks, or time on a
 * real-time axis. */
static double
axis (WindowTest *t, double x)
{
  return ml_view_axis_value (ml_timeline_view_get_view (tv (t, 0)), x);
}

/* The visible span of timeline @i in that unit. */
static double
span (WindowTest *t, int i)
{
  double t0, t1;
  ml_timeline_view_get_time_span (tv (t, i), &t0, &t1);
  return axis (t, t1) - axis (t, t0);
}

static char *
out_path (WindowTest *t, const char *name)
{
  return g_build_filename (t->dir, name, NULL);
}

/* Saves what the window shows now (its own render nodes, through the
 * window's renderer) as @name in the output folder. */
static void
screenshot (WindowTest *t, const char *name)
{
  GtkWidget *w = GTK_WIDGET (t->d.win);
  int width = gtk_widget_get_width (w), height = gtk_widget_get_height (w);
  GtkSnapshot *snap = gtk_snapshot_new ();
  /* the window's own snapshot (it snapshots its children) */
  GTK_WIDGET_GET_CLASS (w)->snapshot (w, snap);
  GskRenderNode *node = gtk_snapshot_free_to_node (snap);
  if (!node)
    {
      fprintf (stderr, "test-viewer-window: nothing to screenshot for %s\n", name);
      return;
    }
  GskRenderer *r = gtk_native_get_renderer (GTK_NATIVE (w));
  GdkTexture *tex = gsk_renderer_render_texture (r, node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_autofree char *path = out_path (t, name);
  if (!gdk_texture_save_to_png (tex, path))
    fprintf (stderr, "test-viewer-window: could not save %s\n", path);
  g_object_unref (tex);
  gsk_render_node_unref (node);
}

/* The number of distinct colours of a PNG (sampled every other pixel):
 * more than a few when it is not blank. */
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

/* The function of the innermost Python frame of @stack, read from the
 * trace; NULL when it has none. */
static const char *
python_frame (const MlTrace *tr, guint32 stack)
{
  if (!stack || stack >= tr->n_stacks)
    return NULL;
  for (guint32 f = 0; f < tr->stacks[stack].n; f++)
    {
      const MlFrame *fr = ml_trace_stack_frame (tr, &tr->stacks[stack], f);
      if (g_str_has_suffix (ml_trace_str (tr, fr->file), ".py"))
        return ml_trace_str (tr, fr->func);
    }
  return NULL;
}

/* The pixel (@x, @y) of what timeline @i draws now (labels off, so text
 * does not hide the colour under it). */
static guint32
view_pixel (WindowTest *t, int i, double x, double y)
{
  int w = gtk_widget_get_width (GTK_WIDGET (tv (t, i))), h = gtk_widget_get_height (GTK_WIDGET (tv (t, i)));
  if (x < 0 || y < 0 || x >= w || y >= h)
    return 0;
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_RGB24, w, h);
  cairo_t *cr = cairo_create (img);
  MlStyle *style = ml_timeline_view_get_style (tv (t, i));
  gboolean labels = style->show_labels;
  style->show_labels = FALSE;
  ml_timeline_view_draw_to (tv (t, i), cr, w, h);
  style->show_labels = labels;
  cairo_destroy (cr);
  cairo_surface_flush (img);
  guint32 px = *(guint32 *) (cairo_image_surface_get_data (img) + (int) y * cairo_image_surface_get_stride (img) + (int) x * 4);
  cairo_surface_destroy (img);
  return px & 0xffffff;
}

/* Where the window is on the screen: the offset of its surface. */
static void
surface_offset (WindowTest *t, double *sx, double *sy)
{
  *sx = *sy = 0;
  gtk_native_get_surface_transform (GTK_NATIVE (t->d.win), sx, sy);
}

/* ---- input through the X server ------------------------------------------------ */

/* Runs xdotool with @fmt (real input through the X server's XTEST). */
static void
xdo (WindowTest *t, const char *fmt, ...)
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
      fprintf (stderr, "test-viewer-window: %s: %s\n", cmd, error->message);
      g_error_free (error);
    }
}

/* Moves the pointer to (@x, @y) of the window's widget @w and clicks. */
static void
click_widget_point (WindowTest *t, GtkWidget *w, double x, double y)
{
  graphene_point_t pt;
  double sx, sy;
  surface_offset (t, &sx, &sy);
  if (gtk_widget_compute_point (w, GTK_WIDGET (t->d.win), &GRAPHENE_POINT_INIT (x, y), &pt))
    xdo (t, "mousemove --window %s %.0f %.0f click 1", t->xid, pt.x + sx, pt.y + sy);
}

/* Why the input steps cannot run here (they need X11 and xdotool), or
 * NULL; finds the window's X id and the timeline's origin in it. */
static const char *
input_unavailable (WindowTest *t)
{
  GtkWidget *w = GTK_WIDGET (t->d.win);
  g_autofree char *xdotool = g_find_program_in_path ("xdotool");
#ifdef GDK_WINDOWING_X11
  GdkSurface *surface = gtk_native_get_surface (GTK_NATIVE (w));
  if (!xdotool)
    return "xdotool is not installed";
  if (!GDK_IS_X11_SURFACE (surface))
    return "not an X11 display";
  t->xid = g_strdup_printf ("%lu", (unsigned long) gdk_x11_surface_get_xid (surface));
  double sx, sy;
  surface_offset (t, &sx, &sy);
  graphene_point_t p = GRAPHENE_POINT_INIT (0, 0);
  const char *why = NULL;
  if (!gtk_widget_compute_point (GTK_WIDGET (tv (t, 0)), w, &GRAPHENE_POINT_INIT (0, 0), &p))
    why = "the timeline has no position";
  t->ox = p.x + sx, t->oy = p.y + sy;
  return why;
#else
  return "built without X11";
#endif
}

/* Starts the input steps: fits the view and presses + on the timeline.
 * Without X11 or xdotool they are skipped (TAP "# SKIP"): FALSE. */
static gboolean
input_begin (WindowTest *t)
{
  const char *why = input_unavailable (t);
  if (why)
    {
      t->n_tests++;
      printf ("ok %d - input through the X server # SKIP %s\n", t->n_tests, why);
      return FALSE;
    }
  activate (t, "zoom-fit", NULL);
  ml_timeline_view_get_time_span (tv (t, 0), &t->it0, &t->it1);
  gtk_widget_grab_focus (GTK_WIDGET (tv (t, 0)));
  xdo (t, "windowfocus --sync %s key plus", t->xid);
  return TRUE;
}

/* Continues at step @fn of the script (on the next tick). */
static Next
skip_to (WindowTest *t, StepFn fn)
{
  guint i = 0;
  while (t->script[i].fn && t->script[i].fn != fn)
    i++;
  g_assert (t->script[i].fn);
  t->at = i;
  return STAY;
}

/* Ends a step that started a job: the next waits for its end. */
static Next
wait_for_job (WindowTest *t)
{
  t->d.waiting_job = TRUE;
  return NEXT;
}

/* ---- the main script: one file ------------------------------------------------- */

/* The file loads (every run starts here); the file decides the script. */
static Next
opens (WindowTest *t, MlDocument *doc)
{
  check (t, t->d.job_ok && doc != NULL, "the file opens in a worker and the window shows it");
  if (!doc)
    {
      /* the reason is on screen, where the user looks */
      const char *msg = ml_window_get_message (t->d.win);
      check (t, msg && g_str_has_prefix (msg, "Could not open "), "the window shows why: %s", msg ? msg : "(nothing)");
      g_autofree char *path = out_path (t, "error.txt");
      g_file_set_contents (path, msg ? msg : "", -1, NULL);
      t->shot = "window-error.png";
      return TO_ERROR;
    }
  if (ml_window_get_document2 (t->d.win))
    return TO_TWO_FILES;
  if (g_strcmp0 (g_getenv ("MEMLENS_TEST_SCRIPT"), "snapshot") == 0)
    return TO_SNAPSHOT;
  if (ml_document_trace (doc)->n_devices > 1)
    return TO_DEVICES;
  check (t, doc->bufs->n > 0, "it has buffers (%zu)", doc->bufs->n);
  g_autofree char *uri = g_filename_to_uri (doc->box->path, NULL, NULL);
  check (t, uri && gtk_recent_manager_has_item (gtk_recent_manager_get_default (), uri), "the file is in the recent files");
  check (t, ml_timeline_view_get_scene (tv (t, 0)) != NULL, "the timeline has a scene");
  return NEXT;
}

static Next
first_frame (WindowTest *t, MlDocument *doc)
{
  check (t, ml_timeline_view_get_draw_count (tv (t, 0)) > 0, "the timeline drew at least one frame");
  t->shot = "window-open.png";
  activate (t, "zoom-fit", NULL);
  ml_timeline_view_get_time_span (tv (t, 0), &t->full0, &t->full1);
  check (t, t->full1 - t->full0 >= 1, "zoom-fit shows ticks [%g, %g)", t->full0, t->full1);
  return NEXT;
}

/* The other views as the file opened, for the pictures. */
static Next
picture_active (WindowTest *t, MlDocument *doc)
{
  activate (t, "plot", g_variant_new_string ("active"));
  t->shot = "window-open-active.png";
  return NEXT;
}

static Next
picture_segments (WindowTest *t, MlDocument *doc)
{
  activate (t, "plot", g_variant_new_string ("segments"));
  t->shot = "window-open-segments.png";
  return NEXT;
}

static Next
back_to_address (WindowTest *t, MlDocument *doc)
{
  activate (t, "plot", g_variant_new_string ("address"));
  return NEXT;
}

/* The address axis' labels as the view draws them: "0x…" addresses when
 * @raw, else "seg N" and "+offset"; returns how many, 0 on a mismatch. */
static size_t
axis_labels_read (WindowTest *t, gboolean raw)
{
  MlAddrLabel lab[128];
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  size_t n = ml_timeline_addr_labels (v, ml_timeline_view_get_run (tv (t, 0))->scene, 16, lab, 128);
  for (size_t i = 0; i < n; i++)
    if (raw ? !g_str_has_prefix (lab[i].text, "0x")
            : !(g_str_has_prefix (lab[i].text, "seg ") || g_str_has_prefix (lab[i].text, "+")))
      return 0;
  return n;
}

/* win.address-axis raw: the scene is built again with each segment at
 * its recorded address (when all have one), the axis labelled by them. */
static Next
address_raw (WindowTest *t, MlDocument *doc)
{
  check (t, axis_labels_read (t, FALSE) > 0, "the address axis opens packed, labelled by segment and offset");
  activate (t, "address-axis", g_variant_new_string ("raw"));
  check (t, ml_window_is_busy (t->d.win), "win.address-axis raw re-runs in a worker");
  return wait_for_job (t);
}

static Next
address_raw_shown (WindowTest *t, MlDocument *doc)
{
  const MlScene *sc = doc->runs[0]->scene;
  gboolean all = sc->plan->n_segments > 0;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t g = 0; g < sc->plan->n_segments; g++)
    {
      const MlSegment *seg = &sc->plan->segments[g];
      all = all && seg->addr;
      lo = MIN (lo, seg->addr);
      hi = MAX (hi, seg->addr + sc->seg_extent[g]);
    }
  check (t, t->d.job_ok && sc->addr_raw == all && (!all || sc->addr_extent == hi - lo),
         "raw: %s (axis %" G_GUINT64_FORMAT " B, the segments span %" G_GUINT64_FORMAT " B)",
         all ? "segments at their recorded addresses" : "no recorded addresses: packed", sc->addr_extent, hi - lo);
  check (t, axis_labels_read (t, all) > 0, "raw: the axis labels are %s", all ? "addresses" : "segments and offsets");
  t->shot = "window-address-raw.png";
  return NEXT;
}

static Next
address_packed (WindowTest *t, MlDocument *doc)
{
  activate (t, "address-axis", g_variant_new_string ("packed"));
  return wait_for_job (t);
}

static Next
address_packed_back (WindowTest *t, MlDocument *doc)
{
  const MlScene *sc = doc->runs[0]->scene;
  uint64_t sum = 0;
  for (size_t g = 0; g < sc->plan->n_segments; g++)
    sum += sc->seg_extent[g];
  check (t, t->d.job_ok && !sc->addr_raw && sc->addr_extent == sum && axis_labels_read (t, FALSE) > 0,
         "packed again: the segments side by side (%" G_GUINT64_FORMAT " B in all)", sum);
  /* hovering the legend's first entry tells its whole label */
  GtkWidget *w = GTK_WIDGET (tv (t, 0));
  const MlStyle *st = ml_timeline_view_get_style (tv (t, 0));
  MlFigureLayout fl;
  ml_figure_layout (sc, st, gtk_widget_get_width (w), gtk_widget_get_height (w), &fl);
  MlLegendEntry e = { 0 };
  double y = fl.legend.y + st->font_size * 96.0 / 72.0 * 0.75, x = fl.legend.x;
  while (x < fl.legend.x + fl.legend.w && !ml_timeline_legend_hit (sc, st, &fl.legend, x, y, &e))
    x += 2;
  g_autofree char *markup = ml_timeline_view_dup_markup_at (tv (t, 0), x + 1, y);
  const char *label = sc->classes[st->color_by][e.cls].label;
  check (t, markup && label && g_str_has_prefix (markup, label) && g_str_equal (markup, e.full),
         "hovering the legend's first entry tells \"%s\"", markup ? markup : "nothing");
  return NEXT;
}

static Next
zoom_actions (WindowTest *t, MlDocument *doc)
{
  double before = span (t, 0);
  activate (t, "zoom-in", NULL);
  double after = span (t, 0);
  check (t, fabs (after - before / 2) < 1e-6 * before + 1e-9, "win.zoom-in halves the span (%g -> %g)", before, after);
  activate (t, "zoom-out", NULL);
  check (t, fabs (span (t, 0) - before) < 1e-6 * before, "win.zoom-out restores it (%g)", span (t, 0));
  activate (t, "zoom-in", NULL);
  double t0, t1, u0, u1;
  ml_timeline_view_get_time_span (tv (t, 0), &t0, &t1);
  activate (t, "pan-right", NULL);
  ml_timeline_view_get_time_span (tv (t, 0), &u0, &u1);
  double w0 = axis (t, t1) - axis (t, t0), w1 = axis (t, u1) - axis (t, u0);
  check (t, u0 > t0 && fabs (w1 - w0) < 1e-6 * w0, "win.pan-right moves the span later, same width");
  return NEXT;
}

static Next
select_range (WindowTest *t, MlDocument *doc)
{
  double a = t->full0 + (t->full1 - t->full0) * 0.25, b = a + MAX ((t->full1 - t->full0) * 0.25, 1.0);
  activate (t, "select-range", g_variant_new ("(dd)", a, b));
  double t0, t1;
  ml_timeline_view_get_time_span (tv (t, 0), &t0, &t1);
  check (t, fabs (t0 - a) < 1e-6 * (b - a) + 1e-9 && fabs (t1 - b) < 1e-6 * (b - a) + 1e-9,
         "win.select-range zooms to [%g, %g) (got [%g, %g))", a, b, t0, t1);
  activate (t, "zoom-fit", NULL);
  ml_timeline_view_get_time_span (tv (t, 0), &t0, &t1);
  check (t, t0 == t->full0 && t1 == t->full1, "win.zoom-fit shows everything again");
  return NEXT;
}

/* The Recent menu shows the file's name as it is: "_" doubled, or GTK
 * would take it for a mnemonic and drop it. */
static void
check_recent_label (WindowTest *t, const char *path)
{
  GMenuModel *recent = ml_application_get_recent_menu (ML_APPLICATION (g_application_get_default ()));
  g_autofree char *base = g_path_get_basename (path);
  g_auto (GStrv) parts = g_strsplit (base, "_", -1);
  g_autofree char *menu_label = g_strjoinv ("__", parts);
  gboolean found = FALSE;
  for (int i = 0; i < g_menu_model_get_n_items (recent) && !found; i++)
    {
      g_autofree char *label = NULL, *target = NULL;
      if (g_menu_model_get_item_attribute (recent, i, "label", "s", &label)
          && g_menu_model_get_item_attribute (recent, i, "target", "s", &target) && g_str_equal (target, path))
        found = g_str_equal (label, menu_label);
    }
  check (t, found, "the Recent menu lists %s with its underscores kept (label \"%s\")", base, menu_label);
}

/* Picks a buffer through the hit test, as a click does. */
static Next
pick_largest (WindowTest *t, MlDocument *doc)
{
  long want = largest_buffer (doc);
  double x = 0, y = 0;
  gboolean vis = ml_timeline_view_buffer_point (tv (t, 0), (guint32) want, &x, &y);
  check (t, vis, "the largest buffer (%ld) is drawn at (%.0f, %.0f)", want, x, y);
  long got = ml_timeline_view_pick (tv (t, 0), x, y);
  check (t, got == want, "the hit test at its middle finds it (got %ld)", got);
  ml_timeline_view_select_buffer (tv (t, 0), got);
  check (t, ml_timeline_view_get_selected (tv (t, 0)) == want, "it is the selected buffer");
  g_autofree char *details = ml_window_dup_details_text (t->d.win);
  g_autofree char *idtxt = g_strdup_printf ("id\t%" G_GUINT64_FORMAT, doc->bufs->buf[want].id);
  check (t, strstr (details, idtxt) != NULL, "the details panel names its id %" G_GUINT64_FORMAT, doc->bufs->buf[want].id);
  long none = ml_timeline_view_pick (tv (t, 0), 1, 1);
  check (t, none == -1, "the hit test outside the plot finds nothing");
  t->picked = want;
  t->shot = "window-selected.png";
  check_recent_label (t, doc->box->path);
  return NEXT;
}

/* Switches strategy through the action (it sets the drop-down). */
static Next
switch_strategy (WindowTest *t, MlDocument *doc)
{
  const char *other = g_strcmp0 (doc->runs[0]->strategy, "first-fit") == 0 ? "best-fit" : "first-fit";
  activate (t, "strategy", g_variant_new_string (other));
  check (t, ml_window_is_busy (t->d.win), "choosing %s starts a worker", other);
  return wait_for_job (t);
}

static Next
strategy_switched (WindowTest *t, MlDocument *doc)
{
  const char *s = doc->runs[0]->strategy;
  check (t, t->d.job_ok && (g_str_equal (s, "first-fit") || g_str_equal (s, "best-fit")), "the view now shows %s", s);
  check (t, ml_timeline_view_get_run (tv (t, 0)) == doc->runs[0], "the timeline draws the new run");
  check (t, ml_timeline_view_get_selected (tv (t, 0)) == t->picked, "the selection survives the re-run");
  activate (t, "strategy2", g_variant_new_string ("linear"));
  /* a zoomed view stays zoomed when the second timeline comes */
  activate (t, "zoom-in", NULL);
  ml_timeline_view_get_time_span (tv (t, 0), &t->it0, &t->it1);
  activate (t, "compare", g_variant_new_boolean (TRUE));
  return wait_for_job (t);
}

static Next
compare_linked (WindowTest *t, MlDocument *doc)
{
  check (t, t->d.job_ok && doc->runs[1] && g_str_equal (doc->runs[1]->strategy, "linear"),
         "compare mode runs a second strategy (linear)");
  check (t, gtk_widget_get_mapped (GTK_WIDGET (tv (t, 1))), "the second timeline is shown");
  double c0, c1;
  ml_timeline_view_get_time_span (tv (t, 0), &c0, &c1);
  check (t, c0 == t->it0 && c1 == t->it1, "Compare keeps the zoom ([%g, %g), was [%g, %g))", c0, c1, t->it0, t->it1);
  activate (t, "zoom-in", NULL);
  double a0, a1, b0, b1;
  ml_timeline_view_get_time_span (tv (t, 0), &a0, &a1);
  ml_timeline_view_get_time_span (tv (t, 1), &b0, &b1);
  check (t, a0 == b0 && a1 == b1, "zoom is linked: both show [%g, %g)", a0, a1);
  check (t, doc->runs[1]->metrics.peak >= doc->runs[0]->metrics.lower_bound, "linear's peak is at least the lower bound");
  return NEXT;
}

static Next
compare_picture (WindowTest *t, MlDocument *doc)
{
  activate (t, "zoom-fit", NULL);
  t->shot = "window-compare.png";
  return NEXT;
}

/* win.export of the view: PNG, SVG, PDF, and nothing for an unknown format. */
static void
check_exports (WindowTest *t)
{
  g_autofree char *png = out_path (t, "view.png");
  g_autofree char *svg = out_path (t, "view.svg");
  g_autofree char *pdf = out_path (t, "view.pdf");
  activate (t, "export", g_variant_new ("(ss)", "png", png));
  int w, h;
  guint colours = png_colours (png, &w, &h);
  check (t, w > 100 && h > 100, "win.export writes a PNG (%d x %d)", w, h);
  check (t, colours > 8, "the PNG is not blank (%u colours)", colours);
  activate (t, "export", g_variant_new ("(ss)", "svg", svg));
  check (t, file_size (svg) > 1000, "and an SVG (%zu bytes)", file_size (svg));
  activate (t, "export", g_variant_new ("(ss)", "pdf", pdf));
  check (t, file_size (pdf) > 1000, "and a PDF (%zu bytes)", file_size (pdf));
  g_autofree char *bad = out_path (t, "view.xyz");
  activate (t, "export", g_variant_new ("(ss)", "xyz", bad));
  check (t, !g_file_test (bad, G_FILE_TEST_EXISTS), "an unknown format writes nothing");
}

/* Search by name / id. */
static void
check_search (WindowTest *t, MlDocument *doc)
{
  GArray *hits = ml_document_search (doc, doc->runs[0], "#999999999999", 10);
  check (t, hits->len == 0, "search for an unknown id finds nothing");
  g_array_unref (hits);
  g_autofree char *q = g_strdup_printf ("#%" G_GUINT64_FORMAT, doc->bufs->buf[t->picked].id);
  hits = ml_document_search (doc, doc->runs[0], q, 10);
  check (t, hits->len == 1 && g_array_index (hits, guint32, 0) == (guint32) t->picked, "search %s finds the picked buffer", q);
  g_array_unref (hits);
}

static Next
export_and_search (WindowTest *t, MlDocument *doc)
{
  check_exports (t);
  check_search (t, doc);
  g_autofree char *html = out_path (t, "report.html");
  activate (t, "export", g_variant_new ("(ss)", "html", html));
  check (t, ml_window_is_busy (t->d.win), "win.export of a report starts a worker");
  return wait_for_job (t);
}

static Next
report_written (WindowTest *t, MlDocument *doc)
{
  g_autofree char *html = out_path (t, "report.html");
  g_autofree char *text = NULL;
  g_file_get_contents (html, &text, NULL, NULL);
  check (t, t->d.job_ok && text && strstr (text, "<html") && strstr (text, "linear") && strstr (text, "<svg"),
         "the HTML report names the strategies and has pictures");
  activate (t, "compare", g_variant_new_boolean (FALSE));
  return wait_for_job (t);
}

/* The Peaks list: one row per peak group, in the document's order, each
 * titled with the group's level and recurrence. */
static void
check_peaks_grouped (WindowTest *t, MlDocument *doc)
{
  MlListPage *lp = ML_LIST_PAGE (ml_window_get_peaks_page (t->d.win));
  guint rows = ml_list_page_get_n_rows (lp);
  char what[160];
  const char *title = ml_list_page_get_title (lp, 0);
  if (doc->groups.n)
    ml_peak_group_describe (&doc->groups.groups[0], what, sizeof what);
  gboolean levels_apart = TRUE;
  for (gsize i = 1; i < doc->groups.n; i++)
    levels_apart &= (double) doc->groups.groups[i].live < (1 - ML_PEAK_SAME) * (double) doc->groups.groups[i - 1].live;
  check (t, doc->groups.n && title && strstr (title, what), "the first row reads '%s' (%s)", what, title ? title : "none");
  check (t, rows == MAX (doc->peaks.n, 1) && doc->peaks.n == doc->groups.n && levels_apart,
         "the Peaks list shows each level once (%u rows, %zu groups of %zu local maxima)", rows, doc->groups.n,
         doc->groups.n_maxima);
}

static Next
peak_shown (WindowTest *t, MlDocument *doc)
{
  check (t, doc->runs[1] == NULL && !gtk_widget_get_visible (gtk_widget_get_parent (GTK_WIDGET (tv (t, 1)))),
         "leaving compare mode hides the second timeline");
  gboolean shown = ml_window_show_peak (t->d.win, 0);
  const MlPeak *p = doc->peaks.n ? &doc->peaks.peaks[0] : NULL;
  double t0, t1;
  ml_timeline_view_get_time_span (tv (t, 0), &t0, &t1);
  check (t, shown && p && (double) p->tick >= t0 && (double) p->tick < t1, "choosing the first peak shows its tick");
  check (t, p && p->n_blame && ml_timeline_view_get_selected (tv (t, 0)) == (long) p->blame[0],
         "and selects the largest buffer live there");
  check_peaks_grouped (t, doc);
  t->shot = "window-peak.png";
  return NEXT;
}

/* A knob: a capacity below the lower bound makes the run OOM. */
static Next
capacity_knob (WindowTest *t, MlDocument *doc)
{
  char cap[32];
  g_snprintf (cap, sizeof cap, "%" G_GUINT64_FORMAT, doc->bufs->lower_bound / 2);
  ml_window_set_knob (t->d.win, "capacity", cap);
  activate (t, "apply-knobs", NULL);
  check (t, ml_window_is_busy (t->d.win), "Apply re-runs in a worker with capacity %s", cap);
  return wait_for_job (t);
}

static Next
oom_then_cancel (WindowTest *t, MlDocument *doc)
{
  const MlPlan *plan = doc->runs[0]->plan;
  check (t, t->d.job_ok && plan && plan->oom.hit && doc->knobs.capacity == doc->bufs->lower_bound / 2,
         "under half the lower bound the run reports an OOM at tick %" G_GUINT64_FORMAT, plan ? plan->oom.tick : 0);
  ml_window_set_knob (t->d.win, "align", "3");
  activate (t, "apply-knobs", NULL);
  check (t, !ml_window_is_busy (t->d.win) && ml_window_get_document (t->d.win) == doc,
         "an alignment that is not a power of two is refused, nothing re-runs");
  ml_window_set_knob (t->d.win, "align", "");
  ml_window_set_knob (t->d.win, "capacity", "");
  /* cancel: the table's run is stopped and the view keeps its document */
  activate (t, "compare-all", NULL);
  check (t, ml_window_is_busy (t->d.win), "Run all starts a worker");
  activate (t, "cancel", NULL);
  return wait_for_job (t);
}

/* The Knobs page's sweep: pool and buddy over three chunk sizes. */
static Next
cancelled_then_sweep (WindowTest *t, MlDocument *doc)
{
  check (t, !ml_window_is_busy (t->d.win) && ml_window_get_document (t->d.win) == doc, "Cancel stops it; the view keeps its run");
  ml_window_set_knob (t->d.win, "sweep", "chunk=256K,1M,16M");
  ml_window_set_knob (t->d.win, "sweep-strategies", "pool,buddy");
  activate (t, "sweep-knob", NULL);
  check (t, ml_window_is_busy (t->d.win), "Sweep runs in a worker");
  return wait_for_job (t);
}

static Next
sweep_rows (WindowTest *t, MlDocument *doc)
{
  const MlKnobSweep *sw = ml_window_get_sweep (t->d.win);
  check (t, t->d.job_ok && sw && sw->n_values == 3 && sw->n_strategies == 2, "the sweep has 3 values x 2 strategies");
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
  check (t, rows == 6 && same == rows, "every row's peak is that strategy's run with that chunk alone (%d of %d)", same, rows);
  check (t, rows == 6 && sw->rows[0].metrics.peak != sw->rows[4].metrics.peak,
         "the chunk changes pool's peak (%" G_GUINT64_FORMAT " at 256K, %" G_GUINT64_FORMAT " at 16M)",
         rows ? sw->rows[0].metrics.peak : 0, rows ? sw->rows[4].metrics.peak : 0);
  return NEXT;
}

/* From here on, real input through the X server (the end without it). */
static Next
input_start (WindowTest *t, MlDocument *doc)
{
  return input_begin (t) ? NEXT : END;
}

static Next
key_plus (WindowTest *t, MlDocument *doc)
{
  double before = axis (t, t->it1) - axis (t, t->it0);
  check (t, fabs (span (t, 0) - before / 2) < 1e-6 * before, "input: the + key zooms in (span %g -> %g)", before, span (t, 0));
  xdo (t, "key 0");
  return NEXT;
}

static Next
key_zero (WindowTest *t, MlDocument *doc)
{
  double t0, t1;
  ml_timeline_view_get_time_span (tv (t, 0), &t0, &t1);
  check (t, t0 == t->full0 && t1 == t->full1, "input: the 0 key fits");
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  t->ix = v->px + v->pw * 0.3;
  t->iy = v->py + v->ph * 0.5;
  t->it0 = t0, t->it1 = t1;
  t->itick = ml_view_x_to_time (v, t->ix);
  xdo (t, "mousemove --window %s %.0f %.0f keydown ctrl click 4 keyup ctrl", t->xid, t->ox + t->ix, t->oy + t->iy);
  return NEXT;
}

static Next
ctrl_scroll (WindowTest *t, MlDocument *doc)
{
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  double after = ml_view_x_to_time (v, t->ix);
  double px = fabs (ml_view_x_to_time (v, t->ix + 1) - ml_view_x_to_time (v, t->ix));   /* ticks per px there */
  double before = axis (t, t->it1) - axis (t, t->it0);
  check (t, span (t, 0) < before * 0.95, "input: ctrl+scroll zooms in (span %g -> %g)", before, span (t, 0));
  check (t, fabs (after - t->itick) <= 1.5 * px + 1e-9, "input: around the pointer (tick %.1f stays under it: %.1f)", t->itick, after);
  ml_timeline_view_get_time_span (tv (t, 0), &t->it0, &t->it1);
  /* to the left: the view has room on the right after the zoom */
  xdo (t, "mousemove --window %s %.0f %.0f mousedown 1 mousemove --window %s %.0f %.0f mousemove --window %s %.0f %.0f mouseup 1",
       t->xid, t->ox + t->ix + 100, t->oy + t->iy, t->xid, t->ox + t->ix + 50, t->oy + t->iy,
       t->xid, t->ox + t->ix, t->oy + t->iy);
  return NEXT;
}

static Next
drag_pans (WindowTest *t, MlDocument *doc)
{
  double t0, t1;
  ml_timeline_view_get_time_span (tv (t, 0), &t0, &t1);
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  /* in the axis' unit: 100 px of the span */
  double w = axis (t, t1) - axis (t, t0), w0 = axis (t, t->it1) - axis (t, t->it0);
  double want = 100 * w / v->pw, moved = axis (t, t0) - axis (t, t->it0);
  check (t, fabs (moved - want) <= 0.05 * want && fabs (w - w0) < 1e-6 * w,
         "input: dragging 100 px to the left shows later ticks (moved %.1f, want %.1f)", moved, want);
  activate (t, "zoom-fit", NULL);
  v = ml_timeline_view_get_view (tv (t, 0));
  t->it0 = ml_view_x_to_time (v, t->ix);
  t->it1 = ml_view_x_to_time (v, t->ix + 200);
  xdo (t, "mousemove --window %s %.0f %.0f keydown shift mousedown 1 mousemove --window %s %.0f %.0f "
          "mousemove --window %s %.0f %.0f mouseup 1 keyup shift",
       t->xid, t->ox + t->ix, t->oy + t->iy, t->xid, t->ox + t->ix + 100, t->oy + t->iy,
       t->xid, t->ox + t->ix + 200, t->oy + t->iy);
  return NEXT;
}

static Next
shift_drag_zooms (WindowTest *t, MlDocument *doc)
{
  double t0, t1;
  ml_timeline_view_get_time_span (tv (t, 0), &t0, &t1);
  double tol = (t->it1 - t->it0) * 0.03;
  check (t, fabs (t0 - t->it0) <= tol && fabs (t1 - t->it1) <= tol,
         "input: shift-drag over 200 px zooms to that range ([%.1f, %.1f), want [%.1f, %.1f))", t0, t1, t->it0, t->it1);
  activate (t, "zoom-fit", NULL);
  ml_timeline_view_select_buffer (tv (t, 0), -1);
  /* a whole pixel where the hit test finds a buffer (the pointer moves by
   * whole pixels; sub-pixel buffers of a large trace are merged there) */
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  long want = -1;
  double x = 0, y = 0;
  for (int gy = 1; gy < 8 && want < 0; gy++)
    for (int gx = 1; gx < 8 && want < 0; gx++)
      {
        x = floor (v->px + v->pw * gx / 8.0), y = floor (v->py + v->ph * gy / 8.0);
        want = ml_timeline_view_pick (tv (t, 0), x, y);
      }
  t->picked = want;
  xdo (t, "mousemove --window %s %.0f %.0f click 1", t->xid, t->ox + x, t->oy + y);
  return NEXT;
}

static Next
click_selects (WindowTest *t, MlDocument *doc)
{
  check (t, t->picked >= 0 && ml_timeline_view_get_selected (tv (t, 0)) == t->picked,
         "input: a click on a buffer selects it (want %ld, got %ld)", t->picked, ml_timeline_view_get_selected (tv (t, 0)));
  ml_timeline_view_select_buffer (tv (t, 0), -1);
  /* the stacked view, through the View menu's action */
  activate (t, "plot", g_variant_new_string ("active"));
  return NEXT;
}

/* The most bytes live at once, from the lifetimes (not the renderer). */
static guint64
most_live_bytes (const MlBuffers *bufs)
{
  guint64 most = 0;
  for (guint64 tick = 0; tick < bufs->end_tick; tick++)
    {
      guint64 live = 0;
      for (gsize i = 0; i < bufs->n; i++)
        if (bufs->buf[i].start <= tick && tick < bufs->buf[i].end)
          live += bufs->buf[i].rsize;
      most = MAX (most, live);
    }
  return most;
}

/* The scene item lowest in the stack of those at least @tall bytes, or -1. */
static long
lowest_item (const MlScene *sc, double tall)
{
  long bottom = -1;
  for (size_t i = 0; i < sc->n_items; i++)
    if ((double) sc->items[i].size >= tall && (bottom < 0 || sc->rank[i] < sc->rank[bottom]))
      bottom = (long) i;
  return bottom;
}

/* Whether buffer @want lives longest of those at least @tall bytes. */
static gboolean
longest_lived (const MlBuffers *bufs, long want, double tall)
{
  const MlBuffer *w = &bufs->buf[want];
  for (gsize i = 0; i < bufs->n; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      if ((double) b->rsize >= tall && b->end - b->start > w->end - w->start)
        return FALSE;
    }
  return TRUE;
}

static Next
active_stack (WindowTest *t, MlDocument *doc)
{
  const MlScene *sc = ml_timeline_view_get_scene (tv (t, 0));
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  /* the top of the stack is the most live bytes */
  guint64 most = most_live_bytes (doc->bufs);
  check (t, v->a_max == (double) most, "active view: the vertical axis is the most live bytes (%.0f, want %" G_GUINT64_FORMAT ")",
         v->a_max, most);
  /* the bottom of the stack is the longest-lived buffer (of those at
   * least 3 px tall: the pointer moves by whole pixels) */
  double tall = 3 * ml_view_bytes_per_px (v);
  long bottom = lowest_item (sc, tall);
  long want = bottom >= 0 ? (long) sc->items[bottom].buffer : -1;
  if (want >= 0 && !longest_lived (doc->bufs, want, tall))
    want = -1;
  double x = 0, y = 0;
  gboolean vis = want >= 0 && ml_timeline_view_buffer_point (tv (t, 0), (guint32) want, &x, &y);
  check (t, vis, "active view: the longest-lived buffer at least 3 px tall (%ld) is the lowest of those in the stack", want);
  check (t, vis && y > v->py + v->ph * 0.5, "and drawn in the lower half (y %.0f of %.0f..%.0f)", y, v->py, v->py + v->ph);
  /* the picture there has the buffer's colour */
  guint32 px = view_pixel (t, 0, x, y);
  MlStyle *style = ml_timeline_view_get_style (tv (t, 0));
  const MlSceneItem *it = bottom >= 0 ? &sc->items[bottom] : NULL;
  MlRgb c = ml_style_class_color (style, it ? it->cls[style->color_by] : 0);
  guint32 rgb = (guint32) lround (c.r * 255) << 16 | (guint32) lround (c.g * 255) << 8 | (guint32) lround (c.b * 255);
  check (t, vis && px == rgb, "active view: the pixel there is its call site's colour (#%06x, want #%06x)", px, rgb);
  t->picked = want;
  t->ix = x, t->iy = y;
  xdo (t, "mousemove --window %s %.0f %.0f", t->xid, t->ox + x, t->oy + y);
  t->hold_until = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;
  return NEXT;
}

static Next
active_hover (WindowTest *t, MlDocument *doc)
{
  /* a frame may come (a worker's drawing) before the motion does */
  double px, py;
  ml_timeline_view_get_pointer (tv (t, 0), &px, &py);
  if ((fabs (px - t->ix) > 1 || fabs (py - t->iy) > 1) && g_get_monotonic_time () < t->hold_until)
    return STAY;
  /* the pointer reached the point through the X server; what the tooltip
   * shows there (a tooltip popup may take the hover away from the widget
   * meanwhile, so ask at the pointer) */
  long hov = ml_timeline_view_pick (tv (t, 0), px, py);
  check (t, fabs (px - t->ix) <= 1 && fabs (py - t->iy) <= 1 && hov == t->picked,
         "input: hovering it in the active view finds it (pointer %.0f,%.0f: %ld, want %ld)", px, py, hov, t->picked);
  g_autofree char *markup = ml_timeline_view_dup_buffer_markup (tv (t, 0), hov);
  /* the innermost Python frame of its stack, read from the trace */
  const char *func = t->picked >= 0 ? python_frame (ml_document_trace (doc), doc->bufs->buf[t->picked].stack) : NULL;
  if (func)
    check (t, markup && strstr (markup, func), "the hover names its stack (frame %s)", func);
  else
    check (t, markup && strstr (markup, "size"), "the hover describes it (no stack in this trace)");
  xdo (t, "click 1");
  return NEXT;
}

static Next
active_click (WindowTest *t, MlDocument *doc)
{
  check (t, t->picked >= 0 && ml_timeline_view_get_selected (tv (t, 0)) == t->picked,
         "input: a click in the active view selects it (got %ld)", ml_timeline_view_get_selected (tv (t, 0)));
  t->shot = "window-active.png";
  return NEXT;
}

/* Colour by kind: only where the trace records kinds. */
static Next
color_by_kind (WindowTest *t, MlDocument *doc)
{
  gboolean kinds = FALSE;
  for (gsize i = 0; i < doc->bufs->n; i++)
    kinds |= (doc->bufs->buf[i].flags & (ML_BUF_WEIGHT | ML_BUF_ACTIVATION | ML_BUF_INPUT | ML_BUF_OUTPUT)) != 0;
  activate (t, "color-by", g_variant_new_string ("kind"));
  MlColorBy by = ml_timeline_view_get_style (tv (t, 0))->color_by;
  const char *msg = ml_window_get_message (t->d.win);
  if (kinds)
    check (t, by == ML_COLOR_BY_KIND, "colour by kind on a trace with kinds");
  else
    check (t, by == ML_COLOR_BY_SITE && msg && strstr (msg, "no buffer kinds"),
           "colour by kind on a trace without kinds says so and keeps the call sites");
  activate (t, "color-by", g_variant_new_string ("site"));
  ml_window_show_message (t->d.win, NULL);
  /* by compile_context: only where the format records it (not a CSV) */
  activate (t, "color-by", g_variant_new_string ("compile_context"));
  by = ml_timeline_view_get_style (tv (t, 0))->color_by;
  msg = ml_window_get_message (t->d.win);
  if (ml_document_trace (doc)->records_meta)
    check (t, by == ML_COLOR_BY_COMPILE_CONTEXT, "colour by compile_context on a format that records it");
  else
    check (t, by == ML_COLOR_BY_SITE && msg && strstr (msg, "records no compile_context"),
           "colour by compile_context on a format without it says so and keeps the call sites (%s)", msg ? msg : "");
  activate (t, "color-by", g_variant_new_string ("site"));
  ml_window_show_message (t->d.win, NULL);
  activate (t, "plot", g_variant_new_string ("segments"));
  t->shot = "window-segments.png";
  return NEXT;
}

/* The allocator state: open it at the first peak, then choose an event in
 * its list with a real click. */
static Next
state_at_peak (WindowTest *t, MlDocument *doc)
{
  const MlPeak *p = doc->peaks.n ? &doc->peaks.peaks[0] : NULL;
  check (t, p && ml_window_show_state (t->d.win, p->tick), "the State page opens at the peak tick");
  t->hold_until = g_get_monotonic_time () + 3 * G_USEC_PER_SEC / 2;   /* for its layout */
  return NEXT;
}

static Next
state_event_click (WindowTest *t, MlDocument *doc)
{
  if (g_get_monotonic_time () < t->hold_until)
    return STAY;
  MlStatePage *sp = ml_window_get_state_page (t->d.win);
  const MlTrace *tr = ml_document_trace (doc);
  /* the second event before the chosen one: listed, and its row on screen */
  gsize at = 0;
  while (at < tr->n_events && tr->events[at].tick <= ml_state_page_get_tick (sp))
    at++;
  gsize e = at >= 3 ? at - 3 : 0;
  GtkWidget *row = ml_state_page_get_event_row (sp, e);
  graphene_point_t pt;
  gboolean placed = row && gtk_widget_compute_point (row, GTK_WIDGET (t->d.win),
                                                     &GRAPHENE_POINT_INIT (20, gtk_widget_get_height (row) / 2.0), &pt);
  check (t, placed, "the event list shows event %zu (tick %" G_GUINT64_FORMAT ")", e, e < tr->n_events ? tr->events[e].tick : 0);
  t->itick = e < tr->n_events ? (double) tr->events[e].tick : -1;
  if (placed)
    click_widget_point (t, row, 20, gtk_widget_get_height (row) / 2.0);
  return NEXT;
}

/* Every buffer run 0 holds at @tick in the segments the state text lists
 * (a long state lists the first): how many there are, how many of them
 * the text lists with their size and offset; @bytes: what all live
 * buffers hold. Computed from the lifetimes and the plan. */
static void
count_state_lines (MlDocument *doc, guint64 tick, const char *text, gsize *live, gsize *listed, guint64 *bytes)
{
  const MlRun *run = doc->runs[0];
  *live = *listed = 0, *bytes = 0;
  for (gsize i = 0; run->plan && i < doc->bufs->n; i++)
    {
      const MlBuffer *b = &doc->bufs->buf[i];
      guint32 g = run->plan->segment[i];
      if (!b->rsize || b->start > tick || tick >= b->end || g >= run->plan->n_segments
          || run->plan->segments[g].start > tick || tick >= run->plan->segments[g].end)
        continue;
      *bytes += b->rsize;
      char head[64];
      g_snprintf (head, sizeof head, "\nsegment %u, ", g);
      if (!text || !strstr (text, head))
        continue;
      (*live)++;
      char tmp[32], sz[32], line[256];
      g_snprintf (line, sizeof line, "%10s at +0x%" G_GINT64_MODIFIER "x  %s", ml_format_size (b->rsize, sz, sizeof sz),
                  run->plan->offset[i], ml_document_buffer_label (doc, (guint32) i, tmp, sizeof tmp));
      *listed += text && strstr (text, line) != NULL;
    }
}

static Next
state_lists_live (WindowTest *t, MlDocument *doc)
{
  MlStatePage *sp = ml_window_get_state_page (t->d.win);
  guint64 tick = ml_state_page_get_tick (sp);
  check (t, (double) tick == t->itick, "input: a click on the event shows the state after it (tick %" G_GUINT64_FORMAT
         ", want %.0f)", tick, t->itick);
  g_autofree char *text = ml_state_page_dup_text (sp);
  gsize live, listed;
  guint64 bytes;
  count_state_lines (doc, tick, text, &live, &listed, &bytes);
  check (t, live > 0 && listed == live, "the state lists every live buffer of the segments it lists, with its size and offset (%zu of %zu)", listed, live);
  char want[64], sz[32];
  g_snprintf (want, sizeof want, "allocated %s,", ml_format_size (bytes, sz, sizeof sz));
  check (t, text && strstr (text, want), "and the allocated total %s", want);
  g_autofree char *path = out_path (t, "state.txt");
  g_file_set_contents (path, text ? text : "", -1, NULL);
  t->shot = "window-state.png";
  return NEXT;
}

/* The x axis: real time when every event has one. */
static Next
time_axis_auto (WindowTest *t, MlDocument *doc)
{
  activate (t, "plot", g_variant_new_string ("address"));
  const MlTrace *tr = ml_document_trace (doc);
  gboolean all_timed = tr->n_events > 0;
  for (gsize i = 0; i < tr->n_events; i++)
    all_timed &= tr->events[i].time_ns >= 0;
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  check (t, (v->warp != NULL) == (all_timed && ml_scene_real_time (doc->runs[0]->scene, ML_TIME_AXIS_TIME)),
         "the automatic axis is %s (every event has a time: %s)", v->warp ? "real time" : "ticks", all_timed ? "yes" : "no");
  t->it0 = v->warp != NULL;
  xdo (t, "windowfocus --sync %s key t", t->xid);
  return NEXT;
}

/* After a press of T (the @second): the axis switched, or, on a trace
 * without times, stayed ticks and the window says why; its labels evenly
 * spaced, in the axis' unit. */
static void
check_time_axis_toggled (WindowTest *t, gboolean second)
{
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  gboolean timed = v->warp != NULL;
  if (ml_scene_real_time (ml_timeline_view_get_scene (tv (t, 0)), ML_TIME_AXIS_TIME))
    check (t, timed != (t->it0 != 0), "input: the T key switches the axis to %s", timed ? "real time" : "ticks");
  else
    {
      const char *msg = ml_window_get_message (t->d.win);
      check (t, !timed && (second || (msg && strstr (msg, "no times"))),
             "input: the T key on a trace without times keeps ticks and says why (%s)", msg ? msg : "no message");
    }
  MlTimeLabel lab[64];
  size_t n = ml_timeline_time_labels (v, ml_timeline_view_get_scene (tv (t, 0)), ml_timeline_view_get_style (tv (t, 0)), lab, 64);
  gboolean even = n >= 3, unit = n >= 1;
  for (size_t i = 2; i < n; i++)
    even &= fabs ((lab[i].x - lab[i - 1].x) - (lab[1].x - lab[0].x)) < 1.0;
  for (size_t i = 0; i < n; i++)
    unit &= timed ? (g_str_has_suffix (lab[i].text, "s") != 0) : g_ascii_isdigit (lab[i].text[strlen (lab[i].text) - 1]);
  check (t, even && unit, "%zu labels, evenly spaced (%.1f px), %s (%s, %s, ...)", n, n > 1 ? lab[1].x - lab[0].x : 0,
         timed ? "in ns/µs/ms/s" : "in ticks", n ? lab[0].text : "", n > 1 ? lab[1].text : "");
  t->it0 = timed;
  t->shot = timed ? "window-time.png" : "window-ticks.png";
}

static Next
time_axis_toggled (WindowTest *t, MlDocument *doc)
{
  check_time_axis_toggled (t, FALSE);
  xdo (t, "windowfocus --sync %s key t", t->xid);
  return NEXT;
}

static Next
time_axis_back (WindowTest *t, MlDocument *doc)
{
  check_time_axis_toggled (t, TRUE);
  return NEXT;
}

/* The last step of every script: after the last screenshot. */
static Next
ends (WindowTest *t, MlDocument *doc)
{
  return END;
}

static const Step main_script[] = {
  STEP (opens), STEP (first_frame),
  STEP (picture_active), STEP (picture_segments), STEP (back_to_address),
  STEP (address_raw), STEP (address_raw_shown), STEP (address_packed), STEP (address_packed_back), STEP (zoom_actions), STEP (select_range), STEP (pick_largest),
  STEP (switch_strategy), STEP (strategy_switched), STEP (compare_linked), STEP (compare_picture),
  STEP (export_and_search), STEP (report_written), STEP (peak_shown),
  STEP (capacity_knob), STEP (oom_then_cancel), STEP (cancelled_then_sweep), STEP (sweep_rows),
  STEP (input_start), STEP (key_plus), STEP (key_zero), STEP (ctrl_scroll), STEP (drag_pans),
  STEP (shift_drag_zooms), STEP (click_selects),
  STEP (active_stack), STEP (active_hover), STEP (active_click), STEP (color_by_kind),
  STEP (state_at_peak), STEP (state_event_click), STEP (state_lists_live),
  STEP (time_axis_auto), STEP (time_axis_toggled), STEP (time_axis_back),
  STEP (ends), { NULL, NULL }
};

/* A file that does not open: after the error's screenshot. */
static const Step error_script[] = { STEP (ends), { NULL, NULL } };

/* ---- several devices ----------------------------------------------------------- */

/* A file whose trace recorded an OOM: the recorded run fails there, and
 * the refused request is drawn hatched red at the OOM tick, in the
 * address layout and in the stacked view. */
static void
check_oom_drawn (WindowTest *t, const MlDocument *doc, const MlEvent *ev)
{
  const MlRun *run = doc->runs[0];
  check (t, run->plan->oom.hit && run->plan->oom.tick == ev->tick && run->plan->oom.request == ev->size,
         "the recorded run fails at the trace's OOM: tick %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " B requested",
         run->plan->oom.tick, run->plan->oom.request);
  const char *plots[] = { "address", "active" };
  for (int k = 0; k < 2; k++)
    {
      activate (t, "plot", g_variant_new_string (plots[k]));
      const MlView *v = ml_timeline_view_get_view (tv (t, 0));
      MlRect r = { 0 };
      gboolean boxed = ml_timeline_oom_request_box (v, run->scene, ml_timeline_view_get_style (tv (t, 0)), &r);
      double cx = r.x + r.w / 2, cy = r.y + r.h / 2;
      gboolean inside = boxed && r.x >= v->px && r.y >= v->py - 0.5 && r.x + r.w <= v->px + v->pw && r.y + r.h <= v->py + v->ph + 0.5;
      guint32 px = view_pixel (t, 0, cx, cy);
      int red = (int) (px >> 16), green = (int) ((px >> 8) & 255), blue = (int) (px & 255);
      check (t, inside && red > green + 30 && red > blue + 30,
             "%s view: the refused request (%" G_GUINT64_FORMAT " B) is on screen, hatched red (#%06x at %.0f, %.0f)",
             plots[k], run->scene->oom_bytes, px, cx, cy);
    }
}

/* Hovering the refused request's box tells the request, and the OOM
 * event's stack (its first Python frame, found here from the trace). */
static void
check_oom_hover (WindowTest *t, const MlDocument *doc, const MlEvent *ev)
{
  const char *func = python_frame (ml_document_trace (doc), ev->stack);
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  MlRect r = { 0 };
  ml_timeline_oom_request_box (v, doc->runs[0]->scene, ml_timeline_view_get_style (tv (t, 0)), &r);
  g_autofree char *markup = ml_timeline_view_dup_markup_at (tv (t, 0), r.x + r.w / 2, r.y + r.h / 2);
  char sz[32];
  g_autofree char *want = g_strdup_printf ("Refused: %s at tick %" G_GUINT64_FORMAT, ml_format_size (ev->size, sz, sizeof sz), ev->tick);
  check (t, markup && strstr (markup, want) && func && strstr (markup, func),
         "hovering it tells \"%s\" and the request's stack (%s)", want, func ? func : "no Python frame");
}

/* The checks of the refused request, when the trace recorded an OOM and
 * the recorded run is shown. */
static void
check_oom (WindowTest *t, const MlDocument *doc)
{
  const MlTrace *tr = ml_document_trace (doc);
  const MlEvent *ev = NULL;
  for (size_t i = 0; i < tr->n_events && !ev; i++)
    if (tr->events[i].kind == ML_EV_OOM)
      ev = &tr->events[i];
  const MlRun *run = doc->runs[0];
  if (!ev || !run || !run->plan || !(ml_strategy_find (run->strategy)->flags & ML_STRATEGY_RECORDED))
    return;
  check_oom_drawn (t, doc, ev);
  check_oom_hover (t, doc, ev);
  activate (t, "plot", g_variant_new_string ("address"));
}

/* The window says which device it shows. */
static Next
device_named (WindowTest *t, MlDocument *doc)
{
  const MlTrace *tr = ml_document_trace (doc);
  GtkWidget *dd = ml_window_get_device_selector (t->d.win);
  g_autofree char *text = ml_window_dup_device_text (t->d.win);
  g_autofree char *want = g_strdup_printf ("device %u of %zu", tr->device, tr->n_devices);
  check (t, text && g_str_has_prefix (text, want), "the window names the device it shows (%s)", text ? text : "nothing");
  check (t, gtk_widget_get_mapped (dd), "the device selector is on screen");
  GListModel *m = gtk_drop_down_get_model (GTK_DROP_DOWN (dd));
  guint sel = gtk_drop_down_get_selected (GTK_DROP_DOWN (dd));
  check (t, g_list_model_get_n_items (m) == tr->n_devices && sel < tr->n_devices && tr->devices[sel].device == tr->device,
         "it lists the %zu devices and has device %u chosen", tr->n_devices, tr->device);
  /* for the shell to compare with the file: which device, the rows */
  GString *rows = g_string_new (NULL);
  g_string_append_printf (rows, "%s\n", text ? text : "");
  for (guint i = 0; i < g_list_model_get_n_items (m); i++)
    g_string_append_printf (rows, "%s\n", gtk_string_list_get_string (GTK_STRING_LIST (m), i));
  g_autofree char *path = out_path (t, "devices.txt");
  g_file_set_contents (path, rows->str, -1, NULL);
  g_string_free (rows, TRUE);
  t->itick = tr->device;   /* the device before */
  t->shot = "window-device.png";
  check_oom (t, doc);
  return NEXT;
}

static Next device_shown (WindowTest *t, MlDocument *doc);

/* Chooses another device with a real click and keys (through the action
 * without input). */
static Next
device_choose (WindowTest *t, MlDocument *doc)
{
  const MlTrace *tr = ml_document_trace (doc);
  GtkWidget *dd = ml_window_get_device_selector (t->d.win);
  guint sel = gtk_drop_down_get_selected (GTK_DROP_DOWN (dd));
  guint to = sel > 0 ? sel - 1 : sel + 1;   /* the row above, else below */
  t->picked = tr->devices[to].device;
  if (!input_begin (t))
    {
      activate (t, "device", g_variant_new_int32 ((gint32) t->picked));
      t->hold_until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
      return skip_to (t, device_shown);
    }
  click_widget_point (t, dd, gtk_widget_get_width (dd) / 2.0, gtk_widget_get_height (dd) / 2.0);
  t->hold_until = g_get_monotonic_time () + G_USEC_PER_SEC;   /* the popup opens */
  return NEXT;
}

/* In the open list: the first row, down to the target's, Enter. */
static Next
device_keys (WindowTest *t, MlDocument *doc)
{
  if (g_get_monotonic_time () < t->hold_until)
    return STAY;
  const MlTrace *tr = ml_document_trace (doc);
  GString *keys = g_string_new ("key --clearmodifiers Home");
  for (size_t i = 0; i < tr->n_devices && tr->devices[i].device != (guint32) t->picked; i++)
    g_string_append (keys, " Down");
  g_string_append (keys, " Return");
  xdo (t, "%s", keys->str);
  g_string_free (keys, TRUE);
  t->hold_until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;   /* for the other device to load */
  return NEXT;
}

static Next
device_shown (WindowTest *t, MlDocument *doc)
{
  const MlTrace *tr = ml_document_trace (doc);
  if (tr->device != (guint32) t->picked && g_get_monotonic_time () < t->hold_until)
    return STAY;
  check (t, t->d.job_ok && tr->device == (guint32) t->picked, "input: choosing device %ld in the selector shows it (device %u)",
         t->picked, tr->device);
  g_autofree char *text = ml_window_dup_device_text (t->d.win);
  g_autofree char *want = g_strdup_printf ("device %ld of %zu, as chosen", t->picked, tr->n_devices);
  check (t, text && g_str_equal (text, want), "and the window says so (%s)", text ? text : "nothing");
  GtkWidget *dd = ml_window_get_device_selector (t->d.win);
  guint sel = gtk_drop_down_get_selected (GTK_DROP_DOWN (dd));
  check (t, sel < tr->n_devices && tr->devices[sel].device == tr->device, "the selector shows it chosen");
  g_autofree char *path = out_path (t, "device2.txt");
  g_autofree char *line = g_strdup_printf ("%u %zu %zu\n", tr->device, doc->bufs->n, tr->n_events);
  g_file_set_contents (path, line, -1, NULL);
  t->shot = "window-device2.png";
  return NEXT;
}

/* A snapshot's Settings page: memlens tune's answer and the reserved
 * bytes under the recorded settings and the answer, on one axis. */
static Next
settings_page (WindowTest *t, MlDocument *doc)
{
  MlTunePage *page = ml_window_show_tune_page (t->d.win);
  g_autofree char *text = ml_tune_page_dup_text (page);
  check (t, doc->tune != NULL, "a snapshot's document replays its allocator settings (memlens tune)");
  check (t, text && strstr (text, "Allocator settings") && strstr (text, "recorded:"),
         "the Settings page says them: %.60s", text ? text : "");
  guint want = doc->tune ? (doc->tune->best >= 0 ? 2 : 1) : 0;
  check (t, ml_tune_page_n_curves (page) == want, "and draws %u reserved curve%s", want, want == 1 ? "" : "s");
  g_autofree char *path = out_path (t, "settings.txt");
  g_file_set_contents (path, text ? text : "", -1, NULL);
  t->shot = "window-settings.png";
  return NEXT;
}

/* After opens: */
static const Step device_script[] = {
  STEP (device_named), STEP (settings_page), STEP (device_choose), STEP (device_keys), STEP (device_shown),
  STEP (ends), { NULL, NULL }
};

/* ---- two files, one below the other, on one time and byte scale ------------------ */

static Next two_files_export (WindowTest *t, MlDocument *doc);

static Next
two_files_scales (WindowTest *t, MlDocument *doc)
{
  MlDocument *d2 = ml_window_get_document2 (t->d.win);
  check (t, ml_timeline_view_get_document (tv (t, 1)) == d2 && gtk_widget_get_mapped (GTK_WIDGET (tv (t, 1))),
         "the second file is drawn in the lower timeline");
  check (t, d2->runs[0] && g_str_equal (d2->runs[0]->strategy, doc->runs[0]->strategy),
         "with the same strategy (%s)", doc->runs[0]->strategy);
  const MlView *a = ml_timeline_view_get_view (tv (t, 0)), *b = ml_timeline_view_get_view (tv (t, 1));
  double ea = (double) MAX (doc->runs[0]->scene->addr_extent, 1), eb = (double) MAX (d2->runs[0]->scene->addr_extent, 1);
  check (t, a->a_max == b->a_max && a->a_max == MAX (ea, eb), "one byte scale: both axes reach %.0f B (the larger of %.0f and %.0f)",
         a->a_max, ea, eb);
  double ua0, ua1, ub0, ub1;
  ml_timeline_view_get_axis_span (tv (t, 0), &ua0, &ua1);
  ml_timeline_view_get_axis_span (tv (t, 1), &ub0, &ub1);
  double end_a = ml_view_axis_value (a, (double) doc->runs[0]->scene->end_tick);
  double end_b = ml_view_axis_value (b, (double) d2->runs[0]->scene->end_tick);
  check (t, fabs (ua0 - ub0) < 1e-6 * (ua1 - ua0) + 1e-9 && fabs (ua1 - ub1) < 1e-6 * (ua1 - ua0) + 1e-9
             && fabs (ua1 - MAX (end_a, end_b)) < 1e-6 * ua1 + 1e-9,
         "one time scale: both show [%g, %g) %s, the longer run's end", ua0, ua1, a->warp ? "ns" : "ticks");
  if (!input_begin (t))
    return skip_to (t, two_files_export);
  return NEXT;   /* input_begin pressed + */
}

static Next
two_files_key_plus (WindowTest *t, MlDocument *doc)
{
  double ua0, ua1, ub0, ub1;
  ml_timeline_view_get_axis_span (tv (t, 0), &ua0, &ua1);
  ml_timeline_view_get_axis_span (tv (t, 1), &ub0, &ub1);
  double before = axis (t, t->it1) - axis (t, t->it0);
  check (t, fabs ((ua1 - ua0) - before / 2) < 1e-6 * before && fabs (ua0 - ub0) < 1e-6 * before && fabs (ua1 - ub1) < 1e-6 * before,
         "input: the + key zooms both files alike ([%g, %g) and [%g, %g))", ua0, ua1, ub0, ub1);
  xdo (t, "key 0");
  return NEXT;
}

/* A click on the second file's largest buffer. */
static Next
two_files_click (WindowTest *t, MlDocument *doc)
{
  long want = largest_buffer (ml_window_get_document2 (t->d.win));
  double x = 0, y = 0;
  t->picked = ml_timeline_view_buffer_point (tv (t, 1), (guint32) want, &x, &y) ? want : -1;
  if (t->picked >= 0)
    click_widget_point (t, GTK_WIDGET (tv (t, 1)), x, y);
  return NEXT;
}

static Next
two_files_selected (WindowTest *t, MlDocument *doc)
{
  check (t, t->picked >= 0 && ml_timeline_view_get_selected (tv (t, 1)) == t->picked,
         "input: a click selects the second file's buffer %ld", t->picked);
  check (t, ml_timeline_view_get_selected (tv (t, 0)) == -1,
         "and not the first file's buffer of that index (their buffers differ)");
  t->shot = "window-two-files.png";
  return NEXT;
}

static Next
two_files_export (WindowTest *t, MlDocument *doc)
{
  g_autofree char *png = out_path (t, "two-files.png");
  activate (t, "export", g_variant_new ("(ss)", "png", png));
  int w, h;
  guint colours = png_colours (png, &w, &h);
  check (t, h > 400 && colours > 8, "the export holds both timelines (%d x %d, %u colours)", w, h, colours);
  activate (t, "stop-comparing", NULL);
  check (t, !ml_window_get_document2 (t->d.win) && !gtk_widget_get_visible (gtk_widget_get_parent (GTK_WIDGET (tv (t, 1)))),
         "Stop comparing drops the second file");
  return END;
}

/* After opens: */
static const Step two_files_script[] = {
  STEP (two_files_scales), STEP (two_files_key_plus), STEP (two_files_click),
  STEP (two_files_selected), STEP (two_files_export), { NULL, NULL }
};

/* ---- a snapshot: its pools and streams as bands, search, the host ----------------- */

/* Writes @out (freed) as @name in the output folder. */
static void
save_text (WindowTest *t, const char *name, GString *out)
{
  g_autofree char *path = out_path (t, name);
  g_file_set_contents (path, out->str, -1, NULL);
  g_string_free (out, TRUE);
}

/* What the window shows of the file, for the shell to compare with
 * Python's reading of the pickle (snapshot.txt): the device line, the
 * buffers, and each band of (pool, stream) with its segments' addresses. */
static Next
snapshot_shown (WindowTest *t, MlDocument *doc)
{
  const MlTrace *tr = ml_document_trace (doc);
  const MlScene *sc = doc->runs[0]->scene;
  g_autofree char *dev = ml_window_dup_device_text (t->d.win);
  if (tr->device == ML_TRACE_HOST)
    check (t, dev && strstr (dev, "pinned host memory"), "the window says it shows the pinned host memory (%s)",
           dev ? dev : "nothing");
  GString *out = g_string_new (NULL);
  g_string_append_printf (out, "device %s\nbuffers %zu\n", dev ? dev : "-", doc->bufs->n);
  for (size_t b = 0; b < sc->n_bands; b++)
    {
      g_string_append_printf (out, "band %s:", sc->bands[b].label);
      for (size_t k = sc->bands[b].first; k < sc->bands[b].first + sc->bands[b].n; k++)
        g_string_append_printf (out, " 0x%" G_GINT64_MODIFIER "x", sc->plan->segments[sc->seg_order[k]].addr);
      g_string_append_c (out, '\n');
    }
  save_text (t, "snapshot.txt", out);
  activate (t, "plot", g_variant_new_string ("segments"));
  t->shot = "window-bands.png";
  return NEXT;
}

/* Types @text into the header's search entry and presses Enter; appends
 * "find TEXT: 0xADDR:START:END ..." (the buffers found) to @out and checks
 * that the timeline outlines them and selects the first. */
static void
search_for (WindowTest *t, MlDocument *doc, const char *text, const char *shown, GString *out)
{
  GtkWidget *e = ml_window_get_search_entry (t->d.win);
  gtk_editable_set_text (GTK_EDITABLE (e), text);
  g_signal_emit_by_name (e, "search-changed");   /* at once, not after the entry's delay */
  g_signal_emit_by_name (e, "activate");
  const GArray *hits = ml_window_get_search_hits (t->d.win);
  guint n = hits ? hits->len : 0;
  g_string_append_printf (out, "find %s:", shown);
  for (guint i = 0; i < n; i++)
    {
      const MlBuffer *b = &doc->bufs->buf[g_array_index (hits, guint32, i)];
      g_string_append_printf (out, " 0x%" G_GINT64_MODIFIER "x:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, b->addr,
                              b->start, b->end);
    }
  g_string_append_c (out, '\n');
  long first, sel = ml_timeline_view_get_selected (tv (t, 0));
  gsize lit = ml_timeline_view_get_highlights (tv (t, 0), &first);
  check (t, hits && lit == n && (!n || (first == (long) g_array_index (hits, guint32, 0) && sel == first)),
         "search \"%s\": %u buffer%s found, outlined, the first selected", text, n, n == 1 ? "" : "s");
}

/* Search by frame text, then by an address inside the largest buffer:
 * at any tick, at its first tick, and at the State page's tick ("@"). */
/* In the segments view (snapshot_shown chose it): hovering a band where
 * no buffer is tells the band's label and segments. */
static void
check_band_hover (WindowTest *t)
{
  const MlScene *sc = ml_timeline_view_get_scene (tv (t, 0));
  const MlView *v = ml_timeline_view_get_view (tv (t, 0));
  for (size_t b = 0; sc && b < sc->n_bands; b++)
    {
      double y = (ml_view_addr_to_y (v, (double) sc->bands[b].lo) + ml_view_addr_to_y (v, (double) sc->bands[b].hi)) / 2;
      double x = v->px + 1;
      while (x < v->px + v->pw && ml_timeline_view_pick (tv (t, 0), x, y) >= 0)
        x += 4;
      g_autofree char *markup = ml_timeline_view_dup_markup_at (tv (t, 0), x, y);
      g_autofree char *want = g_markup_printf_escaped ("<b>%s</b>\n%zu segment%s", sc->bands[b].label, sc->bands[b].n,
                                                      sc->bands[b].n == 1 ? "" : "s");
      g_autofree char *said = g_strdelimit (g_strdup (markup ? markup : "nothing"), "\n", '|');
      check (t, markup && g_str_equal (markup, want), "hovering band %zu where no buffer is tells \"%s\"", b, said);
    }
}

static Next
snapshot_search (WindowTest *t, MlDocument *doc)
{
  check_band_hover (t);
  GString *out = g_string_new (NULL);
  static const char *const frames[] = { "model.py:2", "TRAIN.PY:42", "no/such/file.py" };
  for (size_t k = 0; k < G_N_ELEMENTS (frames); k++)
    search_for (t, doc, frames[k], frames[k], out);
  long big = -1;
  for (size_t i = 0; i < doc->bufs->n; i++)
    if ((doc->bufs->buf[i].flags & ML_BUF_HAS_ADDR) && (big < 0 || doc->bufs->buf[i].rsize > doc->bufs->buf[big].rsize))
      big = (long) i;
  if (big >= 0)
    {
      const MlBuffer *b = &doc->bufs->buf[big];
      guint64 a = b->addr + b->rsize / 2;
      g_autofree char *any = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x", a);
      g_autofree char *now = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x@", a);
      g_autofree char *at = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x@%" G_GUINT64_FORMAT, a, b->start);
      search_for (t, doc, any, any, out);
      ml_window_show_state (t->d.win, b->end);   /* the State page's tick: "@" alone */
      g_autofree char *now_shown = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x@%" G_GUINT64_FORMAT, a,
                                                    ml_state_page_get_tick (ml_window_get_state_page (t->d.win)));
      search_for (t, doc, now, now_shown, out);
      search_for (t, doc, at, at, out);
    }
  check (t, big >= 0, "the file has a buffer with an address to search for");
  save_text (t, "search.txt", out);
  activate (t, "plot", g_variant_new_string ("address"));
  t->shot = "window-search.png";
  return NEXT;
}

/* Each buffer's Details (selected in the timeline): its pool and the
 * texts of the annotate entries tied to it (details.txt). */
static Next
snapshot_details (WindowTest *t, MlDocument *doc)
{
  GString *out = g_string_new (NULL);
  for (size_t i = 0; i < doc->bufs->n && i < 200; i++)
    {
      const MlBuffer *b = &doc->bufs->buf[i];
      ml_timeline_view_select_buffer (tv (t, 0), (long) i);
      g_autofree char *text = ml_window_dup_details_text (t->d.win);
      g_string_append_printf (out, "0x%" G_GINT64_MODIFIER "x:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, b->addr,
                              b->start, b->end);
      /* "pool\t...", "annotated\tA", "\tB": a row's value after its tab */
      gboolean notes = FALSE;
      g_auto (GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
      for (char **l = lines; *l; l++)
        {
          if (g_str_has_prefix (*l, "pool\t"))
            g_string_append_printf (out, " | pool %s", *l + 5);
          notes = g_str_has_prefix (*l, "annotated\t") || (notes && (*l)[0] == '\t');
          if (notes)
            g_string_append_printf (out, " | annotated %s", strchr (*l, '\t') + 1);
        }
      g_string_append_c (out, '\n');
    }
  check (t, doc->bufs->n > 0, "Details of each of the %zu buffers written", doc->bufs->n);
  save_text (t, "details.txt", out);
  return NEXT;
}

/* Colour by compile_context, user_metadata and frames (the search box's
 * text as the expression): each buffer's class label and the legend's
 * (colours.txt, for the shell to compare with Python's groups), and the
 * pixel in each buffer's middle is its class's colour. */
#define FRAMES_REGEX "model\\.py:[0-9]+:([a-z_]+)"
static Next
snapshot_colours (WindowTest *t, MlDocument *doc)
{
  GString *out = g_string_new (NULL);
  static const char *const bys[] = { "compile_context", "user_metadata", "frames" };
  activate (t, "plot", g_variant_new_string ("address"));
  ml_timeline_view_select_buffer (tv (t, 0), -1);   /* no selection drawn over the colours */
  gtk_editable_set_text (GTK_EDITABLE (ml_window_get_search_entry (t->d.win)), FRAMES_REGEX);
  for (size_t k = 0; k < G_N_ELEMENTS (bys); k++)
    {
      activate (t, "color-by", g_variant_new_string (bys[k]));
      const MlScene *sc = ml_timeline_view_get_scene (tv (t, 0));
      MlStyle *style = ml_timeline_view_get_style (tv (t, 0));
      MlColorBy by = style->color_by;
      check (t, g_str_equal (ml_color_by_name (by), bys[k]), "colour by %s chosen (the style says %s)", bys[k],
             ml_color_by_name (by));
      g_string_append_printf (out, "colour %s:", bys[k]);
      for (size_t c = 0; c <= ML_PALETTE_N; c++)
        if (sc->classes[by][c].label && sc->classes[by][c].count)
          g_string_append_printf (out, "%s%s", c ? " | " : " ", sc->classes[by][c].label);
      g_string_append_c (out, '\n');
      guint wrong = 0, seen = 0;
      for (size_t i = 0; i < sc->n_items; i++)
        {
          const MlSceneItem *it = &sc->items[i];
          const MlBuffer *b = &doc->bufs->buf[it->buffer];
          g_string_append_printf (out, "0x%" G_GINT64_MODIFIER "x:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT " %s\n",
                                  b->addr, b->start, b->end, sc->classes[by][it->cls[by]].label);
          double x, y;
          if (!ml_timeline_view_buffer_point (tv (t, 0), it->buffer, &x, &y))
            continue;
          MlRgb c = ml_style_class_color (style, it->cls[by]);
          guint32 rgb = (guint32) lround (c.r * 255) << 16 | (guint32) lround (c.g * 255) << 8 | (guint32) lround (c.b * 255);
          seen++;
          guint32 px = view_pixel (t, 0, x - 5, y);   /* off the lower bound's dashed line */
          if (px != rgb)
            wrong++, g_printerr ("buffer %u at %.0f,%.0f: #%06x, want #%06x\n", it->buffer, x - 5, y, px, rgb);
        }
      check (t, seen > 0 && wrong == 0, "colour by %s: %u of %u buffers drawn in their class's colour", bys[k],
             seen - wrong, seen);
    }
  save_text (t, "colours.txt", out);
  t->shot = "window-colour-frames.png";
  return NEXT;
}

static const Step snapshot_script[] = {
  STEP (snapshot_shown), STEP (snapshot_search), STEP (snapshot_details), STEP (snapshot_colours), STEP (ends),
  { NULL, NULL }
};

/* ---- the run ----------------------------------------------------------------- */

/* Whether to wait before the next step: for a frame since the last one
 * (or half a second), and before a screenshot for the drawing to settle;
 * takes the screenshot asked for. */
static gboolean
wait_for_frame (WindowTest *t)
{
  guint n = ml_timeline_view_get_draw_count (tv (t, 0));
  gint64 now = g_get_monotonic_time ();
  if (n == t->step_draws && now < t->frame_wait)
    return TRUE;
  t->step_draws = n;
  t->frame_wait = now + G_USEC_PER_SEC / 2;
  gboolean settled = ml_timeline_view_is_settled (tv (t, 0))
                     && (!gtk_widget_get_mapped (GTK_WIDGET (tv (t, 1))) || ml_timeline_view_is_settled (tv (t, 1)));
  if (t->shot && !settled && now < t->frame_wait + 5 * G_USEC_PER_SEC)
    return TRUE;   /* a worker is still drawing */
  if (t->shot)
    {
      screenshot (t, t->shot);
      t->shot = NULL;
      return TRUE;
    }
  return FALSE;
}

static gboolean
step (MlDriver *d)
{
  WindowTest *t = (WindowTest *) d;
  if (wait_for_frame (t))
    return TRUE;
  Next next = t->script[t->at].fn (t, ml_window_get_document (d->win));
  static const Step *const scripts[] = {
    [TO_ERROR] = error_script, [TO_DEVICES] = device_script, [TO_TWO_FILES] = two_files_script,
    [TO_SNAPSHOT] = snapshot_script,
  };
  if (next == NEXT)
    t->at++;
  else if (next >= TO_ERROR)
    t->script = scripts[next], t->at = 0;
  if (next != END)
    return TRUE;
  printf ("1..%d\n", t->n_tests);
  fflush (stdout);
  ml_driver_finish (d, t->failed ? 1 : 0);
  return FALSE;
}

static void
timed_out (MlDriver *d)
{
  WindowTest *t = (WindowTest *) d;
  printf ("not ok %d - the scripted run timed out in step %s\n1..%d\n", t->n_tests + 1, t->script[t->at].name, t->n_tests + 1);
  fflush (stdout);
}

int
main (int argc, char **argv)
{
  static WindowTest t = {
    .d = { .interval_ms = 30, .deadline_s = 120, .step = step, .timed_out = timed_out },
    .script = main_script,
  };
  int rc = ml_driver_main (&t.d, argc, argv, "test-viewer-window DIR [memlens-view options] FILE [FILE2]", &t.dir);
  g_free (t.xid);
  return rc;
}
