/* fe-tokens.c - token ids -> LaTeX with docs/model.md's spacing rule.
 *
 * Tokens are joined with no space, except one space between a control word
 * (a backslash followed by letters only: \alpha, \mathrm) and a next token that
 * starts with a letter, because LaTeX would otherwise read "\alphax" as one
 * control word. The normaliser in tools/ writes exactly this form, so a
 * normalised formula survives tokenise -> detokenise byte for byte. */
#include "fe-model.h"

#include <stdlib.h>
#include <string.h>

static bool fe_ascii_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool fe_token_is_control_word(const char *token) {
    if (!token || token[0] != '\\' || !fe_ascii_letter(token[1]))
        return false;
    for (const char *p = token + 1; *p; p++)
        if (!fe_ascii_letter(*p))
            return false;
    return true;
}

/* The status form: decoders pass on why it failed (out of memory, an id
 * outside the vocabulary) instead of guessing from a NULL. */
fe_status fe_detokenize_status(char *const *vocab, int n_vocab, const FeModelConfig *cfg,
                               const int *ids, int n, char **latex) {
    *latex = NULL;
    if (!vocab || (n > 0 && !ids) || n < 0)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "fe_detokenize: NULL vocabulary or ids");
    size_t total = 1;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= n_vocab)
            return fe_set_error(
                FE_ERR_INVALID_ARGUMENT,
                "fe_detokenize: token id %d at index %d is outside the vocabulary (0..%d)", ids[i],
                i, n_vocab - 1);
        total += strlen(vocab[ids[i]]) + 1;
    }
    char *out = malloc(total);
    if (!out)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "fe_detokenize: out of memory");
    size_t len = 0;
    const char *prev = NULL;
    for (int i = 0; i < n; i++) {
        int id = ids[i];
        /* Padding, BOS and EOS are framing, not text. */
        if (cfg && (id == cfg->pad_id || id == cfg->bos_id || id == cfg->eos_id))
            continue;
        const char *tok = vocab[id];
        if (prev && fe_token_is_control_word(prev) && fe_ascii_letter(tok[0]))
            out[len++] = ' ';
        size_t tl = strlen(tok);
        memcpy(out + len, tok, tl);
        len += tl;
        prev = tok;
    }
    out[len] = '\0';
    *latex = out;
    return FE_OK;
}

fe_status fe_detokenize_decoded(char *const *vocab, int n_vocab, const FeModelConfig *cfg,
                                const int *ids, int n, char **latex) {
    fe_status st = fe_detokenize_status(vocab, n_vocab, cfg, ids, n, latex);
    if (st == FE_OK || st == FE_ERR_OUT_OF_MEMORY)
        return st;
    /* The decoder's own tokens: an id outside the vocabulary is the engine's
     * fault, not an argument the caller of fe_recognize could correct. */
    return fe_prefix_error(FE_ERR_INTERNAL, "detokenize");
}

char *fe_detokenize_vocab(char *const *vocab, int n_vocab, const FeModelConfig *cfg,
                          const int *ids, int n) {
    char *latex;
    return fe_detokenize_status(vocab, n_vocab, cfg, ids, n, &latex) == FE_OK ? latex : NULL;
}
