/* fm-scan.c - formulas on pages without a text layer (fm-scan.h). */
#include "fm-scan.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "fm-document.h"
#include "fm-geometry.h"

#ifdef FM_HAVE_TESSERACT
#include <dlfcn.h>
#include <tesseract/capi.h>

#include "fm-scan-words.h"
#include "fm-scan-words-multi.h"
#include "fm-scan-words-context.h"
#include "fm-scan-gaps.h"
#include "fm-glyph-net.h"
#endif

/* Ink components smaller than this many square points are specks (scanner
 * noise, JPEG ringing): an i's dot at 8 pt is about 0.8 x 0.8 pt. */
#define SPECK_AREA_PT2 0.35
/* A render larger than this is analysed at a lower resolution: Tesseract's
 * memory grows with the image (a 20000 x 20000 px scan at 150 dpi of its
 * page size would be 400 M pixels). */
#define MAX_ANALYSIS_PIXELS (24 * 1024 * 1024)
/* A page's strokes are thin (a light copy) when under this share of its
 * ink pixels have ink on all four sides (development twins: 0.02-0.06 on
 * the three light copies, 0.19-0.47 on the 17 others; ink_gap). */
#define INK_THIN_INTERIOR 0.1
/* A page was not read when under this share of its ink is in text words
 * (development twins: 0.29 and 0.54 on the two whose prose Tesseract
 * mostly missed, 0.79-0.92 on the 18 others; cluster_not_formula). */
#define READ_SHARE_POOR 0.7
/* A cluster whose every piece is smaller than this, em, is specks. */
#define SPECK_PIECE_EM 0.3
/* A subscript's glyph sits this much lower than its base's, em, at its
 * bottom and its top (word_subscript_pair). */
#define SUBSCRIPT_DROP_EM 0.08
/* A letter's glyph fills at most this share of its box, a filled blotch
 * (a bullet's disc 0.79, a square 1) more: the development twins' letters
 * read as symbols were 0.54-0.60 inked (cluster_not_formula). */
#define LETTER_INKED_MAX 0.7
/* A one-symbol word read at this confidence or more is the symbol it
 * reads as: "§" in "see § 3" at 93 (review probe of scan14q). Of the 19
 * one-letter formulas of the development twins (seeds 2016 and 2017, both
 * resolutions) read as a symbol ("@", "¢", "&", "¥", "«"), 18 were read at
 * 9-89, one theta at 91 (150 dpi); the probe's theta read "@" at 91-93 on
 * 6 of 8 twins (scan seeds 10120-10123): confidence does not keep them
 * apart there, and those are lost (docs/scanned.md). */
#define SYMBOL_LETTER_CONF 90
/* A superscript raised after ink this wide or wider, em, follows a
 * number, a footnote mark ("86^4": two digits are 1 em), not one glyph
 * (cluster_scripted). Counting pieces instead (two at most) lost b^3 in
 * four pieces and \frac{\alpha}{c} in five, broken by binarisation
 * (development twins 2017-04 at 300 dpi, 2017-01 at 150 dpi). */
#define SCRIPT_BASE_MAX_EM 0.8
/* cluster_stacked: a fraction's numerator and denominator are letters or
 * digits of script size (an x-height letter is 0.3 em there, less what a
 * binarisation takes off; a dot or a speck is smaller), this far apart
 * with the bar between them; without a bar piece of their own, this tall
 * together (one of them took the bar; TeX's text-style fraction spans
 * about 1.05 em, from 0.7 em above the baseline to 0.35 below) or this far
 * apart (the bar lost; a digit is 0.65 em tall, and on a page whose
 * strokes are not thin it does not break so). */
#define SCRIPT_PIECE_EM 0.2
#define FRACTION_GAP_EM 0.08
#define FRACTION_SPAN_EM 0.9
#define FRACTION_OPEN_GAP_EM 0.2
/* word_function_word: the confidence from which a function word Tesseract
 * found in its dictionary is prose whatever the classifier says. */
#define FUNCTION_WORD_CONF 50
/* How near a hyphenated piece ends to its column's right edge, em
 * (word_hyphen_piece). */
#define HYPHEN_EDGE_EM 0.3
/* A footnote's line under its rule (word_under_footnote_rule): the rule's
 * left end within this of the line's start, em (the mark is set in by
 * about 1 em), and the line at most this far under it, em (three footnote
 * lines of small type). */
#define FOOTNOTE_RULE_INDENT_EM 2.0
#define FOOTNOTE_BLOCK_EM 4.0

typedef struct {
  double x0, y0, x1, y1;
} Box;

typedef struct {
  Box img;          /* in the render, pixels                                 */
  Box b;            /* deskewed frame                                        */
  int area;
  int word;         /* index of the word it belongs to, -1 none              */
  gboolean text;    /* inside a running-text word                            */
  gboolean seed;    /* math evidence (not a word, or a word that is no text) */
  int cluster;
  int band;         /* the text line its middle lies on, -1 none             */
  int near;         /* that line, else the one nearest its middle (< 1 em)   */
  double near_d;    /* how far its middle is from that line, px              */
  gboolean lone_rule; /* a rule that takes nothing stacked on it (page_lone_rules) */
  int group;        /* its group of ink before page_split_word_spaces cut it */
} Comp;

typedef struct {
  Box img;
  Box b;
  float conf;
  char *utf8;
  gboolean dict;
  gboolean text;    /* running text                                          */
  gboolean strong;  /* text that math is not misread as (3+ letters, or a
                     * sure dictionary word of two)                        */
  gboolean number;  /* reads like an equation number                         */
  gboolean digits;  /* digits only (a page number, a count in the prose)      */
  gboolean citation; /* "[12]", "[3, 7]": prose, never a formula             */
  gboolean misread; /* digits no taller than an x-height letter: letters
                     * read as digits ("n" as "1"), math               */
  int band;
  /* For the word classifier (fm-scan-words.h): the rules' verdict before
   * the line groups, and the line group the word is in. */
  gboolean text0;
  gboolean on_band;
  float group_text_frac;
  int group_words, group_strong;
  float p_math;     /* the classifier's probability that it is math, -1 none */
} Word;

/* CPU time of the calling thread, microseconds (the debug output's stage
 * times: on a loaded machine wall time says more about the load). */
static gint64
thread_cpu_us (void)
{
  struct timespec ts;
  if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return (gint64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static double
box_w (const Box *b)
{
  return b->x1 - b->x0;
}

static double
box_h (const Box *b)
{
  return b->y1 - b->y0;
}

/* Whether (x, y) lies in b, its edges included. */
static gboolean
box_holds (const Box *b, double x, double y)
{
  return x >= b->x0 && x <= b->x1 && y >= b->y0 && y <= b->y1;
}

static void
box_union (Box *a, const Box *b)
{
  a->x0 = MIN (a->x0, b->x0);
  a->y0 = MIN (a->y0, b->y0);
  a->x1 = MAX (a->x1, b->x1);
  a->y1 = MAX (a->y1, b->y1);
}

/* The box around b's corners turned by angle (radians) about (cx, cy). */
static Box
box_turn (const Box *b, double angle, double cx, double cy)
{
  double c = cos (angle), s = sin (angle);
  double xs[4] = { b->x0, b->x1, b->x0, b->x1 }, ys[4] = { b->y0, b->y0, b->y1, b->y1 };
  Box r = { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };

  if (angle == 0)
    return *b;
  for (int i = 0; i < 4; i++)
    {
      double dx = xs[i] - cx, dy = ys[i] - cy;
      double x = cx + dx * c - dy * s, y = cy + dx * s + dy * c;
      r.x0 = MIN (r.x0, x);
      r.y0 = MIN (r.y0, y);
      r.x1 = MAX (r.x1, x);
      r.y1 = MAX (r.y1, y);
    }
  return r;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *v, int n)
{
  if (n == 0)
    return 0;
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Otsu's threshold of the render, kept within [64, 200] so that a page of
 * nearly one gray (blank paper, one photo) does not split its noise;
 * *gray_paper: the page's median is darker than white paper (below 250:
 * a gray scan, not a 1-bit one). */
static int
ink_threshold (const FmGrayImage *img, gboolean *gray_paper)
{
  guint64 hist[256] = { 0 }, total = 0;
  double sum = 0, sum_b = 0, best = -1;
  guint64 w_b = 0;
  int t_best = 128;

  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++)
      hist[img->pixels[y * img->stride + x]]++;
  for (int i = 0; i < 256; i++)
    {
      total += hist[i];
      sum += (double) i * hist[i];
    }
  for (int t = 0; t < 256; t++)
    {
      double m_b, m_f, between;
      w_b += hist[t];
      if (w_b == 0 || w_b == total)
        continue;
      sum_b += (double) t * hist[t];
      m_b = sum_b / w_b;
      m_f = (sum - sum_b) / (total - w_b);
      between = (double) w_b * (total - w_b) * (m_b - m_f) * (m_b - m_f);
      if (between > best)
        {
          best = between;
          t_best = t;
        }
    }
  /* On gray paper, no darker than halfway between the ink (the darkest
   * 1 % of the page) and the paper (its median): on gray, noisy paper (a
   * JPEG'd copy in uneven light) Otsu's level falls inside the paper's
   * own noise, and its specks became ink (9120 pieces on a development
   * page, 2552 with this) and, for Tesseract, parts of its words
   * (scan_clean_paper). White paper (a 1-bit scan, whose enlargement's
   * grays are its strokes' edges) keeps Otsu's level: halfway thinned a
   * light copy's strokes at 150 dpi (development twins). */
  {
    guint64 cum = 0;
    int p1 = -1, p50 = -1;
    for (int i = 0; i < 256; i++)
      {
        cum += hist[i];
        if (p1 < 0 && cum * 100 >= total)
          p1 = i;
        if (p50 < 0 && cum * 2 >= total)
          p50 = i;
      }
    *gray_paper = p50 < 250 && g_strcmp0 (g_getenv ("FM_SCAN_PAPER"), "otsu") != 0;
    if (*gray_paper)
      t_best = MIN (t_best, (p1 + p50) / 2);
  }
  return CLAMP (t_best, 64, 200);
}

/* How far apart side by side the ink pieces of one glyph may be: 2 px on
 * a page whose strokes are thin (a light copy's threshold near the ink
 * broke its hairlines, leaving a letter as stems and specks, an operator
 * as dots), else 0. Thin: under INK_THIN_INTERIOR of the ink pixels have
 * ink on all four sides. FM_SCAN_INK_GAP=N sets it. */
static int
ink_gap (const FmGrayImage *img, int threshold)
{
  const char *env = g_getenv ("FM_SCAN_INK_GAP");
  guint64 ink = 0, interior = 0;

  if (env && *env)
    return CLAMP (atoi (env), 0, 8);
  for (int y = 1; y + 1 < img->height; y++)
    {
      const guint8 *r = img->pixels + (gsize) y * img->stride;
      const guint8 *up = r - img->stride, *down = r + img->stride;
      for (int x = 1; x + 1 < img->width; x++)
        if (r[x] < threshold)
          {
            ink++;
            if (r[x - 1] < threshold && r[x + 1] < threshold && up[x] < threshold && down[x] < threshold)
              interior++;
          }
    }
  if (g_getenv ("FM_DETECT_DEBUG"))
    g_printerr ("scan: ink interior %.3f\n", ink ? (double) interior / ink : 0.0);
  return ink > 0 && (double) interior / ink < INK_THIN_INTERIOR ? 2 : 0;
}

static void
uf_join (int *parent, int a, int b)
{
  a = fm_uf_find (parent, a);
  b = fm_uf_find (parent, b);
  if (a != b)
    parent[MAX (a, b)] = MIN (a, b);
}

/* A horizontal run of ink pixels [x0, x1) on row y, and its provisional
 * component. */
typedef struct {
  int y, x0, x1, label, area;
} InkRun;

/* 8-connected components of pixels darker than threshold, at least
 * min_area pixels each, in the order of their first pixel (row by row);
 * with gap > 0, ink less than gap + 1 pixels apart side by side is one
 * component (a light copy's broken strokes, ink_gap).
 * Labelled by runs, not pixels: a label per pixel was 4 bytes a pixel of
 * fresh memory (8 MB for a letter page at 150 dpi), whose page faults
 * cost more than the labelling (40 of 45 ms). */
static GArray *
ink_components (const FmGrayImage *img, int threshold, int min_area, int gap)
{
  int w = img->width, h = img->height;
  g_autoptr(GArray) runs = g_array_new (FALSE, FALSE, sizeof (InkRun));
  GArray *parent = g_array_new (FALSE, FALSE, sizeof (int));
  GArray *comps = g_array_new (FALSE, TRUE, sizeof (Comp));
  g_autofree int *root_to_comp = NULL;
  guint prev_start = 0, prev_end = 0;
  int n = 0;

  for (int y = 0; y < h; y++)
    {
      const guint8 *row = img->pixels + (gsize) y * img->stride;
      guint cur_start = runs->len, k = prev_start;
      for (int x = 0; x < w;)
        {
          InkRun r;
          if (row[x] >= threshold)
            {
              x++;
              continue;
            }
          r.y = y;
          r.x0 = x;
          r.area = 0;
          for (;;)
            {
              int x_end;
              while (x < w && row[x] < threshold)
                {
                  x++;
                  r.area++;
                }
              r.x1 = x;
              /* Bridge a gap of up to gap pixels to the next ink. */
              for (x_end = x; x_end < w && x_end <= r.x1 + gap && row[x_end] >= threshold; x_end++)
                ;
              if (gap <= 0 || x_end >= w || x_end > r.x1 + gap || x_end == x)
                break;
              x = x_end;
            }
          r.label = -1;
          /* Runs of the row above touching this one, diagonals included:
           * pixels p0..p1-1 and x0..x1-1 touch when p0 <= x1 and p1 >= x0
           * (within gap pixels when bridging). */
          while (k < prev_end && g_array_index (runs, InkRun, k).x1 + gap < r.x0)
            k++;
          for (guint m = k; m < prev_end && g_array_index (runs, InkRun, m).x0 <= r.x1 + gap; m++)
            {
              int l = g_array_index (runs, InkRun, m).label;
              if (r.label < 0)
                r.label = l;
              else
                uf_join ((int *) parent->data, r.label, l);
            }
          if (r.label < 0)
            {
              g_array_append_val (parent, n);
              r.label = n++;
            }
          g_array_append_val (runs, r);
        }
      prev_start = cur_start;
      prev_end = runs->len;
    }
  root_to_comp = g_new (int, n + 1);
  for (int i = 0; i < n; i++)
    root_to_comp[i] = -1;
  for (guint i = 0; i < runs->len; i++)
    {
      const InkRun *run = &g_array_index (runs, InkRun, i);
      int r = fm_uf_find ((int *) parent->data, run->label);
      Comp *c;
      if (root_to_comp[r] < 0)
        {
          Comp nc = { { run->x0, run->y, run->x1, run->y + 1 }, { 0 }, 0, -1, FALSE, FALSE, -1, -1 };
          root_to_comp[r] = (int) comps->len;
          g_array_append_val (comps, nc);
        }
      c = &g_array_index (comps, Comp, root_to_comp[r]);
      c->img.x0 = MIN (c->img.x0, run->x0);
      c->img.x1 = MAX (c->img.x1, run->x1);
      c->img.y1 = MAX (c->img.y1, run->y + 1);
      c->area += run->area;
    }
  g_array_unref (parent);
  for (guint i = comps->len; i-- > 0;)
    if (g_array_index (comps, Comp, i).area < min_area)
      g_array_remove_index_fast (comps, i);
  return comps;
}

gboolean
fm_scan_have_ocr (void)
{
#ifdef FM_HAVE_TESSERACT
  return TRUE;
#else
  return FALSE;
#endif
}

/* "[12]", "[3, 7]." read with any of the brackets a scan makes of its
 * square ones: a JPEG's "[13]." was read "{13}." and "[10]:" "{10}:"
 * (development twins, seed 2012; also "{10]:"), each boxed as a formula.
 * References are numbered from 1, so a list that starts with 0 is math
 * ("[0,1]", "(0,1)", "{0,1}"); and a brace holds one number only: "{1,2}"
 * is a set far more often than a misread "[1,2]". */
gboolean
fm_scan_reads_like_citation (const char *s)
{
  static GRegex *re;
  if (g_once_init_enter (&re))
    g_once_init_leave (&re, g_regex_new ("^([\\[(|{][1-9lI][0-9lI]{0,2}[\\])|}]|"
                                         "[\\[(|][1-9lI][0-9lI]{0,2}([,-][0-9lI]{1,3})+[\\])|])[.,;:]?$", 0, 0, NULL));
  return g_regex_match (re, s, 0, NULL);
}

/* Whether the ink darker than threshold in the box [x0, x1) x [y0, y1) of
 * a gray image is one straight stroke that falls by slope (dy/dx, y down)
 * to the right: in each tenth of the box's width the middles of the
 * columns' ink, the slope taken out, lie within tol of each other's (a
 * rule turned with a skewed page). A wide tilde's or an arc's middles
 * curve off the line and a hat's turn back. Columns with no ink or with
 * more than one run (another piece's ink in the box, a speck) are left
 * out; a tenth with none left fails. Public for the tests. */
gboolean
fm_scan_stroke_along (const guint8 *pixels, int stride, int threshold, int x0, int y0, int x1, int y1,
                      double slope, double tol)
{
  double lo = G_MAXDOUBLE, hi = -G_MAXDOUBLE;
  int w = x1 - x0;

  if (w < 10 || y1 <= y0)
    return FALSE;
  for (int s = 0; s < 10; s++)
    {
      double sum = 0;
      int n = 0;
      for (int x = x0 + s * w / 10; x < x0 + (s + 1) * w / 10; x++)
        {
          int top = -1, bottom = -1, runs = 0;
          gboolean in = FALSE;
          for (int y = y0; y < y1; y++)
            {
              gboolean ink = pixels[(gsize) y * stride + x] < threshold;
              runs += ink && !in;
              if (ink && top < 0)
                top = y;
              if (ink)
                bottom = y;
              in = ink;
            }
          if (runs != 1)
            continue;
          sum += (top + bottom + 1) / 2.0 - slope * (x - x0);
          n++;
        }
      if (n == 0)
        return FALSE;
      lo = MIN (lo, sum / n);
      hi = MAX (hi, sum / n);
    }
  return hi - lo <= tol;
}

#ifdef FM_HAVE_TESSERACT
/* Debian's Tesseract runs its LSTM in OpenMP teams of a fixed size
 * (num_threads(4) clauses) around work of a few microseconds (one time
 * step's gates). On a loaded machine (2 cores shared with the recognition
 * engine and other programs) threads that spin while waiting for each other
 * read a page in 6-20 s where one thread takes 1.1 s (docs/scanned.md).
 * OpenMP's dynamic adjustment caps the team by the load average, but asks
 * the kernel for it (sysinfo, the affinity mask) at every one of those
 * regions: a tenth of the page's CPU time in perf. With no active level
 * allowed (omp_set_max_active_levels (0), OpenMP 5) every region runs on
 * the calling thread without a system call: the page's CPU time is the
 * LSTM's. Looked up at run time because libgomp comes with libtesseract
 * (when that was built with OpenMP at all) and is not a dependency of
 * ours. It holds for the calling thread only (libgomp keeps it with the
 * thread's other settings), so every thread that reads calls it (our BLAS
 * and engine use pthreads, not OpenMP). OMP_THREAD_LIMIT=1 in the
 * environment does the same. */
static void
tess_single_thread (void)
{
  void (*set_levels) (int) = (void (*) (int)) dlsym (RTLD_DEFAULT, "omp_set_max_active_levels");
  void (*set_dynamic) (int) = (void (*) (int)) dlsym (RTLD_DEFAULT, "omp_set_dynamic");
  if (set_levels != NULL)
    set_levels (0);
  else if (set_dynamic != NULL)
    set_dynamic (1);
}

/* Tesseract instances, one per thread reading a page at the same time
 * (an instance is not thread-safe; instances in different threads are
 * independent): formulate-cli detects pages on several threads
 * (app/document/fm-page-queue.c). Loading the English model costs about
 * half of reading a page (0.3-0.5 s of CPU: the model file, the universal
 * ambiguities' sorted lists), so an instance is kept for the process and
 * handed to the next page, and a page that starts without one for it has
 * one loaded on another thread while it is rendered (tess_begin_page): on
 * two cores the load no longer adds to the first page's time. There are
 * never more instances than the pages read at once. */
static GMutex tess_lock;        /* guards the fields below               */
static GCond tess_cond;         /* an instance given back or loaded      */
static GPtrArray *tess_free;
static int tess_pages;          /* pages between begin and end           */
static int tess_held;           /* instances taken and not given back    */
static int tess_loading;        /* instances being loaded by tess_load_thread */
static gboolean tess_failed;
/* Made one at a time: "debug_file" is one of Tesseract's global
 * parameters, not the instance's. */
static GMutex tess_init_lock;

/* FM_SCAN_TESS_VARS="name=value;name=value": Tesseract variables set on
 * every instance, for measuring them in the pipeline (docs/scanned.md,
 * Speed); a name Tesseract does not know is reported once per instance. */
static void
tess_set_env_variables (TessBaseAPI *api)
{
  const char *env = g_getenv ("FM_SCAN_TESS_VARS");
  g_auto(GStrv) pairs = env ? g_strsplit (env, ";", -1) : NULL;

  for (int i = 0; pairs && pairs[i]; i++)
    {
      g_auto(GStrv) kv = g_strsplit (pairs[i], "=", 2);
      if (kv[0] && *kv[0] && kv[1] && !TessBaseAPISetVariable (api, kv[0], kv[1]))
        g_printerr ("FM_SCAN_TESS_VARS: Tesseract has no variable %s\n", kv[0]);
    }
}

static TessBaseAPI *
tess_new (void)
{
  TessBaseAPI *api;

  g_mutex_lock (&tess_init_lock);
  api = TessBaseAPICreate ();
  /* LSTM only: Debian's eng.traineddata has no legacy model. */
  if (TessBaseAPIInit2 (api, NULL, "eng", OEM_LSTM_ONLY) != 0)
    {
      TessBaseAPIDelete (api);
      api = NULL;
    }
  else
    {
      TessBaseAPISetVariable (api, "debug_file", "/dev/null");
      /* A text line whose LSTM outputs are unsure (mean under
       * invert_threshold, 0.7) is read a second time inverted, for white
       * text on black: on the development twins a math line's reading
       * (19 of 292 and 18 of 150 of the lines read on two of them), never
       * white text on a scanned page. Off: Tesseract's thread CPU on the
       * twins of seeds 2040-2041 fell by about a tenth (the sums 23.0 ->
       * 18.9 s at 300 dpi and 22.5 -> 19.2 s at 150, the other stages
       * 5-9 % lower in the same runs: the load), the scores the same but
       * one inline box at 300 dpi (inline P 0.769 -> 0.767). */
      TessBaseAPISetVariable (api, "tessedit_do_invert", "0");
      tess_set_env_variables (api);
    }
  g_mutex_unlock (&tess_init_lock);
  return api;
}

static gpointer
tess_load_thread (gpointer data)
{
  TessBaseAPI *api = tess_new ();

  g_mutex_lock (&tess_lock);
  if (api != NULL)
    g_ptr_array_add (tess_free, api);
  else
    tess_failed = TRUE;
  tess_loading--;
  g_cond_broadcast (&tess_cond);
  g_mutex_unlock (&tess_lock);
  return NULL;
}

/* One page's reading split between two instances (split_cut): on two
 * cores a lone page's OCR, nine tenths of its analysis, then takes about
 * the time of its larger part. Only for a page read alone (with other
 * pages in flight the cores are busy with theirs; its parts are then read
 * one after the other on its one instance, the same words) and on a
 * machine with two processors or more. On by default since 2026-11-28
 * (tessspeed): on the development twins (make-truth seeds 2040-2041, 300
 * and 150 dpi) the parts' thread CPU was 609 and 547 ms (medians) where
 * the whole page's was 1301 ms, and the scores held (300 dpi display P/R
 * 0.864/0.885 -> 0.912/0.852, inline 0.756/0.699 -> 0.769/0.703; 150 dpi
 * equal but inline P +0.002). It was off from 2026-11-26: scored once on
 * fresh twins together with the ink's skew, the two lost inline P, and
 * on this VM it gained no wall time, which is the VM's scheduler: every
 * session's processes share one autogroup's CPU however many threads
 * they run (docs/scanned.md, Speed). FM_SCAN_SPLIT=0 reads pages whole,
 * =serial reads the parts one after the other on one instance. */
static gboolean
tess_split_wanted (void)
{
  const char *split = g_getenv ("FM_SCAN_SPLIT");
  return g_strcmp0 (split, "0") != 0 && g_get_num_processors () >= 2;
}

/* A page is read in two parts (read_page_parts) only when its image is
 * this tall or more. */
#define SPLIT_MIN_INCHES 4.0

/* Whether an image height_px tall at dpi may be read in two parts: the one
 * test for the preload (tess_begin_page, before the page is rendered) and
 * for the reading (read_page_parts), both in the analysis image's pixels;
 * the preload's was in page points and the reading's in pixels (review of
 * scanfix10). */
static gboolean
tall_enough_to_split (double height_px, double dpi)
{
  return height_px >= SPLIT_MIN_INCHES * dpi;
}

/* A page with ink may need an instance: where none is free or loading for
 * it, one is loaded on a thread of its own while the page renders
 * (FM_SCAN_PRELOAD=0: on the page's thread when it needs it, as before
 * 2026-11-26). may_split: the page is tall enough to be read in two parts
 * (SPLIT_MIN_INCHES); a smaller one (a crop, a formula's snapshot) never
 * is, and a second instance loaded for it was 0.3-0.5 s of CPU spent on
 * the other core for nothing (review of tessspeed). */
static void
tess_begin_page (gboolean may_split)
{
  g_mutex_lock (&tess_lock);
  if (tess_free == NULL)
    tess_free = g_ptr_array_new ();
  tess_pages++;
  /* A page read alone gets a second instance for its split reading. */
  int wanted = tess_pages - tess_held + (tess_pages == 1 && may_split && tess_split_wanted () ? 1 : 0);
  while (!tess_failed && g_strcmp0 (g_getenv ("FM_SCAN_PRELOAD"), "0") != 0 &&
         (int) tess_free->len + tess_loading < wanted)
    {
      GThread *t = g_thread_try_new ("fm-tesseract-load", tess_load_thread, NULL, NULL);
      if (t == NULL)
        break;
      tess_loading++;
      g_thread_unref (t);
    }
  g_mutex_unlock (&tess_lock);
}

/* A page done waits for the loads under way (its own, when it was blank
 * and needed none): no load outlives the pages, so none is still running
 * when the program exits and libtesseract's static objects go. */
static void
tess_end_page (void)
{
  g_mutex_lock (&tess_lock);
  tess_pages--;
  while (tess_loading > 0)
    g_cond_wait (&tess_cond, &tess_lock);
  g_mutex_unlock (&tess_lock);
}

static TessBaseAPI *
tess_take (GError **error)
{
  TessBaseAPI *api = NULL;

  g_mutex_lock (&tess_lock);
  if (tess_free == NULL)
    tess_free = g_ptr_array_new ();
  /* An instance loading may be this page's: wait for it rather than load
   * a second one. */
  while (tess_free->len == 0 && tess_loading > 0)
    g_cond_wait (&tess_cond, &tess_lock);
  if (tess_free->len > 0)
    api = g_ptr_array_steal_index (tess_free, tess_free->len - 1);
  g_mutex_unlock (&tess_lock);
  if (api == NULL && !tess_failed)
    api = tess_new ();
  g_mutex_lock (&tess_lock);
  if (api != NULL)
    tess_held++;
  else
    tess_failed = TRUE;
  g_mutex_unlock (&tess_lock);
  if (api == NULL)
    g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NO_TEXT_LAYER,
                 "Tesseract's English data could not be loaded (Debian: tesseract-ocr-eng)");
  return api;
}

/* A second instance for the page being read, or NULL: a free one, or the
 * one tess_begin_page is loading for it; never one loaded here (that
 * would cost more than the split saves). */
static TessBaseAPI *
tess_take_extra (void)
{
  TessBaseAPI *api = NULL;

  g_mutex_lock (&tess_lock);
  if (tess_free != NULL && tess_pages == 1 && g_strcmp0 (g_getenv ("FM_SCAN_SPLIT"), "serial") != 0)
    {
      /* Another page may begin while this one waits: the instance loading
       * is then that page's own, not a spare for the split. */
      while (tess_free->len == 0 && tess_loading > 0 && tess_pages == 1)
        g_cond_wait (&tess_cond, &tess_lock);
      if (tess_free->len > 0 && tess_pages == 1)
        {
          api = g_ptr_array_steal_index (tess_free, tess_free->len - 1);
          tess_held++;
        }
    }
  g_mutex_unlock (&tess_lock);
  return api;
}

static void
tess_give (TessBaseAPI *api)
{
  g_mutex_lock (&tess_lock);
  tess_held--;
  g_ptr_array_add (tess_free, api);
  g_cond_broadcast (&tess_cond);
  g_mutex_unlock (&tess_lock);
}

static gboolean
letters_only (const char *s, int *n_letters)
{
  const char *p = s;
  int n = 0, core_end = 0;

  /* Leading quote/bracket and trailing sentence punctuation are prose's. */
  /* Opening quotes and brackets (Tesseract reads a paragraph's first
   * letter's serif as ‘ now and then). */
  while (*p && (strchr ("\"'(", *p) || g_str_has_prefix (p, "\u2018") || g_str_has_prefix (p, "\u201c")))
    p = g_utf8_next_char (p);
  for (; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      if (g_unichar_isalpha (c) && c < 0x370)
        {
          if (core_end)
            return FALSE;
          n++;
        }
      else if (c == '-' || c == '\'' || c == 0x2019)
        {
          if (core_end)
            return FALSE;
        }
      else if (strchr (".,;:!?)\"", (int) c) && c < 128)
        core_end = 1;
      else if (n >= 3 && !g_unichar_isalnum (c))
        core_end = 1;  /* a footnote mark after a word ("Also¹" read as "Also’") */
      else
        return FALSE;
    }
  *n_letters = n;
  return n > 0;
}

/* The operator names of amsmath (\log, \sin, \max ...), as Tesseract
 * reads them; a sentence's punctuation after one is allowed. */
static const char *const operator_names[] = {
  "arccos", "arcsin", "arctan", "arg", "cos", "cosh", "cot", "coth", "csc", "deg", "det", "dim",
  "exp", "gcd", "hom", "inf", "ker", "lg", "lim", "liminf", "limsup", "ln", "log", "max", "min",
  "mod", "sec", "sin", "sinh", "sup", "tan", "tanh", NULL
};

static gboolean
is_operator_name (const char *s)
{
  gsize n = strcspn (s, ".,;:)");
  for (int i = 0; operator_names[i]; i++)
    if (strlen (operator_names[i]) == n && strncmp (s, operator_names[i], n) == 0)
      return TRUE;
  return FALSE;
}

/* is_operator_name allowing Tesseract's usual misreads of a leading l
 * (\ln read "In", \lg "Ig" or "1g" in newtx at 300 and 150 dpi). */
static gboolean
reads_operator_name (const char *s)
{
  char buf[16];

  if ((s[0] == 'I' || s[0] == '1' || s[0] == '|') && strlen (s) < sizeof buf)
    {
      g_strlcpy (buf, s, sizeof buf);
      buf[0] = 'l';
      if (is_operator_name (buf))
        return TRUE;
    }
  return is_operator_name (s);
}

/* A word read as a function applied, a name and its opening parenthesis
 * with no space between: "f(x)", "O(nlogn)", "tan(40", "span(T)" - a
 * name of at most four letters or an operator name (reads_operator_name),
 * then "(" and something after it, but not a plural's "(s)" ("value(s)").
 * Prose never sets a parenthesis against a word, so the nets' reading of
 * such a word as prose is a misread of its pixels: on the training twins'
 * word dumps (4000-4109, all five kinds of copy) 2268 such words are math
 * and 1 is not, and on development twins the nets left some under 0.5
 * ("det(k" 0.35, "span(T)" 0.41, "tan(40" 0.43, "O(ntog" 0.46 on 2083 and
 * 2084). Such a word is given FUNCTION_APPLICATION_P at least (2026-11-29:
 * dev inline P/R 0.780/0.791 -> 0.781/0.793, five formulas won, none lost).
 * Public for the tests. */
#define FUNCTION_APPLICATION_P 0.9f

gboolean
fm_scan_reads_function_application (const char *s)
{
  char name[8];
  gsize n = 0;

  while (g_ascii_isalpha (s[n]) && n < sizeof name - 1)
    n++;
  if (n == 0 || s[n] != '(' || s[n + 1] == '\0')
    return FALSE;
  memcpy (name, s, n);
  name[n] = '\0';
  if (n > 4 && !reads_operator_name (name))
    return FALSE;
  s += n + 1;
  if (g_str_has_prefix (s, "s)") || g_str_has_prefix (s, "es)"))
    return FALSE;
  return TRUE;
}

/* A word read surely (LONE_LETTER_CONF) as one lowercase letter other
 * than the words "a" and "i", a sentence's mark after it allowed: prose
 * has no such word but a letter of a broken word, and math has many. The
 * nets gave some a prose verdict all the same: an italic m read "m" at
 * 83 beside prose at 0.18, "y." at 79 at 0.16 (development twins 2083,
 * heavy Century-like type; 232 of 242 such words on three sets of them
 * were math). Such a word is given LONE_LETTER_P at least (2026-11-29:
 * dev inline P/R 0.781/0.793 -> 0.780/0.796, seven formulas won, none
 * lost). Public for the tests. */
#define LONE_LETTER_CONF 70
#define LONE_LETTER_P 0.6f

gboolean
fm_scan_reads_lone_letter (const char *s)
{
  return s[0] >= 'b' && s[0] <= 'z' && s[0] != 'i' && (s[1] == '\0' || (strchr (".,;:", s[1]) && s[2] == '\0'));
}

/* "(3)", "(3.1)", "(2a)", "(A.1)", "(iv)", "(*)" as Tesseract reads them. */
static gboolean
reads_like_number (const char *s)
{
  static GRegex *re;
  if (g_once_init_enter (&re))
    g_once_init_leave (&re, g_regex_new ("^[(\\[{|]([0-9IlO]{1,3}([.][0-9IlO]{1,3})?[a-z]?|[A-Z][.][0-9]{1,3}|[ivx]{1,4}|[*])[)\\]}|]$",
                                         0, 0, NULL));
  return g_regex_match (re, s, 0, NULL);
}

/* A block of Tesseract's layout: a picture block's reading is one blank
 * word over it (read_words). */
typedef struct {
  Box box;
  gboolean picture;
} ReadBlock;

/* Appends the words of the last recognition to words, the angles of its
 * long text lines' baselines to angles, and the boxes of the blocks it
 * read to blocks when not NULL. */
static void
collect_words (TessBaseAPI *api, const FmGrayImage *img, GArray *words, GArray *angles, GArray *blocks,
               int dy)
{
  TessResultIterator *ri = TessBaseAPIGetIterator (api);
  TessPageIterator *pi;

  if (ri == NULL)
    return;
  pi = TessResultIteratorGetPageIterator (ri);
  if (blocks != NULL)
    {
      TessPageIteratorBegin (pi);
      do
        {
          int l, t, r, b;
          TessPolyBlockType type = TessPageIteratorBlockType (pi);
          if (TessPageIteratorBoundingBox (pi, RIL_BLOCK, &l, &t, &r, &b))
            {
              ReadBlock block = { { l, t + dy, r, b + dy },
                                  type == PT_FLOWING_IMAGE || type == PT_HEADING_IMAGE ||
                                  type == PT_PULLOUT_IMAGE };
              g_array_append_val (blocks, block);
            }
        }
      while (TessPageIteratorNext (pi, RIL_BLOCK));
      TessPageIteratorBegin (pi);
    }
  do
    {
      int l, t, r, b, x1, y1, x2, y2;
      char *text;
      Word w = { { 0 } };

      if (TessPageIteratorIsAtBeginningOf (pi, RIL_TEXTLINE) &&
          TessPageIteratorBaseline (pi, RIL_TEXTLINE, &x1, &y1, &x2, &y2) &&
          x2 - x1 > img->width / 4)
        {
          double a = atan2 (y2 - y1, x2 - x1);
          g_array_append_val (angles, a);
        }
      if (!TessPageIteratorBoundingBox (pi, RIL_WORD, &l, &t, &r, &b))
        continue;
      text = TessResultIteratorGetUTF8Text (ri, RIL_WORD);
      w.img = (Box) { l, t + dy, r, b + dy };
      w.conf = TessResultIteratorConfidence (ri, RIL_WORD);
      w.utf8 = g_strdup (text ? text : "");
      w.dict = TessResultIteratorWordIsFromDictionary (ri);
      w.band = -1;
      w.p_math = -1;
      TessDeleteText (text);
      g_array_append_val (words, w);
    }
  while (TessResultIteratorNext (ri, RIL_WORD));
  TessResultIteratorDelete (ri);
}

/* A page read in two parts (read_page_parts) is cut along a gap between
 * two text lines, turned by the skew of its ink (ink_slope), where no
 * piece crosses the cut and the
 * larger part holds the least ink: its text lines are what Tesseract's
 * LSTM spends its time on, and their length is about the width of their
 * ink pieces. Each part is an image of its own, the other side of the cut
 * white: Tesseract reads every line once, whole, and the parts' reading
 * does not depend on whether they are read at once. A page whose larger
 * part would hold more than SPLIT_MAX_SHARE of the ink is read whole. */
#define SPLIT_MAX_DEG 3.0
#define SPLIT_MAX_SHARE 0.7

typedef struct {
  double slope;   /* the cut's rows: y = cut + slope * (x - width / 2) */
  int cut;
  int top_end;    /* the first part's rows are [0, top_end)           */
  int bottom_start; /* the second part's [bottom_start, height)       */
} SplitCut;

/* The turned row of a point: its row on the cut's frame. */
static double
turned_row (const FmGrayImage *img, double slope, double x, double y)
{
  return y - slope * (x - img->width / 2.0);
}

/* How sharply the middles of the ink pieces pile up on rows turned by
 * slope: the sum of the squares of each row's ink width. */
