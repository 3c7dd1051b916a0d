"""Other rasterisers for the training data (issue 13 section 3).

render-crops draws every page with the app's own Poppler+Cairo renderer at
exactly em_px pixels per em. Screenshots, scans and image files come from other
rasterisers at other resolutions: Poppler's Splash (pdftoppm) or Ghostscript,
96-300 dpi, with or without antialiasing (without it, glyph edges snap to the
pixel grid like hinted screen text). The engine then rescales such an image by
its estimated glyph scale. This module imitates that path: the page is
rasterised by another program at a drawn dpi, cropped to its ink (+2 px, like
render-crops) and resampled to em_px per em by the known font size, so the
model learns those edge profiles and resampling artefacts; the scale error of
the estimate itself is train.py's --scale-jitter.
"""

import os
import shutil
import subprocess

import numpy as np

DPI_RANGE = (96, 300)
MARGIN = 2
INK_THRESHOLD = 250  # gray < this counts as ink when cropping


def available():
    """Rasterisers installed here (poppler-utils is a build dependency; ghostscript optional)."""
    have = []
    if shutil.which("pdftoppm"):
        have.append("pdftoppm")
    if shutil.which("gs"):
        have.append("gs")
    return have


def draw_setting(rng, rasterisers):
    """One (rasteriser, dpi, antialias) for a batch, from a numpy Generator."""
    name = rasterisers[int(rng.integers(len(rasterisers)))]
    dpi = int(rng.integers(DPI_RANGE[0], DPI_RANGE[1] + 1))
    return name, dpi, bool(rng.random() < 0.5)


def _read_pgm(path):
    from PIL import Image
    with Image.open(path) as im:
        return np.asarray(im.convert("L"), dtype=np.uint8)


def rasterise_pages(pdf, n_pages, setting, workdir):
    """-> list of n_pages gray uint8 page images (0 = ink) drawn by `setting`."""
    name, dpi, aa = setting
    out = os.path.join(workdir, "raster")
    os.makedirs(out, exist_ok=True)
    if name == "pdftoppm":
        onoff = "yes" if aa else "no"
        cmd = ["pdftoppm", "-gray", "-r", str(dpi), "-aa", onoff, "-aaVector", onoff, pdf,
               os.path.join(out, "p")]
    elif name == "gs":
        bits = "4" if aa else "1"
        cmd = ["gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=pgmraw", "-r%d" % dpi,
               "-dTextAlphaBits=" + bits, "-dGraphicsAlphaBits=" + bits,
               # without antialiasing, snap glyphs to the pixel grid as screen text is
               "-dAlignToPixels=%d" % (0 if aa else 1),
               "-sOutputFile=" + os.path.join(out, "p-%d.pgm"), pdf]
    else:
        raise ValueError(f"unknown rasteriser {name!r}")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60 + 2 * n_pages)
    files = sorted((f for f in os.listdir(out) if f.endswith(".pgm")),
                   key=lambda f: int(f.rsplit("-", 1)[1].split(".")[0]))
    if len(files) != n_pages:
        raise RuntimeError(f"{name} wrote {len(files)} pages, expected {n_pages}")
    pages = [_read_pgm(os.path.join(out, f)) for f in files]
    shutil.rmtree(out, ignore_errors=True)
    return pages


def crop_and_scale(page, size_pt, dpi, em_px, max_h, max_w):
    """Ink bounding box + MARGIN, resampled so one em (size_pt) is em_px pixels.
    None when the page is blank or the result does not fit max_h x max_w."""
    from PIL import Image
    ink = page < INK_THRESHOLD
    # a page edge that falls inside a pixel comes out light gray with antialiasing: not ink
    # (the preview border keeps real ink 2 pt away from the edge)
    ink[:2, :] = ink[-2:, :] = False
    ink[:, :2] = ink[:, -2:] = False
    rows, cols = np.nonzero(ink.any(axis=1))[0], np.nonzero(ink.any(axis=0))[0]
    if len(rows) == 0:
        return None
    crop = page[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    factor = em_px / (size_pt * dpi / 72.0)
    h, w = crop.shape
    nh, nw = max(1, int(round(h * factor))), max(1, int(round(w * factor)))
    resample = Image.BOX if factor < 1.0 else Image.BILINEAR
    img = np.asarray(Image.fromarray(crop).resize((nw, nh), resample), dtype=np.uint8)
    img = np.pad(img, MARGIN, constant_values=255)
    if img.shape[0] > max_h or img.shape[1] > max_w:
        return None
    return img


def bench(n=32, font="cm", size_pt=10):
    """CPU seconds (this process + children) of one n-formula batch per setting."""
    import tempfile
    import time
    import render_batch
    forms = [r"\sum_{i=1}^{n} i^2 = \frac{n(n+1)(2n+1)}{6}", r"\int_0^\infty e^{-x^2}\,dx=\frac{\sqrt\pi}{2}",
             r"\mathbb{R}^n \xrightarrow{f} \mathbb{C}", r"\begin{pmatrix}a&b\\c&d\end{pmatrix}"]
    forms = (forms * n)[:n]
    settings = [None] + [(name, dpi, aa) for name in available() for dpi, aa in ((96, False), (300, True))]
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(2):  # the first round warms caches; both are printed
            for st in settings:
                c0, t0 = os.times(), time.monotonic()
                render_batch.render_formulas(os.path.join(tmp, str(st)), forms, ["display"] * n, font, size_pt,
                                             raster=st, em_px=20, max_w=1536, max_h=256)
                c1 = os.times()
                cpu = sum(c1[:4]) - sum(c0[:4])
                print(f"round {rnd} {st or 'render-crops only'}: {cpu:.2f} s CPU, "
                      f"{time.monotonic() - t0:.2f} s wall for {n} formulas", flush=True)


if __name__ == "__main__":
    # FM_RENDER_CROPS=build/tools/render-crops /usr/bin/python3 tools/data/rasterise.py
    bench()
