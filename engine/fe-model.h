/* fe-model.h - the model layer's internal interface (fe-model.c, fe-decode.c,
 * fe-preprocess.c, fe-tokens.c, fe-api.c). Not installed; tests include it to
 * reach the steps below the public API. */
#ifndef FE_MODEL_H
#define FE_MODEL_H

#include "fe-internal.h"

#include <time.h>

/* Milliseconds on the monotonic clock, and of the process's CPU time (all
 * threads): the timings that fe-api.c and fe-decode.c report. */
static inline double fe_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline double fe_cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Beam search keeps one decoder row per hypothesis; the state grows its
 * per-beam buffers to the width asked for, up to this bound, before the first
 * decode step of a call (never during decoding). */
#define FE_MAX_BEAM 32
/* n-gram sizes the repetition guard looks at (1..FE_REPEAT_MAX_NGRAM). */
#define FE_REPEAT_MAX_NGRAM 8

typedef struct {
    FeTensor weight, bias;
} FeLinear;

typedef struct {
    FeTensor weight, bias;
} FeNorm;

typedef struct {
    FeLinear q, k, v, o;
} FeAttentionWeights;

typedef struct {
    FeNorm ln1, ln2;
    FeAttentionWeights attn;
    FeLinear fc1, fc2;
} FeEncoderLayer;

typedef struct {
    FeNorm ln1, ln2, ln3;
    FeAttentionWeights self_attn, cross_attn;
    FeLinear fc1, fc2;
} FeDecoderLayer;

/* formulate-v1 on one device: every weight as a tensor in one device buffer,
 * BatchNorm already folded into the convolutions. */
typedef struct {
    FeModelConfig cfg;
    FeDevice *device;
    FeBuffer *weights;             /* owns every tensor below                  */
    FeTensor conv_weight[FE_MAX_CNN_BLOCKS];  /* [C_i, C_{i-1}, 3, 3], folded  */
    FeTensor conv_bias[FE_MAX_CNN_BLOCKS];    /* [C_i], folded                 */
    FeLinear enc_proj;
    FeEncoderLayer *enc;
    FeNorm enc_norm;
    FeTensor tok_emb, pos_emb;
    FeDecoderLayer *dec;
    FeNorm dec_norm;
    FeTensor out_weight;           /* tok_emb's storage when tied              */
    FeTensor out_bias;
    /* host tables of the 1-D sinusoid halves (rows = grid rows / columns),
     * assembled per image into the 2-D encoding */
    float *pe_rows;                /* [max_height/height_stride][d_model/2]    */
    float *pe_cols;                /* [max_width/width_stride][d_model/2]      */
    uint64_t n_parameters;
    uint64_t weights_bytes;
} FeModel;

/* The one place that decides which device a context runs on, from
 * FeContextParams.device ("auto", "cpu", "cuda:N", "cuda:0,cuda:1", "all").
 * "auto" never fails: it takes the CPU and says why in *fell_back / reason.
 * A forced device that cannot be used is FE_ERR_DEVICE with the reason. */
fe_status fe_device_choose(const char *request, FeDevice **out_device, bool *fell_back,
                           char *reason, size_t reason_size);

/* Builds the model from an open weight file on a device (host copies are
 * converted to f32 and folded, then uploaded). */
fe_status fe_model_load(FeModel *model, const FeWeightFile *wf, FeDevice *device);
/* The same with the matrices (linear / conv weights, embedding tables) stored
 * in matrix_dtype (f32, f16 or bf16: the GPU precisions, docs/cuda.md). */
fe_status fe_model_load_as(FeModel *model, const FeWeightFile *wf, FeDevice *device,
                           fe_dtype matrix_dtype);
/* FE_PRECISION_BF16 on a CPU with AVX512_BF16: the linear layers, the token
 * embedding and the convolutions after the first rounded to bf16 for the
 * vdpbf16ps matmuls and convolutions, everything else f32 (unlike fe_model_load_as(..., FE_DTYPE_BF16), the GPU layout, whose
 * convolutions and tables are bf16 too). FE_ERR_UNSUPPORTED without the ISA. */
fe_status fe_model_load_cpu_bf16(FeModel *model, const FeWeightFile *wf, FeDevice *device);
void fe_model_free(FeModel *model);

/* Per-thread buffers. The encoder's (and the cross K/V) grow to the largest
 * input encoded; the decoder's are sized by beam_capacity (decoder rows,
 * self-attention KV cache). */
