/* fe.h - the Formulate engine: image of a formula in, LaTeX out.
 *
 * This is the engine's one public header. The engine is plain C11 (libc, a BLAS,
 * pthreads); it never touches GTK or GLib objects and never calls abort()/exit():
 * every call that can fail returns an fe_status and leaves a one-line message that
 * fe_last_error() returns on the same thread.
 *
 * Objects
 *   FeContext  the model: configuration, vocabulary and weights on one device.
 *              Read-only once loaded; share it between threads.
 *   FeState    per-run buffers (activation arena, KV cache, beam scratch).
 *              Belongs to one thread at a time; make one per worker thread.
 *
 * Thread-safety rule: any number of threads may use one FeContext at once, each
 * through its own FeState. Never use one FeState from two threads at the same time.
 * Callbacks (progress, abort, log) run on the thread that called the engine, i.e.
 * the worker thread: never touch GUI objects from them, post to your main loop.
 *
 * Usage
 *
 *   FeContextParams cp = fe_context_default_params();
 *   cp.device = "auto";                          // or "cpu", "cuda:0"
 *   FeContext *ctx;
 *   if (fe_context_load("formulate.safetensors", &cp, &ctx) != FE_OK) {
 *       fprintf(stderr, "%s\n", fe_last_error());
 *       return 1;
 *   }
 *   FeState *st;
 *   if (fe_state_new(ctx, &st) != FE_OK) { ... }
 *
 *   FeImage img = { .data = pixels, .width = w, .height = h, .stride = w,
 *                   .format = FE_PIXEL_GRAY8 };
 *   FeRecognizeParams rp = fe_recognize_default_params();
 *   rp.beam_width = 4;
 *   FeResult res;
 *   if (fe_recognize(st, &img, 1, &rp, &res) == FE_OK)
 *       printf("%s  (confidence %.2f)\n", res.latex, res.confidence);
 *   fe_result_clear(&res);
 *
 *   fe_state_free(st);
 *   fe_context_free(ctx);
 */
#ifndef FE_H
#define FE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define FE_API __attribute__((visibility("default")))
#else
#define FE_API
#endif

#define FE_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Status and messages                                                      */

typedef enum {
    FE_OK = 0,
    FE_ERR_INVALID_ARGUMENT,  /* a NULL where none is allowed, a bad size, ...   */
    FE_ERR_IO,                /* a file cannot be opened, read or mapped          */
    FE_ERR_FORMAT,            /* a model file is malformed or inconsistent        */
    FE_ERR_UNSUPPORTED,       /* a valid file asks for something we do not do     */
    FE_ERR_OUT_OF_MEMORY,     /* host or device memory exhausted                  */
    FE_ERR_DEVICE,            /* device missing, driver error, kernel failure     */
    FE_ERR_DEVICE_MISMATCH,   /* operands live on different devices               */
    FE_ERR_ABORTED,           /* the abort callback asked to stop                 */
    FE_ERR_INTERNAL,          /* a broken invariant: a bug, reported not crashed  */
} fe_status;

/* Short stable name of a status, e.g. "FE_ERR_FORMAT". */
FE_API const char *fe_status_name(fe_status status);

/* The message left by the last failing engine call on this thread, one line,
 * e.g. "model.safetensors: tensor 'dec.norm.weight' has shape [255], config
 * needs [256]". Empty string when nothing failed. Valid until the next engine
 * call on this thread. */
FE_API const char *fe_last_error(void);

typedef enum {
    FE_LOG_DEBUG = 0,
    FE_LOG_INFO,
    FE_LOG_WARN,
    FE_LOG_ERROR,
} fe_log_level;

typedef void (*fe_log_callback)(fe_log_level level, const char *message, void *user_data);

/* Process-wide log sink (default: warnings and errors to stderr). Pass NULL to
 * silence. The callback may be called from any thread that calls the engine. */
FE_API void fe_set_log_callback(fe_log_callback callback, void *user_data);

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */

typedef enum {
    FE_DEVICE_CPU = 0,
    FE_DEVICE_CUDA,
} fe_device_kind;

typedef struct {
    char id[32];                  /* "cpu", "cuda:0", ...                        */
    char name[128];               /* "Intel Xeon ...", "NVIDIA H100 80GB HBM3"   */
    fe_device_kind kind;
    int index;                    /* 0 for cpu, ordinal for cuda                 */
    bool available;               /* false: listed so the UI can say why not     */
    char unavailable_reason[160]; /* "no CUDA driver", "CUDA libraries not installed", ... */
    uint64_t total_memory;        /* bytes (RAM for cpu, VRAM for gpu)           */
    uint64_t free_memory;         /* bytes, at the time of the call              */
    int compute_major, compute_minor; /* cuda only                               */
    char detail[256];             /* cpu: "AVX-512 AMX-BF16; GEMM: OpenBLAS (SkylakeX kernels), 2 threads" */
} FeDeviceInfo;

/* Fills up to max entries of out (may be NULL to count) and returns how many
 * devices exist: CPU first, then every GPU of every compiled-in backend,
 * including unavailable ones (available == false with a reason). When the CUDA
 * module is not built or cannot load, one "cuda" entry says why. */
FE_API size_t fe_devices_list(FeDeviceInfo *out, size_t max);

/* ------------------------------------------------------------------------ */
/* Context: the model                                                       */

typedef struct FeContext FeContext;
typedef struct FeState FeState;

typedef enum {
    FE_PRECISION_AUTO = 0,  /* CPU: bf16 with AVX512_BF16, else fp32; GPU: fp16 */
    FE_PRECISION_FP32,
    FE_PRECISION_FP16,
    FE_PRECISION_BF16,      /* GPU (compute 8.0+), or a CPU with AVX512_BF16:   */
                            /* the decoder's matmuls in bf16 with f32 sums      */
} fe_precision;

typedef struct {
    /* "auto" (best usable GPU, else CPU; falls back to CPU on any GPU failure),
     * "cpu", "cuda:N" (forced: a GPU failure is an error), "cuda:0,cuda:1" or
     * "all" (batches split across GPUs). */
    const char *device;
    fe_precision precision;
    int n_threads;              /* CPU threads; 0 = one per core                 */
    /* For PyTorch .pt checkpoints, which hold only tensors: the JSON file with
     * {"config": {...}, "vocab": [...]}. NULL = "<model path minus .pt>.json". */
    const char *config_path;
    fe_log_callback log_callback;  /* NULL = the process-wide sink             */
    void *log_user_data;
} FeContextParams;

FE_API FeContextParams fe_context_default_params(void);

/* Loads a .safetensors (with formulate metadata) or a PyTorch .pt state_dict.
 * Weights are read into CPU memory first (whole, so a file rewritten meanwhile
 * is an error, not a SIGBUS), checked, BatchNorm is folded into
 * the convolutions, then they move to the chosen device. */
FE_API fe_status fe_context_load(const char *path, const FeContextParams *params,
                                 FeContext **out_context);
FE_API void fe_context_free(FeContext *context);

typedef struct {
    char arch[32];            /* "formulate-v1"                                 */
    int format_version;
    int d_model, n_heads, d_ff, enc_layers, dec_layers;
    int vocab_size, max_tokens;
    int em_px;                /* glyph size (font size in pixels) the model expects */
    int max_height, max_width;
    int height_stride, width_stride; /* the CNN's overall stride               */
    uint64_t n_parameters;
    char source_format[16];   /* "safetensors" or "pytorch"                     */
    char weights_dtype[8];    /* dtype in the file: "f32", "f16", "bf16"        */
    /* The file carries a confidence calibration (formulate.calibration,
     * "Confidence" below): FeResult.confidence is its probability that a
     * reading is right. false: FeResult.confidence is confidence_mean. */
    bool calibrated;
    char calibration_target[24]; /* what "right" means to it: "token-exact", ... */
    /* The review threshold chosen with the calibration on the validation
     * split (data/models/README.md), 0 when the file names none. */
    float review_threshold;
} FeModelInfo;

