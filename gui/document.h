/* document.h — what the viewer shows: one loaded trace and its analyses.
 *
 * A MlDocument is immutable once built and reference counted, so a worker
 * thread can build the next one (new knobs, another strategy) while the
 * window keeps drawing the current one; the window swaps them when the
 * worker finishes. Documents built from one file share its MlTrace through
 * MlTraceBox.
 *
 *   MlTraceBox   the loaded trace (never changes after loading)
 *   MlRun        one strategy's plan, metrics, curve and issues
 *   MlDocument   buffers for one alignment, peak points, and the runs the
 *                window shows (runs[0], and runs[1] in compare mode)
 *
 * The worker entry points (ml_document_load_async, ml_document_rerun_async)
 * run the sim/ and strategies/ libraries in a GTask thread, report
 * progress on the main context and honour the GCancellable.
 */
#ifndef ML_GUI_DOCUMENT_H
#define ML_GUI_DOCUMENT_H

#include <gio/gio.h>

#include "sim/analysis/check.h"
#include "sim/analysis/knob-sweep.h"
#include "sim/analysis/peak-groups.h"
#include "sim/formats/load.h"
#include "sim/sim.h"
#include "render/scene.h"
#include "strategies/caching-tune.h"

G_BEGIN_DECLS

#define ML_GUI_ERROR (ml_gui_error_quark ())
GQuark ml_gui_error_quark (void);

typedef struct {
  gatomicrefcount rc;
  char    *path;
  MlTrace *trace;
} MlTraceBox;

MlTraceBox *ml_trace_box_ref   (MlTraceBox *box);
void        ml_trace_box_unref (MlTraceBox *box);

typedef struct {
  gatomicrefcount rc;
  char      *strategy;   /* "best-fit", "recorded", ... */
  MlPlan    *plan;       /* NULL when status < 0 */
  MlMetrics  metrics;
  MlScene   *scene;      /* the renderer's geometry, curve and peaks;
                            NULL for comparison-table runs */
  MlIssues   issues;     /* conflicts, misaligned, outside */
  int        status;     /* 0 or a negative ML_E* code */
  char       error[ML_ERROR_MAX];
} MlRun;

MlRun *ml_run_ref   (MlRun *run);
void   ml_run_unref (MlRun *run);

/* The knobs the panel edits; plain values, copied into each job. */
typedef struct {
  guint64 align;         /* 0 = the format's default */
  guint64 capacity;      /* 0 = unlimited (or the file's implied capacity) */
  guint64 chunk;
  double  time_limit;
  guint   retries;
  char    options[256];  /* strategy options "k=v,k=v" */
  gint    device;        /* files with several devices (snapshots): the one
                            to read; -1 = the reader's choice (the OOM's
                            device, else the longest trace). A load reads
                            it; a re-run keeps its document's trace. */
  gboolean raw_addresses; /* the address axis: each segment at its
                            recorded address (else packed: side by side,
                            the gaps left out; render's --address-axis) */
} MlViewKnobs;

void ml_view_knobs_init (MlViewKnobs *knobs);

typedef struct {
  gatomicrefcount rc;
  MlTraceBox  *box;
  MlBuffers   *bufs;
  MlPeakGroups groups;    /* the peaks by level, highest first (peak-groups.h) */
  MlPeaks      peaks;     /* peaks[i]: group i's blame at its level's first tick */
  MlViewKnobs  knobs;
  MlRun       *runs[2];   /* runs[1] is NULL outside compare mode */
  guint64     *oom_ticks; /* ticks of the trace's own OOM events */
  gsize        n_oom_ticks;
  double       load_seconds;
  /* a PyTorch snapshot: its allocator settings against memlens tune's
   * default grid under the capacity knob, with the reserved curves of the
   * recorded settings and the answer (NULL otherwise, or tune_error) */
  MlTune      *tune;
  char         tune_error[ML_ERROR_MAX];
} MlDocument;

MlDocument *ml_document_ref   (MlDocument *doc);
void        ml_document_unref (MlDocument *doc);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MlDocument, ml_document_unref)

static inline const MlTrace *
ml_document_trace (const MlDocument *doc)
{
  return doc->box->trace;
}

/* The strategy a fresh document shows: "recorded" when the trace has
 * addresses, else "best-fit". */
