/* page.c — the interactive figures of the HTML page (see page.h). */
#include "render/page.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/page-js.h"
#include "render/scene.h"

const char ml_page_css[] =
  "figure.ml-page{position:relative}\n"
  ".ml-bar{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:0 0 6px;font-size:12px}\n"
  ".ml-bar input{width:26em;font:inherit}.ml-bar .ml-range,.ml-bar .ml-found{color:#555}.ml-bar .ml-found{color:#c0161a}\n"
  "canvas.ml-canvas{display:block;box-sizing:border-box;width:100%;height:520px;border:1px solid #e3e3e6;cursor:grab;touch-action:none}\n"
  ".ml-tip{position:absolute;pointer-events:none;background:#fff;border:1px solid #999;border-radius:4px;"
  "padding:4px 8px;font-size:12px;white-space:pre;box-shadow:0 1px 4px rgba(0,0,0,.2);max-width:60em;overflow:hidden}\n";

const char ml_page_howto[] =
  "Address × time: each buffer where the plan put it, coloured by call site; buffers smaller than a pixel are "
  "pooled into it, its opacity the share of it they cover; a red line marks an OOM. Active memory: each pixel "
  "column stacks the buffers live at the tick in its middle, the longest-lived at the bottom. Wheel: zoom time at the pointer "
  "(Shift+wheel: bytes); drag: pan; Fit or double-click: all of it. Hover a buffer for its bytes, call site, lifetime "
  "and stream; search by call-site text or by address (the buffers that held it).";

bool
ml_page_draws (const MlDocFigure *f)
{
  return (f->view == ML_DOC_FIGURE_LAYOUT || f->view == ML_DOC_FIGURE_ACTIVE) && f->bufs && f->plan;
}

/* ---- base64 of little-endian columns ------------------------------------------- */

typedef struct {
  FILE   *fp;
  uint8_t in[3];
  int     n_in;
  char    out[4096];
  size_t  n_out;
} B64;

static const char b64_digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void
b64_flush (B64 *b)
{
  fwrite (b->out, 1, b->n_out, b->fp);
  b->n_out = 0;
}

static void
b64_quad (B64 *b, const uint8_t *p, int n)
{
  uint32_t v = (uint32_t) p[0] << 16 | (n > 1 ? (uint32_t) p[1] << 8 : 0) | (n > 2 ? p[2] : 0);
  if (b->n_out + 4 > sizeof b->out)
    b64_flush (b);
  b->out[b->n_out++] = b64_digits[v >> 18 & 63];
  b->out[b->n_out++] = b64_digits[v >> 12 & 63];
  b->out[b->n_out++] = n > 1 ? b64_digits[v >> 6 & 63] : '=';
  b->out[b->n_out++] = n > 2 ? b64_digits[v & 63] : '=';
}

static void
b64_byte (B64 *b, uint8_t x)
{
  b->in[b->n_in++] = x;
  if (b->n_in == 3)
    {
      b64_quad (b, b->in, 3);
      b->n_in = 0;
    }
}

static void
b64_u32 (B64 *b, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    b64_byte (b, (uint8_t) (v >> (8 * i)));
}

/* An IEEE double, little-endian (exact for integers up to 2^53). */
static void
b64_f64 (B64 *b, double d)
{
  uint64_t v;
  memcpy (&v, &d, sizeof v);
  for (int i = 0; i < 8; i++)
    b64_byte (b, (uint8_t) (v >> (8 * i)));
}

static void
b64_end (B64 *b)
{
  if (b->n_in)
    b64_quad (b, b->in, b->n_in);
  b->n_in = 0;
  b64_flush (b);
}

/* ---- the columns ----------------------------------------------------------------- */

typedef enum {
  COL_START, COL_END, COL_ADDR, COL_SIZE, COL_PLACE, COL_SITE, COL_STREAM, COL_BUFFER, COL_RANK, COL__COUNT
} Column;

static const char *const col_names[COL__COUNT] = { "start", "end",    "addr",   "size", "place",
                                                   "site",  "stream", "buffer", "rank" };

