/* fuzz-safetensors.c - libFuzzer target: a byte string as a .safetensors file
 * through everything fe_weights_open does after mapping it. */
#include "fe-internal.h"
#include "fe-weights-private.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FeWeightFile *wf = calloc(1, sizeof *wf);
    fe_status st;
    if (!wf)
        return 0;
    fe_set_log_callback(NULL, NULL);
    st = fe_safetensors_parse(data, size, wf);
    /* Touch every byte each entry claims, so a span past the input shows. */
    for (size_t i = 0; st == FE_OK && i < wf->n_entries; i++) {
        float *f = NULL;
        if (fe_weights_to_f32(&wf->entries[i], &f) == FE_OK)
            free(f);
    }
    if (st == FE_OK)
        st = fe_weights_apply_metadata(wf);
    if (st == FE_OK)
        st = fe_weights_check_tensors(wf);
    fe_weights_close(wf);
    return 0;
}
