#!/usr/bin/python3
"""tools/data/latex_tokens.py: unit cases, and with --corpus a round trip
(tokens -> string -> tokens) and idempotence check over a sample of the
training corpus in ../shared (skipped, exit 77, when it is absent)."""
import os
import random
import sys

ROOT = os.environ.get("FE_SOURCE_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "data"))
import latex_tokens as lt  # noqa: E402
import generate_formulas  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def norm(raw, spaced=False):
    return lt.detokenize(lt.normalize(raw, spaced))


def drops(raw, reason, spaced=False):
    try:
        lt.normalize(raw, spaced)
    except lt.NormalizeError as e:
        check(e.reason == reason, f"{raw!r} dropped as {e.reason}, want {reason}")
        return
    check(False, f"{raw!r} should be dropped ({reason})")


def unit():
    # the detokeniser rule of docs/model.md
    check(lt.detokenize(["\\alpha", "x"]) == "\\alpha x", "space before a letter")
    check(lt.detokenize(["\\alpha", "2"]) == "\\alpha2", "no space before a digit")
    check(lt.detokenize(["\\sin", "\\theta"]) == "\\sin\\theta", "no space before a command")
    check(lt.detokenize(["\\,", "x"]) == "\\,x", "control symbol takes no space")
    check(lt.detokenize(["\\left(", "x", "\\right)"]) == "\\left(x\\right)", "merged delims")
    # one canonical form for spellings that render the same
    check(norm("\\operatorname { s i n } x", True) == norm("\\sin x"), "im2latex operatorname")
    check(norm("\\mathop{\\mathrm{Spec}}\\nolimits(A)") == "\\operatorname{Spec}(A)", "mathop")
    check(norm("\\mathop{\\mathrm{lim}}_{n}") == "\\lim_{n}", "mathop named operator")
    check(norm("\\operatorname* { l i m } _ { x }", True) == "\\lim_{x}", "im2latex operatorname*")
    check(lt.normalize("\\operatorname*{colim}") ==
          ["\\operatorname", "*", "{", "c", "o", "l", "i", "m", "}"], "operatorname* tokens")
    check(norm("{ \\bf C } _ { n }", True) == "\\mathbf{C}_{n}", "old font switch")
    check(norm("x^2_i") == "x_{i}^{2}" == norm("x_{i}^{2}"), "script order and braces")
    check(norm("\\frac12") == "\\frac{1}{2}", "braced arguments")
    check(norm("a \\le b \\ne c") == "a\\leq b\\neq c", "synonyms")
    # \neq is \not= in LaTeX; \notin draws its slash elsewhere and stays
    check(norm("a\\not= b") == norm("a\\neq b") == "a\\neq b", "not= is neq")
    check(norm("x\\not\\in A") == "x\\not\\in A", "not in stays")
    # primes are superscripts of the same nucleus: both orders draw the same
    check(norm("x''_1") == norm("x_1''") == "x_{1}''", "primes after the subscript")
    check(norm("x'^2_1") == norm("x_1'^2") == "x_{1}'^{2}", "prime, power and subscript")
    check(norm("{x'}_1") == "{x'}_{1}", "a braced prime is its own nucleus")
    check(norm("f(x). \\postdisplaypenalty=100") == "f(x).", "a penalty draws nothing")
    check(norm("a\\postdisplaypenalty 50 b") == "ab", "a penalty's number goes with it")
    check(norm("\\mathrm { m i n }", True) == norm("\\mathrm{min}"), "spaced mathrm")
    check(norm("{x}+{\\mathbf{F}}") == "x+\\mathbf{F}", "redundant groups")
    check(norm("{-}x") == "{-}x", "a group that changes spacing stays")
    check(norm("\\text{for all } x") == "\\text{for\\ all}x", "text spaces")
    check(norm("\\text { f o r }", True) == "\\mathrm{for}", "im2latex text spacing")
    # a word of letters draws the same in text and math roman (cmr10, cmbx10)
    # but for the italic correction math adds after f g v w y V W Y
    check(norm("N>i\\cdot\\text{rank}(E)") == "N>i\\cdot\\mathrm{rank}(E)", "text word as mathrm")
    check(norm("\\textbf{F}=m\\textbf{a}") == "\\mathbf{F}=m\\mathbf{a}", "textbf letters as mathbf")
    for raw in ("\\text{ref}", "\\textbf{v}", "\\textit{Ab}", "\\text{a b}", "\\text{x-y}"):
        check(norm(raw).startswith("\\text"), "text word kept: " + raw)
    check(lt.normalize("\\left( x^2 \\right)") == ["\\left(", "x", "^", "{", "2", "}", "\\right)"],
          "left( token")
    # \left..\right around flat content keeps the base-size glyphs, and the
    # Inner atom is spaced like | or ( ) beside these neighbours: one spelling
    # (pdfLaTeX CM \setbox widths, heights and depths equal for each merged pair)
    check(norm("\\left\\lvert {f(x)} \\right\\rvert \\leq M") == norm("|{f(x)}|\\leq M") ==
          "|{f(x)}|\\leq M", "small bars")
    check(norm("s^{\\left\\lvert \\alpha \\right\\rvert}") == "s^{|\\alpha|}", "bars in a script")
    check(norm("\\sup_z\\left\\|f(z)\\right\\|") == "\\sup_{z}\\|f(z)\\|", "norm after an operator")
    check(norm("\\left[a,b\\right]\\subset\\left\\{x_i\\right\\}") == "[a,b]\\subset\\{x_{i}\\}",
          "small brackets and braces")
    check(norm("\\left(\\left|x\\right|\\right)") == "(|x|)", "inner pair first")
    # where they draw differently the pair stays: a taller glyph (superscript,
    # accent, subscripted bracket, big operator) or a thin space that only the
    # Inner atom gets (after an Ord, before an Ord or a punctuation), or a
    # leading minus that is unary only after \left
    for raw in ("\\left|x^2\\right|", "\\left|\\hat{A}\\right|", "\\left|a_{(k)}\\right|",
                "\\left|\\int f\\right|", "-k\\left(x\\right)", "\\left|x\\right|r",
                "\\left|f(x)\\right|.", "\\left|-x\\right|", "=-\\left|x\\right|",
                "\\left|x\\right|^2", "\\sin\\left(x\\right)"):
        check(norm(raw).startswith(("\\left", "-k\\left", "=-\\left", "\\sin\\left")),
              "pair kept: " + raw)

    check(lt.normalize("\\left\\langle x \\right\\rangle") ==
          ["\\left", "\\langle", "x", "\\right", "\\rangle"], "word delimiters stay apart")
    check(lt.normalize("\\left\\lbrace x \\right.") == ["\\left\\{", "x", "\\right."],
          "delimiter synonyms")
    check(norm("\\begin{pmatrix} a & b \\\\ c & d \\\\ \\end{pmatrix}") ==
          "\\begin{pmatrix}a&b\\\\c&d\\end{pmatrix}", "trailing row break")
    check(norm("\\begin{array}{cc} {a} & {b+c} \\end{array}") ==
          "\\begin{array}{cc}a&b+c\\end{array}", "array spec and cell groups")
    check(norm("\\sqrt[3]{x}") == "\\sqrt[3]{x}", "optional argument")
    check(norm("\\begin{aligned}a\\\\[6pt] b\\end{aligned}") ==
          "\\begin{aligned}a\\\\b\\end{aligned}", "row spacing dropped")
    check(norm("\\begin{cases}a\\\\ [z] & b\\end{cases}") ==
          "\\begin{cases}a\\\\{}[z]&b\\end{cases}", "bracket after a row break")
    check(norm("\\begin{split}a&=b\\\\&=c\\end{split}") ==
          "\\begin{aligned}a&=b\\\\&=c\\end{aligned}", "split renders as aligned")
    drops("\\foo x", "unknown_command")
    drops("{x", "parse")
    drops("x}", "parse")
    drops("\\text{$x$}", "bad_char")
    drops("\\begin{tabular}{c}x\\end{tabular}", "unknown_env")
    drops("\\left\\foo x\\right)", "bad_delimiter")
    # round trip and idempotence on generated formulas (needs no corpus)
    rng = random.Random(7)
    n = 0
    for _ in range(400):
        try:
            t = lt.normalize(generate_formulas.generate(rng))
        except lt.NormalizeError:
            continue
        n += 1
        s = lt.detokenize(t)
        check(lt.tokenize(s) == t, "generated round trip: " + s)
        check(lt.normalize(s) == t, "generated idempotent: " + s)
    check(n > 300, f"only {n}/400 generated formulas normalise")


def corpus():
    base = os.path.join(ROOT, "..", "shared", "data", "formulas")
    if not os.path.isdir(base):
        print("SKIP: training corpus not found at", os.path.abspath(base))
        sys.exit(77)
    import glob
    files = sorted(glob.glob(os.path.join(base, "texsrc", "*.txt")))
    files += sorted(glob.glob(os.path.join(base, "im2latex100k", "*.norm.txt")))
    total = ok = 0
    for path in files:
        spaced = "im2latex" in path
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f):
                if i % 13:
                    continue
                total += 1
                try:
                    t = lt.normalize(line, spaced)
                except lt.NormalizeError:
                    continue
                ok += 1
                s = lt.detokenize(t)
                check(lt.tokenize(s) == t, "corpus round trip: " + s)
                check(lt.normalize(s) == t, "corpus idempotent: " + s)
                if len(failures) > 20:
                    return
    print(f"corpus sample: {ok}/{total} normalised")
    check(total > 1000 and ok > 0.97 * total, f"too many drops: {ok}/{total}")


if "--corpus" in sys.argv:
    corpus()
else:
    unit()
print("FAILED %d checks" % len(failures) if failures else "ok")
sys.exit(1 if failures else 0)
