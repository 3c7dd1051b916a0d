/* test-weights.c - the model-file loaders: JSON, config, safetensors, .pt,
 * and the bad-input corpus in tests/bad/. */
#include "fe-internal.h"
#include "fe-json.h"
#include "fe-weights-private.h"

#include <glib.h>
#include <math.h>
#include <string.h>

static char *source_path(const char *rel) {
    const char *root = g_getenv("FE_SOURCE_ROOT");
    return g_build_filename(root ? root : FE_TEST_SOURCE_ROOT, rel, NULL);
}

static FeWeightFile *open_ok(const char *rel) {
    g_autofree char *path = source_path(rel);
    FeWeightFile *wf = NULL;
    fe_status st = fe_weights_open(path, NULL, &wf);
    if (st != FE_OK)
        g_error("opening %s: %s: %s", rel, fe_status_name(st), fe_last_error());
    g_assert_nonnull(wf);
    return wf;
}

/* ------------------------------------------------------------------------ */

static void test_json_accepts(void) {
    static const char *const good[] = {
        "{}", "[]", " [1, -2, 3.5e2, 0, -0.0, 1E-5] ", "\"a\\u00e9\\ud83d\\ude00\\n\"",
        "{\"a\": {\"b\": [true, false, null]}}", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
        "{\"k\": 1, \"k\": 2}", "9223372036854775807", "-9223372036854775808",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        FeJson *j = NULL;
        fe_status st = fe_json_parse(good[i], strlen(good[i]), "t", &j);
        if (st != FE_OK)
            g_error("rejected %s: %s", good[i], fe_last_error());
        fe_json_free(j);
    }
}

static void test_json_values(void) {
    const char *text = "{\"n\": 42, \"f\": 0.55, \"s\": \"\\\\frac\", \"big\": 1e400x}";
    FeJson *j = NULL;
    /* The trailing "x" makes it invalid: the error names the place. */
    g_assert_cmpint(fe_json_parse(text, strlen(text), "t", &j), ==, FE_ERR_FORMAT);
    g_assert_nonnull(strstr(fe_last_error(), "t: invalid JSON at line 1"));
    text = "{\"n\": 42, \"f\": 0.55, \"s\": \"\\\\frac\", \"neg\": -7, \"big\": 18446744073709551616}";
    g_assert_cmpint(fe_json_parse(text, strlen(text), "t", &j), ==, FE_OK);
    g_assert_true(fe_json_get(j, "n")->is_integer);
    g_assert_cmpint(fe_json_get(j, "n")->integer, ==, 42);
    g_assert_false(fe_json_get(j, "f")->is_integer);
    g_assert_cmpfloat_with_epsilon(fe_json_get(j, "f")->number, 0.55, 1e-12);
    g_assert_cmpstr(fe_json_get(j, "s")->string, ==, "\\frac");
    g_assert_cmpint(fe_json_get(j, "neg")->integer, ==, -7);
    /* Past int64: still a number, no longer an integer. */
    g_assert_false(fe_json_get(j, "big")->is_integer);
    g_assert_null(fe_json_get(j, "missing"));
    g_assert_cmpuint(fe_json_get(j, "s")->src_begin, ==, (size_t)(strstr(text, "\"\\\\frac") - text));
    fe_json_free(j);
}

