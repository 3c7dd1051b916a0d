/* fm-tesseract.c - the part of Tesseract's C API that fm-scan.c calls, loaded on first use.
 *
 * Linked directly, libtesseract brought 57 shared libraries into every start of
 * the window and of formulate-cli (libcurl and its TLS, Kerberos and LDAP stack,
 * libarchive, ICU, Leptonica), relocated and constructed before main() even
 * though only a page without a text layer ever reads words: 45 ms of CPU for a
 * program that links libtesseract and does nothing (perf stat), against 3 ms for
 * one that links nothing, on the window's path to its first frame (issue 16).
 * Each function here has the signature <tesseract/capi.h> declares, so
 * fm-scan.c is unchanged; the library is opened by its soname the first time
 * one of them is called. Without it at run time TessBaseAPICreate() gives NULL
 * and TessBaseAPIInit2() fails, which fm-scan.c reports as the missing data
 * it already handles. */
#include <glib.h>

#ifdef FM_HAVE_TESSERACT
#include "fm-lazy-library.h"

#include <dlfcn.h>
#include <tesseract/capi.h>

/* RTLD_GLOBAL: fm-scan.c finds the OpenMP runtime libtesseract brings
 * (libgomp) with dlsym (RTLD_DEFAULT, ...). */
static FmLazyLibrary tesseract = FM_LAZY_LIBRARY_INIT (FM_TESSERACT_SONAME, "Tesseract", RTLD_NOW | RTLD_GLOBAL);

#define FM_TESS_FN(ret, name, params, args, none) FM_LAZY_FN (tesseract, ret, name, params, args, none)
#define FM_TESS_VOID(name, params, args) FM_LAZY_VOID (tesseract, name, params, args)

/* capi.h declares it without a prototype (and a second declaration with
 * one is an error here: -Werror=redundant-decls). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
FM_TESS_FN (TessBaseAPI *, TessBaseAPICreate, (void), (), NULL)
#pragma GCC diagnostic pop
FM_TESS_FN (int, TessBaseAPIInit2,
            (TessBaseAPI *h, const char *datapath, const char *language, TessOcrEngineMode oem),
            (h, datapath, language, oem), -1)
FM_TESS_VOID (TessBaseAPIDelete, (TessBaseAPI *h), (h))
FM_TESS_VOID (TessBaseAPIClear, (TessBaseAPI *h), (h))
FM_TESS_FN (BOOL, TessBaseAPISetVariable, (TessBaseAPI *h, const char *name, const char *value),
            (h, name, value), 0)
FM_TESS_VOID (TessBaseAPISetPageSegMode, (TessBaseAPI *h, TessPageSegMode mode), (h, mode))
FM_TESS_VOID (TessBaseAPISetImage,
              (TessBaseAPI *h, const unsigned char *data, int width, int height, int bytes_per_pixel,
               int bytes_per_line),
              (h, data, width, height, bytes_per_pixel, bytes_per_line))
FM_TESS_VOID (TessBaseAPISetSourceResolution, (TessBaseAPI *h, int ppi), (h, ppi))
FM_TESS_VOID (TessBaseAPISetRectangle, (TessBaseAPI *h, int left, int top, int width, int height),
              (h, left, top, width, height))
FM_TESS_FN (int, TessBaseAPIRecognize, (TessBaseAPI *h, ETEXT_DESC *monitor), (h, monitor), -1)
FM_TESS_FN (TessResultIterator *, TessBaseAPIGetIterator, (TessBaseAPI *h), (h), NULL)
FM_TESS_VOID (TessDeleteText, (const char *text), (text))

FM_TESS_FN (TessPageIterator *, TessResultIteratorGetPageIterator, (TessResultIterator *h), (h), NULL)
FM_TESS_FN (BOOL, TessResultIteratorNext, (TessResultIterator *h, TessPageIteratorLevel level),
            (h, level), 0)
FM_TESS_FN (char *, TessResultIteratorGetUTF8Text,
            (const TessResultIterator *h, TessPageIteratorLevel level), (h, level), NULL)
FM_TESS_FN (float, TessResultIteratorConfidence,
            (const TessResultIterator *h, TessPageIteratorLevel level), (h, level), 0.0f)
FM_TESS_FN (BOOL, TessResultIteratorWordIsFromDictionary, (const TessResultIterator *h), (h), 0)
FM_TESS_VOID (TessResultIteratorDelete, (TessResultIterator *h), (h))

FM_TESS_VOID (TessPageIteratorBegin, (TessPageIterator *h), (h))
FM_TESS_FN (BOOL, TessPageIteratorNext, (TessPageIterator *h, TessPageIteratorLevel level),
            (h, level), 0)
FM_TESS_FN (BOOL, TessPageIteratorIsAtBeginningOf,
            (const TessPageIterator *h, TessPageIteratorLevel level), (h, level), 0)
FM_TESS_FN (BOOL, TessPageIteratorBoundingBox,
            (const TessPageIterator *h, TessPageIteratorLevel level, int *left, int *top, int *right,
             int *bottom),
            (h, level, left, top, right, bottom), 0)
FM_TESS_FN (TessPolyBlockType, TessPageIteratorBlockType, (const TessPageIterator *h), (h), PT_UNKNOWN)
FM_TESS_FN (BOOL, TessPageIteratorBaseline,
            (const TessPageIterator *h, TessPageIteratorLevel level, int *x1, int *y1, int *x2,
             int *y2),
            (h, level, x1, y1, x2, y2), 0)
#endif
