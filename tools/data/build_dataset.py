#!/usr/bin/python3
"""Build (or extend, or resume) the formulate-v1 training dataset.

    build_dataset.py [--out DIR] [--corpus DIR] [--train-samples N] [--jobs 2]

Corpus formulas are normalised (latex_tokens), deduplicated, split by a hash
of the normalised string (train / val / test: a test formula is never
trained on), mixed by source weights together with generated formulas
(generate_formulas), rendered in batches (render_batch: pdflatex + the app's
renderer) in several font set-ups, sizes and styles, partly degraded
(augment), and written as packed shards. The format is in README.md.

Shard k of a split is a pure function of (seed, k, corpus, vocab), and a
shard counts as done when its .json exists, so a run that is stopped can be
started again with the same arguments and does only the missing shards;
a larger --train-samples extends the set.
"""

import argparse
import datetime
import glob
import hashlib
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import augment  # noqa: E402
import generate_formulas  # noqa: E402
import latex_tokens as lt  # noqa: E402
import render_batch  # noqa: E402
import rasterise  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
FORMAT_VERSION = 1
EM_PX = 20
MAX_WIDTH, MAX_HEIGHT = 1536, 256
MAX_TOKENS = 150
VOCAB_MIN_COUNT = 8

# Stacks is 3/4 of the corpus and all algebraic geometry; these weights give
# physics (im2latex hep-th, Light and Matter), analysis (Lebl), differential
# equations and the generated constructs their share.
TRAIN_WEIGHTS = {"im2latex": 0.25, "stacks": 0.15, "lebl-diffyqs": 0.10, "lebl-ra": 0.12,
                 "lebl-scv": 0.06, "crowell-lm": 0.10, "generated": 0.22}
SOURCES = list(TRAIN_WEIGHTS)
# Training mix of font set-ups (render_batch.FONT_SETS). The first 400k training
# samples of the shipped dataset were drawn with only the first seven (cm .25, lm .12,
# times .15, palatino .13, sans .12, txfonts .12, pxfonts .11); the shards after them
# with this table. Val and test use the set-ups listed here, equally often.
FONT_WEIGHTS = {"cm": 0.12, "lm": 0.06, "times": 0.07, "palatino": 0.06, "sans": 0.06,
                "txfonts": 0.06, "pxfonts": 0.06, "newtx": 0.08, "newpx": 0.07,
                "kpfonts": 0.07, "libertine": 0.07, "cmbright": 0.06, "euler": 0.06,
                "charter": 0.06}
# Never trained on: the unseen-font evaluation set, made with --fonts stix2,fourier
# (docs/data.md). Listed so that --fonts can name them.
HELD_OUT_FONTS = ("stix2", "fourier")
AUGMENT_FRACTION = 0.25
BATCH = 250            # formulas per pdflatex run

INDEX_DTYPE = np.dtype([
    ("img_offset", "<i8"), ("tok_offset", "<i8"),
    ("h", "<u2"), ("w", "<u2"), ("n_tokens", "<u2"),
    ("font", "u1"), ("style", "u1"), ("size_pt", "u1"), ("source", "u1"),
    ("augmented", "u1"), ("cc_median_px", "<f4"),
])


