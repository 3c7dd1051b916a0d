/* fm-export.c - the job of one run and its JSON and LaTeX writers; Markdown is
 * fm-markdown.c's. */
#include "fm-export.h"

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

/* The JSON writer streams: each value is appended to one GString as it is
 * reached, so the export costs the text and nothing more. A json-glib node
 * tree plus its generator's copies cost about three times the text and made
 * the soak's peak grow faster than the page count (bench/RESULTS.md, soak).
 * The layout is json-glib's pretty printer with indent 1, byte for byte
 * (tests/pdf/test-export.c compares the two), so readers see no change. */
typedef struct {
  GString *s;
  int level;
  gboolean first;   /* nothing written yet in the open object/array */
} JsonOut;

/* As json-glib escapes: '"' and '\\', control characters as \b \f \n \r \t
 * or \u00XX, and every other byte as it is, so UTF-8 passes through and
 * invalid UTF-8 is left as json-glib left it (the file name, the one string
 * not from Poppler, is made valid in fm_export_job_new).
 * json-glib 1.6 leaves 0x1f raw, which its own parser then refuses; that one
 * byte is escaped here like the other control characters. */
static void
json_escape (GString *s, const char *str)
{
  static const char hex[] = "0123456789abcdef";

  g_string_append_c (s, '"');
  for (const unsigned char *p = (const unsigned char *) str; *p; p++)
    {
      switch (*p)
        {
        case '"':  g_string_append (s, "\\\""); break;
        case '\\': g_string_append (s, "\\\\"); break;
        case '\b': g_string_append (s, "\\b"); break;
        case '\f': g_string_append (s, "\\f"); break;
        case '\n': g_string_append (s, "\\n"); break;
        case '\r': g_string_append (s, "\\r"); break;
        case '\t': g_string_append (s, "\\t"); break;
        default:
          if (*p < 0x20 || *p == 0x7f)
            {
              g_string_append (s, "\\u00");
              g_string_append_c (s, hex[*p >> 4]);
              g_string_append_c (s, hex[*p & 0xf]);
            }
          else
            g_string_append_c (s, (char) *p);
        }
    }
  g_string_append_c (s, '"');
}

/* Starts one member (name) or array element (name NULL). */
static void
json_item (JsonOut *o, const char *name)
{
  if (!o->first)
    g_string_append_c (o->s, ',');
  g_string_append_c (o->s, '\n');
  for (int i = 0; i < o->level; i++)
    g_string_append_c (o->s, ' ');
  if (name)
    {
      json_escape (o->s, name);
      g_string_append (o->s, " : ");
    }
  o->first = FALSE;
}

static void
json_open (JsonOut *o, const char *name, char bracket)
{
  if (o->level > 0 || name)
    json_item (o, name);
  g_string_append_c (o->s, bracket);
  o->level++;
  o->first = TRUE;
}

static void
json_close (JsonOut *o, char bracket)
{
  o->level--;
  if (!o->first)
    {
      g_string_append_c (o->s, '\n');
      for (int i = 0; i < o->level; i++)
        g_string_append_c (o->s, ' ');
    }
  g_string_append_c (o->s, bracket);
  o->first = FALSE;
}

static void
json_string (JsonOut *o, const char *name, const char *value)
{
  json_item (o, name);
  if (value)
    json_escape (o->s, value);
  else
    g_string_append (o->s, "null");
}

static void
json_null (JsonOut *o, const char *name)
{
  json_item (o, name);
  g_string_append (o->s, "null");
}

static void
json_int (JsonOut *o, const char *name, gint64 value)
{
  json_item (o, name);
  g_string_append_printf (o->s, "%" G_GINT64_FORMAT, value);
}

static void
json_bool (JsonOut *o, const char *name, gboolean value)
{
  json_item (o, name);
  g_string_append (o->s, value ? "true" : "false");
}

