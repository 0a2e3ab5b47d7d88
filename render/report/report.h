/* report.h — everything a tuning report says, computed once (MlReport),
 * then built into one document (render/report/doc.h) that every writer
 * renders: JSON (docs/report-schema.md), Markdown and CSV here, HTML with
 * pictures in render/report-html.h.
 *
 * A report runs every requested strategy over the trace with the same
 * knobs (the trace's recorded plan first, when it has addresses), checks
 * each plan (conflicts and races: sim/analysis/check.h), finds the peak points with
 * their blame, and picks a "featured" plan that the pictures and the
 * issue list show: the recorded one when present, else the strategy with
 * the smallest peak. Under a capacity (or with a recorded OOM) the
 * featured plan also gets an OOM diagnosis (sim/analysis/diagnose.h).
 */
#ifndef ML_REPORT_H
#define ML_REPORT_H

#include <stdio.h>

#include "render/report/doc.h"
#include "sim/analysis/check.h"
#include "sim/analysis/diagnose.h"
#include "sim/analysis/knob-sweep.h"
#include "sim/analysis/peak-groups.h"
#include "sim/sim.h"
#include "strategies/caching-tune.h"

#define ML_REPORT_VERSION 1

typedef struct {
  char    *name;                     /* owned: "recorded" or the strategy's */
  MlResult res;                      /* plan, metrics, status / error */
  size_t   issues[ML_ISSUE__COUNT];  /* found in this plan */
} MlReportRow;

/* True for the row of the recorded plan (what the real allocator did). */
static inline bool
ml_report_row_is_recorded (const MlReportRow *row)
{
  return row->res.strategy && (row->res.strategy->flags & ML_STRATEGY_RECORDED);
}

typedef struct {
  char            *trace_path;  /* owned */
  const MlBuffers *bufs;        /* borrowed (and its trace) */
  MlKnobs          knobs;       /* as used; options borrowed from the caller */
  MlReportRow     *rows;
  size_t           n_rows;
  long             featured;    /* row index, -1 when no plan could be made */
  long             best;        /* the row with the smallest peak, -1 if none */
  MlPeakGroups     groups;      /* the peaks grouped by level (peak-groups.h) */
  MlPeaks          peaks;       /* each group's blame, at its level's first tick */
  MlIssues         issues;      /* of the featured plan */
  bool             have_diag;
  MlDiagnosis      diag;        /* of the featured plan */
  size_t           n_streams;
  double           seconds;     /* to build the report */
  MlKnobSweep     *sweep;       /* owned, optional: a knob over values (the
                                 * caller attaches it; the writers show it) */
  /* a run of a real allocator (the recorded plan leads the rows: a
   * snapshot, a Kineto or CUPTI trace): the report leads with what
   * happened, not with the planners' table */
  bool             recorded_run;
  /* who holds the memory at the peak (the lower-bound tick), by call
   * site, largest first (owned; recorded runs only) */
  MlSiteBlame     *holders;
  size_t           n_holders, n_holders_live;
  MlTune          *tune;        /* owned: a PyTorch snapshot's allocator settings
                                 * (strategies/caching-tune.h), NULL otherwise */
  char             tune_error[ML_ERROR_MAX];   /* why there is none for a snapshot */
} MlReport;

/* Builds the report of @bufs (whose trace was read from @trace_path) for
 * the recorded plan when the trace has one, then @strategies
 * (NULL-terminated; see ml_sim_lineup) with @knobs. A strategy that fails gets a
 * row with its error; the report goes on. The result borrows @bufs and
 * @knobs->options. Free with ml_report_free(). */
int  ml_report_build (const char *trace_path, const MlBuffers *bufs, const MlStrategy *const *strategies,
                      const MlKnobs *knobs, MlReport **out, MlError *err);
void ml_report_free  (MlReport *report);

/* The report as a document: title and headline cards, the strategies
 * (also the CSV), why a capacity is infeasible, the sweep, the timeline
 * figures, the peak points, the OOM diagnosis, the issues, the knobs; and
 * the JSON data. The document borrows @report (its buffers, plans and
 * issues, for the figures and the JSON): free it first. */
int  ml_report_document (const MlReport *report, MlDoc **out, MlError *err) ML_MUST_CHECK;

/* Writes @report to @path in the format its extension names (.json, .md,
 * .csv), atomically. Other extensions: ML_EUSAGE. */
int  ml_report_write (const MlReport *report, const char *path, MlError *err) ML_MUST_CHECK;

/* The label of a buffer in reports: its name, else its call site, else
 * "#id"; into @buf. */
const char *ml_report_buffer_label (const MlBuffers *bufs, uint32_t buffer, char *buf, size_t len);

#endif
