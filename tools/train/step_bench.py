#!/usr/bin/python3
"""Seconds per training step (forward, backward, AdamW) on one fixed batch of real
shards, fp32 against bf16 autocast, alternating, 3 steps per round.

  /usr/bin/python3 tools/train/step_bench.py work/data [--preset small]
        [--batch 16] [--threads 2] [--rounds 3]
  /usr/bin/python3 tools/train/step_bench.py work/data --collate   # batch assembly only:
        samples per CPU-second without and with --scale-jitter 0.25
"""

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as train.py; before libgomp loads

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dataset as D  # noqa: E402
import model as M  # noqa: E402
import train as T  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--preset", default="small", choices=sorted(T.PRESETS))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--collate", action="store_true", help="time batch assembly (scale jitter off/on) instead")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    vocab = D.load_vocab(a.data)
    cfg = M.make_config(vocab_size=len(vocab), **T.PRESETS[a.preset])
    ds = D.ShardSet(a.data, "train", cfg["max_height"], cfg["max_width"], cfg["max_tokens"])
    if a.collate:
        return collate_bench(ds, cfg, a.rounds)
    m = M.FormulateModel(cfg)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    px, vhw, di, tg = D.collate(ds, list(range(a.batch)), m.height_stride, m.width_stride, 0, 1, 2)
    print(f"batch {tuple(px.shape)}, tokens {tuple(di.shape)}, threads {a.threads}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}")
    res = {"fp32": [], "bf16": []}
    for _ in range(a.rounds):
        for mode in ("fp32", "bf16"):
            for _ in range(3):
                t0 = time.perf_counter()
                with T.autocast_ctx(torch.device("cpu"), torch.bfloat16 if mode == "bf16" else None):
                    lg = m(px, di, vhw)
                loss = F.cross_entropy(lg.float().transpose(1, 2), tg, ignore_index=0)
                opt.zero_grad()
                loss.backward()
                opt.step()
                res[mode].append(time.perf_counter() - t0)
    for mode, ts in res.items():
        ts = sorted(ts)
        print(f"{mode}: median {ts[len(ts) // 2]:.2f} s/step, min {ts[0]:.2f}")


def collate_bench(ds, cfg, rounds):
    """Samples per CPU-second of D.collate over the first 40 batches of epoch 0,
    alternating jitter 0 and 0.25 (the first round also warms the page cache)."""
    import numpy as np
    hs, ws = M.strides(cfg)
    batches = D.make_batches(ds, 0, 1, hs, ws, 400_000, 64)[:40]
    n = sum(len(b) for b in batches)
    for r in range(rounds):
        for jitter in (0.0, 0.25):
            rng = np.random.default_rng(1)
            t0 = time.process_time()
            for b in batches:
                sc = D.scale_factors(len(b), jitter, rng) if jitter else None
                D.collate(ds, b, hs, ws, 0, 1, 2, sc, (cfg["max_height"], cfg["max_width"]))
            print(f"round {r} scale jitter {jitter}: {n / (time.process_time() - t0):.0f} samples per CPU-second")


if __name__ == "__main__":
    main()
