/* document.c — loading and analysing traces off the main thread. */
#include "gui/document.h"

#include <stdlib.h>
#include <string.h>

#include "render/report-html.h"
#include "render/report/report.h"
#include "sim/analysis/find.h"
#include "sim/analysis/races.h"
#include "strategies/registry.h"

G_DEFINE_QUARK (ml-gui-error-quark, ml_gui_error)

#define MAX_PEAKS 32
#define MAX_BLAME 64

/* ---- reference counting -------------------------------------------------- */

MlTraceBox *
ml_trace_box_ref (MlTraceBox *box)
{
  g_atomic_ref_count_inc (&box->rc);
  return box;
}

void
ml_trace_box_unref (MlTraceBox *box)
{
  if (box && g_atomic_ref_count_dec (&box->rc))
    {
      ml_trace_free (box->trace);
      g_free (box->path);
      g_free (box);
    }
}

MlRun *
ml_run_ref (MlRun *run)
{
  g_atomic_ref_count_inc (&run->rc);
  return run;
}

void
ml_run_unref (MlRun *run)
{
  if (run && g_atomic_ref_count_dec (&run->rc))
    {
      ml_plan_free (run->plan);
      ml_scene_free (run->scene);
      ml_issues_clear (&run->issues);
      g_free (run->strategy);
      g_free (run);
    }
}

MlDocument *
ml_document_ref (MlDocument *doc)
{
  g_atomic_ref_count_inc (&doc->rc);
  return doc;
}

void
ml_document_unref (MlDocument *doc)
{
  if (doc && g_atomic_ref_count_dec (&doc->rc))
    {
      ml_run_unref (doc->runs[0]);
      ml_run_unref (doc->runs[1]);
      ml_peaks_free (&doc->peaks);
      ml_peak_groups_free (&doc->groups);
      ml_buffers_free (doc->bufs);
      ml_trace_box_unref (doc->box);
      g_free (doc->oom_ticks);
      ml_tune_free (doc->tune);
      g_free (doc);
    }
}

void
ml_view_knobs_init (MlViewKnobs *k)
{
  memset (k, 0, sizeof *k);
  k->chunk = 4u << 20;
  k->retries = 3;
  k->device = -1;
}

const char *
ml_document_default_strategy (const MlTrace *trace)
{
  return ml_strategy_initial (trace->has_addrs)->name;
}

const char **
ml_document_strategy_names (const MlTrace *trace)
{
  const MlStrategy *const *all = ml_strategies_all ();
  gsize n = 0;
  while (all[n])
    n++;
  const char **names = g_new0 (const char *, n + 1);
  gsize k = 0;
  for (gsize i = 0; i < n; i++)
    if (!(all[i]->flags & ML_STRATEGY_RECORDED) || (trace && trace->has_addrs))
      names[k++] = all[i]->name;
  return names;
}

/* ---- progress and cancellation from a worker ----------------------------- */

typedef struct {
  MlProgressFunc func;
  gpointer       data;
  GMainContext  *ctx;
  volatile int   cancelled;
  gint64         last_us;
  MlProgress     progress;
  gulong         cancel_id;
  GCancellable  *cancellable;
  double         base, scale;   /* maps a step's [0,1] into the job's */
} JobProgress;

typedef struct {
  MlProgressFunc func;
  gpointer       data;
  double         fraction;
  char           what[64];
} ProgressMsg;

static gboolean
deliver_progress (gpointer p)
{
  ProgressMsg *m = p;
  m->func (m->fraction, m->what, m->data);
  return G_SOURCE_REMOVE;
}

static void
job_report (void *user, double fraction, const char *what)
{
  JobProgress *jp = user;
  if (!jp->func)
    return;
  gint64 now = g_get_monotonic_time ();
  if (fraction < 1.0 && now - jp->last_us < 50000)
    return;
  jp->last_us = now;
  ProgressMsg *m = g_new0 (ProgressMsg, 1);
  m->func = jp->func;
  m->data = jp->data;
  m->fraction = jp->base + jp->scale * CLAMP (fraction, 0.0, 1.0);
  g_strlcpy (m->what, what ? what : "", sizeof m->what);
  g_main_context_invoke_full (jp->ctx, G_PRIORITY_DEFAULT, deliver_progress, m, g_free);
}

static void
on_cancelled (GCancellable *c, gpointer user)
{
  JobProgress *jp = user;
  jp->cancelled = 1;
}