static double
slope_sharpness (const FmGrayImage *img, GArray *comps, double slope, double *rows, int pad)
{
  int n = img->height + 2 * pad;
  double sharp = 0;

  memset (rows, 0, sizeof (double) * n);
  for (guint i = 0; i < comps->len; i++)
    {
      const Comp *c = &g_array_index (comps, Comp, i);
      double y = turned_row (img, slope, (c->img.x0 + c->img.x1) / 2, (c->img.y0 + c->img.y1) / 2);
      rows[CLAMP ((int) y + pad, 0, n - 1)] += box_w (&c->img);
    }
  for (int y = 0; y < n; y++)
    sharp += rows[y] * rows[y];
  return sharp;
}

/* The page's skew from its ink: the slope (SPLIT_MAX_DEG at most, to
 * SKEW_FINE_DEG) at which the pieces' middles pile up on the fewest rows,
 * as text lines do when turned level. Tesseract's text lines gave the
 * skew before 2026-11-26 (the median of their baselines' angles), but a
 * light copy's broken strokes leave it few lines or none: 0.00 degrees
 * on two development pages turned 1.1 and 1.5 degrees (make-truth seed
 * 2004, twins 20040, pages 01 and 05), where this finds 1.10 and 1.50;
 * on the other 18 pages both are within 0.05 degrees of the truth. */
#define SKEW_COARSE_DEG 0.1
#define SKEW_FINE_DEG 0.02

static double
ink_slope (const FmGrayImage *img, GArray *comps)
{
  int n_steps = (int) lround (SPLIT_MAX_DEG / SKEW_COARSE_DEG);
  int pad = (int) ceil (img->width * tan (SPLIT_MAX_DEG * G_PI / 180)) + 1;
  g_autofree double *rows = g_new (double, img->height + 2 * pad);
  double best = -1, best_deg = 0, coarse;

  for (int k = -n_steps; k <= n_steps; k++)
    {
      double sharp = slope_sharpness (img, comps, tan (k * SKEW_COARSE_DEG * G_PI / 180), rows, pad);
      if (sharp > best)
        {
          best = sharp;
          best_deg = k * SKEW_COARSE_DEG;
        }
    }
  coarse = best_deg;
  for (int k = -4; k <= 4; k++)
    {
      double deg = coarse + k * SKEW_FINE_DEG;
      double sharp = k == 0 || fabs (deg) > SPLIT_MAX_DEG ? -1
                     : slope_sharpness (img, comps, tan (deg * G_PI / 180), rows, pad);
      if (sharp > best)
        {
          best = sharp;
          best_deg = deg;
        }
    }
  return tan (best_deg * G_PI / 180);
}

static gboolean
split_cut (const FmGrayImage *img, GArray *comps, double slope, SplitCut *cut)
{
  int h = img->height, pad = (int) ceil (img->width * tan (SPLIT_MAX_DEG * G_PI / 180)) + 1;
  int n = h + 2 * pad;
  g_autofree double *above = g_new0 (double, n + 1);  /* ink width of the pieces whose middle is above */
  g_autofree int *crossing = g_new0 (int, n + 1);     /* pieces crossing the row (as a difference array) */
  double best;
  double drift = fabs (slope) * img->width / 2;

  for (guint i = 0; i < comps->len; i++)
    {
      const Comp *c = &g_array_index (comps, Comp, i);
      double mx = (c->img.x0 + c->img.x1) / 2, half_h = box_h (&c->img) / 2;
      double y = turned_row (img, slope, mx, (c->img.y0 + c->img.y1) / 2);
      /* A piece's turned extent: its height and its width's drift. */
      double reach = half_h + fabs (slope) * box_w (&c->img) / 2 + 1;
      int r0 = CLAMP ((int) floor (y - reach) + pad, 0, n), r1 = CLAMP ((int) ceil (y + reach) + pad, 0, n);
      above[CLAMP ((int) y + pad + 1, 0, n)] += box_w (&c->img);
      crossing[r0]++;
      crossing[r1]--;
    }
  for (int y = 1; y <= n; y++)
    {
      above[y] += above[y - 1];
      crossing[y] += crossing[y - 1];
    }
  best = SPLIT_MAX_SHARE * above[n];
  cut->cut = -1;
  for (int y = pad; y < n - pad; y++)
    {
      double larger = MAX (above[y], above[n] - above[y]);
      if (crossing[y] == 0 && larger < best)
        {
          best = larger;
          cut->cut = y - pad;
        }
    }
  cut->slope = slope;
  cut->top_end = MIN (h, (int) ceil (cut->cut + drift) + 1);
  cut->bottom_start = MAX (0, (int) floor (cut->cut - drift));
  return cut->cut > 0 && cut->cut < h;
}

/* What one Tesseract instance reads of a page: rows [top, bottom) as an
 * image of their own, the other part's side of the cut white. */
typedef struct {
  TessBaseAPI *api;
  const FmGrayImage *img;
  double dpi;
  const SplitCut *cut;   /* NULL: the whole page */
  gboolean below;        /* the part below the cut */
  GArray *words, *angles, *blocks;
  gboolean ok;
  gint64 cpu_us;
} TessPart;

static gpointer
tess_read_part (gpointer data)
{
  TessPart *t = data;
  const FmGrayImage *img = t->img;
  gint64 c0 = thread_cpu_us ();
  int top = 0, bottom = img->height;
  g_autofree guint8 *part = NULL;

  /* On this thread too: libgomp keeps the setting with the thread. Without
   * it the second part's thread ran Tesseract's teams of four: 0.7-1.0 s
   * of its CPU where the same part read alone took 0.4-0.55 s, and the
   * process 1 s more of system time (spinning). */
  tess_single_thread ();

  TessBaseAPISetPageSegMode (t->api, PSM_AUTO);
  if (t->cut == NULL)
    TessBaseAPISetImage (t->api, img->pixels, img->width, img->height, 1, img->stride);
  else
    {
      top = t->below ? t->cut->bottom_start : 0;
      bottom = t->below ? img->height : t->cut->top_end;
      part = g_malloc ((gsize) img->width * (bottom - top));
      for (int y = top; y < bottom; y++)
        {
          guint8 *o = part + (gsize) (y - top) * img->width;
          memcpy (o, img->pixels + (gsize) y * img->stride, img->width);
          for (int x = 0; x < img->width; x++)
            if ((turned_row (img, t->cut->slope, x, y) < t->cut->cut) == t->below)
              o[x] = 255;
        }
      TessBaseAPISetImage (t->api, part, img->width, bottom - top, 1, img->width);
    }
  TessBaseAPISetSourceResolution (t->api, (int) lround (t->dpi));
  t->ok = TessBaseAPIRecognize (t->api, NULL) == 0;
  if (t->ok)
    collect_words (t->api, img, t->words, t->angles, t->blocks, top);
  /* Tesseract keeps the image it was given until the next: not this one. */
  if (part != NULL)
    TessBaseAPIClear (t->api);
  t->cpu_us = thread_cpu_us () - c0;
  return NULL;
}

/* Tesseract's reading of the page: whole, or in two parts (split_cut), at
 * once when a second instance is free, else one after the other; the
 * second part's thread CPU in *part_cpu_us (0 when not split). */
static gboolean
read_page_parts (TessBaseAPI *api, const FmGrayImage *img, GArray *comps, double slope, double dpi,
                 GArray *words, GArray *angles, GArray *blocks, gint64 *part_cpu_us, gboolean *split)
{
  TessPart whole = { api, img, dpi, NULL, FALSE, words, angles, blocks, FALSE, 0 };
  TessBaseAPI *extra;
  SplitCut cut;

  *part_cpu_us = 0;
  /* Only an image 4 inches tall or more: a part of a smaller one (a crop,
   * a half page) holds a few lines, which Tesseract's layout analysis
   * reads worse alone (the 1.6 in pairs fixture lost a formula read in
   * parts), and the whole is read in a fraction of the time anyway. */
  *split = tess_split_wanted () && tall_enough_to_split (img->height, dpi) && split_cut (img, comps, slope, &cut);
  if (!*split)
    {
      tess_read_part (&whole);
      return whole.ok;
    }
  extra = tess_take_extra ();
  {
    g_autoptr(GArray) words2 = g_array_new (FALSE, TRUE, sizeof (Word));
    g_autoptr(GArray) angles2 = g_array_new (FALSE, FALSE, sizeof (double));
    g_autoptr(GArray) blocks2 = g_array_new (FALSE, FALSE, sizeof (ReadBlock));
    TessPart top = whole, bottom = { extra ? extra : api, img, dpi, &cut, TRUE, words2, angles2, blocks2,
                                     FALSE, 0 };
    GThread *t = NULL;

    top.cut = &cut;
    if (extra != NULL)
      t = g_thread_try_new ("fm-tesseract-part", tess_read_part, &bottom, NULL);
    tess_read_part (&top);
    if (t != NULL)
      g_thread_join (t);
    else
      tess_read_part (&bottom);
    if (extra != NULL)
      tess_give (extra);
    /* The words' strings go with them. */
    g_array_append_vals (words, words2->data, words2->len);
    g_array_append_vals (angles, angles2->data, angles2->len);
    g_array_append_vals (blocks, blocks2->data, blocks2->len);
    *part_cpu_us = bottom.cpu_us;
    if (g_getenv ("FM_DETECT_DEBUG"))
      g_printerr ("scan: read in two parts%s, cut at row %d turned %.2f deg (rows [0 %d) and [%d %d)): "
                  "%u and %u words, thread CPU %.0f and %.0f ms\n", t ? " at once" : "", cut.cut,
                  atan (cut.slope) * 180 / G_PI, cut.top_end, cut.bottom_start, img->height,
                  words->len - words2->len, words2->len, top.cpu_us / 1000.0, bottom.cpu_us / 1000.0);
    return top.ok && bottom.ok;
  }
}

static double
v_overlap (double a0, double a1, double b0, double b1)
{
  return MIN (a1, b1) - MAX (a0, b0);
}

/* The share of a's area that lies inside b: 0 where they do not overlap
 * or a has no area. */
static double
box_share_inside (const Box *a, const Box *b)
{
  double ix = v_overlap (a->x0, a->x1, b->x0, b->x1);
  double iy = v_overlap (a->y0, a->y1, b->y0, b->y1);
  double area = box_w (a) * box_h (a);

  if (area <= 0 || ix <= 0 || iy <= 0)
    return 0;
  return ix * iy / area;
}

/* Whether Tesseract read no text for w: nothing, or white space only
 * (what the debug output shows as nothing). */
static gboolean
word_blank (const Word *w)
{
  for (const char *q = w->utf8; *q; q++)
    if (!g_ascii_isspace (*q))
      return FALSE;
  return TRUE;
}

/* Whether words [first, len), a block's reading again, read text: three
 * dictionary words at confidence 60 or more, half the words. */
static gboolean
read_again_text (const GArray *words, guint first)
{
  int n_text = 0;

  for (guint i = first; i < words->len; i++)
    {
      const Word *w = &g_array_index (words, Word, i);
      if (w->dict && w->conf >= 60)
        n_text++;
    }
  return n_text >= 3 && 2 * n_text >= (int) (words->len - first);
}

/* Removes word i of words with its string. */
static void
words_remove (GArray *words, guint i)
{
  g_free (g_array_index (words, Word, i).utf8);
  g_array_remove_index (words, i);
}

/* Keeps or drops b's reading again, words [first, len). Ink in a block
 * Tesseract took for a picture is read again too: a block over two lines
 * of prose between two displays (PT_PULLOUT_IMAGE on a JPEG'd page of the
 * lead's fresh set 1087 at 300 dpi, a binary page of 1083) came back as
 * one blank word, and the whole block was one display's ink that
 * swallowed both displays and the line's inline formulas. Where the
 * reading again reads text, the blank words of the first reading there
 * go; where it does not (a photo: a few words by chance), the reading
 * again goes, as before leadempty. */
static void
read_again_keep (GArray *words, guint first, const Box *b, gboolean in_picture)
{
  if (!in_picture)
    return;  /* ink outside every block: its reading again kept, as before */
  if (!read_again_text (words, first))
    {
      for (guint i = first; i < words->len; i++)
        g_free (g_array_index (words, Word, i).utf8);
      g_array_set_size (words, first);
      return;
    }
  for (guint i = first; i-- > 0;)
    {
      Word *w = &g_array_index (words, Word, i);
      if (word_blank (w) && box_share_inside (&w->img, b) >= 0.5)
        words_remove (words, i);
    }
}

/* The words of a reading again (from first on) that lie on a word read
 * before: a group of ink inside a text block spans the words between its
 * unread pieces. */
static void
read_again_drop_read (GArray *words, guint first)
{
  for (guint i = words->len; i-- > first;)
    {
      Word *w = &g_array_index (words, Word, i);
      gboolean read = FALSE;
      for (guint k = 0; k < first && !read; k++)
        read = box_share_inside (&w->img, &g_array_index (words, Word, k).img) >= 0.5;
      if (read)
        words_remove (words, i);
    }
}

static GArray *
read_words (TessBaseAPI *api, const FmGrayImage *img, GArray *comps, double dpi, double *skew,
            gint64 *part_cpu_us, GError **error)
{
  GArray *words = g_array_new (FALSE, TRUE, sizeof (Word));
  g_autoptr(GArray) angles = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) blocks = g_array_new (FALSE, FALSE, sizeof (ReadBlock));
  g_autoptr(GArray) unread = g_array_new (FALSE, FALSE, sizeof (int));
  g_autofree gboolean *in_picture = g_new0 (gboolean, comps->len + 1);  /* by unread's index */
  g_autofree gboolean *in_block = g_new0 (gboolean, comps->len + 1);
  double em = dpi / 7.2;   /* 10 pt, before the page's own is known */
  gboolean split;
  double slope = ink_slope (img, comps);

  tess_single_thread ();
  if (!read_page_parts (api, img, comps, slope, dpi, words, angles, blocks, part_cpu_us, &split))
    {
      g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_RENDER,
                   "Tesseract could not read the page");
      return words;
    }
  /* Tesseract's layout analysis takes a block of a noisy, skewed scan for
   * a picture now and then and leaves it out, unread: paragraphs of prose
   * without words, all of whose ink looked like math (development twins: a
   * JPEG'd page at 1.9 degrees, three lines of a paragraph one display
   * box). Ink outside every block Tesseract read as text (a picture block
   * comes back as one blank word: read_again_keep), in groups as wide as a
   * few words, is read again as one block of text; a picture gives a few
   * unsure words there, and the ink tests still tell it apart. So is ink
   * inside a text block but under none of its words, in groups of its own
   * (2026-11-29): a page read in two parts lost the left halves of two
   * lines at the top of the lower part, inside the part's block but given
   * no words (make-truth dev twin 2083-06, binary copy, page 2: 54 words
   * where the whole page's reading has 73, now 72). */
  for (guint i = 0; i < comps->len; i++)
    {
      const Comp *c = &g_array_index (comps, Comp, i);
      double mx = (c->img.x0 + c->img.x1) / 2, my = (c->img.y0 + c->img.y1) / 2;
      int inside = 0;   /* 1 in a picture block, 2 in a text block */
      for (guint k = 0; k < blocks->len && inside < 2; k++)
        {
          const ReadBlock *b = &g_array_index (blocks, ReadBlock, k);
          if (box_holds (&b->box, mx, my))
            inside = b->picture ? 1 : 2;
        }
      if (inside == 2)
        {
          /* Inside a text block and under no word: a line Tesseract's
           * block took and gave no words for. */
          gboolean covered = FALSE;
          for (guint k = 0; k < words->len && !covered; k++)
            covered = box_holds (&g_array_index (words, Word, k).img, mx, my);
          if (covered)
            continue;
        }
      g_array_append_val (unread, i);
      in_picture[unread->len - 1] = inside == 1;
      in_block[unread->len - 1] = inside == 2;
    }
  if (unread->len >= 20)
    {
      guint n = unread->len;
      g_autofree int *parent = g_new (int, n);
      g_autofree Box *group = g_new (Box, n);
      g_autofree int *count = g_new0 (int, n);
      for (guint i = 0; i < n; i++)
        parent[i] = (int) i;
      for (guint i = 0; i < n; i++)
        for (guint j = i + 1; j < n; j++)
          {
            const Box *a = &g_array_index (comps, Comp, g_array_index (unread, int, i)).img;
            const Box *b = &g_array_index (comps, Comp, g_array_index (unread, int, j)).img;
            /* Ink in pictures, ink outside every block and ink unread in a
             * block in groups of their own: the second is read again as
             * before leadempty. */
            if (in_picture[i] == in_picture[j] && in_block[i] == in_block[j] &&
                MAX (a->x0, b->x0) - MIN (a->x1, b->x1) < 1.0 * em &&
                MAX (a->y0, b->y0) - MIN (a->y1, b->y1) < 0.5 * em)
              uf_join (parent, (int) i, (int) j);
          }
      for (guint i = 0; i < n; i++)
        {
          int r = fm_uf_find (parent, (int) i);
          const Box *a = &g_array_index (comps, Comp, g_array_index (unread, int, i)).img;
          if (count[r]++ == 0)
            group[r] = *a;
          else
            box_union (&group[r], a);
        }
      for (guint i = 0; i < n; i++)
        {
          Box *b = &group[i];
          /* A paragraph's lines in a picture: many pieces, wider than a
           * display; outside the pictures a line's half (36 pieces on the
           * twin above) is enough. */
          if (count[i] < (in_picture[i] ? 40 : 20) || box_w (b) < 12 * em)
            continue;
          /* The rectangle is of the whole page (a split page's first
           * part left only its rows set). */
          TessBaseAPISetPageSegMode (api, PSM_SINGLE_BLOCK);
          if (split)
            {
              /* A split page's parts were images of their own. */
              TessBaseAPISetImage (api, img->pixels, img->width, img->height, 1, img->stride);
              TessBaseAPISetSourceResolution (api, (int) lround (dpi));
            }
          TessBaseAPISetRectangle (api, (int) b->x0, (int) b->y0, (int) box_w (b), (int) box_h (b));
          if (TessBaseAPIRecognize (api, NULL) == 0)
            {
              guint first = words->len;
              collect_words (api, img, words, angles, NULL, 0);
              read_again_keep (words, first, b, in_picture[i]);
              if (in_block[i])
                read_again_drop_read (words, first);
            }
          if (g_getenv ("FM_DETECT_DEBUG"))
            g_printerr ("scan: ink %s Tesseract's blocks [%.0f %.0f %.0f %.0f] (%d pieces) read again\n",
                        in_block[i] ? "unread inside" : "outside", b->x0, b->y0, b->x1, b->y1, count[i]);
        }
    }
  TessBaseAPIClear (api);
  /* FM_SCAN_SKEW=lines: Tesseract's lines' skew, as before 2026-11-26. */
  if (g_strcmp0 (g_getenv ("FM_SCAN_SKEW"), "lines") == 0)
    *skew = median ((double *) angles->data, (int) angles->len);
  else
    *skew = atan (slope);
  return words;
}

static void
words_free (GArray *words)
{
  for (guint i = 0; i < words->len; i++)
    g_free (g_array_index (words, Word, i).utf8);
  g_array_unref (words);
}

typedef struct {
  double top, bottom;   /* median of its words, deskewed frame */
  double x0, x1;
} Band;

/* How far y lies above or below a text line (negative inside it). */
static double
band_gap (const Band *band, double y)
{
  return y < band->top ? band->top - y : y - band->bottom;
}

static int
cmp_word_cy (const void *a, const void *b)
{
  const Word *p = *(Word *const *) a, *q = *(Word *const *) b;
  double x = p->b.y0 + p->b.y1, y = q->b.y0 + q->b.y1;
  return x < y ? -1 : x > y;
}

/* Whether text word b stands beside word a on one line: under 3 em
 * apart sideways (an inline formula between them), their middles within
 * 0.2 em up or down (one line's words, 0-2 px apart at 300 dpi; the
 * other column's line, not level, 0.4 em off on dev-2082-05). */
static gboolean
words_side_by_side (const Word *a, const Word *b, double em)
{
  double gx = MAX (a->b.x0, b->b.x0) - MIN (a->b.x1, b->b.x1);

  return gx < 3 * em && fabs ((a->b.y0 + a->b.y1) - (b->b.y0 + b->b.y1)) / 2 <= 0.2 * em;
}

static double
word_cy (const Word *w)
{
  return (w->b.y0 + w->b.y1) / 2;
}

/* The line of words sorted->pdata[i..j) (by their middles; the window
 * of 0.45 em from the first's, cy0) mended where it cut a row of words
 * side by side (words_side_by_side, chained) with middles within 0.9 em
 * of cy0: a row with as many words in the window as beyond it comes in
 * whole, a row with more beyond it goes out whole (the first word's row
 * keeps its words in the window). Returns the new j; the words from j on
 * are sorted again. On a two-column page whose columns' lines are not level, the window cut the
 * lower column's line in two: its first words with the other column's
 * line, the rest a text line of their own between two real ones, and a
 * fraction there lost its bar to that false line (development twin
 * dev-2082-05, make-truth seed 2082, scan seed 20820, 300 dpi:
 * \frac{62}{91} cut in two, its numerator and its bar on two lines 9 px
 * apart). A row with a word or two in the window (a misread word's box
 * taller than its line) is the next line's: pulling such a row in made
 * the line hold both columns' lines and joined formulas over three lines
 * (dev-2081-04). */
static guint
band_take_line_rest (GPtrArray *sorted, guint i, guint j, double cy0, double em)
{
  guint end = j, n, k_in = 0, k_out = 0;
  int first;
  g_autofree int *parent = NULL, *n_in = NULL, *n_out = NULL;
  g_autofree gpointer *in = NULL, *out = NULL;

  while (end < sorted->len && word_cy (sorted->pdata[end]) - cy0 <= 0.9 * em)
    end++;
  if (end == j)
    return j;
  n = end - i;
  parent = g_new (int, n);
  n_in = g_new0 (int, n);
  n_out = g_new0 (int, n);
  for (guint a = 0; a < n; a++)
    parent[a] = (int) a;
  for (guint a = 0; a < n; a++)
    for (guint b = a + 1; b < n; b++)
      if (words_side_by_side (sorted->pdata[i + a], sorted->pdata[i + b], em))
        uf_join (parent, (int) a, (int) b);
  for (guint a = 0; a < n; a++)
    {
      int r = fm_uf_find (parent, (int) a);
      if (i + a < j)
        n_in[r]++;
      else
        n_out[r]++;
    }
  in = g_new (gpointer, n);
  out = g_new (gpointer, n);
  first = fm_uf_find (parent, 0);
  for (guint a = 0; a < n; a++)
    {
      int r = fm_uf_find (parent, (int) a);
      gboolean stays = i + a < j ? r == first || n_in[r] >= n_out[r] : n_in[r] > 0 && n_in[r] >= n_out[r];
      if (stays)
        in[k_in++] = sorted->pdata[i + a];
      else
        out[k_out++] = sorted->pdata[i + a];
    }
  for (guint a = 0; a < k_in; a++)
    sorted->pdata[i + a] = in[a];
  for (guint a = 0; a < k_out; a++)
    sorted->pdata[i + k_in + a] = out[a];
  j = i + k_in;
  if (j < sorted->len)
    qsort (sorted->pdata + j, sorted->len - j, sizeof (gpointer), cmp_word_cy);
  return j;
}

/* Text lines: running-text words grouped by their middles. */
static GArray *
text_bands (GArray *words, double em)
{
  GArray *bands = g_array_new (FALSE, TRUE, sizeof (Band));
  g_autoptr(GPtrArray) sorted = g_ptr_array_new ();

  for (guint i = 0; i < words->len; i++)
    if (g_array_index (words, Word, i).text)
      g_ptr_array_add (sorted, &g_array_index (words, Word, i));
  /* g_ptr_array_sort: an empty array's pdata is NULL, which qsort must not get */
  g_ptr_array_sort (sorted, cmp_word_cy);
  for (guint i = 0; i < sorted->len;)
    {
      Word *first = sorted->pdata[i];
      double cy0 = (first->b.y0 + first->b.y1) / 2;
      guint j = i;
      g_autofree double *tops = NULL, *bottoms = NULL;
      Band band = { 0, 0, G_MAXDOUBLE, -G_MAXDOUBLE };
      int n = 0;

      while (j < sorted->len)
        {
          Word *w = sorted->pdata[j];
          if ((w->b.y0 + w->b.y1) / 2 - cy0 > 0.45 * em)
            break;
          j++;
        }
      j = band_take_line_rest (sorted, i, j, cy0, em);
      tops = g_new (double, j - i);
      bottoms = g_new (double, j - i);
      for (guint k = i; k < j; k++)
        {
          Word *w = sorted->pdata[k];
          tops[n] = w->b.y0;
          bottoms[n++] = w->b.y1;
          band.x0 = MIN (band.x0, w->b.x0);
          band.x1 = MAX (band.x1, w->b.x1);
          w->band = (int) bands->len;
        }
      band.top = median (tops, n);
      band.bottom = median (bottoms, n);
      g_array_append_val (bands, band);
      i = j;
    }
  return bands;
}

/* Summed-area table of the pixels between ink and paper (64..191): type
 * on paper has them only along its edges, a photo everywhere. */
static guint32 *
midtone_table (const FmGrayImage *img)
{
  int w = img->width, h = img->height;
  guint32 *t = g_new0 (guint32, (gsize) (w + 1) * (h + 1));

  for (int y = 0; y < h; y++)
    {
      guint32 row = 0;
      for (int x = 0; x < w; x++)
        {
          guint8 v = img->pixels[y * img->stride + x];
          row += v >= 64 && v < 192;
          t[(gsize) (y + 1) * (w + 1) + x + 1] = t[(gsize) y * (w + 1) + x + 1] + row;
        }
    }
  return t;
}

static double
midtone_fraction (const guint32 *t, const FmGrayImage *img, const Box *b)
{
  int w = img->width;
  int x0 = CLAMP ((int) b->x0, 0, w), x1 = CLAMP ((int) ceil (b->x1), 0, w);
  int y0 = CLAMP ((int) b->y0, 0, img->height), y1 = CLAMP ((int) ceil (b->y1), 0, img->height);
  double n = (double) (x1 - x0) * (y1 - y0);
  if (n <= 0)
    return 0;
  return (t[(gsize) y1 * (w + 1) + x1] - t[(gsize) y0 * (w + 1) + x1] -
          t[(gsize) y1 * (w + 1) + x0] + t[(gsize) y0 * (w + 1) + x0]) / n;
}

static int
cmp_word_x (gconstpointer a, gconstpointer b)
{
  const Word *p = *(Word *const *) a, *q = *(Word *const *) b;
  return p->b.x0 < q->b.x0 ? -1 : p->b.x0 > q->b.x0;
}

typedef struct {
  Box b;
  int n_seed;
  int band;         /* the text line it sits on, -1: a line of its own */
  gboolean only_digits; /* all its ink is in numbers (word_number_with_stop) */
  int n_pieces;     /* ink components                                  */
  int number_word;  /* the word reading "(3.1)" in it, -1 none         */
  double ink;       /* inked pixels                                    */
  gboolean display;
  gboolean number;
  int block;
  gboolean letter;  /* its ink is in a word Tesseract read as one letter */
  gboolean symbol;  /* ... as one symbol, not a letter, a digit or
                     * sentence punctuation ("@" for theta, "¢" for c)   */
  double number_ink; /* inked pixels of its "(3.1)"-like words           */
  const char *dropped; /* why it is no formula (FM_DETECT_DEBUG), NULL none */
  gboolean lone_rule; /* one piece, a lone rule (Comp.lone_rule)         */
  double tallest;   /* its tallest piece's height, px (its block's, for a
                     * display block's root)                             */
  int piece_word;   /* the one word all its pieces are in, -1 none       */
  int group;        /* its pieces' Comp.group (page_split_word_spaces)   */
} Cluster;

/* A long thin rule: a fraction bar, a footnote's or a table's rule. A
 * low-resolution scanner's blur thickens one: a footnote rule 8 em long
 * was half an em thick (development twins, seed 2011, a JPEG of a 0.65
 * scanner), taken for ink stacked on the footnote's first formula and
 * joined with it, its mark and its words; so a longer one may be thicker,
 * as long as it is eight times as long as thick. */
static gboolean
is_rule (const Box *b, double em)
{
  return box_w (b) > 2 * em && box_w (b) > 8 * box_h (b) &&
         (box_h (b) < 0.3 * em || (box_h (b) < 0.6 * em && box_w (b) > 4 * em));
}

/* Whether words a and b stand on one row: they overlap by half the lower
 * one's height or more. */
static gboolean
words_share_row (const Word *a, const Word *b)
{
  return v_overlap (a->b.y0, a->b.y1, b->b.y0, b->b.y1) >= 0.5 * MIN (box_h (&a->b), box_h (&b->b));
}

/* The right edge of the running text in the column of b: the text words
 * within 8 em above or below it that start left of it (in two columns, the
 * other column's words start right of a left column's equation number).
 * fallback when there are none. */
static double
column_right (GArray *words, const Box *b, double em, double fallback)
{
  double right = -G_MAXDOUBLE, my = (b->y0 + b->y1) / 2;

  for (guint i = 0; i < words->len; i++)
    {
      const Word *w = &g_array_index (words, Word, i);
      if (w->text && w->b.x0 < b->x0 && fabs ((w->b.y0 + w->b.y1) / 2 - my) < 8 * em)
        right = MAX (right, w->b.x1);
    }
  return right > -G_MAXDOUBLE ? right : fallback;
}

/* The word classifier: math or running text, from what Tesseract read and
 * the rules' verdicts (tools/pdf-truth/train-scan-words.py trains it on the
 * scanned twins of training seeds and writes fm-scan-words.h). The rules
 * plateaued three rounds running (docs/scanned.md); a small MLP weighs the
 * same evidence jointly. Features, in this order: */
#define N_WORD_FEATURES 44

/* The word reads as a one-letter English word, "a", "A" or "I", with ASCII
 * punctuation around it ("a," "(I" "A."): the word classifier's last input
 * (train-scan-words.py's english_letter_word computes it the same way from
 * the dumped text). Without it the script-shape inputs took the letters x,
 * a, b, lambda of formulas on JPEG'd pages for prose along with the
 * article "a," of a title page (scanwords3's net A, docs/scanned.md
 * twenty-eighth round): nothing else tells the article from a one-letter
 * formula. */
static gboolean
word_english_letter (const char *utf8)
{
  size_t n = strlen (utf8);
  const char *p = utf8;

  while (n > 0 && g_ascii_ispunct (*p))
    p++, n--;
  while (n > 0 && g_ascii_ispunct (p[n - 1]))
    n--;
  return n == 1 && (*p == 'a' || *p == 'A' || *p == 'I');
}

/* The script shape of a word's ink (the word classifier's last three
 * inputs): the spread of the tops and of the bottoms of its letter-sized
 * pieces and its smallest piece. A script sits off the line (a subscript's
 * top under the x-height, a superscript's foot over the baseline) and is
 * smaller, where prose letters share a baseline and two top heights:
 * Tesseract reads g_1 "gy", k_{ij} "ky", m_n "my,", alpha^2 "a?" at
 * confidence 40-85 (the lead's 40 used scanned pages, 2026-11-28: the most
 * common inline miss). On the training words the bottoms' spread is 0.20 em
 * (median) for math words of four characters and more, 0.04 for prose. */
typedef struct
{
  double em;  /* pieces are letter-sized in ems */
  double top_lo, top_hi, bot_lo, bot_hi, min_h;
} InkShape;

static void
ink_shape_add (InkShape *s, const Box *c)
{
  double h = box_h (c);

  if (h >= 0.1 * s->em)
    s->min_h = MIN (s->min_h, h);
  /* Not punctuation (a comma under the baseline made the article "a," of
   * fixture title-scan300 math), nor a bracket's or a stem's sliver. */
  if (h < 0.25 * s->em || h > 0.9 * s->em || box_w (c) < 0.13 * s->em)
    return;
  s->top_lo = MIN (s->top_lo, c->y0);
  s->top_hi = MAX (s->top_hi, c->y0);
  s->bot_lo = MIN (s->bot_lo, c->y1);
  s->bot_hi = MAX (s->bot_hi, c->y1);
}

/* The ink whose middle lies in word box *b: its rows *y0, *y1 and its
 * tallest piece's height *max_h, and its script shape where shape is not
 * NULL; how many pieces (the word classifier's inputs and words_fit_ink). */
static int
word_ink (GArray *comps, const Box *b, double *y0, double *y1, double *max_h, InkShape *shape)
{
  int n = 0;

  *y0 = G_MAXDOUBLE;
  *y1 = -G_MAXDOUBLE;
  *max_h = 0;
  if (shape)
    {
      shape->top_lo = shape->bot_lo = shape->min_h = G_MAXDOUBLE;
      shape->top_hi = shape->bot_hi = -G_MAXDOUBLE;
    }
  for (guint i = 0; i < comps->len; i++)
    {
      const Box *c = &g_array_index (comps, Comp, i).img;
      double mx = (c->x0 + c->x1) / 2, my = (c->y0 + c->y1) / 2;
      if (box_holds (b, mx, my))
        {
          *y0 = MIN (*y0, c->y0);
          *y1 = MAX (*y1, c->y1);
          *max_h = MAX (*max_h, box_h (c));
          if (shape)
            ink_shape_add (shape, c);
          n++;
        }
    }
  return n;
}

/* The page's pixels a word's ink is measured in (word_slant). */
typedef struct
{
  const FmGrayImage *img;
  int threshold;  /* ink is darker */
  double slope;   /* the text lines' slope, tan (skew) */
} PageInk;

/* The slant of the strokes in a word box's ink, rows y0 to y1: the shear
 * x + k (y - middle) whose column projection is sharpest (the largest sum
 * of squared column counts: vertical strokes stack into few columns),
 * k from -0.3 to 0.6 in steps of 0.05, less the page's skew (a page turned
 * clockwise by its slope leans its upright strokes by as much). Positive
 * leans right. Why: Tesseract reads a math italic letter as the prose word
 * it looks like - lambda and Delta as "A", alpha as "a" at confidence 62-90
 * (scanwords4, docs/scanned.md twenty-ninth round), a, x, u, n as
 * themselves - and the text-based inputs cannot tell the article from the
 * formula; the math letter is italic, the prose word upright: on the
 * training twins of seeds 4000-4049 one-letter math words measure 0.12
 * (median), one-letter prose words -0.08, the articles a/A/I -0.10
 * (docs/scanned.md, thirtieth round). 0 with too little ink. */
static double
word_slant (const PageInk *ink, const Box *b, double y0, double y1)
{
  enum { N_SHEARS = 19 };
  int x0 = MAX (0, (int) b->x0), x1 = MIN (ink->img->width, (int) ceil (b->x1));
  int r0 = MAX (0, (int) MAX (b->y0, y0)), r1 = MIN (ink->img->height, (int) ceil (MIN (b->y1, y1)));
  int pad, n_cols, n_ink = 0, best = 0;
  double ym, best_energy = -1;
  g_autofree int *cols = NULL;

  if (x1 - x0 < 2 || r1 - r0 < 4)
    return 0;
  ym = (r0 + r1) / 2.0;
  pad = (int) ceil (0.6 * (r1 - r0) / 2.0) + 2;
  n_cols = x1 - x0 + 2 * pad;
  cols = g_new (int, (gsize) N_SHEARS * n_cols);
  memset (cols, 0, sizeof (int) * (gsize) N_SHEARS * n_cols);
  for (int y = r0; y < r1; y++)
    {
      const guint8 *row = ink->img->pixels + (gsize) y * ink->img->stride;
      for (int x = x0; x < x1; x++)
        if (row[x] < ink->threshold)
          {
            n_ink++;
            for (int s = 0; s < N_SHEARS; s++)
              {
                double k = -0.3 + 0.05 * s;
                int c = (int) lround (x - x0 + pad + k * (y - ym));
                cols[s * n_cols + CLAMP (c, 0, n_cols - 1)]++;
              }
          }
    }
  if (n_ink < 12)
    return 0;
  for (int s = 0; s < N_SHEARS; s++)
    {
      double energy = 0;
      for (int c = 0; c < n_cols; c++)
        energy += (double) cols[s * n_cols + c] * cols[s * n_cols + c];
      if (energy > best_energy)
        best_energy = energy, best = s;
    }
  return CLAMP (-0.3 + 0.05 * best - ink->slope, -0.3, 0.6);
}

