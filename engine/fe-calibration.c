/* fe-calibration.c - the confidence features of a decode and the model
 * file's calibration over them ("Confidence" in fe.h).
 *
 * Why features and not the mean token probability alone: measured on the
 * validation split (data/models/README.md, "Confidence"), wrong readings of
 * the model are mostly read with high per-token probability; what gives them
 * away is a single unsure token, a run-on of one repeated n-gram, a brace
 * that never closes, or a decode that the repetition guard had to stop.
 * tools/eval/calibrate.py reads these features from formulate-cli --json and
 * fits the logistic model whose coefficients the engine applies here; the
 * features must therefore be computed in one place only, this file. */
#include "fe-model.h"
#include "fe-json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A token read with probability 1e-9 is as wrong as one read with 1e-30: the
 * floor keeps one near-impossible token from dominating the linear score. */
#define FE_CONF_LOG_PROB_FLOOR (-20.0f)
/* Longest repeated unit looked for: "\frac{1}{2}" is 8 tokens. */
#define FE_CONF_REPEAT_MAX_NGRAM 8
/* A pair like "00" in "100" is ordinary; three copies back to back start to
 * be the run-on failure. */
#define FE_CONF_REPEAT_MIN_COPIES 3
#define FE_CONF_STRUCTURE_ERRORS_MAX 4

static const char *const fe_conf_names[FE_CONFIDENCE_N_FEATURES] = {
    [FE_CONF_MEAN_PROB] = "mean_prob",
    [FE_CONF_MEAN_LOG_PROB] = "mean_log_prob",
    [FE_CONF_MIN_LOG_PROB] = "min_log_prob",
    [FE_CONF_FRAC_BELOW_050] = "frac_below_050",
    [FE_CONF_FRAC_BELOW_080] = "frac_below_080",
    [FE_CONF_LOG_LENGTH] = "log_length",
    [FE_CONF_REPEAT_FRACTION] = "repeat_fraction",
    [FE_CONF_STRUCTURE_ERRORS] = "structure_errors",
    [FE_CONF_STOPPED] = "stopped",
};

const char *fe_confidence_feature_name(int index) {
    if (index < 0 || index >= FE_CONFIDENCE_N_FEATURES)
        return NULL;
    return fe_conf_names[index];
}

void fe_prob_stats(const float *probs, int n, FeProbStats *out) {
    memset(out, 0, sizeof *out);
    if (n <= 0)
        return;
    out->n = n;
    out->min_prob = probs[0];
    out->min_log_prob = 0.0f;
    for (int i = 0; i < n; i++) {
        float p = probs[i];
        float lp = p > 0.0f ? logf(p) : FE_CONF_LOG_PROB_FLOOR;
        if (lp < FE_CONF_LOG_PROB_FLOOR)
            lp = FE_CONF_LOG_PROB_FLOOR;
        out->sum_prob += p;
        out->sum_log_prob += lp;
        if (p < out->min_prob)
            out->min_prob = p;
        if (i == 0 || lp < out->min_log_prob)
            out->min_log_prob = lp;
        out->n_below_050 += p < 0.5f;
        out->n_below_080 += p < 0.8f;
    }
}

/* Tokens covered by the longest back-to-back run of one n-gram, counting the
 * copies after the first (e.g. "f\ f\ f\ f" as "\ f" x 3 after "f": 6). */
static int fe_longest_repeat(const int *ids, int n) {
    int best = 0;
    for (int g = 1; g <= FE_CONF_REPEAT_MAX_NGRAM; g++) {
        for (int start = 0; start + g * FE_CONF_REPEAT_MIN_COPIES <= n; start++) {
            int copies = 1;
            while (start + (copies + 1) * g <= n &&
                   memcmp(ids + start, ids + start + copies * g, (size_t)g * sizeof(int)) == 0)
                copies++;
            if (copies >= FE_CONF_REPEAT_MIN_COPIES && (copies - 1) * g > best)
                best = (copies - 1) * g;
        }
    }
    return best;
}

