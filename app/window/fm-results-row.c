/* fm-results-row.c - a result: crop, editable LaTeX, confidence and a copy button. */
#include "fm-results-row.h"

#include <glib/gi18n.h>

struct _FmResultsRow {
  GtkWidget parent_instance;

  FmResultsItem *item;
  GBinding *latex_binding;
  GBinding *crop_binding;
  gulong state_handler;
  double low_threshold;

  GtkWidget *box;
  GtkWidget *crop;
  GtkWidget *latex;        /* the whole LaTeX, wrapped (selectable, not editable) */
  GtkWidget *entry;        /* the editor, shown instead of latex while editing */
  GtkWidget *edit_button;
  gulong latex_handler;
  GtkWidget *status;
  GtkWidget *provenance;
  GtkWidget *number;       /* the display's equation number, "(3.1)"; hidden without one */
  GtkWidget *copy_button;
};

G_DEFINE_FINAL_TYPE (FmResultsRow, fm_results_row, GTK_TYPE_WIDGET)

/* The crop is shown at its own size (one crop pixel a logical pixel) between
 * a line's height and FM_RESULTS_CROP_MAX_HEIGHT: a display with fractions or
 * a matrix stays readable instead of being squeezed to one line; a taller one
 * is scaled down to fit, keeping its shape (GTK_CONTENT_FIT_SCALE_DOWN). */
#define FM_RESULTS_CROP_MIN_HEIGHT 32
#define FM_RESULTS_CROP_MAX_HEIGHT 200

static void
update_crop_size (FmResultsRow *self)
{
  GdkPaintable *crop = gtk_picture_get_paintable (GTK_PICTURE (self->crop));
  int height = crop ? gdk_paintable_get_intrinsic_height (crop) : 0;

  gtk_widget_set_size_request (self->crop, -1, CLAMP (height, FM_RESULTS_CROP_MIN_HEIGHT, FM_RESULTS_CROP_MAX_HEIGHT));
}

static void
crop_changed (GtkPicture *picture, GParamSpec *pspec, FmResultsRow *self)
{
  update_crop_size (self);
}

static void
update_latex_label (FmResultsRow *self)
{
  const char *latex = self->item ? fm_results_item_get_latex (self->item) : NULL;

  gtk_label_set_text (GTK_LABEL (self->latex), latex ? latex : "");
}

static void
on_latex_notify (FmResultsItem *item, GParamSpec *pspec, FmResultsRow *self)
{
  update_latex_label (self);
}

/* Editing swaps the wrapped text for a one-line entry (as the row had),
 * until Enter, Escape or the focus leaves it. */
static void
set_editing (FmResultsRow *self, gboolean editing)
{
  if (editing == gtk_widget_get_visible (self->entry))
    return;
  gtk_widget_set_visible (self->latex, !editing);
  gtk_widget_set_visible (self->entry, editing);
  gtk_widget_set_visible (self->edit_button, !editing);
  if (editing)
    {
      gtk_widget_grab_focus (self->entry);
      gtk_editable_set_position (GTK_EDITABLE (self->entry), -1);
    }
}

static void
edit_clicked (GtkButton *button, FmResultsRow *self)
{
  set_editing (self, TRUE);
}

static void
entry_activate (GtkEntry *entry, FmResultsRow *self)
{
  set_editing (self, FALSE);
}

static void
entry_focus_leave (GtkEventControllerFocus *controller, FmResultsRow *self)
{
  set_editing (self, FALSE);
}

static gboolean
entry_escape (GtkEventControllerKey *controller, guint keyval, guint keycode,
              GdkModifierType state, FmResultsRow *self)
{
  if (keyval != GDK_KEY_Escape)
    return FALSE;
  set_editing (self, FALSE);
  return TRUE;
}

