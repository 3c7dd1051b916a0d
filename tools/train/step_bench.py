#!/usr/bin/python3
"""Seconds per training step (forward, backward, AdamW) on one fixed batch of real
shards, fp32 against bf16 autocast, alternating, 3 steps per round.

  /usr/bin/python3 tools/train/step_bench.py work/data [--preset small]
        [--batch 16] [--threads 2] [--rounds 3]
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
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    vocab = D.load_vocab(a.data)
    cfg = M.make_config(vocab_size=len(vocab), **T.PRESETS[a.preset])
    ds = D.ShardSet(a.data, "train", cfg["max_height"], cfg["max_width"], cfg["max_tokens"])
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


if __name__ == "__main__":
    main()
