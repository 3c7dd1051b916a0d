#!/usr/bin/python3
"""Formulate's engine vs PyTorch eager on the CPU: same weights, same images,
same thread count, same BLAS environment.

  bench/engine-cpu/run [BUILD_DIR] [--model FILE.safetensors] [--threads N]
                       [--images N] [--max-tokens N]

BUILD_DIR (default build/) holds app/formulate-cli. Without --model a random-weight
formulate-v1 of the default size (docs/model.md) is written to
BUILD_DIR/bench-engine-cpu/random-v1.safetensors; its weights are shaped (as in
tools/make-test-model.py) so greedy decoding emits varied tokens for a few dozen
steps instead of stopping at once.

Engine side: one `formulate-cli recognize --json --device cpu` process over all
images; its per-image timings (encoder, decoder) come from the JSON. PyTorch side
(torch.no_grad, eval, the KV-cache decoder of tools/train/model.py) runs in its own
process on the engine's preprocessed geometry (crop, scale and margin as the JSON
reports them) and decodes exactly as many steps as the engine did for that image,
so both do the same work even where their argmax paths differ. Peak RSS is each
process's own (wait4). The first 2 images are warm-up copies and not counted.
Per-formula = encoder + decoder (the engine's preprocessing is shown on its own line).
"""

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "bench", "engine-cpu")
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))

WARMUP = 2


def parse_args():
    ap = argparse.ArgumentParser(description="engine vs PyTorch eager on the CPU")
    ap.add_argument("build_dir", nargs="?", default=os.path.join(ROOT, "build"))
    ap.add_argument("--model", help="a formulate .safetensors (default: random weights of --preset)")
    ap.add_argument("--preset", default="v1", choices=["v1", "small"],
                    help="size of the random-weight model (tools/train/train.py PRESETS)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--images", type=int, default=24, help="formulas timed (>= 20 for the medians)")
    ap.add_argument("--max-tokens", type=int, default=64, help="decode cap per formula")
    ap.add_argument("--rounds", type=int, default=3,
                    help="engine and PyTorch runs, alternating which goes first; rows pooled")
    ap.add_argument("--compare-batch", metavar="B1,B2,...",
                    help="engine only: the engine at these FeRecognizeParams.max_batch values "
                         "(FE_MAX_BATCH; 1 = serial decoding), rounds alternating the order; "
                         "no PyTorch side")
    ap.add_argument("--pytorch-worker", help=argparse.SUPPRESS)
    return ap.parse_args()


# ------------------------------------------------------------------ inputs

