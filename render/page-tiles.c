/* page-tiles.c — the level-of-detail tiles of the interactive page
 * (page-private.h): the address × time picture of a large trace drawn
 * here, in C, by the renderer the static pictures and the viewer use
 * (ml_timeline_draw_buffers; the stacked plot by ml_active_draw), at a
 * few zoom levels, as PNG images in the figure's data. A zoomed-out view of a million buffers then draws a
 * tile or two, not a million buffers; zoomed in past the last level, the
 * page draws the buffers in view itself. */
#include "render/page-private.h"

#include <stdlib.h>
#include <string.h>

#include "render/timeline.h"

typedef struct {
  unsigned char *data;
  size_t         n, cap;
} Png;

static cairo_status_t
png_write (void *closure, const unsigned char *data, unsigned int length)
{
  Png *p = closure;
  if (p->n + length > p->cap)
    {
      size_t cap = p->cap ? p->cap * 2 : 1 << 16;
      while (cap < p->n + length)
        cap *= 2;
      unsigned char *q = realloc (p->data, cap);
      if (!q)
        return CAIRO_STATUS_NO_MEMORY;
      p->data = q;
      p->cap = cap;
    }
  memcpy (p->data + p->n, data, length);
  p->n += length;
  return CAIRO_STATUS_SUCCESS;
}

/* Tile @k of @of across the time axis of @plot: ticks [k, k + 1) * end
 * / of, the whole vertical axis (the addresses, or the most bytes live
 * at once for the stacked plot), as a base64 PNG string. */
static int
put_tile (FILE *fp, const MlScene *s, const MlStyle *st, MlPlot plot, unsigned k, unsigned of, MlError *err)
{
  double end = (double) s->end_tick;
  double top = plot == ML_PLOT_ACTIVE ? (double) s->live_max : (double) ml_scene_extent (s, ML_PLOT_ADDRESS);
  MlView v;
  ml_view_init (&v, 0, end, 0, top, 0, 0, ML_PAGE_TILE_W, ML_PAGE_TILE_H);
  ml_view_set_time (&v, end * k / of, end * (k + 1) / of);
  ml_view_set_addr (&v, 0, top);
  cairo_surface_t *img = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, ML_PAGE_TILE_W, ML_PAGE_TILE_H);
  cairo_t *cr = cairo_create (img);
  if (plot == ML_PLOT_ACTIVE)
    ml_active_draw (cr, &v, s, st);
  else
    ml_timeline_draw_buffers (cr, &v, s, st);
  cairo_destroy (cr);
  Png png = { 0 };
  cairo_status_t status = cairo_surface_status (img);
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_write_to_png_stream (img, png_write, &png);
  cairo_surface_destroy (img);
  if (status != CAIRO_STATUS_SUCCESS)
    {
      free (png.data);
      return ml_error_set (err, ML_ENOMEM, "cannot draw the page's tiles: %s", cairo_status_to_string (status));
    }
  _ml_b64_string (fp, png.data, png.n);
  free (png.data);
  return 0;
}

int
_ml_page_tiles (FILE *fp, const MlScene *s, MlError *err)
{
  if (s->n_items < ML_PAGE_TILE_MIN_ITEMS || s->end_tick < 1u << (ML_PAGE_TILE_LEVELS - 1))
    return 0;
  MlStyle st;
  ml_style_init (&st);
  fprintf (fp, ",\"tiles\":{\"w\":%d,\"h\":%d,\"by\":\"%s\"", ML_PAGE_TILE_W, ML_PAGE_TILE_H,
           ml_color_by_name (st.color_by));
  static const MlPlot plots[] = { ML_PLOT_ADDRESS, ML_PLOT_ACTIVE };
  static const char *const names[] = { "address", "active" };
  for (int p = 0; p < 2; p++)
    {
      fprintf (fp, ",\"%s\":[", names[p]);
      for (unsigned level = 0; level < ML_PAGE_TILE_LEVELS; level++)
        {
          fputs (level ? ",[" : "[", fp);
          for (unsigned k = 0; k < 1u << level; k++)
            {
              if (k)
                fputc (',', fp);
              int rc = put_tile (fp, s, &st, plots[p], k, 1u << level, err);
              if (rc < 0)
                return rc;
            }
          fputc (']', fp);
        }
      fputc (']', fp);
    }
  fputc ('}', fp);
  return 0;
}
