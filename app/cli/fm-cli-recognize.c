/* fm-cli-recognize.c - `formulate-cli recognize` and `--list-devices`. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fe.h"
#include "fm-cli.h"
#include "fm-png.h"
#include "fm-paths.h"


/* Images decoded at once (lazily, batch by batch): at most this many, and
 * at most this many pixels together unless one image alone is larger. */
#define FM_DECODE_BATCH 32
#define FM_DECODE_PIXELS (64LL * 1024 * 1024)

static volatile sig_atomic_t fm_interrupted;

static void
fm_on_sigint (int sig)
{
  (void) sig;
  fm_interrupted = 1;
}

static bool
fm_should_abort (void *user_data)
{
  (void) user_data;
  return fm_interrupted != 0;
}

static double
fm_now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0: no
 * overlong forms, surrogates or code points past U+10FFFF. */
static int
fm_utf8_sequence_length (const unsigned char *p)
{
  int n;
  unsigned int cp;

  if (p[0] >= 0xC2 && p[0] <= 0xDF)
    n = 2, cp = p[0] & 0x1F;
  else if (p[0] >= 0xE0 && p[0] <= 0xEF)
    n = 3, cp = p[0] & 0x0F;
  else if (p[0] >= 0xF0 && p[0] <= 0xF4)
    n = 4, cp = p[0] & 0x07;
  else
    return 0;
  for (int i = 1; i < n; i++)
    {
      if ((p[i] & 0xC0) != 0x80)  /* also stops at the terminating NUL */
        return 0;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

/* JSON string with the escapes RFC 8259 requires. */
static void
fm_json_string (FILE *out, const char *s)
{
  fputc ('"', out);
  for (const unsigned char *p = (const unsigned char *) (s ? s : ""); *p; p++)
    {
      if (*p >= 0x80)
        {
          /* File names need not be UTF-8; JSON must be: a byte that does not
           * start a valid sequence becomes U+FFFD. */
          int n = fm_utf8_sequence_length (p);
          if (n == 0)
            fputs ("\\ufffd", out);
          else
            {
              fwrite (p, 1, (size_t) n, out);
              p += n - 1;
            }
          continue;
        }
      switch (*p)
        {
        case '"': fputs ("\\\"", out); break;
        case '\\': fputs ("\\\\", out); break;
        case '\n': fputs ("\\n", out); break;
        case '\r': fputs ("\\r", out); break;
        case '\t': fputs ("\\t", out); break;
        default:
          if (*p < 0x20)
            fprintf (out, "\\u%04x", *p);
          else
            fputc (*p, out);
        }
    }
  fputc ('"', out);
}

static bool
fm_parse_int (const char *s, int min, int max, int *out)
{
  char *end;
  errno = 0;
  long v = strtol (s, &end, 10);
  if (errno || end == s || *end || v < min || v > max)
    return false;
  *out = (int) v;
  return true;
}

static const char *
fm_precision_name (fe_precision p)
{
  switch (p)
    {
    case FE_PRECISION_FP32: return "fp32";
    case FE_PRECISION_FP16: return "fp16";
    case FE_PRECISION_BF16: return "bf16";
    case FE_PRECISION_AUTO: return "auto";
    default: return "?";
    }
}

static void
fm_recognize_usage (FILE *out)
{
  fprintf (out,
           "Usage: formulate-cli recognize IMAGE.png... [--model FILE] [--device auto|cpu|cuda:N]\n"
           "                               [--beam N] [--threads N] [--max-tokens N] [--max-repeats N]\n"
           "                               [--em-px PX] [--scale-candidates N] [--batch N] [--json]\n"
           "                               [--symbols \"x ^ 2 + y\" | --symbols-file FILE]\n"
           "                               [--symbol-penalty P|mask] [--eos-penalty P]\n"
           "                               [--precision auto|fp32|fp16|bf16]\n");
}

/* Glyph constraints (FeSymbolConstraint, docs/cli.md): a line of LaTeX
 * tokens separated by white space becomes one image's symbol list. The
 * strings point into `line`, which must outlive the constraint. */
static bool
fm_split_symbols (char *line, FeSymbolConstraint *out)
{
  int cap = 0, n = 0;
  const char **list = NULL;
  for (char *tok = strtok (line, " \t\r\n"); tok; tok = strtok (NULL, " \t\r\n"))
    {
      if (n == cap)
        {
          cap = cap ? 2 * cap : 16;
          const char **grown = realloc (list, (size_t) cap * sizeof *list);
          if (!grown)
            {
              free (list);
              return false;
            }
          list = grown;
        }
      list[n++] = tok;
    }
  out->symbols = list;
  out->n_symbols = n;
  return true;
}

/* A penalty: a non-negative number, or "mask" / "inf" for a hard mask. */
static bool
fm_parse_penalty (const char *s, float *out)
{
  if (strcmp (s, "mask") == 0 || strcmp (s, "inf") == 0)
    {
      *out = INFINITY;
      return true;
    }
  char *end;
  errno = 0;
  double v = strtod (s, &end);
  if (errno || end == s || *end || !(v >= 0.0))
    return false;
  *out = (float) v;
  return true;
}

/* What `recognize` was asked for on its command line. */
typedef struct {
  const char *model, *device;
  fe_precision precision;  /* FE_PRECISION_AUTO (0): the engine's choice */
  int beam, threads, max_tokens, max_repeats;
  /* Glyph size of every image in pixels when the caller knows it (renders of a
   * known font size, as the PDF pipeline passes it); 0 = the engine estimates it. */
  int em_px;
  /* -1 = the engine's defaults (fe_recognize_default_params) */
  int scale_candidates, max_batch;
  bool json;
  /* glyph constraints: one list for every image, or a file with one line per image */
  const char *symbols, *symbols_file;
  float symbol_penalty, eos_penalty;  /* < 0: the engine's defaults */
} FmRecognizeOptions;

/* An integer option's value, or a one-line message ("--beam wants ...") and false. */
static bool
fm_int_option (const char *arg, int min, int max, int *out, const char *wants)
{
  if (fm_parse_int (arg, min, max, out))
    return true;
  fprintf (stderr, "formulate-cli: %s, not '%s'\n", wants, arg);
  return false;
}

/* Phase 1: the options. Returns -1 to go on, else the exit code (--help, a
 * bad option). */
static int
fm_recognize_parse (int argc, char **argv, FmRecognizeOptions *o)
{
  static const struct option options[] = {
    { "model", required_argument, NULL, 'm' },
    { "device", required_argument, NULL, 'd' },
    { "beam", required_argument, NULL, 'b' },
    { "threads", required_argument, NULL, 't' },
    { "max-tokens", required_argument, NULL, 'n' },
    { "max-repeats", required_argument, NULL, 'r' },
    { "em-px", required_argument, NULL, 'e' },
    { "scale-candidates", required_argument, NULL, 's' },
    { "batch", required_argument, NULL, 'B' },
    { "json", no_argument, NULL, 'j' },
    { "symbols", required_argument, NULL, 'S' },
    { "symbols-file", required_argument, NULL, 'F' },
    { "symbol-penalty", required_argument, NULL, 'P' },
    { "eos-penalty", required_argument, NULL, 'E' },
    { "precision", required_argument, NULL, 'p' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  *o = (FmRecognizeOptions) { .device = "auto", .beam = 1, .max_repeats = -1,
                              .scale_candidates = -1, .max_batch = -1,
                              .symbol_penalty = -1.0f, .eos_penalty = -1.0f };
  opterr = 0;
  optind = 1;
  while ((c = getopt_long (argc, argv, "m:d:b:t:n:r:e:s:B:jh", options, NULL)) != -1)
    {
      bool ok = true;
      switch (c)
        {
        case 'm': o->model = optarg; break;
        case 'd': o->device = optarg; break;
        case 'b':
          ok = fm_int_option (optarg, 1, 32, &o->beam, "--beam wants a number from 1 to 32");
          break;
        case 't':
          ok = fm_int_option (optarg, 0, 1024, &o->threads, "--threads wants a number from 0 to 1024");
          break;
        case 'n':
          ok = fm_int_option (optarg, 0, 100000, &o->max_tokens, "--max-tokens wants a number");
          break;
        case 'r':
          ok = fm_int_option (optarg, 0, 100000, &o->max_repeats, "--max-repeats wants a number (0 = off)");
          break;
        case 'e':
          ok = fm_int_option (optarg, 0, 1000, &o->em_px,
                              "--em-px wants a number of pixels (0 = estimate)");
          break;
        case 's':
          ok = fm_int_option (optarg, 1, 9, &o->scale_candidates,
                              "--scale-candidates wants a number from 1 to 9");
          break;
        case 'B':
          ok = fm_int_option (optarg, 1, 32, &o->max_batch, "--batch wants a number from 1 to 32");
          break;
        case 'j': o->json = true; break;
        case 'S': o->symbols = optarg; break;
        case 'F': o->symbols_file = optarg; break;
        case 'P':
          if (!fm_parse_penalty (optarg, &o->symbol_penalty))
            {
              fprintf (stderr, "formulate-cli: --symbol-penalty wants a number >= 0 or 'mask', not '%s'\n", optarg);
              return FM_EXIT_USAGE;
            }
          break;
        case 'E':
          if (!fm_parse_penalty (optarg, &o->eos_penalty))
            {
              fprintf (stderr, "formulate-cli: --eos-penalty wants a number >= 0 or 'inf', not '%s'\n", optarg);
              return FM_EXIT_USAGE;
            }
          break;
        case 'p':
          if (strcmp (optarg, "auto") == 0)
            o->precision = FE_PRECISION_AUTO;
          else if (strcmp (optarg, "fp32") == 0)
            o->precision = FE_PRECISION_FP32;
          else if (strcmp (optarg, "fp16") == 0)
            o->precision = FE_PRECISION_FP16;
          else if (strcmp (optarg, "bf16") == 0)
            o->precision = FE_PRECISION_BF16;
          else
            {
              fprintf (stderr, "formulate-cli: --precision wants auto, fp32, fp16 or bf16, not '%s'\n", optarg);
              return FM_EXIT_USAGE;
            }
          break;
        case 'h':
          fm_recognize_usage (stdout);
          return FM_EXIT_OK;
        default:
          fprintf (stderr, "formulate-cli recognize: unknown or incomplete option '%s'\n",
                   argv[optind - 1]);
          return FM_EXIT_USAGE;
        }
      if (!ok)
        return FM_EXIT_USAGE;
    }
  if (argc - optind < 1)
    {
      fprintf (stderr, "formulate-cli recognize: no image given (formulate-cli recognize IMAGE.png)\n");
      return FM_EXIT_USAGE;
    }
  if (o->symbols && o->symbols_file)
    {
      fprintf (stderr, "formulate-cli recognize: give --symbols or --symbols-file, not both\n");
      return FM_EXIT_USAGE;
    }
  return -1;
}

/* Phase 2: each image's glyph constraint, from --symbols (the same for all)
 * or one line of --symbols-file per image. lines[] receives the strings the
 * constraints point into, *n_lines how many; the caller frees both. */
static int
fm_recognize_read_symbols (const FmRecognizeOptions *o, int n_images,
                           FeSymbolConstraint *constraints, char **lines, int *n_lines)
{
  FILE *f = NULL;

  if (o->symbols_file && !(f = fopen (o->symbols_file, "r")))
    {
      fprintf (stderr, "formulate-cli: %s: %s\n", o->symbols_file, strerror (errno));
      return FM_EXIT_INPUT;
    }
  for (int i = 0; i < n_images; i++)
    {
      char *line = NULL;
      size_t cap = 0;
      if (f)
        {
          if (getline (&line, &cap, f) < 0)
            {
              free (line);
              fprintf (stderr, "formulate-cli: %s has fewer lines than the %d images\n",
                       o->symbols_file, n_images);
              fclose (f);
              return FM_EXIT_USAGE;
            }
        }
      else
        line = strdup (o->symbols);
      lines[(*n_lines)++] = line;
      if (!line || !fm_split_symbols (line, &constraints[i]))
        {
          fprintf (stderr, "formulate-cli: out of memory\n");
          if (f)
            fclose (f);
          return FM_EXIT_FAILURE;
        }
    }
  if (f)
    fclose (f);
  return FM_EXIT_OK;
}

/* Phase 4 (--json): everything before the results: model, device, memory,
 * calibration. */
static void
fm_recognize_json_header (FILE *o, FeContext *ctx, const char *model, int beam, double load_ms)
{
  FeRuntimeInfo ri;
  const FeModelInfo *mi = fe_context_model_info (ctx);

  fe_context_runtime_info (ctx, &ri);
  fputs ("{\n  \"model\": ", o);
  fm_json_string (o, model);
  fprintf (o, ",\n  \"model_parameters\": %llu,\n  \"device\": {\"id\": ",
           (unsigned long long) mi->n_parameters);
  fm_json_string (o, ri.device.id);
  fputs (", \"name\": ", o);
  fm_json_string (o, ri.device.name);
  fprintf (o, ", \"precision\": \"%s\", \"fell_back\": %s, \"fallback_reason\": ",
           fm_precision_name (ri.precision), ri.fell_back ? "true" : "false");
  fm_json_string (o, ri.fell_back ? ri.fallback_reason : "");
  fputs ("},\n  \"gemm_path\": ", o);
  fm_json_string (o, ri.gemm_path);
  fprintf (o, ",\n  \"weights_bytes\": %llu,\n  \"engine_bytes\": %llu",
           (unsigned long long) ri.weights_bytes, (unsigned long long) ri.engine_bytes);
  fprintf (o, ",\n  \"confidence_calibration\": ");
  if (mi->calibrated)
    {
      fputs ("{\"target\": ", o);
      fm_json_string (o, mi->calibration_target);
      fprintf (o, ", \"review_threshold\": %.4f}", mi->review_threshold);
    }
  else
    fputs ("null", o);
  fprintf (o, ",\n  \"beam\": %d,\n  \"load_ms\": %.3f,\n  \"results\": [", beam, load_ms);
}

/* Phase 5: one image's entry of --json's results (r NULL: a blank image). */
static void
fm_recognize_json_result (FILE *o, FeContext *ctx, const char *file, const FeResult *r, bool first)
{
  fputs (first ? "\n    {\"file\": " : ",\n    {\"file\": ", o);
  fm_json_string (o, file);
  if (!r)
    {
      fputs (", \"latex\": null, \"error\": \"no ink in image\"}", o);
      return;
    }
  fputs (", \"latex\": ", o);
  fm_json_string (o, r->latex);
  /* The features behind the confidence: tools/eval/calibrate.py
   * fits the model file's calibration on them. */
  fprintf (o, ", \"confidence\": {\"value\": %.6f, \"calibrated\": %s, \"features\": {",
           r->confidence, fe_context_model_info (ctx)->calibrated ? "true" : "false");
  for (int f = 0; f < FE_CONFIDENCE_N_FEATURES; f++)
    fprintf (o, "%s\"%s\": %.6f", f ? ", " : "", fe_confidence_feature_name (f),
             r->confidence_features[f]);
  fprintf (o,
           "}, \"mean\": %.6f, \"min\": %.6f}, \"tokens\": %d,"
           " \"hit_length_limit\": %s, \"repetition_stopped\": %s,"
           " \"unknown_symbols\": %d,"
           " \"input\": {\"width\": %d, \"height\": %d, \"scale\": %.6f},"
           " \"timings_ms\": {\"preprocess\": %.3f, \"encoder\": %.3f, \"decoder\": %.3f},"
           " \"cpu_ms\": {\"preprocess\": %.3f, \"encoder\": %.3f, \"decoder\": %.3f}}",
           r->confidence_mean, r->confidence_min, r->n_tokens,
           r->hit_length_limit ? "true" : "false", r->repetition_stopped ? "true" : "false",
           r->unknown_symbols, r->input_width, r->input_height, r->scale, r->preprocess_ms, r->encoder_ms,
           r->decoder_ms, r->preprocess_cpu_ms, r->encoder_cpu_ms, r->decoder_cpu_ms);
}

/* The state of a run across batches. */
typedef struct {
  const FmRecognizeOptions *opt;
  char **files;                     /* the images' paths                      */
  FeContext *ctx;
  FeState *st;
  FeRecognizeParams rp;
  FmPngImage *pngs;
  FeImage *images;
  FeResult *results;
  FeSymbolConstraint *constraints;  /* per image, or NULL                     */
  int blank;                        /* images without ink so far              */
} FmRecognizeRun;

/* Phase 5: images[first..end): decodes them (blank ones are answered without
 * the model), recognises the rest in one call, prints each. */
static int
fm_recognize_batch (FmRecognizeRun *run, int first, int end)
{
  /* each batch's images' constraints, in the order of images[] */
  FeSymbolConstraint batch_constraints[FM_DECODE_BATCH];
  int rc = FM_EXIT_OK, n_ink = 0;
  int *which = calloc ((size_t) (end - first), sizeof *which);
  FILE *o = stdout;

  if (!which)
    {
      fprintf (stderr, "formulate-cli: out of memory\n");
      return FM_EXIT_FAILURE;
    }
  for (int i = first; i < end && rc == FM_EXIT_OK; i++)
    {
      char err[512];
      FmPngImage *png = &run->pngs[i];
      if (fm_png_load (run->files[i], png, err, sizeof err) != 0)
        {
          fprintf (stderr, "formulate-cli: %s\n", err);
          rc = FM_EXIT_INPUT;
          break;
        }
      if (!fm_png_has_ink (png))
        {
          fm_png_clear (png);
          continue;
        }
      run->images[n_ink] = (FeImage) { .data = png->data, .width = png->width,
                                       .height = png->height, .stride = png->stride,
                                       .format = png->format, .em_px_hint = (float) run->opt->em_px };
      if (run->constraints)
        batch_constraints[n_ink] = run->constraints[i];
      which[n_ink++] = i;
    }
  if (rc == FM_EXIT_OK && n_ink > 0)
    {
      fe_status s;
      run->rp.constraints = run->constraints ? batch_constraints : NULL;
      s = fe_recognize (run->st, run->images, (size_t) n_ink, &run->rp, run->results);
      if (s == FE_ERR_ABORTED)
        {
          fprintf (stderr, "formulate-cli: interrupted\n");
          rc = FM_EXIT_INTERRUPTED;
        }
      else if (s != FE_OK)
        {
          fprintf (stderr, "formulate-cli: %s\n", fe_last_error ());
          rc = s == FE_ERR_INVALID_ARGUMENT ? FM_EXIT_INPUT : FM_EXIT_FAILURE;
        }
    }
  for (int i = first, k = 0; i < end && rc == FM_EXIT_OK; i++)
    {
      const FeResult *r = k < n_ink && which[k] == i ? &run->results[k++] : NULL;
      if (r && r->unknown_symbols > 0)
        fprintf (stderr, "formulate-cli: %s: %d of the --symbols are no symbol of the model's vocabulary; ignored\n",
                 run->files[i], r->unknown_symbols);
      if (!r)
        {
          /* Said on stderr; stdout keeps one line (or entry) per image. */
          fprintf (stderr, "formulate-cli: %s: no ink in image\n", run->files[i]);
          run->blank++;
        }
      if (!run->opt->json)
        puts (r ? r->latex : "");
      else
        fm_recognize_json_result (o, run->ctx, run->files[i], r, i == 0);
    }
  for (int k = 0; k < n_ink; k++)
    fe_result_clear (&run->results[k]);
  for (int i = first; i < end; i++)
    fm_png_clear (&run->pngs[i]);
  free (which);
  return rc;
}

int
fm_cli_recognize (int argc, char **argv)
{
  FmRecognizeOptions opt;
  FmRecognizeRun run = { .opt = &opt };
  int rc = fm_recognize_parse (argc, argv, &opt);
  if (rc >= 0)
    return rc;
  rc = FM_EXIT_OK;

  /* Every image is checked first (a typo in a file name should not wait for
   * a model load) but decoded only when its batch comes: one 275 KB PNG can
   * decode to 800 MB, so decoding all of them up front multiplied that. */
  int n_images = argc - optind;
  char **symbol_lines = NULL;  /* what the constraints' strings point into */
  int n_symbol_lines = 0;
  run.files = argv + optind;
  run.pngs = calloc ((size_t) n_images, sizeof *run.pngs);
  run.images = calloc ((size_t) n_images, sizeof *run.images);
  run.results = calloc ((size_t) n_images, sizeof *run.results);
  long long *pixels = calloc ((size_t) n_images, sizeof *pixels);
  if (!run.pngs || !run.images || !run.results || !pixels)
    {
      fprintf (stderr, "formulate-cli: out of memory\n");
      rc = FM_EXIT_FAILURE;
      goto out;
    }
  if (opt.symbols || opt.symbols_file)
    {
      run.constraints = calloc ((size_t) n_images, sizeof *run.constraints);
      symbol_lines = calloc ((size_t) n_images, sizeof *symbol_lines);
      if (!run.constraints || !symbol_lines)
        {
          fprintf (stderr, "formulate-cli: out of memory\n");
          rc = FM_EXIT_FAILURE;
          goto out;
        }
      rc = fm_recognize_read_symbols (&opt, n_images, run.constraints, symbol_lines, &n_symbol_lines);
      if (rc != FM_EXIT_OK)
        goto out;
    }
  for (int i = 0; i < n_images; i++)
    {
      char err[512];
      if (fm_png_probe (run.files[i], &pixels[i], err, sizeof err) != 0)
        {
          fprintf (stderr, "formulate-cli: %s\n", err);
          rc = FM_EXIT_INPUT;
          goto out;
        }
    }

  /* Phase 3: the model. */
  char model_buf[PATH_MAX], looked[2 * PATH_MAX + 64];
  const char *model = fm_find_model (opt.model, model_buf, sizeof model_buf, looked, sizeof looked);
  if (!model)
    {
      fprintf (stderr, "formulate-cli: no model found (looked in %s); pass --model FILE or set FORMULATE_MODEL\n",
               looked);
      rc = FM_EXIT_MODEL;
      goto out;
    }
  FeContextParams cp = fe_context_default_params ();
  cp.device = opt.device;
  cp.n_threads = opt.threads;
  cp.precision = opt.precision;
  double t0 = fm_now_ms ();
  fe_status s = fe_context_load (model, &cp, &run.ctx);
  double load_ms = fm_now_ms () - t0;
  if (s != FE_OK)
    {
      fprintf (stderr, "formulate-cli: %s\n", fe_last_error ());
      rc = s == FE_ERR_DEVICE ? FM_EXIT_DEVICE
           : s == FE_ERR_INVALID_ARGUMENT ? FM_EXIT_USAGE : FM_EXIT_MODEL;
      goto out;
    }
  if ((s = fe_state_new (run.ctx, &run.st)) != FE_OK)
    {
      fprintf (stderr, "formulate-cli: %s\n", fe_last_error ());
      rc = FM_EXIT_FAILURE;
      goto out;
    }

  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = fm_on_sigint;
  sigaction (SIGINT, &sa, NULL);

  run.rp = fe_recognize_default_params ();
  run.rp.beam_width = opt.beam;
  run.rp.max_tokens = opt.max_tokens;
  if (opt.max_repeats >= 0)
    run.rp.max_repeats = opt.max_repeats;
  if (opt.scale_candidates > 0)
    run.rp.scale_candidates = opt.scale_candidates;
  if (opt.max_batch > 0)
    run.rp.max_batch = opt.max_batch;
  run.rp.abort_callback = fm_should_abort;
  if (opt.symbol_penalty >= 0.0f)
    run.rp.symbol_penalty = opt.symbol_penalty;
  if (opt.eos_penalty >= 0.0f)
    run.rp.eos_unused_penalty = opt.eos_penalty;

  if (opt.json)
    fm_recognize_json_header (stdout, run.ctx, model, opt.beam, load_ms);

  /* Batches of at most FM_DECODE_BATCH images and FM_DECODE_PIXELS decoded
   * pixels (one image alone may reach fm_png's own cap): what is decoded at
   * once stays bounded however many images are given. */
  for (int first = 0; first < n_images && rc == FM_EXIT_OK; )
    {
      int end = first;
      long long batch_pixels = 0;
      while (end < n_images && end - first < FM_DECODE_BATCH &&
             (end == first || batch_pixels + pixels[end] <= FM_DECODE_PIXELS))
        batch_pixels += pixels[end++];
      rc = fm_recognize_batch (&run, first, end);
      first = end;
    }
  if (opt.json && rc == FM_EXIT_OK)
    fputs ("\n  ]\n}\n", stdout);
  if (rc == FM_EXIT_OK && run.blank > 0)
    rc = FM_EXIT_NO_INK;
  if (fflush (stdout) != 0)
    rc = FM_EXIT_FAILURE;

out:
  for (int i = 0; i < n_images && run.pngs; i++)
    fm_png_clear (&run.pngs[i]);
  fe_state_free (run.st);
  fe_context_free (run.ctx);
  free (run.pngs);
  free (run.images);
  free (run.results);
  free (pixels);
  for (int i = 0; run.constraints && i < n_images; i++)
    free ((void *) run.constraints[i].symbols);
  for (int i = 0; i < n_symbol_lines; i++)
    free (symbol_lines[i]);
  free (symbol_lines);
  free (run.constraints);
  return rc;
}

static void
fm_format_bytes (char *buf, size_t size, uint64_t bytes)
{
  if (bytes == 0)
    snprintf (buf, size, "-");
  else
    snprintf (buf, size, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
}

int
fm_cli_list_devices (int argc, char **argv)
{
  (void) argc;
  (void) argv;
  size_t n = fe_devices_list (NULL, 0);
  FeDeviceInfo *devs = calloc (n ? n : 1, sizeof *devs);
  if (!devs)
    {
      fprintf (stderr, "formulate-cli: out of memory\n");
      return FM_EXIT_FAILURE;
    }
  n = fe_devices_list (devs, n);
  printf ("%-8s %-9s %-10s %-10s %s\n", "ID", "AVAILABLE", "MEMORY", "FREE", "NAME / DETAIL");
  for (size_t i = 0; i < n; i++)
    {
      const FeDeviceInfo *d = &devs[i];
      char total[32], free_b[32];
      fm_format_bytes (total, sizeof total, d->total_memory);
      fm_format_bytes (free_b, sizeof free_b, d->free_memory);
      printf ("%-8s %-9s %-10s %-10s %s", d->id, d->available ? "yes" : "no", total, free_b,
              d->name);
      if (d->kind == FE_DEVICE_CUDA && d->available)
        printf (" (compute %d.%d)", d->compute_major, d->compute_minor);
      if (!d->available)
        printf (": %s", d->unavailable_reason);
      else if (d->detail[0])
        printf (": %s", d->detail);
      putchar ('\n');
    }
  free (devs);
  return fflush (stdout) == 0 ? FM_EXIT_OK : FM_EXIT_FAILURE;
}
