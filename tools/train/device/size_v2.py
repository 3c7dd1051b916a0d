#!/usr/bin/python3
"""Measures candidate v2 model sizes with the C engine (issue 13 rule: the largest
config that runs at <= 40 ms median per formula on 2 cores in bench/engine-cpu and
is <= 25 MB in fp16). Random weights: the work per formula does not depend on the
values (the bench steers the decoder to run the full --max-tokens).

  /usr/bin/python3 tools/train/device/size_v2.py [BUILD_DIR] [--only NAME,...] [--rounds 2]

Prints one row per candidate: parameters, fp16 MB, the bench's per-formula medians
(CPU time of the engine process, and wall), and whether it meets the rule.
"""

import argparse
import importlib.util
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))

CANDIDATES = {
    "v1": {},
    "w320": dict(cnn_channels=[32, 64, 128, 256, 320], d_model=320, n_heads=8, d_ff=1280),
    # deeper decoder at v1 width: the capacity long formulas need sits in the decoder
    "v1-d5": dict(dec_layers=5),
    "v1-d6": dict(dec_layers=6),
    "v1-e3d6": dict(enc_layers=3, dec_layers=6),
    # wider: over 25 MB in fp16 (29.6 MB), listed so the size column shows it
    "w384": dict(cnn_channels=[32, 64, 128, 256, 384], d_model=384, n_heads=8, d_ff=1536),
}
LIMIT_MS = 40.0
LIMIT_MB = 25.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_dir", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", help="comma-separated candidate names")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("engine_cpu", os.path.join(ROOT, "tools", "bench", "engine_cpu.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    names = args.only.split(",") if args.only else list(CANDIDATES)
    rows = []
    for name in names:
        path = os.path.join(args.build_dir, "bench-engine-cpu", f"v2-{name}.safetensors")
        bench.random_model(path, "v1", CANDIDATES[name])
        from safetensors_io import load_file
        tensors, _ = load_file(path)
        params = sum(v.numel() for v in tensors.values())
        mb = os.path.getsize(path) / 1e6
        out = subprocess.run([os.path.join(ROOT, "bench", "engine-cpu", "run"), args.build_dir, "--model", path,
                              "--threads", "2", "--rounds", str(args.rounds)],
                             capture_output=True, text=True)
        print(out.stdout, out.stderr[-2000:], flush=True)
        cpu = re.search(r"per-formula ms, CPU\s+([\d.]+)", out.stdout)
        wall = re.search(r"per-formula ms, wall\s+([\d.]+)", out.stdout)
        load = os.getloadavg()[0]
        cpu_ms = float(cpu.group(1)) if cpu else float("nan")
        wall_ms = float(wall.group(1)) if wall else float("nan")
        rows.append((name, params / 1e6, mb, cpu_ms, wall_ms, load,
                     cpu_ms <= LIMIT_MS and mb <= LIMIT_MB))
    print(f"{'candidate':12s} {'M params':>8s} {'fp16 MB':>8s} {'CPU ms/formula':>15s} {'wall ms/formula':>16s} "
          f"{'load':>5s}  fits (<= {LIMIT_MS:g} ms CPU, <= {LIMIT_MB:g} MB)")
    for r in rows:
        print(f"{r[0]:12s} {r[1]:8.2f} {r[2]:8.2f} {r[3]:15.2f} {r[4]:16.2f} {r[5]:5.1f}  {'yes' if r[6] else 'no'}")


if __name__ == "__main__":
    main()
