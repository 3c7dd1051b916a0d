/* fm-export.c - JSON, LaTeX and Markdown output. */
#include "fm-export.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

FmExportJob *
fm_export_job_new (const char *source)
{
  FmExportJob *job = g_new0 (FmExportJob, 1);

  job->source = g_strdup (source);
  job->pages = g_array_new (FALSE, FALSE, sizeof (int));
  job->page_notes = g_ptr_array_new_with_free_func (g_free);
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
  else
    return FALSE;
  return TRUE;
}

gboolean
fm_export_latex_is_balanced (const char *latex)
{
  int depth = 0, left = 0, env = 0;

  if (latex == NULL)
    return FALSE;
  for (const char *p = latex; *p; p++)
    {
      if (*p == '\\')
        {
          if (p[1] == '\0')
            return FALSE;
          if (strncmp (p + 1, "left", 4) == 0 && !g_ascii_isalpha (p[5]))
            left++;
          else if (strncmp (p + 1, "right", 5) == 0 && !g_ascii_isalpha (p[6]))
            {
              if (--left < 0)
                return FALSE;
            }
          else if (strncmp (p + 1, "begin{", 6) == 0)
            env++;
          else if (strncmp (p + 1, "end{", 4) == 0)
            {
              if (--env < 0)
                return FALSE;
            }
          p++;  /* skip the escaped character: \{ \} \\ */
          continue;
        }
      if (*p == '{')
        depth++;
      else if (*p == '}' && --depth < 0)
        return FALSE;
      else if (*p == '$' || *p == '%')
        return FALSE;  /* would end math mode or comment out the rest */
    }
  return depth == 0 && left == 0 && env == 0;
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
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "page");
      json_builder_add_int_value (b, g_array_index (job->pages, int, i) + 1);
      json_builder_set_member_name (b, "note");
      if (note)
        json_builder_add_string_value (b, note);
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

static gboolean
tag_is_safe (const char *tag)
{
  for (const char *p = tag; *p; p++)
    if (!(g_ascii_isalnum (*p) || *p == '.' || *p == '-' || *p == '*'))
      return FALSE;
  return *tag != '\0';
}

static char *
to_tex (FmExportJob *job)
{
  GString *out = g_string_new (NULL);
  int last_page = -1;

  g_string_append (out, "% Formulas found by Formulate in ");
  for (const char *p = job->source; *p; p++)
    g_string_append_c (out, (*p == '\n') ? ' ' : *p);
  g_string_append (out, "\n\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n");
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
        for (guint k = i + 1; k < job->regions->len; k++)
          {
            FmRegion *num = job->regions->pdata[k];
            if (num->kind == FM_REGION_NUMBER && num->label_of == (int) i)
              tag = number_tag (num);
          }
      if (r->latex == NULL || !fm_export_latex_is_balanced (r->latex))
        {
          append_comment (out, r->latex ? "unbalanced LaTeX: " : "not recognised, text layer: ",
                          r->latex ? r->latex : r->text);
          continue;
        }
      if (r->kind == FM_REGION_DISPLAY)
        {
          g_string_append_printf (out, "\\begin{equation*}\n  %s", r->latex);
          if (tag && tag_is_safe (tag))
            g_string_append_printf (out, " \\tag{%s}", tag);
          g_string_append (out, "\n\\end{equation*}\n");
        }
      else
        g_string_append_printf (out, "$%s$\\par\n", r->latex);
    }
  g_string_append (out, "\\end{document}\n");
  return g_string_free (out, FALSE);
}