FE_API const FeModelInfo *fe_context_model_info(const FeContext *context);

typedef struct {
    FeDeviceInfo device;          /* the device in use                           */
    fe_precision precision;       /* resolved, never AUTO                        */
    bool fell_back;               /* asked for a GPU (auto), got the CPU         */
    char fallback_reason[256];    /* why, when fell_back                         */
    char gemm_path[128];          /* "OpenBLAS 0.3.21 SkylakeX kernels (cpuid: AVX-512F)" */
    uint64_t weights_bytes;       /* bytes of weights on the device              */
    uint64_t engine_bytes;        /* all bytes the engine holds on the device    */
    uint64_t device_free, device_total; /* live figures from the device         */
} FeRuntimeInfo;

/* Where and how the context runs, with live memory figures. */
FE_API fe_status fe_context_runtime_info(const FeContext *context, FeRuntimeInfo *out);

/* The vocabulary: token id -> its LaTeX text (NULL when out of range). */
FE_API const char *fe_context_token_text(const FeContext *context, int token_id);

/* ------------------------------------------------------------------------ */
/* State and recognition                                                    */

FE_API fe_status fe_state_new(FeContext *context, FeState **out_state);
FE_API void fe_state_free(FeState *state);

typedef enum {
    FE_PIXEL_GRAY8 = 0,   /* 1 byte per pixel, 0 = black                        */
    FE_PIXEL_RGB8,
    FE_PIXEL_RGBA8,       /* straight alpha; transparent counts as background  */
} fe_pixel_format;

typedef struct {
    const uint8_t *data;
    int width, height;
    int stride;               /* bytes per row; 0 = tight                      */
    fe_pixel_format format;
    /* Glyph size in pixels when the caller knows it (the PDF pipeline does: font
     * size in pt x render scale). 0 = the engine estimates it from the ink. */
    float em_px_hint;
} FeImage;

/* Called after each finished formula; done counts up to total (with batched
 * decoding, in the order formulas finish, not the order of the images). */
typedef void (*fe_progress_callback)(int done, int total, void *user_data);
/* Polled between decode steps; return true to stop (fe_recognize returns
 * FE_ERR_ABORTED and the results finished so far stay filled in). */
typedef bool (*fe_abort_callback)(void *user_data);

/* The symbols a formula is known to contain, e.g. from a born-digital PDF's
 * glyphs (docs/model.md, "Glyph-constrained decoding"): one LaTeX token string
 * per glyph, repeated as often as the glyph occurs, e.g. for x^2+y^2:
 * {"x", "2", "+", "y", "2"}.
 *
 * Contract for the caller:
 *  - An entry is one token of the model's vocabulary (fe_context_token_text).
 *    Operator names and other multi-glyph symbols are ONE entry: "\sin", not
 *    "s" "i" "n" (a text layer groups upright letters into the operator name;
 *    letters of \operatorname{dn} or \mathrm{d} are plain "d" "n" entries).
 *  - Delimiters are given bare: "(" backs "(" and "\left(" alike, "|" backs
 *    "|", "\left|", "\middle|"; "\{", "\langle" likewise. A few spellings are
 *    taken as their vocabulary twin ("\le" = "\leq", "\ne" = "\neq",
 *    "\rightarrow" = "\to", "\lbrace" = "\{", ...).
 *  - Structure is never listed and never constrained: { } _ ^ & \\ \frac
 *    \sqrt \binom \left \right \big... \begin{..} \end{..} \text
 *    \mathrm-style font commands, spacing, \overline \underline, braces
 *    (the list: fe_token_is_structure in engine/fe-constraint.c).
 *  - A structure token among the entries is skipped (a whole token sequence
 *    may be passed). An entry that is no token of the vocabulary at all (a
 *    typo, "\foo", "\operatorname{dn}") is ignored and counted in
 *    FeResult.unknown_symbols; it never fails the call.
 *  - n_symbols == 0 means "nothing known": that image decodes unconstrained.
 * While decoding, a symbol token not backed by an entry, or backed by fewer
 * entries than it has already been used, has its logit lowered by
 * FeRecognizeParams.symbol_penalty (INFINITY: it cannot be chosen), and <eos>
 * is lowered by eos_unused_penalty while backed symbols are still unused. */
