/* fm-results-preview.c - KaTeX in a WebKitWebView, from local files only. */
#include "fm-results-preview.h"

#include <glib/gi18n.h>
#include <webkit/webkit.h>

struct _FmResultsPreview {
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkWidget *web_view;
  GtkWidget *message;    /* "KaTeX cannot display this: …", instead of the web view */
  gboolean loaded;
  char *pending;        /* latex to typeset once the page is loaded */
  int n_rendered;
  char *error;
};

G_DEFINE_FINAL_TYPE (FmResultsPreview, fm_results_preview, GTK_TYPE_WIDGET)

/* Read through GObject by whoever loaded this module (the results panel,
 * the tests): nothing outside it links against it. */
enum { PROP_0, PROP_LATEX, PROP_N_RENDERED, PROP_ERROR, PROP_MESSAGE, N_PROPS };
static GParamSpec *props[N_PROPS];

/* What KaTeX cannot parse is not typeset at all (its throwOnError: false
 * rendering is the raw source in red, clipped in a narrow panel): the page
 * is cleared and KaTeX's message comes back, shown as a line of text. */
static const char page[] =
  "<!DOCTYPE html><html><head><meta charset='utf-8'>"
  "<link rel='stylesheet' href='katex.min.css'>"
  "<script src='katex.min.js'></script>"
  "<style>html,body{margin:0;padding:6px;background:transparent;}"
  "#out{font-size:1.25em;overflow-x:auto;}</style></head>"
  "<body><div id='out'></div><script>"
  "var rendered = 0;"
  "function render(tex) {"
  "  var out = document.getElementById('out');"
  "  if (!tex) { out.textContent = ''; return ''; }"
  "  try { katex.render(tex, out, {displayMode: true, throwOnError: true}); rendered++; return ''; }"
  "  catch (e) { out.textContent = ''; rendered++; return String(e.message); }"
  "}"
  "</script></body></html>";

static void
render_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  FmResultsPreview *self = user_data;   /* reffed by the call */
  g_autoptr(GError) error = NULL;
  g_autoptr(JSCValue) value = webkit_web_view_call_async_javascript_function_finish (WEBKIT_WEB_VIEW (source),
                                                                                    result, &error);

  g_free (self->error);
  self->error = NULL;
  if (value != NULL && jsc_value_is_string (value))
    self->error = jsc_value_to_string (value);
  else if (error != NULL)
    self->error = g_strdup (error->message);
  if (self->message == NULL)          /* disposed while KaTeX ran */
    ;
  else if (self->error != NULL && *self->error != '\0')
    {
      /* Translators: %s is KaTeX's own message (English), e.g. "KaTeX parse error: Expected '}', got 'EOF'". */
      g_autofree char *text = g_strdup_printf (_("KaTeX cannot display this: %s"), self->error);
      gtk_label_set_text (GTK_LABEL (self->message), text);
      gtk_widget_set_tooltip_text (self->message, text);
      gtk_widget_set_visible (self->message, TRUE);
      gtk_widget_set_visible (self->web_view, FALSE);
    }
  else
    {
      gtk_widget_set_visible (self->message, FALSE);
      gtk_widget_set_visible (self->web_view, TRUE);
    }
  if (value != NULL)
    self->n_rendered++;
  g_object_unref (self);
}

static void
typeset (FmResultsPreview *self, const char *latex)
{
  GVariantDict args;

  g_variant_dict_init (&args, NULL);
  g_variant_dict_insert (&args, "tex", "s", latex ? latex : "");
  webkit_web_view_call_async_javascript_function (WEBKIT_WEB_VIEW (self->web_view), "return render(tex);", -1,
                                                  g_variant_dict_end (&args), NULL, NULL, NULL,
                                                  render_done, g_object_ref (self));
}

static void
load_changed (WebKitWebView *web_view, WebKitLoadEvent event, FmResultsPreview *self)
{
  if (event != WEBKIT_LOAD_FINISHED)
    return;
  self->loaded = TRUE;
  if (self->pending != NULL)
    {
      typeset (self, self->pending);
      g_clear_pointer (&self->pending, g_free);
    }
}

/* Only our page and its KaTeX files: every other navigation is refused. */
static gboolean
decide_policy (WebKitWebView *web_view, WebKitPolicyDecision *decision,
               WebKitPolicyDecisionType type, FmResultsPreview *self)
{
  if (type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION && self->loaded)
    {
      webkit_policy_decision_ignore (decision);
      return TRUE;
    }
  return FALSE;
}

static void
fm_results_preview_dispose (GObject *object)
{
  FmResultsPreview *self = FM_RESULTS_PREVIEW (object);

  self->web_view = NULL;
  self->message = NULL;
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (fm_results_preview_parent_class)->dispose (object);
}

static void
fm_results_preview_finalize (GObject *object)
{
  FmResultsPreview *self = FM_RESULTS_PREVIEW (object);

  g_free (self->pending);
  g_free (self->error);
  G_OBJECT_CLASS (fm_results_preview_parent_class)->finalize (object);
}

