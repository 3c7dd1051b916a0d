/* test-batch.c - multi-image batched greedy decoding (fe_recognize with
 * max_batch > 1, fe_decode_greedy_batch, FE_OP_ATTENTION_ROWS) against the
 * serial path: the same tokens, flags and sizes, the same confidence within
 * float rounding, on the shipped model over committed formula images and
 * variants of them of very different widths; and the odd cases: a batch of
 * one, rows hitting the length limit while others go on, an abort in the
 * middle of a batch, the progress callback, no allocation per token.
 *
 * FE_TEST_BATCH_PNG_DIR=DIR adds every *.png of DIR to the image set (e.g.
 * crops rendered with build/tools/render-crops) for a larger comparison. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fe-cpu.h"
#include "fe-model.h"
#include "fm-png.h"

/* ------------------------------------------------------------------------ */
/* Counting allocations (as tests/model does): the binary's malloc family
 * wraps glibc's, so the engine's calls are counted. Sanitizers replace the
 * malloc family themselves; there the engine's own counter is checked. */

#if defined(__SANITIZE_ADDRESS__)
#define FE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FE_TEST_SANITIZED 1
#endif
#endif

static volatile gint alloc_count;
/* Set: the next malloc fails (once), as when memory runs out there. */
static volatile gint fail_next_malloc;
/* The same for aligned_alloc (the CPU backend's scratch and tensors). */
static volatile gint fail_next_aligned_alloc;

#ifndef FE_TEST_SANITIZED
extern void *__libc_malloc (size_t size);
extern void *__libc_calloc (size_t n, size_t size);
extern void *__libc_realloc (void *p, size_t size);
extern void __libc_free (void *p);
extern void *__libc_memalign (size_t alignment, size_t size);