static void
word_features (GArray *words, guint i, GArray *comps, const PageInk *ink, double em, double page_conf, double page_dict,
               float *f)
{
  const Word *w = &g_array_index (words, Word, i);
  int n_chars = 0, n_digits = 0, n_alpha = 0, n_other = 0, n_letters = 0, n_upper = 0, n_comps;
  gboolean non_latin = FALSE, letters;
  double left = 3 * em, right = 3 * em, max_h, ink_y0, ink_y1, h = box_h (&w->b), wd = box_w (&w->b);
  InkShape shape = { .em = em };
  int left_text = 0, right_text = 0, left_conf = 0, right_conf = 0;

  for (const char *p = w->utf8; *p; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);
      n_chars++;
      if (c < 128 && g_ascii_isdigit (c))
        n_digits++;
      else if (c < 128 && g_ascii_isalpha (c))
        {
          n_alpha++;
          n_upper += g_ascii_isupper (c) != 0;
        }
      else
        n_other++;
      if (c >= 0x370)
        non_latin = TRUE;
    }
  letters = letters_only (w->utf8, &n_letters);
  n_comps = word_ink (comps, &w->img, &ink_y0, &ink_y1, &max_h, &shape);
  /* The nearest words left and right on its line. */
  for (guint k = 0; k < words->len; k++)
    {
      const Word *o = &g_array_index (words, Word, k);
      double gap;
      if (k == i || v_overlap (o->b.y0, o->b.y1, w->b.y0, w->b.y1) < 0.5 * MIN (h, box_h (&o->b)))
        continue;
      if (o->b.x1 <= (w->b.x0 + w->b.x1) / 2 && (gap = MAX (0, w->b.x0 - o->b.x1)) < left)
        {
          left = gap;
          left_text = o->text0;
          left_conf = (int) o->conf;
        }
      else if (o->b.x0 >= (w->b.x0 + w->b.x1) / 2 && (gap = MAX (0, o->b.x0 - w->b.x1)) < right)
        {
          right = gap;
          right_text = o->text0;
          right_conf = (int) o->conf;
        }
    }
  n_chars = MAX (n_chars, 1);
  f[0] = w->conf / 100.0f;
  f[1] = w->dict;
  f[2] = w->text;
  f[3] = w->text0;
  f[4] = w->strong;
  f[5] = letters;
  f[6] = MIN (n_letters, 12) / 12.0f;
  f[7] = MIN (n_chars, 12) / 12.0f;
  f[8] = (float) n_digits / n_chars;
  f[9] = (float) n_alpha / n_chars;
  f[10] = (float) n_other / n_chars;
  f[11] = non_latin;
  f[12] = is_operator_name (w->utf8);
  f[13] = w->digits;
  f[14] = w->misread;
  f[15] = MIN (h / em, 4.0);
  f[16] = MIN (wd / em, 10.0);
  f[17] = MIN (wd / (n_chars * em), 2.0);
  f[18] = n_alpha > 0 && n_upper == n_alpha;
  f[19] = n_upper > 0 && g_ascii_isupper (w->utf8[0]) && n_upper < n_alpha;
  f[20] = w->on_band;
  f[21] = w->group_text_frac;
  f[22] = MIN (w->group_words, 20) / 20.0f;
  f[23] = MIN (w->group_strong, 10) / 10.0f;
  f[24] = left / em;
  f[25] = right / em;
  f[26] = left_text;
  f[27] = right_text;
  f[28] = left_conf / 100.0f;
  f[29] = right_conf / 100.0f;
  f[30] = MIN ((float) n_comps / n_chars, 3.0f);
  f[31] = MIN (max_h / em, 4.0);
  f[32] = n_chars == 1;
  f[33] = n_chars == 2;
  f[34] = left >= 3 * em && right >= 3 * em;  /* alone on its line */
  f[35] = w->band >= 0;
  /* The page's reading: on a harshly degraded page prose is read at low
   * confidence and out of the dictionary too, and a word is judged
   * against its page. */
  f[36] = page_conf / 100.0f;
  f[37] = page_dict;
  f[38] = (w->conf - page_conf) / 100.0f;
  f[39] = shape.top_hi >= shape.top_lo ? MIN ((shape.top_hi - shape.top_lo) / em, 1.5) : 0;
  f[40] = shape.bot_hi >= shape.bot_lo ? MIN ((shape.bot_hi - shape.bot_lo) / em, 1.5) : 0;
  f[41] = shape.min_h < G_MAXDOUBLE && max_h > 0 ? MIN (shape.min_h / max_h, 1.0) : 1;
  f[42] = word_english_letter (w->utf8);
  f[43] = word_slant (ink, &w->img, ink_y0, ink_y1);
}

/* A word's glyphs as the glyph net reads them (train-scan-glyphs.py):
 * GLYPH_ROWS x GLYPH_COLS pixels at GLYPH_PX_PER_EM to the em, the box's
 * middle at the middle row, its left edge a pixel in; ink 255, paper 0,
 * the page's ink threshold at 128; what lies more than 0.15 em outside
 * the box (the lines over and under, the next word) is paper. Each pixel
 * is the mean of 3 x 3 samples of the page. */
#define GLYPH_ROWS FM_GLYPH_NET_ROWS
#define GLYPH_COLS FM_GLYPH_NET_COLS
#define GLYPH_PX_PER_EM 12.0
#define GLYPH_PIXELS (GLYPH_ROWS * GLYPH_COLS)

/* Added to the final logit of a word the glyph net looked at (the single
 * letters', the others'). The weights (fm-scan-glyphs.h) are fitted to the
 * words' accuracy, and there they make more words prose than before; a
 * formula lost with a word costs the detector more than a prose word
 * boxed. Development twins 2083-2087 at 300 dpi, 15 sets, inline P/R:
 * without the glyph net 0.767/0.782, with it 0.783/0.782 (no shift),
 * 0.781/0.793 (0.5 and 0.25, these), 0.779/0.800 (0.5 on both: it made
 * the prose word "is.was" of fixture context-prose math, 0.43 -> 0.53),
 * 0.781/0.790 and 0.771/0.798 (1 on the single letters or on the others
 * alone); display within 0.003 (docs/scanned.md, thirty-fifth round). */
#define GLYPH_RECALL_SHIFT 0.25f
#define GLYPH_RECALL_SHIFT_SINGLE 0.5f

/* Whether Tesseract read a letter in the word: the glyph net looks at
 * those alone. Digits and signs are set upright in math as in prose, so
 * the pixels of a word read without a letter tell the net nothing the
 * reading does not, and where the reading was wrong they mislead it: a
 * fraction read "2" (sigma over alpha, its script-size glyphs 4 pixels
 * high in the crop, fixture fraction-stacked) went from math 0.55 to
 * prose 0.36 as a digit of the prose. */
static gboolean
word_has_letter (const char *s)
{
  for (; *s; s = g_utf8_next_char (s))
    if (g_unichar_isalpha (g_utf8_get_char (s)))
      return TRUE;
  return FALSE;
}

static void
word_glyphs (const PageInk *ink, const Box *b, double em, guint8 *out)
{
  const FmGrayImage *img = ink->img;
  double step = em / GLYPH_PX_PER_EM, margin = 0.15 * em;
  double top = (b->y0 + b->y1) / 2 - GLYPH_ROWS / 2.0 * step, left = b->x0 - step;
  double keep_x0 = MAX (0, b->x0 - margin), keep_x1 = MIN (img->width, b->x1 + margin);
  double keep_y0 = MAX (0, b->y0 - margin), keep_y1 = MIN (img->height, b->y1 + margin);
  double range = MAX (255 - ink->threshold, 16);

  for (int r = 0; r < GLYPH_ROWS; r++)
    for (int c = 0; c < GLYPH_COLS; c++)
      {
        double sum = 0;
        for (int sy = 0; sy < 3; sy++)
          for (int sx = 0; sx < 3; sx++)
            {
              double x = left + (c + (sx + 0.5) / 3) * step, y = top + (r + (sy + 0.5) / 3) * step;
              if (x >= keep_x0 && x < keep_x1 && y >= keep_y0 && y < keep_y1)
                sum += 255 - img->pixels[(gsize) (int) y * img->stride + (int) x];
            }
        out[r * GLYPH_COLS + c] = (guint8) CLAMP (sum / 9 / range * 128, 0, 255);
      }
}

/* One of the word classifier's nets (a header train-scan-words.py wrote). */
typedef struct
{
  int n_in, n_hidden;
  const float *mean, *scale;
  const float *w1;  /* n_hidden rows of n_in */
  const float *b1, *w2;
  float b2;
} WordNet;

#define WORD_NET(name, N)                                                                   \
  { .n_in = N##_N_FEATURES, .n_hidden = N##_N_HIDDEN, .mean = name##_mean, .scale = name##_scale, \
    .w1 = &name##_w1[0][0], .b1 = name##_b1, .w2 = name##_w2, .b2 = name##_b2 }

/* Two nets: fm-scan-words.h for the one-character words and the one-letter
 * English words ("a," "A" "I"), fm-scan-words-multi.h for the rest - the
 * first's logits averaged with those of two nets trained with the script
 * shape and slant inputs (scanletter's net S on every word, net N on the
 * words of two characters and more). Why: S alone read prose better (dev
 * inline P 0.877 -> 0.900) but lost the single math letters Tesseract
 * reads as the article - lambda and Delta as "A", alpha as "a" - and
 * failed three fixtures; with the single letters left to the first net,
 * S or N alone still fail light-aligned (a light copy's formula row read
 * "Bow": math 0.40 and 0.36, the first net's 0.73), which the average
 * keeps (docs/scanned.md, thirty-first round: dev 2079/2080 at 300 dpi
 * inline 0.826/0.788 -> 0.849/0.796, display 0.951/0.959 -> 0.967/0.975). */
static const WordNet single_net = WORD_NET (fm_scan_words, FM_SCAN_WORDS);
static const WordNet multi_net = WORD_NET (fm_scan_words_multi, FM_SCAN_WORDS_MULTI);

static gboolean
word_for_single_net (const float *f)
{
  return f[32] > 0.5f || f[42] > 0.5f;  /* one character; a one-letter English word */
}

static float
word_net_probability (const WordNet *net, const float *f)
{
  float z = net->b2;

  for (int j = 0; j < net->n_hidden; j++)
    {
      float a = net->b1[j];
      for (int k = 0; k < net->n_in; k++)
        a += net->w1[(gsize) j * net->n_in + k] * (f[k] - net->mean[k]) / net->scale[k];
      z += net->w2[j] * tanhf (a);
    }
  return 1.0f / (1.0f + expf (-z));
}

static float
word_math_probability (const float *f)
{
  return word_net_probability (word_for_single_net (f) ? &single_net : &multi_net, f);
}

/* The second reading (fm-scan-words-context.h): each word again, from the
 * first reading's verdicts of its neighbours on its line. Why: the first
 * net judges a word by itself and the nearest words' rule verdicts, and its
 * 2-3 % of wrong words fall where context settles them - a prose word read
 * badly ("he" at 0.68, "Aso!" at 0.79 among sure prose) boxed as a formula,
 * a formula's middle piece under 0.5 ("fo" for f_0 at 0.45 between two
 * sure pieces) cutting it in two (development twins 2083, 300 dpi). */
#define N_CONTEXT_FEATURES 31
G_STATIC_ASSERT (FM_SCAN_CONTEXT_N_FEATURES == N_CONTEXT_FEATURES);
static const WordNet context_net = WORD_NET (fm_scan_context, FM_SCAN_CONTEXT);

/* A first-reading probability as the context inputs take it: the logit,
 * clamped to +-6, over 6. */
static float
context_logit (float p)
{
  p = CLAMP (p, 0.0025f, 0.9975f);
  return logf (p / (1 - p)) / 6.0f;
}

/* Word k's first reading as a context input; where the first reading
 * made none, its rules' verdict (running text 0, math 1). */
static float
first_reading_logit (GArray *words, const float *p1, int k)
{
  return context_logit (p1[k] >= 0 ? p1[k] : (g_array_index (words, Word, k).text ? 0 : 1));
}

/* Word i's context inputs from p1, the first reading's probabilities (-1
 * where it made none: numbers, citations, empty words, whose rules'
 * verdict stands in). Its own reading, and for the two nearest words
 * each side on its line within 4 em: whether there is one, its reading,
 * the gap (em) and whether it is blank (Tesseract's empty boxes over
 * math); then the line around it (within 10 em): how many words, and
 * their mean reading; then the nearest word over it and under it within
 * 1 em (a fraction's other half: "Gf" for y_j over "%" for 96 at 0.58
 * beside prose, fixture fraction-digits). Words taller than 2.5 em are
 * no neighbours: a picture block read as one blank word over several
 * lines (fixture picture-block) is beside every word in it. */
static void
word_context_features (GArray *words, guint i, const float *p1, double em, float *f)
{
  const Word *w = &g_array_index (words, Word, i);
  double h = box_h (&w->b), mid = (w->b.x0 + w->b.x1) / 2;
  int side[2][2] = { { -1, -1 }, { -1, -1 } };   /* [left/right][nearest, next] */
  double gap[2][2] = { { G_MAXDOUBLE, G_MAXDOUBLE }, { G_MAXDOUBLE, G_MAXDOUBLE } };
  int n_line = 0, stacked[2] = { -1, -1 };  /* over, under */
  double line_sum = 0, stacked_gap[2] = { em, em };

  for (guint k = 0; k < words->len; k++)
    {
      const Word *o = &g_array_index (words, Word, k);
      double g;
      int s;
      if (k == i || box_h (&o->b) > 2.5 * em)
        continue;
      if (v_overlap (o->b.y0, o->b.y1, w->b.y0, w->b.y1) <= 0 &&
          MIN (o->b.x1, w->b.x1) - MAX (o->b.x0, w->b.x0) > 0.3 * MIN (box_w (&o->b), box_w (&w->b)))
        {
          s = o->b.y1 <= (w->b.y0 + w->b.y1) / 2 ? 0 : 1;
          g = s == 0 ? w->b.y0 - o->b.y1 : o->b.y0 - w->b.y1;
          g = MAX (g, 0);
          if (g < stacked_gap[s])
            stacked_gap[s] = g, stacked[s] = (int) k;
        }
      if (v_overlap (o->b.y0, o->b.y1, w->b.y0, w->b.y1) < 0.5 * MIN (h, box_h (&o->b)))
        continue;
      if (o->b.x1 > w->b.x0 - 10 * em && o->b.x0 < w->b.x1 + 10 * em)
        {
          n_line++;
          line_sum += first_reading_logit (words, p1, (int) k);
        }
      if ((o->b.x0 + o->b.x1) / 2 < mid)
        s = 0, g = MAX (0, w->b.x0 - o->b.x1);
      else
        s = 1, g = MAX (0, o->b.x0 - w->b.x1);
      if (g >= 4 * em)
        continue;
      if (g < gap[s][0])
        {
          gap[s][1] = gap[s][0], side[s][1] = side[s][0];
          gap[s][0] = g, side[s][0] = (int) k;
        }
      else if (g < gap[s][1])
        gap[s][1] = g, side[s][1] = (int) k;
    }
  f[0] = first_reading_logit (words, p1, (int) i);
  f[1] = word_blank (w);
  f[2] = w->conf / 100.0f;
  f[3] = g_utf8_strlen (w->utf8, -1) == 1;
  f[4] = w->dict;
  for (int s = 0; s < 2; s++)
    for (int n = 0; n < 2; n++)
      {
        float *q = f + 5 + 4 * (2 * s + n);
        const Word *o = side[s][n] >= 0 ? &g_array_index (words, Word, side[s][n]) : NULL;
        q[0] = o != NULL;
        q[1] = o ? first_reading_logit (words, p1, side[s][n]) : 0;
        q[2] = o ? MIN (gap[s][n] / em, 4.0) : 4.0f;
        q[3] = o ? word_blank (o) : 0;
      }
  f[21] = MIN (n_line, 20) / 20.0f;
  f[22] = n_line ? line_sum / n_line : 0;
  f[23] = MIN (h / em, 4.0);
  f[24] = MIN (box_w (&w->b) / em, 10.0);
  for (int s = 0; s < 2; s++)
    {
      float *q = f + 25 + 3 * s;
      const Word *o = stacked[s] >= 0 ? &g_array_index (words, Word, stacked[s]) : NULL;
      q[0] = o != NULL;
      q[1] = o ? first_reading_logit (words, p1, stacked[s]) : 0;
      q[2] = stacked_gap[s] / em;
    }
}

/* Appends one line per word to the file at path (the training script's
 * input, train-scan-words.py dump): page, box in points, the word's two
 * fixed columns (fixed[2i], fixed[2i+1]), its n_in inputs, its text.
 * Pages are analysed on several threads: one lock for the file. */
static void
dump_word_inputs (const char *path, GArray *words, const int *fixed, const float *f, int n_in, double scale,
                  int page_index, const guint8 *glyphs, const char *glyphs_path)
{
  static GMutex dump_lock;
  FILE *fp;

  g_mutex_lock (&dump_lock);
  /* The glyphs in the inputs' order, under the same lock: a page's words
   * are rows of both files, never interleaved with another page's. */
  if (glyphs && glyphs_path && *glyphs_path && (fp = fopen (glyphs_path, "ab")))
    {
      fwrite (glyphs, GLYPH_PIXELS, words->len, fp);
      fclose (fp);
    }
  fp = fopen (path, "a");
  if (fp)
    {
      for (guint i = 0; i < words->len; i++)
        {
          const Word *w = &g_array_index (words, Word, i);
          g_autofree char *esc = g_strescape (w->utf8, NULL);
          fprintf (fp, "%d\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%d", page_index + 1, w->img.x0 / scale,
                   w->img.y0 / scale, w->img.x1 / scale, w->img.y1 / scale, fixed[2 * i], fixed[2 * i + 1]);
          for (int k = 0; k < n_in; k++)
            fprintf (fp, "\t%.4g", f[(gsize) i * n_in + k]);
          fprintf (fp, "\t%s\n", esc);
        }
      fclose (fp);
    }
  g_mutex_unlock (&dump_lock);
}

/* A word's probability of math as a logit, p kept within 1e-4 of 0 and 1. */
static float
word_logit (float p)
{
  p = CLAMP (p, 1e-4f, 1 - 1e-4f);
  return logf (p / (1 - p));
}

/* The probability whose logit is the mean of p and q's. The second reading
 * is averaged with the first, not put in its place: alone it took a
 * fraction's numerator beside prose (fixture fraction-digits, 0.58 ->
 * 0.35) and a display row read as one garbage word alone on its line
 * (flush-tight, 0.86 -> 0.49) for prose, and trained for the average it
 * learnt to undo it (docs/scanned.md, thirty-fourth round). */
static float
mean_logit (float p, float q)
{
  return 1.0f / (1.0f + expf (-0.5f * (word_logit (p) + word_logit (q))));
}

/* The second reading of the words the first classified (word_context_features)
 * but the single letters (single: the first net's own words, whose
 * neighbours are prose around a lone variable, x in "where x is"); then
 * every word the first reading classified is looked at by the glyph net
 * (fm-glyph-net.c), its logit weighed against the readings' by the
 * weights train-scan-glyphs.py fitted on held-out twins. Why: Tesseract's
 * reading loses what the pixels show - an italic k with a lowered 0 read
 * "ko", mu read "Be", an italic a read as the article "a." - and the
 * inputs from the reading cannot get it back (docs/scanned.md,
 * thirty-fifth round). FM_SCAN_CONTEXT=FILE appends every word's context
 * inputs to FILE and FM_SCAN_GLYPHS=FILE its glyph crop (word_glyphs) to
 * FILE (the training scripts' inputs); first_only keeps the first reading
 * (FM_SCAN_WORDS=first), glyphs_off the two readings (FM_SCAN_WORDS=words). */
static void
classify_words_again (GArray *words, const gboolean *single, const PageInk *ink, double em, double scale,
                      int page_index, gboolean first_only, gboolean glyphs_off)
{
  const char *glyphs_dump = g_getenv ("FM_SCAN_GLYPHS");
  const char *dump = g_getenv ("FM_SCAN_CONTEXT");
  g_autofree float *p1 = g_new (float, words->len + 1);
  g_autofree float *f = g_new (float, (gsize) words->len * N_CONTEXT_FEATURES + 1);

  for (guint i = 0; i < words->len; i++)
    p1[i] = g_array_index (words, Word, i).p_math;
  for (guint i = 0; i < words->len; i++)
    word_context_features (words, i, p1, em, f + (gsize) i * N_CONTEXT_FEATURES);
  if (dump && *dump)
    {
      g_autofree int *fixed = g_new (int, 2 * (gsize) words->len + 1);
      for (guint i = 0; i < words->len; i++)
        {
          const Word *w = &g_array_index (words, Word, i);
          fixed[2 * i] = w->number || w->citation;
          fixed[2 * i + 1] = p1[i] >= 0 && !single[i];
        }
      /* Every word's crop for the dump; the net below crops only the
       * words it looks at. */
      g_autofree guint8 *glyphs = NULL;
      if (glyphs_dump && *glyphs_dump)
        {
          glyphs = g_new (guint8, (gsize) words->len * GLYPH_PIXELS + 1);
          for (guint i = 0; i < words->len; i++)
            word_glyphs (ink, &g_array_index (words, Word, i).img, em, glyphs + (gsize) i * GLYPH_PIXELS);
        }
      dump_word_inputs (dump, words, fixed, f, N_CONTEXT_FEATURES, scale, page_index, glyphs, glyphs_dump);
    }
  if (first_only)
    return;
  for (guint i = 0; i < words->len; i++)
    {
      Word *w = &g_array_index (words, Word, i);
      if (p1[i] < 0 || single[i])
        continue;
      w->p_math = mean_logit (p1[i],
                              word_net_probability (&context_net, f + (gsize) i * N_CONTEXT_FEATURES));
      w->text = w->p_math < fm_scan_context_threshold;
    }
  if (!glyphs_off)
    for (guint i = 0; i < words->len; i++)
      {
        Word *w = &g_array_index (words, Word, i);
        guint8 glyphs[GLYPH_PIXELS];
        float a, b, c, p;
        if (p1[i] < 0 || !word_has_letter (w->utf8))
          continue;
        fm_glyph_net_weights (single[i], &a, &b, &c);
        word_glyphs (ink, &w->img, em, glyphs);
        p = 1.0f / (1.0f + expf (-(a * word_logit (w->p_math) + b * fm_glyph_net_logit (glyphs) + c +
                                   (single[i] ? GLYPH_RECALL_SHIFT_SINGLE : GLYPH_RECALL_SHIFT))));
        w->p_math = p;
        w->text = p < 0.5f;
      }
  /* The readings no net overrules: a floor on the word's probability,
   * over 0.5 (math) for both. */
  for (guint i = 0; i < words->len; i++)
    {
      Word *w = &g_array_index (words, Word, i);
      float floor_p = 0;
      if (p1[i] < 0)
        continue;
      if (fm_scan_reads_function_application (w->utf8))
        floor_p = FUNCTION_APPLICATION_P;
      else if (w->conf >= LONE_LETTER_CONF && fm_scan_reads_lone_letter (w->utf8))
        floor_p = LONE_LETTER_P;
      if (floor_p > 0)
        {
          w->p_math = MAX (w->p_math, floor_p);
          w->text = FALSE;
        }
    }
}

/* Classifies the words (numbers and citations keep the rules' verdict):
 * running text is what the model gives under its threshold, then read again
 * (classify_words_again) and looked at (the glyph net). FM_SCAN_WORDS=rules
 * keeps the rules alone, FM_SCAN_WORDS=first the first reading,
 * FM_SCAN_WORDS=words both readings without the glyph net;
 * FM_SCAN_FEATURES=FILE appends every word's features to FILE (the training
 * script's input). Returns whether the model decided. */
static gboolean
classify_words (GArray *words, GArray *comps, const PageInk *ink, double em, double scale, int page_index)
{
  const char *dump = g_getenv ("FM_SCAN_FEATURES");
  const char *mode = g_getenv ("FM_SCAN_WORDS");
  gboolean use = !(mode && strcmp (mode, "rules") == 0);
  g_autofree float *f = g_new (float, (gsize) words->len * N_WORD_FEATURES + 1);
  g_autofree gboolean *single = g_new0 (gboolean, words->len + 1);

  G_STATIC_ASSERT (FM_SCAN_WORDS_N_FEATURES == N_WORD_FEATURES);
  G_STATIC_ASSERT (FM_SCAN_WORDS_MULTI_N_FEATURES == N_WORD_FEATURES);
  double page_conf = 0, page_dict = 0;
  if (words->len > 0)
    {
      g_autofree double *confs = g_new (double, words->len);
      for (guint i = 0; i < words->len; i++)
        {
          confs[i] = g_array_index (words, Word, i).conf;
          page_dict += g_array_index (words, Word, i).dict;
        }
      page_conf = median (confs, (int) words->len);
      page_dict /= words->len;
    }
  for (guint i = 0; i < words->len; i++)
    word_features (words, i, comps, ink, em, page_conf, page_dict, f + (gsize) i * N_WORD_FEATURES);
  if (dump && *dump)
    {
      g_autofree int *fixed = g_new (int, 2 * (gsize) words->len + 1);
      for (guint i = 0; i < words->len; i++)
        {
          const Word *w = &g_array_index (words, Word, i);
          fixed[2 * i] = w->number;
          fixed[2 * i + 1] = w->citation;
        }
      dump_word_inputs (dump, words, fixed, f, N_WORD_FEATURES, scale, page_index, NULL, NULL);
    }
  if (!use)
    return FALSE;

  for (guint i = 0; i < words->len; i++)
    {
      Word *w = &g_array_index (words, Word, i);
      if (w->number || w->citation || w->utf8[0] == '\0')
        continue;
      w->p_math = word_math_probability (f + (gsize) i * N_WORD_FEATURES);
      w->text = w->p_math < fm_scan_words_threshold;
    }
  for (guint i = 0; i < words->len; i++)
    single[i] = word_for_single_net (f + (gsize) i * N_WORD_FEATURES);
  classify_words_again (words, single, ink, em, scale, page_index, mode && strcmp (mode, "first") == 0,
                        mode && strcmp (mode, "words") == 0);
  return TRUE;
}

/* One page's analysis: what analyse's phases below read and fill in, in
 * their order. */
typedef struct {
  FmGrayImage *img;
  FmGrayImage *ocr_img;     /* what Tesseract reads: img, paper white; owned,
                             * freed once the words are read              */
  GArray *comps;            /* Comp                                          */
  int n_comps;
  double scale;             /* px/pt                                         */
  int page_index;
  double skew, em;          /* radians; px                                   */
  double pitch;             /* text lines' median pitch, px; 0 unmeasured    */
  double leading;           /* a paragraph's lines' pitch (page_prose_leading), px */
  double cx, cy;            /* the render's centre, the deskew's pivot       */
  gint64 t_ocr, c_ocr;      /* wall, thread CPU; microseconds                */
  gint64 c_ocr_part;        /* thread CPU of a split page's second part      */
  GArray *words;            /* Word                                          */
  GArray *bands;            /* Band                                          */
  GArray *clusters;         /* Cluster                                       */
  GPtrArray *regions;
  int *region_of_block;     /* a display block's region, -1 none             */
  guint32 *midtones;        /* midtone_table, made on first use              */
  double read_share;        /* of the ink's area, what is in text words      */
  gboolean thin;            /* thin, broken strokes (ink_gap bridged them)   */
  int threshold;            /* ink is darker (ink_threshold)                 */
} ScanPage;

/* The rules' first verdict on one word: running text or not, from what
 * Tesseract read alone. */
static void
word_first_verdict (Word *w)
{
  int n_letters = 0;

  w->number = reads_like_number (w->utf8);
  w->citation = fm_scan_reads_like_citation (w->utf8);
  w->digits = w->utf8[0] != '\0';
  for (const char *p = w->utf8; *p; p++)
    if (!g_ascii_isdigit (*p))
      w->digits = FALSE;
  /* Running text: a word of letters (sentence punctuation allowed) that
   * Tesseract is sure of, or finds in its dictionary. Single letters are
   * not: math letters read as words ("a", "x") as often as prose's. */
  w->text = letters_only (w->utf8, &n_letters) && n_letters >= 2 &&
            ((w->dict && w->conf >= 50) || w->conf >= 88);
  /* Operator names are set in roman like prose, but are math: as text
   * they split "O(n log n)" in two (development twins: inline P/R
   * 0.582/0.600 -> 0.600/0.616). */
  if (w->text && is_operator_name (w->utf8))
    w->text = FALSE;
  /* A sure number of four digits and more ("2024", "1998.") is a year
   * or a count in the prose: as text it keeps a formula beside it from
   * taking it in (bare numbers are text in the truth). */
  {
    gsize nd = strspn (w->utf8, "0123456789");
    if (nd >= 4 && w->conf >= 80 && nd + strspn (w->utf8 + nd, ".,;:") == strlen (w->utf8))
      w->text = TRUE;
  }
  w->strong = w->text && (n_letters >= 3 || (w->dict && w->conf >= 85));
  /* A scan's misread prose ("imnber") is still a run of four or more
   * letters; math becomes such runs only on lines of its own, which
   * the band test below tells apart. */
  if (!w->text && letters_only (w->utf8, &n_letters) && n_letters >= 4 && w->conf >= 50)
    w->text = w->strong = TRUE;
  /* A dictionary word of four letters and more, or any run of six,
   * is prose even when Tesseract doubts it (a harsh binarisation's
   * thick type: "number" at 47, "mimber" at 16): math read as letters
   * makes runs of two or three ("adt", "ye"), or an unsure word
   * (development set: "Task" at 32 from n_1, ..., n_n; the fixture's
   * display "stadt" at 10, "Praia" at 0). */
  if (!w->text && letters_only (w->utf8, &n_letters) &&
      ((w->dict && n_letters >= 4 && w->conf >= 35) || (w->dict && n_letters >= 5 && w->conf >= 30) ||
       (n_letters >= 6 && w->conf >= 15)))
    w->text = w->strong = TRUE;
}

/* Tesseract's words, in the deskewed frame (turned back by the skew about
 * the render's centre), with the rules' first verdict. */
static gboolean
page_read_words (ScanPage *p, TessBaseAPI *api, GError **error)
{
  p->t_ocr = g_get_monotonic_time ();
  p->c_ocr = thread_cpu_us ();
  p->words = read_words (api, p->ocr_img ? p->ocr_img : p->img, p->comps, p->scale * 72.0, &p->skew,
                         &p->c_ocr_part, error);
  p->t_ocr = g_get_monotonic_time () - p->t_ocr;
  p->c_ocr = thread_cpu_us () - p->c_ocr;
  if (error && *error)
    return FALSE;
  for (guint i = 0; i < p->words->len; i++)
    {
      Word *w = &g_array_index (p->words, Word, i);
      w->b = box_turn (&w->img, -p->skew, p->cx, p->cy);
      word_first_verdict (w);
    }
  return TRUE;
}

/* Tesseract's word boxes are at least 1.5 times as tall as their ink
 * (median over the running-text words with two pieces or more) when they
 * are inflated (words_fit_ink). */
#define WORD_BOX_INFLATED 1.5

/* Word boxes as tall as their ink. On some soft gray pages (JPEG at 150
 * dpi, 5 of the 16 such development twins of seeds 2045-2047 and 2 of 9
 * of seeds 2057-2058, whether Tesseract read the pooled image or the
 * plain render) every word's box of a line came out with one top and one
 * bottom, 1.9-2.0 times the height of its ink ("Can", "your", "point" all
 * 31 px for ink of 16), so the em from them (page_measure_em) doubled
 * (44.4 px for 23) and the leading, the bands and every verdict in ems
 * with it. Where the median word is WORD_BOX_INFLATED times its ink or
 * more, each word's rows become its ink's; a page whose boxes fit (median
 * 1.0-1.1) is left as Tesseract read it. */
static void
words_fit_ink (ScanPage *p)
{
  g_autofree double *ratio = g_new (double, p->words->len + 1);
  int n = 0;
  double r;

  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *w = &g_array_index (p->words, Word, i);
      double y0, y1, tallest;
      if (w->text && word_ink (p->comps, &w->img, &y0, &y1, &tallest, NULL) >= 2 && y1 > y0)
        ratio[n++] = (w->img.y1 - w->img.y0) / (y1 - y0);
    }
  r = n > 0 ? median (ratio, n) : 0;
  if (g_getenv ("FM_DETECT_DEBUG"))
    g_printerr ("scan: page %d, word boxes %.2f times their ink (%d words)\n", p->page_index + 1, r, n);
  if (r < WORD_BOX_INFLATED || g_strcmp0 (g_getenv ("FM_SCAN_FIT_WORDS"), "0") == 0)
    return;
  for (guint i = 0; i < p->words->len; i++)
    {
      Word *w = &g_array_index (p->words, Word, i);
      double y0, y1, tallest;
      if (word_ink (p->comps, &w->img, &y0, &y1, &tallest, NULL) > 0 && y1 > y0)
        {
          w->img.y0 = y0;
          w->img.y1 = y1;
          w->b = box_turn (&w->img, -p->skew, p->cx, p->cy);
        }
    }
}

/* The text lines' pitch: the median, over the lines, of the distance
 * from a line's top to the top of the nearest line wholly below it in the
 * same column (sharing columns of the page), 0 with fewer than three such
 * pairs. Measured from the lines alone, so a wrong em does not move it. */
static double
bands_pitch (const GArray *bands)
{
  g_autofree double *d = g_new (double, bands->len + 1);
  int n = 0;

  for (guint i = 0; i < bands->len; i++)
    {
      const Band *a = &g_array_index (bands, Band, i);
      double best = G_MAXDOUBLE;
      for (guint j = 0; j < bands->len; j++)
        {
          const Band *b = &g_array_index (bands, Band, j);
          if (b->top > a->bottom && MIN (a->x1, b->x1) > MAX (a->x0, b->x0))
            best = MIN (best, b->top - a->top);
        }
      if (best < G_MAXDOUBLE)
        d[n++] = best;
    }
  return n < 3 ? 0 : median (d, n);
}

/* A text line is a paragraph's line for the leading when it holds this
 * many running-text words or more: a display's word read as prose ("xa",
 * "\text{and}"), a fraction's numerator and denominator read as words, a
 * heading or a title make lines of one or two. */
#define LEADING_LINE_WORDS 3

/* Two paragraph lines' pitch agrees with another's within this share of
 * it (a scan's lines are placed to a pixel or two: 23-26 px for 25 on
 * the development twins, 150 px to the inch). */
#define LEADING_AGREE 0.08

/* The pitch of a paragraph's lines (the leading), px; 0 unmeasured. Over
 * the text lines of LEADING_LINE_WORDS running-text words or more, the
 * distance from each one's top to the top of the nearest such line below
 * it over the same columns, if that is 1.2 times the taller line's height
 * to 3.3 times the shorter's (a 10 pt line's words are 16 px tall at 150
 * px to the inch and 25 px apart; a display, a heading or the title lies
 * 2 pitches and more from its neighbours; a page set with \linespread{2}
 * has its lines 49.6 px apart, 2.9 line heights: under the 2.5 asked
 * before scanfix10 its leading was 0 and each inline formula alone on a
 * paragraph's last line was boxed as a display, probes in CM and Times);
 * of those the distance the most others agree with (LEADING_AGREE; the
 * smallest of equals), as the median of them. The
 * lower quartile of every line's distance, used before (scanfix8), fell
 * on the stray lines of a short page: a fraction's numerator and
 * denominator read as words lie 0.9 em apart, a title page's lines are
 * its title, authors and date (probes of scandisp: title pages 33-36 px
 * for the abstract's 23 at 300 dpi, a page of five displays and two
 * lines of prose 44 px). */
static double
page_prose_leading (const ScanPage *p)
{
  const GArray *bands = p->bands;
  g_autofree int *n_words = g_new0 (int, bands->len + 1);
  g_autofree double *d = g_new (double, bands->len + 1);
  int n = 0, best_support = 0, best = 0, lo;

  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *w = &g_array_index (p->words, Word, i);
      if (w->text && w->band >= 0)
        n_words[w->band]++;
    }
  for (guint i = 0; i < bands->len; i++)
    {
      const Band *a = &g_array_index (bands, Band, i);
      double nearest = G_MAXDOUBLE, h_max = 0, h_min = 0;
      if (n_words[i] < LEADING_LINE_WORDS)
        continue;
      for (guint j = 0; j < bands->len; j++)
        {
          const Band *b = &g_array_index (bands, Band, j);
          if (n_words[j] >= LEADING_LINE_WORDS && b->top > a->bottom && b->top - a->top < nearest &&
              MIN (a->x1, b->x1) > MAX (a->x0, b->x0))
            {
              nearest = b->top - a->top;
              h_max = MAX (a->bottom - a->top, b->bottom - b->top);
              h_min = MIN (a->bottom - a->top, b->bottom - b->top);
            }
        }
      if (nearest >= 1.2 * h_max && nearest <= 3.3 * h_min)
        d[n++] = nearest;
    }
  if (n == 0)
    return 0;
  qsort (d, n, sizeof (double), cmp_double);
  for (int i = 0; i < n; i++)
    {
      int support = 0;
      for (int j = 0; j < n; j++)
        support += fabs (d[j] - d[i]) <= LEADING_AGREE * d[i];
      if (support > best_support)
        {
          best_support = support;
          best = i;
        }
    }
  if (g_getenv ("FM_DETECT_DEBUG"))
    g_printerr ("scan: page %d, leading from %d of %d line distances (%.1f px)\n", p->page_index + 1, best_support, n,
                d[best]);
  for (lo = best; lo > 0 && fabs (d[lo - 1] - d[best]) <= LEADING_AGREE * d[best]; lo--)
    ;
  return median (d + lo, best_support);
}

/* The em from the running text's word heights; the verdicts that need it;
 * the text lines. */
static void
page_measure_em (ScanPage *p)
{
  GArray *words = p->words;
  g_autofree double *heights = g_new (double, words->len + 1);
  int nh = 0;

  for (guint i = 0; i < words->len; i++)
    {
      Word *w = &g_array_index (words, Word, i);
      if (w->text)
        heights[nh++] = box_h (&w->b);
    }
  /* A word's box runs from its tallest ascender to its lowest descender:
   * about 0.7 em over words with and without them. */
  p->em = nh > 0 ? median (heights, nh) / 0.7 : 10.0 * p->scale;
  /* An equation number is one line high: "(7)" over two lines is a pair
   * of big delimiters around a fraction, the display itself (development
   * twins: two displays \left( \frac{n}{t} \right)^2 were taken for
   * numbers and lost). */
  for (guint i = 0; i < words->len; i++)
    {
      Word *w = &g_array_index (words, Word, i);
      if (w->number && box_h (&w->b) > 1.6 * p->em)
        w->number = FALSE;
      /* Lining digits are as tall as capitals (0.65 em): "digits" no taller
       * than an x-height letter are letters Tesseract misread (a variable
       * "n" read as "1" at 88), not a number of the prose. */
      /* Nor are "digits" taller than a line's digits and capitals with
       * room to spare (a heading's at 14.4 pt over a 10 pt text are
       * 0.95 em): a small fraction read as one of its digits, its
       * numerator and denominator stacked over the line ("6" for
       * \frac{y_j}{96}, 1.2 em; development twins). */
      if (w->digits && (box_h (&w->b) < 0.55 * p->em ||
                        box_h (&w->b) > 1.1 * p->em))
        {
          w->digits = FALSE;
          w->misread = TRUE;
          w->text = w->strong = FALSE;
        }
    }
  for (guint i = 0; i < words->len; i++)
    g_array_index (words, Word, i).text0 = g_array_index (words, Word, i).text;
  p->bands = text_bands (words, p->em);
}

/* Line groups on band k: its words chained over gaps < 0.8 em (a word
 * space, the space around an inline formula, not a column gap). A group
 * is running text when its text words are at least half its width: a
 * display's line holds words Tesseract makes of the math ("adt"), some of
 * them dictionary words, but fewer than the rest. The words of a math
 * group are math. */
