/* page-panels.c — the data of the interactive page's panels besides the
 * buffers (page-private.h): colourings, curves, peaks with blame,
 * segments and their mappings, stacks. All of it computed here, in C,
 * from the scene (render/scene.h) the static pictures and the viewer
 * draw; the page only draws it. */
#include "render/page-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sim/analysis/diagnose.h"
#include "sim/analysis/find.h"
#include "sim/base/u64map.h"

/* Curves with more points than this are written as per-bin maxima. */
#define CURVE_EXACT_MAX 65536
#define CURVE_BINS      32768
/* Call sites listed for each peak. */
#define PEAK_SITES 6
/* Occurrences listed for each peak group. */
#define PEAK_TICKS 1000
/* Annotate texts written per buffer (the count says how many there are). */
#define NOTES_MAX 16

/* One colouring's entry: its key, whether the trace records none
 * ("empty": every buffer "(none)"), its classes [k, label, buffers,
 * bytes live at the lower-bound tick]. */
static void
put_coloring (FILE *fp, const char *key, bool empty, const MlSceneClass *classes)
{
  fprintf (fp, "{\"key\":\"%s\",\"empty\":%s,\"classes\":[", key, empty ? "true" : "false");
  bool first = true;
  for (size_t k = 0; k <= ML_PALETTE_N; k++)
    {
      const MlSceneClass *c = &classes[k];
      if (!c->label || !c->count)
        continue;
      fprintf (fp, "%s[%zu,", first ? "" : ",", k);
      _ml_json_str (fp, c->label);
      fprintf (fp, ",%zu,", c->count);
      _ml_json_u64 (fp, c->peak_bytes);
      fputc (']', fp);
      first = false;
    }
  fputs ("]}", fp);
}

bool
_ml_page_coloring_offered (const MlScene *s, MlColorBy by)
{
  return by != ML_COLOR_BY_FRAMES || s->frames_regex;
}

bool
_ml_page_coloring_empty (const MlScene *s, MlColorBy by)
{
  const MlSceneClass *c = &s->classes[by][0];
  return s->n_items && s->n_classes[by] == 1 && c->label && strcmp (c->label, "(none)") == 0
         && c->count == s->n_items;
}

static void
put_colorings (FILE *fp, const MlScene *s)
{
  MlStyle st;
  ml_style_init (&st);
  fputs (",\"palette\":[", fp);
  for (unsigned k = 0; k <= ML_PALETTE_N; k++)
    {
      MlRgb c = ml_style_class_color (&st, k);
      fprintf (fp, "%s[%d,%d,%d]", k ? "," : "", (int) (c.r * 255 + 0.5), (int) (c.g * 255 + 0.5),
               (int) (c.b * 255 + 0.5));
    }
  fprintf (fp, "],\"perBuffer\":%s,\"colorings\":[", s->site_per_buffer ? "true" : "false");
  bool first = true;
  for (int by = 0; by < ML_COLOR_BY__COUNT; by++)
    if (_ml_page_coloring_offered (s, (MlColorBy) by))
      {
        fputs (first ? "" : ",", fp);
        put_coloring (fp, ml_color_by_name ((MlColorBy) by), _ml_page_coloring_empty (s, (MlColorBy) by),
                      s->classes[by]);
        first = false;
      }
  fputc (']', fp);
}

/* The curves: every point (tick, live, reserved, fragmentation) when
 * there are few, else two points per bin of ticks: at its first tick the
 * bin's highest values, at its last point the values it ends with — a
 * step curve whose per-column maxima are the real curve's at any zoom
 * down to a bin. */
