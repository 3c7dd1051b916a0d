/* main.c - the formulate desktop application. */
#include <glib/gi18n.h>
#include <locale.h>
#include <string.h>

#include "fm-application.h"
#include "fm-document.h"
#include "fm-startup-log.h"

/* Whether OpenGL would run on a GPU: a DRM render node is how Mesa and the
 * NVIDIA driver reach one. */
static gboolean
have_gpu_render_node (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/dev/dri", 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "renderD"))
      return TRUE;
  return FALSE;
}

/* Without a GPU, GTK's OpenGL renderer is Mesa's llvmpipe: it maps LLVM
 * (55 MB resident), keeps ~60 MB of renderer caches and still draws on the
 * CPU, more slowly than the cairo renderer (an empty window: 219 MB RSS with
 * it, 84 MB without, tools/measure-startup under Xvfb). Then GL is left off,
 * unless the user chose a renderer. Returns whether it set the variables,
 * which restore_environment() removes once GTK has read them. */
static gboolean
avoid_software_gl (void)
{
  const char *debug = g_getenv ("GDK_DEBUG");

  if (g_getenv ("GSK_RENDERER") != NULL || debug != NULL)
    return FALSE;
  if (have_gpu_render_node () && g_getenv ("LIBGL_ALWAYS_SOFTWARE") == NULL)
    return FALSE;
  /* GSK then picks its cairo renderer by itself. */
  g_setenv ("GDK_DEBUG", "gl-disable", TRUE);
  return TRUE;
}

/* After GApplication's startup, where GTK opened the display and read them:
 * programs started from the window (the web preview's process, a file
 * manager) get the user's environment. */
static void
restore_environment (GApplication *app, gpointer data)
{
  g_unsetenv ("GDK_DEBUG");
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

  gboolean gl_avoided = avoid_software_gl ();
  app = fm_application_new ();
  if (gl_avoided)
    g_signal_connect_after (app, "startup", G_CALLBACK (restore_environment), NULL);
  int status = g_application_run (G_APPLICATION (app), argc, argv);
  /* The window is gone, but a page render, detection or search may still be
   * inside Poppler on a GTask thread: let it finish before exit() destroys
   * Poppler's C++ globals under it (std::system_error on quit). After the app
   * is released, since finalizers may still lock a document. */
  g_clear_object (&app);
  if (!fm_document_close_gate (5 * G_USEC_PER_SEC))
    g_warning ("a page was still being read when Formulate quit");
  return status;
}
