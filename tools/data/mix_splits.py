#!/usr/bin/python3
"""A dataset directory whose train split mixes shards of several datasets.

tools/train/train.py reads one --data directory and one train split. To
fine-tune on PDF crops (tools/data/pdf_crops.py, split `pdf`) without
forgetting the rendered set, this links every file of --base (work/data-std:
its val split stays the validation set) and the shards of each --add
DIR:SPLIT into --out, and lists them all as the train split of a copy of the
base's meta.json. `DIR:SPLIT*N` lists that split's shards N times (a share of
each epoch N times its size). Vocabularies must be identical (checked).

    /usr/bin/python3 tools/data/mix_splits.py --out work/mix --base work/data-std --add work/data-pdf:pdf
"""

import argparse
import json
import os
import sys


def link(src, dst):
    if os.path.lexists(dst):
        os.remove(dst)
    os.symlink(os.path.abspath(src), dst)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--base", required=True, help="dataset whose splits (train, val, test) are kept")
    ap.add_argument("--add", action="append", default=[], help="DIR:SPLIT or DIR:SPLIT*N, repeatable")
    a = ap.parse_args(argv)
    vocab = json.load(open(os.path.join(a.base, "vocab.json")))
    meta = json.load(open(os.path.join(a.base, "meta.json")))
    os.makedirs(a.out, exist_ok=True)
    for name in os.listdir(a.base):
        if name.endswith((".img", ".tok", ".idx.npy", ".json")) and name != "meta.json":
            link(os.path.join(a.base, name), os.path.join(a.out, name))
    train = list(meta["splits"]["train"]["shards"])
    added = {}
    for spec in a.add:
        d, _, split = spec.rpartition(":")
        split, _, times = split.partition("*")
        if json.load(open(os.path.join(d, "vocab.json"))) != vocab:
            sys.exit("mix_splits: %s/vocab.json differs from %s's" % (d, a.base))
        names = json.load(open(os.path.join(d, "meta.json")))["splits"][split]["shards"]
        for n in names:
            if n in meta["splits"]["train"]["shards"]:
                sys.exit("mix_splits: shard name %s is in both %s and %s" % (n, a.base, d))
            for ext in (".img", ".tok", ".idx.npy", ".json"):
                link(os.path.join(d, n + ext), os.path.join(a.out, n + ext))
        train += names * int(times or 1)
        added[spec] = len(names)
    meta["splits"]["train"] = dict(meta["splits"]["train"], shards=train)
    meta["mixed"] = {"base": os.path.abspath(a.base), "added_shards": added}
    tmp = os.path.join(a.out, "meta.json.tmp")      # atomic: train.py --reload-data may read it
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(tmp, os.path.join(a.out, "meta.json"))
    print("%s: train split of %d shards (%s)" % (a.out, len(train), ", ".join("%s %d" % kv for kv in added.items())))


if __name__ == "__main__":
    main()
