/* fm-pandoc.c - docx and HTML exports: our Markdown through pandoc. */
#include "fm-pandoc.h"

#include <gio/gio.h>
#include <signal.h>
#include <string.h>

G_DEFINE_QUARK (fm-pandoc-error-quark, fm_pandoc_error)

gboolean
fm_export_format_needs_pandoc (FmExportFormat format)
{
  return format == FM_EXPORT_DOCX || format == FM_EXPORT_HTML;
}

char *
fm_pandoc_find (void)
{
  return g_find_program_in_path ("pandoc");
}

/* The HTML page's <title>: the PDF's title, else its file name. pagetitle
 * (not title) so that pandoc adds no second heading above our `# title`. */
static char *
page_title (FmExportJob *job)
{
  g_autofree char *t = g_strstrip (g_strdup (job->title ? job->title : ""));

  return g_strconcat ("pagetitle=", *t ? t : job->source, NULL);
}

/* pandoc may exit before it has read all our Markdown (a bad option, a
 * crash, a fake on PATH); writing the rest into its closed stdin would raise
 * SIGPIPE and kill formulate-cli or the whole window without a word. While
 * any export talks to pandoc, SIGPIPE is ignored so the write fails with
 * EPIPE and pandoc's exit status is reported; a count keeps concurrent
 * exports (the window's worker threads) from restoring it under each other. */
static GMutex sigpipe_lock;
static int sigpipe_users;
static struct sigaction sigpipe_saved;

static void
sigpipe_ignore_begin (void)
{
  g_mutex_lock (&sigpipe_lock);
  if (sigpipe_users++ == 0)
    {
      struct sigaction ignore = { 0 };
      ignore.sa_handler = SIG_IGN;
      sigemptyset (&ignore.sa_mask);
      sigaction (SIGPIPE, &ignore, &sigpipe_saved);
    }
  g_mutex_unlock (&sigpipe_lock);
}

static void
sigpipe_ignore_end (void)
{
  g_mutex_lock (&sigpipe_lock);
  if (--sigpipe_users == 0)
    sigaction (SIGPIPE, &sigpipe_saved, NULL);
  g_mutex_unlock (&sigpipe_lock);
}

