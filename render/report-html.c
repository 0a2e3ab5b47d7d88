#include "render/report-html.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/scene.h"
#include "render/timeline.h"
#include "sim/base/io.h"
#include "sim/base/units.h"

#ifndef MEMLENS_VERSION
#define MEMLENS_VERSION "0.1"
#endif

void
ml_html_escape (FILE *fp, const char *s)
{
  for (; s && *s; s++)
    switch (*s)
      {
      case '<': fputs ("&lt;", fp); break;
      case '>': fputs ("&gt;", fp); break;
      case '&': fputs ("&amp;", fp); break;
      case '"': fputs ("&quot;", fp); break;
      default: fputc (*s, fp);
      }
}

#define esc ml_html_escape

static const char *
sz (uint64_t b, char *buf)
{
  return ml_format_size (b, buf, 32);
}

const char ml_html_css[] =
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

void
ml_html_inline_svg (FILE *fp, const char *svg, const char *prefix)
{
  const char *p = svg;
  if (strncmp (p, "<?xml", 5) == 0)
    {
      const char *e = strstr (p, "?>");
      p = e ? e + 2 : p;
      while (*p == '\n' || *p == '\r')
        p++;
    }
  /* copy, prefixing ids and the references to them */
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

/* Writes one figure as inline SVG, its ids prefixed with @prefix so that
 * several figures can share the page. */
static int
figure (FILE *fp, const MlReport *r, long row, const MlIssues *issues, const MlStyle *style, const char *prefix,
        MlError *err)
{
  const MlReportRow *rw = &r->rows[row];
  MlScene *scene = NULL;
  const char *base = strrchr (r->trace_path, '/');
  MlSceneOptions so = { .name = base ? base + 1 : r->trace_path, .issues = issues };
  int rc = ml_scene_new (r->bufs, rw->res.plan, &so, &scene, err);
  if (rc < 0)
    return rc;
  char *svg = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&svg, &len);
  if (!mem)
    {
      ml_scene_free (scene);
      return ml_error_set (err, ML_ENOMEM, "out of memory for a figure");
    }
  rc = ml_render_figure_write (mem, ML_RENDER_SVG, scene, style, 1600, 900, NULL, err);
  fclose (mem);
  ml_scene_free (scene);
  if (rc < 0)
    {
      free (svg);
      return rc;
    }
  fputs ("<figure>", fp);
  ml_html_inline_svg (fp, svg, prefix);
  free (svg);
  fprintf (fp, "<figcaption>The %s plan: address × time (one rectangle per buffer), live and reserved bytes, "
               "fragmentation. Peak points are marked; issues and the OOM point are red.</figcaption></figure>\n",
           rw->name);
  return 0;
}

static void
bar (FILE *fp, uint64_t v, uint64_t max, uint64_t mark)
{
  double w = max ? 100.0 * (double) v / (double) max : 0;
  double m = max ? 100.0 * (double) mark / (double) max : 0;
  fprintf (fp, "<div class=\"bar\" title=\"lower bound at the black line\"><i style=\"width:%.1f%%\"></i><b style=\"left:%.1f%%\"></b></div>", w, m);
}

