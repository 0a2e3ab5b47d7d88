/* window-private.h — what the files of MlWindow share.
 *
 * MlWindow is written in five files, one concern each: window.c (the
 * type, its widgets from window.ui, and the document swap), window-open.c
 * (opening files, devices, a second file), window-run.c (the jobs that
 * run strategies), window-view.c (what the timelines show and where) and
 * window-export.c. Each of the last four adds its own actions in its
 * _init and binds its own template callbacks in its _class_init.
 */
#ifndef ML_GUI_WINDOW_PRIVATE_H
#define ML_GUI_WINDOW_PRIVATE_H

#include "gui/details-page.h"
#include "gui/find-page.h"
#include "gui/issues-page.h"
#include "gui/job.h"
#include "gui/knobs-page.h"
#include "gui/table-page.h"
#include "gui/tune-page.h"
#include "gui/window.h"

G_BEGIN_DECLS

struct _MlWindow {
  GtkApplicationWindow parent;

  MlDocument   *doc;
  MlDocument   *doc2;                  /* a second file on the same axes (view A B), or NULL */
  char         *compare_path;          /* that file, to load once the first has */
  gboolean      rerun_second;          /* a re-run of doc goes on to doc2 */
  MlViewKnobs   knobs;
  char         *pending_strategy[2];   /* for the next load */
  gboolean      applying;              /* guards drop-down / action loops */
  gboolean      linking;               /* guards linked zoom */
  gboolean      from_list;             /* a list row is being chosen: stay on its page */
  char         *loading_path;
  int           pending_device;        /* --device for the first load, -1 = none */
  char         *frames_regex;          /* colour by frames: the expression (the search box's text then) */

  /* from window.ui */
  GtkWidget *title, *subtitle;
  GtkWidget *strategy_dd, *strategy2_dd, *compare_btn;
  GtkStringList *strategies;
  GtkWidget *device_dd;
  GtkStringList *devices;
  GtkWidget *search_entry;
  GtkWidget *content_stack, *empty_title;
  GtkWidget *banner_revealer, *banner_label;
  GtkWidget *summary0, *summary1;
  GtkWidget *timeline0, *timeline1;
  GtkWidget *timeline_box0, *timeline_box1;
  GtkWidget *overview;
  GtkWidget *paned, *notebook;
  MlJobBar  *job_bar;
  MlDetailsPage *details_page;
  MlPeaksPage   *peaks_page;
  MlIssuesPage  *issues_page;
  MlFindPage    *find_page;
  MlTablePage   *table_page;
  MlStatePage   *state_page;
  MlTunePage    *tune_page;
  MlKnobsPage   *knobs_page;
  GMenu     *open_menu;

  /* index 0 / 1: the two timelines of compare mode */
  GtkWidget *summary[2], *timeline[2], *timeline_box[2];
};

/* Timeline @i (0, or 1: the second of compare mode / the second file). */
static inline MlTimelineView *
_ml_window_tl (MlWindow *self, int i)
{
  return ML_TIMELINE_VIEW (self->timeline[i ? 1 : 0]);
}

/* window.c: shows @doc (NULL: the empty page) in every widget, keeping
 * the zoom and the selection when it has the same trace as before. */
void _ml_window_apply_document (MlWindow *self, MlDocument *doc);
/* After new scenes: colour-by frames made again for them (the expression
 * kept in frames_regex); on a @new_trace, a colouring it cannot have
 * (no kinds, no compile_context field, no stacks) goes back to call
 * sites, saying why. */
void _ml_window_check_colouring (MlWindow *self, gboolean new_trace);
/* Selects the row of @dd's list @list named @name, if any. */
void _ml_window_set_dropdown (GtkWidget *dd, GtkStringList *list, const char *name);

/* window-open.c: the end of a job that made the second file's document
 * (@doc, or NULL and @error): opened to compare, or re-run with the first
 * file's strategy. Shows it below the first while @wanted; a failure
 * other than a cancel goes to the banner and stderr as "@failed: reason".
 * Returns whether there is a document. */
gboolean _ml_window_second_loaded (MlWindow *self, MlDocument *doc, const GError *error, gboolean current,
                                   gboolean wanted, const char *failed);

/* window-view.c */
void _ml_window_show_page (MlWindow *self, gpointer page);
/* Searches the document for the search entry's text: the Find page and
 * the timeline's highlights. */
void _ml_window_run_search (MlWindow *self);
/* Shows buffer @k (-1: none) in Details, and the page unless a list row
 * is being chosen. */
void _ml_window_show_buffer_details (MlWindow *self, long k);
/* The first timeline's span changed: the second and the overview follow. */
void _ml_window_views_changed (MlWindow *self);

/* The actions and template callbacks of each file. */
void _ml_window_open_init         (MlWindow *self);
void _ml_window_open_class_init   (GtkWidgetClass *wc);
void _ml_window_run_init          (MlWindow *self);
void _ml_window_run_class_init    (GtkWidgetClass *wc);
void _ml_window_view_init         (MlWindow *self);
void _ml_window_view_class_init   (GtkWidgetClass *wc);
void _ml_window_export_init       (MlWindow *self);

G_END_DECLS

#endif
