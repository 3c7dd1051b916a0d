#!/usr/bin/python3
"""Make scanned twins of truth PDFs: image-only PDFs with the same truth boxes.

Every page of IN.pdf is rasterised (pdftoppm, gray) at --dpi, degraded as a
scanner or a photocopier would - a skew of up to --max-skew degrees about the
page centre, blur, gaussian noise, then either binarisation (a fax/copier
threshold, now and then a light copy's thin, broken strokes) or JPEG compression;
on some pages also a lower-resolution scanner's soft strokes or uneven light - and written back as one image per page into
an image-only PDF (Pillow's PDF writer: binarised pages as 1-bit CCITT G4,
gray ones as JPEG; page size in points as the original,
so the twin's coordinates are the original's). The truth boxes of
IN.truth.json are turned with the skew (the box around the four turned
corners) and written as OUT.truth.json beside OUT.pdf, format
formulate-detect-truth-1 (bench/detect/README.md).

  /usr/bin/python3 tools/pdf-truth/scan-truth.py --in DIR_OR_PDF... --out DIR
      [--dpi 300] [--seed S] [--max-skew 2] [--degrade mixed|clean|binary|jpeg] [--no-extra]
      [--light]

The degradations are drawn per page from --seed; keep the seeds used while
developing the pixel detector apart from the seeds it is scored on (the scored
seeds are in docs/scanned.md).
"""
import argparse
import glob
import io
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, ImageFilter


def rasterise(pdf, dpi, tmp):
    """Gray page images of pdf at dpi, in page order."""
    prefix = os.path.join(tmp, "page")
    subprocess.run(["pdftoppm", "-gray", "-r", str(dpi), pdf, prefix], check=True)
    files = sorted(glob.glob(prefix + "-*.pgm"), key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
    return [Image.open(f).convert("L") for f in files]


def page_sizes_pt(pdf):
    """(width, height) in points of each page as displayed (pdfinfo applies /Rotate)."""
    out = subprocess.run(["pdfinfo", "-f", "1", "-l", "100000", pdf], check=True,
                         capture_output=True, text=True).stdout
    sizes = []
    for line in out.splitlines():
        if line.startswith("Page") and "size:" in line:
            parts = line.split("size:")[1].split()
            w, h = float(parts[0]), float(parts[2])
            rot = 0
            sizes.append([w, h])
        elif line.startswith("Page") and "rot:" in line:
            rot = int(line.split("rot:")[1].split()[0])
            if rot % 180 == 90:
                sizes[-1] = [sizes[-1][1], sizes[-1][0]]
    return sizes


def degrade(img, rng, mode, max_skew, xrng=None, light=False):
    """The degraded page, the skew in degrees (counter-clockwise as seen) and
    what was done. xrng (None: none of them) draws the further degradations
    from a generator of its own, so that a seed's skew, blur, noise and
    binarisation stay what they were before these were added. light: every
    page a light copy (binarised near the ink), its other draws as they
    fall, so that a seed gives light copies with and without lowres/shade."""
    skew = rng.uniform(-max_skew, max_skew)
    # Turn about the centre, same canvas, white in the corners.
    img = img.rotate(skew, resample=Image.BICUBIC, expand=False, fillcolor=255)
    if mode == "clean":
        return img, skew, "clean"
    kind = mode if mode != "mixed" else rng.choice(["binary", "jpeg"])
    if light:
        kind = "binary"
    extras = []
    if xrng is not None:
        # A scanner of lower resolution (150-220 dpi at 300), the page
        # resampled up to the twin's resolution: soft, blocky strokes.
        if xrng.random() < 0.25:
            f = xrng.uniform(0.5, 0.75)
            w, h = img.size
            img = img.resize((max(1, int(w * f)), max(1, int(h * f))), Image.BILINEAR).resize((w, h), Image.BICUBIC)
            extras.append("lowres%.2f" % f)
        # Uneven light (a phone's photo, a book's gutter): the paper darkens
        # towards one side by up to a fifth of the ink's contrast.
        if xrng.random() < 0.25:
            a = np.asarray(img, dtype=np.float32)
            depth = xrng.uniform(20, 55)
            ramp = np.linspace(0.0, 1.0, a.shape[1], dtype=np.float32) ** 2
            if xrng.random() < 0.5:
                ramp = ramp[::-1]
            a = a - depth * ramp[None, :] * (a / 255.0)
            img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "L")
            extras.append("shade%.0f" % depth)
    radius = rng.uniform(0.3, 1.0) * img.width / 2550.0 * 2.0  # sigma 0.6..2 px at 300 dpi (0.14..0.48 pt)
    img = img.filter(ImageFilter.GaussianBlur(radius))
    a = np.asarray(img, dtype=np.float32)
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    a = a + nrng.normal(0.0, rng.uniform(4.0, 14.0), a.shape)
    # A scanner's paper is rarely pure white, its ink rarely pure black.
    lo, hi = rng.uniform(0, 40), rng.uniform(220, 255)
    a = lo + np.clip(a, 0, 255) * (hi - lo) / 255.0
    if kind == "binary":
        # Between paper and ink, nearer the paper: a copier keeps hairlines
        # (fraction bars, the thin strokes of CM) but thickens strokes.
        threshold = lo + (hi - lo) * rng.uniform(0.6, 0.75)
        # A light copy: the threshold near the ink thins the strokes and
        # breaks hairlines (fraction bars, serifs) into pieces.
        if xrng is not None and (xrng.random() < 0.3 or light):
            # Between paper and the darkest ink on the page: a lower-
            # resolution scanner's soft strokes are gray (0.2nd percentile
            # 125-145 for ink at lo 10), and a threshold drawn from lo
            # left 889 dark pixels of a page's text at 150 dpi and 4511
            # at 300 (make-truth seed 3255, twin seed 3255, page 1 of
            # dev-3255-00: a blank twin). The blur above does the same
            # to thin strokes (sigma up to 2 px at 300 dpi): a CM page at
            # sigma 1.97, threshold 0.40 from lo kept 9 % of its prose's
            # ink and 7 % of its formulas' - a blank page but for a bold
            # heading, which no reader of a copy would call one (make-truth
            # 2059, --light twin seed 20590, dev-2059-00; scanlight3). So
            # every light copy is measured from its darkest ink; a page of
            # full-strength ink (its 0.2nd percentile at lo) keeps lo, and
            # its twin as it was.
            ink = min(max(lo, float(np.percentile(a, 0.2))), (lo + hi) / 2.0)
            threshold = ink + (hi - ink) * xrng.uniform(0.3, 0.45)
            extras.append("light")
        # Salt-and-pepper specks, as on a copier's glass.
        specks = nrng.random(a.shape) < rng.uniform(0, 2e-4)
        a = np.where(a < threshold, 0, 255)
        a[specks] = 255 - a[specks]
        # 1 bit per pixel: Pillow writes it losslessly (CCITT G4), as a
        # fax or a copier's PDF would be, where gray goes through JPEG.
        img = Image.fromarray(a.astype(np.uint8), "L").convert("1")
    else:
        img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "L")
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=rng.randint(25, 70))
        img = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    return img, skew, "+".join([kind] + extras)


