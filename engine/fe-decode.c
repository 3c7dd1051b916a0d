/* fe-decode.c - greedy and beam-search decoding over fe_model_decode_step,
 * and greedy decoding of several images at once over
 * fe_model_decode_step_rows (fe_recognize's batched path, docs/model.md).
 *
 * All are deterministic: ties between equal scores go to the lower token id
 * and then to the lower beam, never to whatever order a sort happens to leave.
 * No decode loop allocates: every array lives in FeStateBuffers, sized before
 * the first step (the batched path allocates a result's strings when an image
 * is done, as the serial path does after its decode).
 *
 * A decode emits at most `limit` tokens (the model's max_tokens, the number
 * of learned positions: step t feeds position t and emits token t+1, like
 * tools/train/model.py's greedy_decode). Confidence is the mean and minimum
 * probability of the chosen tokens, the final EOS included when there is one,
 * since "this is where the formula ends" is a decision too. */
#include "fe-model.h"
#include "fe-preprocess.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int fe_decode_token_limit(const FeModelConfig *cfg, int requested) {
    if (requested <= 0 || requested > cfg->max_tokens)
        return cfg->max_tokens;
    return requested;
}

bool fe_repetition_detected(const int *seq, int len, int max_repeats, int *out_ngram) {
    if (max_repeats <= 0)
        return false;
    for (int n = 1; n <= FE_REPEAT_MAX_NGRAM; n++) {
        if ((long)n * (max_repeats + 1) > len)
            break;
        /* count how many times the last n tokens occur back to back at the end */
        int copies = 1;
        while ((copies + 1) * n <= len) {
            const int *a = seq + len - n;
            const int *b = seq + len - (copies + 1) * n;
            if (memcmp(a, b, (size_t)n * sizeof(int)) != 0)
                break;
            copies++;
            if (copies > max_repeats) {
                if (out_ngram)
                    *out_ngram = n;
                return true;
            }
        }
    }
    return false;
}

/* log of the softmax normaliser of one row, summed in double so that a
 * token's probability does not depend on how close the other logits are to
 * it. Each term is expf (within 1 ulp: a probability off by at most ~1e-7
 * relative) rather than the double exp, which cost a tenth of a small
 * model's decode step over a 600-token vocabulary (the rounding of
 * row[i] - mx only matters for terms far below the largest, which is 1). */
static double fe_log_sum_exp(const float *row, int n) {
    float mx = row[0];
    for (int i = 1; i < n; i++)
        if (row[i] > mx)
            mx = row[i];
    /* Terms below e^-88 (< 1e-38) cannot change a sum that is at least 1 in
     * double; skipping them also skips expf's slow underflow path, which a
     * confident model's logits take for most of the vocabulary. */
    /* Even positions into s0, odd ones into s1, in order; the terms come
     * from fe_expf_rows (expf's numbers, eight at a time) by chunks of an
     * even length, so a term's parity is its position's. */
    double s0 = 0.0, s1 = 0.0;
    float e[256];
    for (int c = 0; c < n; c += 256) {
        int len = n - c < 256 ? n - c : 256;
        for (int j = 0; j < len; j++) {
            float d = row[c + j] - mx;
            e[j] = d > -88.0f ? d : 0.0f; /* 0: a placeholder, not summed */
        }
        fe_expf_rows(e, e, (size_t)len);
        for (int j = 0; j < len; j++)
            if (row[c + j] - mx > -88.0f) {
                if (j % 2 == 0)
                    s0 += e[j];
                else
                    s1 += e[j];
            }
    }
    return mx + log(s0 + s1);
}

static void fe_confidence(const float *probs, int n, FeDecodeOutput *out) {
    fe_prob_stats(probs, n, &out->prob_stats);
    out->confidence_mean = n > 0 ? (float)(out->prob_stats.sum_prob / n) : 0.0f;
    out->confidence_min = out->prob_stats.min_prob;
}

static fe_status fe_check_abort(const FeDecodeOptions *opt) {
    if (opt->abort_callback && opt->abort_callback(opt->abort_user_data))
        return fe_set_error(FE_ERR_ABORTED, "recognition aborted");
    return FE_OK;
}

