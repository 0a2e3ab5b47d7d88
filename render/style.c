#include "render/style.h"

#include <string.h>

static const MlRgb palette[ML_PALETTE_N] = {
  { 0.306, 0.475, 0.655 },  /* blue    */
  { 0.949, 0.557, 0.169 },  /* orange  */
  { 0.349, 0.631, 0.310 },  /* green   */
  { 0.690, 0.478, 0.631 },  /* purple  */
  { 0.929, 0.788, 0.282 },  /* yellow  */
  { 0.463, 0.718, 0.698 },  /* teal    */
  { 1.000, 0.616, 0.655 },  /* pink    */
  { 0.612, 0.459, 0.373 },  /* brown   */
  { 0.345, 0.706, 0.902 },  /* sky     */
  { 0.502, 0.502, 0.000 },  /* olive   */
};

void
ml_style_init (MlStyle *s)
{
  memset (s, 0, sizeof *s);
  s->color_by = ML_COLOR_BY_SITE;
  s->time_axis = ML_TIME_AXIS_AUTO;
  s->font = "Sans";
  s->font_size = 9.0;
  s->show_title = s->show_legend = s->show_curves = s->show_frag = true;
  s->show_peaks = s->show_issues = s->show_oom = s->show_labels = true;
}

MlRgb
ml_style_class_color (const MlStyle *s, unsigned cls)
{
  if (cls < ML_PALETTE_N)
    return palette[cls];
  return s->dark ? (MlRgb) { 0.45, 0.45, 0.47 } : (MlRgb) { 0.72, 0.72, 0.74 };
}

MlRgb
ml_style_fg (const MlStyle *s)
{
  return s->dark ? (MlRgb) { 0.90, 0.90, 0.90 } : (MlRgb) { 0.13, 0.13, 0.15 };
}

MlRgb
ml_style_bg (const MlStyle *s)
{
  return s->dark ? (MlRgb) { 0.12, 0.12, 0.13 } : (MlRgb) { 1.0, 1.0, 1.0 };
}

MlRgb
ml_style_grid (const MlStyle *s)
{
  return s->dark ? (MlRgb) { 0.25, 0.25, 0.27 } : (MlRgb) { 0.90, 0.90, 0.91 };
}

MlRgb
ml_style_race (const MlStyle *s)
{
  return (MlRgb) { 0.85, 0.10, 0.10 };
}

static const char *const by_names[ML_COLOR_BY__COUNT] = { "site", "stream", "kind", "compile_context",
                                                           "user_metadata", "frames" };

const char *
ml_color_by_name (MlColorBy by)
{
  return (unsigned) by < ML_COLOR_BY__COUNT ? by_names[by] : "?";
}

int
ml_color_by_parse (const char *name, MlColorBy *by)
{
  for (int i = 0; i < ML_COLOR_BY__COUNT; i++)
    if (strcmp (name, by_names[i]) == 0)
      {
        *by = (MlColorBy) i;
        return 0;
      }
  return -1;
}

int
ml_color_by_parse_arg (const char *arg, MlColorBy *by, const char **regex)
{
  *regex = NULL;
  if (strncmp (arg, "frames:", 7) == 0 && arg[7])
    {
      *by = ML_COLOR_BY_FRAMES;
      *regex = arg + 7;
      return 0;
    }
  return ml_color_by_parse (arg, by);
}

static const char *const plot_names[ML_PLOT__COUNT] = { "address", "active", "segments" };

const char *
ml_plot_name (MlPlot plot)
{
  return (unsigned) plot < ML_PLOT__COUNT ? plot_names[plot] : "address";
}

int
ml_plot_parse (const char *name, MlPlot *plot)
{
  for (int i = 0; i < ML_PLOT__COUNT; i++)
    if (strcmp (name, plot_names[i]) == 0)
      {
        *plot = (MlPlot) i;
        return 0;
      }
  return -1;
}

static const char *const axis_names[] = { "auto", "ticks", "time" };

const char *
ml_time_axis_name (MlTimeAxis axis)
{
  return (unsigned) axis < 3 ? axis_names[axis] : "auto";
}

int
ml_time_axis_parse (const char *name, MlTimeAxis *axis)
{
  for (int i = 0; i < 3; i++)
    if (strcmp (name, axis_names[i]) == 0)
      {
        *axis = (MlTimeAxis) i;
        return 0;
      }
  return -1;
}