static void
job_progress_init (JobProgress *jp, GCancellable *cancellable, MlProgressFunc func, gpointer data)
{
  memset (jp, 0, sizeof *jp);
  jp->func = func;
  jp->data = data;
  jp->ctx = g_main_context_ref_thread_default ();
  jp->progress.report = job_report;
  jp->progress.user = jp;
  jp->progress.cancelled = &jp->cancelled;
  jp->scale = 1.0;
  if (cancellable)
    {
      jp->cancellable = g_object_ref (cancellable);
      jp->cancel_id = g_cancellable_connect (cancellable, G_CALLBACK (on_cancelled), jp, NULL);
    }
}

static void
job_progress_clear (JobProgress *jp)
{
  if (jp->cancellable)
    {
      g_cancellable_disconnect (jp->cancellable, jp->cancel_id);
      g_object_unref (jp->cancellable);
    }
  g_main_context_unref (jp->ctx);
}

/* ---- the work ------------------------------------------------------------ */

typedef struct {
  char        *path;
  MlDocument  *prev;        /* rerun: the document whose trace to reuse */
  MlViewKnobs  knobs;
  char        *strategy[2];
  char        *names;       /* compare */
  JobProgress  jp;
} Job;

static void
job_free (gpointer p)
{
  Job *job = p;
  job_progress_clear (&job->jp);
  g_free (job->path);
  if (job->prev)
    ml_document_unref (job->prev);
  g_free (job->strategy[0]);
  g_free (job->strategy[1]);
  g_free (job->names);
  g_free (job);
}

static Job *
job_new (const MlViewKnobs *knobs, const char *s1, const char *s2, GCancellable *cancellable,
         MlProgressFunc progress, gpointer progress_data)
{
  Job *job = g_new0 (Job, 1);
  if (knobs)
    job->knobs = *knobs;
  else
    ml_view_knobs_init (&job->knobs);
  job->strategy[0] = g_strdup (s1);
  job->strategy[1] = g_strdup (s2);
  job_progress_init (&job->jp, cancellable, progress, progress_data);
  return job;
}

static gboolean
set_error (GError **error, const MlError *err)
{
  int code = err->code ? -err->code : 1;
  if (err->code == ML_ECANCELLED)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
  else
    g_set_error_literal (error, ML_GUI_ERROR, code, err->msg[0] ? err->msg : ml_error_code_name (err->code));
  return FALSE;
}

static void
to_ml_knobs (const MlViewKnobs *v, const MlTrace *trace, MlKnobs *k)
{
  ml_knobs_init (k);
  k->align = v->align;
  k->capacity = v->capacity ? v->capacity : trace->capacity;
  k->chunk = v->chunk ? v->chunk : k->chunk;
  k->time_limit = v->time_limit;
  k->retries = v->retries;
  k->options = v->options[0] ? v->options : NULL;
}

/* Runs one strategy and measures it; with @curves, keeps the curve and the
 * issues the viewer lists. Never fails for a strategy error (it is kept in
 * the run); returns NULL only when cancelled, with @error set. */
static MlRun *
run_strategy (const MlBuffers *bufs, const char *name, const MlViewKnobs *vk, JobProgress *jp,
              gboolean curves, const char *name_hint, GError **error)
{
  MlRun *run = g_new0 (MlRun, 1);
  g_atomic_ref_count_init (&run->rc);
  run->strategy = g_strdup (name);
  ml_issues_init (&run->issues);
  MlError err = { 0 };
  double t0 = ml_now ();
  int rc;
  const MlStrategy *s = ml_strategy_find (name);
  if (!s)
    rc = ml_error_set (&err, ML_EUSAGE, "unknown strategy \"%s\"", name);
  else
    {
      MlKnobs k;
      to_ml_knobs (vk, bufs->trace, &k);
      k.align = bufs->align;
      k.progress = &jp->progress;
      rc = ml_sim_run (bufs, s, &k, &run->plan, &err);
      /* the recorded plan fails where the real allocator did */
      if (rc == 0 && (s->flags & ML_STRATEGY_RECORDED))
        rc = ml_recorded_oom_apply (bufs, run->plan, &err);
    }
  if (rc == 0 && run->plan && run->plan->seconds <= 0)
    run->plan->seconds = ml_now () - t0;
  if (rc == ML_ECANCELLED || jp->cancelled)
    {
      ml_run_unref (run);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
      return NULL;
    }
  if (rc == 0 && !curves)
    rc = ml_metrics_compute (bufs, run->plan, &run->metrics, NULL, &err);
  if (rc == 0 && curves)
    rc = ml_check_plan (bufs, run->plan, &run->issues, &err);
  if (rc == 0 && curves)
    rc = ml_check_races (bufs, run->plan, &run->issues, &err);   /* cross-stream reuse, in-place */
  if (rc == 0 && curves)
    {
      /* the scene computes the metrics with their curve (one sweep) */
      g_autofree char *base = g_path_get_basename (name_hint ? name_hint : "");
      MlSceneOptions so = { .name = base, .issues = &run->issues, .max_peaks = 3, .raw_addresses = vk->raw_addresses };
      rc = ml_scene_new (bufs, run->plan, &so, &run->scene, &err);
      if (rc == 0)
        run->metrics = run->scene->metrics;
    }
  if (rc < 0)
    {
      run->status = rc;
      g_strlcpy (run->error, err.msg[0] ? err.msg : ml_error_code_name (rc), sizeof run->error);
      ml_scene_free (run->scene);
      run->scene = NULL;
      ml_plan_free (run->plan);
      run->plan = NULL;
    }
  return run;
}

