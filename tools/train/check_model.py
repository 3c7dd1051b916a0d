#!/usr/bin/python3
"""Self-consistency checks of model.py; exits 1 when one fails.

  /usr/bin/python3 tools/train/check_model.py

1. A padded batch (model.encode with valid sizes) gives each image the encoder
   output, first logits and greedy tokens it gets alone (as in the engine).
2. The KV-cache decoder step equals the teacher-forced decoder at every position.
3. tests/fixtures/model/tiny.pt reproduces its recorded encoder outputs.
"""

import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model as M  # noqa: E402

TOL = 1e-5


def main():
    torch.manual_seed(0)
    cfg = M.make_config(d_model=64, n_heads=4, d_ff=128, cnn_channels=[16, 32, 64, 64],
                        cnn_pool=[[2, 2], [2, 2], [2, 2], [2, 1]], enc_layers=1, dec_layers=2,
                        vocab_size=40, max_tokens=32)
    m = M.FormulateModel(cfg).eval()
    with torch.no_grad():  # BN away from identity, so padding really is non-zero after BN
        for b in m.cnn:
            b.bn.running_mean.normal_(0, 0.3)
            b.bn.bias.normal_(0, 0.2)
    sizes = [(32, 64), (32, 32), (16, 48)]
    x = torch.zeros(len(sizes), 1, 32, 64)
    for i, (h, w) in enumerate(sizes):
        x[i, 0, :h, :w] = torch.rand(h, w) * (torch.rand(h, w) > 0.7)
    vhw = torch.tensor(sizes)
    ok = True
    with torch.no_grad():
        mem, mask = m.encode(x, vhw)
        toks, first = m.greedy_decode(mem, mask, return_first_logits=True)
        worst_enc = worst_logit = 0.0
        for i, (h, w) in enumerate(sizes):
            alone, _ = m.encode(x[i:i + 1, :, :h, :w])
            t1, f1 = m.greedy_decode(alone, return_first_logits=True)
            hh, ww = h // 16, w // 8
            batched = mem[i].view(32 // 16, 64 // 8, -1)[:hh, :ww].reshape(hh * ww, -1)
            worst_enc = max(worst_enc, float((batched - alone[0]).abs().max()))
            worst_logit = max(worst_logit, float((first[i] - f1[0]).abs().max()))
            ok &= t1[0] == toks[i]
        print(f"batched vs alone: encoder max diff {worst_enc:.2e}, first logits {worst_logit:.2e}, "
              f"tokens {'equal' if ok else 'DIFFER'}")
        ok &= worst_enc < TOL and worst_logit < TOL

        seq = torch.tensor([[cfg["bos_id"]] + list(range(4, 20))])
        full = m.decode(seq, mem[0:1])
        cache = m.init_cache(mem[0:1])
        worst_step = max(float((m.step(seq[:, t], t, cache) - full[:, t]).abs().max())
                         for t in range(seq.shape[1]))
        print(f"KV-cache step vs teacher-forced: max diff {worst_step:.2e}")
        ok &= worst_step < TOL

        fx = os.path.join(HERE, "..", "..", "tests", "fixtures", "model")
        index = json.load(open(os.path.join(fx, "index.json")))
        tiny, _ = M.load_pt(os.path.join(fx, "tiny.pt"))
        tiny.eval()
        worst_fx = 0.0
        for c in index["cases"]:
            if c["model"] != "tiny":
                continue
            px = np.fromfile(os.path.join(fx, c["pixels"]), dtype="<f4").reshape(1, 1, c["height"], c["width"])
            out, _ = tiny.encode(torch.from_numpy(px))
            ref = np.fromfile(os.path.join(fx, c["encoder_output"]), dtype="<f4")
            worst_fx = max(worst_fx, float(np.abs(out.numpy().ravel() - ref).max()))
            ok &= tiny.greedy_decode(out)[0] == c["tokens"]
        print(f"fixtures: tiny.pt encoder max diff {worst_fx:.2e}")
        ok &= worst_fx < TOL
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
