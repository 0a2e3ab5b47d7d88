/* page.c — the interactive figures of the HTML page (see page.h). */
#include "render/page.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/page-js.h"
#include "render/page-private.h"
#include "render/scene.h"

const char ml_page_css[] =
  "figure.ml-page{position:relative}\n"
  ".ml-bar{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:0 0 6px;font-size:12px}\n"
  ".ml-bar input{width:26em;font:inherit}.ml-bar select.ml-color{max-width:15em}.ml-bar .ml-range,.ml-bar .ml-found{color:#555}.ml-bar .ml-found{color:#c0161a}\n"
  "canvas.ml-canvas{display:block;box-sizing:border-box;width:100%;height:480px;border:1px solid #e3e3e6;cursor:grab;touch-action:none}\n"
  "canvas.ml-curves{display:block;box-sizing:border-box;width:100%;height:150px;border:1px solid #e3e3e6;border-top:0;"
  "cursor:crosshair;touch-action:none}\n"
  ".ml-legend{display:flex;flex-wrap:wrap;gap:2px 12px;font-size:12px;margin:0 0 4px;color:#444}"
  ".ml-legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px}\n"
  ".ml-panels{display:grid;grid-template-columns:1fr 1fr 1fr;gap:14px;margin-top:8px;font-size:12px}"
  ".ml-panels h4{margin:0 0 4px;font-size:13px}.ml-panels section{min-width:0}"
  ".ml-panels p{margin:2px 0}.ml-panels ol,.ml-panels ul{margin:0;padding-left:18px}.ml-panels li{margin:2px 0;overflow-wrap:anywhere}\n"
  ".ml-panels button.ml-peak{font:inherit;text-align:left;border:0;background:none;padding:0;color:#1a56a8;cursor:pointer}"
  ".ml-bandhead{font-weight:bold;margin:8px 0 2px;border-top:1px dashed #999;padding-top:4px}.ml-hint{color:#666;margin:0}.ml-blocks,.ml-peaks ol{max-height:320px;overflow:auto}.ml-frames{max-height:320px;overflow:auto;"
  "font-family:monospace;font-size:11px}\n"
  ".ml-tip{position:absolute;pointer-events:none;background:#fff;border:1px solid #999;border-radius:4px;"
  "padding:4px 8px;font-size:12px;white-space:pre;box-shadow:0 1px 4px rgba(0,0,0,.2);max-width:60em;overflow:hidden}\n";

const char ml_page_howto[] =
  "Address × time: each buffer where the plan put it, coloured by call site, stream, kind, or the compile_context or user_metadata of its "
  "allocation (the select), the "
  "segments of each memory pool and stream in a band of their own (dashed lines, labelled; hover names a band); buffers "
  "smaller than a pixel are pooled into it, its opacity the share of it they cover; a red line marks an OOM. Active "
  "memory: each pixel column stacks the buffers live at the tick in its middle, the longest-lived at the bottom. "
  "Below: live and reserved bytes and fragmentation over time, the peaks marked. Wheel: zoom time at the pointer "
  "(Shift+wheel: bytes); drag: pan; drag along the time axis or the curves: zoom to that range; Fit or "
  "double-click: all of it. Hover a buffer for its bytes, call site, lifetime, stream and annotate texts; click it for its whole "
  "stack; click the time axis or the curves for the segments and blocks at that tick; click a peak to zoom to it; "
  "search by call-site or annotation text or by address (the buffers that held it).";

bool
ml_page_draws (const MlDocFigure *f)
{
  return (f->view == ML_DOC_FIGURE_LAYOUT || f->view == ML_DOC_FIGURE_ACTIVE) && f->bufs && f->plan;
}

/* ---- the columns ----------------------------------------------------------------- */

/* (then one column of colour classes per colouring: "cls_site", ...) */
typedef enum {
  COL_START, COL_END, COL_ADDR, COL_SIZE, COL_PLACE, COL_SITE, COL_STREAM, COL_BUFFER, COL_RANK, COL_STACK,
  COL__COUNT
} Column;

static const char *const col_names[COL__COUNT] = { "start", "end",    "addr",   "size", "place",
                                                   "site",  "stream", "buffer", "rank", "stack" };

