/* engine-inputs.c - the engine's preprocessed model input for many images.
 *
 * Usage: eval-engine-inputs MODEL < requests > replies
 *
 * The engine-vs-PyTorch agreement check (tools/eval/eval.py --agreement) must
 * feed the PyTorch twin exactly the tensor the engine's encoder sees, or a
 * disagreement could come from a re-implemented preprocessing step rather
 * than from the network. So the pixels go through the engine's own
 * fe_preprocess() here and the float image comes back to Python.
 *
 * Requests (stdin, little endian, repeated to EOF):
 *   int32 width, int32 height, int32 channels (1 = gray, 3 = RGB),
 *   float32 em_px_hint (0 = estimate), then width*height*channels uint8 pixels.
 * Replies (stdout), one per request:
 *   int32 status (0 = ok, else fe_status), int32 height, int32 width,
 *   float32 scale, then height*width float32 pixels (ink = 1) when ok.
 * Exit status: 0 on success, 1 on a model load failure or malformed input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fe.h"

static int
read_exact (void *buf, size_t n)
{
  return fread (buf, 1, n, stdin) == n ? 0 : -1;
}

int
main (int argc, char **argv)
{
  FeContextParams params;
  FeContext *ctx = NULL;
  fe_status s;

  if (argc != 2)
    {
      fprintf (stderr, "usage: eval-engine-inputs MODEL < requests > replies\n");
      return 1;
    }
  params = fe_context_default_params ();
  params.device = "cpu";
  params.n_threads = 1;
  s = fe_context_load (argv[1], &params, &ctx);
  if (s != FE_OK)
    {
      fprintf (stderr, "eval-engine-inputs: %s\n", fe_last_error ());
      return 1;
    }

  for (;;)
    {
      int32_t head[3];
      float hint, scale = 0.0f;
      float *pixels = NULL;
      int out_h = 0, out_w = 0;
      size_t n;
      uint8_t *data;
      FeImage image;
      int32_t reply[3];

      n = fread (head, sizeof head[0], 3, stdin);
      if (n == 0 && feof (stdin))
        break;
      if (n != 3 || read_exact (&hint, sizeof hint) != 0 || head[0] <= 0 || head[1] <= 0 ||
          (head[2] != 1 && head[2] != 3) || head[0] > 1 << 16 || head[1] > 1 << 16)
        {
          fprintf (stderr, "eval-engine-inputs: malformed request\n");
          fe_context_free (ctx);
          return 1;
        }
      data = malloc ((size_t) head[0] * head[1] * head[2]);
      if (!data || read_exact (data, (size_t) head[0] * head[1] * head[2]) != 0)
        {
          fprintf (stderr, "eval-engine-inputs: truncated request\n");
          free (data);
          fe_context_free (ctx);
          return 1;
        }
      image = (FeImage) { .data = data, .width = head[0], .height = head[1], .stride = 0,
                          .format = head[2] == 1 ? FE_PIXEL_GRAY8 : FE_PIXEL_RGB8,
                          .em_px_hint = hint };
      s = fe_preprocess (ctx, &image, &pixels, &out_h, &out_w, &scale);
      reply[0] = (int32_t) s;
      reply[1] = s == FE_OK ? out_h : 0;
      reply[2] = s == FE_OK ? out_w : 0;
      fwrite (reply, sizeof reply, 1, stdout);
      fwrite (&scale, sizeof scale, 1, stdout);
      if (s == FE_OK)
        fwrite (pixels, sizeof *pixels, (size_t) out_h * out_w, stdout);
      free (pixels);
      free (data);
    }
  fe_context_free (ctx);
  return fflush (stdout) == 0 ? 0 : 1;
}
