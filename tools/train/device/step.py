#!/usr/bin/env python3
"""One device call of the GPU training kit (issue 13 section 1; docs/model.md).

    python3 tools/train/device/step.py work/device/slice-0

on the lent machine (its `python3` holds torch 2.x with CUDA), inside one `run`
call that carries work/device/slice-K (and work/device/init.safetensors after a
lost machine). It resumes whatever the warm machine already holds:

1. unpacks the slice's xz shards into STATE/data (STATE = $FM_KIT_STATE or
   work/kit-state: ignored, so it stays on the warm machine between calls) and
   rewrites STATE/data/meta.json to list every train shard unpacked so far;
2. trains with tools/train/train.py into STATE/run for --minutes of this call,
   resuming STATE/run/last.ckpt; with no checkpoint there (first call, or a
   fresh machine after a lost one) it starts from work/device/init.safetensors
   when carried (--init-from), else from scratch. The cosine schedule spans
   --total-min minutes over all calls (train.py --time-budget-min);
3. writes into $OUT (or --out): the fp16 export (tools/export), log.csv, the
   trainer's stdout and kit.json (steps, minutes, shards, val scores).

A lost machine therefore costs one call: the next call carries the last
export that came back as init.safetensors.
"""

import argparse
import csv
import json
import lzma
import multiprocessing
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SHARD_PARTS = (".idx.npy", ".img", ".tok")


def unpack(job):
    src, dst = job
    if os.path.exists(dst):
        return 0
    tmp = dst + ".part"
    with lzma.open(src, "rb") as fi, open(tmp, "wb") as fo:
        shutil.copyfileobj(fi, fo, 1 << 20)
    os.replace(tmp, dst)
    return os.path.getsize(dst)


def shard_names(directory):
    return sorted({n[:-len(".idx.npy")] for n in os.listdir(directory) if n.endswith(".idx.npy")})


def main(argv=None):
    ap = argparse.ArgumentParser(description="One resumable training call on a lent GPU machine.")
    ap.add_argument("slice", help="a folder written by pack.py (work/device/slice-K)")
    ap.add_argument("--minutes", type=float, default=8.0,
                    help="training minutes in this call (the run tool stops a command at 10)")
    ap.add_argument("--total-min", type=float, default=24.0,
                    help="minutes the whole multi-call schedule spans (warm-up + cosine)")
    ap.add_argument("--preset", default="v1")
    ap.add_argument("--init", default=os.path.join("work", "device", "init.safetensors"),
                    help="model to start from when STATE holds no checkpoint (used if present)")
    ap.add_argument("--out", default=os.environ.get("OUT"), help="where results go (default $OUT)")
    ap.add_argument("--state", default=os.environ.get("FM_KIT_STATE", os.path.join("work", "kit-state")))
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--train-args", default="--batch-pixels 3000000 --max-batch 192 --lr 1e-3 "
                    "--warmup-steps 300 --scale-jitter 0.25 --eval-steps 500 --val-samples 512 "
                    "--val-decode 128 --log-steps 50 --ckpt-min 3",
                    help="further tools/train/train.py arguments (GPU defaults)")
    a = ap.parse_args(argv)
    if not a.out:
        raise SystemExit("no --out and no $OUT")
    t0 = time.monotonic()
    os.makedirs(a.out, exist_ok=True)
    data = os.path.join(a.state, "data")
    run = os.path.join(a.state, "run")
    os.makedirs(data, exist_ok=True)

    # 1. data: add this slice's shards to those already on the machine
    with open(os.path.join(a.slice, "vocab.json")) as f:
        vocab = json.load(f)
    have_vocab = os.path.join(data, "vocab.json")
    if os.path.exists(have_vocab):
        with open(have_vocab) as f:
            if json.load(f) != vocab:
                raise SystemExit(f"{a.slice}/vocab.json differs from the one in {data}: "
                                 "pack every slice from the same dataset")
    else:
        shutil.copy(os.path.join(a.slice, "vocab.json"), have_vocab)
    jobs = [(os.path.join(a.slice, n), os.path.join(data, n[:-3]))
            for n in sorted(os.listdir(a.slice)) if n.endswith(".xz")]
    with multiprocessing.Pool(max(1, min(a.jobs, len(jobs)))) as pool:
        unpacked = sum(pool.map(unpack, jobs))
    with open(os.path.join(a.slice, "meta.json")) as f:
        meta = json.load(f)
    names = shard_names(data)
    train = [n for n in names if n.startswith("train-")]
    meta["splits"]["train"] = {"shards": train}
    tmp = os.path.join(data, "meta.json.part")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(tmp, os.path.join(data, "meta.json"))
    t_data = time.monotonic() - t0
    print(f"kit: {unpacked / 1e6:.1f} MB unpacked in {t_data:.1f} s; {len(train)} train shards on this machine",
          flush=True)

    # 2. train
    cmd = [sys.executable, os.path.join(ROOT, "tools", "train", "train.py"), "--data", data, "--out", run,
           "--preset", a.preset, "--time-budget-min", str(a.total_min), "--exit-after-min", str(a.minutes)]
    resumed = os.path.exists(os.path.join(run, "last.ckpt"))
    init = None
    if not resumed and os.path.exists(a.init):
        init = a.init
        cmd += ["--init-from", init]
    cmd += a.train_args.split()
    print("kit: " + " ".join(cmd), flush=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(os.path.join(a.out, "train-stdout.txt"), "ab") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    with open(os.path.join(a.out, "train-stdout.txt"), "rb") as f:
        sys.stdout.write(f.read()[-3000:].decode(errors="replace"))
    if rc != 0:
        raise SystemExit(f"kit: train.py failed with status {rc}")

    # 3. results
    export = os.path.join(a.out, "formulate-%s.safetensors" % a.preset)
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "train", "export.py"),
                         os.path.join(run, "last.ckpt"), "-o", export]).returncode
    if rc != 0:
        raise SystemExit(f"kit: export failed with status {rc}")
    shutil.copy(os.path.join(run, "log.csv"), os.path.join(a.out, "log.csv"))
    with open(os.path.join(run, "log.csv")) as f:
        rows = list(csv.DictReader(f))
    vals = [r for r in rows if r["kind"] == "val"]
    last = rows[-1] if rows else {}
    info = {"slice": os.path.basename(os.path.normpath(a.slice)), "resumed": resumed, "init_from": init,
            "train_shards": train, "step": int(last.get("step") or 0),
            "train_minutes_total": round(float(last.get("time_s") or 0) / 60, 2),
            "last_val": vals[-1] if vals else None, "data_seconds": round(t_data, 1),
            "call_seconds": round(time.monotonic() - t0, 1)}
    with open(os.path.join(a.out, "kit.json"), "w") as f:
        json.dump(info, f, indent=1)
    print("kit: " + json.dumps(info), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
