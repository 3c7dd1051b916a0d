/* fm-poppler.c - the part of poppler-glib's API that Formulate calls, loaded on first use.
 *
 * Linked directly, libpoppler-glib brought Poppler's core and its NSS, NSPR,
 * LittleCMS and OpenJPEG into every start of the window: 10 of its 80 shared
 * libraries, 21,325 symbol relocations instead of 16,028 and 54,765 relative
 * ones instead of 26,623 (LD_DEBUG=statistics formulate --version), 970 page
 * faults instead of 757 and 60-83 ms of CPU instead of 52 (perf stat -r 20
 * formulate --version, loaded machine), all on the way to the empty window's
 * first frame, which opens no PDF (issue 16).
 * Each function here has the signature <poppler.h> declares, so the callers are
 * unchanged; the library is opened by its soname the first time one of them is
 * called (with a PDF on the command line, by fm-early-open.c's thread, on the
 * other core, while GTK starts on this one). Without it at run time the two
 * constructors fail with a GError saying so and nothing else is reached. */
#include "fm-lazy-library.h"

#include <dlfcn.h>
#include <poppler.h>

/* FM_POPPLER_SONAME: app/meson.build checks that file exists beside the
 * library pkg-config found (libpoppler-glib.so.8 in poppler 22.12, Debian 12). */

static FmLazyLibrary poppler_glib = FM_LAZY_LIBRARY_INIT (FM_POPPLER_SONAME, "Poppler", RTLD_NOW | RTLD_LOCAL);

/* (a document's functions are only reached through a document, which never
 * exists without the library: their "none" values are never returned) */
#define FM_POPPLER_FN(ret, name, params, args, none) FM_LAZY_FN (poppler_glib, ret, name, params, args, none)
#define FM_POPPLER_VOID(name, params, args) FM_LAZY_VOID (poppler_glib, name, params, args)

GQuark
poppler_error_quark (void)
{
  static void *slot;
  GQuark (*fn) (void) = (GQuark (*) (void)) fm_lazy_library_symbol (&poppler_glib, &slot, "poppler_error_quark");

  /* The quark poppler-glib registers, so that errors compare equal either way. */
  return fn != NULL ? fn () : g_quark_from_static_string ("poppler-quark");
}

/* A document constructor's address; NULL with @error set when poppler-glib
 * could not be opened or lacks it: the callers show it as the document's
 * open error. */
static void *
poppler_constructor (void **slot, const char *name, GError **error)
{
  const char *message = NULL;
  void *fn;

  if (fm_lazy_library_open (&poppler_glib, &message) == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "Poppler (%s) could not be loaded: %s",
                   FM_POPPLER_SONAME, message != NULL ? message : "unknown error");
      return NULL;
    }
  fn = fm_lazy_library_symbol (&poppler_glib, slot, name);
  if (fn == NULL)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "poppler-glib has no %s", name);
  return fn;
}

PopplerDocument *
poppler_document_new_from_file (const char *uri, const char *password, GError **error)
{
  static void *slot;
  PopplerDocument *(*fn) (const char *, const char *, GError **) =
    (PopplerDocument * (*) (const char *, const char *, GError **))
      poppler_constructor (&slot, "poppler_document_new_from_file", error);

  return fn != NULL ? fn (uri, password, error) : NULL;
}

PopplerDocument *
poppler_document_new_from_bytes (GBytes *bytes, const char *password, GError **error)
{
  static void *slot;
  PopplerDocument *(*fn) (GBytes *, const char *, GError **) =
    (PopplerDocument * (*) (GBytes *, const char *, GError **))
      poppler_constructor (&slot, "poppler_document_new_from_bytes", error);

  return fn != NULL ? fn (bytes, password, error) : NULL;
}

FM_POPPLER_FN (int, poppler_document_get_n_pages, (PopplerDocument *d), (d), 0)
FM_POPPLER_FN (PopplerPage *, poppler_document_get_page, (PopplerDocument *d, int index),
               (d, index), NULL)
FM_POPPLER_FN (gchar *, poppler_document_get_title, (PopplerDocument *d), (d), NULL)
FM_POPPLER_FN (PopplerDest *, poppler_document_find_dest, (PopplerDocument *d, const gchar *name),
               (d, name), NULL)
FM_POPPLER_VOID (poppler_dest_free, (PopplerDest *dest), (dest))
FM_POPPLER_VOID (poppler_action_free, (PopplerAction *action), (action))
FM_POPPLER_VOID (poppler_rectangle_free, (PopplerRectangle *rectangle), (rectangle))

FM_POPPLER_FN (PopplerIndexIter *, poppler_index_iter_new, (PopplerDocument *d), (d), NULL)
FM_POPPLER_FN (PopplerIndexIter *, poppler_index_iter_get_child, (PopplerIndexIter *parent),
               (parent), NULL)
FM_POPPLER_FN (PopplerAction *, poppler_index_iter_get_action, (PopplerIndexIter *iter), (iter),
               NULL)
FM_POPPLER_FN (gboolean, poppler_index_iter_next, (PopplerIndexIter *iter), (iter), FALSE)
FM_POPPLER_VOID (poppler_index_iter_free, (PopplerIndexIter *iter), (iter))

FM_POPPLER_VOID (poppler_page_get_size, (PopplerPage *page, double *width, double *height),
                 (page, width, height))
FM_POPPLER_FN (int, poppler_page_get_index, (PopplerPage *page), (page), 0)
FM_POPPLER_VOID (poppler_page_render, (PopplerPage *page, cairo_t *cairo), (page, cairo))
FM_POPPLER_FN (char *, poppler_page_get_text, (PopplerPage *page), (page), NULL)
FM_POPPLER_FN (gboolean, poppler_page_get_text_layout,
               (PopplerPage *page, PopplerRectangle **rectangles, guint *n_rectangles),
               (page, rectangles, n_rectangles), FALSE)
FM_POPPLER_FN (GList *, poppler_page_get_text_attributes, (PopplerPage *page), (page), NULL)
FM_POPPLER_VOID (poppler_page_free_text_attributes, (GList *list), (list))
FM_POPPLER_FN (GList *, poppler_page_get_image_mapping, (PopplerPage *page), (page), NULL)
FM_POPPLER_VOID (poppler_page_free_image_mapping, (GList *list), (list))
FM_POPPLER_FN (GList *, poppler_page_find_text, (PopplerPage *page, const char *text),
               (page, text), NULL)
FM_POPPLER_FN (GList *, poppler_page_find_text_with_options,
               (PopplerPage *page, const char *text, PopplerFindFlags options),
               (page, text, options), NULL)
