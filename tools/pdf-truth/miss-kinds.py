#!/usr/bin/python3
"""Count detection misses and false boxes by kind (docs/scanned.md).

  /usr/bin/python3 tools/pdf-truth/miss-kinds.py --truth DIR --pred DIR [-v]

Same matching as score.py (same kind, IoU >= 0.5, greedy). Each unmatched
display or inline truth region is counted as: none (no detection overlaps
it), wrongkind (a detection of the other kind matches it), smaller (the
detections overlapping it lie inside it: the formula was cut; "1" or "n"
pieces), larger (a detection holds it and more: merged with a neighbour),
partial (anything else). Each unmatched detection is counted as: nothing
(no truth region under it: prose or a picture taken for math), wrongkind,
fragment (inside one truth region), spansN (over N truth regions) or
overlap. -v lists every miss with its LaTeX and every "nothing" box.
"""
import argparse
import collections
import glob
import json
import os

from truth_match import area, greedy_match, inter, iou


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--pred", required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    miss, fp = collections.Counter(), collections.Counter()
    for tf in sorted(glob.glob(os.path.join(a.truth, "*.truth.json"))):
        name = os.path.basename(tf)[:-len(".truth.json")]
        truth = [(r["page"], r["kind"], r["box"], r.get("latex", "")) for r in json.load(open(tf))["regions"]]
        preds = [(r["page"], r["kind"], r["box"])
                 for r in json.load(open(os.path.join(a.pred, name + ".json")))["regions"]]
        mt, mp = greedy_match(truth, preds, lambda r: r[0], lambda r: r[1], lambda r: r[2])
        for i, t in enumerate(truth):
            if i in mt or t[1] == "number":
                continue
            ov = [p for p in preds if p[0] == t[0] and inter(t[2], p[2]) > 0]
            inside = [p for p in ov if inter(t[2], p[2]) > 0.8 * area(p[2])]
            holds = [p for p in ov if inter(t[2], p[2]) > 0.8 * area(t[2])]
            if not ov:
                c = "none"
            elif any(iou(t[2], p[2]) >= 0.5 and p[1] != t[1] for p in ov):
                c = "wrongkind"
            elif inside and not holds:
                c = "smaller(%s)" % ("1" if len(ov) == 1 else "n")
            elif holds:
                c = "larger"
            else:
                c = "partial"
            miss[(t[1], c)] += 1
            if a.verbose:
                print("MISS %s p%d %s %s %s" % (name, t[0], t[1], c, t[3]))
        for j, p in enumerate(preds):
            if j in mp or p[1] == "number":
                continue
            ov = [t for t in truth if t[0] == p[0] and inter(t[2], p[2]) > 0]
            if not ov:
                c = "nothing"
            elif any(iou(t[2], p[2]) >= 0.5 and p[1] != t[1] for t in ov):
                c = "wrongkind"
            elif len(ov) > 1:
                c = "spans%d" % len(ov)
            elif inter(ov[0][2], p[2]) > 0.8 * area(p[2]):
                c = "fragment"
            else:
                c = "overlap"
            fp[(p[1], c)] += 1
            if a.verbose and c == "nothing":
                print("FP   %s p%d %s %s" % (name, p[0], p[1], [round(v, 1) for v in p[2]]))
    for kind in ("display", "inline"):
        print("%s misses: %s" % (kind, ", ".join("%s %d" % (k[1], v) for k, v in sorted(miss.items()) if k[0] == kind)))
        print("%s false boxes: %s" % (kind, ", ".join("%s %d" % (k[1], v) for k, v in sorted(fp.items()) if k[0] == kind)))


if __name__ == "__main__":
    main()
