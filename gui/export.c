/* export.c — pictures of the timelines. */
#include "gui/export.h"

#include "render/timeline.h"
#include "sim/base/io.h"

gboolean
ml_export_is_report_format (const char *fmt)
{
  return g_strcmp0 (fmt, "html") == 0 || g_strcmp0 (fmt, "md") == 0 || g_strcmp0 (fmt, "json") == 0
         || g_strcmp0 (fmt, "csv") == 0;
}

typedef struct {
  MlTimelineView *const *views;
  int  n;
  int  heights[2];
} Stack;

static void
draw_stack (cairo_t *cr, int width, int height, void *data)
{
  const Stack *s = data;
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  int y = 0;
  for (int i = 0; i < s->n; i++)
    {
      cairo_save (cr);
      cairo_translate (cr, 0, y);
      cairo_rectangle (cr, 0, 0, width, s->heights[i]);
      cairo_clip (cr);
      ml_timeline_view_draw_to (s->views[i], cr, width, s->heights[i]);
      cairo_restore (cr);
      y += s->heights[i];
    }
}

gboolean
ml_export_views (MlTimelineView *const *views, int n, const char *format, const char *path, GError **error)
{
  MlRenderFormat fmt;
  if (g_strcmp0 (format, "png") == 0)
    fmt = ML_RENDER_PNG;
  else if (g_strcmp0 (format, "svg") == 0)
    fmt = ML_RENDER_SVG;
  else if (g_strcmp0 (format, "pdf") == 0)
    fmt = ML_RENDER_PDF;
  else
    {
      g_set_error (error, ML_GUI_ERROR, 2, "Unknown export format \"%s\" (png, svg, pdf; reports: html, md, json, csv)", format);
      return FALSE;
    }
  Stack s = { views, MIN (n, 2), { 0, 0 } };
  int w = MAX (gtk_widget_get_width (GTK_WIDGET (views[0])), 400), h = 0;
  for (int i = 0; i < s.n; i++)
    h += s.heights[i] = MAX (gtk_widget_get_height (GTK_WIDGET (views[i])), 200);
  MlError err = { 0 };
  MlOut *out = ml_out_open (path, &err);
  int rc = out ? ml_render_write (ml_out_file (out), fmt, w, h, draw_stack, &s, &err) : err.code ? err.code : ML_EIO;
  if (out)
    {
      if (rc < 0)
        ml_out_abort (out);
      else
        rc = ml_out_commit (out, &err);
    }
  if (rc < 0)
    {
      g_set_error (error, ML_GUI_ERROR, 3, "Could not write %s: %s", path, err.msg);
      return FALSE;
    }
  return TRUE;
}
