/* html.c — the HTML writer of documents (see html.h). */
#include "render/html.h"

#include <stdlib.h>
#include <string.h>

#include "render/page.h"
#include "render/scene.h"
#include "render/ranks.h"
#include "render/series.h"
#include "render/timeline.h"
#include "sim/base/utf8.h"

void
ml_xml_escape (FILE *fp, const char *s)
{
  for (; s && *s; s++)
    switch (*s)
      {
      case '<': fputs ("&lt;", fp); break;
      case '>': fputs ("&gt;", fp); break;
      case '&': fputs ("&amp;", fp); break;
      case '"': fputs ("&quot;", fp); break;
      default:
        if ((unsigned char) *s < 0x80)
          fputc (*s, fp);
        else
          {
            /* valid UTF-8 out: a byte that starts no sequence is U+FFFD */
            size_t k = ml_utf8_seq ((const unsigned char *) s, strnlen (s, 4));
            if (k)
              fwrite (s, 1, k, fp), s += k - 1;
            else
              fputs (ML_UTF8_REPLACEMENT, fp);
          }
      }
}

static void
esc (FILE *fp, const char *s)
{
  ml_xml_escape (fp, s);
}

static const char css[] =
  "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;color:#222;margin:0;background:#f6f6f7}\n"
  "main{max-width:1240px;margin:0 auto;padding:24px 28px 48px;background:#fff}\n"
  "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:32px 0 10px;border-bottom:1px solid #e3e3e6;padding-bottom:4px}\n"
  "h3{font-size:14px;margin:18px 0 6px}.sub{color:#666;margin:0 0 18px}\n"
  ".cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0 8px}\n"
  ".card{flex:1 1 170px;border:1px solid #e3e3e6;border-radius:6px;padding:10px 12px}\n"
  ".card .k{color:#666;font-size:12px}.card .v{font-size:20px;font-weight:600}.card .n{color:#666;font-size:12px}\n"
  ".bad{color:#c0161a}.good{color:#2e7d32}\n"
  "table{border-collapse:collapse;width:100%;margin:6px 0 10px}th,td{padding:4px 8px;border-bottom:1px solid #ececef;text-align:left;vertical-align:top}\n"
  "th{font-weight:600;color:#444;background:#fafafb}td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}\n"
  "tr.best td{background:#f1f7ee}\n"
  ".bar{position:relative;height:10px;background:#eef0f4;border-radius:2px;min-width:120px}\n"
  ".bar i{position:absolute;left:0;top:0;bottom:0;background:#4e79a7;border-radius:2px}\n"
  ".bar b{position:absolute;top:-3px;bottom:-3px;width:2px;background:#222}\n"
  "figure{margin:10px 0 18px}figure svg{width:100%;height:auto;border:1px solid #e3e3e6}\n"
  "figcaption{color:#666;font-size:12px;margin-top:4px}code{font-size:12px}\n"
  ".why{color:#444;font-size:12px}footer{color:#888;font-size:12px;margin-top:36px}\n";

static const char linked_css[] = "figure.linked svg{cursor:grab;touch-action:none;user-select:none}\n";

/* Zoom and pan the linked figures together: all show the same part of
 * their (equal) picture, so the same x is the same tick in each. Wheel:
 * zoom by 1.25 at the pointer (1x to 64x); drag: pan; double-click or the
 * button: all. Plain script, nothing loaded; its text is CDATA, so the
 * page stays well-formed XML. */
static const char linked_zoom_js[] =
  "<script>\n"
  "//<![CDATA[\n"
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
  "//]]>\n"
  "</script>\n";

static const char *
tone_class (MlDocTone tone)
{
  return tone == ML_DOC_TONE_GOOD ? "good" : tone == ML_DOC_TONE_BAD ? "bad" : tone == ML_DOC_TONE_MUTED ? "why" : NULL;
}