typedef struct {
  const MlScene *s;
  uint32_t      *site;   /* per item: index in the site table */
  uint32_t      *stack;  /* per item: index in the stack table (page-panels.c) */
  const char   **sites;  /* the site table's labels */
  size_t         n_sites;
  bool           ticks32;
} Data;

/* The call site a buffer is coloured and labelled by (as the scene's
 * site colouring): its stack's site, else its name; 0 = none. */
static uint32_t
site_key (const MlBuffers *bufs, const MlBuffer *b)
{
  const MlTrace *t = bufs->trace;
  if (t && b->stack && b->stack < t->n_stacks && t->stacks[b->stack].site)
    return t->stacks[b->stack].site;
  return b->name;
}

/* The site table: each distinct key once, in order of first use; slot 0
 * is "(no call site)". */
static int
data_sites (Data *d, MlError *err)
{
  const MlScene *s = d->s;
  uint32_t top = 0;
  for (size_t i = 0; i < s->n_items; i++)
    {
      uint32_t k = site_key (s->bufs, &s->bufs->buf[s->items[i].buffer]);
      top = k > top ? k : top;
    }
  uint32_t *slot = calloc ((size_t) top + 1, sizeof *slot);
  d->site = malloc ((s->n_items ? s->n_items : 1) * sizeof *d->site);
  d->sites = malloc (((size_t) top + 2) * sizeof *d->sites);
  if (!slot || !d->site || !d->sites)
    {
      free (slot);
      return ml_error_set (err, ML_ENOMEM, "out of memory for the page's call sites");
    }
  d->sites[0] = "(no call site)";
  d->n_sites = 1;
  for (size_t i = 0; i < s->n_items; i++)
    {
      uint32_t k = site_key (s->bufs, &s->bufs->buf[s->items[i].buffer]);
      const char *label = k && s->bufs->trace ? ml_trace_str (s->bufs->trace, k) : NULL;
      if (!label || !*label)
        d->site[i] = 0;
      else
        {
          if (!slot[k])
            {
              slot[k] = (uint32_t) d->n_sites;
              d->sites[d->n_sites++] = label;
            }
          d->site[i] = slot[k];
        }
    }
  free (slot);
  return 0;
}

/* The plan's address of item @i (its segment's base + offset), 0 when
 * the segment has no address. */
static uint64_t
place_of (const MlScene *s, size_t i)
{
  uint32_t b = s->items[i].buffer;
  const MlSegment *seg = &s->plan->segments[s->plan->segment[b]];
  return seg->addr ? seg->addr + s->plan->offset[b] : 0;
}

static void
put_column (MlB64 *b, const Data *d, Column c)
{
  const MlScene *s = d->s;
  for (size_t i = 0; i < s->n_items; i++)
    {
      const MlSceneItem *it = &s->items[i];
      switch (c)
        {
        case COL_START: d->ticks32 ? _ml_b64_u32 (b, (uint32_t) it->start) : _ml_b64_f64 (b, (double) it->start); break;
        case COL_END: d->ticks32 ? _ml_b64_u32 (b, (uint32_t) it->end) : _ml_b64_f64 (b, (double) it->end); break;
        case COL_ADDR: _ml_b64_f64 (b, (double) it->addr); break;
        case COL_SIZE: _ml_b64_f64 (b, (double) it->size); break;
        case COL_PLACE: _ml_b64_f64 (b, (double) place_of (s, i)); break;
        case COL_SITE: _ml_b64_u32 (b, d->site[i]); break;
        case COL_STREAM: _ml_b64_u32 (b, s->bufs->buf[it->buffer].stream); break;
        case COL_BUFFER: _ml_b64_u32 (b, it->buffer); break;
        case COL_RANK: _ml_b64_u32 (b, s->rank[i]); break;
        case COL_STACK: _ml_b64_u32 (b, d->stack[i]); break;
        case COL__COUNT: break;
        }
    }
  _ml_b64_end (b);
}

/* The items whose bytes or plan address pass 2^53, which the Float64
 * columns round: their exact values as decimal strings, [item, bytes,
 * address], for the page to show (an address above 2^53 is a 64-bit
 * pointer with its top bits set; real devices' are below 2^48). */
