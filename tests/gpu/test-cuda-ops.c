/* test-cuda-ops.c - the CUDA backend against the CPU backend, op by op (in
 * the spirit of ggml's test-backend-ops), plus memory return, CUDA graph
 * replay and the tiny model end to end.
 *
 * Every test needs cuda:0; without one each test is skipped with
 * "no CUDA device: <reason from the device list>", so the suite passes on
 * CPU-only machines and does the real work on a GPU (tests/gpu/run.sh).
 *
 * Error measure: NMSE = sum (gpu - cpu)^2 / sum cpu^2 over the output, with a
 * bound per op and weight precision: exact ops (copies, max) must match
 * bit for bit; f32 maths that only reorders sums gets 1e-10; GEMMs get what
 * their operand rounding allows (TF32 10-bit, f16 10-bit, bf16 7-bit
 * mantissas on the activations). */
#include "fe-cuda-loader.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static FeDevice *gpu;
static char skip_reason[256];
static int gpu_cc_major;

static gboolean
need_gpu (void)
{
  if (gpu)
    return TRUE;
  g_test_skip (skip_reason);
  return FALSE;
}

static void
find_gpu (void)
{
  FeDeviceInfo devs[16];
  size_t n = MIN (fe_devices_list (devs, G_N_ELEMENTS (devs)), G_N_ELEMENTS (devs));
  g_snprintf (skip_reason, sizeof skip_reason, "no CUDA device");
  for (size_t i = 0; i < n; i++)
    {
      if (devs[i].kind != FE_DEVICE_CUDA)
        continue;
      if (!devs[i].available)
        {
          g_snprintf (skip_reason, sizeof skip_reason, "no CUDA device: %s",
                      devs[i].unavailable_reason);
          continue;
        }
      if (fe_device_open (devs[i].id, &gpu) == FE_OK)
        {
          gpu_cc_major = devs[i].compute_major;
          return;
        }
      g_snprintf (skip_reason, sizeof skip_reason, "no CUDA device: %s", fe_last_error ());
      gpu = NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* Tensors on one side (CPU or GPU), each in its own buffer                 */

typedef struct {
  FeDevice *dev;
  FeBuffer *bufs[16];
  int n;
} Side;

static void
side_clear (Side *s)
{
  for (int i = 0; i < s->n; i++)
    fe_buffer_free (s->bufs[i]);
  s->n = 0;
}

/* A tensor of dtype on the side's device filled from f32 values (converted;
 * integer dtypes take the values as numbers); NULL = zeros. */
static FeTensor
side_tensor (Side *s, fe_dtype dtype, int ndim, const int64_t *shape, const float *values)
{
  FeTensor t;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    n *= shape[i];
  size_t es = fe_dtype_size (dtype), bytes = (size_t) n * es;
  g_assert_cmpint (s->n, <, (int) G_N_ELEMENTS (s->bufs));
  g_assert_cmpint (fe_buffer_new (s->dev, bytes + 128, &s->bufs[s->n]), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (s->bufs[s->n], dtype, ndim, shape, "t", &t), ==, FE_OK);
  s->n++;
  guint8 *host = g_malloc0 (bytes ? bytes : 1);
  for (int64_t i = 0; values && i < n; i++)
    {
      float v = values[i];
      switch (dtype)
        {
        case FE_DTYPE_F32: ((float *) host)[i] = v; break;
        case FE_DTYPE_F16: ((uint16_t *) host)[i] = fe_f32_to_f16 (v); break;
        case FE_DTYPE_BF16: ((uint16_t *) host)[i] = fe_f32_to_bf16 (v); break;
        case FE_DTYPE_I32: ((int32_t *) host)[i] = (int32_t) v; break;
        case FE_DTYPE_I64: ((int64_t *) host)[i] = (int64_t) v; break;
        case FE_DTYPE_F64: case FE_DTYPE_I16: case FE_DTYPE_I8: case FE_DTYPE_U8:
        case FE_DTYPE_BOOL: case FE_DTYPE_COUNT: default: g_assert_not_reached ();
        }
    }
  g_assert_cmpint (fe_tensor_upload (&t, host, bytes), ==, FE_OK);
  g_free (host);
  return t;
}

static float *
side_read (const FeTensor *t)
{
  size_t n = (size_t) fe_tensor_nelements (t);
  float *out = g_new (float, n);
  g_assert_cmpint (fe_tensor_download (t, out, n * sizeof (float)), ==, FE_OK);
  return out;
}

/* What a weight becomes on the device: rounded to its precision. The CPU
 * reference multiplies by these same rounded values. */
static float *
rounded (const float *v, size_t n, fe_dtype dtype)
{
  float *out = g_new (float, n);
  for (size_t i = 0; i < n; i++)
    out[i] = dtype == FE_DTYPE_F16    ? fe_f16_to_f32 (fe_f32_to_f16 (v[i]))
             : dtype == FE_DTYPE_BF16 ? fe_bf16_to_f32 (fe_f32_to_bf16 (v[i]))
                                      : v[i];
  return out;
}

static float *
random_values (GRand *r, size_t n, double lo, double hi)
{
  float *v = g_new (float, n);
  for (size_t i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (r, lo, hi);
  return v;
}

static void
assert_close (const char *what, const float *gpu_out, const float *cpu_out, size_t n, double max_nmse)
{
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++)
    {
      g_assert_false (isnan (gpu_out[i]));
      double d = (double) gpu_out[i] - cpu_out[i];
      num += d * d;
      den += (double) cpu_out[i] * cpu_out[i];
    }
  double nmse = den > 0 ? num / den : num;
  g_test_message ("%s: NMSE %.3g (bound %.3g)", what, nmse, max_nmse);
  if (!(nmse <= max_nmse))
    g_error ("%s: NMSE %.3g above %.3g", what, nmse, max_nmse);
}

/* NMSE bound of a GEMM with activations rounded like its weight dtype. */
static double
gemm_bound (fe_dtype w)
{
  return w == FE_DTYPE_BF16 ? 1e-4 : w == FE_DTYPE_F16 ? 1e-5 : 1e-5 /* TF32 */;
}

static const fe_dtype weight_dtypes[] = { FE_DTYPE_F32, FE_DTYPE_F16, FE_DTYPE_BF16 };

static gboolean
dtype_runs (fe_dtype w)
{
  return w != FE_DTYPE_BF16 || gpu_cc_major >= 8;
}

/* ------------------------------------------------------------------------ */
/* Ops                                                                      */

static void
test_matmul (void)
{
  if (!need_gpu ())
    return;
  GRand *r = g_rand_new_with_seed (1);
  const int K = 96, N = 80;
  const int64_t ms[] = { 1, 7, 300 };
  for (gsize wi = 0; wi < G_N_ELEMENTS (weight_dtypes); wi++)
    for (gsize mi = 0; mi < G_N_ELEMENTS (ms); mi++)
      for (int gelu = 0; gelu < 2; gelu++)
        {
          fe_dtype wd = weight_dtypes[wi];
          if (!dtype_runs (wd))
            continue;
          int64_t M = ms[mi];
          float *x = random_values (r, (size_t) (M * K), -1, 1);
          float *w = random_values (r, (size_t) N * K, -0.3, 0.3);
          float *b = random_values (r, N, -0.5, 0.5);
          float *wr = rounded (w, (size_t) N * K, wd);
          int64_t xs[2] = { M, K }, ws[2] = { N, K }, bs[1] = { N }, ys[2] = { M, N };
          Side c = { fe_cpu_device () }, g = { gpu };
          FeTensor cx = side_tensor (&c, FE_DTYPE_F32, 2, xs, x);
          FeTensor cw = side_tensor (&c, FE_DTYPE_F32, 2, ws, wr);
          FeTensor cb = side_tensor (&c, FE_DTYPE_F32, 1, bs, b);
          FeTensor cy = side_tensor (&c, FE_DTYPE_F32, 2, ys, NULL);
          FeTensor gx = side_tensor (&g, FE_DTYPE_F32, 2, xs, x);
          FeTensor gw = side_tensor (&g, wd, 2, ws, w);
          FeTensor gb = side_tensor (&g, FE_DTYPE_F32, 1, bs, b);
          FeTensor gy = side_tensor (&g, FE_DTYPE_F32, 2, ys, NULL);
          g_assert_cmpint (fe_matmul (&cy, &cx, &cw, &cb, gelu), ==, FE_OK);
          g_assert_cmpint (fe_matmul (&gy, &gx, &gw, &gb, gelu), ==, FE_OK);
          float *co = side_read (&cy), *go = side_read (&gy);
          g_autofree char *what = g_strdup_printf ("matmul %s M=%d gelu=%d", fe_dtype_name (wd),
                                                   (int) M, gelu);
          assert_close (what, go, co, (size_t) (M * N), gemm_bound (wd));
          g_free (co); g_free (go); g_free (x); g_free (w); g_free (b); g_free (wr);
          side_clear (&c); side_clear (&g);
        }
  g_rand_free (r);
}

static void
test_conv3x3 (void)
{
  if (!need_gpu ())
    return;
  GRand *r = g_rand_new_with_seed (2);
  const int B = 2, Cin = 3, H = 16, W = 24, Cout = 8;
  for (gsize wi = 0; wi < G_N_ELEMENTS (weight_dtypes); wi++)
    for (int relu = 0; relu < 2; relu++)
      {
        fe_dtype wd = weight_dtypes[wi];
        if (!dtype_runs (wd))
          continue;
        size_t nx = (size_t) B * Cin * H * W, nw = (size_t) Cout * Cin * 9;
        float *x = random_values (r, nx, 0, 1);
        float *w = random_values (r, nw, -0.5, 0.5);
        float *b = random_values (r, Cout, -0.2, 0.2);
        float *wr = rounded (w, nw, wd);
        int64_t xs[4] = { B, Cin, H, W }, ws[4] = { Cout, Cin, 3, 3 }, bs[1] = { Cout },
                ys[4] = { B, Cout, H, W };
        Side c = { fe_cpu_device () }, g = { gpu };
        FeTensor cx = side_tensor (&c, FE_DTYPE_F32, 4, xs, x);
        FeTensor cw = side_tensor (&c, FE_DTYPE_F32, 4, ws, wr);
        FeTensor cb = side_tensor (&c, FE_DTYPE_F32, 1, bs, b);
        FeTensor cy = side_tensor (&c, FE_DTYPE_F32, 4, ys, NULL);
        FeTensor gx = side_tensor (&g, FE_DTYPE_F32, 4, xs, x);
        FeTensor gw = side_tensor (&g, wd, 4, ws, w);
        FeTensor gb = side_tensor (&g, FE_DTYPE_F32, 1, bs, b);
        FeTensor gy = side_tensor (&g, FE_DTYPE_F32, 4, ys, NULL);
        g_assert_cmpint (fe_conv3x3 (&cy, &cx, &cw, &cb, relu), ==, FE_OK);
        g_assert_cmpint (fe_conv3x3 (&gy, &gx, &gw, &gb, relu), ==, FE_OK);
        float *co = side_read (&cy), *go = side_read (&gy);
        g_autofree char *what = g_strdup_printf ("conv3x3 %s relu=%d", fe_dtype_name (wd), relu);
        assert_close (what, go, co, (size_t) B * Cout * H * W, gemm_bound (wd));
        g_free (co); g_free (go); g_free (x); g_free (w); g_free (b); g_free (wr);
        side_clear (&c); side_clear (&g);
      }
  g_rand_free (r);
}

/* One-input f32 ops whose result must match the CPU within bound. */
typedef enum { UNARY_GELU, UNARY_LOG_SOFTMAX, UNARY_MAXPOOL_22, UNARY_MAXPOOL_21, UNARY_NLC } Unary;

static void
run_unary (Unary kind, int ndim, const int64_t *xs, int ydim, const int64_t *ys, double lo,
           double hi, double bound, const char *what)
{
  GRand *r = g_rand_new_with_seed (3 + kind);
  int64_t nx = 1, ny = 1;
  for (int i = 0; i < ndim; i++)
    nx *= xs[i];
  for (int i = 0; i < ydim; i++)
    ny *= ys[i];
  float *x = random_values (r, (size_t) nx, lo, hi);
  Side c = { fe_cpu_device () }, g = { gpu };
  FeTensor t[2][2];
  Side *sides[2] = { &c, &g };
  for (int s = 0; s < 2; s++)
    {
      t[s][0] = side_tensor (sides[s], FE_DTYPE_F32, ndim, xs, x);
      t[s][1] = side_tensor (sides[s], FE_DTYPE_F32, ydim, ys, NULL);
      fe_status st = FE_ERR_INTERNAL;
      switch (kind)
        {
        case UNARY_GELU: st = fe_gelu (&t[s][1], &t[s][0]); break;
        case UNARY_LOG_SOFTMAX: st = fe_log_softmax (&t[s][1], &t[s][0]); break;
        case UNARY_MAXPOOL_22: st = fe_maxpool (&t[s][1], &t[s][0], 2, 2); break;
        case UNARY_MAXPOOL_21: st = fe_maxpool (&t[s][1], &t[s][0], 2, 1); break;
        case UNARY_NLC: st = fe_nchw_to_nlc (&t[s][1], &t[s][0]); break;
        default: g_assert_not_reached ();
        }
      g_assert_cmpint (st, ==, FE_OK);
    }
  float *co = side_read (&t[0][1]), *go = side_read (&t[1][1]);
  assert_close (what, go, co, (size_t) ny, bound);
  if (bound == 0)
    g_assert_cmpmem (go, ny * sizeof (float), co, ny * sizeof (float));
  g_free (co); g_free (go); g_free (x);
  side_clear (&c); side_clear (&g);
  g_rand_free (r);
}

static void
test_elementwise (void)
{
  if (!need_gpu ())
    return;
  int64_t v[2] = { 10, 1000 };
  /* the CPU uses a rational erf within a few ulp of erff; CUDA erff is 2 ulp */
  run_unary (UNARY_GELU, 2, v, 2, v, -6, 6, 1e-10, "gelu");
  int64_t l[2] = { 4, 600 };
  run_unary (UNARY_LOG_SOFTMAX, 2, l, 2, l, -20, 20, 1e-10, "log_softmax");
  int64_t px[4] = { 2, 3, 9, 13 }, p22[4] = { 2, 3, 4, 6 }, p21[4] = { 2, 3, 4, 13 };
  run_unary (UNARY_MAXPOOL_22, 4, px, 4, p22, -1, 1, 0, "maxpool 2x2 (odd sizes floor)");
  run_unary (UNARY_MAXPOOL_21, 4, px, 4, p21, -1, 1, 0, "maxpool 2x1");
  int64_t nx[4] = { 2, 40, 5, 7 }, nl[3] = { 2, 35, 40 };
  run_unary (UNARY_NLC, 4, nx, 3, nl, -1, 1, 0, "nchw_to_nlc");
}

static void
test_add_layernorm (void)
{
  if (!need_gpu ())
    return;
  GRand *r = g_rand_new_with_seed (4);
  const int rows = 33, D = 256;
  /* a large mean next to a small spread: the case a one-pass variance fails */
  float *x = random_values (r, (size_t) rows * D, 99, 101);
  float *p = random_values (r, D, -1, 1);
  float *gm = random_values (r, D, 0.5, 1.5), *bt = random_values (r, D, -0.5, 0.5);
  int64_t xs[2] = { rows, D }, ds[1] = { D };
  Side c = { fe_cpu_device () }, g = { gpu };
  Side *sides[2] = { &c, &g };
  float *out[2][2];
  for (int s = 0; s < 2; s++)
    {
      FeTensor tx = side_tensor (sides[s], FE_DTYPE_F32, 2, xs, x);
      FeTensor tp = side_tensor (sides[s], FE_DTYPE_F32, 1, ds, p);
      FeTensor tg = side_tensor (sides[s], FE_DTYPE_F32, 1, ds, gm);
      FeTensor tb = side_tensor (sides[s], FE_DTYPE_F32, 1, ds, bt);
      FeTensor ty = side_tensor (sides[s], FE_DTYPE_F32, 2, xs, NULL);
      g_assert_cmpint (fe_add (&tx, &tx, &tp), ==, FE_OK);      /* in place, broadcast */
      out[s][0] = side_read (&tx);
      g_assert_cmpint (fe_layernorm (&ty, &tx, &tg, &tb, 1e-5f), ==, FE_OK);
      out[s][1] = side_read (&ty);
    }
  assert_close ("add (broadcast, in place)", out[1][0], out[0][0], (size_t) rows * D, 0);
  g_assert_cmpmem (out[1][0], rows * D * sizeof (float), out[0][0], rows * D * sizeof (float));
  assert_close ("layernorm (mean 100)", out[1][1], out[0][1], (size_t) rows * D, 1e-10);
  for (int s = 0; s < 2; s++)
    g_free (out[s][0]), g_free (out[s][1]);
  g_free (x); g_free (p); g_free (gm); g_free (bt);
  side_clear (&c); side_clear (&g);
  g_rand_free (r);
}

static void
run_attention (int B, int Tq, int Tk, int D, int heads, int kv_len, gboolean causal, int q_pos0)
{
  GRand *r = g_rand_new_with_seed ((guint32) (B * 1000 + Tq * 10 + kv_len));
  float *q = random_values (r, (size_t) B * Tq * D, -1, 1);
  float *k = random_values (r, (size_t) B * Tk * D, -1, 1);
  float *v = random_values (r, (size_t) B * Tk * D, -1, 1);
  int64_t qs[3] = { B, Tq, D }, ks[3] = { B, Tk, D };
  Side c = { fe_cpu_device () }, g = { gpu };
  Side *sides[2] = { &c, &g };
  float *out[2];
  for (int s = 0; s < 2; s++)
    {
      FeTensor tq = side_tensor (sides[s], FE_DTYPE_F32, 3, qs, q);
      FeTensor tk = side_tensor (sides[s], FE_DTYPE_F32, 3, ks, k);
      FeTensor tv = side_tensor (sides[s], FE_DTYPE_F32, 3, ks, v);
      FeTensor ty = side_tensor (sides[s], FE_DTYPE_F32, 3, qs, NULL);
      g_assert_cmpint (fe_attention (&ty, &tq, &tk, &tv, heads, kv_len, causal, q_pos0), ==,
                       FE_OK);
      out[s] = side_read (&ty);
    }
  g_autofree char *what = g_strdup_printf ("attention B=%d Tq=%d kv=%d/%d D=%d h=%d causal=%d@%d",
                                           B, Tq, kv_len, Tk, D, heads, causal, q_pos0);
  assert_close (what, out[1], out[0], (size_t) B * Tq * D, 1e-10);
  g_free (out[0]); g_free (out[1]); g_free (q); g_free (k); g_free (v);
  side_clear (&c); side_clear (&g);
  g_rand_free (r);
}

static void
test_attention (void)
{
  if (!need_gpu ())
    return;
  run_attention (2, 5, 20, 64, 4, 17, FALSE, 0);       /* encoder-style, partial cache */
  run_attention (2, 5, 20, 64, 4, 17, TRUE, 12);       /* causal block at an offset */
  run_attention (3, 1, 64, 256, 8, 9, TRUE, 8);        /* decode step, self-attention */
  run_attention (3, 1, 3072, 256, 8, 3072, FALSE, 0);  /* decode step, v1 cross-attention */
  run_attention (1, 40, 40, 96, 1, 40, FALSE, 0);      /* one head of 96 dims */
  run_attention (2, 3, 1500, 64, 4, 1200, TRUE, 1100); /* 8-warp blocks, causal cut */
  run_attention (1, 2, 14000, 64, 2, 14000, FALSE, 0); /* opt-in shared memory */
}

static void
test_embed_kv_write (void)
{
  if (!need_gpu ())
    return;
  GRand *r = g_rand_new_with_seed (5);
  const int V = 50, D = 64, P = 16, B = 3, T = 10;
  float *table = random_values (r, (size_t) V * D, -1, 1), *pos = random_values (r, (size_t) P * D, -1, 1);
  const float ids[3] = { 0, 49, 7 };
  for (gsize wi = 0; wi < G_N_ELEMENTS (weight_dtypes); wi++)
    for (int i64 = 0; i64 < 2; i64++)
      {
        fe_dtype wd = weight_dtypes[wi];
        float *tr = rounded (table, (size_t) V * D, wd), *pr = rounded (pos, (size_t) P * D, wd);
        int64_t ts[2] = { V, D }, ps[2] = { P, D }, is[1] = { B }, ys[2] = { B, D },
                cs[3] = { B, T, D };
        Side c = { fe_cpu_device () }, g = { gpu };
        FeTensor ct = side_tensor (&c, FE_DTYPE_F32, 2, ts, tr);
        FeTensor cp = side_tensor (&c, FE_DTYPE_F32, 2, ps, pr);
        FeTensor ci = side_tensor (&c, i64 ? FE_DTYPE_I64 : FE_DTYPE_I32, 1, is, ids);
        FeTensor cy = side_tensor (&c, FE_DTYPE_F32, 2, ys, NULL);
        FeTensor cc = side_tensor (&c, FE_DTYPE_F32, 3, cs, NULL);
        FeTensor gt = side_tensor (&g, wd, 2, ts, table);
        FeTensor gp = side_tensor (&g, wd, 2, ps, pos);
        FeTensor gi = side_tensor (&g, i64 ? FE_DTYPE_I64 : FE_DTYPE_I32, 1, is, ids);
        FeTensor gy = side_tensor (&g, FE_DTYPE_F32, 2, ys, NULL);
        FeTensor gc = side_tensor (&g, FE_DTYPE_F32, 3, cs, NULL);
        g_assert_cmpint (fe_embed (&cy, &ct, &cp, &ci, 5), ==, FE_OK);
        g_assert_cmpint (fe_embed (&gy, &gt, &gp, &gi, 5), ==, FE_OK);
        g_assert_cmpint (fe_kv_write (&cc, &cy, 7), ==, FE_OK);
        g_assert_cmpint (fe_kv_write (&gc, &gy, 7), ==, FE_OK);
        float *co = side_read (&cc), *go = side_read (&gc);
        g_autofree char *what = g_strdup_printf ("embed + kv_write %s ids %s", fe_dtype_name (wd),
                                                 i64 ? "i64" : "i32");
        assert_close (what, go, co, (size_t) B * T * D, 0);
        g_assert_cmpmem (go, B * T * D * sizeof (float), co, B * T * D * sizeof (float));
        g_free (co); g_free (go); g_free (tr); g_free (pr);
        side_clear (&c); side_clear (&g);
      }

  /* An id outside the vocabulary lives on the device: the error comes at
   * the next read back, and the device stays usable. */
  int64_t ts[2] = { V, D }, ps[2] = { P, D }, is[1] = { 1 }, ys[2] = { 1, D };
  const float bad[1] = { 50 };
  Side g = { gpu };
  FeTensor gt = side_tensor (&g, FE_DTYPE_F32, 2, ts, table);
  FeTensor gp = side_tensor (&g, FE_DTYPE_F32, 2, ps, pos);
  FeTensor gi = side_tensor (&g, FE_DTYPE_I32, 1, is, bad);
  FeTensor gy = side_tensor (&g, FE_DTYPE_F32, 2, ys, NULL);
  g_assert_cmpint (fe_embed (&gy, &gt, &gp, &gi, 0), ==, FE_OK);
  float row[64];
  g_assert_cmpint (fe_tensor_download (&gy, row, sizeof row), ==, FE_ERR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (fe_last_error (), "outside the vocabulary"));
  g_assert_cmpint (fe_tensor_download (&gy, row, sizeof row), ==, FE_OK);
  side_clear (&g);
  g_free (table); g_free (pos);
  g_rand_free (r);
}

static void
test_topk (void)
{
  if (!need_gpu ())
    return;
  GRand *r = g_rand_new_with_seed (6);
  const int B = 3, N = 600, k = 5;
  float *x = random_values (r, (size_t) B * N, -5, 5);
  /* ties: the lower index must win, as on the CPU */
  x[10] = x[20] = x[30] = 9.0f;
  x[N + 599] = x[N + 0] = 7.5f;
  int64_t xs[2] = { B, N }, ks[2] = { B, k };
  Side c = { fe_cpu_device () }, g = { gpu };
  Side *sides[2] = { &c, &g };
  float *vals[2];
  int32_t idx[2][15];
  for (int s = 0; s < 2; s++)
    {
      FeTensor tx = side_tensor (sides[s], FE_DTYPE_F32, 2, xs, x);
      FeTensor tv = side_tensor (sides[s], FE_DTYPE_F32, 2, ks, NULL);
      FeTensor ti = side_tensor (sides[s], FE_DTYPE_I32, 2, ks, NULL);
      g_assert_cmpint (fe_topk (&tv, &ti, &tx, k), ==, FE_OK);
      vals[s] = side_read (&tv);
      g_assert_cmpint (fe_tensor_download (&ti, idx[s], sizeof idx[s]), ==, FE_OK);
    }
  g_assert_cmpmem (vals[1], B * k * sizeof (float), vals[0], B * k * sizeof (float));
  g_assert_cmpmem (idx[1], sizeof idx[1], idx[0], sizeof idx[0]);
  g_assert_cmpint (idx[1][0], ==, 10);
  g_assert_cmpint (idx[1][1], ==, 20);
  g_assert_cmpint (idx[1][2], ==, 30);
  g_assert_cmpint (idx[1][k], ==, 0);
  g_assert_cmpint (idx[1][k + 1], ==, 599);
  g_free (vals[0]); g_free (vals[1]); g_free (x);
  side_clear (&c); side_clear (&g);
  g_rand_free (r);
}

/* A recorded matmul + GELU replays on new input contents. */
static void
test_graph_replay (void)
{
  if (!need_gpu ())
    return;
  GRand *r = g_rand_new_with_seed (7);
  const int M = 4, K = 64, N = 32;
  int64_t xs[2] = { M, K }, ws[2] = { N, K }, ys[2] = { M, N };
  float *w = random_values (r, (size_t) N * K, -0.3, 0.3);
  float *x1 = random_values (r, (size_t) M * K, -1, 1), *x2 = random_values (r, (size_t) M * K, -1, 1);
  Side g = { gpu }, c = { fe_cpu_device () };
  FeTensor gx = side_tensor (&g, FE_DTYPE_F32, 2, xs, x1);
  FeTensor gw = side_tensor (&g, FE_DTYPE_F16, 2, ws, w);
  FeTensor gy = side_tensor (&g, FE_DTYPE_F32, 2, ys, NULL);
  /* run once so the conversion workspace exists before recording */
  g_assert_cmpint (fe_matmul (&gy, &gx, &gw, NULL, TRUE), ==, FE_OK);
  g_assert_cmpint (fe_op_compute (&(FeOpDesc){ .op = FE_OP_GELU, .dst = &gy, .src = { &gy } }),
                   ==, FE_OK);
  float *first = side_read (&gy);
  FeCudaGraph *graph = NULL;
  g_assert_cmpint (fe_cuda_graph_begin (gpu), ==, FE_OK);
  g_assert_cmpint (fe_matmul (&gy, &gx, &gw, NULL, TRUE), ==, FE_OK);
  g_assert_cmpint (fe_gelu (&gy, &gy), ==, FE_OK);
  /* the whole tensor, so the size check passes and the capture check answers */
  float *during = g_new0 (float, (size_t) M * N);
  g_assert_cmpint (fe_tensor_download (&gy, during, (size_t) M * N * sizeof (float)), ==,
                   FE_ERR_UNSUPPORTED);
  g_free (during);
  g_assert_cmpint (fe_cuda_graph_end (gpu, &graph), ==, FE_OK);

  g_assert_cmpint (fe_tensor_upload (&gx, x2, (size_t) M * K * sizeof (float)), ==, FE_OK);
  g_assert_cmpint (fe_cuda_graph_launch (gpu, graph), ==, FE_OK);
  float *replayed = side_read (&gy);

  float *wr = rounded (w, (size_t) N * K, FE_DTYPE_F16);
  FeTensor cx = side_tensor (&c, FE_DTYPE_F32, 2, xs, x2);
  FeTensor cw = side_tensor (&c, FE_DTYPE_F32, 2, ws, wr);
  FeTensor cy = side_tensor (&c, FE_DTYPE_F32, 2, ys, NULL);
  g_assert_cmpint (fe_matmul (&cy, &cx, &cw, NULL, TRUE), ==, FE_OK);
  g_assert_cmpint (fe_gelu (&cy, &cy), ==, FE_OK);
  float *ref = side_read (&cy);
  assert_close ("graph replay (matmul f16 + gelu twice)", replayed, ref, (size_t) M * N, 1e-5);
  /* and it really used the new input */
  g_assert_true (memcmp (first, replayed, (size_t) M * N * sizeof (float)) != 0);
  fe_cuda_graph_free (gpu, graph);
  g_free (first); g_free (replayed); g_free (ref); g_free (wr); g_free (w); g_free (x1); g_free (x2);
  side_clear (&g); side_clear (&c);
  g_rand_free (r);
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

/* A convolution with f16 weights big enough to need workspace. */
static void
run_big_conv (Side *g)
{
  int64_t xs[4] = { 4, 32, 128, 256 }, ws[4] = { 32, 32, 3, 3 };
  FeTensor x = side_tensor (g, FE_DTYPE_F32, 4, xs, NULL);
  FeTensor w = side_tensor (g, FE_DTYPE_F16, 4, ws, NULL);
  FeTensor y = side_tensor (g, FE_DTYPE_F32, 4, xs, NULL);
  g_assert_cmpint (fe_conv3x3 (&y, &x, &w, NULL, TRUE), ==, FE_OK);
  g_assert_cmpint (gpu->backend->synchronize (gpu), ==, FE_OK);
}

static void
test_memory_returns (void)
{
  if (!need_gpu ())
    return;
  uint64_t free0 = 0, total = 0, free1 = 0, free2 = 0;
  /* Once before measuring: CUDA loads kernel code (ours, cuBLAS's) into
   * device memory on first use, and that stays. */
  Side warm = { gpu };
  run_big_conv (&warm);
  side_clear (&warm);
  g_assert_cmpint (fe_cuda_trim (gpu), ==, FE_OK);
  g_assert_cmpint (gpu->backend->memory_info (gpu, &free0, &total), ==, FE_OK);
  uint64_t engine0 = fe_cuda_engine_bytes (gpu);

  /* 256 MiB of buffers and a convolution big enough to need workspace */
  Side g = { gpu };
  int64_t big[1] = { 64 << 20 };
  (void) side_tensor (&g, FE_DTYPE_F32, 1, big, NULL);
  run_big_conv (&g);
  g_assert_cmpint (gpu->backend->memory_info (gpu, &free1, &total), ==, FE_OK);
  g_assert_cmpuint (fe_cuda_engine_bytes (gpu), >=, engine0 + ((uint64_t) 256 << 20));
  g_assert_cmpuint (free1 + ((uint64_t) 256 << 20), <=, free0);

  side_clear (&g);
  g_assert_cmpint (gpu->backend->memory_info (gpu, &free2, &total), ==, FE_OK);
  g_test_message ("free before %" G_GUINT64_FORMAT " MiB, loaded %" G_GUINT64_FORMAT
                  " MiB, after %" G_GUINT64_FORMAT " MiB",
                  free0 >> 20, free1 >> 20, free2 >> 20);
  g_assert_cmpuint (fe_cuda_engine_bytes (gpu), ==, engine0);
  /* the driver hands memory back in 2 MiB pages */
  g_assert_cmpuint (free2 + ((uint64_t) 4 << 20), >=, free0);
}

/* The tiny fixture model on the GPU against the same model on the CPU,
 * and the device memory back where it was after freeing it. */
static char *
fixture (const char *name)
{
  return g_build_filename (g_getenv ("FE_SOURCE_ROOT"), "tests", "fixtures", "model", name, NULL);
}

static void
test_model_on_gpu (void)
{
  if (!need_gpu ())
    return;
  g_autofree char *path = fixture ("tiny.safetensors");
  g_autofree char *pixels_path = fixture ("strokes.pixels.f32");
  g_autofree char *pixels = NULL;
  gsize len = 0;
  if (!g_file_test (path, G_FILE_TEST_EXISTS) ||
      !g_file_get_contents (pixels_path, &pixels, &len, NULL))
    {
      g_test_skip ("tests/fixtures/model/tiny.safetensors is missing");
      return;
    }
  const int H = 48, W = 128;   /* tests/fixtures/model/index.json, case tiny-strokes */
  g_assert_cmpuint (len, ==, (gsize) H * W * sizeof (float));

  uint64_t free0 = 0, total = 0, free1 = 0, engine0 = 0;
  /* pass 0 warms up (kernel code loaded on first use stays in device
   * memory); pass 1 is measured */
  for (int pass = 0; pass < 2; pass++)
    {
      if (pass == 1)
        {
          g_assert_cmpint (fe_cuda_trim (gpu), ==, FE_OK);
          g_assert_cmpint (gpu->backend->memory_info (gpu, &free0, &total), ==, FE_OK);
          engine0 = fe_cuda_engine_bytes (gpu);
        }

      /* the CPU; the GPU in fp32 (exact unless FE_TEST_TF32=1); the GPU in
       * its default fp16 (f16 matrices, f32 activations) */
      const char *devices[3] = { "cpu", gpu->id, gpu->id };
      /* the CPU's exact path: its auto is bf16 on AVX512_BF16 CPUs */
      const fe_precision precisions[3] = { FE_PRECISION_FP32, FE_PRECISION_FP32,
                                           FE_PRECISION_AUTO };
      const double bounds[3] = { 0, 1e-5, 1e-3 };
      const float *enc[3];
      float *enc_copy[3];
      int n_tok[3], d_model[3], tokens[3][64], n_out[3];
      uint64_t weights_bytes[3];
      FeContext *ctx[3];
      FeState *st[3];
      for (int s = 0; s < 3; s++)
        {
          FeContextParams cp = fe_context_default_params ();
          cp.device = devices[s];
          cp.precision = precisions[s];
          g_assert_cmpint (fe_context_load (path, &cp, &ctx[s]), ==, FE_OK);
          FeRuntimeInfo ri;
          g_assert_cmpint (fe_context_runtime_info (ctx[s], &ri), ==, FE_OK);
          g_assert_cmpstr (ri.device.id, ==, devices[s]);
          g_assert_false (ri.fell_back);
          g_assert_cmpint (ri.precision, ==, s == 2 ? FE_PRECISION_FP16 : FE_PRECISION_FP32);
          weights_bytes[s] = ri.weights_bytes;
          if (s > 0)
            {
              /* device-wide accounting: the weights and the module's workspaces */
              g_assert_cmpuint (ri.engine_bytes, ==, fe_cuda_engine_bytes (gpu));
              g_assert_cmpuint (ri.engine_bytes, >, ri.weights_bytes);
              g_assert_cmpuint (ri.device_total, >, 0);
            }
          g_assert_cmpint (fe_state_new (ctx[s], &st[s]), ==, FE_OK);
          g_assert_cmpint (fe_state_encode (st[s], (const float *) pixels, H, W), ==, FE_OK);
          g_assert_cmpint (fe_state_encoder_output (st[s], &enc[s], &n_tok[s], &d_model[s]), ==, FE_OK);
          enc_copy[s] = g_memdup2 (enc[s], (gsize) n_tok[s] * d_model[s] * sizeof (float));
          g_assert_cmpint (fe_state_decode_greedy (st[s], tokens[s], 64, &n_out[s], NULL), ==, FE_OK);
        }
      g_assert_cmpuint (weights_bytes[2], <, weights_bytes[1]);
      for (int s = 1; s < 3; s++)
        {
          g_assert_cmpint (n_tok[0], ==, n_tok[s]);
          g_autofree char *what = g_strdup_printf ("tiny model encoder output, %s",
                                                   s == 1 ? "fp32" : "fp16");
          assert_close (what, enc_copy[s], enc_copy[0], (size_t) n_tok[0] * d_model[0], bounds[s]);
          /* the fixture's smallest top-1 margin is 0.32: far above fp16 / TF32 noise */
          g_assert_cmpint (n_out[0], ==, n_out[s]);
          g_assert_cmpmem (tokens[s], n_out[s] * sizeof (int), tokens[0], n_out[0] * sizeof (int));
        }
      for (int s = 0; s < 3; s++)
        {
          fe_state_free (st[s]);
          fe_context_free (ctx[s]);
          g_free (enc_copy[s]);
        }
      if (pass == 1)
        {
          g_assert_cmpuint (fe_cuda_engine_bytes (gpu), ==, engine0);
          g_assert_cmpint (gpu->backend->memory_info (gpu, &free1, &total), ==, FE_OK);
          g_test_message ("model: free before %" G_GUINT64_FORMAT " MiB, after unloading %"
                          G_GUINT64_FORMAT " MiB", free0 >> 20, free1 >> 20);
          g_assert_cmpuint (free1 + ((uint64_t) 4 << 20), >=, free0);
        }
    }
}

/* On a real GPU: "auto" takes cuda:0, and with FE_CUDA_FAKE_FREE_MB=10 the
 * fit check sends the model to the CPU with the reason. */
static void
test_auto_fallback_on_gpu (void)
{
  if (!need_gpu ())
    return;
  g_autofree char *path = fixture ("tiny.safetensors");
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("tests/fixtures/model/tiny.safetensors is missing");
      return;
    }
  if (g_test_subprocess ())
    {
      const char *fake = g_getenv ("FE_TEST_FAKE_FREE");
      if (fake)
        g_setenv ("FE_CUDA_FAKE_FREE_MB", fake, TRUE);
      else
        g_unsetenv ("FE_CUDA_FAKE_FREE_MB");
      FeContextParams cp = fe_context_default_params ();
      FeContext *ctx = NULL;
      FeRuntimeInfo ri;
      g_assert_cmpint (fe_context_load (path, &cp, &ctx), ==, FE_OK);
      g_assert_cmpint (fe_context_runtime_info (ctx, &ri), ==, FE_OK);
      g_test_message ("auto -> %s%s%s", ri.device.id, ri.fell_back ? ": " : "",
                      ri.fallback_reason);
      if (fake)
        {
          g_assert_cmpstr (ri.device.id, ==, "cpu");
          g_assert_true (ri.fell_back);
          g_assert_nonnull (strstr (ri.fallback_reason, "the model needs"));
          g_assert_nonnull (strstr (ri.fallback_reason, "(FE_CUDA_FAKE_FREE_MB)"));
        }
      else
        {
          g_assert_true (g_str_has_prefix (ri.device.id, "cuda:"));
          g_assert_false (ri.fell_back);
        }
      fe_context_free (ctx);
      /* named explicitly, the GPU is used whatever the check would say */
      cp.device = gpu->id;
      g_assert_cmpint (fe_context_load (path, &cp, &ctx), ==, FE_OK);
      g_assert_cmpint (fe_context_runtime_info (ctx, &ri), ==, FE_OK);
      g_assert_cmpstr (ri.device.id, ==, gpu->id);
      fe_context_free (ctx);
      return;
    }
  g_unsetenv ("FE_TEST_FAKE_FREE");
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
  g_setenv ("FE_TEST_FAKE_FREE", "10", TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
  g_unsetenv ("FE_TEST_FAKE_FREE");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  find_gpu ();
  if (gpu)
    {
      /* exact fp32 for the f32-weight parity checks unless asked otherwise */
      const char *tf32 = g_getenv ("FE_TEST_TF32");
      g_assert_cmpint (fe_cuda_set_tf32 (gpu, tf32 && strcmp (tf32, "1") == 0), ==, FE_OK);
    }
  g_test_add_func ("/gpu/ops/matmul", test_matmul);
  g_test_add_func ("/gpu/ops/conv3x3", test_conv3x3);
  g_test_add_func ("/gpu/ops/elementwise-pool-layout", test_elementwise);
  g_test_add_func ("/gpu/ops/add-layernorm", test_add_layernorm);
  g_test_add_func ("/gpu/ops/attention", test_attention);
  g_test_add_func ("/gpu/ops/embed-kv-write", test_embed_kv_write);
  g_test_add_func ("/gpu/ops/topk", test_topk);
  g_test_add_func ("/gpu/graph/replay", test_graph_replay);
  g_test_add_func ("/gpu/memory/returns", test_memory_returns);
  g_test_add_func ("/gpu/model/tiny", test_model_on_gpu);
  g_test_add_func ("/gpu/model/auto-fallback", test_auto_fallback_on_gpu);
  return g_test_run ();
}