const char *ml_document_default_strategy (const MlTrace *trace);

/* Every choice of the strategy drop-down for @trace, NULL-terminated
 * (static strings; free the array with g_free). */
const char **ml_document_strategy_names (const MlTrace *trace);

/* Progress from a worker, delivered on the main context. */
typedef void (*MlProgressFunc) (double fraction, const char *what, gpointer user_data);

/* Loads @path in a worker: reads the trace, builds lifetimes with
 * @knobs->align, finds the peak points and runs @strategies (one or two
 * names; NULL entries are skipped; NULL = the default). */
void        ml_document_load_async  (const char *path, const MlViewKnobs *knobs,
                                     const char *strategy, const char *strategy2,
                                     GCancellable *cancellable,
                                     MlProgressFunc progress, gpointer progress_data,
                                     GAsyncReadyCallback callback, gpointer user_data);
/* Returns a new reference, or NULL with @error set. */
MlDocument *ml_document_load_finish (GAsyncResult *result, GError **error);

/* Re-runs @doc's trace with new knobs and strategies in a worker
 * (rebuilding lifetimes when the alignment changed). @strategy2 may be
 * NULL (no compare). */
void        ml_document_rerun_async (MlDocument *doc, const MlViewKnobs *knobs,
                                     const char *strategy, const char *strategy2,
                                     GCancellable *cancellable,
                                     MlProgressFunc progress, gpointer progress_data,
                                     GAsyncReadyCallback callback, gpointer user_data);
MlDocument *ml_document_rerun_finish (GAsyncResult *result, GError **error);

/* The comparison table: every strategy in @names (comma list, NULL = the
 * registry's default set plus "recorded" where possible) evaluated with
 * @doc's knobs, in a worker. The result is a GPtrArray of MlRun (without
 * curves) owned by the caller. */
void       ml_document_compare_async  (MlDocument *doc, const char *names,
                                       GCancellable *cancellable,
                                       MlProgressFunc progress, gpointer progress_data,
                                       GAsyncReadyCallback callback, gpointer user_data);
GPtrArray *ml_document_compare_finish (GAsyncResult *result, GError **error);

/* Writes the project's tuning report (render/report/report.h; .html with pictures,
 * .md, .json, .csv by the extension of @path) for @doc's trace and knobs
 * in a worker: the registry's default strategies plus @extra (comma list,
 * may be NULL), the recorded plan first when the trace has addresses.
 * The file is written atomically. */
void     ml_document_report_async  (MlDocument *doc, const char *extra, const char *path,
                                    GCancellable *cancellable,
                                    MlProgressFunc progress, gpointer progress_data,
                                    GAsyncReadyCallback callback, gpointer user_data);
gboolean ml_document_report_finish (GAsyncResult *result, GError **error);

/* Runs @names (comma-separated strategies; the recorded plan is left out)
 * once per value of @spec ("KNOB=V1,V2,...", sim/analysis/knob-sweep.h)
 * with @knobs (NULL: the document's) in a worker. */
void        ml_document_sweep_async (MlDocument *doc, const MlViewKnobs *knobs, const char *names, const char *spec,
                                     GCancellable *cancellable,
                                     MlProgressFunc progress, gpointer progress_data,
                                     GAsyncReadyCallback callback, gpointer user_data);
/* The sweep (free with ml_knob_sweep_free), or NULL with @error set. */
MlKnobSweep *ml_document_sweep_finish (GAsyncResult *result, GError **error);

/* Buffers that match @text, by start: "#ID" the buffer of that id;
 * "0xADDR" those whose bytes held the address at any tick, "0xADDR@T"
 * at tick T (the recorded range or @run's planned one, as
 * sim/analysis/find.h); else those whose name, call site or a frame of
 * its stack ("model.py:12:forward") contains @text, ignoring case.
 * Returns at most @max buffer indexes. */
GArray *ml_document_search (const MlDocument *doc, const MlRun *run, const char *text, guint max);

/* A buffer's label: its name, else its call site, else "#id". */
const char *ml_document_buffer_label (const MlDocument *doc, guint32 buffer, char *tmp, gsize len);

/* Address of @buffer in @run: the segment's base (when known) + offset. */
guint64 ml_run_buffer_addr (const MlRun *run, guint32 buffer);

G_END_DECLS

#endif
