#!/usr/bin/python3
"""tools/data/pdf_crops.py and <build>/tools/pdf-crops on a committed fixture PDF
(tests/fixtures/pdf/truth-1-00.pdf, no TeX needed): the regions are formulate-cli's
own (same count, pages and boxes as `pdf --detect-only`), each image is what the
engine's preprocessing leaves (stride multiples, paper margin, ink inside), the
pairing gives each matched truth formula its normalised tokens, and a written
shard reads back through tools/train/dataset.py unchanged."""

import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch  # noqa: F401  (tools/train/model.py: the strides)
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

ROOT = os.environ.get("FE_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PDF_CROPS = os.environ.get("FM_PDF_CROPS", "")
CLI = os.environ.get("FORMULATE_CLI", "")
if not (os.access(PDF_CROPS, os.X_OK) and os.access(CLI, os.X_OK)):
    print("SKIP: pdf-crops or formulate-cli not built (FM_PDF_CROPS, FORMULATE_CLI)")
    sys.exit(77)
sys.path.insert(0, os.path.join(ROOT, "tools", "data"))
sys.path.insert(0, os.path.join(ROOT, "tools", "train"))
import dataset  # noqa: E402
import latex_tokens as lt  # noqa: E402
import pdf_crops  # noqa: E402

MODEL = os.path.join(ROOT, "data", "models", "formulate-v1.safetensors")
PDF = os.path.join(ROOT, "tests", "fixtures", "pdf", "truth-1-00.pdf")


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)
    print("ok: " + what)


def main():
    recs = pdf_crops.crop_pdf(PDF_CROPS, MODEL, PDF)
    r = subprocess.run([CLI, "pdf", "--detect-only", "--format", "json", "--quiet", PDF],
                       capture_output=True, text=True, check=True)
    found = [g for g in json.loads(r.stdout)["regions"] if g["kind"] != "number"]
    check(len(recs) == len(found) > 0, "%d regions, as formulate-cli finds (%d)" % (len(recs), len(found)))
    check(all(a["page"] == b["page"] and a["kind"] == b["kind"] and
              max(abs(x - y) for x, y in zip(a["box"], b["box"])) < 0.01 for a, b in zip(recs, found)),
          "same pages, kinds and boxes as formulate-cli")

    cfg = json.loads(pdf_crops.model_meta(MODEL)["formulate.config"])
    import model as M
    hs, ws = M.strides(cfg)
    ok = [x for x in recs if x["status"] == 0]
    check(len(ok) == len(recs), "every region cropped and preprocessed")
    margin = max(1, round(cfg["em_px"] / 10))
    check(all(x["img"].shape[0] % hs == 0 and x["img"].shape[1] % ws == 0 for x in ok),
          "images padded to the strides (%d, %d) as fe_preprocess pads them" % (hs, ws))
    check(all((x["img"][:margin] == 255).all() and (x["img"][:, :margin] == 255).all() for x in ok),
          "a paper margin of %d px at the top and left" % margin)
    check(all((x["img"] < 128).any() for x in ok), "ink in every image")

    truth = json.load(open(PDF[:-4] + ".truth.json"))
    vocab = pdf_crops.model_vocab(MODEL)
    drops = {}
    samples = pdf_crops.pair(truth, recs, {t: i for i, t in enumerate(vocab)}, 150, 256, 1536, drops)
    n_truth = sum(t["kind"] in ("display", "inline") for t in truth["regions"])
    check(len(samples) + sum(drops.values()) - drops.get("false_detection", 0) == n_truth,
          "every truth formula is a sample or a counted drop (%d samples, drops %s)" % (len(samples), drops))
    check(len(samples) >= n_truth // 2, "most truth formulas paired")
    norms = {lt.detokenize(lt.normalize(t["latex"])) for t in truth["regions"]}
    check(all(pdf_crops.detok(vocab, s["ids"]) in norms for s in samples),
          "each sample's tokens are a normalised truth formula")

    with tempfile.TemporaryDirectory(prefix="fm-pdfcrops-") as out:
        for s in samples:
            s["setup"] = "pdflatex/cm"
        pdf_crops.write_shard(out, "pdf-00000", samples, {"pdflatex/cm": 0}, {"samples": len(samples)})
        with open(os.path.join(out, "meta.json"), "w") as f:
            json.dump({"splits": {"pdf": {"shards": ["pdf-00000"]}}}, f)
        ds = dataset.ShardSet(out, "pdf", 256, 1536, 256)
        check(len(ds) == len(samples), "the shard reads back: %d samples" % len(ds))
        for k, s in enumerate(samples):
            ink, ids = ds.get(k)
            if not (np.array_equal(ids, s["ids"]) and np.allclose(ink, 1 - s["img"] / 255.0)):
                raise SystemExit("FAIL: sample %d differs after the round trip" % k)
        print("ok: images and tokens unchanged through tools/train/dataset.py")
    print("PASS")


if __name__ == "__main__":
    main()
