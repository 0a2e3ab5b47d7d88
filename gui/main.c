/* memlens-view — the GTK4 viewer (`memlens view` execs it). */
#include "gui/application.h"

int
main (int argc, char **argv)
{
  g_set_application_name ("memlens");
  g_autoptr (MlApplication) app = ml_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