fe_status fe_decode_greedy(FeStateBuffers *sb, const FeDecodeOptions *opt, FeDecodeOutput *out) {
    const FeModelConfig *c = &sb->model->cfg;
    int limit = fe_decode_token_limit(c, opt->max_tokens);
    float *probs = sb->beam_probs;  /* row 0 of the beam arrays: capacity max_tokens */
    int n = 0, n_probs = 0;
    int32_t id = c->bos_id;
    out->n_tokens = 0;
    out->hit_length_limit = out->repetition_stopped = false;
    FeConstraint *cons = opt->constraint;
    if (cons)
        fe_constraint_reset(cons);
    FE_TRY(fe_model_cross_kv(sb));
    for (int pos = 0;; pos++) {
        FE_TRY(fe_check_abort(opt));
        FE_TRY(fe_model_decode_step(sb, &id, 1, pos));
        float *row = sb->host_logits;
        if (pos == 0 && opt->first_logits)
            memcpy(opt->first_logits, row, (size_t)c->vocab_size * sizeof(float));
        if (cons)
            fe_constraint_apply(cons, 0, row);
        int best = 0;
        for (int v = 1; v < c->vocab_size; v++)
            if (row[v] > row[best])
                best = v;
        probs[n_probs++] = (float)exp((double)row[best] - fe_log_sum_exp(row, c->vocab_size));
        if (best == c->eos_id)
            break;
        out->tokens[n++] = best;
        if (cons)
            fe_constraint_take(cons, 0, best);
        if (n >= limit) {
            out->hit_length_limit = true;
            break;
        }
        int ngram;
        if (fe_repetition_detected(out->tokens, n, opt->max_repeats, &ngram)) {
            /* keep max_repeats copies, drop the one that went over */
            n -= ngram;
            n_probs -= ngram;
            out->repetition_stopped = true;
            break;
        }
        id = best;
    }
    out->n_tokens = n;
    fe_confidence(probs, n_probs, out);
    return FE_OK;
}

/* The beam arrays: row r's tokens/probs at [r * T]. */
typedef struct {
    FeStateBuffers *sb;
    int T;                         /* row stride: max_tokens                   */
    int width;
    int n_fin;
} FeBeam;

/* Keeps the `width` best finished hypotheses; a new one replaces the worst
 * when better (strictly, so the earlier of two equals stays). extra_prob >= 0
 * is appended to the probabilities (the EOS that ended it). */
static void fe_beam_finish(FeBeam *bm, const int *tokens, const float *probs, int n_tokens,
                           float extra_prob, double score, bool repetition, bool length_limit) {
    FeStateBuffers *sb = bm->sb;
    int slot;
    if (bm->n_fin < bm->width) {
        slot = bm->n_fin++;
    } else {
        slot = 0;
        for (int i = 1; i < bm->n_fin; i++)
            if (sb->fin_score[i] < sb->fin_score[slot])
                slot = i;
        if (!(score > sb->fin_score[slot]))
            return;
    }
    float *fp = sb->fin_probs + (size_t)slot * (bm->T + 1);
    memcpy(sb->fin_tokens + (size_t)slot * bm->T, tokens, (size_t)n_tokens * sizeof(int));
    memcpy(fp, probs, (size_t)n_tokens * sizeof(float));
    sb->fin_len[slot] = n_tokens;
    sb->fin_n_probs[slot] = n_tokens;
    if (extra_prob >= 0.0f)
        fp[sb->fin_n_probs[slot]++] = extra_prob;
    sb->fin_score[slot] = score;
    sb->fin_repetition[slot] = repetition;
    sb->fin_length_limit[slot] = length_limit;
}

static double fe_normalised(double score, int length, float alpha) {
    return length > 0 ? score / pow((double)length, alpha) : score;
}

/* Is candidate (score s, beam b, token t) ranked before (s2, b2, t2)? */
static bool fe_cand_before(double s, int b, int t, double s2, int b2, int t2) {
    if (s != s2)
        return s > s2;
    if (b != b2)
        return b < b2;
    return t < t2;
}

