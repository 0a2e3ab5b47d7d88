/* addr-axis.c — the address axis of the address and segments plots
 * (timeline.h: ml_timeline_addr_labels). Packed (the default), the
 * segments lie side by side in address order with the gaps between them
 * left out, so the axis is labelled by segment ("seg 12" where one
 * starts) and offset in it ("+256 MiB"); raw, each segment lies at its
 * recorded address and the labels are those addresses. */
#include "render/timeline-private.h"

#include <inttypes.h>
#include <math.h>

#include "render/axis.h"
#include "sim/base/units.h"

static bool
clear_of (const MlAddrLabel *out, size_t n, double y, double gap)
{
  for (size_t i = 0; i < n; i++)
    if (fabs (out[i].y - y) < gap)
      return false;
  return true;
}

static size_t
raw_labels (const MlView *v, const MlScene *s, int target, MlAddrLabel *out, size_t cap)
{
  double vals[32], step;
  double lo = (double) s->addr_origin + v->a0, hi = (double) s->addr_origin + v->a1;
  size_t n = ml_axis_ticks (ML_AXIS_BYTES, lo, hi, target, vals, 32, &step);
  size_t m = 0;
  for (size_t i = 0; i < n && m < cap; i++)
    {
      uint64_t a = (uint64_t) vals[i];
      out[m].addr = a - s->addr_origin;
      out[m].y = ml_view_addr_to_y (v, (double) out[m].addr);
      out[m].segment = -1;
      snprintf (out[m].text, sizeof out[m].text, "0x%" PRIx64, a);
      m++;
    }
  return m;
}

size_t
ml_timeline_addr_labels (const MlView *v, const MlScene *s, double min_gap, MlAddrLabel *out, size_t cap)
{
  int target = (int) (v->ph / 60.0);
  if (target < 2)
    target = 2;
  if (s->addr_raw)
    return raw_labels (v, s, target, out, cap);
  size_t ns = s->plan->n_segments, m = 0;
  double last_y = INFINITY;
  /* where each visible segment starts (the one the view starts inside at
   * its bottom), one label at least @min_gap from the one before */
  for (size_t k = 0; k < ns && m < cap; k++)
    {
      uint32_t g = s->seg_order[k];
      double base = (double) s->seg_base[g], end = base + (double) s->seg_extent[g];
      if (end <= v->a0 || base >= v->a1)
        continue;
      double at = base < v->a0 ? v->a0 : base;
      double y = ml_view_addr_to_y (v, at);
      if (fabs (last_y - y) < min_gap)
        continue;
      out[m] = (MlAddrLabel) { .y = y, .addr = (uint64_t) at, .segment = (int32_t) g, .offset = (uint64_t) (at - base) };
      snprintf (out[m].text, sizeof out[m].text, "seg %u", g);
      last_y = y;
      m++;
    }
  /* offsets in the segments, at a round step for the visible span */
  double vals[32], step = 0;
  if (ml_axis_ticks (ML_AXIS_BYTES, 0, v->a1 - v->a0, target, vals, 32, &step) == 0 || step <= 0)
    return m;
  for (size_t k = 0; k < ns && m < cap; k++)
    {
      uint32_t g = s->seg_order[k];
      double base = (double) s->seg_base[g], ext = (double) s->seg_extent[g];
      if (base + ext <= v->a0 || base >= v->a1 || ext <= step)
        continue;
      double first = base < v->a0 ? ceil ((v->a0 - base) / step) * step : step;
      for (double off = first > 0 ? first : step; off < ext && base + off < v->a1 && m < cap; off += step)
        {
          double y = ml_view_addr_to_y (v, base + off);
          if (!clear_of (out, m, y, min_gap))
            continue;
          out[m] = (MlAddrLabel) { .y = y, .addr = (uint64_t) (base + off), .segment = (int32_t) g,
                                   .offset = (uint64_t) off };
          char sz[32];
          snprintf (out[m].text, sizeof out[m].text, "+%s", ml_axis_label (ML_AXIS_BYTES, off, step, sz, sizeof sz));
          m++;
        }
    }
  return m;
}

/* Over the plot, for readers of an SVG: each segment's band (the
 * picture's share of used axis is theirs). */