static GBytes *
run_pandoc (const char *pandoc, FmExportJob *job, const char *markdown, FmExportFormat format,
            char **warnings, GError **error)
{
  g_autofree char *title = page_title (job);
  const char *argv[10];
  int argc = 0;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GBytes) input = g_bytes_new_static (markdown, strlen (markdown));
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autofree char *err_text = NULL;
  GError *local = NULL;
  gboolean ok;

  argv[argc++] = pandoc;
  /* tex_math_dollars is on in pandoc's markdown already; named so that a
   * pandoc whose default changes still reads our $…$ and $$…$$. */
  argv[argc++] = "--from=markdown+tex_math_dollars";
  if (format == FM_EXPORT_DOCX)
    {
      /* docx turns TeX math into native, editable Office Math (<m:oMath>). */
      argv[argc++] = "--to=docx";
    }
  else
    {
      argv[argc++] = "--to=html5";
      argv[argc++] = "--mathml";
      argv[argc++] = "--standalone";
      argv[argc++] = "--metadata";
      argv[argc++] = title;
    }
  /* docx is a zip: pandoc writes it to stdout only when told "-o -". */
  argv[argc++] = "--output=-";
  argv[argc++] = NULL;

  proc = g_subprocess_newv (argv,
                            G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                              G_SUBPROCESS_FLAGS_STDERR_PIPE,
                            &local);
  if (proc == NULL)
    {
      g_set_error (error, FM_PANDOC_ERROR, FM_PANDOC_ERROR_FAILED, "cannot run pandoc: %s",
                   local->message);
      g_error_free (local);
      return NULL;
    }
  sigpipe_ignore_begin ();
  ok = g_subprocess_communicate (proc, input, NULL, &out, &err, &local);
  sigpipe_ignore_end ();
  /* A write that met pandoc's closed stdin: its exit status says more. */
  if (!ok && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
    {
      g_clear_error (&local);
      g_subprocess_wait (proc, NULL, NULL);
      if (g_subprocess_get_successful (proc))
        {
          g_set_error (error, FM_PANDOC_ERROR, FM_PANDOC_ERROR_FAILED,
                       "pandoc stopped reading its input and exited without an error");
          return NULL;
        }
      ok = TRUE;
    }
  if (!ok)
    {
      g_set_error (error, FM_PANDOC_ERROR, FM_PANDOC_ERROR_FAILED, "pandoc: %s", local->message);
      g_error_free (local);
      return NULL;
    }
  /* An empty GBytes may have a NULL data pointer. */
  err_text = err && g_bytes_get_size (err) > 0
               ? g_utf8_make_valid (g_bytes_get_data (err, NULL), (gssize) g_bytes_get_size (err))
               : g_strdup ("");
  g_strstrip (err_text);
  if (!g_subprocess_get_successful (proc))
    {
      /* The first line says why; the rest is usually pandoc's context. */
      char *nl = strchr (err_text, '\n');
      if (nl)
        *nl = '\0';
      if (g_subprocess_get_if_exited (proc))
        g_set_error (error, FM_PANDOC_ERROR, FM_PANDOC_ERROR_FAILED, "pandoc failed (exit %d)%s%s",
                     g_subprocess_get_exit_status (proc), *err_text ? ": " : "", err_text);
      else
        g_set_error (error, FM_PANDOC_ERROR, FM_PANDOC_ERROR_FAILED, "pandoc was killed (signal %d)",
                     g_subprocess_get_term_sig (proc));
      return NULL;
    }
  if (out == NULL || g_bytes_get_size (out) == 0)
    {
      g_set_error_literal (error, FM_PANDOC_ERROR, FM_PANDOC_ERROR_FAILED, "pandoc wrote nothing");
      return NULL;
    }
  if (warnings)
    *warnings = *err_text ? g_steal_pointer (&err_text) : NULL;
  return g_steal_pointer (&out);
}

GBytes *
fm_export_to_bytes (FmExportJob    *job,
                    FmDocument     *doc,
                    FmExportFormat  format,
                    char          **warnings,
                    GError        **error)
{
  g_autofree char *pandoc = NULL;
  g_autofree char *markdown = NULL;
  char *text;

  if (warnings)
    *warnings = NULL;
  if (!fm_export_format_needs_pandoc (format))
    {
      gsize len;
      text = fm_export_to_string (job, doc, format, error);
      if (text == NULL)
        return NULL;
      len = strlen (text);
      return g_bytes_new_take (text, len);
    }
  /* Looked up before the (slow) Markdown layout, so a missing tool fails fast. */
  pandoc = fm_pandoc_find ();
  if (pandoc == NULL)
    {
      g_set_error_literal (error, FM_PANDOC_ERROR, FM_PANDOC_ERROR_NOT_FOUND,
                           "needs pandoc, which was not found on PATH (Debian/Ubuntu: apt install pandoc)");
      return NULL;
    }
  markdown = fm_export_to_string (job, doc, FM_EXPORT_MARKDOWN, error);
  if (markdown == NULL)
    return NULL;
  {
    /* pandoc 2.17's TeX reader (texmath) drops \tag{3.1}, and with it the
     * number the text refers to: written as a spaced "(3.1)" it stays. */
    g_autoptr(GRegex) tag = g_regex_new ("\\s*\\\\tag\\{([^{}$]*)\\}\\$\\$", 0, 0, NULL);
    g_autofree char *numbered = g_regex_replace (tag, markdown, -1, 0, "\\\\qquad(\\1)$$", 0, NULL);
    if (numbered != NULL)
      {
        g_free (markdown);
        markdown = g_steal_pointer (&numbered);
      }
  }
  return run_pandoc (pandoc, job, markdown, format, warnings, error);
}
