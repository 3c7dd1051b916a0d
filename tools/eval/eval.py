#!/usr/bin/python3
"""Evaluate formulate-v1 through the C engine (formulate-cli) on the test split.

    /usr/bin/python3 tools/eval/eval.py [--model data/models/formulate-v1.safetensors]
        [--data work/data] [--split test] [--limit N] [--jobs 2] [--beam 1]
        [--robustness [--robust-limit N]] [--agreement] [--no-render]
        [--out work/eval/results.json]

Metrics (tools/eval/README.md): corpus BLEU-4 on tokens, normalised token edit
distance, token-exact match, rendered-image match (with and without blank
columns), each with breakdowns per font set-up, style and source; throughput;
optionally the engine-vs-PyTorch greedy agreement and the robustness set
(pdftoppm at 96/150/300 dpi and cairo "screenshots", the engine estimating the
glyph scale).
"""

import argparse
import collections
import concurrent.futures
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

# Before torch (imported only for --agreement) loads libgomp: spinning OpenMP
# threads are ruinous on shared cores (tools/train/train.py measured it).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "data"))
import metrics  # noqa: E402
import latex_tokens  # noqa: E402
import render_batch  # noqa: E402
from dataset_reader import Dataset  # noqa: E402

# Robustness renderings: (name, tool, dpi, colour). pdftoppm is Poppler's Splash
# rasteriser, not the Cairo path the training renders come from; "screenshot" is
# Cairo at a screen resolution composited as dark text on a light theme
# background in RGB, the way a formula looks when grabbed from a PDF viewer.
ROBUST_VARIANTS = [
    ("pdftoppm-96dpi", "pdftoppm", 96, False),
    ("pdftoppm-150dpi", "pdftoppm", 150, False),
    ("pdftoppm-300dpi", "pdftoppm", 300, False),
    ("screenshot-110dpi", "pdftocairo", 110, True),
]
SCREEN_FG = np.array([0x24, 0x1f, 0x31], np.float32)   # GNOME dark text
SCREEN_BG = np.array([0xfa, 0xfa, 0xfb], np.float32)   # light window background
CROP_MARGIN_PX = 4


def model_provenance(path):
    """Config and provenance of the evaluated model file: the safetensors
    __metadata__ (docs/model.md), or a .pt's sidecar JSON."""
    try:
        if path.endswith(".pt"):
            side = json.load(open(path[:-3] + ".json"))
            return {"config": side["config"], "vocab_size": len(side["vocab"])}
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            meta = json.loads(f.read(n)).get("__metadata__", {})
        out = {k: v for k, v in meta.items() if k not in ("formulate.vocab", "formulate.config")}
        if "formulate.config" in meta:
            out["config"] = json.loads(meta["formulate.config"])
        if "formulate.calibration" in meta:
            # one phrase for report.py's provenance line, not the coefficients
            cal = json.loads(meta["formulate.calibration"])
            out["formulate.calibration"] = "%s, review threshold %s" % (
                cal.get("target", "?"), cal.get("review_threshold", "?"))
        return out
    except (OSError, ValueError, KeyError) as e:
        return {"error": str(e)}


def find_cli():
    for build in ("build-eval", "build"):
        p = os.path.join(ROOT, build, "app", "formulate-cli")
        if os.access(p, os.X_OK):
            return p
    return shutil.which("formulate-cli")


def find_engine_inputs():
    for build in ("build-eval", "build"):
        p = os.path.join(ROOT, build, "tools", "eval", "eval-engine-inputs")
        if os.access(p, os.X_OK):
            return p
    return None


# --------------------------------------------------------------------- samples

class Sample:
    __slots__ = ("index", "image", "truth", "font", "style", "size_pt", "source")

    def __init__(self, index, image, truth, info):
        self.index = index
        self.image = image
        self.truth = truth
        self.font = info["font"]
        self.style = info["style"]
        self.size_pt = info["size_pt"]
        self.source = info["source"]


def spread(n, limit):
    """limit indices spread evenly over range(n) (all of them without a limit):
    the shards are ordered by font set-up and size, so the first N would all
    be one set-up."""
    if limit is None or limit >= n:
        return list(range(n))
    return sorted({int(i * n / limit) for i in range(limit)})


