/* fm-export.c - the job of one run and its JSON and LaTeX writers; Markdown is
 * fm-markdown.c's. */
#include "fm-export.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "fm-latex-check.h"
#include "fm-markdown.h"

FmExportJob *
fm_export_job_new (const char *source)
{
  FmExportJob *job = g_new0 (FmExportJob, 1);

  /* File names need not be UTF-8; every export format must be. */
  job->source = g_utf8_make_valid (source, -1);
  job->pages = g_array_new (FALSE, FALSE, sizeof (int));
  job->page_notes = g_ptr_array_new_with_free_func (g_free);
  job->page_analysis = g_ptr_array_new ();
  job->regions = g_ptr_array_new_with_free_func ((GDestroyNotify) fm_region_free);
  return job;
}

void
fm_export_job_free (FmExportJob *job)
{
  if (job == NULL)
    return;
  g_free (job->source);
  g_free (job->title);
  g_array_unref (job->pages);
  g_ptr_array_unref (job->page_notes);
  g_ptr_array_unref (job->page_analysis);
  g_ptr_array_unref (job->regions);
  g_free (job->model);
  g_free (job->device);
  g_free (job);
}

gboolean
fm_export_format_from_string (const char *name, FmExportFormat *out)
{
  if (g_strcmp0 (name, "json") == 0)
    *out = FM_EXPORT_JSON;
  else if (g_strcmp0 (name, "tex") == 0 || g_strcmp0 (name, "latex") == 0)
    *out = FM_EXPORT_TEX;
  else if (g_strcmp0 (name, "md") == 0 || g_strcmp0 (name, "markdown") == 0)
    *out = FM_EXPORT_MARKDOWN;
  else if (g_strcmp0 (name, "docx") == 0)
    *out = FM_EXPORT_DOCX;
  else if (g_strcmp0 (name, "html") == 0)
    *out = FM_EXPORT_HTML;
  else
    return FALSE;
  return TRUE;
}

static double
round2 (double v)
{
  return round (v * 100.0) / 100.0;
}

static char *
to_json (FmExportJob *job)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "format");
  json_builder_add_string_value (b, "formulate-pdf-1");
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, job->source);
  json_builder_set_member_name (b, "title");
  if (job->title)
    json_builder_add_string_value (b, job->title);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "n_pages");
  json_builder_add_int_value (b, job->n_pages);
  json_builder_set_member_name (b, "recognized");
  json_builder_add_boolean_value (b, job->recognized);
  json_builder_set_member_name (b, "text_reader");
  json_builder_add_boolean_value (b, job->text_reader);
  if (job->model)
    {
      json_builder_set_member_name (b, "model");
      json_builder_add_string_value (b, job->model);
    }
  if (job->device)
    {
      json_builder_set_member_name (b, "device");
      json_builder_add_string_value (b, job->device);
    }
  json_builder_set_member_name (b, "units");
  json_builder_add_string_value (b, "pt, origin top-left of the displayed page");

  json_builder_set_member_name (b, "pages");
  json_builder_begin_array (b);
  for (guint i = 0; i < job->pages->len; i++)
    {
      const char *note = i < job->page_notes->len ? job->page_notes->pdata[i] : NULL;
      const char *analysis = i < job->page_analysis->len ? job->page_analysis->pdata[i] : NULL;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "page");
      json_builder_add_int_value (b, g_array_index (job->pages, int, i) + 1);
      json_builder_set_member_name (b, "note");
      if (note)
        json_builder_add_string_value (b, note);
      else
        json_builder_add_null_value (b);
      /* Which pages were read from pixels (a scan): their boxes and LaTeX
       * deserve another look. */
      json_builder_set_member_name (b, "analysis");
      if (analysis)
        json_builder_add_string_value (b, analysis);
      else
        json_builder_add_null_value (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "regions");
  json_builder_begin_array (b);
  for (guint i = 0; i < job->regions->len; i++)
    {
      FmRegion *r = job->regions->pdata[i];
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "page");
      json_builder_add_int_value (b, r->page + 1);
      json_builder_set_member_name (b, "kind");
      json_builder_add_string_value (b, fm_region_kind_to_string (r->kind));
      json_builder_set_member_name (b, "box");
      json_builder_begin_array (b);
      json_builder_add_double_value (b, round2 (r->box.x0));
      json_builder_add_double_value (b, round2 (r->box.y0));
      json_builder_add_double_value (b, round2 (r->box.x1));
      json_builder_add_double_value (b, round2 (r->box.y1));
      json_builder_end_array (b);
      json_builder_set_member_name (b, "font_size");
      json_builder_add_double_value (b, round2 (r->font_size));
      json_builder_set_member_name (b, "text");
      json_builder_add_string_value (b, r->text ? r->text : "");
      json_builder_set_member_name (b, "latex");
      if (r->latex)
        json_builder_add_string_value (b, r->latex);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "confidence");
      if (r->latex && r->confidence >= 0)
        json_builder_add_double_value (b, round (r->confidence * 1000.0) / 1000.0);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "provenance");
      if (r->latex && fm_provenance_to_string (r->provenance))
        json_builder_add_string_value (b, fm_provenance_to_string (r->provenance));
      else
        json_builder_add_null_value (b);
      if (r->kind == FM_REGION_NUMBER)
        {
          json_builder_set_member_name (b, "label_of");
          if (r->label_of >= 0)
            json_builder_add_int_value (b, r->label_of);
          else
            json_builder_add_null_value (b);
        }
      json_builder_set_member_name (b, "recognize_ms");
      json_builder_add_double_value (b, round2 (r->recognize_ms));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "timings");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "detect_ms");
  json_builder_add_double_value (b, round2 (job->detect_ms));
  json_builder_set_member_name (b, "recognize_ms");
  json_builder_add_double_value (b, round2 (job->recognize_ms));
  json_builder_set_member_name (b, "total_ms");
  json_builder_add_double_value (b, round2 (job->total_ms));
  json_builder_end_object (b);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 1);
  {
    char *s = json_generator_to_data (gen, NULL);
    char *out = g_strconcat (s, "\n", NULL);
    g_free (s);
    return out;
  }
}