int
ml_report_write_html (const MlReport *r, FILE *fp, const MlStyle *style_in, MlError *err)
{
  MlStyle style;
  if (style_in)
    style = *style_in;
  else
    ml_style_init (&style);
  const MlBuffers *bufs = r->bufs;
  const MlTrace *t = bufs->trace;
  char s1[32], s2[32], s3[32], s4[32], s5[32], s6[32], label[256];
  const char *base = strrchr (r->trace_path, '/');
  base = base ? base + 1 : r->trace_path;

  fputs ("<!DOCTYPE html>\n<html lang=\"en\" xmlns=\"http://www.w3.org/1999/xhtml\"><head><meta charset=\"utf-8\"/>"
         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"/><title>memlens report: ", fp);
  esc (fp, base);
  fprintf (fp, "</title>\n<meta name=\"generator\" content=\"memlens %s\"/><style>\n%s</style></head>\n<body><main>\n", MEMLENS_VERSION, ml_html_css);
  fputs ("<h1>Memory report: ", fp);
  esc (fp, base);
  fprintf (fp, "</h1>\n<p class=\"sub\">%zu buffers, %zu events, %zu stream%s, ticks 0 to %" PRIu64 "; source <code>",
           bufs->n, t ? t->n_events : 0, r->n_streams, r->n_streams == 1 ? "" : "s", bufs->end_tick);
  esc (fp, t && t->source ? ml_trace_str (t, t->source) : "?");
  fputs ("</code>; file <code>", fp);
  esc (fp, r->trace_path);
  fputs ("</code></p>\n", fp);

  /* headline cards */
  fputs ("<div class=\"cards\">", fp);
  fprintf (fp, "<div class=\"card\"><div class=\"k\">lower bound</div><div class=\"v\" id=\"lower-bound\" data-bytes=\"%" PRIu64 "\">%s</div>"
           "<div class=\"n\">most bytes live at once (tick %" PRIu64 "); no plan needs less</div></div>",
           bufs->lower_bound, sz (bufs->lower_bound, s1), bufs->lower_bound_tick);
  if (r->best >= 0)
    {
      const MlReportRow *b = &r->rows[r->best];
      fprintf (fp, "<div class=\"card\"><div class=\"k\">best plan</div><div class=\"v\">%s</div><div class=\"n\">",
               sz (b->res.metrics.peak, s1));
      esc (fp, b->name);
      fprintf (fp, ", %+.1f%% over the lower bound</div></div>", b->res.metrics.overhead * 100.0);
      fprintf (fp, "<div class=\"card\"><div class=\"k\">fragmentation (best plan)</div><div class=\"v\">%.0f%%</div>"
               "<div class=\"n\">max; mean %.0f%%, at the peak %.0f%%</div></div>",
               b->res.metrics.frag_max * 100.0, b->res.metrics.frag_mean * 100.0, b->res.metrics.frag_at_peak * 100.0);
    }
  if (r->knobs.capacity)
    {
      size_t fits = 0, ran = 0;
      for (size_t i = 0; i < r->n_rows; i++)
        if (r->rows[i].res.status == 0 && r->rows[i].res.plan)
          {
            ran++;
            fits += !r->rows[i].res.plan->oom.hit;
          }
      fprintf (fp, "<div class=\"card\"><div class=\"k\">under %s</div><div class=\"v %s\">%zu of %zu fit</div><div class=\"n\">%s</div></div>",
               sz (r->knobs.capacity, s1), fits == ran ? "good" : "bad", fits, ran,
               bufs->lower_bound > r->knobs.capacity ? "the lower bound is over the capacity: nothing can fit"
                                                     : "strategies that fit the capacity");
    }
  size_t total = ml_issues_count (&r->issues);
  if (r->featured >= 0)
    {
      fprintf (fp, "<div class=\"card\"><div class=\"k\">issues (%s)</div><div class=\"v %s\">%zu</div><div class=\"n\">",
               r->rows[r->featured].name, total ? "bad" : "good", total);
      fputs (total ? "conflicts and races, listed below" : "no conflicts, no races", fp);
      fputs ("</div></div>", fp);
    }
  fputs ("</div>\n", fp);

  /* the comparison */
  uint64_t maxpeak = bufs->lower_bound;
  for (size_t i = 0; i < r->n_rows; i++)
    if (r->rows[i].res.status == 0 && r->rows[i].res.plan && r->rows[i].res.metrics.peak > maxpeak)
      maxpeak = r->rows[i].res.metrics.peak;
  fputs ("<h2>Strategies</h2>\n<table id=\"strategies\"><thead><tr><th>strategy</th><th class=\"r\">peak</th><th></th>"
         "<th class=\"r\">overhead</th><th class=\"r\">frag max</th><th class=\"r\">frag mean</th><th class=\"r\">frag at peak</th>"
         "<th class=\"r\">segments</th><th class=\"r\">time</th>", fp);
  if (r->knobs.capacity)
    fprintf (fp, "<th>under %s</th>", sz (r->knobs.capacity, s1));
  fputs ("<th class=\"r\">issues</th></tr></thead><tbody>\n", fp);
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlReportRow *row = &r->rows[i];
      const MlResult *res = &row->res;
      fprintf (fp, "<tr%s data-strategy=\"", (long) i == r->best ? " class=\"best\"" : "");
      esc (fp, row->name);
      fputs ("\"", fp);
      if (res->status < 0 || !res->plan)
        {
          fputs ("><td>", fp);
          esc (fp, row->name);
          fprintf (fp, "</td><td colspan=\"%d\" class=\"bad\">error: ", r->knobs.capacity ? 10 : 9);
          esc (fp, res->error);
          fputs ("</td></tr>\n", fp);
          continue;
        }
      const MlMetrics *m = &res->metrics;
      fprintf (fp, " data-peak=\"%" PRIu64 "\"><td>", m->peak);
      esc (fp, row->name);
      if ((long) i == r->best)
        fputs (" <span class=\"good\">best</span>", fp);
      if (res->plan->optimal)
        fputs (" <span class=\"good\">optimal</span>", fp);
      fprintf (fp, "</td><td class=\"r\" title=\"%" PRIu64 " bytes\">%s</td><td>", m->peak, sz (m->peak, s1));
      bar (fp, m->peak, maxpeak, bufs->lower_bound);
      char time[32];
      if (ml_report_row_is_recorded (row))
        snprintf (time, sizeof time, "–");
      else
        snprintf (time, sizeof time, "%.2f ms", res->plan->seconds * 1e3);
      fprintf (fp, "</td><td class=\"r\">%+.2f%%</td><td class=\"r\">%.1f%%</td><td class=\"r\">%.1f%%</td><td class=\"r\">%.1f%%</td>"
               "<td class=\"r\">%zu</td><td class=\"r\">%s</td>",
               m->overhead * 100.0, m->frag_max * 100.0, m->frag_mean * 100.0, m->frag_at_peak * 100.0,
               res->plan->n_segments, time);
      if (r->knobs.capacity)
        {
          const MlOom *o = &res->plan->oom;
          if (!o->hit)
            fputs ("<td class=\"good\">fits</td>", fp);
          else if (!o->request)
            fputs ("<td class=\"bad\">over the capacity</td>", fp);
          else
            fprintf (fp, "<td class=\"bad\">OOM at tick %" PRIu64 ": %s</td>", o->tick,
                     ml_oom_verdict_name (o->verdict));
        }
      size_t ni = 0;
      for (int k = 0; k < ML_ISSUE__COUNT; k++)
        ni += row->issues[k];
      fprintf (fp, "<td class=\"r%s\">%zu</td></tr>\n", ni ? " bad" : "", ni);
    }
  fputs ("</tbody></table>\n<p class=\"why\">Peak: the most bytes the plan reserves at once. Overhead: peak over the "
         "lower bound. Fragmentation: 1 − largest free block / free bytes within the reserved space. The bar's black "
         "line is the lower bound.</p>\n", fp);
  /* a capacity proven infeasible: the buffers that alone cannot fit */
  for (size_t i = 0; i < r->n_rows; i++)
    {
      const MlInfeasible *inf = &r->rows[i].res.infeasible;
      if (!inf->n)
        continue;
      char why[512], blabel[256];
      fputs ("<h3>Why ", fp);
      esc (fp, r->rows[i].name);
      fprintf (fp, " finds no plan under %s</h3>\n<p class=\"why\">", sz (inf->capacity, s1));
      esc (fp, ml_infeasible_describe (inf, bufs, false, why, sizeof why));
      fputs (".</p>\n<table class=\"infeasible\"><thead><tr><th class=\"r\">buffer</th><th>name</th><th>lifetime</th>"
             "<th class=\"r\">size</th></tr></thead><tbody>\n", fp);
      for (size_t k = 0; k < inf->n && k < 20; k++)
        {
          const MlBuffer *b = &bufs->buf[inf->buffers[k]];
          fprintf (fp, "<tr><td class=\"r\">%" PRIu64 "</td><td>", b->id);
          esc (fp, ml_report_buffer_label (bufs, inf->buffers[k], blabel, sizeof blabel));
          fprintf (fp, "</td><td>[%" PRIu64 ", %" PRIu64 ")</td><td class=\"r\">%s</td></tr>\n", b->start, b->end,
                   sz (b->rsize, s1));
        }
      fputs ("</tbody></table>\n", fp);
      if (inf->n > 20)
        fprintf (fp, "<p class=\"why\">... %zu more buffers (all in the JSON report).</p>\n", inf->n - 20);
    }

  /* a knob over values */
  if (r->sweep)
    {
      const MlKnobSweep *sw = r->sweep;
      uint64_t top = bufs->lower_bound;
      for (size_t k = 0; k < sw->n_values * sw->n_strategies; k++)
        if (sw->rows[k].status == 0 && sw->rows[k].metrics.peak > top)
          top = sw->rows[k].metrics.peak;
      fputs ("<h2>Sweep of ", fp);
      esc (fp, sw->knob);
      fputs ("</h2>\n<table id=\"sweep\"><thead><tr><th>", fp);
      esc (fp, sw->knob);
      fputs ("</th><th>strategy</th><th class=\"r\">peak</th><th></th><th class=\"r\">overhead</th><th class=\"r\">frag max</th>"
             "<th class=\"r\">frag at peak</th><th>OOM</th><th class=\"r\">retries</th></tr></thead><tbody>\n", fp);
      for (size_t k = 0; k < sw->n_values * sw->n_strategies; k++)
        {
          const MlKnobSweepRow *row = &sw->rows[k];
          fputs ("<tr><td>", fp);
          esc (fp, row->value);
          fputs ("</td><td>", fp);
          esc (fp, row->strategy->name);
          if (row->status < 0)
            {
              fputs ("</td><td colspan=\"7\" class=\"bad\">error: ", fp);
              esc (fp, row->error);
              fputs ("</td></tr>\n", fp);
              continue;
            }
          const MlMetrics *m = &row->metrics;
          fprintf (fp, "</td><td class=\"r\" title=\"%" PRIu64 " bytes\">%s</td><td>", m->peak, sz (m->peak, s1));
          bar (fp, m->peak, top, row->lower_bound);
          fprintf (fp, "</td><td class=\"r\">%+.2f%%</td><td class=\"r\">%.1f%%</td><td class=\"r\">%.1f%%</td>",
                   m->overhead * 100.0, m->frag_max * 100.0, m->frag_at_peak * 100.0);
          if (row->oom.hit)
            fprintf (fp, "<td class=\"bad\">tick %" PRIu64 ": %s</td>", row->oom.tick, ml_oom_verdict_name (row->oom.verdict));
          else
            fputs ("<td>–</td>", fp);
          fprintf (fp, "<td class=\"r\">%" PRIu64 "</td></tr>\n", row->retries);
        }
      fputs ("</tbody></table>\n<p class=\"why\">Every strategy once per value of the knob, everything else the same.</p>\n", fp);
    }

  /* pictures */
  if (r->featured >= 0)
    {
      fputs ("<h2>Timeline</h2>\n", fp);
      int rc = figure (fp, r, r->featured, &r->issues, &style, "f1", err);
      if (rc < 0)
        return rc;
      if (r->best >= 0 && r->best != r->featured)
        {
          if ((rc = figure (fp, r, r->best, NULL, &style, "f2", err)) < 0)
            return rc;
        }
    }

  /* peaks */
  fputs ("<h2>Peak points</h2>\n", fp);
  for (size_t i = 0; i < r->peaks.n; i++)
    {
      const MlPeak *p = &r->peaks.peaks[i];
      fprintf (fp, "<h3>Tick %" PRIu64 ": %s live in %zu buffers%s</h3>\n<table class=\"blame\"><thead><tr><th>buffer</th>"
               "<th class=\"r\">bytes</th><th class=\"r\">share</th><th class=\"r\">stream</th><th>lifetime (ticks)</th></tr></thead><tbody>\n",
               p->tick, sz (p->live, s1), p->n_live, p->live == bufs->lower_bound ? " — the lower bound" : "");
      for (size_t j = 0; j < p->n_blame; j++)
        {
          const MlBuffer *b = &bufs->buf[p->blame[j]];
          fputs ("<tr><td>", fp);
          esc (fp, ml_report_buffer_label (bufs, p->blame[j], label, sizeof label));
          fprintf (fp, "</td><td class=\"r\">%s</td><td class=\"r\">%.1f%%</td><td class=\"r\">%u</td><td>[%" PRIu64 ", %" PRIu64 ")</td></tr>\n",
                   sz (b->rsize, s1), p->live ? 100.0 * (double) b->rsize / (double) p->live : 0.0, b->stream, b->start, b->end);
        }
      if (p->n_live > p->n_blame)
        fprintf (fp, "<tr><td colspan=\"5\" class=\"why\">… and %zu smaller buffers</td></tr>\n", p->n_live - p->n_blame);
      fputs ("</tbody></table>\n", fp);
    }

  /* OOM */
  if (r->have_diag)
    {
      const MlDiagnosis *d = &r->diag;
      fputs ("<h2>Out of memory</h2>\n", fp);
      char rwhy[256];
      if (d->recorded)
        {
          fprintf (fp, "<p>The trace records an OOM at tick %" PRIu64 " (entry %" PRIu64 ") on stream %u: a %s request with %s free on the device",
                   d->rec_tick, d->rec_index, d->rec_stream, sz (d->rec_request, s1), sz (d->rec_device_free, s2));
          if (d->rec_have_plan)
            {
              fprintf (fp, "; reserved %s, allocated %s, cached free %s (largest block %s). Verdict: <b class=\"bad\">%s</b> — ",
                       sz (d->rec_reserved, s3), sz (d->rec_live, s4), sz (d->rec_cached_free, s5),
                       sz (d->rec_largest_cached, s6), ml_oom_verdict_name (d->rec_verdict));
              esc (fp, ml_diagnosis_recorded_reason (d, rwhy, sizeof rwhy));
              fputs (".</p>\n", fp);
            }
          else
            fputs (".</p>\n", fp);
          if (bufs->trace && d->rec_stack && d->rec_stack < bufs->trace->n_stacks)
            {
              char frames[1024];
              fputs ("<p>Called from <code>", fp);
              esc (fp, ml_diagnosis_user_frames (bufs->trace, d->rec_stack, 3, frames, sizeof frames));
              fputs ("</code>.</p>\n", fp);
            }
          if (d->rec_n_sites)
            {
              fputs ("<table><thead><tr><th>live at the OOM, by call site</th><th class=\"r\">bytes</th><th class=\"r\">buffers</th></tr></thead><tbody>\n", fp);
              for (size_t i = 0; i < d->rec_n_sites && i < 10; i++)
                {
                  fputs ("<tr><td>", fp);
                  esc (fp, ml_diagnosis_site_label (bufs, d->rec_sites[i].site));
                  fprintf (fp, "</td><td class=\"r\">%s</td><td class=\"r\">%zu</td></tr>\n", sz (d->rec_sites[i].bytes, s1),
                           d->rec_sites[i].count);
                }
              fputs ("</tbody></table>\n", fp);
            }
        }
      char line[512], why[256];
      fputs ("<p>", fp);
      if (d->capacity)
        esc (fp, ml_diagnosis_headline (d, line, sizeof line));
      if (d->capacity && d->oom.hit && d->oom.request)
        {
          fprintf (fp, " Verdict: <b class=\"bad\">%s</b> — ", ml_oom_verdict_name (d->oom.verdict));
          esc (fp, ml_oom_reason (&d->oom, why, sizeof why));
          fprintf (fp, " (live %s, reserved %s).", sz (d->oom.live, s1), sz (d->oom.reserved, s2));
        }
      fputs ("</p>\n", fp);
      if (d->oom.hit && d->oom.request && d->oom.buffer < bufs->n && d->n_sites)
        {
          fputs ("<table><thead><tr><th>call site</th><th class=\"r\">live bytes</th><th class=\"r\">buffers</th></tr></thead><tbody>\n", fp);
          for (size_t i = 0; i < d->n_sites && i < 10; i++)
            {
              fputs ("<tr><td>", fp);
              esc (fp, ml_diagnosis_site_label (bufs, d->sites[i].site));
              fprintf (fp, "</td><td class=\"r\">%s</td><td class=\"r\">%zu</td></tr>\n", sz (d->sites[i].bytes, s1), d->sites[i].count);
            }
          fputs ("</tbody></table>\n", fp);
        }
      fputs ("<h3>Alignment</h3><table><thead><tr><th class=\"r\">alignment</th><th class=\"r\">lower bound</th>", fp);
      if (d->oom.hit && d->oom.request)
        fputs ("<th class=\"r\">live at the OOM</th>", fp);
      fputs ("</tr></thead><tbody>\n", fp);
      for (size_t i = 0; i < d->n_what_if; i++)
        {
          const MlAlignWhatIf *w = &d->what_if[i];
          fprintf (fp, "<tr><td class=\"r\">%" PRIu64 "%s</td><td class=\"r\">%s</td>", w->align,
                   w->align == bufs->align ? " (used)" : "", sz (w->lower_bound, s1));
          if (d->oom.hit && d->oom.request)
            fprintf (fp, "<td class=\"r\">%s</td>", sz (w->live_at_oom, s1));
          fputs ("</tr>\n", fp);
        }
      fputs ("</tbody></table>\n", fp);
    }

  /* issues */
  fputs ("<h2>Issues</h2>\n", fp);
  if (r->featured < 0)
    fputs ("<p>No plan to check.</p>\n", fp);
  else if (!total)
    fprintf (fp, "<p class=\"good\">The %s plan has no conflicts and no races.</p>\n", r->rows[r->featured].name);
  else
    {
      fprintf (fp, "<p>The %s plan: <b class=\"bad\">%zu issue%s</b> (see docs/races.md).</p>\n<table id=\"issues\"><thead><tr>"
               "<th>kind</th><th class=\"r\">tick</th><th class=\"r\">bytes</th><th>streams</th><th>why</th></tr></thead><tbody>\n",
               r->rows[r->featured].name, total, total == 1 ? "" : "s");
      for (size_t i = 0; i < r->issues.n && i < 100; i++)
        {
          const MlIssue *is = &r->issues.items[i];
          fprintf (fp, "<tr><td>%s</td><td class=\"r\">%" PRIu64 "</td><td class=\"r\">%s</td><td>%u → %u</td><td class=\"why\">",
                   ml_issue_kind_name (is->kind), is->tick, sz (is->bytes, s1), is->stream_a, is->stream_b);
          esc (fp, is->why);
          fputs ("</td></tr>\n", fp);
        }
      if (total > 100)
        fprintf (fp, "<tr><td colspan=\"5\" class=\"why\">… %zu more</td></tr>\n", total - 100);
      fputs ("</tbody></table>\n", fp);
    }

  /* knobs */
  fprintf (fp, "<h2>Knobs</h2>\n<table><tbody><tr><td>alignment</td><td>%" PRIu64 " bytes</td></tr>"
               "<tr><td>capacity</td><td>%s</td></tr><tr><td>pool chunk</td><td>%s</td></tr>"
               "<tr><td>retries</td><td>%u</td></tr><tr><td>seed</td><td>%" PRIu64 "</td></tr>"
               "<tr><td>time limit</td><td>%.1f s (0: each strategy's default)</td></tr><tr><td>options</td><td>",
           bufs->align, r->knobs.capacity ? sz (r->knobs.capacity, s1) : "none", sz (r->knobs.chunk, s2),
           r->knobs.retries, r->knobs.seed, r->knobs.time_limit);
  esc (fp, r->knobs.options ? r->knobs.options : "none");
  fprintf (fp, "</td></tr></tbody></table>\n<footer>memlens %s · report format %d · built in %.2f s · "
               "this file is self-contained (no scripts, no network)</footer>\n</main></body></html>\n",
           MEMLENS_VERSION, ML_REPORT_VERSION, r->seconds);
  if (fflush (fp) != 0 || ferror (fp))
    return ml_error_set (err, ML_EIO, "write error: %s", strerror (errno ? errno : EIO));
  return 0;
}

int
ml_report_write_file (const MlReport *r, const char *path, const MlStyle *style, MlError *err)
{
  char ext[16];
  ml_path_ext (path, ext, sizeof ext, NULL);
  if (strcmp (ext, "html") != 0 && strcmp (ext, "htm") != 0)
    return ml_report_write (r, path, err);
  MlOut *out = ml_out_open (path, err);
  if (!out)
    return err ? err->code : ML_EIO;
  int rc = ml_report_write_html (r, ml_out_file (out), style, err);
  if (rc < 0)
    {
      ml_out_abort (out);
      return ml_error_prefix (err, "%s", strcmp (path, "-") ? path : "stdout");
    }
  return ml_out_commit (out, err);
}
