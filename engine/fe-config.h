/* fe-config.h - the model's configuration (docs/model.md) and the tensors a
 * weight file must hold for it: the weights layer's contract with the model
 * layer (fe-config.c, fe-weights.c, fe-model.c). Not installed. */
#ifndef FE_CONFIG_H
#define FE_CONFIG_H

#include "fe-base.h"

/* ------------------------------------------------------------------------ */
/* Model configuration (JSON "formulate.config"; see docs/model.md)          */

#define FE_MAX_CNN_BLOCKS 16

typedef struct {
    char arch[32];                 /* "formulate-v1"                           */
    int format_version;            /* 1                                        */
    int in_channels;               /* 1                                        */
    int n_cnn;                     /* number of conv blocks                    */
    int cnn_channels[FE_MAX_CNN_BLOCKS];
    int cnn_pool[FE_MAX_CNN_BLOCKS][2];   /* (height, width) pool after block i */
    int d_model, n_heads, d_ff;
    int enc_layers, dec_layers;
    int vocab_size, max_tokens;
    bool tie_embeddings;
    int em_px;
    float cc_median_em;            /* median connected-component height / em   */
    int max_height, max_width;
    float ln_eps, bn_eps;
    int pad_id, bos_id, eos_id, unk_id;
    /* derived */
    int height_stride, width_stride;
} FeModelConfig;

/* Parses and validates the config JSON (every key known and in range, pools
 * multiply to a height stride of 16 and a width stride of 8 or 16,
 * d_model % n_heads == 0, ...). */
fe_status fe_config_parse(const char *json, size_t len, FeModelConfig *out);

/* ------------------------------------------------------------------------ */
/* Weight files                                                             */

typedef struct {
    char *name;
    fe_dtype dtype;
    int ndim;
    int64_t shape[8];
    const void *data;              /* into the mapping, or into owned memory   */
    size_t nbytes;
} FeWeightEntry;

typedef struct {
    char format[16];               /* "safetensors" or "pytorch"               */
    FeWeightEntry *entries;
    size_t n_entries;
    FeModelConfig config;
    char **vocab;                  /* vocab_size NUL-terminated strings        */
    int n_vocab;
    /* __metadata__ of safetensors (or the .pt sidecar's keys), for reporting */
    char **meta_keys, **meta_values;
    int n_meta;
    /* private: the file's bytes (read whole, malloc'd) and owned buffers */
    void *map_base;
    size_t map_len;
    void **owned;
    size_t n_owned;
} FeWeightFile;

/* Opens a .safetensors or .pt (by content, not extension), maps it, checks
 * every header field, parses config + vocab and checks that every tensor the
 * config needs is present with the right shape (fe_model_expected_tensors).
 * config_path: the .pt sidecar (NULL = default name). */
fe_status fe_weights_open(const char *path, const char *config_path, FeWeightFile **out);
void fe_weights_close(FeWeightFile *wf);
const FeWeightEntry *fe_weights_find(const FeWeightFile *wf, const char *name);
/* Converts any float entry to a newly malloc'd f32 array (caller frees). */
fe_status fe_weights_to_f32(const FeWeightEntry *e, float **out);
/* The same into dst, which holds nbytes / dtype size floats (no allocation:
 * the model loader converts every tensor through one buffer). */
fe_status fe_weights_convert_f32(const FeWeightEntry *e, float *dst);

/* Lower-level parsers, fuzzed on their own. They take a byte span (the
 * mapping) and fill wf's entries / metadata; data pointers point into it. */
fe_status fe_safetensors_parse(const uint8_t *data, size_t len, FeWeightFile *wf);
fe_status fe_pytorch_parse(const uint8_t *data, size_t len, FeWeightFile *wf);

/* The tensors formulate-v1 needs for a config: name + shape. Optional ones
 * (conv bias, num_batches_tracked, untied output weight) are marked. */
typedef struct {
    char name[64];
    int ndim;
    int64_t shape[4];
    bool optional;
} FeExpectedTensor;
/* Returns a malloc'd array; *n receives its length. */
FeExpectedTensor *fe_model_expected_tensors(const FeModelConfig *cfg, size_t *n);

#endif /* FE_CONFIG_H */
