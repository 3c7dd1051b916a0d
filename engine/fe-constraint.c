/* fe-constraint.c - glyph-constrained decoding (FeSymbolConstraint, fe.h).
 *
 * A constraint maps the caller's symbol strings to "keys": the vocabulary id
 * of the bare symbol a token spends ("\left(" spends "(", "\prime" spends
 * "'"). Each decoder row (a greedy image, a beam hypothesis, a row of a
 * batch) keeps its own budget per key: how many glyphs are still unused.
 * Before a token is chosen, every symbol whose key has no budget left gets
 * its logit lowered (or set to -INFINITY: the hard mask), and <eos> is
 * lowered while any budget is left; after, the chosen token spends one unit
 * of its key. Structure tokens have no key and stay free.
 *
 * The logits are the host copy every backend leaves in sb->host_logits (the
 * CUDA backend downloads them after each step too), so the rule is the same
 * on every device. Everything is allocated when the constraint is made,
 * before the decode; the decode loop only reads and writes these arrays. */
#include "fe-model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct FeConstraint {
    int V, rows, eos_id;
    int *key;                 /* [V]: key id of token v, -1 = structure/free  */
    int *symbol_ids;          /* tokens with a key, n_symbol_ids of them      */
    int n_symbol_ids;
    int *initial;             /* [V] budget per key at the start             */
    int initial_total;
    int *budget, *next;       /* [rows][V] per-row budget, and the next step's */
    int *remaining, *next_remaining; /* [rows] sum of the row's budget          */
    float symbol_penalty, eos_penalty;
    int unknown;
};

static bool fe_str_in(const char *s, const char *const *list) {
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return true;
    return false;
}

/* Tokens that lay out a formula rather than draw a glyph the text layer
 * would list: grouping, scripts, fractions, roots, sizes, fonts, spacing,
 * environments, rules. Everything else in the vocabulary is a symbol. */
bool fe_token_is_structure(const char *t) {
    static const char *const structure[] = {
        "{", "}", "_", "^", "&", "\\\\", "\\frac", "\\dfrac", "\\tfrac", "\\sqrt", "\\binom",
        "\\dbinom", "\\choose", "\\atop", "\\text", "\\textit", "\\textbf", "\\mathcal",
        "\\mathfrak", "\\mathbf", "\\mathit", "\\mathrm", "\\mathbb", "\\mathscr", "\\mathsf",
        "\\boldsymbol", "\\operatorname", "\\mathop", "\\,", "\\;", "\\:", "\\!", "\\ ", "~",
        "\\quad", "\\qquad", "\\enspace", "\\mspace", "\\phantom", "\\vphantom", "\\nolimits",
        "\\limits", "\\displaystyle", "\\textstyle", "\\scriptstyle", "\\scriptscriptstyle",
        "\\left", "\\right", "\\middle", "\\left.", "\\right.", "\\big", "\\Big", "\\bigg",
        "\\Bigg", "\\bigl", "\\bigr", "\\Bigl", "\\Bigr", "\\biggl", "\\biggr", "\\Biggl",
        "\\Biggr", "\\overline", "\\underline", "\\overbrace", "\\underbrace", "\\stackrel",
        "\\overset", "\\underset", "\\substack", "\\hline",
        /* text fonts inside \text draw nothing themselves */
        "\\emph", "\\textrm", "\\textup", "\\textsf", "\\texttt", "\\textsc", "\\textsl",
        "\\textmd", "\\textnormal", "\\mbox", NULL,
    };
    if (t[0] == '<')  /* <pad> <bos> <eos> <unk> */
        return strlen(t) > 2 && t[strlen(t) - 1] == '>';
    if (strncmp(t, "\\begin{", 7) == 0 || strncmp(t, "\\end{", 5) == 0)
        return true;
    return fe_str_in(t, structure);
}

/* The bare symbol a token or a caller's entry stands for: "\left(" -> "(",
 * spellings outside the vocabulary -> their twin in it. Returns t itself
 * when there is nothing to strip. */
