#!/usr/bin/python3
"""Calibrate the engine's confidence for one model file, and write the
calibration into it.

    /usr/bin/python3 tools/eval/calibrate.py --model data/models/formulate-v1.safetensors

One command does it all (tools/eval/README.md, data/models/README.md):
  1. the validation split through the C engine (formulate-cli recognize --json,
     --em-px of the dataset, as tools/eval/eval.py runs the clean set): every
     formula's confidence features (engine/fe.h, "Confidence"), labelled right
     or wrong (token-exact, and token edit distance <= 1);
  2. a logistic model of "right" (--target) over the features, fitted by
     Newton's method with a small L2 penalty (numpy only), and the review
     threshold chosen on the same validation predictions: the one that
     separates best (largest share of wrong formulas flagged minus share of
     right ones flagged, Youden's J);
  3. the coefficients into the model file's safetensors __metadata__ as
     "formulate.calibration" (the tensors are not touched; an older entry is
     replaced), so a retrained model gets its own calibration by running this
     again;
  4. unless --no-test: the test split through the now calibrated engine, and a
     Markdown report of before (mean token probability, the window's old 0.6
     flag) and after (the engine's calibrated confidence, the chosen
     threshold): reliability bins, AUROC, wrong formulas above the flag and
     right ones below it. Nothing is fitted or chosen on the test split.

Options: --data DIR (work/data), --jobs N (parallel formulate-cli processes,
default 2), --limit N (N formulas of each split, spread evenly; default all),
--target exact|ed1 (default exact), --l2 (default 1e-2, on standardised
features), --no-write (fit and report, leave the file alone), --no-test,
--estimated-scale (also the test split without the glyph-size hint),
--out DIR (work/calibrate: per-formula records and report.json).
"""

import argparse
import json
import os
import struct
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import eval as ev  # noqa: E402
import metrics  # noqa: E402

METADATA_KEY = "formulate.calibration"
OLD_REVIEW_FLAG = 0.6  # the window's low-confidence-threshold before calibration
N_BINS = 10


# ------------------------------------------------------------------ collection

def collect(cli, model, data, split, limit, jobs, workdir, estimate_scale=False):
    """Every formula of the split through the engine: a list of records with
    the engine's features, its confidence fields and the labels.
    estimate_scale: no glyph-size hint, the engine estimates it and tries its
    scale candidates (eval.py's clean-estimated-scale set)."""
    samples, ds = ev.load_samples(data, split, limit)
    # the renders' glyph size, told to the engine as eval.py does
    em_px = 0 if estimate_scale else int(ds.meta["em_px"])
    paths = ev.write_pngs([s.image for s in samples], os.path.join(workdir, split + "-png"))
    results, info, wall = ev.recognize_images(cli, model, paths, 1, jobs, em_px=em_px)
    records = []
    for s, r in zip(samples, results):
        pred = ev.pred_tokens(r["latex"]) if r and r.get("latex") is not None else []
        conf = r["confidence"] if r else {"value": 0.0, "mean": 0.0, "min": 0.0, "features": {}}
        ed = metrics.edit_distance(s.truth, pred)
        records.append({
            "index": s.index, "font": s.font, "truth_tokens": len(s.truth),
            "pred": r.get("latex") if r else None,
            "exact": pred == s.truth, "ed1": ed <= 1, "edit_distance": ed,
            "features": conf.get("features", {}), "mean": conf["mean"], "min": conf["min"],
            "value": conf.get("value", conf["mean"]), "calibrated": conf.get("calibrated", False),
        })
    print("calibrate: %s: %d formulas through the engine in %.0f s (%s)" %
          (split, len(records), wall, info.get("model")), file=sys.stderr)
    return records


def feature_names(records):
    """The engine's feature order, as formulate-cli printed it."""
    for r in records:
        if r["features"]:
            return list(r["features"].keys())
    raise SystemExit("calibrate.py: formulate-cli printed no confidence features "
                     "(an engine older than the calibration?)")


def design(records, names):
    return np.array([[r["features"][n] for n in names] for r in records], np.float64)


# ------------------------------------------------------------------ the model

def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.clip(z, -60, 60)))


