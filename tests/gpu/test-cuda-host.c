/* test-cuda-host.c - the CUDA backend's parts that run on every machine:
 * loading libformulate-cuda.so, the device list's reason when it cannot be
 * used, the CPU still working next to it, the VRAM plan and the
 * FE_CUDA_FAKE_FREE_MB check that sends the device choice to the CPU. */
#include "fe-cuda-loader.h"
#include "fe-model.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The reasons fe_devices_list may give for the "cuda" entry (docs/cuda.md). */
static gboolean
reason_is_documented (const char *reason)
{
  static const char *const prefixes[] = {
    "no CUDA driver", "CUDA libraries not installed", "driver too old for CUDA",
    "no CUDA device", "CUDA backend not built", "compute capability",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (prefixes); i++)
    if (g_str_has_prefix (reason, prefixes[i]))
      return TRUE;
  return FALSE;
}

static void
test_device_list (void)
{
  FeDeviceInfo devs[16];
  size_t n = fe_devices_list (devs, G_N_ELEMENTS (devs));
  g_assert_cmpuint (n, >=, 2);
  g_assert_cmpstr (devs[0].id, ==, "cpu");
  g_assert_true (devs[0].available);

  gsize n_cuda = 0, n_usable = 0;
  for (size_t i = 0; i < MIN (n, G_N_ELEMENTS (devs)); i++)
    {
      if (devs[i].kind != FE_DEVICE_CUDA)
        continue;
      n_cuda++;
      if (devs[i].available)
        {
          n_usable++;
          g_assert_true (g_str_has_prefix (devs[i].id, "cuda:"));
          g_assert_cmpstr (devs[i].name, !=, "");
          g_assert_cmpint (devs[i].compute_major * 10 + devs[i].compute_minor, >=, 75);
          g_assert_cmpuint (devs[i].total_memory, >, 0);
          g_assert_cmpuint (devs[i].free_memory, <=, devs[i].total_memory);
          g_assert_nonnull (strstr (devs[i].detail, "sm_"));
        }
      else
        {
          g_test_message ("%s unavailable: %s", devs[i].id, devs[i].unavailable_reason);
          g_assert_true (reason_is_documented (devs[i].unavailable_reason));
        }
    }
  g_assert_cmpuint (n_cuda, >=, 1);

  /* Told which reason to expect (no libcuda on the build machine, or a broken
   * cuBLAS on LD_LIBRARY_PATH), say exactly that. */
  const char *expect = g_getenv ("FE_TEST_EXPECT_CUDA_REASON");
  if (expect && *expect && n_usable == 0)
    {
      gboolean seen = FALSE;
      for (size_t i = 0; i < MIN (n, G_N_ELEMENTS (devs)); i++)
        if (devs[i].kind == FE_DEVICE_CUDA)
          seen |= g_str_has_prefix (devs[i].unavailable_reason, expect);
      g_assert_true (seen);
    }
  /* Otherwise, built with CUDA, the module itself must load wherever the CUDA
   * libraries are (they are on the build machine): what may be missing is a
   * driver or a GPU. */
#ifdef FE_TEST_HAVE_CUDA_MODULE
  if (!expect || !*expect)
    for (size_t i = 0; i < MIN (n, G_N_ELEMENTS (devs)); i++)
      if (devs[i].kind == FE_DEVICE_CUDA && !devs[i].available)
        {
          g_assert_false (g_str_has_prefix (devs[i].unavailable_reason, "CUDA backend not built"));
          g_assert_false (g_str_has_prefix (devs[i].unavailable_reason,
                                            "CUDA libraries not installed"));
        }
#endif
}

/* Opening cuda:0 without a usable GPU is a clean error naming the reason,
 * and the CPU keeps computing. */