static void
html_inline (FILE *fp, const MlDocText *in)
{
  for (const MlDocRun *r = in->first; r; r = r->next)
    {
      const char *cls = tone_class (r->tone);
      switch (r->kind)
        {
        case ML_DOC_RUN_TEXT:
          esc (fp, r->text);
          break;
        case ML_DOC_RUN_CODE:
          fputs ("<code>", fp);
          esc (fp, r->text);
          fputs ("</code>", fp);
          break;
        case ML_DOC_RUN_STRONG:
          fprintf (fp, cls ? "<b class=\"%s\">" : "<b>", cls);
          esc (fp, r->text);
          fputs ("</b>", fp);
          break;
        case ML_DOC_RUN_BADGE:
          fprintf (fp, cls ? " <span class=\"%s\">" : " <span>", cls);
          esc (fp, r->text);
          fputs ("</span>", fp);
          break;
        case ML_DOC_RUN_BREAK:
          fputs ("<br/>", fp);
          break;
        }
    }
}

static void
html_attrs (FILE *fp, const MlDocAttr *a)
{
  for (; a; a = a->next)
    {
      fprintf (fp, " %s=\"", a->name);
      esc (fp, a->value);
      fputc ('"', fp);
    }
}

/* Copies the SVG document @svg into @fp as inline SVG (no XML prolog),
 * its ids and the references to them prefixed with @prefix so that
 * several figures can share a page. */
static void
inline_svg (FILE *fp, const char *svg, const char *prefix)
{
  const char *p = svg;
  if (strncmp (p, "<?xml", 5) == 0)
    {
      const char *e = strstr (p, "?>");
      p = e ? e + 2 : p;
      while (*p == '\n' || *p == '\r')
        p++;
    }
  while (*p)
    {
      if (strncmp (p, "id=\"", 4) == 0)
        {
          fprintf (fp, "id=\"%s-", prefix);
          p += 4;
        }
      else if (strncmp (p, "href=\"#", 7) == 0)
        {
          fprintf (fp, "href=\"#%s-", prefix);
          p += 7;
        }
      else if (strncmp (p, "url(#", 5) == 0)
        {
          fprintf (fp, "url(#%s-", prefix);
          p += 5;
        }
      else
        {
          const char *q = p + 1;
          while (*q && *q != 'i' && *q != 'h' && *q != 'u')
            q++;
          fwrite (p, 1, (size_t) (q - p), fp);
          p = q;
        }
    }
}

/* Draws @f as SVG into a string (the caller frees *@svg). */
static int
figure_svg (const MlDocFigure *f, const MlStyle *page, char **svg, MlError *err)
{
  MlScene *scene = NULL;
  MlSceneOptions so = { .name = f->name, .issues = f->issues };
  int rc = ml_scene_new (f->bufs, f->plan, &so, &scene, err);
  if (rc < 0)
    return rc;
  MlStyle st = *page;
  if (f->view == ML_DOC_FIGURE_ACTIVE)
    st.plot = ML_PLOT_ACTIVE;
  if (f->no_frag)
    st.show_frag = false;
  if (f->title)
    st.title = f->title;
  MlView range;
  if (f->t_max > 0)
    ml_view_init (&range, 0, f->t_max, 0, f->a_max > 0 ? f->a_max : 1, 0, 0, f->width, f->height);
  size_t len = 0;
  FILE *mem = open_memstream (svg, &len);
  if (!mem)
    {
      ml_scene_free (scene);
      return ml_error_set (err, ML_ENOMEM, "out of memory for a figure");
    }
  rc = ml_render_figure_write (mem, ML_RENDER_SVG, scene, &st, f->width, f->height, f->t_max > 0 ? &range : NULL, err);
  fclose (mem);
  ml_scene_free (scene);
  if (rc < 0)
    {
      free (*svg);
      *svg = NULL;
    }
  return rc;
}

static void
draw_series (cairo_t *cr, int width, int height, void *data)
{
  const MlDocFigure *f = ((const void *const *) data)[0];
  ml_render_series (cr, f->series, f->n_series, f->y_line, f->y_line_label, width, height, ((const void *const *) data)[1]);
}

/* A figure drawn by @draw as SVG: <figure>, the data elements @head
 * writes after it (for scripts and tests), the SVG, the caption. */