static void
fm_results_preview_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
  if (id == PROP_LATEX)
    fm_results_preview_set_latex (FM_RESULTS_PREVIEW (object), g_value_get_string (value));
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
}

static void
fm_results_preview_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  FmResultsPreview *self = FM_RESULTS_PREVIEW (object);

  switch (id)
    {
    case PROP_N_RENDERED: g_value_set_int (value, fm_results_preview_get_n_rendered (self)); break;
    case PROP_ERROR:      g_value_set_string (value, fm_results_preview_get_error (self)); break;
    case PROP_MESSAGE:    g_value_set_string (value, fm_results_preview_get_message (self)); break;
    default:              G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
fm_results_preview_class_init (FmResultsPreviewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = fm_results_preview_dispose;
  G_OBJECT_CLASS (klass)->finalize = fm_results_preview_finalize;
  G_OBJECT_CLASS (klass)->set_property = fm_results_preview_set_property;
  G_OBJECT_CLASS (klass)->get_property = fm_results_preview_get_property;
  props[PROP_LATEX] = g_param_spec_string ("latex", NULL, NULL, NULL,
                                           G_PARAM_WRITABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_N_RENDERED] = g_param_spec_int ("n-rendered", NULL, NULL, -1, G_MAXINT, -1,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_ERROR] = g_param_spec_string ("error", NULL, NULL, NULL,
                                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_MESSAGE] = g_param_spec_string ("message", NULL, NULL, NULL,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (G_OBJECT_CLASS (klass), N_PROPS, props);
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "fm-results-preview");
}

static void
fm_results_preview_init (FmResultsPreview *self)
{
  WebKitSettings *settings;
  GdkRGBA transparent = { 0, 0, 0, 0 };

  self->n_rendered = -1;
  self->web_view = webkit_web_view_new ();
  settings = webkit_web_view_get_settings (WEBKIT_WEB_VIEW (self->web_view));
  webkit_settings_set_enable_developer_extras (settings, FALSE);
  webkit_settings_set_enable_page_cache (settings, FALSE);
  webkit_settings_set_allow_file_access_from_file_urls (settings, TRUE);
  webkit_settings_set_enable_back_forward_navigation_gestures (settings, FALSE);
  webkit_web_view_set_background_color (WEBKIT_WEB_VIEW (self->web_view), &transparent);
  gtk_widget_set_size_request (self->web_view, -1, 90);
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_parent (self->box, GTK_WIDGET (self));
  gtk_box_append (GTK_BOX (self->box), self->web_view);
  /* Where the formula would be: the message, wrapped to at most three lines
   * in the narrow panel so KaTeX's reason is read (all of it in the tooltip). */
  self->message = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->message), 0);
  gtk_label_set_wrap (GTK_LABEL (self->message), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (self->message), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_lines (GTK_LABEL (self->message), 3);
  gtk_label_set_ellipsize (GTK_LABEL (self->message), PANGO_ELLIPSIZE_END);
  gtk_label_set_width_chars (GTK_LABEL (self->message), 10);
  gtk_widget_set_margin_start (self->message, 6);
  gtk_widget_set_margin_end (self->message, 6);
  gtk_widget_set_margin_top (self->message, 12);
  gtk_widget_set_margin_bottom (self->message, 12);
  gtk_widget_add_css_class (self->message, "error");
  gtk_widget_set_visible (self->message, FALSE);
  gtk_box_append (GTK_BOX (self->box), self->message);
  g_signal_connect (self->web_view, "load-changed", G_CALLBACK (load_changed), self);
  g_signal_connect (self->web_view, "decide-policy", G_CALLBACK (decide_policy), self);
  webkit_web_view_load_html (WEBKIT_WEB_VIEW (self->web_view), page, "file://" FM_KATEX_DIR "/");
  self->n_rendered = 0;
}

GtkWidget *
fm_results_preview_new (void)
{
  return g_object_new (FM_TYPE_RESULTS_PREVIEW, NULL);
}

void
fm_results_preview_set_latex (FmResultsPreview *self, const char *latex)
{
  g_return_if_fail (FM_IS_RESULTS_PREVIEW (self));

  if (!self->loaded)
    {
      g_free (self->pending);
      self->pending = g_strdup (latex ? latex : "");
      return;
    }
  typeset (self, latex);
}

int
fm_results_preview_get_n_rendered (FmResultsPreview *self)
{
  return self->loaded ? self->n_rendered : -1;
}

const char *
fm_results_preview_get_error (FmResultsPreview *self)
{
  return self->error;
}

const char *
fm_results_preview_get_message (FmResultsPreview *self)
{
  g_return_val_if_fail (FM_IS_RESULTS_PREVIEW (self), NULL);
  return gtk_widget_get_visible (self->message) ? gtk_label_get_text (GTK_LABEL (self->message)) : NULL;
}
