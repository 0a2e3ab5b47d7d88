/* viewer-driver.c — the first window of a real MlApplication, driven on a
 * timer (see viewer-driver.h). */
#include "tests/viewer-driver.h"

#include <stdio.h>

#include "gui/application.h"

static void
on_job_finished (MlWindow *win, gboolean ok, MlDriver *d)
{
  d->waiting_job = FALSE;
  d->job_ok = ok;
}

static gboolean
tick (gpointer data)
{
  MlDriver *d = data;
  if (g_get_monotonic_time () > d->deadline)
    {
      d->timed_out (d);
      ml_driver_finish (d, 1);
      return G_SOURCE_REMOVE;
    }
  if (d->waiting_job || ml_window_is_busy (d->win))
    return G_SOURCE_CONTINUE;
  /* let a frame happen between steps */
  if (!gtk_widget_get_mapped (GTK_WIDGET (d->win)))
    return G_SOURCE_CONTINUE;
  return d->step (d) ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

/* The application adds each window it makes; the first is driven. */
static void
on_window_added (GtkApplication *app, GtkWindow *window, MlDriver *d)
{
  if (d->win || !ML_IS_WINDOW (window))
    return;
  d->win = ML_WINDOW (window);
  d->waiting_job = TRUE;   /* the file's load */
  d->deadline = g_get_monotonic_time () + (gint64) d->deadline_s * G_USEC_PER_SEC;
  g_signal_connect (window, "job-finished", G_CALLBACK (on_job_finished), d);
  /* screenshots show the end state, not a revealer half way */
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
  g_timeout_add (d->interval_ms, tick, d);
}

int
ml_driver_main (MlDriver *d, int argc, char **argv, const char *usage, const char **arg)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: %s\n", usage);
      return 2;
    }
  *arg = argv[1];
  /* the viewer's own command line: the program, then what follows ARG */
  argv[1] = argv[0];
  argc--, argv++;
  g_set_application_name ("memlens");
  g_autoptr (MlApplication) app = ml_application_new ();
  g_signal_connect (app, "window-added", G_CALLBACK (on_window_added), d);
  int rc = g_application_run (G_APPLICATION (app), argc, argv);
  return rc ? rc : d->status;
}

void
ml_driver_finish (MlDriver *d, int status)
{
  d->status = status;
  g_application_quit (G_APPLICATION (gtk_window_get_application (GTK_WINDOW (d->win))));
}

void
ml_driver_activate (MlDriver *d, const char *action, GVariant *param)
{
  g_action_group_activate_action (G_ACTION_GROUP (d->win), action, param);
}