void *
malloc (size_t size)
{
  g_atomic_int_inc (&alloc_count);
  if (g_atomic_int_compare_and_exchange (&fail_next_malloc, 1, 0))
    return NULL;
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

/* Not counted (the per-token count is of the malloc family, as before),
 * only made to fail on request. */
void *
aligned_alloc (size_t alignment, size_t size)
{
  if (g_atomic_int_compare_and_exchange (&fail_next_aligned_alloc, 1, 0))
    return NULL;
  return __libc_memalign (alignment, size);
}
#endif

/* ------------------------------------------------------------------------ */
/* Images                                                                   */

typedef struct {
  guint8 *data;              /* GRAY8, tight rows */
  int width, height;
  char name[96];
} Gray;

static GPtrArray *images;    /* Gray* */
static FeContext *shipped;

static void
gray_free (gpointer p)
{
  Gray *g = p;
  g_free (g->data);
  g_free (g);
}

static Gray *
gray_from_png (const char *path)
{
  FmPngImage png;
  char err[256];
  if (fm_png_load (path, &png, err, sizeof err) != 0)
    g_error ("%s: %s", path, err);
  Gray *g = g_new0 (Gray, 1);
  g->width = png.width;
  g->height = png.height;
  g->data = g_malloc ((gsize) png.width * png.height);
  int bpp = png.format == FE_PIXEL_GRAY8 ? 1 : png.format == FE_PIXEL_RGB8 ? 3 : 4;
  for (int y = 0; y < png.height; y++)
    for (int x = 0; x < png.width; x++)
      {
        const guint8 *p = png.data + (gsize) y * png.stride + (gsize) x * bpp;
        int v = bpp == 1 ? p[0] : (p[0] + p[1] + p[2]) / 3;
        if (bpp == 4)
          v = 255 - (255 - v) * p[3] / 255; /* transparent = background */
        g->data[(gsize) y * png.width + x] = (guint8) v;
      }
  g_autofree char *base = g_path_get_basename (path);
  g_snprintf (g->name, sizeof g->name, "%s", base);
  fm_png_clear (&png);
  return g;
}

/* Columns [x0, x1) of g. */
static Gray *
gray_columns (const Gray *g, int x0, int x1, const char *tag)
{
  Gray *o = g_new0 (Gray, 1);
  o->width = x1 - x0;
  o->height = g->height;
  o->data = g_malloc ((gsize) o->width * o->height);
  for (int y = 0; y < g->height; y++)
    memcpy (o->data + (gsize) y * o->width, g->data + (gsize) y * g->width + x0, (gsize) o->width);
  g_snprintf (o->name, sizeof o->name, "%s:%s", g->name, tag);
  return o;
}

/* g scaled by num/den (box filter down, nearest up): other glyph sizes. */
static Gray *
gray_scaled (const Gray *g, int num, int den)
{
  Gray *o = g_new0 (Gray, 1);
  o->width = MAX (1, g->width * num / den);
  o->height = MAX (1, g->height * num / den);
  o->data = g_malloc ((gsize) o->width * o->height);
  for (int y = 0; y < o->height; y++)
    for (int x = 0; x < o->width; x++)
      {
        int sx0 = x * den / num, sx1 = MAX (sx0 + 1, (x + 1) * den / num);
        int sy0 = y * den / num, sy1 = MAX (sy0 + 1, (y + 1) * den / num);
        int sum = 0, n = 0;
        for (int sy = sy0; sy < MIN (sy1, g->height); sy++)
          for (int sx = sx0; sx < MIN (sx1, g->width); sx++)
            sum += g->data[(gsize) sy * g->width + sx], n++;
        o->data[(gsize) y * o->width + x] = (guint8) (n ? sum / n : 255);
      }
  g_snprintf (o->name, sizeof o->name, "%s:x%d/%d", g->name, num, den);
  return o;
}

static int
cmp_str_ptr (gconstpointer a, gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

static void
add_dir (const char *dir, int limit)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  if (!d)
    return;
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *n;
  while ((n = g_dir_read_name (d)))
    if (g_str_has_suffix (n, ".png"))
      g_ptr_array_add (names, g_build_filename (dir, n, NULL));
  g_dir_close (d);
  g_ptr_array_sort (names, cmp_str_ptr);
  for (guint i = 0; i < names->len && (limit <= 0 || (int) i < limit); i++)
    g_ptr_array_add (images, gray_from_png (g_ptr_array_index (names, i)));
  g_ptr_array_free (names, TRUE);
}

static void
build_images (void)
{
  images = g_ptr_array_new_with_free_func (gray_free);
  const char *root = g_getenv ("FE_SOURCE_ROOT");
  g_autofree char *smoke = g_build_filename (root ? root : ".", "tests", "smoke", NULL);
  g_autofree char *model = g_build_filename (root ? root : ".", "tests", "model", "data", NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *dirs[] = { smoke, model };
  for (guint k = 0; k < G_N_ELEMENTS (dirs); k++)
    {
      GDir *d = g_dir_open (dirs[k], 0, NULL);
      const char *n;
      while (d && (n = g_dir_read_name (d)))
        if (g_str_has_suffix (n, ".png"))
          g_ptr_array_add (names, g_build_filename (dirs[k], n, NULL));
      if (d)
        g_dir_close (d);
    }
  g_ptr_array_sort (names, cmp_str_ptr);
  guint n_base = names->len;
  for (guint i = 0; i < n_base; i++)
    g_ptr_array_add (images, gray_from_png (g_ptr_array_index (names, i)));
  g_ptr_array_free (names, TRUE);
  /* Variants: left and right parts (other widths and lengths), a narrow
   * sliver, smaller and larger glyphs. */
  for (guint i = 0; i < n_base; i++)
    {
      const Gray *g = g_ptr_array_index (images, i);
#ifdef FE_TEST_SANITIZED
      /* Under ASan+UBSan the model runs ~10x slower: the variants of every
       * third image keep each kind of input while the suite stays in budget
       * (the normal build runs them all). */
      if (i % 3 != 0)
        continue;
#endif
      if (g->width >= 24)
        {
          g_ptr_array_add (images, gray_columns (g, 0, g->width / 2, "left"));
          g_ptr_array_add (images, gray_columns (g, g->width / 3, g->width, "right"));
          g_ptr_array_add (images, gray_columns (g, 0, MAX (8, g->width / 8), "sliver"));
        }
      g_ptr_array_add (images, gray_scaled (g, 3, 4));
      g_ptr_array_add (images, gray_scaled (g, 5, 4));
    }
  const char *extra = g_getenv ("FE_TEST_BATCH_PNG_DIR");
  if (extra && *extra)
    add_dir (extra, 0);
}

static FeImage
fe_image (const Gray *g)
{
  return (FeImage) { .data = g->data, .width = g->width, .height = g->height,
                     .stride = g->width, .format = FE_PIXEL_GRAY8 };
}

static FeImage *
all_fe_images (guint *n)
{
  *n = images->len;
  FeImage *out = g_new0 (FeImage, images->len);
  for (guint i = 0; i < images->len; i++)
    out[i] = fe_image (g_ptr_array_index (images, i));
  return out;
}

static gboolean
have_shipped (void)
{
  if (shipped)
    return TRUE;
  g_test_skip ("data/models/formulate-v1.safetensors is missing");
  return FALSE;
}

/* ------------------------------------------------------------------------ */
/* Comparison                                                               */

static void
assert_same_result (const FeResult *a, const FeResult *b, const char *what)
{
  if (a->n_tokens != b->n_tokens || (a->n_tokens > 0 &&
      memcmp (a->token_ids, b->token_ids, (gsize) a->n_tokens * sizeof (int)) != 0))
    g_error ("%s: tokens differ: serial '%s' (%d), batched '%s' (%d)", what, a->latex,
             a->n_tokens, b->latex, b->n_tokens);
  g_assert_cmpstr (a->latex, ==, b->latex);
  g_assert_cmpint (a->hit_length_limit, ==, b->hit_length_limit);
  g_assert_cmpint (a->repetition_stopped, ==, b->repetition_stopped);
  g_assert_cmpint (a->input_width, ==, b->input_width);
  g_assert_cmpint (a->input_height, ==, b->input_height);
  g_assert_cmpfloat (a->scale, ==, b->scale);
  for (int f = 0; f < FE_CONFIDENCE_N_FEATURES; f++)
    if (fabsf (a->confidence_features[f] - b->confidence_features[f]) > 1e-5f)
      g_error ("%s: confidence feature %s %.9g serial, %.9g batched", what,
               fe_confidence_feature_name (f), a->confidence_features[f],
               b->confidence_features[f]);
  if (fabsf (a->confidence_mean - b->confidence_mean) > 1e-6f ||
      fabsf (a->confidence_min - b->confidence_min) > 1e-6f)
    g_error ("%s: confidence %.9g/%.9g serial, %.9g/%.9g batched", what, a->confidence_mean,
             a->confidence_min, b->confidence_mean, b->confidence_min);
  g_assert_cmpfloat (b->decoder_ms, >=, 0.0);
  g_assert_cmpfloat (b->decoder_cpu_ms, >=, 0.0);
}

static FeResult *
recognize (FeContext *ctx, const FeImage *imgs, guint n, FeRecognizeParams rp, int max_batch,
           fe_status *status)
{
  FeState *st = NULL;
  g_assert_cmpint (fe_state_new (ctx, &st), ==, FE_OK);
  FeResult *res = g_new0 (FeResult, MAX (n, 1));
  rp.max_batch = max_batch;
  fe_status s;
  if (max_batch > 1 && getenv ("FE_TEST_DIRECT"))
    {
      const FeModelInfo *mi = fe_context_model_info (ctx);
      char **vocab = g_new0 (char *, mi->vocab_size);
      for (int i = 0; i < mi->vocab_size; i++)
        vocab[i] = (char *) fe_context_token_text (ctx, i);
      /* no calibration: confidence is confidence_mean on this path */
      s = fe_recognize_batched (fe_state_buffers (st), vocab, mi->vocab_size, NULL, imgs, n,
                                &rp, max_batch, res);
      g_free (vocab);
    }
  else
    s = fe_recognize (st, imgs, n, &rp, res);
  if (status)
    *status = s;
  else if (s != FE_OK)
    g_error ("fe_recognize (max_batch %d): %s", max_batch, fe_last_error ());
  /* a batched call really took the batched path */
  if (max_batch > 1 && n > 1 && s == FE_OK)
    g_assert_nonnull (fe_state_buffers (st)->batch_arena);
  fe_state_free (st);
  return res;
}

static void
free_results (FeResult *r, guint n)
{
  for (guint i = 0; i < n; i++)
    fe_result_clear (&r[i]);
  g_free (r);
}

/* The serial results of the whole image set at the default parameters:
 * made once, the reference of equals-serial and abort-progress (a serial
 * decode does not depend on what the state decoded before). */
static FeResult *serial_default;

static const FeResult *
serial_default_results (void)
{
  if (!serial_default)
    {
      guint n;
      g_autofree FeImage *imgs = all_fe_images (&n);
      serial_default = recognize (shipped, imgs, n, fe_recognize_default_params (), 1, NULL);
    }
  return serial_default;
}

/* Runs images[0..n) (every step-th of them) at each batch size and compares
 * each with its serial result (reference, or a serial run made here);
 * returns how many ended by EOS / the length limit / the repetition guard. */
static void
compare_runs_counted (FeRecognizeParams rp, const int *batches, guint n_batches, guint step,
                      const FeResult *reference, const char *label, int *n_eos, int *n_limit,
                      int *n_repeat)
{
  guint n_all;
  g_autofree FeImage *all = all_fe_images (&n_all);
  g_autofree FeImage *imgs = g_new0 (FeImage, n_all);
  g_autofree guint *index = g_new0 (guint, n_all);
  guint n = 0;
  for (guint i = 0; i < n_all; i += step)
    {
      index[n] = i;
      imgs[n++] = all[i];
    }
  FeResult *own = reference ? NULL : recognize (shipped, imgs, n, rp, 1, NULL);
  int limit_hits = 0, eos = 0, repeats = 0;
  for (guint i = 0; i < n; i++)
    {
      const FeResult *s = reference ? &reference[index[i]] : &own[i];
      limit_hits += s->hit_length_limit;
      repeats += s->repetition_stopped;
      eos += !s->hit_length_limit && !s->repetition_stopped;
    }
  for (guint b = 0; b < n_batches; b++)
    {
      FeResult *batched = recognize (shipped, imgs, n, rp, batches[b], NULL);
      for (guint i = 0; i < n; i++)
        {
          char what[160];
          const Gray *g = g_ptr_array_index (images, index[i]);
          g_snprintf (what, sizeof what, "%s, max_batch %d, image %u (%s)", label, batches[b],
                      index[i], g->name);
          assert_same_result (reference ? &reference[index[i]] : &own[i], &batched[i], what);
        }
      free_results (batched, n);
    }
  g_test_message ("%s: %u images identical (%d ended by EOS, %d by the length limit, %d by "
                  "the repetition guard)", label, n, eos, limit_hits, repeats);
  if (own)
    free_results (own, n);
  if (n_eos)
    *n_eos = eos;
  if (n_limit)
    *n_limit = limit_hits;
  if (n_repeat)
    *n_repeat = repeats;
}

static void
compare_runs (FeRecognizeParams rp, const int *batches, guint n_batches, const char *label)
{
  compare_runs_counted (rp, batches, n_batches, 1, NULL, label, NULL, NULL, NULL);
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */

/* The op: each row over its own span gives what fe_attention gives for
 * that row alone (the serial cross-attention), bit for bit. */
static void
test_attention_rows_op (void)
{
  FeDevice *cpu = fe_cpu_device ();
  const int R = 5, D = 64, heads = 4, N = 700;
  const int spans_host[] = { 0, 37, 37, 600, 637, 1, 638, 62, 0, 700 };
  FeBuffer *buf = NULL;
  g_assert_cmpint (fe_buffer_new (cpu, (gsize) (4 * R * D + 2 * N * D + 2 * R) * 4 + 4096, &buf), ==, FE_OK);
  FeTensor q, k, v, y, y1, spans;
  int64_t sq[3] = { R, 1, D }, skv[2] = { N, D }, ss[2] = { R, 2 };
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 3, sq, "q", &q), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 3, sq, "y", &y), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 3, sq, "y1", &y1), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 2, skv, "k", &k), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 2, skv, "v", &v), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_I32, 2, ss, "spans", &spans), ==, FE_OK);
  GRand *rand = g_rand_new_with_seed (7);
  float *qd = fe_tensor_data (&q), *kd = fe_tensor_data (&k), *vd = fe_tensor_data (&v);
  for (int i = 0; i < R * D; i++)
    qd[i] = (float) g_rand_double_range (rand, -2, 2);
  for (int i = 0; i < N * D; i++)
    {
      kd[i] = (float) g_rand_double_range (rand, -2, 2);
      vd[i] = (float) g_rand_double_range (rand, -1, 1);
    }
  g_rand_free (rand);
  memcpy (fe_tensor_data (&spans), spans_host, sizeof spans_host);
  g_assert_cmpint (fe_attention_rows (&y, &q, &k, &v, &spans, heads, 700), ==, FE_OK);
  for (int r = 0; r < R; r++)
    {
      FeTensor qr = q, yr = y1, kr = k, vr = v;
      qr.shape[0] = yr.shape[0] = 1;
      qr.offset += (gsize) r * D * 4;
      yr.offset += (gsize) r * D * 4;
      kr.ndim = vr.ndim = 3;
      kr.shape[0] = vr.shape[0] = 1;
      kr.shape[1] = vr.shape[1] = spans_host[2 * r + 1];
      kr.shape[2] = vr.shape[2] = D;
      kr.offset += (gsize) spans_host[2 * r] * D * 4;
      vr.offset += (gsize) spans_host[2 * r] * D * 4;
      g_assert_cmpint (fe_attention (&yr, &qr, &kr, &vr, heads, spans_host[2 * r + 1], false, 0), ==, FE_OK);
    }
  g_assert_cmpmem (fe_tensor_data (&y), R * D * 4, fe_tensor_data (&y1), R * D * 4);
  /* a span past the keys, or longer than max_len, is refused */
  int32_t *sp = fe_tensor_data (&spans);
  sp[2 * 4] = 1;
  g_assert_cmpint (fe_attention_rows (&y, &q, &k, &v, &spans, heads, 700), ==, FE_ERR_INVALID_ARGUMENT);
  sp[2 * 4] = 0;
  g_assert_cmpint (fe_attention_rows (&y, &q, &k, &v, &spans, heads, 600), ==, FE_ERR_INVALID_ARGUMENT);
  /* shapes: spans of the wrong size, k not 2-D */
  FeTensor bad = spans;
  bad.shape[0] = R - 1;
  g_assert_cmpint (fe_attention_rows (&y, &q, &k, &v, &bad, heads, 700), ==, FE_ERR_INVALID_ARGUMENT);
  g_assert_cmpint (fe_attention_rows (&y, &q, &q, &v, &spans, heads, 700), ==, FE_ERR_INVALID_ARGUMENT);
  fe_buffer_free (buf);
}

