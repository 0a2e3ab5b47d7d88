/* The renderer: view state, axes, scene geometry and hit testing with
 * hand-worked coordinates, level of detail, and the PNG / SVG / PDF files. */
#include "tests/tap.h"
#include "tests/trace-text.h"

#include <math.h>
#include <cairo.h>

#include "sim/analysis/stages.h"
#include "render/axis.h"
#include "render/scene.h"
#include "render/timeline.h"
#include "render/view.h"
#include "sim/formats/load.h"
#include "sim/analysis/diagnose.h"
#include "sim/sim.h"
#include "strategies/registry.h"

#define MiB ((uint64_t) 1 << 20)
#define near(a, b) (fabs ((a) - (b)) < 1e-9)

static void
test_view (void)
{
  MlView v;
  ml_view_init (&v, 0, 100, 0, 1000, 10, 20, 200, 100);
  ok (near (ml_view_time_to_x (&v, 0), 10) && near (ml_view_time_to_x (&v, 100), 210), "time -> x at both ends");
  ok (near (ml_view_addr_to_y (&v, 0), 120) && near (ml_view_addr_to_y (&v, 1000), 20), "address 0 at the bottom, top at the top");
  ok (near (ml_view_x_to_time (&v, 60), 25) && near (ml_view_y_to_addr (&v, 70), 500), "x -> time, y -> address");
  ok (ml_view_is_fit (&v), "init fits");
  ml_view_zoom (&v, 2, 1, 110, 70);   /* the pointer is at tick 50 */
  ok (near (v.t0, 25) && near (v.t1, 75) && near (v.a0, 0) && near (v.a1, 1000), "zoom x2 around tick 50: [25, 75)");
  ok (near (ml_view_x_to_time (&v, 110), 50), "the tick under the pointer stays");
  ml_view_zoom (&v, 2, 1, 10, 70);    /* anchored at the left edge, tick 25 */
  ok (near (v.t0, 25) && near (v.t1, 50), "zoom at the left edge keeps t0");
  ml_view_pan (&v, 40, 0);            /* 40 px at 0.125 tick/px: 5 ticks earlier */
  ok (near (v.t0, 20) && near (v.t1, 45), "drag right shows earlier ticks");
  ml_view_pan (&v, 1000, 0);
  ok (near (v.t0, 0) && near (v.t1, 25), "pan clamps at the start, span kept");
  ml_view_pan (&v, -1e6, 0);
  ok (near (v.t0, 75) && near (v.t1, 100), "pan clamps at the end");
  ml_view_zoom (&v, 1e9, 1, 110, 70);
  ok (near (v.t1 - v.t0, 1), "zoom in stops at one tick");
  ml_view_zoom (&v, 1, 4, 10, 120);   /* addresses, anchored at address 0 */
  ok (near (v.a0, 0) && near (v.a1, 250), "address zoom at the bottom: [0, 250)");
  ml_view_pan (&v, 0, -50);           /* drag up: 50 px at 2.5 B/px -> lower addresses... clamped */
  ok (near (v.a0, 0) && near (v.a1, 250), "address pan clamps at 0");
  ml_view_pan (&v, 0, 40);            /* drag down shows higher addresses */
  ok (near (v.a0, 100) && near (v.a1, 350), "drag down: +100 bytes");
  ml_view_zoom (&v, 1e-6, 1e-6, 50, 50);
  ok (ml_view_is_fit (&v), "zooming far out fits");
  ml_view_set_time (&v, 90, 200);
  ok (near (v.t0, 0) && near (v.t1, 100), "set_time wider than the data fits it");
  ml_view_set_time (&v, 90, 95);
  ok (near (v.t0, 90) && near (v.t1, 95), "set_time inside the bounds");
  ml_view_set_time (&v, 98, 108);
  ok (near (v.t0, 90) && near (v.t1, 100), "set_time past the end slides back, span kept");
  MlView e;
  ml_view_init (&e, 5, 5, 0, 0, 0, 0, 0, 0);
  ok (e.t1 > e.t0 && e.a1 > e.a0 && e.pw >= 1 && e.ph >= 1, "empty bounds and a zero plot stay usable");
}

static void
test_short_label (void)
{
  char b[64];
  is_str (ml_short_label ("D:\\Dev\\a2\\model.py:397:forward", b, sizeof b), "model.py:397:forward", "Windows path");
  is_str (ml_short_label ("freed at /home/u/x/opt.py:71:step", b, sizeof b), "freed at opt.py:71:step", "a path inside a sentence");
  is_str (ml_short_label ("train.py:41:build", b, sizeof b), "train.py:41:build", "no path: unchanged");
  is_str (ml_short_label ("dir/", b, sizeof b), "dir/", "a trailing separator stays");
  is_str (ml_short_label ("/a/bbbbbbbbbb", b, 5), "bbbb", "truncated to the buffer");
}

static void
test_axis (void)
{
  double v[16], step;
  char b[32];
  size_t n = ml_axis_ticks (ML_AXIS_BYTES, 0, 1073741824.0, 4, v, 16, &step);
  is_u64 (n, 5, "0..1 GiB in about 4: five ticks");
  is_u64 ((uint64_t) step, 268435456, "step 256 MiB");
  is_str (ml_axis_label (ML_AXIS_BYTES, 805306368.0, step, b, sizeof b), "768 MiB", "768 MiB");
  is_str (ml_axis_label (ML_AXIS_BYTES, 1342177280.0, step, b, sizeof b), "1.25 GiB", "1.25 GiB");
  is_str (ml_axis_label (ML_AXIS_BYTES, 0, step, b, sizeof b), "0", "zero is 0");
  n = ml_axis_ticks (ML_AXIS_COUNT, 13, 97, 4, v, 16, &step);
  ok (n == 4 && near (v[0], 20) && near (v[3], 80) && near (step, 20), "ticks 13..97: 20 40 60 80");
  is_str (ml_axis_label (ML_AXIS_COUNT, 1500000, 500000, b, sizeof b), "1.5M", "1.5M ticks");
  is_str (ml_axis_label (ML_AXIS_NS, 2500000, 500000, b, sizeof b), "2.5 ms", "2.5 ms");
  is_str (ml_axis_label (ML_AXIS_PERCENT, 0.5, 0.25, b, sizeof b), "50%", "50%");
}

/* ticks are event indexes: a [0,2) 100 B at 0; b [1,4) 50 B at 100;
 * c [3,5) 100 B at 0 (one arena); the trace ends at tick 6. */
static const char three[] =
  "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":1}\n"
  "{\"kind\":\"alloc\",\"id\":1,\"size\":100,\"name\":\"a\"}\n"
  "{\"kind\":\"alloc\",\"id\":2,\"size\":50,\"name\":\"b\"}\n"
  "{\"kind\":\"free\",\"id\":1}\n"
  "{\"kind\":\"alloc\",\"id\":3,\"size\":100,\"name\":\"c\"}\n"
  "{\"kind\":\"free\",\"id\":2}\n"
  "{\"kind\":\"free\",\"id\":3}\n";