static void test_json_rejects(void) {
    static const struct {
        const char *text;
        const char *reason;
    } bad[] = {
        {"", "unexpected end"},
        {"[1,]", "unexpected character"},
        {"{\"a\":1,}", "expected a string key"},
        {"[01]", "leading zero"},
        {"[1.]", "after '.'"},
        {"[.5]", "unexpected character"},
        {"[NaN]", "unexpected character"},
        {"[1e999]", "out of range"},
        {"tru", "unknown literal"},
        {"\"abc", "unterminated string"},
        {"\"a\tb\"", "control character"},
        {"\"\\x\"", "unknown escape"},
        {"\"\\ud800\"", "high surrogate"},
        {"\"\\udc00\"", "lone low surrogate"},
        {"\"\\u0000\"", "\\u0000"},
        {"\"\xc0\xaf\"", "invalid UTF-8"},
        {"\"\xed\xa0\x80\"", "invalid UTF-8"},
        {"\"\xf4\x90\x80\x80\"", "invalid UTF-8"},
        {"{} {}", "text after"},
        {"// c\n{}", "unexpected character"},
        {"{\"a\" 1}", "expected ':'"},
        {"[1 2]", "expected ',' or ']'"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        FeJson *j = NULL;
        fe_status st = fe_json_parse(bad[i].text, strlen(bad[i].text), "t", &j);
        g_assert_cmpint(st, ==, FE_ERR_FORMAT);
        g_assert_null(j);
        if (!strstr(fe_last_error(), bad[i].reason))
            g_error("'%s': message '%s' lacks '%s'", bad[i].text, fe_last_error(), bad[i].reason);
    }
}

static void test_json_depth(void) {
    GString *s = g_string_new(NULL);
    FeJson *j = NULL;
    for (int i = 0; i < FE_JSON_MAX_DEPTH; i++)
        g_string_append_c(s, '[');
    for (int i = 0; i < FE_JSON_MAX_DEPTH; i++)
        g_string_append_c(s, ']');
    g_assert_cmpint(fe_json_parse(s->str, s->len, "t", &j), ==, FE_OK);
    fe_json_free(j);
    g_string_prepend_c(s, '[');
    g_string_append_c(s, ']');
    g_assert_cmpint(fe_json_parse(s->str, s->len, "t", &j), ==, FE_ERR_FORMAT);
    g_assert_nonnull(strstr(fe_last_error(), "nested too deeply"));
    g_string_free(s, TRUE);
}

/* ------------------------------------------------------------------------ */

static void test_config_defaults(void) {
    const char *text = "{\"arch\": \"formulate-v1\", \"vocab_size\": 600}";
    FeModelConfig c;
    g_assert_cmpint(fe_config_parse(text, strlen(text), &c), ==, FE_OK);
    g_assert_cmpstr(c.arch, ==, "formulate-v1");
    g_assert_cmpint(c.n_cnn, ==, 5);
    g_assert_cmpint(c.cnn_channels[4], ==, 256);
    g_assert_cmpint(c.cnn_pool[3][0], ==, 2);
    g_assert_cmpint(c.cnn_pool[3][1], ==, 1);
    g_assert_cmpint(c.height_stride, ==, 16);
    g_assert_cmpint(c.width_stride, ==, 8);
    g_assert_cmpint(c.d_model, ==, 256);
    g_assert_cmpint(c.n_heads, ==, 8);
    g_assert_cmpint(c.max_tokens, ==, 256);
    g_assert_true(c.tie_embeddings);
    g_assert_cmpfloat_with_epsilon(c.cc_median_em, 0.55, 1e-6);
    g_assert_cmpfloat_with_epsilon(c.ln_eps, 1e-5, 1e-12);
    g_assert_cmpint(c.eos_id, ==, 2);
}

static void test_config_rejects(void) {
    static const struct {
        const char *text;
        const char *message;
    } bad[] = {
        {"[]", "must be a JSON object"},
        {"{\"vocab_size\": 600}", "missing key 'arch'"},
        {"{\"arch\": \"formulate-v1\"}", "missing key 'vocab_size'"},
        {"{\"arch\": \"x\", \"vocab_size\": 600}", "arch 'x' is not supported"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"d_model\": 255}", "n_heads 8 does not divide d_model 255"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"d_model\": 30, \"n_heads\": 6}", "multiple of 4"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"d_model\": 256.5}", "'d_model' must be an integer"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"d_model\": \"256\"}", "'d_model' must be an integer, not a string"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"n_heads\": 0}", "'n_heads' is 0, must be in 1..256"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"vocab_size\": 601}", "duplicate key 'vocab_size'"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"dropout\": 0.1}", "unknown key 'dropout'"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"format_version\": 2}", "'format_version' is 2"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"cnn_channels\": [8]}", "cnn_pool has 5 entries but cnn_channels has 1"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"cnn_channels\": [8], \"cnn_pool\": [[16, 4]]}", "widths multiply to 4"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"cnn_channels\": [8], \"cnn_pool\": [[8, 8]]}", "heights multiply to 8"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"cnn_channels\": [8], \"cnn_pool\": [[16]]}", "cnn_pool[0] must be a [height, width] pair"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"cnn_channels\": []}", "'cnn_channels' must be an array"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"tie_embeddings\": 1}", "must be true or false"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"ln_eps\": -1}", "'ln_eps' is -1"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"eos_id\": 1}", "bos_id and eos_id are both 1"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 4, \"unk_id\": 4}", "unk_id 4 is outside the vocabulary"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"max_width\": 100}", "multiples of the strides"},
        /* Issue 18: in range one by one, too large together. */
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"max_height\": 65536, \"max_width\": 65536}", "max_height 65536 x max_width 65536 is over the 4194304 pixel limit"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"max_height\": 2048, \"max_width\": 2048, \"cnn_channels\": [128, 64, 128, 256, 256]}", "first conv block's 128 channels"},
        {"{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"dec_layers\": 64, \"max_tokens\": 65536, \"d_model\": 1024}", "key/value cache over 1073741824 bytes"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        FeModelConfig c;
        fe_status st = fe_config_parse(bad[i].text, strlen(bad[i].text), &c);
        if (st == FE_OK)
            g_error("accepted %s", bad[i].text);
        if (!strstr(fe_last_error(), bad[i].message))
            g_error("%s: message '%s' lacks '%s'", bad[i].text, fe_last_error(), bad[i].message);
    }
}

static void test_expected_tensors(void) {
    const char *text = "{\"arch\": \"formulate-v1\", \"vocab_size\": 600, \"tie_embeddings\": false}";
    FeModelConfig c;
    size_t n = 0, n_optional = 0;
    FeExpectedTensor *x;
    bool found_out = false;

    g_assert_cmpint(fe_config_parse(text, strlen(text), &c), ==, FE_OK);
    x = fe_model_expected_tensors(&c, &n);
    g_assert_nonnull(x);
    /* 5 conv blocks x 7, proj 2, 2 enc layers x 16, enc.norm 2, embeddings 2,
     * 4 dec layers x 26, dec.norm 2, out 2 */
    g_assert_cmpuint(n, ==, 5 * 7 + 2 + 2 * 16 + 2 + 2 + 4 * 26 + 2 + 2);
    for (size_t i = 0; i < n; i++) {
        n_optional += x[i].optional;
        if (strcmp(x[i].name, "dec.out.weight") == 0) {
            found_out = true;
            g_assert_false(x[i].optional);
            g_assert_cmpint(x[i].shape[0], ==, 600);
            g_assert_cmpint(x[i].shape[1], ==, 256);
        }
        if (strcmp(x[i].name, "cnn.1.conv.weight") == 0) {
            g_assert_cmpint(x[i].ndim, ==, 4);
            g_assert_cmpint(x[i].shape[0], ==, 64);
            g_assert_cmpint(x[i].shape[1], ==, 32);
        }
        if (strcmp(x[i].name, "dec.layers.3.mlp.fc1.weight") == 0) {
            g_assert_cmpint(x[i].shape[0], ==, 1024);
            g_assert_cmpint(x[i].shape[1], ==, 256);
        }
    }
    g_assert_true(found_out);
    g_assert_cmpuint(n_optional, ==, 10); /* conv bias + num_batches_tracked per block */
    free(x);
}

/* ------------------------------------------------------------------------ */

static const char *const tiny_formats[] = {
    "tests/weights/fixtures/tiny-f16.safetensors",
    "tests/weights/fixtures/tiny-bf16.safetensors",
    "tests/weights/fixtures/tiny.pt",
};

static void check_tiny_header(const FeWeightFile *wf) {
    g_assert_cmpstr(wf->config.arch, ==, "formulate-v1");
    g_assert_cmpint(wf->config.d_model, ==, 16);
    g_assert_cmpint(wf->config.n_heads, ==, 2);
    g_assert_cmpint(wf->config.n_cnn, ==, 2);
    g_assert_cmpint(wf->config.cnn_pool[1][1], ==, 2);
    g_assert_cmpint(wf->config.width_stride, ==, 8);
    g_assert_cmpint(wf->config.vocab_size, ==, 12);
    g_assert_cmpint(wf->n_vocab, ==, 12);
    g_assert_cmpstr(wf->vocab[1], ==, "<bos>");
    g_assert_cmpstr(wf->vocab[10], ==, "\\frac");
    g_assert_cmpstr(wf->vocab[11], ==, "\\alpha");
}

static void test_tiny_formats_agree(void) {
    FeWeightFile *ref = open_ok("tests/weights/fixtures/tiny-f32.safetensors");
    const FeWeightEntry *nbt;

    g_assert_cmpstr(ref->format, ==, "safetensors");
    check_tiny_header(ref);
    g_assert_nonnull(fe_weights_find(ref, "cnn.0.conv.bias"));
    g_assert_null(fe_weights_find(ref, "cnn.1.conv.bias"));
    nbt = fe_weights_find(ref, "cnn.0.bn.num_batches_tracked");
    g_assert_nonnull(nbt);
    g_assert_cmpint(nbt->dtype, ==, FE_DTYPE_I64);
    g_assert_cmpint(nbt->ndim, ==, 0);
    {
        int64_t v;
        memcpy(&v, nbt->data, sizeof v);
        g_assert_cmpint(v, ==, 7);
    }

    for (size_t f = 0; f < G_N_ELEMENTS(tiny_formats); f++) {
        FeWeightFile *wf = open_ok(tiny_formats[f]);
        bool is_pt = g_str_has_suffix(tiny_formats[f], ".pt");
        /* half: 11 significant bits, bfloat16: 8 */
        double rel = strstr(tiny_formats[f], "bf16") ? 1.0 / 256 : strstr(tiny_formats[f], "f16") ? 1.0 / 2048 : 0;

        check_tiny_header(wf);
        g_assert_cmpstr(wf->format, ==, is_pt ? "pytorch" : "safetensors");
        /* The .pt carries the tied output weight too, as state_dict() does. */
        g_assert_cmpuint(wf->n_entries, ==, ref->n_entries + (is_pt ? 1 : 0));
        for (size_t i = 0; i < ref->n_entries; i++) {
            const FeWeightEntry *a = &ref->entries[i];
            const FeWeightEntry *b = fe_weights_find(wf, a->name);
            g_autofree float *fa = NULL;
            g_autofree float *fb = NULL;
            g_assert_nonnull(b);
            g_assert_cmpint(a->ndim, ==, b->ndim);
            for (int d = 0; d < a->ndim; d++)
                g_assert_cmpint(a->shape[d], ==, b->shape[d]);
            if (a->dtype == FE_DTYPE_I64) {
                g_assert_cmpint(b->dtype, ==, FE_DTYPE_I64);
                g_assert_cmpmem(a->data, a->nbytes, b->data, b->nbytes);
                continue;
            }
            g_assert_cmpint(fe_weights_to_f32(a, &fa), ==, FE_OK);
            g_assert_cmpint(fe_weights_to_f32(b, &fb), ==, FE_OK);
            for (size_t k = 0; k < a->nbytes / 4; k++) {
                double tol = rel * fabs(fa[k]) + 1e-7;
                if (fabs(fa[k] - fb[k]) > tol)
                    g_error("%s: %s[%zu] = %g, f32 file has %g", tiny_formats[f], a->name, k,
                            fb[k], fa[k]);
            }
        }
        if (is_pt) {
            const FeWeightEntry *out = fe_weights_find(wf, "dec.out.weight");
            const FeWeightEntry *emb = fe_weights_find(wf, "dec.tok_emb.weight");
            g_assert_nonnull(out);
            g_assert_cmpmem(out->data, out->nbytes, emb->data, emb->nbytes);
            /* enc.proj.weight was saved transposed (non-contiguous): gathered copy */
            g_assert_cmpuint(wf->n_owned, ==, 1);
            g_assert_cmpint(wf->n_meta, ==, 3);
            g_assert_cmpstr(wf->meta_keys[2], ==, "git_commit");
            g_assert_cmpstr(wf->meta_values[2], ==, "fixture");
        }
        fe_weights_close(wf);
    }
    fe_weights_close(ref);
}

/* zip64 records, a GPU storage location, Parameters, pickle protocol 4 and
 * the old _rebuild_tensor change nothing about the tensors. */
static void test_pt_variants(void) {
    static const char *const variants[] = {
        "tests/weights/fixtures/micro-zip64.pt",
        "tests/weights/fixtures/micro-cuda.pt",
        "tests/weights/fixtures/micro-params.pt",
        "tests/weights/fixtures/micro-proto4.pt",
        "tests/weights/fixtures/micro-v1.pt",
    };
    FeWeightFile *ref = open_ok("tests/weights/fixtures/micro.pt");
    g_assert_cmpint(ref->config.d_model, ==, 8);
    g_assert_cmpint(ref->config.enc_layers, ==, 0);
    for (size_t v = 0; v < G_N_ELEMENTS(variants); v++) {
        FeWeightFile *wf = open_ok(variants[v]);
        g_assert_cmpuint(wf->n_entries, ==, ref->n_entries);
        for (size_t i = 0; i < ref->n_entries; i++) {
            const FeWeightEntry *a = &ref->entries[i];
            const FeWeightEntry *b = fe_weights_find(wf, a->name);
            g_assert_nonnull(b);
            g_assert_cmpint(a->dtype, ==, b->dtype);
            g_assert_cmpmem(a->data, a->nbytes, b->data, b->nbytes);
        }
        fe_weights_close(wf);
    }
    fe_weights_close(ref);
}

static void test_explicit_sidecar(void) {
    g_autofree char *pt = source_path("tests/bad/no-sidecar.pt");
    g_autofree char *json = source_path("tests/bad/compressed.json");
    g_autofree char *missing = source_path("tests/bad/does-not-exist.json");
    FeWeightFile *wf = NULL;
    g_assert_cmpint(fe_weights_open(pt, json, &wf), ==, FE_OK);
    g_assert_cmpint(wf->config.d_model, ==, 8);
    fe_weights_close(wf);
    g_assert_cmpint(fe_weights_open(pt, missing, &wf), ==, FE_ERR_IO);
    g_assert_null(wf);
    g_assert_nonnull(strstr(fe_last_error(), "does-not-exist.json cannot be opened"));
}

static void test_open_errors(void) {
    g_autofree char *dir = source_path("tests/bad");
    g_autofree char *missing = source_path("tests/bad/no-such-model.safetensors");
    FeWeightFile *wf = NULL;
    g_assert_cmpint(fe_weights_open(dir, NULL, &wf), ==, FE_ERR_IO);
    g_assert_nonnull(strstr(fe_last_error(), "tests/bad: not a regular file"));
    g_assert_cmpint(fe_weights_open(missing, NULL, &wf), ==, FE_ERR_IO);
    g_assert_nonnull(strstr(fe_last_error(), "no-such-model.safetensors: cannot open: "));
    g_assert_null(wf);
    g_assert_cmpint(fe_weights_open(NULL, NULL, &wf), ==, FE_ERR_INVALID_ARGUMENT);
}

static void test_to_f32_refuses_ints(void) {
    FeWeightFile *wf = open_ok("tests/weights/fixtures/tiny-f32.safetensors");
    const FeWeightEntry *nbt = fe_weights_find(wf, "cnn.1.bn.num_batches_tracked");
    float *f = NULL;
    g_assert_cmpint(fe_weights_to_f32(nbt, &f), ==, FE_ERR_UNSUPPORTED);
    g_assert_null(f);
    g_assert_nonnull(strstr(fe_last_error(), "has dtype i64, not a float type"));
    fe_weights_close(wf);
}

/* Every prefix of a valid file is a truncated file: each must fail cleanly
 * (ASan/UBSan runs make "cleanly" mean something). */
static void test_truncations(void) {
    static const char *const files[] = {
        "tests/weights/fixtures/tiny-f16.safetensors",
        "tests/weights/fixtures/tiny.pt",
    };
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
        g_autofree char *path = source_path(files[f]);
        g_autofree char *bytes = NULL;
        gsize len = 0;
        bool pt = g_str_has_suffix(files[f], ".pt");
        g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
        for (gsize cut = 0; cut < len; cut += pt ? 13 : 1) {
            FeWeightFile *wf = calloc(1, sizeof *wf);
            /* A copy of exactly cut bytes, so ASan sees any read past it. */
            uint8_t *copy = g_memdup2(bytes, cut ? cut : 1);
            fe_status st = pt ? fe_pytorch_parse(copy, cut, wf) : fe_safetensors_parse(copy, cut, wf);
            if (st == FE_OK && !pt)
                st = fe_weights_apply_metadata(wf);
            g_assert_cmpint(st, !=, FE_OK);
            g_assert_cmpstr(fe_last_error(), !=, "");
            fe_weights_close(wf);
            g_free(copy);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* The bad corpus: one file, one flaw, one message.                          */

static const struct {
    const char *file;
    fe_status status;
    const char *message;
} bad_corpus[] = {
    {"truncated.safetensors", FE_ERR_FORMAT, "tensor 'dec.norm.weight': data_offsets [1840, 1856] are outside the data section (1844 bytes)"},
    {"truncated-header.safetensors", FE_ERR_FORMAT, "past the end of the file (28 bytes)"},
    {"too-short.safetensors", FE_ERR_FORMAT, "file is too short (7 bytes)"},
    {"header-past-eof.safetensors", FE_ERR_FORMAT, "header length 1099511627776 is past the end of the file"},
    {"empty.safetensors", FE_ERR_FORMAT, "file is empty"},
    {"overlap.safetensors", FE_ERR_FORMAT, "tensors 'dec.norm.weight' and 'dec.norm.bias' overlap"},
    {"unknown-dtype.safetensors", FE_ERR_UNSUPPORTED, "tensor 'enc.norm.weight': unknown dtype 'F8_E4M3'"},
    {"shape-bytes.safetensors", FE_ERR_FORMAT, "tensor 'dec.tok_emb.weight': shape [6, 9] of f16 needs 108 bytes but data_offsets span 96"},
    {"offsets-outside.safetensors", FE_ERR_FORMAT, "tensor 'dec.out.bias': data_offsets [1048576, 1048588] are outside the data section"},
    {"duplicate-name.safetensors", FE_ERR_FORMAT, "duplicate tensor name 'enc.norm.bias'"},
    {"bad-json.safetensors", FE_ERR_FORMAT, "safetensors header: invalid JSON at line 1 column 2: expected a string key"},
    {"not-object.safetensors", FE_ERR_FORMAT, "safetensors header must be a JSON object"},
    {"no-metadata.safetensors", FE_ERR_FORMAT, "no formulate.config in the safetensors __metadata__"},
    {"bad-arch.safetensors", FE_ERR_UNSUPPORTED, "config: arch 'formulate-v2' is not supported"},
    {"heads-not-dividing.safetensors", FE_ERR_FORMAT, "config: n_heads 3 does not divide d_model 8"},
    {"bad-pools.safetensors", FE_ERR_FORMAT, "cnn_pool heights multiply to 8, must be 16"},
    {"bad-pool-width.safetensors", FE_ERR_FORMAT, "cnn_pool widths multiply to 4, must be 8 or 16"},
    {"pool-count.safetensors", FE_ERR_FORMAT, "cnn_pool has 2 entries but cnn_channels has 1"},
    {"unknown-config-key.safetensors", FE_ERR_FORMAT, "config: unknown key 'dropout'"},
    {"huge-input.safetensors", FE_ERR_FORMAT, "config: max_height 65536 x max_width 65536 is over the 4194304 pixel limit"},
    {"vocab-mismatch.safetensors", FE_ERR_FORMAT, "formulate.vocab has 5 tokens but config vocab_size is 6"},
    {"bad-format-version.safetensors", FE_ERR_UNSUPPORTED, "formulate.format_version '2' is not supported"},
    {"missing-tensor.safetensors", FE_ERR_FORMAT, "missing tensor 'dec.norm.weight' [8]"},
    {"wrong-shape.safetensors", FE_ERR_FORMAT, "tensor 'enc.norm.weight' [7] needs [8]"},
    {"unexpected-tensor.safetensors", FE_ERR_FORMAT, "unexpected tensor 'enc.extra.weight'"},
    {"int-weights.safetensors", FE_ERR_FORMAT, "tensor 'dec.out.bias' has dtype i16, needs a float type"},
    {"garbage.bin", FE_ERR_FORMAT, "not a safetensors or PyTorch zip file"},
    {"os-system.pt", FE_ERR_UNSUPPORTED, "refusing pickle global posix.system: only tensors and plain containers are allowed"},
    {"compressed.pt", FE_ERR_UNSUPPORTED, "zip entry 'archive/data.pkl' is compressed (method 8)"},
    {"truncated.pt", FE_ERR_FORMAT, "zip end-of-directory record not found"},
    {"missing-storage.pt", FE_ERR_FORMAT, "storage entry 'archive/data/0' is missing from the archive"},
    {"short-storage.pt", FE_ERR_FORMAT, "storage 'archive/data/0' holds 6 bytes, fewer than its 18 f32 elements need"},
    {"not-a-dict.pt", FE_ERR_FORMAT, "data.pkl holds a list, not a state dict"},
    {"bad-sidecar.pt", FE_ERR_FORMAT, "bad-sidecar.json: config: n_heads 3 does not divide d_model 8"},
    {"sidecar-vocab.pt", FE_ERR_FORMAT, "sidecar vocab has 7 tokens but config vocab_size is 6"},
    {"no-sidecar.pt", FE_ERR_IO, "its config and vocabulary sidecar"},
    {"legacy.pt", FE_ERR_UNSUPPORTED, "legacy (non-zip) PyTorch file"},
    {"missing-tensor.pt", FE_ERR_FORMAT, "missing tensor 'dec.pos_emb.weight' [4, 8]"},
    /* Issue 18: shapes and strides that expand a few bytes past the storage. */
    {"stride0-wrap.pt", FE_ERR_FORMAT, "a tensor has stride 0 in dimension 0 of size 2147483648"},
    {"stride0-expand.pt", FE_ERR_FORMAT, "a tensor has stride 0 in dimension 0 of size 16384"},
    {"overlap-strides.pt", FE_ERR_FORMAT, "a tensor of 72057594037927936 elements views a storage of 1024"},
    {"offset-past-storage.pt", FE_ERR_FORMAT, "a tensor reaches element"},
    {"many-views.pt", FE_ERR_FORMAT, "non-contiguous tensors would copy more bytes than the archive holds"},
};

static void test_bad_file(gconstpointer data) {
    size_t i = GPOINTER_TO_SIZE(data);
    g_autofree char *rel = g_build_filename("tests", "bad", bad_corpus[i].file, NULL);
    g_autofree char *path = source_path(rel);
    g_autofree char *expected = g_strdup_printf("%s: ", bad_corpus[i].file);
    FeWeightFile *wf = NULL;
    fe_status st;

    fe_clear_error();
    st = fe_weights_open(path, NULL, &wf);
    g_test_message("%s -> %s: %s", bad_corpus[i].file, fe_status_name(st), fe_last_error());
    g_assert_null(wf);
    if (st != bad_corpus[i].status)
        g_test_fail_printf("%s: %s, expected %s", bad_corpus[i].file, fe_status_name(st),
                           fe_status_name(bad_corpus[i].status));
    /* One line, starting with the file name, saying what is wrong. */
    g_assert_true(g_str_has_prefix(fe_last_error(), expected));
    g_assert_null(strchr(fe_last_error(), '\n'));
    if (!strstr(fe_last_error(), bad_corpus[i].message))
        g_test_fail_printf("%s: message '%s' lacks '%s'", bad_corpus[i].file, fe_last_error(),
                           bad_corpus[i].message);
}

/* Every model-looking file in tests/bad has an expectation above. */
static void test_bad_corpus_complete(void) {
    g_autofree char *dir_path = source_path("tests/bad");
    GDir *dir = g_dir_open(dir_path, 0, NULL);
    const char *name;
    size_t n = 0;
    g_assert_nonnull(dir);
    while ((name = g_dir_read_name(dir))) {
        g_autofree char *full = g_build_filename(dir_path, name, NULL);
        size_t i;
        /* Sidecars, and other areas' corpora in their own subfolders. */
        if (g_str_has_suffix(name, ".json") || !g_file_test(full, G_FILE_TEST_IS_REGULAR))
            continue;
        for (i = 0; i < G_N_ELEMENTS(bad_corpus); i++)
            if (strcmp(bad_corpus[i].file, name) == 0)
                break;
        if (i == G_N_ELEMENTS(bad_corpus))
            g_error("tests/bad/%s has no expected message in test-weights.c", name);
        n++;
    }
    g_dir_close(dir);
    g_assert_cmpuint(n, ==, G_N_ELEMENTS(bad_corpus));
}

int main(int argc, char **argv) {
    g_test_init(&argc, &argv, NULL);
    fe_set_log_callback(NULL, NULL);
    g_test_add_func("/weights/json/accepts", test_json_accepts);
    g_test_add_func("/weights/json/values", test_json_values);
    g_test_add_func("/weights/json/rejects", test_json_rejects);
    g_test_add_func("/weights/json/depth", test_json_depth);
    g_test_add_func("/weights/config/defaults", test_config_defaults);
    g_test_add_func("/weights/config/rejects", test_config_rejects);
    g_test_add_func("/weights/config/expected-tensors", test_expected_tensors);
    g_test_add_func("/weights/load/formats-agree", test_tiny_formats_agree);
    g_test_add_func("/weights/load/pt-variants", test_pt_variants);
    g_test_add_func("/weights/load/explicit-sidecar", test_explicit_sidecar);
    g_test_add_func("/weights/load/open-errors", test_open_errors);
    g_test_add_func("/weights/load/to-f32-ints", test_to_f32_refuses_ints);
    g_test_add_func("/weights/load/truncations", test_truncations);
    g_test_add_func("/weights/bad/complete", test_bad_corpus_complete);
    for (size_t i = 0; i < G_N_ELEMENTS(bad_corpus); i++) {
        g_autofree char *name = g_strdup_printf("/weights/bad/%s", bad_corpus[i].file);
        g_test_add_data_func(name, GSIZE_TO_POINTER(i), test_bad_file);
    }
    return g_test_run();
}