/* json-glib's form: g_ascii_dtostr ("%.17g"), with ".0" added when that has
 * no '.', so a double stays one. json-glib 1.6 adds it to "1e+21" too, which
 * no parser reads; like json-glib 1.8, not after an exponent (only values of
 * 1e17 and more, which no box, size or time here reaches). */
static void
json_double (JsonOut *o, const char *name, double value)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  json_item (o, name);
  g_ascii_dtostr (buf, sizeof buf, value);
  g_string_append (o->s, buf);
  if (strchr (buf, '.') == NULL
      && strchr (buf, 'e') == NULL && strchr (buf, 'E') == NULL)
    g_string_append (o->s, ".0");
}

static char *
to_json (FmExportJob *job)
{
  /* A little more than the 330-380 bytes a region of bench/export-json/
   * compare's outputs, so the text is seldom copied while it grows. */
  JsonOut o = { g_string_sized_new (1024 + 400 * (gsize) job->regions->len), 0, TRUE };

  json_open (&o, NULL, '{');
  json_string (&o, "format", "formulate-pdf-1");
  json_string (&o, "source", job->source);
  json_string (&o, "title", job->title);
  json_int (&o, "n_pages", job->n_pages);
  json_bool (&o, "recognized", job->recognized);
  json_bool (&o, "text_reader", job->text_reader);
  if (job->model)
    json_string (&o, "model", job->model);
  if (job->device)
    json_string (&o, "device", job->device);
  json_string (&o, "units", "pt, origin top-left of the displayed page");

  json_open (&o, "pages", '[');
  for (guint i = 0; i < job->pages->len; i++)
    {
      const char *note = i < job->page_notes->len ? job->page_notes->pdata[i] : NULL;
      const char *analysis = i < job->page_analysis->len ? job->page_analysis->pdata[i] : NULL;
      json_open (&o, NULL, '{');
      json_int (&o, "page", g_array_index (job->pages, int, i) + 1);
      json_string (&o, "note", note);
      /* Which pages were read from pixels (a scan): their boxes and LaTeX
       * deserve another look. */
      json_string (&o, "analysis", analysis);
      json_close (&o, '}');
    }
  json_close (&o, ']');

  json_open (&o, "regions", '[');
  for (guint i = 0; i < job->regions->len; i++)
    {
      FmRegion *r = job->regions->pdata[i];
      json_open (&o, NULL, '{');
      json_int (&o, "page", r->page + 1);
      json_string (&o, "kind", fm_region_kind_to_string (r->kind));
      json_open (&o, "box", '[');
      json_double (&o, NULL, round2 (r->box.x0));
      json_double (&o, NULL, round2 (r->box.y0));
      json_double (&o, NULL, round2 (r->box.x1));
      json_double (&o, NULL, round2 (r->box.y1));
      json_close (&o, ']');
      json_double (&o, "font_size", round2 (r->font_size));
      json_string (&o, "text", r->text ? r->text : "");
      json_string (&o, "latex", r->latex);
      if (r->latex && r->confidence >= 0)
        json_double (&o, "confidence", round (r->confidence * 1000.0) / 1000.0);
      else
        json_null (&o, "confidence");
      json_string (&o, "provenance", r->latex ? fm_provenance_to_string (r->provenance) : NULL);
      if (r->kind == FM_REGION_NUMBER)
        {
          if (r->label_of >= 0)
            json_int (&o, "label_of", r->label_of);
          else
            json_null (&o, "label_of");
        }
      json_double (&o, "recognize_ms", round2 (r->recognize_ms));
      json_close (&o, '}');
    }
  json_close (&o, ']');

  json_open (&o, "timings", '{');
  json_double (&o, "detect_ms", round2 (job->detect_ms));
  json_double (&o, "recognize_ms", round2 (job->recognize_ms));
  json_double (&o, "total_ms", round2 (job->total_ms));
  json_close (&o, '}');
  json_close (&o, '}');
  g_string_append_c (o.s, '\n');
  return g_string_free (o.s, FALSE);
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
