/* test-model.c - formulate-v1 in the engine against the PyTorch twin's
 * reference tensors (tests/fixtures/model/, made by tools/make-test-model.py),
 * decoding, the public API, the detokeniser and preprocessing. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fe-model.h"
#include "fe-preprocess.h"
#include "fm-png.h"

/* ------------------------------------------------------------------------ */
/* Counting allocations: the test binary's malloc family wraps glibc's, so
 * the engine's calls (a static library linked in) are counted too. */

/* Sanitizers replace the malloc family themselves; wrapping it again there
 * breaks their bookkeeping, so sanitized builds rely on the engine's own
 * allocation counter (n_decoder_allocs) alone. */
#if defined(__SANITIZE_ADDRESS__)
#define FE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FE_TEST_SANITIZED 1
#endif
#endif

static volatile gint alloc_count;

#ifndef FE_TEST_SANITIZED
extern void *__libc_malloc (size_t size);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *p, size_t size);
extern void __libc_free (void *p);

void *
malloc (size_t size)
{
  g_atomic_int_inc (&alloc_count);
  return __libc_malloc (size);
}

void *
calloc (size_t n, size_t size)
{
  g_atomic_int_inc (&alloc_count);
  return __libc_calloc (n, size);
}

void *
realloc (void *p, size_t size)
{
  g_atomic_int_inc (&alloc_count);
  return __libc_realloc (p, size);
}

void
free (void *p)
{
  __libc_free (p);
}
#endif

/* ------------------------------------------------------------------------ */
/* Fixtures                                                                 */

static FmPngImage load_png (const char *name);

static char *fixture_dir;
static JsonObject *fixture_index;
static JsonParser *fixture_parser;

static char *
fixture_path (const char *name)
{
  return g_build_filename (fixture_dir, name, NULL);
}

static gboolean
have_fixtures (void)
{
  if (fixture_index)
    return TRUE;
  g_test_skip ("tests/fixtures/model/index.json is missing (tools/make-test-model.py makes it)");
  return FALSE;
}

static float *
read_f32 (const char *name, gsize expected)
{
  g_autofree char *path = fixture_path (name);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_file_get_contents (path, &data, &len, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (len, ==, expected * sizeof (float));
  float *out = g_malloc (len);
  memcpy (out, data, len);
  return out;
}

/* max |a - b| / max |b|: elementwise relative error blows up where the
 * reference is near zero, so compare against the tensor's scale. */
static double
relative_error (const float *a, const float *b, gsize n)
{
  double num = 0.0, den = 0.0;
  for (gsize i = 0; i < n; i++)
    {
      num = MAX (num, fabs ((double) a[i] - b[i]));
      den = MAX (den, fabs ((double) b[i]));
    }
  return den > 0 ? num / den : num;
}

static FeContext *
load_model (const char *model_name, const char *which)
{
  JsonObject *models = json_object_get_object_member (fixture_index, "models");
  JsonObject *m = json_object_get_object_member (models, model_name);
  JsonObject *files = json_object_get_object_member (m, "files");
  g_autofree char *path = fixture_path (json_object_get_string_member (files, which));
  FeContextParams cp = fe_context_default_params ();
  cp.device = "cpu";
  /* the PyTorch references are fp32's; auto is bf16 on AVX512_BF16 CPUs */
  cp.precision = FE_PRECISION_FP32;
  FeContext *ctx = NULL;
  fe_status st = fe_context_load (path, &cp, &ctx);
  if (st != FE_OK)
    g_error ("loading %s: %s", path, fe_last_error ());
  return ctx;
}

typedef struct {
  const char *name, *model, *pixels, *encoder, *logits;
  int height, width, encoder_tokens, d_model, vocab_size;
  JsonArray *tokens;
} Case;

static Case
get_case (guint i)
{
  JsonArray *cases = json_object_get_array_member (fixture_index, "cases");
  JsonObject *o = json_array_get_object_element (cases, i);
  Case c = {
    .name = json_object_get_string_member (o, "name"),
    .model = json_object_get_string_member (o, "model"),
    .pixels = json_object_get_string_member (o, "pixels"),
    .encoder = json_object_get_string_member (o, "encoder_output"),
    .logits = json_object_get_string_member (o, "first_logits"),
    .height = json_object_get_int_member (o, "height"),
    .width = json_object_get_int_member (o, "width"),
    .encoder_tokens = json_object_get_int_member (o, "encoder_tokens"),
    .d_model = json_object_get_int_member (o, "d_model"),
    .vocab_size = json_object_get_int_member (o, "vocab_size"),
    .tokens = json_object_get_array_member (o, "tokens"),
  };
  return c;
}

static guint
n_cases (void)
{
  return json_array_get_length (json_object_get_array_member (fixture_index, "cases"));
}

/* Encodes case c on ctx/st and checks encoder output + first logits + greedy
 * tokens against the reference. */
static void
check_case (FeContext *ctx, FeState *st, const Case *c)
{
  float *px = read_f32 (c->pixels, (gsize) c->height * c->width);
  float *enc_ref = read_f32 (c->encoder, (gsize) c->encoder_tokens * c->d_model);
  float *logits_ref = read_f32 (c->logits, c->vocab_size);
  g_assert_cmpint (fe_state_encode (st, px, c->height, c->width), ==, FE_OK);
  const float *enc;
  int n_tok = 0, d = 0;
  g_assert_cmpint (fe_state_encoder_output (st, &enc, &n_tok, &d), ==, FE_OK);
  g_assert_cmpint (n_tok, ==, c->encoder_tokens);
  g_assert_cmpint (d, ==, c->d_model);
  double enc_err = relative_error (enc, enc_ref, (gsize) n_tok * d);
  g_test_message ("%s: encoder relative error %.3g", c->name, enc_err);
  g_assert_cmpfloat (enc_err, <, 1e-4);

  const FeModelInfo *mi = fe_context_model_info (ctx);
  int *tokens = g_new0 (int, mi->max_tokens);
  float *logits = g_new0 (float, mi->vocab_size);
  int n = 0;
  g_assert_cmpint (fe_state_decode_greedy (st, tokens, mi->max_tokens, &n, logits), ==, FE_OK);
  double logit_err = relative_error (logits, logits_ref, c->vocab_size);
  g_test_message ("%s: first-logits relative error %.3g", c->name, logit_err);
  g_assert_cmpfloat (logit_err, <, 1e-4);
  g_assert_cmpint (n, ==, (int) json_array_get_length (c->tokens));
  for (int i = 0; i < n; i++)
    g_assert_cmpint (tokens[i], ==, (int) json_array_get_int_element (c->tokens, i));
  g_free (tokens);
  g_free (logits);
  g_free (px);
  g_free (enc_ref);
  g_free (logits_ref);
}

static void
test_reference_model (gconstpointer data)
{
  const char *model_name = data;
  if (!have_fixtures ())
    return;
  FeContext *ctx = load_model (model_name, "safetensors");
  FeState *st;
  g_assert_cmpint (fe_state_new (ctx, &st), ==, FE_OK);
  guint checked = 0;
  for (guint i = 0; i < n_cases (); i++)
    {
      Case c = get_case (i);
      if (strcmp (c.model, model_name) != 0)
        continue;
      check_case (ctx, st, &c);
      checked++;
    }
  g_assert_cmpuint (checked, >=, 3);
  fe_state_free (st);
  fe_context_free (ctx);
}

/* Writes a copy of a safetensors file with every F32 tensor rounded to f16:
 * stored as F16 (half) or as F32 holding the rounded values. Returns the
 * path (caller unlinks and frees). */
static char *
write_rounded_safetensors (const char *src, gboolean half)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (src, &data, &len, NULL));
  guint64 hlen;
  memcpy (&hlen, data, 8);
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, data + 8, (gssize) hlen, NULL));
  JsonObject *header = json_node_get_object (json_parser_get_root (parser));
  GByteArray *blob = g_byte_array_new ();
  GList *names = json_object_get_members (header);
  for (GList *l = names; l; l = l->next)
    {
      const char *name = l->data;
      if (strcmp (name, "__metadata__") == 0)
        continue;
      JsonObject *t = json_object_get_object_member (header, name);
      JsonArray *off = json_object_get_array_member (t, "data_offsets");
      gsize b = (gsize) json_array_get_int_element (off, 0), e = (gsize) json_array_get_int_element (off, 1);
      const char *src_data = data + 8 + hlen + b;
      guint start = blob->len;
      if (strcmp (json_object_get_string_member (t, "dtype"), "F32") == 0)
        {
          for (gsize i = 0; i < (e - b) / 4; i++)
            {
              float f, r;
              memcpy (&f, src_data + 4 * i, 4);
              uint16_t hv = fe_f32_to_f16 (f);
              r = fe_f16_to_f32 (hv);
              if (half)
                g_byte_array_append (blob, (const guint8 *) &hv, 2);
              else
                g_byte_array_append (blob, (const guint8 *) &r, 4);
            }
          if (half)
            json_object_set_string_member (t, "dtype", "F16");
        }
      else
        g_byte_array_append (blob, (const guint8 *) src_data, (guint) (e - b));
      JsonArray *no = json_array_new ();
      json_array_add_int_element (no, start);
      json_array_add_int_element (no, blob->len);
      json_object_set_array_member (t, "data_offsets", no);
    }
  g_list_free (names);
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, json_parser_get_root (parser));
  gsize text_len = 0;
  g_autofree char *text = json_generator_to_data (gen, &text_len);
  GString *file = g_string_new (NULL);
  guint64 padded = (text_len + 7) / 8 * 8;
  g_string_append_len (file, (const char *) &padded, 8);
  g_string_append_len (file, text, (gssize) text_len);
  for (gsize i = text_len; i < padded; i++)
    g_string_append_c (file, ' ');
  g_string_append_len (file, (const char *) blob->data, blob->len);
  g_byte_array_free (blob, TRUE);
  char *path = NULL;
  int fd = g_file_open_tmp (half ? "formulate-f16-XXXXXX.safetensors" : "formulate-f32r-XXXXXX.safetensors",
                            &path, NULL);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_assert_true (g_file_set_contents (path, file->str, (gssize) file->len, NULL));
  g_string_free (file, TRUE);
  return path;
}

