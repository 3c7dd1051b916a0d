/* fm-cli-pdf.c - formulate-cli pdf FILE.pdf: find (and recognise) the formulas.
 *
 * Exit codes are the shared ones of fm-cli.h; a page-level problem (no text
 * layer, a page that cannot be rendered) is a warning on stderr and a note in
 * the output, and only fails the run when no selected page could be read.
 */
#include "fm-cli.h"
#include "fm-paths.h"
#include "fm-detect.h"
#include "fm-document.h"
#include "fm-export.h"
#include "fm-output-file.h"
#include "fm-pandoc.h"
#include "fm-pages.h"
#include "fm-recognize.h"
#include "fm-page-queue.h"
#include "fm-scan.h"

#include "fe.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t fm_interrupted;

/* Whether standard error was a terminal before the Poppler filter below
 * replaced it with a pipe (the progress bar is drawn only on a terminal). */
static gboolean stderr_is_terminal;

/* Poppler's glib binding writes some complaints straight to stderr with
 * fprintf ("some font thing failed", once per glyph run of a broken font),
 * bypassing any error callback. While `pdf` runs, fd 2 is a pipe read by
 * this thread: our own lines (and the progress bar) pass through, every
 * other line gets our prefix the first time and is counted after that; the
 * counts are one line each at the end. */
typedef struct {
  int read_fd;
  int real_fd;  /* the original stderr */
  GThread *thread;
  GHashTable *repeats;  /* line -> extra occurrences */
} StderrFilter;

static void
stderr_filter_line (StderrFilter *f, const char *line, gsize len)
{
  g_autofree char *text = g_strndup (line, len);
  gpointer count;

  if (g_str_has_prefix (text, "formulate-cli") || text[0] == '\r')
    {
      (void) !write (f->real_fd, line, len);
      return;
    }
  g_strchomp (text);
  if (g_hash_table_lookup_extended (f->repeats, text, NULL, &count))
    {
      g_hash_table_insert (f->repeats, g_strdup (text), GINT_TO_POINTER (GPOINTER_TO_INT (count) + 1));
      return;
    }
  g_hash_table_insert (f->repeats, g_strdup (text), GINT_TO_POINTER (0));
  {
    g_autofree char *out = g_strdup_printf ("formulate-cli: poppler: %s\n", text);
    (void) !write (f->real_fd, out, strlen (out));
  }
}

static gpointer
stderr_filter_thread (gpointer data)
{
  StderrFilter *f = data;
  GString *pending = g_string_new (NULL);
  char buf[4096];
  ssize_t n;

  while ((n = read (f->read_fd, buf, sizeof buf)) != 0)
    {
      const char *nl;
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      g_string_append_len (pending, buf, n);
      while ((nl = memchr (pending->str, '\n', pending->len)) != NULL)
        {
          gsize len = (gsize) (nl - pending->str) + 1;
          stderr_filter_line (f, pending->str, len);
          g_string_erase (pending, 0, (gssize) len);
        }
      /* The progress bar redraws with \r and no newline: pass it on now. */
      if (pending->len > 0 && pending->str[0] == '\r')
        {
          stderr_filter_line (f, pending->str, pending->len);
          g_string_truncate (pending, 0);
        }
    }
  if (pending->len > 0)
    stderr_filter_line (f, pending->str, pending->len);
  g_string_free (pending, TRUE);
  return NULL;
}

static gboolean
stderr_filter_start (StderrFilter *f)
{
  int fds[2];

  memset (f, 0, sizeof *f);
  fflush (stderr);
  if (pipe (fds) != 0)
    return FALSE;
  f->real_fd = dup (STDERR_FILENO);
  if (f->real_fd < 0 || dup2 (fds[1], STDERR_FILENO) < 0)
    {
      if (f->real_fd >= 0)
        close (f->real_fd);
      close (fds[0]);
      close (fds[1]);
      return FALSE;
    }
  close (fds[1]);
  f->read_fd = fds[0];
  f->repeats = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  f->thread = g_thread_new ("stderr-filter", stderr_filter_thread, f);
  return TRUE;
}

