#!/usr/bin/python3
"""Training samples from real PDF crops: formulas as the app gives them to the model.

The rendered training set (build_dataset.py) is one formula per page, cropped to
its ink. At run time the model reads crops of real pages instead
(app/document/fm-recognize.c): crop rule `line`, Poppler/Cairo at the app's
scale, neighbours' ink inside the margin, XeLaTeX/LuaLaTeX font set-ups. This
tool makes that domain's samples:

1. documents: tools/pdf-truth/make-truth.py --formulas corpus, one PDF per
   (seed, engine, font set-up), each set-up its own document of the seed
   (--first: different formulas), from a copy of the corpus that holds only the
   TRAIN split (build_dataset.split_of on the normalised formula: no test or
   val formula of work/data-std is ever typeset here);
2. crops: <build>/tools/pdf-crops (tools/data/pdf-crops.c) runs the app's own
   detection, crop rule, renderer and the engine's fe_preprocess on the PDF;
3. pairing: each truth formula is matched to a detected region as
   bench/pdf-e2e matches them (its `match`: same page, IoU >= 0.5, greedy);
   the sample is that region's image with the truth's normalised tokens.
   Unmatched truth (missed) and unmatched regions (false detections) are
   counted, not kept.

Writes the shard format of tools/data/README.md (format_version 1) under split
name `pdf` (shards pdf-00000, ...; one per seed): vocab.json is the given
dataset's (must equal the model's), so the shards mix with work/data-std
(tools/data/mix_splits.py). Resumable: a shard is done when its .json exists.

    /usr/bin/python3 tools/data/pdf_crops.py --out work/data-pdf --seeds 7000-7003 --jobs 2
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import importlib.machinery
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
import build_dataset  # noqa: E402
import latex_tokens as lt  # noqa: E402

# bench/pdf-e2e's matching, reused so the pairing is the bench's own.
E2E = importlib.machinery.SourceFileLoader(
    "pdf_e2e", os.path.join(ROOT, "bench", "pdf-e2e", "pdf-e2e")).load_module()

MAKE_TRUTH = os.path.join(ROOT, "tools", "pdf-truth", "make-truth.py")
DEFAULT_CORPUS = os.path.join(ROOT, "..", "shared", "data", "formulas", "texsrc")
# Every set-up make-truth knows, per engine. The stix2 and fourier designs stay
# out by default as in build_dataset.HELD_OUT_FONTS, so bench/pdf-e2e's
# never-trained columns (stix2*, fourier*, stix2-math*) keep measuring fonts
# the model has not seen (--include-held-out takes them in).
SETUPS = {
    "pdflatex": ["cm", "lmodern", "times", "palatino", "sans", "txfonts", "pxfonts", "newtx",
                 "libertine", "kpfonts", "charter", "euler", "stix2", "fourier"],
    "xelatex": ["lm-math", "termes-math", "pagella-math", "dejavu-math", "xits-math",
                "libertinus-math", "fira-math", "bonum-math", "stix2-math"],
    "lualatex": ["lm-math", "termes-math", "pagella-math", "dejavu-math", "xits-math",
                 "libertinus-math", "fira-math", "bonum-math", "stix2-math"],
}
HELD_OUT = {"stix2", "fourier", "stix2-math"}
STYLES = ["inline", "display"]
# pdf-crops.c record: page, status, width, height, kind[12], box[4], font_size, scale
HEAD = struct.Struct("<4i12s6f")


def log(msg):
    print(time.strftime("%Y-%m-%d %H:%M:%S"), msg, flush=True)


def train_corpus(src_dir, out_dir):
    """Copy of the corpus with only formulas of the train split; -> counts.
    Kept with its counts (counts.json, written last) while the source files'
    names, sizes and times are the same: the filter normalises ~150k lines."""
    os.makedirs(out_dir, exist_ok=True)
    stamp = [[n, os.path.getsize(os.path.join(src_dir, n)), int(os.path.getmtime(os.path.join(src_dir, n)))]
             for n in sorted(os.listdir(src_dir))]
    done = os.path.join(out_dir, "counts.json")
    if os.path.exists(done):
        old = json.load(open(done))
        if old.get("stamp") == stamp:
            return old["counts"]
    counts = {}
    for name in sorted(os.listdir(src_dir)):
        if not (name.endswith(".inline.txt") or name.endswith(".display.txt")):
            continue
        source = name.split(".")[0]
        kept = []
        c = counts.setdefault(source, {"train": 0, "held_out": 0, "unparsed": 0})
        with open(os.path.join(src_dir, name), encoding="utf-8") as f:
            for line in f:
                try:
                    norm = lt.detokenize(lt.normalize(line))
                except lt.NormalizeError:
                    # cannot be a training target anyway (no tokens)
                    c["unparsed"] += 1
                    continue
                if build_dataset.split_of(norm, source) == "train":
                    kept.append(line.rstrip("\n"))
                    c["train"] += 1
                else:
                    c["held_out"] += 1
        tmp = os.path.join(out_dir, name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(kept) + "\n")
        os.replace(tmp, os.path.join(out_dir, name))
    with open(done, "w") as f:
        json.dump({"stamp": stamp, "counts": counts}, f)
    return counts


def read_records(data):
    """pdf-crops output -> list of dicts (image None unless status 0)."""
    out, pos = [], 0
    while pos < len(data):
        page, status, w, h, kind, x0, y0, x1, y1, size, scale = HEAD.unpack_from(data, pos)
        pos += HEAD.size
        img = None
        if status == 0:
            img = np.frombuffer(data, np.uint8, w * h, pos).reshape(h, w)
            pos += w * h
        out.append({"page": page + 1, "status": status, "kind": kind.rstrip(b"\0").decode(),
                    "box": [x0, y0, x1, y1], "font_size": size, "scale": scale, "img": img})
    return out


def crop_pdf(pdf_crops, model, pdf):
    r = subprocess.run([pdf_crops, "--model", model, pdf], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("pdf-crops %s: %s" % (pdf, r.stderr.decode(errors="replace")[-300:]))
    return read_records(r.stdout)


def pair(truth, records, vocab_index, max_tokens, max_h, max_w, drops):
    """Truth formulas matched to detected regions -> samples."""
    formulas = [t for t in truth["regions"] if t["kind"] in ("display", "inline")]
    found = [r for r in records if r["status"] == 0]
    drops["crop_error"] = drops.get("crop_error", 0) + sum(r["status"] != 0 for r in records)
    m = E2E.match(formulas, found)
    drops["missed"] = drops.get("missed", 0) + len(formulas) - len(m)
    drops["false_detection"] = drops.get("false_detection", 0) + len(found) - len(m)
    out = []
    for ti, t in enumerate(formulas):
        r = m.get(ti)
        if r is None:
            continue
        toks = build_dataset.normalized_tokens(t["latex"], max_tokens, drops)
        if toks is None:
            continue
        if any(tok not in vocab_index for tok in toks):
            drops["unknown_token"] = drops.get("unknown_token", 0) + 1
            continue
        h, w = r["img"].shape
        if h > max_h or w > max_w:
            drops["too_big"] = drops.get("too_big", 0) + 1
            continue
        out.append({"img": r["img"], "ids": [vocab_index[tok] for tok in toks],
                    "style": STYLES.index(t["kind"]), "size_pt": int(round(r["font_size"])),
                    "latex": lt.detokenize(toks)})
    return out


def write_shard(out, name, samples, font_of, stats):
    idx = np.zeros(len(samples), dtype=build_dataset.INDEX_DTYPE)
    img_off = tok_off = 0
    with open(os.path.join(out, name + ".img.tmp"), "wb") as fi, \
            open(os.path.join(out, name + ".tok.tmp"), "wb") as ft:
        for i, s in enumerate(samples):
            h, w = s["img"].shape
            idx[i] = (img_off, tok_off, h, w, len(s["ids"]), font_of[s["setup"]], s["style"],
                      min(255, max(0, s["size_pt"])), 0, 0, 0.0)
            fi.write(np.ascontiguousarray(s["img"]).tobytes())
            ft.write(np.asarray(s["ids"], dtype="<i4").tobytes())
            img_off += h * w
            tok_off += len(s["ids"])
    np.save(os.path.join(out, name + ".idx.tmp.npy"), idx)
    for ext in (".img", ".tok"):
        os.replace(os.path.join(out, name + ext + ".tmp"), os.path.join(out, name + ext))
    os.replace(os.path.join(out, name + ".idx.tmp.npy"), os.path.join(out, name + ".idx.npy"))
    with open(os.path.join(out, name + ".json"), "w") as f:    # last: the done marker
        json.dump(stats, f)


def make_shard(job):
    """One seed: one PDF per set-up, cropped and paired; -> shard stats."""
    k, seed, setups, a, vocab_index, font_of, limits = job
    name = "pdf-%05d" % k
    if os.path.exists(os.path.join(a.out, name + ".json")):
        return json.load(open(os.path.join(a.out, name + ".json")))
    t0 = time.monotonic()
    c0 = os.times()
    wd = tempfile.mkdtemp(prefix="pdfcrops-", dir=a.out)
    samples, drops, per_setup, failed = [], {}, {}, []
    try:
        for doc, (engine, font) in enumerate(setups):
            # document `doc` of the seed: its own formulas (make-truth draws them from
            # seed*1000+doc), so a shard is not one handful of formulas in every font
            d = os.path.join(wd, "%s-%s" % (engine, font))
            r = subprocess.run(["/usr/bin/python3", MAKE_TRUTH, "--out", d, "--first", str(doc), "--count", "1",
                                "--seed", str(seed),
                                "--prefix", "crop", "--engine", engine, "--fonts", font, "--formulas", "corpus",
                                "--corpus", a.train_corpus], capture_output=True, text=True)
            pdfs = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".pdf")) if r.returncode == 0 else []
            if not pdfs:
                failed.append("%s/%s" % (engine, font))
                continue
            for pdf in pdfs:
                truth = json.load(open(pdf[:-4] + ".truth.json"))
                got = pair(truth, crop_pdf(a.pdf_crops, a.model, pdf), vocab_index, *limits, drops)
                for s in got:
                    s["setup"] = "%s/%s" % (engine, font)
                samples.extend(got)
                per_setup["%s/%s" % (engine, font)] = len(got)
    finally:
        shutil.rmtree(wd, ignore_errors=True)
    c1 = os.times()
    stats = {"split": "pdf", "shard": k, "seed": seed, "samples": len(samples), "dropped": drops,
             "by_setup": per_setup, "failed_setups": failed, "seconds": round(time.monotonic() - t0, 2),
             "process_seconds": round((c1.user + c1.system + c1.children_user + c1.children_system)
                                      - (c0.user + c0.system + c0.children_user + c0.children_system), 2),
             "img_bytes": int(sum(s["img"].size for s in samples)),
             "formulas_sha1": hashlib.sha1("\n".join(s["latex"] for s in samples).encode()).hexdigest()}
    write_shard(a.out, name, samples, font_of, stats)
    return stats


def write_meta(a, base_meta, fonts, shards, corpus_counts, wall):
    done = [json.load(open(os.path.join(a.out, n + ".json"))) for n in shards
            if os.path.exists(os.path.join(a.out, n + ".json"))]
    n = sum(s["samples"] for s in done)
    drops = {}
    by_setup = {}
    for s in done:
        for key, v in s["dropped"].items():
            drops[key] = drops.get(key, 0) + v
        for key, v in s["by_setup"].items():
            by_setup[key] = by_setup.get(key, 0) + v
    proc = sum(s["process_seconds"] for s in done)
    img_bytes = sum(s["img_bytes"] for s in done)
    meta = {k: base_meta[k] for k in ("em_px", "max_width", "max_height", "max_formula_tokens", "vocab_size",
                                      "cc_median_em", "normalizer_version") if k in base_meta}
    meta.update({
        "format_version": 1, "kind": "pdf-crops", "fonts": fonts, "styles": STYLES, "sources": ["texsrc-train"],
        "splits": {"pdf": {"samples": n, "augmented": 0, "dropped": drops,
                           "shards": [s_name for s_name in shards
                                      if os.path.exists(os.path.join(a.out, s_name + ".json"))],
                           "by": {"setup": by_setup}}},
        "corpus": {"path": os.path.relpath(a.corpus, ROOT), "formulas_by_source": corpus_counts},
        "generation": {"seeds": a.seeds, "model": os.path.relpath(a.model, ROOT), "pdf_crops": a.pdf_crops,
                       "process_seconds": round(proc, 1),
                       "samples_per_process_minute": round(60 * n / proc, 1) if proc else None,
                       "last_run_wall_seconds": round(wall, 1),
                       "img_bytes_per_sample": round(img_bytes / n, 1) if n else None,
                       "git_commit": build_dataset.git_commit(),
                       "updated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")},
    })
    tmp = os.path.join(a.out, "meta.json.tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(tmp, os.path.join(a.out, "meta.json"))
    return meta


def parse_seeds(text):
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    bad = [s for s in out if not 7000 <= s <= 7999]
    if bad:
        # bench seeds are 1000-2999; 7000-7999 are training PDFs' (issue 12)
        sys.exit("pdf_crops: seeds must lie in 7000-7999 (got %s)" % bad[:5])
    return out


def model_meta(path):
    """The metadata of a model file's safetensors header (no tensors read)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n).decode("utf-8"))["__metadata__"]