/* Markdown: the text layer in reading order with formulas substituted. */
static gboolean
markdown_page (GString    *out,
               FmExportJob *job,
               FmDocument *doc,
               int         page_index,
               GError    **error)
{
  PopplerPage *page;
  char *text;
  PopplerRectangle *rects = NULL;
  guint n_rects = 0;
  const char *p;
  gboolean *emitted;
  double prev_line_x0 = -1, line_x0 = -1, prev_y1 = -1, line_h = 0;
  gboolean at_line_start = TRUE;
  GString *para = g_string_new (NULL);

  fm_document_lock (doc);
  page = fm_document_get_page_locked (doc, page_index, error);
  if (page == NULL)
    {
      fm_document_unlock (doc);
      g_string_free (para, TRUE);
      return FALSE;
    }
  text = poppler_page_get_text (page);
  if (text && !poppler_page_get_text_layout (page, &rects, &n_rects))
    n_rects = 0;
  g_object_unref (page);
  fm_document_unlock (doc);

  emitted = g_new0 (gboolean, job->regions->len + 1);
  p = text ? text : "";
  for (guint k = 0; *p && k < n_rects; k++, p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      PopplerRectangle *pr = &rects[k];
      double cx = 0.5 * (pr->x1 + pr->x2), cy = 0.5 * (pr->y1 + pr->y2);
      int inside = -1;

      if (c == '\n')
        {
          /* Hyphenated line ends join; other line ends are spaces. */
          if (para->len > 0 && para->str[para->len - 1] == '-')
            g_string_truncate (para, para->len - 1);
          else if (para->len > 0 && para->str[para->len - 1] != ' ')
            g_string_append_c (para, ' ');
          at_line_start = TRUE;
          continue;
        }
      for (guint r = 0; r < job->regions->len; r++)
        {
          FmRegion *reg = job->regions->pdata[r];
          if (reg->page == page_index && cx >= reg->box.x0 && cx <= reg->box.x1 &&
              cy >= reg->box.y0 && cy <= reg->box.y1)
            {
              inside = (int) r;
              break;
            }
        }
      if (at_line_start && !g_unichar_isspace (c))
        {
          double h = fabs (pr->y2 - pr->y1);
          line_x0 = MIN (pr->x1, pr->x2);
          /* New paragraph: an indented first line, or a gap of more than
           * half a line above it. */
          if (inside < 0 && prev_y1 >= 0 &&
              ((line_x0 > prev_line_x0 + 5 && prev_line_x0 >= 0) ||
               MIN (pr->y1, pr->y2) - prev_y1 > 0.6 * MAX (h, line_h)))
            {
              g_strstrip (para->str);
              para->len = strlen (para->str);
              if (para->len > 0)
                g_string_append_printf (out, "%s\n\n", para->str);
              g_string_truncate (para, 0);
            }
          prev_line_x0 = line_x0;
          line_h = h;
          at_line_start = FALSE;
        }
      if (!g_unichar_isspace (c))
        prev_y1 = MAX (pr->y1, pr->y2);
      if (inside >= 0)
        {
          FmRegion *reg = job->regions->pdata[inside];
          if (!emitted[inside])
            {
              const char *body = reg->latex ? reg->latex : reg->text;
              emitted[inside] = TRUE;
              if (reg->kind == FM_REGION_DISPLAY)
                {
                  g_strstrip (para->str);
                  para->len = strlen (para->str);
                  if (para->len > 0)
                    g_string_append_printf (out, "%s\n\n", para->str);
                  g_string_truncate (para, 0);
                  g_string_append_printf (out, "$$%s$$\n\n", body ? body : "");
                }
              else if (reg->kind == FM_REGION_INLINE)
                {
                  if (para->len > 0 && para->str[para->len - 1] != ' ')
                    g_string_append_c (para, ' ');
                  g_string_append_printf (para, "$%s$", body ? body : "");
                }
              /* numbers: dropped; the display carries the formula */
            }
          continue;
        }
      g_string_append_unichar (para, c);
    }
  g_strstrip (para->str);
  para->len = strlen (para->str);
  if (para->len > 0)
    g_string_append_printf (out, "%s\n\n", para->str);
  g_string_free (para, TRUE);
  g_free (emitted);
  g_free (rects);
  g_free (text);
  return TRUE;
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
      {
        GString *out = g_string_new (NULL);
        if (job->title)
          g_string_append_printf (out, "# %s\n\n", job->title);
        for (guint i = 0; i < job->pages->len; i++)
          {
            int page = g_array_index (job->pages, int, i);
            if (i > 0)
              g_string_append (out, "---\n\n");
            if (!markdown_page (out, job, doc, page, error))
              {
                g_string_free (out, TRUE);
                return NULL;
              }
          }
        return g_string_free (out, FALSE);
      }
    default:
      break;
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "unknown export format");
  return NULL;
}