static void
band_line_groups (ScanPage *p, guint k)
{
  Band *band = &g_array_index (p->bands, Band, k);
  g_autoptr(GPtrArray) on = g_ptr_array_new ();
  double em = p->em;

  for (guint i = 0; i < p->words->len; i++)
    {
      Word *w = &g_array_index (p->words, Word, i);
      double my = (w->b.y0 + w->b.y1) / 2;
      if (my >= band->top && my <= band->bottom && !w->number && (w->band < 0 || w->band == (int) k))
        g_ptr_array_add (on, w);
    }
  g_ptr_array_sort (on, cmp_word_x);
  for (guint a = 0; a < on->len;)
    {
      double text_w = 0, all_w = 0, right = ((Word *) on->pdata[a])->b.x1;
      int n_text = 0;
      guint b = a;
      while (b < on->len && (b == a || ((Word *) on->pdata[b])->b.x0 - right < 0.8 * em))
        {
          Word *w = on->pdata[b++];
          right = MAX (right, w->b.x1);
          all_w += box_w (&w->b);
          if (w->strong)
            {
              text_w += box_w (&w->b);
              n_text++;
            }
        }
      for (guint m = a; m < b; m++)
        {
          Word *w = on->pdata[m];
          w->on_band = TRUE;
          w->group_text_frac = all_w > 0 ? text_w / all_w : 0;
          w->group_words = (int) (b - a);
          w->group_strong = n_text;
        }
      /* A line of prose with a long inline formula has more text words
       * than the two a display's misreadings make. */
      if (text_w < 0.5 * all_w && n_text <= 2)
        for (guint m = a; m < b; m++)
          {
            Word *w = on->pdata[m];
            w->text = FALSE;
            w->band = -1;
          }
      a = b;
    }
}

/* The text lines made again from the words' running text, after a
 * verdict changed. */
static void
page_rebuild_bands (ScanPage *p)
{
  g_array_unref (p->bands);
  for (guint i = 0; i < p->words->len; i++)
    g_array_index (p->words, Word, i).band = -1;
  p->bands = text_bands (p->words, p->em);
}

/* Whether word i is the first piece of a word hyphenated at the line's
 * end ("ex-", "fine-"): two letters or more and a hyphen, no word after it
 * on its line within 1.5 em, running text before it within 3 em. The
 * classifier takes such pieces for math (not in the dictionary, a mark
 * at the end; development twins, seeds 2010 and 2011: "ex-" at
 * confidence 57, "fine-" at 34, each boxed inline); a formula broken at
 * a line's end ends with an operator or a relation, not letters and a
 * hyphen. On a two-column page the next word may be the other column's,
 * across the gutter (gap_is_gutter: "con-" at 57 and "Es-" at 89 beside
 * the right column's first word, 1 em on, development twins dev-2075-01
 * and -06, 300 dpi), and the words before may be a formula's ("a < k +u
 * ap-", dev-2076-08): a piece that ends at its column's right edge
 * (column_right, within HYPHEN_EDGE_EM: a justified line's end) is at the
 * line's end whatever stands before it. */
static gboolean gap_is_gutter (const ScanPage *p, double x0, double x1, double y0, double y1);

static gboolean
word_hyphen_piece (ScanPage *p, guint i)
{
  const Word *w = &g_array_index (p->words, Word, i);
  gsize n = strlen (w->utf8);
  int n_letters = 0;
  gboolean prose_before = FALSE;

  if (n < 3 || w->utf8[n - 1] != '-' || w->utf8[n - 2] == '-' || !letters_only (w->utf8, &n_letters) ||
      n_letters < 2)
    return FALSE;
  for (guint k = 0; k < p->words->len; k++)
    {
      const Word *o = &g_array_index (p->words, Word, k);
      double h = MIN (box_h (&w->b), box_h (&o->b));
      if (k == i || v_overlap (w->b.y0, w->b.y1, o->b.y0, o->b.y1) < 0.5 * h)
        continue;
      if (o->b.x0 >= w->b.x1 - 0.1 * p->em && o->b.x0 < w->b.x1 + 1.5 * p->em &&
          !(o->b.x0 - w->b.x1 >= 0.5 * p->em && gap_is_gutter (p, w->b.x1, o->b.x0, w->b.y0, w->b.y1)))
        return FALSE;
      if (o->text && o->b.x1 <= w->b.x0 + 0.1 * p->em && o->b.x1 > w->b.x0 - 3 * p->em)
        prose_before = TRUE;
    }
  return prose_before ||
         fabs (column_right (p->words, &w->b, p->em, -G_MAXDOUBLE) - w->b.x1) < HYPHEN_EDGE_EM * p->em;
}

/* Whether word i is a footnote's first word read with the footnote's mark:
 * one mark (a raised "1" read as ', ‘, *, ", ?) and then "A" or "I", the
 * one-letter words of English, at the start of its line (no word within
 * 1.5 em left of it on its row) with a word of letters after it within
 * 1 em. Development twins (make-truth seeds 2022 and 2023, scan seeds
 * 20220 and 20230): "‘A" at confidence 23 and 57, "*A" at 57, each a
 * footnote's "A note on", were taken for math by the classifier and boxed
 * alone; the one math word read so, "‘S" for g (g \le y_{ij}), had a
 * formula's word 0.3 em left of it. A letter of a formula has no mark
 * before it (a prime comes after). Only * and ? count: a quote is no
 * footnote mark, and a formula in quotes at a line's start ("$A$ is
 * normal", ‘$I$ is prime’) was lost to the rule in CM, Times and
 * Palatino twins (review of scan14t, /tmp/rv-scan14t/probe fnmath). */
static int word_beside (const ScanPage *p, guint i, int dir, double reach);

/* Whether ink lies within reach above box r, over its columns. */
static gboolean
ink_above (const ScanPage *p, const Box *r, double reach)
{
  for (int i = 0; i < p->n_comps; i++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, i);
      Box b = box_turn (&c->img, -p->skew, p->cx, p->cy);
      if (b.x1 > r->x0 && b.x0 < r->x1 && b.y1 <= r->y0 && b.y1 > r->y0 - reach)
        return TRUE;
    }
  return FALSE;
}

/* Whether word w is on a footnote's line: a rule (is_rule) starts within
 * FOOTNOTE_RULE_INDENT_EM of its left edge and ends right of it, at most
 * FOOTNOTE_BLOCK_EM above it, with no ink within 0.3 em above it (a
 * fraction's bar has its numerator there; a footnote rule stands a line's
 * skip under the column's text). Before the pieces are placed: the ink's
 * boxes are turned here. */
static gboolean
word_under_footnote_rule (const ScanPage *p, const Word *w)
{
  double em = p->em;

  for (int i = 0; i < p->n_comps; i++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, i);
      Box r = box_turn (&c->img, -p->skew, p->cx, p->cy);
      if (is_rule (&r, em) && fabs (r.x0 - w->b.x0) < FOOTNOTE_RULE_INDENT_EM * em && r.x1 > w->b.x1 &&
          r.y1 <= w->b.y0 && w->b.y0 - r.y1 < FOOTNOTE_BLOCK_EM * em && !ink_above (p, &r, 0.3 * em))
        return TRUE;
    }
  return FALSE;
}

static gboolean
word_footnote_start (ScanPage *p, guint i)
{
  static const char *const marks[] = { "*", "?" };
  /* Under a footnote rule a quote is the mark too ("‘A" at 26, "'A" at
   * 14 for "¹A note on", development twins dev-2076-03 and -09, 300 dpi),
   * or the mark is lost ("A" at 68 and 76 on probes, make-truth --body
   * cls-scanfootnote, scan seeds 11561-11562): a formula in quotes at a
   * line's start is not set under one, and a footnote starts with its
   * mark. */
  static const char *const quotes[] = { "\u2018", "\u2019", "'", "`", "\"", "\u201c", "\u201d" };
  const Word *w = &g_array_index (p->words, Word, i);
  const char *rest = w->utf8;
  gboolean marked = FALSE;
  int right, n_letters = 0;

  for (guint k = 0; k < G_N_ELEMENTS (marks) && !marked; k++)
    if (g_str_has_prefix (w->utf8, marks[k]))
      {
        rest = w->utf8 + strlen (marks[k]);
        marked = TRUE;
      }
  for (guint k = 0; k < G_N_ELEMENTS (quotes) && !marked && rest == w->utf8; k++)
    if (g_str_has_prefix (w->utf8, quotes[k]))
      rest = w->utf8 + strlen (quotes[k]);
  if ((strcmp (rest, "A") != 0 && strcmp (rest, "I") != 0) || word_beside (p, i, -1, 1.5 * p->em) >= 0)
    return FALSE;
  right = word_beside (p, i, 1, 1.0 * p->em);
  if (right < 0 || !letters_only (g_array_index (p->words, Word, right).utf8, &n_letters) || n_letters < 2)
    return FALSE;
  return marked || word_under_footnote_rule (p, w);
}

/* A display stands apart from the text lines above and below it by its
 * skips, more than this, em; lines of prose are about 0.3 em apart (the
 * leading). Not every display: after a short line TeX sets
 * \abovedisplayshortskip (0 pt in the standard classes) and the display
 * sits at the line spacing (word_in_display_line). */
#define DISPLAY_APART_EM 1.0

/* Whether rows [a0, a1] and [b0, b1] (top, bottom) overlap or lie within
 * DISPLAY_APART_EM of each other. */
static gboolean
rows_within_skip (double a0, double a1, double b0, double b1, double em)
{
  return MAX (b0 - a1, a0 - b1) < DISPLAY_APART_EM * em;
}

/* Whether a text line (bands) lies within DISPLAY_APART_EM above or below
 * word w, over its columns, and not on w's own row: a line of prose has
 * others above or below it at the leading's gap; a display stands apart,
 * its skips above and below. */
static gboolean
word_among_lines (const ScanPage *p, const Word *w)
{
  double cy = (w->b.y0 + w->b.y1) / 2, em = p->em;

  for (guint k = 0; k < p->bands->len; k++)
    {
      const Band *bd = &g_array_index (p->bands, Band, k);
      if ((cy >= bd->top && cy <= bd->bottom) || bd->x0 > w->b.x1 + em || bd->x1 < w->b.x0 - em)
        continue;
      if (MAX (bd->top - w->b.y1, w->b.y0 - bd->bottom) >= 0 &&
          rows_within_skip (w->b.y0, w->b.y1, bd->top, bd->bottom, em))
        return TRUE;
    }
  return FALSE;
}

/* Whether w reads as one of prose's function words ("at", "of", "on",
 * "is", "Many"; sentence punctuation after it allowed), in Tesseract's
 * dictionary and read at FUNCTION_WORD_CONF or more. The classifier
 * called such words beside a formula math, and the formula was boxed
 * with them or they were boxed alone (development twins, seeds 2018 and
 * 2019: 17 such readings at 300 dpi and 12 at 150, "$k$ at $f_1$" one
 * box; none in an inline formula, two in displays). Lower case only
 * for two letters: "On" is O(n) read as a word, "In" \ln, "Be" a
 * product. Not "an", which is a_n read as a word (at 87 on those twins);
 * the shape rules (word_subscript_pair) still take any other such word
 * for math after. Only on a line of prose, one with another text line
 * within 1 em above or below it (word_among_lines): "has" and "or," read
 * in two displays' ink (150 dpi), which stand apart, made a text line
 * there and split them; and not between a display's halves
 * (word_in_display_line), which may sit as near the line above. */
static gboolean
word_function_word (const Word *w)
{
  /* English (Tesseract reads "eng"). Two and three letters, which the
   * classifier takes for a product of letters, and the longer words seen
   * taken for math: on the development twins (seeds 2018 and 2019, both
   * resolutions, before scan14r) the 29 readings it takes were as, at, by,
   * do, has, he, if, in, is, it, its, many, not, of, on, or, up, no other
   * word of four letters or more; "Also?" (at 71) on a twin of the
   * review of scan14r (make-truth seed 9141, corpus formulas) joined the
   * formula after it without "also". */
  static const char *const words[] = {
    "all", "also", "and", "any", "are", "as", "at", "be", "but", "by", "can", "do", "for", "had", "has", "he",
    "if", "in", "is", "it", "its", "let", "many", "may", "no", "not", "of", "on", "one", "or", "our", "so",
    "the", "to", "two", "up", "was", "we" };
  char core[16];
  gsize n = strcspn (w->utf8, ".,;:!?");

  if (!w->dict || w->conf < FUNCTION_WORD_CONF || n < 2 || n >= sizeof core ||
      w->utf8[n + strspn (w->utf8 + n, ".,;:!?")] != '\0')
    return FALSE;
  memcpy (core, w->utf8, n);
  core[n] = '\0';
  for (gsize k = 1; k < n; k++)
    if (!g_ascii_islower (core[k]))
      return FALSE;
  if (!g_ascii_islower (core[0]) && !(n >= 3 && g_ascii_isupper (core[0])))
    return FALSE;
  core[0] = g_ascii_tolower (core[0]);
  for (guint k = 0; k < G_N_ELEMENTS (words); k++)
    if (strcmp (core, words[k]) == 0)
      return TRUE;
  return FALSE;
}

/* Math ink on each side of a display's word, em (word_in_display_line);
 * a \qquad is 2 em, so the chain of ink may cross a gap this wide. */
#define DISPLAY_SIDE_EM 3.0
#define DISPLAY_CHAIN_GAP_EM 2.5

/* A line of prose lies one line pitch from the next: a display's rows lie
 * further apart (\jot, 3 pt, between gathered or aligned rows: 15 pt
 * baseline to baseline against the text's 12 pt, 1.25 pitches) and a
 * display lies further from the text (its skips: 1.8 pitches on the
 * probes of scanfix8, fleqn displays set flush with the margin). */
#define LINE_PITCH_SLACK 1.15

/* A paragraph's first line is set in by \parindent: 15 pt in the
 * standard classes at 10 pt, 1.5 em (1.35 of our em, measured from the
 * words' heights). */
#define PARINDENT_EM 2.0

/* An inline formula is at most this tall, em: a text-style fraction
 * \frac{94}{\|n\|} with its scripts is 1.3 em. */
#define INLINE_TALL_EM 1.6

/* Whether word o starts its line: no word of its row ends left of it
 * within DISPLAY_CHAIN_GAP_EM. */
static gboolean
word_starts_line (const ScanPage *p, const Word *o)
{
  for (guint k = 0; k < p->words->len; k++)
    {
      const Word *q = &g_array_index (p->words, Word, k);
      if (q != o && q->b.x1 <= o->b.x0 && o->b.x0 - q->b.x1 < DISPLAY_CHAIN_GAP_EM * p->em &&
          words_share_row (o, q))
        return FALSE;
    }
  return TRUE;
}

/* Word w's baseline: the bottom of its box, less a descender's depth
 * (about 0.2 em) when it has a letter that descends ("by", "up"). A box
 * taller than 1.2 em took in the scripts of the formulas beside the word
 * (Palatino's "and" between x_1^2 + ... = r^2 and y_1^2 + ...: 1.5 em
 * tall, reaching above the line before): its middle is near the math
 * axis, a quarter em over the baseline (review of scanfix8). */
static double
word_baseline (const Word *w, double em)
{
  if (box_h (&w->b) > 1.2 * em)
    return 0.5 * (w->b.y0 + w->b.y1) + 0.25 * em;
  return strpbrk (w->utf8, "gjpqy") != NULL ? w->b.y1 - 0.2 * em : w->b.y1;
}

/* Whether the line that word o (a running-text word, the first of its
 * line) starts is a line of prose: the words chained to o on its row (gaps
 * under DISPLAY_CHAIN_GAP_EM) are running text by half their width or
 * more. *baseline: the highest bottom of its running-text words (a
 * descender only lowers a word's) starting left of x_end (on a two-column
 * page whose columns' lines are not level, the other column's words
 * moved it); *n_text (may be NULL): how many running-text words the line
 * has. */
static gboolean
prose_line_from (const ScanPage *p, const Word *o, double x_end, double *baseline, int *n_text)
{
  double em = p->em, right = o->b.x1, text_w = 0, all_w = 0;
  int n = 0;
  gboolean grew = TRUE;
  g_autofree gboolean *on = g_new0 (gboolean, p->words->len + 1);

  *baseline = o->b.y1;
  while (grew)
    {
      grew = FALSE;
      for (guint k = 0; k < p->words->len; k++)
        {
          const Word *q = &g_array_index (p->words, Word, k);
          if (on[k] || q->b.x0 < o->b.x0 || q->b.x0 - right >= DISPLAY_CHAIN_GAP_EM * em ||
              !words_share_row (o, q))
            continue;
          on[k] = grew = TRUE;
          right = MAX (right, q->b.x1);
          all_w += box_w (&q->b);
          if (q->text)
            {
              text_w += box_w (&q->b);
              /* not from a speck read as a word ("is" 2 px tall under a
               * display, review of scandisp): a word of 0.4 em or more */
              if (q->b.x0 <= x_end && box_h (&q->b) >= 0.4 * em)
                *baseline = MIN (*baseline, q->b.y1);
              n++;
            }
        }
    }
  if (n_text)
    *n_text = n;
  return text_w >= 0.5 * all_w;
}

/* Whether the line that word o (a running-text word, the first of its
 * line) starts is a line of prose (prose_line_from) one line pitch from
 * word w's: its baseline is within LINE_PITCH_SLACK pitches of w's. Not
 * another row of w's display, which may start at its left edge too (a
 * fleqn display's rows, gathered or aligned at the left) with a
 * \text{...} first (scanfix8). Without a measured pitch, a line whose box
 * lies within 1.5 em of w's. */
static gboolean
word_prose_line_next (const ScanPage *p, const Word *w, const Word *o)
{
  double baseline;

  if (p->leading <= 0)
    return MAX (o->b.y0 - w->b.y1, w->b.y0 - o->b.y1) < 1.5 * p->em;
  return prose_line_from (p, o, G_MAXDOUBLE, &baseline, NULL) &&
         fabs (baseline - word_baseline (w, p->em)) <= LINE_PITCH_SLACK * p->leading;
}

/* Whether word w stands a word space from its neighbours on its line (both
 * gaps under 1 em) and a line of prose just above or below (one line pitch
 * away, word_prose_line_next) starts where w's line does, x0 (within 0.5
 * em): w's line is flush with the paragraph's margin, a line of prose made
 * of two formulas and the "and" between them ("\noindent $x_1^2 + ... =
 * r^2$ and $y_1^2 + ... = s^2$"), not a display, which is centred or set in
 * (detectfix11: the "and" was boxed with both formulas as one display). A
 * display as wide as the column starts at the margin too, its "and" a
 * \quad or more apart (display-word), and so does a fleqn display with no
 * indent, its skips above and below it. A line's first word has no word of
 * its line ending left of it. */
static gboolean
word_line_flush_with_prose (const ScanPage *p, const Word *w, double x0)
{
  double em = p->em, left = G_MAXDOUBLE, right = G_MAXDOUBLE;

  for (guint j = 0; j < p->words->len; j++)
    {
      const Word *o = &g_array_index (p->words, Word, j);
      if (o == w || !words_share_row (w, o))
        continue;
      if (o->b.x1 <= w->b.x0)
        left = MIN (left, w->b.x0 - o->b.x1);
      if (o->b.x0 >= w->b.x1)
        right = MIN (right, o->b.x0 - w->b.x1);
    }
  if (left >= 1.0 * em || right >= 1.0 * em)
    return FALSE;
  for (guint j = 0; j < p->words->len; j++)
    {
      const Word *o = &g_array_index (p->words, Word, j);
      double gap = MAX (o->b.y0 - w->b.y1, w->b.y0 - o->b.y1);

      /* (a word box grown by the line's scripts overlaps the line
       * above by a few pixels: review of scanfix8) */
      if (!o->text || gap <= -0.3 * em || gap >= 3 * em || fabs (o->b.x0 - x0) >= 0.5 * em)
        continue;
      if (word_starts_line (p, o) && word_prose_line_next (p, w, o))
        return TRUE;
    }
  return FALSE;
}

/* Whether word i sits inside a display's line: math words chained to it
 * on both sides (gaps under DISPLAY_CHAIN_GAP_EM), spanning
 * DISPLAY_SIDE_EM or more on each side, with no running text in either
 * chain but function words, and its line not a line of prose flush with
 * the margin (word_line_flush_with_prose). "... , \qquad \text{and}
 * \qquad ..." after a short line has the line above within 1 em
 * (\abovedisplayshortskip 0 pt): its "and" was made prose and the display
 * cut in two inline boxes (review of scan14r, a scanned twin of
 * cls-quads-lua, display recall 1/3 -> 0). A function word of prose has
 * prose words in its chains, or math narrower than that beside it ("$k$
 * at $f_1$"). */
static gboolean
word_in_display_line (const ScanPage *p, guint i)
{
  const Word *w = &g_array_index (p->words, Word, i);
  double em = p->em;

  for (int dir = -1; dir <= 1; dir += 2)
    {
      double edge = dir < 0 ? w->b.x0 : w->b.x1, reach = edge;
      gboolean grew = TRUE;
      while (grew)
        {
          grew = FALSE;
          for (guint j = 0; j < p->words->len; j++)
            {
              const Word *o = &g_array_index (p->words, Word, j);
              double gap = dir < 0 ? reach - o->b.x1 : o->b.x0 - reach;
              double far = dir < 0 ? reach - o->b.x0 : o->b.x1 - reach;
              if (j == i || far <= 0 || gap >= DISPLAY_CHAIN_GAP_EM * em || o->utf8 == NULL ||
                  !words_share_row (w, o))
                continue;
              if (o->text && !word_function_word (o))
                return FALSE;
              reach = dir < 0 ? MIN (reach, o->b.x0) : MAX (reach, o->b.x1);
              grew = TRUE;
            }
        }
      if (fabs (reach - edge) < DISPLAY_SIDE_EM * em || (dir < 0 && word_line_flush_with_prose (p, w, reach)))
        return FALSE;
    }
  return TRUE;
}

/* Whether a piece beside running-text word o, before it (on its left) or
 * after it, may be a piece of it: not at a side where o begins or ends
 * with a hyphen or an apostrophe, which is how prose is glued to a
 * formula ("$\\sigma$-algebra", "$k$-means", "$f$'s", "non-$x$"). */
static gboolean
word_open_at (const Word *o, gboolean before)
{
  const char *s = o->utf8;
  gunichar ch;

  if (*s == '\0')
    return TRUE;
  ch = g_utf8_get_char (before ? s : g_utf8_find_prev_char (s, s + strlen (s)));
  return !(ch == '-' || ch == '\'' || ch == 0x2010 || ch == 0x2013 || ch == 0x2018 || ch == 0x2019);
}

/* Whether word i is a piece of a running-text word that Tesseract split
 * off with no text (at confidence 95: "value se|ction" read
 * "value", "", "ction"): an empty word within 0.1 em of a running-text
 * word on its line. Letters are set that close; a formula stands a space
 * away from the prose (development twins, seeds 2012 and 2013, 300 and
 * 150 dpi, pages other than light copies: 92 of 95 empty words that near
 * a text word were prose; 54 of 70 farther off were in formulas). Boxed
 * as formulas, the near ones were a quarter of the false inline boxes
 * over prose (10 of 41 at 300 dpi). */
static gboolean
word_empty_piece (ScanPage *p, guint i)
{
  const Word *w = &g_array_index (p->words, Word, i);

  /* No text, and no wider than a word: Tesseract's blank words 3 to 18
   * em wide (a footnote rule, a row of formulas it could not read) held
   * inline formulas whose ink, in the smallest word box about it, was
   * then prose (development twins, seeds 2014 and 2015, both
   * resolutions: of the blank words taken for prose, 8 of the 24 wider
   * than 3 em lay over 11 inline formulas, 2 of the 16 from 1.3 to 3 em
   * over one each). */
  if (!word_blank (w) || box_w (&w->b) > 3 * p->em)
    return FALSE;
  for (guint k = 0; k < p->words->len; k++)
    {
      const Word *o = &g_array_index (p->words, Word, k);
      /* Mostly on the word's line: an empty word two lines tall (a
       * formula's dots with the next line's ink) is no piece of it. */
      if (k == i || !o->text || v_overlap (w->b.y0, w->b.y1, o->b.y0, o->b.y1) < 0.6 * box_h (&w->b))
        continue;
      if (MAX (w->b.x0, o->b.x0) - MIN (w->b.x1, o->b.x1) < 0.1 * p->em &&
          word_open_at (o, w->b.x0 + w->b.x1 < o->b.x0 + o->b.x1))
        return TRUE;
    }
  return FALSE;
}

/* Applies the rules' verdicts (1 running text, -1 math, 0 as classified)
 * to the words. */
static void
page_apply_verdicts (ScanPage *p, const signed char *verdict)
{
  for (guint i = 0; i < p->words->len; i++)
    {
      Word *w = &g_array_index (p->words, Word, i);
      if (verdict[i] > 0)
        {
          w->text = TRUE;
          w->p_math = 0;  /* not a seed either (comp_place) */
        }
      else if (verdict[i] < 0)
        w->text = FALSE;  /* ink joined with the display's, no seed of its own */
    }
}

/* Whether w, read as no text, lies within a word read as math (80 % of
 * its box): Tesseract read a list's dots a second time, as a blank word
 * inside the list's own ("c1..-.4¢n" for c_1, \dots, c_n, "sry.....2ty"
 * for m_1, \dots, m_n, each with a blank word at confidence 95 over its
 * dots: development twins dev-2069-06 and dev-2070-09, 300 dpi, Latin
 * Modern and Times). The classifier took the blank word for prose
 * (0.35-0.39), its dots became running text, and the list was cut in
 * two at them. */
static gboolean
word_blank_in_math (const ScanPage *p, guint i)
{
  const Word *w = &g_array_index (p->words, Word, i);

  if (!word_blank (w))
    return FALSE;
  for (guint k = 0; k < p->words->len; k++)
    {
      const Word *o = &g_array_index (p->words, Word, k);
      if (k != i && !o->text && !word_blank (o) && box_share_inside (&w->b, &o->b) >= 0.8)
        return TRUE;
    }
  return FALSE;
}

/* The word classifier's verdict, the rules that overrule it on a word
 * (a hyphenated word's piece, an empty piece of a word, a function word of
 * prose or of a display's line), and the text lines again from its
 * running text. */
static void
page_classify (ScanPage *p)
{
  g_autofree signed char *verdict = NULL;  /* 1 running text, -1 math, 0 as classified */
  PageInk ink = { p->img, p->threshold, tan (p->skew) };

  if (!classify_words (p->words, p->comps, &ink, p->em, p->scale, p->page_index))
    return;
  /* Verdicts first, then applied: a word made prose here is no running
   * text the next word's test may lean on (a chain of empty words beside
   * one prose word would turn prose one after another). */
  verdict = g_new0 (signed char, p->words->len + 1);
  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *w = &g_array_index (p->words, Word, i);
      gboolean in_display = word_function_word (w) && word_in_display_line (p, i);
      if (word_hyphen_piece (p, i) || word_footnote_start (p, i) ||
          (!w->text && word_function_word (w) && !in_display && word_among_lines (p, w)))
        verdict[i] = 1;
      /* A display's "and" the classifier itself took for prose (read at
       * 96 on a copy of that twin saved again as a JPEG) cut the display
       * the same way. */
      else if (w->text && (in_display || word_blank_in_math (p, i)))
        verdict[i] = -1;
    }
  page_apply_verdicts (p, verdict);
  /* Empty pieces after the words' verdicts: the piece's own word may be
   * one this pass made prose ("Also" read "Also?" at 77 with its A split
   * off as an empty word, a function word the classifier doubted;
   * development twin dev-2075-00, 300 dpi). These verdicts too are
   * applied only after all are made, so no empty word leans on another. */
  memset (verdict, 0, p->words->len);
  for (guint i = 0; i < p->words->len; i++)
    if (word_empty_piece (p, i))
      verdict[i] = 1;
  page_apply_verdicts (p, verdict);
  page_rebuild_bands (p);
}

/* Whether band k stands apart: no other band over the same columns
 * within DISPLAY_APART_EM above or below it. */
static gboolean
band_stands_apart (ScanPage *p, guint k)
{
  const Band *b = &g_array_index (p->bands, Band, k);

  for (guint m = 0; m < p->bands->len; m++)
    {
      const Band *o = &g_array_index (p->bands, Band, m);
      if (m != k && MIN (b->x1, o->x1) > MAX (b->x0, o->x0) &&
          rows_within_skip (b->top, b->bottom, o->top, o->bottom, p->em))
        return FALSE;
    }
  return TRUE;
}

/* The span of band k's line from x0 to x1 (its text words' span, or
 * some of them), widened by the ink on the line (middles within 0.3 em
 * of the band) that is no text word's, chained over gaps < 1.3 em (the
 * sideways join of math ink). */
static void
band_line_span (ScanPage *p, guint k, double *span_x0, double *span_x1)
{
  double x0 = *span_x0, x1 = *span_x1;
  const Band *b = &g_array_index (p->bands, Band, k);
  double em = p->em;
  gboolean grew = TRUE;
  g_autoptr(GArray) ink = g_array_new (FALSE, FALSE, sizeof (Box));

  for (int i = 0; i < p->n_comps; i++)
    {
      Box c = box_turn (&g_array_index (p->comps, Comp, i).img, -p->skew, p->cx, p->cy);
      double mx = (c.x0 + c.x1) / 2, my = (c.y0 + c.y1) / 2;
      gboolean in_text = FALSE;
      if (my < b->top - 0.3 * em || my > b->bottom + 0.3 * em)
        continue;
      for (guint w = 0; w < p->words->len && !in_text; w++)
        {
          const Word *wd = &g_array_index (p->words, Word, w);
          in_text = wd->text && box_holds (&wd->b, mx, my);
        }
      if (!in_text)
        g_array_append_val (ink, c);
    }
  while (grew)
    {
      grew = FALSE;
      for (guint i = 0; i < ink->len; i++)
        {
          const Box *c = &g_array_index (ink, Box, i);
          if (c->x0 < x1 + 1.3 * em && c->x1 > x0 - 1.3 * em && (c->x0 < x0 || c->x1 > x1))
            {
              x0 = MIN (x0, c->x0);
              x1 = MAX (x1, c->x1);
              grew = TRUE;
            }
        }
    }
  *span_x0 = x0;
  *span_x1 = x1;
}

/* The width of band k's line: band_line_span from x0 to x1. */
static double
band_line_width (ScanPage *p, guint k, double x0, double x1)
{
  band_line_span (p, k, &x0, &x1);
  return x1 - x0;
}

/* Running-text words on one text line more than this apart, em, are in
 * two columns, or a prose line and a display beside it in the other
 * column (a column gap is 1 em, a display is centred in its column). */
#define COLUMN_GAP_EM 3.0

/* Whether the gap from x0 to x1 beside the rows y0..y1 is a column
 * gutter: no running-text word within 4 em above or below crosses its
 * middle, and on two rows or more there a word of running text ends
 * within 1.5 em left of it and one starts within 1.5 em right of it (a
 * column's justified edges). Within one column a line of prose above or
 * below crosses any gap of a line. */
static gboolean
gap_is_gutter (const ScanPage *p, double x0, double x1, double y0, double y1)
{
  double mid = (x0 + x1) / 2, em = p->em;
  int left = 0, right = 0;

  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *q = &g_array_index (p->words, Word, i);
      if (!q->text || q->b.y1 < y0 - 4 * em || q->b.y0 > y1 + 4 * em)
        continue;
      if (q->b.x0 < mid && q->b.x1 > mid)
        return FALSE;
      if (q->b.y1 < y0 || q->b.y0 > y1)
        {
          left += q->b.x1 <= mid && q->b.x1 > x0 - 1.5 * em;
          right += q->b.x0 >= mid && q->b.x0 < x1 + 1.5 * em;
        }
    }
  return left >= 2 && right >= 2;
}

/* The columns of word o's line: o and the words of its row chained to it
 * over gaps under 1.3 em (the sideways join of math ink), running text or
 * not, but not across a column gutter (gap_is_gutter: a two-column page's
 * gutter is 1 em wide, and the span of a line reached into the other
 * column's, review of scandisp). */
static void
word_row_span (const ScanPage *p, const Word *o, double *x0, double *x1)
{
  gboolean grew = TRUE;

  *x0 = o->b.x0;
  *x1 = o->b.x1;
  while (grew)
    {
      grew = FALSE;
      for (guint i = 0; i < p->words->len; i++)
        {
          const Word *q = &g_array_index (p->words, Word, i);
          double gap_x0 = q->b.x0 >= *x1 ? *x1 : q->b.x1, gap_x1 = q->b.x0 >= *x1 ? q->b.x0 : *x0;
          if ((q->b.x0 < *x0 || q->b.x1 > *x1) && q->b.x0 < *x1 + 1.3 * p->em &&
              q->b.x1 > *x0 - 1.3 * p->em && words_share_row (o, q) &&
              !(gap_x1 - gap_x0 >= 0.5 * p->em && gap_is_gutter (p, gap_x0, gap_x1, o->b.y0, o->b.y1)))
            {
              *x0 = MIN (*x0, q->b.x0);
              *x1 = MAX (*x1, q->b.x1);
              grew = TRUE;
            }
        }
    }
}

/* Whether no running-text word off band k lies within DISPLAY_APART_EM
 * above or below rows [y0, y1] over columns [x0, x1]: the word's line
 * (word_row_span), not the word alone. A line of prose that starts with
 * an inline formula Tesseract read as no text ("Hell C [feel] + [feel]
 * them is and ...") left the paragraph's last line under the formula,
 * "were 12 2.", one running-text word and two numbers, apart from the
 * text, and it was boxed as a display (development twin dev-2037-09 of
 * scandisp, make-truth seed 2037, scan seed 20370, both resolutions). */
static gboolean
words_stand_apart (const ScanPage *p, guint k, double x0, double x1, double y0, double y1)
{
  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *o = &g_array_index (p->words, Word, i);
      double o_x0, o_x1;
      if (!o->text || o->band == (int) k || MAX (o->b.y0 - y1, y0 - o->b.y1) < 0 ||
          !rows_within_skip (y0, y1, o->b.y0, o->b.y1, p->em))
        continue;
      if (o->b.x0 < x1 && o->b.x1 > x0)
        return FALSE;
      word_row_span (p, o, &o_x0, &o_x1);
      if (o_x0 < x1 && o_x1 > x0)
        return FALSE;
    }
  return TRUE;
}

/* Whether running text shares the row of the run of words that starts
 * with word first, and none of it lies within 1 em of the run's line,
 * from x0 to x1 (band_line_span): the row holds another column's text.
 * Its words, not its band's: a line's words fall on two bands now and
 * then ("where which" in "$\gamma^k \in t^2 \cdot a$ where which to one
 * was", dev-2028-03), and the line's ink reaches the other band's. */
static gboolean
run_beside_column (const ScanPage *p, const Word *first, double x0, double x1)
{
  gboolean beside = FALSE;

  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *o = &g_array_index (p->words, Word, i);
      if (!o->text || !words_share_row (first, o) || (o->b.x1 >= x0 && o->b.x0 <= x1))
        continue;
      if (o->b.x1 > x0 - p->em && o->b.x0 < x1 + p->em)
        return FALSE;
      beside = TRUE;
    }
  return beside;
}

/* The display lines of page_display_lines on a text line that spans two
 * columns: its running-text words chained over gaps under COLUMN_GAP_EM
 * are each a line of their own, judged with the words above and below
 * it over its columns. A display's numerator read as a word ("93>" at
 * confidence 80 over \frac{93 \cdot f_k}{\|b\| - t}) on the height of
 * the other column's line of prose made one text line with it, which
 * the prose lines above and below that column kept from standing apart;
 * the numerator was boxed inline and the rest as a display (development
 * twin dev-2029-05, make-truth seed 2029, scan seed 20290, 300 dpi). */
static gboolean
band_column_display_lines (ScanPage *p, guint k)
{
  g_autoptr(GPtrArray) on = g_ptr_array_new ();
  gboolean changed = FALSE;

  for (guint i = 0; i < p->words->len; i++)
    {
      Word *w = &g_array_index (p->words, Word, i);
      if (w->text && w->band == (int) k)
        g_ptr_array_add (on, w);
    }
  g_ptr_array_sort (on, cmp_word_x);
  for (guint a = 0; a < on->len;)
    {
      const Word *first = on->pdata[a];
      double text_w = 0, x0 = first->b.x0, x1 = first->b.x1, y0 = first->b.y0, y1 = first->b.y1;
      guint b = a;
      while (b < on->len && (b == a || ((Word *) on->pdata[b])->b.x0 - x1 < COLUMN_GAP_EM * p->em))
        {
          const Word *w = on->pdata[b++];
          text_w += box_w (&w->b);
          x1 = MAX (x1, w->b.x1);
          y0 = MIN (y0, w->b.y0);
          y1 = MAX (y1, w->b.y1);
        }
      double line_x0 = x0, line_x1 = x1;
      band_line_span (p, k, &line_x0, &line_x1);
      /* (a line's ink reaching the next words is one line with them: a
       * prose line whose inline formula Tesseract made no word of) */
      if (b - a <= 2 && words_stand_apart (p, k, x0, x1, y0, y1) && text_w < 0.5 * (line_x1 - line_x0) &&
          run_beside_column (p, first, line_x0, line_x1))
        for (guint m = a; m < b; m++)
          {
            Word *w = on->pdata[m];
            w->text = w->strong = FALSE;
            changed = TRUE;
          }
      a = b;
    }
  return changed;
}

/* A paragraph's lines lie one leading apart (within LEADING_AGREE); a
 * line this many leadings or more from the text lines above and below
 * it is off the paragraph's grid (band_off_leading). */
#define OFF_LEADING 1.1

/* Whether band k's line, columns [x0, x1], lies OFF_LEADING leadings or
 * more from the nearest running-text line above it and from the nearest
 * below it, both within 2.5 leadings (baseline to baseline,
 * word_baseline): a display set with tight skips (3
 * pt above and below, a fleqn display flush with the margin) lies 1.2-1.3
 * leadings from the prose, within DISPLAY_APART_EM of it (scanlight:
 * fixture cls-scanflushtight-cm, whose first display's u_n was read as
 * "Un" at confidence 90 and its line taken for prose, the display boxed
 * inline; test /pdf/scan/flush-tight). A paragraph's line lies one leading
 * from its neighbours, but for the line under a display, whose next line
 * a tall inline formula (\frac{f}{f}) pushed 1.1 leadings down: the line
 * above must be prose too (development twin dev-2047-04 at 300 dpi, make-truth
 * seed 2047, scan seed 20470: two inline formulas on two lines boxed as
 * one). */