def model_vocab(path):
    return json.loads(model_meta(path)["formulate.vocab"])


def detok(vocab, ids):
    return lt.detokenize([vocab[i] for i in ids])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", required=True, help="make-truth seeds, e.g. 7000-7011 (only 7000-7999)")
    ap.add_argument("--engines", default="pdflatex,xelatex,lualatex")
    ap.add_argument("--fonts", help="only these set-ups (comma-separated; default every one make-truth knows)")
    ap.add_argument("--include-held-out", action="store_true", help="also stix2, fourier, stix2-math")
    ap.add_argument("--data", default=os.path.join(ROOT, "work", "data-std"),
                    help="dataset whose vocab.json and meta limits the shards use (default work/data-std)")
    ap.add_argument("--model", default=os.path.join(ROOT, "data", "models", "formulate-v1.safetensors"),
                    help="model whose preprocessing config pdf-crops uses (its vocabulary must be --data's)")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--pdf-crops", default=os.environ.get("FM_PDF_CROPS", os.path.join(ROOT, "build", "tools", "pdf-crops")))
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    a.seeds = parse_seeds(a.seeds)
    if not os.access(a.pdf_crops, os.X_OK):
        sys.exit("pdf_crops: build it first: ninja -C build tools/pdf-crops (or --pdf-crops)")
    vocab = json.load(open(os.path.join(a.data, "vocab.json")))
    if model_vocab(a.model) != vocab:
        sys.exit("pdf_crops: %s/vocab.json differs from %s's vocabulary" % (a.data, a.model))
    base_meta = json.load(open(os.path.join(a.data, "meta.json")))
    os.makedirs(a.out, exist_ok=True)
    if os.path.exists(os.path.join(a.out, "vocab.json")) and json.load(open(os.path.join(a.out, "vocab.json"))) != vocab:
        sys.exit("pdf_crops: %s/vocab.json differs from %s's: start a new directory" % (a.out, a.data))
    shutil.copyfile(os.path.join(a.data, "vocab.json"), os.path.join(a.out, "vocab.json"))
    a.train_corpus = os.path.join(a.out, "corpus-train")
    corpus_counts = train_corpus(a.corpus, a.train_corpus)
    log("corpus: %s" % json.dumps(corpus_counts))

    setups = [(e, f) for e in a.engines.split(",") for f in SETUPS[e]
              if (a.include_held_out or f not in HELD_OUT) and (not a.fonts or f in a.fonts.split(","))]
    fonts = ["%s/%s" % (e, f) for e in SETUPS for f in SETUPS[e]]
    font_of = {name: i for i, name in enumerate(fonts)}
    vocab_index = {t: i for i, t in enumerate(vocab)}
    limits = (base_meta.get("max_formula_tokens", 150), base_meta["max_height"], base_meta["max_width"])
    # shard k <-> seeds[k]: stable names when the seed list grows
    shards = ["pdf-%05d" % (s - 7000) for s in a.seeds]
    jobs = [(s - 7000, s, setups, a, vocab_index, font_of, limits) for s in a.seeds]
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for st in pool.map(make_shard, jobs):
            meta = write_meta(a, base_meta, fonts, shards, corpus_counts, time.monotonic() - t0)
            log("pdf-%05d (seed %d): %d samples in %.0f s, dropped %s%s; total %d, %.1f samples per process-minute"
                % (st["shard"], st["seed"], st["samples"], st["seconds"], st["dropped"],
                   ", failed " + ",".join(st["failed_setups"]) if st["failed_setups"] else "",
                   meta["splits"]["pdf"]["samples"], meta["generation"]["samples_per_process_minute"] or 0))


if __name__ == "__main__":
    main()
