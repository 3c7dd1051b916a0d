"""Scan-like degradations of clean renders: slight rotation, blur, resampling,
noise, JPEG artefacts, binarisation. The engine sees photos and scans as well
as PDF renders; the renders alone are too clean.

    augment(img, rng) -> uint8 image (0 = ink, 255 = paper), cropped to ink
"""

import io

import numpy as np
from PIL import Image, ImageFilter

INK_LEVEL = 200   # after degradation, what counts as ink when re-cropping


def crop_to_ink(img, margin=2, level=INK_LEVEL):
    mask = img < level
    rows = np.flatnonzero(mask.any(axis=1))
    cols = np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    y0, y1, x0, x1 = rows[0], rows[-1], cols[0], cols[-1]
    out = np.full((y1 - y0 + 1 + 2 * margin, x1 - x0 + 1 + 2 * margin), 255, np.uint8)
    out[margin:margin + y1 - y0 + 1, margin:margin + x1 - x0 + 1] = img[y0:y1 + 1, x0:x1 + 1]
    return out


def augment(img, rng):
    """rng: numpy Generator. Applies at least one degradation."""
    pil = Image.fromarray(img)
    ops = [k for k, p in (("rotate", 0.35), ("blur", 0.45), ("resample", 0.3),
                          ("noise", 0.45), ("jpeg", 0.4), ("binarise", 0.15))
           if rng.random() < p]
    if not ops:
        ops = [str(rng.choice(["blur", "noise", "jpeg"]))]
    # pad first so rotation and blur do not clip at the edges
    pad = Image.new("L", (pil.width + 8, pil.height + 8), 255)
    pad.paste(pil, (4, 4))
    pil = pad
    if "rotate" in ops:
        pil = pil.rotate(float(rng.uniform(-1.5, 1.5)), resample=Image.BICUBIC, expand=True,
                         fillcolor=255)
    if "resample" in ops:
        f = float(rng.uniform(0.6, 0.9))
        small = pil.resize((max(1, int(pil.width * f)), max(1, int(pil.height * f))),
                           Image.BILINEAR)
        pil = small.resize(pil.size, Image.BILINEAR)
    if "blur" in ops:
        pil = pil.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.3, 0.9))))
    # crop on the still noise-free image: noise would count as ink
    a = crop_to_ink(np.asarray(pil))
    if a is None:
        return None, ops
    a = a.astype(np.float32)
    if "noise" in ops:
        # binarised noise is speckle all over: keep it faint then
        sigma = float(rng.uniform(2, 6)) if "binarise" in ops else float(rng.uniform(3, 18))
        a = a + rng.normal(0.0, sigma, a.shape)
        # a slightly grey paper, as on scans
        a = a - float(rng.uniform(0, 25)) * (a > 128)
    a = np.clip(a, 0, 255).astype(np.uint8)
    if "jpeg" in ops:
        buf = io.BytesIO()
        Image.fromarray(a).save(buf, format="JPEG", quality=int(rng.integers(15, 60)))
        buf.seek(0)
        a = np.asarray(Image.open(buf).convert("L"))
    if "binarise" in ops:
        # threshold between the darkest ink and the paper: a fixed level
        # either loses thin blurred strokes or merges strokes into blobs
        lo, hi = float(a.min()), float(np.median(a))
        t = lo + (hi - lo) * float(rng.uniform(0.5, 0.75))
        a = np.where(a < t, 0, 255).astype(np.uint8)
    return a, ops