static gboolean
band_off_leading (const ScanPage *p, guint k, double x0, double x1)
{
  double base = G_MAXDOUBLE, above = -G_MAXDOUBLE, below = G_MAXDOUBLE, lead = p->leading;

  if (lead <= 0)
    return FALSE;
  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *w = &g_array_index (p->words, Word, i);
      if (w->text && w->band == (int) k)
        base = MIN (base, word_baseline (w, p->em));
    }
  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *o = &g_array_index (p->words, Word, i);
      double b;
      if (!o->text || o->band == (int) k || o->b.x1 <= x0 || o->b.x0 >= x1)
        continue;
      b = word_baseline (o, p->em);
      if (b < base - 0.5 * p->em)
        above = MAX (above, b);
      else if (b > base + 0.5 * p->em)
        below = MIN (below, b);
    }
  if (above < base - 2.5 * lead || below > base + 2.5 * lead)
    return FALSE;
  return base - above >= OFF_LEADING * lead && below - base >= OFF_LEADING * lead;
}

/* A line of its own, apart from the text above and below (or off the
 * paragraph's leading, band_off_leading), whose one or two running-text
 * words are under half the line's width is a display's line: the words
 * are what Tesseract read of the math ("xa" in \|c\| \times a at
 * confidence 85). The line groups (band_line_groups) weigh words only,
 * and a display's math is often no word at all. */
static void
page_display_lines (ScanPage *p)
{
  gboolean changed = FALSE, off_leading = g_strcmp0 (g_getenv ("FM_SCAN_OFF_LEADING"), "0") != 0;

  for (guint k = 0; k < p->bands->len; k++)
    {
      double text_w = 0, x0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE;
      int n = 0;
      for (guint i = 0; i < p->words->len; i++)
        {
          const Word *w = &g_array_index (p->words, Word, i);
          if (!w->text || w->band != (int) k)
            continue;
          n++;
          text_w += box_w (&w->b);
          x0 = MIN (x0, w->b.x0);
          x1 = MAX (x1, w->b.x1);
        }
      if (n == 0 || n > 2 || text_w >= 0.5 * band_line_width (p, k, x0, x1) ||
          !(band_stands_apart (p, k) || (off_leading && band_off_leading (p, k, x0, x1))))
        {
          changed |= band_column_display_lines (p, k);
          continue;
        }
      for (guint i = 0; i < p->words->len; i++)
        {
          Word *w = &g_array_index (p->words, Word, i);
          if (w->text && w->band == (int) k)
            w->text = w->strong = FALSE;
        }
      changed = TRUE;
    }
  if (changed)
    page_rebuild_bands (p);
}

/* Whether s reads as a section's number: digits, with dots between and
 * after them ("2", "3.1", "4.2."). */
static gboolean
reads_like_section_number (const char *s)
{
  if (!g_ascii_isdigit (*s))
    return FALSE;
  for (; *s; s++)
    if (!g_ascii_isdigit (*s) && (*s != '.' || s[1] == '.'))
      return FALSE;
  return TRUE;
}

/* The words of the heading whose number is word i, or NULL: the words
 * after it on its row (chained over gaps under 2.5 em: the heading's quad
 * after its number is 1.44 em of the text at \section's 14.4 pt), one to
 * eight of them, all of letters, the first a capital. */
static GPtrArray *
heading_words (const ScanPage *p, guint i)
{
  const Word *num = &g_array_index (p->words, Word, i);
  g_autoptr(GPtrArray) title = g_ptr_array_new ();
  double right = num->b.x1;
  gboolean grew = TRUE;
  int n_letters;

  while (grew)
    {
      grew = FALSE;
      for (guint k = 0; k < p->words->len; k++)
        {
          Word *w = &g_array_index (p->words, Word, k);
          if (w->b.x0 <= right || w->b.x0 - right >= 2.5 * p->em || !words_share_row (num, w) ||
              g_ptr_array_find (title, w, NULL))
            continue;
          if (!letters_only (w->utf8, &n_letters))
            return NULL;
          g_ptr_array_add (title, w);
          right = w->b.x1;
          grew = TRUE;
        }
    }
  if (title->len == 0 || title->len > 8)
    return NULL;
  g_ptr_array_sort (title, cmp_word_x);
  if (!g_unichar_isupper (g_utf8_get_char (((Word *) title->pdata[0])->utf8)))
    return NULL;
  return g_steal_pointer (&title);
}

/* Whether the heading line from word num to x1 stands apart (no text
 * line within DISPLAY_APART_EM above or below it over its columns) and
 * starts at its column's left edge: a line of running text below it,
 * within 5 em (the paragraph after it, whose first line LaTeX does not
 * indent), starts within 0.5 em of it (a line's start: a word inside a
 * line there is no margin; a display's "37" and "Cats" over a line's
 * word were taken for a heading, dev-2026-09). */
static gboolean
heading_at_margin (const ScanPage *p, const Word *num, double x1)
{
  double em = p->em;
  gboolean margin = FALSE;

  for (guint k = 0; k < p->bands->len; k++)
    {
      const Band *bd = &g_array_index (p->bands, Band, k);
      if (bd->x0 < x1 && bd->x1 > num->b.x0 && MAX (bd->top - num->b.y1, num->b.y0 - bd->bottom) >= 0 &&
          rows_within_skip (num->b.y0, num->b.y1, bd->top, bd->bottom, em))
        return FALSE;
    }
  for (guint k = 0; k < p->words->len && !margin; k++)
    {
      const Word *o = &g_array_index (p->words, Word, k);
      margin = o->text && o->b.y0 > num->b.y1 && o->b.y0 < num->b.y1 + 5 * em &&
               fabs (o->b.x0 - num->b.x0) < 0.5 * em && word_starts_line (p, o);
    }
  return margin;
}

/* A section's heading ("2 Of that", "1 She by"): a number at its
 * column's left edge and a few words of letters after it, the first a
 * capital, on a line of its own, is running text whatever Tesseract's
 * confidence. Bold at 14.4 pt on a 300 dpi twin, its words were read at
 * confidence 1 to 43 and taken for math, and the heading was boxed as a
 * display (development twins, make-truth seeds 2026-2029, scan seeds
 * 20260-20290: 4 of the 29 false displays at 300 dpi, none at 150). A
 * display is centred or set in, not at the margin, and its words are
 * seldom all letters after a number. */
static void
page_heading_lines (ScanPage *p)
{
  gboolean changed = FALSE;

  for (guint i = 0; i < p->words->len; i++)
    {
      Word *num = &g_array_index (p->words, Word, i);
      g_autoptr(GPtrArray) title = NULL;

      if (!reads_like_section_number (num->utf8) || (title = heading_words (p, i)) == NULL ||
          !heading_at_margin (p, num, ((Word *) title->pdata[title->len - 1])->b.x1))
        continue;
      g_ptr_array_add (title, num);
      for (guint k = 0; k < title->len; k++)
        {
          Word *w = title->pdata[k];
          w->text = TRUE;
          w->p_math = 0;  /* not a seed either (comp_place) */
        }
      changed = TRUE;
    }
  if (changed)
    page_rebuild_bands (p);
}

/* One ink component in the deskewed frame: its word, whether it is running
 * text or math evidence (a seed), its text line. */
/* One piece of ink as large as a good part of the page, or over 4 em both
 * ways: a picture (a drawing, a frame, a photo's dark blotch), not type. */
static gboolean
comp_is_picture (const ScanPage *p, const Comp *c)
{
  return box_w (&c->b) > p->img->width * 0.6 || box_h (&c->b) > p->img->height * 0.3 ||
         (box_w (&c->b) > 4 * p->em && box_h (&c->b) > 4 * p->em);
}

/* A long thin line along the page's skew (a rule turned with the page):
 * its box turned back is as tall as the line's slant over its length (a
 * footnote rule 8 em long on a page skewed 1.9 degrees: 0.55 em), which
 * is_rule took for a thick bar, and which stacked the rule onto the
 * footnote's first line (development twins, seed 2013, 300 dpi: the rule,
 * the footnote's mark and its first formula one inline box). Its height
 * turned back is the thickness of its ink: its area over its length. */
static void
comp_straighten_line (const ScanPage *p, Comp *c)
{
  double w = box_w (&c->img), h = box_h (&c->img), slack = 0.05 * p->em;
  double slant = w * fabs (tan (p->skew)), t = c->area / MAX (1.0, w), my;

  /* Its box is the slant and the stroke: no taller (a wide tilde, hat or
   * arc over several letters is, by its own height) and no less tall. */
  if (w < 2 * p->em || slant < slack || t > 0.6 * p->em || h > slant + 2 * t + slack || h < slant - slack ||
      !fm_scan_stroke_along (p->img->pixels, p->img->stride, p->threshold, (int) c->img.x0, (int) c->img.y0,
                             (int) c->img.x1, (int) c->img.y1, tan (p->skew), MAX (t, slack)))
    return;
  my = (c->b.y0 + c->b.y1) / 2;
  c->b.y0 = my - MAX (t, 1.0) / 2;
  c->b.y1 = my + MAX (t, 1.0) / 2;
}

/* The running-text word a piece of ink in no word's box belongs to: one
 * on its line within 0.1 em of it, for a piece no larger than a letter.
 * Tesseract's box may leave out a word's first or last letters (a box of
 * "Has" 3 pt wide, its "as" outside); left out they were ink under no
 * word, a seed, boxed as a formula between two words of prose. A formula
 * stands a space from the prose (for the empty words of word_empty_piece,
 * those in formulas were 0.12 em and more from the running text beside
 * them), but may be glued to it by a hyphen or an apostrophe
 * ("$\\sigma$-algebra", "$f$'s"): none joins a word at a side that begins
 * or ends so (word_open_at). Asking also that the word's box be too narrow
 * for its text (under 0.35 em a character) kept "$n$th" apart but lost
 * most of what this join gained (development twins, 150 dpi: inline
 * precision 0.495 -> 0.450). -1 none. */
static int
comp_touching_word (const ScanPage *p, const Comp *c)
{
  double em = p->em;

  if (box_w (&c->b) > em || box_h (&c->b) > em)
    return -1;
  for (guint k = 0; k < p->words->len; k++)
    {
      const Word *w = &g_array_index (p->words, Word, k);
      if (!w->text || v_overlap (c->b.y0, c->b.y1, w->b.y0, w->b.y1) < 0.5 * box_h (&c->b))
        continue;
      if (MAX (c->b.x0, w->b.x0) - MIN (c->b.x1, w->b.x1) < 0.1 * em &&
          word_open_at (w, c->b.x0 + c->b.x1 < w->b.x0 + w->b.x1))
        return (int) k;
    }
  return -1;
}

/* The text line a piece of ink whose middle is (mx, my) lies on: of the
 * bands whose rows hold my, the one nearest mx (the last of those that
 * hold mx), -1 none. By the rows alone a piece took the last such band:
 * on a two-column page whose columns' lines are not level (a display in
 * one column shifts its lines), a band of one column's words overlaps
 * the rows of the other's, and a formula's pieces were shared out
 * between two lines, which comps_join never joins, and boxed in parts
 * (development twins, make-truth seeds 2022-2025, scan seeds 20220-20250,
 * 40 pages: \frac{a}{k}, f < z + c, \sqrt{a \times \sigma} among the 9
 * inline formulas gained at 300 and 150 dpi, 1 lost; band_at alone 21
 * false boxes fewer). Where the nearest such band is 3 em or more to the
 * side (the other column's), bands within 0.3 em of my count too, by
 * their distance sideways plus up or down: the piece took the far band
 * while the formula's other pieces took the near one (review of scan14t:
 * u \neq \|n\| and g_{i} cut in two on two-column twins). Not nearer:
 * on one column, a stray band of a misread word between two lines drew
 * the scripts of x_1^2 + x_2^2 + x_3^2 = r^2 apart (review of scanfix8). */
static int
band_at (const ScanPage *p, double mx, double my)
{
  double best = G_MAXDOUBLE;
  int found = -1;

  for (guint k = 0; k < p->bands->len; k++)
    {
      const Band *bd = &g_array_index (p->bands, Band, k);
      double dx = mx < bd->x0 ? bd->x0 - mx : mx > bd->x1 ? mx - bd->x1 : 0;
      if (my >= bd->top && my <= bd->bottom && dx <= best)
        {
          best = dx;
          found = (int) k;
        }
    }
  if (found < 0 || best < 3.0 * p->em)
    return found;
  best = G_MAXDOUBLE;
  for (guint k = 0; k < p->bands->len; k++)
    {
      const Band *bd = &g_array_index (p->bands, Band, k);
      double dx = mx < bd->x0 ? bd->x0 - mx : mx > bd->x1 ? mx - bd->x1 : 0;
      double dy = my < bd->top ? bd->top - my : my > bd->bottom ? my - bd->bottom : 0;
      if (dy <= 0.3 * p->em && dx + dy <= best)
        {
          best = dx + dy;
          found = (int) k;
        }
    }
  return found;
}

static void
comp_place (ScanPage *p, Comp *c)
{
  GArray *words = p->words, *bands = p->bands;
  double mx, my, em = p->em;

  c->b = box_turn (&c->img, -p->skew, p->cx, p->cy);
  comp_straighten_line (p, c);
  mx = (c->b.x0 + c->b.x1) / 2;
  my = (c->b.y0 + c->b.y1) / 2;
  /* The smallest word whose box holds its middle: Tesseract returns
   * words with no text whose boxes span two lines and the words on them
   * (development twins, seeds 2012 and 2013); the ink is the word's
   * that was read of it. */
  c->word = -1;
  for (guint k = 0; k < words->len; k++)
    {
      Word *w = &g_array_index (words, Word, k);
      if (box_holds (&w->b, mx, my) &&
          (c->word < 0 || box_w (&w->b) * box_h (&w->b) <
                              box_w (&g_array_index (words, Word, c->word).b) *
                                box_h (&g_array_index (words, Word, c->word).b)))
        c->word = (int) k;
    }
  c->band = band_at (p, mx, my);
  if (c->word < 0)
    c->word = comp_touching_word (p, c);
  if (c->word >= 0)
    {
      Word *w = &g_array_index (words, Word, c->word);
      c->text = w->text;
      /* Letters and digits Tesseract reads well are no evidence of math
       * by themselves (a page number, "a"), but join a formula they touch. */
      c->seed = !w->text && !w->number && !w->citation &&
                (w->misread || !(w->conf >= 80 && (g_unichar_isalnum (g_utf8_get_char (w->utf8)) &&
                                                  g_utf8_strlen (w->utf8, -1) <= 1)));
      /* A letter standing alone in English prose is "a", "A" or "I":
       * any other is a variable, however sure Tesseract is of it. */
      if (!w->text && g_utf8_strlen (w->utf8, -1) == 1 &&
          g_unichar_isalpha (g_utf8_get_char (w->utf8)) && !strchr ("aAI", w->utf8[0]))
        c->seed = TRUE;
      if (!w->text && !w->number && !w->misread && w->conf >= 85 && g_utf8_strlen (w->utf8, -1) >= 2)
        {
          const char *q;
          gboolean digits = TRUE;
          for (q = w->utf8; *q; q++)
            if (!g_ascii_isdigit (*q) && !strchr (".,;:", *q))
              digits = FALSE;
          if (digits)
            c->seed = FALSE;  /* a number in the prose (a year, a count) */
        }
      /* What the classifier is sure is math is evidence of it. */
      if (w->p_math >= fm_scan_words_seed)
        c->seed = TRUE;
    }
  else
    c->seed = TRUE;  /* ink Tesseract made no word of: rules, big symbols */
  c->near = c->band;
  c->near_d = 0;
  if (c->band < 0)
    {
      double best = em;
      for (guint k = 0; k < bands->len; k++)
        {
          const Band *bd = &g_array_index (bands, Band, k);
          double d = band_gap (bd, my);
          if (mx >= bd->x0 && mx <= bd->x1 && d < best)
            {
              best = d;
              c->near = (int) k;
              c->near_d = d;
            }
        }
    }
  /* Ink as large as a good part of the page is a picture, not a
   * formula; so is one piece of ink over 4 em both ways (a drawing, a
   * frame): a formula's tallest pieces (delimiters, integrals) are
   * narrow, its widest (rules) flat. */
  if (comp_is_picture (p, c))
    c->text = TRUE;
}

/* Whether Tesseract's reading of a word may be a letter with a subscript
 * read as a two-letter word: two characters, the first a lowercase letter
 * of x-height only, the second one or a digit, no punctuation (a comma's
 * piece is as tall as a subscript's letter). Only such pairs: their two
 * glyphs stand on one baseline with one top in prose ("on", "so", "no"),
 * so a second glyph lower at both ends is set lower; other letters'
 * ascenders and descenders ("by", "he", "of") move the ends by as much
 * as a script does. */
static gboolean
reads_like_subscript_pair (const char *s)
{
  static const char xheight[] = "acemnorsuvwxz";

  return strlen (s) == 2 && strchr (xheight, s[0]) != NULL &&
         (strchr (xheight, s[1]) != NULL || g_ascii_isdigit (s[1]));
}

/* Whether a two-letter reading is one of English's common words of
 * x-height letters (reads_like_subscript_pair), which prose is full of. */
static gboolean
reads_like_common_word (const char *s)
{
  static const char *const common[] = { "am", "an", "as", "me", "no", "on", "or", "so", "us", "we" };

  for (guint i = 0; i < G_N_ELEMENTS (common); i++)
    if (g_ascii_strcasecmp (s, common[i]) == 0)
      return TRUE;
  return FALSE;
}

/* Whether math (a seed at least a quarter em tall, not w's own ink) lies
 * on w's text line within reach of it. */
static gboolean
math_seed_near (const ScanPage *p, const Word *w, double reach)
{
  for (int k = 0; k < p->n_comps; k++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, k);
      if (c->seed && c->band == w->band && box_h (&c->b) >= 0.25 * p->em &&
          c->b.x1 > w->b.x0 - reach && c->b.x0 < w->b.x1 + reach &&
          (c->word < 0 || &g_array_index (p->words, Word, c->word) != w))
        return TRUE;
    }
  return FALSE;
}

/* Whether running-text word w, whose pieces of ink are comps[pieces[0..n)],
 * is a variable with a subscript ("mo" for m_0, "un" for u_n at confidence
 * 83-86, dictionary words both: development twins, seeds 2014 and 2015,
 * 300 dpi, formulas with nothing boxed over them): of the word's pieces of
 * ink at least 0.28 em tall, the rightmost's bottom and top both
 * SUBSCRIPT_DROP_EM or more below the leftmost's. TeX sets a subscript
 * 0.15 em lower (and smaller). On those twins (300 and 150 dpi) the 528
 * other such words (prose, and a few math words with no script: "xz",
 * "nc") were at most 0.10 em lower at the bottom and at most 0.13 at the
 * top, never 0.08 at both (0.08-0.10 at the bottom only with the top
 * 0.01-0.06 higher); the subscripts 0.09-0.13 lower at the bottom and
 * 0.10-0.26 at the top. */
static gboolean
word_subscript_pair (const ScanPage *p, const Word *w, const int *pieces, int n)
{
  const Comp *a = NULL, *b = NULL;
  int tall = 0;

  /* The leftmost and the rightmost piece: a copy's broken strokes make
   * an m three stems and a 0 two arcs (development twin 2014-01). */
  if (!reads_like_subscript_pair (w->utf8))
    return FALSE;
  for (int k = 0; k < n; k++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, pieces[k]);
      /* A letter, a digit: not an i's dot, a comma, a speck; nor ink of
       * another text line in a word box Tesseract made too tall. */
      if (box_h (&c->b) < 0.28 * p->em || (c->band >= 0 && c->band != w->band))
        continue;
      tall++;
      if (a == NULL || c->b.x0 < a->b.x0)
        a = c;
      if (b == NULL || c->b.x1 > b->b.x1)
        b = c;
    }
  if (tall < 2 || a == b || b->b.y1 - a->b.y1 < SUBSCRIPT_DROP_EM * p->em ||
      b->b.y0 - a->b.y0 < SUBSCRIPT_DROP_EM * p->em)
    return FALSE;
  /* 0.08 em is two pixels at the 150 px/in analysis: a glyph a typewriter
   * or a curled page set that low turns "no", "on", "so" into math. The
   * pairs that are common English words are taken only with other math
   * on their line near them. Not every dictionary word: "mo" (m_0) and
   * "un" (u_n) are in Tesseract's, and asking that of them lost both
   * m_0 on the development twins (300 dpi), 6 and 22 em from other math. */
  return !reads_like_common_word (w->utf8) || math_seed_near (p, w, 4.0 * p->em);
}

/* Whether a short running-text word's ink is stacked: two pieces a
 * letter's size (0.25 em tall) one over the other, over the same columns,
 * 0.12 em or more apart and 1 em or more from the top of one to the
 * bottom of the other - an inline fraction Tesseract read as a word
 * ("fol" at confidence 36 for \frac{b}{\|x\|}, "ini" at 34 for
 * \frac{z}{\|y\|}: development twins, seeds 2014 and 2015, 300 dpi).
 * A word of prose is one row of letters, at most 0.9 em from its
 * ascenders' tops to its descenders' bottoms; only dots and accents sit
 * above its letters, and they are smaller: the two pieces must be of
 * comparable height (the smaller at least half the taller, as a fraction's
 * numerator and denominator are), since all else is measured against the
 * body em and a large title's letters are not - an i's dot in a \LARGE
 * bold title is 0.24 body em tall, 0.19 above a stem three times its
 * height, and "in", "via" were boxed as fractions so (review of scan14p,
 * test /pdf/scan/title). A letter a light copy broke in
 * two is broken by a pixel or two, not 0.12 em. Pieces on another text
 * line are that line's letters in a word box Tesseract made too tall
 * (a shaded binarised page's boxes were 1.8 em tall, and "space", "note"
 * were taken for fractions so). */
static gboolean
word_stacked (const ScanPage *p, const Word *w, const int *pieces, int n)
{
  double em = p->em;

  if (g_utf8_strlen (w->utf8, -1) > 5)
    return FALSE;
  for (int k = 0; k < n; k++)
    {
      const Comp *a = &g_array_index (p->comps, Comp, pieces[k]);
      if (box_h (&a->b) < 0.25 * em || (a->band >= 0 && a->band != w->band))
        continue;
      for (int m = 0; m < n; m++)
        {
          const Comp *b = &g_array_index (p->comps, Comp, pieces[m]);
          if (m == k || box_h (&b->b) < 0.25 * em || (b->band >= 0 && b->band != w->band) ||
              MIN (a->b.x1, b->b.x1) <= MAX (a->b.x0, b->b.x0) ||
              MIN (box_h (&a->b), box_h (&b->b)) < 0.5 * MAX (box_h (&a->b), box_h (&b->b)))
            continue;
          if (b->b.y0 - a->b.y1 >= 0.12 * em && b->b.y1 - a->b.y0 >= 1.0 * em)
            return TRUE;
        }
    }
  return FALSE;
}

/* Whether w is math as the rules and the classifier left it: read, not
 * running text, no equation number or citation. */
static gboolean
word_is_math (const Word *w)
{
  return !w->text && !w->number && !w->citation && w->utf8 != NULL && w->utf8[0] != '\0';
}

static int cmp_comp_x (const void *a, const void *b, gpointer data);

/* Whether comp c is an ellipsis' dot: under 0.2 em both ways (a comma
 * hangs 0.25 em and more). */
static gboolean
comp_dot (const ScanPage *p, const Comp *c)
{
  return box_w (&c->b) < 0.2 * p->em && box_h (&c->b) < 0.2 * p->em;
}

/* Whether w's pieces (pieces[0..n)) hold an ellipsis between letters:
 * three dots or more in a row on one level (middles within 0.1 em), each
 * under 0.4 em from the next, in the word's lower half, with a piece of
 * ink 0.2 em tall or more before them in the word and after them in the
 * word or in a math word within 0.3 em (the list's last item read apart:
 * "Bleeees" then "&n" for g_n). A list
 * "x_1, \dots, x_n" is one word to Tesseract, its dots read as letters
 * ("Bleeees" for g_1, \dots, g_n, "Thevees", "Zyeceete", "Pyseeeetn" at
 * confidence 0 on the development twins of make-truth seeds 2069-2070,
 * JPEG'd, CM, Latin Modern and Times) that the classifier took for
 * prose (0.03-0.40), and the list was cut where it began or lost. Prose
 * puts an ellipsis at a word's end, with its space after it. */
static gboolean
word_ellipsis_list (const ScanPage *p, guint i, const int *pieces, int n)
{
  const Word *w = &g_array_index (p->words, Word, i);
  double em = p->em, mid = (w->b.y0 + w->b.y1) / 2;
  g_autofree int *sorted = g_memdup2 (pieces, sizeof (int) * n);
  int run = 0;
  gboolean before = FALSE, ellipsis = FALSE;

  g_qsort_with_data (sorted, n, sizeof (int), cmp_comp_x, p->comps);
  for (int k = 0; k < n; k++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, sorted[k]);
      const Comp *prev = k > 0 ? &g_array_index (p->comps, Comp, sorted[k - 1]) : NULL;
      if (box_h (&c->b) >= 0.2 * em)
        {
          if (ellipsis)
            return TRUE;
          before = TRUE;
          run = 0;
          continue;
        }
      if (comp_dot (p, c) && (c->b.y0 + c->b.y1) / 2 > mid)
        run = run > 0 && c->b.x0 - prev->b.x1 < 0.4 * em &&
                  fabs ((c->b.y0 + c->b.y1) - (prev->b.y0 + prev->b.y1)) / 2 < 0.1 * em
                ? run + 1 : 1;
      else
        run = 0;
      ellipsis |= before && run >= 3;
    }
  if (ellipsis)
    {
      int next = word_beside (p, i, 1, 0.3 * em);
      return next >= 0 && word_is_math (&g_array_index (p->words, Word, next));
    }
  return FALSE;
}

/* The nearest word beside word i on its line (left: dir < 0), its gap
 * under reach, or -1. Beside: their heights overlap by half the
 * shorter's. */
static int
word_beside (const ScanPage *p, guint i, int dir, double reach)
{
  const Word *w = &g_array_index (p->words, Word, i);
  double best = reach;
  int found = -1;

  for (guint j = 0; j < p->words->len; j++)
    {
      const Word *o = &g_array_index (p->words, Word, j);
      double gap = dir < 0 ? w->b.x0 - o->b.x1 : o->b.x0 - w->b.x1;
      if (j == i || o->utf8 == NULL || o->utf8[0] == '\0' || gap < -0.1 * p->em || gap >= best ||
          !words_share_row (w, o))
        continue;
      best = gap;
      found = (int) j;
    }
  return found;
}

/* Opening less closing brackets in s. */
static int
bracket_balance (const char *s)
{
  int n = 0;
  for (; *s; s++)
    n += (strchr ("([{", *s) != NULL) - (strchr (")]}", *s) != NULL);
  return n;
}

/* Whether running-text word i closes a bracket that the math word just
 * before it opened: "O(k" then "logk)" for O(k \log k), the second read
 * as prose at confidence 89 (development twins, seeds 2016 and 2017,
 * 300 dpi: two such, the formula cut at the operator name; no prose word
 * on those twins closed a math word's bracket). The math word's open
 * bracket is not its first character: "O(k" and "f(x" open an argument,
 * "(n" then "large)" is a parenthetical round one variable, prose (review
 * probe of scan14q: "($n$ large)" was one box on 8 of 9 scans). */
static gboolean
word_closes_bracket (const ScanPage *p, guint i)
{
  const Word *w = &g_array_index (p->words, Word, i);
  int l;

  if (bracket_balance (w->utf8) >= 0 || strpbrk (w->utf8, "([{") != NULL)
    return FALSE;
  l = word_beside (p, i, -1, 0.6 * p->em);
  return l >= 0 && word_is_math (&g_array_index (p->words, Word, l)) &&
         bracket_balance (g_array_index (p->words, Word, l).utf8) > 0 &&
         strchr ("([{", g_array_index (p->words, Word, l).utf8[0]) == NULL;
}

/* Whether w reads as one operator or relation symbol: "=", "<", "+",
 * and what Tesseract reads \in and \subset as ("€", "©", "C": the
 * eighteenth round, docs/scanned.md). */
static gboolean
reads_like_operator (const char *s)
{
  static const char *const ops[] = { "=", "<", ">", "+", "-", "\u2212", "\u00b1", "\u00d7", "\u00b7", "\u2264",
                                     "\u2265", "\u2260", "\u2208", "\u2282", "\u20ac", "\u00a9", "C", "~" };

  for (guint k = 0; k < G_N_ELEMENTS (ops); k++)
    if (strcmp (s, ops[k]) == 0)
      return TRUE;
  return FALSE;
}

/* Whether running-text word i is a number that is an operator's operand:
 * digits (sentence punctuation after them allowed) with a math word read
 * as an operator (reads_like_operator) right beside it, within 0.6 em.
 * Tesseract reads "y_i \in 36" as three words and the classifier, sure
 * of the digits and seeing prose on their other side, took the number
 * for running text: the formula was boxed without it (development twins,
 * seeds 2018 and 2019: 7 such numbers at 300 dpi, 3 at 150, in "18 \in
 * a", "g_i \subset 14", "b^3 < 96"; one number of prose beside an
 * operator, against 269 numbers of prose with none). A number in prose
 * stands between words; one beside a relation is compared with
 * something. The reach, 0.6 em: TeX sets 0.22 em (\medmuskip) about a
 * binary operator and 0.28 em (\thickmuskip) about a relation, which
 * side bearings and blur widen. Measured on those twins (both
 * resolutions, the words before scan14r): the numbers the rule took lay
 * 0.21-0.50 em from the operator (the prose one 0.37 em), every number
 * of a formula beside an operator reading 0.17-0.65 em, and no number had
 * one 0.65-3 em away; so the gap keeps no prose out there (the operator
 * reading does), and the reach only bounds how far apart two words may
 * be and still be one formula's. */
static gboolean
word_number_operand (const ScanPage *p, guint i)
{
  const Word *w = &g_array_index (p->words, Word, i);
  gsize nd = strspn (w->utf8, "0123456789");

  if (nd == 0 || w->utf8[nd + strspn (w->utf8 + nd, ".,;:")] != '\0')
    return FALSE;
  for (int dir = -1; dir <= 1; dir += 2)
    {
      int o = word_beside (p, i, dir, 0.6 * p->em);
      if (o >= 0 && word_is_math (&g_array_index (p->words, Word, o)) &&
          reads_like_operator (g_array_index (p->words, Word, o).utf8))
        return TRUE;
    }
  return FALSE;
}

/* Running-text words whose ink is shaped as math (word_subscript_pair,
 * word_stacked), or that close a math word's bracket (word_closes_bracket),
 * are math, as are numbers beside an operator (word_number_operand), their
 * ink seeds. After comp_place: the pieces of each word
 * are known then. */
static void
page_math_shaped_words (ScanPage *p)
{
  guint nw = p->words->len;
  g_autofree int *start = g_new0 (int, nw + 2);
  g_autofree int *order = g_new (int, p->n_comps + 1);
  g_autofree int *fill = NULL;
  g_autofree gboolean *shaped = NULL;

  /* The pieces of each word, in order (a counting sort by word). */
  for (int k = 0; k < p->n_comps; k++)
    {
      int wi = g_array_index (p->comps, Comp, k).word;
      if (wi >= 0)
        start[wi + 1]++;
    }
  for (guint i = 0; i < nw; i++)
    start[i + 1] += start[i];
  fill = g_memdup2 (start, sizeof (int) * (nw + 1));
  for (int k = 0; k < p->n_comps; k++)
    {
      int wi = g_array_index (p->comps, Comp, k).word;
      if (wi >= 0)
        order[fill[wi]++] = k;
    }
  /* All verdicts first, then their seeds: a word's verdict must not hang
   * on the order the words were read in (math_seed_near). */
  shaped = g_new0 (gboolean, nw + 1);
  for (guint i = 0; i < nw; i++)
    {
      Word *w = &g_array_index (p->words, Word, i);
      const int *pieces = order + start[i];
      int n = start[i + 1] - start[i];
      shaped[i] = w->text &&
                  ((n >= 2 && (word_subscript_pair (p, w, pieces, n) || word_stacked (p, w, pieces, n))) ||
                   (n >= 5 && word_ellipsis_list (p, i, pieces, n)) ||
                   word_closes_bracket (p, i) || word_number_operand (p, i));
    }
  for (guint i = 0; i < nw; i++)
    {
      Word *w = &g_array_index (p->words, Word, i);
      const int *pieces = order + start[i];
      int n = start[i + 1] - start[i];
      if (!shaped[i])
        continue;
      w->text = w->strong = FALSE;
      w->p_math = 1;
      for (int k = 0; k < n; k++)
        {
          Comp *c = &g_array_index (p->comps, Comp, pieces[k]);
          if (!comp_is_picture (p, c))
            {
              c->text = FALSE;
              c->seed = TRUE;
            }
        }
    }
}

/* A citation in brackets ("[9]", "[32]") beside running text is prose:
 * its ink is made running text, which no formula takes in or joins
 * across. It also reads as an equation number, and an inline formula
 * beside it joined it and was boxed with it or taken for its number
 * (development twins, seeds 2016 and 2017, 300 dpi: \sum_{i=1}^{n} g
 * before "[9] all", a^2 before "[32] system"). An equation number stands
 * apart, at its display's end, with no running text beside it. */
static void
page_citation_words (ScanPage *p)
{
  guint nw = p->words->len;
  g_autofree gboolean *prose = g_new0 (gboolean, nw + 1);

  /* All verdicts first: a verdict must not hang on the reading order. */
  for (guint i = 0; i < nw; i++)
    {
      const Word *w = &g_array_index (p->words, Word, i);
      int l, r;
      if (!w->citation || w->utf8[0] != '[')
        continue;
      l = word_beside (p, i, -1, 1.0 * p->em);
      r = word_beside (p, i, 1, 1.0 * p->em);
      prose[i] = (l >= 0 && g_array_index (p->words, Word, l).text) ||
                 (r >= 0 && g_array_index (p->words, Word, r).text);
    }
  for (guint i = 0; i < nw; i++)
    if (prose[i])
      {
        Word *w = &g_array_index (p->words, Word, i);
        w->text = TRUE;
        w->number = FALSE;
      }
  for (int k = 0; k < p->n_comps; k++)
    {
      Comp *c = &g_array_index (p->comps, Comp, k);
      if (c->word >= 0 && prose[c->word])
        {
          c->text = TRUE;
          c->seed = FALSE;
        }
    }
}

/* The bench's baseline, Tesseract alone: its words that are not in its
 * dictionary (nor numbers, citations, bare digits) are math; neighbours on
 * one line less than 0.6 em apart are one formula, inline on a line with
 * running text, else display. No ink. */
static void
page_tesseract_alone (ScanPage *p)
{
  g_autoptr(GArray) math = g_array_new (FALSE, FALSE, sizeof (Box));
  g_autoptr(GArray) math_band = g_array_new (FALSE, FALSE, sizeof (int));
  GArray *words = p->words, *bands = p->bands;
  double em = p->em;

  for (guint i = 0; i < words->len; i++)
    {
      Word *w = &g_array_index (words, Word, i);
      double my = (w->b.y0 + w->b.y1) / 2;
      int band = -1;
      gboolean merged = FALSE;
      if (w->dict || w->number || w->citation || w->digits || w->utf8[0] == '\0')
        continue;
      for (guint k = 0; k < bands->len; k++)
        if (my >= g_array_index (bands, Band, k).top && my <= g_array_index (bands, Band, k).bottom)
          band = (int) k;
      for (guint m = 0; m < math->len && !merged; m++)
        {
          Box *o = &g_array_index (math, Box, m);
          if (g_array_index (math_band, int, m) == band &&
              v_overlap (o->y0, o->y1, w->b.y0, w->b.y1) > 0 &&
              MAX (o->x0, w->b.x0) - MIN (o->x1, w->b.x1) < 0.6 * em)
            {
              box_union (o, &w->b);
              merged = TRUE;
            }
        }
      if (!merged)
        {
          g_array_append_val (math, w->b);
          g_array_append_val (math_band, band);
        }
    }
  for (guint m = 0; m < math->len; m++)
    {
      Box b = box_turn (&g_array_index (math, Box, m), p->skew, p->cx, p->cy);
      FmRect r = { b.x0 / p->scale, b.y0 / p->scale, b.x1 / p->scale, b.y1 / p->scale };
      FmRegion *reg = fm_region_new (p->page_index, g_array_index (math_band, int, m) >= 0
                                                      ? FM_REGION_INLINE : FM_REGION_DISPLAY, &r);
      reg->font_size = em / p->scale;
      g_ptr_array_add (p->regions, reg);
    }
}

/* A long thin rule with no ink just above or below it (a footnote's
 * rule, a table's) is no fraction bar: it takes nothing stacked on it. A
 * scan's blur makes a 0.4 pt rule a quarter of an em thick at 150 dpi, so
 * a rule is told by its length and shape. Running text's letters are no
 * fraction part: a footnote rule set close between the last line of
 * prose and the first footnote (small type, a scanner's blur) had both
 * and took the footnote's mark and its first formula as one fraction
 * (development twins, seed 2010: "+A note on" with \frac{n_i}{c_1}). */
/* Whether band k has a running-text word within 2 em of [x0, x1] (as
 * page_cluster_lines asks): a band spans the page's columns, and ink at
 * the height of the other column's line is not on that line. */
static gboolean
band_text_near (const ScanPage *p, int k, double x0, double x1)
{
  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *w = &g_array_index (p->words, Word, i);
      if (w->text && w->band == k && MAX (x0, w->b.x0) - MIN (x1, w->b.x1) < 2.0 * p->em)
        return TRUE;
    }
  return FALSE;
}

