/* fm-pandoc.h - Word (.docx, native equations) and HTML (MathML) exports
 * through pandoc, for the CLI (`pdf --format docx|html`) and the window's
 * export dialog alike.
 *
 * Contract: pandoc is an optional run-time tool, found on PATH each time it
 * is asked for (installing it needs no restart). The job goes to pandoc as
 * our Markdown (fm-markdown.c: the text layer's paragraphs with `$…$` and
 * `$$…$$`), which pandoc reads with tex_math_dollars; it is run through
 * GSubprocess with an argument vector, never a shell. A formula pandoc's TeX
 * reader cannot parse stays in the output as its TeX source (pandoc's own
 * rule) and is reported as a warning; the other formulas are unaffected. */
#pragma once

#include "fm-export.h"

G_BEGIN_DECLS

#define FM_PANDOC_ERROR (fm_pandoc_error_quark ())
GQuark fm_pandoc_error_quark (void);

typedef enum {
  FM_PANDOC_ERROR_NOT_FOUND,  /* no `pandoc` on PATH          */
  FM_PANDOC_ERROR_FAILED,     /* it ran and failed, or could not start */
} FmPandocError;

/* Whether format is written by pandoc (docx, html). */
gboolean  fm_export_format_needs_pandoc (FmExportFormat format);

/* The full path of pandoc on PATH, or NULL (free with g_free). */
char     *fm_pandoc_find (void);

/* Writes the job in any format: json, tex and md as fm_export_to_string,
 * docx and html through pandoc. warnings (may be NULL) receives what pandoc
 * printed on standard error when it succeeded (NULL when nothing), e.g. one
 * "[WARNING] Could not convert TeX math …" per formula kept as TeX. */
GBytes   *fm_export_to_bytes (FmExportJob    *job,
                              FmDocument     *doc,
                              FmExportFormat  format,
                              char          **warnings,
                              GError        **error);

G_END_DECLS