/* An f16 model file runs on the CPU with its linear layers kept in f16
 * (widened exactly in the kernels, AVX-512 CPUs and AVX2 CPUs with F16C): encoder output, logits and
 * tokens are bit for bit those of an f32 file holding the same numbers, and
 * the weights take less memory. */
static void
test_f16_file_equals_f32 (void)
{
  if (!have_fixtures ())
    return;
  JsonObject *m = json_object_get_object_member (json_object_get_object_member (fixture_index, "models"), "tiny");
  g_autofree char *src = fixture_path (json_object_get_string_member (json_object_get_object_member (m, "files"), "safetensors"));
  g_autofree char *p16 = write_rounded_safetensors (src, TRUE);
  g_autofree char *p32 = write_rounded_safetensors (src, FALSE);
  FeContextParams cp = fe_context_default_params ();
  cp.device = "cpu";
  cp.precision = FE_PRECISION_FP32; /* f16 kept as f16 is the fp32 path's */
  FeContext *a = NULL, *b = NULL;
  if (fe_context_load (p16, &cp, &a) != FE_OK || fe_context_load (p32, &cp, &b) != FE_OK)
    g_error ("loading the rounded copies: %s", fe_last_error ());
  g_assert_cmpstr (fe_context_model_info (a)->weights_dtype, ==, "f16");
  FeRuntimeInfo ra, rb;
  g_assert_cmpint (fe_context_runtime_info (a, &ra), ==, FE_OK);
  g_assert_cmpint (fe_context_runtime_info (b, &rb), ==, FE_OK);
  /* wherever the engine keeps f16 (AVX-512, or AVX2 with F16C): an f32
   * fall-back would compare an f32 run with itself and still pass */
  if (fe_cpu_keeps_half_weights ())
    g_assert_cmpuint (ra.weights_bytes, <, rb.weights_bytes);
  FeState *sa, *sb;
  g_assert_cmpint (fe_state_new (a, &sa), ==, FE_OK);
  g_assert_cmpint (fe_state_new (b, &sb), ==, FE_OK);
  guint checked = 0;
  for (guint i = 0; i < n_cases (); i++)
    {
      Case c = get_case (i);
      if (strcmp (c.model, "tiny") != 0)
        continue;
      float *px = read_f32 (c.pixels, (gsize) c.height * c.width);
      const float *ea, *eb;
      int na, nb, d;
      g_assert_cmpint (fe_state_encode (sa, px, c.height, c.width), ==, FE_OK);
      g_assert_cmpint (fe_state_encode (sb, px, c.height, c.width), ==, FE_OK);
      g_assert_cmpint (fe_state_encoder_output (sa, &ea, &na, &d), ==, FE_OK);
      g_assert_cmpint (fe_state_encoder_output (sb, &eb, &nb, &d), ==, FE_OK);
      g_assert_cmpint (na, ==, nb);
      g_assert_cmpmem (ea, (gsize) na * d * sizeof (float), eb, (gsize) nb * d * sizeof (float));
      int max_tokens = fe_context_model_info (a)->max_tokens;
      int *ta = g_new0 (int, max_tokens), *tb = g_new0 (int, max_tokens), la = 0, lb = 0;
      float *fa = g_new0 (float, c.vocab_size), *fb = g_new0 (float, c.vocab_size);
      g_assert_cmpint (fe_state_decode_greedy (sa, ta, max_tokens, &la, fa), ==, FE_OK);
      g_assert_cmpint (fe_state_decode_greedy (sb, tb, max_tokens, &lb, fb), ==, FE_OK);
      g_assert_cmpint (la, ==, lb);
      g_assert_cmpmem (ta, la * sizeof (int), tb, lb * sizeof (int));
      g_assert_cmpmem (fa, c.vocab_size * sizeof (float), fb, c.vocab_size * sizeof (float));
      g_free (ta);
      g_free (tb);
      g_free (fa);
      g_free (fb);
      g_free (px);
      checked++;
    }
  g_assert_cmpuint (checked, >=, 3);
  fe_state_free (sa);
  fe_state_free (sb);
  fe_context_free (a);
  fe_context_free (b);
  g_unlink (p16);
  g_unlink (p32);
}