static gboolean *
page_lone_rules (ScanPage *p)
{
  gboolean *lone_rule = g_new0 (gboolean, p->n_comps + 1);
  double em = p->em;

  for (int i = 0; i < p->n_comps; i++)
    {
      Comp *a = &g_array_index (p->comps, Comp, i);
      gboolean above = FALSE, below = FALSE;
      if (!is_rule (&a->b, em))
        continue;
      for (int j = 0; j < p->n_comps; j++)
        {
          Comp *b = &g_array_index (p->comps, Comp, j);
          /* Ink on a text line the rule is not on is that line's (a
           * footnote's mark and first formula under its rule, a display
           * over it); a fraction's parts are on the bar's line or off
           * every line: off it where the line's words are in the other
           * column (a display fraction's numerator level with the other
           * column's prose). */
          if (j == i || b->text || b->b.x1 < a->b.x0 || b->b.x0 > a->b.x1 ||
              (b->band >= 0 && b->band != a->band && band_text_near (p, b->band, a->b.x0, a->b.x1)))
            continue;
          if (b->b.y1 <= a->b.y0 && a->b.y0 - b->b.y1 < 0.3 * em)
            above = TRUE;
          if (b->b.y0 >= a->b.y1 && b->b.y0 - a->b.y1 < 0.3 * em)
            below = TRUE;
        }
      lone_rule[i] = !(above && below);
    }
  return lone_rule;
}

static double band_word_space (const ScanPage *p, int k);

/* Whether piece c is in a word read as an equation number. */
static gboolean
comp_in_number (const ScanPage *p, const Comp *c)
{
  return c->word >= 0 && g_array_index (p->words, Word, c->word).number;
}

/* Whether two pieces of non-text ink are one formula's (band_ws: each
 * text line's word space, band_word_space). */
static gboolean
comps_join (ScanPage *p, const Comp *a, const Comp *b, gboolean lone_a, gboolean lone_b, const double *band_ws)
{
  double gx, gy, em = p->em, reach = 1.3 * em;
  gboolean rule, side;

  /* Ink on two different text lines is never one formula: two
   * inline formulas one above the other are closer than a
   * fraction's parts. Limits, fraction parts and displays lie
   * between or off the lines. */
  if (a->band >= 0 && b->band >= 0 && a->band != b->band)
    return FALSE;
  gx = MAX (a->b.x0, b->b.x0) - MIN (a->b.x1, b->b.x1);
  gy = MAX (a->b.y0, b->b.y0) - MIN (a->b.y1, b->b.y1);
  /* A long thin rule (a fraction bar, a footnote's rule) takes what
   * lies within 0.15 em above and below it: a fraction's parts sit
   * that close, a footnote's first line does not. */
  rule = is_rule (&a->b, em) || is_rule (&b->b, em);
  /* Nor is ink on a text line one formula with ink stacked against it
   * that lies off every line but nearer another: the limit or fraction
   * part of a formula on the next line (an inline sum's limits, a
   * fraction's numerator reach half a line out). */
  if (gx < 0 && !rule && (a->band >= 0) != (b->band >= 0))
    {
      const Comp *on = a->band >= 0 ? a : b, *off = a->band >= 0 ? b : a;
      const Band *bd = &g_array_index (p->bands, Band, on->band);
      double my = (off->b.y0 + off->b.y1) / 2;
      if (off->near >= 0 && off->near != on->band &&
          off->near_d < band_gap (bd, my))
        return FALSE;
    }
  /* A light copy loses the thin strokes of a relation or an operator
   * (\le, \subset, \cdot down to a few pixels), and its operands stand
   * the symbol's width and both its spaces apart, 1.3-1.6 em ("4 \le
   * \gamma", "t^{-1} \le z" as two groups, development twins 2083,
   * binary+light). On a line of prose with an ordinary word space (under
   * half an em: not a line TeX stretched, whose wide spaces part two
   * formulas) two pieces of that line join that far too; an equation
   * number's never. */
  if (a->band >= 0 && a->band == b->band && band_ws[a->band] > 0 && band_ws[a->band] < 0.5 * em &&
      !comp_in_number (p, a) && !comp_in_number (p, b))
    reach = 1.6 * em;
  side = gx < reach && gy < -0.2 * MIN (box_h (&a->b), box_h (&b->b));
  if ((lone_a || lone_b) && gx < 0)
    return FALSE;
  /* Side by side over more than a thin space only with no running
   * text between them. */
  if (side && gx > 0.3 * em)
    {
      double gx0 = MIN (a->b.x1, b->b.x1), gx1 = MAX (a->b.x0, b->b.x0);
      double top = MAX (a->b.y0, b->b.y0), bottom = MIN (a->b.y1, b->b.y1);
      for (guint k = 0; k < p->words->len && side; k++)
        {
          Word *w = &g_array_index (p->words, Word, k);
          double wx = (w->b.x0 + w->b.x1) / 2, wy = (w->b.y0 + w->b.y1) / 2;
          if (w->text && wx > gx0 && wx < gx1 && wy > top - 0.5 * em && wy < bottom + 0.5 * em)
            side = FALSE;
        }
    }
  /* Centred one over the other (half the narrower's width shared), a
   * little farther: an inline fraction's denominator hangs 0.27 em below
   * its bar (TeX's text style: the bar at 0.25 em, the denominator's
   * x-height top at -0.04), and a scan's blur runs the bar into the
   * numerator (development twins, seeds 2014 and 2015, 300 dpi:
   * \frac{59}{\sigma}'s sigma 0.30 em below, boxed alone and dropped).
   * And a third of the text lines' pitch at most whatever the em (4 pt
   * where no pitch was measured: a 10 pt font's 12 pt leading): on a
   * shaded JPEG page whose word boxes made the em 2.4 times too large,
   * 0.4 em reached a display set a line's gap over an inline square root,
   * and the two were one box (fresh twin 1061-00 at both resolutions;
   * found after scoring). The pitch, not points: a page scanned or
   * printed at another size moves its lines and its gaps together; but
   * never over 6 pt, since on a sparse page (a text line, a display, a
   * text line) the nearest line below is a display's gap, 3-4 em (review
   * of scanfix3). */
  if (gx < -0.5 * MIN (box_w (&a->b), box_w (&b->b)) && !rule &&
      gy < MIN (0.4 * em, p->pitch > 0 ? MIN (p->pitch / 3, 6.0 * p->scale) : 4.0 * p->scale))
    return TRUE;
  return side || (gx < 0 && gy < (rule ? 0.15 : 0.3) * em) || (gx < 0.12 * em && gy < 0.12 * em);
}

/* Two pieces page_join_ink joins, and the gap between them (px, the
 * larger of the two ways; negative where they overlap both ways). */
typedef struct {
  int a, b;
  double gap;
} JoinPair;

static int
cmp_join_pair (const void *x, const void *y)
{
  const JoinPair *a = x, *b = y;
  if (a->gap != b->gap)
    return a->gap < b->gap ? -1 : 1;
  return a->a != b->a ? a->a - b->a : a->b - b->b;
}

/* Whether text lines a and b (bands, -1 none) are two lines one over
 * the other: their middles 0.75 of the lines' pitch apart (1.2 em where
 * none was measured). The two columns' lines of a light copy that are
 * not level lie closer, and one formula's pieces may fall on both
 * (fixture column-lines: \sum_{i=1}^{n} 9, its sign's top on one, its
 * foot on the other). */
static gboolean
lines_apart (const ScanPage *p, int a, int b)
{
  const Band *ba, *bb;

  if (a < 0 || b < 0 || a == b)
    return FALSE;
  ba = &g_array_index (p->bands, Band, a);
  bb = &g_array_index (p->bands, Band, b);
  return fabs ((ba->top + ba->bottom) - (bb->top + bb->bottom)) / 2 >= 0.75 * (p->pitch > 0 ? p->pitch : 1.2 * p->em);
}

/* Clusters: non-text ink within 1.3 em side by side (1.6 em on a prose
 * line with an ordinary word space: comps_join; text words are not
 * in the graph, and none may lie between, so prose is never bridged; the
 * development set's inline recall rose from 0.41 at 0.35 em through 0.46
 * at 0.5 em to 0.55 at 1.3 em, and fell at 1.7 em) or 0.3 em stacked
 * (fraction parts, limits). Returns the union-find parents. */
static int *
page_join_ink (ScanPage *p)
{
  int *parent = g_new (int, p->n_comps + 1);
  g_autofree gboolean *lone_rule = NULL;
  g_autofree double *band_ws = NULL;

  g_autofree int *line = g_new (int, p->n_comps + 1);
  g_autofree double *tallest = g_new (double, p->n_comps + 1);
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (JoinPair));

  for (int i = 0; i < p->n_comps; i++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, i);
      parent[i] = i;
      line[i] = c->band;
      tallest[i] = c->band >= 0 ? box_h (&c->b) : 0;
    }
  lone_rule = page_lone_rules (p);
  band_ws = g_new0 (double, p->bands->len + 1);
  for (guint k = 0; k < p->bands->len; k++)
    band_ws[k] = band_word_space (p, (int) k);
  for (int i = 0; i < p->n_comps; i++)
    {
      Comp *a = &g_array_index (p->comps, Comp, i);
      a->lone_rule = lone_rule[i];
      if (a->text)
        continue;
      for (int j = i + 1; j < p->n_comps; j++)
        {
          Comp *b = &g_array_index (p->comps, Comp, j);
          JoinPair pair = { i, j, MAX (MAX (a->b.x0, b->b.x0) - MIN (a->b.x1, b->b.x1),
                                       MAX (a->b.y0, b->b.y0) - MIN (a->b.y1, b->b.y1)) };
          if (!b->text && comps_join (p, a, b, lone_rule[i], lone_rule[j], band_ws))
            g_array_append_val (pairs, pair);
        }
    }
  /* Nearest first, and never two formulas on two text lines a line's
   * pitch apart (line[]: a group's line, -1 none; lines_apart; each with
   * a piece on its line half an em tall, tallest[]): comps_join keeps
   * two pieces on two lines apart, but a piece off the lines joined both
   * (the limits under an inline sum, side by side with its sign, and
   * stacked over the next line's formula 0.37 em below: development twin
   * dev-2042-05, scaninline), and the two formulas were one box. The
   * nearer join wins. A group with only small pieces on its line is no
   * formula of its own: a light copy broke a sum's sign, and its foot
   * and its limit's specks fell on the next line (fixture column-lines,
   * \sum_{i=1}^{n} 9). */
  g_array_sort (pairs, cmp_join_pair);
  for (guint k = 0; k < pairs->len; k++)
    {
      const JoinPair *pair = &g_array_index (pairs, JoinPair, k);
      int ra = fm_uf_find (parent, pair->a), rb = fm_uf_find (parent, pair->b), r;
      if (ra == rb || (lines_apart (p, line[ra], line[rb]) && MIN (tallest[ra], tallest[rb]) >= 0.5 * p->em))
        continue;
      uf_join (parent, ra, rb);
      r = MIN (ra, rb);
      line[r] = MAX (line[ra], line[rb]);
      tallest[r] = MAX (tallest[ra], tallest[rb]);
    }
  for (int i = 0; i < p->n_comps; i++)
    g_array_index (p->comps, Comp, i).group = fm_uf_find (parent, i);
  return parent;
}

/* Two inline formulas set a word space apart ("$f_{ij}$ $n^{*}$",
 * "$m_1, \dots, m_n$ $93 \le x$") are one group of ink to page_join_ink,
 * whose 1.3 em side-by-side join must bridge a relation's and a binary
 * operator's spaces. Inside a formula a gap that wide lies beside a
 * relation or a binary operator, a big operator's limits, a comma or a
 * dot; between two formulas both sides are operands. A group on a line
 * of prose is cut at a gap as wide as the line's own word space (the
 * median gap between its running-text words; 0.75 of it, TeX stretches
 * the line's spaces alike) where Tesseract saw a word break (the pieces
 * at each side in two different words, neither a symbol, the left not
 * ending and the right not beginning with what relations and operators
 * read as, the right no operator name, no bracket open on the left or
 * closed on the right: "(0," then "1)") and neither side's run of ink
 * (pieces under WORD_SPACE_RUN_EM apart) is a dot or comma (under 0.22
 * em tall) or an operator's shape: one or two pieces 0.25-0.85 em wide
 * and under 0.9 em tall with gaps on both sides within 30 % of each
 * other (a relation's thick spaces are alike; "x" for \times and "€"
 * for \in read as letters), nor a big operator's limits (the thin space
 * after them; pieces_limits_before), unless it is an operand whatever
 * its gaps (run_operand: a letter with a script, or beside a run read as
 * an operator). Development twins (make-truth seeds
 * 2034-2036, scan seeds 20340-20360, 300 dpi): of the 1,127 gaps of 0.15
 * em or more inside their inline groups, 38 lay between two formulas,
 * 999 inside one (most beside an operator, 0.2-0.45 em like the word
 * space: the gap alone does not tell them apart) and 90 beside prose
 * read as math. FM_SCAN_WORD_SPACES=0 leaves this out. */
#define WORD_SPACE_RUN_EM 0.12

typedef struct {
  double x0, x1, y0, y1;
  int first, n;          /* index into the sorted pieces, count */
} PieceRun;

/* What Tesseract read of a run (run_reading) and whether that reads as
 * one operator or relation symbol, read once per run of a group into an
 * array beside its runs: each gap asks of the runs on both sides and of
 * their neighbours, up to six readings a gap when each was read anew
 * (review of scanpair2). */
typedef struct {
  char text[64];
  gboolean op;
} RunReading;

/* Whether s begins with an operator name of three letters or more
 * ("logn)" for \log n), which a thin space sets apart from its operand. */
static gboolean
reads_operator_name_first (const char *s)
{
  for (int i = 0; operator_names[i]; i++)
    if (strlen (operator_names[i]) >= 3 && strncmp (s, operator_names[i], 3) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
is_bar (gunichar u)
{
  return u == '|' || u == 0x2223 || u == 0x2225 || u == 0x2016 || u == 0xa6;
}

/* Whether word s's bars (| ∣ ∥ ‖ ¦) at its start and at its end differ in
 * number: \mid or \parallel read stuck to an operand ("|b", "||q",
 * "a|"), not a norm or an absolute value, whose bars pair ("||n||" of
 * \|n\|: development twins 2034-2036 lost m_1, \dots, m_n before \|n\|
 * when any bar counted as a relation). */
static gboolean
reads_lone_bar (const char *s)
{
  int lead = 0, trail = 0;
  const char *c = s, *end = s + strlen (s);

  for (; *c && is_bar (g_utf8_get_char (c)); c = g_utf8_next_char (c))
    lead++;
  for (const char *e = end; e > c && is_bar (g_utf8_get_char (g_utf8_prev_char (e))); e = g_utf8_prev_char (e))
    trail++;
  return lead != trail;
}

/* Whether u, read alone as a word, is what Tesseract makes of a letter
 * or a small formula it cannot read - "@" for \alpha, "&" or "®" for a
 * small fraction, "™" for a letter with scripts - and never of a
 * relation or a binary operator, which it reads as "+", "<", "€", "©",
 * "—" and the like. Taken for operators, such words kept two formulas a
 * word space apart in one box (development twins, make-truth seeds
 * 2051-2053, scan seeds 20510-20530: "\sqrt{x \pm 59}" then "a" read
 * "£59" "@", "z_1 \in k" then "\frac{\theta}{54}" read "k" "&"). Not
 * "#" or "¥": both are \neq on those twins ("x^{*} \neq g" read "ct" "#"
 * "g" was cut in three at 150 dpi). */
static gboolean
reads_misread_glyph (gunichar u)
{
  return u == '@' || u == '&' || u == 0xae /* ® */ || u == 0x2122 /* ™ */;
}

/* Whether a word's reading at its start (or end) is what a relation or a
 * binary operator reads as, a symbol alone, or an operator name. A bar
 * there is a relation's where the word's bars are uneven ("|b", "||q")
 * unless the ink there is a delimiter's bar (delimiter, run_edge_delimiter):
 * then a bar, "\" or "/" read there is that delimiter ("||n|", "\|n\" for
 * \|n\|). */
static gboolean
word_operator_at (const char *s, gboolean at_end, gboolean delimiter)
{
  /* : / \ for a ratio's colon, a slash: narrow relations Tesseract
   * reads stuck to an operand ("a:") */
  static const char ops[] = "+-=<>~xXcCeE:/\\";
  gunichar u;

  if (s == NULL || *s == '\0')
    return TRUE;
  if (g_utf8_strlen (s, -1) == 1 && !g_unichar_isalnum (g_utf8_get_char (s)))
    return !reads_misread_glyph (g_utf8_get_char (s));
  u = at_end ? g_utf8_get_char (g_utf8_prev_char (s + strlen (s))) : g_utf8_get_char (s);
  if (delimiter && (is_bar (u) || u == '\\' || u == '/'))
    return FALSE;
  if (is_bar (u))
    return reads_lone_bar (s);
  if (u < 128)
    return strchr (ops, (int) u) != NULL;
  /* × · ± ∈ ⊂ ≤ ≥ — – € ¢ § */
  return u == 0xd7 || u == 0xb7 || u == 0xb1 || u == 0x2208 || u == 0x2282 || u == 0x2264 ||
         u == 0x2265 || u == 0x2014 || u == 0x2013 || u == 0x20ac || u == 0xa2 || u == 0xa7 ||
         (!at_end && reads_operator_name_first (s + (*s == '(')));
}

/* The words of the pieces of run r at its right (or left) edge, into
 * set (up to 4); FALSE when a piece there is in no word. */
static gboolean
run_edge_words (const ScanPage *p, const int *idx, const PieceRun *r, gboolean right, int *set, int *n_set)
{
  *n_set = 0;
  for (int m = r->first; m < r->first + r->n; m++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, idx[m]);
      gboolean edge = right ? c->b.x1 >= r->x1 - 0.15 * p->em : c->b.x0 <= r->x0 + 0.15 * p->em;
      gboolean seen = FALSE;
      if (!edge)
        continue;
      if (c->word < 0)
        return FALSE;
      for (int s = 0; s < *n_set; s++)
        seen |= set[s] == c->word;
      if (!seen && *n_set < 4)
        set[(*n_set)++] = c->word;
    }
  return *n_set > 0;
}

/* What Tesseract read of run r: the characters of its pieces' words
 * whose slot (each character an equal share of its word's width) has its
 * middle inside the run, into buf (size bytes, at least 8). A word read
 * across several runs ("+m" over the plus and the m of "77 + m") gives
 * each run its own part. */
static void
run_reading (const ScanPage *p, const int *idx, const PieceRun *r, char *buf, gsize size)
{
  int seen[4], n_seen = 0;
  gsize len = 0;

  buf[0] = '\0';
  for (int m = r->first; m < r->first + r->n; m++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, idx[m]);
      const Word *w;
      gboolean dup = FALSE;
      glong n_chars;
      const char *ch;
      if (c->word < 0)
        continue;
      for (int s = 0; s < n_seen; s++)
        dup |= seen[s] == c->word;
      if (dup || n_seen == 4)
        continue;
      seen[n_seen++] = c->word;
      w = &g_array_index (p->words, Word, c->word);
      n_chars = g_utf8_strlen (w->utf8, -1);
      ch = w->utf8;
      for (glong i = 0; i < n_chars; i++, ch = g_utf8_next_char (ch))
        {
          double mid = w->b.x0 + (i + 0.5) * box_w (&w->b) / n_chars;
          gsize bytes = (gsize) (g_utf8_next_char (ch) - ch);
          if (mid >= r->x0 && mid <= r->x1 && len + bytes < size)
            {
              memcpy (buf + len, ch, bytes);
              len += bytes;
              buf[len] = '\0';
            }
        }
    }
}

/* Whether a letter that reads as an operator (x for \times, c for
 * \subset, e for \in: word_operator_at) at the edge of a word is a
 * letter of its run's longer reading (run_reading): the operator's run
 * is read alone, its thick space apart, and "ex" or "c*" (c^{*}) is an
 * operand. */
static gboolean
run_letter_not_operator (const RunReading *reading, const char *word, gboolean at_end)
{
  gunichar u;

  if (word == NULL || *word == '\0')
    return FALSE;
  u = at_end ? g_utf8_get_char (g_utf8_prev_char (word + strlen (word))) : g_utf8_get_char (word);
  if (!g_unichar_isalpha (u))
    return FALSE;
  return g_utf8_strlen (reading->text, -1) >= 2;
}

/* Whether run k of n has an upright bar (half an em tall or more, under
 * 0.2 em wide) at its edge facing run k - side (side -1: the run's right
 * edge, +1: its left) with ink beside it: a norm's or an absolute value's
 * bar against its operand (the glyph's side bearing, 0.1-0.15 em), not
 * bars alone (the run under 0.4 em wide) set apart from the ink on their
 * far side, run k + side, by 0.25 em or more or with none there: \mid,
 * \parallel, their thick space (0.28 em) on both sides. However Tesseract
 * reads such a bar ("||n|", "|n||", "|x", "\|n\" for \|n\|, |x|), a word
 * space beside it is a cut between two formulas: scanfix9 kept bars read
 * unevenly as relations and lost such cuts on its development twins (m_1,
 * \dots, m_n then \|n\|; \|n\| \to \lambda then y_{i+1}). Probes
 * (cls-scanbars in 5 Type 1 fonts and XeLaTeX, two scan seeds, 300 and
 * 150 dpi): 33 formulas more found, none lost. */
static gboolean
run_edge_delimiter (const ScanPage *p, const int *idx, const PieceRun *runs, int k, int n, int side)
{
  const PieceRun *r = &runs[k];
  double em = p->em;
  gboolean alone = r->x1 - r->x0 < 0.4 * em;
  const Comp *edge = NULL;

  for (int m = r->first; m < r->first + r->n; m++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, idx[m]);
      alone &= box_h (&c->b) >= 0.5 * em && box_w (&c->b) < 0.2 * em;
      if (edge == NULL || (side < 0 ? c->b.x1 > edge->b.x1 : c->b.x0 < edge->b.x0))
        edge = c;
    }
  if (alone && (k + side < 0 || k + side >= n ||
                (side < 0 ? r->x0 - runs[k - 1].x1 : runs[k + 1].x0 - r->x1) >= 0.25 * em))
    return FALSE;
  return edge != NULL && box_h (&edge->b) >= 0.5 * em && box_w (&edge->b) < 0.2 * em;
}

/* Whether Tesseract read a word break between runs k - 1 and k of n
 * (their readings[]), with an operand's reading on both sides. */
static gboolean
runs_word_break (const ScanPage *p, const int *idx, const PieceRun *runs, const RunReading *readings, int k, int n)
{
  const PieceRun *a = &runs[k - 1], *b = &runs[k];
  gboolean bar_a = run_edge_delimiter (p, idx, runs, k - 1, n, -1), bar_b = run_edge_delimiter (p, idx, runs, k, n, 1);
  int la[4], lb[4], na, nb;

  if (!run_edge_words (p, idx, a, TRUE, la, &na) || !run_edge_words (p, idx, b, FALSE, lb, &nb))
    return FALSE;
  for (int i = 0; i < na; i++)
    {
      /* a bracket left open ("(0," then "1)" of (0, 1), "O(n" then "logn)") */
      if (bracket_balance (g_array_index (p->words, Word, la[i]).utf8) > 0)
        return FALSE;
      for (int j = 0; j < nb; j++)
        if (la[i] == lb[j])
          return FALSE;
      const char *wa = g_array_index (p->words, Word, la[i]).utf8;
      if ((word_operator_at (wa, TRUE, bar_a) && !run_letter_not_operator (&readings[k - 1], wa, TRUE)) ||
          reads_operator_name (wa))
        return FALSE;
    }
  for (int j = 0; j < nb; j++)
    {
      const char *wb = g_array_index (p->words, Word, lb[j]).utf8;
      if ((word_operator_at (wb, FALSE, bar_b) && !run_letter_not_operator (&readings[k], wb, FALSE)) ||
          bracket_balance (wb) < 0)
        return FALSE;
    }
  return TRUE;
}

/* Whether run r is shaped as a dot, a comma, or a flat operator (a
 * minus, =, \approx, an arrow: one piece twice as wide as tall, under
 * half an em tall). */
static gboolean
run_flat_operator (const PieceRun *r, double em)
{
  double w = r->x1 - r->x0, h = r->y1 - r->y0;

  return h <= 0.22 * em || (r->n == 1 && w >= 2 * h && h <= 0.5 * em);
}

/* Whether run k of n, gaps g[] between them (em), is a relation's or a
 * binary operator's shape between its two spaces, or a dot or comma. A
 * run beside a flat operator is its operand (\|n\| \to \lambda: the
 * lambda's spaces are the arrow's and the word space, alike). */
static gboolean
run_operator_like (const PieceRun *runs, int k, int n, const double *g, double em)
{
  double w = (runs[k].x1 - runs[k].x0) / em, h = (runs[k].y1 - runs[k].y0) / em;

  if (run_flat_operator (&runs[k], em))
    return TRUE;
  /* a narrow relation: \mid or \parallel (one or two bars, tall and
   * thin) or a colon (two stacked dots), under 0.25 em wide; the probes
   * (\mid, \parallel, a : b in cm, times, palatino, libertine, newtx,
   * xelatex, lualatex) lost 15 such formulas cut beside them */
  if (k > 0 && k < n - 1 && w < 0.2 && (h >= 0.6 || (runs[k].n == 2 && h >= 0.3)) && h <= 1.3 &&
      !run_flat_operator (&runs[k - 1], em) && !run_flat_operator (&runs[k + 1], em))
    return fabs (g[k - 1] - g[k]) <= 0.3 * MAX (g[k - 1], g[k]);
  if (k == 0 || k == n - 1 || w < 0.25 || w > 0.85 || h > 0.9 ||
      run_flat_operator (&runs[k - 1], em) || run_flat_operator (&runs[k + 1], em))
    return FALSE;
  return fabs (g[k - 1] - g[k]) <= 0.3 * MAX (g[k - 1], g[k]);
}

/* Whether run r holds a letter with a script: a piece 0.25 em tall or
 * more right of another's middle and lowered 0.12 em at both ends (a
 * subscript), or raised 0.25 em at its bottom and 0.1 em at its top (a
 * superscript; cluster_scripted's measures). An operator's pieces are
 * stacked (=, \le, \pm) or one; a_k, t_n, b_0 between an operator's
 * thick space and a word space have alike gaps on both sides and were
 * taken for operators (run_operator_like): two formulas a word space
 * apart stayed one box (development twins, seeds 2051-2053). */
static gboolean
run_scripted (const ScanPage *p, const int *idx, const PieceRun *r)
{
  double em = p->em;

  for (int i = r->first; i < r->first + r->n; i++)
    {
      const Comp *a = &g_array_index (p->comps, Comp, idx[i]);
      if (box_h (&a->b) < 0.25 * em)
        continue;
      for (int j = r->first; j < r->first + r->n; j++)
        {
          const Comp *b = &g_array_index (p->comps, Comp, idx[j]);
          if (j == i || box_h (&b->b) < 0.25 * em || b->b.x0 < (a->b.x0 + a->b.x1) / 2)
            continue;
          if ((a->b.y1 - b->b.y1 >= 0.25 * em && a->b.y0 - b->b.y0 >= 0.1 * em) ||
              (b->b.y1 - a->b.y1 >= 0.12 * em && b->b.y0 - a->b.y0 >= 0.12 * em))
            return TRUE;
        }
    }
  return FALSE;
}

/* Whether run k of n reads as one operator or relation symbol
 * (reads_like_operator: "+", ">", "€" for \in, ...). */
static gboolean
run_reads_operator (const RunReading *readings, int k, int n)
{
  return k >= 0 && k < n && readings[k].op;
}

/* Whether run k of n is an operand whatever its gaps: a letter with a
 * script (run_scripted), or a run beside one that Tesseract read as an
 * operator while it did not. Between a relation's thick space (0.28 em)
 * and a word space (0.25-0.4 em) an operand's gaps are as alike as an
 * operator's own two, and run_operator_like took "k" of "z_1 \in k" (its
 * neighbour read "€") and "m" of "77 + m" for operators. */
static gboolean
run_operand (const ScanPage *p, const int *idx, const PieceRun *runs, const RunReading *readings, int k, int n)
{
  if (run_scripted (p, idx, &runs[k]))
    return TRUE;
  return !run_reads_operator (readings, k, n) &&
         (run_reads_operator (readings, k - 1, n) || run_reads_operator (readings, k + 1, n));
}

/* Whether piece c is flat: twice as wide as tall. */
static gboolean
comp_flat (const Comp *c)
{
  return box_w (&c->b) >= 2 * box_h (&c->b);
}

/* Whether the middle of one of the pieces idx[0..n) other than a lies in
 * a's box (a radical's contents under its bar). */
static gboolean
pieces_inside (const ScanPage *p, const int *idx, int n, const Comp *a)
{
  for (int m = 0; m < n; m++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, idx[m]);
      double mx = (c->b.x0 + c->b.x1) / 2, my = (c->b.y0 + c->b.y1) / 2;
      if (c != a && mx > a->b.x0 && mx < a->b.x1 && my > a->b.y0 && my < a->b.y1)
        return TRUE;
    }
  return FALSE;
}

/* Whether piece a (of the pieces idx[0..n)) is shaped as a big
 * operator: taller than a letter and as wide as an em (an f is half as
 * wide); its limits may lie on another line. A slanted text-style
 * integral (newtx, libertine) is narrower but taller than a parenthesis
 * (1.0 em): \int_0^1 f, \oint_C w were cut after the sign or its limits
 * on the probes; its limits lie inside its slanted box, so they are not
 * a radical's contents. */
static gboolean
comp_big_operator (const ScanPage *p, const int *idx, int n, const Comp *a)
{
  double em = p->em;

  if (comp_flat (a))
    return FALSE;
  if (box_h (&a->b) >= 0.85 * em && box_w (&a->b) >= 0.65 * em && box_w (&a->b) <= 2.0 * em &&
      !pieces_inside (p, idx, n, a))
    return TRUE;
  return box_h (&a->b) >= 1.1 * em && box_w (&a->b) >= 0.3 * em && box_w (&a->b) <= 1.0 * em;
}

/* Whether the pieces idx[0..n) that lie wholly between x_from and x are
 * limits: each wholly above or wholly below row mid (specks under 0.2 em
 * both ways aside: a blurred "=" leaves them), and at least one. Inline,
 * \sum_{i=1}^{n} sets "n" at the sign's top right and "i=1" at its foot;
 * the lower limit (1.1-1.3 em wide in script size) ends farther from the
 * sign, or from "n" over "i", than the 0.7 em asked of them alone, while
 * an operand (\sum a_i, the next formula's first letter) straddles the
 * sign's middle. Development twins (make-truth seeds 2069-2070, 300 dpi):
 * \sum_{i=1}^{n} x^{\prime} (CM), \sum_{i=1}^{n} m, c^{k}, b^{n}
 * (Palatino, whose text-style sign is 0.81 em tall, under a big
 * operator's 0.85) were cut after the "1" of their lower limit. */
static gboolean
pieces_limits_within (const ScanPage *p, const int *idx, int n, double x_from, double x, double mid)
{
  double em = p->em, slack = 0.05 * em;
  int limits = 0;

  for (int m = 0; m < n; m++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, idx[m]);
      if (c->b.x0 < x_from - slack || c->b.x1 > x + slack || (box_w (&c->b) < 0.2 * em && box_h (&c->b) < 0.2 * em))
        continue;
      if (c->b.y1 > mid + slack && c->b.y0 < mid - slack)
        return FALSE;
      limits++;
    }
  return limits > 0;
}

/* Whether the pieces idx[0..n) ending within 0.7 em left of x hold a
 * big operator (a piece 0.85 em tall or more, 0.65-2 em wide, with its
 * limits when the blur ran them into it, nothing inside it) or two
 * stacked ones (sharing columns, one wholly above the other, no flat
 * piece between them) 0.9 em or more from top to bottom: a big
 * operator's limits, "n" over "i=1" right of a text-style \sum, or the
 * sigma itself broken by a light copy into its top and its flat foot;
 * the thin space after them is the operator's, not a word space
 * (\sum_{i=1}^{n} \|m\| was cut after its limits on 13 of the first 30
 * development twins at 300 dpi). A fraction's parts have their bar
 * between them, an i's dot its stem under it (0.5 em), = and \le are
 * flat or short. Farther left than 0.7 em, such a sign or pair holds
 * when only its limits lie between it and x (pieces_limits_within). */
static gboolean
pieces_limits_before (const ScanPage *p, const int *idx, int n, double x)
{
  double em = p->em, slack = 0.05 * em;

  for (int i = 0; i < n; i++)
    {
      const Comp *a = &g_array_index (p->comps, Comp, idx[i]);
      gboolean near = a->b.x1 >= x - 0.7 * em;
      if (a->b.x1 > x + slack || a->b.x1 < x - 2.0 * em || comp_flat (a))
        continue;
      if (comp_big_operator (p, idx, n, a) &&
          (near || pieces_limits_within (p, idx, n, a->b.x1, x, (a->b.y0 + a->b.y1) / 2)))
        return TRUE;
      for (int j = 0; j < n; j++)
        {
          const Comp *b = &g_array_index (p->comps, Comp, idx[j]);
          gboolean bar = FALSE;
          if (j == i || b->b.x1 > x + slack || b->b.y0 < a->b.y1 || MIN (a->b.x1, b->b.x1) <= MAX (a->b.x0, b->b.x0) ||
              b->b.y1 - a->b.y0 < 0.9 * em || (comp_flat (b) && box_h (&a->b) < 0.5 * em))
            continue;
          for (int m = 0; m < n && !bar; m++)
            {
              const Comp *c = &g_array_index (p->comps, Comp, idx[m]);
              bar = m != i && m != j && comp_flat (c) && c->b.y0 >= a->b.y1 - 1 && c->b.y1 <= b->b.y0 + 1 &&
                    c->b.x0 < MIN (a->b.x1, b->b.x1) && c->b.x1 > MAX (a->b.x0, b->b.x0);
            }
          /* (scaninline told a fraction whose blur ran its bar into a
           * part from limits by the sign before them; its review found
           * text-style \int_0^1 f(t)\,dt, whose slanted sign reaches over
           * its limits, cut after them in sans, Latin Modern, Times and
           * Palatino: two stacked pieces with no bar between are limits,
           * as before, and "\frac{m}{\|n\|} \frac{89}{\epsilon}" a word
           * space apart stay one box) */
          if (!bar && (near || pieces_limits_within (p, idx, n, MIN (a->b.x0, b->b.x0), x, (a->b.y1 + b->b.y0) / 2)))
            return TRUE;
        }
    }
  return FALSE;
}

/* The median gap between the running-text words of band k, px; 0 when
 * under two gaps. */
static double
band_word_space (const ScanPage *p, int k)
{
  g_autoptr(GPtrArray) on = g_ptr_array_new ();
  g_autoptr(GArray) gaps = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint i = 0; i < p->words->len; i++)
    {
      Word *w = &g_array_index (p->words, Word, i);
      if (w->text && w->band == k)
        g_ptr_array_add (on, w);
    }
  g_ptr_array_sort (on, cmp_word_x);
  for (guint i = 1; i < on->len; i++)
    {
      double gap = ((Word *) on->pdata[i])->b.x0 - ((Word *) on->pdata[i - 1])->b.x1;
      if (gap > 0 && gap < p->em)
        g_array_append_val (gaps, gap);
    }
  return gaps->len >= 2 ? median ((double *) (void *) gaps->data, (int) gaps->len) : 0;
}

static int
cmp_comp_x (const void *a, const void *b, gpointer data)
{
  const Comp *c = &g_array_index ((GArray *) data, Comp, *(const int *) a);
  const Comp *d = &g_array_index ((GArray *) data, Comp, *(const int *) b);
  return c->b.x0 < d->b.x0 ? -1 : c->b.x0 > d->b.x0;
}

/* Whether environment variable name is set (to value, when not NULL),
 * read once per process into *state (0 not read yet, 1 no, 2 yes): the
 * switches below are asked per gap of the word-space loop, where a
 * getenv each time was a scan of the environment in a hot loop. */
static gboolean
env_switch (gsize *state, const char *name, const char *value)
{
  if (g_once_init_enter (state))
    {
      const char *set = g_getenv (name);
      g_once_init_leave (state, set != NULL && (value == NULL || strcmp (set, value) == 0) ? 2 : 1);
    }
  return *state == 2;
}

/* Whether FM_DETECT_DEBUG=comps asks for every piece and word-space gap:
 * read once per process, not per gap of the word-space loop, where a
 * getenv per gap was a scan of the environment in a hot loop (review of
 * scanfix10). */
static gboolean
debug_comps (void)
{
  static gsize state = 0;

  return env_switch (&state, "FM_DETECT_DEBUG", "comps");
}

/* Whether FM_SCAN_GAP_FEATURES asks for every word-space gap's inputs
 * (tools/pdf-truth/train-scan-gaps.py dump), read once per process. */
static gboolean
dump_gap_features (void)
{
  static gsize state = 0;

  return env_switch (&state, "FM_SCAN_GAP_FEATURES", NULL);
}

/* The most math of the words at run r's edge (run_edge_words), -1 for
 * none read there; 0.5 for a word the classifier did not judge. */
static double
run_edge_math (const ScanPage *p, const int *idx, const PieceRun *r, gboolean right)
{
  int set[4], n_set;
  double most = -1;

  if (!run_edge_words (p, idx, r, right, set, &n_set))
    return -1;
  for (int i = 0; i < n_set; i++)
    {
      const Word *w = &g_array_index (p->words, Word, set[i]);
      most = MAX (most, w->p_math >= 0 ? w->p_math : 0.5);
    }
  return most;
}

/* The gap net (fm-scan-gaps.h, tools/pdf-truth/train-scan-gaps.py): whether
 * a gap of 0.12 em or more between two runs of ink in a group on a line of
 * prose parts two formulas, from the gap against the line's word space, the
 * runs' shapes, what Tesseract read there and the rules' answers as inputs.
 * Why: the rules (the gap's bounds, operator shapes, Tesseract's word
 * break, limits) each settled a class, and on the development twins
 * (2083-2087, 300 dpi) they still cut inside one formula at 75 of 6871 gaps
 * and missed 102 of 168 gaps between two formulas; the net trained on the
 * twins of training seeds 4070-4128 cut 30 and missed 91 of them. It
 * overrules the rules only when sure: a cut the rules make stands unless
 * the net puts it under GAP_NET_KEEP_RULES_CUT, a cut they do not make
 * needs GAP_NET_NEW_CUT. At 0.5 both ways the development twins' inline
 * P/R was 0.800/0.809 (main 0.780/0.796) but two classes the probes had
 * settled broke: "m_1, \dots, m_n" then "\|n\|" a word space on, the bars
 * read unevenly (the net 0.31), and "x_1^2 + x_2^2" at 150 dpi cut at its
 * plus (0.61); with the two bounds 0.792/0.803 and both classes kept
 * (docs/scanned.md, thirty-seventh round). */