typedef struct {
    const FeModel *model;
    int beam_capacity;
    /* encoder: two ping-pong CNN buffers and the transformer's scratch, all
     * 1-D capacities viewed with the shape each step needs */
    FeBuffer *enc_arena;
    FeTensor cnn_a, cnn_b;
    FeTensor enc_x, enc_h, enc_q, enc_k, enc_v, enc_att, enc_ff;
    FeTensor enc_out;              /* [L, d_model] of the last encode          */
    float *host_pos;               /* [Lmax, d_model] positional scratch       */
    FeTensor enc_pos;
    int enc_len;                   /* L of the last encode; 0 = none           */
    int enc_grid_h, enc_grid_w;
    /* what the encoder buffers hold now: floats per CNN buffer, tokens; they
     * grow to the largest input encoded (fe_model_encode) */
    int64_t enc_cnn_capacity, enc_token_capacity;
    /* cross-attention K/V of the encoder output, once per image per layer */
    FeTensor *cross_k, *cross_v;   /* dec_layers x [Lmax, d_model]             */
    bool cross_ready;
    float *host_enc_out;           /* fe_state_encoder_output's copy           */
    /* decoder, sized for beam_capacity rows */
    FeBuffer *dec_arena;
    FeTensor dec_ids;              /* [B] i32                                  */
    FeTensor dec_x, dec_h, dec_q, dec_k, dec_v, dec_att, dec_ff, dec_logits;
    FeTensor *self_k, *self_v;     /* dec_layers x [B, max_tokens, d_model]    */
    float *host_logits;            /* [B, vocab]                               */
    float *host_kv;                /* [B, max_tokens, d_model] beam reorder    */
    int32_t *host_ids;             /* [B]                                      */
    /* beam bookkeeping, [B] or [B*B] or [B][max_tokens] */
    int *beam_tokens, *beam_new_tokens;
    float *beam_probs, *beam_new_probs;
    int *beam_len, *beam_parent;
    double *beam_score;
    int *cand_beam, *cand_token;
    double *cand_score;
    float *cand_prob;
    int *topk_index;
    /* finished hypotheses, [B] or [B][max_tokens] */
    int *fin_tokens, *fin_len, *fin_n_probs;
    float *fin_probs;
    double *fin_score;
    bool *fin_repetition, *fin_length_limit;
    /* Multi-image greedy batches (fe_decode_greedy_batch): the cross-attention
     * K/V of every image of a group packed one after another per layer, and
     * per decoder row the span (start, length) of its own image's rows. They
     * grow to the largest group (fe_model_batch_reserve, before decoding). */
    FeBuffer *batch_arena;
    FeTensor *batch_k, *batch_v;   /* dec_layers x [batch_token_capacity, d]   */
    int64_t batch_token_capacity;
    int64_t batch_tokens;          /* rows used by the group so far            */
    FeTensor batch_spans;          /* i32 [beam_capacity, 2], in dec_arena     */
    int32_t *host_spans;           /* [beam_capacity, 2]: decoder row r's span */
    /* per-row bookkeeping of the batched greedy decode, [beam_capacity] */
    int *batch_slot, *batch_perm;
    int32_t *batch_ids;
    /* counts decoder-buffer (re)allocations so tests can check that decoding
     * never allocates per token */
    unsigned long n_decoder_allocs;
    /* counts the encoder's (re)allocations (its arena, with the serial
     * path's cross K/V): a batch group grows it once, for its largest crop */
    unsigned long n_encoder_allocs;
} FeStateBuffers;

/* Empty buffers for the model with decoder rows for `rows` beams or batch
 * rows (fe_state_buffers_reserve_beams); the encoder's come with the first
 * encode. */
fe_status fe_state_buffers_init(FeStateBuffers *sb, const FeModel *model, int rows);
/* Grows the decoder buffers to hold `beams` rows; a no-op when they do. */
fe_status fe_state_buffers_reserve_beams(FeStateBuffers *sb, int beams);
/* Grows the decoder buffers to `rows` and, on the CPU, faults in the first
 * `tokens` positions of each row's self-attention K/V now: the KV caches
 * are sized for the longest formula and written a position per step, so
 * their first touches (a fault per 4 KiB) otherwise fall on the first
 * formulas decoded. */
fe_status fe_state_buffers_prepare(FeStateBuffers *sb, int rows, int tokens);
void fe_state_buffers_free(FeStateBuffers *sb);

/* The buffers behind a public FeState (fe-api.c), for tests and tools. */
FeStateBuffers *fe_state_buffers(FeState *state);

