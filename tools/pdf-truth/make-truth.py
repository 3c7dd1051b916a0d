#!/usr/bin/python3
"""Make test PDFs whose formulas record their own boxes (the detection truth).

Each document is random article text with inline formulas, display formulas
(single line, aligned/gathered/cases blocks, matrices, fractions), equation
numbers, footnotes, one or two columns, in one of several font setups. Every
formula is typeset into a box and placed with \\pdfsavepos; a delayed \\write puts
the position (resolved at shipout, so the page is right) and the box's width,
height and depth into the .aux file. This script turns those into NAME.truth.json
next to NAME.pdf (format: bench/detect/README.md).

  /usr/bin/python3 tools/pdf-truth/make-truth.py --out DIR --count N --seed S
      [--engine pdflatex|xelatex|lualatex] [--fonts SETUP,...]

pdflatex (the default) cycles through five Type 1 font setups (more with
--fonts: txfonts, pxfonts, newtx, libertine, stix2, fourier, kpfonts, charter,
euler). xelatex and lualatex set the math with unicode-math and OpenType math
fonts (Latin Modern, TeX Gyre Termes/Pagella/DejaVu, STIX Two; with --fonts
also XITS, Libertinus, Fira, Bonum): glyphs in the Unicode math alphanumerics,
fonts named like "LatinModernMath-Regular-Identity-H". Positions are recorded
the same way on all three (LuaTeX's \savepos/\lastxpos under pdfTeX's names).
Off pdfLaTeX's default cycle the body size varies (10/11/12 pt), drawn from a
separate generator so that the pdfLaTeX sets of a seed stay what they were.

--formulas corpus takes the formulas from real documents instead of the
random generator: inline and display formulas drawn from the LaTeX formula
corpus (../shared/data/formulas/texsrc: the Stacks project, Lebl's analysis and
ODE books, Crowell's physics book; --corpus DIR for another folder of
*.inline.txt / *.display.txt files), so the detector is scored on formulas it
was not developed on: \text{...} and units in text fonts, \mathcal, \mathscr,
\mathbb, primes, sentence punctuation inside displays, matrices. A document
whose formula does not fit its line (a display wider than the column, an inline
formula wider than half of it) gets another formula drawn in its place and is
typeset again. The documents of this mode also vary the class (article, amsart)
and the paragraph layout.

The committed fixtures (tests/fixtures/pdf) are --seed 1 --count 6; the held-out
bench set is a different seed (bench/detect does that itself).
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

FONTS = {
    "cm": r"",
    "lmodern": r"\usepackage{lmodern}\usepackage[T1]{fontenc}",
    "times": r"\usepackage{mathptmx}\usepackage[T1]{fontenc}",
    "palatino": r"\usepackage{mathpazo}\usepackage[T1]{fontenc}",
    "sans": r"\usepackage[T1]{fontenc}\usepackage{helvet}\renewcommand{\familydefault}{\sfdefault}\usepackage{sfmath}",
}
# Further setups, only with --fonts (the default cycle stays the five above, so
# that the fixtures' and the held-out set's seeds keep their meaning): fonts the
# detector was not developed on.
EXTRA_FONTS = {
    "txfonts": r"\usepackage{txfonts}\usepackage[T1]{fontenc}",
    "pxfonts": r"\usepackage{pxfonts}\usepackage[T1]{fontenc}",
    "newtx": r"\usepackage[T1]{fontenc}\usepackage{newtxtext,newtxmath}",
    "libertine": r"\usepackage[T1]{fontenc}\usepackage{libertine}\usepackage[libertine]{newtxmath}",
    "stix2": r"\usepackage[T1]{fontenc}\usepackage{stix2}",
    "fourier": r"\usepackage[T1]{fontenc}\usepackage{fourier}",
    "kpfonts": r"\usepackage[T1]{fontenc}\usepackage{kpfonts}",
    "charter": r"\usepackage[T1]{fontenc}\usepackage[charter]{mathdesign}",
    "euler": r"\usepackage[T1]{fontenc}\usepackage{charter}\usepackage{eulervm}",
}
# XeLaTeX and LuaLaTeX: unicode-math with OpenType math fonts (fonts by file
# name, so fontconfig need not know them). Debian packages: texlive-xetex,
# texlive-luatex, fonts-lmodern, fonts-texgyre, fonts-texgyre-math,
# texlive-fonts-extra (STIX Two, XITS, Libertinus, Fira Math).
OT_FONTS = {
    "lm-math": r"\setmainfont{lmroman10-regular.otf}[BoldFont=lmroman10-bold.otf,ItalicFont=lmroman10-italic.otf]"
               r"\setmathfont{latinmodern-math.otf}",
    "termes-math": r"\setmainfont{texgyretermes-regular.otf}[BoldFont=texgyretermes-bold.otf,ItalicFont=texgyretermes-italic.otf]"
                   r"\setmathfont{texgyretermes-math.otf}",
    "pagella-math": r"\setmainfont{texgyrepagella-regular.otf}[BoldFont=texgyrepagella-bold.otf,ItalicFont=texgyrepagella-italic.otf]"
                    r"\setmathfont{texgyrepagella-math.otf}",
    "stix2-math": r"\setmainfont{STIXTwoText-Regular.otf}[BoldFont=STIXTwoText-Bold.otf,ItalicFont=STIXTwoText-Italic.otf]"
                  r"\setmathfont{STIXTwoMath-Regular.otf}",
    "dejavu-math": r"\setmainfont{DejaVuSans.ttf}[BoldFont=DejaVuSans-Bold.ttf,ItalicFont=DejaVuSans-Oblique.ttf]"
                   r"\setmathfont{texgyredejavu-math.otf}",
}
# Only with --fonts: OpenType setups outside the default cycle.
OT_EXTRA_FONTS = {
    "xits-math": r"\setmainfont{XITS-Regular.otf}[BoldFont=XITS-Bold.otf,ItalicFont=XITS-Italic.otf]"
                 r"\setmathfont{XITSMath-Regular.otf}",
    "libertinus-math": r"\setmainfont{LibertinusSerif-Regular.otf}[BoldFont=LibertinusSerif-Bold.otf,ItalicFont=LibertinusSerif-Italic.otf]"
                       r"\setmathfont{LibertinusMath-Regular.otf}",
    "fira-math": r"\setmainfont{FiraSans-Regular.otf}[BoldFont=FiraSans-Bold.otf,ItalicFont=FiraSans-Italic.otf]"
                 r"\setmathfont{FiraMath-Regular.otf}",
    "bonum-math": r"\setmainfont{texgyrebonum-regular.otf}[BoldFont=texgyrebonum-bold.otf,ItalicFont=texgyrebonum-italic.otf]"
                  r"\setmathfont{texgyrebonum-math.otf}",
}
ENGINES = ("pdflatex", "xelatex", "lualatex")

PREAMBLE = r"""\documentclass[%(size)s%(twocol)s]{article}
\usepackage[margin=%(margin)s]{geometry}
%(engine_setup)s
\makeatletter
\newsavebox\fmbox
\def\fmpos#1#2#3#4#5#6#7#8{}
\def\fmlinewidth#1{}
%% \fmrecord{id}: record the position of what follows (the content of \fmbox) and
%% the box's dimensions; the \write is delayed so the position and page are the
%% ones at shipout.
%% \leavevmode first: a formula that starts a paragraph would otherwise record
%% the position of the vertical list before the paragraph (one line up, no
%% indent) - the truth box of every paragraph-initial formula was off.
\newcommand\fmrecord[1]{%%
  \edef\fm@w{\noexpand\write\noexpand\@auxout{\string\fmpos{#1}%%
    {\noexpand\the\noexpand\pdflastxpos}{\noexpand\the\noexpand\pdflastypos}%%
    {\noexpand\the\noexpand\c@page}{\the\wd\fmbox}{\the\ht\fmbox}{\the\dp\fmbox}%%
    {\the\pdfpageheight}}}%%
  \leavevmode\pdfsavepos\fm@w\usebox\fmbox}
\newcommand\FI[2]{\sbox\fmbox{$#2$}\fmrecord{#1}}
\newcommand\FD[2]{\sbox\fmbox{$\displaystyle #2$}\fmrecord{#1}}
\newcommand\FN[2]{\sbox\fmbox{\normalfont #2}\fmrecord{#1}}
\newcommand\FT[2]{\sbox\fmbox{#2}\fmrecord{#1}}
\providecommand\meta[1]{\ensuremath{\langle}\textit{#1}\ensuremath{\rangle}}
\providecommand\AmS{{\usefont{OMS}{cmsy}{m}{n}A\kern-.1667em\lower.5ex\hbox{M}\kern-.125em S}}
\makeatother
\begin{document}
"""

WORDS = """the of and to in is that for it as was with be by on not he this are or his
from at which but have an they you were her she there been one all we their has would
when if so no more out up into do any your what some can them other than then its only
time new these two may first also after way well many our most over such where could
system method result value function model data case order point process given space
number problem theory paper section proof lemma follows shows consider assume define
hence therefore thus where note example approach error bound estimate condition""".split()

SHORT_WORDS = ["a", "a", "a", "a,", "a.", "I", "A"]
TITLE_SMALL = ["a", "of", "in", "on", "via", "for", "and", "the", "to", "with", "at"]


def front_matter(fr, doc, docclass):
    """A title page's top (--front-matter): a large, often bold title with
    short words in it, authors, a date, an abstract (with inline formulas) and
    keywords, drawn from generator fr; the word classifier's training pages had
    no title and no article "a" (a title fixture's "a," was boxed, 2026-11-28)."""
    words = []
    for k in range(fr.randint(4, 10)):
        w = fr.choice(TITLE_SMALL) if k and fr.random() < 0.3 else fr.choice(WORDS).capitalize()
        words.append(w)
    style = fr.choice(["", "\\bfseries ", "\\bfseries ", "\\scshape "])
    title = style + " ".join(words)
    authors = " \\and ".join("%s.%s %s" % (fr.choice("ABCDEFGHJKLMNPRSTW"),
                                              fr.choice(["", " " + fr.choice("ABCDEJKLMR") + "."]),
                                              fr.choice(WORDS).capitalize() + fr.choice(["son", "er", "i", "ov", "ez"]))
                             for _ in range(fr.randint(1, 3)))
    date = fr.choice(["", "", "March 2024", "\\today"])
    saved, doc.short_words = doc.short_words, True
    abstract = " ".join(doc.sentence(fr.choice([0.0, 0.04, 0.08])) for _ in range(fr.randint(2, 5)))
    doc.short_words = saved
    keywords = ", ".join(fr.choice(WORDS) + " " + fr.choice(WORDS) for _ in range(fr.randint(2, 5)))
    head = "\\title{%s}\n\\author{%s}\n\\date{%s}\n" % (title, authors, date)
    ab = "\\begin{abstract}\n%s\n\\end{abstract}\n" % abstract
    kw = "\\noindent\\textit{Keywords:} %s.\n\n" % keywords
    if docclass == "amsart":
        # amsart sets the abstract with \maketitle, and wants it before.
        return head + ab + "\\maketitle\n" + kw
    return head + "\\maketitle\n" + ab + kw


GREEK = [r"\alpha", r"\beta", r"\gamma", r"\delta", r"\epsilon", r"\theta", r"\lambda",
         r"\mu", r"\pi", r"\sigma", r"\phi", r"\omega", r"\Omega", r"\Gamma", r"\Delta"]
VARS = list("xyzabcnkmtfgu")
OPS = ["+", "-", r"\cdot", r"\times", r"\pm"]
RELS = ["=", r"\le", r"\ge", r"\neq", r"\approx", r"\to", r"\in", r"\subset", r"<", r">"]
FUNCS = [r"\sin", r"\cos", r"\log", r"\exp", r"\tan", "f", "g", r"\max", r"\det"]


def atom(r, depth=0):
    c = r.random()
    if c < 0.35:
        return r.choice(VARS)
    if c < 0.50:
        return r.choice(GREEK)
    if c < 0.62:
        return str(r.randint(1, 99))
    if c < 0.75:
        return "%s_{%s}" % (r.choice(VARS), r.choice(["i", "j", "k", "n", "0", "1", "i+1", "ij"]))
    if c < 0.86:
        return "%s^{%s}" % (r.choice(VARS + GREEK[:4]), r.choice(["2", "3", "n", "k", "-1", r"\prime", "*"]))
    if c < 0.93 and depth < 1:
        return r"%s(%s)" % (r.choice(FUNCS), expr(r, depth + 1, 2))
    return r"\|%s\|" % r.choice(VARS)


def expr(r, depth=0, n=None):
    n = n or r.randint(1, 3)
    parts = [atom(r, depth)]
    for _ in range(n - 1):
        parts.append(r.choice(OPS))
        parts.append(atom(r, depth))
    return " ".join(parts)


def inline_formula(r):
    c = r.random()
    if c < 0.25:
        # A bare number in math mode looks exactly like one in text: no
        # detector (or annotator) can tell them apart, so the truth has none.
        a = atom(r)
        while a.isdigit():
            a = atom(r)
        return a
    if c < 0.55:
        return "%s %s %s" % (atom(r), r.choice(RELS), expr(r, 1))
    if c < 0.65:
        return r"\frac{%s}{%s}" % (atom(r, 1), atom(r, 1))
    if c < 0.75:
        return r"\sqrt{%s}" % expr(r, 1, 2)
    if c < 0.85:
        return r"\sum_{i=1}^{n} %s" % atom(r, 1)
    if c < 0.92:
        return r"%s_1, \dots, %s_n" % ((r.choice(VARS),) * 2)
    return r"O(%s \log %s)" % ((r.choice("nmk"),) * 2)


def display_formula(r):
    c = r.random()
    if c < 0.2:
        return r"\int_{%s}^{%s} %s \, d%s = %s" % (
            r.choice(["0", "a", r"-\infty"]), r.choice(["1", "b", r"\infty"]),
            expr(r, 1, 2), r.choice("xt"), expr(r, 1))
    if c < 0.4:
        return r"\frac{%s}{%s} %s %s" % (expr(r, 1, 2), expr(r, 1, 2), r.choice(RELS), expr(r, 1))
    if c < 0.5:
        return r"\sum_{%s=1}^{%s} %s = %s" % ("k", "N", expr(r, 1, 2), r"\frac{%s}{%s}" % (atom(r, 1), atom(r, 1)))
    if c < 0.6:
        return r"%s = \begin{pmatrix} %s & %s \\ %s & %s \end{pmatrix}" % (
            r.choice("AMBR"), atom(r, 1), atom(r, 1), atom(r, 1), atom(r, 1))
    if c < 0.72:
        rows = [r"%s &%s %s" % (atom(r, 1) if i == 0 else "", r.choice(RELS), expr(r, 1))
                for i in range(r.randint(2, 3))]
        return r"\begin{aligned} %s \end{aligned}" % r" \\ ".join(rows)
    if c < 0.8:
        return r"%s(x) = \begin{cases} %s & x \ge 0, \\ %s & x < 0. \end{cases}" % (
            r.choice("fgh"), expr(r, 1), expr(r, 1))
    if c < 0.88:
        return r"\sqrt{%s} %s \left( %s \right)^{2}" % (expr(r, 1, 2), r.choice(RELS), r"\frac{%s}{%s}" % (atom(r, 1), atom(r, 1)))
    return "%s %s %s" % (expr(r, 1, 3), r.choice(RELS), expr(r, 1, 3))


# --formulas classes: the failure classes seen on PDFs made elsewhere (issue 14
# section 1), each formula tagged with its class in the truth ("class") so the
# scorer can report recall per class. Its own generator functions: the generated
# and corpus modes draw exactly what they drew before.
SPECIAL = [r"\operatorname{ph}", r"\mathrm{Ln}", r"\operatorname{Ai}", r"\operatorname{Bi}",
           r"\mathrm{erfc}", r"\mathrm{Si}", r"\mathrm{Ci}", r"\mathrm{sn}", r"\mathrm{cn}",
           r"\mathrm{dn}", r"\mathrm{ns}", r"\operatorname{Li}_{2}", r"\mathrm{Ei}", r"\operatorname{Re}",
           r"\operatorname{sgn}", r"\operatorname{Tr}", r"\mathsf{j}_{%s}", r"\mathsf{y}_{%s}",
           r"\mathrm{P}_{%s}", r"\mathrm{Q}_{%s}", r"\mathrm{J}_{%s}", r"\mathrm{K}_{%s}",
           r"\mathrm{U}", r"\mathrm{M}"]
CLASS_VARS = list("xyzatuk") + [r"\nu", r"\lambda", r"\kappa", r"\theta"]


def c_var(r):
    return r.choice(CLASS_VARS)


def c_fname(r):
    f = r.choice(SPECIAL)
    return f % r.choice(["n", r"\nu", "1", "0", "m", "2"]) if "%s" in f else f


def c_fcall(r):
    """A special function applied: `\\mathrm{ns}\\,z`, `\\mathsf{j}_n(x)`, `\\operatorname{ph}(a+b)`."""
    f, v = c_fname(r), c_var(r)
    c = r.random()
    if c < 0.3:
        return r"%s\,%s" % (f, v)
    if c < 0.7:
        return r"%s(%s)" % (f, v)
    return r"%s(%s %s %s)" % (f, v, r.choice(["+", "-"]), r.choice([c_var(r), str(r.randint(1, 9))]))


def c_frac(r):
    return r"\frac{%s}{%s}" % (r.choice([c_var(r), c_fcall(r), "1", "%s^{2}" % c_var(r)]),
                               r.choice([c_var(r), str(r.randint(2, 9)), "%s+1" % c_var(r)]))


LR = [(r"\left(", r"\right)"), (r"\left[", r"\right]"), (r"\left\{", r"\right\}"),
      (r"\left|", r"\right|"), (r"\left\langle", r"\right\rangle"), (r"\left\|", r"\right\|")]


def c_leftright(r, display=False):
    """`\\left( ... \\right)` around something tall: the delimiters come from CMEX
    (or CMR) at another size than the text."""
    o, cl = r.choice(LR)
    inner = r.choice([c_frac(r), r"\sum_{k=0}^{%s} %s" % (r.choice(["n", r"\infty"]), c_var(r)),
                      r"%s + %s" % (c_frac(r), c_var(r)), r"\int_{0}^{%s} %s\,dt" % (c_var(r), c_fcall(r))])
    if display and r.random() < 0.5:
        inner = r"%s %s \left( %s \right)" % (inner, r.choice(["+", "-"]), c_frac(r))
    tail = r.choice(["", "^{2}", "^{%s}" % c_var(r), "_{%s}" % c_var(r), ""])
    head = r.choice(["", "%s = " % c_fcall(r), r"%s " % c_var(r), r"\exp"])
    return r"%s%s %s %s%s" % (head, o, inner, cl, tail)


def c_number(r, display=False):
    """Digit groups (`1.12139\\;32942`), powers of ten, a number with a script."""
    def digits(k):
        return "".join(str(r.randint(0, 9)) for _ in range(k))
    sep = r.choice([r"\;", r"\,", r"\:", r"\ "])
    c = r.random()
    if display or c < 0.35:
        groups = sep.join(digits(5) for _ in range(r.randint(1, 3)))
        val = "%d.%s" % (r.randint(0, 9), groups)
        if display:
            return r.choice([val + r"\ldots", r"%s = %s" % (c_fcall(r), val), val,
                             r"%s \times 10^{%d}" % (val, r.randint(-9, 9))])
        # Inline, a digit group stands beside a relation: alone it is text
        # (a bare number in math looks exactly like one in running text).
        return r"%s %s %s" % (r.choice([c_var(r), c_fcall(r)]), r.choice(["=", r"\approx"]),
                              val if r.random() < 0.5 else r"%s\ldots" % val)
    if c < 0.55:
        return r"%d^{%s}" % (r.randint(2, 99), r.choice(["1", "2", "3", "n", "-1", "k"]))
    if c < 0.75:
        return r"%s \times 10^{%d}" % ("%d.%s" % (r.randint(1, 9), digits(r.randint(1, 4))), r.randint(-12, 12))
    return r"%d_{%s}" % (r.randint(2, 16), r.choice(["2", "8", "10", "16", "p"]))


def c_bold(r):
    """A bold letter with a script: `\\mathbf{R}_2`, `\\mathbf{x}^{(k)}`."""
    b = r"\mathbf{%s}" % r.choice("RxAeBuvMHZ")
    s = r.choice(["_{2}", "_{i}", "^{(k)}", "^{-1}", "^{T}", "_{n}^{2}", "_{0}"])
    if r.random() < 0.3:
        return r"%s%s %s %s" % (b, s, r.choice(["=", r"\in", "+"]), r.choice([c_var(r), r"\mathbf{0}", r"\mathbb{R}^{3}"]))
    return b + s


def c_opname_expr(r):
    """An operator name in the middle of a formula, the split the class is about."""
    c = r.random()
    if c < 0.4:
        return r"%s = %s" % (c_fcall(r), r.choice([c_frac(r), c_var(r) + "^{2}", c_fcall(r)]))
    if c < 0.7:
        return r"%s %s %s" % (c_var(r), r.choice(["+", "=", r"\le"]), c_fcall(r))
    return c_fcall(r)


def class_inline(r):
    c = r.random()
    if c < 0.3:
        return "opname", c_opname_expr(r)
    if c < 0.5:
        return "leftright", c_leftright(r)
    if c < 0.7:
        return "numbers", c_number(r)
    if c < 0.85:
        return "bold", c_bold(r)
    return "generated", inline_formula(r)


TEXT_FRACS = [(r"\text{circumference}", "T"), (r"\text{distance}", r"\text{time}"), (r"\text{change in } x", r"\Delta t"),
              (r"\text{work done}", "t"), (r"100\ \textup{cm}", r"1\ \textup{m}"), (r"1\ \textup{km}", r"10^{3}\ \textup{m}"),
              (r"60\ \textup{s}", r"1\ \textup{min}")]
CONDITIONS = [r"\text{for }n \geq c", r"\text{for all } %s \in U", r"\text{if } %s > 0", r"\text{in } U_\iota \cap U_\kappa",
              r"\text{whenever } %s \neq 0", r"\text{on } [0, 1]", r"\text{otherwise}"]


def c_condition(r):
    c = r.choice(CONDITIONS)
    return c % c_var(r) if "%s" in c else c


def c_textdisp(r):
    """A display with words in the text font inside it (issue 14: cut at the
    words into inline pieces): cases with \\text conditions, aligned rows with a
    text column, a trailing condition after a \\quad, words or units in a
    fraction."""
    c = r.random()
    if c < 0.25:
        v = c_var(r)
        rows = [r"%s & %s" % (r.choice(["0", "1", c_frac(r), c_fcall(r)]), r.choice([
            r"\text{ if $%s > 0$}" % v, r"\text{if } %s \ge 0" % v, r"\text{for } %s \in U" % v]))]
        rows.append(r"%s & %s" % (r.choice(["1", "-1", c_frac(r)]), r.choice([
            r"\text{ if $%s \leq 0$}" % v, r"\text{otherwise}", r"\text{if } %s < 0" % v])))
        return r"%s(%s) = \begin{cases} %s \end{cases}" % (r.choice("fgh"), v, r" \\ ".join(rows))
    if c < 0.45:
        rows = [r"& %s = %s & & %s" % (c_fcall(r), r.choice([c_frac(r), c_var(r), "0", "1"]), c_condition(r)) for _ in range(2)]
        return r"\begin{aligned} %s \end{aligned}" % r" \\ ".join(rows)
    if c < 0.65:
        return r"%s %s %s %s %s" % (c_var(r), r.choice(["=", r"\le", r"\colon X \to"]), r.choice([c_frac(r), c_fcall(r)]),
                                    r.choice([r"\quad", r"\qquad"]), c_condition(r))
    num, den = r.choice(TEXT_FRACS)
    if c < 0.85:
        return r"%s = \frac{%s}{%s} = %s" % (c_var(r), num, den, c_frac(r))
    return r"\frac{%s}{%s} %s \frac{%s}{%s}" % (num, den, r.choice([r"\times", "="]), *r.choice(TEXT_FRACS))


def class_display(r, twocol):
    c = r.random()
    if c < 0.3 or (twocol and c < 0.5):
        # A long display: an aligned block of two rows, each nearly a line wide.
        rows = []
        for i in range(2):
            terms = [c_fcall(r) if r.random() < 0.5 else c_frac(r)
                     for _ in range(r.randint(2, 3) if twocol else r.randint(4, 6))]
            rows.append((r"%s &= " % c_fcall(r) if i == 0 else r"&\quad + ") + " + ".join(terms))
        return "long", r"\begin{aligned} %s \end{aligned}" % r" \\ ".join(rows)
    if c < 0.6:
        return "leftright", c_leftright(r, True) + r.choice(["", " = " + c_frac(r), " + " + c_fcall(r)])
    if c < 0.75:
        return "opname", r"%s = %s %s" % (c_fcall(r), c_frac(r), " + ".join(c_fcall(r) for _ in range(r.randint(1, 3))))
    if c < 0.85:
        return "numbers", c_number(r, True)
    if c < 0.92:
        return "bold", r"%s = %s" % (c_bold(r), c_leftright(r))
    return "generated", display_formula(r)


# Prose that is not math (never in the truth's regions: recorded as "decoys",
# a detection on one is a false positive of class "prose"): meta-variables of
# syntax descriptions, logos, words in emphasis fonts.
META = ["label", "name", "text", "key", "cols", "pos", "width", "num", "env", "arg", "math"]
LOGOS = [r"\TeX", r"\LaTeX", r"\AmS", r"\AmS-\LaTeX", r"\LaTeXe", r"Bib\TeX"]


def class_decoy(r):
    c = r.random()
    if c < 0.45:
        return r"\meta{%s}" % r.choice(META)
    if c < 0.6:
        return r"\texttt{\textbackslash %s\{}\meta{%s}\texttt{\}}" % (r.choice(["begin", "label", "tag", "ref", "section"]), r.choice(META))
    if c < 0.8:
        return r.choice(LOGOS)
    # Words of three letters or more: a single italic or bold letter is what
    # math looks like in mathptmx or \\mathbf and no rule can tell them apart.
    return r.choice([r"\emph{%s}" % r.choice(["i.e.", "not", "only", "e.g.", "all"]),
                     r"\textsf{%s}" % r.choice(WORDS), r"\textsl{%s}" % r.choice(WORDS),
                     r"\textbf{%s}" % r.choice(["Note", "Remark", "Warning"])])


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "data", "formulas", "texsrc")
# Formulas that need a document around them (references, tags, spacing by
# hand, text-mode breaks) or that are typographically text (bare numbers: not
# in the truth, see inline_formula) are left out.
CORPUS_SKIP = re.compile(r"\\(label|ref|eqref|cite|tag|notag|nonumber|hspace|vspace|intertext|"
                         r"newline|linebreak|pagebreak|displaybreak|footnote|hbox|mbox|raisebox|"
                         r"phantom|hphantom|vphantom|kern|mkern|rule|color|textcolor|href|url|shortintertext|"
                         r"allowdisplaybreaks|qedhere|index|write|input|include)\b")
BARE_NUMBER = re.compile(r"^[\d\s.,]*$")


class Corpus:
    """Real formulas, one per line, from DIR/*.inline.txt and DIR/*.display.txt.
    A draw picks a source file first, then a formula: the biggest source (the
    Stacks project) does not drown the physics and analysis books."""

    def __init__(self, path):
        self.inline, self.display = [], []  # one list per source file
        names = sorted(os.listdir(path)) if os.path.isdir(path) else []
        for name in names:
            kind = "inline" if name.endswith(".inline.txt") else "display" if name.endswith(".display.txt") else None
            if not kind:
                continue
            with open(os.path.join(path, name), encoding="utf-8") as f:
                usable = [line.strip() for line in f if self.usable(line.strip(), kind)]
            if usable:
                getattr(self, kind).append(usable)
        if not self.inline or not self.display:
            raise SystemExit("no usable formulas in %s (need *.inline.txt and *.display.txt)" % path)

    @staticmethod
    def usable(f, kind):
        if not f or BARE_NUMBER.match(f) or CORPUS_SKIP.search(f) or "%" in f:
            return False
        if f.count("{") != f.count("}"):
            return False
        if kind == "inline":
            return len(f) <= 70 and "\\\\" not in f and "&" not in f and "\\begin" not in f
        return len(f) <= 220 and "\\begin{split}" not in f and "\\begin{align" not in f.replace("aligned", "")


class Doc:
    def __init__(self, r, corpus=None, classes=False, twocol=False, textdisp_r=None):
        self.r = r
        self.corpus = corpus
        self.classes = classes  # --formulas classes
        self.twocol = twocol
        self.textdisp_r = textdisp_r  # --formulas classes: its own generator
        self.formulas = {}  # id -> (kind, latex)
        self.cls = {}  # id -> class (--formulas classes)
        self.last_class = None
        self.n = 0
        self.eqno = 0
        self.short_words = False  # --front-matter: prose with the article "a"
        self.back_to_back = 0.0  # --back-to-back: share of displays followed at once by another
        self.b2b_r = None

    def word(self):
        # The word list has no one-letter word; prose's commonest, the
        # article "a" ("a," of the title fixture), is a math variable's
        # twin on a scan (--front-matter only: other sets draw as before).
        if self.short_words and self.r.random() < 0.05:
            return self.r.choice(SHORT_WORDS)
        return self.r.choice(WORDS)

    def inline_formula(self):
        if self.classes:
            self.last_class, f = class_inline(self.r)
            return f
        return self.r.choice(self.r.choice(self.corpus.inline)) if self.corpus else inline_formula(self.r)

    def display_formula(self):
        if self.classes:
            self.last_class, f = class_display(self.r, self.twocol)
            # 7 % of the displays have words in them (textdisp), drawn from
            # a generator of their own after the usual draw: the classes
            # documents of earlier seeds stay what they were but for those
            # displays.
            if self.textdisp_r.random() < 0.07:
                self.last_class, f = "textdisp", c_textdisp(self.textdisp_r)
            return f
        return self.r.choice(self.r.choice(self.corpus.display)) if self.corpus else display_formula(self.r)

    def new_id(self, kind, latex):
        self.n += 1
        fid = "f%d" % self.n
        self.formulas[fid] = (kind, latex)
        if self.classes:
            self.cls[fid] = {"number": "eqno", "decoy": "prose"}.get(kind, self.last_class)
        return fid

    def sentence(self, inline_rate):
        r = self.r
        words = []
        for _ in range(r.randint(6, 16)):
            c = r.random()
            if self.classes and r.random() < 0.05:
                d = class_decoy(r)
                words.append(r"\FT{%s}{%s}" % (self.new_id("decoy", d), d))
            elif c < inline_rate:
                f = self.inline_formula()
                words.append(r"\FI{%s}{%s}" % (self.new_id("inline", f), f))
            elif c < inline_rate + 0.02:
                words.append(r"\emph{%s %s}" % (r.choice(WORDS), r.choice(WORDS)))
            elif c < inline_rate + 0.04:
                words.append(str(r.choice([2, 3, 12, 1998, 2024, 42])))
            elif c < inline_rate + 0.05:
                words.append("[%d]" % r.randint(1, 40))
            else:
                words.append(self.word())
        s = " ".join(words)
        s = s[0].upper() + s[1:] if s[0].isalpha() else s
        return s + r.choice([".", ".", ".", ",", ":"]) if not s.endswith("}") else s + "."

    def display(self):
        r = self.r
        f = self.display_formula()
        fid = self.new_id("display", f)
        if r.random() < 0.5:
            self.eqno += 1
            num = "(%d)" % self.eqno if r.random() < 0.6 else "(%d.%d)" % (r.randint(1, 5), self.eqno)
            nid = self.new_id("number", num)
            return "\\begin{equation*}\\FD{%s}{%s}\\tag*{\\FN{%s}{%s}}\\end{equation*}\n" % (fid, f, nid, num)
        return "\\[ \\FD{%s}{%s} \\]\n" % (fid, f)

    def display_back_to_back(self):
        """A second display right after the first (no text line between),
        drawn from the --back-to-back generator alone: the documents' other
        draws stay what they were but for the numbers after it."""
        saved = self.r, self.textdisp_r
        self.r = self.textdisp_r = self.b2b_r
        try:
            return self.display()
        finally:
            self.r, self.textdisp_r = saved

    def body(self, n_paragraphs):
        r = self.r
        out = []
        sec = 0
        for p in range(n_paragraphs):
            if p % 4 == 0:
                sec += 1
                out.append("\\section{%s %s}\n" % (r.choice(WORDS).capitalize(), r.choice(WORDS)))
            rate = r.choice([0.0, 0.04, 0.08, 0.12])
            para = [self.sentence(rate) for _ in range(r.randint(2, 5))]
            if r.random() < 0.25:
                f = self.inline_formula()
                para.insert(1, r"Also\footnote{A note on \FI{%s}{%s} and %s.}" % (self.new_id("inline", f), f, r.choice(WORDS)))
            out.append(" ".join(para) + "\n")
            for _ in range(r.choice([0, 1, 1, 2])):
                out.append(self.display())
                if self.back_to_back > 0 and self.b2b_r.random() < self.back_to_back:
                    out.append(self.display_back_to_back())
                out.append(self.sentence(rate) + "\n\n")
            out.append("\n")
        return "".join(out)


PDFLATEX_SETUP = r"""\usepackage{amsmath,amssymb}
%(fonts)s
\pdfinfo{/Title (Formulate detection truth %(name)s)}"""
# unicode-math after amsmath; LuaTeX calls pdfTeX's position primitives
# \savepos, \lastxpos, \lastypos and has \pageheight; XeTeX has pdfTeX's names.
# Positions are in sp from the page's lower-left corner on all three engines.
OT_SETUP = r"""\usepackage{amsmath}
\usepackage{fontspec}
\usepackage{unicode-math}
%(fonts)s
\ifdefined\pdfsavepos\else
  \let\pdfsavepos\savepos \let\pdflastxpos\lastxpos \let\pdflastypos\lastypos
  \let\pdfpageheight\pageheight
\fi
\ifdefined\pdfextension
  \pdfextension info{/Title (Formulate detection truth %(name)s)}
\else
  \AtBeginDocument{\special{pdf:docinfo <</Title (Formulate detection truth %(name)s)>>}}
\fi"""

POS_RE = re.compile(r"\\fmpos\{(f\d+)\}\{(-?\d+)\}\{(-?\d+)\}\{(\d+)\}\{([-\d.]+)pt\}\{([-\d.]+)pt\}\{([-\d.]+)pt\}\{([-\d.]+)pt\}")
SP_PER_BP = 65536 * 72.27 / 72.0
BP_PER_PT = 72.0 / 72.27


def font_setup(engine, font):
    if engine == "pdflatex":
        return FONTS.get(font, EXTRA_FONTS.get(font))
    return OT_FONTS.get(font, OT_EXTRA_FONTS.get(font))


LINEWIDTH_RE = re.compile(r"\\fmlinewidth\{([-\d.]+)pt\}")
CORPUS_PACKAGES = {"pdflatex": r"\usepackage{amsfonts,mathrsfs,mathtools}",
                   "xelatex": r"\usepackage{mathtools}", "lualatex": r"\usepackage{mathtools}"}


def too_wide(aux, doc):
    """Formula ids whose box does not fit the line (corpus mode draws again)."""
    m = LINEWIDTH_RE.search(aux)
    if not m:
        return []
    line = float(m.group(1))
    bad = []
    for p in POS_RE.finditer(aux):
        fid, wd = p.group(1), float(p.group(5))
        kind = doc.formulas[fid][0]
        if (kind == "display" and wd > 0.98 * line) or (kind == "inline" and wd > 0.5 * line):
            bad.append(fid)
    return sorted(set(bad))


def make_one(name, seed, out_dir, font=None, twocol=None, engine="pdflatex", corpus=None, classes=False,
             front=False, back_to_back=0.0):
    r = random.Random(seed)
    font = font or r.choice(sorted(FONTS))
    twocol = r.random() < 0.35 if twocol is None else twocol
    if classes:
        # Long displays in two columns are one of the classes: more two-column
        # pages, from a generator of their own.
        twocol = random.Random(seed * 13 + 7).random() < 0.6
    doc = Doc(r, corpus, classes, twocol, random.Random(seed * 17 + 11))
    doc.back_to_back, doc.b2b_r = back_to_back, random.Random(seed * 23 + 17)
    margin = r.choice(["1in", "1.2in", "0.8in"])
    # The body size varies only off pdfLaTeX's default font cycle, from its own
    # generator, so that the pdfLaTeX sets of a seed stay what they were.
    size = "10pt"
    if engine != "pdflatex" or font in EXTRA_FONTS or corpus or classes:
        size = random.Random(seed * 7 + 3).choice(["10pt", "11pt", "12pt"])
    setup = (PDFLATEX_SETUP if engine == "pdflatex" else OT_SETUP) % {"fonts": font_setup(engine, font), "name": name}
    docclass = "article"
    if classes:
        setup = CORPUS_PACKAGES[engine] + "\n" + setup
    if corpus:
        # Its own generator again: the generated mode's documents stay as they were.
        lr = random.Random(seed * 11 + 5)
        docclass = lr.choice(["article", "article", "amsart"])
        setup = CORPUS_PACKAGES[engine] + "\n" + setup
        if engine != "pdflatex":
            # mathtools before unicode-math
            setup = setup.replace(r"\usepackage{mathtools}" + "\n" + r"\usepackage{amsmath}", r"\usepackage{amsmath}\usepackage{mathtools}")
        if lr.random() < 0.3:
            setup += "\n\\usepackage{parskip}"
    src = PREAMBLE % {"twocol": ",twocolumn" if twocol else "", "margin": margin, "size": size,
                      "engine_setup": setup}
    src = src.replace("{article}", "{%s}" % docclass, 1)
    src += "\\makeatletter\\immediate\\write\\@auxout{\\string\\fmlinewidth{\\the\\linewidth}}\\makeatother\n"
    if front:
        src += front_matter(random.Random(seed * 19 + 13), doc, docclass)
        doc.short_words = True
    src += doc.body(r.randint(4, 7) if not twocol else r.randint(6, 10))
    src += "\\end{document}\n"
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(10):
            with open(os.path.join(tmp, name + ".tex"), "w") as f:
                f.write(src)
            res = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", name + ".tex"],
                                 cwd=tmp, capture_output=True, text=True)
            if res.returncode != 0:
                # A corpus formula that this engine cannot typeset (unicode-math
                # is stricter than pdfLaTeX): draw again for the formulas on the
                # source line TeX stopped at.
                m = re.search(r"^l\.(\d+) ", res.stdout, re.M)
                bad = []
                if (corpus or classes) and m:
                    line = src.split("\n")[int(m.group(1)) - 1]
                    bad = [fid for fid in re.findall(r"\\F[IDT]\{(f\d+)\}", line)]
                if not bad:
                    sys.stderr.write(res.stdout[-3000:])
                    raise RuntimeError("%s failed for %s" % (engine, name))
            else:
                aux = open(os.path.join(tmp, name + ".aux")).read()
                bad = too_wide(aux, doc) if corpus or classes else []
            if not bad:
                break
            for fid in bad:
                kind, old = doc.formulas[fid]
                if kind == "decoy":
                    new = class_decoy(doc.r)
                else:
                    new = doc.display_formula() if kind == "display" else doc.inline_formula()
                    if doc.classes:
                        doc.cls[fid] = doc.last_class
                macro = {"display": "FD", "inline": "FI", "decoy": "FT"}[kind]
                src = src.replace("\\%s{%s}{%s}" % (macro, fid, old), "\\%s{%s}{%s}" % (macro, fid, new), 1)
                doc.formulas[fid] = (kind, new)
        else:
            raise RuntimeError("%s: formulas still too wide or failing after 10 draws" % name)
        shutil.copy(os.path.join(tmp, name + ".pdf"), os.path.join(out_dir, name + ".pdf"))
        if os.environ.get("FM_KEEP_TEX"):
            shutil.copy(os.path.join(tmp, name + ".tex"), os.path.join(out_dir, name + ".tex"))
    return write_truth(name, aux, doc, out_dir,
                       {"engine": engine, "font_setup": font, "class": docclass,
                        "formulas": "classes" if classes else "corpus" if corpus else "generated",
                        "size": size, "two_column": twocol})


def write_truth(name, aux, doc, out_dir, info):
    regions = []
    decoys = []
    seen = set()
    for m in POS_RE.finditer(aux):
        fid, x, y, page, wd, ht, dp, ph = m.groups()
        if fid in seen:
            continue
        seen.add(fid)
        kind, latex = doc.formulas[fid]
        x_bp = int(x) / SP_PER_BP
        y_bp = int(y) / SP_PER_BP
        page_h = float(ph) * BP_PER_PT
        x0 = x_bp
        x1 = x_bp + float(wd) * BP_PER_PT
        top = page_h - (y_bp + float(ht) * BP_PER_PT)
        bottom = page_h - (y_bp - float(dp) * BP_PER_PT)
        if bottom <= top:
            # A corpus "formula" of spacing only (`\qquad\quad`) has a width but no
            # height and no ink: no detector can find it and score.py refuses an empty
            # box. Left out here so that the documents themselves stay as drawn.
            continue
        region = {"page": int(page), "kind": kind,
                  "box": [round(x0, 2), round(top, 2), round(x1, 2), round(bottom, 2)], "latex": latex}
        if getattr(doc, "cls", None):
            region["class"] = doc.cls[fid]
        (decoys if kind == "decoy" else regions).append(region)
    missing = set(doc.formulas) - seen
    if missing:
        raise RuntimeError("%s: no position for %d formulas" % (name, len(missing)))
    regions.sort(key=lambda g: (g["page"], g["box"][1], g["box"][0]))
    truth = {"format": "formulate-detect-truth-1", "pdf": name + ".pdf", "units": "pt",
             "origin": "top-left"}
    truth.update(info)
    truth["regions"] = regions
    if decoys:
        # Prose that is not math (--formulas classes): a detection on one is a
        # false positive of class "prose" (score.py --classes).
        decoys.sort(key=lambda g: (g["page"], g["box"][1], g["box"][0]))
        truth["decoys"] = decoys
    with open(os.path.join(out_dir, name + ".truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    return len(regions)


def balanced_arg(text, pos):
    """The {...} group starting at text[pos] == '{': (content, end index)."""
    depth = 0
    for k in range(pos, len(text)):
        if text[k] == "{" and text[k - 1] != "\\":
            depth += 1
        elif text[k] == "}" and text[k - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[pos + 1:k], k + 1
    raise ValueError("unbalanced braces at %d" % pos)


class BodyDoc:
    """A hand-written document body (--body): its \\FI/\\FD/\\FN{id}{...} are the truth."""

    def __init__(self, body):
        self.body = body
        self.formulas = {}
        kinds = {"FI": "inline", "FD": "display", "FN": "number", "FT": "decoy"}
        for m in re.finditer(r"\\(FI|FD|FN|FT)\{(f\d+)\}", body):
            latex, _ = balanced_arg(body, m.end())
            if m.group(2) in self.formulas:
                raise SystemExit("formula id %s used twice" % m.group(2))
            self.formulas[m.group(2)] = (kinds[m.group(1)], latex)


def make_from_body(name, body_path, out_dir, font, docclass, engine="pdflatex", twocol=False, size="10pt"):
    """Typesets a hand-written body (a fixture) with the recording macros."""
    body = open(body_path, encoding="utf-8").read()
    doc = BodyDoc(body)
    setup = CORPUS_PACKAGES[engine] + "\n" + (PDFLATEX_SETUP if engine == "pdflatex" else OT_SETUP) % {
        "fonts": font_setup(engine, font), "name": name}
    src = PREAMBLE % {"twocol": ",twocolumn" if twocol else "", "margin": "1in", "size": size,
                      "engine_setup": setup}
    src = src.replace("{article}", "{%s}" % docclass, 1) + body + "\n\\end{document}\n"
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, name + ".tex"), "w") as f:
            f.write(src)
        res = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", name + ".tex"],
                             cwd=tmp, capture_output=True, text=True)
        if res.returncode != 0:
            sys.stderr.write(res.stdout[-3000:])
            raise RuntimeError("%s failed for %s" % (engine, name))
        aux = open(os.path.join(tmp, name + ".aux")).read()
        shutil.copy(os.path.join(tmp, name + ".pdf"), os.path.join(out_dir, name + ".pdf"))
    info = {"engine": engine, "font_setup": font, "class": docclass,
            "formulas": "hand-written " + os.path.basename(body_path)}
    if size != "10pt":  # (the 10 pt fixtures' truth stays byte for byte what it was)
        info["size"] = size
    return write_truth(name, aux, doc, out_dir, info)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prefix", default="truth")
    ap.add_argument("--first", type=int, default=0,
                    help="index of the first document (its content is drawn from seed*1000+index): "
                    "tools/data/pdf_crops.py gives each engine its own documents of one seed")
    ap.add_argument("--engine", default="pdflatex", choices=ENGINES,
                    help="TeX engine; xelatex and lualatex set math with unicode-math and OpenType math fonts")
    ap.add_argument("--fonts", help="comma-separated font setups to cycle through (pdflatex default: %s; "
                    "also: %s; xelatex/lualatex default: %s; also: %s)"
                    % (",".join(sorted(FONTS)), ",".join(sorted(EXTRA_FONTS)),
                       ",".join(sorted(OT_FONTS)), ",".join(sorted(OT_EXTRA_FONTS))))
    ap.add_argument("--formulas", default="generated", choices=("generated", "corpus", "classes"),
                    help="generated: the random formula generator; corpus: real formulas from --corpus; "
                    "classes: the failure classes of issue 14 (special functions and operator names, "
                    "\\left...\\right, digit groups and one-token numbers, bold scripted letters, long "
                    "displays in two columns, prose with meta-variables and logos), tagged per class")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS,
                    help="folder of *.inline.txt and *.display.txt formula files (default: %(default)s)")
    ap.add_argument("--body", help="typeset this hand-written document body (\\FI/\\FD/\\FN{id}{...} "
                    "formulas) as OUT/PREFIX.pdf with its truth, instead of generating documents")
    ap.add_argument("--class", dest="docclass", default="article", help="document class for --body")
    ap.add_argument("--twocolumn", action="store_true", help="two columns for --body")
    ap.add_argument("--size", default="10pt", choices=("10pt", "11pt", "12pt"),
                    help="body size for --body (default %(default)s): a class that shows only off "
                    "10 pt, such as a footnote's display-style fraction at 12 pt")
    ap.add_argument("--front-matter", action="store_true",
                    help="begin each document with a title, authors, an abstract and keywords, and put the "
                    "article \"a\" into its prose (training pages for the scanned-page word classifier)")
    ap.add_argument("--back-to-back", type=float, default=0.0, metavar="SHARE",
                    help="this share of the displays (0-1, default 0) is followed at once by a second display, "
                    "no text between (\\[...\\] \\[...\\], two equations in a row); drawn from a generator of "
                    "its own, so a seed's documents stay what they were without it")
    a = ap.parse_args()
    if a.body:
        os.makedirs(a.out, exist_ok=True)
        font = (a.fonts or ("cm" if a.engine == "pdflatex" else "lm-math")).split(",")[0]
        n = make_from_body(a.prefix, a.body, a.out, font, a.docclass, a.engine, a.twocolumn, a.size)
        print("%s.pdf: %d regions in %s" % (a.prefix, n, a.out))
        return
    corpus = Corpus(a.corpus) if a.formulas == "corpus" else None
    os.makedirs(a.out, exist_ok=True)
    if a.engine == "pdflatex":
        default, known = sorted(FONTS), sorted(FONTS) + sorted(EXTRA_FONTS)
    else:
        default, known = sorted(OT_FONTS), sorted(OT_FONTS) + sorted(OT_EXTRA_FONTS)
    fonts = a.fonts.split(",") if a.fonts else default
    for f in fonts:
        if f not in known:
            sys.exit("unknown font setup %r for %s (known: %s)" % (f, a.engine, ", ".join(known)))
    total = 0
    for i in range(a.first, a.first + a.count):
        # Cycle through the font setups so every set covers all of them.
        name = "%s-%d-%02d" % (a.prefix, a.seed, i)
        total += make_one(name, a.seed * 1000 + i, a.out, font=fonts[i % len(fonts)], engine=a.engine,
                          corpus=corpus, classes=a.formulas == "classes", front=a.front_matter,
                          back_to_back=a.back_to_back)
    print("%d PDFs, %d regions in %s" % (a.count, total, a.out))


if __name__ == "__main__":
    main()
