#!/usr/bin/python3
"""Checkpoint -> the engine's model file (safetensors, fp16 weights, formulate metadata).

  /usr/bin/python3 tools/train/export.py RUN_DIR/last.ckpt -o formulate.safetensors
  /usr/bin/python3 tools/train/export.py RUN_DIR/ema.pt -o formulate.safetensors   (sidecar ema.json)

From a trainer checkpoint (.ckpt) the EMA weights are exported unless --no-ema.
Metadata (docs/model.md): format, formulate.format_version, formulate.config,
formulate.vocab, formulate.normalizer_version, formulate.data_hash,
formulate.git_commit. BatchNorm's num_batches_tracked is dropped (the engine
ignores it). After writing, the file is reloaded and run next to the fp32 model
on a synthetic image; the export fails when they disagree beyond fp16 rounding.
"""

import argparse
import json
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import model as M  # noqa: E402
from safetensors_io import save_file  # noqa: E402

SIZE_LIMIT_MB = 25.0
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}


def git_commit():
    try:
        out = subprocess.run(["git", "-C", HERE, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--untracked-files=no", "--", "."],
                               capture_output=True, text=True).stdout.strip()
        return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load_source(path, use_ema):
    """-> (config, vocab, state_dict, provenance dict)."""
    if path.endswith(".ckpt"):
        # our own file, with RNG states and numpy objects: not weights-only (torch >= 2.6 default)
        ck = torch.load(path, map_location="cpu", weights_only=False)
        cfg, vocab = ck["config"], ck["vocab"]
        if use_ema and ck.get("ema"):
            state = {k: (ck["ema"][k].to(v.dtype) if k in ck["ema"] else v) for k, v in ck["model"].items()}
        else:
            state = ck["model"]
        st = ck.get("state", {})
        prov = {"normalizer_version": st.get("normalizer_version", "unknown"),
                "data_hash": st.get("data_hash", "unknown"), "step": st.get("step")}
        return cfg, vocab, state, prov
    sidecar = path[:-3] + ".json" if path.endswith(".pt") else path + ".json"
    with open(sidecar) as f:
        side = json.load(f)
    return (side["config"], side["vocab"], torch.load(path, map_location="cpu"),
            {"normalizer_version": side.get("normalizer_version", "unknown"),
             "data_hash": side.get("data_hash", "unknown")})


def synthetic_image(cfg):
    """Strokes on white, 2 x 8 strides: enough to drive every layer."""
    hs, ws = M.strides(cfg)
    g = torch.Generator().manual_seed(0)
    x = torch.zeros(1, 1, 2 * hs, 8 * ws)
    for _ in range(12):
        y0 = int(torch.randint(0, 2 * hs - 3, (1,), generator=g))
        x0 = int(torch.randint(0, 8 * ws - 12, (1,), generator=g))
        x[0, 0, y0:y0 + 2, x0:x0 + 10] = 1.0
    return x


def main():
    ap = argparse.ArgumentParser(description="Export a formulate-v1 checkpoint for the engine.")
    ap.add_argument("checkpoint", help="trainer .ckpt, or a state_dict .pt with its sidecar .json")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--dtype", default="f16", choices=sorted(DTYPES))
    ap.add_argument("--no-ema", action="store_true", help="export the live weights, not the EMA")
    ap.add_argument("--normalizer-version", help="override the recorded normalizer version")
    ap.add_argument("--data-hash", help="override the recorded data hash")
    args = ap.parse_args()

    cfg, vocab, state, prov = load_source(args.checkpoint, not args.no_ema)
    M.check_config(cfg)
    if len(vocab) != cfg["vocab_size"]:
        raise SystemExit(f"vocabulary has {len(vocab)} tokens, config says {cfg['vocab_size']}")
    ref = M.model_from_state_dict(cfg, state).eval()

    dtype = DTYPES[args.dtype]
    tensors = {k: (v.to(dtype) if v.is_floating_point() else v)
               for k, v in ref.state_dict().items() if not k.endswith("num_batches_tracked")}
    meta = {
        "format": "formulate",
        "formulate.format_version": "1",
        "formulate.config": json.dumps(cfg),
        "formulate.vocab": json.dumps(vocab, ensure_ascii=False),
        "formulate.normalizer_version": args.normalizer_version or str(prov["normalizer_version"]),
        "formulate.data_hash": args.data_hash or str(prov["data_hash"]),
        "formulate.git_commit": git_commit(),
    }
    tmp = args.output + ".tmp"
    save_file(tensors, tmp, meta)

    # Round trip: reload what the engine will read and compare with fp32.
    back, back_vocab, back_meta = M.load_safetensors(tmp)
    back.eval()
    x = synthetic_image(cfg)
    with torch.no_grad():
        mem_ref, _ = ref.encode(x)
        mem_back, _ = back.encode(x)
        bos = torch.tensor([cfg["bos_id"]])
        l_ref = ref.step(bos, 0, ref.init_cache(mem_ref))
        l_back = back.step(bos, 0, back.init_cache(mem_back))
    enc_diff = float((mem_ref - mem_back).abs().max())
    logit_diff = float((l_ref - l_back).abs().max()) / max(1.0, float(l_ref.abs().max()))
    tol = 0.0 if dtype == torch.float32 else (0.05 if dtype == torch.float16 else 0.2)
    if back_vocab != vocab or enc_diff > max(tol, 1e-5) or logit_diff > max(tol, 1e-5):
        os.remove(tmp)
        raise SystemExit(f"round trip failed: encoder max diff {enc_diff:.3g}, relative logit diff {logit_diff:.3g}")
    size_mb = os.path.getsize(tmp) / 1e6
    if size_mb > SIZE_LIMIT_MB:
        os.remove(tmp)
        raise SystemExit(f"{size_mb:.1f} MB is over the {SIZE_LIMIT_MB} MB limit")
    os.replace(tmp, args.output)
    n_params = sum(v.numel() for v in tensors.values() if v.is_floating_point())
    print(f"{args.output}: {n_params / 1e6:.2f} M parameters, {args.dtype}, {size_mb:.2f} MB; "
          f"vs fp32: encoder max diff {enc_diff:.2e}, first-logit relative diff {logit_diff:.2e}; "
          f"normalizer {meta['formulate.normalizer_version']}, data {meta['formulate.data_hash']}, "
          f"commit {meta['formulate.git_commit']}")


if __name__ == "__main__":
    main()
