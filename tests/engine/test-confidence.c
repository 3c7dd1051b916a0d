/* test-confidence.c - the confidence features and the model file's optional
 * calibration (engine/fe-calibration.c, "Confidence" in engine/fe.h).
 *
 * - A model without formulate.calibration loads and its confidence is the
 *   mean token probability; with one, it is the logistic model's probability
 *   over the result's own features; an entry naming a feature the engine does
 *   not know is ignored with a warning; a malformed entry fails the load.
 *   The model files are copies of tests/fixtures/model/tiny.safetensors with
 *   the entry written into their metadata here.
 * - The features of synthetic decodes (token ids and probabilities made up
 *   here, not a model's output): probability statistics, length, repeated
 *   n-grams, structure errors, the guard stop.
 * - On the shipped model and its calibration: a crafted decode of repeated
 *   garbage read with high token probability scores below the calibration's
 *   review threshold, and below a plausible formula read just as surely.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "fe.h"

static const char *
source_root (void)
{
  const char *root = g_getenv ("FE_SOURCE_ROOT");
  return root ? root : ".";
}

/* A copy of the tiny fixture model with `entry` (JSON text, NULL = none) as
 * __metadata__["formulate.calibration"]. The header keeps its length modulo
 * 8 (JSON spaces), so the tensors stay where they were relative to it. */
static char *
tiny_with_calibration (const char *entry)
{
  g_autofree char *src = g_build_filename (source_root (), "tests", "fixtures", "model",
                                           "tiny.safetensors", NULL);
  g_autofree char *raw = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  if (!g_file_get_contents (src, &raw, &len, &error))
    g_error ("%s", error->message);
  guint64 n = 0;
  memcpy (&n, raw, 8); /* little-endian: the test machines are */
  g_autofree char *header = g_strndup (raw + 8, n);
  g_assert_null (strstr (header, "formulate.calibration"));
  GString *h = g_string_new (NULL);
  const char *meta = strstr (header, "\"__metadata__\":{");
  g_assert_nonnull (meta);
  gsize at = (gsize) (meta - header) + strlen ("\"__metadata__\":{");
  g_string_append_len (h, header, at);
  if (entry)
    {
      g_string_append (h, "\"formulate.calibration\":\"");
      for (const char *p = entry; *p; p++)
        {
          if (*p == '"' || *p == '\\')
            g_string_append_c (h, '\\');
          g_string_append_c (h, *p);
        }
      g_string_append (h, "\",");
    }
  g_string_append (h, header + at);
  while (h->len % 8 != n % 8)
    g_string_append_c (h, ' ');
  GString *out = g_string_new (NULL);
  guint64 new_n = h->len;
  g_string_append_len (out, (const char *) &new_n, 8);
  g_string_append_len (out, h->str, (gssize) h->len);
  g_string_append_len (out, raw + 8 + n, (gssize) (len - 8 - n));
  char *path = NULL;
  int fd = g_file_open_tmp ("fe-confidence-XXXXXX.safetensors", &path, &error);
  if (fd < 0)
    g_error ("%s", error->message);
  close (fd);
  if (!g_file_set_contents (path, out->str, (gssize) out->len, &error))
    g_error ("%s", error->message);
  g_string_free (out, TRUE);
  g_string_free (h, TRUE);
  return path;
}

static fe_status
load (const char *path, FeContext **ctx)
{
  FeContextParams cp = fe_context_default_params ();
  cp.device = "cpu";
  cp.n_threads = 1;
  return fe_context_load (path, &cp, ctx);
}

/* One image with some ink: what the tiny model reads does not matter here.
 * beam 1 takes the batched greedy path (fe_batch_image_done), beam 2 the
 * serial one (fe_recognize_one): both fill the confidence. */