/* Where the LaTeX came from, so a person knows how far to trust it. */
static void
update_provenance (FmResultsRow *self)
{
  const char *text = NULL, *tooltip = NULL;

  if (fm_results_item_get_state (self->item) == FM_RESULT_STATE_DONE)
    switch (fm_results_item_get_provenance (self->item))
      {
      case FM_PROVENANCE_IMAGE:
        text = _("Read from the image");
        tooltip = _("The image model read this formula from the rendered page: compare it with the page.");
        break;
      case FM_PROVENANCE_TEXT:
        text = _("Read from the PDF text layer");
        tooltip = _("Taken from the PDF's own glyphs, which name every symbol exactly.");
        break;
      case FM_PROVENANCE_TEXT_IMAGE:
        text = _("Text layer + image model");
        tooltip = _("The image model read this formula, checked against the PDF's glyphs; a low confidence means they disagree.");
        break;
      case FM_PROVENANCE_NONE:
      default:
        break;
      }
  gtk_label_set_text (GTK_LABEL (self->provenance), text ? text : "");
  /* Setting a tooltip, even the same one, makes GTK query the pointer's
   * position from the X server (round trips on the main thread); this runs
   * for every change of every row's item while results arrive. */
  if (g_strcmp0 (gtk_widget_get_tooltip_text (self->provenance), tooltip) != 0)
    gtk_widget_set_tooltip_text (self->provenance, tooltip);
  gtk_widget_set_visible (self->provenance, text != NULL);
}

static void
update_status (FmResultsRow *self)
{
  FmResultsItem *item = self->item;
  g_autofree char *text = NULL;
  gboolean low;

  if (item == NULL)
    return;
  /* Shown beside the LaTeX, never part of it: copying gives the LaTeX only. */
  gtk_label_set_text (GTK_LABEL (self->number), fm_results_item_get_number (item) ? fm_results_item_get_number (item) : "");
  gtk_widget_set_visible (self->number, fm_results_item_get_number (item) != NULL);
  low = fm_results_item_is_low_confidence (item, self->low_threshold);
  switch (fm_results_item_get_state (item))
    {
    case FM_RESULT_STATE_WAITING:
      text = g_strdup_printf (_("Page %d · waiting"), fm_results_item_get_page (item) + 1);
      break;
    case FM_RESULT_STATE_RUNNING:
      text = g_strdup_printf (_("Page %d · recognising…"), fm_results_item_get_page (item) + 1);
      break;
    case FM_RESULT_STATE_DONE:
      /* Translators: "Page 3 · confidence 92 %" */
      text = g_strdup_printf (low ? _("Page %d · confidence %.0f %% · check this one")
                                  : _("Page %d · confidence %.0f %%"),
                              fm_results_item_get_page (item) + 1,
                              100.0 * fm_results_item_get_confidence (item));
      break;
    case FM_RESULT_STATE_FAILED:
      text = g_strdup_printf (_("Page %d · failed: %s"), fm_results_item_get_page (item) + 1,
                              fm_results_item_get_error (item) ? fm_results_item_get_error (item) : "");
      break;
    default:
      text = g_strdup ("");
    }
  gtk_label_set_text (GTK_LABEL (self->status), text);
  update_provenance (self);
  if (low || fm_results_item_get_state (item) == FM_RESULT_STATE_FAILED)
    gtk_widget_add_css_class (self->status, "warning");
  else
    gtk_widget_remove_css_class (self->status, "warning");
  gtk_widget_set_sensitive (self->copy_button, fm_results_item_get_latex (item) != NULL);
  gtk_widget_set_sensitive (self->edit_button, fm_results_item_get_state (item) == FM_RESULT_STATE_DONE ||
                                               fm_results_item_get_state (item) == FM_RESULT_STATE_FAILED);
}

static void
copy_clicked (GtkButton *button, FmResultsRow *self)
{
  const char *latex = self->item ? fm_results_item_get_latex (self->item) : NULL;

  if (latex == NULL)
    return;
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), latex);
  /* Copying shows nothing by itself: say it happened (the window's toast). */
  gtk_widget_activate_action (GTK_WIDGET (self), "win.show-toast", "s", _("Copied the formula's LaTeX"));
}

static void
fm_results_row_dispose (GObject *object)
{
  FmResultsRow *self = FM_RESULTS_ROW (object);

  fm_results_row_set_item (self, NULL);
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (fm_results_row_parent_class)->dispose (object);
}

static void
fm_results_row_class_init (FmResultsRowClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = fm_results_row_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "fm-results-row");
}

