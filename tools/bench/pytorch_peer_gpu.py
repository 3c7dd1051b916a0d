#!/usr/bin/env python3
"""PyTorch side of bench/engine-gpu (see README.md): the peer formulate's CUDA
backend is measured against, plus the inputs both sides share.

  pytorch_peer.py make-model OUT.safetensors [--seed S]
      formulate-v1 at docs/model.md's default size, random weights, EOS logit
      pushed to -1e4 so every greedy decode runs exactly --steps steps.
  pytorch_peer.py make-images OUT.f32 N HEIGHT WIDTH [--seed S]
      N random stroke images (ink = 1), raw float32 [N][H][W].
  pytorch_peer.py run MODEL IMAGES.f32 HEIGHT WIDTH STEPS BATCH...
      eval(), no_grad, autocast fp16, incremental decoding with the KV cache of
      tools/train/model.py (greedy_decode); one line per batch:
      batch=B images_per_s=X ms_per_image=Y

Uses the twin in tools/train/model.py, so both sides compute the same network.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "train"))

import model as fm  # noqa: E402
import safetensors_io  # noqa: E402


def make_model(args):
    torch.manual_seed(args.seed)
    cfg = fm.make_config()
    model = fm.FormulateModel(cfg)
    with torch.no_grad():
        # BatchNorm running statistics that keep activations in range
        for block in model.cnn:
            block.bn.running_mean.uniform_(-0.1, 0.1)
            block.bn.running_var.uniform_(0.5, 1.5)
        model.dec.out.bias.zero_()
        model.dec.out.bias[cfg["eos_id"]] = -1e4
    vocab = fm.SPECIAL_TOKENS + [f"t{i}" for i in range(cfg["vocab_size"] - len(fm.SPECIAL_TOKENS))]
    tensors = {k: v.contiguous() for k, v in model.state_dict().items()}
    meta = {
        "format": "formulate",
        "formulate.format_version": "1",
        "formulate.config": json.dumps(cfg),
        "formulate.vocab": json.dumps(vocab),
    }
    safetensors_io.save_file(tensors, args.out, metadata=meta)
    print(f"wrote {args.out}")


def make_images(args):
    rng = np.random.default_rng(args.seed)
    imgs = np.zeros((args.n, args.height, args.width), dtype=np.float32)
    for i in range(args.n):
        for _ in range(40):   # short horizontal and vertical strokes, like glyph parts
            y = rng.integers(2, args.height - 6)
            x = rng.integers(2, args.width - 20)
            if rng.random() < 0.5:
                imgs[i, y:y + 2, x:x + rng.integers(4, 18)] = 1.0
            else:
                imgs[i, y:y + rng.integers(3, 6), x:x + 2] = 1.0
    imgs.tofile(args.out)
    print(f"wrote {args.out}: {args.n} x {args.height} x {args.width}")


def run(args):
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("pytorch_peer.py: torch.cuda.is_available() is False")
    model, _vocab, _meta = fm.load_safetensors(args.model)
    model = model.to(dev).eval()
    raw = np.fromfile(args.images, dtype=np.float32)
    per = args.height * args.width
    n = raw.size // per
    imgs = torch.from_numpy(raw[: n * per].reshape(n, 1, args.height, args.width))
    name = torch.cuda.get_device_name(dev) if cuda else "cpu"
    print(f"device={dev} name=\"{name}\" torch={torch.__version__}")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for b in args.batch:
        idx = torch.arange(b) % n
        pixels = imgs[idx].to(dev)
        # fp16 autocast on the GPU; the CPU run (a smoke test of this script) stays fp32
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=cuda):
            model.recognize(pixels[:1], max_steps=args.steps)  # warm-up
            sync()
            t0 = time.perf_counter()
            out = model.recognize(pixels, max_steps=args.steps)
            sync()
            dt = time.perf_counter() - t0
        tokens = sum(len(o) for o in out)
        print(f"batch={b} images_per_s={b / dt:.3f} ms_per_image={dt * 1e3 / b:.3f} tokens={tokens}",
              flush=True)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make-model")
    m.add_argument("out")
    m.add_argument("--seed", type=int, default=1)
    i = sub.add_parser("make-images")
    i.add_argument("out")
    i.add_argument("n", type=int)
    i.add_argument("height", type=int)
    i.add_argument("width", type=int)
    i.add_argument("--seed", type=int, default=2)
    r = sub.add_parser("run")
    r.add_argument("model")
    r.add_argument("images")
    r.add_argument("height", type=int)
    r.add_argument("width", type=int)
    r.add_argument("steps", type=int)
    r.add_argument("batch", type=int, nargs="+")
    r.add_argument("--device", default="cuda:0", help="cpu only to smoke-test this script")
    args = p.parse_args()
    {"make-model": make_model, "make-images": make_images, "run": run}[args.cmd](args)


if __name__ == "__main__":
    main()
