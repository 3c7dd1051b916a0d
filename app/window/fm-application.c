/* fm-application.c - AdwApplication subclass: windows, actions, settings, worker. */
#include "fm-application.h"
#include "fm-paths.h"
#include "fm-settings.h"
#include "fm-startup-log.h"

#include <glib/gi18n.h>
#include <malloc.h>
#include <unistd.h>

#include "formulate-resources.h"
#include "formulate-schema-resources.h"
#include "fm-document-tab.h"
#include "fm-preferences.h"
#include "fm-window.h"

struct _FmApplication {
  AdwApplication parent_instance;
  GSettings *settings;
  FmEngineWorker *worker;
  gboolean engine_started;
  guint engine_idle;            /* polls until the first page is on screen */
  gint64 engine_wait_since_us;
};

G_DEFINE_FINAL_TYPE (FmApplication, fm_application, ADW_TYPE_APPLICATION)

/* The model: the setting, then what formulate-cli finds ($FORMULATE_MODEL, the
 * data dir next to the installed program, or the source tree's when uninstalled). */
static char *
find_model_path (FmApplication *self)
{
  g_autofree char *setting = g_settings_get_string (self->settings, "model-path");
  char buf[4096];
  const char *path;

  if (setting != NULL && *setting != '\0')
    return g_steal_pointer (&setting);
  path = fm_find_model (NULL, buf, sizeof buf, NULL, 0);
  return path ? g_strdup (path) : NULL;
}

static void
reload_model (FmApplication *self)
{
  g_autofree char *path = find_model_path (self);
  g_autofree char *device = g_settings_get_string (self->settings, "device");
  fe_precision precision = g_settings_get_enum (self->settings, "precision");

  fm_engine_worker_load_model (self->worker, path, device, precision);
}

static void
on_settings_changed (GSettings *settings, const char *key, FmApplication *self)
{
  if ((g_str_equal (key, "device") || g_str_equal (key, "precision") ||
       g_str_equal (key, "model-path")) && self->engine_started)
    reload_model (self);
  else if (g_str_equal (key, "beam-width"))
    fm_engine_worker_set_beam_width (self->worker, g_settings_get_int (settings, "beam-width"));
}

/* How often the application looks whether the first page is on screen, and
 * for how long at most: a document that never paints (a failed open, a huge
 * first page) must not keep recognition off for good. */
#define FM_ENGINE_START_POLL_MS 50
#define FM_ENGINE_START_MAX_WAIT_US (5 * G_USEC_PER_SEC)

/* TRUE while the first window's document has not painted its first page yet:
 * an empty window has nothing to wait for. */
static gboolean
waiting_for_first_page (FmApplication *self)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l != NULL; l = l->next)
    {
      FmDocumentTab *tab;

      if (!FM_IS_WINDOW (l->data) || (tab = fm_window_get_current_tab (l->data)) == NULL)
        continue;
      return fm_page_view_get_n_painted (fm_document_tab_get_page_view (tab)) == 0;
    }
  return FALSE;
}

void
fm_application_start_engine (FmApplication *self)
{
  g_clear_handle_id (&self->engine_idle, g_source_remove);
  if (!self->engine_started && self->worker != NULL)
    {
      self->engine_started = TRUE;
      fm_startup_log ("engine-started");
      reload_model (self);
    }
}

gboolean
fm_application_get_engine_started (FmApplication *self)
{
  return self->engine_started;
}

static gboolean
start_engine_cb (gpointer data)
{
  FmApplication *self = data;

  if (!self->engine_started && self->worker != NULL && waiting_for_first_page (self) &&
      g_get_monotonic_time () - self->engine_wait_since_us < FM_ENGINE_START_MAX_WAIT_US)
    return G_SOURCE_CONTINUE;
  self->engine_idle = 0;  /* this source ends: not removed again */
  fm_application_start_engine (self);
  return G_SOURCE_REMOVE;
}

static void
on_model_loaded (FmEngineWorker *worker, FmApplication *self)
{
  fm_startup_log ("model-loaded");
}

static void
on_model_failed (FmEngineWorker *worker, const char *message, FmApplication *self)
{
  fm_startup_log ("model-failed");
}

