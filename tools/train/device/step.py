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

With --render-min R and a folder written by make-render-kit.sh
(work/device/render: render-kit.tar.xz, corpus.tar.xz, vocab.json, a val cut),
step 1 also renders fresh train shards on the machine for R minutes first:
the kit (pdflatex, the TeX files, render-crops and their libraries) is
unpacked to /tmp/fmkit, tools/data/build_dataset.py runs with --jobs
cores-2 and a new --render-seed (default: the time), the same vocab and the
same hash split (no test or val formula is ever rendered for training), and
the shards finished in time join STATE/data; render.json in $OUT has the
samples, seconds and samples per second.
"""

import argparse
import csv
import json
import lzma
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
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


def unpack_render_kit(folder, tmp_root):
    """render-kit.tar.xz and corpus.tar.xz of `folder` into tmp_root (once per machine)."""
    kit = os.path.join(tmp_root, "fmkit")
    corpus = os.path.join(tmp_root, "fmkit-corpus")
    for tarball, dest in (("render-kit.tar.xz", kit), ("corpus.tar.xz", corpus)):
        if os.path.exists(os.path.join(dest, ".unpacked")):
            continue
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        # Python's tarfile and lzma: the lent machine's image need not have xz
        with tarfile.open(os.path.join(folder, tarball), "r:xz") as tf:
            members = []
            for m in tf.getmembers():
                parts = m.name.split("/", 1)
                if len(parts) == 2 and parts[1]:
                    m.name = parts[1]          # tar --strip-components=1
                    members.append(m)
            try:
                tf.extractall(dest, members=members, filter="data")
            except TypeError:                  # Python without extraction filters
                tf.extractall(dest, members=members)
        open(os.path.join(dest, ".unpacked"), "w").close()
    return kit, corpus


def kit_env(kit):
    """What the kit's env.sh sets: its wrappers first on PATH (they set the library path
    for their own binary only, so this Python and torch keep the machine's libraries)."""
    return dict(os.environ, FMKIT=kit, PATH=os.path.join(kit, "bin") + os.pathsep + os.environ.get("PATH", ""),
                TEXMFCNF=os.path.join(kit, "web2c-kit") + os.pathsep + os.path.join(kit, "web2c"),
                FM_RENDER_CROPS=os.path.join(kit, "bin", "render-crops"), PYTHONUNBUFFERED="1")


class Renderer:
    """build_dataset.py in the background into STATE/render-SEED; link() adds its finished
    train shards to `data` as train-sSEED-K (hard links: no copy)."""

    def __init__(self, folder, data, out, jobs, seed, shard_size, tmp_root, minutes, max_samples=0, nice=0,
                 font_weights=None):
        self.data, self.out, self.jobs, self.seed, self.shard_size = data, out, jobs, seed, shard_size
        t0 = time.monotonic()
        # absolute: the kit's bin/ goes on PATH, and pdflatex runs in other working directories
        kit, corpus = unpack_render_kit(os.path.abspath(folder), os.path.abspath(tmp_root))
        self.t_unpack = time.monotonic() - t0
        self.rdir = os.path.join(os.path.dirname(os.path.abspath(data)), "render-%d" % seed)
        os.makedirs(self.rdir, exist_ok=True)
        shutil.copy(os.path.join(folder, "vocab.json"), os.path.join(self.rdir, "vocab.json"))
        # build_dataset's pool plans every shard up front, so plan only what could be done:
        # 300 samples per process-second is about twice what one process makes here
        planned = shard_size * max(1, int(jobs * minutes * 60 * 300 / shard_size) + 1)
        if max_samples:
            planned = min(planned, max_samples)
        cmd = [sys.executable, os.path.join(ROOT, "tools", "data", "build_dataset.py"), "--out", self.rdir,
               "--corpus", corpus, "--train-samples", str(planned), "--val-samples", "0", "--test-samples", "0",
               "--shard-size", str(shard_size), "--jobs", str(jobs), "--seed", str(seed)]
        if font_weights:
            cmd += ["--font-weights", font_weights]
        print("kit: render " + " ".join(cmd), flush=True)
        self.t1 = time.monotonic()
        self.log = open(os.path.join(out, "render-log.txt"), "ab")
        # nice: while train.py runs beside it, its loader workers come first
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=kit_env(kit),
                                     start_new_session=True,
                                     preexec_fn=(lambda: os.nice(nice)) if nice else None)
        self.linked = set()
        self.t_render = None

    def wait(self, seconds):
        try:
            self.proc.wait(timeout=max(0.0, seconds))
        except subprocess.TimeoutExpired:
            pass

    def link(self):
        """Links the shards finished so far; returns how many are new."""
        new = 0
        for name in sorted(os.listdir(self.rdir)):
            if not (name.startswith("train-") and name.endswith(".json")) or name in self.linked:
                continue
            base = name[:-len(".json")]
            dst = os.path.join(self.data, "train-s%d-%05d" % (self.seed, int(base.split("-")[1])))
            for part in SHARD_PARTS:
                if not os.path.exists(dst + part):
                    os.link(os.path.join(self.rdir, base + part), dst + part)
            self.linked.add(name)
            new += 1
        return new

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.t_render = time.monotonic() - self.t1
        self.log.close()
        self.link()
        return self.stats()

    def stats(self):
        t_render = self.t_render if self.t_render is not None else time.monotonic() - self.t1
        samples = planned = shards = 0
        dropped, proc_s = {}, 0.0
        for name in sorted(self.linked):
            with open(os.path.join(self.rdir, name)) as f:
                st = json.load(f)
            shards += 1
            samples += st["samples"]
            planned += st["planned"]
            proc_s += st["seconds"]
            for r, c in st["dropped"].items():
                dropped[r] = dropped.get(r, 0) + c
        info = {"seed": self.seed, "jobs": self.jobs, "shard_size": self.shard_size,
                "unpack_seconds": round(self.t_unpack, 1), "render_wall_seconds": round(t_render, 1),
                "shards": shards, "samples": samples, "planned": planned, "dropped": dropped,
                "samples_per_second": round(samples / t_render, 1) if t_render else None,
                "samples_per_process_second": round(samples / proc_s, 1) if proc_s else None,
                "exit_status": self.proc.returncode}
        with open(os.path.join(self.out, "render.json"), "w") as f:
            json.dump(info, f, indent=1)
        return info