/* The .pt checkpoint (pickle + sidecar JSON) gives bit-identical results to
 * the safetensors file of the same weights. */
static void
test_pt_equals_safetensors (void)
{
  if (!have_fixtures ())
    return;
  FeContext *a = load_model ("tiny", "safetensors");
  FeContext *b = load_model ("tiny", "pt");
  g_assert_cmpstr (fe_context_model_info (a)->source_format, ==, "safetensors");
  g_assert_cmpstr (fe_context_model_info (b)->source_format, ==, "pytorch");
  g_assert_cmpuint (fe_context_model_info (a)->n_parameters, ==,
                    fe_context_model_info (b)->n_parameters);
  FeState *sa, *sb;
  g_assert_cmpint (fe_state_new (a, &sa), ==, FE_OK);
  g_assert_cmpint (fe_state_new (b, &sb), ==, FE_OK);
  for (guint i = 0; i < n_cases (); i++)
    {
      Case c = get_case (i);
      if (strcmp (c.model, "tiny") != 0)
        continue;
      float *px = read_f32 (c.pixels, (gsize) c.height * c.width);
      const float *ea, *eb;
      int na, nb, d;
      g_assert_cmpint (fe_state_encode (sa, px, c.height, c.width), ==, FE_OK);
      g_assert_cmpint (fe_state_encode (sb, px, c.height, c.width), ==, FE_OK);
      g_assert_cmpint (fe_state_encoder_output (sa, &ea, &na, &d), ==, FE_OK);
      g_assert_cmpint (fe_state_encoder_output (sb, &eb, &nb, &d), ==, FE_OK);
      g_assert_cmpint (na, ==, nb);
      g_assert_cmpmem (ea, (gsize) na * d * sizeof (float), eb, (gsize) nb * d * sizeof (float));
      int ta[64], tb[64], la, lb;
      float fa[64], fb[64];
      g_assert_cmpint (fe_state_decode_greedy (sa, ta, 64, &la, fa), ==, FE_OK);
      g_assert_cmpint (fe_state_decode_greedy (sb, tb, 64, &lb, fb), ==, FE_OK);
      g_assert_cmpmem (ta, la * sizeof (int), tb, lb * sizeof (int));
      g_assert_cmpmem (fa, c.vocab_size * sizeof (float), fb, c.vocab_size * sizeof (float));
      g_free (px);
    }
  fe_state_free (sa);
  fe_state_free (sb);
  fe_context_free (a);
  fe_context_free (b);
}

static void
test_model_info (void)
{
  if (!have_fixtures ())
    return;
  FeContext *ctx = load_model ("tiny", "safetensors");
  const FeModelInfo *mi = fe_context_model_info (ctx);
  JsonObject *m = json_object_get_object_member (
      json_object_get_object_member (fixture_index, "models"), "tiny");
  JsonObject *cfg = json_object_get_object_member (m, "config");
  g_assert_cmpstr (mi->arch, ==, "formulate-v1");
  g_assert_cmpint (mi->d_model, ==, json_object_get_int_member (cfg, "d_model"));
  g_assert_cmpint (mi->vocab_size, ==, json_object_get_int_member (cfg, "vocab_size"));
  g_assert_cmpint (mi->max_tokens, ==, json_object_get_int_member (cfg, "max_tokens"));
  g_assert_cmpint (mi->height_stride, ==, 16);
  g_assert_cmpint (mi->width_stride, ==, 8);
  g_assert_cmpuint (mi->n_parameters, ==, json_object_get_int_member (m, "n_parameters"));
  g_assert_cmpstr (mi->weights_dtype, ==, "f32");
  g_assert_cmpstr (fe_context_token_text (ctx, 1), ==, "<bos>");
  g_assert_null (fe_context_token_text (ctx, mi->vocab_size));
  g_assert_null (fe_context_token_text (ctx, -1));

  FeRuntimeInfo ri;
  g_assert_cmpint (fe_context_runtime_info (ctx, &ri), ==, FE_OK);
  g_assert_cmpstr (ri.device.id, ==, "cpu");
  g_assert_cmpint (ri.precision, ==, FE_PRECISION_FP32);
  g_assert_false (ri.fell_back);  /* "cpu" was asked for */
  g_assert_cmpuint (ri.weights_bytes, >=, mi->n_parameters * 4);
  g_assert_cmpstr (ri.gemm_path, !=, "");
  FeState *st;
  g_assert_cmpint (fe_state_new (ctx, &st), ==, FE_OK);
  FeRuntimeInfo ri2;
  g_assert_cmpint (fe_context_runtime_info (ctx, &ri2), ==, FE_OK);
  g_assert_cmpuint (ri2.engine_bytes, >, ri.engine_bytes);
  fe_state_free (st);
  fe_context_free (ctx);

  JsonObject *micro = json_object_get_object_member (
      json_object_get_object_member (fixture_index, "models"), "micro");
  ctx = load_model ("micro", "safetensors");
  g_assert_cmpstr (fe_context_model_info (ctx)->weights_dtype, ==, "f16");
  g_assert_cmpuint (fe_context_model_info (ctx)->n_parameters, ==,
                    json_object_get_int_member (micro, "n_parameters"));
  fe_context_free (ctx);
}

static void
test_devices (void)
{
  if (!have_fixtures ())
    return;
  JsonObject *files = json_object_get_object_member (json_object_get_object_member (
      json_object_get_object_member (fixture_index, "models"), "tiny"), "files");
  g_autofree char *path = fixture_path (json_object_get_string_member (files, "safetensors"));
  FeContextParams cp = fe_context_default_params ();
  FeContext *ctx = NULL;

  cp.device = "bogus";
  g_assert_cmpint (fe_context_load (path, &cp, &ctx), ==, FE_ERR_INVALID_ARGUMENT);
  g_assert_null (ctx);
  g_assert_nonnull (strstr (fe_last_error (), "bogus"));

  /* "auto" always gives a context; on a machine without a usable GPU it is
   * the CPU with the reason recorded. */
  cp.device = "auto";
  g_assert_cmpint (fe_context_load (path, &cp, &ctx), ==, FE_OK);
  FeRuntimeInfo ri;
  g_assert_cmpint (fe_context_runtime_info (ctx, &ri), ==, FE_OK);
  gboolean have_gpu = FALSE;
  FeDeviceInfo devs[16];
  size_t nd = fe_devices_list (devs, 16);
  for (size_t i = 0; i < nd && i < 16; i++)
    if (devs[i].kind == FE_DEVICE_CUDA && devs[i].available)
      have_gpu = TRUE;
  if (!have_gpu)
    {
      g_assert_cmpstr (ri.device.id, ==, "cpu");
      g_assert_true (ri.fell_back);
      g_assert_cmpstr (ri.fallback_reason, !=, "");
      g_test_message ("auto fell back: %s", ri.fallback_reason);
      /* precision auto on the CPU: bf16 where it multiplies in bf16
       * (AVX512_BF16), fp32 elsewhere (bench/RESULTS.md, "bf16 by default") */
      g_assert_cmpint (ri.precision, ==,
                       fe_cpu_has_bf16_dot () ? FE_PRECISION_BF16 : FE_PRECISION_FP32);
    }
  fe_context_free (ctx);
  ctx = NULL;

  if (!have_gpu)
    {
      cp.device = "cuda:0";
      g_assert_cmpint (fe_context_load (path, &cp, &ctx), ==, FE_ERR_DEVICE);
      g_assert_null (ctx);
      g_assert_cmpstr (fe_last_error (), !=, "");
      g_assert_null (strchr (fe_last_error (), '\n'));
    }
}