#define N_GAP_FEATURES 40
#define GAP_NET_KEEP_RULES_CUT 0.25f
#define GAP_NET_NEW_CUT 0.7f
G_STATIC_ASSERT (FM_SCAN_GAPS_N_FEATURES == N_GAP_FEATURES);
static const WordNet gap_net = WORD_NET (fm_scan_gaps, FM_SCAN_GAPS);

/* Whether FM_SCAN_GAPS=rules asks for the rules' cuts alone (the gap net
 * off: the training dumps and the comparison), read once per process. */
static gboolean
gaps_by_rules (void)
{
  static gsize state = 0;

  return env_switch (&state, "FM_SCAN_GAPS", "rules");
}

/* The inputs of the word-space gap between runs k - 1 and k of n (gaps
 * g[], em) for the gap net: the gap against the line's word space, the
 * two runs' shapes and what Tesseract read of them, and the rules'
 * answers (operator shapes, word break, limits) as inputs. */
static void
gap_features (const ScanPage *p, const int *idx, int n, const PieceRun *runs, const RunReading *readings,
              const double *g, int k, int nr, double ws, int band, float *f)
{
  const PieceRun *a = &runs[k - 1], *b = &runs[k];
  const Band *bd = &g_array_index (p->bands, Band, band);
  double em = p->em;
  int la[4], lb[4], na = 0, nb = 0, i = 0;
  gboolean ha = run_edge_words (p, idx, a, TRUE, la, &na), hb = run_edge_words (p, idx, b, FALSE, lb, &nb);
  const char *wa = ha ? g_array_index (p->words, Word, la[0]).utf8 : "";
  const char *wb = hb ? g_array_index (p->words, Word, lb[0]).utf8 : "";
  gboolean same = FALSE;

  for (int x = 0; x < na; x++)
    for (int y = 0; y < nb; y++)
      same |= la[x] == lb[y];
  f[i++] = g[k - 1];
  f[i++] = ws / em;
  f[i++] = g[k - 1] * em / (ws > 0 ? ws : 0.3 * em);
  f[i++] = k >= 2 ? MIN (g[k - 2], 2.0) : 2.0;
  f[i++] = k + 1 < nr ? MIN (g[k], 2.0) : 2.0;
  f[i++] = MIN ((a->x1 - a->x0) / em, 4.0);
  f[i++] = (a->y1 - a->y0) / em;
  f[i++] = MIN ((b->x1 - b->x0) / em, 4.0);
  f[i++] = (b->y1 - b->y0) / em;
  f[i++] = logf (a->n);
  f[i++] = logf (b->n);
  f[i++] = run_flat_operator (a, em);
  f[i++] = run_flat_operator (b, em);
  f[i++] = run_operator_like (runs, k - 1, nr, g, em);
  f[i++] = run_operator_like (runs, k, nr, g, em);
  f[i++] = run_operand (p, idx, runs, readings, k - 1, nr);
  f[i++] = run_operand (p, idx, runs, readings, k, nr);
  f[i++] = readings[k - 1].op;
  f[i++] = readings[k].op;
  f[i++] = runs_word_break (p, idx, runs, readings, k, nr);
  f[i++] = pieces_limits_before (p, idx, n, a->x1);
  f[i++] = run_scripted (p, idx, a);
  f[i++] = run_scripted (p, idx, b);
  f[i++] = run_edge_delimiter (p, idx, runs, k - 1, nr, -1);
  f[i++] = run_edge_delimiter (p, idx, runs, k, nr, 1);
  f[i++] = (a->y0 - bd->top) / em;
  f[i++] = (a->y1 - bd->bottom) / em;
  f[i++] = (b->y0 - bd->top) / em;
  f[i++] = (b->y1 - bd->bottom) / em;
  f[i++] = run_edge_math (p, idx, a, TRUE);
  f[i++] = run_edge_math (p, idx, b, FALSE);
  f[i++] = same;
  f[i++] = ha && (g_str_has_suffix (wa, ",") || g_str_has_suffix (wa, ";"));
  f[i++] = ha && bracket_balance (wa) > 0;
  f[i++] = hb && bracket_balance (wb) < 0;
  f[i++] = ha && word_operator_at (wa, TRUE, FALSE);
  f[i++] = hb && word_operator_at (wb, FALSE, FALSE);
  f[i++] = ha && reads_operator_name (wa);
  f[i++] = k == 1;
  f[i++] = k == nr - 1;
  /* a slip here feeds the net shifted inputs: loud in the tests, no abort */
  g_warn_if_fail (i == N_GAP_FEATURES);
}

/* The gap's inputs, the two runs' boxes on the page (pt) first, onto
 * stderr for tools/pdf-truth/train-scan-gaps.py. */
static void
gap_features_print (const ScanPage *p, const PieceRun *a, const PieceRun *b, gboolean rules_cut, const float *f)
{
  GString *line = g_string_new ("gapf");
  const PieceRun *run[2] = { a, b };

  g_string_append_printf (line, " %d", p->page_index + 1);
  for (int s = 0; s < 2; s++)
    {
      Box box = { run[s]->x0, run[s]->y0, run[s]->x1, run[s]->y1 };
      box = box_turn (&box, p->skew, p->cx, p->cy);
      g_string_append_printf (line, " %.2f %.2f %.2f %.2f", box.x0 / p->scale, box.y0 / p->scale,
                              box.x1 / p->scale, box.y1 / p->scale);
    }
  g_string_append_printf (line, " %d", rules_cut);
  for (int i = 0; i < N_GAP_FEATURES; i++)
    g_string_append_printf (line, " %.4g", f[i]);
  g_printerr ("%s\n", line->str);
  g_string_free (line, TRUE);
}

/* Cuts one group (its pieces idx[0..n), sorted by x) at word spaces. */
static void
group_split_word_spaces (ScanPage *p, int *parent, int *idx, int n, int band)
{
  double em = p->em, ws = band_word_space (p, band);
  double min_gap = MAX (0.2 * em, ws > 0 ? 0.75 * ws : 0.3 * em);
  /* Wider than two word spaces, a gap is ink lost between two operands
   * (a minus read with the prose, "42 + a" then delta^{*} 0.9 em on). */
  double max_gap = ws > 0 ? 2 * ws : 0.6 * em;
  g_autofree PieceRun *runs = g_new (PieceRun, n);
  g_autofree RunReading *readings = NULL;
  g_autofree double *g = g_new (double, n);
  g_autofree gboolean *cut = g_new0 (gboolean, n);
  g_autofree gboolean *on_band = g_new0 (gboolean, n);
  int nr = 0, root;

  for (int m = 0; m < n; m++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, idx[m]);
      if (nr > 0 && c->b.x0 < runs[nr - 1].x1 + WORD_SPACE_RUN_EM * em)
        {
          PieceRun *r = &runs[nr - 1];
          r->x1 = MAX (r->x1, c->b.x1);
          r->y0 = MIN (r->y0, c->b.y0);
          r->y1 = MAX (r->y1, c->b.y1);
          r->n++;
          continue;
        }
      runs[nr] = (PieceRun) { c->b.x0, c->b.x1, c->b.y0, c->b.y1, m, 1 };
      nr++;
    }
  for (int k = 0; k + 1 < nr; k++)
    g[k] = (runs[k + 1].x0 - runs[k].x1) / em;
  readings = g_new (RunReading, nr);
  for (int k = 0; k < nr; k++)
    {
      run_reading (p, idx, &runs[k], readings[k].text, sizeof readings[k].text);
      readings[k].op = reads_like_operator (readings[k].text);
    }
  for (int k = 0; k < nr; k++)
    {
      const char *why = NULL;
      float p_cut = -1;
      if (k > 0)
        why = g[k - 1] * em < min_gap || g[k - 1] * em > max_gap ? "gap"
              : run_operator_like (runs, k - 1, nr, g, em) && !run_operand (p, idx, runs, readings, k - 1, nr) ? "left operator-shaped"
              : run_operator_like (runs, k, nr, g, em) && !run_operand (p, idx, runs, readings, k, nr) ? "right operator-shaped"
              : !runs_word_break (p, idx, runs, readings, k, nr)           ? "no word break"
              : pieces_limits_before (p, idx, n, runs[k - 1].x1)  ? "limits"
                                                                  : NULL;
      cut[k] = k > 0 && why == NULL;
      if (k > 0 && (dump_gap_features () || !gaps_by_rules ()))
        {
          float f[N_GAP_FEATURES];
          gboolean rules_cut = cut[k];
          gap_features (p, idx, n, runs, readings, g, k, nr, ws, band, f);
          if (dump_gap_features ())
            gap_features_print (p, &runs[k - 1], &runs[k], rules_cut, f);
          if (!gaps_by_rules ())
            {
              p_cut = word_net_probability (&gap_net, f);
              cut[k] = p_cut >= (rules_cut ? GAP_NET_KEEP_RULES_CUT : GAP_NET_NEW_CUT);
              why = cut[k] ? NULL : "gap net";
            }
        }
      if (k > 0 && g[k - 1] >= 0.15 && debug_comps ())
        {
          int la[4], lb[4], na = 0, nb = 0;
          gboolean ha = run_edge_words (p, idx, &runs[k - 1], TRUE, la, &na);
          gboolean hb = run_edge_words (p, idx, &runs[k], FALSE, lb, &nb);
          g_printerr ("  word space? band %d y %.0f x %.0f gap %.2f em (%.2f-%.2f) \"%s\" | \"%s\" %s %.2f (runs \"%s\" %.2fx%.2f | \"%s\" %.2fx%.2f em)\n",
                      band, (runs[k - 1].y0 + runs[k - 1].y1) / 2, runs[k - 1].x1, g[k - 1], min_gap / em, max_gap / em,
                      ha ? g_array_index (p->words, Word, la[0]).utf8 : "-", hb ? g_array_index (p->words, Word, lb[0]).utf8 : "-",
                      cut[k] ? "cut" : why, p_cut, readings[k - 1].text, (runs[k - 1].x1 - runs[k - 1].x0) / em,
                      (runs[k - 1].y1 - runs[k - 1].y0) / em, readings[k].text, (runs[k].x1 - runs[k].x0) / em,
                      (runs[k].y1 - runs[k].y0) / em);
        }
      for (int m = runs[k].first; m < runs[k].first + runs[k].n; m++)
        on_band[k] |= g_array_index (p->comps, Comp, idx[m]).band == band;
    }
  /* Each part keeps a piece on the line (a part off the line would be
   * taken for a display). Running text within 2 em of the part is not
   * asked (scaninline): the group has it, and a part without takes its
   * line from the group's other parts (page_cluster_lines). Asked before,
   * it left the second of two formulas a word space apart at a line's end
   * ("so $\sin(73 \pm \alpha)$ $O(k \log k)$.") joined to the first. */
  for (int k = 0, start = 0; k <= nr; k++)
    if (k == nr || (k > 0 && cut[k]))
      {
        gboolean has = FALSE;
        for (int m = start; m < k; m++)
          has |= on_band[m];
        if (!has && start == 0 && k < nr)
          {
            cut[k] = FALSE;  /* the first part joins the next */
            continue;
          }
        if (!has)
          cut[start] = FALSE;
        start = k;
      }
  root = idx[0];
  for (int k = 0; k < nr; k++)
    {
      if (cut[k])
        root = idx[runs[k].first];
      for (int m = runs[k].first; m < runs[k].first + runs[k].n; m++)
        parent[idx[m]] = root;
    }
}

/* page_join_ink's groups of ink on a line of prose, cut at word spaces
 * between two formulas (group_split_word_spaces). */
static void
page_split_word_spaces (ScanPage *p, int *parent)
{
  g_autofree int *idx = g_new (int, p->n_comps + 1);
  g_autofree int *band = g_new (int, p->n_comps + 1);
  g_autofree int *root = g_new (int, p->n_comps + 1);
  g_autofree int *start = g_new0 (int, p->n_comps + 2);
  g_autofree int *fill = g_new0 (int, p->n_comps + 1);

  for (int i = 0; i < p->n_comps; i++)
    {
      root[i] = fm_uf_find (parent, i);
      band[i] = -1;
    }
  /* The line of each group: one band for all its pieces on a band. */
  for (int i = 0; i < p->n_comps; i++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, i);
      int r = root[i];
      if (c->text || c->band < 0)
        continue;
      band[r] = band[r] == -1 || band[r] == c->band ? c->band : -2;
    }
  /* The pieces grouped by their root (start[r] .. start[r + 1] in idx):
   * one pass, not one per group (a noisy page has tens of thousands of
   * specks). */
  for (int i = 0; i < p->n_comps; i++)
    start[root[i] + 1]++;
  for (int r = 0; r < p->n_comps; r++)
    start[r + 1] += start[r];
  for (int i = 0; i < p->n_comps; i++)
    idx[fill[root[i]]++ + start[root[i]]] = i;
  for (int r = 0; r < p->n_comps; r++)
    {
      int n = start[r + 1] - start[r], *members = idx + start[r];
      Box span = { G_MAXDOUBLE, G_MAXDOUBLE, -G_MAXDOUBLE, -G_MAXDOUBLE };
      if (n < 2 || band[r] < 0 || g_array_index (p->comps, Comp, r).text)
        continue;
      for (int m = 0; m < n; m++)
        box_union (&span, &g_array_index (p->comps, Comp, members[m]).b);
      if (!band_text_near (p, band[r], span.x0, span.x1))
        continue;
      g_qsort_with_data (members, n, sizeof (int), cmp_comp_x, p->comps);
      group_split_word_spaces (p, parent, members, n, band[r]);
    }
}

/* Whether s reads as a number in brackets with a bracket lost or misread:
 * digits (four at most) with a bracket on one side, and none or a mark
 * on the other ("(19!", "(29°", "1)", "(3!", "[2" and "17]" of "[2 17]"),
 * sentence punctuation after. A citation or a parenthetical number of the
 * prose whose bracket a scan broke: the classifier took such words for
 * math (0.51-0.93) and they were boxed alone as inline formulas
 * (development twins, seeds 2020 and 2021: 1 box at 300 dpi, 6 at 150).
 * Not a whole "(3)" or "[12]" (an equation number or a citation,
 * reads_like_number and fm_scan_reads_like_citation say so). Not an
 * opening bracket whose digits end in punctuation ("[0," of the interval
 * [0, 1], "(2," of the point (2, 7), "(2."): the first half of a list in
 * brackets, which Tesseract parts at its space, is math as often as a
 * citation (an interval's halves "[0," "1]" were both taken for prose
 * numbers and the formula dropped); a citation's lost bracket leaves
 * "(19!" or "[2".
 * Not "{": a brace is math's ("{7" for f^{*} at 150 dpi), and a citation
 * read "{12]" is a number already. Public for the tests. */
gboolean
fm_scan_reads_like_broken_bracket_number (const char *s)
{
  gboolean bracket = FALSE;
  gsize nd;

  if (strncmp (s, "\xe2\x80\x98", 3) == 0)  /* ‘ */
    s += 3;
  else if (*s == '(' || *s == '[' || *s == '\'')
    bracket = *s++ != '\'';
  nd = strspn (s, "0123456789");
  if (nd == 0 || nd > 4)
    return FALSE;
  s += nd;
  if (*s == ')' || *s == ']')
    {
      if (bracket)
        return FALSE;
      bracket = TRUE;
      s++;
    }
  else if (bracket && *s != '\0' && strchr (".,;:", *s) != NULL)
    return FALSE;
  else if (*s == '!' || *s == '\'')
    s++;
  else if (strncmp (s, "\xc2\xb0", 2) == 0 || strncmp (s, "\xe2\x80\x99", 3) == 0)  /* ° ’ */
    s += s[0] == '\xc2' ? 2 : 3;
  return bracket && s[strspn (s, ".,;:")] == '\0';
}

/* Whether w is a number of the prose: digits only (w->digits), or digits
 * and the sentence's punctuation after them ("3.", "2,", "108:"), as tall
 * as lining digits (0.55 to 1.1 em, the test page_measure_em puts digits
 * to; a subscript digit with a comma after it is smaller), or digits
 * with a broken bracket (fm_scan_reads_like_broken_bracket_number) up to 1.6 em,
 * a bracket's height. Such words
 * were boxed alone as inline formulas (development twins, seeds 2018 and
 * 2019: "2,", "108:" at 300 dpi, "2;", "3.", "2," at 150), where the
 * bare digits were dropped as a number. */
static gboolean
word_number_with_stop (const ScanPage *p, const Word *w)
{
  gsize nd = strspn (w->utf8, "0123456789");

  if (w->digits)
    return TRUE;
  if (fm_scan_reads_like_broken_bracket_number (w->utf8))
    return !w->misread && box_h (&w->b) >= 0.55 * p->em && box_h (&w->b) <= 1.6 * p->em;
  return nd > 0 && !w->misread && w->utf8[nd + strspn (w->utf8 + nd, ".,;:")] == '\0' &&
         box_h (&w->b) >= 0.55 * p->em && box_h (&w->b) <= 1.1 * p->em;
}

/* The clusters of joined ink, with what their pieces say of them. */
static void
page_make_clusters (ScanPage *p, int *parent)
{
  g_autofree int *root_cluster = g_new (int, p->n_comps + 1);
  GArray *words = p->words;

  for (int i = 0; i < p->n_comps; i++)
    root_cluster[i] = -1;
  for (int i = 0; i < p->n_comps; i++)
    {
      Comp *c = &g_array_index (p->comps, Comp, i);
      int r;
      Cluster *cl;
      if (c->text)
        continue;
      r = fm_uf_find (parent, i);
      if (root_cluster[r] < 0)
        {
          Cluster n = { c->b, 0, -1, TRUE, 0, -1, 0, FALSE, FALSE, -1 };
          n.piece_word = c->word;
          n.group = c->group;
          root_cluster[r] = (int) p->clusters->len;
          g_array_append_val (p->clusters, n);
        }
      cl = &g_array_index (p->clusters, Cluster, root_cluster[r]);
      if (c->word != cl->piece_word)
        cl->piece_word = -1;
      box_union (&cl->b, &c->b);
      cl->n_seed += c->seed;
      cl->n_pieces++;
      cl->lone_rule = cl->n_pieces == 1 && c->lone_rule;
      cl->tallest = MAX (cl->tallest, box_h (&c->b));
      cl->ink += c->area;
      c->cluster = root_cluster[r];
      if (c->word >= 0 && g_array_index (words, Word, c->word).number)
        {
          cl->number = TRUE;
          cl->number_word = c->word;
          cl->number_ink += c->area;
        }
      if (c->word < 0 || !word_number_with_stop (p, &g_array_index (words, Word, c->word)))
        cl->only_digits = FALSE;
      if (c->word >= 0)
        {
          const char *t = g_array_index (words, Word, c->word).utf8;
          gunichar u = g_utf8_get_char (t);
          cl->letter = g_utf8_strlen (t, -1) == 1 && g_unichar_isalpha (u);
          cl->symbol = g_utf8_strlen (t, -1) == 1 && !g_unichar_isalnum (u) &&
                       (u >= 128 || strchr ("@&#$%", (int) u) != NULL) &&
                       g_array_index (words, Word, c->word).conf < SYMBOL_LETTER_CONF &&
                       word_beside (p, (guint) c->word, -1, 0.6 * p->em) >= 0 &&
                       word_beside (p, (guint) c->word, 1, 0.6 * p->em) >= 0;
        }
    }
}

/* Whether cluster cl, on no text line, sits on a line of a paragraph: a
 * line of prose (prose_line_from, LEADING_LINE_WORDS running-text words
 * or more: a display fraction's numerator read as a word, "bxe" at 91,
 * is a line of its own one leading over the denominator, development
 * twin dev-2037-03) one leading above or below it starts
 * where cl does (within 0.5 em; the line above up to PARINDENT_EM right
 * of it, a paragraph's first line), and cl is no taller than a line's
 * inline formula. Its baseline is taken a quarter em (the math axis)
 * under its middle. An inline formula alone on its paragraph's last line
 * ("... when an $a$.", "$\|f\| \approx x \cdot \Gamma$ thus:" with
 * "thus:" misread) has no running text beside it and was boxed as a
 * display (development twins of scandisp, make-truth seeds 2037 and
 * 2039: 3 of the 19 false displays at 300 dpi). A display is centred or
 * set in from the margin, and one that starts at the margin (fleqn, a
 * full-width display) lies its skip away from the prose, 1.7 leadings
 * and more (scanfix8's probes); after a short line (\abovedisplayshortskip)
 * it sits one leading below, but centred, the short line ending left of
 * it. */
static gboolean
cluster_on_paragraph_line (const ScanPage *p, const Cluster *cl)
{
  double em = p->em, mid = (cl->b.y0 + cl->b.y1) / 2;
  gboolean at_margin = FALSE;

  /* not a rule (a footnote rule one leading under a column's last line,
   * review of scandisp: a false inline region on two-column pages) */
  if (p->leading <= 0 || box_h (&cl->b) > INLINE_TALL_EM * em || box_h (&cl->b) < 0.4 * em || cl->lone_rule)
    return FALSE;
  /* A margin: some line of running text starts where cl does. An
   * equation number read as a letter ("a" for "(1)") at the left column's
   * right edge lies within PARINDENT_EM left of the right column's lines
   * (dev-2037-04). */
  for (guint j = 0; j < p->words->len && !at_margin; j++)
    {
      const Word *o = &g_array_index (p->words, Word, j);
      at_margin = o->text && fabs (o->b.x0 - cl->b.x0) < 0.5 * em && word_starts_line (p, o);
    }
  if (!at_margin)
    return FALSE;
  for (guint j = 0; j < p->words->len; j++)
    {
      const Word *o = &g_array_index (p->words, Word, j);
      gboolean above = o->b.y1 < mid;
      double baseline, off;
      int n_text;
      if (!o->text || o->b.x0 <= cl->b.x0 - 0.5 * em ||
          o->b.x0 >= cl->b.x0 + (above ? PARINDENT_EM : 0.5) * em || !word_starts_line (p, o) ||
          !prose_line_from (p, o, cl->b.x1 + DISPLAY_CHAIN_GAP_EM * em, &baseline, &n_text) ||
          n_text < LEADING_LINE_WORDS)
        continue;
      /* within a fifth of a leading: a flush-left display with display
       * skips of 3-4 pt lies 1.2-1.3 leadings from the prose (review of
       * scandisp: fleqn at \mathindent 0 with tight skips, Times, CM,
       * XeLaTeX; display recall 0.895 -> 0.579 on its probes at 0.3) */
      off = fabs (mid + 0.25 * em - baseline);
      if (fabs (off - p->leading) <= 0.2 * p->leading)
        return TRUE;
    }
  return FALSE;
}

/* The text line of another part of cl's group of ink (Comp.group: a
 * group page_split_word_spaces cut at a word space) that cl's middle
 * lies on, -1 none. The group had running text within 2 em on its line;
 * a part at its end may not ("so $\sin(73 \pm \alpha)$ $O(k \log k)$."
 * at a line's end, development twin dev-2042-00), and is on the line all
 * the same, inline like the part beside it. */
static int
cluster_group_band (const ScanPage *p, const Cluster *cl)
{
  double mid = (cl->b.y0 + cl->b.y1) / 2;

  for (guint j = 0; j < p->clusters->len; j++)
    {
      const Cluster *o = &g_array_index (p->clusters, Cluster, j);
      const Band *band;
      if (o == cl || o->group != cl->group || o->band < 0 || o->display)
        continue;
      band = &g_array_index (p->bands, Band, o->band);
      if (mid >= band->top - 0.2 * p->em && mid <= band->bottom + 0.2 * p->em)
        return o->band;
    }
  return -1;
}

/* Line of each cluster: a text band it overlaps by >= 30 % of the smaller
 * height with running text on the band within 2 em of it. A cluster on no
 * line (and no number) is a display. */
static void
page_cluster_lines (ScanPage *p)
{
  double em = p->em;

  for (guint i = 0; i < p->clusters->len; i++)
    {
      Cluster *cl = &g_array_index (p->clusters, Cluster, i);
      double best = 0;
      /* A "(3.1)" joined with more ink than its own is a formula holding
       * something that reads so ("f(2)", a citation "[32]" run into two
       * lines of inline formulas: development twins), not a number. */
      if (cl->number && cl->number_ink < 0.6 * cl->ink)
        {
          cl->number = FALSE;
          cl->number_word = -1;
        }
      for (guint k = 0; k < p->bands->len; k++)
        {
          Band *band = &g_array_index (p->bands, Band, k);
          double ov = v_overlap (cl->b.y0, cl->b.y1, band->top, band->bottom);
          double frac = ov / MIN (box_h (&cl->b), band->bottom - band->top);
          double mid = (cl->b.y0 + cl->b.y1) / 2;
          gboolean near_text = FALSE;
          if (frac < 0.3 || frac <= best)
            continue;
          /* Its middle on the line: a display's limits and fraction parts
           * reach into the lines above and below, an inline formula's
           * middle is on its line (the math axis). */
          if (mid < band->top - 0.2 * em || mid > band->bottom + 0.2 * em)
            continue;
          for (guint w = 0; w < p->words->len && !near_text; w++)
            {
              Word *wd = &g_array_index (p->words, Word, w);
              double gx;
              if (!wd->text || wd->band != (int) k)
                continue;
              gx = MAX (cl->b.x0, wd->b.x0) - MIN (cl->b.x1, wd->b.x1);
              near_text = gx < 2.0 * em;
            }
          if (near_text)
            {
              best = frac;
              cl->band = (int) k;
            }
        }
    }
  for (guint i = 0; i < p->clusters->len; i++)
    {
      Cluster *cl = &g_array_index (p->clusters, Cluster, i);
      if (cl->band < 0 && !cl->number)
        cl->band = cluster_group_band (p, cl);
      cl->display = cl->band < 0 && !cl->number && !cluster_on_paragraph_line (p, cl);
    }
}

/* Two display pieces on one line: their heights overlap by 0.3 em (or
 * 0.3 of the shorter) and they lie less than 3 em apart. */
static gboolean
displays_side_by_side (const Box *a, const Box *b, double em)
{
  double gx = MAX (a->x0, b->x0) - MIN (a->x1, b->x1);
  double gy = MAX (a->y0, b->y0) - MIN (a->y1, b->y1);
  return gy < -0.3 * MIN (em, MIN (box_h (a), box_h (b))) && gx < 3.0 * em;
}

/* Display blocks: display clusters stacked (< 1.3 em: an aligned block's
 * rows at \jot spacing; the development set's display P/R 0.647/0.830 at
 * 0.9 em, 0.662/0.849 at 1.3 em, 0.657/0.830 at 1.7 em) or side by side
 * (< 3 em) on overlapping lines are one region (fractions, aligned rows). */
/* Two display blocks one above the other (their spans overlap, under
 * 1.3 em apart, as two of their clusters must be to join): a row whose
 * pieces all lie between the pieces of the row above, as a light copy's
 * strokes, broken to stems and dots, leave them (development twin 2009-04,
 * make-truth seed 2009, scan seed 20090: an aligned block's last row, a
 * lone stem under the gap between two of the row above's pieces, was
 * left out of its display; its first row made a display of its own).
 * Only on thin-stroked pages (ScanPage.thin): on a harsh page of seed
 * 2001 the same join chained a cluster of noise with four displays into
 * one box (scan14h, docs/scanned.md). */
static gboolean
blocks_stacked (const Box *a, const Box *b, double em)
{
  double gx = MAX (a->x0, b->x0) - MIN (a->x1, b->x1);
  double gy = MAX (a->y0, b->y0) - MIN (a->y1, b->y1);
  return gx < 0 && gy < 1.3 * em;
}

static void
page_display_blocks (ScanPage *p)
{
  GArray *clusters = p->clusters;
  g_autofree int *bp = g_new (int, clusters->len + 1);
  double em = p->em;

  g_autofree Box *bb = g_new (Box, clusters->len + 1);
  gboolean joined = TRUE;

  for (guint i = 0; i < clusters->len; i++)
    bp[i] = (int) i;
  for (guint i = 0; i < clusters->len; i++)
    for (guint j = i + 1; j < clusters->len; j++)
      {
        Cluster *a = &g_array_index (clusters, Cluster, i), *b = &g_array_index (clusters, Cluster, j);
        double gx, gy;
        /* A lone rule stacked under a display is a footnote's rule,
         * not its fraction bar (which takes its parts: comps_join):
         * joined, it made the display reach down to the footnotes
         * (development twins, seed 2013, 150 dpi). Beside a display it
         * is a bar whose parts were read as words ("P =" before
         * \frac{\text{rise}}{\text{run}}). */
        if (!a->display || !b->display)
          continue;
        gx = MAX (a->b.x0, b->b.x0) - MIN (a->b.x1, b->b.x1);
        gy = MAX (a->b.y0, b->b.y0) - MIN (a->b.y1, b->b.y1);
        if ((gx < 0 && gy < 1.3 * em && !a->lone_rule && !b->lone_rule) ||
            displays_side_by_side (&a->b, &b->b, em))
          uf_join (bp, (int) i, (int) j);
      }
  /* Then stacked (blocks_stacked) or side by side again on the blocks so
   * made, until none joins. Side by side: a
   * display fraction's numerator, bar and denominator are thin pieces
   * that each overlap the rest of its line too little (development
   * twins: \frac{n^k+g}{\sigma-b} > 15 + f - z in two boxes). Only
   * blocks up to 3 em tall (a line with its fractions and limits): a
   * taller one is rows of an aligned block, and joining it sideways
   * chained the displays of a page into one. */
  for (guint i = 0; i < clusters->len; i++)
    bb[i] = g_array_index (clusters, Cluster, i).b;
  for (guint i = 0; i < clusters->len; i++)
    if (fm_uf_find (bp, (int) i) != (int) i)
      box_union (&bb[fm_uf_find (bp, (int) i)], &bb[i]);
  while (joined)
    {
      joined = FALSE;
      for (guint i = 0; i < clusters->len; i++)
        for (guint j = i + 1; j < clusters->len; j++)
          {
            const Cluster *a = &g_array_index (clusters, Cluster, i), *b = &g_array_index (clusters, Cluster, j);
            int ri = fm_uf_find (bp, (int) i), rj = fm_uf_find (bp, (int) j);
            const Box *ba = &bb[ri], *bq = &bb[rj];
            Box u;
            if (!a->display || !b->display || ri == rj)
              continue;
            if (!(p->thin && blocks_stacked (ba, bq, em) && !a->lone_rule && !b->lone_rule) &&
                (box_h (ba) > 3.0 * em || box_h (bq) > 3.0 * em || !displays_side_by_side (ba, bq, em)))
              continue;
            u = *ba;
            box_union (&u, bq);
            uf_join (bp, ri, rj);
            bb[fm_uf_find (bp, ri)] = u;
            joined = TRUE;
          }
    }
  for (guint i = 0; i < clusters->len; i++)
    {
      Cluster *a = &g_array_index (clusters, Cluster, i);
      int r = fm_uf_find (bp, (int) i);
      a->block = r;
      if (r != (int) i)
        {
          Cluster *root = &g_array_index (clusters, Cluster, r);
          box_union (&root->b, &a->b);
          root->n_seed += a->n_seed;
          root->n_pieces += a->n_pieces;
          root->ink += a->ink;
          root->tallest = MAX (root->tallest, a->tallest);
        }
    }
}

/* The largest side of the largest piece of each cluster's block (a
 * display block's clusters together), px, by cluster index: one pass over
 * the pieces (a walk of them per cluster was clusters x pieces, ~10^9 on a
 * noisy page of tens of thousands of specks). */
static double *
largest_pieces (ScanPage *p)
{
  double *largest = g_new0 (double, p->clusters->len + 1);

  for (int k = 0; k < p->n_comps; k++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, k);
      double side = MAX (box_w (&c->b), box_h (&c->b));
      int block;
      if (c->cluster < 0)
        continue;
      largest[c->cluster] = MAX (largest[c->cluster], side);
      block = g_array_index (p->clusters, Cluster, c->cluster).block;
      if (block >= 0 && block != c->cluster)
        largest[block] = MAX (largest[block], side);
    }
  return largest;
}

/* Whether cluster cl's ink has a script: a piece to the right of another,
 * raised 0.25 em or more at its bottom and 0.1 em at its top (a
 * superscript: TeX raises it 0.36 em and sets it smaller, so its top
 * clears its base's by 0.15 em after a b, by 0.4 after an x), or lowered
 * 0.12 em at both ends (a subscript, or a digit fraction's denominator).
 * The digits of a number in prose stand on one line: Tesseract read b^3
 * as "63", x^k as "4" and \frac{93}{94} as digits (development twins,
 * seeds 2016 and 2017), all dropped as bare numbers before. A raised
 * piece counts after a one-glyph base only (SCRIPT_BASE_MAX_EM): a number
 * with a footnote mark, "page 86^4", "1999^3", is prose (review probe of
 * scan14q); the lowered case keeps \frac{93}{94}. ci: the cluster. */
static gboolean
cluster_scripted (const ScanPage *p, int ci)
{
  const Cluster *cl = &g_array_index (p->clusters, Cluster, ci);
  double em = p->em;

  for (int i = 0; i < p->n_comps; i++)
    {
      const Comp *a = &g_array_index (p->comps, Comp, i);
      if (a->cluster != ci || a->text || box_h (&a->b) < 0.25 * em)
        continue;
      for (int j = 0; j < p->n_comps; j++)
        {
          const Comp *b = &g_array_index (p->comps, Comp, j);
          if (j == i || b->cluster != ci || b->text || box_h (&b->b) < 0.25 * em ||
              b->b.x0 < (a->b.x0 + a->b.x1) / 2)
            continue;
          if ((a->b.y1 - b->b.y1 >= 0.25 * em && a->b.y0 - b->b.y0 >= 0.1 * em &&
               b->b.x0 - cl->b.x0 < SCRIPT_BASE_MAX_EM * em) ||
              (b->b.y1 - a->b.y1 >= 0.12 * em && b->b.y0 - a->b.y0 >= 0.12 * em))
            return TRUE;
        }
    }
  return FALSE;
}

/* Whether cluster ci's ink is stacked as a fraction's is: two pieces of
 * script size (SCRIPT_PIECE_EM tall) one over the other, over the same
 * columns (half the narrower's width shared), and either a third piece
 * between them as wide as half the narrower and under half the shared
 * columns (the bar) with
 * FRACTION_GAP_EM between them, or no such piece and the two
 * FRACTION_OPEN_GAP_EM apart (the bar lost: "2" for \frac{\sigma}{\alpha},
 * 0.33 em) or FRACTION_SPAN_EM tall together (a blur ran the bar into the
 * numerator or the denominator, a pixel or two of white left between
 * them): a digit is 0.65 em, one piece. Tesseract reads a small inline fraction as one of its digits
 * ("7" for \frac{a}{t}, "2" for \frac{\sigma}{\alpha}, "45" for
 * \frac{u}{72}, "7" for \frac{u}{44}, "4" for \frac{k}{\lambda}:
 * development twins, seeds 2020 and 2021; the last two two pieces 1.8 px
 * apart, 0.98 and 1.09 em tall), a word no taller than the line's digits
 * (page_measure_em), and the cluster was dropped as a bare number; a
 * number of the prose stands on one row. Not the bar-less case on a page
 * of thin strokes (a light copy), whose digits break into pieces. */
static gboolean
cluster_stacked (const ScanPage *p, int ci)
{
  double em = p->em;

  for (int i = 0; i < p->n_comps; i++)
    {
      const Comp *a = &g_array_index (p->comps, Comp, i);
      if (a->cluster != ci || box_h (&a->b) < SCRIPT_PIECE_EM * em)
        continue;
      for (int j = 0; j < p->n_comps; j++)
        {
          const Comp *b = &g_array_index (p->comps, Comp, j);
          double gap = b->b.y0 - a->b.y1, shared;
          gboolean bar = FALSE;
          if (j == i || b->cluster != ci || box_h (&b->b) < SCRIPT_PIECE_EM * em || gap <= 0)
            continue;
          shared = MIN (a->b.x1, b->b.x1) - MAX (a->b.x0, b->b.x0);
          if (shared < 0.5 * MIN (box_w (&a->b), box_w (&b->b)))
            continue;
          for (int k = 0; k < p->n_comps && !bar; k++)
            {
              const Comp *c = &g_array_index (p->comps, Comp, k);
              /* Under the two's shared columns, half of them: a piece
               * between the rows but off to the side (a comma, a speck
               * of the line below's ascender) is no bar. */
              double under = MIN (c->b.x1, MIN (a->b.x1, b->b.x1)) - MAX (c->b.x0, MAX (a->b.x0, b->b.x0));
              bar = c->cluster == ci && k != i && k != j && c->b.y0 >= a->b.y1 - 1 && c->b.y1 <= b->b.y0 + 1 &&
                    box_w (&c->b) >= 0.5 * MIN (box_w (&a->b), box_w (&b->b)) && under >= 0.5 * shared;
            }
          if ((bar && gap >= FRACTION_GAP_EM * em) ||
              (!p->thin && (gap >= FRACTION_OPEN_GAP_EM * em || b->b.y1 - a->b.y0 >= FRACTION_SPAN_EM * em)))
            return TRUE;
        }
    }
  return FALSE;
}

/* Whether words (n, left to right), a comma between each two, read as a
 * list of numbers in brackets that is no citation
 * (fm_scan_reads_like_citation): "[0" "1]" of the interval [0, 1] with
 * its comma lost, "(0," "0," "1)". Each word alone reads as a number with
 * a broken bracket, and their cluster would be dropped as a bare number;
 * a list that starts with 0 is math. Public for the tests. */