static void
test_equals_serial (void)
{
  if (!have_shipped ())
    return;
  FeRecognizeParams rp = fe_recognize_default_params ();
  /* 8 (the default) and 32 over every image: every width and length in
   * full and in mixed groups. 3 and 2, fewer rows than an image's 3
   * candidates (which then decode in chunks), over every third image: the
   * chunking does not depend on the image, and the full set at every size
   * cost most of CI's time for no other path. */
  const FeResult *reference = serial_default_results ();
  const int wide[] = { 8, 32 }, narrow[] = { 3, 2 };
  compare_runs_counted (rp, wide, G_N_ELEMENTS (wide), 1, reference, "default params", NULL,
                        NULL, NULL);
  compare_runs_counted (rp, narrow, G_N_ELEMENTS (narrow), 3, reference,
                        "default params, every third image", NULL, NULL, NULL);
  /* one candidate scale per image: rows = images */
  rp.scale_candidates = 1;
  const int b2[] = { 5 };
  compare_runs (rp, b2, 1, "scale_candidates 1");
}

/* A short length limit: rows hit it while others end with EOS before it;
 * the repetition guard likewise. */
static void
test_length_limit (void)
{
  if (!have_shipped ())
    return;
  FeRecognizeParams rp = fe_recognize_default_params ();
  /* the limits are per row whatever its scale: one candidate per image keeps
   * the run a third as long, with rows of every image ending each way */
  rp.scale_candidates = 1;
  rp.max_tokens = 14;
  const int batches[] = { 8 };
  int eos, limit, repeat;
  compare_runs_counted (rp, batches, 1, 1, NULL, "max_tokens 14", &eos, &limit, &repeat);
  g_assert_cmpint (eos, >, 0);
  g_assert_cmpint (limit, >, 0);
  /* three candidates per image in batches of three rows (every third image,
   * to keep the time): a row at the limit beside its image's other
   * candidates, the best of an image's rows picked among ended ones */
  rp.scale_candidates = 3;
  const int batch3[] = { 3 };
  compare_runs_counted (rp, batch3, 1, 3, NULL, "max_tokens 14, 3 candidates", &eos, &limit,
                        &repeat);
  g_assert_cmpint (limit, >, 0);
  /* the repetition guard at its tightest: rows end by it among rows that
   * end by EOS */
  rp = fe_recognize_default_params ();
  rp.scale_candidates = 1;
  rp.max_repeats = 1;
  compare_runs_counted (rp, batches, 1, 1, NULL, "max_repeats 1", &eos, &limit, &repeat);
  g_assert_cmpint (eos, >, 0);
  g_assert_cmpint (repeat, >, 0);
}