def samples_in(data, names):
    import numpy as np
    return sum(len(np.load(os.path.join(data, n + ".idx.npy"), mmap_mode="r")) for n in names)


def pdf_repeats(data, train, pdf, share):
    """How many times the PDF-crop shards are listed so that they are about `share` of
    an epoch (train.py shuffles the epoch, so of each batch too): share / (1 - share)
    times the other samples."""
    if share <= 0 or not pdf:
        return 0
    n_pdf, n_other = samples_in(data, pdf), samples_in(data, train)
    if n_other == 0:
        return 1
    return max(1, round(share / (1 - share) * n_other / n_pdf))


def write_train_meta(slice_dir, data, pdf_share=0.0):
    """data/meta.json: the slice's meta listing every train shard in `data` (atomic:
    train.py --reload-data may read it at any time), and the carried PDF-crop shards
    (pdf-*, make-render-kit.sh --pdf-crops) repeated for --pdf-share."""
    with open(os.path.join(slice_dir, "meta.json")) as f:
        meta = json.load(f)
    names = shard_names(data)
    train = [n for n in names if n.startswith("train-")]
    pdf = [n for n in names if n.startswith("pdf-")]
    reps = pdf_repeats(data, train, pdf, pdf_share)
    train = train + pdf * reps
    if reps:
        meta["pdf_share"] = {"asked": pdf_share, "repeats": reps, "shards": len(pdf),
                             "share": round(reps * samples_in(data, pdf) / samples_in(data, train), 3)}
    meta["splits"]["train"] = {"shards": train}
    tmp = os.path.join(data, "meta.json.part")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(tmp, os.path.join(data, "meta.json"))
    return train


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
    ap.add_argument("--render-min", type=float, default=0.0,
                    help="render fresh train shards on this machine for this many minutes first "
                    "(SLICE is then a folder written by make-render-kit.sh)")
    ap.add_argument("--render-jobs", type=int, default=max(1, (os.cpu_count() or 3) - 2))
    ap.add_argument("--render-seed", type=int, default=None, help="default: the time (new data every call)")
    ap.add_argument("--render-shard-size", type=int, default=1000)
    ap.add_argument("--render-font-weights", default=None,
                    help="build_dataset.py --font-weights: NAME=W,... (more of the weak set-ups)")
    ap.add_argument("--render-max-samples", type=int, default=0, help="stop rendering after this many (0: time only)")
    ap.add_argument("--render-only", action="store_true",
                    help="render (and link into STATE/data), write render.json, do not train (a speed or kit check)")
    ap.add_argument("--render-during-train", action="store_true",
                    help="keep rendering (at nice 10) while train.py trains; it adds the new shards "
                    "between epochs (train.py --reload-data)")
    ap.add_argument("--render-tmp", default=os.environ.get("TMPDIR", "/tmp"),
                    help="where the kit and the corpus are unpacked")
    ap.add_argument("--pdf-share", type=float, default=0.0,
                    help="share of each epoch (so of each batch, shuffled) drawn from the carried PDF-crop "
                    "shards pdf-* (make-render-kit.sh --pdf-crops; tools/data/pdf_crops.py), repeated as "
                    "needed; 0: not used")
    ap.add_argument("--lr", type=float, default=None, help="overrides --train-args' --lr")
    ap.add_argument("--warmup-steps", type=int, default=None, help="overrides --train-args' --warmup-steps")
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
            for n in sorted(os.listdir(a.slice)) if n.endswith(tuple(p + ".xz" for p in SHARD_PARTS))]
    with multiprocessing.Pool(max(1, min(a.jobs, len(jobs)))) as pool:
        unpacked = sum(pool.map(unpack, jobs))
    render_info = renderer = None
    if a.render_min > 0:
        seed = a.render_seed if a.render_seed is not None else int(time.time()) % 1000000000
        during = a.render_during_train and not a.render_only
        renderer = Renderer(a.slice, data, a.out, a.render_jobs, seed, a.render_shard_size, a.render_tmp,
                            a.render_min + (a.minutes if during else 0), a.render_max_samples,
                            nice=10 if during else 0, font_weights=a.render_font_weights)
        renderer.wait(a.render_min * 60)
        # a slow start (the corpus is normalised first: ~9 CPU-seconds) must not leave
        # train.py with nothing: wait up to as long again for the first shard
        waited = 0.0
        while (not renderer.link() and not renderer.linked and renderer.proc.poll() is None
               and waited < max(60.0, a.render_min * 60)):
            renderer.wait(5)
            waited += 5
        if during:
            renderer.link()
            at_start = renderer.stats()
            print("kit: rendered before training " + json.dumps(at_start), flush=True)
        else:
            render_info = renderer.stop()
            print("kit: rendered " + json.dumps(render_info), flush=True)
            if render_info["shards"] == 0:
                with open(os.path.join(a.out, "render-log.txt"), "rb") as f:
                    sys.stdout.write(f.read()[-3000:].decode(errors="replace"))
            renderer = None
            if a.render_only:
                return 0 if render_info["shards"] else 1
    if not 0 <= a.pdf_share < 1:
        raise SystemExit("--pdf-share must lie in [0, 1)")
    train = write_train_meta(a.slice, data, a.pdf_share)
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
    if a.lr is not None:
        cmd += ["--lr", str(a.lr)]
    if a.warmup_steps is not None:
        cmd += ["--warmup-steps", str(a.warmup_steps)]
    print("kit: " + " ".join(cmd), flush=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    stop_linking = threading.Event()

    def link_loop():
        # new shards join between train.py's epochs (--reload-data)
        while not stop_linking.wait(10):
            if renderer.link():
                write_train_meta(a.slice, data, a.pdf_share)

    linker = None
    if renderer:
        cmd += ["--reload-data"]
        linker = threading.Thread(target=link_loop, daemon=True)
        linker.start()
    try:
        with open(os.path.join(a.out, "train-stdout.txt"), "ab") as log:
            rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    finally:
        if renderer:
            stop_linking.set()
            linker.join()
            render_info = renderer.stop()
            render_info["during_train"] = True
            render_info["samples_at_train_start"] = at_start["samples"]
            render_info["shards_at_train_start"] = at_start["shards"]
            with open(os.path.join(a.out, "render.json"), "w") as f:
                json.dump(render_info, f, indent=1)
            print("kit: rendered " + json.dumps(render_info), flush=True)
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
            "train_shards": train, "pdf_share": json.load(open(os.path.join(data, "meta.json"))).get("pdf_share"),
            "step": int(last.get("step") or 0),
            "train_minutes_total": round(float(last.get("time_s") or 0) / 60, 2),
            "last_val": vals[-1] if vals else None, "data_seconds": round(t_data, 1), "render": render_info,
            "call_seconds": round(time.monotonic() - t0, 1)}
    with open(os.path.join(a.out, "kit.json"), "w") as f:
        json.dump(info, f, indent=1)
    print("kit: " + json.dumps(info), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
