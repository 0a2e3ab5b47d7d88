/* application.c — MlApplication. */
#include "gui/application.h"

#include "gui/window.h"
#include "sim/base/units.h"
#include "sim/formats/load-options.h"
#include "strategies/registry.h"

struct _MlApplication {
  GtkApplication parent;
  GMenu   *recent;
  char    *strategy;    /* --strategy NAME */
  char    *compare;     /* --compare NAME */
  int      device;      /* --device N, -1 = the reader's choice */
  char    *axis;        /* --axis time|ticks, NULL = automatic */
  guint    cli_files;   /* files named on the command line */
  guint    cli_failed;  /* of those, the ones that did not open */
  gboolean opened;      /* some file opened in some window */
};

G_DEFINE_FINAL_TYPE (MlApplication, ml_application, GTK_TYPE_APPLICATION)

#define MAX_RECENT 8

static void
refresh_recent (MlApplication *self)
{
  g_menu_remove_all (self->recent);
  GtkRecentManager *rm = gtk_recent_manager_get_default ();
  GList *items = gtk_recent_manager_get_items (rm);
  int n = 0;
  for (GList *l = items; l && n < MAX_RECENT; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      if (!gtk_recent_info_has_application (info, "memlens"))
        continue;
      g_autofree char *path = g_filename_from_uri (gtk_recent_info_get_uri (info), NULL, NULL);
      if (!path || !gtk_recent_info_exists (info))
        continue;
      g_autofree char *base = g_path_get_basename (path);
      /* menu labels take "_" as a mnemonic: "constructor_oom.pickle"
       * would show as "constructoroom.pickle" */
      g_auto (GStrv) parts = g_strsplit (base, "_", -1);
      g_autofree char *label = g_strjoinv ("__", parts);
      g_autoptr (GMenuItem) item = g_menu_item_new (label, NULL);
      g_menu_item_set_action_and_target (item, "app.open-recent", "s", path);
      g_menu_append_item (self->recent, item);
      n++;
    }
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

void
ml_application_note_recent (MlApplication *self, const char *path)
{
  g_autofree char *uri = g_filename_to_uri (path, NULL, NULL);
  if (!uri)
    return;
  GtkRecentData data = {
    .display_name = NULL,
    .description = NULL,
    .mime_type = (char *) "application/octet-stream",
    .app_name = (char *) "memlens",
    .app_exec = (char *) "memlens view %f",
  };
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
}

GMenuModel *
ml_application_get_recent_menu (MlApplication *self)
{
  return G_MENU_MODEL (self->recent);
}

int
ml_application_get_exit_status (MlApplication *self)
{
  /* every file on the command line failed and nothing opened since: the
   * window showed why, the shell gets 2 as from every memlens command */
  return self->cli_files && self->cli_failed == self->cli_files && !self->opened ? 2 : 0;
}

void
ml_application_note_opened (MlApplication *self, gboolean ok)
{
  self->opened |= ok;
}

/* A window opened a file (to show, or to compare). */
static void
on_file_opened (MlApplication *self, const char *path, MlWindow *win)
{
  ml_application_note_recent (self, path);
  ml_application_note_opened (self, TRUE);
}

static MlWindow *
new_window (MlApplication *self)
{
  MlWindow *win = ml_window_new (GTK_APPLICATION (self));
  ml_window_set_recent_menu (win, G_MENU_MODEL (self->recent));
  g_signal_connect_swapped (win, "file-opened", G_CALLBACK (on_file_opened), self);
  if (self->strategy || self->compare)
    ml_window_set_initial_strategies (win, self->strategy, self->compare);
  if (self->axis)
    g_action_group_activate_action (G_ACTION_GROUP (win), "time-axis", g_variant_new_string (self->axis));
  gtk_window_present (GTK_WINDOW (win));
  return win;
}

static void
open_file_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlApplication *self = user;
  GtkWindow *win = gtk_application_get_active_window (GTK_APPLICATION (self));
  if (!win)
    win = GTK_WINDOW (new_window (self));
  ml_window_choose_file (ML_WINDOW (win));
}

