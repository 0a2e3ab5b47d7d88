/* scene.h — the geometry a figure draws, prepared once per (trace, plan).
 *
 * A scene lays every segment of a plan side by side on one "global
 * address" axis (segments ordered by their recorded base address when all
 * have one, else by index; each as wide as its size or its highest
 * buffer), and turns every buffer with bytes into an item: [start, end)
 * in ticks × [addr, addr + size) in global bytes. Items keep the buffers'
 * order, which is sorted by start; max_end[i] is the largest end among
 * items 0..i, so the items that overlap ticks [t0, t1) all lie in
 * [ml_scene_first_visible (t0), ml_scene_end_visible (t1)), found by
 * binary search.
 *
 * The scene also owns what the other panels draw: the live / reserved /
 * fragmentation curve and the metrics (sim/metrics.h), the peak points
 * with blame (sim/buffers.h), the colour classes of each colouring (the
 * legend), the plan's OOM, and a borrowed list of issues (races).
 *
 * Fields are public for drawing and reading; treat them as read-only.
 */
#ifndef ML_SCENE_H
#define ML_SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "render/style.h"
#include "render/view.h"
#include "sim/analysis/check.h"
#include "sim/analysis/groups.h"
#include "sim/analysis/peak-groups.h"
#include "sim/metrics.h"

#define ML_SCENE_BLOCK 64

typedef struct {
  uint64_t start, end;   /* ticks, [start, end)                        */
  uint64_t addr;         /* global address: segment base + offset      */
  uint64_t size;         /* rounded bytes                              */
  uint32_t buffer;       /* index in MlBuffers                         */
  uint8_t  cls[ML_COLOR_BY__COUNT]; /* colour class per colouring      */
} MlSceneItem;

/* A band of the address axis: the segments of one (memory pool, stream),
 * which PyTorch's caching allocator keeps apart (a block of one never
 * serves another), side by side. Only on the packed axis, and only when
 * the plan's segments come in two such groups or more. */
#define ML_SCENE_BAND_LABEL 112
typedef struct {
  uint32_t pool;          /* MlTrace.pools index; 0 = the default pools  */
  uint32_t stream;        /* the trace's stream index                     */
  uint64_t lo, hi;        /* its segments' global addresses [lo, hi)      */
  size_t   first, n;      /* its segments: seg_order[first .. first + n)  */
  char     label[ML_SCENE_BAND_LABEL]; /* "default pool · stream 0",
                             "CUDA graph pool (1, 0) · stream 0x5a2000000100" */
} MlSceneBand;

/* A colour class: a legend entry. */
typedef struct {
  char    *label;        /* owned: "model.py:12:forward", "stream 7"   */
  double   area;         /* byte-ticks drawn in this class             */
  uint64_t peak_bytes;   /* bytes of the class live at the lower-bound tick */
  size_t   count;        /* buffers                                    */
} MlSceneClass;

