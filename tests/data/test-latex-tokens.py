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
    check(norm("\\text { f o r }", True) == "\\text{for}", "im2latex text spacing")
    check(lt.normalize("\\left( x \\right)") == ["\\left(", "x", "\\right)"], "left( token")
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
