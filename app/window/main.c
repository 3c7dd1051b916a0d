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

  /* GDK_DEBUG=gl-disable stays set for the life of the process. GDK reads
   * it once, when the display opens in the application's startup, so
   * unsetting it later changed nothing here; it only kept it from the
   * programs started from the window, and an unsetenv() then runs beside
   * threads that read the environment (GDBus's worker, started when the
   * application registers on the bus before its startup; the early open's
   * fontconfig and Poppler): the setenv/getenv race of crash12. Those
   * programs run on the same machine, where GTK's GL would be the same
   * llvmpipe (or the same user's cairo renderer), so gl-disable suits them
   * as well. */
  fm_avoid_software_gl ();
  app = fm_application_new ();
  /* The document named on the command line opens and its first page
   * renders on another core while GTK starts on this one (after the
   * setenv() above: no thread may read the environment while it changes). */
  fm_early_open_start (argc, argv);
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