typedef struct {
    const char *const *symbols;
    int n_symbols;
} FeSymbolConstraint;

/* The bare symbol a token spends under a FeSymbolConstraint, by the same rule
 * the constraint uses: "\left(" -> "(", "\le" -> "\leq", "\prime" -> "'",
 * a symbol token itself; NULL for structure (fe_token_is_structure's list:
 * braces, scripts, \frac, font commands, spacing, environments...). Needs no
 * model: a caller compares two readings' symbols with it (app/document/fm-recognize.c
 * checks the model's output against a PDF's glyphs). The result is token
 * itself or a static string. */
FE_API const char *fe_token_symbol(const char *token);

struct FeResult; /* below */

typedef struct {
    int beam_width;           /* 1 = greedy (default 1)                        */
    int max_tokens;           /* 0 = the model's limit                         */
    /* Repetition guard: a run of the same n-gram repeated more than this many
     * times ends the hypothesis (0 = off; default 4). */
    int max_repeats;
    float length_penalty;     /* beam score / len^alpha (default 0.6)          */
    fe_progress_callback progress_callback;
    void *progress_user_data;
    fe_abort_callback abort_callback;
    void *abort_user_data;
    /* Images without em_px_hint: how many glyph scales around the estimated
     * one are recognised, the most confident result (mean token probability)
     * kept; each costs one encode + decode. 0 or 1 = the estimate alone
     * (default 3: the estimate and 15 % below and above it). */
    int scale_candidates;
    /* Greedy decoding (beam_width 1) of several images together: up to this
     * many images are encoded one by one, then decoded as one batch, one
     * decoder step for all of them (each image's row attends to its own
     * encoding), which streams the decoder's weights once per step instead
     * of once per image. 0 = the engine default (8, or the environment's
     * FE_MAX_BATCH), 1 = one image after another; at most 32. The tokens are
     * those of the serial path (on the CPU, where each row's arithmetic is
     * the serial one; a GPU's may differ in the last bits), and so are the
     * results' fields, except that decoder_ms / decoder_cpu_ms are the
     * image's share of the batch's steps (each step split evenly among the
     * images it ran), so they still add up to the decode time. Formulas
     * finish out of order: the progress callback counts them as they finish;
     * after an abort or error every finished result is filled in, whatever
     * its place. Beam search (beam_width > 1) and a device without the
     * per-row attention (docs/cuda.md) decode one image at a time. */
    int max_batch;
    /* Glyph-constrained decoding: NULL (the default) = none, decoding and its
     * speed exactly as without the fields; else an array of n entries, one
     * per image of fe_recognize (FeSymbolConstraint above). Works with greedy,
     * beam search and batches; every scale candidate of an image gets its
     * constraint. The probabilities behind confidence_mean/min are those of
     * the constrained distribution. */
    const FeSymbolConstraint *constraints;
    /* Logit subtracted from a symbol without a free glyph (default 3);
     * INFINITY = a hard mask. The mask reads more formulas exactly but lets
     * a formula the model cannot read with the given symbols run on through
     * the free structure tokens: docs/model.md has the measurement. */
    float symbol_penalty;
    /* Logit subtracted from <eos> while backed symbols are unused (default
     * 4; 0 = off; INFINITY = cannot end before all are used). */
    float eos_unused_penalty;
    /* A second reading from the same encoding. When recheck is set, each
     * image's reading (its result, complete) is shown to it as soon as it is
     * made; a constraint it returns (non-NULL, valid until fe_recognize
     * returns) has the image decoded once more under that constraint into
     * rechecked[index] (n entries, cleared by the call; latex NULL where
     * recheck returned NULL), with the tokens and confidences that a second
     * fe_recognize of the image with that constraint gives. Greedy batches
     * decode it from the encoding the first reading used, while it is still
     * there, instead of encoding the image again; beam search and one image
     * at a time encode it again. The progress callback counts first
     * readings only; a rechecked result's encoder and preprocess times are
     * 0 when no second encode was needed. A recheck that fails (other than
     * by an abort) leaves its result empty and the call goes on. */
    const FeSymbolConstraint *(*recheck)(void *user_data, size_t index, const struct FeResult *first);
    void *recheck_user_data;
    struct FeResult *rechecked;
} FeRecognizeParams;

