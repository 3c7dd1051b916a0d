"""Packed dataset shards for training formulate-v1, and the batching over them.

The format is the data pipeline's (tools/data/README.md, written by
tools/data/build_dataset.py, reference reader tools/data/dataset_reader.py):

  vocab.json               JSON array of token strings, id = index (ids 0-3 the specials)
  meta.json                {"splits": {split: {"shards": [name, ...]}}, "normalizer_version",
                            "em_px", "cc_median_em", "max_height", "max_width", ...}
  NAME.idx.npy             structured array, one record per sample: img_offset, tok_offset,
                           h, w, n_tokens (+ font, style, size_pt, source, augmented, cc_median_px)
  NAME.img                 uint8 gray images (0 = black ink, 255 = white), row-major
  NAME.tok                 int32 LE token ids without BOS/EOS

Images are what the engine's preprocessing leaves before stride padding (content
at the top-left with its margin); batching pads right and bottom with
background, and the model masks that padding, so a batch computes what the
engine computes for each image alone.
"""

import glob
import hashlib
import json
import os

import numpy as np
import torch


def load_vocab(directory):
    with open(os.path.join(directory, "vocab.json")) as f:
        v = json.load(f)
    if isinstance(v, dict):
        v = v.get("vocab") or v.get("tokens")
    if not isinstance(v, list) or v[:4] != ["<pad>", "<bos>", "<eos>", "<unk>"]:
        raise ValueError(f"{directory}/vocab.json: expected a token list starting with the 4 specials")
    return v


def load_meta(directory):
    with open(os.path.join(directory, "meta.json")) as f:
        return json.load(f)


def data_hash(directory):
    """sha256 over vocab.json and every index file: names the exact dataset
    cheaply (an index changes whenever images or tokens change)."""
    h = hashlib.sha256()
    for p in [os.path.join(directory, "vocab.json")] + sorted(glob.glob(os.path.join(directory, "*.idx.npy"))):
        h.update(os.path.basename(p).encode())
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


class ShardSet:
    """All samples of one split, memory-mapped."""

    def __init__(self, directory, split, max_height, max_width, max_tokens):
        self.shards = []
        names = load_meta(directory).get("splits", {}).get(split, {}).get("shards", [])
        if not names:
            raise FileNotFoundError(f"no {split} shards listed in {directory}/meta.json")
        refs = []
        skipped = 0
        for si, name in enumerate(names):
            base = os.path.join(directory, name)
            idx = np.load(base + ".idx.npy")
            if len(idx) == 0:
                self.shards.append((idx, None, None))
                continue
            img = np.memmap(base + ".img", dtype=np.uint8, mode="r")
            tok = np.memmap(base + ".tok", dtype="<i4", mode="r")
            h = idx["h"].astype(np.int64)
            w = idx["w"].astype(np.int64)
            n = idx["n_tokens"].astype(np.int64)
            if (idx["img_offset"] + h * w).max() > len(img) or (idx["tok_offset"] + n).max() > len(tok):
                raise ValueError(f"{base}: index points past the end of its .img/.tok")
            self.shards.append((idx, img, tok))
            # n + 1 decoder inputs (BOS + tokens) must fit the learned positions
            ok = (h <= max_height) & (w <= max_width) & (n + 1 <= max_tokens) & (h > 0) & (w > 0)
            skipped += int((~ok).sum())
            refs.extend((si, int(i)) for i in np.nonzero(ok)[0])
        self.refs = refs
        self.skipped = skipped
        self.hw = np.array([[int(self.shards[s][0][i]["h"]), int(self.shards[s][0][i]["w"])] for s, i in refs],
                           dtype=np.int64).reshape(-1, 2)
        self.ntok = np.array([int(self.shards[s][0][i]["n_tokens"]) for s, i in refs], dtype=np.int64)

    def __len__(self):
        return len(self.refs)

    def get(self, k):
        """(ink float32 [h, w], token ids np.int64 [n])."""
        si, i = self.refs[k]
        idx, img, tok = self.shards[si]
        r = idx[i]
        off, h, w = int(r["img_offset"]), int(r["h"]), int(r["w"])
        t0, n = int(r["tok_offset"]), int(r["n_tokens"])
        gray = np.asarray(img[off:off + h * w], dtype=np.float32).reshape(h, w)
        ids = np.asarray(tok[t0:t0 + n], dtype=np.int64)
        return 1.0 - gray / 255.0, ids


