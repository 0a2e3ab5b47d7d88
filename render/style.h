/* style.h — how a figure looks: colours, fonts, what is shown.
 *
 * Pure data (no cairo types) so the viewer can keep one in its settings.
 * The palette is fixed and colour-blind-aware (Okabe–Ito + Tableau
 * tones): class k of a colouring (see scene.h) always gets palette[k], so
 * the same trace draws the same way every time; the last class, "other",
 * is grey.
 */
#ifndef ML_STYLE_H
#define ML_STYLE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
  ML_COLOR_BY_SITE = 0,   /* call site, or the buffer's name            */
  ML_COLOR_BY_STREAM,     /* CUDA stream                                */
  ML_COLOR_BY_KIND,       /* weight / activation / input / output       */
  /* the groups of sim/analysis/groups.h (stats --group-by): a PyTorch
   * snapshot's (or memlens JSONL's) per-allocation fields, "(none)" for a
   * buffer without one; ml_group_check() refuses them on other formats */
  ML_COLOR_BY_COMPILE_CONTEXT, /* the torch.compile region              */
  ML_COLOR_BY_USER_METADATA,   /* the user's metadata                   */
  ML_COLOR_BY_FRAMES,     /* a regular expression over the stack's frames
                             (MlSceneOptions.frames_regex)             */
  ML_COLOR_BY__COUNT
} MlColorBy;

typedef enum {
  ML_TIME_AXIS_AUTO = 0,  /* real time when every event has one; else
                             ticks, with the real time under each label
                             where some events have one               */
  ML_TIME_AXIS_TICKS,     /* x in ticks (event index), tick labels only */
  ML_TIME_AXIS_TIME,      /* x in real time (ns, µs, ms, s at evenly
                             spaced round values) when at least two
                             events have distinct times; events without
                             a time sit between their neighbours'     */
} MlTimeAxis;

/* What the main plot shows (the curves, axes and legend stay the same). */
typedef enum {
  ML_PLOT_ADDRESS = 0,    /* address x time: each buffer where the plan put it */
  ML_PLOT_ACTIVE,         /* live buffers stacked over time, no addresses
                             (memory_viz's "active memory timeline")   */
  ML_PLOT_SEGMENTS,       /* the plan's segments over time, outlined,
                             with their buffers inside                 */
  ML_PLOT__COUNT
} MlPlot;

typedef struct { double r, g, b; } MlRgb;

/* Classes per colouring: ML_PALETTE_N coloured ones, then "other". */
#define ML_PALETTE_N 10

typedef struct {
  MlPlot      plot;
  MlColorBy   color_by;
  MlTimeAxis  time_axis;
  const char *font;          /* Pango family, default "Sans"           */
  double      font_size;     /* points at 96 dpi, default 9            */
  bool        dark;          /* dark background                        */
  bool        show_title, show_legend, show_curves, show_frag;
  bool        show_peaks, show_issues, show_oom, show_labels;
  const char *title;         /* NULL: made from the scene              */
} MlStyle;

void  ml_style_init (MlStyle *style);
/* Colour of class @cls (>= ML_PALETTE_N: "other", grey). */
MlRgb ml_style_class_color (const MlStyle *style, unsigned cls);
MlRgb ml_style_fg   (const MlStyle *style);   /* text, axes   */
MlRgb ml_style_bg   (const MlStyle *style);   /* background   */
MlRgb ml_style_grid (const MlStyle *style);   /* grid lines   */
MlRgb ml_style_race (const MlStyle *style);   /* races, OOM   */
/* "auto", "ticks", "time"; parse returns -1 for anything else. */
const char *ml_time_axis_name  (MlTimeAxis axis);
int         ml_time_axis_parse (const char *name, MlTimeAxis *axis);
/* "site", "stream", "kind", "compile_context", "user_metadata",
 * "frames"; parse returns -1 for anything else. ml_color_by_parse_arg
 * also takes "frames:REGEX" (the command line's and the viewer's form),
 * setting *@regex to the text after the colon (borrowed from @arg; NULL
 * for the other modes, and for a bare "frames"). */
const char *ml_color_by_name  (MlColorBy by);
int         ml_color_by_parse (const char *name, MlColorBy *by);
int         ml_color_by_parse_arg (const char *arg, MlColorBy *by, const char **regex);
/* "address", "active", "segments"; parse returns -1 for anything else. */
const char *ml_plot_name  (MlPlot plot);
int         ml_plot_parse (const char *name, MlPlot *plot);

#endif