/* One image alone, and images of very different widths in one batch. */
static void
test_odd_batches (void)
{
  if (!have_shipped ())
    return;
  FeRecognizeParams rp = fe_recognize_default_params ();
  guint n;
  g_autofree FeImage *all = all_fe_images (&n);
  /* the narrowest and the widest input */
  guint lo = 0, hi = 0;
  for (guint i = 1; i < n; i++)
    {
      if (all[i].width < all[lo].width)
        lo = i;
      if (all[i].width > all[hi].width)
        hi = i;
    }
  FeImage pair[3] = { all[hi], all[lo], all[hi] };
  FeResult *s = recognize (shipped, pair, 3, rp, 1, NULL);
  FeResult *b = recognize (shipped, pair, 3, rp, 8, NULL);
  for (int i = 0; i < 3; i++)
    assert_same_result (&s[i], &b[i], "widest/narrowest");
  g_assert_cmpstr (b[0].latex, ==, b[2].latex);
  free_results (s, 3);
  free_results (b, 3);
  /* one image, batched (its candidate scales are the rows) */
  s = recognize (shipped, &all[0], 1, rp, 1, NULL);
  b = recognize (shipped, &all[0], 1, rp, 8, NULL);
  assert_same_result (&s[0], &b[0], "one image");
  free_results (s, 1);
  free_results (b, 1);
  /* zero images */
  b = recognize (shipped, NULL, 0, rp, 8, NULL);
  free_results (b, 0);
}

typedef struct {
  int polls, abort_after;
  int calls, last_done, total;
  gboolean ordered;
} Callbacks;

static bool
abort_cb (void *user_data)
{
  Callbacks *c = user_data;
  c->polls++;
  return c->abort_after >= 0 && c->polls > c->abort_after;
}

static void
progress_cb (int done, int total, void *user_data)
{
  Callbacks *c = user_data;
  c->calls++;
  c->ordered = c->ordered && done == c->last_done + 1;
  c->last_done = done;
  c->total = total;
}

/* The progress callback counts 1..n; an abort in the middle of a batch
 * leaves every finished result valid (as the serial one) and the rest zeroed. */
static void
test_abort_progress (void)
{
  if (!have_shipped ())
    return;
  guint n;
  g_autofree FeImage *imgs = all_fe_images (&n);
  n = MIN (n, 10); /* still two groups of 8 rows and more */
  FeRecognizeParams rp = fe_recognize_default_params ();
  const FeResult *serial = serial_default_results ();

  Callbacks cb = { .abort_after = -1, .ordered = TRUE };
  rp.progress_callback = progress_cb;
  rp.progress_user_data = &cb;
  rp.abort_callback = abort_cb;
  rp.abort_user_data = &cb;
  FeResult *b = recognize (shipped, imgs, n, rp, 8, NULL);
  g_assert_cmpint (cb.calls, ==, (int) n);
  g_assert_true (cb.ordered);
  g_assert_cmpint (cb.total, ==, (int) n);
  g_assert_cmpint (cb.last_done, ==, (int) n);
  free_results (b, n);
  int full_polls = cb.polls;

  /* abort at several points: during the first group's decode, later */
  int points[] = { 12, full_polls / 3, full_polls / 2, full_polls - 3 };
  for (guint k = 0; k < G_N_ELEMENTS (points); k++)
    {
      cb = (Callbacks) { .abort_after = points[k], .ordered = TRUE };
      fe_status status;
      b = recognize (shipped, imgs, n, rp, 8, &status);
      g_assert_cmpint (status, ==, FE_ERR_ABORTED);
      g_assert_true (cb.ordered);
      int filled = 0;
      for (guint i = 0; i < n; i++)
        if (b[i].latex)
          {
            filled++;
            assert_same_result (&serial[i], &b[i], "finished before the abort");
          }
        else
          {
            g_assert_cmpint (b[i].n_tokens, ==, 0);
            g_assert_null (b[i].token_ids);
          }
      g_test_message ("abort after %d of %d polls: %d of %u finished", points[k], full_polls,
                      filled, n);
      g_assert_cmpint (filled, ==, cb.calls);
      g_assert_cmpint (filled, <, (int) n);
      free_results (b, n);
    }
}

/* Memory running out once the tokens are known (the LaTeX text's
 * allocation, the first after the last abort poll: a warm decode allocates
 * nothing per token) reaches the caller as FE_ERR_OUT_OF_MEMORY with a
 * message, serial and batched (it was FE_ERR_INTERNAL, no message). */
typedef struct {
  int polls, fail_at;
} FailPoll;

static bool
fail_poll_cb (void *user_data)
{
  FailPoll *f = user_data;
  if (++f->polls == f->fail_at)
    g_atomic_int_set (&fail_next_malloc, 1);
  return false;
}

static void
test_out_of_memory_status (void)
{
#ifdef FE_TEST_SANITIZED
  g_test_skip ("the sanitizers own malloc: no failure to inject");
#else
  if (!have_shipped ())
    return;
  guint n;
  g_autofree FeImage *imgs = all_fe_images (&n);
  n = MIN (n, 2);
  const int batches[] = { 1, 8 };
  for (guint b = 0; b < G_N_ELEMENTS (batches); b++)
    {
      FeRecognizeParams rp = fe_recognize_default_params ();
      rp.scale_candidates = 1;
      rp.max_batch = batches[b];
      rp.abort_callback = fail_poll_cb;
      FailPoll f = { 0, -1 };
      rp.abort_user_data = &f;
      FeState *st = NULL;
      g_assert_cmpint (fe_state_new (shipped, &st), ==, FE_OK);
      FeResult res[2] = { { 0 } };
      g_assert_cmpint (fe_recognize (st, imgs, n, &rp, res), ==, FE_OK); /* warm, counted */
      for (guint i = 0; i < n; i++)
        fe_result_clear (&res[i]);
      f = (FailPoll) { 0, f.polls };
      fe_clear_error ();
      fe_status s = fe_recognize (st, imgs, n, &rp, res);
      gboolean armed = g_atomic_int_get (&fail_next_malloc);
      g_atomic_int_set (&fail_next_malloc, 0);
      g_assert_false (armed); /* the failure was injected */
      g_test_message ("max_batch %d: %s: %s", batches[b], fe_status_name (s), fe_last_error ());
      g_assert_cmpint (s, ==, FE_ERR_OUT_OF_MEMORY);
      g_assert_nonnull (strstr (fe_last_error (), "out of memory"));
      for (guint i = 0; i < n; i++)
        fe_result_clear (&res[i]);
      fe_state_free (st);
    }
#endif
}

/* A decode-step matmul with 16-bit weights reserves its scratch for the
 * widened weight rows before any of its tasks starts, so memory running out
 * there is the call's FE_ERR_OUT_OF_MEMORY. It was FE_OK: the task fell back
 * to summing element by element, another order than the serial run's, so a
 * batch could silently differ from it. Run in a thread of its own, which has
 * no scratch yet. */
typedef struct {
  FeTensor *y, *x, *w;
  fe_status first, second;
  gboolean armed;
  char message[256];
} NoScratch;

static gpointer
matmul_no_scratch_thread (gpointer data)
{
  NoScratch *t = data;
  g_atomic_int_set (&fail_next_aligned_alloc, 1);
  t->first = fe_matmul (t->y, t->x, t->w, NULL, false);
  t->armed = g_atomic_int_get (&fail_next_aligned_alloc);
  g_atomic_int_set (&fail_next_aligned_alloc, 0);
  /* the message is per thread */
  g_strlcpy (t->message, t->first != FE_OK ? fe_last_error () : "", sizeof t->message);
  g_test_message ("first matmul: %s", t->message);
  t->second = fe_matmul (t->y, t->x, t->w, NULL, false);
  return NULL;
}