typedef struct {
  const MlScene *s;
  uint32_t      *site;   /* per item: index in the site table */
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
put_column (B64 *b, const Data *d, Column c)
{
  const MlScene *s = d->s;
  for (size_t i = 0; i < s->n_items; i++)
    {
      const MlSceneItem *it = &s->items[i];
      switch (c)
        {
        case COL_START: d->ticks32 ? b64_u32 (b, (uint32_t) it->start) : b64_f64 (b, (double) it->start); break;
        case COL_END: d->ticks32 ? b64_u32 (b, (uint32_t) it->end) : b64_f64 (b, (double) it->end); break;
        case COL_ADDR: b64_f64 (b, (double) it->addr); break;
        case COL_SIZE: b64_f64 (b, (double) it->size); break;
        case COL_PLACE: b64_f64 (b, (double) place_of (s, i)); break;
        case COL_SITE: b64_u32 (b, d->site[i]); break;
        case COL_STREAM: b64_u32 (b, s->bufs->buf[it->buffer].stream); break;
        case COL_BUFFER: b64_u32 (b, it->buffer); break;
        case COL_RANK: b64_u32 (b, s->rank[i]); break;
        case COL__COUNT: break;
        }
    }
  b64_end (b);
}

/* ---- JSON --------------------------------------------------------------------- */

/* A JSON string that is also safe inside a <script> element of an
 * XHTML page: <, > and & written as \u escapes. */
static void
put_str (FILE *fp, const char *s)
{
  fputc ('"', fp);
  for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
    {
      if (*p == '"' || *p == '\\')
        fprintf (fp, "\\%c", *p);
      else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f)
        fprintf (fp, "\\u%04x", *p);
      else
        fputc (*p, fp);
    }
  fputc ('"', fp);
}

static void
put_header (FILE *fp, const MlDocFigure *f, const Data *d)
{
  const MlScene *s = d->s;
  fputs ("{\"name\":", fp);
  put_str (fp, f->name);
  fputs (",\"plan\":", fp);
  put_str (fp, s->plan->strategy);
  fputs (",\"title\":", fp);
  put_str (fp, f->title);
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
      put_str (fp, d->sites[k]);
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
      put_str (fp, s->bufs->trace ? ml_trace_stream_label (s->bufs->trace, k, label) : "0");
    }
  fputs ("],\"segments\":[", fp);
  for (size_t g = 0; g < s->plan->n_segments; g++)
    fprintf (fp, "%s[%" PRIu64 ",%" PRIu64 "]", g ? "," : "", s->seg_base[g], s->seg_extent[g]);
  fputc (']', fp);
  if (f->linked)
    fprintf (fp, ",\"linked\":true,\"tMax\":%.0f,\"aMax\":%.0f", f->t_max, f->a_max);
  if (s->plan->oom.hit)
    fprintf (fp, ",\"oom\":{\"tick\":%" PRIu64 ",\"request\":%" PRIu64 "}", s->plan->oom.tick, s->plan->oom.request);
}

static void
put_controls (FILE *fp, const MlScene *s, int index)
{
  /* the title (from the data, by the script) */
  fprintf (fp, "<figure class=\"ml-page\" id=\"page-%d\" data-items=\"%zu\">\n<div class=\"ml-bar\"><b class=\"ml-title\"></b> ",
           index, s->n_items);
  fputs ("<select class=\"ml-mode\"><option value=\"address\">address × time</option>"
         "<option value=\"active\">active memory, stacked</option></select>"
         "<button type=\"button\" class=\"ml-fit\">Fit</button>"
         "<input type=\"search\" class=\"ml-search\" placeholder=\"search: call site text, or an address (0x…)\"/>"
         "<span class=\"ml-found\"></span><span class=\"ml-range\"></span></div>\n"
         "<canvas class=\"ml-canvas\" width=\"1200\" height=\"520\"></canvas><div class=\"ml-tip\" hidden=\"hidden\"></div>\n",
         fp);
}

int
ml_page_figure (FILE *fp, const MlDocFigure *f, int index, MlError *err)
{
  MlScene *scene = NULL;
  MlSceneOptions so = { .name = f->name, .issues = f->issues };
  int rc = ml_scene_new (f->bufs, f->plan, &so, &scene, err);
  if (rc < 0)
    return rc;
  Data d = { .s = scene, .ticks32 = scene->end_tick <= UINT32_MAX };
  if ((rc = data_sites (&d, err)) == 0)
    {
      put_controls (fp, scene, index);
      fputs ("<script type=\"application/json\" class=\"ml-data\">", fp);
      put_header (fp, f, &d);
      B64 b = { .fp = fp };
      for (int c = 0; c < COL__COUNT; c++)
        {
          fprintf (fp, ",\"%s\":\"", col_names[c]);
          put_column (&b, &d, (Column) c);
          fputc ('"', fp);
        }
      fputs ("}</script>\n", fp);
    }
  free (d.site);
  free (d.sites);
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