static int
put_curve (FILE *fp, const MlScene *s, MlError *err)
{
  const MlCurve *c = &s->curve;
  bool binned = c->n > CURVE_EXACT_MAX;
  size_t cap = binned ? 2 * (size_t) CURVE_BINS : c->n;
  MlCurvePoint *pts = malloc ((cap ? cap : 1) * sizeof *pts);
  if (!pts)
    return ml_error_set (err, ML_ENOMEM, "out of memory for the page's curves");
  size_t n = 0;
  if (!binned)
    {
      memcpy (pts, c->pts, c->n * sizeof *pts);
      n = c->n;
    }
  else
    {
      double w = (double) (s->end_tick ? s->end_tick : 1) / CURVE_BINS;
      for (size_t i = 0; i < c->n;)
        {
          uint64_t bin = (uint64_t) ((double) c->pts[i].tick / w);
          MlCurvePoint top = c->pts[i], *carry = n ? &pts[n - 1] : NULL;
          top.tick = (uint64_t) ((double) bin * w + 0.999999);
          top.tick = top.tick > c->pts[i].tick ? c->pts[i].tick : top.tick;
          if (carry && top.tick < carry->tick + 1)
            top.tick = c->pts[i].tick;
          size_t j = i;
          for (; j < c->n && (uint64_t) ((double) c->pts[j].tick / w) == bin; j++)
            {
              const MlCurvePoint *p = &c->pts[j];
              top.live = p->live > top.live ? p->live : top.live;
              top.reserved = p->reserved > top.reserved ? p->reserved : top.reserved;
              top.frag = p->frag > top.frag ? p->frag : top.frag;
            }
          if (carry && top.tick < c->pts[i].tick)
            {
              /* the value carried into the bin counts until its first point */
              top.live = carry->live > top.live ? carry->live : top.live;
              top.reserved = carry->reserved > top.reserved ? carry->reserved : top.reserved;
              top.frag = carry->frag > top.frag ? carry->frag : top.frag;
            }
          pts[n++] = top;
          if (c->pts[j - 1].tick > top.tick)
            pts[n++] = c->pts[j - 1];
          i = j;
        }
    }
  fprintf (fp, ",\"curve\":{\"n\":%zu,\"points\":%zu,\"binned\":%s,\"fragKnown\":%s", n, c->n,
           binned ? "true" : "false", s->metrics.frag_unknown ? "false" : "true");
  static const char *const names[] = { "tick", "live", "reserved", "frag" };
  for (int col = 0; col < 4; col++)
    {
      fprintf (fp, ",\"%s\":\"", names[col]);
      MlB64 b = { .fp = fp };
      for (size_t i = 0; i < n; i++)
        switch (col)
          {
          case 0: _ml_b64_f64 (&b, (double) pts[i].tick); break;
          case 1: _ml_b64_f64 (&b, (double) pts[i].live); break;
          case 2: _ml_b64_f64 (&b, (double) pts[i].reserved); break;
          default: _ml_b64_f32 (&b, pts[i].frag); break;
          }
      _ml_b64_end (&b);
      fputc ('"', fp);
    }
  fputc ('}', fp);
  free (pts);
  return 0;
}

/* The peaks as the curves panel groups them (sim/analysis/peak-groups.h),
 * each with who holds the memory at its level's first tick, by call site
 * (ml_site_blame_at, as the report's holders). */
static int
put_peaks (FILE *fp, const MlScene *s, MlError *err)
{
  const MlTrace *t = s->bufs->trace;
  fputs (",\"peaks\":[", fp);
  for (size_t k = 0; k < s->groups.n; k++)
    {
      const MlPeakGroup *g = &s->groups.groups[k];
      MlSiteBlame *sites = NULL;
      size_t n_sites = 0, n_live = 0;
      int rc = ml_site_blame_at (s->bufs, g->top_tick, &sites, &n_sites, &n_live, err);
      if (rc < 0)
        return rc;
      char what[160];
      fprintf (fp, "%s{\"text\":", k ? "," : "");
      _ml_json_str (fp, ml_peak_group_describe (g, what, sizeof what));
      fputs (",\"live\":", fp);
      _ml_json_u64 (fp, g->live);
      fprintf (fp, ",\"top\":%" PRIu64 ",\"n\":%zu,\"nLive\":%zu,\"ticks\":[", g->top_tick, g->n, n_live);
      for (size_t i = 0; i < g->n && i < PEAK_TICKS; i++)
        fprintf (fp, "%s%" PRIu64, i ? "," : "", g->ticks[i]);
      fputs ("],\"sites\":[", fp);
      for (size_t i = 0; i < n_sites && i < PEAK_SITES; i++)
        {
          const char *label = sites[i].site && t ? ml_trace_str (t, sites[i].site) : NULL;
          fputc ('[', fp);
          _ml_json_str (fp, label && *label ? label : "(no call site)");
          fputc (',', fp);
          _ml_json_u64 (fp, sites[i].bytes);
          fprintf (fp, ",%zu]%s", sites[i].count, i + 1 < n_sites && i + 1 < PEAK_SITES ? "," : "");
        }
      fprintf (fp, "],\"nSites\":%zu}", n_sites);
      free (sites);
    }
  fputc (']', fp);
  return 0;
}

/* What the state at a tick needs besides the buffers (as ml_state_at
 * reads it, sim/analysis/state.h): each segment's global base and width
 * on the page's address axis, its address space, lifetime, recorded address and kind; the mappings of expandable
 * segments. */
static void
put_segments (FILE *fp, const MlScene *s)
{
  const MlPlan *p = s->plan;
  fputs (",\"segs\":[", fp);
  for (size_t g = 0; g < p->n_segments; g++)
    {
      const MlSegment *seg = &p->segments[g];
      const char *kind = seg->flags & ML_SEG_GROWABLE ? "growable"
                       : (seg->flags & ML_SEG_EXPANDABLE) && seg->addr ? "expandable" : "fixed";
      fprintf (fp, "%s[%" PRIu64 ",%" PRIu64 ",", g ? "," : "", s->seg_base[g], s->seg_extent[g]);
      _ml_json_u64 (fp, seg->size);
      fprintf (fp, ",%" PRIu64 ",%" PRIu64 ",", seg->start, seg->end);
      _ml_json_u64 (fp, seg->addr);
      fprintf (fp, ",\"%s\",%ld]", kind, s->n_bands ? (long) s->seg_band[g] : -1L);
    }
  fputs ("],\"maps\":[", fp);
  bool first = true;
  for (size_t m = 0; m < p->n_maps; m++)
    {
      const MlMapping *mp = &p->maps[m];
      const MlSegment *seg = &p->segments[mp->segment];
      if (!((seg->flags & ML_SEG_EXPANDABLE) && seg->addr) || (seg->flags & ML_SEG_GROWABLE))
        continue;
      fprintf (fp, "%s[%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", mp->segment,
               mp->offset, mp->size, mp->start, mp->end);
      first = false;
    }
  fputc (']', fp);
}