/* Grows the encoder's buffers once to hold each of n inputs heights[i] x
 * widths[i] (encoded one after another, as a batch group's crops are):
 * the largest CNN activation and the most tokens among them, no more; a
 * no-op when the buffers hold them. Drops the last encoding when it grows.
 * Inputs fe_model_encode would refuse are left out. */
fe_status fe_model_encoder_reserve(FeStateBuffers *sb, const int *heights, const int *widths,
                                   int n);
/* Encoder forward of an ink image [height, width] (multiples of the strides,
 * within the caps); leaves the output in sb->enc_out. */
fe_status fe_model_encode(FeStateBuffers *sb, const float *pixels, int height, int width);
/* Cross-attention K/V of sb->enc_out for every decoder layer. */
fe_status fe_model_cross_kv(FeStateBuffers *sb);
/* One decoder step for rows 0..n_rows-1: token ids at `position`, updates the
 * self-attention caches at that position, leaves logits in sb->host_logits
 * ([n_rows, vocab]). */
fe_status fe_model_decode_step(FeStateBuffers *sb, const int32_t *ids, int n_rows, int position);
/* Rearranges the self-attention caches: row r takes the rows 0..n_positions-1
 * of old row parent[r]. */
fe_status fe_model_reorder_cache(FeStateBuffers *sb, const int *parent, int n_rows,
                                 int n_positions);

/* Multi-image batches. A group of images decodes together, each decoder row
 * cross-attending to its own image's encoder output:
 *   fe_model_batch_reserve(sb, rows, sum of the images' encoder lengths);
 *   for each image g: fe_model_encode(...); fe_model_batch_add(sb, g);
 *   fe_model_decode_step_rows(...) per position, with sb->host_spans in the
 *   order of the live rows (the caller permutes it when rows finish).
 * The encoder output is copied nowhere: its K/V go straight into the packed
 * buffers, so encoding the next image may reuse the encoder's buffers. */
/* Makes room for `rows` decoder rows (<= FE_MAX_BEAM) and `tokens` packed
 * encoder rows, and empties the group. Allocates only to grow. */
fe_status fe_model_batch_reserve(FeStateBuffers *sb, int rows, int64_t tokens);
/* Appends the cross-attention K/V of the last encoding as decoder row
 * `row`'s memory: host_spans[row] = (first packed row, sb->enc_len). */
fe_status fe_model_batch_add(FeStateBuffers *sb, int row);
/* One decoder step for rows 0..n_rows-1 like fe_model_decode_step, except
 * that row r cross-attends to the packed rows host_spans[r] (rows may hold
 * different images). Per row the same numbers as fe_model_decode_step on
 * that row's image alone, on the CPU backend (fe_cpu_matmul_exact_rows). */
fe_status fe_model_decode_step_rows(FeStateBuffers *sb, const int32_t *ids, int n_rows,
                                    int position);
/* Whether the model's device can run fe_model_decode_step_rows (the backend
 * has FE_OP_ATTENTION_ROWS), and for how many rows the per-row results stay
 * those of a serial decode: *exact_rows (0 = no such promise, e.g. a GPU
 * whose GEMM picks its algorithm by shape). */
bool fe_model_batch_supported(const FeModel *model, int *exact_rows);
/* Device bytes of the state's buffers (encoder, decoder, batch). */
uint64_t fe_state_buffers_device_bytes(const FeStateBuffers *sb);

/* The chosen tokens' probabilities of one decode, summed up (fe-calibration.c):
 * what the confidence features need once the per-token array is gone. */
typedef struct {
    int n;                         /* probabilities counted                   */
    double sum_prob, sum_log_prob;
    float min_prob, min_log_prob;  /* 0 when n == 0                           */
    int n_below_050, n_below_080;
} FeProbStats;

void fe_prob_stats(const float *probs, int n, FeProbStats *out);

/* A decode's confidence features (FE_CONF_* in fe.h) from its tokens and
 * probability summary. */
void fe_confidence_features_from(char *const *vocab, int n_vocab, const int *ids, int n_ids,
                                 const FeProbStats *ps, bool stopped, float *out);

/* A model file's confidence calibration (formulate.calibration in fe.h). */
typedef struct {
    bool present;
    float weights[FE_CONFIDENCE_N_FEATURES];
    float bias;
    float review_threshold;
    char target[24];
} FeCalibration;

/* Parses the JSON entry into *out. A malformed entry is FE_ERR_FORMAT; an
 * entry naming a feature this engine does not compute returns FE_OK with
 * out->present false and the reason in `ignored` (for a warning). */