static void
test_matmul_scratch_status (void)
{
#ifdef FE_TEST_SANITIZED
  g_test_skip ("the sanitizers own malloc: no failure to inject");
#else
  FeBuffer *buf = NULL;
  g_assert_cmpint (fe_buffer_new (fe_cpu_device (), 1 << 16, &buf), ==, FE_OK);
  const int m = 2, n = 8, k = 16;
  int64_t xs[2] = { m, k }, ws[2] = { n, k }, ys[2] = { m, n };
  FeTensor x, w, y;
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 2, xs, "x", &x), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F16, 2, ws, "w", &w), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 2, ys, "y", &y), ==, FE_OK);
  float *xd = fe_tensor_data (&x);
  uint16_t *wd = fe_tensor_data (&w);
  for (int i = 0; i < m * k; i++)
    xd[i] = (float) (i % 7) - 3.0f;
  for (int i = 0; i < n * k; i++)
    wd[i] = 0x3c00; /* 1.0 in f16 */
  NoScratch t = { &y, &x, &w, FE_OK, FE_OK, TRUE, "" };
  g_thread_join (g_thread_new ("no-scratch", matmul_no_scratch_thread, &t));
  g_assert_false (t.armed); /* the failure was injected */
  g_assert_cmpint (t.first, ==, FE_ERR_OUT_OF_MEMORY);
  g_assert_nonnull (strstr (t.message, "CPU scratch: cannot allocate 1 KiB"));
  g_assert_cmpint (t.second, ==, FE_OK);
  const float *yd = fe_tensor_data (&y);
  for (int r = 0; r < m; r++)
    {
      float want = 0.0f;
      for (int i = 0; i < k; i++)
        want += xd[r * k + i];
      for (int c = 0; c < n; c++)
        g_assert_cmpfloat (yd[r * n + c], ==, want);
    }
  fe_buffer_free (buf);
#endif
}

/* Tokens the engine decoded that do not detokenize: an id outside the
 * vocabulary is the engine's fault (FE_ERR_INTERNAL "detokenize: ..."), not
 * an invalid argument of fe_recognize's caller, which is what it was
 * reported as; out of memory stays FE_ERR_OUT_OF_MEMORY. */
static void
test_detokenize_decoded (void)
{
  const char *vocab_text[] = { "<pad>", "<bos>", "<eos>", "\\alpha", "x" };
  char *const *vocab = (char *const *) vocab_text;
  FeModelConfig cfg = { .pad_id = 0, .bos_id = 1, .eos_id = 2, .unk_id = 0 };
  int good[] = { 1, 3, 4, 2 }, bad[] = { 3, 5 };
  char *latex = NULL;
  g_assert_cmpint (fe_detokenize_decoded (vocab, 5, &cfg, good, 4, &latex), ==, FE_OK);
  g_assert_cmpstr (latex, ==, "\\alpha x");
  free (latex);
  g_assert_cmpint (fe_detokenize_decoded (vocab, 5, &cfg, bad, 2, &latex), ==, FE_ERR_INTERNAL);
  g_assert_null (latex);
  g_assert_true (g_str_has_prefix (fe_last_error (), "detokenize: "));
  g_assert_nonnull (strstr (fe_last_error (), "token id 5 at index 1"));
#ifndef FE_TEST_SANITIZED
  g_atomic_int_set (&fail_next_malloc, 1);
  fe_status st = fe_detokenize_decoded (vocab, 5, &cfg, good, 4, &latex);
  gboolean armed = g_atomic_int_get (&fail_next_malloc);
  g_atomic_int_set (&fail_next_malloc, 0);
  g_assert_false (armed);
  g_assert_cmpint (st, ==, FE_ERR_OUT_OF_MEMORY);
  g_assert_null (latex);
  g_assert_nonnull (strstr (fe_last_error (), "out of memory"));
#endif
}

/* fe_decode_greedy_batch allocates nothing per token: after a warm-up, a
 * decode of many tokens per row makes exactly as many allocations (none) as
 * a decode of one. */
static void
test_no_allocation_per_token (void)
{
  if (!have_shipped ())
    return;
  FeState *st = NULL;
  g_assert_cmpint (fe_state_new (shipped, &st), ==, FE_OK);
  FeStateBuffers *sb = fe_state_buffers (st);
  const FeModelConfig *c = &sb->model->cfg;
  const int rows = 3;
  float *pix[3];
  int h[3], w[3];
  int64_t tokens = 0;
  for (int r = 0; r < rows; r++)
    {
      FeImage img = fe_image (g_ptr_array_index (images, (guint) r));
      float scale;
      g_assert_cmpint (fe_preprocess (shipped, &img, &pix[r], &h[r], &w[r], &scale), ==, FE_OK);
      tokens += (int64_t) (h[r] / c->height_stride) * (w[r] / c->width_stride);
    }
  g_assert_cmpint (fe_model_batch_reserve (sb, rows, tokens), ==, FE_OK);
  for (int r = 0; r < rows; r++)
    {
      g_assert_cmpint (fe_model_encode (sb, pix[r], h[r], w[r]), ==, FE_OK);
      g_assert_cmpint (fe_model_batch_add (sb, r), ==, FE_OK);
    }
  int32_t spans[6];
  memcpy (spans, sb->host_spans, sizeof spans);
  int *toks = g_new (int, (gsize) rows * c->max_tokens);
  FeDecodeOutput out[3];
  FeDecodeOptions opt = { .beam_width = 1, .max_repeats = 4 };
  for (int pass = 0; pass < 3; pass++)
    {
      opt.max_tokens = pass == 1 ? 1 : 0;
      for (int r = 0; r < rows; r++)
        out[r] = (FeDecodeOutput) { .tokens = toks + r * c->max_tokens };
      memcpy (sb->host_spans, spans, sizeof spans); /* the decode permutes them */
      unsigned long allocs_before = sb->n_decoder_allocs;
      gint a0 = g_atomic_int_get (&alloc_count);
      g_assert_cmpint (fe_decode_greedy_batch (sb, &opt, out, rows), ==, FE_OK);
      gint allocs = g_atomic_int_get (&alloc_count) - a0;
      int n_tok = out[0].n_tokens + out[1].n_tokens + out[2].n_tokens;
      g_test_message ("pass %d: %d tokens in all, %d allocations", pass, n_tok, allocs);
      if (pass == 0)
        continue; /* warm-up: scratch buffers of the CPU ops */
      if (pass == 2)
        g_assert_cmpint (n_tok, >, 20);
      g_assert_cmpint (allocs, ==, 0);
      g_assert_cmpuint (sb->n_decoder_allocs, ==, allocs_before);
    }
  for (int r = 0; r < rows; r++)
    free (pix[r]);
  g_free (toks);
  fe_state_free (st);
}

/* A fresh CPU state makes its decoder rows once, for the default batch
 * (fe_state_new): not for 1 row and again for the batch, an allocation and
 * its first touches more at load. The batch needs no regrowing after. */