static void
first_frame_painted (GdkFrameClock *clock, FmApplication *self)
{
  g_signal_handlers_disconnect_by_func (clock, first_frame_painted, self);
  fm_startup_log ("window-painted");
  /* For counting the start alone (callgrind's instructions: exact where a
   * loaded machine's times are not; docs/gui.md "Start-up and memory"). */
  if (g_getenv ("FORMULATE_STARTUP_EXIT") != NULL)
    _exit (0);
}

/* The model loads only once the first page is on screen (or at once for an
 * empty window): reading it, the engine's dlopen()s of BLAS and the CUDA
 * module (which hold the dynamic loader's lock GTK needs), and its threads
 * would otherwise compete with the window and its first page for the CPU. */
static void
first_window_mapped (GtkWidget *window, FmApplication *self)
{
  GdkFrameClock *clock;

  g_signal_handlers_disconnect_by_func (window, first_window_mapped, self);
  fm_startup_log ("window-mapped");
  if ((clock = gtk_widget_get_frame_clock (window)) != NULL)
    g_signal_connect (clock, "after-paint", G_CALLBACK (first_frame_painted), self);
  if (!self->engine_started && self->engine_idle == 0)
    {
      self->engine_wait_since_us = g_get_monotonic_time ();
      self->engine_idle = g_timeout_add_full (G_PRIORITY_LOW, FM_ENGINE_START_POLL_MS,
                                              start_engine_cb, self, NULL);
    }
}

static void
fm_application_window_added (GtkApplication *app, GtkWindow *window)
{
  FmApplication *self = FM_APPLICATION (app);

  GTK_APPLICATION_CLASS (fm_application_parent_class)->window_added (app, window);
  if (!self->engine_started && FM_IS_WINDOW (window))
    {
      if (gtk_widget_get_mapped (GTK_WIDGET (window)))
        first_window_mapped (GTK_WIDGET (window), self);
      else
        g_signal_connect (window, "map", G_CALLBACK (first_window_mapped), self);
    }
}

static FmWindow *
get_or_create_window (FmApplication *self)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));

  if (window == NULL)
    window = GTK_WINDOW (fm_window_new (self));
  return FM_WINDOW (window);
}

static void
fm_application_activate (GApplication *app)
{
  gtk_window_present (GTK_WINDOW (get_or_create_window (FM_APPLICATION (app))));
}

static void
fm_application_open (GApplication *app, GFile **files, int n_files, const char *hint)
{
  FmWindow *window = get_or_create_window (FM_APPLICATION (app));

  gtk_window_present (GTK_WINDOW (window));
  fm_window_open_files (window, files, n_files);
}

static void
about_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  FmApplication *self = user_data;
  const char *developers[] = { _("The Formulate developers"), NULL };
  GtkWidget *about;

  about = g_object_new (ADW_TYPE_ABOUT_WINDOW,
                        "transient-for", gtk_application_get_active_window (GTK_APPLICATION (self)),
                        "application-name", _("Formulate"),
                        "application-icon", FM_APPLICATION_ID,
                        "developer-name", _("The Formulate developers"),
                        "developers", developers,
                        "version", FM_VERSION,
                        "comments", _("Turns the mathematics in PDF files into LaTeX, on your own computer."),
                        "license-type", GTK_LICENSE_GPL_3_0,
                        "translator-credits", _("translator-credits"),
                        NULL);
  gtk_window_present (GTK_WINDOW (about));
}

static void
preferences_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  FmApplication *self = user_data;
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (self));
  FmPreferences *prefs = fm_preferences_new (self->settings, self->worker);

  gtk_window_set_transient_for (GTK_WINDOW (prefs), parent);
  gtk_window_present (GTK_WINDOW (prefs));
}

static void
new_window_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  gtk_window_present (GTK_WINDOW (fm_window_new (FM_APPLICATION (user_data))));
}

static void
quit_action (GSimpleAction *action, GVariant *parameter, gpointer user_data)
{
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (user_data));

  /* Close each window so it saves its size and stops its work; a window
   * with results not exported asks first (and may stay). */
  while (windows != NULL)
    {
      GList *next = windows->next;
      gtk_window_close (windows->data);
      windows = next;
    }
}

