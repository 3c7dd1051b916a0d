/* fm-markdown.h - the Markdown layout engine: a document's text and formulas
 * in reading order.
 *
 * Contract: fm_markdown_write lays out each listed page again from its text
 * layer (fm-page-text.h: glyphs given to regions) in the frame where text runs
 * left to right: lines, columns and their reading order, paragraphs, headings;
 * page numbers and running heads and feet are left out. Text is escaped for
 * Markdown, formulas go between $ or $$ as they are (their LaTeX, or without it
 * the text layer). A page that cannot be read, and a page with a note, get a
 * "> Page N: note" line. Never fails. */
#pragma once

#include "fm-region.h"

G_BEGIN_DECLS

/* regions: FmRegion* of the listed pages in reading order; pages: int, the
 * 0-based pages to write; page_notes: char* per entry of pages or NULL (may be
 * shorter); title: "# title" first, or NULL. */
char *fm_markdown_write (FmDocument *doc,
                         GPtrArray  *regions,
                         GArray     *pages,
                         GPtrArray  *page_notes,
                         const char *title);

G_END_DECLS