fe_status fe_decode_beam(FeStateBuffers *sb, const FeDecodeOptions *opt, FeDecodeOutput *out) {
    const FeModelConfig *c = &sb->model->cfg;
    int W = opt->beam_width;
    FeConstraint *cons = opt->constraint;
    if (cons)
        fe_constraint_reset(cons);
    FE_TRY(fe_state_buffers_reserve_beams(sb, W));
    FE_TRY(fe_model_cross_kv(sb));
    int limit = fe_decode_token_limit(c, opt->max_tokens);
    int V = c->vocab_size, T = c->max_tokens;
    FeBeam bm = {.sb = sb, .T = T, .width = W, .n_fin = 0};
    int *len = sb->beam_len, *new_len = sb->beam_len + W;
    double *score = sb->beam_score, *new_score = sb->beam_score + W;
    int alive = 1;
    len[0] = 0;
    score[0] = 0.0;
    out->n_tokens = 0;
    out->hit_length_limit = out->repetition_stopped = false;

    for (int pos = 0;; pos++) {
        FE_TRY(fe_check_abort(opt));
        int32_t step_ids[FE_MAX_BEAM];
        for (int r = 0; r < alive; r++)
            step_ids[r] = pos == 0 ? c->bos_id : sb->beam_tokens[(size_t)r * T + len[r] - 1];
        FE_TRY(fe_model_decode_step(sb, step_ids, alive, pos));
        if (pos == 0 && opt->first_logits)
            memcpy(opt->first_logits, sb->host_logits, (size_t)V * sizeof(float));

        /* The W best continuations of each row, then the W*W best overall. */
        int n_cand = 0;
        for (int r = 0; r < alive; r++) {
            float *row = sb->host_logits + (size_t)r * V;
            if (cons)
                fe_constraint_apply(cons, r, row);
            double lse = fe_log_sum_exp(row, V);
            int k = 0;
            int *top = sb->topk_index;
            for (int v = 0; v < V; v++) {
                /* insertion into a sorted top-W list; strict > keeps the
                 * lower id first among equal logits */
                if (k == W && !(row[v] > row[top[k - 1]]))
                    continue;
                int i = k < W ? k++ : W - 1;
                while (i > 0 && row[v] > row[top[i - 1]]) {
                    top[i] = top[i - 1];
                    i--;
                }
                top[i] = v;
            }
            for (int i = 0; i < k; i++) {
                double lp = (double)row[top[i]] - lse;
                sb->cand_beam[n_cand] = r;
                sb->cand_token[n_cand] = top[i];
                sb->cand_score[n_cand] = score[r] + lp;
                sb->cand_prob[n_cand] = (float)exp(lp);
                n_cand++;
            }
        }
        /* insertion sort of the candidates (at most W*W, no allocation) */
        for (int i = 1; i < n_cand; i++) {
            int b = sb->cand_beam[i], t = sb->cand_token[i];
            double s = sb->cand_score[i];
            float p = sb->cand_prob[i];
            int j = i;
            while (j > 0 && fe_cand_before(s, b, t, sb->cand_score[j - 1], sb->cand_beam[j - 1],
                                           sb->cand_token[j - 1])) {
                sb->cand_beam[j] = sb->cand_beam[j - 1];
                sb->cand_token[j] = sb->cand_token[j - 1];
                sb->cand_score[j] = sb->cand_score[j - 1];
                sb->cand_prob[j] = sb->cand_prob[j - 1];
                j--;
            }
            sb->cand_beam[j] = b;
            sb->cand_token[j] = t;
            sb->cand_score[j] = s;
            sb->cand_prob[j] = p;
        }

        int new_alive = 0;
        for (int i = 0; i < n_cand && new_alive < W; i++) {
            int r = sb->cand_beam[i], tok = sb->cand_token[i];
            const int *rt = sb->beam_tokens + (size_t)r * T;
            const float *rp = sb->beam_probs + (size_t)r * T;
            if (tok == c->eos_id) {
                fe_beam_finish(&bm, rt, rp, len[r], sb->cand_prob[i],
                               fe_normalised(sb->cand_score[i], len[r] + 1, opt->length_penalty),
                               false, false);
                continue;
            }
            /* a live continuation: row new_alive = row r + tok */
            int nr = new_alive;
            int *nt = sb->beam_new_tokens + (size_t)nr * T;
            float *np = sb->beam_new_probs + (size_t)nr * T;
            memcpy(nt, rt, (size_t)len[r] * sizeof(int));
            memcpy(np, rp, (size_t)len[r] * sizeof(float));
            nt[len[r]] = tok;
            np[len[r]] = sb->cand_prob[i];
            int nl = len[r] + 1;
            double ns = sb->cand_score[i];
            int ngram;
            if (nl >= limit) {
                fe_beam_finish(&bm, nt, np, nl, -1.0f, fe_normalised(ns, nl, opt->length_penalty),
                               false, true);
                continue;
            }
            if (fe_repetition_detected(nt, nl, opt->max_repeats, &ngram)) {
                fe_beam_finish(&bm, nt, np, nl - ngram, -1.0f,
                               fe_normalised(ns, nl, opt->length_penalty), true, false);
                continue;
            }
            new_len[nr] = nl;
            new_score[nr] = ns;
            sb->beam_parent[nr] = r;
            if (cons)
                fe_constraint_branch(cons, nr, r, tok);
            new_alive++;
        }
        if (bm.n_fin >= W || new_alive == 0)
            break;
        /* the live rows become the beam; the caches follow their parents */
        FE_TRY(fe_model_reorder_cache(sb, sb->beam_parent, new_alive, pos + 1));
        if (cons)
            fe_constraint_commit(cons);
        int *swap_t = sb->beam_tokens;
        sb->beam_tokens = sb->beam_new_tokens;
        sb->beam_new_tokens = swap_t;
        float *swap_p = sb->beam_probs;
        sb->beam_probs = sb->beam_new_probs;
        sb->beam_new_probs = swap_p;
        for (int r = 0; r < new_alive; r++) {
            len[r] = new_len[r];
            score[r] = new_score[r];
        }
        alive = new_alive;
    }

    int best = 0;
    for (int f = 1; f < bm.n_fin; f++)
        if (sb->fin_score[f] > sb->fin_score[best])
            best = f;
    if (bm.n_fin == 0)
        return fe_set_error(FE_ERR_INTERNAL, "beam search ended without a hypothesis");
    int n_tokens = sb->fin_len[best], n_probs = sb->fin_n_probs[best];
    memcpy(out->tokens, sb->fin_tokens + (size_t)best * T, (size_t)n_tokens * sizeof(int));
    out->n_tokens = n_tokens;
    out->repetition_stopped = sb->fin_repetition[best];
    out->hit_length_limit = sb->fin_length_limit[best];
    fe_confidence(sb->fin_probs + (size_t)best * (T + 1), n_probs, out);
    return FE_OK;
}

