/* fm-recognize.h - the one recognition pipeline of the window and formulate-cli.
 *
 * Both front ends detect a page, call fm_recognize_prepare_page on its regions
 * (which fixes what each region's crop is), and hand regions to
 * fm_recognize_run, which asks the text layer first (when a reader is set),
 * renders the crops, runs the engine in one batch and writes latex,
 * confidence, provenance and timings back into the regions. Nothing here
 * touches GTK; fm_recognize_run may run on any thread (the document's lock
 * guards Poppler).
 */
#pragma once

#include <stdbool.h>

#include "fe.h"
#include "fm-document.h"
#include "fm-region.h"

G_BEGIN_DECLS

/* White around each crop, in ems, as in the training renders. */
#define FM_RECOGNIZE_CROP_MARGIN_EM 0.25

typedef enum {
  /* The detected box as it is. */
  FM_CROP_RULE_BOX,
  /* A display's box widened by what belongs to it on its line but lies
   * outside the box ("det" before a matrix), as the Markdown export assigns
   * text-layer pieces; other kinds as they are. bench/pdf-e2e --crop compares
   * the two rules. */
  FM_CROP_RULE_LINE,
} FmCropRule;

/* The rule both front ends use (chosen by bench/pdf-e2e, see bench/RESULTS.md). */
#define FM_CROP_RULE_DEFAULT FM_CROP_RULE_LINE

gboolean    fm_crop_rule_from_string (const char *name, FmCropRule *out);

/* What a text-layer reader made of one region. */
typedef enum {
  FM_TEXT_READ_CERTAIN,      /* latex is right: the image model is skipped   */
  FM_TEXT_READ_UNCERTAIN,    /* latex is a guess: the image model decides    */
  FM_TEXT_READ_UNAVAILABLE,  /* nothing usable (no glyphs, no Unicode map)   */
  FM_TEXT_READ_DOUBTFUL,     /* UNCERTAIN, over a spelling the image cannot
                                settle either: an agreeing reading stays
                                flagged (fm_mathtext's unsure_spelling)      */
} FmTextReadVerdict;

/* Reads a region's glyphs from the PDF's text layer. Sets *latex (g_free) for
 * CERTAIN and UNCERTAIN, and for UNCERTAIN may set *symbols (g_strfreev): the
 * symbol tokens the glyphs back, one per use (FeSymbolConstraint's contract,
 * engine/fe.h), which then constrain the image model's decoding. A failure is
 * UNAVAILABLE, with error set when there is a reason; the region then goes to
 * the image model, never to empty output. */
typedef FmTextReadVerdict (*FmTextReader) (FmDocument      *doc,
                                           const FmRegion  *region,
                                           char           **latex,
                                           GStrv           *symbols,
                                           GError         **error);

/* The text-layer reader of app/document/fm-mathtext.c when this build has it, else
 * NULL (image model only). */
FmTextReader fm_recognize_text_reader (void);

typedef struct {
  int em_px;                 /* the model's em in pixels (fe_context_model_info) */
  int beam_width;            /* 0: the engine's default                         */
  FmTextReader read_text;    /* NULL: image model only                          */
  bool (*abort_callback) (void *user_data);
  void *abort_user_data;
  /* done/total over the image-model formulas of this call. */
  void (*progress_callback) (int done, int total, void *user_data);
  void *progress_user_data;
  gboolean keep_crops;       /* fill FmRecognizeTask.crop                       */
  /* UNCERTAIN readings decode constrained by their glyphs' symbols. Off by
   * default: on bench/pdf-e2e seed 301 it read 23 % of those regions exactly
   * against 28 % unconstrained (bench/RESULTS.md), the symbol lists and the
   * widened crops do not agree well enough yet. */
  gboolean constrain_uncertain;
  /* With read_text: the image model reads every region and the text layer
   * checks it (fm_recognize_choose): a reading whose symbols agree with the
   * glyphs is kept, one that does not is decoded again constrained by the
   * glyphs, and the glyphs' own reading is the fallback of a CERTAIN region.
   * FALSE: the text layer first (CERTAIN skips the model). */
  gboolean combine;
} FmRecognizeOptions;

/* em_px = FM_RENDER_DEFAULT_EM_PX, engine beam default, the text-layer
 * reader checking the image model's readings (read_text =
 * fm_recognize_text_reader (), combine; read_text = NULL: the image model
 * alone; combine = FALSE: the text layer first), no callbacks, no crops
 * kept. */
FmRecognizeOptions fm_recognize_default_options (void);

/* Sets crop_box of regions[first..] (all of one page, in detection order)
 * by rule. On a text-layer failure every crop stays the detected box. */
void        fm_recognize_prepare_page (FmDocument *doc,
                                       GPtrArray  *regions,
                                       guint       first,
                                       FmCropRule  rule);