static const GActionEntry app_actions[] = {
  { "about", about_action },
  { "preferences", preferences_action },
  { "new-window", new_window_action },
  { "quit", quit_action },
};

static void
fm_application_startup (GApplication *app)
{
  FmApplication *self = FM_APPLICATION (app);
  const char *quit_accels[] = { "<Control>q", NULL };
  const char *prefs_accels[] = { "<Control>comma", NULL };
  const char *new_window_accels[] = { "<Control>n", NULL };

  G_APPLICATION_CLASS (fm_application_parent_class)->startup (app);

  g_action_map_add_action_entries (G_ACTION_MAP (app), app_actions,
                                   G_N_ELEMENTS (app_actions), app);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.preferences", prefs_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (app), "app.new-window", new_window_accels);

  /* Never g_settings_new(): it aborts when the schema is not installed,
   * which is every run from the build tree. */
  self->settings = fm_settings_open (FM_APPLICATION_ID, NULL);
  self->worker = fm_engine_worker_new ();
  fm_engine_worker_set_beam_width (self->worker, g_settings_get_int (self->settings, "beam-width"));
  g_signal_connect (self->settings, "changed", G_CALLBACK (on_settings_changed), self);
  g_signal_connect (self->worker, "model-loaded", G_CALLBACK (on_model_loaded), self);
  g_signal_connect (self->worker, "model-failed", G_CALLBACK (on_model_failed), self);
  /* The model loads on the worker thread, started once the first window is
   * on screen (see window_added). */
  fm_startup_log ("startup-done");
}

static void
fm_application_shutdown (GApplication *app)
{
  FmApplication *self = FM_APPLICATION (app);

  g_clear_handle_id (&self->engine_idle, g_source_remove);
  G_APPLICATION_CLASS (fm_application_parent_class)->shutdown (app);
  /* Join the worker thread now, whoever still holds a reference: the engine
   * is freed before exit. */
  if (self->worker != NULL)
    fm_engine_worker_stop (self->worker);
  g_clear_object (&self->worker);
  g_clear_object (&self->settings);
}

static int
fm_application_handle_local_options (GApplication *app, GVariantDict *options)
{
  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("formulate %s (engine %s)\n", FM_VERSION, FE_VERSION_STRING);
      return 0;
    }
  return -1;  /* go on: activate or open */
}

static void
fm_application_class_init (FmApplicationClass *klass)
{
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  app_class->handle_local_options = fm_application_handle_local_options;
  GTK_APPLICATION_CLASS (klass)->window_added = fm_application_window_added;

  app_class->activate = fm_application_activate;
  app_class->open = fm_application_open;
  app_class->startup = fm_application_startup;
  app_class->shutdown = fm_application_shutdown;
}

static void
fm_application_init (FmApplication *self)
{
  const GOptionEntry entries[] = {
    { "version", 0, 0, G_OPTION_ARG_NONE, NULL, N_("Print the version and exit"), NULL },
    { NULL },
  };

  g_application_add_main_option_entries (G_APPLICATION (self), entries);
}

FmApplication *
fm_application_new (void)
{
  static gsize registered;

  if (g_once_init_enter (&registered))
    {
      formulate_register_resource ();
      formulate_schema_register_resource ();
      /* glibc raises its mmap threshold each time a large block is freed, up
       * to 32 MB, so after the first page renders (4-30 MB surfaces) every
       * later one came from the threads' malloc arenas, which fragment and
       * never shrink: 20 open/close cycles of a 40-page PDF grew RSS by 97 MB
       * (tests/gui/test-gui-memory.c). A fixed threshold keeps large blocks
       * in their own mappings, returned to the system when freed. */
      mallopt (M_MMAP_THRESHOLD, 256 * 1024);
      g_once_init_leave (&registered, 1);
    }
  return g_object_new (FM_TYPE_APPLICATION,
                       "application-id", FM_APPLICATION_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", "/io/github/formulate/Formulate",
                       NULL);
}

GSettings *
fm_application_get_settings (FmApplication *self)
{
  return self->settings;
}

FmEngineWorker *
fm_application_get_worker (FmApplication *self)
{
  return self->worker;
}