static const char *fe_symbol_base(const char *t) {
    static const char *const alias[][2] = {
        {"\\le", "\\leq"}, {"\\ge", "\\geq"}, {"\\ne", "\\neq"}, {"\\rightarrow", "\\to"},
        {"\\lbrace", "\\{"}, {"\\rbrace", "\\}"}, {"\\lvert", "|"}, {"\\rvert", "|"},
        {"\\vert", "|"}, {"\\Vert", "\\|"}, {"\\lVert", "\\|"}, {"\\rVert", "\\|"},
        {"\\prime", "'"}, {"\\lt", "<"}, {"\\gt", ">"}, {"\\land", "\\wedge"},
        {"\\lor", "\\vee"}, {"\\lnot", "\\neg"}, {"\\gets", "\\leftarrow"},
        {"\\implies", "\\Longrightarrow"}, {"\\iff", "\\Leftrightarrow"},
        /* one glyph in CMSY (bardbl); the relation and the norm bar differ
         * only in spacing, which is not a symbol */
        {"\\parallel", "\\|"},
    };
    static const char *const sized[] = {"\\left", "\\right", "\\middle", NULL};
    for (int i = 0; sized[i]; i++) {
        size_t n = strlen(sized[i]);
        if (strncmp(t, sized[i], n) == 0 && t[n] != '\0' && t[n] != '.') {
            const char *d = t + n;
            if (strcmp(d, "<") == 0)
                return "\\langle";
            if (strcmp(d, ">") == 0)
                return "\\rangle";
            return d;
        }
    }
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(t, alias[i][0]) == 0)
            return alias[i][1];
    return t;
}

const char *fe_token_symbol(const char *token) {
    if (!token || fe_token_is_structure(token))
        return NULL;
    const char *base = fe_symbol_base(token);
    return fe_token_is_structure(base) ? NULL : base;
}

static int fe_vocab_find(char *const *vocab, int n_vocab, const char *s) {
    for (int v = 0; v < n_vocab; v++)
        if (vocab[v] && strcmp(vocab[v], s) == 0)
            return v;
    return -1;
}

/* The key of a string (a vocabulary token or a caller's entry): the id of
 * its bare symbol, -1 when it is structure or names nothing in the vocab. */
static int fe_symbol_key(char *const *vocab, int n_vocab, const char *s) {
    if (fe_token_is_structure(s))
        return -1;
    const char *base = fe_symbol_base(s);
    if (fe_token_is_structure(base))
        return -1;
    return fe_vocab_find(vocab, n_vocab, base);
}

void fe_constraint_free(FeConstraint *c) {
    if (!c)
        return;
    free(c->key);
    free(c->symbol_ids);
    free(c->initial);
    free(c->budget);
    free(c->next);
    free(c->remaining);
    free(c->next_remaining);
    free(c);
}

