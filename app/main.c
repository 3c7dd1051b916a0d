/* main.c - the formulate desktop application. */
#include <glib/gi18n.h>
#include <locale.h>

#include "fm-application.h"
#include "fm-startup-log.h"

int
main (int argc, char **argv)
{
  g_autoptr(FmApplication) app = NULL;

  fm_startup_log ("main");
  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, FM_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  app = fm_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