/* ------------------------------------------------------------------------ */
/* Decoding                                                                 */

typedef struct {
  FeContext *ctx;
  FeState *st;
  float *px;
  Case c;
} Loaded;

static void
loaded_init (Loaded *l, const char *case_name)
{
  l->ctx = load_model ("tiny", "safetensors");
  g_assert_cmpint (fe_state_new (l->ctx, &l->st), ==, FE_OK);
  for (guint i = 0; i < n_cases (); i++)
    {
      l->c = get_case (i);
      if (strcmp (l->c.name, case_name) == 0)
        break;
    }
  g_assert_cmpstr (l->c.name, ==, case_name);
  l->px = read_f32 (l->c.pixels, (gsize) l->c.height * l->c.width);
  g_assert_cmpint (fe_state_encode (l->st, l->px, l->c.height, l->c.width), ==, FE_OK);
}

static void
loaded_clear (Loaded *l)
{
  g_free (l->px);
  fe_state_free (l->st);
  fe_context_free (l->ctx);
}

static FeStateBuffers *
state_buffers (FeState *st)
{
  return fe_state_buffers (st);
}

static void
test_beam1_equals_greedy (void)
{
  if (!have_fixtures ())
    return;
  for (guint i = 0; i < n_cases (); i++)
    {
      Case c = get_case (i);
      if (strcmp (c.model, "tiny") != 0)
        continue;
      Loaded l;
      loaded_init (&l, c.name);
      FeStateBuffers *sb = state_buffers (l.st);
      for (int repeats = 0; repeats <= 4; repeats += 2)
        {
          int tg[64], tb[64];
          FeDecodeOptions opt = { .beam_width = 1, .max_repeats = repeats, .length_penalty = 0.6f };
          FeDecodeOutput og = { .tokens = tg }, ob = { .tokens = tb };
          g_assert_cmpint (fe_decode_greedy (sb, &opt, &og), ==, FE_OK);
          g_assert_cmpint (fe_decode_beam (sb, &opt, &ob), ==, FE_OK);
          g_assert_cmpint (og.n_tokens, ==, ob.n_tokens);
          g_assert_cmpmem (tg, og.n_tokens * sizeof (int), tb, ob.n_tokens * sizeof (int));
          g_assert_cmpfloat (og.confidence_mean, ==, ob.confidence_mean);
          g_assert_cmpfloat (og.confidence_min, ==, ob.confidence_min);
          g_assert_true (og.repetition_stopped == ob.repetition_stopped);
          g_assert_true (og.hit_length_limit == ob.hit_length_limit);
          g_assert_cmpfloat (og.confidence_min, >, 0.0f);
          g_assert_cmpfloat (og.confidence_min, <=, og.confidence_mean);
          g_assert_cmpfloat (og.confidence_mean, <=, 1.0f);
        }
      loaded_clear (&l);
    }
}

static void
test_beam_search (void)
{
  if (!have_fixtures ())
    return;
  Loaded l;
  loaded_init (&l, "tiny-text");
  FeStateBuffers *sb = state_buffers (l.st);
  int t1[64], t2[64], tg[64];
  FeDecodeOptions opt = { .beam_width = 4, .max_repeats = 0, .length_penalty = 0.6f };
  FeDecodeOutput o1 = { .tokens = t1 }, o2 = { .tokens = t2 }, og = { .tokens = tg };
  g_assert_cmpint (fe_decode_beam (sb, &opt, &o1), ==, FE_OK);
  g_assert_cmpint (fe_decode_beam (sb, &opt, &o2), ==, FE_OK);
  /* deterministic */
  g_assert_cmpint (o1.n_tokens, ==, o2.n_tokens);
  g_assert_cmpmem (t1, o1.n_tokens * sizeof (int), t2, o2.n_tokens * sizeof (int));
  g_assert_cmpfloat (o1.confidence_mean, ==, o2.confidence_mean);
  g_assert_cmpint (o1.n_tokens, >, 0);
  /* beam search scores sequences at least as well as greedy: compare the
   * length-normalised log-probability of both results by replaying them */
  opt.beam_width = 1;
  g_assert_cmpint (fe_decode_greedy (sb, &opt, &og), ==, FE_OK);
  g_test_message ("greedy %d tokens (mean p %.3f), beam 4: %d tokens (mean p %.3f)", og.n_tokens,
                  og.confidence_mean, o1.n_tokens, o1.confidence_mean);
  g_assert_cmpuint (sb->beam_capacity, >=, 4);

  /* max_tokens bounds the output and reports the limit */
  opt.beam_width = 3;
  opt.max_tokens = 5;
  g_assert_cmpint (fe_decode_beam (sb, &opt, &o1), ==, FE_OK);
  g_assert_cmpint (o1.n_tokens, <=, 5);
  opt.beam_width = 1;
  g_assert_cmpint (fe_decode_greedy (sb, &opt, &og), ==, FE_OK);
  g_assert_cmpint (og.n_tokens, ==, 5);
  g_assert_true (og.hit_length_limit);
  loaded_clear (&l);
}

/* tiny-blobs' reference ends in 13 x \mathrm: with the guard at 4 the
 * decode stops after the 4th copy, and the tokens before are the reference's. */
static void
test_repetition_stops_decode (void)
{
  if (!have_fixtures ())
    return;
  Loaded l;
  loaded_init (&l, "tiny-blobs");
  FeStateBuffers *sb = state_buffers (l.st);
  int toks[64];
  FeDecodeOptions opt = { .beam_width = 1, .max_repeats = 4, .length_penalty = 0.6f };
  FeDecodeOutput out = { .tokens = toks };
  g_assert_cmpint (fe_decode_greedy (sb, &opt, &out), ==, FE_OK);
  int n_ref = (int) json_array_get_length (l.c.tokens);
  g_assert_true (out.repetition_stopped);
  g_assert_false (out.hit_length_limit);
  g_assert_cmpint (out.n_tokens, <, n_ref);
  for (int i = 0; i < out.n_tokens; i++)
    g_assert_cmpint (toks[i], ==, (int) json_array_get_int_element (l.c.tokens, i));
  /* the end is exactly max_repeats copies of one token, not more */
  int last = toks[out.n_tokens - 1], run = 0;
  for (int i = out.n_tokens - 1; i >= 0 && toks[i] == last; i--)
    run++;
  g_assert_cmpint (run, ==, 4);
  g_assert_false (fe_repetition_detected (toks, out.n_tokens, 4, NULL));
  /* beam search applies the same guard */
  opt.beam_width = 3;
  g_assert_cmpint (fe_decode_beam (sb, &opt, &out), ==, FE_OK);
  g_assert_false (fe_repetition_detected (toks, out.n_tokens, 4, NULL));
  loaded_clear (&l);
}