static void
fm_results_row_init (FmResultsRow *self)
{
  GtkWidget *line;

  self->low_threshold = 0.6;
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);
  gtk_widget_set_margin_top (self->box, 6);
  gtk_widget_set_margin_bottom (self->box, 6);
  gtk_widget_set_margin_start (self->box, 6);
  gtk_widget_set_margin_end (self->box, 6);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));

  self->crop = gtk_picture_new ();
  gtk_picture_set_can_shrink (GTK_PICTURE (self->crop), TRUE);
  gtk_picture_set_content_fit (GTK_PICTURE (self->crop), GTK_CONTENT_FIT_SCALE_DOWN);
  gtk_widget_set_halign (self->crop, GTK_ALIGN_START);
  gtk_widget_set_size_request (self->crop, -1, FM_RESULTS_CROP_MIN_HEIGHT);
  g_signal_connect (self->crop, "notify::paintable", G_CALLBACK (crop_changed), self);
  gtk_box_append (GTK_BOX (self->box), self->crop);

  line = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
  /* A one-line entry showed only the start of a long formula: the label
   * wraps (between words, inside a long command when it must) and the row
   * grows to show all of it. */
  self->latex = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (self->latex), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (self->latex), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (self->latex), TRUE);
  gtk_label_set_xalign (GTK_LABEL (self->latex), 0);
  /* Wrap to the panel, whatever the formula's length. */
  gtk_label_set_width_chars (GTK_LABEL (self->latex), 10);
  gtk_label_set_max_width_chars (GTK_LABEL (self->latex), 10);
  gtk_widget_add_css_class (self->latex, "monospace");
  gtk_widget_add_css_class (self->latex, "fm-latex");
  gtk_widget_set_hexpand (self->latex, TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->latex),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("LaTeX"), -1);
  gtk_box_append (GTK_BOX (line), self->latex);
  self->entry = gtk_entry_new ();
  gtk_widget_add_css_class (self->entry, "monospace");
  gtk_widget_set_hexpand (self->entry, TRUE);
  gtk_widget_set_valign (self->entry, GTK_ALIGN_START);
  gtk_widget_set_visible (self->entry, FALSE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->entry),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("LaTeX"), -1);
  g_signal_connect (self->entry, "activate", G_CALLBACK (entry_activate), self);
  {
    GtkEventController *focus = gtk_event_controller_focus_new ();
    GtkEventController *keys = gtk_event_controller_key_new ();

    g_signal_connect (focus, "leave", G_CALLBACK (entry_focus_leave), self);
    gtk_widget_add_controller (self->entry, focus);
    g_signal_connect (keys, "key-pressed", G_CALLBACK (entry_escape), self);
    gtk_widget_add_controller (self->entry, keys);
  }
  gtk_box_append (GTK_BOX (line), self->entry);
  self->edit_button = gtk_button_new_from_icon_name ("document-edit-symbolic");
  gtk_widget_set_tooltip_text (self->edit_button, _("Edit LaTeX"));
  gtk_widget_add_css_class (self->edit_button, "flat");
  gtk_widget_set_valign (self->edit_button, GTK_ALIGN_START);
  g_signal_connect (self->edit_button, "clicked", G_CALLBACK (edit_clicked), self);
  gtk_box_append (GTK_BOX (line), self->edit_button);
  self->number = gtk_label_new (NULL);
  gtk_widget_add_css_class (self->number, "dim-label");
  gtk_widget_set_visible (self->number, FALSE);
  gtk_box_append (GTK_BOX (line), self->number);
  self->copy_button = gtk_button_new_from_icon_name ("edit-copy-symbolic");
  gtk_widget_set_tooltip_text (self->copy_button, _("Copy LaTeX"));
  gtk_widget_add_css_class (self->copy_button, "flat");
  gtk_widget_set_valign (self->copy_button, GTK_ALIGN_START);
  g_signal_connect (self->copy_button, "clicked", G_CALLBACK (copy_clicked), self);
  gtk_box_append (GTK_BOX (line), self->copy_button);
  gtk_box_append (GTK_BOX (self->box), line);

  self->status = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->status), 0);
  gtk_label_set_ellipsize (GTK_LABEL (self->status), PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class (self->status, "caption");
  gtk_widget_add_css_class (self->status, "dim-label");
  gtk_box_append (GTK_BOX (self->box), self->status);
  self->provenance = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->provenance), 0);
  gtk_label_set_ellipsize (GTK_LABEL (self->provenance), PANGO_ELLIPSIZE_END);
  gtk_widget_add_css_class (self->provenance, "caption");
  gtk_widget_add_css_class (self->provenance, "dim-label");
  gtk_widget_set_visible (self->provenance, FALSE);
  gtk_box_append (GTK_BOX (self->box), self->provenance);
}

