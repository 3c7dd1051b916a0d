#!/usr/bin/env python3
"""A dataset split recognised on the CPU and on a GPU by the C engine (issue 15).

    python3 tools/eval/device_compare.py --data DIR --tool build-gpu/tools/eval/eval-device-compare \
        --model data/models/formulate-v1.safetensors --device cuda:0 [--limit N] [--out FILE]

DIR holds a dataset made by tools/data (vocab.json, meta.json, SPLIT-*.idx.npy,
.tok and .img, or .img.xz: the lent machine gets the test shard compressed,
tools/device/gpu-proof.sh). Every image goes to eval-device-compare with the
dataset's em_px as its hint (as eval.py's clean set), which reads all of them
on the CPU and then on DEVICE; this script prints how many readings are token
for token the same, each device's exact match with the truth, the VRAM figures
and the speeds, and writes the whole summary as JSON to --out.
Needs numpy only (no torch): it runs on the GPU machine and here.
"""

import argparse
import glob
import json
import lzma
import os
import struct
import subprocess
import sys

import numpy as np


def load_split(data, split, limit):
    images, truths = [], []
    for idx_path in sorted(glob.glob(os.path.join(data, split + "-*.idx.npy"))):
        base = idx_path[:-len(".idx.npy")]
        idx = np.load(idx_path)
        if os.path.exists(base + ".img"):
            img = np.fromfile(base + ".img", dtype=np.uint8)
        else:
            with lzma.open(base + ".img.xz") as f:
                img = np.frombuffer(f.read(), dtype=np.uint8)
        tok = np.fromfile(base + ".tok", dtype="<i4")
        for r in idx:
            h, w, off = int(r["h"]), int(r["w"]), int(r["img_offset"])
            images.append((w, h, img[off:off + h * w].tobytes()))
            t0 = int(r["tok_offset"])
            truths.append([int(t) for t in tok[t0:t0 + int(r["n_tokens"])]])
            if limit and len(images) >= limit:
                return images, truths
    return images, truths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--split", default="test")
    ap.add_argument("--tool", required=True, help="the eval-device-compare executable")
    ap.add_argument("--model", default="data/models/formulate-v1.safetensors")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--max-batch", type=int, default=32)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", help="write the summary (JSON) here")
    a = ap.parse_args(argv)

    with open(os.path.join(a.data, "meta.json")) as f:
        em_px = float(json.load(f)["em_px"])
    images, truths = load_split(a.data, a.split, a.limit)
    if not images:
        raise SystemExit(f"no {a.split} shards in {a.data}")
    req = bytearray()
    for w, h, pixels in images:
        req += struct.pack("<iiif", w, h, 1, em_px)
        req += pixels
    p = subprocess.run([a.tool, a.model, a.device, str(a.max_batch)], input=bytes(req),
                       stdout=subprocess.PIPE)
    lines = p.stdout.decode().splitlines()
    if p.returncode != 0 or not lines:
        raise SystemExit(f"eval-device-compare failed with status {p.returncode}")
    rows = [json.loads(l) for l in lines[:-1]]
    summary = json.loads(lines[-1])["summary"]
    if len(rows) != len(images):
        raise SystemExit(f"{len(rows)} replies for {len(images)} images")
    cpu_exact = sum(r["cpu"] == truths[r["i"]] for r in rows)
    gpu_exact = sum(r["gpu"] == truths[r["i"]] for r in rows)
    differ = [r for r in rows if r["cpu"] != r["gpu"]]
    conf_delta = max(abs(r["cpu_conf"] - r["gpu_conf"]) for r in rows if r["cpu"] == r["gpu"]) \
        if len(differ) < len(rows) else None
    summary.update({"split": a.split, "cpu_exact": cpu_exact, "gpu_exact": gpu_exact,
                    "max_confidence_delta_when_identical": conf_delta,
                    "differing_images": [r["i"] for r in differ][:50]})
    n = len(rows)
    g = summary["gpu"]
    print(f"{n} {a.split} images, em_px hint {em_px:g}, max_batch {a.max_batch}")
    print(f"token-identical CPU vs {a.device}: {summary['token_identical']}/{n}")
    print(f"exact vs truth: cpu {cpu_exact}/{n} ({100 * cpu_exact / n:.1f} %), "
          f"{a.device} {gpu_exact}/{n} ({100 * gpu_exact / n:.1f} %)")
    print(f"cpu: {summary['cpu']['images_per_s']:.1f} images/s, first formula {summary['cpu']['first_ms']:.1f} ms; "
          f"{a.device} ({g['name']}): {g['images_per_s']:.1f} images/s, first formula {g['first_ms']:.1f} ms, "
          f"load {g['load_ms']:.0f} ms")
    mib = 1 << 20
    print(f"VRAM free: before load {g['free_before_load'] / mib:.0f} MiB, after load "
          f"{g['free_after_load'] / mib:.0f} MiB, after unload {g['free_after_unload'] / mib:.0f} MiB "
          f"(weights {g['weights_bytes'] / mib:.1f} MiB, engine {g['engine_bytes'] / mib:.1f} MiB)")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