FE_API FeRecognizeParams fe_recognize_default_params(void);

/* Confidence
 *
 * The mean token probability alone does not separate right readings from
 * wrong ones: most wrong readings are read token by token as surely as right
 * ones (the v1 model's label smoothing caps a token near 0.9), a run-on of
 * repeated garbage included (data/models/README.md, "Confidence"). The
 * engine therefore describes every decode with a few features (below) and,
 * when the model file
 * carries a calibration (safetensors __metadata__ key
 * "formulate.calibration", written by tools/eval/calibrate.py from the
 * validation split), returns the probability of a logistic model over them:
 *     confidence = 1 / (1 + exp(-(bias + sum_i weight_i * feature_i)))
 * The JSON entry: {"version": 1, "target": "token-exact", "features":
 * [names], "weights": [numbers], "bias": number, "review_threshold": number,
 * ...}; features it does not list weigh 0. A file without the entry loads as
 * before and confidence is confidence_mean; an entry of another version or
 * naming a feature this engine does not compute is ignored with a warning
 * (same fallback); a malformed entry fails the load (FE_ERR_FORMAT). The
 * features, in order: */
enum {
    FE_CONF_MEAN_PROB = 0,     /* "mean_prob": confidence_mean                  */
    FE_CONF_MEAN_LOG_PROB,     /* "mean_log_prob": mean ln p of the chosen
                                  tokens, the final EOS included              */
    FE_CONF_MIN_LOG_PROB,      /* "min_log_prob": lowest ln p, floored at -20  */
    FE_CONF_FRAC_BELOW_050,    /* "frac_below_050": share of tokens chosen with
                                  p < 0.5                                      */
    FE_CONF_FRAC_BELOW_080,    /* "frac_below_080": share with p < 0.8 (the
                                  trained model rarely goes above 0.9: label
                                  smoothing)                                  */
    FE_CONF_LOG_LENGTH,        /* "log_length": ln(1 + tokens)                 */
    FE_CONF_REPEAT_FRACTION,   /* "repeat_fraction": the longest back-to-back
                                  run of one n-gram (n <= 8, >= 3 copies),
                                  copies after the first, over the tokens     */
    FE_CONF_STRUCTURE_ERRORS,  /* "structure_errors": unbalanced { }, \left
                                  \right, \begin \end, a ^ or _ with nothing
                                  to apply to; counted, at most 4            */
    FE_CONF_STOPPED,           /* "stopped": 1 when the repetition guard or the
                                  length limit ended the decode, else 0       */
    FE_CONFIDENCE_N_FEATURES
};

/* The name of feature i (as in formulate.calibration), NULL out of range. */
FE_API const char *fe_confidence_feature_name(int index);

/* The features of a decode: its token ids (without BOS/EOS) and the
 * probability of each chosen token (n_probs: n_tokens, plus one when the
 * decode ended with EOS), `stopped` as FE_CONF_STOPPED. Fills
 * out[FE_CONFIDENCE_N_FEATURES] exactly as fe_recognize does. */