def turn_box(box, skew_deg, w, h):
    """The box around box's corners turned by skew_deg about the page centre,
    as PIL's rotate turns the picture (counter-clockwise as seen, y down)."""
    t = math.radians(skew_deg)
    c, s = math.cos(t), math.sin(t)
    cx, cy = w / 2.0, h / 2.0
    xs, ys = [], []
    for x, y in ((box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3])):
        dx, dy = x - cx, y - cy
        # Counter-clockwise on screen with y down: x' = x cos + y sin, y' = -x sin + y cos.
        xs.append(cx + dx * c + dy * s)
        ys.append(cy - dx * s + dy * c)
    return [round(min(xs), 3), round(min(ys), 3), round(max(xs), 3), round(max(ys), 3)]


def make_twin(pdf, out_dir, dpi, rng, mode, max_skew, xrng=None, light=False):
    name = os.path.basename(pdf)[:-4]
    truth_path = pdf[:-4] + ".truth.json"
    truth = json.load(open(truth_path)) if os.path.exists(truth_path) else None
    sizes = page_sizes_pt(pdf)
    with tempfile.TemporaryDirectory() as tmp:
        pages = rasterise(pdf, dpi, tmp)
    if len(pages) != len(sizes):
        sys.exit("%s: %d pages rendered, pdfinfo says %d" % (pdf, len(pages), len(sizes)))
    out_pages, skews, kinds = [], [], []
    for img in pages:
        d, skew, kind = degrade(img, rng, mode, max_skew, xrng, light)
        out_pages.append(d)
        skews.append(skew)
        kinds.append(kind)
    twin = "%s-scan%d" % (name, dpi)
    out_pdf = os.path.join(out_dir, twin + ".pdf")
    # Pillow writes each image at its resolution: dpi makes the page the
    # original's size in points.
    out_pages[0].save(out_pdf, "PDF", resolution=float(dpi), save_all=True, append_images=out_pages[1:])
    if truth is not None:
        regions = []
        for r in truth["regions"]:
            w, h = sizes[r["page"] - 1]
            q = dict(r)
            q["box"] = turn_box(r["box"], skews[r["page"] - 1], w, h)
            regions.append(q)
        t = dict(truth)
        t["pdf"] = twin + ".pdf"
        t["regions"] = regions
        t["scan"] = {"source": os.path.basename(pdf), "dpi": dpi,
                     "pages": [{"skew_deg": round(s, 3), "degradation": k} for s, k in zip(skews, kinds)]}
        with open(os.path.join(out_dir, twin + ".truth.json"), "w") as f:
            json.dump(t, f, indent=1)
    return out_pdf


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--in", dest="inputs", nargs="+", required=True, help="PDFs or folders of NAME.pdf + NAME.truth.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--dpi", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-skew", type=float, default=2.0)
    ap.add_argument("--degrade", choices=["mixed", "clean", "binary", "jpeg"], default="mixed")
    ap.add_argument("--no-extra", dest="extra", action="store_false",
                    help="without the degradations added on 2026-11-25 (a lower-resolution scanner, "
                         "uneven light, a light copy's thin strokes): the twins of a seed as before")
    ap.add_argument("--light", action="store_true",
                    help="every page a light copy (binarised near the ink: thin, broken strokes), "
                         "with lowres/shade drawn as in mixed; for twins of light copies only")
    a = ap.parse_args()
    if a.light and (not a.extra or a.degrade in ("clean", "jpeg")):
        sys.exit("--light needs the extra degradations and --degrade mixed or binary")
    if not 50 <= a.dpi <= 600:
        sys.exit("--dpi must be in 50..600")
    os.makedirs(a.out, exist_ok=True)
    pdfs = []
    for p in a.inputs:
        pdfs += sorted(glob.glob(os.path.join(p, "*.pdf"))) if os.path.isdir(p) else [p]
    rng = random.Random(a.seed)
    xrng = random.Random(a.seed * 7919 + 17) if a.extra else None
    for pdf in pdfs:
        print(make_twin(pdf, a.out, a.dpi, rng, a.degrade, a.max_skew, xrng, a.light))


if __name__ == "__main__":
    main()