static void
test_cpu_works_without_gpu (void)
{
  FeDevice *cuda = NULL;
  fe_status st = fe_device_open ("cuda:0", &cuda);
  if (st == FE_OK)
    {
      g_assert_true (fe_cuda_is_device (cuda));
      g_test_message ("cuda:0 opened: a GPU is present");
    }
  else
    {
      g_assert_cmpint (st, ==, FE_ERR_DEVICE);
      g_assert_nonnull (strstr (fe_last_error (), "cuda"));
      g_test_message ("opening cuda:0: %s", fe_last_error ());
    }

  FeDevice *cpu = NULL;
  g_assert_cmpint (fe_device_open ("cpu", &cpu), ==, FE_OK);
  g_assert_false (fe_cuda_is_device (cpu));
  FeBuffer *buf = NULL;
  g_assert_cmpint (fe_buffer_new (cpu, 4096, &buf), ==, FE_OK);
  FeTensor x, w, y;
  int64_t xs[2] = { 2, 3 }, ws[2] = { 2, 3 }, ys[2] = { 2, 2 };
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 2, xs, "x", &x), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 2, ws, "w", &w), ==, FE_OK);
  g_assert_cmpint (fe_buffer_tensor (buf, FE_DTYPE_F32, 2, ys, "y", &y), ==, FE_OK);
  const float xv[6] = { 1, 2, 3, 4, 5, 6 }, wv[6] = { 1, 0, 0, 0, 1, 1 };
  g_assert_cmpint (fe_tensor_upload (&x, xv, sizeof xv), ==, FE_OK);
  g_assert_cmpint (fe_tensor_upload (&w, wv, sizeof wv), ==, FE_OK);
  g_assert_cmpint (fe_matmul (&y, &x, &w, NULL, false), ==, FE_OK);
  float yv[4];
  g_assert_cmpint (fe_tensor_download (&y, yv, sizeof yv), ==, FE_OK);
  g_assert_cmpfloat (yv[0], ==, 1);
  g_assert_cmpfloat (yv[1], ==, 5);
  g_assert_cmpfloat (yv[2], ==, 4);
  g_assert_cmpfloat (yv[3], ==, 11);
  fe_buffer_free (buf);

  /* the extras need a CUDA device */
  g_assert_cmpuint (fe_cuda_engine_bytes (cpu), ==, 0);
  g_assert_cmpint (fe_cuda_trim (cpu), ==, FE_ERR_UNSUPPORTED);
  g_assert_cmpint (fe_cuda_graph_begin (cpu), ==, FE_ERR_UNSUPPORTED);
}

/* docs/model.md's v1 defaults, validated the way fe_config_parse does. */
static FeModelConfig
v1_config (void)
{
  FeModelConfig c;
  memset (&c, 0, sizeof c);
  strcpy (c.arch, "formulate-v1");
  c.format_version = 1;
  c.in_channels = 1;
  c.n_cnn = 5;
  const int ch[5] = { 32, 64, 128, 256, 256 };
  const int pool[5][2] = { { 2, 2 }, { 2, 2 }, { 2, 2 }, { 2, 1 }, { 1, 1 } };
  for (int i = 0; i < 5; i++)
    {
      c.cnn_channels[i] = ch[i];
      c.cnn_pool[i][0] = pool[i][0];
      c.cnn_pool[i][1] = pool[i][1];
    }
  c.d_model = 256;
  c.n_heads = 8;
  c.d_ff = 1024;
  c.enc_layers = 2;
  c.dec_layers = 4;
  c.vocab_size = 600;
  c.max_tokens = 256;
  c.tie_embeddings = true;
  c.em_px = 20;
  c.cc_median_em = 0.55f;
  c.max_height = 256;
  c.max_width = 1536;
  c.ln_eps = c.bn_eps = 1e-5f;
  c.pad_id = 0; c.bos_id = 1; c.eos_id = 2; c.unk_id = 3;
  c.height_stride = 16;
  c.width_stride = 8;
  return c;
}