static void
open_recent_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  MlApplication *self = user;
  const char *path = g_variant_get_string (p, NULL);
  GtkWindow *win = gtk_application_get_active_window (GTK_APPLICATION (self));
  if (!win || ml_window_get_document (ML_WINDOW (win)))
    win = GTK_WINDOW (new_window (self));
  ml_window_open_path (ML_WINDOW (win), path);
}

static void
new_window_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  new_window (user);
}

static void
quit_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  g_application_quit (G_APPLICATION (user));
}

static void
about_action (GSimpleAction *a, GVariant *p, gpointer user)
{
  GtkWindow *win = gtk_application_get_active_window (GTK_APPLICATION (user));
  gtk_show_about_dialog (win,
                         "program-name", "memlens",
                         "version", MEMLENS_VERSION,
                         "comments", "GPU and deep-learning memory: timelines, allocators, planners",
                         "license-type", GTK_LICENSE_MIT_X11,
                         "logo-icon-name", "utilities-system-monitor",
                         NULL);
}

static const GActionEntry app_actions[] = {
  { "open", open_file_action, NULL, NULL, NULL },
  { "open-recent", open_recent_action, "s", NULL, NULL },
  { "new-window", new_window_action, NULL, NULL, NULL },
  { "quit", quit_action, NULL, NULL, NULL },
  { "about", about_action, NULL, NULL, NULL },
};

static void
ml_application_startup (GApplication *app)
{
  MlApplication *self = ML_APPLICATION (app);
  G_APPLICATION_CLASS (ml_application_parent_class)->startup (app);
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions, G_N_ELEMENTS (app_actions), app);

  static const struct { const char *action; const char *accels[3]; } accels[] = {
    { "app.open", { "<Control>o", NULL } },
    { "app.new-window", { "<Control>n", NULL } },
    { "app.quit", { "<Control>q", NULL } },
    { "win.close", { "<Control>w", NULL } },
    { "win.search", { "<Control>f", NULL } },
    { "win.export-dialog('png')", { "<Control>e", NULL } },
    { "win.zoom-in", { "<Control>plus", "<Control>equal", NULL } },
    { "win.zoom-out", { "<Control>minus", NULL } },
    { "win.zoom-fit", { "<Control>0", NULL } },
    { "win.show-panel", { "F9", NULL } },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (app), accels[i].action, accels[i].accels);

  g_signal_connect_swapped (gtk_recent_manager_get_default (), "changed", G_CALLBACK (refresh_recent), self);
  refresh_recent (self);
}

static void
ml_application_activate (GApplication *app)
{
  new_window (ML_APPLICATION (app));
}

/* The first job of a window opened for a command-line file is its load. */
static void
on_cli_file_done (MlApplication *self, gboolean ok, MlWindow *win)
{
  g_signal_handlers_disconnect_by_func (win, on_cli_file_done, self);
  if (!ok)
    self->cli_failed++;
}

static void
ml_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  MlApplication *self = ML_APPLICATION (app);
  if (n_files == 2)
    {
      /* memlens view A B: one window, B below A on the same axes */
      MlWindow *win = new_window (self);
      g_autofree char *a = g_file_get_path (files[0]);
      g_autofree char *b = g_file_get_path (files[1]);
      self->cli_files++;
      g_signal_connect_swapped (win, "job-finished", G_CALLBACK (on_cli_file_done), self);
      ml_window_set_initial_device (win, self->device);
      if (b)
        ml_window_compare_with (win, b);
      if (a)
        ml_window_open_path (win, a);
      return;
    }
  for (int i = 0; i < n_files; i++)
    {
      MlWindow *win = new_window (self);
      g_autofree char *path = g_file_get_path (files[i]);
      self->cli_files++;
      g_signal_connect_swapped (win, "job-finished", G_CALLBACK (on_cli_file_done), self);
      ml_window_set_initial_device (win, self->device);
      if (path)
        ml_window_open_path (win, path);
      else
        {
          g_autofree char *uri = g_file_get_uri (files[i]);
          g_autofree char *msg = g_strdup_printf ("Could not open %s: not a local file", uri);
          g_printerr ("memlens view: %s\n", msg);
          ml_window_show_message (win, msg);
          self->cli_failed++;
        }
    }
}

