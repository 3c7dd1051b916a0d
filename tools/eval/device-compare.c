/* device-compare.c - the same images recognised on the CPU and on a GPU.
 *
 * Usage: eval-device-compare MODEL DEVICE [MAX_BATCH] < requests > replies
 *
 * Issue 15's GPU proof asks for "a recognition of the test split on cuda:0
 * compared with the CPU output, and the VRAM figures before load, after load
 * and after freeing". The app and formulate-cli cannot run on the lent GPU
 * machine (no Poppler or GTK there), so this engine-only helper does it, fed
 * by tools/eval/device_compare.py, which reads a dataset split and scores both
 * readings against the truth.
 *
 * Requests (stdin, little endian, repeated to EOF), as eval-engine-inputs:
 *   int32 width, int32 height, int32 channels (1 = gray, 3 = RGB),
 *   float32 em_px_hint (0 = estimate), then width*height*channels uint8 pixels.
 * Replies (stdout): one JSON object per image,
 *   {"i": k, "cpu": [ids], "gpu": [ids], "cpu_conf": c, "gpu_conf": c}
 * then one summary object {"summary": {...}} with the devices, the VRAM
 * figures, the wall times of both runs and the first-formula latency.
 * Exit status: 0 when both devices ran every image, 1 otherwise (the reason
 * on stderr). The CPU runs with one thread per core, the GPU with DEVICE
 * forced (no fall-back: a GPU failure is the answer, not a CPU result).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fe.h"

typedef struct {
  FeImage *images;
  uint8_t **pixels;
  size_t n, cap;
} Requests;

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
read_requests (Requests *r)
{
  for (;;)
    {
      int32_t head[3];
      float hint;
      size_t n = fread (head, sizeof head[0], 3, stdin), bytes;
      uint8_t *data;

      if (n == 0 && feof (stdin))
        return 0;
      if (n != 3 || fread (&hint, sizeof hint, 1, stdin) != 1 || head[0] <= 0 || head[1] <= 0 ||
          (head[2] != 1 && head[2] != 3) || head[0] > 1 << 16 || head[1] > 1 << 16)
        {
          fprintf (stderr, "eval-device-compare: malformed request %zu\n", r->n);
          return -1;
        }
      bytes = (size_t) head[0] * head[1] * head[2];
      data = malloc (bytes);
      if (!data || fread (data, 1, bytes, stdin) != bytes)
        {
          fprintf (stderr, "eval-device-compare: truncated request %zu\n", r->n);
          free (data);
          return -1;
        }
      if (r->n == r->cap)
        {
          size_t cap = r->cap ? 2 * r->cap : 256;
          FeImage *images = realloc (r->images, cap * sizeof *images);
          uint8_t **pixels;
          if (!images)
            {
              free (data);
              return -1;
            }
          r->images = images;
          pixels = realloc (r->pixels, cap * sizeof *pixels);
          if (!pixels)
            {
              free (data);
              return -1;
            }
          r->pixels = pixels;
          r->cap = cap;
        }
      r->pixels[r->n] = data;
      r->images[r->n] = (FeImage) { .data = data, .width = head[0], .height = head[1], .stride = 0,
                                    .format = head[2] == 1 ? FE_PIXEL_GRAY8 : FE_PIXEL_RGB8,
                                    .em_px_hint = hint };
      r->n++;
    }
}

/* Free memory of the device called id, as fe_devices_list reports it now. */
static uint64_t
device_free_memory (const char *id, char *name, size_t name_size)
{
  FeDeviceInfo devices[16];
  size_t n = fe_devices_list (devices, 16);
  for (size_t i = 0; i < n && i < 16; i++)
    if (strcmp (devices[i].id, id) == 0)
      {
        if (name)
          snprintf (name, name_size, "%s", devices[i].name);
        return devices[i].available ? devices[i].free_memory : 0;
      }
  return 0;
}

/* Loads MODEL on device, recognises every image (max_batch images decoded
 * together), keeps the results; *first_ms: one image's wall time right after
 * the load (the first formula a person waits for). */
static int
run_device (const char *model, const char *device, int max_batch, const Requests *r, FeResult *results,
            double *load_ms, double *first_ms, double *run_ms, FeRuntimeInfo *info)
{
  FeContextParams params = fe_context_default_params ();
  FeRecognizeParams rp = fe_recognize_default_params ();
  FeContext *ctx = NULL;
  FeState *state = NULL;
  FeResult first;
  double t0 = now_ms ();
  fe_status s;

  params.device = device;
  s = fe_context_load (model, &params, &ctx);
  if (s != FE_OK)
    {
      fprintf (stderr, "eval-device-compare: loading on %s: %s\n", device, fe_last_error ());
      return -1;
    }
  s = fe_state_new (ctx, &state);
  if (s != FE_OK)
    goto fail;
  *load_ms = now_ms () - t0;
  if (fe_context_runtime_info (ctx, info) != FE_OK)
    memset (info, 0, sizeof *info);
  rp.max_batch = max_batch;
  memset (&first, 0, sizeof first);
  t0 = now_ms ();
  s = fe_recognize (state, r->images, 1, &rp, &first);
  *first_ms = now_ms () - t0;
  fe_result_clear (&first);
  if (s != FE_OK)
    goto fail;
  t0 = now_ms ();
  s = fe_recognize (state, r->images, r->n, &rp, results);
  *run_ms = now_ms () - t0;
  if (s != FE_OK)
    goto fail;
  fe_state_free (state);
  fe_context_free (ctx);
  return 0;

fail:
  fprintf (stderr, "eval-device-compare: recognising on %s: %s\n", device, fe_last_error ());
  fe_state_free (state);
  fe_context_free (ctx);
  return -1;
}