static void
test_state_rows_once (void)
{
  if (!have_shipped ())
    return;
  g_unsetenv ("FE_MAX_BATCH");
  FeState *st = NULL;
  g_assert_cmpint (fe_state_new (shipped, &st), ==, FE_OK);
  FeStateBuffers *sb = fe_state_buffers (st);
  FeRecognizeParams rp = fe_recognize_default_params ();
  int batch = fe_recognize_batch_size (sb->model, &rp);
  g_assert_cmpint (batch, >, 1);
  g_assert_cmpint (sb->beam_capacity, ==, batch);
  g_assert_cmpuint (sb->n_decoder_allocs, ==, 1);
  g_assert_cmpint (fe_state_buffers_reserve_beams (sb, batch), ==, FE_OK);
  g_assert_cmpuint (sb->n_decoder_allocs, ==, 1);
  fe_state_free (st);
}

/* A batch group sizes the encoder's buffers once, for its largest crop,
 * before encoding: four crops each wider than the one before (a page's
 * formulas come in any order) grew them four times, each on fresh pages.
 * The capacity is the largest crop's, no more. */
static void
test_group_encoder_once (void)
{
  if (!have_shipped ())
    return;
  static const int widths[] = { 120, 300, 600, 1000 };
  enum { N = G_N_ELEMENTS (widths), H = 40 };
  guint8 *pix[N];
  FeImage img[N];
  FeResult res[N];
  int64_t most = 0;
  FeState *st = NULL;
  g_unsetenv ("FE_MAX_BATCH");
  g_assert_cmpint (fe_state_new (shipped, &st), ==, FE_OK);
  FeStateBuffers *sb = fe_state_buffers (st);
  const FeModelConfig *c = &sb->model->cfg;
  for (int i = 0; i < N; i++)
    {
      /* a text line's ink: strokes 6 px apart along the crop */
      pix[i] = g_malloc ((gsize) widths[i] * H);
      memset (pix[i], 255, (gsize) widths[i] * H);
      for (int x = 4; x < widths[i] - 4; x++)
        for (int y = 10; y < 30; y++)
          if (x % 6 < 2 || y == 20)
            pix[i][y * widths[i] + x] = 0;
      img[i] = (FeImage) { .data = pix[i], .width = widths[i], .height = H,
                           .format = FE_PIXEL_GRAY8, .em_px_hint = 20.0f };
      float *px, scale;
      int h, w;
      g_assert_cmpint (fe_preprocess (shipped, &img[i], &px, &h, &w, &scale), ==, FE_OK);
      free (px);
      most = MAX (most, (int64_t) (h / c->height_stride) * (w / c->width_stride));
    }
  g_assert_cmpint (most, >, sb->enc_token_capacity); /* the warm-up's crop is smaller */
  unsigned long before = sb->n_encoder_allocs;
  g_assert_cmpint (fe_recognize (st, img, N, NULL, res), ==, FE_OK);
  g_assert_cmpuint (sb->n_encoder_allocs, ==, before + 1);
  g_assert_cmpint (sb->enc_token_capacity, ==, most);
  for (int i = 0; i < N; i++)
    {
      g_assert_nonnull (res[i].latex);
      fe_result_clear (&res[i]);
    }
  /* the same crops again: nothing grows */
  g_assert_cmpint (fe_recognize (st, img, N, NULL, res), ==, FE_OK);
  g_assert_cmpuint (sb->n_encoder_allocs, ==, before + 1);
  for (int i = 0; i < N; i++)
    {
      fe_result_clear (&res[i]);
      g_free (pix[i]);
    }
  fe_state_free (st);
}

/* The batch size the engine picks: serial for beams and max_batch 1, the
 * CPU's exact-row bound at most, the environment's FE_MAX_BATCH for 0. */
static void
test_batch_size (void)
{
  if (!have_shipped ())
    return;
  FeState *st = NULL;
  g_assert_cmpint (fe_state_new (shipped, &st), ==, FE_OK);
  FeStateBuffers *sb = fe_state_buffers (st);
  int exact = 0;
  g_assert_true (fe_model_batch_supported (sb->model, &exact));
  g_assert_cmpint (exact, >=, 4);
  FeRecognizeParams rp = fe_recognize_default_params ();
  g_assert_cmpint (rp.max_batch, ==, 0);
  g_unsetenv ("FE_MAX_BATCH");
  g_assert_cmpint (fe_recognize_batch_size (sb->model, &rp), ==, MIN (FE_DEFAULT_MAX_BATCH, exact));
  g_setenv ("FE_MAX_BATCH", "3", TRUE);
  g_assert_cmpint (fe_recognize_batch_size (sb->model, &rp), ==, 3);
  g_setenv ("FE_MAX_BATCH", "junk", TRUE);
  g_assert_cmpint (fe_recognize_batch_size (sb->model, &rp), ==, MIN (FE_DEFAULT_MAX_BATCH, exact));
  g_unsetenv ("FE_MAX_BATCH");
  rp.max_batch = 1000;
  g_assert_cmpint (fe_recognize_batch_size (sb->model, &rp), ==, MIN (FE_MAX_BEAM, exact));
  rp.max_batch = 1;
  g_assert_cmpint (fe_recognize_batch_size (sb->model, &rp), ==, 1);
  rp.max_batch = 8;
  rp.beam_width = 2;
  g_assert_cmpint (fe_recognize_batch_size (sb->model, &rp), ==, 1);
  fe_state_free (st);
  /* a negative max_batch is refused */
  rp = fe_recognize_default_params ();
  rp.max_batch = -1;
  g_assert_cmpint (fe_state_new (shipped, &st), ==, FE_OK);
  FeImage img = fe_image (g_ptr_array_index (images, 0));
  FeResult res;
  g_assert_cmpint (fe_recognize (st, &img, 1, &rp, &res), ==, FE_ERR_INVALID_ARGUMENT);
  fe_state_free (st);
}

/* A device whose backend lacks FE_OP_ATTENTION_ROWS (an older CUDA module):
 * the CPU's kernels under another name, without that op. fe_recognize then
 * decodes one image at a time. */
static bool
no_rows_supports_op (FeDevice *dev, const FeOpDesc *op)
{
  return op->op != FE_OP_ATTENTION_ROWS;
}

static FeDevice *
no_rows_device (void)
{
  static FeBackend backend;
  static FeDevice device;
  backend = *fe_cpu_device ()->backend;
  backend.name = "norows";
  backend.supports_op = no_rows_supports_op;
  device = (FeDevice) { .backend = &backend, .index = 0, .id = "norows:0" };
  return &device;
}

/* That device refuses the op naming itself and the operands: the op has no
 * weights, so none of their dtypes is to blame (the message said "cannot
 * run it with f32 weights", the keys' dtype). */
static void
test_unsupported_op_message (void)
{
  FeBuffer *buf = NULL;
  g_assert_cmpint (fe_buffer_new (no_rows_device (), 4096, &buf), ==, FE_OK);
  memset (buf->data, 0, buf->size);
  FeTensor q, k, v, y, spans;
  int64_t sq[3] = { 1, 1, 8 }, skv[2] = { 4, 8 }, ss[2] = { 1, 2 };
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 3, sq, "q", &q), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 3, sq, "y", &y), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 2, skv, "k", &k), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 2, skv, "v", &v), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_I32, 2, ss, "spans", &spans), ==, FE_OK);
  const int32_t sp[2] = { 0, 4 };
  memcpy (fe_tensor_data (&spans), sp, sizeof sp);
  g_assert_cmpint (fe_attention_rows (&y, &q, &k, &v, &spans, 2, 4), ==, FE_ERR_UNSUPPORTED);
  g_assert_cmpstr (fe_last_error (), ==,
                   "fe_attention_rows: device norows:0 has no kernel for it "
                   "(f32 output; f32, f32, f32, i32 inputs)");
  /* an op it has runs */
  g_assert_cmpint (fe_attention (&y, &q, &q, &q, 2, 1, false, 0), ==, FE_OK);
  fe_buffer_free (buf);
}