typedef struct {
  const MlBuffers *bufs;       /* borrowed */
  const MlPlan    *plan;       /* borrowed */
  const MlIssues  *issues;     /* borrowed, may be NULL */

  MlSceneItem *items;          /* by start */
  uint64_t    *max_end;        /* prefix maxima of items[].end */
  size_t       n_items;
  /* per block of ML_SCENE_BLOCK items: the largest end and the address
   * span, so hit tests skip blocks that cannot contain the point */
  uint64_t    *blk_end, *blk_lo, *blk_hi;

  uint64_t    *seg_base;       /* plan->n_segments global base addresses */
  uint64_t    *seg_extent;     /* and widths */
  uint64_t     addr_extent;    /* the address axis: the sum of the widths
                                  (packed), or from the lowest recorded
                                  base to the highest end (raw) */
  uint32_t    *seg_order;      /* segments by base */
  /* the bands of (pool, stream), bottom first (default pool first, then
   * by pool and stream index); n_bands 0: none (one group, or the raw
   * axis, where groups interleave). seg_band[g]: segment g's band. */
  MlSceneBand *bands;
  size_t       n_bands;
  uint32_t    *seg_band;
  bool         addr_raw;       /* at their recorded addresses           */
  uint64_t     addr_origin;    /* raw: the address of global address 0  */
  /* the mappings of paged segments (plan->maps; an expandable segment
   * grows and shrinks with them): map_order[seg_map_first[g] ..
   * seg_map_first[g + 1]) index plan->maps for segment g, by start */
  size_t      *seg_map_first;  /* n_segments + 1 */
  uint32_t    *map_order;
  uint64_t    *seg_mapped_max; /* n_segments: the most bytes mapped at once */
  uint64_t     end_tick;       /* the time axis is [0, end_tick) */
  uint64_t     first_tick;     /* the first tick anything happens */

  /* the stacked view (ML_PLOT_ACTIVE): rank[i] is item i's place in the
   * stack, bottom first: the longest-lived at the bottom (then by start),
   * as memory_viz stacks them; live_max is the most live bytes at once */
  uint32_t    *rank;
  uint64_t     live_max;

  /* the request the plan's OOM refused (an OOM with a request), drawn
   * at the OOM tick: oom_bytes from global address oom_addr (where the
   * strategy placed it once the capacity was lifted; for a recorded OOM,
   * which has no place, on top of the address axis: the allocator found
   * no room in what it had) and, in the stacked view, from oom_stack (its
   * place in the stack, or on top of the bytes live then) */
  bool         oom_drawn;
  uint64_t     oom_addr, oom_stack, oom_bytes;

  MlMetrics    metrics;
  MlCurve      curve;
  uint64_t     curve_max;      /* largest live or reserved value */
  /* the peaks by level, each with its occurrences, and the iterations
   * when the trace repeats (sim/analysis/peak-groups.h): the curves
   * panel marks every occurrence and labels each level once */
  MlPeakGroups groups;

  /* classes[by][k], k < n_classes[by]; k == ML_PALETTE_N is "other" */
  MlSceneClass classes[ML_COLOR_BY__COUNT][ML_PALETTE_N + 1];
  size_t       n_classes[ML_COLOR_BY__COUNT];
  bool         site_per_buffer; /* no names or sites: ML_COLOR_BY_SITE
                                   colours each buffer by a hash of its id,
                                   and has no classes */
  /* the buffer ids the trace's annotate marks are tied to, sorted
   * (ml_scene_buffer_notes looks only where there may be some) */
  uint64_t    *note_ids;
  size_t       n_note_ids;
  char        *frames_regex;   /* owned: ML_COLOR_BY_FRAMES's expression,
                                  NULL: none (every buffer "(none)") */

  /* tick -> nanoseconds, at the events that carry a time */
  uint64_t    *time_tick;
  int64_t     *time_ns;
  size_t       n_times;
  bool         all_timed;      /* every event carries a time */
  MlTimeWarp   warp;           /* the real-time axis over those points */

  char        *name;           /* owned: the trace's name for titles */
} MlScene;

typedef struct {
  const char     *name;        /* the trace's name ("train-step.jsonl"), may be NULL */
  const MlIssues *issues;      /* borrowed; may be NULL */
  size_t          max_peaks;   /* 0 = 3 */
  /* the address axis: false = packed (segments side by side in address
   * order, the gaps between them left out), true = raw (each segment at
   * its recorded address; packed when some segment has none) */
  bool            raw_addresses;
  /* ML_COLOR_BY_FRAMES's regular expression (POSIX extended, over each
   * stack's frames as "file:line:function", innermost first: the first
   * that matches names the group, as `stats --group-by REGEX`); NULL:
   * every buffer in "(none)" */
  const char     *frames_regex;
} MlSceneOptions;

/* Builds the scene of @plan over @bufs (O(n log n)). Both are borrowed
 * and must outlive the scene. @opts may be NULL. Free with ml_scene_free. */
int  ml_scene_new  (const MlBuffers *bufs, const MlPlan *plan, const MlSceneOptions *opts,
                    MlScene **out, MlError *err);
void ml_scene_free (MlScene *scene);

/* Colours by frames under @regex (NULL or "": none) from now on: the
 * ML_COLOR_BY_FRAMES classes and each item's class in it, made again.
 * ML_EUSAGE for a bad expression (the scene is unchanged), ML_ENOMEM. */
