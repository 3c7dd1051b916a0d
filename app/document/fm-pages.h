/* fm-pages.h - page selections such as "1-3,7". */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Parses a 1-based selection ("1-3,7", "5-", "-2", "all" or NULL for every
 * page) against a document of n_pages pages. Returns 0-based indices, sorted,
 * without duplicates (a GArray of int), or NULL with FM_DOCUMENT_ERROR_PAGE_RANGE
 * for bad syntax or a page outside 1..n_pages. */
GArray *fm_pages_parse (const char *spec,
                        int         n_pages,
                        GError    **error);

G_END_DECLS