fe_status fe_calibration_parse(const char *text, FeCalibration *out, char *ignored,
                               size_t ignored_size);
/* The calibrated probability of "right" (out->present must be true). */
float fe_calibration_apply(const FeCalibration *cal, const float *features);

/* Decoding (fe-decode.c) */
typedef struct {
    int *tokens;                   /* caller's array, capacity max_tokens     */
    int n_tokens;
    float confidence_mean, confidence_min;
    FeProbStats prob_stats;        /* of the same probabilities               */
    bool hit_length_limit, repetition_stopped;
    /* fe_decode_greedy_batch: this row's share of the decode, wall and
     * process CPU ms: each step's time split evenly among the rows it ran */
    double decode_ms, decode_cpu_ms;
} FeDecodeOutput;

/* Glyph-constrained decoding (fe-constraint.c; FeSymbolConstraint in fe.h):
 * per-row budgets of the symbols a formula's glyphs back. */
typedef struct FeConstraint FeConstraint;
/* NULL in *out when `symbols` is NULL or empty (unconstrained). rows: the
 * decoder rows it serves (the beam width, or 1). */
fe_status fe_constraint_new(char *const *vocab, int n_vocab, const FeModelConfig *cfg,
                            const FeSymbolConstraint *symbols, int rows, float symbol_penalty,
                            float eos_penalty, FeConstraint **out);
void fe_constraint_free(FeConstraint *c);
/* Entries of the caller's list that named no symbol and were ignored. */
int fe_constraint_unknown(const FeConstraint *c);
bool fe_token_is_structure(const char *token);
/* Every row back to the full budget (before each decode). */
void fe_constraint_reset(FeConstraint *c);
/* Lowers row's logits of spent symbols, and <eos> while glyphs are unused. */
void fe_constraint_apply(const FeConstraint *c, int row, float *logits);
/* Row chose token: it spends one of its key's glyphs. */
void fe_constraint_take(FeConstraint *c, int row, int token);
/* Beam search: new row new_row = parent row + token, in the next step's
 * arrays; fe_constraint_commit makes those the current ones. */
void fe_constraint_branch(FeConstraint *c, int new_row, int parent, int token);
void fe_constraint_commit(FeConstraint *c);

typedef struct {
    int beam_width;
    int max_tokens;                /* generated tokens, EOS excluded           */
    int max_repeats;
    float length_penalty;
    fe_abort_callback abort_callback;
    void *abort_user_data;
    float *first_logits;           /* may be NULL                              */
    /* fe_decode_greedy_batch: called as each row finishes, with its index
     * (the image's place in the group) and its output, complete; a failure
     * it returns ends the decode with that status. May be NULL. */
    fe_status (*row_done)(void *user_data, int row, FeDecodeOutput *out);
    void *row_done_user_data;
    /* Glyph constraint (fe-constraint.c), NULL = none. fe_decode_greedy and
     * fe_decode_beam use `constraint` (rows >= beam width, reset by the
     * decode); fe_decode_greedy_batch uses row_constraints[row] (each with
     * one row, reset by the decode; the array or an entry may be NULL). */
    FeConstraint *constraint;
    FeConstraint *const *row_constraints;
} FeDecodeOptions;

/* Needs fe_model_encode first. Greedy when beam_width == 1 through its own
 * path; fe_decode_beam handles any width (1 included, which the tests compare
 * with greedy). */
fe_status fe_decode_greedy(FeStateBuffers *sb, const FeDecodeOptions *opt, FeDecodeOutput *out);
/* A finished decode's confidence fields of its result (fe-calibration.c):
 * confidence_mean/min, the features and the calibrated confidence. */
void fe_result_set_confidence(char *const *vocab, int n_vocab, const FeCalibration *cal,
                              const FeDecodeOutput *out, FeResult *res);
fe_status fe_decode_beam(FeStateBuffers *sb, const FeDecodeOptions *opt, FeDecodeOutput *out);
/* Greedy decoding of n_rows images together (after fe_model_batch_reserve and
 * fe_model_batch_add for rows 0..n_rows-1): one decoder step for all live
 * rows; a row that ends (EOS, length limit, repetition guard) leaves the
 * batch and opt->row_done is called for it. out[r].tokens (capacity
 * max_tokens each) receives row r's tokens. Each row's tokens and flags are
 * those fe_decode_greedy gives for its image alone (on the CPU). On abort the
 * rows finished (row_done called) are complete, the others are not. */