static void
stderr_filter_stop (StderrFilter *f)
{
  GHashTableIter it;
  gpointer key, count;

  fflush (stderr);
  dup2 (f->real_fd, STDERR_FILENO);  /* closes the pipe's last write end */
  g_thread_join (f->thread);
  close (f->read_fd);
  close (f->real_fd);
  g_hash_table_iter_init (&it, f->repeats);
  while (g_hash_table_iter_next (&it, &key, &count))
    if (GPOINTER_TO_INT (count) > 0)
      fprintf (stderr, "formulate-cli: poppler: '%s' %d more times\n", (const char *) key,
               GPOINTER_TO_INT (count));
  g_hash_table_unref (f->repeats);
}

static void
on_sigint (int signum)
{
  (void) signum;
  if (fm_interrupted)
    _exit (FM_EXIT_INTERRUPTED);  /* a second Ctrl-C: stop now */
  fm_interrupted = 1;
}

static bool
engine_should_abort (void *user_data)
{
  (void) user_data;
  return fm_interrupted != 0;
}

typedef struct {
  gboolean enabled;
  gint64 start_us;
  int pages_done, pages_total;
  int formulas_done, formulas_total;
} Progress;

static void
progress_draw (Progress *p, gboolean final)
{
  double elapsed, rate, eta = -1;

  if (!p->enabled)
    return;
  elapsed = (g_get_monotonic_time () - p->start_us) / 1e6;
  rate = elapsed > 0 ? p->formulas_done / elapsed : 0;
  if (p->pages_done > 0 && p->pages_done < p->pages_total)
    eta = elapsed / p->pages_done * (p->pages_total - p->pages_done);
  fprintf (stderr, "\r\033[K[");
  for (int i = 0; i < 20; i++)
    fputc (i < (p->pages_total ? 20 * p->pages_done / p->pages_total : 20) ? '#' : '.', stderr);
  fprintf (stderr, "] pages %d/%d  formulas %d", p->pages_done, p->pages_total, p->formulas_done);
  if (p->formulas_total > p->formulas_done)
    fprintf (stderr, "/%d", p->formulas_total);
  fprintf (stderr, "  %.1f formulas/s", rate);
  if (eta >= 0)
    fprintf (stderr, "  ETA %d:%02d", (int) eta / 60, (int) eta % 60);
  if (final)
    fputc ('\n', stderr);
  fflush (stderr);
}

static int
exit_code_for (const GError *error)
{
  if (error->domain != FM_DOCUMENT_ERROR)
    return FM_EXIT_FAILURE;
  switch ((FmDocumentError) error->code)
    {
    case FM_DOCUMENT_ERROR_NEEDS_PASSWORD:
    case FM_DOCUMENT_ERROR_WRONG_PASSWORD:
      return FM_EXIT_PASSWORD;
    case FM_DOCUMENT_ERROR_PAGE_RANGE:
      return FM_EXIT_USAGE;
    case FM_DOCUMENT_ERROR_CANCELLED:
      return FM_EXIT_INTERRUPTED;
    case FM_DOCUMENT_ERROR_NOT_FOUND:
    case FM_DOCUMENT_ERROR_NOT_PDF:
    case FM_DOCUMENT_ERROR_DAMAGED:
    case FM_DOCUMENT_ERROR_NO_PAGES:
    case FM_DOCUMENT_ERROR_BAD_PAGE:
    case FM_DOCUMENT_ERROR_RENDER:
    case FM_DOCUMENT_ERROR_NO_TEXT_LAYER:
      return FM_EXIT_INPUT;
    default:
      return FM_EXIT_FAILURE;
    }
}

/* The engine's device names (fe_context_load): checked before the document
 * is read so that a typo is a usage error even with --detect-only. */
