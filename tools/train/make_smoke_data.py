#!/usr/bin/python3
"""A tiny synthetic dataset in the data pipeline's shard format (tools/data/README.md), for smoke tests of
train.py / export.py / the benchmark without the real data pipeline:
short strings of digits and operators drawn with PIL's built-in bitmap font,
tokens = their characters.

  /usr/bin/python3 tools/train/make_smoke_data.py OUT_DIR [--train 512] [--val 64]
"""

import argparse
import json
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFont

SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]
CHARS = list("0123456789+-=xyab()")
MARGIN = 2


def render(text, scale):
    font = ImageFont.load_default()
    w = 6 * len(text) + 2 * MARGIN
    img = Image.new("L", (w, 11 + 2 * MARGIN), 255)
    ImageDraw.Draw(img).text((MARGIN, MARGIN), text, fill=0, font=font)
    if scale != 1:
        img = img.resize((img.width * scale, img.height * scale), Image.BILINEAR)
    return np.asarray(img, dtype=np.uint8)


# tools/data/build_dataset.py INDEX_DTYPE
INDEX_DTYPE = np.dtype([
    ("img_offset", "<i8"), ("tok_offset", "<i8"),
    ("h", "<u2"), ("w", "<u2"), ("n_tokens", "<u2"),
    ("font", "u1"), ("style", "u1"), ("size_pt", "u1"), ("source", "u1"),
    ("augmented", "u1"), ("cc_median_px", "<f4"),
])


def write_split(out, split, n, rng, vocab_index):
    """One shard NAME = {split}-00000; returns NAME."""
    idx = np.zeros(n, dtype=INDEX_DTYPE)
    imgs, toks = [], []
    off = 0
    for i in range(n):
        length = int(rng.integers(1, 12))
        text = "".join(rng.choice(CHARS, size=length))
        im = render(text, 2)
        ids = [vocab_index[c] for c in text]
        idx[i]["img_offset"], idx[i]["tok_offset"] = off, len(toks)
        idx[i]["h"], idx[i]["w"], idx[i]["n_tokens"] = im.shape[0], im.shape[1], len(ids)
        idx[i]["size_pt"] = 10
        imgs.append(im.tobytes())
        toks.extend(ids)
        off += im.size
    name = f"{split}-00000"
    stem = os.path.join(out, name)
    np.save(stem + ".idx.npy", idx)
    with open(stem + ".img", "wb") as f:
        f.write(b"".join(imgs))
    np.asarray(toks, dtype="<i4").tofile(stem + ".tok")
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--train", type=int, default=512)
    ap.add_argument("--val", type=int, default=64)
    ap.add_argument("--seed", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    vocab = SPECIALS + CHARS
    with open(os.path.join(a.out, "vocab.json"), "w") as f:
        json.dump(vocab, f)
    rng = np.random.default_rng(a.seed)
    index = {t: i for i, t in enumerate(vocab)}
    splits = {s: {"shards": [write_split(a.out, s, n, rng, index)], "samples": n}
              for s, n in (("train", a.train), ("val", a.val))}
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump({"format_version": 1, "normalizer_version": "smoke", "em_px": 20,
                   "max_height": 64, "max_width": 256, "splits": splits}, f, indent=1)


if __name__ == "__main__":
    main()