static FeResult
recognize_blob (FeContext *ctx, int beam)
{
  enum { W = 96, H = 32 };
  static guint8 pixels[W * H];
  memset (pixels, 255, sizeof pixels);
  for (int y = 8; y < 24; y++)
    for (int x = 10; x < 86; x++)
      if ((x / 6) % 2 == 0 || y == 16)
        pixels[y * W + x] = 0;
  FeImage img = { .data = pixels, .width = W, .height = H, .stride = W,
                  .format = FE_PIXEL_GRAY8, .em_px_hint = 20.0f };
  FeState *st = NULL;
  g_assert_cmpint (fe_state_new (ctx, &st), ==, FE_OK);
  FeRecognizeParams rp = fe_recognize_default_params ();
  rp.beam_width = beam;
  FeResult res;
  if (fe_recognize (st, &img, 1, &rp, &res) != FE_OK)
    g_error ("fe_recognize: %s", fe_last_error ());
  fe_state_free (st);
  return res;
}

static int
token_id (FeContext *ctx, const char *text)
{
  const FeModelInfo *mi = fe_context_model_info (ctx);
  for (int i = 0; i < mi->vocab_size; i++)
    if (g_strcmp0 (fe_context_token_text (ctx, i), text) == 0)
      return i;
  g_error ("no token '%s' in the vocabulary", text);
  return -1;
}

/* Token ids of a space-separated token list. */
static int
ids_of (FeContext *ctx, const char *tokens, int *ids, int cap)
{
  g_auto(GStrv) parts = g_strsplit (tokens, " ", -1);
  int n = 0;
  for (int i = 0; parts[i]; i++)
    if (*parts[i])
      {
        g_assert_cmpint (n, <, cap);
        ids[n++] = token_id (ctx, parts[i]);
      }
  return n;
}

static void
test_without_calibration (void)
{
  g_autofree char *path = tiny_with_calibration (NULL);
  FeContext *ctx = NULL;
  g_assert_cmpint (load (path, &ctx), ==, FE_OK);
  const FeModelInfo *mi = fe_context_model_info (ctx);
  g_assert_false (mi->calibrated);
  g_assert_cmpstr (mi->calibration_target, ==, "");
  g_assert_cmpfloat (mi->review_threshold, ==, 0.0f);
  float f[FE_CONFIDENCE_N_FEATURES] = { 0 };
  g_assert_cmpfloat (fe_context_calibrated_confidence (ctx, f), ==, -1.0f);
  FeResult res = recognize_blob (ctx, 1);
  g_assert_cmpfloat (res.confidence, ==, res.confidence_mean);
  g_assert_cmpfloat_with_epsilon (res.confidence_features[FE_CONF_MEAN_PROB],
                                  res.confidence_mean, 1e-6);
  fe_result_clear (&res);
  fe_context_free (ctx);
  g_unlink (path);
}

static void
test_with_calibration (void)
{
  /* every feature weighed, so the test sees each one used */
  static const double w[FE_CONFIDENCE_N_FEATURES] = { 1.5, 0.25, 0.5, -1.0, -0.5,
                                                      -0.125, -2.0, -0.75, -1.25 };
  GString *entry = g_string_new ("{\"version\":1,\"target\":\"token-exact\",\"features\":[");
  for (int i = 0; i < FE_CONFIDENCE_N_FEATURES; i++)
    g_string_append_printf (entry, "%s\"%s\"", i ? "," : "", fe_confidence_feature_name (i));
  g_string_append (entry, "],\"weights\":[");
  for (int i = 0; i < FE_CONFIDENCE_N_FEATURES; i++)
    g_string_append_printf (entry, "%s%g", i ? "," : "", w[i]);
  g_string_append (entry, "],\"bias\":0.5,\"review_threshold\":0.7,\"fitted_on\":\"test\"}");
  g_autofree char *path = tiny_with_calibration (entry->str);
  g_string_free (entry, TRUE);
  FeContext *ctx = NULL;
  if (load (path, &ctx) != FE_OK)
    g_error ("%s", fe_last_error ());
  const FeModelInfo *mi = fe_context_model_info (ctx);
  g_assert_true (mi->calibrated);
  g_assert_cmpstr (mi->calibration_target, ==, "token-exact");
  g_assert_cmpfloat_with_epsilon (mi->review_threshold, 0.7, 1e-6);

  /* the function on synthetic features: the logistic model, monotone */
  float f[FE_CONFIDENCE_N_FEATURES] = { 0 };
  g_assert_cmpfloat_with_epsilon (fe_context_calibrated_confidence (ctx, f),
                                  1.0 / (1.0 + exp (-0.5)), 1e-6);
  f[FE_CONF_REPEAT_FRACTION] = 1.0f;
  g_assert_cmpfloat_with_epsilon (fe_context_calibrated_confidence (ctx, f),
                                  1.0 / (1.0 + exp (-(0.5 - 2.0))), 1e-6);

  /* a real decode: its confidence is the calibration over its features */
  FeResult res = recognize_blob (ctx, 1);
  double z = 0.5;
  for (int i = 0; i < FE_CONFIDENCE_N_FEATURES; i++)
    z += w[i] * res.confidence_features[i];
  g_assert_cmpfloat_with_epsilon (res.confidence, 1.0 / (1.0 + exp (-z)), 1e-5);
  g_assert_cmpfloat (res.confidence, ==,
                     fe_context_calibrated_confidence (ctx, res.confidence_features));
  fe_result_clear (&res);
  res = recognize_blob (ctx, 2);
  g_assert_cmpfloat (res.confidence, ==,
                     fe_context_calibrated_confidence (ctx, res.confidence_features));
  g_assert_cmpfloat_with_epsilon (res.confidence_features[FE_CONF_MEAN_PROB],
                                  res.confidence_mean, 1e-6);
  fe_result_clear (&res);
  fe_context_free (ctx);
  g_unlink (path);
}