static gboolean
device_name_valid (const char *device)
{
  g_auto(GStrv) parts = NULL;

  if (strcmp (device, "auto") == 0 || strcmp (device, "cpu") == 0 ||
      strcmp (device, "all") == 0)
    return TRUE;
  /* cuda, cuda:N, or a comma-separated set of cuda:N */
  parts = g_strsplit (device, ",", -1);
  for (int i = 0; parts[i]; i++)
    {
      const char *digits = parts[i] + 5;
      if (strcmp (parts[i], "cuda") == 0 && parts[1] == NULL)
        continue;
      if (!g_str_has_prefix (parts[i], "cuda:") || *digits == '\0' || strlen (digits) > 4)
        return FALSE;
      for (; *digits; digits++)
        if (!g_ascii_isdigit (*digits))
          return FALSE;
    }
  return parts[0] != NULL;
}

static char *
default_model_path (void)
{
  char buf[4096];
  const char *path = fm_find_model (NULL, buf, sizeof buf, NULL, 0);
  return path ? g_strdup (path) : NULL;
}

typedef struct {
  FeContext *ctx;
  FeState *state;
  int em_px;
} Recognizer;

static int
recognizer_open (Recognizer *rec, const char *model, const char *device, fe_precision precision)
{
  FeContextParams cp = fe_context_default_params ();
  const FeModelInfo *info;
  fe_status st;

  cp.device = device ? device : "auto";
  cp.precision = precision;
  st = fe_context_load (model, &cp, &rec->ctx);
  if (st != FE_OK)
    {
      fprintf (stderr, "formulate-cli: %s\n", fe_last_error ());
      /* An unknown --device name is a bad command line, as for recognize. */
      return st == FE_ERR_DEVICE             ? FM_EXIT_DEVICE
             : st == FE_ERR_INVALID_ARGUMENT ? FM_EXIT_USAGE
                                             : FM_EXIT_MODEL;
    }
  st = fe_state_new (rec->ctx, &rec->state);
  if (st != FE_OK)
    {
      fprintf (stderr, "formulate-cli: %s\n", fe_last_error ());
      return FM_EXIT_FAILURE;
    }
  info = fe_context_model_info (rec->ctx);
  rec->em_px = info && info->em_px > 0 ? info->em_px : FM_RENDER_DEFAULT_EM_PX;
  return FM_EXIT_OK;
}

static void
recognizer_close (Recognizer *rec)
{
  if (rec->state)
    fe_state_free (rec->state);
  if (rec->ctx)
    fe_context_free (rec->ctx);
}

typedef struct {
  Progress *progress;
  int base;
} ProgressLink;

static void
on_engine_progress (int done, int total, void *user_data)
{
  ProgressLink *link = user_data;
  (void) total;
  link->progress->formulas_done = link->base + done;
  progress_draw (link->progress, FALSE);
}

/* Recognises the formulas (not the numbers) among regions[first..]. */
static int
recognize_page (Recognizer *rec, FmDocument *doc, GPtrArray *regions, guint first,
                const FmRecognizeOptions *base_opts, Progress *progress, double *ms)
{
  guint n = regions->len - first;
  g_autofree FmRecognizeTask *tasks = g_new0 (FmRecognizeTask, n + 1);
  FmRecognizeOptions opts = *base_opts;
  ProgressLink link = { progress, progress->formulas_done };
  gint64 t0 = g_get_monotonic_time ();
  fe_status st;
  int ret = FM_EXIT_OK, n_formulas = 0;

  for (guint i = 0; i < n; i++)
    {
      tasks[i].document = doc;
      tasks[i].region = regions->pdata[first + i];
      n_formulas += tasks[i].region->kind != FM_REGION_NUMBER;
    }
  opts.em_px = rec->em_px;
  opts.progress_callback = on_engine_progress;
  opts.progress_user_data = &link;
  opts.abort_callback = engine_should_abort;
  st = fm_recognize_run (rec->state, tasks, n, &opts);
  *ms += (g_get_monotonic_time () - t0) / 1000.0;
  for (guint i = 0; i < n; i++)
    {
      if (tasks[i].error)
        fprintf (stderr, "formulate-cli: %s\n", tasks[i].error);
      fm_recognize_task_clear (&tasks[i]);
    }
  if (st == FE_ERR_ABORTED)
    ret = FM_EXIT_INTERRUPTED;
  else if (st != FE_OK)
    {
      fprintf (stderr, "formulate-cli: recognition failed: %s\n", fe_last_error ());
      ret = FM_EXIT_FAILURE;
    }
  progress->formulas_done = link.base + n_formulas;
  return ret;
}