static MlPlan *
arena (const MlBuffers *b, const uint64_t *offsets)
{
  MlPlan *p = ml_plan_new (b->n, "hand");
  for (size_t i = 0; i < b->n; i++)
    p->offset[i] = offsets[i];
  must (ml_plan_make_arena (p, b) >= 0);
  return p;
}

static void
test_scene (void)
{
  MlTrace *t = load_text (three, ".jsonl");
  MlBuffers *b = NULL;
  ml_buffers_build (t, 1, &b, NULL);
  static const uint64_t off[] = { 0, 100, 0 };
  MlPlan *p = arena (b, off);
  MlScene *s = NULL;
  MlError err = { 0 };
  ok (ml_scene_new (b, p, NULL, &s, &err) == 0, "scene of three buffers");
  is_u64 (s->n_items, 3, "three items");
  is_u64 (s->addr_extent, 150, "address axis: the arena, 150 bytes");
  is_u64 (s->items[1].start, 1, "b starts at tick 1");
  is_u64 (s->items[1].addr, 100, "b at address 100");
  is_u64 (s->end_tick, 6, "time axis [0, 6)");
  is_u64 (s->max_end[0], 2, "prefix max end 0");
  is_u64 (s->max_end[1], 4, "prefix max end 1");
  is_u64 (s->max_end[2], 5, "prefix max end 2");
  is_u64 (ml_scene_first_visible (s, 3.5), 1, "from tick 3.5: a ended, b may show");
  is_u64 (ml_scene_end_visible (s, 2), 2, "before tick 2: a and b");
  is_u64 (ml_scene_end_visible (s, 0), 0, "before tick 0: nothing");
  is_u64 (s->metrics.lower_bound, 150, "lower bound 150");

  MlView v;   /* ticks [0, 6) on 600 px, bytes [0, 150) on 150 px: 100 px/tick, 1 px/B */
  ml_scene_view_init (s, &v, 0, 0, 600, 150);
  is_u64 (ml_scene_hit (s, &v, 50, 149), 0, "tick 0.5, byte 0.5: a");
  is_u64 (ml_scene_hit (s, &v, 150, 25), 1, "tick 1.5, byte 125: b");
  is_u64 (ml_scene_hit (s, &v, 350, 100), 2, "tick 3.5, byte 50: c");
  ok (ml_scene_hit (s, &v, 450, 10) == -1, "tick 4.5, byte 140: nothing");
  ok (ml_scene_hit (s, &v, 600, 10) == -1, "outside the plot: nothing");
  ml_view_zoom (&v, 4, 1, 200, 75);  /* around tick 2: ticks [1.5, 3) */
  is_u64 (ml_scene_hit (s, &v, 10, 140), 0, "after a zoom: tick ~1.5, byte 10 is a");

  MlView w;
  ml_scene_view_init (s, &w, 0, 0, 600, 150);
  MlRect r;
  ml_timeline_item_rect (&w, s, 1, &r);   /* b: ticks [1, 4), bytes [100, 150) */
  ok (near (r.x, 100) && near (r.w, 300) && near (r.y, 0) && near (r.h, 50), "item rect of b: x 100 w 300, y 0 h 50");
  is_str (s->classes[ML_COLOR_BY_STREAM][0].label, "stream 0", "one stream class");
  is_u64 (s->n_classes[ML_COLOR_BY_SITE], 3, "three names, three classes");
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* Counts the pixels of @surf inside [x0,x1)x[y0,y1) that are not white. */
static size_t
inked (cairo_surface_t *surf, int x0, int y0, int x1, int y1)
{
  cairo_surface_flush (surf);
  unsigned char *d = cairo_image_surface_get_data (surf);
  int stride = cairo_image_surface_get_stride (surf);
  size_t n = 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      {
        uint32_t px = *(uint32_t *) (d + y * stride + x * 4) & 0xffffff;
        n += px != 0xffffff;
      }
  return n;
}

/* 20000 one-tick buffers and one 1 MiB spike lasting one tick among
 * 100000 ticks: far below a pixel each, still drawn. */
static void
test_lod (void)
{
  MlTrace *t = ml_trace_new ();
  uint64_t tick = 0;
  for (uint64_t i = 1; i <= 20000; i++)
    {
      MlEvent a = { .kind = ML_EV_ALLOC, .tick = tick, .id = i, .size = i == 10000 ? 1048576 : 4096 + (i % 7) * 256,
                    .time_ns = -1, .flags = ML_EVF_HAS_ID };
      ml_trace_append (t, &a);
      MlEvent f = { .kind = ML_EV_FREE, .tick = tick + 1, .id = i, .time_ns = -1, .flags = ML_EVF_HAS_ID };
      ml_trace_append (t, &f);
      tick += 5;
    }
  MlBuffers *b = NULL;
  ml_buffers_build (t, 256, &b, NULL);
  uint64_t *off = calloc (b->n, sizeof *off);
  MlPlan *p = arena (b, off);
  MlScene *s = NULL;
  ok (ml_scene_new (b, p, NULL, &s, NULL) == 0, "scene of 20000 buffers");
  cairo_surface_t *surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 400, 200);
  cairo_t *cr = cairo_create (surf);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  MlStyle st;
  ml_style_init (&st);
  MlView v;
  ml_scene_view_init (s, &v, 0, 0, 400, 200);
  ml_timeline_draw_layout (cr, &v, s, &st);
  /* the spike: buffer index 9999 at tick 49995 of 100000 -> x ~ 200 */
  double x = ml_view_time_to_x (&v, 49995.5);
  size_t spike = inked (surf, (int) x - 1, 5, (int) x + 2, 150);
  ok (spike >= 100, "the 1 MiB one-tick spike is a full column (%zu px inked)", spike);
  size_t low = inked (surf, 1, 198, 399, 199);
  ok (low >= 390, "the small buffers fill the bottom row (%zu of 398)", low);
  cairo_destroy (cr);
  cairo_surface_destroy (surf);
  ml_scene_free (s);
  ml_plan_free (p);
  free (off);
  ml_buffers_free (b);
  ml_trace_free (t);
}

static uint32_t
pixel (cairo_surface_t *surf, int x, int y)
{
  cairo_surface_flush (surf);
  return *(uint32_t *) (cairo_image_surface_get_data (surf) + y * cairo_image_surface_get_stride (surf) + x * 4) & 0xffffff;
}

static uint32_t
rgb_of (MlRgb c)
{
  return (uint32_t) lround (c.r * 255) << 16 | (uint32_t) lround (c.g * 255) << 8 | (uint32_t) lround (c.b * 255);
}

/* Stages (marks "NAME start" .. "NAME end", a snapshot's external
 * annotations) are bands over their ticks: the background inside one is
 * tinted, outside it is not; ml_stages_find pairs them, nested ones too. */