def random_model(path, preset, overrides=None):
    """Random weights of a train.py preset (plus config overrides: tools/train/device/size_v2.py)."""
    import torch
    import model as M
    spec = importlib.util.spec_from_file_location("train", os.path.join(ROOT, "tools", "train", "train.py"))
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    spec = importlib.util.spec_from_file_location("make_test_model", os.path.join(ROOT, "tools", "make-test-model.py"))
    mtm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mtm)
    from safetensors_io import save_file
    cfg = M.make_config(**dict(train.PRESETS[preset], **(overrides or {})))
    vocab = M.SPECIAL_TOKENS + ["\\tok%d" % i if i % 3 == 0 else chr(ord("a") + i % 26) + str(i)
                                for i in range(cfg["vocab_size"] - 4)]
    model = M.FormulateModel(cfg).eval()
    mtm.shape_weights(model, seed=1, eos_bias=-30.0)  # never EOS
    # Position t steers towards token 4 + 7t mod (V - 4): a decode of distinct tokens that
    # neither stops nor trips the engine's repetition guard, so it runs to --max-tokens.
    # (The work per step does not depend on the weight values.)
    with torch.no_grad():
        n = cfg["vocab_size"] - 4
        for t in range(cfg["max_tokens"]):
            model.dec.pos_emb.weight[t] += 4.0 * model.dec.tok_emb.weight[4 + (7 * t) % n] / \
                model.dec.tok_emb.weight[4 + (7 * t) % n].norm() * cfg["d_model"] ** 0.5
    tensors = {k: v.half() for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    meta = {"format": "formulate", "formulate.format_version": "1", "formulate.config": json.dumps(cfg),
            "formulate.vocab": json.dumps(vocab), "formulate.normalizer_version": "none",
            "formulate.data_hash": "random weights (bench/engine-cpu)", "formulate.git_commit": "none"}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    save_file(tensors, path + ".tmp", meta)
    os.replace(path + ".tmp", path)


def make_images(directory, n):
    """Formula-like gray PNGs: strings drawn with PIL's bitmap font at 2x, which
    puts glyphs near the model's em_px of 20, 60 to 500 px wide."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFont
    rng = np.random.default_rng(11)
    font = ImageFont.load_default()
    chars = list("abcdxyzn0123456789+-=()[]/<>")
    paths = []
    for i in range(n):
        length = int(rng.integers(4, 40))
        text = "".join(rng.choice(chars, size=length))
        lines = 1 if rng.random() < 0.8 else 2
        w = 6 * length + 8
        img = Image.new("L", (w, 13 * lines + 6), 255)
        d = ImageDraw.Draw(img)
        for k in range(lines):
            d.text((4, 3 + 13 * k), text if k == 0 else text[::-1], fill=0, font=font)
        img = img.resize((img.width * 2, img.height * 2), Image.BILINEAR)
        p = os.path.join(directory, "f%03d.png" % i)
        img.save(p)
        paths.append(p)
    return paths


def run_measured(cmd, env, usage=None):
    """-> (returncode, stdout, stderr, peak RSS in MiB) of one child process.
    usage (a dict), when given, receives its wall seconds and CPU seconds (user +
    system, all threads)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        if usage is not None:
            usage["wall_s"] = time.perf_counter() - t0
            usage["cpu_s"] = ru.ru_utime + ru.ru_stime
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return p.returncode, out.read().decode(), err.read().decode(), ru.ru_maxrss / 1024.0


# ------------------------------------------------------------------ pytorch side

def preprocess_like_engine(path, r, cfg):
    """The engine's geometry for this image (fe-preprocess.c): crop to ink > 0.5
    plus one pixel, resize by the reported scale, place at a margin of em_px/10,
    pad to the reported input size."""
    import numpy as np
    from PIL import Image
    img = Image.open(path).convert("L")
    ink = 1.0 - np.asarray(img, dtype=np.float32) / 255.0
    ys, xs = np.nonzero(ink > 0.5)
    y0, y1 = max(0, ys.min() - 1), min(ink.shape[0] - 1, ys.max() + 1)
    x0, x1 = max(0, xs.min() - 1), min(ink.shape[1] - 1, xs.max() + 1)
    crop = ink[y0:y1 + 1, x0:x1 + 1]
    scale = r["input"]["scale"]
    margin = max(1, int(round(cfg["em_px"] / 10.0)))
    oh, ow = r["input"]["height"], r["input"]["width"]
    rh = min(max(1, int(round(crop.shape[0] * scale))), oh - margin)
    rw = min(max(1, int(round(crop.shape[1] * scale))), ow - margin)
    if (rh, rw) != crop.shape:
        im = Image.fromarray((crop * 255).astype(np.uint8))
        crop = np.asarray(im.resize((rw, rh), Image.BOX if scale < 1 else Image.BILINEAR), dtype=np.float32) / 255.0
    out = np.zeros((oh, ow), dtype=np.float32)
    out[margin:margin + rh, margin:margin + rw] = crop[:rh, :rw]
    return out


def pytorch_worker(spec_path):
    import torch
    import model as M
    with open(spec_path) as f:
        spec = json.load(f)
    torch.set_num_threads(spec["threads"])
    model, vocab, _ = M.load_safetensors(spec["model"])
    model.eval()
    cfg = model.cfg
    rows = []
    with torch.no_grad():
        for path, r in zip(spec["images"], spec["engine_results"]):
            x = torch.from_numpy(preprocess_like_engine(path, r, cfg))[None, None]
            # the engine's decoder steps: its tokens, plus the EOS step when it stopped on EOS
            steps = r["tokens"] + (0 if (r["hit_length_limit"] or r["repetition_stopped"]) else 1)
            steps = max(1, min(steps, cfg["max_tokens"]))
            t0, c0 = time.perf_counter(), time.process_time()
            memory, _ = model.encode(x)
            # the cross-attention K/V belong to the encoder phase, as in the engine
            cache = model.init_cache(memory)
            t1, c1 = time.perf_counter(), time.process_time()
            cur = torch.tensor([cfg["bos_id"]])
            ids = []
            ended = False
            for t in range(steps):
                nxt = int(model.step(cur, t, cache).argmax(-1))
                if nxt == cfg["eos_id"]:
                    ended = True
                if not ended:
                    ids.append(nxt)
                cur = torch.tensor([nxt])
            t2, c2 = time.perf_counter(), time.process_time()
            rows.append({"encoder_ms": (t1 - t0) * 1e3, "decoder_ms": (t2 - t1) * 1e3,
                         "encoder_cpu_ms": (c1 - c0) * 1e3, "decoder_cpu_ms": (c2 - c1) * 1e3, "steps": steps,
                         "latex": M.detokenize(vocab, ids)})
    json.dump({"rows": rows, "torch": torch.__version__, "threads": torch.get_num_threads()}, sys.stdout)


# ------------------------------------------------------------------ reporting

def model_config(path):
    """The formulate.config of a .safetensors (header JSON, no torch needed)."""
    import struct
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    cfg = json.loads(header["__metadata__"]["formulate.config"])
    sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
    import model as M
    return M.make_config(**cfg)


def encoder_flops(cfg, height, width):
    """Multiply-adds x 2 of the encoder phase for one input: the convolutions,
    the projection, the transformer layers and the decoder's cross-attention
    K/V (computed once per image, timed with the encoder on both sides)."""
    h, w, c_in, f = height, width, cfg["in_channels"], 0
    for c, (ph, pw) in zip(cfg["cnn_channels"], cfg["cnn_pool"]):
        f += 2 * 9 * c_in * c * h * w
        h, w, c_in = h // ph, w // pw, c
    n, d, dff = h * w, cfg["d_model"], cfg["d_ff"]
    f += 2 * n * c_in * d
    f += cfg["enc_layers"] * (2 * n * d * 4 * d + 2 * 2 * n * n * d + 2 * 2 * n * d * dff)
    f += cfg["dec_layers"] * 2 * 2 * n * d * d
    return f


# ------------------------------------------------------------------ batched decoding

def compare_batch(args, cli, model_path, images, env):
    """The engine alone at several max_batch values (FE_MAX_BATCH), each round
    running them all, the order reversed every other round; rows pooled. The
    per-formula figures are the image's encoder time plus its share of the
    decode steps it took part in (fe.h: decoder_ms of a batch), so their sums
    are the phases' totals and formulas/s follows from them."""
    sizes = [int(b) for b in args.compare_batch.split(",") if b.strip()]
    rows = {b: [] for b in sizes}
    procs = {b: [] for b in sizes}
    latex = {}
    for rnd in range(args.rounds):
        for b in (sizes if rnd % 2 == 0 else sizes[::-1]):
            e = dict(env)
            e["FE_MAX_BATCH"] = str(b)
            usage = {}
            rc, out, err, rss = run_measured(
                [cli, "recognize", "--json", "--device", "cpu", "--threads", str(args.threads),
                 "--max-tokens", str(args.max_tokens), "--model", model_path] + images, e, usage)
            if rc != 0:
                print(f"formulate-cli failed ({rc}): {err.strip()}", file=sys.stderr)
                return 1
            res = json.loads(out)
            rows[b] += res["results"][WARMUP:]
            usage["rss"] = rss
            usage["formulas"] = len(res["results"])
            procs[b].append(usage)
            latex.setdefault(b, [r["latex"] for r in res["results"]])
            first = res
    med = statistics.median
    cfg = model_config(model_path)
    try:
        load = "load average %.1f %.1f %.1f at the end" % os.getloadavg()
    except OSError:
        load = "load average unknown"
    base = sizes[0]
    print(f"model: {model_path} ({first['model_parameters'] / 1e6:.2f} M parameters: cnn {cfg['cnn_channels']}, "
          f"d_model {cfg['d_model']}, {cfg['n_heads']} heads, d_ff {cfg['d_ff']}, {cfg['enc_layers']}+{cfg['dec_layers']} layers)")
    print(f"engine: {first['device']['name']}; GEMM {first['gemm_path']}; --threads {args.threads}")
    print(f"formulas: {len(rows[base])} per setting ({args.images} images x {args.rounds} rounds, each +{WARMUP} warm-up), "
          f"tokens per formula median {med(r['tokens'] for r in rows[base])}; {os.cpu_count()} CPUs, {load}")
    print()
    print(f"{'max_batch':>10s}{'same LaTeX':>12s}{'enc CPU ms':>12s}{'dec CPU ms':>12s}{'CPU ms/formula':>16s}"
          f"{'formulas/CPU-s':>16s}{'formulas/s wall':>17s}{'process CPU s':>15s}{'peak RSS MiB':>14s}")
    for b in sizes:
        r = rows[b]
        enc_c = [x["cpu_ms"]["encoder"] for x in r]
        dec_c = [x["cpu_ms"]["decoder"] for x in r]
        wall = sum(x["timings_ms"]["encoder"] + x["timings_ms"]["decoder"] for x in r) / 1e3
        cpu = (sum(enc_c) + sum(dec_c)) / 1e3
        same = sum(1 for a, c in zip(latex[base], latex[b]) if a == c)
        proc_cpu = med(u["cpu_s"] for u in procs[b])
        print(f"{b:>10d}{same:>7d}/{len(latex[b]):<4d}{sum(enc_c) / len(r):12.2f}{sum(dec_c) / len(r):12.2f}"
              f"{cpu * 1e3 / len(r):16.2f}{len(r) / cpu:16.2f}{len(r) / wall:17.2f}{proc_cpu:15.2f}"
              f"{max(u['rss'] for u in procs[b]):14.1f}")
    if len(sizes) > 1:
        r0 = rows[base]
        c0 = sum(x["cpu_ms"]["encoder"] + x["cpu_ms"]["decoder"] for x in r0) / len(r0)
        for b in sizes[1:]:
            r = rows[b]
            c = sum(x["cpu_ms"]["encoder"] + x["cpu_ms"]["decoder"] for x in r) / len(r)
            print(f"cpu_speedup_batch_{b}_vs_{base}: {c0 / c:.2f}")
    return 0


# ------------------------------------------------------------------ main

def main():
    args = parse_args()
    if args.pytorch_worker:
        pytorch_worker(args.pytorch_worker)
        return 0
    cli = os.path.join(args.build_dir, "app", "formulate-cli")
    if not os.access(cli, os.X_OK):
        print(f"no {cli}: build it first (meson setup {args.build_dir} && ninja -C {args.build_dir})", file=sys.stderr)
        return 2
    work = os.path.join(args.build_dir, "bench-engine-cpu")
    os.makedirs(work, exist_ok=True)
    model_path = args.model or os.path.join(work, "random-%s.safetensors" % args.preset)
    if not args.model and not os.path.exists(model_path):
        random_model(model_path, args.preset)
    img_dir = os.path.join(work, "images")
    os.makedirs(img_dir, exist_ok=True)
    images = make_images(img_dir, args.images)
    images = images[:WARMUP] + images  # warm-up copies, dropped below

    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    env.setdefault("OMP_NUM_THREADS", str(args.threads))
    # libgomp's spinning waits collapse when anything else wants the cores (many times
    # slower PyTorch on the loaded 2-core machine); the engine's pool sleeps. Passive
    # unless the caller chose otherwise.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")

    def run_engine():
        rc, out, err, rss = run_measured(
            [cli, "recognize", "--json", "--device", "cpu", "--threads", str(args.threads),
             "--max-tokens", str(args.max_tokens), "--model", model_path] + images, env)
        if rc != 0:
            raise RuntimeError(f"formulate-cli failed ({rc}): {err.strip()}")
        return json.loads(out), rss

    def run_pytorch(engine_results):
        spec = {"model": model_path, "threads": args.threads, "images": images,
                "engine_results": engine_results}
        spec_path = os.path.join(work, "pytorch-spec.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        rc, out, err, rss = run_measured([sys.executable, os.path.abspath(__file__), "--pytorch-worker", spec_path], env)
        if rc != 0:
            raise RuntimeError(f"pytorch worker failed ({rc}): {err.strip()}")
        return json.loads(out), rss

    if args.compare_batch:
        return compare_batch(args, cli, model_path, images, env)

    # Rounds alternate which side goes first, so a change in the machine's load
    # during the run hits both sides alike; rows of all rounds are pooled.
    e, p = [], []
    engine_rss = torch_rss = 0.0
    blas_note = None
    try:
        engine, rss = run_engine()
        engine_rss = max(engine_rss, rss)
        # Same BLAS kernels for PyTorch: when the user did not pin OPENBLAS_CORETYPE the
        # engine picks one for this CPU (fe-blas.c) in its own process only; give
        # PyTorch's OpenBLAS the same.
        blas_note = "OPENBLAS_CORETYPE=%s (set by the user, both sides)" % env.get("OPENBLAS_CORETYPE")
        if not env.get("OPENBLAS_CORETYPE"):
            m = re.search(r"OpenBLAS [0-9.]+ (\w+) kernels", engine["gemm_path"])
            if m and "set by engine" in engine["gemm_path"]:
                env["OPENBLAS_CORETYPE"] = m.group(1).upper()
                blas_note = "OPENBLAS_CORETYPE=%s (the engine's choice, applied to PyTorch too)" % env["OPENBLAS_CORETYPE"]
            else:
                blas_note = "OpenBLAS's own detection on both sides"
        first = engine["results"]
        first_engine = engine  # its gemm_path says who chose the kernels
        for rnd in range(args.rounds):
            if rnd > 0 and rnd % 2 == 0:
                engine, rss = run_engine()
                engine_rss = max(engine_rss, rss)
            pt, rss = run_pytorch(first)
            torch_rss = max(torch_rss, rss)
            if rnd % 2 == 1:
                engine, rss = run_engine()
                engine_rss = max(engine_rss, rss)
            e += engine["results"][WARMUP:]
            p += pt["rows"][WARMUP:]
    except RuntimeError as ex:
        print(ex, file=sys.stderr)
        return 1

    med = statistics.median
    cfg = model_config(model_path)
    e_steps = [max(1, r["tokens"] + (0 if (r["hit_length_limit"] or r["repetition_stopped"]) else 1)) for r in e]
    flops = [encoder_flops(cfg, r["input"]["height"], r["input"]["width"]) for r in e]
    agree = sum(1 for a, b in zip(e, p) if a["latex"] == b["latex"])

    def side(enc, dec, steps):
        """Medians of one side: encoder, decoder per token, per formula, and
        the encoder's GFLOP/s per busy core (FLOPs / CPU seconds)."""
        return {"enc": med(enc), "tok": med(d / s for d, s in zip(dec, steps)),
                "form": med(a + b for a, b in zip(enc, dec)),
                "fps": len(enc) / ((sum(enc) + sum(dec)) / 1e3),
                "gflops": med(f / (a * 1e6) for f, a in zip(flops, enc))}

    ew = side([r["timings_ms"]["encoder"] for r in e], [r["timings_ms"]["decoder"] for r in e], e_steps)
    ec = side([r["cpu_ms"]["encoder"] for r in e], [r["cpu_ms"]["decoder"] for r in e], e_steps)
    pw = side([r["encoder_ms"] for r in p], [r["decoder_ms"] for r in p], [r["steps"] for r in p])
    pc = side([r["encoder_cpu_ms"] for r in p], [r["decoder_cpu_ms"] for r in p], [r["steps"] for r in p])
    e_pre = med(r["timings_ms"]["preprocess"] for r in e)
    try:
        load = "load average %.1f %.1f %.1f at the end" % os.getloadavg()
    except OSError:
        load = "load average unknown"

    print(f"model: {model_path} ({engine['model_parameters'] / 1e6:.2f} M parameters: cnn {cfg['cnn_channels']}, "
          f"d_model {cfg['d_model']}, {cfg['n_heads']} heads, d_ff {cfg['d_ff']}, {cfg['enc_layers']}+{cfg['dec_layers']} layers; "
          f"engine precision {engine['device']['precision']})")
    print(f"engine: {engine['device']['name']}; GEMM {first_engine['gemm_path']}")
    print(f"pytorch: torch {pt['torch']} eager, no_grad, KV cache; threads {pt['threads']} (engine --threads {args.threads})")
    print(f"BLAS: {blas_note}; OMP_NUM_THREADS={env['OMP_NUM_THREADS']} OPENBLAS_NUM_THREADS={env['OPENBLAS_NUM_THREADS']} OMP_WAIT_POLICY={env['OMP_WAIT_POLICY']}")
    print(f"formulas: {len(e)} ({args.images} images x {args.rounds} rounds, each +{WARMUP} warm-up), decoder steps per formula median {med(e_steps)}, "
          f"input sizes {min(r['input']['width'] for r in e)}-{max(r['input']['width'] for r in e)} px wide; "
          f"same LaTeX on {agree}/{len(e)}; {os.cpu_count()} CPUs, {load}")
    print()
    print(f"{'':30s}{'engine':>10s}{'pytorch':>10s}{'ratio':>8s}   (CPU = process CPU time, all threads)")
    print(f"{'preprocess ms':30s}{e_pre:10.2f}{'-':>10s}")

    def row(label, a, b, fmt):
        print(f"{label:30s}{a:10{fmt}}{b:10{fmt}}{b / a if a > 0 else float('nan'):8.2f}")
    row("encoder ms, wall", ew["enc"], pw["enc"], ".2f")
    row("encoder ms, CPU", ec["enc"], pc["enc"], ".2f")
    row("decode ms/token, wall", ew["tok"], pw["tok"], ".3f")
    row("decode ms/token, CPU", ec["tok"], pc["tok"], ".3f")
    row("per-formula ms, wall", ew["form"], pw["form"], ".2f")
    row("per-formula ms, CPU", ec["form"], pc["form"], ".2f")
    print(f"{'formulas/s, wall':30s}{ew['fps']:10.2f}{pw['fps']:10.2f}{ew['fps'] / pw['fps']:8.2f}")
    print(f"{'encoder GFLOP/s per CPU-second':30s}{ec['gflops']:10.1f}{pc['gflops']:10.1f}")
    print(f"{'peak RSS MiB':30s}{engine_rss:10.1f}{torch_rss:10.1f}")
    print(f"speedup_wall: {pw['form'] / ew['form']:.2f}")
    print(f"speedup_vs_pytorch_cpu: {pc['form'] / ec['form']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