static int abort_polls;

static bool
abort_after (void *user_data)
{
  return ++abort_polls > GPOINTER_TO_INT (user_data);
}

static int progress_calls[8];
static int n_progress_calls;

static void
record_progress (int done, int total, void *user_data)
{
  (void) user_data;
  g_assert_cmpint (total, ==, 2);
  progress_calls[n_progress_calls++] = done;
}

static void
test_recognize_abort_progress (void)
{
  if (!have_fixtures ())
    return;
  Loaded l;
  loaded_init (&l, "tiny-text");
  /* two gray8 images made from the fixture pixels */
  guint8 *gray = g_malloc ((gsize) l.c.height * l.c.width);
  for (int i = 0; i < l.c.height * l.c.width; i++)
    gray[i] = (guint8) lrintf (255.0f * (1.0f - l.px[i]));
  FeImage imgs[2] = {
    { .data = gray, .width = l.c.width, .height = l.c.height, .format = FE_PIXEL_GRAY8 },
    { .data = gray, .width = l.c.width, .height = l.c.height, .format = FE_PIXEL_GRAY8,
      .em_px_hint = 20.0f },
  };
  FeResult res[2];
  FeRecognizeParams rp = fe_recognize_default_params ();
  g_assert_cmpint (rp.beam_width, ==, 1);
  g_assert_cmpint (rp.max_repeats, ==, 4);
  rp.progress_callback = record_progress;
  n_progress_calls = 0;
  g_assert_cmpint (fe_recognize (l.st, imgs, 2, &rp, res), ==, FE_OK);
  g_assert_cmpint (n_progress_calls, ==, 2);
  g_assert_cmpint (progress_calls[0], ==, 1);
  g_assert_cmpint (progress_calls[1], ==, 2);
  for (int i = 0; i < 2; i++)
    {
      g_assert_nonnull (res[i].latex);
      g_assert_cmpint (res[i].input_height % 16, ==, 0);
      g_assert_cmpint (res[i].input_width % 8, ==, 0);
      g_assert_cmpfloat (res[i].confidence_mean, >, 0.0f);
      g_assert_cmpfloat (res[i].encoder_ms, >=, 0.0);
      g_autofree char *again = fe_detokenize (l.ctx, res[i].token_ids, res[i].n_tokens);
      g_assert_cmpstr (again, ==, res[i].latex);
    }
  /* em_px_hint = em_px: no resampling */
  g_assert_cmpfloat (res[1].scale, ==, 1.0f);
  fe_result_clear (&res[0]);
  fe_result_clear (&res[1]);
  g_assert_null (res[0].latex);

  /* The scale search (images without em_px_hint) tries the estimate among
   * its candidates and keeps the most confident result: never less
   * confident than the estimate alone. The hinted image is not searched. */
  {
    FeRecognizeParams single = fe_recognize_default_params ();
    FeRecognizeParams search = fe_recognize_default_params ();
    g_assert_cmpint (search.scale_candidates, ==, 3);
    single.scale_candidates = 1;
    FeResult r1[2], r3[2];
    g_assert_cmpint (fe_recognize (l.st, imgs, 2, &single, r1), ==, FE_OK);
    g_assert_cmpint (fe_recognize (l.st, imgs, 2, &search, r3), ==, FE_OK);
    g_assert_cmpfloat (r3[0].confidence_mean, >=, r1[0].confidence_mean);
    g_assert_cmpstr (r3[1].latex, ==, r1[1].latex);
    g_assert_cmpfloat (r3[1].scale, ==, 1.0f);
    for (int i = 0; i < 2; i++)
      {
        fe_result_clear (&r1[i]);
        fe_result_clear (&r3[i]);
      }
    search.scale_candidates = 16;
    g_assert_cmpint (fe_recognize (l.st, imgs, 2, &search, r3), ==, FE_ERR_INVALID_ARGUMENT);
  }

  /* abort during the second image: the first stays, the second is zeroed */
  int steps_first = 0;
  {
    FeRecognizeParams one = fe_recognize_default_params ();
    one.scale_candidates = 1;
    g_assert_cmpint (fe_recognize (l.st, imgs, 1, &one, res), ==, FE_OK);
    steps_first = res[0].n_tokens + (res[0].hit_length_limit || res[0].repetition_stopped ? 0 : 1);
    fe_result_clear (&res[0]);
  }
  abort_polls = 0;
  rp.abort_callback = abort_after;
  /* one decode per image (no scale search on the hint-less first image), so
   * the polls can be counted: once before each image and once per decode step */
  rp.scale_candidates = 1;
  /* the serial path's polls (batched decoding polls per group, encode and
   * shared step: tests/engine/test-batch.c covers its aborts) */
  rp.max_batch = 1;
  rp.abort_user_data = GINT_TO_POINTER (1 + steps_first + 1 + 2);
  n_progress_calls = 0;
  g_assert_cmpint (fe_recognize (l.st, imgs, 2, &rp, res), ==, FE_ERR_ABORTED);
  g_assert_cmpint (n_progress_calls, ==, 1);
  g_assert_nonnull (res[0].latex);
  g_assert_null (res[1].latex);
  g_assert_cmpint (res[1].n_tokens, ==, 0);
  g_assert_nonnull (strstr (fe_last_error (), "abort"));
  fe_result_clear (&res[0]);

  /* abort at the very first poll */
  abort_polls = 0;
  rp.abort_user_data = GINT_TO_POINTER (0);
  g_assert_cmpint (fe_recognize (l.st, imgs, 2, &rp, res), ==, FE_ERR_ABORTED);
  g_assert_null (res[0].latex);
  g_free (gray);
  loaded_clear (&l);
}

typedef struct {
  FeContext *ctx;
  const FeImage *image;
  char *latex;
  fe_status status;
} ThreadJob;

static gpointer
recognize_thread (gpointer data)
{
  ThreadJob *job = data;
  FeState *st;
  job->status = fe_state_new (job->ctx, &st);
  if (job->status != FE_OK)
    return NULL;
  FeRecognizeParams rp = fe_recognize_default_params ();
  rp.beam_width = 2;
  for (int round = 0; round < 3 && job->status == FE_OK; round++)
    {
      FeResult res;
      job->status = fe_recognize (st, job->image, 1, &rp, &res);
      if (job->status == FE_OK)
        {
          if (!job->latex)
            job->latex = g_strdup (res.latex);
          else if (strcmp (job->latex, res.latex) != 0)
            job->status = FE_ERR_INTERNAL;
          fe_result_clear (&res);
        }
    }
  fe_state_free (st);
  return NULL;
}

/* One context, several threads with a state each: the same answers as one
 * thread alone (fe.h's thread-safety rule). */