static gboolean
write_output (const char *path, const char *input, GBytes *bytes, GError **error)
{
  gsize n;
  const char *data = g_bytes_get_data (bytes, &n);

  if (path == NULL || strcmp (path, "-") == 0)
    {
      if (fwrite (data, 1, n, stdout) != n || fflush (stdout) != 0)
        {
          int saved = errno;
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       "cannot write to standard output: %s", g_strerror (saved));
          return FALSE;
        }
      return TRUE;
    }
  /* Atomic for a regular file, in place for a device or FIFO, never over
   * the input (fm-output-file.h). */
  return fm_output_file_write (path, input, data, n, error);
}

/* --format, --rule, --no-refine, --device, --crop, --text-layer, --image-only
 * and --constrain, checked and turned into what the run uses. Returns -1 to
 * go on, else the exit code (a one-line message on stderr said why). */
static int
pdf_choices (const char         *format_name,
             const char         *rule_name,
             gboolean            no_refine,
             const char         *device,
             const char         *crop_name,
             gboolean            text_layer,
             gboolean            image_only,
             gboolean            constrain_uncertain,
             gboolean            combined,
             FmExportFormat     *format,
             FmDetectOptions    *dopts,
             FmCropRule         *crop_rule,
             FmRecognizeOptions *ropts)
{
  if (format_name && !fm_export_format_from_string (format_name, format))
    {
      fprintf (stderr, "formulate-cli pdf: unknown format '%s' (json, tex, md, docx or html)\n",
               format_name);
      return FM_EXIT_USAGE;
    }
  /* Checked before the document is read and the model loaded: a missing
   * tool is known at once, not after minutes of recognition. */
  if (format_name && fm_export_format_needs_pandoc (*format))
    {
      g_autofree char *pandoc = fm_pandoc_find ();
      if (pandoc == NULL)
        {
          fprintf (stderr, "formulate-cli pdf: --format %s needs pandoc, which was not found on PATH "
                           "(Debian/Ubuntu: apt install pandoc)\n", format_name);
          return FM_EXIT_USAGE;
        }
    }
  if (rule_name)
    {
      if (strcmp (rule_name, "full") == 0)
        dopts->rule = FM_DETECT_RULE_FULL;
      else if (strcmp (rule_name, "pdfmathtranslate") == 0)
        dopts->rule = FM_DETECT_RULE_PDFMATHTRANSLATE;
      else
        {
          fprintf (stderr, "formulate-cli pdf: unknown rule '%s' (full or pdfmathtranslate)\n", rule_name);
          return FM_EXIT_USAGE;
        }
    }
  dopts->refine_with_bitmap = !no_refine;
  if (device && !device_name_valid (device))
    {
      fprintf (stderr, "formulate-cli pdf: unknown device '%s' (auto, cpu, cuda:N or all)\n",
               device);
      return FM_EXIT_USAGE;
    }
  if (crop_name && !fm_crop_rule_from_string (crop_name, crop_rule))
    {
      fprintf (stderr, "formulate-cli pdf: unknown crop rule '%s' (line or box)\n", crop_name);
      return FM_EXIT_USAGE;
    }
  if ((text_layer || constrain_uncertain || combined) && image_only)
    {
      fprintf (stderr, "formulate-cli pdf: --text-layer, --combined and --image-only exclude each other\n");
      return FM_EXIT_USAGE;
    }
  if (combined && (text_layer || constrain_uncertain))
    {
      fprintf (stderr, "formulate-cli pdf: --combined and --text-layer exclude each other\n");
      return FM_EXIT_USAGE;
    }
  /* The default (fm_recognize_default_options) is --combined. */
  if (image_only)
    ropts->read_text = NULL;
  else
    ropts->read_text = fm_recognize_text_reader ();
  ropts->combine = !image_only && !text_layer && !constrain_uncertain;
  ropts->constrain_uncertain = constrain_uncertain;

  return -1;
}

