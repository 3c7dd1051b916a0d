/* fm-recognize.c - crops, text layer, batching and results for window and CLI. */
#include "fm-recognize.h"

#include <string.h>

#include "fm-page-text.h"

#include "fm-mathtext.h"

/* The glyphs' symbols plus the operator names of the reading. */
static GStrv
constraint_symbols (const FmMathTextResult *result)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  const char *p = result->latex;

  /* The engine wants one vocabulary token per entry: a text word ("for all")
   * is its letters, a double prime two primes. */
  for (guint i = 0; result->symbols != NULL && i < result->symbols->len; i++)
    {
      g_auto(GStrv) words = g_strsplit_set (result->symbols->pdata[i], " \t", -1);
      for (guint w = 0; words[w] != NULL; w++)
        {
          const char *word = words[w];
          if (word[0] == '\0')
            continue;
          if (strspn (word, "'") == strlen (word))
            for (const char *q = word; *q; q++)
              g_strv_builder_add (b, "'");
          else
            g_strv_builder_add (b, word);
        }
    }
  /* The crop is widened to the formula's line (fm_recognize_prepare_page) and
   * may show the sentence punctuation the region leaves out. */
  g_strv_builder_add_many (b, ".", ",", ";", NULL);
  while (p != NULL && (p = strchr (p, '\\')) != NULL)
    {
      const char *q = ++p;
      while (g_ascii_isalpha (*q))
        q++;
      g_autofree char *word = g_strndup (p, q - p);
      /* the engine's contract wants an operator name as one symbol (\sin);
       * the reader's symbols list its letters. \bmod is its spelling of mod. */
      if (fm_mathtext_is_operator_word (word) || strcmp (word, "bmod") == 0)
        {
          g_autofree char *command = g_strconcat ("\\", word, NULL);
          g_strv_builder_add (b, command);
        }
      p = q;
    }
  return g_strv_builder_end (b);
}

/* fm-mathtext's verdicts in the pipeline's terms. */
static FmTextReadVerdict
read_mathtext (FmDocument *doc, const FmRegion *region, char **latex, GStrv *symbols,
               GError **error)
{
  FmMathTextResult *result = fm_mathtext_read_region (doc, region, error);
  FmTextReadVerdict verdict = FM_TEXT_READ_UNAVAILABLE;

  *latex = NULL;
  *symbols = NULL;
  if (result == NULL)
    return FM_TEXT_READ_UNAVAILABLE;
  if (result->latex != NULL && result->latex[0] != '\0')
    switch (result->verdict)
      {
      case FM_MATHTEXT_CERTAIN:
        verdict = FM_TEXT_READ_CERTAIN;
        break;
      case FM_MATHTEXT_UNCERTAIN:
        verdict = FM_TEXT_READ_UNCERTAIN;
        break;
      case FM_MATHTEXT_UNAVAILABLE:
      default:
        break;
      }
  if (verdict != FM_TEXT_READ_UNAVAILABLE)
    *latex = g_strdup (result->latex);
  if (verdict == FM_TEXT_READ_UNCERTAIN)
    *symbols = constraint_symbols (result);
  fm_mathtext_result_free (result);
  return verdict;
}

FmTextReader
fm_recognize_text_reader (void)
{
  return read_mathtext;
}

gboolean
fm_crop_rule_from_string (const char *name, FmCropRule *out)
{
  if (g_strcmp0 (name, "box") == 0)
    *out = FM_CROP_RULE_BOX;
  else if (g_strcmp0 (name, "line") == 0)
    *out = FM_CROP_RULE_LINE;
  else
    return FALSE;
  return TRUE;
}

FmRecognizeOptions
fm_recognize_default_options (void)
{
  FmRecognizeOptions opts = { 0 };

  opts.em_px = FM_RENDER_DEFAULT_EM_PX;
  /* Image model only, the text-layer reader opt-in (formulate-cli pdf
   * --text-layer): with the v1 model (2026-11-25) the image path reads more
   * formulas exactly end to end, 0.604 vs 0.377 (bench/pdf-e2e seed 301) and
   * 0.709 vs 0.651 (seed 302). Where the reader is CERTAIN, the model is right
   * and the reader wrong 73 times, the reverse 22 times: the reader misses the
   * trailing punctuation outside the detected box and the spacing commands
   * (bench/RESULTS.md, docs/text-layer.md). */
  opts.read_text = NULL;
  return opts;
}

void
fm_recognize_prepare_page (FmDocument *doc, GPtrArray *regions, guint first, FmCropRule rule)
{
  g_autofree FmRect *boxes = NULL;
  g_autoptr(GError) error = NULL;

  if (first >= regions->len)
    return;
  boxes = g_new (FmRect, regions->len - first);
  for (guint i = first; i < regions->len; i++)
    boxes[i - first] = ((FmRegion *) regions->pdata[i])->box;
  /* On failure (a page whose text layer cannot be read) fm_page_text_crop_boxes
   * has already filled in the boxes as found; recognition goes on with them. */
  if (rule == FM_CROP_RULE_LINE)
    fm_page_text_crop_boxes (doc, regions, first, boxes, &error);
  for (guint i = first; i < regions->len; i++)
    ((FmRegion *) regions->pdata[i])->crop_box = boxes[i - first];
}

void
fm_recognize_task_clear (FmRecognizeTask *task)
{
  g_clear_pointer (&task->error, g_free);
  g_clear_pointer (&task->crop, fm_gray_image_free);
}

static void
set_result (FmRegion *region, const char *latex, double confidence, FmProvenance provenance)
{
  g_free (region->latex);
  region->latex = g_strdup (latex);
  region->confidence = confidence;
  region->provenance = provenance;
}

