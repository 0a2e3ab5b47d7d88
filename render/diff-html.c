/* diff-html.c — the diff report page (see diff-html.h). */
#include "render/diff-html.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/report-html.h"
#include "render/timeline.h"
#include "sim/base/io.h"
#include "sim/base/units.h"

#ifndef MEMLENS_VERSION
#define MEMLENS_VERSION "0.1"
#endif

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s ? s + 1 : path;
}

/* One run's active memory on the shared @range, inline. */
static int
figure (FILE *fp, const MlDiffSide *side, const char *label, const MlView *range, const char *prefix, MlError *err)
{
  MlScene *scene = NULL;
  MlSceneOptions so = { .name = base_name (side->path) };
  int rc = ml_scene_new (side->bufs, side->plan, &so, &scene, err);
  if (rc < 0)
    return rc;
  MlStyle st;
  ml_style_init (&st);
  st.plot = ML_PLOT_ACTIVE;
  st.show_frag = false;
  char title[512];
  snprintf (title, sizeof title, "%s: %s", label, base_name (side->path));
  st.title = title;
  char *svg = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&svg, &len);
  if (!mem)
    {
      ml_scene_free (scene);
      return ml_error_set (err, ML_ENOMEM, "out of memory for a figure");
    }
  rc = ml_render_figure_write (mem, ML_RENDER_SVG, scene, &st, 1600, 620, range, err);
  fclose (mem);
  ml_scene_free (scene);
  if (rc == 0)
    {
      fputs ("<figure class=\"linked\">", fp);
      ml_html_inline_svg (fp, svg, prefix);
      fputs ("</figure>\n", fp);
    }
  free (svg);
  return rc;
}

/* Zoom and pan the two figures together: both show the same part of
 * their (equal) picture, so the same x is the same tick in both. Wheel:
 * zoom by 1.25 at the pointer (1x to 64x); drag: pan; double-click or the
 * button: all. Plain script, nothing loaded. */
static const char linked_zoom_js[] =
  "<script>\n"
  "(function () {\n"
  "  var svgs = Array.prototype.slice.call(document.querySelectorAll('figure.linked svg'));\n"
  "  if (!svgs.length) return;\n"
  "  var box = svgs[0].getAttribute('viewBox').split(/[ ,]+/).map(Number);\n"
  "  var W = box[2], H = box[3], v = { x: 0, y: 0, w: W, h: H };\n"
  "  function apply() {\n"
  "    svgs.forEach(function (s) { s.setAttribute('viewBox', v.x + ' ' + v.y + ' ' + v.w + ' ' + v.h); });\n"
  "  }\n"
  "  function clamp() {\n"
  "    v.w = Math.min(W, Math.max(W / 64, v.w));\n"
  "    v.h = v.w * H / W;\n"
  "    v.x = Math.min(W - v.w, Math.max(0, v.x));\n"
  "    v.y = Math.min(H - v.h, Math.max(0, v.y));\n"
  "  }\n"
  "  function reset() { v = { x: 0, y: 0, w: W, h: H }; apply(); }\n"
  "  svgs.forEach(function (s) {\n"
  "    var drag = null;\n"
  "    s.addEventListener('wheel', function (e) {\n"
  "      e.preventDefault();\n"
  "      var r = s.getBoundingClientRect();\n"
  "      var px = v.x + (e.clientX - r.left) / r.width * v.w, py = v.y + (e.clientY - r.top) / r.height * v.h;\n"
  "      var f = e.deltaY < 0 ? 1 / 1.25 : 1.25;\n"
  "      f = Math.min(W, Math.max(W / 64, v.w * f)) / v.w;\n"
  "      v.x = px - (px - v.x) * f; v.y = py - (py - v.y) * f; v.w *= f; v.h *= f;\n"
  "      clamp(); apply();\n"
  "    }, { passive: false });\n"
  "    s.addEventListener('pointerdown', function (e) {\n"
  "      drag = { x: e.clientX, y: e.clientY, vx: v.x, vy: v.y };\n"
  "      if (s.setPointerCapture) s.setPointerCapture(e.pointerId);\n"
  "    });\n"
  "    s.addEventListener('pointermove', function (e) {\n"
  "      if (!drag) return;\n"
  "      var r = s.getBoundingClientRect();\n"
  "      v.x = drag.vx - (e.clientX - drag.x) / r.width * v.w;\n"
  "      v.y = drag.vy - (e.clientY - drag.y) / r.height * v.h;\n"
  "      clamp(); apply();\n"
  "    });\n"
  "    s.addEventListener('pointerup', function () { drag = null; });\n"
  "    s.addEventListener('dblclick', reset);\n"
  "  });\n"
  "  var b = document.getElementById('zoom-reset');\n"
  "  if (b) b.addEventListener('click', reset);\n"
  "})();\n"
  "</script>\n";

static void
signed_size (int64_t v, char *buf, size_t len)
{
  char s[32];
  ml_format_size ((uint64_t) (v < 0 ? -v : v), s, sizeof s);
  snprintf (buf, len, "%s%s", v > 0 ? "+" : v < 0 ? "−" : "", s);
}