/* Detection runs on worker threads a few pages ahead of the page being
 * recognised and written (fm-page-queue.h); an interrupt stops it. */
static gboolean
interrupted (gpointer unused)
{
  return fm_interrupted != 0;
}

/* One page of the run: finds its formulas (from the text layer, or from the
 * pixels of a page without one), adds them to job with job-wide label_of, and
 * recognises them when rec is not NULL (--detect-only: NULL). Returns FALSE
 * when the page cannot be read: page_error says why, and so does its note. A
 * recognition failure other than an interrupt goes to *ret. */
static gboolean
run_page (FmExportJob              *job,
          FmDocument               *doc,
          int                       page,
          FmPageDetection          *detection,
          Recognizer               *rec,
          const FmRecognizeOptions *ropts,
          FmCropRule                crop_rule,
          Progress                 *progress,
          int                      *ret,
          GError                  **page_error)
{
  g_autoptr(GPtrArray) found = detection->regions;
  guint first = job->regions->len;
  char *note = NULL;
  FmPageSource source = detection->source;

  if (found == NULL)
    g_propagate_error (page_error, detection->error);
  else
    g_clear_error (&detection->error);
  detection->regions = NULL;
  detection->error = NULL;
  job->detect_ms += detection->ms;
  g_array_append_val (job->pages, page);
  if (found == NULL)
    {
      if (progress->enabled)
        fputc ('\n', stderr);
      fprintf (stderr, "formulate-cli: %s\n", (*page_error)->message);
      note = g_strdup ((*page_error)->message);
    }
  else
    {
      for (guint k = 0; k < found->len; k++)
        g_ptr_array_add (job->regions, fm_region_copy (found->pdata[k]));
      progress->formulas_total += (int) found->len;
      /* label_of indices are page-local; make them job-wide. */
      for (guint k = first; k < job->regions->len; k++)
        {
          FmRegion *r = job->regions->pdata[k];
          if (r->label_of >= 0)
            r->label_of += (int) first;
        }
      if (rec != NULL)
        {
          int rret;
          fm_recognize_prepare_page (doc, job->regions, first, crop_rule);
          rret = recognize_page (rec, doc, job->regions, first, ropts, progress, &job->recognize_ms);
          if (rret != FM_EXIT_OK && rret != FM_EXIT_INTERRUPTED)
            *ret = rret;
        }
      else
        progress->formulas_done = progress->formulas_total;
    }
  g_ptr_array_add (job->page_notes, note);
  g_ptr_array_add (job->page_analysis, found ? (gpointer) fm_page_source_to_string (source) : NULL);
  return found != NULL;
}

/* One `pdf` run: what the command line asked for, then what the run holds.
 * run_pdf goes through its steps in order; each step returns -1 to go on or
 * the exit code (its one-line message already on stderr). */
typedef struct {
  /* The command line. */
  char *pages_spec, *password, *format_name, *output, *device, *model, *rule_name;
  char *crop_name, *precision_name;
  gboolean detect_only, no_refine, quiet, image_only, text_layer;
  gboolean constrain_uncertain, combined;
  char **files;
  /* What the choices turned into. */
  fe_precision precision;
  FmExportFormat format;
  FmDetectOptions dopts;
  FmRecognizeOptions ropts;
  FmCropRule crop_rule;
  /* The run. */
  FmDocument *doc;
  GArray *pages;
  FmExportJob *job;
  Recognizer rec;
  Progress progress;
  gint64 t_start;
  int pages_ok;
  int ret;          /* a recognition failure that does not stop the run */
  GError *page_error;  /* why the last unreadable page could not be read */
} PdfRun;