/* The peak groups and each one's blame. */
static int
find_peaks (MlDocument *doc, MlError *err)
{
  int rc = ml_peak_groups_find (doc->bufs, MAX_PEAKS, &doc->groups, err);
  if (rc < 0)
    return rc;
  doc->peaks.peaks = calloc (doc->groups.n + 1, sizeof *doc->peaks.peaks);   /* ml_peaks_free frees it */
  if (!doc->peaks.peaks)
    return ml_error_set (err, ML_ENOMEM, "out of memory");
  for (size_t i = 0; i < doc->groups.n; i++, doc->peaks.n++)
    if ((rc = ml_peak_blame (doc->bufs, doc->groups.groups[i].top_tick, MAX_BLAME, &doc->peaks.peaks[i], err)) < 0)
      return rc;
  return 0;
}

static MlDocument *
build_document (MlTraceBox *box, Job *job, GError **error)
{
  MlError err = { 0 };
  const MlTrace *trace = box->trace;
  MlDocument *doc = g_new0 (MlDocument, 1);
  g_atomic_ref_count_init (&doc->rc);
  doc->box = ml_trace_box_ref (box);
  doc->knobs = job->knobs;

  job->jp.base = 0.5, job->jp.scale = 0.0;
  job_report (&job->jp, 0.0, "lifetimes");
  if (ml_buffers_build (trace, job->knobs.align, &doc->bufs, &err) < 0
      || find_peaks (doc, &err) < 0)
    {
      ml_document_unref (doc);
      set_error (error, &err);
      return NULL;
    }
  for (size_t i = 0; i < trace->n_events; i++)
    if (trace->events[i].kind == ML_EV_OOM)
      doc->n_oom_ticks++;
  doc->oom_ticks = g_new (guint64, doc->n_oom_ticks + 1);
  for (size_t i = 0, k = 0; i < trace->n_events; i++)
    if (trace->events[i].kind == ML_EV_OOM)
      doc->oom_ticks[k++] = trace->events[i].tick;

  /* a snapshot: which allocator setting would have fitted */
  const char *source = ml_trace_str (trace, trace->source);
  if (source && g_str_equal (source, "pytorch-snapshot"))
    {
      MlTuneOpts to = { .capacity = job->knobs.capacity, .jobs = 1, .curves = TRUE };
      MlError terr = { 0 };
      if (ml_tune_run (trace, &to, &doc->tune, &terr) < 0)
        g_strlcpy (doc->tune_error, terr.msg, sizeof doc->tune_error);
    }

  int n_runs = job->strategy[1] ? 2 : 1;
  for (int r = 0; r < n_runs; r++)
    {
      const char *name = job->strategy[r] ? job->strategy[r] : ml_document_default_strategy (trace);
      const MlStrategy *st = ml_strategy_find (name);
      if (st && (st->flags & ML_STRATEGY_RECORDED) && !trace->has_addrs)
        name = ml_strategy_initial (false)->name;
      job->jp.base = 0.6 + 0.4 * r / n_runs;
      job->jp.scale = 0.4 / n_runs;
      doc->runs[r] = run_strategy (doc->bufs, name, &job->knobs, &job->jp, TRUE, box->path, error);
      if (!doc->runs[r])
        {
          ml_document_unref (doc);
          return NULL;
        }
    }
  return doc;
}