gboolean
fm_scan_words_read_as_list (const char *const *words, guint n)
{
  static GRegex *re;
  g_autoptr (GString) t = g_string_new (NULL);

  if (g_once_init_enter (&re))
    g_once_init_leave (&re, g_regex_new ("^[\\[(][0-9]{1,4}(,[0-9]{1,4})+[\\])]$", 0, 0, NULL));
  if (n < 2)
    return FALSE;
  for (guint k = 0; k < n; k++)
    {
      gsize len = strlen (words[k]);
      if (k > 0 && (t->len == 0 || t->str[t->len - 1] != ','))
        g_string_append_c (t, ',');
      /* The sentence's punctuation after the closing bracket. */
      if (k == n - 1)
        while (len > 0 && strchr (".,;:", words[k][len - 1]) != NULL)
          len--;
      g_string_append_len (t, words[k], (gssize) len);
    }
  return g_regex_match (re, t->str, 0, NULL) && !fm_scan_reads_like_citation (t->str);
}

/* Whether the words of cluster ci read as a list in brackets
 * (fm_scan_words_read_as_list). */
static gboolean
cluster_reads_as_list (const ScanPage *p, int ci)
{
  g_autoptr (GArray) ws = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr (GPtrArray) u = g_ptr_array_new ();

  for (int i = 0; i < p->n_comps; i++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, i);
      guint k = 0;
      if (c->cluster != ci || c->word < 0)
        continue;
      /* Insertion by left edge, each word once. */
      while (k < ws->len && g_array_index (ws, int, k) != c->word &&
             g_array_index (p->words, Word, g_array_index (ws, int, k)).b.x0 <=
               g_array_index (p->words, Word, c->word).b.x0)
        k++;
      if (k == ws->len || g_array_index (ws, int, k) != c->word)
        g_array_insert_val (ws, k, c->word);
    }
  for (guint k = 0; k < ws->len; k++)
    g_ptr_array_add (u, g_array_index (p->words, Word, g_array_index (ws, int, k)).utf8);
  return fm_scan_words_read_as_list ((const char *const *) u->pdata, u->len);
}

/* Whether inline cluster cl (b: its box on the page) has no more
 * midtones than the running-text words of its line beside it (within 3
 * em; their box's share, plus 0.1): type in shaded or JPEG'd paper, not a
 * photo. A JPEG'd page in uneven light (development twin dev-2042-09,
 * jpeg+shade28, 300 dpi) had three inline formulas 10 em wide dropped
 * as midtones; its prose words are as gray. */
static gboolean
cluster_midtones_as_prose (ScanPage *p, const Cluster *cl, const Box *b)
{
  double most = -1;

  /* (a formula's size only: a shaded paragraph's whole gray ground, its
   * hundreds of pieces over three lines, is as gray as the words inside
   * it and had become one inline box over the prose - review of
   * scaninline) */
  if (cl->display || cl->band < 0 || cl->n_pieces > 40 || box_h (&cl->b) > 2.2 * p->em)
    return FALSE;
  for (guint i = 0; i < p->words->len; i++)
    {
      const Word *w = &g_array_index (p->words, Word, i);
      Box wb;
      if (!w->text || w->band != cl->band ||
          MAX (cl->b.x0, w->b.x0) - MIN (cl->b.x1, w->b.x1) > 3 * p->em)
        continue;
      wb = box_turn (&w->b, p->skew, p->cx, p->cy);
      most = MAX (most, midtone_fraction (p->midtones, p->img, &wb));
    }
  return most >= 0 && midtone_fraction (p->midtones, p->img, b) <= most + 0.1;
}

/* Why a cluster (a display block's root, or an inline cluster) is no
 * formula (a speck, a bare number, a blotch or a picture), NULL when it
 * is one. largest: largest_pieces. */
static const char *
cluster_not_formula (ScanPage *p, int ci, const double *largest)
{
  const Cluster *cl = &g_array_index (p->clusters, Cluster, ci);
  double em = p->em;
  Box b;

  /* Bare numbers are typographically text (bench/detect/README.md):
   * a page number, a year on a line of its own. */
  if (cl->only_digits && !cluster_scripted (p, ci) && !cluster_stacked (p, ci) && !cluster_reads_as_list (p, ci))
    return "digits";
  /* Specks and sentence dots that survived as seeds; a display is at
   * least as tall as a lowercase letter (a lone rule - a footnote's,
   * a table's - is not a formula, nor is one a blur thickened past
   * 0.4 em: is_rule). */
  if (box_w (&cl->b) < 0.25 * em && box_h (&cl->b) < 0.25 * em)
    return "speck";
  if (cl->display && (box_h (&cl->b) < 0.4 * em || (cl->n_pieces == 1 && is_rule (&cl->b, em))))
    return "flat display";
  /* Nor is a display of flat pieces only: a footnote rule a scanner's
   * JPEG broke into dashes 1 to 2 em long, with specks, 1.1 em tall in
   * all (development twins, seed 2012, 300 dpi); a display has a letter,
   * a digit or a tall symbol. */
  if (cl->display && cl->tallest < 0.3 * em)
    return "flat display";
  /* Ink covering half its box is a photo's blotch or a filled
   * shape; not a single letter, which a copier's thick strokes fill
   * that much at 150 dpi (development twins: a variable "k" alone
   * between two words was dropped so), also where the letter broke
   * into pieces or took a speck inside its word's box (development
   * twins, seeds 2014 and 2015: "a" and "u" alone, two pieces each, 0.54
   * and 0.60 inked, dropped; a blotch is not one word's letter - broken in
   * three pieces at most, a speck taken with it: a blotch noise broke in
   * more is still one), nor two or three pieces on a
   * line of running text, narrower than 0.8 em and as tall as the line:
   * an inline fraction whose bar the same strokes ran into its
   * numerator (development twins: \frac{c}{b} in two pieces, half
   * inked, dropped; letters alone, which were kept out so, are not
   * that tall). A letter Tesseract knows no letter for is read as a
   * symbol ("@" for theta and sigma, "¢" for c: development twins, seeds
   * 2016 and 2017, each alone between two words, 0.54-0.60 inked, dropped
   * so); such a symbol is a letter unless it fills its box as a blotch
   * or a bullet does (LETTER_INKED_MAX), and only if read unsure
   * (SYMBOL_LETTER_CONF) with a word on both sides within 0.6 em
   * (page_clusters): a list marker has nothing to its left, and "§" in
   * "see § 3", a marker read "«" (0.54 inked) and bullets read "@" at
   * 0.70 inked were boxed on the review probe of scan14q. */
  if (cl->ink > 0.5 * box_w (&cl->b) * box_h (&cl->b) &&
      ((cl->n_pieces > 1 && (cl->piece_word < 0 || cl->n_pieces > 3)) ||
       !(cl->letter || (cl->symbol && cl->ink < LETTER_INKED_MAX * box_w (&cl->b) * box_h (&cl->b))) ||
       box_w (&cl->b) * box_h (&cl->b) > 0.8 * em * em) &&
      (cl->band < 0 || cl->n_pieces < 2 || cl->n_pieces > 3 || box_h (&cl->b) < 0.8 * em ||
       box_w (&cl->b) > 0.8 * em))
    return "blotch";
  /* A photo: a display, or anything larger than a few letters, with
   * a third of its box in midtones (a JPEG'd scan's type has them
   * only along the strokes, and a small inline box is mostly
   * strokes; measured in the render, the box turned back onto the
   * page). */
  b = box_turn (&cl->b, p->skew, p->cx, p->cy);
  if (p->midtones == NULL)
    p->midtones = midtone_table (p->img);
  if ((cl->display || box_w (&cl->b) * box_h (&cl->b) > 4 * em * em) &&
      midtone_fraction (p->midtones, p->img, &b) > 0.33 && !cluster_midtones_as_prose (p, cl, &b))
    return "midtones";
  /* Larger than a few letters and a third inked: a picture (a
   * formula of that size is mostly white between its symbols). */
  if (box_w (&cl->b) * box_h (&cl->b) > 4 * em * em &&
      cl->ink > 0.33 * box_w (&cl->b) * box_h (&cl->b))
    return "inked picture";
  /* A photo's grain: pieces packed denser than glyphs (a formula has
   * about 2 to 4 per square em, scripts and all). */
  if (box_w (&cl->b) * box_h (&cl->b) > 4 * em * em &&
      cl->n_pieces > 8.0 * box_w (&cl->b) * box_h (&cl->b) / (em * em))
    return "grain";
  /* One piece of ink alone on its line is a page number or a mark
   * Tesseract did not read, not a display; nor is a stroke narrower
   * than half an em (a scanner's edge, a photo's). */
  if (cl->display && ((cl->n_pieces < 2 && box_w (&cl->b) < 1.0 * em) || box_w (&cl->b) < 0.5 * em))
    return "lone piece";
  /* Specks alone, however many: a binarised page's noise where uneven
   * light darkened the paper towards its edge (development twins: 13
   * false displays down one page's margin, up to 43 pieces each). A
   * formula has a piece as tall or as wide as a third of an em - a
   * digit, a letter's stem, an operator's bar - even on a light copy
   * that broke its strokes; and 3 pt whatever the em (a page whose
   * noise Tesseract took for large type gave 2.5 times the em: an
   * inline formula's letters were specks by it). */
  if (cl->n_pieces > 1 && largest[cl - &g_array_index (p->clusters, Cluster, 0)] < MIN (SPECK_PIECE_EM * em, 3.0 * p->scale))
    return "specks";
  /* On a page Tesseract could not read (a light copy's broken strokes:
   * under READ_SHARE_POOR of its ink in text words), lines of prose are
   * ink in no word and join into one block several lines tall and most
   * of the column wide; a display that size on such a page is no
   * formula (the development twins' displays are at most 15 em wide and
   * 4.5 em tall; an aligned block of wide rows would be, so only where
   * the prose was not read). */
  if (cl->display && p->read_share < READ_SHARE_POOR && box_w (&cl->b) > 20 * em &&
      box_h (&cl->b) > 3 * em)
    return "unread prose";
  return NULL;
}

/* Whether cluster_not_formula's verdict says picture: a photo's or a
 * figure's ink, not type. */
static gboolean
dropped_as_picture (const char *why)
{
  return why != NULL && (strcmp (why, "midtones") == 0 || strcmp (why, "inked picture") == 0 ||
                         strcmp (why, "grain") == 0 || strcmp (why, "blotch") == 0);
}

/* The share of the page's type (its ink less the pictures') that is in
 * text words, for the "unread prose" test. A figure's or a photo's ink
 * is in no word however well Tesseract read the prose: counted, a page
 * with a large figure looked unread and lost its wide displays (issue 14
 * §2). The pictures are the clusters cluster_not_formula drops as such,
 * asked before the share is known (read_share 1: "unread prose" off). */
static double
page_read_share (ScanPage *p, const double *largest)
{
  double ink = 0, read = 0;
  guint n = p->clusters->len;
  g_autofree gboolean *picture = g_new0 (gboolean, n + 1);

  p->read_share = 1;
  for (guint i = 0; i < n; i++)
    {
      Cluster *cl = &g_array_index (p->clusters, Cluster, i);
      if (cl->number || cl->n_seed == 0 || (cl->display && cl->block != (int) i))
        continue;
      picture[i] = dropped_as_picture (cluster_not_formula (p, (int) i, largest));
    }
  for (int k = 0; k < p->n_comps; k++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, k);
      /* Pictures' ink is neither read nor unread type: comp_place marked
       * its large pieces text (counted as read they hid unread prose). */
      if (comp_is_picture (p, c))
        continue;
      if (c->cluster >= 0)
        {
          const Cluster *cl = &g_array_index (p->clusters, Cluster, c->cluster);
          int root = cl->display && cl->block >= 0 ? cl->block : c->cluster;
          if (picture[root])
            continue;
        }
      ink += c->area;
      if (c->text)
        read += c->area;
    }
  return ink > 0 ? read / ink : 1;
}

/* Regions: deskewed boxes turned back onto the page, in points. */
static void
page_formula_regions (ScanPage *p)
{
  g_autofree double *largest = largest_pieces (p);

  p->region_of_block = g_new (int, p->clusters->len + 1);
  for (guint i = 0; i < p->clusters->len; i++)
    p->region_of_block[i] = -1;
  p->read_share = g_strcmp0 (g_getenv ("FM_SCAN_READ_SHARE"), "all") == 0 ? -1 : page_read_share (p, largest);
  if (p->read_share < 0)
    {
      /* FM_SCAN_READ_SHARE=all: pictures counted, as before 2026-11-27. */
      double ink = 0, read = 0;
      for (int k = 0; k < p->n_comps; k++)
        {
          const Comp *c = &g_array_index (p->comps, Comp, k);
          ink += c->area;
          if (c->text)
            read += c->area;
        }
      p->read_share = ink > 0 ? read / ink : 1;
    }
  if (g_getenv ("FM_DETECT_DEBUG"))
    g_printerr ("scan: page %d, ink in text words %.3f\n", p->page_index + 1, p->read_share);
  for (guint i = 0; i < p->clusters->len; i++)
    {
      Cluster *cl = &g_array_index (p->clusters, Cluster, i);
      Box b;
      FmRect r;
      FmRegion *reg;
      if (cl->number || cl->n_seed == 0 || (cl->display && cl->block != (int) i))
        continue;
      cl->dropped = cluster_not_formula (p, (int) i, largest);
      if (cl->dropped)
        continue;
      b = box_turn (&cl->b, p->skew, p->cx, p->cy);
      r = (FmRect) { b.x0 / p->scale, b.y0 / p->scale, b.x1 / p->scale, b.y1 / p->scale };
      reg = fm_region_new (p->page_index, cl->display ? FM_REGION_DISPLAY : FM_REGION_INLINE, &r);
      reg->font_size = p->em / p->scale;
      p->region_of_block[i] = (int) p->regions->len;
      g_ptr_array_add (p->regions, reg);
    }
}

/* Whether cluster i's ink is bracketed: its leftmost and rightmost pieces
 * are thin and nearly as tall as the cluster, a "(" and a ")"; *pieces
 * counts its pieces. An
 * equation number has that shape whatever Tesseract read of it ("bas"
 * for "(1.2)", "fn" for "(1)" on a light copy) and into however many
 * pieces a light copy broke its digits (development twins, seeds 7 and
 * 2003: seven pieces for "(1.2)"). */
static gboolean
cluster_bracketed (ScanPage *p, guint i, int *pieces)
{
  const Cluster *cl = &g_array_index (p->clusters, Cluster, i);
  const Comp *left = NULL, *right = NULL;
  double h = box_h (&cl->b);

  *pieces = 0;
  for (int k = 0; k < p->n_comps; k++)
    {
      const Comp *c = &g_array_index (p->comps, Comp, k);
      if (c->cluster != (int) i)
        continue;
      (*pieces)++;
      if (!left || c->b.x0 < left->b.x0)
        left = c;
      if (!right || c->b.x1 > right->b.x1)
        right = c;
    }
  return left && right && left != right && h >= 0.5 * p->em &&
         box_w (&left->b) < 0.3 * p->em && box_h (&left->b) >= 0.75 * h &&
         box_w (&right->b) < 0.3 * p->em && box_h (&right->b) >= 0.75 * h;
}

/* Takes back display cluster i's region, if a rule above made one; the
 * numbers already made keep labelling their displays' regions. */
static void
cluster_drop_region (ScanPage *p, guint i)
{
  int gone = p->region_of_block[i];

  if (gone < 0)
    return;
  g_ptr_array_remove_index (p->regions, gone);
  for (guint m = 0; m < p->clusters->len; m++)
    if (p->region_of_block[m] > gone)
      p->region_of_block[m]--;
  for (guint r = 0; r < p->regions->len; r++)
    {
      FmRegion *reg = p->regions->pdata[r];
      if (reg->kind == FM_REGION_NUMBER && reg->label_of == gone)
        reg->label_of = -1;
      else if (reg->kind == FM_REGION_NUMBER && reg->label_of > gone)
        reg->label_of--;
    }
  p->region_of_block[i] = -1;
}

/* Whether display cluster i, with no word reading "(3.1)" in it, is a
 * display's number: small, at the right of the text, of 3 to 6 pieces or
 * bracketed, and 3 em (bracketed: 1 em) or more right of a display
 * (Tesseract reads "(4)" as ")" as often). Its own display region, if it
 * had one, is taken back; so is a bracketed one's with no display beside
 * it (its display was missed: the number alone is no display). */
static gboolean
cluster_unread_number (ScanPage *p, guint i, double text_right)
{
  Cluster *cl = &g_array_index (p->clusters, Cluster, i);
  GArray *clusters = p->clusters;
  double em = p->em;
  int pieces = 0;
  gboolean bracketed;

  if (!(!cl->number && cl->display && cl->block == (int) i && box_w (&cl->b) < 3.5 * em &&
        box_h (&cl->b) < 1.6 * em && cl->b.x1 >= column_right (p->words, &cl->b, em, text_right) - 1.0 * em))
    return FALSE;
  bracketed = cluster_bracketed (p, i, &pieces) && g_strcmp0 (g_getenv ("FM_SCAN_BRACKETED"), "0") != 0;
  if ((pieces < 3 || pieces > 6) && !bracketed)
    return FALSE;
  for (guint k = 0; k < clusters->len; k++)
    {
      Cluster *d = &g_array_index (clusters, Cluster, k);
      if (k != i && p->region_of_block[k] >= 0 && d->display &&
          v_overlap (cl->b.y0, cl->b.y1, d->b.y0, d->b.y1) > 0.3 * box_h (&cl->b) &&
          cl->b.x0 - d->b.x1 > (bracketed ? 1.0 : 3.0) * em)
        {
          cluster_drop_region (p, i);
          return TRUE;
        }
    }
  if (bracketed)
    cluster_drop_region (p, i);
  return FALSE;
}

/* Equation numbers: level with a display block, right of it by 0.5 em:
 * a word reading "(3.1)", or any small display cluster of 3 to 6 pieces
 * 3 em or more right of a display, ending at the right of the text. */
static void
page_number_regions (ScanPage *p)
{
  GArray *clusters = p->clusters;
  double em = p->em, text_right = 0;

  for (guint i = 0; i < p->words->len; i++)
    if (g_array_index (p->words, Word, i).text)
      text_right = MAX (text_right, g_array_index (p->words, Word, i).b.x1);
  for (guint i = 0; i < clusters->len; i++)
    {
      Cluster *cl = &g_array_index (clusters, Cluster, i);
      int label = -1;
      Box b;
      FmRect r;
      FmRegion *reg;
      if (cluster_unread_number (p, i, text_right))
        cl->number = TRUE;
      if (!cl->number)
        continue;
      for (guint k = 0; k < clusters->len && label < 0; k++)
        {
          Cluster *d = &g_array_index (clusters, Cluster, k);
          if (p->region_of_block[k] < 0 || !d->display)
            continue;
          if (v_overlap (cl->b.y0, cl->b.y1, d->b.y0, d->b.y1) > 0.3 * box_h (&cl->b) &&
              cl->b.x0 - d->b.x1 > 0.5 * em)
            label = p->region_of_block[k];
        }
      if (label < 0)
        continue;
      b = box_turn (&cl->b, p->skew, p->cx, p->cy);
      r = (FmRect) { b.x0 / p->scale, b.y0 / p->scale, b.x1 / p->scale, b.y1 / p->scale };
      reg = fm_region_new (p->page_index, FM_REGION_NUMBER, &r);
      reg->font_size = em / p->scale;
      reg->label_of = label;
      /* What it reads, as the text layer's numbers: the window shows it
       * beside its display's formula. */
      if (cl->number_word >= 0)
        reg->text = g_strdup (g_array_index (p->words, Word, cl->number_word).utf8);
      g_ptr_array_add (p->regions, reg);
    }
}

/* FM_DETECT_DEBUG: the page's skew, em, clusters, bands and words. */
static void
page_debug (const ScanPage *p)
{
  GArray *words = p->words, *bands = p->bands, *clusters = p->clusters;
  double scale = p->scale;

  g_printerr ("scan: page %d, OCR %.0f ms (thread CPU %.0f + %.0f), %d x %d px, skew %.2f deg, em %.1f px, %u words, "
              "%u bands, %d comps, pitch %.1f px, leading %.1f px\n", p->page_index + 1, p->t_ocr / 1000.0, p->c_ocr / 1000.0,
              p->c_ocr_part / 1000.0, p->img->width, p->img->height, p->skew * 180 / G_PI, p->em,
              words->len, bands->len, p->n_comps, p->pitch, p->leading);
  for (guint i = 0; i < clusters->len; i++)
    {
      Cluster *cl = &g_array_index (clusters, Cluster, i);
      g_printerr ("  cluster %u [%.0f %.0f %.0f %.0f] seeds %d pieces %d inked %.2f band %d%s%s block %d%s%s\n", i,
                  cl->b.x0, cl->b.y0, cl->b.x1, cl->b.y1, cl->n_seed, cl->n_pieces,
                  cl->ink / MAX (1.0, box_w (&cl->b) * box_h (&cl->b)), cl->band, cl->display ? " display" : "",
                  cl->number ? " number" : "", cl->block, cl->dropped ? " dropped: " : "",
                  cl->dropped ? cl->dropped : "");
    }
  for (guint k = 0; k < bands->len; k++)
    g_printerr ("  band %u [%.0f %.0f %.0f %.0f]\n", k, g_array_index (bands, Band, k).x0,
                g_array_index (bands, Band, k).top, g_array_index (bands, Band, k).x1,
                g_array_index (bands, Band, k).bottom);
  for (guint i = 0; i < words->len; i++)
    {
      Word *w = &g_array_index (words, Word, i);
      g_printerr ("  word %s%s%s conf %.0f math %.2f band %d [%.0f %.0f %.0f %.0f] page [%.0f %.0f %.0f %.0f] %s\n",
                  w->text ? "T" : "-", w->dict ? "D" : "-", w->number ? "N" : "-", w->conf, w->p_math,
                  w->band, w->b.x0, w->b.y0, w->b.x1, w->b.y1, w->img.x0 / scale, w->img.y0 / scale,
                  w->img.x1 / scale, w->img.y1 / scale, w->utf8);
    }
  if (debug_comps ())
    for (int i = 0; i < p->n_comps; i++)
      {
        const Comp *c = &g_array_index (p->comps, Comp, i);
        if (c->text)
          continue;
        g_printerr ("  comp %d cluster %d band %d word %d seed %d area %d [%.1f %.1f %.1f %.1f] page [%.2f %.2f %.2f %.2f]\n",
                    i, c->cluster, c->band, c->word, c->seed, c->area, c->b.x0, c->b.y0, c->b.x1, c->b.y1,
                    c->img.x0 / scale, c->img.y0 / scale, c->img.x1 / scale, c->img.y1 / scale);
      }
}

/* The regions of one rendered page (img at scale px/pt): Tesseract's
 * words and the rules' and the classifier's verdicts on them, then the
 * ink that is not running text joined into formulas. words_only: the
 * bench's baseline, Tesseract alone. */
static GPtrArray *
analyse (TessBaseAPI *api, FmGrayImage *img, FmGrayImage *ocr_img, GArray *comps, gboolean thin,
         int threshold, double scale, int page_index, gboolean words_only, GError **error)
{
  ScanPage p = { .img = img, .ocr_img = ocr_img, .comps = comps, .n_comps = (int) comps->len, .scale = scale,
                 .page_index = page_index, .cx = img->width / 2.0, .cy = img->height / 2.0, .thin = thin,
                 .threshold = threshold };
  GPtrArray *regions;
  gboolean read = page_read_words (&p, api, error);

  /* Only Tesseract reads the paper-white copy: a page's worth of pixels
   * (up to MAX_ANALYSIS_PIXELS bytes) that each detection thread held
   * through the whole analysis. */
  g_clear_pointer (&p.ocr_img, fm_gray_image_free);
  if (!read)
    {
      words_free (p.words);
      return NULL;
    }
  p.regions = g_ptr_array_new_with_free_func ((GDestroyNotify) fm_region_free);
  p.clusters = g_array_new (FALSE, TRUE, sizeof (Cluster));
  words_fit_ink (&p);
  page_measure_em (&p);
  p.pitch = bands_pitch (p.bands);
  p.leading = page_prose_leading (&p);
  for (guint k = 0; k < p.bands->len; k++)
    band_line_groups (&p, k);
  if (!words_only)
    {
      page_classify (&p);
      if (g_strcmp0 (g_getenv ("FM_SCAN_DISPLAY_LINES"), "0") != 0)
        page_display_lines (&p);
      if (g_strcmp0 (g_getenv ("FM_SCAN_HEADINGS"), "0") != 0)
        page_heading_lines (&p);
    }
  for (int i = 0; i < p.n_comps; i++)
    comp_place (&p, &g_array_index (comps, Comp, i));
  if (!words_only)
    {
      page_math_shaped_words (&p);
      page_citation_words (&p);
    }
  if (words_only)
    page_tesseract_alone (&p);
  else
    {
      g_autofree int *parent = page_join_ink (&p);
      if (g_strcmp0 (g_getenv ("FM_SCAN_WORD_SPACES"), "0") != 0)
        page_split_word_spaces (&p, parent);
      page_make_clusters (&p, parent);
      page_cluster_lines (&p);
      page_display_blocks (&p);
      page_formula_regions (&p);
      page_number_regions (&p);
      if (g_getenv ("FM_DETECT_DEBUG"))
        page_debug (&p);
    }
  regions = p.regions;
  words_free (p.words);
  g_array_unref (p.bands);
  g_array_unref (p.clusters);
  g_free (p.region_of_block);
  g_free (p.midtones);
  return regions;
}
#endif

static int
cmp_region_order (const void *a, const void *b)
{
  const FmRegion *p = *(FmRegion *const *) a, *q = *(FmRegion *const *) b;
  /* Same line (vertical overlap): left to right; else top to bottom. */
  if (MIN (p->box.y1, q->box.y1) - MAX (p->box.y0, q->box.y0) > 0)
    return p->box.x0 < q->box.x0 ? -1 : p->box.x0 > q->box.x0;
  return p->box.y0 < q->box.y0 ? -1 : p->box.y0 > q->box.y0;
}

/* The darkest of each 2 x 2 pixels of img enlarged twice by bilinear
 * interpolation (each enlarged pixel 3/4 of its own and 1/4 of its
 * neighbour's, both ways; the borders repeated), as cairo enlarges a page
 * image drawn at twice its resolution: the render at twice the scale and
 * its pooling, for an image that has no finer detail, at a quarter of the
 * pixels. */
static FmGrayImage *
darkest_of_enlarged (const FmGrayImage *img)
{
  FmGrayImage *out = fm_gray_image_new (img->width, img->height);

  for (int y = 0; y < img->height; y++)
    {
      const guint8 *r = img->pixels + (gsize) y * img->stride;
      const guint8 *up = img->pixels + (gsize) MAX (y - 1, 0) * img->stride;
      const guint8 *down = img->pixels + (gsize) MIN (y + 1, img->height - 1) * img->stride;
      guint8 *o = out->pixels + (gsize) y * out->stride;
      for (int x = 0; x < img->width; x++)
        {
          int xl = MAX (x - 1, 0), xr = MIN (x + 1, img->width - 1);
          int c9 = 9 * r[x], best = 255 * 16;
          const guint8 *rows[2] = { up, down };
          for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
              {
                int v = c9 + 3 * (a ? r[xr] : r[xl]) + 3 * rows[b][x] + rows[b][a ? xr : xl];
                best = MIN (best, v);
              }
          o[x] = (guint8) (best / 16);
        }
    }
  return out;
}

/* The page in gray at scale px/pt for the analysis. Rendered at twice the
 * scale and brought down by the darkest of each 2 x 2 pixels: Poppler's
 * smooth downscaling of a 300 dpi 1-bit scan averages a light copy's
 * thin, broken strokes into a pale gray that neither Otsu's threshold nor
 * Tesseract's keeps (a development page lost every line so); the darkest
 * pixel keeps every stroke. A page image no finer than the analysis (a
 * 150 dpi scan) is rendered once and pooled as its enlargement would be
 * (darkest_of_enlarged): the same darker strokes (the development twins
 * at 150 dpi lost display P/R 0.914/0.941 -> 0.833/0.882 without them)
 * without the render at twice the scale (150-270 ms of CPU a page).
 * Where the file does not tell (no image over a fifth of the page) the
 * page is rendered twice the scale. FM_SCAN_POOL=0: once, unpooled (as
 * before 2026-11-26); 1: always at twice the scale. */
static FmGrayImage *
scan_render (FmDocument *doc, int page_index, const FmRect *rect, double scale, GError **error)
{
  const char *pool_env = g_getenv ("FM_SCAN_POOL");
  double w_px = (rect->x1 - rect->x0) * scale, h_px = (rect->y1 - rect->y0) * scale;
  gboolean twice, enlarge = FALSE;
  FmGrayImage *img;

  if (pool_env && *pool_env)
    twice = strcmp (pool_env, "0") != 0;
  else
    {
      double ppp = fm_document_page_image_ppp (doc, page_index);
      twice = !(ppp > 0) || ppp > 1.2 * scale;
      enlarge = !twice;
      if (g_getenv ("FM_DETECT_DEBUG"))
        g_printerr ("scan: page %d, page image %.0f dpi, render %s\n", page_index + 1, ppp * 72,
                    twice ? "at twice the scale" : "once, enlarged");
    }
  if (twice && w_px * 2 * h_px * 2 <= MAX_ANALYSIS_PIXELS)
    {
      g_autoptr(FmGrayImage) big = fm_render_page_rect_gray (doc, page_index, rect, 2 * scale, error);
      if (big == NULL)
        return NULL;
      if (big->width >= 2 && big->height >= 2)
        {
          img = fm_gray_image_new (big->width / 2, big->height / 2);
          for (int y = 0; y < img->height; y++)
            {
              const guint8 *r0 = big->pixels + (gsize) (2 * y) * big->stride, *r1 = r0 + big->stride;
              guint8 *o = img->pixels + (gsize) y * img->stride;
              for (int x = 0; x < img->width; x++)
                o[x] = MIN (MIN (r0[2 * x], r0[2 * x + 1]), MIN (r1[2 * x], r1[2 * x + 1]));
            }
          return img;
        }
    }
  img = fm_render_page_rect_gray (doc, page_index, rect, scale, error);
  if (img && enlarge)
    {
      FmGrayImage *pooled = darkest_of_enlarged (img);
      fm_gray_image_free (img);
      img = pooled;
    }
  return img;
}

/* What Tesseract reads of a page on gray paper: a copy with the paper
 * white (every pixel no darker than the ink's threshold). Tesseract
 * binarises by its own (Otsu's) level, which on gray, noisy paper took
 * the paper's specks into its words: a development page's word boxes
 * came out twice the line's height, the em from them 50 px instead of
 * 24, and 2 of its 25 inline formulas were found (17 with this). The
 * analysis keeps the render (its midtones tell photos). FM_SCAN_PAPER=otsu
 * leaves Tesseract the render and the threshold Otsu's. */
static FmGrayImage *
scan_clean_paper (const FmGrayImage *img, int threshold)
{
  FmGrayImage *out;

  out = fm_gray_image_new (img->width, img->height);
  for (int y = 0; y < img->height; y++)
    {
      const guint8 *r = img->pixels + (gsize) y * img->stride;
      guint8 *o = out->pixels + (gsize) y * out->stride;
      for (int x = 0; x < img->width; x++)
        o[x] = r[x] >= threshold ? 255 : r[x];
    }
  return out;
}

/* The page (rect at scale px/pt) read from its pixels: render, ink,
 * Tesseract and the analysis. */
static GPtrArray *
scan_read_pixels (FmDocument *doc, int page_index, const FmRect *rect, double scale,
                  gboolean words_only, FmScanPageKind *kind, GError **error)
{
  g_autoptr(FmGrayImage) img = NULL;
  g_autoptr(FmGrayImage) ocr_img = NULL;
  g_autoptr(GArray) comps = NULL;
  int min_area, gap;
  gint64 t_render, t_ink, t_analyse, c_render, c_ink, c_analyse;
  int threshold = 0;

  t_render = g_get_monotonic_time ();
  c_render = thread_cpu_us ();
  img = scan_render (doc, page_index, rect, scale, error);
  if (img == NULL)
    return NULL;
  t_ink = g_get_monotonic_time ();
  c_ink = thread_cpu_us ();
  t_render = t_ink - t_render;
  c_render = c_ink - c_render;
  min_area = MAX (2, (int) lround (SPECK_AREA_PT2 * scale * scale));
  {
    gboolean gray_paper;
    threshold = ink_threshold (img, &gray_paper);
    if (gray_paper)
      ocr_img = scan_clean_paper (img, threshold);
    gap = ink_gap (img, threshold);
    comps = ink_components (img, threshold, min_area, gap);
  }
  t_ink = g_get_monotonic_time () - t_ink;
  c_ink = thread_cpu_us () - c_ink;
  if (comps->len == 0)
    {
      if (kind)
        *kind = FM_SCAN_PAGE_BLANK;
      return g_ptr_array_new_with_free_func ((GDestroyNotify) fm_region_free);
    }
#ifdef FM_HAVE_TESSERACT
  {
    GPtrArray *regions;
    TessBaseAPI *api;
    gint64 t_take = g_get_monotonic_time ();
    api = tess_take (error);
    t_take = g_get_monotonic_time () - t_take;
    t_analyse = g_get_monotonic_time ();
    c_analyse = thread_cpu_us ();
    regions = api ? analyse (api, img, g_steal_pointer (&ocr_img), comps, gap > 0, threshold, scale, page_index,
                             words_only, error)
                  : NULL;
    t_analyse = g_get_monotonic_time () - t_analyse;
    c_analyse = thread_cpu_us () - c_analyse;
    if (api)
      tess_give (api);
    if (g_getenv ("FM_DETECT_DEBUG"))
      g_printerr ("scan: page %d, wall (thread CPU) ms: render %.0f (%.0f), ink %.0f (%.0f), "
                  "Tesseract's instance %.0f, OCR and analysis %.0f (%.0f)\n", page_index + 1,
                  t_render / 1000.0, c_render / 1000.0, t_ink / 1000.0, c_ink / 1000.0,
                  t_take / 1000.0, t_analyse / 1000.0, c_analyse / 1000.0);
    if (regions == NULL)
      return NULL;
    /* Reading order, with label_of following its display. */
    {
      g_autofree FmRegion **old = g_memdup2 (regions->pdata, sizeof (gpointer) * regions->len);
      g_ptr_array_sort (regions, cmp_region_order);
      for (guint i = 0; i < regions->len; i++)
        {
          FmRegion *r = regions->pdata[i];
          if (r->label_of >= 0)
            for (guint k = 0; k < regions->len; k++)
              if (regions->pdata[k] == old[r->label_of])
                {
                  r->label_of = (int) k;
                  break;
                }
        }
    }
    return regions;
  }
#else
  g_set_error (error, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NO_TEXT_LAYER,
               "%s: page %d has no text layer and this build cannot read pixels "
               "(built without Tesseract: Debian libtesseract-dev)",
               fm_document_get_name (doc), page_index + 1);
  return NULL;
#endif
}

static GPtrArray *
scan_detect_page (FmDocument *doc, int page_index, gboolean words_only, FmScanPageKind *kind,
                  GError **error)
{
  double w_pt = 0, h_pt = 0, scale = FM_SCAN_DPI / 72.0;
  FmRect rect;
  GPtrArray *regions;

  g_return_val_if_fail (FM_IS_DOCUMENT (doc), NULL);
  if (kind)
    *kind = FM_SCAN_PAGE_INK;
  if (!fm_document_get_page_size (doc, page_index, &w_pt, &h_pt, error))
    return NULL;
  if (w_pt * scale < 1 || h_pt * scale < 1)
    {
      /* Less than a pixel at the analysis resolution: nothing can be on it. */
      if (kind)
        *kind = FM_SCAN_PAGE_BLANK;
      return g_ptr_array_new_with_free_func ((GDestroyNotify) fm_region_free);
    }
  if (w_pt * scale * h_pt * scale > MAX_ANALYSIS_PIXELS)
    scale = sqrt (MAX_ANALYSIS_PIXELS / (w_pt * h_pt));
  rect = (FmRect) { 0, 0, w_pt, h_pt };
#ifdef FM_HAVE_TESSERACT
  tess_begin_page (tall_enough_to_split (h_pt * scale, scale * 72));
#endif
  regions = scan_read_pixels (doc, page_index, &rect, scale, words_only, kind, error);
#ifdef FM_HAVE_TESSERACT
  tess_end_page ();
#endif
  return regions;
}

GPtrArray *
fm_scan_detect_page (FmDocument *doc, int page_index, FmScanPageKind *kind, GError **error)
{
  return scan_detect_page (doc, page_index, FALSE, kind, error);
}

const char *
fm_page_source_to_string (FmPageSource source)
{
  switch (source)
    {
    case FM_PAGE_SOURCE_TEXT_LAYER: return "text layer";
    case FM_PAGE_SOURCE_PIXELS:     return "pixels";
    case FM_PAGE_SOURCE_BLANK:      return "blank";
    default:                        return "unknown";
    }
}

guint
fm_detect_thread_count (void)
{
  const char *env = g_getenv ("FM_DETECT_THREADS");
  guint n = env ? (guint) g_ascii_strtoull (env, NULL, 10) : g_get_num_processors ();

  return CLAMP (n, 1, 4);
}

GPtrArray *
fm_detect_page_any (FmDocument *doc, int page_index, const FmDetectOptions *options,
                    FmPageSource *source, GError **error)
{
  GError *local = NULL;
  GPtrArray *regions;
  FmScanPageKind kind = FM_SCAN_PAGE_INK;

  if (source)
    *source = FM_PAGE_SOURCE_TEXT_LAYER;
  regions = fm_detect_page (doc, page_index, options, &local);
  if (regions != NULL || !g_error_matches (local, FM_DOCUMENT_ERROR, FM_DOCUMENT_ERROR_NO_TEXT_LAYER))
    {
      if (local)
        g_propagate_error (error, local);
      return regions;
    }
  g_clear_error (&local);
  /* The bench's baseline rule reads a scan with Tesseract alone. */
  regions = scan_detect_page (doc, page_index,
                              options != NULL && options->rule == FM_DETECT_RULE_PDFMATHTRANSLATE,
                              &kind, error);
  if (regions && source)
    *source = kind == FM_SCAN_PAGE_BLANK ? FM_PAGE_SOURCE_BLANK : FM_PAGE_SOURCE_PIXELS;
  return regions;
}