static int
ml_application_handle_local_options (GApplication *app, GVariantDict *opts)
{
  MlApplication *self = ML_APPLICATION (app);
  if (g_variant_dict_contains (opts, "version"))
    {
      g_print ("memlens-view %s\n", MEMLENS_VERSION);
      return 0;
    }
  g_variant_dict_lookup (opts, "strategy", "s", &self->strategy);
  g_variant_dict_lookup (opts, "compare", "s", &self->compare);
  /* bad values are refused before any window opens, exit 2 as every
   * memlens command does */
  const char *names[2] = { self->strategy, self->compare }, *flags[2] = { "--strategy", "--compare" };
  for (int i = 0; i < 2; i++)
    if (names[i] && !ml_strategy_find (names[i]))
      {
        g_printerr ("memlens view: %s %s: no such strategy (memlens strategies lists them)\n", flags[i], names[i]);
        return 2;
      }
  g_autofree char *device = NULL;
  self->device = -1;
  if (g_variant_dict_lookup (opts, "device", "s", &device))
    {
      /* as every command takes it: N or host */
      MlError err = { 0 };
      if (ml_device_parse (device, &self->device, &err) < 0)
        {
          g_printerr ("memlens view: %s\n", err.msg);
          return 2;
        }
    }
  if (g_variant_dict_lookup (opts, "axis", "s", &self->axis) || g_variant_dict_lookup (opts, "time-axis", "s", &self->axis))
    if (!g_str_equal (self->axis, "time") && !g_str_equal (self->axis, "ticks") && !g_str_equal (self->axis, "auto"))
      {
        g_printerr ("memlens view: --axis %s: expected time or ticks (auto: time when every event has one)\n", self->axis);
        return 2;
      }
  return -1;
}

static void
ml_application_finalize (GObject *obj)
{
  MlApplication *self = ML_APPLICATION (obj);
  g_clear_object (&self->recent);
  g_free (self->strategy);
  g_free (self->compare);
  g_free (self->axis);
  G_OBJECT_CLASS (ml_application_parent_class)->finalize (obj);
}

static void
ml_application_class_init (MlApplicationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = ml_application_finalize;
  GApplicationClass *app = G_APPLICATION_CLASS (klass);
  app->startup = ml_application_startup;
  app->activate = ml_application_activate;
  app->open = ml_application_open;
  app->handle_local_options = ml_application_handle_local_options;
}

static void
ml_application_init (MlApplication *self)
{
  self->recent = g_menu_new ();
  static const GOptionEntry entries[] = {
    { "strategy", 's', 0, G_OPTION_ARG_STRING, NULL, "Strategy to show first (default: recorded when the trace has addresses, else best-fit)", "NAME" },
    { "compare", 'c', 0, G_OPTION_ARG_STRING, NULL, "Show a second strategy below the first, with linked zoom", "NAME" },
    { "device", 'd', 0, G_OPTION_ARG_STRING, NULL, "Snapshots with several devices: the device to show (default: the one with an OOM, else the one with the most memory: reserved at the end plus allocated over the trace), or host: the pinned host memory (host_segments, host_traces)", "N|host" },
    { "axis", 0, 0, G_OPTION_ARG_STRING, NULL, "The x axis: time (real time) or ticks (default: time when every event has one)", "time|ticks" },
    { "time-axis", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, NULL, "Same as --axis", "A" },
    { "version", 0, 0, G_OPTION_ARG_NONE, NULL, "Print the version", NULL },
    { NULL }
  };
  g_application_add_main_option_entries (G_APPLICATION (self), entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), "[FILE]");
  g_application_set_option_context_summary (G_APPLICATION (self),
    "The memlens viewer: buffers by address and time, live / reserved / fragmentation curves,\n"
    "strategies side by side, peaks, races and OOMs. Reads every format memlens reads.");
}

MlApplication *
ml_application_new (void)
{
  return g_object_new (ML_TYPE_APPLICATION,
                       "application-id", "org.memlens.Viewer",
                       "flags", G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE,
                       NULL);
}