static int
drawn_figure (FILE *fp, const MlDocFigure *f, const MlStyle *page, void (*draw) (cairo_t *, int, int, void *),
              void (*head) (FILE *, const MlDocFigure *), const char *prefix, MlError *err)
{
  char *svg = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&svg, &len);
  if (!mem)
    return ml_error_set (err, ML_ENOMEM, "out of memory for a figure");
  const void *data[2] = { f, page };
  int rc = ml_render_write (mem, ML_RENDER_SVG, f->width, f->height, draw, data, err);
  fclose (mem);
  if (rc == 0)
    {
      head (fp, f);
      inline_svg (fp, svg, f->prefix ? f->prefix : prefix);
      if (!ml_doc_text_empty (&f->caption))
        {
          fputs ("<figcaption>", fp);
          html_inline (fp, &f->caption);
          fputs ("</figcaption>", fp);
        }
      fputs ("</figure>\n", fp);
    }
  free (svg);
  return rc;
}

/* A SERIES figure: its curves named in data elements (label, points,
 * highest value). */
static void
series_head (FILE *fp, const MlDocFigure *f)
{
  fprintf (fp, "<figure data-series=\"%zu\" data-line=\"%llu\">", f->n_series, (unsigned long long) f->y_line);
  for (size_t k = 0; k < f->n_series; k++)
    {
      uint64_t top = 0;
      for (size_t i = 0; i < f->series[k].n; i++)
        top = f->series[k].y[i] > top ? f->series[k].y[i] : top;
      fprintf (fp, "<data hidden=\"hidden\" value=\"%llu\" data-points=\"%zu\">", (unsigned long long) top, f->series[k].n);
      esc (fp, f->series[k].label);
      fputs ("</data>", fp);
    }
}

static void
draw_ranks (cairo_t *cr, int width, int height, void *data)
{
  const MlDocFigure *f = ((const void *const *) data)[0];
  ml_render_ranks (cr, f->ranks, f->n_ranks, width, height, ((const void *const *) data)[1]);
}

/* A RANKS figure: each bar's numbers in data elements (value: peak
 * allocated; data-reserved, data-ooms; the label). */
static void
ranks_head (FILE *fp, const MlDocFigure *f)
{
  fprintf (fp, "<figure data-ranks=\"%zu\">", f->n_ranks);
  for (size_t k = 0; k < f->n_ranks; k++)
    {
      const MlDocRankBar *r = &f->ranks[k];
      fprintf (fp, "<data hidden=\"hidden\" value=\"%llu\" data-reserved=\"%llu\" data-ooms=\"%u\">",
               (unsigned long long) r->allocated, (unsigned long long) r->reserved, r->ooms);
      esc (fp, r->label ? r->label : "");
      fputs ("</data>", fp);
    }
}

/* An interactive figure (page.h), captioned with how to use it (the
 * doc's caption describes the static picture's panels, which it has
 * not). */
static int
html_page_figure (FILE *fp, const MlDocFigure *f, int index, MlError *err)
{
  int rc = ml_page_figure (fp, f, index, err);
  if (rc < 0)
    return rc;
  fputs ("<figcaption>", fp);
  esc (fp, ml_page_howto);
  fputs ("</figcaption>\n</figure>\n", fp);
  return 0;
}

static int
html_figure (FILE *fp, const MlDocFigure *f, const MlStyle *page, MlError *err)
{
  if (f->view == ML_DOC_FIGURE_SERIES)
    return drawn_figure (fp, f, page, draw_series, series_head, "s", err);
  if (f->view == ML_DOC_FIGURE_RANKS)
    return drawn_figure (fp, f, page, draw_ranks, ranks_head, "r", err);
  char *svg = NULL;
  int rc = figure_svg (f, page, &svg, err);
  if (rc < 0)
    return rc;
  fputs (f->linked ? "<figure class=\"linked\">" : "<figure>", fp);
  inline_svg (fp, svg, f->prefix ? f->prefix : "f");
  free (svg);
  if (!ml_doc_text_empty (&f->caption))
    {
      fputs ("<figcaption>", fp);
      html_inline (fp, &f->caption);
      fputs ("</figcaption>", fp);
    }
  fputs ("</figure>\n", fp);
  return 0;
}

/* How to use linked figures, and the script that links them. */
static void
html_zoom (FILE *fp)
{
  fputs ("<p class=\"why\">Scroll over a figure to zoom them all at the pointer, drag to pan them all, double-click "
         "(or <button type=\"button\" id=\"zoom-reset\">Reset zoom</button>) to see all.</p>\n",
         fp);
  fputs (linked_zoom_js, fp);
}

static bool
html_shown (const MlDocColumn *c)
{
  return c->flags & (ML_DOC_COL_SHOW | ML_DOC_COL_BAR);
}

