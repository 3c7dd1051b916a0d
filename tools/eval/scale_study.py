#!/usr/bin/python3
"""How well does the engine estimate the glyph scale of an image without a hint?

    /usr/bin/python3 tools/eval/scale_study.py [--split val] [--limit 300]
        [--cache work/eval-scale/cache-val-300.pkl] [--e2e] [--out work/eval-scale/study.json]

The split's formulas (val by default: the study is for development, the test
split is for eval.py's final numbers) are rasterised as the clean dataset
render (20 px/em) and again by pdflatex + pdftoppm / pdftocairo at several
resolutions, wider than eval.py's robustness sets (72-300 dpi, and light-theme
"screenshots" at 110 and 144 dpi). The true em of each image is known:
em_px for the clean render, size_pt x dpi / 72.27 for the others (the
formulas are set with \\fontsize{size_pt}).

Prints, per set and for the engine's estimate (and the study's alternatives,
computed from the engine's own connected components, eval-scale-probe):
the median and spread of est/true, the share within +-5 % and +-10 %.
With --e2e, also the token-exact match of the engine given (a) no hint,
(b) the true em as a hint (the best any estimator can do), (c) each
alternative's estimate as a hint.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import pickle
import struct
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import eval as ev  # noqa: E402

TEX_PT_PER_INCH = 72.27
STUDY_VARIANTS = [
    ("pdftoppm-72dpi", "pdftoppm", 72, False),
    ("pdftoppm-96dpi", "pdftoppm", 96, False),
    ("pdftoppm-120dpi", "pdftoppm", 120, False),
    ("pdftoppm-150dpi", "pdftoppm", 150, False),
    ("pdftoppm-200dpi", "pdftoppm", 200, False),
    ("pdftoppm-300dpi", "pdftoppm", 300, False),
    ("screenshot-110dpi", "pdftocairo", 110, True),
    ("screenshot-144dpi", "pdftocairo", 144, True),
]


def build_cache(args):
    samples, ds = ev.load_samples(args.data, args.split, args.limit)
    em_px = float(ds.meta["em_px"])
    items = []   # (set, sample k, image, true em)
    if args.font:
        # Another font set-up (one the model and the density never saw, say):
        # only the re-rendered sets, the dataset's images are in their own fonts.
        for s in samples:
            s.font = args.font
    else:
        for k, s in enumerate(samples):
            items.append(("clean", k, s.image, em_px))
    ev.ROBUST_VARIANTS = STUDY_VARIANTS
    import tempfile
    scratch = tempfile.mkdtemp(prefix="scale-study-", dir=os.path.dirname(os.path.abspath(args.cache)))
    try:
        variants = ev.robust_renders(samples, scratch, args.jobs)
    finally:
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
    dpi = {v[0]: v[2] for v in STUDY_VARIANTS}
    for name, imgs in variants.items():
        for k, img in enumerate(imgs):
            if img is not None:
                items.append((name, k, img, samples[k].size_pt * dpi[name] / TEX_PT_PER_INCH))
    meta = [{"font": s.font, "style": s.style, "size_pt": s.size_pt, "source": s.source,
             "truth": s.truth} for s in samples]
    with open(args.cache, "wb") as f:
        pickle.dump({"items": items, "samples": meta, "em_px": em_px}, f)


def degrade(img, kind, rng):
    """Synthetic scan damage for --degrade (not a dataset set): "speckle" 0.3 %
    of the pixels start a black two-pixel speck (lone pixels the engine drops
    anyway), "blur" a Gaussian of 1 px, "gray-noise" gray paper at 200, ink at
    70 % contrast, Gaussian noise of 12 levels."""
    from PIL import Image, ImageFilter
    g = img.astype(np.float32)
    if kind == "speckle":
        m = rng.random(g.shape[:2]) < 0.003
        m |= np.roll(m, 1, 1)
        g[m] = 0
    elif kind == "blur":
        g = np.asarray(Image.fromarray(img).filter(ImageFilter.GaussianBlur(1.0))).astype(np.float32)
    elif kind == "gray-noise":
        g = 200 - (255 - g) * 0.7 + rng.normal(0, 12, g.shape)
    return np.clip(g, 0, 255).astype(np.uint8)


def requests(images, hints):
    req = bytearray()
    for img, hint in zip(images, hints):
        ch = 1 if img.ndim == 2 else 3
        req += struct.pack("<iiif", img.shape[1], img.shape[0], ch, float(hint))
        req += np.ascontiguousarray(img, np.uint8).tobytes()
    return bytes(req)


def run_probe(probe, cmd_args, images, hints, jobs):
    """Images through eval-scale-probe in `jobs` processes; JSON per image."""
    chunks = [list(range(i, len(images), jobs)) for i in range(jobs)]

    def one(ks):
        proc = subprocess.run([probe] + cmd_args, input=requests([images[k] for k in ks],
                                                                  [hints[k] for k in ks]),
                              stdout=subprocess.PIPE, check=True)
        return ks, [json.loads(line) for line in proc.stdout.decode().splitlines()]

    out = [None] * len(images)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for ks, res in pool.map(one, chunks):
            for k, r in zip(ks, res):
                out[k] = r
    return out


# ------------------------------------------------------------------ estimators
# Each takes the probe's component list and returns an em in pixels (0 when
# there is nothing to measure). Component: [x0, y0, x1, y1, h_sub, area,
# hruns, vruns, mass].

def _glyph_heights(comps, lo=0.4, hi=2.2):
    c = np.asarray(comps, np.float64).reshape(-1, 9)
    if len(c) == 0:
        return c, np.zeros(0)
    w = c[:, 2] - c[:, 0] + 1
    bh = c[:, 3] - c[:, 1] + 1
    keep = w < 3 * bh
    if not keep.any():
        keep[:] = True
    g = c[keep]
    m0 = np.median(g[:, 4])
    sel = (g[:, 4] >= lo * m0) & (g[:, 4] <= hi * m0)
    return g[sel] if sel.any() else g, m0


def est_median(comps, cc=0.6):
    g, _ = _glyph_heights(comps)
    return float(np.median(g[:, 4])) / cc if len(g) else 0.0


ESTIMATORS = collections.OrderedDict()
ESTIMATORS["median/0.60"] = lambda c: est_median(c, 0.6)
ESTIMATORS["median/0.5819"] = lambda c: est_median(c, 0.5819)


# Maximum-likelihood scale: the density of component sizes in em units,
# measured on renders of known em (the train split's, --fit-cache), and the em
# that makes an image's components most likely under it. In log units a scale
# is a shift, so the likelihood is a cross-correlation of the image's
# log-size histogram with the log density.
MLE_LO, MLE_STEP = np.array([-4.5, -4.5]), 0.1
MLE_BINS = (60, 75)
MLE_FLOOR = 1e-3


# Components at most this many pixels in both directions are left out of the
# maximum-likelihood estimate (and its density): on a scan they are mostly
# specks, which look like the dots of a much smaller font (the engine does the
# same, engine/fe-preprocess.c, where the numbers are).
MLE_MIN_PX = 2


def comp_features(comps):
    c = np.asarray(comps, np.float64).reshape(-1, 9)
    big = np.maximum(c[:, 2] - c[:, 0] + 1, c[:, 3] - c[:, 1] + 1) > MLE_MIN_PX
    if big.any():
        c = c[big]
    return np.log(np.maximum(c[:, 4], 0.5)), np.log(c[:, 2] - c[:, 0] + 1.0)


def fit_density(probed, true_em, dims=2, smooth=1):
    hist = np.zeros(MLE_BINS)
    for p, em in zip(probed, true_em):
        lh, lw = comp_features(p["comps"])
        if len(lh) == 0:
            continue
        iu = np.clip(((lh - np.log(em) - MLE_LO[0]) / MLE_STEP).astype(int), 0, MLE_BINS[0] - 1)
        iv = np.clip(((lw - np.log(em) - MLE_LO[1]) / MLE_STEP).astype(int), 0, MLE_BINS[1] - 1)
        # every image weighs the same, however many components it has
        np.add.at(hist, (iu, iv), 1.0 / len(lh))
    if dims == 1:
        hist = np.repeat(hist.sum(1, keepdims=True), MLE_BINS[1], 1)
    for _ in range(smooth):
        h2 = hist.copy()
        h2[1:] += hist[:-1]; h2[:-1] += hist[1:]
        h2[:, 1:] += hist[:, :-1]; h2[:, :-1] += hist[:, 1:]
        hist = h2 / 5
    dens = hist / hist.sum()
    if dims == 1:
        dens = dens / dens.sum(1, keepdims=True).max() * 1.0
    return np.log(dens + MLE_FLOOR * dens.max())


def write_prior(path, logp, command):
    """The 2-D log density as the engine's table (engine/fe-scale-prior.h):
    rows and columns that hold only the floor are cropped (the engine
    returns the floor outside the table)."""
    floor = float(logp.min())
    rows = np.nonzero((logp > floor + 1e-6).any(1))[0]
    cols = np.nonzero((logp > floor + 1e-6).any(0))[0]
    r0, r1, c0, c1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
    t = logp[r0:r1, c0:c1]
    with open(path, "w") as f:
        f.write("/* fe-scale-prior.h - generated by tools/eval/scale_study.py, do not edit.\n"
                " *\n *   %s\n *\n" % command)
        f.write(" * Log density of the connected components of formula renders of known\n"
                " * glyph size, over u = ln(height / em) (rows) and v = ln(width / em)\n"
                " * (columns), bins of %.2f starting at u = %.2f, v = %.2f; every render\n"
                " * weighs the same. fe-preprocess.c estimates an image's em as the one\n"
                " * under which its components are most likely (docs/preprocessing.md). */\n"
                % (MLE_STEP, MLE_LO[0] + r0 * MLE_STEP, MLE_LO[1] + c0 * MLE_STEP))
        f.write("#define FE_PRIOR_ROWS %d\n#define FE_PRIOR_COLS %d\n" % t.shape)
        f.write("#define FE_PRIOR_STEP %.2ff\n#define FE_PRIOR_U0 %.2ff\n#define FE_PRIOR_V0 %.2ff\n"
                % (MLE_STEP, MLE_LO[0] + r0 * MLE_STEP, MLE_LO[1] + c0 * MLE_STEP))
        f.write("#define FE_PRIOR_FLOOR %.2ff\n" % floor)
        f.write("static const float fe_scale_prior[FE_PRIOR_ROWS][FE_PRIOR_COLS] = {\n")
        for row in t:
            vals = ["%.2f" % v for v in row]
            f.write("    {" + ",".join(vals) + "},\n")
        f.write("};\n")


def est_mle(comps, logp, dims=2):
    lh, lw = comp_features(comps)
    if len(lh) == 0:
        return 0.0
    best, best_s = -np.inf, 0.0
    for ls in np.arange(np.log(3.0), np.log(400.0), 0.01):
        iu = ((lh - ls - MLE_LO[0]) / MLE_STEP).astype(int)
        iv = ((lw - ls - MLE_LO[1]) / MLE_STEP).astype(int)
        ok = (iu >= 0) & (iu < MLE_BINS[0]) & (iv >= 0) & (iv < MLE_BINS[1])
        lp = np.where(ok, logp[np.clip(iu, 0, MLE_BINS[0] - 1), np.clip(iv, 0, MLE_BINS[1] - 1)],
                      logp.min())
        if dims == 1:
            lp = np.where(ok, logp[np.clip(iu, 0, MLE_BINS[0] - 1), 0], logp.min())
        tot = lp.sum()
        if tot > best:
            best, best_s = tot, ls
    return float(np.exp(best_s))


def summarize(ratios):
    r = np.asarray([x for x in ratios if x > 0])
    if len(r) == 0:
        return {"n": 0}
    lr = np.log(r)
    return {"n": len(r), "median": float(np.exp(np.median(lr))),
            "p10": float(np.exp(np.percentile(lr, 10))), "p90": float(np.exp(np.percentile(lr, 90))),
            "mad_pct": float(100 * np.median(np.abs(lr - np.median(lr)))),
            "abs_med_pct": float(100 * np.median(np.abs(lr))),
            "within5": float(np.mean(np.abs(lr) <= np.log(1.05))),
            "within10": float(np.mean(np.abs(lr) <= np.log(1.10)))}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(ROOT, "work", "data"))
    ap.add_argument("--split", default="val")
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--degrade", choices=["speckle", "blur", "gray-noise"], default=None,
                    help="synthetic scan damage applied to every image (see degrade())")
    ap.add_argument("--font", default=None,
                    help="re-render every formula in this font set-up of tools/data/render_batch.py"
                         " (e.g. stix2, fourier: held out of training) instead of its own")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-scale"))
    ap.add_argument("--model", default=os.path.join(ROOT, "data", "models", "formulate-v1.safetensors"))
    ap.add_argument("--estimators", default=None, help="comma-separated subset for --e2e")
    ap.add_argument("--fit-cache", default=None,
                    help="a cache of another split (train) to fit the maximum-likelihood estimators on")
    ap.add_argument("--write-prior", default=None,
                    help="write the 2-D density fitted on --fit-cache as a C header (engine/fe-scale-prior.h)")
    ap.add_argument("--e2e", action="store_true", help="also run the model: exact match per hint")
    ap.add_argument("--candidates", default="1,3",
                    type=lambda v: [int(x) for x in v.split(",")],
                    help="--e2e without a hint: these FeRecognizeParams.scale_candidates (default 1,3)")
    ap.add_argument("--sets", default=None, help="comma-separated subset of sets")
    ap.add_argument("--out", default=os.path.join(ROOT, "work", "eval-scale", "study.json"))
    args = ap.parse_args(argv)
    args.cache = args.cache or os.path.join(ROOT, "work", "eval-scale",
                                            "cache-%s-%d%s.pkl" % (args.split, args.limit,
                                                                   "-" + args.font if args.font else ""))
    os.makedirs(os.path.dirname(os.path.abspath(args.cache)), exist_ok=True)
    if not os.path.exists(args.cache):
        t0 = time.time()
        build_cache(args)
        print("rendered in %.1f s" % (time.time() - t0), flush=True)
    with open(args.cache, "rb") as f:
        cache = pickle.load(f)
    items = cache["items"]
    if args.sets:
        wanted = set(args.sets.split(","))
        items = [it for it in items if it[0] in wanted]
    if args.degrade:
        rng = np.random.default_rng(0)
        items = [(it[0], it[1], degrade(it[2], args.degrade, rng), it[3]) for it in items]
    probe = os.path.join(args.build, "tools", "eval", "eval-scale-probe")
    t0 = time.time()
    probed = run_probe(probe, ["0.6"], [it[2] for it in items], [0.0] * len(items), args.jobs)
    print("probed %d images in %.1f s" % (len(items), time.time() - t0), flush=True)
    sets = list(collections.OrderedDict((it[0], 1) for it in items))
    est = {"engine-median": [p["em"] for p in probed], "engine-mle": [p["em_mle"] for p in probed]}
    if args.fit_cache:
        with open(args.fit_cache, "rb") as f:
            fit = pickle.load(f)["items"]
        fprobed = run_probe(probe, ["0.6"], [it[2] for it in fit], [0.0] * len(fit), args.jobs)
        for dims in (1, 2):
            logp = fit_density(fprobed, [it[3] for it in fit], dims)
            if dims == 2 and args.write_prior:
                write_prior(args.write_prior, logp, "/usr/bin/python3 tools/eval/scale_study.py " +
                            " ".join(os.path.relpath(a, ROOT) if os.path.exists(a) else a
                                     for a in (argv if argv is not None else sys.argv[1:])))
                print("wrote %s" % args.write_prior)
            ESTIMATORS["mle-%dd" % dims] = (lambda lp, d: lambda c: est_mle(c, lp, d))(logp, dims)
    for name, fn in ESTIMATORS.items():
        est[name] = [fn(p["comps"]) for p in probed]
    report = {"split": args.split, "limit": args.limit, "scale_error": {}, "e2e": {},
              "true_em": [it[3] for it in items], "sets": [it[0] for it in items],
              "estimates": est}
    print("\nest/true em: median ratio [p10, p90], spread (median |log dev| %), median |error| %,"
          " within 5 %, within 10 %")
    for name, values in est.items():
        print(name)
        for sname in sets + ["ALL"]:
            ks = [k for k, it in enumerate(items) if sname in ("ALL", it[0])]
            s = summarize([values[k] / items[k][3] for k in ks])
            report["scale_error"].setdefault(name, {})[sname] = s
            print("  %-20s n=%4d  %.3f [%.3f, %.3f]  spread %4.1f  |err| %4.1f  %5.1f %%  %5.1f %%" %
                  (sname, s["n"], s["median"], s["p10"], s["p90"], s["mad_pct"], s["abs_med_pct"],
                   100 * s["within5"], 100 * s["within10"]))
        fonts = sorted({cache["samples"][it[1]]["font"] for it in items})
        line = "  by font (ALL, |err| %% / within 10 %%):"
        for font in fonts:
            ks = [k for k, it in enumerate(items) if cache["samples"][it[1]]["font"] == font]
            s = summarize([values[k] / items[k][3] for k in ks])
            line += "  %s %.1f/%.0f" % (font, s["abs_med_pct"], 100 * s["within10"])
        print(line, flush=True)

    if args.e2e:
        import latex_tokens
        # (name, hints, FeRecognizeParams.scale_candidates or None for the default)
        hint_sets = [("no-hint:%d" % c, [0.0] * len(items), c) for c in args.candidates] + \
                    [("true-em", [it[3] for it in items], None)]
        names = args.estimators.split(",") if args.estimators else list(ESTIMATORS)
        hint_sets += [(n, est[n], None) for n in names if n]
        for hname, hints, cand in hint_sets:
            t0 = time.time()
            res = run_probe(probe, ["--recognize", args.model] + ([str(cand)] if cand is not None else []),
                            [it[2] for it in items], hints, args.jobs)
            exact = [latex_tokens.tokenize(r.get("latex", "")) == cache["samples"][it[1]]["truth"]
                     for r, it in zip(res, items)]
            ms = float(np.mean([r.get("ms", 0) for r in res]))
            cpu_ms = float(np.mean([r.get("cpu_ms", 0) for r in res]))
            row = {}
            line = "%-16s" % hname
            for sname in sets + ["ALL"]:
                ks = [k for k, it in enumerate(items) if sname in ("ALL", it[0])]
                row[sname] = float(np.mean([exact[k] for k in ks]))
                line += " %s %.1f" % (sname.replace("pdftoppm-", "").replace("screenshot-", "sc"),
                                      100 * row[sname])
            row["engine_ms"] = ms
            row["engine_cpu_ms"] = cpu_ms
            report["e2e"][hname] = row
            report["e2e"][hname + ":records"] = [
                {"set": it[0], "k": it[1], "true_em": it[3], "hint": h, "exact": e,
                 "conf_mean": r.get("conf_mean"), "scale": r.get("scale")}
                for it, h, e, r in zip(items, hints, exact, res)]
            print(line + "  (%.1f ms/image wall, %.1f ms CPU, %.0f s)" % (ms, cpu_ms, time.time() - t0),
                  flush=True)
    with open(args.out, "w") as f:
        json.dump(report, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
