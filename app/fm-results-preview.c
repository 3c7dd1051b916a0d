/* fm-results-preview.c - KaTeX in a WebKitWebView, from local files only. */
#include "fm-results-preview.h"

#include <webkit/webkit.h>

struct _FmResultsPreview {
  GtkWidget parent_instance;

  GtkWidget *web_view;
  gboolean loaded;
  char *pending;        /* latex to typeset once the page is loaded */
  int n_rendered;
  char *error;
};

G_DEFINE_FINAL_TYPE (FmResultsPreview, fm_results_preview, GTK_TYPE_WIDGET)

/* throwOnError false: KaTeX shows what it could not parse in red, and the
 * message comes back for the tooltip. */
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
  "  catch (e) { katex.render(tex, out, {displayMode: true, throwOnError: false}); rendered++;"
  "              return String(e.message); }"
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
  if (self->error != NULL && *self->error != '\0')
    gtk_widget_set_tooltip_text (GTK_WIDGET (self), self->error);
  else
    gtk_widget_set_tooltip_text (GTK_WIDGET (self), NULL);
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

  g_clear_pointer (&self->web_view, gtk_widget_unparent);
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
fm_results_preview_class_init (FmResultsPreviewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = fm_results_preview_dispose;
  G_OBJECT_CLASS (klass)->finalize = fm_results_preview_finalize;
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
  gtk_widget_set_parent (self->web_view, GTK_WIDGET (self));
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
