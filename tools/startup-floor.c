/* startup-floor.c - the least a libadwaita application does to show an empty
 * window like Formulate's: the floor under the window's start-up target (issue 16).
 *
 * An AdwApplication whose activate builds an AdwApplicationWindow of Formulate's
 * default size (1200 x 800) with a header bar, an open button and a status page
 * (icon, title, description, button), nothing else: no settings, no engine, no
 * .ui template, no stylesheet of its own, no Poppler. It turns GL off as
 * Formulate does without a GPU render node (so both draw with the cairo
 * renderer) and logs the same milestones with the same code
 * (app/window/fm-startup-log.c, FORMULATE_STARTUP_LOG=1), so
 * `tools/measure-startup --floor` measures it exactly as it measures the
 * window. It logs "model-failed" after its first frame only so that the
 * measurement, which waits for a model, ends.
 *
 * `startup-floor --gtk` does the same with a GtkApplication and a GtkWindow
 * (libadwaita loaded but never initialised: no adw_init, its stylesheet, its
 * style manager), `startup-floor --bare` with gtk_init() and a GtkWindow, no
 * GApplication (no D-Bus name, no application's startup): what each layer
 * costs on the way to the first frame. */
#include <adwaita.h>

#include "fm-software-gl.h"
#include "fm-startup-log.h"

static void
first_frame_painted (GdkFrameClock *clock, gpointer data)
{
  g_signal_handlers_disconnect_by_func (clock, first_frame_painted, data);
  fm_startup_log ("window-painted");
  fm_startup_log ("model-failed");
}

static void
window_mapped (GtkWidget *window, gpointer data)
{
  fm_startup_log ("window-mapped");
  g_signal_connect (gtk_widget_get_frame_clock (window), "after-paint",
                    G_CALLBACK (first_frame_painted), NULL);
}

static void
startup (GApplication *app, gpointer data)
{
  fm_startup_log ("startup-done");
}

/* The same widgets in GTK's own: an icon, a title, a description, a button. */
static GtkWidget *
gtk_status_page (void)
{
  GtkWidget *page = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  GtkWidget *icon = gtk_image_new_from_icon_name ("x-office-document-symbolic");

  gtk_image_set_pixel_size (GTK_IMAGE (icon), 128);
  gtk_widget_set_valign (page, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (page), icon);
  gtk_box_append (GTK_BOX (page), gtk_label_new ("Open a PDF"));
  gtk_box_append (GTK_BOX (page), gtk_label_new ("Drop a PDF here or open one."));
  gtk_box_append (GTK_BOX (page), gtk_button_new_with_label ("Open…"));
  return page;
}

static GtkWidget *
adw_window (GtkApplication *app)
{
  GtkWidget *window = adw_application_window_new (app);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  GtkWidget *header = adw_header_bar_new ();
  GtkWidget *status = adw_status_page_new ();

  adw_header_bar_pack_start (ADW_HEADER_BAR (header), gtk_button_new_with_label ("Open"));
  gtk_box_append (GTK_BOX (box), header);
  adw_status_page_set_icon_name (ADW_STATUS_PAGE (status), "x-office-document-symbolic");
  adw_status_page_set_title (ADW_STATUS_PAGE (status), "Open a PDF");
  adw_status_page_set_description (ADW_STATUS_PAGE (status), "Drop a PDF here or open one.");
  adw_status_page_set_child (ADW_STATUS_PAGE (status), gtk_button_new_with_label ("Open…"));
  gtk_widget_set_vexpand (status, TRUE);
  gtk_box_append (GTK_BOX (box), status);
  adw_application_window_set_content (ADW_APPLICATION_WINDOW (window), box);
  return window;
}

static GtkWidget *
gtk_window (GtkApplication *app)
{
  GtkWidget *window = app != NULL ? gtk_application_window_new (app) : gtk_window_new ();
  GtkWidget *header = gtk_header_bar_new ();

  gtk_header_bar_pack_start (GTK_HEADER_BAR (header), gtk_button_new_with_label ("Open"));
  gtk_window_set_titlebar (GTK_WINDOW (window), header);
  gtk_window_set_child (GTK_WINDOW (window), gtk_status_page ());
  return window;
}

static void
present (GtkWidget *window)
{
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 800);
  g_signal_connect (window, "map", G_CALLBACK (window_mapped), NULL);
  gtk_window_present (GTK_WINDOW (window));
}

static void
activate (GApplication *app, gpointer data)
{
  present (ADW_IS_APPLICATION (app) ? adw_window (GTK_APPLICATION (app))
                                    : gtk_window (GTK_APPLICATION (app)));
}

int
main (int argc, char **argv)
{
  g_autoptr(GtkApplication) app = NULL;
  const char *mode = argc > 1 ? argv[1] : "";

  fm_startup_log ("main");
  fm_avoid_software_gl ();
  if (g_str_equal (mode, "--bare"))
    {
      gtk_init ();
      fm_startup_log ("startup-done");
      present (gtk_window (NULL));
      for (;;)
        g_main_context_iteration (NULL, TRUE);
    }
  if (g_str_equal (mode, "--gtk"))
    app = gtk_application_new ("io.github.formulate.StartupFloor", G_APPLICATION_DEFAULT_FLAGS);
  else
    app = GTK_APPLICATION (adw_application_new ("io.github.formulate.StartupFloor",
                                                G_APPLICATION_DEFAULT_FLAGS));
  g_signal_connect (app, "startup", G_CALLBACK (startup), NULL);
  g_signal_connect (app, "activate", G_CALLBACK (activate), NULL);
  return g_application_run (G_APPLICATION (app), 1, argv);
}