static void
put_wide (FILE *fp, const MlScene *s)
{
  const uint64_t exact = UINT64_C (1) << 53;
  fputs (",\"wide\":[", fp);
  bool first = true;
  for (size_t i = 0; i < s->n_items; i++)
    {
      uint64_t size = s->items[i].size, place = place_of (s, i);
      if (size <= exact && place <= exact)
        continue;
      fprintf (fp, "%s[%zu,\"%" PRIu64 "\",\"%" PRIu64 "\"]", first ? "" : ",", i, size, place);
      first = false;
    }
  fputc (']', fp);
}

static void
put_header (FILE *fp, const MlDocFigure *f, const Data *d)
{
  const MlScene *s = d->s;
  fputs ("{\"name\":", fp);
  _ml_json_str (fp, f->name);
  fputs (",\"plan\":", fp);
  _ml_json_str (fp, s->plan->strategy);
  fputs (",\"title\":", fp);
  _ml_json_str (fp, f->title);
  fprintf (fp, ",\"view\":\"%s\"", f->view == ML_DOC_FIGURE_ACTIVE ? "active" : "address");
  fprintf (fp, ",\"n\":%zu,\"firstTick\":%" PRIu64 ",\"endTick\":%" PRIu64 ",\"extent\":%" PRIu64
               ",\"liveMax\":%" PRIu64 ",\"ticks32\":%s",
           s->n_items, s->first_tick, s->end_tick, ml_scene_extent (s, ML_PLOT_ADDRESS), s->live_max,
           d->ticks32 ? "true" : "false");
  fputs (",\"sites\":[", fp);
  for (size_t k = 0; k < d->n_sites; k++)
    {
      if (k)
        fputc (',', fp);
      _ml_json_str (fp, d->sites[k]);
    }
  /* streams by their dense index, as the trace labels them */
  uint32_t top = 0;
  for (size_t i = 0; i < s->n_items; i++)
    top = s->bufs->buf[s->items[i].buffer].stream > top ? s->bufs->buf[s->items[i].buffer].stream : top;
  fputs ("],\"streams\":[", fp);
  for (uint32_t k = 0; k <= top && s->n_items; k++)
    {
      char label[ML_STREAM_LABEL_MAX];
      fputs (k ? "," : "", fp);
      _ml_json_str (fp, s->bufs->trace ? ml_trace_stream_label (s->bufs->trace, k, label) : "0");
    }
  fputc (']', fp);
  if (f->linked)
    fprintf (fp, ",\"linked\":true,\"tMax\":%.0f,\"aMax\":%.0f", f->t_max, f->a_max);
  if (s->plan->oom.hit)
    {
      /* the refused request, where the static picture draws it (scene.h) */
      const MlOom *o = &s->plan->oom;
      fprintf (fp, ",\"oom\":{\"tick\":%" PRIu64 ",\"request\":", o->tick);
      _ml_json_u64 (fp, o->request);
      fputs (",\"live\":", fp);
      _ml_json_u64 (fp, o->live);
      fputs (",\"reserved\":", fp);
      _ml_json_u64 (fp, o->reserved);
      fprintf (fp, ",\"verdict\":\"%s\",\"drawn\":%s,\"addr\":%" PRIu64 ",\"stack\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
               ml_oom_verdict_name (o->verdict), s->oom_drawn ? "true" : "false", s->oom_addr, s->oom_stack,
               s->oom_bytes);
    }
}

/* The colour classes of each colouring the page offers, a Uint8 column
 * each ("cls_site", ...; none for an empty one). */
static void
put_class_columns (FILE *fp, const MlScene *s)
{
  MlB64 b = { .fp = fp };
  for (int by = 0; by < ML_COLOR_BY__COUNT; by++)
    {
      if (!_ml_page_coloring_offered (s, (MlColorBy) by) || _ml_page_coloring_empty (s, (MlColorBy) by))
        continue;
      fprintf (fp, ",\"cls_%s\":\"", ml_color_by_name ((MlColorBy) by));
      for (size_t i = 0; i < s->n_items; i++)
        _ml_b64_byte (&b, s->items[i].cls[by]);
      _ml_b64_end (&b);
      fputc ('"', fp);
    }
}

/* One option of the colour select: colouring @by of @s. One that puts
 * every buffer in "(none)" is offered disabled and says why: the
 * trace's format records no such field (ml_color_by_check), or this
 * trace has none. */