static void
load_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  GError *error = NULL;
  MlError err = { 0 };
  double t0 = ml_now ();
  MlTraceBox *box = NULL;

  if (job->prev)
    box = ml_trace_box_ref (job->prev->box);
  else
    {
      /* reading is most of the time for large files: 0 .. 50 % */
      job->jp.base = 0.0, job->jp.scale = 0.5;
      job_report (&job->jp, 0.0, "reading");
      MlLoadOptions opts;
      ml_load_options_init (&opts);
      opts.progress = &job->jp.progress;   /* share read; Cancel stops the reader */
      opts.device = job->knobs.device;
      /* memlens view --range T0:T1 (checked by cli/cmd-view.c) */
      const char *range = g_getenv ("MEMLENS_VIEW_RANGE");
      /* memlens view --frames user|all|REGEX: the call sites' rule */
      const char *frames = g_getenv ("MEMLENS_VIEW_FRAMES");
      MlTrace *trace = NULL;
      if ((range && *range && ml_range_parse (range, &opts.range, &err) < 0)
          || (frames && *frames && ml_frames_parse (frames, &opts.frames, &err) < 0)
          || ml_trace_load (job->path, &opts, &trace, &err) < 0)
        {
          set_error (&error, &err);
          g_task_return_error (task, error);
          return;
        }
      box = g_new0 (MlTraceBox, 1);
      g_atomic_ref_count_init (&box->rc);
      box->path = g_strdup (job->path);
      box->trace = trace;
    }
  if (g_cancellable_is_cancelled (cancellable))
    {
      ml_trace_box_unref (box);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
      return;
    }
  MlDocument *doc = build_document (box, job, &error);
  ml_trace_box_unref (box);
  if (!doc)
    {
      g_task_return_error (task, error);
      return;
    }
  doc->load_seconds = ml_now () - t0;
  g_task_return_pointer (task, doc, (GDestroyNotify) ml_document_unref);
}

/* Loading a file and re-running over a loaded one are the same job in a
 * worker thread; the job says which. Takes @job. */
static void
start_load_job (Job *job, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, ml_document_load_async);
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, load_thread);
  g_object_unref (task);
}

void
ml_document_load_async (const char *path, const MlViewKnobs *knobs,
                        const char *strategy, const char *strategy2,
                        GCancellable *cancellable,
                        MlProgressFunc progress, gpointer progress_data,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  Job *job = job_new (knobs, strategy, strategy2, cancellable, progress, progress_data);
  job->path = g_strdup (path);
  start_load_job (job, cancellable, callback, user_data);
}

MlDocument *
ml_document_load_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

void
ml_document_rerun_async (MlDocument *doc, const MlViewKnobs *knobs,
                         const char *strategy, const char *strategy2,
                         GCancellable *cancellable,
                         MlProgressFunc progress, gpointer progress_data,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  Job *job = job_new (knobs, strategy, strategy2, cancellable, progress, progress_data);
  job->prev = ml_document_ref (doc);
  start_load_job (job, cancellable, callback, user_data);
}

MlDocument *
ml_document_rerun_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
compare_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  const MlBuffers *bufs = job->prev->bufs;
  GPtrArray *runs = g_ptr_array_new_with_free_func ((GDestroyNotify) ml_run_unref);
  g_auto (GStrv) names = g_strsplit (job->names, ",", -1);
  guint n = g_strv_length (names);
  for (guint i = 0; i < n; i++)
    {
      GError *error = NULL;
      job->jp.base = (double) i / n;
      job->jp.scale = 1.0 / n;
      job_report (&job->jp, 0.0, names[i]);
      MlRun *run = run_strategy (bufs, names[i], &job->knobs, &job->jp, FALSE, NULL, &error);
      if (!run)
        {
          g_ptr_array_unref (runs);
          g_task_return_error (task, error);
          return;
        }
      g_ptr_array_add (runs, run);
    }
  g_task_return_pointer (task, runs, (GDestroyNotify) g_ptr_array_unref);
}

