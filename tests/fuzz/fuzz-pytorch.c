/* fuzz-pytorch.c - libFuzzer target: a byte string as a torch.save() .pt
 * archive through the zip reader, the restricted unpickler and the tensor
 * checks (against the bad corpus's micro config). */
#include "fe-internal.h"
#include "fe-weights-private.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fuzz_sidecar[] =
    "{\"config\": {\"arch\": \"formulate-v1\", \"cnn_channels\": [2], \"cnn_pool\": [[16, 8]],"
    " \"d_model\": 8, \"n_heads\": 2, \"d_ff\": 8, \"enc_layers\": 0, \"dec_layers\": 1,"
    " \"vocab_size\": 6, \"max_tokens\": 4, \"max_height\": 32, \"max_width\": 64},"
    " \"vocab\": [\"<pad>\", \"<bos>\", \"<eos>\", \"<unk>\", \"x\", \"y\"]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FeWeightFile *wf = calloc(1, sizeof *wf);
    fe_status st;
    if (!wf)
        return 0;
    fe_set_log_callback(NULL, NULL);
    st = fe_pytorch_parse(data, size, wf);
    for (size_t i = 0; st == FE_OK && i < wf->n_entries; i++) {
        float *f = NULL;
        if (fe_weights_to_f32(&wf->entries[i], &f) == FE_OK)
            free(f);
    }
    if (st == FE_OK)
        st = fe_weights_apply_sidecar(wf, fuzz_sidecar, strlen(fuzz_sidecar));
    if (st == FE_OK)
        st = fe_weights_check_tensors(wf);
    fe_weights_close(wf);
    return 0;
}