static void
put_color_option (FILE *fp, const MlScene *s, MlColorBy by)
{
  const char *key = ml_color_by_name (by), *what = by == ML_COLOR_BY_SITE ? "call site" : key;
  const char *why = "";
  if (_ml_page_coloring_empty (s, by))
    why = s->bufs->trace && ml_color_by_check (s->bufs->trace, by, NULL, NULL) < 0 ? " (this format records none)"
                                                                                  : " (none in this trace)";
  fprintf (fp, "<option value=\"%s\"%s>colour by %s%s</option>", key, *why ? " disabled=\"disabled\"" : "", what, why);
}

static void
put_controls (FILE *fp, const MlScene *s, int index)
{
  /* the title (from the data, by the script) */
  fprintf (fp, "<figure class=\"ml-page\" id=\"page-%d\" data-items=\"%zu\">\n<div class=\"ml-bar\"><b class=\"ml-title\"></b> ",
           index, s->n_items);
  fputs ("<select class=\"ml-mode\"><option value=\"address\">address × time</option>"
         "<option value=\"active\">active memory, stacked</option></select><select class=\"ml-color\">",
         fp);
  for (int by = 0; by < ML_COLOR_BY__COUNT; by++)
    if (_ml_page_coloring_offered (s, (MlColorBy) by))
      put_color_option (fp, s, (MlColorBy) by);
  fputs ("</select><button type=\"button\" class=\"ml-fit\">Fit</button>"
         "<input type=\"search\" class=\"ml-search\" placeholder=\"call site or annotation text, or an address\"/>"
         "<span class=\"ml-found\"></span><span class=\"ml-range\"></span></div>\n"
         "<div class=\"ml-legend\"></div>\n"
         "<canvas class=\"ml-canvas\" width=\"1200\" height=\"480\"></canvas>"
         "<canvas class=\"ml-curves\" width=\"1200\" height=\"150\"></canvas>"
         "<div class=\"ml-tip\" hidden=\"hidden\"></div>\n"
         "<div class=\"ml-panels\"><section class=\"ml-peaks\"><h4>Peaks</h4><ol></ol></section>"
         "<section class=\"ml-state\"><h4>At a tick</h4><p class=\"ml-hint\">Click the time axis or the curves "
         "for the segments and blocks at that tick.</p></section>"
         "<section class=\"ml-stack\"><h4>Buffer</h4><p class=\"ml-hint\">Click a buffer for its whole stack.</p>"
         "</section></div>\n",
         fp);
}

int
ml_page_figure (FILE *fp, const MlDocFigure *f, int index, MlError *err)
{
  MlScene *scene = NULL;
  MlSceneOptions so = { .name = f->name, .issues = f->issues, .max_peaks = 10 };
  int rc = ml_scene_new (f->bufs, f->plan, &so, &scene, err);
  if (rc < 0)
    return rc;
  Data d = { .s = scene, .ticks32 = scene->end_tick <= UINT32_MAX };
  d.stack = malloc ((scene->n_items ? scene->n_items : 1) * sizeof *d.stack);
  if (!d.stack)
    rc = ml_error_set (err, ML_ENOMEM, "out of memory for the page's stacks");
  if (rc == 0 && (rc = data_sites (&d, err)) == 0)
    {
      put_controls (fp, scene, index);
      fputs ("<script type=\"application/json\" class=\"ml-data\">", fp);
      put_header (fp, f, &d);
      put_wide (fp, scene);
      rc = _ml_page_panels (fp, scene, d.stack, err);
      if (rc == 0)
        rc = _ml_page_tiles (fp, scene, err);
    }
  if (rc == 0)
    {
      MlB64 b = { .fp = fp };
      for (int c = 0; c < COL__COUNT; c++)
        {
          fprintf (fp, ",\"%s\":\"", col_names[c]);
          put_column (&b, &d, (Column) c);
          fputc ('"', fp);
        }
      put_class_columns (fp, scene);
      fputs ("}</script>\n", fp);
    }
  free (d.site);
  free (d.sites);
  free (d.stack);
  ml_scene_free (scene);
  return rc;
}

void
ml_page_script (FILE *fp)
{
  fputs ("<script>\n//<![CDATA[\n", fp);
  fputs (ml_page_js, fp);
  fputs ("\n//]]>\n</script>\n", fp);
}