typedef struct {
  FmDocument *document;
  FmRegion *region;          /* in: box, crop_box, font_size; out: latex,
                              * confidence, provenance, recognize_ms       */
  double confidence_min;     /* out: the least sure token, or -1            */
  char *error;               /* out: why this one failed (g_free)           */
  FmGrayImage *crop;         /* out, with keep_crops (fm_gray_image_free)   */
} FmRecognizeTask;

void        fm_recognize_task_clear (FmRecognizeTask *task);

/* Recognises the tasks' regions (equation numbers are skipped): text layer
 * first when opts->read_text is set, then the rest through fe_recognize in
 * one batch. A task left without latex and without error was stopped by the
 * abort callback. Returns the engine's status (FE_OK when it was not
 * needed); per-task failures are in the tasks. */
/* The symbols a LaTeX reading draws, one entry per use, in a form that two
 * spellings of the same glyphs share: structure, fonts and spacing dropped,
 * delimiters bare (\left( -> "("), operator names as letters (\sin and
 * \operatorname{sin} alike), \neq as \not and =, trailing sentence
 * punctuation dropped. Sorted. */
GPtrArray  *fm_recognize_latex_symbols (const char *latex);

/* How many symbols one reading has that the other lacks (the symmetric
 * difference of their symbol multisets, a text-layer reader's unknown glyph
 * "?" matching any one symbol); 0: they agree. */
guint       fm_recognize_symbol_distance (const char *a, const char *b);

/* A display region's reading without a leading \displaystyle, in place
 * (the combined pipeline applies it to every display). */
void        fm_recognize_strip_display_style (char *latex);

/* How a combined reading was chosen (FmRecognizeOptions.combine). */
typedef enum {
  FM_CHOICE_IMAGE,        /* no text-layer reading: the model's            */
  FM_CHOICE_AGREE,        /* the model's, its symbols are the glyphs'      */
  FM_CHOICE_CONSTRAINED,  /* the model's constrained second reading agrees */
  FM_CHOICE_TEXT,         /* neither agrees; the CERTAIN glyph reading     */
  FM_CHOICE_DISAGREE,     /* neither agrees, the glyphs unsure: the
                           * model's, with a confidence under the flag     */
} FmChoice;

/* Picks a region's result from the text layer's reading (verdict and
 * text_latex, NULL when UNAVAILABLE), the model's (model_latex,
 * model_confidence) and, where the model disagreed, its reading constrained
 * by the glyphs (second_latex, NULL when there was none). Sets *latex
 * (g_free: the chosen reading, its trailing sentence punctuation the glyphs'),
 * *confidence and *provenance. */
FmChoice    fm_recognize_choose (FmTextReadVerdict  verdict,
                                 const char        *text_latex,
                                 const char        *model_latex,
                                 double             model_confidence,
                                 const char        *second_latex,
                                 double             second_confidence,
                                 char             **latex,
                                 double            *confidence,
                                 FmProvenance      *provenance);

/* How TeX raised the superscripts on closing brackets in a region: on a
 * `)` character TeX lifts the script by the font's superscript shift
 * (sup1/sup2, about 0.36-0.41 em), on a group box `{(x-y)}` to at least the
 * box's height less sup_drop (about 0.48 em on CM, 0.57 on Latin Modern
 * Math), so `(x-y)^{2}` and `{(x-y)}^{2}` are different formulas. */
typedef enum {
  FM_SCRIPT_BASE_NONE,     /* no superscript on a ) or ] among the glyphs   */
  FM_SCRIPT_BASE_CHAR,     /* every one raised as on a character            */
  FM_SCRIPT_BASE_GROUP,    /* every one raised as on a group box            */
  FM_SCRIPT_BASE_UNKNOWN,  /* the boxes cannot tell (their fonts' boxes
                            * differ, a raise between the two, or mixed)    */
} FmScriptBase;

/* Measures the superscripts on closing brackets of region from the page's
 * glyph boxes (Poppler's: font ascent to descent, not ink). */
FmScriptBase fm_recognize_measure_script_bases (FmDocument *doc, const FmRegion *region);

/* latex with its scripts on a closing bracket spelt as measured: braces
 * around the bracketed base for GROUP, none for CHAR; for NONE or UNKNOWN
 * (or a reading whose brackets cannot be paired) the spelling stays and
 * *confidence drops under the review flag. NULL when nothing changes. */
char        *fm_recognize_spell_script_bases (const char *latex, FmScriptBase measured, double *confidence);

fe_status   fm_recognize_run (FeState                  *state,
                              FmRecognizeTask          *tasks,
                              gsize                     n_tasks,
                              const FmRecognizeOptions *opts);

G_END_DECLS
