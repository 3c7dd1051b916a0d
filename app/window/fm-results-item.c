/* fm-results-item.c - one formula region and its recognition result. */
#include "fm-results-item.h"

struct _FmResultsItem {
  GObject parent_instance;
  FmRegion *region;
  gboolean manual;
  FmResultState state;
  char *latex;
  char *error;
  double confidence;
  double confidence_min;
  GdkTexture *crop;
  gboolean edited;
  char *number;          /* DISPLAY: its equation number's text, e.g. "(3.1)"; else NULL */
};

G_DEFINE_FINAL_TYPE (FmResultsItem, fm_results_item, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_PAGE,
  PROP_STATE,
  PROP_LATEX,
  PROP_CONFIDENCE,
  PROP_CROP,
  PROP_ERROR,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_EDITED, N_SIGNALS };
static guint signals[N_SIGNALS];

GType
fm_result_state_get_type (void)
{
  static gsize type_id;
  static const GEnumValue values[] = {
    { FM_RESULT_STATE_WAITING, "FM_RESULT_STATE_WAITING", "waiting" },
    { FM_RESULT_STATE_RUNNING, "FM_RESULT_STATE_RUNNING", "running" },
    { FM_RESULT_STATE_DONE, "FM_RESULT_STATE_DONE", "done" },
    { FM_RESULT_STATE_FAILED, "FM_RESULT_STATE_FAILED", "failed" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&type_id))
    g_once_init_leave (&type_id, g_enum_register_static ("FmResultState", values));
  return type_id;
}

static void
fm_results_item_finalize (GObject *object)
{
  FmResultsItem *self = FM_RESULTS_ITEM (object);

  fm_region_free (self->region);
  g_free (self->latex);
  g_free (self->error);
  g_free (self->number);
  g_clear_object (&self->crop);
  G_OBJECT_CLASS (fm_results_item_parent_class)->finalize (object);
}