static void
pdf_run_clear (PdfRun *run)
{
  g_clear_error (&run->page_error);
  g_clear_pointer (&run->pages, g_array_unref);
  g_clear_pointer (&run->job, fm_export_job_free);
  g_clear_object (&run->doc);
  g_clear_pointer (&run->files, g_strfreev);
  g_free (run->precision_name);
  g_free (run->crop_name);
  g_free (run->rule_name);
  g_free (run->model);
  g_free (run->device);
  g_free (run->output);
  g_free (run->format_name);
  g_free (run->password);
  g_free (run->pages_spec);
}

static int
pdf_parse_precision (PdfRun *run)
{
  if (run->precision_name == NULL)
    return -1;
  if (strcmp (run->precision_name, "fp32") == 0)
    run->precision = FE_PRECISION_FP32;
  else if (strcmp (run->precision_name, "fp16") == 0)
    run->precision = FE_PRECISION_FP16;
  else if (strcmp (run->precision_name, "bf16") == 0)
    run->precision = FE_PRECISION_BF16;
  else if (strcmp (run->precision_name, "auto") != 0)
    {
      fprintf (stderr, "formulate-cli pdf: --precision wants auto, fp32, fp16 or bf16, not '%s'\n",
               run->precision_name);
      return FM_EXIT_USAGE;
    }
  return -1;
}

/* The command line, checked before anything is read. */
static int
pdf_parse_args (PdfRun *run, int argc, char **argv)
{
  GOptionEntry entries[] = {
    { "pages", 'p', 0, G_OPTION_ARG_STRING, &run->pages_spec, "Pages to read, e.g. 1-3,7 (default: all)", "LIST" },
    { "password", 0, 0, G_OPTION_ARG_STRING, &run->password, "Password of an encrypted PDF", "P" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &run->format_name, "Output format: json, tex, md, docx or html (the last two need pandoc; default json)", "FMT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &run->output, "Write to FILE (atomically) instead of stdout", "FILE" },
    { "device", 'd', 0, G_OPTION_ARG_STRING, &run->device, "auto, cpu, cuda:N (default auto)", "DEV" },
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &run->model, "Model file (.safetensors or .pt)", "FILE" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &run->precision_name, "auto (default), fp32, fp16 or bf16, as for recognize", "P" },
    { "detect-only", 0, 0, G_OPTION_ARG_NONE, &run->detect_only, "Find formulas, do not recognise them", NULL },
    { "rule", 0, 0, G_OPTION_ARG_STRING, &run->rule_name, "Detection rule: full (default) or pdfmathtranslate (bench baseline)", "RULE" },
    { "no-refine", 0, 0, G_OPTION_ARG_NONE, &run->no_refine, "Do not fit boxes to the rendered ink", NULL },
    { "text-layer", 0, 0, G_OPTION_ARG_NONE, &run->text_layer, "Read formulas from the PDF's text layer first, the image model only where that is uncertain (bench/pdf-e2e)", NULL },
    { "combined", 0, 0, G_OPTION_ARG_NONE, &run->combined, "Read every formula from its image and check it against the PDF's text layer (the default)", NULL },
    { "image-only", 0, 0, G_OPTION_ARG_NONE, &run->image_only, "Recognise every formula from its image alone, without the text layer's check", NULL },
    { "constrain", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &run->constrain_uncertain, "Uncertain text-layer readings decode constrained by their glyphs (for bench/pdf-e2e)", NULL },
    { "crop", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &run->crop_name, "Crop rule: line (default) or box (bench/pdf-e2e compares them)", "RULE" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &run->quiet, "No progress bar", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &run->files, NULL, "FILE.pdf" },
    { NULL }
  };
  g_autoptr(GOptionContext) octx = g_option_context_new ("FILE.pdf - find the formulas in a PDF");
  g_autoptr(GError) error = NULL;
  int ret;

  g_option_context_add_main_entries (octx, entries, NULL);
  if (!g_option_context_parse (octx, &argc, &argv, &error))
    {
      fprintf (stderr, "formulate-cli pdf: %s\n", error->message);
      return FM_EXIT_USAGE;
    }
  if (run->files == NULL || run->files[0] == NULL || run->files[1] != NULL)
    {
      fprintf (stderr, "formulate-cli pdf: give exactly one PDF file (see --help)\n");
      return FM_EXIT_USAGE;
    }
  ret = pdf_choices (run->format_name, run->rule_name, run->no_refine, run->device, run->crop_name,
                     run->text_layer, run->image_only, run->constrain_uncertain, run->combined,
                     &run->format, &run->dopts, &run->crop_rule, &run->ropts);
  if (ret >= 0)
    return ret;
  ret = pdf_parse_precision (run);
  if (ret >= 0)
    return ret;
  /* A zip on a terminal is noise and can upset it: docx needs a file or a pipe. */
  if (run->format == FM_EXPORT_DOCX && (run->output == NULL || strcmp (run->output, "-") == 0) &&
      isatty (STDOUT_FILENO))
    {
      fprintf (stderr, "formulate-cli pdf: --format docx writes a binary file: give --output FILE "
                       "or redirect standard output\n");
      return FM_EXIT_USAGE;
    }
  return -1;
}

