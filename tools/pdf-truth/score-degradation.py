#!/usr/bin/python3
"""Scanned twins' scores by degradation (docs/scanned.md, Scores).

  /usr/bin/python3 tools/pdf-truth/score-degradation.py --truth DIR --pred NAME=DIR [--pred NAME=DIR ...] [-v]

DIR holds scan-truth.py's twins (NAME.truth.json, whose scan.pages[] name
each page's degradation: binary or jpeg, + lowres, shade, light); each
--pred DIR holds `formulate-cli pdf NAME.pdf --detect-only --format json`
output. Same matching as score.py (same kind, IoU >= 0.5, greedy). Prints
display and inline P/R per degradation (a page counts under each of its
parts: "binary+shade43+light" under binary, shade and light) and over all
pages, one column per --pred; -v also each twin's matched/detected/truth.
"""
import argparse
import glob
import json
import os

from truth_match import greedy_match

KINDS = ("display", "inline", "number")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--pred", action="append", required=True, help="NAME=DIR")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    preds = [p.split("=", 1) if "=" in p else (os.path.basename(p.rstrip("/")), p) for p in a.pred]
    counts = {}
    for tf in sorted(glob.glob(os.path.join(a.truth, "*.truth.json"))):
        name = os.path.basename(tf)[:-len(".truth.json")]
        truth = json.load(open(tf))
        pages = {i + 1: d["degradation"] for i, d in enumerate(truth.get("scan", {}).get("pages", []))}
        line = name
        for label, pdir in preds:
            pf = os.path.join(pdir, name + ".json")
            pred = json.load(open(pf)) if os.path.exists(pf) else {"regions": []}
            for page, deg in pages.items():
                groups = ["all"] + [g.rstrip("0123456789.") for g in deg.split("+")]
                for kind in KINDS:
                    t = [r for r in truth["regions"] if r["kind"] == kind and r["page"] == page]
                    p = [r for r in pred["regions"] if r["kind"] == kind and r["page"] == page]
                    mt, _ = greedy_match(t, p, lambda r: r["page"], lambda r: r["kind"], lambda r: r["box"])
                    for g in groups:
                        c = counts.setdefault((label, g, kind), [0, 0, 0])
                        c[0] += len(mt)
                        c[1] += len(p)
                        c[2] += len(t)
                    if kind != "number":
                        line += " %s %s %d/%d/%d" % (label, kind[0], len(mt), len(p), len(t))
        if a.verbose:
            print(line, "(" + ", ".join(sorted(set(pages.values()))) + ")")

    def pr(c):
        return "%.3f/%.3f" % (c[0] / c[1] if c[1] else 1.0, c[0] / c[2] if c[2] else 1.0)
    groups = sorted({g for (_, g, _) in counts}, key=lambda g: (g != "all", g))
    print("| degradation | " + " | ".join("%s display P/R | %s inline P/R" % (l, l) for l, _ in preds) + " |")
    print("|---|" + "---|---|" * len(preds))
    for g in groups:
        n = counts[(preds[0][0], g, "display")][2] + counts[(preds[0][0], g, "inline")][2]
        print("| %s (%d regions) | " % (g, n) + " | ".join(
            "%s | %s" % (pr(counts[(l, g, "display")]), pr(counts[(l, g, "inline")])) for l, _ in preds) + " |")


if __name__ == "__main__":
    main()