fe_status fe_constraint_new(char *const *vocab, int n_vocab, const FeModelConfig *cfg,
                            const FeSymbolConstraint *symbols, int rows, float symbol_penalty,
                            float eos_penalty, FeConstraint **out) {
    *out = NULL;
    if (!symbols || symbols->n_symbols <= 0)
        return FE_OK;  /* nothing known: unconstrained */
    if (!symbols->symbols)
        return fe_set_error(FE_ERR_INVALID_ARGUMENT, "symbol constraint: %d symbols but no array",
                            symbols->n_symbols);
    if (rows < 1 || n_vocab != cfg->vocab_size)
        return fe_set_error(FE_ERR_INTERNAL, "symbol constraint: %d rows, vocab %d/%d", rows,
                            n_vocab, cfg->vocab_size);
    if (!(symbol_penalty >= 0.0f) || !(eos_penalty >= 0.0f))
        return fe_set_error(FE_ERR_INVALID_ARGUMENT,
                            "symbol constraint: penalties must be >= 0 (got %g, %g)",
                            (double)symbol_penalty, (double)eos_penalty);
    FeConstraint *c = calloc(1, sizeof *c);
    if (!c)
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    int V = n_vocab;
    c->V = V;
    c->rows = rows;
    c->eos_id = cfg->eos_id;
    c->symbol_penalty = symbol_penalty;
    c->eos_penalty = eos_penalty;
    c->key = malloc((size_t)V * sizeof(int));
    c->symbol_ids = malloc((size_t)V * sizeof(int));
    c->initial = calloc((size_t)V, sizeof(int));
    c->budget = malloc((size_t)rows * V * sizeof(int));
    c->next = malloc((size_t)rows * V * sizeof(int));
    c->remaining = malloc((size_t)rows * sizeof(int));
    c->next_remaining = malloc((size_t)rows * sizeof(int));
    if (!c->key || !c->symbol_ids || !c->initial || !c->budget || !c->next || !c->remaining ||
        !c->next_remaining) {
        fe_constraint_free(c);
        return fe_set_error(FE_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int v = 0; v < V; v++) {
        c->key[v] = vocab[v] ? fe_symbol_key(vocab, V, vocab[v]) : -1;
        if (c->key[v] >= 0)
            c->symbol_ids[c->n_symbol_ids++] = v;
    }
    for (int i = 0; i < symbols->n_symbols; i++) {
        const char *s = symbols->symbols[i];
        int k = s ? fe_symbol_key(vocab, V, s) : -1;
        /* a key must be some token's key ("\left" alone names no symbol) */
        if (k < 0 || c->key[k] != k) {
            /* structure (a whole truth sequence may be passed) is free anyway */
            if (s && fe_vocab_find(vocab, V, s) >= 0)
                continue;
            c->unknown++;
            fe_log(FE_LOG_DEBUG, "symbol constraint: '%s' is no symbol of the vocabulary, ignored",
                   s ? s : "(null)");
            continue;
        }
        c->initial[k]++;
        c->initial_total++;
    }
    fe_constraint_reset(c);
    *out = c;
    return FE_OK;
}

int fe_constraint_unknown(const FeConstraint *c) {
    return c ? c->unknown : 0;
}

void fe_constraint_reset(FeConstraint *c) {
    for (int r = 0; r < c->rows; r++) {
        memcpy(c->budget + (size_t)r * c->V, c->initial, (size_t)c->V * sizeof(int));
        c->remaining[r] = c->initial_total;
    }
}

void fe_constraint_apply(const FeConstraint *c, int row, float *logits) {
    const int *b = c->budget + (size_t)row * c->V;
    bool mask = isinf(c->symbol_penalty);
    for (int i = 0; i < c->n_symbol_ids; i++) {
        int v = c->symbol_ids[i];
        if (b[c->key[v]] > 0)
            continue;
        logits[v] = mask ? -INFINITY : logits[v] - c->symbol_penalty;
    }
    if (c->remaining[row] > 0 && c->eos_penalty > 0.0f)
        logits[c->eos_id] = isinf(c->eos_penalty) ? -INFINITY : logits[c->eos_id] - c->eos_penalty;
}

static void fe_spend(int *budget, int *remaining, const FeConstraint *c, int token) {
    if (token < 0 || token >= c->V || c->key[token] < 0)
        return;
    int *b = &budget[c->key[token]];
    if (*b > 0) {
        (*b)--;
        (*remaining)--;
    }
}

void fe_constraint_take(FeConstraint *c, int row, int token) {
    fe_spend(c->budget + (size_t)row * c->V, &c->remaining[row], c, token);
}

void fe_constraint_branch(FeConstraint *c, int new_row, int parent, int token) {
    int *nb = c->next + (size_t)new_row * c->V;
    memcpy(nb, c->budget + (size_t)parent * c->V, (size_t)c->V * sizeof(int));
    c->next_remaining[new_row] = c->remaining[parent];
    fe_spend(nb, &c->next_remaining[new_row], c, token);
}

void fe_constraint_commit(FeConstraint *c) {
    int *t = c->budget;
    c->budget = c->next;
    c->next = t;
    t = c->remaining;
    c->remaining = c->next_remaining;
    c->next_remaining = t;
}