static void
note_segments (cairo_t *cr, const MlView *v, const MlScene *s)
{
  for (size_t k = 0; k < s->plan->n_segments; k++)
    {
      uint32_t g = s->seg_order[k];
      double lo = fmax ((double) s->seg_base[g], v->a0), hi = fmin ((double) (s->seg_base[g] + s->seg_extent[g]), v->a1);
      if (hi <= lo)
        continue;
      double y0 = ml_view_addr_to_y (v, hi), y1 = ml_view_addr_to_y (v, lo);
      char shown[32], full[96], sz[32];
      snprintf (shown, sizeof shown, "seg %u", g);
      ml_format_size (s->seg_extent[g], sz, sizeof sz);
      if (s->plan->segments[g].addr)
        snprintf (full, sizeof full, "segment %u at 0x%" PRIx64 ", %s", g, s->plan->segments[g].addr, sz);
      else
        snprintf (full, sizeof full, "segment %u, %s", g, sz);
      _ml_note (cr, "segment", &(MlRect) { v->px, y0, v->pw, y1 - y0 }, shown, full);
    }
}

void
ml_timeline_draw_addr_axis (cairo_t *cr, const MlView *v, const MlScene *s, const MlStyle *st)
{
  int target = (int) (v->ph / 60.0);
  if (st->plot == ML_PLOT_ACTIVE)
    {
      _ml_bytes_axis (cr, st, v->px, v->py, v->ph, v->a0, v->a1, target < 2 ? 2 : target, 0, 0);
      _ml_note (cr, "plot", &(MlRect) { v->px, v->py, v->pw, v->ph }, "active", "the live buffers stacked");
      return;
    }
  MlRgb fg = ml_style_fg (st);
  double fp = _ml_font_px (st);
  _ml_set_rgb (cr, fg, 0.35);
  cairo_set_line_width (cr, 1.0);
  /* every segment's start, a short tick where they are 3 px apart */
  double last = INFINITY;
  for (size_t k = 0; !s->addr_raw && k < s->plan->n_segments; k++)
    {
      double base = (double) s->seg_base[s->seg_order[k]];
      if (base < v->a0 || base >= v->a1)
        continue;
      double y = floor (ml_view_addr_to_y (v, base)) + 0.5;
      if (fabs (last - y) < 3)
        continue;
      cairo_move_to (cr, v->px - 3, y);
      cairo_line_to (cr, v->px, y);
      last = y;
    }
  cairo_stroke (cr);
  MlAddrLabel lab[128];
  size_t n = ml_timeline_addr_labels (v, s, fp * 1.3, lab, 128);
  for (size_t i = 0; i < n; i++)
    {
      bool seg = s->addr_raw || lab[i].text[0] == 's';
      double y = floor (lab[i].y) + 0.5;
      _ml_set_rgb (cr, fg, 0.5);
      cairo_move_to (cr, v->px - (seg ? 6 : 4), y);
      cairo_line_to (cr, v->px, y);
      cairo_stroke (cr);
      double ty = _ml_clamp (lab[i].y, v->py + fp * 0.5, v->py + v->ph - fp * 0.5);
      double tw = _ml_text_at (cr, st, lab[i].text, v->px - 8, ty, AL_RIGHT, VA_MIDDLE, seg ? 0.85 : 0.8, false, fg,
                               seg ? 0.85 : 0.6, 0);
      char full[96];
      if (lab[i].segment >= 0)
        snprintf (full, sizeof full, "segment %d + %" PRIu64 " bytes", lab[i].segment, lab[i].offset);
      else
        snprintf (full, sizeof full, "address %s", lab[i].text);
      _ml_note (cr, "addr-label", &(MlRect) { v->px - 8 - tw, ty - fp / 2, tw, fp }, lab[i].text, full);
    }
  if (cairo_get_user_data (cr, &_ml_notes_key))
    {
      _ml_note (cr, "plot", &(MlRect) { v->px, v->py, v->pw, v->ph }, s->addr_raw ? "raw" : "packed",
                s->addr_raw ? "address axis: the recorded addresses" : "address axis: the segments side by side");
      note_segments (cr, v, s);
    }
}