static void
html_cell (FILE *fp, const MlDocColumn *col, const MlDocCell *cell, size_t span)
{
  const char *tone = tone_class (cell->tone);
  bool right = span == 1 && (col->flags & ML_DOC_COL_RIGHT);
  fputs ("<td", fp);
  if (span > 1)
    fprintf (fp, " colspan=\"%zu\"", span);
  if (right || tone)
    fprintf (fp, " class=\"%s%s%s\"", right ? "r" : "", right && tone ? " " : "", tone ? tone : "");
  if (cell->hint)
    {
      fputs (" title=\"", fp);
      esc (fp, cell->hint);
      fputc ('"', fp);
    }
  fputc ('>', fp);
  if (cell->has_bar)
    fprintf (fp, "<div class=\"bar\" title=\"lower bound at the black line\"><i style=\"width:%.1f%%\"></i>"
                 "<b style=\"left:%.1f%%\"></b></div>",
             cell->bar, cell->mark);
  else
    html_inline (fp, &cell->text);
  fputs ("</td>", fp);
}

static void
html_table (FILE *fp, const MlDocTable *t)
{
  fputs ("<table", fp);
  if (t->id)
    fprintf (fp, " id=\"%s\"", t->id);
  if (t->cls)
    fprintf (fp, " class=\"%s\"", t->cls);
  fputc ('>', fp);
  if (!t->no_header)
    {
      fputs ("<thead><tr>", fp);
      for (size_t c = 0; c < t->n_cols; c++)
        if (html_shown (&t->cols[c]))
          {
            fputs (t->cols[c].flags & ML_DOC_COL_RIGHT ? "<th class=\"r\">" : "<th>", fp);
            esc (fp, t->cols[c].label);
            fputs ("</th>", fp);
          }
      fputs ("</tr></thead>", fp);
    }
  fputs ("<tbody>\n", fp);
  for (const MlDocRow *r = t->rows; r; r = r->next)
    {
      fputs (r->highlight ? "<tr class=\"best\"" : "<tr", fp);
      html_attrs (fp, r->attrs);
      fputc ('>', fp);
      for (size_t c = 0; c < t->n_cols; c++)
        {
          if (!html_shown (&t->cols[c]))
            continue;
          size_t n = ml_doc_span (t, c, r->cells[c].span, ML_DOC_COL_SHOW | ML_DOC_COL_BAR);
          html_cell (fp, &t->cols[c], &r->cells[c], n);
          /* skip the columns the cell covers */
          for (size_t left = n - 1; left && ++c < t->n_cols;)
            left -= html_shown (&t->cols[c]);
        }
      fputs ("</tr>\n", fp);
    }
  fputs ("</tbody></table>\n", fp);
  unsigned shown = ML_DOC_COL_SHOW | ML_DOC_COL_BAR;
  if (ml_doc_table_has_note (t, shown))
    {
      fputs ("<p class=\"why\">", fp);
      html_inline (fp, &t->note);
      for (size_t c = 0; c < t->n_cols; c++)
        if ((t->cols[c].flags & shown) && t->cols[c].note)
          {
            fputc (' ', fp);
            esc (fp, t->cols[c].note);
          }
      fputs ("</p>\n", fp);
    }
}

static void
html_cards (FILE *fp, const MlDocCard *c)
{
  fputs ("<div class=\"cards\">", fp);
  for (; c; c = c->next)
    {
      const char *tone = tone_class (c->tone);
      fputs ("<div class=\"card\"><div class=\"k\">", fp);
      esc (fp, c->label);
      fprintf (fp, "</div><div class=\"v%s%s\"", tone ? " " : "", tone ? tone : "");
      html_attrs (fp, c->attrs);
      fputc ('>', fp);
      esc (fp, c->value);
      fputs ("</div><div class=\"n\">", fp);
      esc (fp, c->note);
      fputs ("</div></div>", fp);
    }
  fputs ("</div>\n", fp);
}

static const char *
para_class (const MlDocBlock *b)
{
  if (b->para == ML_DOC_PARA_LEAD)
    return "sub";
  if (b->para == ML_DOC_PARA_NOTE)
    return "why";
  return tone_class (b->tone);
}