/* ------------------------------------------------------------------------ */
/* Multi-image greedy batches                                               */

/* The greedy choice for one row of logits: the first largest logit and its
 * probability, exactly as fe_decode_greedy computes them. */
static int fe_greedy_pick(const float *row, int V, float *prob) {
    int best = 0;
    for (int v = 1; v < V; v++)
        if (row[v] > row[best])
            best = v;
    *prob = (float)exp((double)row[best] - fe_log_sum_exp(row, V));
    return best;
}

fe_status fe_decode_greedy_batch(FeStateBuffers *sb, const FeDecodeOptions *opt,
                                 FeDecodeOutput *out, int n_rows) {
    const FeModelConfig *c = &sb->model->cfg;
    if (n_rows < 1 || n_rows > sb->beam_capacity)
        return fe_set_error(FE_ERR_INTERNAL, "batch decode: %d rows, capacity %d", n_rows,
                            sb->beam_capacity);
    int limit = fe_decode_token_limit(c, opt->max_tokens);
    int T = c->max_tokens, V = c->vocab_size;
    /* Live row r decodes image slot[r]; its probabilities go to row slot[r]
     * of the beam arrays (capacity max_tokens, as in fe_decode_greedy). The
     * number of probabilities so far is beam_len[slot]. */
    int *slot = sb->batch_slot, *perm = sb->batch_perm, *n_probs = sb->beam_len;
    int32_t *ids = sb->batch_ids;
    for (int r = 0; r < n_rows; r++) {
        slot[r] = r;
        ids[r] = c->bos_id;
        n_probs[r] = 0;
        out[r].n_tokens = 0;
        out[r].hit_length_limit = out[r].repetition_stopped = false;
        out[r].confidence_mean = out[r].confidence_min = 0.0f;
        memset(&out[r].prob_stats, 0, sizeof out[r].prob_stats);
        out[r].decode_ms = out[r].decode_cpu_ms = 0.0;
        if (opt->row_constraints && opt->row_constraints[r])
            fe_constraint_reset(opt->row_constraints[r]);
    }
    int alive = n_rows;
    /* The steps' time is charged to the live rows, shared equally. Between
     * two steps where rows finish the live set does not change, so the time
     * is read only then: the process CPU clock is a system call (two a step
     * cost ~20 ms of the paper's CPU, bench/RESULTS.md). t0/c0 start the
     * stretch. */
    double t0 = fe_wall_ms(), c0 = fe_cpu_ms();
    for (int pos = 0; alive > 0; pos++) {
        FE_TRY(fe_check_abort(opt));
        FE_TRY(fe_model_decode_step_rows(sb, ids, alive, pos));
        /* Which rows end here; perm[] starts as the identity and finished
         * rows are swapped out for the last live one (only that row's caches
         * move, not every row after it). */
        int n_done = 0;
        for (int r = 0; r < alive; r++) {
            FeDecodeOutput *o = &out[slot[r]];
            float *probs = sb->beam_probs + (size_t)slot[r] * T;
            float p;
            FeConstraint *rc = opt->row_constraints ? opt->row_constraints[slot[r]] : NULL;
            if (rc)
                fe_constraint_apply(rc, 0, sb->host_logits + (size_t)r * V);
            int best = fe_greedy_pick(sb->host_logits + (size_t)r * V, V, &p);
            probs[n_probs[slot[r]]++] = p;
            perm[r] = r;
            bool done = false;
            if (best == c->eos_id) {
                done = true;
            } else {
                o->tokens[o->n_tokens++] = best;
                if (rc)
                    fe_constraint_take(rc, 0, best);
                int ngram;
                if (o->n_tokens >= limit) {
                    o->hit_length_limit = true;
                    done = true;
                } else if (fe_repetition_detected(o->tokens, o->n_tokens, opt->max_repeats,
                                                  &ngram)) {
                    /* keep max_repeats copies, drop the one that went over */
                    o->n_tokens -= ngram;
                    n_probs[slot[r]] -= ngram;
                    o->repetition_stopped = true;
                    done = true;
                }
            }
            ids[r] = best;
            if (done) {
                fe_confidence(probs, n_probs[slot[r]], o);
                perm[r] = -1;
                n_done++;
            }
        }
        if (n_done == 0)
            continue;
        /* the stretch's time, shared by the rows that ran all of it */
        double dt = fe_wall_ms() - t0, dc = fe_cpu_ms() - c0;
        for (int r = 0; r < alive; r++) {
            out[slot[r]].decode_ms += dt / alive;
            out[slot[r]].decode_cpu_ms += dc / alive;
        }
        /* report the finished rows, in row order */
        for (int r = 0; r < alive; r++)
            if (perm[r] < 0 && opt->row_done)
                FE_TRY(opt->row_done(opt->row_done_user_data, slot[r], &out[slot[r]]));
        /* compact: from the end, so that the row moved into a hole is live */
        int new_alive = alive;
        for (int r = alive - 1; r >= 0; r--) {
            if (perm[r] >= 0)
                continue;
            int last = new_alive - 1;
            perm[r] = perm[last];
            slot[r] = slot[last];
            ids[r] = ids[last];
            sb->host_spans[2 * r] = sb->host_spans[2 * last];
            sb->host_spans[2 * r + 1] = sb->host_spans[2 * last + 1];
            new_alive--;
        }
        alive = new_alive;
        if (alive > 0)
            FE_TRY(fe_model_reorder_cache(sb, perm, alive, pos + 1));
        /* the next stretch starts here: the callbacks and the compaction were
         * not charged before either */
        t0 = fe_wall_ms();
        c0 = fe_cpu_ms();
    }
    return FE_OK;
}