def round_up(v, m):
    return (v + m - 1) // m * m


def make_batches(ds, epoch, seed, hs, ws, max_pixels, max_batch, chunk=64):
    """Deterministic batches for one epoch: a seeded shuffle, then inside chunks
    of `chunk` batches' worth of samples a sort by (padded width, height, length)
    so a batch holds similar sizes (little padding); batches are capped by
    padded pixel count and by size, then shuffled. Same (seed, epoch) -> same
    batches, which makes resuming at a batch index exact."""
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(ds))
    ph = (ds.hw[:, 0] + hs - 1) // hs * hs
    pw = (ds.hw[:, 1] + ws - 1) // ws * ws
    batches = []
    span = max(1, chunk * max_batch)
    for c in range(0, len(order), span):
        part = order[c:c + span]
        part = part[np.lexsort((ds.ntok[part], ph[part], pw[part]))]
        cur = []
        cur_h = cur_w = 0
        for k in part:
            nh, nw = max(cur_h, ph[k]), max(cur_w, pw[k])
            if cur and (len(cur) >= max_batch or nh * nw * (len(cur) + 1) > max_pixels):
                batches.append(cur)
                cur, nh, nw = [], ph[k], pw[k]
            cur.append(int(k))
            cur_h, cur_w = nh, nw
        if cur:
            batches.append(cur)
    perm = rng.permutation(len(batches))
    return [batches[i] for i in perm]


def rescale_ink(ink, factor, max_h, max_w):
    """`ink` resized by `factor` (area-averaging when shrinking, bilinear when
    growing, as a screenshot or a rescaled scan would be), clipped so the result
    still fits max_h x max_w. Why: the engine normalises an image by its
    *estimated* glyph scale, and on screenshots and scans that estimate is off by
    tens of percent; a model that only ever saw glyphs at exactly em_px loses
    ~12 BLEU there (issue 13 section 3)."""
    h, w = ink.shape
    factor = min(factor, max_h / h, max_w / w)
    nh, nw = max(1, int(round(h * factor))), max(1, int(round(w * factor)))
    if (nh, nw) == (h, w):
        return ink
    from PIL import Image
    resample = Image.BOX if factor < 1.0 else Image.BILINEAR
    out = Image.fromarray(ink.astype(np.float32), mode="F").resize((nw, nh), resample)
    return np.clip(np.asarray(out, dtype=np.float32), 0.0, 1.0)


def scale_factors(n, jitter, rng):
    """n glyph-scale factors, log-uniform in [1/(1+jitter), 1+jitter]: as likely
    to shrink by a ratio as to grow by it (jitter 0.25 -> 0.80..1.25)."""
    if jitter <= 0:
        return np.ones(n)
    span = np.log1p(jitter)
    return np.exp(rng.uniform(-span, span, size=n))


def collate(ds, ks, hs, ws, pad_id, bos_id, eos_id, scales=None, max_hw=None):
    """-> pixels [B,1,H,W], valid_hw [B,2], dec_in [B,T], dec_target [B,T].
    `scales` (one factor per sample, scale_factors()) rescales each image first,
    kept within `max_hw` (max_height, max_width)."""
    items = [ds.get(k) for k in ks]
    if scales is not None:
        mh, mw = max_hw
        items = [(rescale_ink(im, float(f), mh, mw), t) for (im, t), f in zip(items, scales)]
    hh = [round_up(im.shape[0], hs) for im, _ in items]
    ww = [round_up(im.shape[1], ws) for im, _ in items]
    H, W = max(hh), max(ww)
    T = max(len(t) for _, t in items) + 1
    pixels = torch.zeros(len(items), 1, H, W)
    dec_in = torch.full((len(items), T), pad_id, dtype=torch.long)
    target = torch.full((len(items), T), pad_id, dtype=torch.long)
    for b, (im, t) in enumerate(items):
        pixels[b, 0, :im.shape[0], :im.shape[1]] = torch.from_numpy(im)
        n = len(t)
        dec_in[b, 0] = bos_id
        dec_in[b, 1:n + 1] = torch.from_numpy(t)
        target[b, :n] = torch.from_numpy(t)
        target[b, n] = eos_id
    valid_hw = torch.tensor([[h, w] for h, w in zip(hh, ww)], dtype=torch.long)
    return pixels, valid_hw, dec_in, target