GtkWidget *
fm_results_row_new (void)
{
  return g_object_new (FM_TYPE_RESULTS_ROW, NULL);
}

static gboolean
latex_to_text (GBinding *binding, const GValue *from, GValue *to, gpointer user_data)
{
  const char *latex = g_value_get_string (from);
  g_value_set_string (to, latex != NULL ? latex : "");
  return TRUE;
}

/* An empty entry on a formula not yet recognised is not an edit. */
static gboolean
text_to_latex (GBinding *binding, const GValue *from, GValue *to, gpointer user_data)
{
  const char *text = g_value_get_string (from);
  FmResultsItem *item = FM_RESULTS_ITEM (g_binding_dup_source (binding));
  gboolean done = fm_results_item_get_state (item) == FM_RESULT_STATE_DONE;

  g_object_unref (item);
  if (!done && (text == NULL || *text == '\0'))
    return FALSE;
  g_value_set_string (to, text);
  return TRUE;
}

static void
on_item_notify (FmResultsItem *item, GParamSpec *pspec, FmResultsRow *self)
{
  update_status (self);
}

void
fm_results_row_set_item (FmResultsRow *self, FmResultsItem *item)
{
  if (self->item == item)
    return;
  if (self->item != NULL)
    {
      g_clear_pointer (&self->latex_binding, g_binding_unbind);
      g_clear_signal_handler (&self->latex_handler, self->item);
      g_clear_pointer (&self->crop_binding, g_binding_unbind);
      g_clear_signal_handler (&self->state_handler, self->item);
      g_clear_object (&self->item);
    }
  set_editing (self, FALSE);
  if (item == NULL)
    {
      update_latex_label (self);
      return;
    }
  self->item = g_object_ref (item);
  gtk_editable_set_text (GTK_EDITABLE (self->entry), "");
  self->latex_binding = g_object_bind_property_full (item, "latex", self->entry, "text",
                                                     G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE,
                                                     latex_to_text, text_to_latex, NULL, NULL);
  self->crop_binding = g_object_bind_property (item, "crop", self->crop, "paintable",
                                               G_BINDING_SYNC_CREATE);
  self->state_handler = g_signal_connect (item, "notify", G_CALLBACK (on_item_notify), self);
  self->latex_handler = g_signal_connect (item, "notify::latex", G_CALLBACK (on_latex_notify), self);
  update_latex_label (self);
  update_status (self);
}

FmResultsItem *
fm_results_row_get_item (FmResultsRow *self)
{
  return self->item;
}

void
fm_results_row_set_low_threshold (FmResultsRow *self, double threshold)
{
  self->low_threshold = threshold;
  update_status (self);
}

const char *
fm_results_row_get_number_text (FmResultsRow *self)
{
  g_return_val_if_fail (FM_IS_RESULTS_ROW (self), NULL);
  return gtk_widget_get_visible (self->number) ? gtk_label_get_text (GTK_LABEL (self->number)) : NULL;
}

GtkWidget *
fm_results_row_get_latex_label (FmResultsRow *self)
{
  g_return_val_if_fail (FM_IS_RESULTS_ROW (self), NULL);
  return self->latex;
}

GtkWidget *
fm_results_row_get_crop_picture (FmResultsRow *self)
{
  g_return_val_if_fail (FM_IS_RESULTS_ROW (self), NULL);
  return self->crop;
}

void
fm_results_row_edit (FmResultsRow *self)
{
  g_return_if_fail (FM_IS_RESULTS_ROW (self));
  set_editing (self, TRUE);
}

GtkWidget *
fm_results_row_get_entry (FmResultsRow *self)
{
  g_return_val_if_fail (FM_IS_RESULTS_ROW (self), NULL);
  return gtk_widget_get_visible (self->entry) ? self->entry : NULL;
}
