/* fe-decode.c - greedy and beam-search decoding over fe_model_decode_step.
 *
 * Both are deterministic: ties between equal scores go to the lower token id
 * and then to the lower beam, never to whatever order a sort happens to leave.
 * Nothing here allocates: every array lives in FeStateBuffers, sized before
 * the first step.
 *
 * A decode emits at most `limit` tokens (the model's max_tokens, the number
 * of learned positions: step t feeds position t and emits token t+1, like
 * tools/train/model.py's greedy_decode). Confidence is the mean and minimum
 * probability of the chosen tokens, the final EOS included when there is one,
 * since "this is where the formula ends" is a decision too. */
#include "fe-model.h"

#include <math.h>
#include <string.h>

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
    double s0 = 0.0, s1 = 0.0;
    int i = 0;
    for (; i + 2 <= n; i += 2) {
        float d0 = row[i] - mx, d1 = row[i + 1] - mx;
        if (d0 > -88.0f)
            s0 += expf(d0);
        if (d1 > -88.0f)
            s1 += expf(d1);
    }
    for (; i < n; i++)
        if (row[i] - mx > -88.0f)
            s0 += expf(row[i] - mx);
    return mx + log(s0 + s1);
}

static void fe_confidence(const float *probs, int n, float *mean, float *min) {
    if (n <= 0) {
        *mean = 0.0f;
        *min = 0.0f;
        return;
    }
    double s = 0.0;
    float m = probs[0];
    for (int i = 0; i < n; i++) {
        s += probs[i];
        if (probs[i] < m)
            m = probs[i];
    }
    *mean = (float)(s / n);
    *min = m;
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
    FE_TRY(fe_model_cross_kv(sb));
    for (int pos = 0;; pos++) {
        FE_TRY(fe_check_abort(opt));
        FE_TRY(fe_model_decode_step(sb, &id, 1, pos));
        const float *row = sb->host_logits;
        if (pos == 0 && opt->first_logits)
            memcpy(opt->first_logits, row, (size_t)c->vocab_size * sizeof(float));
        int best = 0;
        for (int v = 1; v < c->vocab_size; v++)
            if (row[v] > row[best])
                best = v;
        probs[n_probs++] = (float)exp((double)row[best] - fe_log_sum_exp(row, c->vocab_size));
        if (best == c->eos_id)
            break;
        out->tokens[n++] = best;
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
    fe_confidence(probs, n_probs, &out->confidence_mean, &out->confidence_min);
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
            const float *row = sb->host_logits + (size_t)r * V;
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
            new_alive++;
        }
        if (bm.n_fin >= W || new_alive == 0)
            break;
        /* the live rows become the beam; the caches follow their parents */
        FE_TRY(fe_model_reorder_cache(sb, sb->beam_parent, new_alive, pos + 1));
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
    fe_confidence(sb->fin_probs + (size_t)best * (T + 1), n_probs, &out->confidence_mean,
                  &out->confidence_min);
    return FE_OK;
}