void
ml_document_compare_async (MlDocument *doc, const char *names,
                           GCancellable *cancellable,
                           MlProgressFunc progress, gpointer progress_data,
                           GAsyncReadyCallback callback, gpointer user_data)
{
  Job *job = job_new (&doc->knobs, NULL, NULL, cancellable, progress, progress_data);
  job->prev = ml_document_ref (doc);
  if (names)
    job->names = g_strdup (names);
  else if (ml_document_trace (doc)->has_addrs)
    job->names = g_strconcat (ml_strategy_recorded.name, ",", ml_strategies_default (), NULL);
  else
    job->names = g_strdup (ml_strategies_default ());
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, ml_document_compare_async);
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, compare_thread);
  g_object_unref (task);
}

GPtrArray *
ml_document_compare_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
sweep_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  const MlBuffers *bufs = job->prev->bufs;
  MlError err = { 0 };
  GError *error = NULL;
  g_auto (GStrv) names = g_strsplit (job->names, ",", -1);
  g_autoptr (GPtrArray) list = g_ptr_array_new ();
  for (char **n = names; *n; n++)
    {
      const MlStrategy *st = ml_strategy_find (*n);
      if (!st)
        {
          g_set_error (&error, ML_GUI_ERROR, 1, "unknown strategy \"%s\"", *n);
          g_task_return_error (task, error);
          return;
        }
      if (!(st->flags & ML_STRATEGY_RECORDED))
        g_ptr_array_add (list, (gpointer) st);
    }
  g_ptr_array_add (list, NULL);
  MlKnobs k;
  to_ml_knobs (&job->knobs, bufs->trace, &k);
  k.align = bufs->align;
  k.progress = &job->jp.progress;
  job_report (&job->jp, 0.0, job->path);
  MlKnobSweep *sw = NULL;
  int rc = ml_knob_sweep_run (job->path, bufs, (const MlStrategy *const *) list->pdata, &k, &sw, &err);
  if (rc == 0 && job->jp.cancelled)
    {
      ml_knob_sweep_free (sw);
      err.code = ML_ECANCELLED;
      rc = -1;
    }
  if (rc < 0)
    {
      set_error (&error, &err);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, sw, (GDestroyNotify) ml_knob_sweep_free);
}

void
ml_document_sweep_async (MlDocument *doc, const MlViewKnobs *knobs, const char *names, const char *spec,
                         GCancellable *cancellable,
                         MlProgressFunc progress, gpointer progress_data,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  Job *job = job_new (knobs ? knobs : &doc->knobs, NULL, NULL, cancellable, progress, progress_data);
  job->prev = ml_document_ref (doc);
  job->names = g_strdup (names);
  job->path = g_strdup (spec);
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, ml_document_sweep_async);
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, sweep_thread);
  g_object_unref (task);
}

MlKnobSweep *
ml_document_sweep_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
report_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Job *job = data;
  const MlBuffers *bufs = job->prev->bufs;
  MlError err = { 0 };
  /* the default set, then the extra names not in it ("recorded" is added
   * by the report itself) */
  GPtrArray *list = g_ptr_array_new ();
  g_auto (GStrv) def = g_strsplit (ml_strategies_default (), ",", -1);
  g_auto (GStrv) extra = g_strsplit (job->names ? job->names : "", ",", -1);
  for (int pass = 0; pass < 2; pass++)
    for (char **n = pass ? extra : def; *n; n++)
      {
        const MlStrategy *st = **n ? ml_strategy_find (*n) : NULL;
        if (st && !g_ptr_array_find (list, st, NULL))
          g_ptr_array_add (list, (gpointer) st);
      }
  g_ptr_array_add (list, NULL);
  MlKnobs k;
  to_ml_knobs (&job->knobs, bufs->trace, &k);
  k.align = bufs->align;
  k.progress = &job->jp.progress;
  job_report (&job->jp, 0.0, "report");
  MlReport *r = NULL;
  int rc = ml_report_build (job->prev->box->path, bufs, (const MlStrategy *const *) list->pdata, &k, &r, &err);
  if (rc == 0)
    {
      job_report (&job->jp, 0.95, "writing");
      rc = ml_report_write_file (r, job->path, NULL, &err);
    }
  ml_report_free (r);
  g_ptr_array_unref (list);
  if (rc < 0 || job->jp.cancelled)
    {
      GError *error = NULL;
      if (job->jp.cancelled)
        g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
      else
        set_error (&error, &err);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_boolean (task, TRUE);
}