static void
test_threads_share_context (void)
{
  if (!have_fixtures ())
    return;
  FmPngImage png = load_png ("formula-96dpi.png");
  FeImage img = { .data = png.data, .width = png.width, .height = png.height,
                  .stride = png.stride, .format = png.format };
  FeContext *ctx = load_model ("tiny", "safetensors");
  ThreadJob alone = { .ctx = ctx, .image = &img };
  recognize_thread (&alone);
  g_assert_cmpint (alone.status, ==, FE_OK);
  ThreadJob jobs[3];
  GThread *threads[3];
  for (int i = 0; i < 3; i++)
    {
      jobs[i] = (ThreadJob) { .ctx = ctx, .image = &img };
      threads[i] = g_thread_new ("recognize", recognize_thread, &jobs[i]);
    }
  for (int i = 0; i < 3; i++)
    {
      g_thread_join (threads[i]);
      g_assert_cmpint (jobs[i].status, ==, FE_OK);
      g_assert_cmpstr (jobs[i].latex, ==, alone.latex);
      g_free (jobs[i].latex);
    }
  g_free (alone.latex);
  fe_context_free (ctx);
  fm_png_clear (&png);
}

/* Decoding allocates nothing per token: after a warm-up, a decode of many
 * tokens makes exactly as many allocations as a decode of one. */
static void
test_no_allocation_per_token (void)
{
  if (!have_fixtures ())
    return;
  Loaded l;
  loaded_init (&l, "tiny-blobs");
  FeStateBuffers *sb = state_buffers (l.st);
  for (int width = 1; width <= 3; width += 2)
    {
      int toks[64];
      FeDecodeOptions opt = { .beam_width = width, .max_repeats = 0, .length_penalty = 0.6f };
      FeDecodeOutput out = { .tokens = toks };
      g_assert_cmpint (fe_decode_beam (sb, &opt, &out), ==, FE_OK); /* warm-up */
      unsigned long allocs_before = sb->n_decoder_allocs;
      opt.max_tokens = 1;
      gint a0 = g_atomic_int_get (&alloc_count);
      g_assert_cmpint (width == 1 ? fe_decode_greedy (sb, &opt, &out) : fe_decode_beam (sb, &opt, &out), ==, FE_OK);
      gint short_allocs = g_atomic_int_get (&alloc_count) - a0;
      opt.max_tokens = 0;
      a0 = g_atomic_int_get (&alloc_count);
      g_assert_cmpint (width == 1 ? fe_decode_greedy (sb, &opt, &out) : fe_decode_beam (sb, &opt, &out), ==, FE_OK);
      gint long_allocs = g_atomic_int_get (&alloc_count) - a0;
      g_test_message ("beam %d: %d tokens, %d allocations (1 token: %d)", width, out.n_tokens,
                      long_allocs, short_allocs);
      g_assert_cmpint (out.n_tokens, >, 10);
      g_assert_cmpint (long_allocs, ==, short_allocs);
      g_assert_cmpint (long_allocs, ==, 0);
      g_assert_cmpuint (sb->n_decoder_allocs, ==, allocs_before);
    }
  loaded_clear (&l);
}

/* ------------------------------------------------------------------------ */
/* Tokens                                                                   */

