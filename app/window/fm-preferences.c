/* fm-preferences.c - preferences bound to GSettings. */
#include "fm-preferences.h"

#include <glib/gi18n.h>

struct _FmPreferences {
  AdwPreferencesWindow parent_instance;

  AdwComboRow *device_row;
  AdwComboRow *precision_row;
  GtkWidget *beam_spin;
  GtkWidget *recognize_switch;
  GtkWidget *preview_switch;
  AdwEntryRow *model_row;

  GSettings *settings;
  GPtrArray *device_ids;
};

G_DEFINE_FINAL_TYPE (FmPreferences, fm_preferences, ADW_TYPE_PREFERENCES_WINDOW)

static void
device_changed (AdwComboRow *row, GParamSpec *pspec, FmPreferences *self)
{
  guint i = adw_combo_row_get_selected (row);

  if (i < self->device_ids->len)
    g_settings_set_string (self->settings, "device", g_ptr_array_index (self->device_ids, i));
}

static void
precision_changed (AdwComboRow *row, GParamSpec *pspec, FmPreferences *self)
{
  g_settings_set_enum (self->settings, "precision", (int) adw_combo_row_get_selected (row));
}

static void
model_applied (AdwEntryRow *row, FmPreferences *self)
{
  g_settings_set_string (self->settings, "model-path", gtk_editable_get_text (GTK_EDITABLE (row)));
}

static void
fm_preferences_dispose (GObject *object)
{
  FmPreferences *self = FM_PREFERENCES (object);

  g_clear_object (&self->settings);
  g_clear_pointer (&self->device_ids, g_ptr_array_unref);
  G_OBJECT_CLASS (fm_preferences_parent_class)->dispose (object);
}

static void
fm_preferences_class_init (FmPreferencesClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = fm_preferences_dispose;
  gtk_widget_class_set_template_from_resource (widget_class, "/io/github/formulate/Formulate/ui/fm-preferences.ui");
  gtk_widget_class_bind_template_child (widget_class, FmPreferences, device_row);
  gtk_widget_class_bind_template_child (widget_class, FmPreferences, precision_row);
  gtk_widget_class_bind_template_child (widget_class, FmPreferences, beam_spin);
  gtk_widget_class_bind_template_child (widget_class, FmPreferences, recognize_switch);
  gtk_widget_class_bind_template_child (widget_class, FmPreferences, preview_switch);
  gtk_widget_class_bind_template_child (widget_class, FmPreferences, model_row);
}

static void
fm_preferences_init (FmPreferences *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->device_ids = g_ptr_array_new_with_free_func (g_free);
}

FmPreferences *
fm_preferences_new (GSettings *settings, FmEngineWorker *worker)
{
  FmPreferences *self = g_object_new (FM_TYPE_PREFERENCES, NULL);
  g_autoptr(GtkStringList) labels = gtk_string_list_new (NULL);
  g_autofree char *device = NULL;
  g_autofree char *model = NULL;
  const FeDeviceInfo *devices;
  gsize n;

  self->settings = g_object_ref (settings);

  gtk_string_list_append (labels, _("Auto"));
  g_ptr_array_add (self->device_ids, g_strdup ("auto"));
  devices = fm_engine_worker_list_devices (worker, &n);
  for (gsize i = 0; i < n; i++)
    {
      g_autofree char *label = NULL;
      if (devices[i].available)
        label = g_strdup (devices[i].name[0] ? devices[i].name : devices[i].id);
      else
        /* Translators: a device that cannot be used, "CUDA (no CUDA driver)" */
        label = g_strdup_printf (_("%s (unavailable: %s)"), devices[i].name[0] ? devices[i].name : devices[i].id,
                                 devices[i].unavailable_reason);
      gtk_string_list_append (labels, label);
      g_ptr_array_add (self->device_ids, g_strdup (devices[i].id));
    }
  adw_combo_row_set_model (self->device_row, G_LIST_MODEL (labels));
  device = g_settings_get_string (settings, "device");
  for (guint i = 0; i < self->device_ids->len; i++)
    if (g_str_equal (g_ptr_array_index (self->device_ids, i), device))
      adw_combo_row_set_selected (self->device_row, i);
  adw_combo_row_set_selected (self->precision_row, (guint) g_settings_get_enum (settings, "precision"));
  g_signal_connect (self->device_row, "notify::selected", G_CALLBACK (device_changed), self);
  g_signal_connect (self->precision_row, "notify::selected", G_CALLBACK (precision_changed), self);

  g_settings_bind (settings, "beam-width", self->beam_spin, "value", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (settings, "recognize-on-open", self->recognize_switch, "active", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (settings, "show-preview", self->preview_switch, "active", G_SETTINGS_BIND_DEFAULT);
#ifndef FM_HAVE_PREVIEW
  /* Built without WebKitGTK/KaTeX: there is no preview to switch. */
  gtk_widget_set_visible (gtk_widget_get_ancestor (self->preview_switch, ADW_TYPE_ACTION_ROW), FALSE);
#endif
  model = g_settings_get_string (settings, "model-path");
  gtk_editable_set_text (GTK_EDITABLE (self->model_row), model);
  g_signal_connect (self->model_row, "apply", G_CALLBACK (model_applied), self);
  return self;
}