def fit_logistic(x, y, l2):
    """Logistic regression by Newton's method on standardised features (L2 on
    the weights, not the bias); returns (weights, bias) for the raw features."""
    mu = x.mean(axis=0)
    sd = x.std(axis=0)
    sd[sd < 1e-9] = 1.0  # a constant feature: weight stays ~0 under the penalty
    z = (x - mu) / sd
    a = np.hstack([z, np.ones((len(z), 1))])
    w = np.zeros(a.shape[1])
    reg = np.full(a.shape[1], l2 * len(z))
    reg[-1] = 0.0
    for _ in range(100):
        p = sigmoid(a @ w)
        grad = a.T @ (p - y) + reg * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + np.diag(reg) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    weights = w[:-1] / sd
    bias = w[-1] - float(np.sum(w[:-1] * mu / sd))
    return weights, bias


def with_synthetic_loops(x, y, names, n, seed=2611):
    """Adds n made-up wrong readings that are decoding loops: copies of random val rows
    with repeat_fraction drawn from 0.5-1.0 and half of them stopped by the repetition
    guard. Why: a good model hardly loops on its own val split (2026-11-27: no val reading
    at repeat_fraction >= 0.5, right or wrong; 5 guard stops), so the fit alone gives those
    two features almost no weight, while loops do happen on unseen pages (the amsmath
    guide's \\displaystyle repeats) and must be flagged (tests/engine/test-confidence.c).
    No right val reading sits in that range, so this costs the real rows nothing."""
    if n <= 0 or "repeat_fraction" not in names:
        return x, y
    rng = np.random.default_rng(seed)
    fake = x[rng.integers(0, len(x), n)].copy()
    fake[:, names.index("repeat_fraction")] = rng.uniform(0.5, 1.0, n)
    if "stopped" in names:
        fake[:, names.index("stopped")] = (rng.random(n) < 0.5).astype(np.float64)
    return np.vstack([x, fake]), np.concatenate([y, np.zeros(n)])


def predict(x, weights, bias):
    return sigmoid(x @ weights + bias)


# ------------------------------------------------------------------ measures

