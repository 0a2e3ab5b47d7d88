/* output.c — pictures to files: PNG, SVG or PDF by extension, bounded
 * in size, written atomically. */
#include "render/timeline-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cairo-pdf.h>
#include <cairo-svg.h>

#include "sim/base/io.h"

int
ml_render_format_from_path (const char *path, MlRenderFormat *fmt, MlError *err)
{
  char ext[16];
  bool gz;
  ml_path_ext (path, ext, sizeof ext, &gz);
  if (strcmp (ext, "png") == 0)
    *fmt = ML_RENDER_PNG;
  else if (strcmp (ext, "svg") == 0)
    *fmt = ML_RENDER_SVG;
  else if (strcmp (ext, "pdf") == 0)
    *fmt = ML_RENDER_PDF;
  else
    return ml_error_set (err, ML_EUSAGE, "%s: unknown picture format \"%s\" (use .png, .svg or .pdf)", path, ext);
  return 0;
}

static cairo_status_t
write_fp (void *closure, const unsigned char *data, unsigned int length)
{
  return fwrite (data, 1, length, closure) == length ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* Closes the memory streams of an SVG and its notes and writes the SVG
 * to @fp with the notes, in a group of class "ml-notes", before its end. */
static cairo_status_t
svg_with_notes (FILE *fp, FILE *svg_fp, char **svg, size_t *svg_len, FILE *notes_fp, char **notes, size_t *notes_len,
                cairo_status_t cs)
{
  bool ok = fclose (svg_fp) == 0;
  ok = fclose (notes_fp) == 0 && ok;
  if (cs == CAIRO_STATUS_SUCCESS && !ok)
    cs = CAIRO_STATUS_NO_MEMORY;
  if (cs == CAIRO_STATUS_SUCCESS)
    {
      size_t end = *svg_len;
      for (size_t i = *svg_len; i >= 6; i--)
        if (memcmp (*svg + i - 6, "</svg>", 6) == 0)
          {
            end = i - 6;
            break;
          }
      bool w = fwrite (*svg, 1, end, fp) == end;
      if (*notes_len)
        w = fprintf (fp, "<g class=\"ml-notes\">\n%s</g>\n", *notes) > 0 && w;
      w = fwrite (*svg + end, 1, *svg_len - end, fp) == *svg_len - end && w;
      if (!w)
        cs = CAIRO_STATUS_WRITE_ERROR;
    }
  free (*svg);
  free (*notes);
  return cs;
}

int
ml_render_check_size (int width, int height, MlError *err)
{
  if (width < ML_RENDER_MIN_W || height < ML_RENDER_MIN_H || width > ML_RENDER_MAX_SIDE || height > ML_RENDER_MAX_SIDE)
    return ml_error_set (err, ML_EUSAGE, "picture size %dx%d is outside %dx%d .. %dx%d", width, height, ML_RENDER_MIN_W,
                         ML_RENDER_MIN_H, ML_RENDER_MAX_SIDE, ML_RENDER_MAX_SIDE);
  if ((int64_t) width * height > ML_RENDER_MAX_PIXELS)
    return ml_error_set (err, ML_EUSAGE,
                         "%dx%d is %" PRId64 " pixels, more than the %d million a picture may have (an 8K screen is 7680x4320)",
                         width, height, (int64_t) width * height, ML_RENDER_MAX_PIXELS / 1000000);
  return 0;
}

int
ml_render_write (FILE *fp, MlRenderFormat fmt, int width, int height, MlDrawFunc draw, void *data, MlError *err)
{
  int rc = ml_render_check_size (width, height, err);
  if (rc < 0)
    return rc;
  cairo_surface_t *surf;
  /* an SVG is drawn into memory, so that the picture's notes (its texts,
   * paint.c) go in before its end */
  char *svg = NULL, *notes = NULL;
  size_t svg_len = 0, notes_len = 0;
  FILE *svg_fp = NULL, *notes_fp = NULL;
  switch (fmt)
    {
    case ML_RENDER_SVG:
      svg_fp = open_memstream (&svg, &svg_len);
      notes_fp = open_memstream (&notes, &notes_len);
      if (!svg_fp || !notes_fp)
        {
          if (svg_fp)
            fclose (svg_fp);
          if (notes_fp)
            fclose (notes_fp);
          free (svg);
          free (notes);
          return ml_error_set (err, ML_ENOMEM, "cannot create a %dx%d picture", width, height);
        }
      surf = cairo_svg_surface_create_for_stream (write_fp, svg_fp, width, height);
      /* sized in pixels, as the PNG of the same figure (cairo's default
       * unit, pt, opens a third larger) */
      cairo_svg_surface_set_document_unit (surf, CAIRO_SVG_UNIT_PX);
      break;
    case ML_RENDER_PDF:
      surf = cairo_pdf_surface_create_for_stream (write_fp, fp, width, height);
      break;
    default:
      surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
    }
  if (cairo_surface_status (surf) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (surf);
      return ml_error_set (err, ML_ENOMEM, "cannot create a %dx%d picture", width, height);
    }
  cairo_t *cr = cairo_create (surf);
  if (notes_fp)
    cairo_set_user_data (cr, &_ml_notes_key, notes_fp, NULL);
  draw (cr, width, height, data);
  cairo_status_t cs = cairo_status (cr);
  cairo_destroy (cr);
  if (cs == CAIRO_STATUS_SUCCESS)
    {
      if (fmt == ML_RENDER_PNG)
        cs = cairo_surface_write_to_png_stream (surf, write_fp, fp);
      else
        {
          cairo_surface_finish (surf);
          cs = cairo_surface_status (surf);
        }
    }
  cairo_surface_destroy (surf);
  if (svg_fp)
    cs = svg_with_notes (fp, svg_fp, &svg, &svg_len, notes_fp, &notes, &notes_len, cs);
  if (cs != CAIRO_STATUS_SUCCESS)
    return ml_error_set (err, cs == CAIRO_STATUS_WRITE_ERROR ? ML_EIO : ML_ENOMEM, "drawing failed: %s",
                         cairo_status_to_string (cs));
  return 0;
}

int
ml_render_to_file (const char *path, int width, int height, MlDrawFunc draw, void *data, MlError *err)
{
  MlRenderFormat fmt = ML_RENDER_PNG;
  if (strcmp (path, "-") != 0)
    {
      int rc = ml_render_format_from_path (path, &fmt, err);
      if (rc < 0)
        return rc;
    }
  MlOut *out = ml_out_open (path, err);
  if (!out)
    return err ? err->code : ML_EIO;
  int rc = ml_render_write (ml_out_file (out), fmt, width, height, draw, data, err);
  if (rc < 0)
    {
      ml_out_abort (out);
      return rc;
    }
  return ml_out_commit (out, err);
}

typedef struct {
  const MlScene *scene;
  const MlStyle *style;
  const MlView  *range;
} FigureArgs;

static void
draw_figure_cb (cairo_t *cr, int width, int height, void *data)
{
  const FigureArgs *a = data;
  ml_timeline_draw_figure (cr, a->scene, a->style, width, height, a->range);
}

int
ml_render_figure_write (FILE *fp, MlRenderFormat fmt, const MlScene *s, const MlStyle *st,
                        int width, int height, const MlView *range, MlError *err)
{
  FigureArgs a = { s, st, range };
  return ml_render_write (fp, fmt, width, height, draw_figure_cb, &a, err);
}

int
ml_render_figure_to_file (const char *path, const MlScene *s, const MlStyle *st,
                          int width, int height, const MlView *range, MlError *err)
{
  FigureArgs a = { s, st, range };
  return ml_render_to_file (path, width, height, draw_figure_cb, &a, err);
}