int fe_recognize_batch_size(const FeModel *model, const FeRecognizeParams *params) {
    if (!params || params->beam_width > 1 || params->max_batch == 1)
        return 1;
    int want = params->max_batch;
    if (want <= 0) {
        /* FE_MAX_BATCH lets a program that cannot set the field (a benchmark
         * driving formulate-cli) choose; a bad value is the default */
        const char *env = getenv("FE_MAX_BATCH");
        char *end = NULL;
        long v = env && *env ? strtol(env, &end, 10) : 0;
        want = env && *env && end && !*end && v >= 1 ? (int)(v < FE_MAX_BEAM ? v : FE_MAX_BEAM)
                                                    : FE_DEFAULT_MAX_BATCH;
    }
    if (want > FE_MAX_BEAM)
        want = FE_MAX_BEAM;
    if (want <= 1)
        return 1;
    int exact = 0;
    if (!fe_model_batch_supported(model, &exact))
        return 1;
    if (exact > 0 && want > exact)
        want = exact;
    return want;
}

int fe_scale_candidate_count(const FeImage *image, int scale_candidates) {
    return image->em_px_hint > 0.0f || scale_candidates < 1 ? 1 : scale_candidates;
}

float fe_scale_candidate_factor(int n_candidates, int c) {
    /* The estimate first, then outwards alternating below and above it, so a
     * tie keeps the estimate. An even count tries one more below. */
    int half = (n_candidates - 1) / 2;
    float ratio = half > 0 ? powf(FE_SCALE_SEARCH_SPAN, 1.0f / (float)half) : 1.0f;
    int step = (c + 1) / 2 * (c % 2 ? -1 : 1);
    return powf(ratio, (float)step);
}

/* One decoder row of a group: an image at one candidate scale. */
typedef struct {
    int image;                     /* index in the group                      */
    int height, width;
    float scale;
    float *pixels;                 /* preprocessed, freed once encoded         */
    int32_t span[2];               /* its packed encoder rows                  */
    FeConstraint *constraint;      /* its image's glyphs, NULL = none          */
    FeDecodeOutput out;
} FeBatchRow;

/* Per image of a group: the rows of its candidates and what they cost. */
typedef struct {
    int first_row, n_rows, pending;
    double pre_ms, pre_cpu_ms, enc_ms, enc_cpu_ms, dec_ms, dec_cpu_ms;
} FeBatchImage;

typedef struct {
    const FeModelConfig *cfg;
    char *const *vocab;
    int n_vocab;
    const FeCalibration *calibration;
    const FeRecognizeParams *p;
    FeResult *results;             /* the group's first image's                */
    size_t base;                   /* the group's first image's index in the call */
    const FeSymbolConstraint *constraints; /* the group's first image's, or NULL */
    FeConstraint *chunk_constraints[FE_MAX_BEAM]; /* per row of a decode chunk */
    FeBatchImage image[FE_MAX_BEAM];
    FeBatchRow row[FE_MAX_BEAM];
    int chunk_row[FE_MAX_BEAM];    /* the decode chunk's rows                 */
    bool rechecking;               /* decoding rechecks (FeRecognizeParams)   */
    int *done;                     /* formulas finished in the whole call     */
    int total;
} FeBatchRun;

/* An image whose candidates are all decoded: the most confident one (the
 * first in candidate order among equals, as the serial search keeps it)
 * becomes its result, now, so that an abort later leaves it valid. */