FE_API fe_status fe_confidence_features(const FeContext *context, const int *token_ids,
                                        int n_tokens, const float *token_probs, int n_probs,
                                        bool stopped, float *out);

/* The calibrated probability of "right" for these features, or -1 when the
 * model has no calibration. */
FE_API float fe_context_calibrated_confidence(const FeContext *context, const float *features);

typedef struct FeResult {
    char *latex;              /* owned; NUL-terminated; freed by fe_result_clear */
    int *token_ids;           /* owned; n_tokens ids without BOS/EOS           */
    int n_tokens;
    /* How likely the reading is right, 0..1: with a calibrated model
     * (FeModelInfo.calibrated) the calibration's probability over
     * confidence_features, else confidence_mean. The one to show and to
     * flag results for review with ("Confidence" below). */
    float confidence;
    float confidence_mean;    /* mean token probability                        */
    float confidence_min;     /* lowest token probability                      */
    /* What `confidence` was computed from (fe_confidence_feature_name). */
    float confidence_features[FE_CONFIDENCE_N_FEATURES];
    bool hit_length_limit;    /* stopped at max_tokens without EOS             */
    bool repetition_stopped;  /* the repetition guard ended it                 */
    int input_width, input_height; /* image size after preprocessing            */
    float scale;              /* resize factor applied by preprocessing         */
    double preprocess_ms, encoder_ms, decoder_ms;
    /* CPU time of the whole process over the same phases (all its threads,
     * CLOCK_PROCESS_CPUTIME_ID): the work done, which unlike wall time does
     * not grow when other processes share the cores (bench/engine-cpu). */
    double preprocess_cpu_ms, encoder_cpu_ms, decoder_cpu_ms;
    /* With FeRecognizeParams.constraints: how many of the image's entries
     * named no vocabulary symbol and were ignored (0 otherwise). */
    int unknown_symbols;
} FeResult;

/* Recognises n images; results[i] receives image i. On error the results
 * finished so far are valid; the rest are zeroed. Clear each with
 * fe_result_clear. */
FE_API fe_status fe_recognize(FeState *state, const FeImage *images, size_t n,
                              const FeRecognizeParams *params, FeResult *results);
FE_API void fe_result_clear(FeResult *result);

/* ------------------------------------------------------------------------ */
/* Lower-level steps, for tests, benchmarks and tools                       */

/* Preprocesses one image exactly as fe_recognize does. *out_pixels receives a
 * malloc'd float image (ink = 1, background = 0) of out_height x out_width,
 * already padded to the model's strides; free() it. */
FE_API fe_status fe_preprocess(const FeContext *context, const FeImage *image,
                               float **out_pixels, int *out_height, int *out_width,
                               float *out_scale);

/* Runs the encoder on a preprocessed image (ink = 1, background = 0; height and
 * width multiples of the model's strides). The output stays in the state. */
FE_API fe_status fe_state_encode(FeState *state, const float *pixels, int height, int width);

/* Copies the last encoder output (n_tokens x d_model, row-major) to host memory
 * owned by the state; valid until the next call on the state. */
FE_API fe_status fe_state_encoder_output(FeState *state, const float **out,
                                         int *n_tokens, int *d_model);

/* Greedy decode from the last encoding. tokens (capacity max_tokens) receives
 * the ids without BOS/EOS; first_logits (vocab_size floats, may be NULL) the
 * logits of the first step. */
FE_API fe_status fe_state_decode_greedy(FeState *state, int *tokens, int max_tokens,
                                        int *n_tokens, float *first_logits);

/* Token ids -> LaTeX, with spaces only where LaTeX needs them (after a control
 * word followed by a letter). Returns a malloc'd string or NULL on error. */
FE_API char *fe_detokenize(const FeContext *context, const int *ids, int n);

#ifdef __cplusplus
}
#endif

#endif /* FE_H */
