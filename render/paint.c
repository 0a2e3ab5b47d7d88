/* paint.c — the drawing primitives the renderer's pictures share
 * (timeline-private.h): colours, text through pango, dashed lines, the
 * plot frame. */
#include "render/timeline-private.h"

#include <math.h>

#include <pango/pangocairo.h>

#include "render/html.h"

void
_ml_set_rgb (cairo_t *cr, MlRgb c, double alpha)
{
  cairo_set_source_rgba (cr, c.r, c.g, c.b, alpha);
}

MlRgb
_ml_shade (MlRgb c, double f)   /* f < 1 darker, > 1 lighter */
{
  if (f < 1.0)
    return (MlRgb) { c.r * f, c.g * f, c.b * f };
  double k = f - 1.0;
  return (MlRgb) { c.r + (1 - c.r) * k, c.g + (1 - c.g) * k, c.b + (1 - c.b) * k };
}

uint32_t
_ml_argb (MlRgb c)
{
  return 0xff000000u | (uint32_t) lround (c.r * 255) << 16 | (uint32_t) lround (c.g * 255) << 8
         | (uint32_t) lround (c.b * 255);
}

double
_ml_luminance (MlRgb c)
{
  return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
}

double
_ml_font_px (const MlStyle *st)
{
  return st->font_size * 96.0 / 72.0;
}

/* Lays out @text in the style's font scaled by @scale; @max_w > 0
 * ellipsizes in the middle. Caller unrefs. */
static PangoLayout *
make_layout (cairo_t *cr, const MlStyle *st, const char *text, double scale, bool bold, double max_w)
{
  PangoLayout *l = pango_cairo_create_layout (cr);
  PangoFontDescription *fd = pango_font_description_new ();
  pango_font_description_set_family (fd, st->font ? st->font : "Sans");
  pango_font_description_set_absolute_size (fd, _ml_font_px (st) * scale * PANGO_SCALE);
  if (bold)
    pango_font_description_set_weight (fd, PANGO_WEIGHT_BOLD);
  pango_layout_set_font_description (l, fd);
  pango_font_description_free (fd);
  if (max_w > 0)
    {
      pango_layout_set_width (l, (int) (max_w * PANGO_SCALE));
      pango_layout_set_ellipsize (l, PANGO_ELLIPSIZE_MIDDLE);
    }
  pango_layout_set_text (l, text, -1);
  return l;
}

void
_ml_text_size (cairo_t *cr, const MlStyle *st, const char *text, double scale, bool bold, double *w, double *h)
{
  PangoLayout *l = make_layout (cr, st, text, scale, bold, 0);
  int iw, ih;
  pango_layout_get_pixel_size (l, &iw, &ih);
  g_object_unref (l);
  *w = iw;
  *h = ih;
}

/* Draws @text anchored at (@x, @y); returns its width. */
double
_ml_text_at (cairo_t *cr, const MlStyle *st, const char *text, double x, double y, int align, int valign,
         double scale, bool bold, MlRgb color, double alpha, double max_w)
{
  PangoLayout *l = make_layout (cr, st, text, scale, bold, max_w);
  int iw, ih;
  pango_layout_get_pixel_size (l, &iw, &ih);
  double tx = align == AL_CENTER ? x - iw / 2.0 : align == AL_RIGHT ? x - iw : x;
  double ty = valign == VA_MIDDLE ? y - ih / 2.0 : valign == VA_BOTTOM ? y - ih : y;
  _ml_set_rgb (cr, color, alpha);
  cairo_move_to (cr, tx, ty);
  pango_cairo_show_layout (cr, l);
  g_object_unref (l);
  return iw;
}

double
_ml_clamp (double v, double lo, double hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

bool
_ml_rects_meet (const MlRect *a, const MlRect *b)
{
  return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

void
_ml_dashed_vline (cairo_t *cr, double x, double y0, double y1, MlRgb c, double alpha, double width)
{
  static const double dash[] = { 4.0, 3.0 };
  cairo_save (cr);
  cairo_set_dash (cr, dash, 2, 0);
  cairo_set_line_width (cr, width);
  _ml_set_rgb (cr, c, alpha);
  cairo_move_to (cr, floor (x) + 0.5, y0);
  cairo_line_to (cr, floor (x) + 0.5, y1);
  cairo_stroke (cr);
  cairo_restore (cr);
}

void
_ml_dashed_hline (cairo_t *cr, double x0, double x1, double y, MlRgb c, double alpha, double width)
{
  static const double dash[] = { 6.0, 4.0 };
  cairo_save (cr);
  cairo_set_dash (cr, dash, 2, 0);
  cairo_set_line_width (cr, width);
  _ml_set_rgb (cr, c, alpha);
  cairo_move_to (cr, x0, floor (y) + 0.5);
  cairo_line_to (cr, x1, floor (y) + 0.5);
  cairo_stroke (cr);
  cairo_restore (cr);
}

void
_ml_draw_frame (cairo_t *cr, const MlView *v, const MlStyle *st)
{
  _ml_set_rgb (cr, ml_style_fg (st), 0.35);
  cairo_set_line_width (cr, 1.0);
  cairo_rectangle (cr, floor (v->px) + 0.5, floor (v->py) + 0.5, round (v->pw) - 1, round (v->ph) - 1);
  cairo_stroke (cr);
}

const cairo_user_data_key_t _ml_notes_key;

void
_ml_note (cairo_t *cr, const char *kind, const MlRect *r, const char *shown, const char *full)
{
  FILE *fp = cairo_get_user_data (cr, &_ml_notes_key);
  if (!fp)
    return;
  double x0 = r->x, y0 = r->y, x1 = r->x + r->w, y1 = r->y + r->h;
  cairo_user_to_device (cr, &x0, &y0);
  cairo_user_to_device (cr, &x1, &y1);
  fprintf (fp, "<rect class=\"ml-%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#000\" fill-opacity=\"0\">",
           kind, fmin (x0, x1), fmin (y0, y1), fabs (x1 - x0), fabs (y1 - y0));
  fputs ("<title>", fp);
  ml_xml_escape (fp, full ? full : shown);
  fputs ("</title><desc>", fp);
  ml_xml_escape (fp, shown);
  fputs ("</desc></rect>\n", fp);
}
