/* fe-weights-private.h - helpers shared by the weights layer's own files and
 * its fuzz targets (not used by the runtime or the model). */
#ifndef FE_WEIGHTS_PRIVATE_H
#define FE_WEIGHTS_PRIVATE_H

#include "fe-internal.h"
#include "fe-json.h"

/* fe_config_parse on an already parsed JSON object. */
fe_status fe_config_from_json(const FeJson *object, FeModelConfig *out);

/* Fills wf->config and wf->vocab from the safetensors metadata already in
 * wf->meta_keys/meta_values ("formulate.config", "formulate.vocab", ...). */
fe_status fe_weights_apply_metadata(FeWeightFile *wf);
/* Same from a .pt sidecar JSON {"config": {...}, "vocab": [...]}; its
 * top-level members become wf's metadata (values as their JSON text). */
fe_status fe_weights_apply_sidecar(FeWeightFile *wf, const char *json, size_t len);
/* Every tensor the config needs is present with the right shape and a
 * usable dtype, and there is no tensor formulate-v1 does not know. */
fe_status fe_weights_check_tensors(const FeWeightFile *wf);

/* Growing wf->entries / wf->owned; the entry's name is copied. */
fe_status fe_weights_add_entry(FeWeightFile *wf, const char *name, fe_dtype dtype, int ndim,
                               const int64_t *shape, const void *data, size_t nbytes);
fe_status fe_weights_add_owned(FeWeightFile *wf, void *block);
fe_status fe_weights_add_meta(FeWeightFile *wf, const char *key, const char *value,
                              size_t value_len);

/* Two entries with one name: the parsers call this once all are read. */
fe_status fe_weights_check_unique_names(const FeWeightFile *wf);

/* "[16, 4, 3, 3]" into buf. */
const char *fe_weights_shape_string(int ndim, const int64_t *shape, char *buf, size_t size);

/* ZIP reading for .pt archives: stored entries only. */
typedef struct {
    char *name;
    const uint8_t *data;           /* into the archive bytes                    */
    uint64_t size;
    int method;                    /* 0 = stored                                */
} FeZipEntry;

typedef struct {
    FeZipEntry *entries;
    size_t n_entries;
} FeZipArchive;

/* Reads the central directory (zip64 included) and locates every entry's
 * data; a compressed entry is kept with method != 0 so the caller can name it
 * when it needs it. */
fe_status fe_zip_open(const uint8_t *data, size_t len, FeZipArchive *out);
void fe_zip_close(FeZipArchive *zip);
const FeZipEntry *fe_zip_find(const FeZipArchive *zip, const char *name);

#endif /* FE_WEIGHTS_PRIVATE_H */