static int warnings;
static char last_warning[512];

static void
count_warning (fe_log_level level, const char *message, void *user_data)
{
  if (level >= FE_LOG_WARN)
    {
      warnings++;
      g_strlcpy (last_warning, message, sizeof last_warning);
    }
}

static void
test_unknown_feature_ignored (void)
{
  g_autofree char *path = tiny_with_calibration (
    "{\"version\":1,\"features\":[\"mean_prob\",\"render_match\"],\"weights\":[1,2],\"bias\":0}");
  FeContextParams cp = fe_context_default_params ();
  cp.device = "cpu";
  cp.n_threads = 1;
  cp.log_callback = count_warning;
  warnings = 0;
  FeContext *ctx = NULL;
  if (fe_context_load (path, &cp, &ctx) != FE_OK)
    g_error ("%s", fe_last_error ());
  g_assert_false (fe_context_model_info (ctx)->calibrated);
  g_assert_cmpint (warnings, ==, 1);
  g_assert_nonnull (strstr (last_warning, "render_match"));
  FeResult res = recognize_blob (ctx, 1);
  g_assert_cmpfloat (res.confidence, ==, res.confidence_mean);
  fe_result_clear (&res);
  fe_context_free (ctx);
  g_unlink (path);
}

static void
test_malformed_refused (void)
{
  static const struct { const char *entry, *message; } cases[] = {
    { "{\"version\":1,\"features\":[\"mean_prob\"],\"weights\":[1,2],\"bias\":0}",
      "1 features but 2 weights" },
    { "{\"version\":1,\"features\":[\"mean_prob\"],\"weights\":[1]}", "\"bias\" must be a number" },
    { "{\"version\":1,\"features\":[\"mean_prob\",\"mean_prob\"],\"weights\":[1,1],\"bias\":0}",
      "feature 'mean_prob' given twice" },
    { "{\"version\":1,\"features\":[],\"weights\":[],\"bias\":0,\"review_threshold\":2}",
      "review_threshold must be within 0..1" },
    { "[1,2]", "formulate.calibration must be a JSON object" },
    { "{\"features\":", "formulate.calibration: invalid JSON" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = tiny_with_calibration (cases[i].entry);
      FeContext *ctx = NULL;
      g_assert_cmpint (load (path, &ctx), ==, FE_ERR_FORMAT);
      g_assert_null (ctx);
      if (!strstr (fe_last_error (), cases[i].message))
        g_error ("case %u: '%s' does not say '%s'", i, fe_last_error (), cases[i].message);
      g_unlink (path);
    }
}

static void
features_of (FeContext *ctx, const char *tokens, float prob, bool eos, bool stopped, float *f)
{
  int ids[256];
  float probs[257];
  int n = ids_of (ctx, tokens, ids, 256);
  int n_probs = n + (eos ? 1 : 0);
  for (int i = 0; i < n_probs; i++)
    probs[i] = prob;
  g_assert_cmpint (fe_confidence_features (ctx, ids, n, probs, n_probs, stopped, f), ==, FE_OK);
}

static void
test_synthetic_features (void)
{
  g_autofree char *path = tiny_with_calibration (NULL);
  FeContext *ctx = NULL;
  g_assert_cmpint (load (path, &ctx), ==, FE_OK);
  float f[FE_CONFIDENCE_N_FEATURES];

  /* x^{2}=y with probabilities 0.9 0.4 0.9 0.9 0.9 0.9 0.95 (EOS) */
  int ids[6];
  int n = ids_of (ctx, "x ^ { 2 } =", ids, 6);
  float probs[7] = { 0.9f, 0.4f, 0.9f, 0.9f, 0.9f, 0.9f, 0.95f };
  g_assert_cmpint (fe_confidence_features (ctx, ids, n, probs, 7, false, f), ==, FE_OK);
  double mean = (0.9 * 5 + 0.4 + 0.95) / 7;
  double mean_log = (5 * log (0.9) + log (0.4) + log (0.95)) / 7;
  g_assert_cmpfloat_with_epsilon (f[FE_CONF_MEAN_PROB], mean, 1e-6);
  g_assert_cmpfloat_with_epsilon (f[FE_CONF_MEAN_LOG_PROB], mean_log, 1e-5);
  g_assert_cmpfloat_with_epsilon (f[FE_CONF_MIN_LOG_PROB], log (0.4), 1e-5);
  g_assert_cmpfloat_with_epsilon (f[FE_CONF_FRAC_BELOW_050], 1.0 / 7, 1e-6);
  g_assert_cmpfloat_with_epsilon (f[FE_CONF_FRAC_BELOW_080], 1.0 / 7, 1e-6);
  g_assert_cmpfloat_with_epsilon (f[FE_CONF_LOG_LENGTH], log (7.0), 1e-5);
  g_assert_cmpfloat (f[FE_CONF_REPEAT_FRACTION], ==, 0.0f);
  g_assert_cmpfloat (f[FE_CONF_STRUCTURE_ERRORS], ==, 0.0f);
  g_assert_cmpfloat (f[FE_CONF_STOPPED], ==, 0.0f);

  /* a probability of 0 is floored, not -inf */
  probs[1] = 0.0f;
  g_assert_cmpint (fe_confidence_features (ctx, ids, n, probs, 7, true, f), ==, FE_OK);
  g_assert_cmpfloat (f[FE_CONF_MIN_LOG_PROB], ==, -20.0f);
  g_assert_cmpfloat (f[FE_CONF_STOPPED], ==, 1.0f);

  /* repeats: "x +" five times = 8 tokens after the first copy of 10; two
   * copies of a pair are ordinary and count nothing */
  features_of (ctx, "x + x + x + x + x +", 0.9f, false, true, f);
  g_assert_cmpfloat_with_epsilon (f[FE_CONF_REPEAT_FRACTION], 8.0 / 10, 1e-6);
  features_of (ctx, "x + x + y", 0.9f, true, false, f);
  g_assert_cmpfloat (f[FE_CONF_REPEAT_FRACTION], ==, 0.0f);
  features_of (ctx, "1 0 0 0", 0.9f, true, false, f);
  g_assert_cmpfloat_with_epsilon (f[FE_CONF_REPEAT_FRACTION], 2.0 / 4, 1e-6);

  /* structure */
  static const struct { const char *tokens; float errors; } structure[] = {
    { "\\frac { 1 } { 2 }", 0 },
    { "\\left( x \\right)", 0 },
    { "{ x", 1 },                       /* never closed */
    { "x }", 1 },                       /* closed, never opened */
    { "\\left( { x \\right) }", 2 },    /* crossed: each closer of the wrong kind */
    { "x ^", 1 },                       /* a script with nothing after it */
    { "x _ } {", 3 },                   /* "_" before "}", the stray "}", the open "{" */
    { "{ { { { { x", 4 },               /* counted up to 4 */
  };
  for (guint i = 0; i < G_N_ELEMENTS (structure); i++)
    {
      features_of (ctx, structure[i].tokens, 0.9f, true, false, f);
      float want = structure[i].errors;
      if (f[FE_CONF_STRUCTURE_ERRORS] != want)
        g_error ("'%s': %g structure errors, expected %g", structure[i].tokens,
                 f[FE_CONF_STRUCTURE_ERRORS], want);
    }

  /* an empty decode (EOS first) */
  float eos = 0.9f;
  g_assert_cmpint (fe_confidence_features (ctx, NULL, 0, &eos, 1, false, f), ==, FE_OK);
  g_assert_cmpfloat (f[FE_CONF_LOG_LENGTH], ==, 0.0f);
  g_assert_cmpfloat (f[FE_CONF_REPEAT_FRACTION], ==, 0.0f);
  g_assert_cmpint (fe_confidence_features (NULL, NULL, 0, &eos, 1, false, f), ==,
                   FE_ERR_INVALID_ARGUMENT);
  g_assert_null (fe_confidence_feature_name (FE_CONFIDENCE_N_FEATURES));
  g_assert_cmpstr (fe_confidence_feature_name (FE_CONF_REPEAT_FRACTION), ==, "repeat_fraction");
  fe_context_free (ctx);
  g_unlink (path);
}

/* The shipped model's calibration flags the classic failure: a run-on of one
 * repeated group read token by token as surely as a right formula (the old
 * confidence gave such garbage 0.63-0.78, above the window's 0.6 flag). */
static void
test_shipped_flags_repeated_garbage (void)
{
  g_autofree char *model = g_build_filename (source_root (), "data", "models",
                                             "formulate-v1.safetensors", NULL);
  FeContext *ctx = NULL;
  if (load (model, &ctx) != FE_OK)
    g_error ("%s: %s", model, fe_last_error ());
  const FeModelInfo *mi = fe_context_model_info (ctx);
  if (!mi->calibrated)
    g_error ("%s has no formulate.calibration: run /usr/bin/python3 tools/eval/calibrate.py "
             "--model %s (data/models/README.md, \"Confidence\")", model, model);
  g_assert_cmpfloat (mi->review_threshold, >, 0.0f);
  g_assert_cmpfloat (mi->review_threshold, <, 1.0f);

  static const char *const garbage[] = {
    /* stopped by the repetition guard, and without it (ended by EOS) */
    "f \\, f \\, f \\, f \\, f \\, f \\, f \\, f \\, f \\, f",
    "\\text { f } \\text { f } \\text { f } \\text { f } \\text { f } \\text { f }",
    "x + x + x + x + x + x + x + x + x + x + x + x",
  };
  float plausible[FE_CONFIDENCE_N_FEATURES];
  features_of (ctx, "x ^ { 2 } + y ^ { 2 } = z ^ { 2 }", 0.88f, true, false, plausible);
  float p_plausible = fe_context_calibrated_confidence (ctx, plausible);
  for (guint i = 0; i < G_N_ELEMENTS (garbage); i++)
    for (int stopped = 0; stopped <= 1; stopped++)
      {
        float f[FE_CONFIDENCE_N_FEATURES];
        for (float p = 0.80f; p <= 0.905f; p += 0.05f)
          {
            features_of (ctx, garbage[i], p, !stopped, stopped, f);
            float c = fe_context_calibrated_confidence (ctx, f);
            if (!(c < mi->review_threshold) || !(c < p_plausible))
              g_error ("'%s' (token probability %.2f, %s) scores %.3f: not below the review "
                       "threshold %.2f and the plausible formula's %.3f",
                       garbage[i], p, stopped ? "guard stop" : "EOS", c, mi->review_threshold,
                       p_plausible);
          }
      }
  fe_context_free (ctx);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/confidence/without-calibration", test_without_calibration);
  g_test_add_func ("/confidence/with-calibration", test_with_calibration);
  g_test_add_func ("/confidence/unknown-feature-ignored", test_unknown_feature_ignored);
  g_test_add_func ("/confidence/malformed-refused", test_malformed_refused);
  g_test_add_func ("/confidence/synthetic-features", test_synthetic_features);
  g_test_add_func ("/confidence/shipped-flags-repeated-garbage",
                   test_shipped_flags_repeated_garbage);
  return g_test_run ();
}
