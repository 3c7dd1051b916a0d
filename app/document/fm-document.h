/* fm-document.h - a PDF opened with Poppler, safe to use from several threads.
 *
 * Poppler documents and pages are not thread-safe, so every FmDocument carries
 * one mutex and every Poppler call on it (or on one of its pages) happens with
 * that mutex held: either through the fm_document_* calls below, which take it
 * themselves, or between fm_document_lock() and fm_document_unlock() for code
 * that works on PopplerPage objects directly (the *_locked functions).
 *
 * Coordinates everywhere in the PDF library are PDF points (1/72 inch) on the
 * page as displayed: the page's /Rotate is applied, origin top-left, y down,
 * exactly as Poppler's text layout reports them.
 */
#pragma once

#include <gio/gio.h>
#include <poppler.h>

G_BEGIN_DECLS

#define FM_DOCUMENT_ERROR (fm_document_error_quark ())
GQuark fm_document_error_quark (void);

typedef enum {
  FM_DOCUMENT_ERROR_NOT_FOUND,       /* missing, a directory, unreadable        */
  FM_DOCUMENT_ERROR_NOT_PDF,         /* no %PDF- header                         */
  FM_DOCUMENT_ERROR_DAMAGED,         /* Poppler cannot parse it                 */
  FM_DOCUMENT_ERROR_NO_PAGES,        /* a valid file with zero pages            */
  FM_DOCUMENT_ERROR_NEEDS_PASSWORD,  /* encrypted and no password was given     */
  FM_DOCUMENT_ERROR_WRONG_PASSWORD,  /* encrypted and the given one is wrong    */
  FM_DOCUMENT_ERROR_PAGE_RANGE,      /* page index out of range                 */
  FM_DOCUMENT_ERROR_BAD_PAGE,        /* a page with an unusable size            */
  FM_DOCUMENT_ERROR_RENDER,          /* Cairo could not render / too large      */
  FM_DOCUMENT_ERROR_NO_TEXT_LAYER,   /* page has no text to detect formulas in  */
  FM_DOCUMENT_ERROR_CANCELLED,
} FmDocumentError;

#define FM_TYPE_DOCUMENT (fm_document_get_type ())
G_DECLARE_FINAL_TYPE (FmDocument, fm_document, FM, DOCUMENT, GObject)

/* Opens a local file. password may be NULL. Errors are FM_DOCUMENT_ERROR with a
 * one-line message that names the file. */
FmDocument *fm_document_new_for_path (const char  *path,
                                      const char  *password,
                                      GError     **error);
/* Opens any GFile (local path or URI GIO understands). */
FmDocument *fm_document_new_for_file (GFile        *file,
                                      const char   *password,
                                      GCancellable *cancellable,
                                      GError      **error);
/* Opens a PDF held in memory (fuzzing, tests). name is used in messages. */
FmDocument *fm_document_new_for_bytes (GBytes     *bytes,
                                       const char *name,
                                       const char *password,
                                       GError    **error);

const char *fm_document_get_name (FmDocument *self);   /* basename for messages */
int         fm_document_get_n_pages (FmDocument *self);
/* Size of page index (0-based) as displayed (rotation applied), in points. */
gboolean    fm_document_get_page_size (FmDocument *self,
                                       int         index,
                                       double     *width,
                                       double     *height,
                                       GError    **error);
/* FALSE (FM_DOCUMENT_ERROR_RENDER, "page image too large: W x H pixels") when
 * page index draws an image whose decoding alone would exceed the memory
 * budget: Poppler decodes images whole whatever the render's size. Takes the
 * lock; the file is scanned once. */
gboolean    fm_document_check_page_images (FmDocument *self,
                                           int         index,
                                           GError    **error);
/* Pixels per point of the finest image drawn over a fifth of the page or
 * more (a scan's page image), 0 when none or unknown. */
double      fm_document_page_image_ppp (FmDocument *self,
                                        int         index);
/* The /Title, or NULL. Free with g_free. */
char       *fm_document_dup_title (FmDocument *self);

/* One entry of the PDF's outline (bookmarks), in document order. */
typedef struct {
  char *title;
  int page;    /* 0-based, or -1 when it goes nowhere in this document */
  int depth;   /* 0 for a top-level entry */
} FmOutlineEntry;
void        fm_outline_entry_free (FmOutlineEntry *entry);
/* The outline as FmOutlineEntry*, empty when the PDF has none. Takes the lock:
 * call it off the main thread. */
GPtrArray  *fm_document_dup_outline (FmDocument *self);

/* The document-wide Poppler lock. */
void        fm_document_lock   (FmDocument *self);
void        fm_document_unlock (FmDocument *self);
/* For a program's exit: waits up to timeout_us until no thread is inside
 * Poppler and keeps every later caller of fm_document_lock() waiting for good,
 * so exit()'s C++ destructors never race a render. FALSE on timeout. */
gboolean    fm_document_close_gate (gint64 timeout_us);
/* With the lock held: the Poppler page (a new reference; unref it with the lock
 * held too, since page finalisation touches the document). The document keeps
 * the FM_DOCUMENT_RECENT_PAGES pages asked for last, so that the text Poppler
 * reads a page into is read once however often the page is asked for. */
#define FM_DOCUMENT_RECENT_PAGES 8
PopplerPage *fm_document_get_page_locked (FmDocument *self,
                                          int         index,
                                          GError    **error);

/* A page's text layer as Poppler gives it, read once per page: text (UTF-8),
 * one rectangle per character of it, the attribute runs, and per character
 * the first run that covers it (NULL where none does). Owned by the page
 * (valid while the caller holds it); lock held. The text reader asks for it
 * once per formula, fm_page_text_load (crop boxes, the script-base measure,
 * Markdown) once per call, and each poppler_page_get_text* call copies the
 * page's whole layer. NULL when the page has no text. */
typedef struct {
  char *text;
  PopplerRectangle *rects;
  guint n_rects;
  GList *attrs;
  PopplerTextAttributes **attr_of;  /* n_chars entries */
  glong n_chars;
} FmTextLayer;

const FmTextLayer *fm_document_get_text_layer_locked (PopplerPage *page);

G_END_DECLS