static const char staged[] =
  "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":1}\n"
  "{\"kind\":\"mark\",\"name\":\"fwd start\"}\n"
  "{\"kind\":\"alloc\",\"id\":1,\"size\":10,\"name\":\"a\"}\n"
  "{\"kind\":\"mark\",\"name\":\"fwd start\"}\n"
  "{\"kind\":\"mark\",\"name\":\"fwd end\"}\n"
  "{\"kind\":\"mark\",\"name\":\"fwd end\"}\n"
  "{\"kind\":\"alloc\",\"id\":2,\"size\":10,\"name\":\"b\"}\n"
  "{\"kind\":\"free\",\"id\":1}\n"
  "{\"kind\":\"mark\",\"name\":\"bwd start\"}\n"
  "{\"kind\":\"free\",\"id\":2}\n";

static void
test_stages (void)
{
  MlTrace *t = load_text (staged, ".jsonl");
  MlStage *sg = NULL;
  size_t n = 0;
  int rc = ml_stages_find (t, &sg, &n, NULL);
  ok (rc == 0 && n == 3, "three stages (%zu)", n);
  if (n == 3)
    {
      ok (sg[0].len == 3 && sg[0].start == t->events[0].tick && sg[0].end == t->events[4].tick,
          "the outer fwd: its start to the second end (ticks %" PRIu64 "..%" PRIu64 ")", sg[0].start, sg[0].end);
      ok (sg[1].start == t->events[2].tick && sg[1].end == t->events[3].tick, "the inner fwd: the first end");
      ok (sg[2].end == ml_trace_end_tick (t), "bwd, never ended, runs to the end");
    }
  free (sg);
  MlBuffers *b = NULL;
  ml_buffers_build (t, 1, &b, NULL);
  static const uint64_t off[] = { 0, 10 };
  MlPlan *p = arena (b, off);
  MlScene *s = NULL;
  ml_scene_new (b, p, NULL, &s, NULL);
  MlView v;
  ml_scene_view_init_plot (s, ML_PLOT_ACTIVE, &v, 0, 0, 1000, 200);
  MlStyle st;
  ml_style_init (&st);
  st.plot = ML_PLOT_ACTIVE;
  st.show_labels = false;
  cairo_surface_t *surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 1000, 200);
  cairo_t *cr = cairo_create (surf);
  ml_timeline_draw_layout (cr, &v, s, &st);
  cairo_destroy (cr);
  uint32_t bg = rgb_of (ml_style_bg (&st));
  /* above the stack (a alone: 10 of 20 bytes), under the labels' rows */
  int in = (int) ml_view_time_to_x (&v, ((double) t->events[0].tick + (double) t->events[2].tick) / 2);
  int out = (int) ml_view_time_to_x (&v, ((double) t->events[4].tick + (double) t->events[5].tick) / 2);
  ok (pixel (surf, in, 60) != bg, "inside the fwd stage the background is tinted (#%06x)", pixel (surf, in, 60));
  ok (pixel (surf, out, 60) == bg, "between the stages it is not (#%06x)", pixel (surf, out, 60));
  cairo_surface_destroy (surf);
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* The stacked view of "three": b lives longest (3 ticks) so it is at the
 * bottom; a sits on it at tick 1, c at tick 3; alone, a and c start at 0. */
static void
test_active (void)
{
  MlTrace *t = load_text (three, ".jsonl");
  MlBuffers *b = NULL;
  ml_buffers_build (t, 1, &b, NULL);
  static const uint64_t off[] = { 0, 100, 0 };
  MlPlan *p = arena (b, off);
  MlScene *s = NULL;
  ml_scene_new (b, p, NULL, &s, NULL);
  ok (s->rank[1] == 0 && s->rank[0] == 1 && s->rank[2] == 2, "stack order: b (longest), a, c (ranks %u %u %u)",
      s->rank[0], s->rank[1], s->rank[2]);
  is_u64 (s->live_max, 150, "the most live at once: 150 bytes");
  MlView v;   /* 100 px per tick, 1 px per byte */
  ml_scene_view_init_plot (s, ML_PLOT_ACTIVE, &v, 0, 0, 600, 150);
  ok (near (v.a_max, 150), "the vertical axis is the stacked bytes [0, 150)");
  is_u64 (ml_active_hit (s, &v, 150, 145), 1, "tick 1, byte 5: b at the bottom");
  is_u64 (ml_active_hit (s, &v, 150, 60), 0, "tick 1, byte 90: a on top of b");
  is_u64 (ml_active_hit (s, &v, 50, 140), 0, "tick 0, byte 10: a alone at the bottom");
  ok (ml_active_hit (s, &v, 50, 20) == -1, "tick 0, byte 130: above the stack, nothing");
  is_u64 (ml_active_hit (s, &v, 450, 100), 2, "tick 4, byte 50: c alone");
  MlStyle st;
  ml_style_init (&st);
  st.plot = ML_PLOT_ACTIVE;
  ok (ml_timeline_hit (&v, s, &st, 350, 60) == 2, "ml_timeline_hit follows the plot: tick 3, byte 90 is c");
  cairo_surface_t *surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 600, 150);
  cairo_t *cr = cairo_create (surf);
  ml_timeline_draw_layout (cr, &v, s, &st);
  cairo_destroy (cr);
  uint32_t ca = rgb_of (ml_style_class_color (&st, s->items[0].cls[ML_COLOR_BY_SITE]));
  uint32_t cb = rgb_of (ml_style_class_color (&st, s->items[1].cls[ML_COLOR_BY_SITE]));
  uint32_t cc = rgb_of (ml_style_class_color (&st, s->items[2].cls[ML_COLOR_BY_SITE]));
  ok (ca != cb && cb != cc && ca != cc, "three call sites, three colours");
  ok (pixel (surf, 150, 140) == cb, "tick 1, byte 10 is b's colour (#%06x, want #%06x)", pixel (surf, 150, 140), cb);
  ok (pixel (surf, 150, 60) == ca, "tick 1, byte 90 is a's colour (#%06x, want #%06x)", pixel (surf, 150, 60), ca);
  ok (pixel (surf, 350, 60) == cc, "tick 3, byte 90 is c's colour (#%06x, want #%06x)", pixel (surf, 350, 60), cc);
  ok (pixel (surf, 50, 140) == ca, "tick 0, byte 10 is a's colour: a alone sits at the bottom");
  ok (pixel (surf, 50, 20) == rgb_of (ml_style_bg (&st)), "tick 0, byte 130: background above the stack");
  ok (pixel (surf, 550, 100) == rgb_of (ml_style_bg (&st)), "tick 5: nothing live, background");
  cairo_surface_destroy (surf);

  /* the segments plot outlines the arena where the address plot does not */
  MlView w;
  ml_scene_view_init_plot (s, ML_PLOT_SEGMENTS, &w, 0, 0, 600, 150);
  uint32_t edge[2];
  for (int k = 0; k < 2; k++)
    {
      st.plot = k ? ML_PLOT_SEGMENTS : ML_PLOT_ADDRESS;
      surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 600, 150);
      cr = cairo_create (surf);
      ml_timeline_draw_layout (cr, &w, s, &st);
      cairo_destroy (cr);
      edge[k] = pixel (surf, 300, 149);   /* the segment's lower edge at tick 3 (c's byte 0) */
      cairo_surface_destroy (surf);
    }
  int lum0 = (int) (edge[0] >> 16) + (int) ((edge[0] >> 8) & 255) + (int) (edge[0] & 255);
  int lum1 = (int) (edge[1] >> 16) + (int) ((edge[1] >> 8) & 255) + (int) (edge[1] & 255);
  ok (lum1 + 90 < lum0, "the segments plot outlines the segment: its edge is dark (#%06x, the address plot #%06x)",
      edge[1], edge[0]);
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