static void
test_fallback_without_op (void)
{
  const char *root = g_getenv ("FE_SOURCE_ROOT");
  g_autofree char *path = g_build_filename (root ? root : ".", "data", "models",
                                            "formulate-v1.safetensors", NULL);
  if (!have_shipped ())
    return;
  FeDevice *device = no_rows_device ();
  FeWeightFile *wf = NULL;
  g_assert_cmpint (fe_weights_open (path, NULL, &wf), ==, FE_OK);
  FeModel model;
  g_assert_cmpint (fe_model_load (&model, wf, device), ==, FE_OK);
  int exact = -1;
  g_assert_false (fe_model_batch_supported (&model, &exact));
  FeRecognizeParams rp = fe_recognize_default_params ();
  rp.max_batch = 8;
  g_assert_cmpint (fe_recognize_batch_size (&model, &rp), ==, 1);
  /* the same model on the CPU batches, up to the rows the CPU computes
   * exactly (fe_cpu_matmul_exact_rows: 32 with AVX2 or AVX-512, 4 with the
   * portable loops) */
  FeState *st = NULL;
  g_assert_cmpint (fe_state_new (shipped, &st), ==, FE_OK);
  const FeModel *on_cpu = fe_state_buffers (st)->model;
  g_assert_true (fe_model_batch_supported (on_cpu, &exact));
  g_assert_cmpint (fe_recognize_batch_size (on_cpu, &rp), ==, MIN (8, exact));
  fe_state_free (st);
  fe_model_free (&model);
  fe_weights_close (wf);
}

/* ------------------------------------------------------------------------ */
/* On a GPU (skipped without one: the CUDA module's ATTENTION_ROWS has not   */
/* run here, docs/cuda.md)                                                  */

static FeDevice *gpu;
static char gpu_skip[256] = "no CUDA device";

static void
find_gpu (void)
{
  FeDeviceInfo devs[16];
  size_t n = MIN (fe_devices_list (devs, G_N_ELEMENTS (devs)), G_N_ELEMENTS (devs));
  for (size_t i = 0; i < n && !gpu; i++)
    {
      if (devs[i].kind != FE_DEVICE_CUDA)
        continue;
      if (!devs[i].available)
        g_snprintf (gpu_skip, sizeof gpu_skip, "no CUDA device: %s", devs[i].unavailable_reason);
      else if (fe_device_open (devs[i].id, &gpu) != FE_OK)
        {
          g_snprintf (gpu_skip, sizeof gpu_skip, "no CUDA device: %s", fe_last_error ());
          gpu = NULL;
        }
    }
  fe_clear_error ();
}

/* The op on the GPU against the CPU: f32 maths in another order (NMSE 1e-10,
 * as tests/gpu), and a span past the keys clamped rather than read. */
static void
test_gpu_attention_rows (void)
{
  if (!gpu)
    {
      g_test_skip (gpu_skip);
      return;
    }
  const int R = 6, D = 128, heads = 4, N = 1500;
  int32_t spans[] = { 0, 20, 20, 1200, 1220, 1, 1221, 279, 0, 1500, 3, 5 };
  int64_t sq[3] = { R, 1, D }, skv[2] = { N, D }, ss[2] = { R, 2 };
  FeDevice *devs[2] = { fe_cpu_device (), gpu };
  FeBuffer *buf[2];
  FeTensor q[2], k[2], v[2], y[2], sp[2];
  gsize nq = (gsize) R * D, nkv = (gsize) N * D;
  float *hq = g_new (float, nq), *hk = g_new (float, nkv), *hv = g_new (float, nkv);
  float *out[2] = { g_new (float, nq), g_new (float, nq) };
  GRand *rand = g_rand_new_with_seed (3);
  for (gsize i = 0; i < nq; i++)
    hq[i] = (float) g_rand_double_range (rand, -2, 2);
  for (gsize i = 0; i < nkv; i++)
    {
      hk[i] = (float) g_rand_double_range (rand, -2, 2);
      hv[i] = (float) g_rand_double_range (rand, -1, 1);
    }
  g_rand_free (rand);
  for (int d = 0; d < 2; d++)
    {
      g_assert_cmpint (fe_buffer_new (devs[d], (2 * nq + 2 * nkv + 2 * R) * 4 + 4096, &buf[d]), ==, FE_OK);
      g_assert_cmpint (fe_buffer_tensor (buf[d], FE_DTYPE_F32, 3, sq, "q", &q[d]), ==, FE_OK);
      g_assert_cmpint (fe_buffer_tensor (buf[d], FE_DTYPE_F32, 3, sq, "y", &y[d]), ==, FE_OK);
      g_assert_cmpint (fe_buffer_tensor (buf[d], FE_DTYPE_F32, 2, skv, "k", &k[d]), ==, FE_OK);
      g_assert_cmpint (fe_buffer_tensor (buf[d], FE_DTYPE_F32, 2, skv, "v", &v[d]), ==, FE_OK);
      g_assert_cmpint (fe_buffer_tensor (buf[d], FE_DTYPE_I32, 2, ss, "spans", &sp[d]), ==, FE_OK);
      g_assert_cmpint (fe_tensor_upload (&q[d], hq, nq * 4), ==, FE_OK);
      g_assert_cmpint (fe_tensor_upload (&k[d], hk, nkv * 4), ==, FE_OK);
      g_assert_cmpint (fe_tensor_upload (&v[d], hv, nkv * 4), ==, FE_OK);
      g_assert_cmpint (fe_tensor_upload (&sp[d], spans, sizeof spans), ==, FE_OK);
      g_assert_cmpint (fe_attention_rows (&y[d], &q[d], &k[d], &v[d], &sp[d], heads, N), ==, FE_OK);
      g_assert_cmpint (fe_tensor_download (&y[d], out[d], nq * 4), ==, FE_OK);
    }
  double num = 0, den = 0;
  for (gsize i = 0; i < nq; i++)
    {
      num += ((double) out[1][i] - out[0][i]) * ((double) out[1][i] - out[0][i]);
      den += (double) out[0][i] * out[0][i];
    }
  g_test_message ("ATTENTION_ROWS on %s: NMSE %.3g", gpu->id, num / den);
  g_assert_cmpfloat (num / den, <, 1e-10);
  /* a span past the keys: clamped to them on the GPU, no fault */
  spans[2 * 5] = N - 2;
  spans[2 * 5 + 1] = 50;
  g_assert_cmpint (fe_tensor_upload (&sp[1], spans, sizeof spans), ==, FE_OK);
  g_assert_cmpint (fe_attention_rows (&y[1], &q[1], &k[1], &v[1], &sp[1], heads, N), ==, FE_OK);
  g_assert_cmpint (fe_tensor_download (&y[1], out[1], nq * 4), ==, FE_OK);
  for (int d = 0; d < 2; d++)
    {
      fe_buffer_free (buf[d]);
      g_free (out[d]);
    }
  g_free (hq);
  g_free (hk);
  g_free (hv);
}