static void
print_ids (const FeResult *res)
{
  putchar ('[');
  for (int k = 0; k < res->n_tokens; k++)
    printf ("%s%d", k ? "," : "", res->token_ids[k]);
  putchar (']');
}

int
main (int argc, char **argv)
{
  Requests r = { 0 };
  FeResult *cpu = NULL, *gpu = NULL;
  FeRuntimeInfo cpu_info, gpu_info;
  double cpu_load = 0, cpu_first = 0, cpu_ms = 0, gpu_load = 0, gpu_first = 0, gpu_ms = 0;
  uint64_t free_before, free_after;
  char gpu_name[128] = "";
  int max_batch = 32, status = 1;
  size_t same = 0;

  if (argc < 3 || argc > 4)
    {
      fprintf (stderr, "usage: eval-device-compare MODEL DEVICE [MAX_BATCH] < requests > replies\n");
      return 1;
    }
  if (argc == 4)
    max_batch = atoi (argv[3]);
  if (read_requests (&r) != 0 || r.n == 0)
    {
      fprintf (stderr, "eval-device-compare: no images\n");
      goto out;
    }
  cpu = calloc (r.n, sizeof *cpu);
  gpu = calloc (r.n, sizeof *gpu);
  if (!cpu || !gpu)
    goto out;

  if (run_device (argv[1], "cpu", max_batch, &r, cpu, &cpu_load, &cpu_first, &cpu_ms, &cpu_info) != 0)
    goto out;
  free_before = device_free_memory (argv[2], gpu_name, sizeof gpu_name);
  if (run_device (argv[1], argv[2], max_batch, &r, gpu, &gpu_load, &gpu_first, &gpu_ms, &gpu_info) != 0)
    goto out;
  free_after = device_free_memory (argv[2], NULL, 0);

  for (size_t i = 0; i < r.n; i++)
    {
      bool equal = cpu[i].n_tokens == gpu[i].n_tokens &&
                   memcmp (cpu[i].token_ids, gpu[i].token_ids, cpu[i].n_tokens * sizeof (int)) == 0;
      same += equal;
      printf ("{\"i\": %zu, \"cpu\": ", i);
      print_ids (&cpu[i]);
      printf (", \"gpu\": ");
      print_ids (&gpu[i]);
      printf (", \"cpu_conf\": %.4f, \"gpu_conf\": %.4f}\n", cpu[i].confidence, gpu[i].confidence);
    }
  printf ("{\"summary\": {\"images\": %zu, \"token_identical\": %zu, \"max_batch\": %d, "
          "\"cpu\": {\"device\": \"%s\", \"gemm\": \"%s\", \"load_ms\": %.1f, \"first_ms\": %.2f, "
          "\"run_ms\": %.1f, \"images_per_s\": %.2f}, "
          "\"gpu\": {\"device\": \"%s\", \"name\": \"%s\", \"precision\": %d, \"load_ms\": %.1f, "
          "\"first_ms\": %.2f, \"run_ms\": %.1f, \"images_per_s\": %.2f, "
          "\"weights_bytes\": %" PRIu64 ", \"engine_bytes\": %" PRIu64 ", "
          "\"free_before_load\": %" PRIu64 ", \"free_after_load\": %" PRIu64 ", "
          "\"free_after_unload\": %" PRIu64 "}}}\n",
          r.n, same, max_batch, cpu_info.device.id, cpu_info.gemm_path, cpu_load, cpu_first, cpu_ms,
          r.n / (cpu_ms / 1e3), argv[2], gpu_name, (int) gpu_info.precision, gpu_load, gpu_first, gpu_ms,
          r.n / (gpu_ms / 1e3), gpu_info.weights_bytes, gpu_info.engine_bytes, free_before,
          gpu_info.device_free, free_after);
  status = fflush (stdout) == 0 ? 0 : 1;

out:
  for (size_t i = 0; i < r.n; i++)
    {
      if (cpu)
        fe_result_clear (&cpu[i]);
      if (gpu)
        fe_result_clear (&gpu[i]);
      free (r.pixels[i]);
    }
  free (cpu);
  free (gpu);
  free (r.images);
  free (r.pixels);
  return status;
}