static void
test_files (void)
{
  MlTrace *t = load_text (three, ".jsonl");
  MlBuffers *b = NULL;
  ml_buffers_build (t, 1, &b, NULL);
  static const uint64_t off[] = { 0, 100, 0 };
  MlPlan *p = arena (b, off);
  MlScene *s = NULL;
  ml_scene_new (b, p, &(MlSceneOptions) { .name = "three.jsonl" }, &s, NULL);
  MlStyle st;
  ml_style_init (&st);
  static const struct { const char *ext, *magic; } kinds[] = {
    { ".png", "\x89PNG" }, { ".svg", "<?xml" }, { ".pdf", "%PDF" },
  };
  for (size_t k = 0; k < 3; k++)
    {
      char *path = tap_write_temp ("", kinds[k].ext);
      MlError err = { 0 };
      int rc = ml_render_figure_to_file (path, s, &st, 800, 450, NULL, &err);
      ok (rc == 0, "render %s (%s)", kinds[k].ext, err.msg);
      FILE *fp = fopen (path, "rb");
      char head[8] = { 0 };
      size_t got = fp ? fread (head, 1, sizeof head, fp) : 0;
      long size = 0;
      if (fp)
        {
          fseek (fp, 0, SEEK_END);
          size = ftell (fp);
          fclose (fp);
        }
      ok (got >= 4 && memcmp (head, kinds[k].magic, strlen (kinds[k].magic)) == 0, "%s starts with its magic", kinds[k].ext);
      ok (size > 2000, "%s is not empty (%ld bytes)", kinds[k].ext, size);
      if (k == 1)
        {
          /* SVG sized in pixels, as the PNG (pt would open a third larger) */
          char *svg = NULL;
          size_t len = 0;
          FILE *f = fopen (path, "rb");
          if (f)
            {
              svg = calloc (1, 4097);
              len = fread (svg, 1, 4096, f);
              fclose (f);
            }
          ok (len && strstr (svg, "width=\"800px\"") && strstr (svg, "height=\"450px\""), "the SVG is 800x450 px");
          free (svg);
        }
      if (k == 0)
        {
          cairo_surface_t *img = cairo_image_surface_create_from_png (path);
          ok (cairo_surface_status (img) == CAIRO_STATUS_SUCCESS && cairo_image_surface_get_width (img) == 800
              && cairo_image_surface_get_height (img) == 450, "the PNG reads back at 800x450");
          size_t ink = inked (img, 0, 0, 800, 450);
          ok (ink > 800 * 450 / 10, "the PNG is not blank (%zu px inked)", ink);
          cairo_surface_destroy (img);
        }
      unlink (path);
      free (path);
    }
  MlError err = { 0 };
  ok (ml_render_figure_to_file ("/nonexistent-dir/x.png", s, &st, 800, 450, NULL, &err) < 0 && err.msg[0],
      "an unwritable path is an error with a message");
  ok (ml_render_figure_to_file ("x.bmp", s, &st, 800, 450, NULL, &err) == ML_EUSAGE, "an unknown extension is refused");
  ok (access ("x.bmp", F_OK) != 0, "and nothing is written");
  /* the pixel count is bounded (issue 26: 20000x20000 took 3.5 GB) */
  ok (ml_render_check_size (8000, 5000, NULL) == 0, "8000x5000 (40 million pixels) may be drawn");
  ok (ml_render_check_size (7680, 4320, NULL) == 0, "an 8K screen's 7680x4320 may be drawn");
  memset (&err, 0, sizeof err);
  ok (ml_render_check_size (8000, 5001, &err) == ML_EUSAGE && strstr (err.msg, "40 million"),
      "8000x5001 is refused naming the limit (%s)", err.msg);
  char *big = tap_write_temp ("", ".png");
  unlink (big);
  ok (ml_render_figure_to_file (big, s, &st, 20000, 20000, NULL, &err) == ML_EUSAGE && access (big, F_OK) != 0,
      "20000x20000 is refused before drawing, nothing written");
  free (big);
  ok (ml_render_check_size (20001, 200, NULL) == ML_EUSAGE && ml_render_check_size (199, 200, NULL) == ML_EUSAGE,
      "a side past 20000 or under 200 is refused");
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* "three" with times: a [0, 2000) ns, b [1000, 2000), c [2000, 10000);
 * ticks 2, 3 and 4 share 2000 ns. */
static const char three_timed[] =
  "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":1}\n"
  "{\"kind\":\"alloc\",\"id\":1,\"size\":100,\"name\":\"a\",\"time_ns\":5000}\n"
  "{\"kind\":\"alloc\",\"id\":2,\"size\":50,\"name\":\"b\",\"time_ns\":6000}\n"
  "{\"kind\":\"free\",\"id\":1,\"time_ns\":7000}\n"
  "{\"kind\":\"alloc\",\"id\":3,\"size\":100,\"name\":\"c\",\"time_ns\":7000}\n"
  "{\"kind\":\"free\",\"id\":2,\"time_ns\":7000}\n"
  "{\"kind\":\"free\",\"id\":3,\"time_ns\":15000}\n";

/* The real-time axis: x linear in time, labels at round times, evenly
 * spaced; the pictures put each buffer where its time says. */