fe_status
fm_recognize_run (FeState *state, FmRecognizeTask *tasks, gsize n_tasks,
                  const FmRecognizeOptions *opts)
{
  FmRecognizeOptions defaults = fm_recognize_default_options ();
  g_autofree FmGrayImage **grays = g_new0 (FmGrayImage *, n_tasks + 1);
  g_autofree FeImage *images = g_new0 (FeImage, n_tasks + 1);
  g_autofree FeResult *results = NULL;
  g_autofree gsize *slot = g_new0 (gsize, n_tasks + 1);   /* image -> task */
  g_autofree gboolean *text_guided = g_new0 (gboolean, n_tasks + 1);
  /* per task: the glyphs' symbols of an UNCERTAIN reading (g_strfreev) */
  GStrv *task_symbols = g_new0 (GStrv, n_tasks + 1);
  g_autofree FeSymbolConstraint *constraints = g_new0 (FeSymbolConstraint, n_tasks + 1);
  gboolean constrained = FALSE;
  FeRecognizeParams rp = fe_recognize_default_params ();
  int em_px;
  gsize n_images = 0;
  fe_status status = FE_OK;

  if (opts == NULL)
    opts = &defaults;
  em_px = opts->em_px > 0 ? opts->em_px : FM_RENDER_DEFAULT_EM_PX;

  for (gsize i = 0; i < n_tasks; i++)
    {
      FmRecognizeTask *task = &tasks[i];
      FmRegion *region = task->region;
      g_autoptr(GError) error = NULL;
      double scale, font_size = region->font_size;
      gint64 t0 = g_get_monotonic_time ();

      task->confidence_min = -1;
      /* An equation number is text, not math: the window shows it with its
       * display and exports carry the text layer's number. */
      if (region->kind == FM_REGION_NUMBER)
        continue;

      if (opts->read_text != NULL)
        {
          g_autofree char *latex = NULL;
          g_autoptr(GError) read_error = NULL;
          FmTextReadVerdict verdict = opts->read_text (task->document, region, &latex,
                                                       &task_symbols[i], &read_error);

          if (verdict == FM_TEXT_READ_CERTAIN && latex != NULL)
            {
              /* The glyphs are the formula: no model guess can beat them. */
              set_result (region, latex, 1.0, FM_PROVENANCE_TEXT);
              task->confidence_min = 1.0;
              region->recognize_ms = (g_get_monotonic_time () - t0) / 1000.0;
              if (opts->keep_crops)
                task->crop = fm_region_render_crop (task->document, region, em_px,
                                                    FM_RECOGNIZE_CROP_MARGIN_EM, NULL);
              continue;
            }
          /* UNCERTAIN: the model reads the crop, preferring the symbols the
           * glyphs back (FeSymbolConstraint, engine/fe-constraint.c). */
          text_guided[i] = verdict == FM_TEXT_READ_UNCERTAIN;
          if (!text_guided[i])
            g_clear_pointer (&task_symbols[i], g_strfreev);
        }

      grays[i] = fm_region_render_crop (task->document, region, em_px,
                                        FM_RECOGNIZE_CROP_MARGIN_EM, &error);
      if (grays[i] == NULL)
        {
          task->error = g_strdup (error->message);
          continue;
        }
      scale = fm_region_crop_scale (region, em_px);
      images[n_images] = (FeImage) {
        .data = grays[i]->pixels, .width = grays[i]->width,
        .height = grays[i]->height, .stride = grays[i]->stride,
        .format = FE_PIXEL_GRAY8,
        /* No font size (a box drawn by hand) or a nonsense one (Type 3
         * fonts report 0.01 or 5000 pt, and the crop falls back to another
         * scale): the engine estimates. */
        .em_px_hint = font_size >= 0.5 && font_size <= 1000 ? (float) (font_size * scale) : 0.0f,
      };
      if (opts->constrain_uncertain && task_symbols[i] != NULL && task_symbols[i][0] != NULL)
        {
          constraints[n_images] = (FeSymbolConstraint) {
            .symbols = (const char *const *) task_symbols[i],
            .n_symbols = (int) g_strv_length (task_symbols[i]),
          };
          constrained = TRUE;
        }
      slot[n_images++] = i;
    }

  results = g_new0 (FeResult, n_images + 1);
  if (opts->beam_width > 0)
    rp.beam_width = opts->beam_width;
  rp.abort_callback = opts->abort_callback;
  rp.abort_user_data = opts->abort_user_data;
  rp.progress_callback = opts->progress_callback;
  rp.progress_user_data = opts->progress_user_data;
  if (constrained)
    rp.constraints = constraints;
  if (n_images > 0)
    status = fe_recognize (state, images, n_images, &rp, results);

  for (gsize k = 0; k < n_images; k++)
    {
      FmRecognizeTask *task = &tasks[slot[k]];

      if (results[k].latex != NULL)
        {
          set_result (task->region, results[k].latex, results[k].confidence,
                      text_guided[slot[k]] ? FM_PROVENANCE_TEXT_IMAGE : FM_PROVENANCE_IMAGE);
          task->confidence_min = results[k].confidence_min;
          task->region->recognize_ms = results[k].preprocess_ms + results[k].encoder_ms
                                       + results[k].decoder_ms;
        }
      else if (status != FE_OK && status != FE_ERR_ABORTED)
        task->error = g_strdup (fe_last_error ());
      fe_result_clear (&results[k]);
    }

  for (gsize i = 0; i < n_tasks; i++)
    {
      if (opts->keep_crops && grays[i] != NULL && tasks[i].crop == NULL)
        tasks[i].crop = g_steal_pointer (&grays[i]);
      g_clear_pointer (&grays[i], fm_gray_image_free);
      g_strfreev (task_symbols[i]);
    }
  g_free (task_symbols);
  return status;
}