/* A text-layer string as a TeX comment: one line, no control characters. */
static void
append_comment (GString *out, const char *prefix, const char *text)
{
  g_string_append_printf (out, "%% %s", prefix);
  for (const char *p = text ? text : ""; *p; p++)
    g_string_append_c (out, (*p == '\n' || *p == '\r') ? ' ' : *p);
  g_string_append_c (out, '\n');
}

static char *
number_tag (const FmRegion *number)
{
  /* "(3.1)" -> "3.1" for \tag. */
  g_autofree char *t = g_strstrip (g_strdup (number->text ? number->text : ""));
  gsize n = strlen (t);
  if (n >= 2 && t[0] == '(' && t[n - 1] == ')')
    {
      t[n - 1] = '\0';
      return g_strdup (t + 1);
    }
  return g_steal_pointer (&t);
}

/* Every equation number of display i, "3.1" or "3.1, 3.2" for a display
 * that carries several (an amsldoc align): one \tag with all of them
 * compiles in equation* and keeps every number; NULL when it has none or
 * one would not be safe inside \tag. */
static char *
display_tags (FmExportJob *job, guint i)
{
  GString *tags = NULL;
  gboolean safe = TRUE;

  for (guint k = i + 1; k < job->regions->len; k++)
    {
      FmRegion *num = job->regions->pdata[k];
      g_autofree char *tag = NULL;
      if (num->kind != FM_REGION_NUMBER || num->label_of != (int) i)
        continue;
      tag = number_tag (num);
      safe = safe && fm_latex_check_tag (tag);
      if (tags == NULL)
        tags = g_string_new (tag);
      else
        g_string_append_printf (tags, ", %s", tag);
    }
  if (tags == NULL)
    return NULL;
  if (!safe)
    {
      g_string_free (tags, TRUE);
      return NULL;
    }
  return g_string_free (tags, FALSE);
}

/* Only for the comment's wording: do the braces balance? */
static gboolean
braces_balance (const char *latex)
{
  int depth = 0;
  for (const char *p = latex; *p; p++)
    {
      if (*p == '\\' && p[1] != '\0')
        p++;
      else if (*p == '{')
        depth++;
      else if (*p == '}' && --depth < 0)
        return FALSE;
    }
  return depth == 0;
}

static char *
to_tex (FmExportJob *job)
{
  GString *out = g_string_new (NULL);
  int last_page = -1;

  g_string_append (out, "% Formulas found by Formulate in ");
  for (const char *p = job->source; *p; p++)
    g_string_append_c (out, (*p == '\n') ? ' ' : *p);
  /* Two commands of the model's vocabulary need packages a plain TeX Live
   * may lack (mathtools, mathrsfs): close stand-ins instead. */
  g_string_append (out, "\n\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n"
                        "\\providecommand{\\coloneqq}{\\mathrel{:}=}\n"
                        "\\providecommand{\\mathscr}{\\mathcal}\n"
                        "\\begin{document}\n");
  for (guint i = 0; i < job->regions->len; i++)
    {
      FmRegion *r = job->regions->pdata[i];
      g_autofree char *tag = NULL;

      if (r->page != last_page)
        {
          g_string_append_printf (out, "\n%% Page %d\n", r->page + 1);
          last_page = r->page;
        }
      if (r->kind == FM_REGION_NUMBER)
        continue;  /* written as the \tag of its display */
      if (r->kind == FM_REGION_DISPLAY)
        tag = display_tags (job, i);
      if (r->latex == NULL || !fm_latex_check_compiles (r->latex))
        {
          append_comment (out, r->latex == NULL ? "not recognised, text layer: "
                               : braces_balance (r->latex) ? "LaTeX that would not compile: "
                               : "unbalanced LaTeX: ",
                          r->latex ? r->latex : r->text);
          continue;
        }
      if (r->kind == FM_REGION_DISPLAY)
        {
          g_string_append_printf (out, "\\begin{equation*}\n  %s", r->latex);
          if (tag)
            g_string_append_printf (out, " \\tag{%s}", tag);
          g_string_append (out, "\n\\end{equation*}\n");
        }
      else
        g_string_append_printf (out, "$%s$\\par\n", r->latex);
    }
  g_string_append (out, "\\end{document}\n");
  return g_string_free (out, FALSE);
}

char *
fm_export_to_string (FmExportJob    *job,
                     FmDocument     *doc,
                     FmExportFormat  format,
                     GError        **error)
{
  switch (format)
    {
    case FM_EXPORT_JSON:
      return to_json (job);
    case FM_EXPORT_TEX:
      return to_tex (job);
    case FM_EXPORT_MARKDOWN:
      return fm_markdown_write (doc, job->regions, job->pages, job->page_notes, job->title);
    default:
      break;
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "unknown export format");
  return NULL;
}