def log(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S"), msg, flush=True)


# Per mille of each source held out for test and for val. Stacks is large, the
# other sources small: equal fractions would leave a test set that is 3/4
# algebraic geometry.
HOLDOUT_PER_MILLE = {"stacks": 10}
HOLDOUT_DEFAULT = 40


def split_of(norm, source):
    """Deterministic split from a hash of the normalised formula."""
    h = int(hashlib.sha1(norm.encode()).hexdigest()[:8], 16) % 1000
    t = HOLDOUT_PER_MILLE.get(source, HOLDOUT_DEFAULT)
    return "test" if h < t else "val" if h < 2 * t else "train"


# --- corpus ---------------------------------------------------------------------

def corpus_files(corpus):
    files = []
    for part in ("val", "test"):
        p = os.path.join(corpus, "im2latex100k", part + ".formulas.norm.txt")
        fail = os.path.join(corpus, "im2latex100k", part + ".pdflatex_fail_lines.txt")
        files.append(("im2latex", p, None, True, fail))
    for p in sorted(glob.glob(os.path.join(corpus, "texsrc", "*.txt"))):
        name = os.path.basename(p)
        src, kind = name.split(".")[0], name.split(".")[1]
        files.append((src, p, kind, False, None))
    return [f for f in files if os.path.exists(f[1])]


def normalized_tokens(latex, max_tokens, drops, spaced=False):
    """latex's canonical tokens, or None with the reason counted in drops
    (the normaliser's reason, or too_long past max_tokens). The corpus and
    the PDF crops (pdf_crops.py) drop formulas by the same rule."""
    try:
        toks = lt.normalize(latex, spaced)
    except lt.NormalizeError as e:
        drops[e.reason] = drops.get(e.reason, 0) + 1
        return None
    if len(toks) > max_tokens:
        drops["too_long"] = drops.get("too_long", 0) + 1
        return None
    return toks


def load_corpus(corpus, limit=None):
    """-> (list of (norm, tokens, source, kind)), drop counter dict."""
    drops = {}
    seen = set()
    out = []
    for src, path, kind, spaced, fail_path in corpus_files(corpus):
        fails = set()
        if fail_path and os.path.exists(fail_path):
            fails = {int(x) for x in open(fail_path).read().split()}
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if limit is not None and n > limit:
                    break
                if n in fails:
                    drops["compile"] = drops.get("compile", 0) + 1
                    continue
                toks = normalized_tokens(line, MAX_TOKENS, drops, spaced)
                if toks is None:
                    continue
                norm = lt.detokenize(toks)
                if norm in seen:
                    drops["duplicate"] = drops.get("duplicate", 0) + 1
                    continue
                seen.add(norm)
                out.append((norm, toks, src, kind))
    return out, drops


def build_vocab(corpus_items, seed):
    counts = {}
    for norm, toks, src, kind in corpus_items:
        if split_of(norm, src) == "train":
            for t in toks:
                counts[t] = counts.get(t, 0) + 1
    rng = random.Random(seed)
    for _ in range(20000):
        try:
            toks = lt.normalize(generate_formulas.generate(rng))
        except lt.NormalizeError:
            continue
        for t in toks:
            counts[t] = counts.get(t, 0) + 1
    kept = sorted((t for t, c in counts.items() if c >= VOCAB_MIN_COUNT),
                  key=lambda t: (-counts[t], t))
    return lt.SPECIALS + kept


# --- shard planning -------------------------------------------------------------

def style_for(src, kind, rng):
    p_display = 0.8 if kind == "display" else 0.2 if kind == "inline" else 0.5
    return "display" if rng.random() < p_display else "inline"


def draw_generated(rng, vocab_index):
    """A generated formula that normalises, fits and is in the train split."""
    while True:
        try:
            toks = lt.normalize(generate_formulas.generate(rng))
        except lt.NormalizeError:
            continue
        if len(toks) > MAX_TOKENS or any(t not in vocab_index for t in toks):
            continue
        norm = lt.detokenize(toks)
        # no generated formula may land in a held-out slot of any source
        if split_of(norm, "generated") == "train" and split_of(norm, "stacks") == "train":
            return norm, toks


def plan_shard(split, k, pools, vocab_index, n, seed):
    """-> list of sample dicts (formula, tokens, source, style, font, size)."""
    rng = random.Random("%d/%s/%d" % (seed, split, k))
    samples = []
    if split == "train":
        srcs = [s for s in SOURCES if s == "generated" or pools.get(s)]
        weights = [TRAIN_WEIGHTS[s] for s in srcs]
        for _ in range(n):
            src = rng.choices(srcs, weights)[0]
            if src == "generated":
                norm, toks = draw_generated(rng, vocab_index)
                kind = None
            else:
                norm, toks, kind = rng.choice(pools[src])
            samples.append({"norm": norm, "toks": toks, "source": src,
                            "style": style_for(src, kind, rng)})
    else:
        # fixed evaluation sets: real formulas only, no repeats, source mix as
        # in training
        srcs = [s for s in SOURCES if s != "generated" and pools.get(s)]
        order = {s: rng.sample(pools[s], len(pools[s])) for s in srcs}
        while len(samples) < n and any(order.values()):
            live = [s for s in srcs if order[s]]
            src = rng.choices(live, [TRAIN_WEIGHTS[s] for s in live])[0]
            norm, toks, kind = order[src].pop()
            samples.append({"norm": norm, "toks": toks, "source": src,
                            "style": style_for(src, kind, rng)})
    fonts, fweights = list(FONT_WEIGHTS), list(FONT_WEIGHTS.values())
    if split == "train":
        for start in range(0, len(samples), BATCH):
            font = rng.choices(fonts, fweights)[0]
            size = rng.choice(render_batch.FONT_SIZES)
            for s in samples[start:start + BATCH]:
                s["font"], s["size"] = font, size
    else:
        # evaluation sets: every font set-up and size equally often
        combos = [(f, z) for z in render_batch.FONT_SIZES for f in fonts]
        batch = max(1, -(-len(samples) // len(combos)))
        for b, start in enumerate(range(0, len(samples), batch)):
            font, size = combos[b % len(combos)]
            for s in samples[start:start + batch]:
                s["font"], s["size"] = font, size
    for s in samples:
        s["augment"] = split == "train" and rng.random() < AUGMENT_FRACTION
    return samples


# --- shard rendering (worker) ---------------------------------------------------

def render_shard(job):
    """Worker entry: a failing shard is reported, not fatal to the run (it is
    simply not done, and the next run retries it)."""
    try:
        return _render_shard(job)
    except Exception as e:  # noqa: BLE001 - any failure: log it, go on
        import traceback
        return {"split": job[0], "shard": job[1], "error": "%s: %s" % (type(e).__name__, e),
                "trace": traceback.format_exc()}


def _render_shard(job):
    split, k, samples, out, vocab_index, keep_max, seed, render_crops, other_raster = job
    t0 = time.time()
    # which batches another rasteriser redraws: seeded by (seed, split, shard) like augmentation
    rrng = np.random.default_rng(int(hashlib.sha1(("raster/%d/%s/%d" % (seed, split, k)).encode())
                                     .hexdigest()[:8], 16))
    rasterisers = rasterise.available() if other_raster > 0 else []
    n_raster = {}
    name = "%s-%05d" % (split, k)
    work = os.path.join(out, "tmp", name)
    drops = {}
    kept = []   # (sample, img, cc)
    try:
        # one pdflatex run per run of equal (font, size), at most BATCH long
        chunks, cur = [], []
        for s in samples:
            if cur and ((s["font"], s["size"]) != (cur[0]["font"], cur[0]["size"]) or
                        len(cur) >= BATCH):
                chunks.append(cur)
                cur = []
            cur.append(s)
        if cur:
            chunks.append(cur)
        for start, chunk in enumerate(chunks):
            raster = None
            if rasterisers and rrng.random() < other_raster:
                raster = rasterise.draw_setting(rrng, rasterisers)
            res = render_batch.render_formulas(
                os.path.join(work, str(start)), [s["norm"] for s in chunk],
                [s["style"] for s in chunk], chunk[0]["font"], chunk[0]["size"],
                render_crops=render_crops, em_px=EM_PX, max_w=MAX_WIDTH, max_h=MAX_HEIGHT,
                raster=raster)
            if raster:
                key = "%s-%s" % (raster[0], "aa" if raster[2] else "noaa")
                n_raster[key] = n_raster.get(key, 0) + sum(1 for r in res if len(r) > 3 and r[3])
            res = [r[:3] for r in res]
            for s, (status, img, cc) in zip(chunk, res):
                if status != "ok":
                    drops[status] = drops.get(status, 0) + 1
                    continue
                kept.append((s, img, cc))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if keep_max is not None and len(kept) > keep_max:
        # evenly spaced, so every (font, size) batch keeps its share
        kept = [kept[i * len(kept) // keep_max] for i in range(keep_max)]

    # not hash(): string hashing is salted per process
    arng = np.random.default_rng(int(hashlib.sha1(("%d/%s/%d" % (seed, split, k)).encode())
                                     .hexdigest()[:8], 16))
    index = np.zeros(len(kept), INDEX_DTYPE)
    img_parts, tok_parts = [], []
    img_off = tok_off = 0
    n_aug = 0
    for i, (s, img, cc) in enumerate(kept):
        augmented = 0
        if s["augment"]:
            aimg, _ops = augment.augment(img, arng)
            if aimg is not None and aimg.shape[0] <= MAX_HEIGHT and aimg.shape[1] <= MAX_WIDTH:
                img, augmented = aimg, 1
                n_aug += 1
        ids = np.array([vocab_index[t] for t in s["toks"]], dtype="<i4")
        h, w = img.shape
        index[i] = (img_off, tok_off, h, w, len(ids),
                    render_batch.FONT_NAMES.index(s["font"]),
                    render_batch.STYLES.index(s["style"]), s["size"],
                    SOURCES.index(s["source"]), augmented, cc)
        img_parts.append(np.ascontiguousarray(img, dtype=np.uint8).tobytes())
        tok_parts.append(ids.tobytes())
        img_off += h * w
        tok_off += len(ids)

    base = os.path.join(out, name)
    with open(base + ".img.tmp", "wb") as f:
        for b in img_parts:
            f.write(b)
    with open(base + ".tok.tmp", "wb") as f:
        for b in tok_parts:
            f.write(b)
    with open(base + ".idx.tmp", "wb") as f:
        np.save(f, index)
    for ext in ("img", "tok", "idx"):
        os.replace(base + "." + ext + ".tmp", base + "." + ext if ext != "idx" else base + ".idx.npy")
    stats = {"split": split, "shard": k, "planned": len(samples), "samples": len(kept),
             "augmented": n_aug, "rasterised": n_raster, "dropped": drops, "seconds": round(time.time() - t0, 2)}
    with open(base + ".json.tmp", "w") as f:
        json.dump(stats, f)
    os.replace(base + ".json.tmp", base + ".json")
    return stats


# --- meta -------------------------------------------------------------------------

def git_commit():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def write_meta(out, corpus_drops, corpus_counts, vocab, args, wall_seconds):
    shards = {"train": [], "val": [], "test": []}
    totals = {s: {"samples": 0, "augmented": 0, "dropped": {}, "seconds": 0.0}
              for s in shards}
    by = {s: {"source": {}, "font": {}, "style": {}, "size_pt": {}} for s in shards}
    cc = []
    for p in sorted(glob.glob(os.path.join(out, "*-*.json"))):
        st = json.load(open(p))
        sp = st["split"]
        shards[sp].append(os.path.basename(p)[:-5])
        t = totals[sp]
        t["samples"] += st["samples"]
        t["augmented"] += st["augmented"]
        t["seconds"] += st["seconds"]
        for r, c in st["dropped"].items():
            t["dropped"][r] = t["dropped"].get(r, 0) + c
        idx = np.load(p[:-5] + ".idx.npy")
        for field, names in (("source", SOURCES), ("font", render_batch.FONT_NAMES),
                             ("style", render_batch.STYLES), ("size_pt", None)):
            vals, cnts = np.unique(idx[field], return_counts=True)
            for v, c in zip(vals, cnts):
                key = names[v] if names else str(int(v))
                by[sp][field][key] = by[sp][field].get(key, 0) + int(c)
        clean = idx[(idx["augmented"] == 0) & (idx["cc_median_px"] > 0)]
        cc.append(clean["cc_median_px"])
    cc = np.concatenate(cc) if cc else np.zeros(0)
    render_seconds = sum(t["seconds"] for t in totals.values())
    n_all = sum(t["samples"] for t in totals.values())
    meta = {
        "format_version": FORMAT_VERSION,
        "normalizer_version": lt.NORMALIZER_VERSION,
        "em_px": EM_PX, "max_width": MAX_WIDTH, "max_height": MAX_HEIGHT,
        "max_formula_tokens": MAX_TOKENS,
        "vocab_size": len(vocab),
        "cc_median_em": round(float(np.median(cc)) / EM_PX, 4) if cc.size else None,
        "cc_measured_on": int(cc.size),
        "fonts": render_batch.FONT_NAMES, "styles": render_batch.STYLES, "sources": SOURCES,
        "train_source_weights": TRAIN_WEIGHTS, "font_weights": FONT_WEIGHTS,
        "augment_fraction": AUGMENT_FRACTION,
        "splits": {s: dict(totals[s], shards=shards[s], by=by[s]) for s in shards},
        "corpus": {"formulas_by_source_and_split": corpus_counts,
                   "dropped_before_render": corpus_drops},
        "generation": {
            "updated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "render_process_seconds": round(render_seconds, 1),
            "samples_per_process_second": round(n_all / render_seconds, 2) if render_seconds else None,
            "last_run_wall_seconds": round(wall_seconds, 1),
            "jobs": args.jobs, "seed": args.seed, "git_commit": git_commit(),
        },
    }
    tmp = os.path.join(out, "meta.json.tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(out, "meta.json"))
    return meta


# --- main -------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "work", "data"))
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(REPO), "shared", "data",
                                                     "formulas"))
    ap.add_argument("--train-samples", type=int, default=50000)
    ap.add_argument("--val-samples", type=int, default=2000)
    ap.add_argument("--test-samples", type=int, default=2000)
    ap.add_argument("--shard-size", type=int, default=2000)
    ap.add_argument("--first-train-shard", type=int, default=0,
                    help="train shards start at this index (--train-samples counts from it): "
                    "a CPU fine-tune on shards no GPU slice will carry (docs/model.md)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit-lines", type=int, default=None,
                    help="read only this many lines per corpus file (tests)")
    ap.add_argument("--fonts", default=None, help="comma-separated font set-ups (tests)")
    ap.add_argument("--font-weights", default=None,
                    help="NAME=W,... replaces those set-ups' train weights (e.g. more of the weak ones: "
                    "kpfonts=0.2,sans=0.2,charter=0.2); the others keep theirs")
    ap.add_argument("--render-crops", default=None)
    ap.add_argument("--other-rasterisers", type=float, default=0.0,
                    help="fraction of train batches redrawn by pdftoppm or Ghostscript at 96-300 dpi, "
                    "antialiasing on/off, then scaled to em_px (tools/data/rasterise.py); val/test stay clean")
    args = ap.parse_args(argv)

    t_start = time.time()
    if args.fonts:
        chosen = args.fonts.split(",")
        for f in chosen:
            if f not in render_batch.FONT_SETS:
                log("unknown font set-up %s (known: %s)" % (f, ", ".join(render_batch.FONT_SETS)))
                return 1
        weights = {f: FONT_WEIGHTS.get(f, 1.0) for f in chosen}
        FONT_WEIGHTS.clear()
        FONT_WEIGHTS.update(weights)
    if args.font_weights:
        for item in args.font_weights.split(","):
            name, _, w = item.partition("=")
            if name not in FONT_WEIGHTS:
                log("--font-weights: %s is not a training font set-up (known: %s)" % (name, ", ".join(FONT_WEIGHTS)))
                return 1
            FONT_WEIGHTS[name] = float(w)
    have_fonts = render_batch.available_fonts()
    for f in list(FONT_WEIGHTS):
        if f not in have_fonts:
            log("font set-up %s not installed (%s missing), left out" %
                (f, render_batch.FONT_REQUIRES[f]))
            del FONT_WEIGHTS[f]
    if not FONT_WEIGHTS:
        log("no font set-up available: is pdflatex installed?")
        return 1
    render_crops = args.render_crops or render_batch.find_render_crops()
    if not render_crops:
        log("render-crops not found: build it (ninja -C build-data tools/render-crops) "
            "or set FM_RENDER_CROPS")
        return 1
    os.makedirs(args.out, exist_ok=True)
    items, corpus_drops = load_corpus(args.corpus, args.limit_lines)
    if not items:
        log("no corpus formulas under " + args.corpus)
        return 1
    vocab_path = os.path.join(args.out, "vocab.json")
    if os.path.exists(vocab_path):
        vocab = json.load(open(vocab_path))   # fixed once written: shards depend on it
    else:
        vocab = build_vocab(items, args.seed)
        with open(vocab_path, "w") as f:
            json.dump(vocab, f, indent=0)
    vocab_index = {t: i for i, t in enumerate(vocab)}

    pools = {"train": {}, "val": {}, "test": {}}
    counts = {}
    for norm, toks, src, kind in items:
        if any(t not in vocab_index for t in toks):
            corpus_drops["rare_token"] = corpus_drops.get("rare_token", 0) + 1
            continue
        sp = split_of(norm, src)
        pools[sp].setdefault(src, []).append((norm, toks, kind))
        counts.setdefault(src, {}).setdefault(sp, 0)
        counts[src][sp] += 1
    log("corpus: %d formulas kept, dropped %s, vocab %d" %
        (sum(len(v) for p in pools.values() for v in p.values()), corpus_drops, len(vocab)))

    jobs = []
    for split, n in (("val", args.val_samples), ("test", args.test_samples)):
        if n > 0 and not os.path.exists(os.path.join(args.out, "%s-00000.json" % split)):
            # plan 10 % extra so compile/size drops still leave exactly n
            samples = plan_shard(split, 0, pools[split], vocab_index, int(n * 1.1) + 10,
                                 args.seed)
            jobs.append((split, 0, samples, args.out, vocab_index, n, args.seed, render_crops, 0.0))
    n_train_shards = (args.train_samples + args.shard_size - 1) // args.shard_size
    first = args.first_train_shard
    for k in range(first, first + n_train_shards):
        if os.path.exists(os.path.join(args.out, "train-%05d.json" % k)):
            continue
        n = min(args.shard_size, args.train_samples - (k - first) * args.shard_size)
        jobs.append(("train", k, None, args.out, None, n, args.seed, render_crops, args.other_rasterisers))
    log("%d shards to do (%d train shards planned in all)" % (len(jobs), n_train_shards))

    def materialise(job):
        split, k, samples, out, _, n, seed, rc, other = job
        if samples is None:
            samples = plan_shard(split, k, pools["train"], vocab_index, n, seed)
            n = None
        return (split, k, samples, out, vocab_index, n, seed, rc, other)

    done = 0
    with multiprocessing.Pool(args.jobs) as pool:
        for st in pool.imap_unordered(render_shard, (materialise(j) for j in jobs)):
            done += 1
            if "error" in st:
                log("%s-%05d FAILED (retried by the next run): %s\n%s" %
                    (st["split"], st["shard"], st["error"], st["trace"]))
                continue
            log("%s-%05d: %d samples (%d augmented) in %.1fs, dropped %s [%d/%d]" %
                (st["split"], st["shard"], st["samples"], st["augmented"], st["seconds"],
                 st["dropped"], done, len(jobs)))
            write_meta(args.out, corpus_drops, counts, vocab, args, time.time() - t_start)
    meta = write_meta(args.out, corpus_drops, counts, vocab, args, time.time() - t_start)
    n_new = sum(1 for _ in jobs)
    log("done: train %d, val %d, test %d samples; cc_median_em %s; %.2f samples/s per process; "
        "%d shards this run in %.0fs wall" %
        (meta["splits"]["train"]["samples"], meta["splits"]["val"]["samples"],
         meta["splits"]["test"]["samples"], meta["cc_median_em"],
         meta["generation"]["samples_per_process_second"] or 0, n_new, time.time() - t_start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