static void
test_real_time (void)
{
  MlTrace *t = load_text (three_timed, ".jsonl");
  MlBuffers *b = NULL;
  ml_buffers_build (t, 1, &b, NULL);
  static const uint64_t off[] = { 0, 100, 0 };
  MlPlan *p = arena (b, off);
  MlScene *s = NULL;
  ml_scene_new (b, p, NULL, &s, NULL);
  MlStyle st;
  ml_style_init (&st);
  ok (s->all_timed && ml_scene_real_time (s, ML_TIME_AXIS_AUTO), "every event has a time: the automatic axis is real time");
  ok (!ml_scene_real_time (s, ML_TIME_AXIS_TICKS), "--axis ticks keeps ticks");
  MlView v;
  ml_scene_view_init_style (s, &st, &v, 0, 0, 600, 150);
  ok (v.warp != NULL, "the view has the time warp");
  /* by hand: 10000 ns over ticks 0..5, 2000 ns per tick on average, so the
   * axis [0, 6) is 12000 ns (plus eps = 0.2 ns per tick): 20 ns per px */
  double span = 12000 + 6 * 0.2;
  ok (fabs (ml_view_time_to_x (&v, 1) - 1000.2 / span * 600) < 1e-6, "tick 1 (1000 ns) at x %.3f", ml_view_time_to_x (&v, 1));
  ok (fabs (ml_view_time_to_x (&v, 3) - 2000.6 / span * 600) < 1e-6, "tick 3 (2000 ns) at x %.3f", ml_view_time_to_x (&v, 3));
  ok (fabs (ml_view_time_to_x (&v, 3) - ml_view_time_to_x (&v, 2)) < 0.02, "ticks 2 and 3, both at 2000 ns, nearly coincide");
  ok (fabs (ml_view_time_to_x (&v, 5) - 10001.0 / span * 600) < 1e-6, "tick 5 (10000 ns) at x %.3f", ml_view_time_to_x (&v, 5));
  ok (fabs (ml_view_x_to_time (&v, ml_view_time_to_x (&v, 4.25)) - 4.25) < 1e-9, "x -> tick inverts tick -> x");
  /* zoom by 2 at x 300 (6000 ns): [3000, 9000) ns, tick 3.5 stays under the pointer */
  MlView z = v;
  double under = ml_view_x_to_time (&z, 300);
  ml_view_zoom (&z, 2, 1, 300, 75);
  ok (fabs (ml_view_x_to_time (&z, 300) - under) < 1e-9, "zoom keeps the tick under the pointer (%.4f)", under);
  ok (fabs ((ml_view_axis_value (&z, z.t1) - ml_view_axis_value (&z, z.t0)) - span / 2) < 1e-6,
      "and halves the visible time (%.1f ns)", ml_view_axis_value (&z, z.t1) - ml_view_axis_value (&z, z.t0));
  /* the labels: 600 px for about 5 labels of 12 µs -> every 2 µs, from 0 */
  MlTimeLabel lab[32];
  size_t n = ml_timeline_time_labels (&v, s, &st, lab, 32);
  is_u64 (n, 7, "seven time labels (0 to 12 µs)");
  static const char *const want[] = { "0 µs", "2 µs", "4 µs", "6 µs", "8 µs", "10 µs", "12 µs" };
  int right = 0, even = 0;
  for (size_t i = 0; i < n && i < 7; i++)
    {
      right += strcmp (lab[i].text, want[i]) == 0;
      double gap = i ? lab[i].x - lab[i - 1].x : 0;
      even += i == 0 ? fabs (lab[0].x) < 0.01 : fabs (gap - 2000 / span * 600) < 0.05;
    }
  ok (right == 7, "they read 0 µs, 2 µs, ... 12 µs (%s, %s, ..., %s)", lab[0].text, n > 1 ? lab[1].text : "", n ? lab[n - 1].text : "");
  ok (even == 7, "evenly spaced, %.2f px apart (x %.2f %.2f %.2f ...)", 2000 / span * 600, lab[0].x, lab[1].x, lab[2].x);
  /* the picture: at x 200 (4000 ns, tick 3.25) c is live at byte 50; on
   * the tick axis x 200 is tick 2, where nothing is at byte 50 */
  uint32_t cc = rgb_of (ml_style_class_color (&st, s->items[2].cls[ML_COLOR_BY_SITE]));
  uint32_t cb = rgb_of (ml_style_class_color (&st, s->items[1].cls[ML_COLOR_BY_SITE]));
  for (int k = 0; k < 2; k++)
    {
      st.time_axis = k ? ML_TIME_AXIS_TICKS : ML_TIME_AXIS_TIME;
      ml_scene_view_init_style (s, &st, &v, 0, 0, 600, 150);
      cairo_surface_t *surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 600, 150);
      cairo_t *cr = cairo_create (surf);
      ml_timeline_draw_layout (cr, &v, s, &st);
      cairo_destroy (cr);
      uint32_t at200 = pixel (surf, 200, 100), at75 = pixel (surf, 75, 25);
      if (!k)
        {
          ok (at200 == cc, "real time: x 200 (4 µs), byte 50 is c (#%06x, want #%06x)", at200, cc);
          ok (at75 == cb, "real time: x 75 (1.5 µs), byte 125 is b (#%06x, want #%06x)", at75, cb);
        }
      else
        {
          ok (at200 != cc, "ticks: x 200 (tick 2), byte 50 is not c (#%06x)", at200);
          ok (at75 != cb, "ticks: x 75 (tick 0.75), byte 125 is not b (#%06x)", at75);
        }
      cairo_surface_destroy (surf);
    }
  /* a trace without times: no warp whatever the axis says */
  MlTrace *t2 = load_text (three, ".jsonl");
  MlBuffers *b2 = NULL;
  ml_buffers_build (t2, 1, &b2, NULL);
  MlPlan *p2 = arena (b2, off);
  MlScene *s2 = NULL;
  ml_scene_new (b2, p2, NULL, &s2, NULL);
  ok (!ml_scene_real_time (s2, ML_TIME_AXIS_TIME) && !ml_scene_real_time (s2, ML_TIME_AXIS_AUTO), "no times: ticks, even for --axis time");
  ml_scene_free (s2);
  ml_plan_free (p2);
  ml_buffers_free (b2);
  ml_trace_free (t2);
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

