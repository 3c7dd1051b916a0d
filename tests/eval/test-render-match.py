#!/usr/bin/python3
"""tests/eval: the rendered-image match on real renders of the data pipeline
(pdflatex + render-crops). Pairs chosen so each outcome of the column match
occurs: same pixels from different spellings, a spacing-only difference
(matches only without blank columns), and real differences. Skips (77) where
pdflatex or render-crops is missing."""

import os
import shutil
import sys
import tempfile

ROOT = os.environ.get("FE_SOURCE_ROOT",
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tools", "eval"))
sys.path.insert(0, os.path.join(ROOT, "tools", "data"))

import render_batch  # noqa: E402

if not shutil.which("pdflatex") or not render_batch.find_render_crops() or \
        "cm" not in render_batch.available_fonts():
    print("SKIP: needs pdflatex, fix-cm and render-crops (FM_RENDER_CROPS)")
    sys.exit(77)

import eval as ev  # noqa: E402
import metrics  # noqa: E402

# (truth, prediction, expected (exact, exact without blank columns))
PAIRS = [
    ("x^{2}", "x^{2}", (True, True)),
    ("\\left(x\\right)", "(x)", (True, True)),            # same glyphs, same places
    ("\\sin x", "\\operatorname{sin}x", (True, True)),
    ("a+b", "a\\,+b", (False, True)),                       # only a thin space more
    ("\\mathrm{d}x", "dx", (False, False)),                 # upright vs italic d
    ("a+b", "a+c", (False, False)),
    ("a+b", "a+{", None),                                   # does not compile
]


def main():
    info = {"font": "cm", "style": "inline", "size_pt": 10, "source": "test"}
    samples = [ev.Sample(i, None, [], info) for i in range(len(PAIRS))]
    wd = tempfile.mkdtemp(prefix="eval-render-test-")
    try:
        truths = ev.render_predictions(samples, [t for t, _, _ in PAIRS], wd, 1)
        preds = ev.render_predictions(samples, [p for _, p, _ in PAIRS], wd, 1)
    finally:
        shutil.rmtree(wd, ignore_errors=True)
    failures = 0
    for (t, p, want), ti, pi in zip(PAIRS, truths, preds):
        if ti is None:
            print("FAIL: truth %r did not render" % t)
            failures += 1
            continue
        got = metrics.column_match(ti, pi)
        if want is None:
            ok = pi is None and got == (False, False)
        else:
            ok = got == want
        print("%s: %r vs %r -> %s" % ("ok" if ok else "FAIL", t, p, got))
        failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
