/* fm-scan.h - find formulas on pages without a text layer (scans, photos,
 * PDFs of images), from the page's pixels.
 *
 * The method (docs/scanned.md): render the page in gray at FM_SCAN_DPI, find
 * its ink (connected components of the thresholded render), let Tesseract
 * read the words (its LSTM recogniser through the C API; built in only when
 * libtesseract is found) and take confident dictionary words as running
 * text. The page's skew comes from Tesseract's baselines; everything below
 * works in the deskewed frame. Ink outside running text seeds formulas:
 * clusters of it on a text line are inline formulas, clusters on lines of
 * their own are displays (stacked ones merged into one block), and a word
 * reading like "(3.1)" level with a display and right of it is its number.
 * Boxes are turned back into the page as displayed and given in points.
 */
#pragma once

#include "fm-detect.h"
#include "fm-region.h"

G_BEGIN_DECLS

/* The resolution pages are analysed at: Tesseract reads 10 pt text well at
 * 150 dpi and a page takes half the time of 300 dpi (docs/scanned.md). */
#define FM_SCAN_DPI 150.0

/* What a page turned out to be. */
typedef enum {
  FM_SCAN_PAGE_INK,     /* there is ink: regions were looked for           */
  FM_SCAN_PAGE_BLANK,   /* nothing but paper (and specks)                  */
} FmScanPageKind;

/* TRUE when this build reads words from pixels (Tesseract and its English
 * data were found). Without it a page with ink gives an error saying so. */
gboolean    fm_scan_have_ocr (void);

/* Whether a word Tesseract read ("[12]", "{13}.", "[3,7]") is a citation,
 * which is prose, never a formula; "[0,1]" and "{1,2}" are not. Public for
 * the tests. */
gboolean    fm_scan_reads_like_citation (const char *s);

/* Whether a word reads as a number of the prose whose bracket a scan broke
 * ("(19!", "17]", "[2"); not "(0," nor a whole "(3)". Public for the tests. */
gboolean    fm_scan_reads_like_broken_bracket_number (const char *s);

/* Whether a word reads as a function applied: a name of at most four
 * letters or an operator name, then "(" and more ("f(x)", "O(nlogn)",
 * "tan(40"); not a plural's "value(s)". Public for the tests. */
gboolean    fm_scan_reads_function_application (const char *s);

/* Whether a word reads as one lowercase letter but the words "a" and
 * "i", a sentence's mark after it allowed ("m", "y."). Public for the
 * tests. */
gboolean    fm_scan_reads_lone_letter (const char *s);

/* Whether words (n, left to right), a comma between each two, read as a
 * list of numbers in brackets that is no citation ("[0" "1]"). Public for
 * the tests. */
gboolean    fm_scan_words_read_as_list (const char *const *words, guint n);

/* Whether the ink darker than threshold in the box [x0, x1) x [y0, y1) of a
 * gray image (pixels, stride bytes a row) is one straight stroke falling by
 * slope (dy/dx) to the right, its tenths' middles within tol pixels of the
 * line: a rule on a skewed page, not a tilde, hat or arc. Public for the
 * tests. */
gboolean    fm_scan_stroke_along (const guint8 *pixels,
                                  int           stride,
                                  int           threshold,
                                  int           x0,
                                  int           y0,
                                  int           x1,
                                  int           y1,
                                  double        slope,
                                  double        tol);

/* Regions of one page (0-based) found from its pixels, as fm_detect_page's
 * (GPtrArray of owned FmRegion, reading order). *kind says whether the page
 * is blank (then the array is empty). NULL with error set when the page
 * cannot be rendered or read. Takes the document's lock for the render only. */
GPtrArray  *fm_scan_detect_page (FmDocument     *doc,
                                 int             page_index,
                                 FmScanPageKind *kind,
                                 GError        **error);

/* Where a page's regions came from: the CLI's JSON ("analysis") and the
 * window's status say it. */
typedef enum {
  FM_PAGE_SOURCE_TEXT_LAYER,   /* fm_detect_page on the PDF's text          */
  FM_PAGE_SOURCE_PIXELS,       /* fm_scan_detect_page: no text layer        */
  FM_PAGE_SOURCE_BLANK,        /* no text layer and no ink                  */
} FmPageSource;

/* "text layer", "pixels", "blank". */
const char *fm_page_source_to_string (FmPageSource source);

/* fm_detect_page, and for a page without a text layer fm_scan_detect_page:
 * every page gets regions, an empty list when blank, or an error. With
 * options->rule FM_DETECT_RULE_PDFMATHTRANSLATE (the bench's baseline) a
 * scanned page is read by Tesseract alone: its non-dictionary words are
 * the formulas, no ink analysis. */
GPtrArray  *fm_detect_page_any (FmDocument            *doc,
                                int                    page_index,
                                const FmDetectOptions *options,
                                FmPageSource          *source,
                                GError               **error);

/* How many pages to detect at once (the window and the CLI): the processors,
 * at most 4, since each thread holds a Tesseract instance of about 30 MB once
 * it has read a scanned page; FM_DETECT_THREADS=N sets it (1: one page after
 * the other). */
guint       fm_detect_thread_count (void);

G_END_DECLS
