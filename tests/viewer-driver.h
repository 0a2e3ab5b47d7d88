/* viewer-driver.h — runs the viewer's application and drives its first
 * window on a timer: for the scripted window test (tests/test-viewer-window.c)
 * and the frame-time benchmark (bench/viewer.c). Never part of memlens-view.
 *
 * ml_driver_main() starts an MlApplication on the viewer's own command line
 * (options and files, as memlens-view takes them), watches the first
 * window it opens, waits for that window's first job (the file's load),
 * then calls @step every @interval_ms while no job runs and the window is
 * mapped, until @step returns FALSE (it calls ml_driver_finish()) or
 * @deadline_s seconds pass (then @timed_out says so and the status is 1).
 */
#ifndef ML_TESTS_VIEWER_DRIVER_H
#define ML_TESTS_VIEWER_DRIVER_H

#include "gui/window.h"

G_BEGIN_DECLS

typedef struct _MlDriver MlDriver;

struct _MlDriver {
  /* set by the caller before ml_driver_run() */
  guint     interval_ms;
  guint     deadline_s;
  gboolean (*step) (MlDriver *d);        /* FALSE: the run is over */
  void     (*timed_out) (MlDriver *d);   /* says so on stdout */
  /* the driver's */
  MlWindow *win;                         /* the first window (borrowed) */
  gboolean  waiting_job;                 /* a step started a job: wait for "job-finished" */
  gboolean  job_ok;                      /* how the last job ended */
  int       status;                      /* the exit status asked for */
  gint64    deadline;
};

/* The program's main: `PROGRAM ARG [memlens-view options] FILE...`.
 * Without ARG and a file, prints "usage: @usage" and returns 2; else
 * sets *@arg to ARG, runs the application on the rest (the viewer's own
 * command line) and returns the process's exit status: the
 * application's own when it refused the command line, else @d->status. */
int  ml_driver_main (MlDriver *d, int argc, char **argv, const char *usage, const char **arg);

/* Ends the run with exit status @status (quits the application). */
void ml_driver_finish (MlDriver *d, int status);

/* Activates the window action @action (win.@action) with @param (a
 * floating GVariant is consumed; NULL for none). */
void ml_driver_activate (MlDriver *d, const char *action, GVariant *param);

G_END_DECLS

#endif