def auroc(score, right):
    """P(score of a right formula > score of a wrong one), ties half (the
    Mann-Whitney statistic)."""
    score = np.asarray(score, np.float64)
    right = np.asarray(right, bool)
    n_pos, n_neg = int(right.sum()), int((~right).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(score, kind="mergesort")
    ranks = np.empty(len(score))
    sorted_scores = score[order]
    i = 0
    while i < len(score):  # average ranks over ties
        j = i
        while j + 1 < len(score) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return float((ranks[right].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def flag_rates(score, right, threshold):
    """Share of the wrong formulas NOT flagged (score >= threshold) and of the
    right formulas flagged (score < threshold)."""
    score = np.asarray(score)
    right = np.asarray(right, bool)
    wrong_above = float(np.mean(score[~right] >= threshold)) if (~right).any() else float("nan")
    right_below = float(np.mean(score[right] < threshold)) if right.any() else float("nan")
    return wrong_above, right_below


def reliability(score, right, n_bins=N_BINS):
    """Bins of equal width over 0..1: (lo, hi, n, mean predicted, observed)."""
    score = np.asarray(score)
    right = np.asarray(right, bool)
    rows = []
    for b in range(n_bins):
        lo, hi = b / n_bins, (b + 1) / n_bins
        m = (score >= lo) & ((score < hi) if b < n_bins - 1 else (score <= hi))
        n = int(m.sum())
        rows.append((lo, hi, n, float(score[m].mean()) if n else float("nan"),
                     float(right[m].mean()) if n else float("nan")))
    return rows


def expected_calibration_error(score, right, n_bins=N_BINS):
    rows = reliability(score, right, n_bins)
    total = sum(r[2] for r in rows)
    return sum(r[2] * abs(r[3] - r[4]) for r in rows if r[2]) / max(total, 1)


def choose_threshold(score, right):
    """The review threshold on validation predictions: the largest share of
    wrong formulas flagged minus share of right formulas flagged (Youden's J);
    among equals the lowest (fewest right formulas sent to review)."""
    score = np.asarray(score)
    right = np.asarray(right, bool)
    best_t, best_j = 0.5, -2.0
    for t in np.round(np.arange(0.05, 0.951, 0.01), 2):
        wrong_above, right_below = flag_rates(score, right, t)
        j = (1.0 - wrong_above) - right_below
        if j > best_j + 1e-12:
            best_t, best_j = float(t), j
    return best_t


# ------------------------------------------------------------------ the file

def write_calibration(path, entry):
    """The model file with __metadata__["formulate.calibration"] = entry (JSON
    text), written next to it and renamed over it; tensors byte for byte."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = header.get("__metadata__")
    if not isinstance(meta, dict) or "formulate.config" not in meta:
        raise SystemExit("calibrate.py: %s is not a Formulate safetensors model" % path)
    meta[METADATA_KEY] = json.dumps(entry, separators=(",", ":"))
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((-(8 + len(hjson))) % 8)  # data section 8-byte aligned, as safetensors_io
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(hjson)))
            f.write(hjson)
            f.write(raw[8 + n:])
        os.chmod(tmp, os.stat(path).st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ------------------------------------------------------------------ report

def pct(x):
    return "%.1f %%" % (100.0 * x)


def summary(score, right, threshold):
    wrong_above, right_below = flag_rates(score, right, threshold)
    return {"auroc": auroc(score, right), "ece": expected_calibration_error(score, right),
            "threshold": threshold, "wrong_above_flag": wrong_above,
            "right_below_flag": right_below, "flagged": float(np.mean(np.asarray(score) < threshold))}


def markdown(split, n, rate, before, before_tuned, after, rel_before, rel_after, target):
    out = []
    out.append("%s split, %d formulas, %s right (%s):" % (split, n, pct(rate), target))
    out.append("")
    out.append("| confidence | flag below | AUROC | ECE | wrong formulas not flagged | "
               "right formulas flagged | flagged |")
    out.append("|---|---|---|---|---|---|---|")
    for name, s in (("mean token probability (before, the window's flag)", before),
                    ("mean token probability, flag chosen on val", before_tuned),
                    ("calibrated (after), flag chosen on val", after)):
        out.append("| %s | %.2f | %.3f | %.3f | %s | %s | %s |" % (
            name, s["threshold"], s["auroc"], s["ece"], pct(s["wrong_above_flag"]),
            pct(s["right_below_flag"]), pct(s["flagged"])))
    out.append("")
    out.append("Reliability (bins of the confidence; observed = share right):")
    out.append("")
    out.append("| bin | before: n | before: mean conf. | before: observed | after: n | "
               "after: mean conf. | after: observed |")
    out.append("|---|---|---|---|---|---|---|")
    for b, a in zip(rel_before, rel_after):
        def cell(r):
            return ("%d | %.3f | %.3f" % (r[2], r[3], r[4])) if r[2] else "0 | – | –"
        out.append("| %.1f–%.1f | %s | %s |" % (b[0], b[1], cell(b), cell(a)))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "data", "models",
                                                    "formulate-v1.safetensors"))
    ap.add_argument("--data", default=os.path.join(ROOT, "work", "data"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--target", choices=("exact", "ed1"), default="exact")
    ap.add_argument("--l2", type=float, default=1e-2)
    ap.add_argument("--synthetic-loops", type=int, default=50,
                    help="made-up decoding loops added to the fit as wrong readings (with_synthetic_loops)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--no-test", action="store_true")
    ap.add_argument("--estimated-scale", action="store_true",
                    help="also report the test split run without the glyph-size hint")
    ap.add_argument("--cli", default=None)
    ap.add_argument("--out", default=os.path.join(ROOT, "work", "calibrate"))
    args = ap.parse_args(argv)

    cli = args.cli or ev.find_cli()
    if not cli:
        sys.exit("calibrate.py: formulate-cli not found; build it (meson setup build && ninja -C build)")
    if not args.model.endswith(".safetensors"):
        sys.exit("calibrate.py: the calibration lives in safetensors metadata; %s is not one"
                 % args.model)
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="calibrate-") as work:
        val = collect(cli, args.model, args.data, "val", args.limit, args.jobs, work)
        names = feature_names(val)
        x = design(val, names)
        y = np.array([r[args.target] for r in val], np.float64)
        weights, bias = fit_logistic(*with_synthetic_loops(x, y, names, args.synthetic_loops), args.l2)
        p_val = predict(x, weights, bias)  # the threshold and AUROC: real val rows only
        threshold = choose_threshold(p_val, y > 0.5)
        # The fair "before": the old confidence with its own best flag on val.
        threshold_mean = choose_threshold(np.array([r["mean"] for r in val]), y > 0.5)
        target_name = {"exact": "token-exact", "ed1": "edit-distance<=1"}[args.target]
        entry = {
            "version": 1, "target": target_name, "features": names,
            "weights": [round(float(w), 6) for w in weights], "bias": round(float(bias), 6),
            "review_threshold": threshold,
            "fitted_on": "val split, %d formulas, %s right; tools/eval/calibrate.py" % (
                len(val), pct(float(y.mean()))),
            "val": {"auroc": round(auroc(p_val, y > 0.5), 4),
                    "auroc_mean_prob": round(auroc([r["mean"] for r in val], y > 0.5), 4)},
        }
        print("calibrate: fitted on val: %s" % json.dumps(entry), file=sys.stderr)
        with open(os.path.join(args.out, "val.jsonl"), "w") as f:
            for r, p in zip(val, p_val):
                f.write(json.dumps(dict(r, fitted=float(p))) + "\n")
        val_before = summary([r["mean"] for r in val], y > 0.5, OLD_REVIEW_FLAG)
        val_after = summary(p_val, y > 0.5, threshold)
        val_tuned = summary([r["mean"] for r in val], y > 0.5, threshold_mean)
        report = {"model": args.model, "entry": entry,
                  "val": {"before": val_before, "before_tuned": val_tuned, "after": val_after}}
        print(markdown("val", len(val), float(y.mean()), val_before, val_tuned, val_after,
                       reliability([r["mean"] for r in val], y > 0.5),
                       reliability(p_val, y > 0.5), target_name))
        if args.no_write:
            print("calibrate: --no-write: %s left as it was" % args.model, file=sys.stderr)
        else:
            write_calibration(args.model, entry)
            print("calibrate: wrote %s into %s" % (METADATA_KEY, args.model), file=sys.stderr)

        if not args.no_test:
            test = collect(cli, args.model, args.data, "test", args.limit, args.jobs, work)
            right = np.array([r[args.target] for r in test], bool)
            before = [r["mean"] for r in test]
            if args.no_write:
                after = predict(design(test, names), weights, bias)
            else:
                # The engine's own calibrated confidence; it must be the
                # fitted model's over the same features (float vs double).
                after = np.array([r["value"] for r in test])
                here = predict(design(test, names), weights, bias)
                gap = float(np.max(np.abs(after - here))) if len(test) else 0.0
                if not all(r["calibrated"] for r in test) or gap > 1e-3:
                    sys.exit("calibrate.py: the engine's confidence differs from the fit "
                             "(calibrated: %s, largest gap %.2g)" %
                             (all(r["calibrated"] for r in test), gap))
                report["engine_vs_fit_max_gap"] = gap
            t_before = summary(before, right, OLD_REVIEW_FLAG)
            t_after = summary(after, right, threshold)
            t_tuned = summary(before, right, threshold_mean)
            report["test"] = {"before": t_before, "before_tuned": t_tuned, "after": t_after,
                              "reliability_before": reliability(before, right),
                              "reliability_after": reliability(after, right),
                              "auroc_ed1_after": auroc(after, [r["ed1"] for r in test]),
                              "auroc_ed1_before": auroc(before, [r["ed1"] for r in test])}
            with open(os.path.join(args.out, "test.jsonl"), "w") as f:
                for r, p in zip(test, after):
                    f.write(json.dumps(dict(r, after=float(p))) + "\n")
            print()
            print(markdown("test", len(test), float(right.mean()), t_before, t_tuned, t_after,
                           reliability(before, right), reliability(after, right), target_name))
            print()
            print("AUROC for edit distance <= 1 on test: before %.3f, after %.3f" %
                  (report["test"]["auroc_ed1_before"], report["test"]["auroc_ed1_after"]))
        if not args.no_test and args.estimated_scale:
            est = collect(cli, args.model, args.data, "test", args.limit, args.jobs, work,
                          estimate_scale=True)
            right = np.array([r[args.target] for r in est], bool)
            before = [r["mean"] for r in est]
            after = (predict(design(est, names), weights, bias) if args.no_write
                     else np.array([r["value"] for r in est]))
            e_before = summary(before, right, OLD_REVIEW_FLAG)
            e_tuned = summary(before, right, threshold_mean)
            e_after = summary(after, right, threshold)
            report["test_estimated_scale"] = {"before": e_before, "before_tuned": e_tuned,
                                              "after": e_after}
            print()
            print(markdown("test (no glyph-size hint: the engine estimates the scale)",
                           len(est), float(right.mean()), e_before, e_tuned, e_after,
                           reliability(before, right), reliability(after, right), target_name))
        with open(os.path.join(args.out, "report.json"), "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
