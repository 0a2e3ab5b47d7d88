/* memlens-view — the GTK4 viewer (`memlens view` execs it). */
#include "gui/application.h"

int
main (int argc, char **argv)
{
  g_set_application_name ("memlens");
  g_autoptr (MlApplication) app = ml_application_new ();
  int rc = g_application_run (G_APPLICATION (app), argc, argv);
  /* 2 when nothing could open */
  return rc ? rc : ml_application_get_exit_status (app);
}