/* The document and its selected pages; the model's path (unless
 * --detect-only), checked before anything is detected. */
static int
pdf_open (PdfRun *run)
{
  g_autoptr(GError) error = NULL;

  run->doc = fm_document_new_for_path (run->files[0], run->password, &error);
  if (run->password)
    explicit_bzero (run->password, strlen (run->password));
  if (run->doc == NULL)
    {
      fprintf (stderr, "formulate-cli: %s\n", error->message);
      return exit_code_for (error);
    }
  run->pages = fm_pages_parse (run->pages_spec, fm_document_get_n_pages (run->doc), &error);
  if (run->pages == NULL)
    {
      fprintf (stderr, "formulate-cli: %s\n", error->message);
      return FM_EXIT_USAGE;
    }
  if (run->detect_only)
    return -1;
  if (run->model == NULL)
    run->model = default_model_path ();
  if (run->model == NULL)
    {
      fprintf (stderr, "formulate-cli: no model found: pass --model FILE, set FORMULATE_MODEL, "
                       "or use --detect-only\n");
      return FM_EXIT_MODEL;
    }
  return -1;
}

/* The model (unless --detect-only): loaded (mapped, converted, its state
 * made and warmed up) while the queue's threads detect the first pages,
 * rather than before the first page is even rendered; the main thread loads
 * it, so the state's warm-up also warms the thread that recognises. */
static int
pdf_load_model (PdfRun *run)
{
  int ret;

  if (run->detect_only)
    return -1;
  ret = recognizer_open (&run->rec, run->model, run->device, run->precision);
  if (ret != FM_EXIT_OK)
    {
      recognizer_close (&run->rec);
      run->rec = (Recognizer) { 0 };
      return ret;
    }
  return -1;
}

/* The job the export writes: the document's facts and the model's. */
static void
pdf_job_start (PdfRun *run)
{
  FmExportJob *job = fm_export_job_new (run->files[0]);

  run->job = job;
  job->title = fm_document_dup_title (run->doc);
  job->n_pages = fm_document_get_n_pages (run->doc);
  job->recognized = !run->detect_only;
  job->text_reader = !run->detect_only && run->ropts.read_text != NULL;
  if (!run->detect_only)
    {
      FeRuntimeInfo info;
      job->model = g_utf8_make_valid (run->model, -1);
      if (fe_context_runtime_info (run->rec.ctx, &info) == FE_OK)
        job->device = g_strdup (info.device.id);
    }
}

/* Every selected page in order (detection a few pages ahead on the queue's
 * threads, started before the model loads), until the pages end or Ctrl-C;
 * then the model is freed. Returns -1, or the exit code of a model that
 * could not be loaded (its message on stderr; nothing recognised). */