int  ml_scene_color_frames (MlScene *scene, const char *regex, MlError *err) __attribute__ ((warn_unused_result));

/* The texts of the `annotate` entries tied to buffer @buffer
 * (ml_buffer_annotations), "; "-joined into @out (cut to @len): how many
 * there are, 0 for none. */
size_t ml_scene_buffer_notes (const MlScene *scene, uint32_t buffer, char *out, size_t len);

/* Whether @trace can be coloured @by: compile_context / user_metadata
 * need a format that records them, frames (@regex) a trace with stacks
 * (ml_group_check); the other colourings always can. 0, or ML_EUSAGE
 * saying why not. */
int  ml_color_by_check (const MlTrace *trace, MlColorBy by, const char *regex, MlError *err);

/* Replaces the borrowed issue list (NULL = none). */
void ml_scene_set_issues (MlScene *scene, const MlIssues *issues);

/* A view of the whole scene fitted to the plot rectangle. */
void ml_scene_view_init (const MlScene *scene, MlView *view, double px, double py, double pw, double ph);
/* The same for @plot: its vertical axis is the address space (address,
 * segments) or the stacked live bytes (active). */
void ml_scene_view_init_plot (const MlScene *scene, MlPlot plot, MlView *view, double px, double py, double pw,
                              double ph);

/* The vertical extent of @plot's axis: the address axis (addr_extent) or
 * the most live bytes (live_max), raised to hold the refused request of
 * the plan's OOM where it is drawn. */
uint64_t ml_scene_extent (const MlScene *scene, MlPlot plot);

/* Whether @axis draws @scene on a real-time x axis: "time" whenever at
 * least two events carry distinct times, "auto" when every event does. */
bool ml_scene_real_time (const MlScene *scene, MlTimeAxis axis);
/* ml_scene_view_init_plot() for @style's plot, with the real-time warp
 * when ml_scene_real_time() says so. */
void ml_scene_view_init_style (const MlScene *scene, const MlStyle *style, MlView *view, double px, double py,
                               double pw, double ph);
/* Sets or clears @view's warp for @axis (the spans stay in ticks). */
void ml_scene_view_set_axis (const MlScene *scene, MlTimeAxis axis, MlView *view);

/* The first item whose lifetime may reach past @t0 (binary search over
 * max_end), and one past the last item that starts before @t1. */
size_t ml_scene_first_visible (const MlScene *scene, double t0);
size_t ml_scene_end_visible   (const MlScene *scene, double t1);

/* The global address of byte @offset of segment @segment. */
static inline uint64_t
ml_scene_addr (const MlScene *scene, uint32_t segment, uint64_t offset)
{
  return scene->seg_base[segment] + offset;
}

/* Hit testing over the drawn geometry: the item under device pixel
 * (@x, @y) of @view: one that contains the point, else the largest within
 * half a pixel (sub-pixel buffers are drawn merged, and stay reachable).
 * Returns the item index, or -1 when there is none. */
long ml_scene_hit (const MlScene *scene, const MlView *view, double x, double y);

/* @text with every path shortened to its last component, for labels:
 * "D:\\src\\model.py:397:forward" -> "model.py:397:forward",
 * "freed at /home/u/x/opt.py:71:step" -> "freed at opt.py:71:step".
 * Writes into @buf (truncated to @len) and returns it. */
char *ml_short_label (const char *text, char *buf, size_t len);
/* The same keeping the last @parts components of each path (1: as
 * ml_short_label), so that labels of different sites can be told apart:
 * "a/attention.py:12:f" and "b/attention.py:12:f" at 2. */
char *ml_short_label_keep (const char *text, unsigned parts, char *buf, size_t len);

/* The band (scene->bands index) at device pixel row @y of @view's plot
 * (the address plots), -1 for none. */
long ml_scene_band_at (const MlScene *scene, const MlView *view, double y);

/* Real time of @tick in nanoseconds, interpolated between the events that
 * carry one; false when the trace has no times. */
bool ml_scene_tick_to_ns (const MlScene *scene, double tick, double *ns);
/* And back (for axes that label real time); false without times. */
bool ml_scene_ns_to_tick (const MlScene *scene, double ns, double *tick);

#endif
