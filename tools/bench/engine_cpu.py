#!/usr/bin/python3
"""Formulate's engine vs PyTorch on the CPU (eager, and its best deployment:
TorchScript trace + freeze + optimize_for_inference, fp32 and bf16 autocast):
same weights, same images, same thread count, same BLAS environment.

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
process's own (wait4). The first 2 images are warm-up copies and not counted; the
engine also makes one untimed pass over all images first (the traced peers make two),
unless --engine-cold.
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
    ap.add_argument("--engine-cold", action="store_true",
                    help="no untimed engine pass over the images first (before 2026-11-25 22:30 the "
                         "engine had none while the traced peers had two)")
    ap.add_argument("--precision", default="fp32", choices=["auto", "fp32", "bf16"],
                    help="formulate-cli --precision (default fp32, as the eager and jit peers; "
                         "bf16 on AVX512_BF16 CPUs, what auto picks there since 2026-11-26)")
    ap.add_argument("--peers", default="eager,jit,jit-bf16",
                    help="PyTorch set-ups, comma-separated: eager, jit (trace + freeze + "
                         "optimize_for_inference), jit-bf16 (the same under bf16 autocast)")
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
    # The peak RSS comes from GNU time in between, not from wait4: Python
    # starts children with vfork, and Linux carries the high-water RSS of the
    # memory the child ran in before exec (this process's, 300 MiB once torch
    # is loaded) into the child's ru_maxrss, which then reported 293 MiB for
    # an engine that peaks at 60-80 MiB (issue 15's "intermittent peak").
    # time's own child is forked from a small process. CPU times from wait4
    # include time's reaped child.
    gnu_time = "/usr/bin/time"
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r") as peak:
        wrapped = [gnu_time, "-f", "%M", "-o", peak.name] + cmd if os.access(gnu_time, os.X_OK) else cmd
        t0 = time.perf_counter()
        p = subprocess.Popen(wrapped, stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        if usage is not None:
            usage["wall_s"] = time.perf_counter() - t0
            usage["cpu_s"] = ru.ru_utime + ru.ru_stime
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        rss = ru.ru_maxrss / 1024.0
        if wrapped is not cmd:
            # "Command exited with non-zero status N" may come first
            kib = [l for l in peak.read().split() if l.isdigit()]
            rss = int(kib[-1]) / 1024.0 if kib else float("nan")
        return p.returncode, out.read().decode(), err.read().decode(), rss


# ------------------------------------------------------------------ pytorch side

PEER_TEXT = {
    "eager": "eager, no_grad",
    "jit": "torch.jit.trace + freeze + optimize_for_inference, fp32",
    "jit-bf16": "the same traced under torch.cpu.amp.autocast(bfloat16)",
}

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


def traced_peer(model, cfg, sample, bf16):
    """PyTorch's best CPU set-up on these weights: the encoder (CNN, transformer,
    the decoder's cross-attention K/V) and the decoder step (KV caches as inputs
    and outputs) traced with torch.jit.trace, then torch.jit.freeze (constant
    weights, conv+BN folded) and torch.jit.optimize_for_inference (oneDNN
    convolutions, fused conv+ReLU where it can). bf16: traced under CPU autocast
    (bf16 matmuls and convolutions, fp32 layer norms and softmax), frozen.
    Returns (encode(x) -> (memory, cross K/V list), step(tok, t, caches) -> (logits, caches))."""
    import torch
    import torch.nn as nn
    L = len(model.dec.layers)

    class Enc(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x, pe):
            m = self.m
            for block in m.cnn:
                x = block(x)
            x = x.flatten(2).transpose(1, 2)
            x = m.enc.proj(x).float() + pe[None]
            for layer in m.enc.layers:
                x = layer(x, None)
            mem = m.enc.norm(x)
            out = []
            for layer in m.dec.layers:
                ck, cv = layer.cross_attn.project_kv(mem)
                out += [ck, cv]
            return tuple(out)

    class Step(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, tok, pos, caches):
            m = self.m
            x = m.dec.tok_emb(tok)[:, None, :] + m.dec.pos_emb(pos)[:, None, :]
            new = []
            for i, layer in enumerate(m.dec.layers):
                sk, sv, ck, cv = caches[4 * i], caches[4 * i + 1], caches[4 * i + 2], caches[4 * i + 3]
                a = layer.self_attn
                hx = layer.ln1(x)
                k, v = a.project_kv(hx)
                sk = torch.cat([sk, k.to(sk.dtype)], dim=2)
                sv = torch.cat([sv, v.to(sv.dtype)], dim=2)
                x = x + a.attend(a.split(a.q(hx)), sk, sv, None)
                ca = layer.cross_attn
                x = x + ca.attend(ca.split(ca.q(layer.ln2(x))), ck, cv, None)
                x = x + layer.mlp(layer.ln3(x))
                new += [sk, sv]
            return (m.logits(x)[:, 0, :],) + tuple(new)

    def positions(x):
        h, w = x.shape[2] // model.height_stride, x.shape[3] // model.width_stride
        return model.enc_positions(h, w, x.device, torch.float32)

    def build():
        enc = Enc(model).eval()
        te = torch.jit.trace(enc, (sample, positions(sample)), check_trace=False)
        kv = enc(sample, positions(sample))
        h, dh = cfg["n_heads"], cfg["d_model"] // cfg["n_heads"]
        empty = torch.zeros(1, h, 0, dh, dtype=kv[0].dtype)
        caches = []
        for i in range(L):
            caches += [empty, empty, kv[2 * i], kv[2 * i + 1]]
        # traced at a cache length of 3 (not 0: an empty dimension may be specialised away)
        tok, pos = torch.tensor([cfg["bos_id"]]), torch.tensor([0])
        step = Step(model).eval()
        for t in range(3):
            out = step(tok, pos + t, caches)
            for i in range(L):
                caches[4 * i], caches[4 * i + 1] = out[1 + 2 * i], out[2 + 2 * i]
        ts = torch.jit.trace(step, (tok, pos + 3, caches), check_trace=False)
        te = torch.jit.optimize_for_inference(torch.jit.freeze(te))
        ts = torch.jit.optimize_for_inference(torch.jit.freeze(ts))
        return te, ts, empty.dtype

    if bf16:
        with torch.cpu.amp.autocast(dtype=torch.bfloat16, cache_enabled=False):
            te, ts, cdt = build()
    else:
        te, ts, cdt = build()

    def encode(x):
        kv = te(x, positions(x))
        return list(kv)

    def init(kv):
        h, dh = cfg["n_heads"], cfg["d_model"] // cfg["n_heads"]
        empty = torch.zeros(1, h, 0, dh, dtype=kv[0].dtype)
        caches = []
        for i in range(L):
            caches += [empty, empty, kv[2 * i], kv[2 * i + 1]]
        return caches

    def step(tok, t, caches):
        out = ts(tok, torch.tensor([t]), caches)
        for i in range(L):
            caches[4 * i], caches[4 * i + 1] = out[1 + 2 * i], out[2 + 2 * i]
        return out[0]

    return encode, init, step


def pytorch_worker(spec_path):
    """One PyTorch set-up (spec["mode"]): eager (no_grad, the KV-cache decoder
    of model.py), jit (traced + frozen + optimize_for_inference, fp32) or
    jit-bf16 (the same traced under bf16 autocast). The jit set-ups are built
    and then run twice over all the images untimed (TorchScript's profiling
    executor specialises on its first calls): the timed pass is warm.""" 
    import torch
    import model as M
    with open(spec_path) as f:
        spec = json.load(f)
    torch.set_num_threads(spec["threads"])
    model, vocab, _ = M.load_safetensors(spec["model"])
    model.eval()
    cfg = model.cfg
    mode = spec.get("mode", "eager")
    inputs = []
    for path, r in zip(spec["images"], spec["engine_results"]):
        x = torch.from_numpy(preprocess_like_engine(path, r, cfg))[None, None]
        # the engine's decoder steps: its tokens, plus the EOS step when it stopped on EOS
        steps = r["tokens"] + (0 if (r["hit_length_limit"] or r["repetition_stopped"]) else 1)
        inputs.append((x, max(1, min(steps, cfg["max_tokens"]))))

    if mode == "eager":
        def encode(x):
            memory, _ = model.encode(x)
            return model.init_cache(memory)

        def init(kv):
            return kv

        def step(tok, t, cache):
            return model.step(tok, t, cache)
    else:
        encode, init, step = traced_peer(model, cfg, inputs[0][0], mode == "jit-bf16")

    def run(x, steps, timed):
        t0, c0 = time.perf_counter(), time.process_time()
        # the cross-attention K/V belong to the encoder phase, as in the engine
        kv = encode(x)
        t1, c1 = time.perf_counter(), time.process_time()
        cache = init(kv)
        cur = torch.tensor([cfg["bos_id"]])
        ids = []
        ended = False
        for t in range(steps):
            nxt = int(step(cur, t, cache).argmax(-1))
            if nxt == cfg["eos_id"]:
                ended = True
            if not ended:
                ids.append(nxt)
            cur = torch.tensor([nxt])
        t2, c2 = time.perf_counter(), time.process_time()
        return {"encoder_ms": (t1 - t0) * 1e3, "decoder_ms": (t2 - t1) * 1e3,
                "encoder_cpu_ms": (c1 - c0) * 1e3, "decoder_cpu_ms": (c2 - c1) * 1e3, "steps": steps,
                "latex": M.detokenize(vocab, ids)}

    rows = []
    with torch.no_grad():
        if mode != "eager":
            for _ in range(2):  # the profiling executor's first two calls per shape are slower
                for x, steps in inputs:
                    run(x, steps, False)
        for x, steps in inputs:
            rows.append(run(x, steps, True))
    json.dump({"rows": rows, "torch": torch.__version__, "threads": torch.get_num_threads(),
               "mode": mode}, sys.stdout)


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

    # The traced peers run twice over all images untimed before their timed pass
    # (pytorch_worker); the engine, one process per pass, gets one untimed pass over
    # the same images in the same process unless --engine-cold: its buffers then have
    # grown to the largest image, as in the app, where one engine serves a document.
    warm_pass = [] if args.engine_cold else images

    def run_engine():
        rc, out, err, rss = run_measured(
            [cli, "recognize", "--json", "--device", "cpu", "--threads", str(args.threads),
             "--max-tokens", str(args.max_tokens), "--scale-candidates", "1", "--model", model_path]
            + (["--precision", args.precision] if args.precision else []) + warm_pass + images, env)
        if rc != 0:
            raise RuntimeError(f"formulate-cli failed ({rc}): {err.strip()}")
        res = json.loads(out)
        res["results"] = res["results"][len(warm_pass):]
        return res, rss

    def run_pytorch(engine_results, mode):
        spec = {"model": model_path, "threads": args.threads, "images": images,
                "engine_results": engine_results, "mode": mode}
        spec_path = os.path.join(work, "pytorch-spec.json")
        with open(spec_path, "w") as f:
            json.dump(spec, f)
        rc, out, err, rss = run_measured([sys.executable, os.path.abspath(__file__), "--pytorch-worker", spec_path], env)
        if rc != 0:
            raise RuntimeError(f"pytorch worker failed ({rc}): {err.strip()}")
        return json.loads(out), rss

    if args.compare_batch:
        return compare_batch(args, cli, model_path, images, env)

    # Rounds alternate which side goes first (and rotate the PyTorch set-ups), so
    # a change in the machine's load during the run hits every side alike; rows
    # of all rounds are pooled.
    peers = [m.strip() for m in args.peers.split(",") if m.strip()]
    e, p = [], {m: [] for m in peers}
    engine_rss, torch_rss = 0.0, {m: 0.0 for m in peers}
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
        pt = {}
        for rnd in range(args.rounds):
            if rnd > 0 and rnd % 2 == 0:
                engine, rss = run_engine()
                engine_rss = max(engine_rss, rss)
            k = rnd % len(peers)
            for mode in peers[k:] + peers[:k]:
                pt[mode], rss = run_pytorch(first, mode)
                torch_rss[mode] = max(torch_rss[mode], rss)
                p[mode] += pt[mode]["rows"][WARMUP:]
            if rnd % 2 == 1:
                engine, rss = run_engine()
                engine_rss = max(engine_rss, rss)
            e += engine["results"][WARMUP:]
    except RuntimeError as ex:
        print(ex, file=sys.stderr)
        return 1

    med = statistics.median
    cfg = model_config(model_path)
    e_steps = [max(1, r["tokens"] + (0 if (r["hit_length_limit"] or r["repetition_stopped"]) else 1)) for r in e]
    flops = [encoder_flops(cfg, r["input"]["height"], r["input"]["width"]) for r in e]
    agree = {m: sum(1 for a, b in zip(e, p[m]) if a["latex"] == b["latex"]) for m in peers}

    def side(enc, dec, steps):
        """Medians of one side: encoder, decoder per token, per formula, and
        the encoder's GFLOP/s per busy core (FLOPs / CPU seconds)."""
        return {"enc": med(enc), "tok": med(d / s for d, s in zip(dec, steps)),
                "form": med(a + b for a, b in zip(enc, dec)),
                "fps": len(enc) / ((sum(enc) + sum(dec)) / 1e3),
                "gflops": med(f / (a * 1e6) for f, a in zip(flops, enc))}

    ew = side([r["timings_ms"]["encoder"] for r in e], [r["timings_ms"]["decoder"] for r in e], e_steps)
    ec = side([r["cpu_ms"]["encoder"] for r in e], [r["cpu_ms"]["decoder"] for r in e], e_steps)
    pw = {m: side([r["encoder_ms"] for r in p[m]], [r["decoder_ms"] for r in p[m]], [r["steps"] for r in p[m]])
          for m in peers}
    pc = {m: side([r["encoder_cpu_ms"] for r in p[m]], [r["decoder_cpu_ms"] for r in p[m]],
                  [r["steps"] for r in p[m]]) for m in peers}
    e_pre = med(r["timings_ms"]["preprocess"] for r in e)
    try:
        load = "load average %.1f %.1f %.1f at the end" % os.getloadavg()
    except OSError:
        load = "load average unknown"

    any_pt = pt[peers[0]]
    print(f"model: {model_path} ({engine['model_parameters'] / 1e6:.2f} M parameters: cnn {cfg['cnn_channels']}, "
          f"d_model {cfg['d_model']}, {cfg['n_heads']} heads, d_ff {cfg['d_ff']}, {cfg['enc_layers']}+{cfg['dec_layers']} layers; "
          f"engine precision {engine['device']['precision']})")
    print(f"engine: {engine['device']['name']}; GEMM {first_engine['gemm_path']}")
    print(f"pytorch: torch {any_pt['torch']}, KV cache; threads {any_pt['threads']} (engine --threads {args.threads}); "
          + "; ".join(f"{m} = {PEER_TEXT[m]}" for m in peers))
    print(f"BLAS: {blas_note}; OMP_NUM_THREADS={env['OMP_NUM_THREADS']} OPENBLAS_NUM_THREADS={env['OPENBLAS_NUM_THREADS']} OMP_WAIT_POLICY={env['OMP_WAIT_POLICY']}")
    print(f"formulas: {len(e)} ({args.images} images x {args.rounds} rounds, each +{WARMUP} warm-up"
          f"{'; engine cold' if args.engine_cold else '; engine and traced peers after untimed passes'}), decoder steps per formula median {med(e_steps)}, "
          f"input sizes {min(r['input']['width'] for r in e)}-{max(r['input']['width'] for r in e)} px wide; "
          f"same LaTeX " + ", ".join(f"{m} {agree[m]}/{len(e)}" for m in peers) + f"; {os.cpu_count()} CPUs, {load}")
    print()
    head = "".join(f"{m:>10s}{'ratio':>7s}" for m in peers)
    print(f"{'':30s}{'engine':>10s}{head}   (ratio = pytorch / engine; CPU = process CPU time, all threads)")
    print(f"{'preprocess ms':30s}{e_pre:10.2f}" + "".join(f"{'-':>10s}{'':7s}" for m in peers))

    def row(label, a, key, peer_side, fmt):
        cells = "".join(f"{peer_side[m][key]:10{fmt}}{peer_side[m][key] / a if a > 0 else float('nan'):7.2f}"
                        for m in peers)
        print(f"{label:30s}{a:10{fmt}}{cells}")
    row("encoder ms, wall", ew["enc"], "enc", pw, ".2f")
    row("encoder ms, CPU", ec["enc"], "enc", pc, ".2f")
    row("decode ms/token, wall", ew["tok"], "tok", pw, ".3f")
    row("decode ms/token, CPU", ec["tok"], "tok", pc, ".3f")
    row("per-formula ms, wall", ew["form"], "form", pw, ".2f")
    row("per-formula ms, CPU", ec["form"], "form", pc, ".2f")
    print(f"{'formulas/s, wall':30s}{ew['fps']:10.2f}" +
          "".join(f"{pw[m]['fps']:10.2f}{ew['fps'] / pw[m]['fps']:7.2f}" for m in peers))
    print(f"{'encoder GFLOP/s per CPU-second':30s}{ec['gflops']:10.1f}" +
          "".join(f"{pc[m]['gflops']:10.1f}{'':7s}" for m in peers))
    print(f"{'peak RSS MiB':30s}{engine_rss:10.1f}" + "".join(f"{torch_rss[m]:10.1f}{'':7s}" for m in peers))
    for m in peers:
        tag = "" if m == "eager" else "_" + m.replace("-", "_")
        print(f"speedup_wall{tag}: {pw[m]['form'] / ew['form']:.2f}")
    # PyTorch's best: per phase, the faster of the traced set-ups (CPU-time medians):
    # what a user who measured both would deploy for the encoder and for the decoder.
    traced = [m for m in peers if m != "eager"]
    if traced:
        best_enc = min(traced, key=lambda m: pc[m]["enc"])
        best_form = min(traced, key=lambda m: pc[m]["form"])
        print(f"encoder_speedup_vs_pytorch_best_cpu: {pc[best_enc]['enc'] / ec['enc']:.2f} (best encoder: {best_enc})")
        print(f"speedup_vs_pytorch_best_cpu: {pc[best_form]['form'] / ec['form']:.2f} (best per formula: {best_form})")
    if "eager" in peers:
        print(f"speedup_vs_pytorch_cpu: {pc['eager']['form'] / ec['form']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
