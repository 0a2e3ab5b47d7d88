/* series-svg.c — a SERIES figure (render/report/doc.h: step curves of
 * bytes over ticks on one axis) as SVG text, no cairo needed: each curve
 * keeps the highest value of each pixel column, so no peak vanishes. */
#include "render/series-svg.h"

#include <inttypes.h>
#include <stdlib.h>

#include "sim/base/units.h"

enum { LEFT = 90, RIGHT = 20, TOP = 48, BOTTOM = 34 };

static const char *const colors[] = { "#4e79a7", "#e15759", "#59a14f", "#f28e2c" };

static void
text (FILE *fp, double x, double y, const char *anchor, const char *s)
{
  fprintf (fp, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-family=\"sans-serif\" fill=\"#444\" "
               "text-anchor=\"%s\">", x, y, anchor);
  for (; *s; s++)
    switch (*s)
      {
      case '<': fputs ("&lt;", fp); break;
      case '>': fputs ("&gt;", fp); break;
      case '&': fputs ("&amp;", fp); break;
      default: fputc (*s, fp);
      }
  fputs ("</text>\n", fp);
}

/* The highest value of series @s in each of @w pixel columns (-1: none). */
static void
columns (const MlDocSeries *s, uint64_t x_max, int w, double *col)
{
  for (int c = 0; c < w; c++)
    col[c] = -1;
  for (size_t i = 0; i < s->n; i++)
    {
      uint64_t x0 = s->x[i], x1 = i + 1 < s->n ? s->x[i + 1] : s->x_end;
      int c0 = (int) ((double) x0 / (double) x_max * (w - 1)), c1 = (int) ((double) x1 / (double) x_max * (w - 1));
      for (int c = c0; c <= c1 && c < w; c++)
        if ((double) s->y[i] > col[c])
          col[c] = (double) s->y[i];
    }
}

static void
axes (FILE *fp, const MlDocFigure *f, uint64_t x_max, double y_max, int w, int h)
{
  char buf[32];
  fprintf (fp, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fff\" stroke=\"#ccc\"/>\n", LEFT, TOP, w, h);
  for (int k = 0; k <= 4; k++)
    {
      double y = TOP + h - (double) h * k / 4;
      fprintf (fp, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n", LEFT, LEFT + w, y, y);
      text (fp, LEFT - 6, y + 4, "end", ml_format_size ((uint64_t) (y_max * k / 4), buf, sizeof buf));
      double x = LEFT + (double) w * k / 4;
      snprintf (buf, sizeof buf, "%" PRIu64, (uint64_t) ((double) x_max * k / 4));
      text (fp, x, TOP + h + 16, k == 0 ? "start" : k == 4 ? "end" : "middle", buf);
    }
  text (fp, LEFT + w / 2.0, TOP + h + 30, "middle", "tick");
  if (f->y_line && (double) f->y_line <= y_max)
    {
      double y = TOP + h - (double) f->y_line / y_max * h;
      fprintf (fp, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"2 3\"/>\n",
               LEFT, LEFT + w, y, y);
      if (f->y_line_label)
        text (fp, LEFT + w - 4, y - 4, "end", f->y_line_label);
    }
}

int
ml_render_series_svg (FILE *fp, const MlDocFigure *f)
{
  int W = f->width > LEFT + RIGHT + 10 ? f->width : 800, H = f->height > TOP + BOTTOM + 10 ? f->height : 300;
  int w = W - LEFT - RIGHT, h = H - TOP - BOTTOM;
  uint64_t x_max = 1;
  double y_max = (double) f->y_line;
  for (size_t s = 0; s < f->n_series; s++)
    {
      const MlDocSeries *se = &f->series[s];
      if (se->x_end > x_max)
        x_max = se->x_end;
      for (size_t i = 0; i < se->n; i++)
        if ((double) se->y[i] > y_max)
          y_max = (double) se->y[i];
    }
  y_max = y_max > 0 ? y_max * 1.05 : 1;
  double *col = malloc ((size_t) w * sizeof *col);
  if (!col)
    return ML_ENOMEM;
  fprintf (fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\">\n", W, H,
           W, H);
  axes (fp, f, x_max, y_max, w, h);
  for (size_t s = 0; s < f->n_series; s++)
    {
      const MlDocSeries *se = &f->series[s];
      columns (se, x_max, w, col);
      fprintf (fp, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s points=\"", colors[s % 4],
               se->dashed ? " stroke-dasharray=\"6 3\"" : "");
      for (int c = 0; c < w; c++)
        if (col[c] >= 0)
          fprintf (fp, "%d,%.1f ", LEFT + c, TOP + h - col[c] / y_max * h);
      fputs ("\"/>\n", fp);
      double ly = 12.0 + 14.0 * (double) s;   /* the legend, above the plot */
      fprintf (fp, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
               LEFT + 8, LEFT + 36, ly, ly, colors[s % 4], se->dashed ? " stroke-dasharray=\"6 3\"" : "");
      text (fp, LEFT + 42, ly + 4, "start", se->label ? se->label : "");
    }
  fputs ("</svg>\n", fp);
  free (col);
  return 0;
}
