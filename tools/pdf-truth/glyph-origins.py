#!/usr/bin/python3
"""Measure where Poppler's glyph boxes start against the glyphs' TeX origins.

Typesets, per engine and font set-up of make-truth.py, every letter, digit,
Greek letter and some symbols at the start of a line (\\noindent$X$, the TeX
origin is the left margin) at 10 and 12 pt, reads the first glyph's box with
Poppler, and prints app/document/fm-mathtext-origins.inc: per PDF font the
range (em) by which a glyph's box starts right of its origin, per character
for fonts that a virtual font moves. Needs pdflatex, xelatex, lualatex, the
set-ups' packages and python3-gi with Poppler.

    tools/pdf-truth/glyph-origins.py --out DIR > app/document/fm-mathtext-origins.inc
"""
import argparse
import collections
import importlib.util
import os
import subprocess
import sys

import gi

gi.require_version("Poppler", "0.18")
from gi.repository import Poppler  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("mt", os.path.join(HERE, "make-truth.py"))
mt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mt)

ITEMS = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") +
         r"\alpha \beta \gamma \delta \epsilon \varepsilon \zeta \eta \theta \iota \kappa \lambda \mu \nu \xi \pi"
         r" \rho \sigma \tau \phi \varphi \chi \psi \omega \Gamma \Delta \Theta \Lambda \Sigma \Phi \Psi \Omega".split() +
         ["(", "[", r"\{", "|", r"\|", "+", "-", r"\sum", r"\int", r"\sin", r"\log", r"\mathbb{R}", r"\mathcal{A}",
          r"\mathbf{x}", r"\mathrm{d}", r"\text{if}", r"\partial", r"\nabla", r"\infty", r"\langle", "=", "<", r"\le",
          r"\to", r"\in", r"\subset", r"\approx", r"\equiv", r"\sim", r"\ne"])
# what the reader (fm-mathtext.c, origin_measured_char) takes as measured
EXTRA = "([{|+\u2212\u2016\u2202\u2207\u221e\u27e8\u2329\u00b5\u210e\u211d\u2126\u2206"
EXACT = ("cm", "lm", "latinmodern", "stixtwo")
MARGIN = 72.0  # \oddsidemargin=0pt: the text starts 1 in from the page's edge


def measured(c):
    o = ord(c)
    return (c.isascii() and c.isalnum()) or 0x391 <= o <= 0x3f6 or 0x1d400 <= o <= 0x1d7ff or c in EXTRA


def typeset(out, engine, font, size):
    setup = mt.font_setup(engine, font)
    pre = (r"\documentclass[%s]{article}" % size +
           (r"\usepackage{amsmath,amssymb}" if engine == "pdflatex" else r"\usepackage{amsmath}\usepackage{unicode-math}") +
           setup)
    body = "\n".join(r"\noindent$%s$\par" % t for t in ITEMS)
    name = "%s-%s-%s" % (engine, font, size)
    with open(os.path.join(out, name + ".tex"), "w") as f:
        f.write(pre + "\n\\oddsidemargin=0pt\\evensidemargin=0pt\\parskip=2pt\\pagestyle{empty}\n"
                "\\begin{document}\n" + body + "\n\\end{document}\n")
    r = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", name + ".tex"], cwd=out,
                       capture_output=True, text=True)
    return os.path.join(out, name + ".pdf") if r.returncode == 0 else None


def line_starts(path):
    """(character, font, box x0) of each line's first glyph."""
    doc = Poppler.Document.new_from_file("file://" + os.path.abspath(path), None)
    res = []
    for p in range(doc.get_n_pages()):
        page = doc.get_page(p)
        text = page.get_text()
        ok, rects = page.get_text_layout()
        fonts = [None] * len(rects)
        for a in page.get_text_attributes():
            for i in range(a.start_index, min(a.end_index + 1, len(rects))):
                fonts[i] = a.font_name
        start = True
        for i, r in enumerate(rects):
            c = text[i] if i < len(text) else ""
            if c == "\n":
                start = True
            elif start and c.strip():
                # a glyph Poppler gives no text attributes to has no font to
                # measure; kept as None so the line count still matches
                res.append((c, fonts[i].split("+")[-1] if fonts[i] else None, r.x1))
                start = False
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for the probe documents")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    runs = [("pdflatex", f, s) for f in sorted(mt.FONTS) + sorted(mt.EXTRA_FONTS) for s in ("10pt", "12pt")]
    runs += [(e, f, "10pt") for e in ("xelatex", "lualatex") for f in sorted(mt.OT_FONTS) + sorted(mt.OT_EXTRA_FONTS)]
    rng, frng, setups = {}, {}, collections.defaultdict(set)
    for engine, font, size in runs:
        pdf = typeset(a.out, engine, font, size)
        starts = line_starts(pdf) if pdf else []
        if len(starts) != len(ITEMS):
            print("skipped %s %s %s" % (engine, font, size), file=sys.stderr)
            continue
        em = float(size[:-2]) * 72 / 72.27
        for c, f, x0 in starts:
            if f is None or not (measured(c) or f.lower().startswith(EXACT)):
                continue
            shift = (x0 - MARGIN) / em
            lo, hi = rng.get((f, c), (9, -9))
            rng[(f, c)] = (min(lo, shift), max(hi, shift))
            lo, hi = frng.get(f, (9, -9))
            frng[f] = (min(lo, shift), max(hi, shift))
            setups[f].add(font if engine == "pdflatex" else "%s:%s" % (engine[:-5], font))
    print("/* Generated by tools/pdf-truth/glyph-origins.py (reader12t, bench/RESULTS.md): PDF\n"
          " * font name, character (0: the font's range, for a font that draws its\n"
          " * measured characters all at their origin, or for Computer Modern's fonts\n"
          " * moved by a virtual font), the least and greatest start of its box right of\n"
          " * its TeX origin over the set-ups that use the font, in em (0.0005 added either\n"
          " * side). */")
    # sorted by case-folded font name: fm-mathtext.c binary-searches the table
    for f in sorted(frng, key=str.lower):
        lo, hi = frng[f]
        zero = abs(lo) < 0.0005 and abs(hi) < 0.0005
        if zero and f.lower().startswith(EXACT):
            continue
        if zero:
            print('{ "%s", 0, 0, 0 }, /* %s */' % (f, " ".join(sorted(setups[f]))))
            continue
        print('{ "%s", 0, %.4f, %.4f }, /* %s */' % (f, lo - 0.0005, hi + 0.0005, " ".join(sorted(setups[f]))))
        for (ff, c), (lo, hi) in sorted(rng.items()):
            if ff == f:
                print('{ "%s", 0x%04x, %.4f, %.4f },' % (f, ord(c), lo - 0.0005, hi + 0.0005))


if __name__ == "__main__":
    main()
