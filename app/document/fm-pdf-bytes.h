/* fm-pdf-bytes.h - which images a page draws, read from a PDF's bytes
 * without a full parser (fm-pdf-bytes.c). poppler-glib tells where a page
 * draws images, not which of the file's image objects they are. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _FmPdfIndex FmPdfIndex;

/* Where each uncompressed indirect object ("N G obj") starts in bytes (the
 * last one of a number wins, as an incremental update's). Kept with bytes. */
FmPdfIndex *fm_pdf_index_new (GBytes *bytes);
void        fm_pdf_index_free (FmPdfIndex *index);

/* The object numbers (gint64) of the image XObjects page_index (0-based)
 * can draw: the images in its resources (its own or inherited from the page
 * tree) and in those of the form XObjects among them, four forms deep.
 * NULL when the structure cannot be followed in the bytes: a page tree or
 * resources inside a compressed object stream, a broken file. */
GArray *fm_pdf_index_page_images (FmPdfIndex *index,
                                  int         page_index);

/* The number N of the "N G obj" that opens the object holding p (searched
 * at most 4 KB back), -1 when there is none. */
gint64 fm_pdf_object_number_before (const char *data,
                                    const char *p);

/* The file with an update appended that redefines each of its small
 * FlateDecode streams (no decode parameters, not an image: fonts, ToUnicode
 * maps, page contents) with its data stored inflated, or NULL when there is
 * nothing to do or the file is not a single unencrypted revision. Poppler
 * re-reads a page's content and rebuilds every font on it (inflating the
 * embedded font programs) for each render and each text extraction; given
 * the inflated data it draws the same page without inflating anything
 * (issue 15: 16 % of a paper's CPU time). */
GBytes *fm_pdf_inflate_streams (GBytes *bytes);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (FmPdfIndex, fm_pdf_index_free)

G_END_DECLS