static bool
meet (const MlRect *a, const MlRect *b)
{
  return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

/* The trial's collision: the reserved peak reached at tick 1, at the left
 * edge, under best-fit (a growing arena), in a small exported figure. Its
 * label would sit right of the marker, above the line, i.e. under the
 * curve panel's legend; it must land clear of the legend and of the other
 * labels, and show in the picture. */
static void
test_curve_labels (void)
{
  char text[8192];
  size_t o = (size_t) snprintf (text, sizeof text,
                                "{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":1}\n"
                                "{\"kind\":\"alloc\",\"id\":1,\"size\":1048576}\n"
                                "{\"kind\":\"alloc\",\"id\":2,\"size\":8388608}\n"
                                "{\"kind\":\"free\",\"id\":2}\n");
  for (int i = 3; i < 120 && o + 200 < sizeof text; i++)
    o += (size_t) snprintf (text + o, sizeof text - o,
                            "{\"kind\":\"alloc\",\"id\":%d,\"size\":%d}\n{\"kind\":\"free\",\"id\":%d}\n", i,
                            2097152 + i * 4096, i);
  MlTrace *t = load_text (text, ".jsonl");
  MlBuffers *b = NULL;
  ml_buffers_build (t, 1, &b, NULL);
  MlPlan *p = NULL;
  MlKnobs k = { 0 };
  ml_knobs_init (&k);
  must (ml_sim_run (b, ml_strategy_find ("best-fit"), &k, &p, NULL) == 0);
  MlScene *s = NULL;
  ml_scene_new (b, p, NULL, &s, NULL);
  is_u64 (s->metrics.peak_tick, 1, "best-fit reserves its peak at tick 1");
  MlStyle st;
  ml_style_init (&st);
  MlFigureLayout fl;
  ml_figure_layout (s, &st, 900, 500, &fl);
  MlView v;
  ml_scene_view_init_style (s, &st, &v, fl.layout.x, fl.layout.y, fl.layout.w, fl.layout.h);
  cairo_surface_t *surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 900, 500);
  cairo_t *cr = cairo_create (surf);
  MlCurveLabel lab[16];
  size_t n = ml_timeline_curve_labels (cr, &v, s, &st, &fl.curves, lab, 16);
  const MlCurveLabel *legend = NULL, *res = NULL;
  for (size_t i = 0; i < n; i++)
    {
      if (lab[i].kind == ML_CURVE_LEGEND)
        legend = &lab[i];
      if (lab[i].kind == ML_CURVE_RESERVED)
        res = &lab[i];
    }
  ok (legend && res, "the legend and the reserved peak's label are placed (%zu labels)", n);
  if (!legend || !res)
    {
      cairo_destroy (cr);
      cairo_surface_destroy (surf);
      return;
    }
  /* the case: the marker under the legend's span, the line at its height,
   * so the label's first place (right of the marker, above the line)
   * meets the legend */
  double x = ml_view_time_to_x (&v, 1);
  double ybase = fl.curves.y + fl.curves.h, y = ybase - (double) s->metrics.peak * fl.curves.h / ((double) s->curve_max * 1.25);
  MlRect naive = { x + 8 - 2, y - 4 - res->box.h, res->box.w, res->box.h };
  ok (meet (&naive, &legend->box), "right of the marker, above the line, the label would meet the legend "
      "(label %.0f,%.0f %.0fx%.0f, legend %.0f,%.0f %.0fx%.0f)", naive.x, naive.y, naive.w, naive.h, legend->box.x,
      legend->box.y, legend->box.w, legend->box.h);
  is_str (res->text, "peak 9.00 MiB", "the label says the reserved peak");
  ok (!meet (&res->box, &legend->box), "it is placed clear of the legend (%.0f,%.0f %.0fx%.0f)", res->box.x,
      res->box.y, res->box.w, res->box.h);
  size_t clash = 0, outside = 0;
  for (size_t i = 0; i < n; i++)
    {
      const MlRect *r = &lab[i].box;
      outside += r->x < fl.curves.x || r->y < fl.curves.y || r->x + r->w > fl.curves.x + fl.curves.w
                 || r->y + r->h > fl.curves.y + fl.curves.h;
      for (size_t j = i + 1; j < n; j++)
        clash += meet (r, &lab[j].box);
    }
  ok (clash == 0, "no two of the %zu labels meet (%zu pairs do)", n, clash);
  ok (outside == 0, "all inside the panel (%zu not)", outside);
  /* and the picture shows it: its bold orange-brown text in its box */
  ml_timeline_draw_figure (cr, s, &st, 900, 500, NULL);
  size_t ink = 0;
  for (int py = (int) res->box.y; py < (int) (res->box.y + res->box.h); py++)
    for (int px = (int) res->box.x; px < (int) (res->box.x + res->box.w); px++)
      {
        uint32_t c = pixel (surf, px, py);
        int r = (int) (c >> 16), g = (int) ((c >> 8) & 255), bl = (int) (c & 255);
        ink += r > g + 50 && g > bl + 20 && r < 230;
      }
  ok (ink >= 40, "the label's orange text is drawn in its box (%zu px)", ink);
  cairo_destroy (cr);
  cairo_surface_destroy (surf);
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

static const char *root = ".";

static bool
reddish (uint32_t c)
{
  int r = (int) (c >> 16), g = (int) ((c >> 8) & 255), b = (int) (c & 255);
  return r > g + 30 && r > b + 30;
}

/* Draws @plot of @s on a @w x @h image with the whole scene in view. */
static cairo_surface_t *
draw_plot (const MlScene *s, MlStyle *st, MlPlot plot, MlView *v, int w, int h)
{
  st->plot = plot;
  ml_scene_view_init_plot (s, plot, v, 0, 0, w, h);
  cairo_surface_t *surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, w, h);
  cairo_t *cr = cairo_create (surf);
  ml_timeline_draw_layout (cr, v, s, st);
  cairo_destroy (cr);
  return surf;
}

/* The request an OOM refused, drawn. Two cases worked by hand:
 * - a strategy under a capacity: "three" under best-fit with 120 bytes:
 *   b (50 B at tick 1) does not fit beside a (100 B); once the capacity is
 *   lifted best-fit puts it at offset 100, and it is the longest-lived, so
 *   at the bottom of the stack;
 * - a recorded OOM (tests/data/oom-expandable-3dev.pickle, device 1: an
 *   expandable segment mapped to 100 MiB in all, 50 MiB live at the OOM,
 *   a 70 MiB request refused at tick 12 of 15): no place, so above the
 *   address axis' 100 MiB, and on the 50 MiB stack. */
