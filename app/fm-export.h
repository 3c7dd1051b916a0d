/* fm-export.h - regions of a document as JSON, a LaTeX document or Markdown. */
#pragma once

#include "fm-region.h"

G_BEGIN_DECLS

typedef enum {
  FM_EXPORT_JSON,
  FM_EXPORT_TEX,
  FM_EXPORT_MARKDOWN,
} FmExportFormat;

/* What one run produced: the regions of the selected pages in page and
 * reading order, plus per-page notes (e.g. "no text layer") and timings. */
typedef struct {
  char *source;            /* file name as given                          */
  char *title;             /* PDF title or NULL                           */
  int n_pages;             /* pages in the document                       */
  GArray *pages;           /* int: 0-based pages processed                */
  GPtrArray *page_notes;   /* char* per entry of pages, NULL = fine       */
  GPtrArray *regions;      /* FmRegion*, owning                           */
  double detect_ms;
  double recognize_ms;
  double total_ms;
  gboolean recognized;     /* false for --detect-only                     */
  char *model;             /* model path or NULL                          */
  char *device;            /* device used or NULL                         */
} FmExportJob;

FmExportJob *fm_export_job_new  (const char *source);
void         fm_export_job_free (FmExportJob *job);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FmExportJob, fm_export_job_free)

gboolean     fm_export_format_from_string (const char *name, FmExportFormat *out);

/* Writes the job in format to a string. Markdown needs the document (it
 * reads the text layer for the paragraphs around the formulas). */
char        *fm_export_to_string (FmExportJob    *job,
                                  FmDocument     *doc,
                                  FmExportFormat  format,
                                  GError        **error);

/* LaTeX whose braces and \left/\right pairs balance, so a tex export stays
 * compilable whatever the recogniser wrote. */
gboolean     fm_export_latex_is_balanced (const char *latex);

G_END_DECLS
