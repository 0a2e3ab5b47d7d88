/* application.h — MlApplication: the memlens viewer's GtkApplication.
 *
 * Opens one window per file (or an empty window), keeps the recent-files
 * list, and owns the app-level actions (open, open-recent, quit, about).
 */
#ifndef ML_GUI_APPLICATION_H
#define ML_GUI_APPLICATION_H

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ML_TYPE_APPLICATION (ml_application_get_type ())
G_DECLARE_FINAL_TYPE (MlApplication, ml_application, ML, APPLICATION, GtkApplication)

MlApplication *ml_application_new (void);

/* Adds @path to the recent files (GtkRecentManager) and refreshes the
 * "Recent" menus. */
void ml_application_note_recent (MlApplication *app, const char *path);

/* Tells the application whether a window opened a file (the exit status
 * counts it). */
void ml_application_note_opened (MlApplication *app, gboolean ok);

/* 2 when every file named on the command line failed to open and no file
 * opened afterwards (each window showed its error, and stderr has it),
 * else 0. */
int ml_application_get_exit_status (MlApplication *app);

/* The "Recent" section of the open menu (owned by the application). */
GMenuModel *ml_application_get_recent_menu (MlApplication *app);

G_END_DECLS

#endif
