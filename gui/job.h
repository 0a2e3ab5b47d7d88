/* job.h — MlJobBar: the progress bar of the window's one worker job.
 *
 * Every worker the window starts (loading, re-running, the table of
 * strategies, the report) goes through it: ml_job_bar_begin() cancels the
 * job before, shows the bar and returns an MlJob whose cancellable and
 * ready callback the async call takes; when the worker finishes,
 * ml_job_ready() calls the job's @done with whether the job is still the
 * current one (a later job replaced it otherwise), hides the bar, emits
 * "finished" (gboolean ok) for the current job and frees the MlJob.
 *
 *   MlJob *job = ml_job_bar_begin (bar, "Comparing", on_compared, self);
 *   ml_document_compare_async (doc, NULL, ml_job_cancellable (job),
 *                              ml_job_bar_progress, bar, ml_job_ready, job);
 *
 * The bar holds a Cancel button bound to win.cancel.
 */
#ifndef ML_GUI_JOB_H
#define ML_GUI_JOB_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ML_TYPE_JOB_BAR (ml_job_bar_get_type ())
G_DECLARE_FINAL_TYPE (MlJobBar, ml_job_bar, ML, JOB_BAR, GtkWidget)

typedef struct _MlJob MlJob;

/* Finishes the async call with @res (e.g. ml_document_load_finish);
 * @current is FALSE when a later job replaced this one (show nothing
 * then). Returns whether the job succeeded. */
typedef gboolean (*MlJobDone) (gpointer owner, GAsyncResult *res, MlJob *job, gboolean current);

GtkWidget *ml_job_bar_new (void);

/* Starts a job described by @what; @owner (a GObject) is kept alive
 * until the job ends. */
MlJob *ml_job_bar_begin (MlJobBar *self, const char *what, MlJobDone done, gpointer owner);
/* Cancels the current job, if any. */
void   ml_job_bar_cancel (MlJobBar *self);
gboolean ml_job_bar_is_busy (MlJobBar *self);
/* An MlProgressFunc (gui/document.h): updates the bar of the current job. */
void   ml_job_bar_progress (double fraction, const char *what, gpointer bar);

/* The job's cancellable (borrowed). */
GCancellable *ml_job_cancellable (MlJob *job);
/* Extra data for @done (freed with @destroy when the job ends). */
void     ml_job_set_data (MlJob *job, gpointer data, GDestroyNotify destroy);
gpointer ml_job_get_data (MlJob *job);
/* The GAsyncReadyCallback to pass with @job as its user data. */
void   ml_job_ready (GObject *src, GAsyncResult *res, gpointer job);

G_END_DECLS

#endif