static void
fm_results_item_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  FmResultsItem *self = FM_RESULTS_ITEM (object);

  switch (prop_id)
    {
    case PROP_PAGE: g_value_set_int (value, self->region->page); break;
    case PROP_STATE: g_value_set_enum (value, self->state); break;
    case PROP_LATEX: g_value_set_string (value, self->latex); break;
    case PROP_CONFIDENCE: g_value_set_double (value, self->confidence); break;
    case PROP_CROP: g_value_set_object (value, self->crop); break;
    case PROP_ERROR: g_value_set_string (value, self->error); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fm_results_item_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  FmResultsItem *self = FM_RESULTS_ITEM (object);

  switch (prop_id)
    {
    case PROP_STATE: fm_results_item_set_state (self, g_value_get_enum (value)); break;
    case PROP_LATEX: fm_results_item_set_latex (self, g_value_get_string (value)); break;
    case PROP_CROP: fm_results_item_set_crop (self, g_value_get_object (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
fm_results_item_class_init (FmResultsItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = fm_results_item_finalize;
  object_class->get_property = fm_results_item_get_property;
  object_class->set_property = fm_results_item_set_property;

  properties[PROP_PAGE] = g_param_spec_int ("page", NULL, NULL, 0, G_MAXINT, 0,
                                            G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_STATE] = g_param_spec_enum ("state", NULL, NULL, FM_TYPE_RESULT_STATE,
                                              FM_RESULT_STATE_WAITING,
                                              G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LATEX] = g_param_spec_string ("latex", NULL, NULL, NULL,
                                                G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_CONFIDENCE] = g_param_spec_double ("confidence", NULL, NULL, -1.0, 1.0, -1.0,
                                                     G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_CROP] = g_param_spec_object ("crop", NULL, NULL, GDK_TYPE_TEXTURE,
                                               G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ERROR] = g_param_spec_string ("error", NULL, NULL, NULL,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* A person changed a recognised formula's LaTeX: the value before it, and
   * whether that one was an edit too (the document's undo keeps them). */
  signals[SIGNAL_EDITED] =
    g_signal_new ("edited", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_BOOLEAN);
}

static void
fm_results_item_init (FmResultsItem *self)
{
  self->confidence = -1.0;
  self->confidence_min = -1.0;
}

FmResultsItem *
fm_results_item_new (const FmRegion *region, gboolean manual)
{
  FmResultsItem *self = g_object_new (FM_TYPE_RESULTS_ITEM, NULL);

  self->region = fm_region_copy (region);
  self->manual = manual;
  if (region->latex != NULL)
    {
      self->latex = g_strdup (region->latex);
      self->confidence = region->confidence;
      self->state = FM_RESULT_STATE_DONE;
    }
  return self;
}

const FmRegion *fm_results_item_get_region (FmResultsItem *self) { return self->region; }
int fm_results_item_get_page (FmResultsItem *self) { return self->region->page; }
FmRegionKind fm_results_item_get_kind (FmResultsItem *self) { return self->region->kind; }
double fm_results_item_get_font_size (FmResultsItem *self) { return self->region->font_size; }

void
fm_results_item_get_rect (FmResultsItem *self, graphene_rect_t *rect)
{
  const FmRect *b = &self->region->box;
  graphene_rect_init (rect, (float) b->x0, (float) b->y0, (float) (b->x1 - b->x0), (float) (b->y1 - b->y0));
}

/* The region mirrors the item's answer so exports see edits too. */
static void
sync_region (FmResultsItem *self)
{
  g_free (self->region->latex);
  self->region->latex = g_strdup (self->latex);
  self->region->confidence = self->confidence;
}
gboolean fm_results_item_get_manual (FmResultsItem *self) { return self->manual; }
FmResultState fm_results_item_get_state (FmResultsItem *self) { return self->state; }
const char *fm_results_item_get_latex (FmResultsItem *self) { return self->latex; }
double fm_results_item_get_confidence (FmResultsItem *self) { return self->confidence; }
const char *fm_results_item_get_error (FmResultsItem *self) { return self->error; }
GdkTexture *fm_results_item_get_crop (FmResultsItem *self) { return self->crop; }
gboolean fm_results_item_get_edited (FmResultsItem *self) { return self->edited; }

void
fm_results_item_set_state (FmResultsItem *self, FmResultState state)
{
  g_return_if_fail (FM_IS_RESULTS_ITEM (self));
  if (self->state == state)
    return;
  self->state = state;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

void
fm_results_item_set_latex (FmResultsItem *self, const char *latex)
{
  g_return_if_fail (FM_IS_RESULTS_ITEM (self));
  if (g_strcmp0 (self->latex, latex) == 0)
    return;
  /* Only a change after the engine's answer is the user's edit. */
  if (self->state == FM_RESULT_STATE_DONE)
    {
      g_autofree char *before = g_steal_pointer (&self->latex);
      gboolean was_edited = self->edited;

      self->latex = g_strdup (latex);
      self->edited = TRUE;
      sync_region (self);
      g_signal_emit (self, signals[SIGNAL_EDITED], 0, before, was_edited);
    }
  else
    {
      g_free (self->latex);
      self->latex = g_strdup (latex);
      sync_region (self);
    }
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LATEX]);
}

void
fm_results_item_restore_latex (FmResultsItem *self, const char *latex, gboolean edited)
{
  g_return_if_fail (FM_IS_RESULTS_ITEM (self));
  self->edited = edited;
  if (g_strcmp0 (self->latex, latex) == 0)
    return;
  g_free (self->latex);
  self->latex = g_strdup (latex);
  sync_region (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LATEX]);
}

void
fm_results_item_set_result (FmResultsItem *self, const char *latex,
                            double confidence, double confidence_min)
{
  g_return_if_fail (FM_IS_RESULTS_ITEM (self));
  g_object_freeze_notify (G_OBJECT (self));
  g_free (self->latex);
  self->latex = g_strdup (latex);
  self->edited = FALSE;
  self->confidence = confidence;
  self->confidence_min = confidence_min;
  g_clear_pointer (&self->error, g_free);
  sync_region (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LATEX]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CONFIDENCE]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR]);
  fm_results_item_set_state (self, FM_RESULT_STATE_DONE);
  g_object_thaw_notify (G_OBJECT (self));
}

FmProvenance
fm_results_item_get_provenance (FmResultsItem *self)
{
  return self->region->provenance;
}

void
fm_results_item_set_provenance (FmResultsItem *self, FmProvenance provenance)
{
  g_return_if_fail (FM_IS_RESULTS_ITEM (self));
  self->region->provenance = provenance;
}

void
fm_results_item_set_failed (FmResultsItem *self, const char *message)
{
  g_return_if_fail (FM_IS_RESULTS_ITEM (self));
  g_free (self->error);
  self->error = g_strdup (message);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR]);
  fm_results_item_set_state (self, FM_RESULT_STATE_FAILED);
}

gboolean
fm_results_item_is_low_confidence (FmResultsItem *self, double threshold)
{
  return self->state == FM_RESULT_STATE_DONE && self->confidence >= 0 &&
         self->confidence < threshold;
}

void
fm_results_item_set_crop (FmResultsItem *self, GdkTexture *crop)
{
  g_return_if_fail (FM_IS_RESULTS_ITEM (self));
  if (g_set_object (&self->crop, crop))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CROP]);
}

/* The equation number is not a result of its own: it is shown with the display
 * formula it labels (see fm_document_tab's delivery of detected regions). */
const char *
fm_results_item_get_number (FmResultsItem *self)
{
  g_return_val_if_fail (FM_IS_RESULTS_ITEM (self), NULL);
  return self->number;
}

void
fm_results_item_set_number (FmResultsItem *self, const char *number)
{
  g_return_if_fail (FM_IS_RESULTS_ITEM (self));
  if (g_strcmp0 (self->number, number) == 0)
    return;
  g_free (self->number);
  /* The text layer may carry the line's spaces around "(3.1)". */
  self->number = number != NULL ? g_strstrip (g_strdup (number)) : NULL;
  /* Rows listen to notify::state for their status line; no property of its
   * own is needed because the number is set before the item is listed. */
}

gboolean
fm_results_item_is_formula (FmResultsItem *self)
{
  g_return_val_if_fail (FM_IS_RESULTS_ITEM (self), FALSE);
  return self->region->kind != FM_REGION_NUMBER;
}