static fe_status fe_batch_image_done(FeBatchRun *run, int img) {
    const FeBatchImage *im = &run->image[img];
    const FeBatchRow *best = &run->row[im->first_row];
    for (int r = im->first_row + 1; r < im->first_row + im->n_rows; r++)
        if (run->row[r].out.confidence_mean > best->out.confidence_mean)
            best = &run->row[r];
    const FeDecodeOutput *out = &best->out;
    FeResult *res = &run->results[img];
    char *latex;
    fe_status st = fe_detokenize_decoded(run->vocab, run->n_vocab, run->cfg, out->tokens,
                                         out->n_tokens, &latex);
    if (st != FE_OK)
        return st;
    int *ids = malloc((size_t)(out->n_tokens > 0 ? out->n_tokens : 1) * sizeof(int));
    if (!ids) {
        free(latex);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(ids, out->tokens, (size_t)out->n_tokens * sizeof(int));
    res->latex = latex;
    res->token_ids = ids;
    res->n_tokens = out->n_tokens;
    fe_result_set_confidence(run->vocab, run->n_vocab, run->calibration, out, res);
    res->hit_length_limit = out->hit_length_limit;
    res->repetition_stopped = out->repetition_stopped;
    res->input_width = best->width;
    res->input_height = best->height;
    res->scale = best->scale;
    res->unknown_symbols = fe_constraint_unknown(best->constraint);
    /* all candidates together: what the image cost */
    res->preprocess_ms = im->pre_ms;
    res->encoder_ms = im->enc_ms;
    res->decoder_ms = im->dec_ms;
    res->preprocess_cpu_ms = im->pre_cpu_ms;
    res->encoder_cpu_ms = im->enc_cpu_ms;
    res->decoder_cpu_ms = im->dec_cpu_ms;
    if (run->rechecking)
        return FE_OK;
    (*run->done)++;
    if (run->p->progress_callback)
        run->p->progress_callback(*run->done, run->total, run->p->progress_user_data);
    return FE_OK;
}

static fe_status fe_batch_row_done(void *user_data, int row, FeDecodeOutput *out) {
    FeBatchRun *run = user_data;
    FeBatchRow *r = &run->row[run->chunk_row[row]];
    FeBatchImage *im = &run->image[r->image];
    r->out = *out;
    im->dec_ms += out->decode_ms;
    im->dec_cpu_ms += out->decode_cpu_ms;
    if (--im->pending == 0)
        return fe_batch_image_done(run, r->image);
    return FE_OK;
}

/* Preprocesses image `img` of the group at each candidate scale, one row per
 * distinct scale, appended at *n_rows (the caller made room for
 * FE_MAX_SCALE_CANDIDATES). */
static fe_status fe_batch_preprocess(FeBatchRun *run, const FeImage *image, int img, int *n_rows) {
    FeBatchImage *im = &run->image[img];
    int n_cand = fe_scale_candidate_count(image, run->p->scale_candidates);
    *im = (FeBatchImage){.first_row = *n_rows};
    for (int c = 0; c < n_cand; c++) {
        FeBatchRow *r = &run->row[*n_rows];
        *r = (FeBatchRow){.image = img};
        double t0 = fe_wall_ms(), c0 = fe_cpu_ms();
        fe_status st = fe_preprocess_config_em(run->cfg, image,
                                               fe_scale_candidate_factor(n_cand, c), &r->pixels,
                                               &r->height, &r->width, &r->scale);
        if (st != FE_OK) {
            r->pixels = NULL; /* fe_preprocess_config_em leaves nothing to free */
            return st;
        }
        im->pre_ms += fe_wall_ms() - t0;
        im->pre_cpu_ms += fe_cpu_ms() - c0;
        /* candidates that preprocess alike would decode alike */
        bool seen = false;
        for (int k = im->first_row; k < *n_rows; k++)
            seen = seen || run->row[k].scale == r->scale;
        if (seen) {
            free(r->pixels);
            r->pixels = NULL;
            continue;
        }
        if (run->constraints) {
            fe_status e = fe_constraint_new(run->vocab, run->n_vocab, run->cfg,
                                            &run->constraints[img], 1, run->p->symbol_penalty,
                                            run->p->eos_unused_penalty, &r->constraint);
            if (e != FE_OK) {
                free(r->pixels);
                r->pixels = NULL;
                return e;
            }
        }
        (*n_rows)++;
        im->n_rows++;
    }
    im->pending = im->n_rows;
    return FE_OK;
}

static void fe_batch_free_constraints(FeBatchRun *run) {
    for (int r = 0; r < FE_MAX_BEAM; r++) {
        fe_constraint_free(run->row[r].constraint);
        run->row[r].constraint = NULL;
    }
}

/* Decodes the group's rows order[0..n) in chunks of max_batch, from the
 * encodings they hold (their spans). */
static fe_status fe_batch_decode_rows(FeStateBuffers *sb, FeBatchRun *run, FeDecodeOptions *opt,
                                      const int *order, int n, int max_batch) {
    int T = run->cfg->max_tokens;
    FeDecodeOutput out[FE_MAX_BEAM];
    fe_status st = FE_OK;
    for (int c0 = 0; st == FE_OK && c0 < n; c0 += max_batch) {
        int rows = n - c0 < max_batch ? n - c0 : max_batch;
        for (int r = 0; r < rows; r++) {
            const FeBatchRow *row = &run->row[order[c0 + r]];
            out[r] = (FeDecodeOutput){.tokens = sb->beam_tokens + (size_t)(c0 + r) * T};
            sb->host_spans[2 * r] = row->span[0];
            sb->host_spans[2 * r + 1] = row->span[1];
            run->chunk_constraints[r] = row->constraint;
            run->chunk_row[r] = order[c0 + r];
        }
        st = fe_decode_greedy_batch(sb, opt, out, rows);
    }
    return st;
}

/* FeRecognizeParams.recheck for the group's images, once all are read: the
 * rows of each image it returns a constraint for are decoded again under it
 * from the encodings still in the batch (the cross K/V of every row stay
 * until the next group), the result into rechecked. */
static fe_status fe_batch_recheck(FeStateBuffers *sb, FeBatchRun *run, FeDecodeOptions *opt,
                                  int n_images, int max_batch) {
    const FeRecognizeParams *p = run->p;
    FeResult *firsts = run->results;
    size_t base = run->base;
    int order[FE_MAX_BEAM], n = 0;
    for (int g = 0; g < n_images; g++) {
        FeBatchImage *im = &run->image[g];
        if (firsts[g].latex == NULL)
            continue;
        const FeSymbolConstraint *sc = p->recheck(p->recheck_user_data, base + (size_t)g, &firsts[g]);
        if (sc == NULL)
            continue;
        for (int r = im->first_row; r < im->first_row + im->n_rows; r++) {
            fe_constraint_free(run->row[r].constraint);
            run->row[r].constraint = NULL;
            if (fe_constraint_new(run->vocab, run->n_vocab, run->cfg, sc, 1, p->symbol_penalty,
                                  p->eos_unused_penalty, &run->row[r].constraint) != FE_OK)
                return FE_OK; /* no recheck (out of memory): the first readings stand */
            order[n++] = r;
        }
        *im = (FeBatchImage){.first_row = im->first_row, .n_rows = im->n_rows, .pending = im->n_rows};
    }
    if (n == 0)
        return FE_OK;
    run->results = p->rechecked + base;
    run->rechecking = true;
    opt->row_constraints = run->chunk_constraints;
    fe_status st = fe_batch_decode_rows(sb, run, opt, order, n, max_batch);
    run->results = firsts;
    run->rechecking = false;
    if (st == FE_OK || st == FE_ERR_ABORTED)
        return st;
    /* A recheck that fails leaves its images without one; the first
     * readings stand. */
    for (int g = 0; g < n_images; g++)
        fe_result_clear(&p->rechecked[base + (size_t)g]);
    return FE_OK;
}

/* One group: images [0, count) of `images`, every candidate a row, at most
 * FE_MAX_BEAM rows. *failed receives the status of the first image that
 * could not be preprocessed or encoded (FE_OK when none), *failed_at its
 * index; the images before it are decoded first, as the serial path would
 * have. The rows decode in chunks of max_batch. */
static fe_status fe_recognize_group(FeStateBuffers *sb, FeBatchRun *run, const FeImage *images,
                                    int count, int max_batch, fe_status *failed, int *failed_at) {
    const FeModelConfig *c = run->cfg;
    const FeRecognizeParams *p = run->p;
    int n_rows = 0, n_images = 0;
    int64_t tokens = 0;
    int heights[FE_MAX_BEAM], widths[FE_MAX_BEAM];
    fe_status st = FE_OK;
    *failed = FE_OK;
    *failed_at = -1;
    for (int g = 0; g < count; g++) {
        fe_status e = fe_batch_preprocess(run, &images[g], g, &n_rows);
        if (e != FE_OK) {
            for (int r = run->image[g].first_row; r < run->image[g].first_row + FE_MAX_SCALE_CANDIDATES && r < FE_MAX_BEAM; r++) {
                free(run->row[r].pixels);
                run->row[r].pixels = NULL;
            }
            n_rows = run->image[g].first_row;
            *failed = e;
            *failed_at = g;
            break;
        }
        n_images++;
    }
    for (int r = 0; r < n_rows; r++) {
        heights[r] = run->row[r].height;
        widths[r] = run->row[r].width;
        tokens += (int64_t)(heights[r] / c->height_stride) * (widths[r] / c->width_stride);
    }
    if (n_rows > 0)
        st = fe_model_batch_reserve(sb, n_rows, tokens);
    /* The encoder's buffers sized once for all the rows (the largest crop),
     * before the first is encoded: growing them as each wider crop came
     * remade the arena (and the serial path's cross K/V in it) up to once
     * per row, each time on fresh pages. */
    if (st == FE_OK && n_rows > 0)
        st = fe_model_encoder_reserve(sb, heights, widths, n_rows);
    for (int g = 0; st == FE_OK && g < n_images; g++) {
        FeBatchImage *im = &run->image[g];
        if (p->abort_callback && p->abort_callback(p->abort_user_data)) {
            st = fe_set_error(FE_ERR_ABORTED, "recognition aborted");
            break;
        }
        fe_status e = FE_OK;
        for (int r = im->first_row; e == FE_OK && r < im->first_row + im->n_rows; r++) {
            FeBatchRow *row = &run->row[r];
            double t0 = fe_wall_ms(), c0 = fe_cpu_ms();
            e = fe_model_encode(sb, row->pixels, row->height, row->width);
            free(row->pixels);
            row->pixels = NULL;
            if (e == FE_OK)
                e = fe_model_batch_add(sb, r);
            if (e == FE_OK) {
                row->span[0] = sb->host_spans[2 * r];
                row->span[1] = sb->host_spans[2 * r + 1];
            }
            im->enc_ms += fe_wall_ms() - t0;
            im->enc_cpu_ms += fe_cpu_ms() - c0;
        }
        if (e != FE_OK) {
            /* decode the ones before it, then report it */
            *failed = e;
            *failed_at = g;
            n_rows = im->first_row;
            break;
        }
    }
    for (int r = 0; r < FE_MAX_BEAM; r++) {
        free(run->row[r].pixels);
        run->row[r].pixels = NULL;
    }
    if (st != FE_OK) {
        fe_batch_free_constraints(run);
        return st;
    }
    FeDecodeOptions opt = {
        .beam_width = 1,
        .max_tokens = p->max_tokens,
        .max_repeats = p->max_repeats,
        .length_penalty = p->length_penalty,
        .abort_callback = p->abort_callback,
        .abort_user_data = p->abort_user_data,
        .row_done = fe_batch_row_done,
        .row_done_user_data = run,
    };
    if (run->constraints)
        opt.row_constraints = run->chunk_constraints;
    int order[FE_MAX_BEAM];
    for (int r = 0; r < n_rows; r++)
        order[r] = r;
    st = fe_batch_decode_rows(sb, run, &opt, order, n_rows, max_batch);
    if (st == FE_OK && p->recheck)
        st = fe_batch_recheck(sb, run, &opt, n_images, max_batch);
    fe_batch_free_constraints(run);
    return st;
}

fe_status fe_recognize_batched(FeStateBuffers *sb, char *const *vocab, int n_vocab,
                               const FeCalibration *calibration, const FeImage *images, size_t n, const FeRecognizeParams *p,
                               int max_batch, FeResult *results) {
    if (max_batch < 1 || max_batch > FE_MAX_BEAM || p->beam_width > 1 ||
        p->scale_candidates > FE_MAX_SCALE_CANDIDATES)
        return fe_set_error(FE_ERR_INTERNAL, "batched recognition of %d rows, beam %d", max_batch,
                            p->beam_width);
    if (n > INT32_MAX)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_recognize: %zu images", n);
    FeBatchRun *run = calloc(1, sizeof *run);
    if (!run)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    int done = 0;
    *run = (FeBatchRun){.cfg = &sb->model->cfg, .vocab = vocab, .n_vocab = n_vocab,
                        .calibration = calibration, .p = p,
                        .done = &done, .total = (int)n};
    fe_status st = FE_OK;
    size_t g0 = 0;
    while (st == FE_OK && g0 < n) {
        if (p->abort_callback && p->abort_callback(p->abort_user_data)) {
            st = fe_set_error(FE_ERR_ABORTED, "recognition aborted");
            break;
        }
        /* Whole images while their candidates fit in max_batch rows (at
         * least one image; one with more candidates decodes in chunks). */
        int count = 0, rows = 0;
        while (g0 + (size_t)count < n && count < FE_MAX_BEAM) {
            int k = fe_scale_candidate_count(&images[g0 + (size_t)count], p->scale_candidates);
            if (count > 0 && rows + k > max_batch)
                break;
            rows += k;
            count++;
            if (rows >= max_batch)
                break;
        }
        fe_status failed;
        int failed_at;
        run->results = results + g0;
        run->base = g0;
        run->constraints = p->constraints ? p->constraints + g0 : NULL;
        st = fe_recognize_group(sb, run, images + g0, count, max_batch, &failed, &failed_at);
        if (st != FE_OK) {
            if (n > 1 && st != FE_ERR_ABORTED)
                fe_prefix_error(st, "images %zu-%zu", g0, g0 + (size_t)count - 1);
            break;
        }
        if (failed != FE_OK) {
            st = failed;
            if (n > 1 && failed != FE_ERR_ABORTED)
                fe_prefix_error(failed, "image %zu", g0 + (size_t)failed_at);
            break;
        }
        g0 += (size_t)count;
    }
    free(run);
    return st;
}
