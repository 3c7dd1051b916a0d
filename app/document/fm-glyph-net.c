/* fm-glyph-net.c - the glyph net's forward pass (fm-glyph-net.h): three 3 x 3
 * convolutions (ReLU; 2 x 2 max pools after the first two), the maximum of
 * the last over the crop's width (a word's length is no clue: where its
 * glyphs are is), two dense layers. The same layers as train-scan-glyphs.py's
 * GlyphNet, in its weights' layout (PyTorch's: out, in, ky, kx). */
#include "fm-glyph-net.h"

#include <string.h>

#include "fm-scan-glyphs.h"

#define R0 FM_SCAN_GLYPHS_ROWS
#define W0 FM_SCAN_GLYPHS_COLS
#define C1 FM_SCAN_GLYPHS_C1
#define C2 FM_SCAN_GLYPHS_C2
#define C3 FM_SCAN_GLYPHS_C3

G_STATIC_ASSERT (FM_GLYPH_NET_ROWS == FM_SCAN_GLYPHS_ROWS);
G_STATIC_ASSERT (FM_GLYPH_NET_COLS == FM_SCAN_GLYPHS_COLS);
G_STATIC_ASSERT (R0 % 4 == 0 && W0 % 4 == 0);

/* out[c] = ReLU (bias[c] + the 3 x 3 convolution of in's n_in planes (h x w,
 * zero outside) with weight[c]). */
static void
conv3x3_relu (const float *in, int n_in, int h, int w, const float *weight, const float *bias, int n_out,
              float *out)
{
  for (int c = 0; c < n_out; c++)
    {
      float *o = out + (gsize) c * h * w;
      for (int k = 0; k < h * w; k++)
        o[k] = bias[c];
      for (int i = 0; i < n_in; i++)
        {
          const float *src = in + (gsize) i * h * w, *k9 = weight + ((gsize) c * n_in + i) * 9;
          for (int ky = 0; ky < 3; ky++)
            {
              float k0 = k9[3 * ky], k1 = k9[3 * ky + 1], k2 = k9[3 * ky + 2];
              for (int y = 0; y < h; y++)
                {
                  int sy = y + ky - 1;
                  const float *row;
                  float *orow = o + (gsize) y * w;
                  if (sy < 0 || sy >= h)
                    continue;
                  row = src + (gsize) sy * w;
                  orow[0] += k1 * row[0] + k2 * row[1];
                  for (int x = 1; x < w - 1; x++)
                    orow[x] += k0 * row[x - 1] + k1 * row[x] + k2 * row[x + 1];
                  orow[w - 1] += k0 * row[w - 2] + k1 * row[w - 1];
                }
            }
        }
      for (int k = 0; k < h * w; k++)
        o[k] = MAX (o[k], 0.0f);
    }
}

/* 2 x 2 max pool of n planes h x w into n planes h/2 x w/2. */
static void
max_pool2 (const float *in, int n, int h, int w, float *out)
{
  for (int c = 0; c < n; c++)
    for (int y = 0; y < h / 2; y++)
      for (int x = 0; x < w / 2; x++)
        {
          const float *p = in + ((gsize) c * h + 2 * y) * w + 2 * x;
          out[((gsize) c * (h / 2) + y) * (w / 2) + x] = MAX (MAX (p[0], p[1]), MAX (p[w], p[w + 1]));
        }
}

/* The forward pass on the crop's first w columns (a multiple of 4), zero
 * beyond; a3 gets the last convolution's output, C3 planes of R0/4 x w/4. */
static void
forward_columns (const guint8 *glyphs, int w, float *buf, float **a3_out)
{
  float *x0 = buf, *a1 = x0 + R0 * W0, *p1 = a1 + C1 * R0 * W0;
  float *a2 = a1, *p2 = a1 + C2 * (R0 / 2) * (W0 / 2), *a3 = p1;

  for (int r = 0; r < R0; r++)
    for (int c = 0; c < w; c++)
      x0[r * w + c] = glyphs[r * W0 + c] / 255.0f;
  conv3x3_relu (x0, 1, R0, w, fm_scan_glyphs_c1_w, fm_scan_glyphs_c1_b, C1, a1);
  max_pool2 (a1, C1, R0, w, p1);
  /* a2 reuses a1's space (a1 is read no more), p2 follows it, a3 p1's. */
  conv3x3_relu (p1, C1, R0 / 2, w / 2, fm_scan_glyphs_c2_w, fm_scan_glyphs_c2_b, C2, a2);
  max_pool2 (a2, C2, R0 / 2, w / 2, p2);
  conv3x3_relu (p2, C2, R0 / 4, w / 4, fm_scan_glyphs_c3_w, fm_scan_glyphs_c3_b, C3, a3);
  *a3_out = a3;
}

