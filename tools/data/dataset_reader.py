#!/usr/bin/python3
"""Reference reader for the packed shards (format: README.md).

    ds = Dataset("/work/main/work/data", "train")
    len(ds); img, ids, info = ds[i]     # img uint8 [h, w] (0 = ink), ids int32 [n]

    dataset_reader.py DIR [SPLIT] [--dump N OUTDIR]   summary, or N sample PNGs
"""

import json
import os
import sys

import numpy as np


class Dataset:
    def __init__(self, root, split):
        self.root = root
        self.meta = json.load(open(os.path.join(root, "meta.json")))
        self.vocab = json.load(open(os.path.join(root, "vocab.json")))
        self.shards = []
        for name in self.meta["splits"][split]["shards"]:
            base = os.path.join(root, name)
            idx = np.load(base + ".idx.npy")
            img = np.memmap(base + ".img", dtype=np.uint8, mode="r") if idx.size else None
            tok = np.memmap(base + ".tok", dtype="<i4", mode="r") if idx.size else None
            self.shards.append((idx, img, tok))
        self.starts = np.cumsum([0] + [len(s[0]) for s in self.shards])

    def __len__(self):
        return int(self.starts[-1])

    def __getitem__(self, i):
        s = int(np.searchsorted(self.starts, i, side="right") - 1)
        idx, img, tok = self.shards[s]
        r = idx[i - self.starts[s]]
        h, w = int(r["h"]), int(r["w"])
        image = np.asarray(img[r["img_offset"]:r["img_offset"] + h * w]).reshape(h, w)
        ids = np.asarray(tok[r["tok_offset"]:r["tok_offset"] + r["n_tokens"]])
        info = {"font": self.meta["fonts"][r["font"]], "style": self.meta["styles"][r["style"]],
                "size_pt": int(r["size_pt"]), "source": self.meta["sources"][r["source"]],
                "augmented": bool(r["augmented"]), "cc_median_px": float(r["cc_median_px"])}
        return image, ids, info

    def tokens(self, ids):
        return [self.vocab[int(i)] for i in ids]


def main(argv):
    root = argv[0]
    split = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else "train"
    ds = Dataset(root, split)
    print("%s: %d samples in %d shards, vocab %d" % (split, len(ds), len(ds.shards),
                                                    len(ds.vocab)))
    if "--dump" in argv:
        from PIL import Image
        import latex_tokens
        k = argv.index("--dump")
        n, outdir = int(argv[k + 1]), argv[k + 2]
        os.makedirs(outdir, exist_ok=True)
        for i in range(min(n, len(ds))):
            img, ids, info = ds[i]
            Image.fromarray(img).save(os.path.join(outdir, "%05d.png" % i))
            print(i, info["font"], info["size_pt"], info["style"], info["source"],
                  "aug" if info["augmented"] else "", latex_tokens.detokenize(ds.tokens(ids)))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main(sys.argv[1:]))