int
ml_diff_write_html (FILE *fp, const MlDiff *d, const MlDiffSide *a, const MlDiffSide *b, MlError *err)
{
  char x[32], y[32], z[48];
  fputs ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>memlens diff: ", fp);
  ml_html_escape (fp, base_name (a->path));
  fputs (" vs ", fp);
  ml_html_escape (fp, base_name (b->path));
  fprintf (fp, "</title>\n<meta name=\"generator\" content=\"memlens %s\"/><style>\n%s"
               "figure.linked svg{cursor:grab;touch-action:none;user-select:none}\n</style></head>\n<body><main>\n",
           MEMLENS_VERSION, ml_html_css);
  fputs ("<h1>Two runs compared</h1>\n<p class=\"sub\">A: <code>", fp);
  ml_html_escape (fp, a->path);
  fputs ("</code><br/>B: <code>", fp);
  ml_html_escape (fp, b->path);
  fputs ("</code></p>\n", fp);
  int64_t change = (int64_t) d->b_peak - (int64_t) d->a_peak;
  signed_size (change, z, sizeof z);
  fprintf (fp, "<div class=\"cards\"><div class=\"card\"><div class=\"k\">A's peak</div><div class=\"v\" data-bytes=\"%" PRIu64
               "\">%s</div><div class=\"n\">at tick %" PRIu64 "</div></div>\n",
           d->a_peak, ml_format_size (d->a_peak, x, sizeof x), d->a_peak_tick);
  fprintf (fp, "<div class=\"card\"><div class=\"k\">B's peak</div><div class=\"v\" data-bytes=\"%" PRIu64
               "\">%s</div><div class=\"n\">at tick %" PRIu64 "</div></div>\n",
           d->b_peak, ml_format_size (d->b_peak, y, sizeof y), d->b_peak_tick);
  fprintf (fp, "<div class=\"card\"><div class=\"k\">change</div><div class=\"v %s\" data-change=\"%" PRId64 "\">%s</div>"
               "<div class=\"n\">%s</div></div></div>\n",
           change > 0 ? "bad" : change < 0 ? "good" : "", change, z,
           d->anchors ? "allocations paired between the marks both runs share" : "allocations paired by order per call site");
  /* one time and byte scale for both */
  MlView range;
  double tmax = (double) (d->a_end > d->b_end ? d->a_end : d->b_end);
  double amax = (double) (d->a_peak > d->b_peak ? d->a_peak : d->b_peak);
  ml_view_init (&range, 0, tmax > 0 ? tmax : 1, 0, amax > 0 ? amax : 1, 0, 0, 1600, 620);
  fputs ("<h2>Active memory, one scale</h2>\n", fp);
  int rc = figure (fp, a, "A", &range, "a", err);
  if (rc == 0)
    rc = figure (fp, b, "B", &range, "b", err);
  if (rc < 0)
    return rc;
  fputs ("<p class=\"why\">The live buffers stacked over time, the longest-lived at the bottom, on the same "
         "ticks and bytes for both runs. Scroll over either to zoom both at the pointer, drag to pan both, "
         "double-click (or <button type=\"button\" id=\"zoom-reset\">Reset zoom</button>) to see all.</p>\n", fp);
  fputs (linked_zoom_js, fp);
  fputs ("<h2>Per call site, at each run's peak</h2>\n<table><tr><th>call site</th><th class=\"r\">at A's peak</th>"
         "<th class=\"r\">at B's peak</th><th class=\"r\">change</th><th class=\"r\">allocations A → B</th>"
         "<th class=\"r\">resized</th><th></th></tr>\n", fp);
  for (size_t i = 0; i < d->n_rows; i++)
    {
      const MlDiffRow *r = &d->rows[i];
      signed_size (r->change, z, sizeof z);
      fprintf (fp, "<tr data-site=\"");
      ml_html_escape (fp, r->site);
      fprintf (fp, "\" data-a=\"%" PRIu64 "\" data-b=\"%" PRIu64 "\" data-change=\"%" PRId64 "\"><td><code>", r->a_bytes,
               r->b_bytes, r->change);
      ml_html_escape (fp, r->site);
      fprintf (fp, "</code></td><td class=\"r\">%s</td><td class=\"r\">%s</td><td class=\"r %s\">%s</td>"
                   "<td class=\"r\">%zu → %zu</td><td class=\"r\">%zu</td><td>%s</td></tr>\n",
               ml_format_size (r->a_bytes, x, sizeof x), ml_format_size (r->b_bytes, y, sizeof y),
               r->change > 0 ? "bad" : r->change < 0 ? "good" : "", z, r->a_allocs, r->b_allocs, r->resized,
               r->status == ML_DIFF_NEW ? "new in B" : r->status == ML_DIFF_GONE ? "gone in B" : "");
    }
  fprintf (fp, "</table>\n<footer>memlens %s</footer>\n</main></body></html>\n", MEMLENS_VERSION);
  return ferror (fp) ? ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO)) : 0;
}

int
ml_diff_write_html_file (const char *path, const MlDiff *d, const MlDiffSide *a, const MlDiffSide *b, MlError *err)
{
  MlOut *out = ml_out_open (path, err);
  if (!out)
    return err && err->code ? err->code : ML_EIO;
  int rc = ml_diff_write_html (ml_out_file (out), d, a, b, err);
  if (rc < 0)
    {
      ml_out_abort (out);
      return ml_error_prefix (err, "%s", strcmp (path, "-") ? path : "stdout");
    }
  return ml_out_commit (out, err);
}
