/* fm-export.h - regions of a document as JSON, a LaTeX document or Markdown.
 *
 * Contract: an FmExportJob holds what one run found (pages, notes, regions,
 * timings); fm_export_to_string writes it in one format. JSON is the job as
 * it is; tex writes only formulas fm_latex_check_compiles accepts (the others
 * as comments), so it always compiles; Markdown is fm-markdown.c's layout. */
#pragma once

#include "fm-region.h"

G_BEGIN_DECLS

typedef enum {
  FM_EXPORT_JSON,
  FM_EXPORT_TEX,
  FM_EXPORT_MARKDOWN,
  /* Through pandoc (fm-pandoc.h: fm_export_to_bytes), not fm_export_to_string. */
  FM_EXPORT_DOCX,
  FM_EXPORT_HTML,
} FmExportFormat;

/* What one run produced: the regions of the selected pages in page and
 * reading order, plus per-page notes (e.g. "no text layer") and timings. */
typedef struct {
  char *source;            /* file name as given                          */
  char *title;             /* PDF title or NULL                           */
  int n_pages;             /* pages in the document                       */
  GArray *pages;           /* int: 0-based pages processed                */
  GPtrArray *page_notes;   /* char* per entry of pages, NULL = fine       */
  /* const char* per entry of pages: what its regions were found in
   * (fm_page_source_to_string: "text layer", "pixels", "blank"), static
   * strings; NULL or missing = not analysed. */
  GPtrArray *page_analysis;
  GPtrArray *regions;      /* FmRegion*, owning                           */
  double detect_ms;
  double recognize_ms;
  double total_ms;
  gboolean recognized;     /* false for --detect-only                     */
  gboolean text_reader;    /* a text-layer reader was asked first         */
  char *model;             /* model path or NULL                          */
  char *device;            /* device used or NULL                         */
} FmExportJob;

FmExportJob *fm_export_job_new  (const char *source);
void         fm_export_job_free (FmExportJob *job);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FmExportJob, fm_export_job_free)

gboolean     fm_export_format_from_string (const char *name, FmExportFormat *out);

/* Writes the job in format to a string. Markdown needs the document (it
 * reads the text layer for the paragraphs around the formulas). NULL with
 * error only for an unknown format. */
char        *fm_export_to_string (FmExportJob    *job,
                                  FmDocument     *doc,
                                  FmExportFormat  format,
                                  GError        **error);

G_END_DECLS