void
ml_document_report_async (MlDocument *doc, const char *extra, const char *path,
                          GCancellable *cancellable,
                          MlProgressFunc progress, gpointer progress_data,
                          GAsyncReadyCallback callback, gpointer user_data)
{
  Job *job = job_new (&doc->knobs, NULL, NULL, cancellable, progress, progress_data);
  job->prev = ml_document_ref (doc);
  job->names = g_strdup (extra);
  job->path = g_strdup (path);
  GTask *task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, ml_document_report_async);
  g_task_set_task_data (task, job, job_free);
  g_task_run_in_thread (task, report_thread);
  g_object_unref (task);
}

gboolean
ml_document_report_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

/* ---- queries -------------------------------------------------------------- */

guint64
ml_run_buffer_addr (const MlRun *run, guint32 buffer)
{
  if (!run || !run->plan || buffer >= run->plan->n)
    return 0;
  guint32 s = run->plan->segment[buffer];
  guint64 base = s < run->plan->n_segments ? run->plan->segments[s].addr : 0;
  return base + run->plan->offset[buffer];
}

const char *
ml_document_buffer_label (const MlDocument *doc, guint32 i, char *tmp, gsize len)
{
  const MlTrace *t = ml_document_trace (doc);
  const MlBuffer *b = &doc->bufs->buf[i];
  const char *name = b->name ? ml_trace_str (t, b->name) : NULL;
  if (name && *name)
    return name;
  if (b->stack && b->stack < t->n_stacks)
    {
      const char *site = ml_trace_str (t, t->stacks[b->stack].site);
      if (site && *site)
        return site;
    }
  g_snprintf (tmp, len, "#%" G_GUINT64_FORMAT, b->id);
  return tmp;
}

static gboolean
contains_ci (const char *hay, const char *needle_lower)
{
  if (!hay || !*hay)
    return FALSE;
  g_autofree char *low = g_ascii_strdown (hay, -1);
  return strstr (low, needle_lower) != NULL;
}

GArray *
ml_document_search (const MlDocument *doc, const MlRun *run, const char *text, guint max)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (guint32));
  if (!text)
    return out;
  g_autofree char *copy = g_strstrip (g_strdup (text));
  g_autofree char *needle = g_ascii_strdown (copy, -1);
  if (!*needle)
    return out;
  const MlTrace *t = ml_document_trace (doc);
  const MlBuffers *bufs = doc->bufs;
  /* 0xADDR: the buffers whose bytes hold it, at any tick; 0xADDR@T: at tick T */
  MlFindAddr q;
  gboolean is_addr = g_str_has_prefix (needle, "0x");
  if (is_addr && ml_find_addr_parse (needle, FALSE, &q) < 0)
    return out;
  gboolean is_id = needle[0] == '#';
  guint64 id = is_id ? g_ascii_strtoull (needle + 1, NULL, 10) : 0;

  /* names and sites are interned: test each distinct string once; frames
   * ("model.py:12:forward") once each, then each stack */
  gsize n_str = ml_strtab_count (t->strings);
  guint8 *hit = g_new0 (guint8, n_str + 1);
  uint8_t *stack_hit = NULL;
  if (!is_addr && !is_id)
    {
      for (gsize s = 1; s < n_str; s++)
        hit[s] = contains_ci (ml_trace_str (t, (uint32_t) s), needle);
      stack_hit = ml_find_frame_stacks (t, needle, TRUE);
    }
  for (gsize i = 0; i < bufs->n && out->len < max; i++)
    {
      const MlBuffer *b = &bufs->buf[i];
      gboolean m = FALSE;
      if (is_addr)
        {
          guint64 size = MAX (b->rsize, 1);
          m = (b->flags & ML_BUF_HAS_ADDR) && ml_find_addr_holds (&q, b->addr, size, b->start, b->end);
          if (!m && run && run->plan)
            m = ml_find_addr_holds (&q, ml_run_buffer_addr (run, (guint32) i), size, b->start, b->end);
        }
      else if (is_id)
        m = b->id == id;
      else
        m = (b->name < n_str && hit[b->name])
            || (b->stack && b->stack < t->n_stacks
                && ((t->stacks[b->stack].site < n_str && hit[t->stacks[b->stack].site])
                    || (stack_hit && stack_hit[b->stack])));
      if (m)
        {
          guint32 idx = (guint32) i;
          g_array_append_val (out, idx);
        }
    }
  g_free (hit);
  free (stack_hit);
  return out;
}
