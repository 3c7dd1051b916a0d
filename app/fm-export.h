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
 * reads the text layer for the paragraphs around the formulas). */
char        *fm_export_to_string (FmExportJob    *job,
                                  FmDocument     *doc,
                                  FmExportFormat  format,
                                  GError        **error);

/* Boxes to crop regions[first..] (all of one page) at for recognition:
 * each display's box widened by the text-layer pieces on its line that the
 * Markdown export gives to it ("det" before a matrix); other boxes as they
 * are. boxes has room for regions->len - first entries. */
gboolean     fm_export_crop_boxes (FmDocument *doc,
                                   GPtrArray  *regions,
                                   guint       first,
                                   FmRect     *boxes,
                                   GError    **error);

/* LaTeX that pdflatex with amsmath and amssymb compiles, as far as a small
 * parser can tell (known commands with their arguments, environments, \left
 * and \right, no double scripts, & and \\ only in alignments), so a tex
 * export stays compilable whatever the recogniser wrote. */
gboolean     fm_export_latex_is_balanced (const char *latex);

G_END_DECLS