static void
test_oom_request (void)
{
  MlTrace *t = load_text (three, ".jsonl");
  MlBuffers *b = NULL;
  ml_buffers_build (t, 1, &b, NULL);
  MlKnobs k;
  ml_knobs_init (&k);
  k.capacity = 120;
  MlPlan *p = NULL;
  must (ml_sim_run (b, ml_strategy_find ("best-fit"), &k, &p, NULL) == 0);
  ok (p->oom.hit && p->oom.tick == 1 && p->oom.buffer == 1 && p->offset[1] == 100,
      "best-fit under 120 B refuses b at tick 1, then places it at 100 (tick %" PRIu64 ", buffer %u, offset %" PRIu64 ")",
      p->oom.tick, p->oom.buffer, p->offset[1]);
  MlScene *s = NULL;
  ml_scene_new (b, p, NULL, &s, NULL);
  ok (s->oom_drawn && s->oom_addr == 100 && s->oom_bytes == 50 && s->oom_stack == 0,
      "the refused request: 50 B at address 100, at the bottom of the stack (%" PRIu64 " B at %" PRIu64 ", stack %" PRIu64 ")",
      s->oom_bytes, s->oom_addr, s->oom_stack);
  is_u64 (ml_scene_extent (s, ML_PLOT_ADDRESS), 150, "the address axis stays 150 B (it is inside)");
  MlStyle st;
  ml_style_init (&st);
  st.show_labels = false;
  MlView v;
  /* 600 x 150: 100 px per tick, 1 px per byte; the box is ticks [1, 2) x
   * bytes [100, 150): x 100..200, y 0..50 */
  cairo_surface_t *surf = draw_plot (s, &st, ML_PLOT_ADDRESS, &v, 600, 150);
  MlRect r = { 0 };
  bool boxed = ml_timeline_oom_request_box (&v, s, &st, &r);
  ok (boxed && near (r.x, 100) && near (r.w, 100) && near (r.y, 0) && near (r.h, 50),
      "its box: x 100 w 100, y 0 h 50 (%.1f %.1f %.1f %.1f)", r.x, r.w, r.y, r.h);
  size_t red = 0, probes = 0;
  for (int y = 5; y < 46; y += 4)
    for (int x = 110; x < 190; x += 4, probes++)
      red += reddish (pixel (surf, x, y));
  ok (red * 2 > probes, "hatched red inside it (%zu of %zu probes)", red, probes);
  ok (!reddish (pixel (surf, 350, 25)), "not at tick 3.5 in those bytes (#%06x)", pixel (surf, 350, 25));
  cairo_surface_destroy (surf);
  surf = draw_plot (s, &st, ML_PLOT_ACTIVE, &v, 600, 150);
  boxed = ml_timeline_oom_request_box (&v, s, &st, &r);
  ok (boxed && near (r.y, 100) && near (r.h, 50),
      "stacked: its box is bytes [0, 50) of the stack, y 100 h 50 (%.1f %.1f)", r.y, r.h);
  ok (reddish (pixel (surf, 150, 140)) && !reddish (pixel (surf, 150, 60)),
      "red at the bottom of the stack at tick 1 (#%06x), not in a above it (#%06x)", pixel (surf, 150, 140), pixel (surf, 150, 60));
  cairo_surface_destroy (surf);
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);

  char path[4096];
  snprintf (path, sizeof path, "%s/tests/data/oom-expandable-3dev.pickle", root);
  MlTrace *rt = NULL;
  MlError err = { 0 };
  if (ml_trace_load (path, NULL, &rt, &err) < 0)
    {
      skip ("tests/data/oom-expandable-3dev.pickle does not load (give the source root as the argument)");
      return;
    }
  ml_buffers_build (rt, 512, &b, NULL);
  ml_knobs_init (&k);
  must (ml_sim_run (b, ml_strategy_find ("recorded"), &k, &p, NULL) == 0);
  ok (!p->oom.hit, "the recorded plan alone knows no OOM");
  must (ml_recorded_oom_apply (b, p, &err) == 0);
  ok (p->oom.hit && p->oom.tick == 12 && p->oom.request == 70 * MiB, "marked with the trace's: tick %" PRIu64 ", %" PRIu64 " B",
      p->oom.tick, p->oom.request);
  ml_scene_new (b, p, NULL, &s, NULL);
  is_u64 (s->addr_extent, 100 * MiB, "the address axis: the expandable segment's 100 MiB");
  ok (s->oom_drawn && s->oom_addr == 100 * MiB && s->oom_bytes == 70 * MiB && s->oom_stack == 50 * MiB,
      "the request has no place: above the axis at 100 MiB, on the 50 MiB stack (%" PRIu64 ", %" PRIu64 ")", s->oom_addr,
      s->oom_stack);
  is_u64 (ml_scene_extent (s, ML_PLOT_ADDRESS), 170 * MiB, "the address axis reaches 170 MiB to show it");
  is_u64 (ml_scene_extent (s, ML_PLOT_ACTIVE), 120 * MiB, "the stacked axis 120 MiB (65 MiB at most live)");
  /* 750 x 170 px: 50 px per tick (15 ticks), 1 px per MiB; the box is
   * x 600..650, y 0..70 */
  surf = draw_plot (s, &st, ML_PLOT_ADDRESS, &v, 750, 170);
  boxed = ml_timeline_oom_request_box (&v, s, &st, &r);
  ok (boxed && near (r.x, 600) && near (r.w, 50) && near (r.y, 0) && near (r.h, 70),
      "its box: x 600 w 50, y 0 h 70 (%.1f %.1f %.1f %.1f)", r.x, r.w, r.y, r.h);
  red = probes = 0;
  for (int y = 5; y < 66; y += 4)
    for (int x = 605; x < 646; x += 4, probes++)
      red += reddish (pixel (surf, x, y));
  ok (red * 2 > probes, "hatched red there (%zu of %zu probes)", red, probes);
  /* buffer 3 (50 MiB at 45 MiB, ticks [8, 14)) below it, in its colour */
  uint32_t c3 = rgb_of (ml_style_class_color (&st, s->items[s->n_items - 1].cls[ML_COLOR_BY_SITE]));
  ok (pixel (surf, 625, 100) == c3, "under it at 70 MiB the live buffer's colour (#%06x, want #%06x)", pixel (surf, 625, 100), c3);
  ok (!reddish (pixel (surf, 380, 35)), "at tick 7.6, 135 MiB: nothing (#%06x)", pixel (surf, 380, 35));
  cairo_surface_destroy (surf);
  surf = draw_plot (s, &st, ML_PLOT_ACTIVE, &v, 750, 120);
  /* stacked: 1 px per MiB over 120 MiB: the box is bytes [50, 120), y 0..70 */
  boxed = ml_timeline_oom_request_box (&v, s, &st, &r);
  ok (boxed && near (r.y, 0) && near (r.h, 70), "stacked: y 0 h 70 (%.1f %.1f)", r.y, r.h);
  ok (reddish (pixel (surf, 625, 35)) && pixel (surf, 625, 95) == c3,
      "red on top of the stack (#%06x), the live buffer under it (#%06x)", pixel (surf, 625, 35), pixel (surf, 625, 95));
  cairo_surface_destroy (surf);
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (rt);
}

/* Sum of the channels: dark outline ink is far below the band's grey and
 * the background. */
static int
lum_of (uint32_t c)
{
  return (int) (c >> 16) + (int) ((c >> 8) & 255) + (int) (c & 255);
}

/* An expandable segment grows and shrinks (tests/data/expandable-unmap.pickle,
 * by hand from its trace: segment 0's range is mapped [0, 40) MiB at tick
 * 1, [40, 80) at 3, [80, 100) at 5, [100, 120) at 13; [40, 80) unmapped at
 * 18; [120, 180) mapped at 19, [40, 60) at 23; 28 ticks; a 2 MiB segment
 * above it from tick 11). In the segments plot the outline follows the
 * mapped pages, and the band (in both address plots) covers only them. */
static void
test_paged_segments (void)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/tests/data/expandable-unmap.pickle", root);
  MlTrace *t = NULL;
  MlError err = { 0 };
  if (ml_trace_load (path, NULL, &t, &err) < 0)
    {
      skip ("tests/data/expandable-unmap.pickle does not load (give the source root as the argument)");
      return;
    }
  MlBuffers *b = NULL;
  ml_buffers_build (t, 512, &b, NULL);
  MlKnobs k;
  ml_knobs_init (&k);
  MlPlan *p = NULL;
  must (ml_sim_run (b, ml_strategy_find ("recorded"), &k, &p, NULL) == 0);
  MlScene *s = NULL;
  ml_scene_new (b, p, NULL, &s, NULL);
  uint32_t g0 = s->seg_base[0] == 0 ? 0 : 1;
  ok ((p->segments[g0].flags & ML_SEG_PAGED) && s->seg_extent[g0] == 180 * MiB && s->end_tick == 28,
      "segment %u: a paged range of 180 MiB at the bottom; 28 ticks (%" PRIu64 " B, %" PRIu64 ")", g0, s->seg_extent[g0],
      s->end_tick);
  is_u64 (s->seg_map_first[g0 + 1] - s->seg_map_first[g0], 6, "its six mappings (the unmap ends one of them)");
  is_u64 (s->seg_mapped_max[g0], 160 * MiB, "the most mapped at once: 160 MiB, from tick 23 (120 MiB before the unmap)");
  MlStyle st;
  ml_style_init (&st);
  st.show_labels = false;
  st.show_peaks = false;   /* the lower-bound tick's dashed line */
  /* 560 x 364: 20 px per tick, 2 px per MiB over 182 MiB: tick T at
   * x = 20 T, M MiB at y = 364 - 2 M */
  MlView v;
  cairo_surface_t *surf = draw_plot (s, &st, ML_PLOT_SEGMENTS, &v, 560, 364);
  ok (near (v.a_max, 182.0 * MiB) && near (v.t_max, 28), "the view: 182 MiB x 28 ticks");
  uint32_t bg = rgb_of (ml_style_bg (&st));