static bool fe_has_prefix_command(const char *tok, const char *cmd) {
    size_t n = strlen(cmd);
    if (strncmp(tok, cmd, n) != 0)
        return false;
    /* "\left(" and "\left" are \left; "\leftarrow" is another command */
    char next = tok[n];
    return !((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z'));
}

/* Structure mistakes LaTeX would stop at or render wrong: a closer without its
 * opener or of the wrong kind, an opener never closed, a script with nothing
 * to apply to. Token-level, like the vocabulary: "\begin{array}" is one
 * token. */
static int fe_structure_errors(char *const *vocab, int n_vocab, const int *ids, int n) {
    enum { OPEN_BRACE, OPEN_LEFT, OPEN_ENV };
    /* One stack entry per opener: its kind and, for environments, the token
     * so that \end{X} can be matched against \begin{X}. */
    int kind[256], tok_of[256];
    int depth = 0, errors = 0, lost = 0;
    for (int i = 0; i < n; i++) {
        const char *t = ids[i] >= 0 && ids[i] < n_vocab ? vocab[ids[i]] : "";
        int k = -1;
        bool closes = false;
        if (strcmp(t, "{") == 0)
            k = OPEN_BRACE;
        else if (strcmp(t, "}") == 0)
            k = OPEN_BRACE, closes = true;
        else if (fe_has_prefix_command(t, "\\left"))
            k = OPEN_LEFT;
        else if (fe_has_prefix_command(t, "\\right"))
            k = OPEN_LEFT, closes = true;
        else if (strncmp(t, "\\begin{", 7) == 0)
            k = OPEN_ENV;
        else if (strncmp(t, "\\end{", 5) == 0)
            k = OPEN_ENV, closes = true;
        if (strcmp(t, "^") == 0 || strcmp(t, "_") == 0) {
            const char *next = i + 1 < n && ids[i + 1] >= 0 && ids[i + 1] < n_vocab
                                   ? vocab[ids[i + 1]]
                                   : NULL;
            if (!next || strcmp(next, "}") == 0 || strcmp(next, "^") == 0 ||
                strcmp(next, "_") == 0 || strcmp(next, "&") == 0 || strcmp(next, "\\\\") == 0 ||
                fe_has_prefix_command(next, "\\right") || strncmp(next, "\\end{", 5) == 0)
                errors++;
        }
        if (k < 0)
            continue;
        if (!closes) {
            if (depth < (int)(sizeof kind / sizeof kind[0])) {
                kind[depth] = k;
                tok_of[depth] = i;
                depth++;
            } else {
                lost++; /* deeper than any formula we read: still one to close */
            }
            continue;
        }
        if (lost > 0) {
            lost--;
            continue;
        }
        if (depth == 0) {
            errors++;
            continue;
        }
        bool match = kind[depth - 1] == k;
        if (match && k == OPEN_ENV) /* \begin{X} / \end{X}: the same X */
            match = strcmp(vocab[ids[tok_of[depth - 1]]] + 7, t + 5) == 0;
        if (!match)
            errors++;
        depth--; /* a wrong closer still closes: one mistake, one count */
    }
    errors += depth + lost;
    return errors;
}

void fe_confidence_features_from(char *const *vocab, int n_vocab, const int *ids, int n_ids,
                                 const FeProbStats *ps, bool stopped, float *out) {
    int n = ps->n;
    out[FE_CONF_MEAN_PROB] = n > 0 ? (float)(ps->sum_prob / n) : 0.0f;
    out[FE_CONF_MEAN_LOG_PROB] = n > 0 ? (float)(ps->sum_log_prob / n) : FE_CONF_LOG_PROB_FLOOR;
    out[FE_CONF_MIN_LOG_PROB] = n > 0 ? ps->min_log_prob : FE_CONF_LOG_PROB_FLOOR;
    out[FE_CONF_FRAC_BELOW_050] = n > 0 ? (float)ps->n_below_050 / (float)n : 1.0f;
    out[FE_CONF_FRAC_BELOW_080] = n > 0 ? (float)ps->n_below_080 / (float)n : 1.0f;
    out[FE_CONF_LOG_LENGTH] = logf(1.0f + (float)(n_ids > 0 ? n_ids : 0));
    out[FE_CONF_REPEAT_FRACTION] =
        n_ids > 0 ? (float)fe_longest_repeat(ids, n_ids) / (float)n_ids : 0.0f;
    int se = fe_structure_errors(vocab, n_vocab, ids, n_ids);
    out[FE_CONF_STRUCTURE_ERRORS] =
        (float)(se < FE_CONF_STRUCTURE_ERRORS_MAX ? se : FE_CONF_STRUCTURE_ERRORS_MAX);
    out[FE_CONF_STOPPED] = stopped ? 1.0f : 0.0f;
}

static fe_status fe_cal_number(const FeJson *v, const char *what, float *out) {
    if (!v || v->type != FE_JSON_NUMBER || !isfinite(v->number))
        return fe_set_error(FE_ERR_FORMAT, "formulate.calibration: %s must be a number", what);
    *out = (float)v->number;
    return FE_OK;
}

static fe_status fe_calibration_read(const FeJson *root, FeCalibration *out, char *ignored,
                                     size_t ignored_size) {
    if (root->type != FE_JSON_OBJECT)
        return fe_set_error(FE_ERR_FORMAT, "formulate.calibration must be a JSON object");
    const FeJson *version = fe_json_get(root, "version");
    if (!version || !version->is_integer)
        return fe_set_error(FE_ERR_FORMAT, "formulate.calibration: no integer \"version\"");
    if (version->integer != 1) {
        snprintf(ignored, ignored_size, "formulate.calibration version %lld is not 1",
                 (long long)version->integer);
        return FE_OK;
    }
    const FeJson *names = fe_json_get(root, "features");
    const FeJson *weights = fe_json_get(root, "weights");
    if (!names || names->type != FE_JSON_ARRAY || !weights || weights->type != FE_JSON_ARRAY)
        return fe_set_error(FE_ERR_FORMAT,
                            "formulate.calibration: \"features\" and \"weights\" must be arrays");
    if (names->n_items != weights->n_items)
        return fe_set_error(FE_ERR_FORMAT,
                            "formulate.calibration: %zu features but %zu weights",
                            names->n_items, weights->n_items);
    FE_TRY(fe_cal_number(fe_json_get(root, "bias"), "\"bias\"", &out->bias));
    const FeJson *threshold = fe_json_get(root, "review_threshold");
    if (threshold) {
        FE_TRY(fe_cal_number(threshold, "\"review_threshold\"", &out->review_threshold));
        if (!(out->review_threshold >= 0.0f && out->review_threshold <= 1.0f))
            return fe_set_error(FE_ERR_FORMAT,
                                "formulate.calibration: review_threshold must be within 0..1");
    }
    const FeJson *target = fe_json_get(root, "target");
    if (target && target->type != FE_JSON_STRING)
        return fe_set_error(FE_ERR_FORMAT, "formulate.calibration: \"target\" must be a string");
    snprintf(out->target, sizeof out->target, "%s", target ? target->string : "");
    bool seen[FE_CONFIDENCE_N_FEATURES] = {false};
    for (size_t i = 0; i < names->n_items; i++) {
        const FeJson *name = &names->items[i];
        if (name->type != FE_JSON_STRING)
            return fe_set_error(FE_ERR_FORMAT,
                                "formulate.calibration: features[%zu] must be a string", i);
        float w = 0.0f;
        char what[32];
        snprintf(what, sizeof what, "weights[%zu]", i);
        FE_TRY(fe_cal_number(&weights->items[i], what, &w));
        int f = 0;
        while (f < FE_CONFIDENCE_N_FEATURES && strcmp(fe_conf_names[f], name->string) != 0)
            f++;
        if (f == FE_CONFIDENCE_N_FEATURES) {
            /* A newer calibrate.py may use a feature this engine lacks: the
             * model still reads formulas, only its confidence is uncalibrated. */
            snprintf(ignored, ignored_size,
                     "formulate.calibration uses feature '%.60s', which this engine does not "
                     "compute",
                     name->string);
            return FE_OK;
        }
        if (seen[f])
            return fe_set_error(FE_ERR_FORMAT,
                                "formulate.calibration: feature '%s' given twice", name->string);
        seen[f] = true;
        out->weights[f] = w;
    }
    out->present = true;
    return FE_OK;
}

fe_status fe_calibration_parse(const char *text, FeCalibration *out, char *ignored,
                               size_t ignored_size) {
    memset(out, 0, sizeof *out);
    if (ignored_size)
        ignored[0] = '\0';
    FeJson *json;
    FE_TRY(fe_json_parse(text, strlen(text), "formulate.calibration", &json));
    fe_status st = fe_calibration_read(json, out, ignored, ignored_size);
    fe_json_free(json);
    if (st != FE_OK || !out->present) {
        memset(out, 0, sizeof *out);
        if (st == FE_OK && ignored_size && !ignored[0])
            snprintf(ignored, ignored_size, "formulate.calibration ignored");
    }
    return st;
}

void fe_result_set_confidence(char *const *vocab, int n_vocab, const FeCalibration *cal,
                              const FeDecodeOutput *out, FeResult *res) {
    res->confidence_mean = out->confidence_mean;
    res->confidence_min = out->confidence_min;
    fe_confidence_features_from(vocab, n_vocab, out->tokens, out->n_tokens, &out->prob_stats,
                                out->hit_length_limit || out->repetition_stopped,
                                res->confidence_features);
    res->confidence = cal && cal->present ? fe_calibration_apply(cal, res->confidence_features)
                                          : out->confidence_mean;
}

float fe_calibration_apply(const FeCalibration *cal, const float *features) {
    double z = cal->bias;
    for (int i = 0; i < FE_CONFIDENCE_N_FEATURES; i++)
        z += (double)cal->weights[i] * features[i];
    return (float)(1.0 / (1.0 + exp(-z)));
}
