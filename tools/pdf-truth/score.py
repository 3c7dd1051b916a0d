#!/usr/bin/python3
"""Score formula detections against truth files (used by bench/detect).

  score.py --truth DIR --pred DIR [--pred-baseline DIR]

For every DIR/NAME.truth.json the detections are PRED/NAME.json (the output of
`formulate-cli pdf NAME.pdf --detect-only --format json`). A detection matches
a truth region of the same kind on the same page when their IoU >= 0.5; each
truth region matches at most one detection (greedy, highest IoU first).
Precision = matched / detections, recall = matched / truth, per kind, per
engine (the truth file's "engine": pdflatex, xelatex, lualatex; "-" for truth
files without one) and, with several engines, over all. The last line is over
all files.

Truth regions with a "class" (make-truth.py --formulas classes) also get a
table per class (printed before the last line): recall of the class's regions,
and precision over the detections charged to the class - the matched ones, and
each unmatched detection charged to the class of the truth region or decoy
(the truth's "decoys": prose that is not math, class "prose") it overlaps most,
"other" when it overlaps none.
"""
import argparse
import glob
import json
import os
import sys

KINDS = ("display", "inline", "number")


def iou(a, b):
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    if ix <= 0 or iy <= 0:
        return 0.0
    inter = ix * iy
    ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / ua if ua > 0 else 0.0


def check_truth(path, truth):
    """Truth from elsewhere: say clearly what is wrong instead of scoring nonsense."""
    if truth.get("format") != "formulate-detect-truth-1":
        sys.exit("%s: format must be \"formulate-detect-truth-1\" (bench/detect/README.md)" % path)
    if truth.get("units", "pt") != "pt" or truth.get("origin", "top-left") != "top-left":
        sys.exit("%s: boxes must be in pt with a top-left origin" % path)
    for i, r in enumerate(truth.get("regions", [])):
        box = r.get("box")
        if r.get("kind") not in KINDS or not isinstance(r.get("page"), int) or r["page"] < 1 or \
                not isinstance(box, list) or len(box) != 4 or box[2] <= box[0] or box[3] <= box[1]:
            sys.exit("%s: region %d needs kind (%s), page >= 1 and box [x0, y0, x1, y1] with x0 < x1, y0 < y1"
                     % (path, i, "/".join(KINDS), ))


def overlap(a, b):
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    return ix * iy if ix > 0 and iy > 0 else 0.0


def charge_classes(truth, t, p, used_t, used_p, pairs_best, classes):
    """Per-class counts [matched, charged detections, truth] (see the docstring)."""
    for i, a in enumerate(t):
        c = classes.setdefault(a.get("class", "-"), [0, 0, 0])
        c[2] += 1
        if i in used_t:
            c[0] += 1
            c[1] += 1
    others = [r for r in truth["regions"]] + [dict(d, **{"class": "prose"}) for d in truth.get("decoys", [])]
    for j, b in enumerate(p):
        if j in used_p:
            continue
        best, cls = 0.0, "other"
        for r in others:
            if r["page"] == b["page"]:
                o = overlap(r["box"], b["box"])
                if o > best:
                    best, cls = o, r.get("class", "-")
        classes.setdefault(cls, [0, 0, 0])[1] += 1


def score(truth_dir, pred_dir, verbose=False, groups=None, classes=None):
    """Counts over all files; per engine too when groups is a dict (the truth
    file's "engine", "-" when it has none: truth from elsewhere)."""
    counts = {k: [0, 0, 0] for k in KINDS}  # matched, predicted, truth
    files = sorted(glob.glob(os.path.join(truth_dir, "*.truth.json")))
    if not files:
        sys.exit("no *.truth.json in %s" % truth_dir)
    for tf in files:
        name = os.path.basename(tf)[:-len(".truth.json")]
        truth = json.load(open(tf))
        check_truth(tf, truth)
        pf = os.path.join(pred_dir, name + ".json")
        pred = json.load(open(pf)) if os.path.exists(pf) else {"regions": []}
        for kind in KINDS:
            t = [r for r in truth["regions"] if r["kind"] == kind]
            p = [r for r in pred["regions"] if r["kind"] == kind]
            pairs = sorted(((iou(a["box"], b["box"]), i, j) for i, a in enumerate(t)
                            for j, b in enumerate(p) if a["page"] == b["page"]), reverse=True)
            used_t, used_p = set(), set()
            for v, i, j in pairs:
                if v < 0.5:
                    break
                if i in used_t or j in used_p:
                    continue
                used_t.add(i)
                used_p.add(j)
            if classes is not None:
                charge_classes(truth, t, p, used_t, used_p, pairs, classes.setdefault(kind, {}))
            for c in [counts] + ([groups.setdefault(truth.get("engine", "-"), {k: [0, 0, 0] for k in KINDS})]
                                 if groups is not None else []):
                c[kind][0] += len(used_t)
                c[kind][1] += len(p)
                c[kind][2] += len(t)
            if verbose:
                for i, a in enumerate(t):
                    if i not in used_t:
                        print("MISS %s p%d %s %s %r" % (name, a["page"], kind, a["box"], a.get("latex")))
                for j, b in enumerate(p):
                    if j not in used_p:
                        print("FP   %s p%d %s %s %r" % (name, b["page"], kind, b["box"], b.get("text")))
    return counts, len(files)


def pr(c):
    m, p, t = c
    return (m / p if p else 1.0), (m / t if t else 1.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--pred", required=True)
    ap.add_argument("--pred-baseline")
    ap.add_argument("--baseline-name", default="PDFMathTranslate font rule",
                    help="the baseline's row label (bench/detect/scanned: Tesseract alone)")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    rows = []
    if a.pred_baseline:
        base_groups = {}
        base = score(a.truth, a.pred_baseline, groups=base_groups)[0]
        rows += [(a.baseline_name, e, c) for e, c in sorted(base_groups.items())]
        if len(base_groups) > 1:
            rows.append((a.baseline_name, "all", base))
    groups = {}
    classes = {}
    ours, n_files = score(a.truth, a.pred, a.verbose, groups=groups, classes=classes)
    rows += [("formulate (fm-detect)", e, c) for e, c in sorted(groups.items())]
    if len(groups) > 1:
        rows.append(("formulate (fm-detect)", "all", ours))
    print("%d PDFs, %d display / %d inline / %d number truth regions; match = same kind, IoU >= 0.5"
          % (n_files, ours["display"][2], ours["inline"][2], ours["number"][2]))
    print()
    print("| detector | engine | display P | display R | inline P | inline R | number P | number R |")
    print("|---|---|---|---|---|---|---|---|")
    for name, engine, c in rows:
        cells = []
        for k in KINDS:
            p, r = pr(c[k])
            cells += ["%.3f" % p, "%.3f" % r]
        print("| %s | %s | %s |" % (name, engine, " | ".join(cells)))
    print()
    if any(c not in ("-", "other") for k in classes.values() for c in k):
        print("Per class (formulate): P over the detections charged to the class, R over its truth regions")
        print()
        print("| kind | class | truth | detections | P | R |")
        print("|---|---|---|---|---|---|")
        for k in KINDS:
            for c, v in sorted(classes.get(k, {}).items()):
                p, r = pr(v)
                print("| %s | %s | %d | %d | %.3f | %s |" % (k, c, v[2], v[1], p, "%.3f" % r if v[2] else "-"))
        print()
    dp, dr = pr(ours["display"])
    ip, ir = pr(ours["inline"])
    print("display_P: %.3f display_R: %.3f inline_P: %.3f inline_R: %.3f" % (dp, dr, ip, ir))


if __name__ == "__main__":
    main()
