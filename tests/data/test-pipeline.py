#!/usr/bin/python3
"""tools/data end to end on a tiny corpus, one font: pdflatex batch with a
failing formula in the middle, render-crops, shards, reader, resume.
Skipped (exit 77) without pdflatex or render-crops."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.environ.get("FE_SOURCE_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "data"))
import latex_tokens as lt  # noqa: E402
import generate_formulas  # noqa: E402
import render_batch  # noqa: E402
from dataset_reader import Dataset  # noqa: E402

render_crops = os.environ.get("FM_RENDER_CROPS") or render_batch.find_render_crops()
if not shutil.which("pdflatex"):
    print("SKIP: pdflatex not installed")
    sys.exit(77)
if not render_crops or not os.access(render_crops, os.X_OK):
    print("SKIP: render-crops not built (needs poppler-glib and cairo)")
    sys.exit(77)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


tmp = tempfile.mkdtemp(prefix="fm-data-test-")
try:
    # 1. a failing formula must not shift the pages of the others
    res = render_batch.render_formulas(
        os.path.join(tmp, "batch"), ["x", "\\mathscr{x}", "\\frac{a}{b", "x+y+z+w"],
        ["inline"] * 4, "cm", 10, render_crops=render_crops)
    status = [r[0] for r in res]
    check(status == ["ok", "compile", "compile", "ok"], f"batch statuses {status}")
    if status[0] == "ok" and status[3] == "ok":
        a, b = res[0][1], res[3][1]
        check(b.shape[1] > 3 * a.shape[1], f"pages out of order: {a.shape} {b.shape}")
        # 1 em = 20 px at 10 pt: an x is about half an em high
        check(8 <= a.shape[0] - 4 <= 14, f"x height {a.shape[0] - 4} px off the scale rule")
        check(a.min() < 64 and a[0].min() == 255, "ink inside a white margin")

    # other rasterisers (issue 13 section 3): same pages, same scale rule, white margin
    import rasterise
    for name in rasterise.available():
        for dpi, aa in ((96, False), (300, True)):
            r2 = render_batch.render_formulas(
                os.path.join(tmp, "raster-%s-%d" % (name, dpi)), ["x", "\\mathscr{x}", "\\frac{a}{b", "x+y+z+w"],
                ["inline"] * 4, "cm", 10, render_crops=render_crops, raster=(name, dpi, aa))
            check([r[0] for r in r2] == status and all(r[3] for r in r2 if r[0] == "ok"),
                  f"{name} {dpi} dpi: statuses {[r[0] for r in r2]}, every ok page redrawn")
            if status[0] == "ok" and status[3] == "ok":
                a2, b2 = r2[0][1], r2[3][1]
                check(abs(a2.shape[0] - res[0][1].shape[0]) <= 3 and abs(b2.shape[1] - res[3][1].shape[1]) <= 4,
                      f"{name} {dpi} dpi: sizes {a2.shape} {b2.shape} vs render-crops "
                      f"{res[0][1].shape} {res[3][1].shape}")
                check(a2.min() < 96 and a2[0].min() == 255 and a2[:, 0].min() == 255,
                      f"{name} {dpi} dpi: ink inside a white margin")

    # a formula that sends TeX into a loop is found and dropped, not waited on
    saved = render_batch.batch_timeout
    render_batch.batch_timeout = lambda n: 8
    try:
        keep, failed, pdf = render_batch.compile_batch(
            os.path.join(tmp, "hang"), ["x", "\\def\\loop{\\loop}\\loop", "y"],
            ["inline"] * 3, "cm", 10)
    finally:
        render_batch.batch_timeout = saved
    check(keep == [0, 2] and failed == [1] and pdf is not None,
          f"looping formula: kept {keep}, failed {failed}")

    # 2. dataset end to end on a tiny corpus
    corpus = os.path.join(tmp, "corpus", "texsrc")
    os.makedirs(corpus)
    rng = random.Random(3)
    forms = []
    while len(forms) < 150:
        try:
            forms.append(lt.detokenize(lt.normalize(generate_formulas.generate(rng))))
        except lt.NormalizeError:
            pass
    with open(os.path.join(corpus, "lebl-ra.display.txt"), "w") as f:
        f.write("\n".join(forms[:100]) + "\n\\undefinedcommand x\n")
    with open(os.path.join(corpus, "crowell-lm.inline.txt"), "w") as f:
        f.write("\n".join(forms[100:]) + "\n")
    out = os.path.join(tmp, "ds")
    cmd = [sys.executable, os.path.join(ROOT, "tools", "data", "build_dataset.py"),
           "--out", out, "--corpus", os.path.join(tmp, "corpus"), "--train-samples", "60",
           "--shard-size", "30", "--val-samples", "3", "--test-samples", "3",
           "--fonts", "cm", "--jobs", "1", "--render-crops", render_crops, "--other-rasterisers", "0.5"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    print(run.stdout[-2000:], run.stderr[-2000:])
    check(run.returncode == 0, "build_dataset failed")
    meta = json.load(open(os.path.join(out, "meta.json")))
    check(meta["corpus"]["dropped_before_render"].get("unknown_command") == 1,
          "dropped formula not counted")
    check(meta["vocab_size"] == len(json.load(open(os.path.join(out, "vocab.json")))),
          "vocab size")
    check(meta["cc_median_em"] is not None and 0.2 < meta["cc_median_em"] < 0.8,
          f"cc_median_em {meta['cc_median_em']}")
    vocab = json.load(open(os.path.join(out, "vocab.json")))
    check(vocab[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"], "specials at 0-3")
    held_out = set()
    for split in ("val", "test"):
        ds = Dataset(out, split)
        for i in range(len(ds)):
            held_out.add(lt.detokenize(ds.tokens(ds[i][1])))
    ds = Dataset(out, "train")
    check(len(ds) >= 55, f"train samples {len(ds)}")
    n_aug = 0
    for i in range(len(ds)):
        img, ids, info = ds[i]
        toks = ds.tokens(ids)
        s = lt.detokenize(toks)
        check(lt.tokenize(s) == toks, "stored tokens round trip")
        check(s not in held_out, "a held-out formula is in train: " + s)
        check(0 < img.shape[0] <= 256 and 0 < img.shape[1] <= 1536, f"image size {img.shape}")
        check(info["font"] == "cm" and 9 <= info["size_pt"] <= 12, f"info {info}")
        check(min(ids) >= 4, "special token inside a formula")
        n_aug += info["augmented"]
    check(0 < n_aug < len(ds), f"augmented {n_aug} of {len(ds)}")
    shard_stats = {n: json.load(open(os.path.join(out, n + ".json"))) for n in ("train-00000", "train-00001", "val-00000")}
    n_redrawn = sum(sum(st.get("rasterised", {}).values()) for n, st in shard_stats.items() if n.startswith("train"))
    check(0 < n_redrawn < len(ds), f"--other-rasterisers 0.5 redrew {n_redrawn} of {len(ds)} train samples")
    check(not shard_stats["val-00000"]["rasterised"], "val stays rendered by render-crops")
    # 3. resume: a second run finds every shard done and changes nothing
    before = {p: os.path.getmtime(os.path.join(out, p)) for p in os.listdir(out)
              if p.endswith(".img")}
    run2 = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    check(run2.returncode == 0 and "0 shards to do" in run2.stdout, "resume redid work")
    after = {p: os.path.getmtime(os.path.join(out, p)) for p in before}
    check(before == after, "resume rewrote shards")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("FAILED %d checks" % len(failures) if failures else "ok")
sys.exit(1 if failures else 0)
