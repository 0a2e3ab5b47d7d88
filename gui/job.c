/* job.c — MlJobBar. */
#include "gui/job.h"

struct _MlJob {
  MlJobBar      *bar;
  GCancellable  *cancellable;
  MlJobDone      done;
  GObject       *owner;
  gpointer       data;
  GDestroyNotify destroy;
};

struct _MlJobBar {
  GtkWidget  parent;
  GtkWidget *revealer, *label, *bar;
  MlJob     *current;   /* borrowed: the job owns itself until ready */
};

G_DEFINE_FINAL_TYPE (MlJobBar, ml_job_bar, GTK_TYPE_WIDGET)

enum { FINISHED, N_SIGNALS };
static guint signals[N_SIGNALS];

MlJob *
ml_job_bar_begin (MlJobBar *self, const char *what, MlJobDone done, gpointer owner)
{
  ml_job_bar_cancel (self);
  MlJob *job = g_new0 (MlJob, 1);
  job->bar = g_object_ref (self);
  job->cancellable = g_cancellable_new ();
  job->done = done;
  job->owner = g_object_ref (owner);
  self->current = job;
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->bar), 0);
  gtk_label_set_text (GTK_LABEL (self->label), what);
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->revealer), TRUE);
  return job;
}

void
ml_job_bar_cancel (MlJobBar *self)
{
  if (self->current)
    g_cancellable_cancel (self->current->cancellable);
}

gboolean
ml_job_bar_is_busy (MlJobBar *self)
{
  return self->current != NULL;
}

void
ml_job_bar_progress (double fraction, const char *what, gpointer bar)
{
  MlJobBar *self = bar;
  if (!self->current)
    return;
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (self->bar), fraction);
  gtk_label_set_text (GTK_LABEL (self->label), what);
}

GCancellable *
ml_job_cancellable (MlJob *job)
{
  return job->cancellable;
}

void
ml_job_set_data (MlJob *job, gpointer data, GDestroyNotify destroy)
{
  if (job->destroy)
    job->destroy (job->data);
  job->data = data;
  job->destroy = destroy;
}

gpointer
ml_job_get_data (MlJob *job)
{
  return job->data;
}

void
ml_job_ready (GObject *src, GAsyncResult *res, gpointer user)
{
  MlJob *job = user;
  MlJobBar *self = job->bar;
  gboolean current = self->current == job;
  if (current)
    {
      self->current = NULL;
      gtk_revealer_set_reveal_child (GTK_REVEALER (self->revealer), FALSE);
    }
  gboolean ok = job->done (job->owner, res, job, current);
  if (current)
    g_signal_emit (self, signals[FINISHED], 0, ok);
  ml_job_set_data (job, NULL, NULL);
  g_object_unref (job->cancellable);
  g_object_unref (job->owner);
  g_object_unref (job->bar);
  g_free (job);
}

static void
ml_job_bar_dispose (GObject *obj)
{
  MlJobBar *self = ML_JOB_BAR (obj);
  ml_job_bar_cancel (self);
  g_clear_pointer (&self->revealer, gtk_widget_unparent);
  G_OBJECT_CLASS (ml_job_bar_parent_class)->dispose (obj);
}

static void
ml_job_bar_class_init (MlJobBarClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ml_job_bar_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  signals[FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                    NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);
}

static void
ml_job_bar_init (MlJobBar *self)
{
  self->revealer = gtk_revealer_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_set_margin_start (box, 8);
  gtk_widget_set_margin_end (box, 8);
  gtk_widget_set_margin_bottom (box, 4);
  self->label = gtk_label_new ("");
  gtk_box_append (GTK_BOX (box), self->label);
  self->bar = gtk_progress_bar_new ();
  gtk_widget_set_hexpand (self->bar, TRUE);
  gtk_widget_set_valign (self->bar, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (box), self->bar);
  GtkWidget *cancel = gtk_button_new_with_mnemonic ("_Cancel");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (cancel), "win.cancel");
  gtk_box_append (GTK_BOX (box), cancel);
  gtk_revealer_set_child (GTK_REVEALER (self->revealer), box);
  gtk_widget_set_parent (self->revealer, GTK_WIDGET (self));
}

GtkWidget *
ml_job_bar_new (void)
{
  return g_object_new (ML_TYPE_JOB_BAR, NULL);
}