/* The shipped model on the GPU, serial against batched. The rows' GEMMs may
 * round differently from one row's (cuBLAS picks by shape), so near ties may
 * decode differently: nearly all, not all, must agree. */
static void
test_gpu_recognize (void)
{
  if (!gpu || !shipped)
    {
      g_test_skip (gpu ? "data/models/formulate-v1.safetensors is missing" : gpu_skip);
      return;
    }
  const char *root = g_getenv ("FE_SOURCE_ROOT");
  g_autofree char *path = g_build_filename (root ? root : ".", "data", "models",
                                            "formulate-v1.safetensors", NULL);
  FeContextParams cp = fe_context_default_params ();
  cp.device = gpu->id;
  FeContext *ctx = NULL;
  g_assert_cmpint (fe_context_load (path, &cp, &ctx), ==, FE_OK);
  guint n;
  g_autofree FeImage *imgs = all_fe_images (&n);
  FeRecognizeParams rp = fe_recognize_default_params ();
  FeResult *s = recognize (ctx, imgs, n, rp, 1, NULL);
  FeResult *b = recognize (ctx, imgs, n, rp, 8, NULL);
  guint same = 0;
  for (guint i = 0; i < n; i++)
    same += g_strcmp0 (s[i].latex, b[i].latex) == 0;
  g_test_message ("%s: %u of %u images decode alike serially and batched", gpu->id, same, n);
  g_assert_cmpuint (same * 10, >=, n * 9);
  free_results (s, n);
  free_results (b, n);
  fe_context_free (ctx);
}

/* FE_PRECISION_BF16 on a CPU with AVX512_BF16 (the decoder's matmuls in
 * bf16): the context says bf16, the batched path still gives the serial
 * tokens (the bf16 kernels sum every row alike, whatever the batch), and
 * the output mostly equals fp32's (the test split: 99.4 %, bench/RESULTS.md;
 * here at least 3 in 4 of the images, a bound no correct kernel misses). On
 * other CPUs a bf16 request runs fp32 and says so. */
static void
test_bf16_cpu (void)
{
  if (!have_shipped ())
    return;
  const char *root = g_getenv ("FE_SOURCE_ROOT");
  g_autofree char *model = g_build_filename (root ? root : ".", "data", "models",
                                             "formulate-v1.safetensors", NULL);
  FeContextParams cp = fe_context_default_params ();
  cp.device = "cpu";
  cp.precision = FE_PRECISION_BF16;
  FeContext *ctx = NULL;
  if (fe_context_load (model, &cp, &ctx) != FE_OK)
    g_error ("%s: %s", model, fe_last_error ());
  FeRuntimeInfo info;
  g_assert_cmpint (fe_context_runtime_info (ctx, &info), ==, FE_OK);
  const FeRuntimeInfo *ri = &info;
  if (!fe_cpu_has_bf16_dot ())
    {
      g_assert_cmpint (ri->precision, ==, FE_PRECISION_FP32);
      fe_context_free (ctx);
      g_test_skip ("this CPU has no AVX512_BF16: bf16 requests run in fp32");
      return;
    }
  g_assert_cmpint (ri->precision, ==, FE_PRECISION_BF16);
  guint n = 0;
  FeImage *imgs = all_fe_images (&n);
#ifdef FE_TEST_SANITIZED
  n = MIN (n, 12);
#else
  n = MIN (n, 24);
#endif
  FeRecognizeParams rp = fe_recognize_default_params ();
  rp.scale_candidates = 1;
  FeResult *serial = recognize (ctx, imgs, n, rp, 1, NULL);
  FeResult *batched = recognize (ctx, imgs, n, rp, 8, NULL);
  FeResult *fp32 = recognize (shipped, imgs, n, rp, 8, NULL);
  guint same = 0;
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *what = g_strdup_printf ("bf16 image %u", i);
      assert_same_result (&serial[i], &batched[i], what);
      same += g_strcmp0 (serial[i].latex, fp32[i].latex) == 0;
    }
  g_test_message ("bf16 = fp32 on %u of %u images", same, n);
  g_assert_cmpuint (4 * same, >=, 3 * n);
  free_results (serial, n);
  free_results (batched, n);
  free_results (fp32, n);
  g_free (imgs);
  fe_context_free (ctx);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The engine-batch-odd-* entries (tests/engine/meson.build) set FE_CPU_ISA to run
   * the portable or AVX2 decode loops; make sure the cap took (a misspelt value is
   * only a warning on stderr, and the run would then test the default kernels). */
  const char *isa = g_getenv ("FE_CPU_ISA");
#if defined(__x86_64__) || defined(__i386__)
  if (isa && strcmp (isa, "portable") == 0)
    g_assert_true (!fe_cpu_info ()->avx2 && fe_cpu_matmul_exact_rows (FE_DTYPE_F32) == 4);
  if (isa && strcmp (isa, "avx2") == 0)
    g_assert_true (!fe_cpu_info ()->avx512f);
#else
  (void) isa;
#endif
  build_images ();
  const char *root = g_getenv ("FE_SOURCE_ROOT");
  g_autofree char *model = g_build_filename (root ? root : ".", "data", "models",
                                             "formulate-v1.safetensors", NULL);
  if (g_file_test (model, G_FILE_TEST_EXISTS))
    {
      FeContextParams cp = fe_context_default_params ();
      cp.device = "cpu";
      if (fe_context_load (model, &cp, &shipped) != FE_OK)
        g_error ("%s: %s", model, fe_last_error ());
    }
  g_test_add_func ("/engine/batch/attention-rows-op", test_attention_rows_op);
  g_test_add_func ("/engine/batch/batch-size", test_batch_size);
  g_test_add_func ("/engine/batch/state-rows-once", test_state_rows_once);
  g_test_add_func ("/engine/batch/group-encoder-once", test_group_encoder_once);
  g_test_add_func ("/engine/batch/unsupported-op-message", test_unsupported_op_message);
  g_test_add_func ("/engine/batch/fallback-without-op", test_fallback_without_op);
  g_test_add_func ("/engine/batch/equals-serial", test_equals_serial);
  g_test_add_func ("/engine/batch/length-limit-repetition", test_length_limit);
  g_test_add_func ("/engine/batch/odd-batches", test_odd_batches);
  g_test_add_func ("/engine/batch/abort-progress", test_abort_progress);
  g_test_add_func ("/engine/batch/no-allocation-per-token", test_no_allocation_per_token);
  g_test_add_func ("/engine/batch/out-of-memory-status", test_out_of_memory_status);
  g_test_add_func ("/engine/batch/detokenize-decoded", test_detokenize_decoded);
  g_test_add_func ("/engine/batch/matmul-scratch-status", test_matmul_scratch_status);
  g_test_add_func ("/engine/batch/bf16-cpu", test_bf16_cpu);
  find_gpu ();
  g_test_add_func ("/engine/batch/gpu/attention-rows", test_gpu_attention_rows);
  g_test_add_func ("/engine/batch/gpu/recognize", test_gpu_recognize);
  int rc = g_test_run ();
  if (serial_default)
    free_results (serial_default, images->len);
  fe_context_free (shipped);
  g_ptr_array_free (images, TRUE);
  return rc;
}