#define SCRATCH (R0 * W0 + C1 * R0 * W0 + 2 * C2 * (R0 / 2) * (W0 / 2))

/* The last convolution's output on a blank crop (all paper), made once:
 * what the columns beyond a word's ink are (blank_a3[c][y][x]). */
static float blank_a3[C3 * (R0 / 4) * (W0 / 4)];

static gpointer
make_blank (gpointer data)
{
  static const guint8 paper[R0 * W0];
  g_autofree float *buf = g_new (float, SCRATCH);
  float *a3;

  forward_columns (paper, W0, buf, &a3);
  memcpy (blank_a3, a3, sizeof blank_a3);
  return NULL;
}

float
fm_glyph_net_logit (const guint8 *glyphs)
{
  static GOnce blank_once = G_ONCE_INIT;
  /* About 110 KB of scratch: on the heap, not the stack of a worker. */
  g_autofree float *buf = g_new (float, SCRATCH);
  float feat[C3 * (R0 / 4)], hidden[FM_SCAN_GLYPHS_HIDDEN], *a3;
  float z = fm_scan_glyphs_fc2_b[0];
  int ink_end = 0, w, exact;

  g_once (&blank_once, make_blank, NULL);
  /* Most words are a few em long: the convolutions run on the columns up
   * to 20 past the last ink (a multiple of 4), not on all 96. Exactly the
   * whole crop's result: the last columns' outputs that the cut's zero
   * padding touches (the last two of the third layer's) are left out, and
   * the columns beyond, which see nothing but paper, are the blank crop's
   * (blank_a3). */
  for (int r = 0; r < R0; r++)
    for (int c = W0 - 1; c >= ink_end; c--)
      if (glyphs[r * W0 + c])
        {
          ink_end = c + 1;
          break;
        }
  w = MIN (W0, (ink_end + 20 + 3) / 4 * 4);
  exact = w == W0 ? W0 / 4 : w / 4 - 2;
  forward_columns (glyphs, w, buf, &a3);
  for (int c = 0; c < C3; c++)
    for (int y = 0; y < R0 / 4; y++)
      {
        const float *row = a3 + ((gsize) c * (R0 / 4) + y) * (w / 4);
        const float *blank = blank_a3 + ((gsize) c * (R0 / 4) + y) * (W0 / 4);
        float m = row[0];
        for (int x = 1; x < exact; x++)
          m = MAX (m, row[x]);
        for (int x = exact; x < W0 / 4; x++)
          m = MAX (m, blank[x]);
        feat[c * (R0 / 4) + y] = m;
      }
  for (int j = 0; j < FM_SCAN_GLYPHS_HIDDEN; j++)
    {
      float s = fm_scan_glyphs_fc1_b[j];
      for (int k = 0; k < C3 * (R0 / 4); k++)
        s += fm_scan_glyphs_fc1_w[j * C3 * (R0 / 4) + k] * feat[k];
      hidden[j] = MAX (s, 0.0f);
    }
  for (int j = 0; j < FM_SCAN_GLYPHS_HIDDEN; j++)
    z += fm_scan_glyphs_fc2_w[j] * hidden[j];
  return z;
}

void
fm_glyph_net_weights (gboolean single, float *a, float *b, float *c)
{
  const float *w = single ? fm_scan_glyphs_single : fm_scan_glyphs_multi;
  *a = w[0];
  *b = w[1];
  *c = w[2];
}

void
fm_glyph_net_check_crop (guint8 *glyphs)
{
  for (int r = 0; r < R0; r++)
    for (int c = 0; c < W0; c++)
      glyphs[r * W0 + c] = c < 40 ? (guint8) ((r * 31 + c * 17) % 97 * 255 / 96) : 0;
}

float
fm_glyph_net_check_logit (void)
{
  return fm_scan_glyphs_check_logit;
}