def load_samples(data, split, limit):
    ds = Dataset(data, split)
    out = []
    for i in spread(len(ds), limit):
        img, ids, info = ds[i]
        out.append(Sample(i, np.array(img), ds.tokens(ids), info))
    return out, ds


# ---------------------------------------------------------------------- engine

def run_cli(cli, model, paths, beam, threads, em_px=0, max_repeats=None, symbols=None,
            symbol_penalty=None, eos_penalty=None, precision=None):
    """symbols: one token list per image (glyph constraint, --symbols-file),
    symbol_penalty: "mask" or a number (formulate-cli --symbol-penalty)."""
    cmd = [cli, "recognize", "--json", "--model", model, "--device", "cpu",
           "--beam", str(beam), "--threads", str(threads), "--em-px", str(em_px)]
    if max_repeats is not None:
        cmd += ["--max-repeats", str(max_repeats)]
    if precision:
        cmd += ["--precision", precision]
    symbols_file = None
    if symbols is not None:
        with tempfile.NamedTemporaryFile("w", suffix=".symbols", delete=False) as f:
            for toks in symbols:
                f.write(" ".join(toks) + "\n")
            symbols_file = f.name
        cmd += ["--symbols-file", symbols_file]
        if symbol_penalty is not None:
            cmd += ["--symbol-penalty", str(symbol_penalty)]
        if eos_penalty is not None:
            cmd += ["--eos-penalty", str(eos_penalty)]
    try:
        proc = subprocess.run(cmd + paths, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    finally:
        if symbols_file:
            os.unlink(symbols_file)
    if proc.returncode != 0:
        raise RuntimeError("formulate-cli failed (%d): %s" %
                           (proc.returncode, proc.stderr.decode(errors="replace").strip()))
    doc = json.loads(proc.stdout.decode())
    if len(doc["results"]) != len(paths):
        raise RuntimeError("formulate-cli returned %d results for %d images" %
                           (len(doc["results"]), len(paths)))
    return doc


def recognize_images(cli, model, paths, beam, jobs, em_px=0, chunk=100, symbols=None,
                     symbol_penalty=None, eos_penalty=None, precision=None):
    """All images through formulate-cli, `jobs` single-threaded processes at a
    time, many images per process (the model loads once per chunk). Returns
    (results in order, run info, wall seconds)."""
    starts = range(0, len(paths), chunk)
    chunks = [(paths[i:i + chunk], symbols[i:i + chunk] if symbols is not None else None)
              for i in starts]
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        docs = list(pool.map(lambda c: run_cli(cli, model, c[0], beam, 1, em_px, symbols=c[1],
                                               symbol_penalty=symbol_penalty,
                                               eos_penalty=eos_penalty, precision=precision), chunks))
    wall = time.time() - t0
    results = [r for d in docs for r in d["results"]]
    info = {k: docs[0][k] for k in ("model", "model_parameters", "device", "gemm_path", "beam")} \
        if docs else {}
    info["load_ms_mean"] = float(np.mean([d["load_ms"] for d in docs])) if docs else 0.0
    return results, info, wall


def write_pngs(images, directory):
    os.makedirs(directory, exist_ok=True)
    paths = []
    for k, img in enumerate(images):
        p = os.path.join(directory, "%05d.png" % k)
        Image.fromarray(img).save(p, compress_level=1)
        paths.append(p)
    return paths


def pred_tokens(latex):
    """The engine's LaTeX back into vocabulary tokens (tokenize inverts the
    detokeniser the engine and the normaliser share, docs/model.md)."""
    return latex_tokens.tokenize(latex)


# ------------------------------------------------------------------- rendering

def render_predictions(samples, preds, workdir, jobs, batch=64):
    """pred LaTeX -> the data pipeline's render (same font set-up, size and
    style as the truth), or None where it does not compile or is blank.
    Grouped by (font, size) like the dataset builder; small batches so one
    pathological prediction costs little."""
    groups = collections.defaultdict(list)
    for k, (s, p) in enumerate(zip(samples, preds)):
        groups[(s.font, s.size_pt)].append(k)
    work = []
    for (font, size), ks in sorted(groups.items()):
        for j in range(0, len(ks), batch):
            work.append((font, size, ks[j:j + batch]))
    out = [None] * len(samples)

    def one(job):
        font, size, ks = job
        wd = tempfile.mkdtemp(prefix="render-", dir=workdir)
        try:
            res = render_batch.render_formulas(wd, [preds[k] for k in ks],
                                               [samples[k].style for k in ks], font, size)
        finally:
            shutil.rmtree(wd, ignore_errors=True)
        return ks, res

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for ks, res in pool.map(one, work):
            for k, (status, img, _cc) in zip(ks, res):
                out[k] = img if status == "ok" else None
    return out


def crop_ink(gray, margin=CROP_MARGIN_PX, level=250):
    """Crop a page raster (gray, or RGB judged by its darkest channel) to its
    ink plus a margin of paper."""
    g = gray if gray.ndim == 2 else gray.min(axis=2)
    ys, xs = np.nonzero(g < level)
    if ys.size == 0:
        return None
    y0, y1 = max(ys.min() - margin, 0), min(ys.max() + margin + 1, g.shape[0])
    x0, x1 = max(xs.min() - margin, 0), min(xs.max() + margin + 1, g.shape[1])
    return gray[y0:y1, x0:x1]


def robust_renders(samples, workdir, jobs, batch=64):
    """Each truth formula compiled once more with pdflatex (same font set-up,
    size, style), then rasterised every ROBUST_VARIANTS way. Returns
    {variant: [image or None per sample]}."""
    groups = collections.defaultdict(list)
    for k, s in enumerate(samples):
        groups[(s.font, s.size_pt)].append(k)
    work = []
    for (font, size), ks in sorted(groups.items()):
        for j in range(0, len(ks), batch):
            work.append((font, size, ks[j:j + batch]))
    out = {v[0]: [None] * len(samples) for v in ROBUST_VARIANTS}

    def one(job):
        font, size, ks = job
        wd = tempfile.mkdtemp(prefix="robust-", dir=workdir)
        got = {}
        try:
            keep, _failed, pdf = render_batch.compile_batch(
                wd, [latex_tokens.detokenize(samples[k].truth) for k in ks],
                [samples[k].style for k in ks], font, size)
            if pdf is None:
                return got
            for name, tool, dpi, colour in ROBUST_VARIANTS:
                prefix = os.path.join(wd, name)
                cmd = [tool, "-png", "-r", str(dpi)]
                if tool == "pdftoppm":
                    cmd.append("-gray")
                subprocess.run(cmd + [pdf, prefix], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                pages = sorted(glob.glob(prefix + "-*.png"))
                if len(pages) != len(keep):
                    raise RuntimeError("%s: %d pages for %d formulas" % (tool, len(pages), len(keep)))
                for idx, page in zip(keep, pages):
                    arr = np.asarray(Image.open(page).convert("RGB" if colour else "L"))
                    img = crop_ink(arr)
                    if img is not None and colour:
                        # ink = 1 - gray: composite text colour over the theme background
                        ink = 1.0 - img.astype(np.float32).mean(axis=2, keepdims=True) / 255.0
                        img = (SCREEN_BG * (1 - ink) + SCREEN_FG * ink).round().astype(np.uint8)
                    got[(name, ks[idx])] = img
        finally:
            shutil.rmtree(wd, ignore_errors=True)
        return got

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for got in pool.map(one, work):
            for (name, k), img in got.items():
                out[name][k] = img
    return out


# --------------------------------------------------------------------- scoring

def score(samples, results, rendered, label):
    """Per-sample records and aggregate scores (overall and per group)."""
    records = []
    for s, r, img in zip(samples, results, rendered if rendered is not None else [None] * len(samples)):
        pred = pred_tokens(r["latex"]) if r is not None else []
        exact = pred == s.truth
        rec = {"index": s.index, "font": s.font, "style": s.style, "size_pt": s.size_pt,
               "source": s.source, "truth": latex_tokens.detokenize(s.truth),
               "pred": r["latex"] if r is not None else None, "exact": exact,
               "ned": metrics.normalized_edit_distance(s.truth, pred),
               "truth_tokens": len(s.truth), "pred_tokens": len(pred)}
        if r is not None:
            rec.update(confidence_min=r["confidence"]["min"], confidence_mean=r["confidence"]["mean"],
                       hit_length_limit=r["hit_length_limit"],
                       repetition_stopped=r["repetition_stopped"], scale=r["input"]["scale"],
                       engine_ms=sum(r["timings_ms"].values()))
        if rendered is not None:
            if exact:
                # Same tokens, same deterministic pipeline: the same pixels.
                rec["img_exact"] = rec["img_exact_ink"] = True
            else:
                rec["img_exact"], rec["img_exact_ink"] = metrics.column_match(s.image, img)
            rec["pred_compiles"] = exact or img is not None
        records.append((rec, s.truth, pred))
    return records


def aggregate(records):
    n = len(records)
    if n == 0:
        return {"n": 0}
    recs = [r for r, _, _ in records]
    bleu = metrics.corpus_bleu([t for _, t, _ in records], [p for _, _, p in records])
    out = {"n": n, "bleu4": bleu["bleu"], "bleu_precisions": bleu["precisions"],
           "brevity_penalty": bleu["brevity_penalty"],
           "edit_distance": float(np.mean([r["ned"] for r in recs])),
           "exact_match": float(np.mean([r["exact"] for r in recs]))}
    if "img_exact" in recs[0]:
        out["image_match"] = float(np.mean([r["img_exact"] for r in recs]))
        out["image_match_no_blank_columns"] = float(np.mean([r["img_exact_ink"] for r in recs]))
        out["pred_compiles"] = float(np.mean([r["pred_compiles"] for r in recs]))
    if "scale" in recs[0]:
        out["resized_fraction"] = float(np.mean([abs(r["scale"] - 1.0) > 1e-6 for r in recs]))
        out["repetition_stopped"] = int(sum(r["repetition_stopped"] for r in recs))
        out["hit_length_limit"] = int(sum(r["hit_length_limit"] for r in recs))
    return out


LENGTH_BUCKETS = [(1, 10), (11, 25), (26, 50), (51, 100), (101, 10 ** 6)]


def length_bucket(n):
    for lo, hi in LENGTH_BUCKETS:
        if lo <= n <= hi:
            return "%03d-%s" % (lo, hi if hi < 10 ** 6 else "")
    return "000"


def breakdowns(records):
    out = {}
    for key in ("font", "style", "source", "size_pt", "truth_length"):
        groups = collections.defaultdict(list)
        for rec in records:
            g = length_bucket(rec[0]["truth_tokens"]) if key == "truth_length" else str(rec[0][key])
            groups[g].append(rec)
        out[key] = {g: aggregate(v) for g, v in sorted(groups.items())}
    return out


# ------------------------------------------------------------------- agreement

def engine_inputs(helper, model, images, em_px=0):
    """The engine's own preprocessed tensors (eval-engine-inputs)."""
    req = bytearray()
    for img in images:
        ch = 1 if img.ndim == 2 else 3
        req += struct.pack("<iiif", img.shape[1], img.shape[0], ch, float(em_px))
        req += np.ascontiguousarray(img, np.uint8).tobytes()
    proc = subprocess.run([helper, model], input=bytes(req), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise RuntimeError("eval-engine-inputs: " + proc.stderr.decode(errors="replace"))
    buf, off, out = proc.stdout, 0, []
    for _ in images:
        status, h, w, scale = struct.unpack_from("<iiif", buf, off)
        off += 16
        if status != 0:
            out.append(None)
            continue
        out.append(np.frombuffer(buf, np.float32, h * w, off).reshape(h, w))
        off += 4 * h * w
    return out


def load_twin(model_path):
    sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
    import model as twin
    if model_path.endswith(".pt"):
        net, vocab = twin.load_pt(model_path)
    else:
        net, vocab, _meta = twin.load_safetensors(model_path)
    net.eval()
    return net, vocab


def twin_greedy(net, inputs, steps, batch):
    """Greedy ids for every preprocessed input. Images of similar size share a
    padded batch; the twin masks the padding (valid_hw), so each image computes
    what it computes alone (tools/train/README.md: first logits agree to 5e-7)."""
    import torch
    order = sorted((k for k, x in enumerate(inputs) if x is not None),
                   key=lambda k: (inputs[k].shape[0], inputs[k].shape[1]))
    out = [None] * len(inputs)
    for j in range(0, len(order), batch):
        ks = order[j:j + batch]
        h = max(inputs[k].shape[0] for k in ks)
        w = max(inputs[k].shape[1] for k in ks)
        px = torch.zeros(len(ks), 1, h, w)
        hw = torch.zeros(len(ks), 2, dtype=torch.long)
        for b, k in enumerate(ks):
            x = inputs[k]
            px[b, 0, :x.shape[0], :x.shape[1]] = torch.from_numpy(x.copy())
            hw[b, 0], hw[b, 1] = x.shape[0], x.shape[1]
        with torch.no_grad():
            ids = net.recognize(px, hw if len(ks) > 1 else None,
                                max_steps=max(steps[k] for k in ks))
        for k, i in zip(ks, ids):
            out[k] = i
    return out


def agreement(samples, results, model_path, helper, threads, em_px, batch=16):
    """Greedy tokens of the PyTorch twin (fp32, fed the engine's own
    preprocessed tensor) vs the engine's. The engine's repetition guard and
    length limit end a formula early, so a guarded engine output agrees when
    it is a prefix of the twin's."""
    import torch
    # One intra-op thread per process: on a shared 2-core machine OpenMP's
    # spinning threads made a tiny model 12x slower with 2 threads than with 1.
    torch.set_num_threads(threads)
    net, vocab = load_twin(model_path)
    tok_id = {t: i for i, t in enumerate(vocab)}
    hidden = {net.cfg["pad_id"], net.cfg["bos_id"], net.cfg["eos_id"]}
    inputs = engine_inputs(helper, model_path, [s.image for s in samples], em_px)
    agree, disagreements = 0, []
    t0 = time.time()
    # The twin needs only as many steps as the engine took plus the end token:
    # a longer twin output disagrees either way, and an untrained model would
    # otherwise run every formula to max_tokens.
    steps = [r["tokens"] + 2 for r in results]
    twin_ids = twin_greedy(net, inputs, steps, batch)
    for s, r, x, ids in zip(samples, results, inputs, twin_ids):
        if x is None:
            disagreements.append({"index": s.index, "reason": "preprocess failed"})
            continue
        # The engine's detokeniser drops <pad>/<bos>/<eos> ids (an untrained
        # model emits them); compare what both sides would print.
        ids = [i for i in ids if i not in hidden]
        eng = [tok_id.get(t, -1) for t in pred_tokens(r["latex"])]
        ok = eng == ids
        if not ok and (r["repetition_stopped"] or r["hit_length_limit"]):
            ok = ids[:len(eng)] == eng
        if ok:
            agree += 1
        else:
            disagreements.append({"index": s.index, "engine": r["latex"],
                                  "pytorch": twin_detok(vocab, ids)})
    return {"n": len(samples), "agree": agree, "rate": agree / max(len(samples), 1),
            "pytorch_seconds": time.time() - t0, "disagreements": disagreements[:50]}


def twin_detok(vocab, ids):
    return latex_tokens.detokenize([vocab[i] for i in ids])


# ---------------------------------------------------------------------- output

def fmt_row(name, a):
    cells = ["%-26s" % name[:26], "%5d" % a["n"], "%6.2f" % (100 * a["bleu4"]),
             "%6.3f" % a["edit_distance"], "%6.2f" % (100 * a["exact_match"])]
    if "image_match" in a:
        cells += ["%6.2f" % (100 * a["image_match"]), "%6.2f" % (100 * a["image_match_no_blank_columns"])]
    return " ".join(cells)


def print_table(sets):
    head = "%-26s %5s %6s %6s %6s %6s %6s" % ("set", "n", "BLEU", "ED", "exact", "img", "img-bc")
    print(head)
    print("-" * len(head))
    for name, res in sets:
        print(fmt_row(name, res["overall"]))
        for key in ("font", "style", "source"):
            for g, a in res["by"][key].items():
                print(fmt_row("  %s=%s" % (key, g), a))
    print("BLEU = corpus BLEU-4 x100; ED = mean token edit distance / truth length (lower is better);"
          " exact = token-exact %; img / img-bc = rendered-image match %, with / without blank columns")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(ROOT, "data", "models", "formulate-v1.safetensors"))
    ap.add_argument("--data", default=os.path.join(ROOT, "work", "data"))
    ap.add_argument("--split", default="test")
    ap.add_argument("--limit", type=int, default=None,
                    help="N samples spread evenly over the split (all font set-ups)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel formulate-cli / pdflatex processes")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--precision", default=None, choices=["auto", "fp32", "fp16", "bf16"],
                    help="formulate-cli --precision (default: the engine's; bf16 on the CPU "
                         "needs AVX512_BF16)")
    ap.add_argument("--cli", default=None, help="formulate-cli (default: build-eval/, build/, PATH)")
    ap.add_argument("--no-render", action="store_true", help="skip the rendered-image match")
    ap.add_argument("--robustness", action="store_true", help="also score the re-rasterised set")
    ap.add_argument("--robust-limit", type=int, default=None,
                    help="N of the evaluated samples, spread evenly, for the robustness set"
                         " (default: all of them)")
    ap.add_argument("--agreement", action="store_true",
                    help="engine vs PyTorch twin greedy agreement on the clean set")
    ap.add_argument("--oracle-symbols", default=None, metavar="VARIANTS",
                    help="also run the clean set with each formula's own truth tokens as the "
                         "glyph constraint (a perfect text layer), once per comma-separated "
                         "--symbol-penalty value, e.g. 'mask,6'; 'mask/0' also sets "
                         "--eos-penalty 0")
    ap.add_argument("--out", default=os.path.join(ROOT, "work", "eval", "results.json"))
    ap.add_argument("--workdir", default=None, help="scratch (default: a temp dir, removed)")
    args = ap.parse_args(argv)

    if args.agreement and args.beam != 1:
        sys.exit("eval.py: --agreement compares greedy decodes; run it with --beam 1")
    cli = args.cli or find_cli()
    if not cli:
        sys.exit("eval.py: formulate-cli not found; build it (meson setup build-eval && ninja -C build-eval)")
    if not os.path.exists(args.model):
        sys.exit("eval.py: no model at %s" % args.model)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    scratch = args.workdir or tempfile.mkdtemp(prefix="formulate-eval-")
    os.makedirs(scratch, exist_ok=True)
    t_start = time.time()
    try:
        samples, ds = load_samples(args.data, args.split, args.limit)
        print("eval: %d %s samples, model %s, cli %s" % (len(samples), args.split, args.model, cli),
              flush=True)
        out = {"model": os.path.abspath(args.model), "data": os.path.abspath(args.data),
               "split": args.split, "limit": args.limit, "beam": args.beam, "jobs": args.jobs,
               "command": " ".join([os.path.relpath(__file__, ROOT)] + (argv if argv is not None else sys.argv[1:])),
               "model_file": model_provenance(args.model),
               "model_bytes": os.path.getsize(args.model), "sets": {}}
        sets = []

        render_cache = {}

        def evaluate(name, set_samples, images, em_px=0, symbols=None, symbol_penalty=None,
                     eos_penalty=None):
            paths = write_pngs(images, os.path.join(scratch, name))
            results, info, wall = recognize_images(cli, args.model, paths, args.beam, args.jobs, em_px,
                                                   symbols=symbols, symbol_penalty=symbol_penalty,
                                                   eos_penalty=eos_penalty, precision=args.precision)
            engine_s = sum(sum(r["timings_ms"].values()) for r in results) / 1000.0
            print("%s: %d images in %.1f s wall (%.2f images/s with %d single-thread processes;"
                  " engine %.1f ms/image)" % (name, len(paths), wall, len(paths) / wall, args.jobs,
                                              1000 * engine_s / max(len(paths), 1)), flush=True)
            rendered = None
            if not args.no_render:
                t0 = time.time()
                preds = [r["latex"] for r in results]
                # The robustness sets mostly repeat the clean set's mistakes:
                # a (prediction, set-up) pair is compiled once per run.
                def key(k):
                    s = set_samples[k]
                    return (preds[k], s.font, s.size_pt, s.style)
                wrong = [k for k, (s, p) in enumerate(zip(set_samples, preds))
                         if pred_tokens(p) != s.truth]
                todo = list({key(k): k for k in wrong if key(k) not in render_cache}.values())
                got = render_predictions([set_samples[k] for k in todo], [preds[k] for k in todo],
                                         scratch, args.jobs)
                for k, img in zip(todo, got):
                    render_cache[key(k)] = img
                rendered = [None] * len(set_samples)
                for k in wrong:
                    rendered[k] = render_cache[key(k)]
                print("%s: rendered %d of %d non-exact predictions (others cached) in %.1f s" %
                      (name, len(todo), len(wrong), time.time() - t0), flush=True)
            records = score(set_samples, results, rendered, name)
            res = {"overall": aggregate(records), "by": breakdowns(records),
                   "throughput": {"images": len(paths), "wall_s": wall,
                                  "images_per_s": len(paths) / wall,
                                  "engine_ms_per_image": 1000 * engine_s / max(len(paths), 1),
                                  "processes": args.jobs, "threads_per_process": 1},
                   "engine": info}
            out["sets"][name] = res
            sets.append((name, res))
            with open(os.path.splitext(args.out)[0] + "-%s.jsonl" % name, "w") as f:
                for rec, _, _ in records:
                    f.write(json.dumps(rec) + "\n")
            return results

        # The test renders are at the dataset's em_px, and the engine is told so,
        # as the app's PDF pipeline tells it the font size of every crop.
        em_px = int(ds.meta["em_px"])
        out["clean_em_px_hint"] = em_px
        clean_results = evaluate("clean", samples, [s.image for s in samples], em_px)

        # Glyph-constrained decoding with an oracle text layer: each formula's
        # truth tokens as its symbol list (the engine skips the structure
        # tokens among them, docs/model.md).
        for variant in (args.oracle_symbols.split(",") if args.oracle_symbols else []):
            penalty, _, eos = variant.partition("/")
            evaluate("clean-oracle-%s" % variant.replace("/", "-eos"), samples, [s.image for s in samples], em_px,
                     symbols=[[t for t in s.truth if not t.isspace() and t.strip() == t]
                              for s in samples],  # "\\ " (a space) would split in the file
                     symbol_penalty=penalty, eos_penalty=eos or None)

        if args.agreement:
            helper = find_engine_inputs()
            if not helper:
                sys.exit("eval.py: eval-engine-inputs not built (ninja -C build-eval tools/eval/eval-engine-inputs)")
            ag = agreement(samples, clean_results, args.model, helper, 1, em_px)
            out["agreement"] = ag
            print("agreement: engine == PyTorch greedy on %d / %d (%.2f %%), twin took %.1f s" %
                  (ag["agree"], ag["n"], 100 * ag["rate"], ag["pytorch_seconds"]), flush=True)

        if args.robustness:
            rl = args.robust_limit if args.robust_limit is not None else len(samples)
            rsamples = [samples[k] for k in spread(len(samples), rl)]
            # Same pixels as the clean set, but the engine estimates the glyph
            # scale from the ink (a PNG of unknown origin).
            evaluate("clean-estimated-scale", rsamples, [s.image for s in rsamples], 0)
            t0 = time.time()
            variants = robust_renders(rsamples, scratch, args.jobs)
            print("robustness: rasterised %d formulas %d ways in %.1f s" %
                  (len(rsamples), len(variants), time.time() - t0), flush=True)
            for name, imgs in variants.items():
                keep = [k for k, im in enumerate(imgs) if im is not None]
                if len(keep) < len(imgs):
                    print("%s: %d formulas failed to rasterise, left out" % (name, len(imgs) - len(keep)))
                evaluate(name, [rsamples[k] for k in keep], [imgs[k] for k in keep])

        out["total_seconds"] = time.time() - t_start
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
        print()
        print_table(sets)
        if "agreement" in out:
            print("engine vs PyTorch greedy agreement: %.2f %% (%d/%d)" %
                  (100 * out["agreement"]["rate"], out["agreement"]["agree"], out["agreement"]["n"]))
        print("total %.1f s; results in %s" % (out["total_seconds"], args.out))
    finally:
        if not args.workdir:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