fe_status fe_decode_greedy_batch(FeStateBuffers *sb, const FeDecodeOptions *opt,
                                 FeDecodeOutput *out, int n_rows);
/* fe_recognize's multi-image greedy path (beam_width 1): groups of images
 * whose scale candidates fill up to max_batch rows (one row per image and
 * candidate scale) are preprocessed and encoded one by one, then decoded
 * together; each image keeps its most confident candidate, as the serial
 * search does. Fills results[i] (zeroed by the caller) as image i finishes and
 * calls the progress callback then, so `done` counts finished formulas in the
 * order they finish. On error the finished results are valid, the rest stay
 * zeroed. vocab: the context's, for the LaTeX; calibration: the context's. */
fe_status fe_recognize_batched(FeStateBuffers *sb, char *const *vocab, int n_vocab,
                               const FeCalibration *calibration, const FeImage *images, size_t n, const FeRecognizeParams *p,
                               int max_batch, FeResult *results);
/* The batch size fe_recognize uses for params->max_batch with this model:
 * 1 = serial. 0 asks for the engine default (FE_DEFAULT_MAX_BATCH, or the
 * environment's FE_MAX_BATCH); capped by FE_MAX_BEAM, by the rows the CPU
 * computes exactly (fe_cpu_matmul_exact_rows) and to 1 when the device has
 * no per-row cross-attention (a CUDA module without FE_OP_ATTENTION_ROWS). */
int fe_recognize_batch_size(const FeModel *model, const FeRecognizeParams *params);
#define FE_DEFAULT_MAX_BATCH 8
/* fe_recognize's glyph-scale search (FeRecognizeParams.scale_candidates),
 * shared by the serial and the batched path: the candidates span the
 * estimated em x FE_SCALE_SEARCH_SPAN^[-1, 1], geometrically spaced. */
#define FE_SCALE_SEARCH_SPAN 1.15f
#define FE_MAX_SCALE_CANDIDATES 15
/* How many candidates an image gets (1 with an em_px_hint). */
int fe_scale_candidate_count(const FeImage *image, int scale_candidates);
/* The em factor of candidate c of n: the estimate first, then alternately
 * below and above it. */
float fe_scale_candidate_factor(int n_candidates, int c);
/* Largest number of generated tokens a decode can return. */
int fe_decode_token_limit(const FeModelConfig *cfg, int requested);
/* true when the last n tokens of seq, for some n in 1..8, occur more than
 * max_repeats times in a row at the end. */
bool fe_repetition_detected(const int *seq, int len, int max_repeats, int *out_ngram);

/* Tokens (fe-tokens.c) */
bool fe_token_is_control_word(const char *token);
char *fe_detokenize_vocab(char *const *vocab, int n_vocab, const FeModelConfig *cfg,
                          const int *ids, int n);
/* The same with the status; *latex is NULL unless FE_OK. */
fe_status fe_detokenize_status(char *const *vocab, int n_vocab, const FeModelConfig *cfg,
                               const int *ids, int n, char **latex);
/* The same for tokens the engine decoded (fe_recognize): out of memory stays
 * FE_ERR_OUT_OF_MEMORY, any other failure is FE_ERR_INTERNAL "detokenize: ...". */
fe_status fe_detokenize_decoded(char *const *vocab, int n_vocab, const FeModelConfig *cfg,
                                const int *ids, int n, char **latex);

/* Preprocessing (fe-preprocess.c) */
/* Any pixel format -> ink in [0, 1] (1 = ink), dark backgrounds inverted.
 * *out is malloc'd [height][width]. */
fe_status fe_image_to_ink(const FeImage *image, float **out, bool *out_inverted);
/* Glyph size (1 em in pixels) from the median height of the connected
 * components of ink > 0.5, without dots, rules and tall delimiters.
 * Returns 0 when there is nothing to measure. */
float fe_estimate_em_px(const float *ink, int width, int height, float cc_median_em);
/* The whole preprocessing for a config; *out malloc'd [out_h][out_w]. */
fe_status fe_preprocess_config(const FeModelConfig *cfg, const FeImage *image, float **out,
                               int *out_height, int *out_width, float *out_scale);
/* Resamples an ink image by `scale` (area averaging when shrinking, cubic
 * when enlarging) into dst [dst_h][dst_w]. */
void fe_resize_ink(const float *src, int src_w, int src_h, float *dst, int dst_w, int dst_h);

#endif /* FE_MODEL_H */
