/* main.c - the formulate desktop application. */
#include <glib/gi18n.h>
#include <locale.h>
#include <string.h>

#include "fm-application.h"
#include "fm-document.h"
#include "fm-early-open.h"
#include "fm-software-gl.h"
#include "fm-startup-log.h"
#include "formulate-theme-shadow.h"

/* After GApplication's startup, where GTK opened the display and read them:
 * programs started from the window (the web preview's process, a file
 * manager) get the user's environment. */
static gboolean
restore_environment_cb (gpointer data)
{
  /* unsetenv() under a thread that reads the environment (fontconfig and
   * Poppler do, in the early open's render) is a data race: wait for it. */
  if (fm_early_open_is_running ())
    return G_SOURCE_CONTINUE;
  g_unsetenv ("GDK_DEBUG");
  return G_SOURCE_REMOVE;
}

static void
restore_environment (GApplication *app, gpointer data)
{
  if (restore_environment_cb (NULL) == G_SOURCE_CONTINUE)
    g_timeout_add (20, restore_environment_cb, NULL);
}

/* GTK parses its default theme ("Default") when GtkSettings is made, in
 * GtkApplication's startup, and libadwaita's style manager replaces it a
 * moment later with its empty one ("Adwaita-empty") and its own stylesheet,
 * whenever GTK_THEME is unset (AdwStyleManager): that parse, 81 of
 * the 590 million instructions before the empty window's first frame
 * (callgrind, docs/gui.md "Start-up and memory"), was thrown away. Until the
 * application's startup is done, empty stylesheets stand in for the default
 * theme's (fm-theme-shadow.gresource.xml; GLib looks a path up in the most
 * recently registered resource first). Not through GTK_THEME: setenv() races
 * the threads GTK starts with the display. A GTK_THEME the user set is kept,
 * by libadwaita and by GTK, so its theme is read as before. */
static gboolean
shadow_default_theme (void)
{
  if (g_getenv ("GTK_THEME") != NULL)
    return FALSE;
  formulate_theme_shadow_register_resource ();
  return TRUE;
}

/* After libadwaita's startup: any later theme change reads GTK's own. */
static void
unshadow_default_theme (GApplication *app, gpointer data)
{
  formulate_theme_shadow_unregister_resource ();
}

int
main (int argc, char **argv)
{
  g_autoptr(FmApplication) app = NULL;

  fm_startup_log ("main");
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, FM_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  gboolean gl_avoided = fm_avoid_software_gl ();
  app = fm_application_new ();
  /* The document named on the command line opens and its first page
   * renders on another core while GTK starts on this one (after the
   * setenv() above: no thread may read the environment while it changes). */
  fm_early_open_start (argc, argv);
  if (gl_avoided)
    g_signal_connect_after (app, "startup", G_CALLBACK (restore_environment), NULL);
  if (shadow_default_theme ())
    g_signal_connect_after (app, "startup", G_CALLBACK (unshadow_default_theme), NULL);
  int status = g_application_run (G_APPLICATION (app), argc, argv);
  /* The window is gone, but a page render, detection or search may still be
   * inside Poppler on a GTask thread: let it finish before exit() destroys
   * Poppler's C++ globals under it (std::system_error on quit). After the app
   * is released, since finalizers may still lock a document. */
  g_clear_object (&app);
  fm_early_open_finish ();
  if (!fm_document_close_gate (5 * G_USEC_PER_SEC))
    g_warning ("a page was still being read when Formulate quit");
  return status;
}