#define X(tick) ((int) ((tick) * 20))
#define Y(mib) ((int) (364 - 2 * (mib)))
  uint32_t band = pixel (surf, X (15.5), Y (27));   /* mapped [0, 120), free at 25..30 MiB */
  ok (band != bg && lum_of (band) > 600, "tick 15.5, 27 MiB: mapped and free, the segment's band (#%06x)", band);
  ok (pixel (surf, X (15.5), Y (150)) == bg, "tick 15.5, 150 MiB: not mapped yet, background (#%06x)", pixel (surf, X (15.5), Y (150)));
  ok (pixel (surf, X (20.5), Y (60)) == bg, "tick 20.5, 60 MiB: unmapped at 18, background (#%06x)", pixel (surf, X (20.5), Y (60)));
  ok (pixel (surf, X (25.5), Y (55)) == band, "tick 25.5, 55 MiB: mapped again at 23, the band (#%06x)", pixel (surf, X (25.5), Y (55)));
  ok (pixel (surf, X (8.5), Y (110)) == bg, "tick 8.5, 110 MiB: above the 100 MiB mapped then (#%06x)", pixel (surf, X (8.5), Y (110)));
  /* the outline, where the mapped extent ends: within a pixel of it */
  int dark_top = 0, dark_hole = 0, dark_grow = 0, dark_unmap = 0, dark_remap = 0;
  for (int d = -1; d <= 1; d++)
    {
      dark_top += lum_of (pixel (surf, X (8.5), Y (100) + d)) < 450;     /* top at 100 MiB, ticks 5..13 */
      dark_hole += lum_of (pixel (surf, X (20.5), Y (40) + d)) < 450;    /* the hole's lower edge */
      dark_grow += lum_of (pixel (surf, X (13) + d, Y (110))) < 450;     /* grown by [100, 120) at 13 */
      dark_unmap += lum_of (pixel (surf, X (18) + d, Y (60))) < 450;     /* [40, 80) gone at 18 */
      dark_remap += lum_of (pixel (surf, X (23) + d, Y (50))) < 450;     /* [40, 60) back at 23 */
    }
  ok (dark_top, "the outline's top edge at 100 MiB at tick 8.5");
  ok (dark_hole, "an edge at 40 MiB at tick 20.5, under the unmapped hole");
  ok (dark_grow && dark_unmap && dark_remap, "vertical edges where it grows (tick 13), shrinks (18) and grows back (23)");
  int light = 0;
  for (int d = -1; d <= 1; d++)
    light += lum_of (pixel (surf, X (8.5), Y (180) + d)) >= 450;
  ok (light == 3, "no edge at the range's 180 MiB top at tick 8.5 (the fixed rectangle had one)");
#undef X
#undef Y
  cairo_surface_destroy (surf);
  /* the address plot's band follows the pages too */
  surf = draw_plot (s, &st, ML_PLOT_ADDRESS, &v, 560, 364);
  ok (pixel (surf, 410, 364 - 120) == bg && pixel (surf, 310, 364 - 54) == band,
      "address plot: the band is gone from the hole at tick 20.5 (#%06x) and there at tick 15.5 (#%06x)", pixel (surf, 410, 244),
      pixel (surf, 310, 310));
  cairo_surface_destroy (surf);
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

/* ml_active_item_point gives a pixel where the drawing shows the item and
 * the hit test finds it, on a plot whose left edge is not a whole pixel;
 * and no point for a sub-pixel buffer the drawing cannot show (at the
 * stack's bottom edge): tiny (1 B, the longest-lived: the bottom) under
 * big (1000 B) on 100 px, 10 B per px. */
static void
test_active_points (void)
{
  MlTrace *t = load_text ("{\"format\":\"memlens-trace\",\"version\":1,\"alignment\":1}\n"
                          "{\"kind\":\"alloc\",\"id\":1,\"size\":1,\"name\":\"tiny\"}\n"
                          "{\"kind\":\"alloc\",\"id\":2,\"size\":1000,\"name\":\"big\"}\n"
                          "{\"kind\":\"free\",\"id\":2}\n"
                          "{\"kind\":\"free\",\"id\":1}\n", ".jsonl");
  MlBuffers *b = NULL;
  ml_buffers_build (t, 1, &b, NULL);
  static const uint64_t off[] = { 0, 1 };
  MlPlan *p = arena (b, off);
  MlScene *s = NULL;
  ml_scene_new (b, p, NULL, &s, NULL);
  MlStyle st;
  ml_style_init (&st);
  st.plot = ML_PLOT_ACTIVE;
  MlView v;
  ml_scene_view_init_plot (s, ML_PLOT_ACTIVE, &v, 10.4, 5.6, 400, 100);
  ok (s->rank[0] == 0, "tiny lives longest: the bottom of the stack");
  double x = 0, y = 0;
  ok (!ml_active_item_point (s, &v, 0, &x, &y), "tiny is a tenth of a pixel at the bottom edge: no point (got %.2f, %.2f)", x, y);
  bool vis = ml_active_item_point (s, &v, 1, &x, &y);
  ok (vis && ml_active_hit (s, &v, floor (x), floor (y)) == 1, "big: its point (%.2f, %.2f), at whole pixels, hits it", x, y);
  cairo_surface_t *surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 420, 110);
  cairo_t *cr = cairo_create (surf);
  ml_timeline_draw_layout (cr, &v, s, &st);
  cairo_destroy (cr);
  uint32_t cb = rgb_of (ml_style_class_color (&st, s->items[1].cls[ML_COLOR_BY_SITE]));
  ok (vis && pixel (surf, (int) x, (int) y) == cb, "and the picture there is big's colour (#%06x, want #%06x)",
      pixel (surf, (int) x, (int) y), cb);
  cairo_surface_destroy (surf);
  ml_scene_free (s);
  ml_plan_free (p);
  ml_buffers_free (b);
  ml_trace_free (t);
}

int
main (int argc, char **argv)
{
  if (argc > 1)
    root = argv[1];
  test_oom_request ();
  test_paged_segments ();
  test_active_points ();
  test_stages ();
  test_curve_labels ();
  test_real_time ();
  test_view ();
  test_short_label ();
  test_axis ();
  test_scene ();
  test_lod ();
  test_active ();
  test_files ();
  return tap_done ();
}
