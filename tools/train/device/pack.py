#!/usr/bin/python3
"""Pack one slice of the training shards for a lent GPU machine (issue 13 section 1).

    /usr/bin/python3 tools/train/device/pack.py --data work/data --out work/device --slice 0

writes work/device/slice-0/ (ignored by git: name it in the device tool's `carry`):
xz-compressed train shards NAME.{idx.npy,img,tok}.xz, a cut of the validation
split (val-00000, first --val-samples samples), vocab.json, a meta.json that
lists exactly these shards, and pack.json (what is inside, bytes, samples).

Slice K holds the train shards K*N .. K*N+N-1 (modulo their count), N =
--shards-per-slice or as many as fit --data-mib; so each device call carries
data no earlier call carried, and tools/train/device/step.py adds them to what
the warm machine already holds. Compressed shards are cached in OUT/cache, so
packing the next slice costs only its new shards.

Why xz shards and not rendering on the device: docs/model.md ("GPU training
kit") gives the measured trade-off.
"""

import argparse
import json
import lzma
import multiprocessing
import os
import shutil
import sys

import numpy as np

SHARD_PARTS = (".idx.npy", ".img", ".tok")
# xz -6: within 3 % of -9e on our shards at a third of the CPU time
XZ_PRESET = 6


def compress_file(job):
    src, dst = job
    if os.path.exists(dst):
        return dst
    tmp = dst + ".part"
    with open(src, "rb") as fi, lzma.open(tmp, "wb", preset=XZ_PRESET) as fo:
        shutil.copyfileobj(fi, fo, 1 << 20)
    os.replace(tmp, dst)
    return dst


def cut_shard(data, name, out_dir, out_name, n):
    """The first n samples of shard `name`, rewritten as `out_name` (offsets kept:
    samples are stored in index order, so the first n are a prefix of .img/.tok)."""
    idx = np.load(os.path.join(data, name + ".idx.npy"))[:n]
    img_end = int((idx["img_offset"] + idx["h"].astype(np.int64) * idx["w"].astype(np.int64)).max())
    tok_end = int((idx["tok_offset"] + idx["n_tokens"].astype(np.int64)).max())
    np.save(os.path.join(out_dir, out_name + ".idx.npy"), idx)
    for part, end in ((".img", img_end), (".tok", tok_end * 4)):
        with open(os.path.join(data, name + part), "rb") as f:
            blob = f.read(end)
        with open(os.path.join(out_dir, out_name + part), "wb") as f:
            f.write(blob)
    return len(idx)


def shard_samples(data, name):
    return int(len(np.load(os.path.join(data, name + ".idx.npy"), mmap_mode="r")))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="dataset directory (tools/data/README.md format)")
    ap.add_argument("--out", default="work/device", help="kit folder (ignored by git)")
    ap.add_argument("--slice", type=int, required=True, help="slice number K: a different one each call")
    ap.add_argument("--data-mib", type=float, default=34.0,
                    help="compressed size cap of the slice; 34 leaves room in the 60 MiB carry "
                    "for the project (~9 MiB) and an init model (v1 fp16 ~14 MiB)")
    ap.add_argument("--shards-per-slice", type=int, default=0, help="0: as many as fit --data-mib")
    ap.add_argument("--val-samples", type=int, default=512)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)

    with open(os.path.join(a.data, "meta.json")) as f:
        meta = json.load(f)
    train = meta["splits"]["train"]["shards"]
    val = meta["splits"]["val"]["shards"]
    if not train or not val:
        raise SystemExit(f"{a.data}/meta.json lists no train or no val shards")
    cache = os.path.join(a.out, "cache")
    os.makedirs(cache, exist_ok=True)
    dest = os.path.join(a.out, "slice-%d" % a.slice)
    if os.path.exists(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)

    # validation cut, compressed like the train shards
    n_val = cut_shard(a.data, val[0], dest, "val-00000", a.val_samples)
    for part in SHARD_PARTS:
        p = os.path.join(dest, "val-00000" + part)
        compress_file((p, p + ".xz"))
        os.remove(p)
    shutil.copy(os.path.join(a.data, "vocab.json"), dest)
    used = sum(os.path.getsize(os.path.join(dest, n)) for n in os.listdir(dest))
    cap = int(a.data_mib * (1 << 20))

    def compressed(name):
        jobs = [(os.path.join(a.data, name + p), os.path.join(cache, name + p + ".xz")) for p in SHARD_PARTS]
        with multiprocessing.Pool(min(a.jobs, len(jobs))) as pool:
            return pool.map(compress_file, jobs)

    per = a.shards_per_slice
    if per <= 0:
        first = sum(os.path.getsize(p) for p in compressed(train[0]))
        per = max(1, int((cap - used) // first))
    start = (a.slice * per) % len(train)
    chosen, samples = [], 0
    for k in range(min(per, len(train))):
        name = train[(start + k) % len(train)]
        files = compressed(name)
        size = sum(os.path.getsize(p) for p in files)
        if chosen and used + size > cap:
            break
        for p in files:
            os.link(p, os.path.join(dest, os.path.basename(p)))
        used += size
        chosen.append(name)
        samples += shard_samples(a.data, name)

    meta = dict(meta)
    meta["splits"] = {"train": {"shards": chosen, "samples": samples},
                      "val": {"shards": ["val-00000"], "samples": n_val}}
    with open(os.path.join(dest, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    info = {"slice": a.slice, "train_shards": chosen, "train_samples": samples, "val_samples": n_val,
            "bytes": used, "bytes_per_sample": round(used / max(1, samples + n_val), 1)}
    with open(os.path.join(dest, "pack.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(f"{dest}: {len(chosen)} train shards ({samples} samples) + {n_val} val, "
          f"{used / (1 << 20):.1f} MiB, {info['bytes_per_sample']} B/sample")
    return 0


if __name__ == "__main__":
    sys.exit(main())