/* The stacks the items use, each once (frames innermost first, as
 * "file:line:function"); slot 0 is "no stack". */
static int
put_stacks (FILE *fp, const MlScene *s, uint32_t *stack, MlError *err)
{
  const MlTrace *t = s->bufs->trace;
  MlU64Map seen;
  ml_u64map_init (&seen);
  uint32_t n = 1;
  fputs (",\"stacks\":[[]", fp);
  for (size_t i = 0; i < s->n_items; i++)
    {
      uint32_t id = s->bufs->buf[s->items[i].buffer].stack;
      stack[i] = 0;
      if (!t || !id || id >= t->n_stacks || !t->stacks[id].n)
        continue;
      uint32_t slot;
      if (ml_u64map_get (&seen, id, &slot))
        {
          stack[i] = slot;
          continue;
        }
      if (ml_u64map_put (&seen, id, n) < 0)
        {
          ml_u64map_clear (&seen);
          return ml_error_set (err, ML_ENOMEM, "out of memory for the page's stacks");
        }
      stack[i] = n++;
      const MlStack *st = &t->stacks[id];
      fputs (",[", fp);
      for (uint32_t k = 0; k < st->n && st->first + k < t->n_stack_frames; k++)
        {
          const MlFrame *fr = ml_trace_stack_frame (t, st, k);
          char line[4096];
          snprintf (line, sizeof line, "%s:%" PRIu32 ":%s", ml_trace_str (t, fr->file), fr->line,
                    ml_trace_str (t, fr->func));
          fputs (k ? "," : "", fp);
          _ml_json_str (fp, line);
        }
      fputc (']', fp);
    }
  fputc (']', fp);
  ml_u64map_clear (&seen);
  return 0;
}

/* The bands of (pool, stream) of the packed address axis (scene.h), as
 * [lo, hi, segments, label], bottom first; none when the scene has none. */
static void
put_bands (FILE *fp, const MlScene *s)
{
  fputs (",\"bands\":[", fp);
  for (size_t b = 0; b < s->n_bands; b++)
    {
      const MlSceneBand *band = &s->bands[b];
      fprintf (fp, "%s[%" PRIu64 ",%" PRIu64 ",%zu,", b ? "," : "", band->lo, band->hi, band->n);
      _ml_json_str (fp, band->label);
      fputc (']', fp);
    }
  fputc (']', fp);
}

/* Whether @id is among the scene's annotated buffer ids (sorted). */
static bool
noted (const MlScene *s, uint64_t id)
{
  size_t lo = 0, hi = s->n_note_ids;
  while (lo < hi)
    {
      size_t m = lo + (hi - lo) / 2;
      if (s->note_ids[m] < id)
        lo = m + 1;
      else
        hi = m;
    }
  return lo < s->n_note_ids && s->note_ids[lo] == id;
}

/* The texts of the `annotate` entries tied to each item's buffer
 * (ml_buffer_annotations), as [item, count, [text, ...]] for the items
 * that have some: only buffers whose id a mark names (the scene's
 * note_ids) are looked at. */
static void
put_notes (FILE *fp, const MlScene *s)
{
  const MlTrace *t = s->bufs->trace;
  fputs (",\"notes\":[", fp);
  bool first = true;
  for (size_t i = 0; s->n_note_ids && i < s->n_items; i++)
    {
      uint32_t b = s->items[i].buffer, texts[NOTES_MAX];
      size_t n = noted (s, s->bufs->buf[b].id) ? ml_buffer_annotations (s->bufs, b, texts, NOTES_MAX) : 0;
      if (!n)
        continue;
      fprintf (fp, "%s[%zu,%zu,[", first ? "" : ",", i, n);
      for (size_t k = 0; k < n && k < NOTES_MAX; k++)
        {
          fputs (k ? "," : "", fp);
          _ml_json_str (fp, ml_trace_str (t, texts[k]));
        }
      fputs ("]]", fp);
      first = false;
    }
  fputc (']', fp);
}

int
_ml_page_panels (FILE *fp, const MlScene *s, uint32_t *stack, MlError *err)
{
  put_colorings (fp, s);
  put_segments (fp, s);
  put_bands (fp, s);
  int rc = put_curve (fp, s, err);
  if (rc == 0)
    rc = put_peaks (fp, s, err);
  if (rc == 0)
    rc = put_stacks (fp, s, stack, err);
  if (rc == 0)
    put_notes (fp, s);
  return rc;
}
