#!/usr/bin/python3
"""List and group the false inline regions of a detection run (docs/detection.md).

  /usr/bin/python3 tools/pdf-truth/false-inline.py --truth DIR --pred DIR [-v]

Same matching as score.py (same kind, IoU >= 0.5, greedy). Each predicted
inline region that matches no truth region is printed (-v) with the truth
regions it overlaps (kind and LaTeX), and counted by a keyword rule over
that LaTeX: a display's piece taken inline, a split at an upright word or
unit, at a comma inside brackets, at a big operator or fraction, at a
\\setminus, two or more formulas merged, prose (no truth under it), other
splits. -v also lists the missed inline truth regions with the predictions
over them.
"""
import argparse
import collections
import glob
import json
import os

from truth_match import area, greedy_match, inter, iou
import re


def kind_of(tag, ov):
    lat = " ".join(t.get("latex", "") for t in ov)
    if any(t["kind"] == "display" for t in ov):
        return "display piece taken inline"
    if tag == "nothing":
        return "prose"
    if tag.startswith("spans"):
        return "merged"
    flat = lat.replace(" ", "")
    if re.search(r"\(.*,.*\)", lat) and re.search(r"[(\[]\w*,|,\\ldots|,\w\)", flat):
        return "comma in brackets"
    if re.search(r"\\(text|mathrm|operatorname)", lat):
        return "upright word/unit"
    if re.search(r"\\(int|sum|frac|dfrac|sqrt|lim)", lat):
        return "big operator/fraction"
    if "setminus" in lat:
        return "setminus gap"
    return "other split"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--pred", required=True)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    count = collections.Counter()
    n_miss = 0
    for tf in sorted(glob.glob(os.path.join(a.truth, "*.truth.json"))):
        name = os.path.basename(tf)[:-len(".truth.json")]
        tj = json.load(open(tf))
        font = "%s/%s" % (tj.get("font_setup", "?"), tj.get("engine", "?"))
        truth = tj["regions"]
        pj = os.path.join(a.pred, name + ".json")
        if not os.path.exists(pj):
            continue
        preds = json.load(open(pj))["regions"]
        mt, mp = greedy_match(truth, preds, lambda r: r["page"], lambda r: r["kind"], lambda r: r["box"])
        for j, p in enumerate(preds):
            if j in mp or p["kind"] != "inline":
                continue
            ov = [t for t in truth if t["page"] == p["page"] and inter(t["box"], p["box"]) > 0]
            if not ov:
                tag = "nothing"
            elif any(iou(t["box"], p["box"]) >= 0.5 and t["kind"] != "inline" for t in ov):
                tag = "wrongkind"
            elif len(ov) > 1:
                tag = "spans%d" % len(ov)
            elif inter(ov[0]["box"], p["box"]) > 0.8 * area(p["box"]):
                tag = "frag"
            else:
                tag = "overlap"
            k = kind_of(tag, ov)
            count[k] += 1
            if a.verbose:
                print("FP %s %s p%d %s [%s] %r | %s" % (name, font, p["page"], tag, k, p.get("text", ""),
                      " || ".join("%s:%s" % (t["kind"][0], t.get("latex", "")) for t in ov)))
        for i, t in enumerate(truth):
            if i in mt or t["kind"] != "inline":
                continue
            n_miss += 1
            if a.verbose:
                ov = [p for p in preds if p["page"] == t["page"] and inter(t["box"], p["box"]) > 0]
                print("MISS %s %s p%d %s | %s" % (name, font, t["page"], t.get("latex", ""),
                      " ; ".join("%s:%r" % (p["kind"][0], p.get("text", "")) for p in ov)))
    print("false inline regions: %d, missed inline: %d" % (sum(count.values()), n_miss))
    for k, v in count.most_common():
        print("%4d %s" % (v, k))


if __name__ == "__main__":
    main()