static int
pdf_run_pages (PdfRun *run)
{
  struct sigaction sa = { 0 }, old_sa;
  FmPageQueue *queue;
  int ret;

  sa.sa_handler = on_sigint;
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, &old_sa);

  run->progress.enabled = !run->quiet && stderr_is_terminal;
  run->progress.start_us = run->t_start;
  run->progress.pages_total = (int) run->pages->len;

  queue = fm_page_queue_new (run->doc, &run->dopts, (const int *) run->pages->data, run->pages->len,
                             interrupted, NULL);
  fm_page_queue_start (queue);
  ret = pdf_load_model (run);
  if (ret >= 0)
    {
      fm_page_queue_free (queue);
      sigaction (SIGINT, &old_sa, NULL);
      return ret;
    }
  pdf_job_start (run);
  for (guint i = 0; i < run->pages->len && !fm_interrupted; i++)
    {
      FmPageDetection detection = fm_page_queue_take (queue, i);
      g_clear_error (&run->page_error);
      if (fm_interrupted)
        {
          g_clear_pointer (&detection.regions, g_ptr_array_unref);
          g_clear_error (&detection.error);
          break;
        }
      if (run_page (run->job, run->doc, g_array_index (run->pages, int, i), &detection,
                    run->detect_only ? NULL : &run->rec, &run->ropts, run->crop_rule, &run->progress,
                    &run->ret, &run->page_error))
        run->pages_ok++;
      run->progress.pages_done = (int) i + 1;
      progress_draw (&run->progress, FALSE);
    }
  fm_page_queue_free (queue);
  progress_draw (&run->progress, TRUE);
  sigaction (SIGINT, &old_sa, NULL);
  recognizer_close (&run->rec);
  return -1;
}

/* Nothing is written after an interrupt or when no page could be read;
 * otherwise the export, to --output or standard output. */
static int
pdf_write (PdfRun *run)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) result = NULL;
  g_autofree char *warnings = NULL;

  if (fm_interrupted)
    {
      fprintf (stderr, "formulate-cli: interrupted, nothing written\n");
      return FM_EXIT_INTERRUPTED;
    }
  if (run->pages_ok == 0)
    return run->page_error ? exit_code_for (run->page_error) : FM_EXIT_INPUT;
  g_clear_error (&run->page_error);

  run->job->total_ms = (g_get_monotonic_time () - run->t_start) / 1000.0;
  result = fm_export_to_bytes (run->job, run->doc, run->format, &warnings, &error);
  if (warnings != NULL)
    {
      /* e.g. a formula pandoc could not parse, kept as its TeX source: the
       * headline of each, not pandoc's parser context under it. */
      g_auto(GStrv) lines = g_strsplit (warnings, "\n", -1);
      for (int i = 0; lines[i]; i++)
        if (lines[i][0] == '[')
          fprintf (stderr, "formulate-cli: pandoc: %s\n", lines[i]);
    }
  if (result == NULL || !write_output (run->output, run->files[0], result, &error))
    {
      fprintf (stderr, "formulate-cli: %s\n", error->message);
      return FM_EXIT_FAILURE;
    }
  return run->ret;
}

static int
run_pdf (int argc, char **argv)
{
  PdfRun run = {
    .precision = FE_PRECISION_AUTO,
    .format = FM_EXPORT_JSON,
    .dopts = fm_detect_default_options (),
    .ropts = fm_recognize_default_options (),
    .crop_rule = FM_CROP_RULE_DEFAULT,
    .t_start = g_get_monotonic_time (),
    .ret = FM_EXIT_OK,
  };
  int ret = pdf_parse_args (&run, argc, argv);

  if (ret < 0)
    ret = pdf_open (&run);
  if (ret < 0)
    ret = pdf_run_pages (&run);
  if (ret < 0)
    ret = pdf_write (&run);
  pdf_run_clear (&run);
  return ret;
}

int
fm_cli_pdf (int argc, char **argv)
{
  StderrFilter filter;
  int ret;

  stderr_is_terminal = isatty (STDERR_FILENO);
  if (!stderr_filter_start (&filter))
    return run_pdf (argc, argv);  /* unfiltered is still a working run */
  ret = run_pdf (argc, argv);
  stderr_filter_stop (&filter);
  return ret;
}