static void
test_vram_plan (void)
{
  FeModelConfig c = v1_config ();
  FeCudaVramPlan f16, f32, beams8, states2;
  g_assert_cmpint (fe_cuda_plan_vram (&c, FE_PRECISION_FP16, 1, 1, &f16), ==, FE_OK);
  g_assert_cmpint (fe_cuda_plan_vram (&c, FE_PRECISION_FP32, 1, 1, &f32), ==, FE_OK);
  g_assert_cmpint (fe_cuda_plan_vram (&c, FE_PRECISION_FP16, 1, 8, &beams8), ==, FE_OK);
  g_assert_cmpint (fe_cuda_plan_vram (&c, FE_PRECISION_FP16, 2, 1, &states2), ==, FE_OK);

  /* Parameters, counted by hand from docs/model.md (BN folded):
   * conv 288+32 + 18432+64 + 73728+128 + 294912+256 + 589824+256 = 977920
   * enc.proj 256*256+256 = 65792
   * enc layer 4*65792 + 2*512 + (262144+1024+262144+256) = 789760, x2 = 1579520
   * enc.norm 512; tok 153600 + pos 65536 = 219136
   * dec layer 8*65792 + 3*512 + 525568 = 1053440, x4 = 4213760
   * dec.norm 512 + out.bias 600 = 1112         total 7057752 */
  g_assert_cmpuint (f16.weights, ==, G_GUINT64_CONSTANT (7057752) * 2);
  g_assert_cmpuint (f32.weights, ==, G_GUINT64_CONSTANT (7057752) * 4);

  /* L = (256/16) * (1536/8) = 3072 tokens; cross K/V 4 layers x 2 x L x 256 f32 */
  guint64 cross = G_GUINT64_CONSTANT (4) * 2 * 3072 * 256 * 4;
  guint64 self1 = G_GUINT64_CONSTANT (4) * 2 * 1 * 256 * 256 * 4;
  g_assert_cmpuint (f16.kv_cache, ==, cross + self1);
  g_assert_cmpuint (beams8.kv_cache, ==, cross + 8 * self1);
  g_assert_cmpuint (states2.kv_cache, ==, 2 * (cross + self1));
  g_assert_cmpuint (states2.activations, ==, 2 * f16.activations);
  g_assert_cmpuint (beams8.activations, >, f16.activations);
  /* im2col of block 1 (32 ch x 9 x 128 x 768 x 2 bytes = 56.6 MiB) dominates */
  guint64 im2col = G_GUINT64_CONSTANT (32) * 9 * 128 * 768 * 2;
  g_assert_cmpuint (f16.workspace, ==, im2col + im2col / 2 + (G_GUINT64_CONSTANT (32) << 20));
  g_assert_cmpuint (f16.total, ==, f16.weights + f16.activations + f16.kv_cache + f16.workspace
                                      + f16.margin);
  g_test_message ("v1 fp16, 1 state, 1 beam: %" G_GUINT64_FORMAT " MiB",
                  f16.total >> 20);

  g_assert_cmpint (fe_cuda_plan_vram (&c, FE_PRECISION_FP16, 0, 1, &f16), ==,
                   FE_ERR_INVALID_ARGUMENT);
  g_assert_cmpint (fe_cuda_plan_vram (NULL, FE_PRECISION_FP16, 1, 1, &f16), ==,
                   FE_ERR_INVALID_ARGUMENT);
}

/* FE_CUDA_FAKE_FREE_MB caps the free memory the check sees. Runs in a
 * subprocess so the variable does not leak into the other tests. */