static void
test_detokenize (void)
{
  /* string literals are const; the engine only reads the table */
  const char *vocab_text[] = { "<pad>", "<bos>", "<eos>", "<unk>", "\\alpha", "x", "\\sin", "t",
                    "\\frac", "{", "}", "1", "\\,", "\\left(", "\\mathrm", "d", "\\\\",
                    "A", "\\{", "+", "\\beta", "2" };
  char *const *vocab = (char *const *) vocab_text;
  FeModelConfig cfg = { .pad_id = 0, .bos_id = 1, .eos_id = 2, .unk_id = 3 };
  int n_vocab = G_N_ELEMENTS (vocab_text);
  struct { int ids[8]; int n; const char *want; } cases[] = {
    { { 4, 5 }, 2, "\\alpha x" },               /* control word + letter: space */
    { { 6, 7 }, 2, "\\sin t" },
    { { 8, 9, 11, 10 }, 4, "\\frac{1}" },       /* control word + brace: none */
    { { 4, 11 }, 2, "\\alpha1" },               /* + digit: none */
    { { 12, 5 }, 2, "\\,x" },                   /* control symbol: none */
    { { 13, 5 }, 2, "\\left(x" },               /* \left( is not letters only */
    { { 14, 9, 15, 10 }, 4, "\\mathrm{d}" },
    { { 16, 17 }, 2, "\\\\A" },                 /* \\ is a control symbol */
    { { 4, 20 }, 2, "\\alpha\\beta" },          /* + backslash: none */
    { { 5, 19, 21 }, 3, "x+2" },
    { { 1, 4, 5, 2 }, 4, "\\alpha x" },         /* BOS/EOS are framing */
    { { 4, 0, 5 }, 3, "\\alpha x" },            /* padding skipped, rule still applies */
    { { 18, 5 }, 2, "\\{x" },
    { { 0 }, 0, "" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      char *s = fe_detokenize_vocab (vocab, n_vocab, &cfg, cases[i].ids, cases[i].n);
      g_assert_cmpstr (s, ==, cases[i].want);
      free (s);
    }
  int bad[] = { 4, 99 };
  g_assert_null (fe_detokenize_vocab (vocab, n_vocab, &cfg, bad, 2));
  g_assert_nonnull (strstr (fe_last_error (), "99"));
  g_assert_true (fe_token_is_control_word ("\\alpha"));
  g_assert_false (fe_token_is_control_word ("\\"));
  g_assert_false (fe_token_is_control_word ("\\,"));
  g_assert_false (fe_token_is_control_word ("\\left("));
  g_assert_false (fe_token_is_control_word ("x"));
}

static void
test_repetition_guard (void)
{
  int n;
  int a[] = { 5, 5, 5, 5, 5 };
  g_assert_false (fe_repetition_detected (a, 4, 4, &n));   /* 4 copies: allowed */
  g_assert_true (fe_repetition_detected (a, 5, 4, &n));    /* 5 > 4 */
  g_assert_cmpint (n, ==, 1);
  g_assert_false (fe_repetition_detected (a, 5, 0, &n));   /* 0 = off */
  int b[] = { 9, 1, 2, 1, 2, 1, 2 };
  g_assert_false (fe_repetition_detected (b, 7, 3, &n));   /* (1 2) x3 */
  g_assert_true (fe_repetition_detected (b, 7, 2, &n));
  g_assert_cmpint (n, ==, 2);
  int c[] = { 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8 };
  g_assert_true (fe_repetition_detected (c, 16, 1, &n));   /* an 8-gram twice */
  g_assert_cmpint (n, ==, 8);
  int d[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  g_assert_false (fe_repetition_detected (d, 18, 1, &n));  /* 9-grams are not looked at */
  int e[] = { 3, 3, 4, 3, 3 };
  g_assert_false (fe_repetition_detected (e, 5, 2, &n));   /* runs must be at the end, in a row */
}

/* ------------------------------------------------------------------------ */
/* Preprocessing                                                            */

static FmPngImage
load_png (const char *name)
{
  g_autofree char *path = g_build_filename (g_getenv ("FE_SOURCE_ROOT"), "tests", "model", "data",
                                            name, NULL);
  FmPngImage img;
  char err[256];
  if (fm_png_load (path, &img, err, sizeof err) != 0)
    g_error ("%s", err);
  return img;
}

static float
estimate_em (const FmPngImage *png)
{
  FeImage img = { .data = png->data, .width = png->width, .height = png->height,
                  .stride = png->stride, .format = png->format };
  float *ink;
  g_assert_cmpint (fe_image_to_ink (&img, &ink, NULL), ==, FE_OK);
  float em = fe_estimate_em_px (ink, png->width, png->height, 0.55f);
  free (ink);
  return em;
}

/* The maximum-likelihood estimate (the one preprocessing uses) on the same
 * two renders: within 10 % of the true em at both resolutions, which the
 * median-height estimate above is not (13-17 % low on this formula). */
static void
test_scale_estimate_mle (void)
{
  FmPngImage png[2] = { load_png ("formula-96dpi.png"), load_png ("formula-300dpi.png") };
  double dpi[2] = { 96.0, 300.0 };
  for (int i = 0; i < 2; i++)
    {
      FeImage img = { .data = png[i].data, .width = png[i].width, .height = png[i].height,
                      .stride = png[i].stride, .format = png[i].format };
      float *ink;
      g_assert_cmpint (fe_image_to_ink (&img, &ink, NULL), ==, FE_OK);
      float em = fe_estimate_em_px_mle (ink, png[i].width, png[i].height);
      /* 10 pt (TeX points, 72.27 per inch) */
      double truth = 10.0 * dpi[i] / 72.27;
      g_test_message ("maximum-likelihood em at %.0f dpi: %.2f px (true %.2f px)", dpi[i], em, truth);
      g_assert_cmpfloat (fabs (em / truth - 1.0), <, 0.10);
      /* scan specks: 0.3 % of the pixels start a two-pixel speck, which the
       * estimate must ignore (with them it was 0.27 x the truth at 300 dpi) */
      guint32 seed = 12345;
      for (int y = 0; y < png[i].height; y++)
        for (int x = 0; x + 1 < png[i].width; x++)
          {
            seed = seed * 1664525u + 1013904223u;
            if (seed % 1000 < 3)
              ink[(size_t) y * png[i].width + x] = ink[(size_t) y * png[i].width + x + 1] = 1.0f;
          }
      float em_specks = fe_estimate_em_px_mle (ink, png[i].width, png[i].height);
      g_test_message ("with 0.3 %% two-pixel specks: %.2f px", em_specks);
      g_assert_cmpfloat (fabs (em_specks / truth - 1.0), <, 0.10);
      free (ink);
    }
  /* nothing to measure */
  float blank[16] = { 0 };
  g_assert_cmpfloat (fe_estimate_em_px_mle (blank, 4, 4), ==, 0.0f);
  for (int i = 0; i < 2; i++)
    fm_png_clear (&png[i]);
}

static FeModelConfig
v1_config (void)
{
  FeModelConfig cfg = { .em_px = 20, .cc_median_em = 0.55f, .max_height = 256,
                        .max_width = 1536, .height_stride = 16, .width_stride = 8 };
  return cfg;
}

/* One formula at 96 and 300 dpi (pdflatex 10 pt + pdftoppm, see
 * tests/model/data/README.md): the estimated glyph sizes must have the dpi
 * ratio within 10 %, and preprocessing must bring both to the same size. */
static void
test_scale_estimate (void)
{
  FmPngImage lo = load_png ("formula-96dpi.png");
  FmPngImage hi = load_png ("formula-300dpi.png");
  float em_lo = estimate_em (&lo), em_hi = estimate_em (&hi);
  /* 10 pt at 96 dpi is 13.3 px, at 300 dpi 41.7 px */
  g_test_message ("estimated em: %.2f px at 96 dpi, %.2f px at 300 dpi (ratio %.3f, dpi ratio %.3f)",
                  em_lo, em_hi, em_hi / em_lo, 300.0 / 96.0);
  g_assert_cmpfloat (fabs ((em_hi / em_lo) / (300.0 / 96.0) - 1.0), <, 0.10);
  g_assert_cmpfloat (fabs (em_hi / (10.0 * 300 / 72) - 1.0), <, 0.25);
  /* what cc_median_em would make the estimate exact on this formula */
  g_test_message ("median component height on the 300 dpi render: %.3f em",
                  em_hi * 0.55 / (10.0 * 300 / 72));

  /* the 300 dpi image shrunk in memory to 96 dpi by area averaging */
  int sw = (int) lrint (hi.width * 96.0 / 300.0), sh = (int) lrint (hi.height * 96.0 / 300.0);
  float *ink_hi;
  FeImage img_hi = { .data = hi.data, .width = hi.width, .height = hi.height,
                     .stride = hi.stride, .format = hi.format };
  g_assert_cmpint (fe_image_to_ink (&img_hi, &ink_hi, NULL), ==, FE_OK);
  float *small = g_new (float, (gsize) sw * sh);
  fe_resize_ink (ink_hi, hi.width, hi.height, small, sw, sh);
  float em_small = fe_estimate_em_px (small, sw, sh, 0.55f);
  g_test_message ("300 dpi shrunk to %dx%d: em %.2f px", sw, sh, em_small);
  g_assert_cmpfloat (fabs ((em_hi / em_small) / (300.0 / 96.0) - 1.0), <, 0.10);
  free (ink_hi);
  g_free (small);

  FeModelConfig cfg = v1_config ();
  float *a, *b;
  int ah, aw, bh, bw;
  float sa, sb;
  FeImage img_lo = { .data = lo.data, .width = lo.width, .height = lo.height,
                     .stride = lo.stride, .format = lo.format };
  g_assert_cmpint (fe_preprocess_config (&cfg, &img_lo, &a, &ah, &aw, &sa), ==, FE_OK);
  g_assert_cmpint (fe_preprocess_config (&cfg, &img_hi, &b, &bh, &bw, &sb), ==, FE_OK);
  g_test_message ("preprocessed: 96 dpi -> %dx%d (scale %.3f), 300 dpi -> %dx%d (scale %.3f)",
                  aw, ah, sa, bw, bh, sb);
  g_assert_cmpint (ah % 16, ==, 0);
  g_assert_cmpint (aw % 8, ==, 0);
  g_assert_cmpfloat (fabs ((double) aw / bw - 1.0), <, 0.10);
  g_assert_cmpfloat (fabs ((sa / sb) / (300.0 / 96.0) - 1.0), <, 0.10);
  free (a);
  free (b);

  /* an em_px_hint overrides the estimate; one within 10 % of em_px leaves
   * the image at its size */
  img_lo.em_px_hint = 21.0f;
  g_assert_cmpint (fe_preprocess_config (&cfg, &img_lo, &a, &ah, &aw, &sa), ==, FE_OK);
  g_assert_cmpfloat (sa, ==, 1.0f);
  free (a);
  img_lo.em_px_hint = 10.0f;
  g_assert_cmpint (fe_preprocess_config (&cfg, &img_lo, &a, &ah, &aw, &sa), ==, FE_OK);
  g_assert_cmpfloat (sa, ==, 2.0f);
  free (a);
  fm_png_clear (&lo);
  fm_png_clear (&hi);
}

/* Dark background, RGB and RGBA give the same model input as black on white. */
static void
test_preprocess_formats (void)
{
  FmPngImage hi = load_png ("formula-300dpi.png");
  g_assert_cmpint (hi.format, ==, FE_PIXEL_GRAY8);
  int w = hi.width, h = hi.height, n = w * h;
  guint8 *dark = g_malloc (n), *rgb = g_malloc (n * 3), *rgba = g_malloc (n * 4);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        guint8 g = hi.data[y * hi.stride + x];
        int i = y * w + x;
        dark[i] = 255 - g;
        rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = g;
        /* white text drawn as alpha over transparency */
        rgba[4 * i] = rgba[4 * i + 1] = rgba[4 * i + 2] = 0;
        rgba[4 * i + 3] = 255 - g;
      }
  FeModelConfig cfg = v1_config ();
  FeImage base = { .data = hi.data, .width = w, .height = h, .stride = hi.stride,
                   .format = FE_PIXEL_GRAY8 };
  FeImage variants[3] = {
    { .data = dark, .width = w, .height = h, .format = FE_PIXEL_GRAY8 },
    { .data = rgb, .width = w, .height = h, .format = FE_PIXEL_RGB8 },
    { .data = rgba, .width = w, .height = h, .format = FE_PIXEL_RGBA8 },
  };
  float *ref;
  int rh, rw;
  float rs;
  g_assert_cmpint (fe_preprocess_config (&cfg, &base, &ref, &rh, &rw, &rs), ==, FE_OK);
  for (int v = 0; v < 3; v++)
    {
      float *out;
      int oh, ow;
      float os;
      bool inverted;
      float *ink;
      g_assert_cmpint (fe_image_to_ink (&variants[v], &ink, &inverted), ==, FE_OK);
      g_assert_true (inverted == (v == 0));
      free (ink);
      g_assert_cmpint (fe_preprocess_config (&cfg, &variants[v], &out, &oh, &ow, &os), ==, FE_OK);
      g_assert_cmpint (oh, ==, rh);
      g_assert_cmpint (ow, ==, rw);
      g_assert_cmpfloat (os, ==, rs);
      double max_diff = 0;
      for (int i = 0; i < oh * ow; i++)
        max_diff = MAX (max_diff, fabs (out[i] - ref[i]));
      g_assert_cmpfloat (max_diff, <, 0.02);
      free (out);
    }
  /* the ink is where the formula is: some pixels are full ink, the margin is clean */
  float mx = 0;
  for (int i = 0; i < rh * rw; i++)
    mx = MAX (mx, ref[i]);
  g_assert_cmpfloat (mx, >, 0.9f);
  for (int x = 0; x < rw; x++)
    g_assert_cmpfloat (ref[x], ==, 0.0f);
  free (ref);

  /* a blank image is valid: background only */
  memset (dark, 255, n);
  float *out;
  int oh, ow;
  float os;
  g_assert_cmpint (fe_preprocess_config (&cfg, &variants[0], &out, &oh, &ow, &os), ==, FE_OK);
  for (int i = 0; i < oh * ow; i++)
    g_assert_cmpfloat (out[i], ==, 0.0f);
  free (out);
  /* bad input is an error, not a crash */
  FeImage bad = { .data = NULL, .width = 10, .height = 10 };
  g_assert_cmpint (fe_preprocess_config (&cfg, &bad, &out, &oh, &ow, &os), ==,
                   FE_ERR_INVALID_ARGUMENT);
  FeImage bad_stride = { .data = rgb, .width = 10, .height = 10, .stride = 5,
                         .format = FE_PIXEL_RGB8 };
  g_assert_cmpint (fe_preprocess_config (&cfg, &bad_stride, &out, &oh, &ow, &os), ==,
                   FE_ERR_INVALID_ARGUMENT);
  g_free (dark);
  g_free (rgb);
  g_free (rgba);
  fm_png_clear (&hi);
}

/* Wide images are capped at max_width by shrinking, never cut. */
static void
test_preprocess_cap (void)
{
  FeModelConfig cfg = v1_config ();
  cfg.max_width = 256;
  cfg.max_height = 64;
  FmPngImage hi = load_png ("formula-300dpi.png");
  FeImage img = { .data = hi.data, .width = hi.width, .height = hi.height, .stride = hi.stride,
                  .format = hi.format };
  float *out;
  int oh, ow;
  float os;
  g_assert_cmpint (fe_preprocess_config (&cfg, &img, &out, &oh, &ow, &os), ==, FE_OK);
  g_assert_cmpint (ow, <=, 256);
  g_assert_cmpint (oh, <=, 64);
  /* the last ink column is inside the image: nothing cut */
  gboolean right_ink = FALSE;
  for (int y = 0; y < oh; y++)
    for (int x = ow / 2; x < ow; x++)
      if (out[y * ow + x] > 0.5f)
        right_ink = TRUE;
  g_assert_true (right_ink);
  free (out);
  fm_png_clear (&hi);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  const char *dir = g_getenv ("FE_FIXTURE_DIR");
  fixture_dir = dir ? g_strdup (dir)
                    : g_build_filename (g_getenv ("FE_SOURCE_ROOT"), "tests", "fixtures", "model",
                                        NULL);
  g_autofree char *index_path = g_build_filename (fixture_dir, "index.json", NULL);
  if (g_file_test (index_path, G_FILE_TEST_EXISTS))
    {
      g_autoptr (GError) error = NULL;
      fixture_parser = json_parser_new ();
      if (!json_parser_load_from_file (fixture_parser, index_path, &error))
        g_error ("%s: %s", index_path, error->message);
      fixture_index = json_node_get_object (json_parser_get_root (fixture_parser));
    }
  g_test_add_func ("/model/detokenize", test_detokenize);
  g_test_add_func ("/model/repetition-guard", test_repetition_guard);
  g_test_add_func ("/model/preprocess/scale-estimate", test_scale_estimate);
  g_test_add_func ("/model/preprocess/scale-estimate-mle", test_scale_estimate_mle);
  g_test_add_func ("/model/preprocess/formats-dark-background", test_preprocess_formats);
  g_test_add_func ("/model/preprocess/cap", test_preprocess_cap);
  g_test_add_data_func ("/model/reference/tiny", "tiny", test_reference_model);
  g_test_add_data_func ("/model/reference/micro", "micro", test_reference_model);
  g_test_add_func ("/model/pt-equals-safetensors", test_pt_equals_safetensors);
  g_test_add_func ("/model/f16-file-equals-f32", test_f16_file_equals_f32);
  g_test_add_func ("/model/info", test_model_info);
  g_test_add_func ("/model/devices", test_devices);
  g_test_add_func ("/model/beam1-equals-greedy", test_beam1_equals_greedy);
  g_test_add_func ("/model/beam-search", test_beam_search);
  g_test_add_func ("/model/repetition-stops-decode", test_repetition_stops_decode);
  g_test_add_func ("/model/recognize-abort-progress", test_recognize_abort_progress);
  g_test_add_func ("/model/no-allocation-per-token", test_no_allocation_per_token);
  g_test_add_func ("/model/threads-share-context", test_threads_share_context);
  int rc = g_test_run ();
  g_clear_object (&fixture_parser);
  g_free (fixture_dir);
  return rc;
}