/* What writing a page needs besides the document. */
typedef struct {
  const MlStyle *style;
  bool           interactive;
  int            n_pages;  /* interactive figures written so far */
} Page;

static int
html_block (FILE *fp, const MlDocBlock *b, Page *pg, MlError *err)
{
  const MlStyle *style = pg->style;
  const char *cls;
  switch (b->kind)
    {
    case ML_DOC_BLOCK_HEADING:
      fprintf (fp, "<h%d>", b->level);
      html_inline (fp, &b->text);
      fprintf (fp, "</h%d>\n", b->level);
      break;
    case ML_DOC_BLOCK_PARA:
      cls = para_class (b);
      fprintf (fp, cls ? "<p class=\"%s\">" : "<p>", cls);
      html_inline (fp, &b->text);
      fputs ("</p>\n", fp);
      break;
    case ML_DOC_BLOCK_CARDS:
      html_cards (fp, b->cards);
      break;
    case ML_DOC_BLOCK_TABLE:
      html_table (fp, b->table);
      break;
    case ML_DOC_BLOCK_FIGURE:
      if (pg->interactive && ml_page_draws (b->figure))
        {
          if (html_page_figure (fp, b->figure, ++pg->n_pages, err) < 0)
            return err && err->code ? err->code : ML_EIO;
          break;
        }
      if (html_figure (fp, b->figure, style, err) < 0)
        return err && err->code ? err->code : ML_EIO;
      /* after the last of a group of linked figures: how to use them */
      if (b->figure->linked && !(b->next && b->next->kind == ML_DOC_BLOCK_FIGURE && b->next->figure->linked))
        html_zoom (fp);
      break;
    }
  return 0;
}

static bool
has_linked (const MlDoc *doc, bool interactive)
{
  for (const MlDocBlock *b = doc->blocks; b; b = b->next)
    if (b->kind == ML_DOC_BLOCK_FIGURE && b->figure->linked && !(interactive && ml_page_draws (b->figure)))
      return true;
  return false;
}

/* The page's policy: nothing from anywhere, its own scripts and styles. */
static const char csp[] = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                          "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\"/>";

int
ml_doc_write_html_with (const MlDoc *doc, FILE *fp, const MlHtmlOptions *opts, MlError *err)
{
  MlStyle style;
  if (opts && opts->style)
    style = *opts->style;
  else
    ml_style_init (&style);
  Page pg = { .style = &style, .interactive = opts && opts->interactive };
  bool script = has_linked (doc, pg.interactive);
  fputs ("<!DOCTYPE html>\n<html lang=\"en\" xmlns=\"http://www.w3.org/1999/xhtml\"><head><meta charset=\"utf-8\"/>", fp);
  fputs (csp, fp);
  fputs ("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"/><title>", fp);
  esc (fp, doc->title);
  fputs ("</title>\n<meta name=\"generator\" content=\"", fp);
  esc (fp, doc->generator);
  fprintf (fp, "\"/><style>\n%s%s%s</style></head>\n<body><main>\n", css, script ? linked_css : "",
           pg.interactive ? ml_page_css : "");
  for (const MlDocBlock *b = doc->blocks; b; b = b->next)
    {
      int rc = html_block (fp, b, &pg, err);
      if (rc < 0)
        return rc;
    }
  fputs ("<footer>", fp);
  html_inline (fp, &doc->footer);
  if (!script && !pg.n_pages)
    fputs (" · this file is self-contained (no scripts, no network)", fp);
  else
    fputs (" · this file is self-contained (its scripts and data are inline; nothing is loaded)", fp);
  fputs ("</footer>\n", fp);
  if (pg.n_pages)
    ml_page_script (fp);
  fputs ("</main></body></html>\n", fp);
  return ml_doc_finish (fp, err);
}

int
ml_doc_write_html (const MlDoc *doc, FILE *fp, const MlStyle *style, MlError *err)
{
  MlHtmlOptions opts = { .style = style };
  return ml_doc_write_html_with (doc, fp, &opts, err);
}

int
ml_doc_save_html (const MlDoc *doc, FILE *fp, const void *style, MlError *err)
{
  return ml_doc_write_html (doc, fp, style, err);
}

int
ml_doc_save_html_with (const MlDoc *doc, FILE *fp, const void *opts, MlError *err)
{
  return ml_doc_write_html_with (doc, fp, opts, err);
}