static void
test_fake_free_check (void)
{
  if (g_test_subprocess ())
    {
      FeModelConfig c = v1_config ();
      FeCudaVramPlan plan;
      g_assert_cmpint (fe_cuda_plan_vram (&c, FE_PRECISION_FP16, 1, 1, &plan), ==, FE_OK);
      const guint64 sixteen_gib = G_GUINT64_CONSTANT (16) << 30;

      g_unsetenv ("FE_CUDA_FAKE_FREE_MB");
      g_assert_cmpuint (fe_cuda_effective_free (sixteen_gib), ==, sixteen_gib);
      g_assert_cmpint (fe_cuda_check_plan ("cuda:0", &plan, sixteen_gib), ==, FE_OK);
      /* too little real memory fails without any fake */
      g_assert_cmpint (fe_cuda_check_plan ("cuda:0", &plan, plan.total - 1), ==,
                       FE_ERR_OUT_OF_MEMORY);

      g_setenv ("FE_CUDA_FAKE_FREE_MB", "10", TRUE);
      g_assert_cmpuint (fe_cuda_effective_free (sixteen_gib), ==, G_GUINT64_CONSTANT (10) << 20);
      /* never raises the real figure */
      g_assert_cmpuint (fe_cuda_effective_free (1 << 20), ==, 1 << 20);
      g_assert_cmpint (fe_cuda_check_plan ("cuda:0", &plan, sixteen_gib), ==,
                       FE_ERR_OUT_OF_MEMORY);
      g_assert_nonnull (strstr (fe_last_error (), "cuda:0: the model needs"));
      g_assert_nonnull (strstr (fe_last_error (), "10 MiB free (FE_CUDA_FAKE_FREE_MB)"));

      g_setenv ("FE_CUDA_FAKE_FREE_MB", "lots", TRUE);
      g_assert_cmpuint (fe_cuda_effective_free (sixteen_gib), ==, sixteen_gib);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* The device-level check against a device that claims 16 GiB free: a fake
 * GPU, so the path the device choice takes on a real one runs here too. */
static fe_status
big_alloc (FeDevice *dev, size_t size, void **out)
{
  *out = g_malloc (size ? size : 1);
  return FE_OK;
}
static void big_free (FeDevice *dev, void *data) { g_free (data); }
static fe_status
big_memory_info (FeDevice *dev, uint64_t *free_bytes, uint64_t *total_bytes)
{
  *free_bytes = G_GUINT64_CONSTANT (16) << 30;
  *total_bytes = G_GUINT64_CONSTANT (24) << 30;
  return FE_OK;
}
static const FeBackend big_backend = {
  .name = "fakegpu",
  .buffer_alloc = big_alloc,
  .buffer_free = big_free,
  .memory_info = big_memory_info,
};

static void
test_device_fits (void)
{
  if (g_test_subprocess ())
    {
      FeDevice dev = { .backend = &big_backend, .index = 0, .id = "fakegpu:0" };
      FeModelConfig c = v1_config ();
      g_unsetenv ("FE_CUDA_FAKE_FREE_MB");
      g_assert_cmpint (fe_cuda_device_fits (&dev, &c, FE_PRECISION_AUTO, 1, 4), ==, FE_OK);
      g_setenv ("FE_CUDA_FAKE_FREE_MB", "10", TRUE);
      g_assert_cmpint (fe_cuda_device_fits (&dev, &c, FE_PRECISION_AUTO, 1, 4), ==,
                       FE_ERR_OUT_OF_MEMORY);
      g_assert_true (g_str_has_prefix (fe_last_error (), "fakegpu:0: the model needs"));
      g_assert_false (fe_cuda_is_device (&dev));
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

/* The engine's device choice: "auto" on a GPU that has too little free memory
 * for the model loads on the CPU instead and says why. The GPU here is a fake
 * CUDA-kind module computing with the CPU backend and claiming 16 GiB free;
 * FE_CUDA_FAKE_FREE_MB=10 then makes the fit check fail, as it would on a
 * real GPU. */
static FeBackend fake_gpu_backend;
static FeDevice fake_gpu_device;

static size_t
fake_gpu_list (FeDeviceInfo *out, size_t max, char *reason, size_t reason_len)
{
  if (out && max > 0)
    {
      memset (out, 0, sizeof *out);
      g_strlcpy (out->id, "fakegpu:0", sizeof out->id);
      g_strlcpy (out->name, "fake GPU", sizeof out->name);
      out->kind = FE_DEVICE_CUDA;
      out->available = TRUE;
      out->total_memory = G_GUINT64_CONSTANT (24) << 30;
      out->free_memory = G_GUINT64_CONSTANT (16) << 30;
      out->compute_major = 9;
    }
  return 1;
}

static fe_status
fake_gpu_open (int index, FeDevice **out)
{
  *out = &fake_gpu_device;
  return FE_OK;
}

static const FeBackendModule fake_gpu_module = {
  .abi_version = FE_BACKEND_ABI_VERSION,
  .name = "fakegpu",
  .kind = FE_DEVICE_CUDA,
  .list_devices = fake_gpu_list,
  .open_device = fake_gpu_open,
};

static void
test_auto_falls_back (void)
{
  g_autofree char *model = g_build_filename (g_getenv ("FE_SOURCE_ROOT"), "tests", "fixtures",
                                             "model", "tiny.safetensors", NULL);
  if (!g_file_test (model, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("tests/fixtures/model/tiny.safetensors is missing");
      return;
    }
  if (g_test_subprocess ())
    {
      FeDevice *cpu = fe_cpu_device ();
      fake_gpu_backend = *cpu->backend;
      fake_gpu_backend.name = "fakegpu";
      fake_gpu_backend.memory_info = big_memory_info;
      fake_gpu_device = *cpu;
      fake_gpu_device.backend = &fake_gpu_backend;
      g_strlcpy (fake_gpu_device.id, "fakegpu:0", sizeof fake_gpu_device.id);
      g_assert_cmpint (fe_backend_register_module (&fake_gpu_module), ==, FE_OK);

      const char *fake = g_getenv ("FE_TEST_FAKE_FREE");   /* set per run below */
      if (fake)
        g_setenv ("FE_CUDA_FAKE_FREE_MB", fake, TRUE);
      else
        g_unsetenv ("FE_CUDA_FAKE_FREE_MB");

      FeContextParams cp = fe_context_default_params ();
      FeContext *ctx = NULL;
      FeRuntimeInfo ri;
      fe_status st = fe_context_load (model, &cp, &ctx);
      if (st != FE_OK)
        g_error ("fe_context_load (auto): %s", fe_last_error ());
      g_assert_cmpint (fe_context_runtime_info (ctx, &ri), ==, FE_OK);
      if (fake)
        {
          g_assert_cmpstr (ri.device.id, ==, "cpu");
          g_assert_true (ri.fell_back);
          g_assert_nonnull (strstr (ri.fallback_reason, "fakegpu:0: the model needs"));
          g_assert_nonnull (strstr (ri.fallback_reason, "10 MiB free (FE_CUDA_FAKE_FREE_MB)"));
        }
      else
        {
          g_assert_cmpstr (ri.device.id, ==, "fakegpu:0");
          g_assert_false (ri.fell_back);
        }
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

/* The half-precision weights a GPU context gets (fe_model_load_as), checked on
 * the CPU device where the buffers are plain memory: matrices f16 / bf16 and
 * rounded from the file's values, biases and norms f32. */
static void
test_half_weights (void)
{
  g_autofree char *path = g_build_filename (g_getenv ("FE_SOURCE_ROOT"), "tests", "fixtures",
                                            "model", "tiny.safetensors", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("tests/fixtures/model/tiny.safetensors is missing");
      return;
    }
  FeWeightFile *wf = NULL;
  g_assert_cmpint (fe_weights_open (path, NULL, &wf), ==, FE_OK);
  const FeWeightEntry *e = fe_weights_find (wf, "dec.tok_emb.weight");
  g_assert_nonnull (e);
  float *file_values = NULL;
  g_assert_cmpint (fe_weights_to_f32 (e, &file_values), ==, FE_OK);

  FeModel f32, half[2];
  const fe_dtype dts[2] = { FE_DTYPE_F16, FE_DTYPE_BF16 };
  g_assert_cmpint (fe_model_load_as (&f32, wf, fe_cpu_device (), FE_DTYPE_F32), ==, FE_OK);
  for (int h = 0; h < 2; h++)
    {
      FeModel *m = &half[h];
      g_assert_cmpint (fe_model_load_as (m, wf, fe_cpu_device (), dts[h]), ==, FE_OK);
      g_assert_cmpint (m->conv_weight[0].dtype, ==, dts[h]);
      g_assert_cmpint (m->tok_emb.dtype, ==, dts[h]);
      g_assert_cmpint (m->pos_emb.dtype, ==, dts[h]);
      g_assert_cmpint (m->dec[0].self_attn.q.weight.dtype, ==, dts[h]);
      g_assert_cmpint (m->conv_bias[0].dtype, ==, FE_DTYPE_F32);
      g_assert_cmpint (m->dec[0].self_attn.q.bias.dtype, ==, FE_DTYPE_F32);
      g_assert_cmpint (m->dec_norm.weight.dtype, ==, FE_DTYPE_F32);
      g_assert_cmpuint (m->n_parameters, ==, f32.n_parameters);
      g_assert_cmpuint (m->weights_bytes, <, f32.weights_bytes * 6 / 10);
      gsize n = (gsize) fe_tensor_nelements (&m->tok_emb);
      uint16_t *got = g_new (uint16_t, n);
      g_assert_cmpint (fe_tensor_download (&m->tok_emb, got, n * 2), ==, FE_OK);
      for (gsize i = 0; i < n; i++)
        g_assert_cmpuint (got[i], ==, dts[h] == FE_DTYPE_F16 ? fe_f32_to_f16 (file_values[i])
                                                             : fe_f32_to_bf16 (file_values[i]));
      g_free (got);
      fe_model_free (m);
    }
  g_assert_cmpint (fe_model_load_as (&half[0], wf, fe_cpu_device (), FE_DTYPE_I8), ==,
                   FE_ERR_INVALID_ARGUMENT);
  fe_model_free (&f32);
  free (file_values);
  fe_weights_close (wf);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gpu/host/device-list", test_device_list);
  g_test_add_func ("/gpu/host/cpu-works-without-gpu", test_cpu_works_without_gpu);
  g_test_add_func ("/gpu/host/vram-plan", test_vram_plan);
  g_test_add_func ("/gpu/host/fake-free-check", test_fake_free_check);
  g_test_add_func ("/gpu/host/device-fits", test_device_fits);
  g_test_add_func ("/gpu/host/auto-falls-back", test_auto_falls_back);
  g_test_add_func ("/gpu/host/half-weights", test_half_weights);
  return g_test_run ();
}
