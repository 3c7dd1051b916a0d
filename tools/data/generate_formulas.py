#!/usr/bin/python3
"""A small random grammar for formulas, so that constructs rare in the corpus
(matrices, cases, big delimiters, roots with indices, accents, blackboard and
fraktur letters, limits on sums and integrals) are seen often enough.

    generate(rng) -> str     raw LaTeX (run it through latex_tokens.normalize)

Deterministic for a given random.Random state.
"""

import random
import sys

LATIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
COMMON = "xyzabcnkmijtfgpqruvwsABCDEFGHKLMNPRSTUVXYZ"
GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda "
         "mu nu xi pi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda "
         "Xi Pi Sigma Upsilon Phi Psi Omega").split()
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
BINOPS = ["+", "-", "\\cdot", "\\times", "\\pm", "\\mp", "\\otimes", "\\oplus", "\\circ",
          "\\cup", "\\cap", "\\wedge", "\\setminus", "/", "\\ast", "\\div"]
RELS = ["=", "<", ">", "\\leq", "\\geq", "\\neq", "\\approx", "\\equiv", "\\sim", "\\simeq",
        "\\cong", "\\propto", "\\in", "\\subset", "\\subseteq", "\\to", "\\mapsto",
        "\\Rightarrow", "\\Leftrightarrow", "\\ll", "\\gg", "\\perp", "\\mid", ":="]
FUNCS = ["\\sin", "\\cos", "\\tan", "\\log", "\\ln", "\\exp", "\\sinh", "\\cosh", "\\tanh",
         "\\arcsin", "\\arctan", "\\det", "\\dim", "\\ker", "\\deg", "\\arg", "\\cot", "\\sec"]
BIGOPS = ["\\sum", "\\prod", "\\int", "\\oint", "\\iint", "\\bigcup", "\\bigcap",
          "\\bigoplus", "\\bigotimes", "\\coprod", "\\lim", "\\sup", "\\inf", "\\max", "\\min",
          "\\limsup", "\\liminf"]
ACCENTS = ["\\hat", "\\bar", "\\tilde", "\\vec", "\\dot", "\\ddot", "\\check", "\\breve",
           "\\widehat", "\\widetilde", "\\overline", "\\underline", "\\acute", "\\grave",
           "\\mathring"]
FONTS = ["\\mathbb", "\\mathcal", "\\mathfrak", "\\mathbf", "\\mathrm", "\\mathsf",
         "\\mathscr", "\\mathit", "\\boldsymbol"]
SYMBOLS = ["\\infty", "\\partial", "\\nabla", "\\hbar", "\\ell", "\\emptyset", "\\aleph",
           "\\prime", "\\forall", "\\exists", "\\neg", "\\cdots", "\\ldots", "\\dagger"]
DELIMS = [("(", ")"), ("[", "]"), ("\\{", "\\}"), ("|", "|"), ("\\|", "\\|"),
          ("\\langle", "\\rangle"), ("\\lfloor", "\\rfloor"), ("\\lceil", "\\rceil"),
          ("(", "]"), (".", "|")]
SIZES = ["\\big", "\\Big", "\\bigg", "\\Bigg"]
MATRIX_ENVS = ["matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix"]


class Gen:
    def __init__(self, rng):
        self.r = rng

    def pick(self, seq):
        return self.r.choice(seq)

    def number(self):
        r = self.r.random()
        if r < 0.6:
            return str(self.r.randint(0, 9))
        if r < 0.85:
            return str(self.r.randint(10, 999))
        return "%d.%d" % (self.r.randint(0, 99), self.r.randint(0, 999))

    def letter(self):
        r = self.r.random()
        # leading space: a letter glued to a preceding control word would
        # make a different (unknown) command
        if r < 0.55:
            return " " + self.pick(COMMON)
        if r < 0.7:
            return " " + self.pick(LATIN)
        if r < 0.95:
            return "\\" + self.pick(GREEK)
        return self.pick(SYMBOLS[:7])

    def fonted(self):
        f = self.pick(FONTS)
        if f in ("\\mathbb", "\\mathcal", "\\mathscr"):
            body = self.pick(UPPER)   # these alphabets have capitals only
        elif f == "\\mathfrak":
            body = self.pick(UPPER + "abcdghmnpqsu")
        elif f == "\\mathrm" and self.r.random() < 0.5:
            body = self.pick(["d", "e", "i", "T", "tr", "Tr", "rank", "id", "sgn", "const",
                              "div", "curl", "grad", "Re", "Im", "Hom", "End", "Aut"])
        else:
            body = self.letter() if f in ("\\boldsymbol", "\\mathbf") else self.pick(LATIN)
        return f + "{" + body + "}"

    def scripted(self, base, depth):
        r = self.r.random()
        if r < 0.35:
            return base + "_{" + self.small(depth) + "}"
        if r < 0.6:
            return base + "^{" + self.small(depth) + "}"
        if r < 0.75:
            return base + "_{" + self.small(depth) + "}^{" + self.small(depth) + "}"
        if r < 0.82:
            return base + "'"
        return base

    def small(self, depth):
        """A short expression for scripts and limits."""
        r = self.r.random()
        if r < 0.35:
            return self.letter()
        if r < 0.55:
            return self.number()
        if r < 0.75:
            return self.letter() + self.pick(["+", "-", ",", "="]) + \
                self.pick([self.letter(), self.number()])
        if r < 0.85:
            return "-" + self.pick([self.letter(), self.number()])
        return self.term(depth + 2)

    def atom(self, depth):
        r = self.r.random()
        if depth > 2 or r < 0.35:
            return self.scripted(self.letter(), depth + 1)
        if r < 0.38:
            return self.number()
        if r < 0.46:
            return self.scripted(self.fonted(), depth + 1)
        if r < 0.52:
            return self.pick(ACCENTS) + "{" + self.letter() + "}"
        if r < 0.6:
            return self.pick(["\\frac", "\\frac", "\\dfrac", "\\tfrac"]) + \
                "{" + self.expr(depth + 1) + "}{" + self.expr(depth + 1) + "}"
        if r < 0.65:
            idx = "[" + self.pick(["3", "n", "4", "k", "p"]) + "]" if self.r.random() < 0.3 else ""
            return "\\sqrt" + idx + "{" + self.expr(depth + 1) + "}"
        if r < 0.72:
            return self.delimited(depth)
        if r < 0.77:
            return self.pick(FUNCS) + self.pick(["", "^{2}", "^{-1}"]) + \
                self.pick([" " + self.letter(), "(" + self.expr(depth + 1) + ")"])
        if r < 0.84:
            return self.bigop(depth)
        if r < 0.87:
            return self.pick(["\\binom", "\\dbinom"]) + "{" + self.small(depth) + "}{" + \
                self.small(depth) + "}"
        if r < 0.9:
            return self.pick(["\\overbrace", "\\underbrace"]) + "{" + self.expr(depth + 1) + \
                "}" + self.pick(["_", "^"]) + "{" + self.small(depth) + "}"
        if r < 0.93:
            return self.pick(["\\overset", "\\underset", "\\stackrel"]) + "{" + \
                self.small(depth) + "}{" + self.pick(RELS[:12] + ["\\to"]) + "}"
        if r < 0.96:
            return "\\text{" + self.pick(["if", "for all", "otherwise", "and", "where",
                                          "const", "s.t.", "max", "for"]) + "}"
        return self.pick(SYMBOLS)

    def delimited(self, depth):
        left, right = self.pick(DELIMS)
        body = self.expr(depth + 1)
        r = self.r.random()
        if r < 0.5:
            return "\\left" + left + body + "\\right" + right
        if r < 0.8 and left not in (".",):
            s = self.pick(SIZES)
            return s + "l" + left + body + s + "r" + right
        if left == ".":
            left, right = "(", ")"
        return left + body + right

    def bigop(self, depth):
        op = self.pick(BIGOPS)
        if op in ("\\lim", "\\limsup", "\\liminf"):
            lim = "_{" + self.letter() + "\\to " + self.pick(["\\infty", "0", "a", "0^{+}"]) + "}"
        elif op in ("\\int", "\\oint", "\\iint"):
            lim = self.pick(["", "_{" + self.small(depth) + "}^{" + self.small(depth) + "}",
                             "_{" + self.pick(["\\Omega", "M", "\\gamma", "\\mathbb{R}"]) + "}"])
        else:
            i = self.pick("ijkn")
            lim = self.pick(["_{" + i + "=" + self.pick(["0", "1"]) + "}^{" +
                             self.pick(["n", "N", "\\infty", "m"]) + "}",
                             "_{" + i + "\\in " + self.pick(["I", "\\mathbb{N}", "S"]) + "}",
                             "_{" + i + "}", ""])
        body = self.term(depth + 1)
        if op in ("\\int", "\\oint", "\\iint"):
            body += self.pick([" \\,d", " d", " \\,\\mathrm{d}"]) + self.pick("xtsuzr")
        return op + lim + " " + body

    def term(self, depth):
        n = 1 if depth > 1 else self.r.choice([1, 1, 1, 2, 2, 3])
        return " ".join(self.atom(depth) for _ in range(n))

    def expr(self, depth=0):
        n = 1 if depth > 0 else self.r.choice([1, 2, 2, 3])
        parts = [self.term(depth)]
        for _ in range(n - 1):
            parts.append(self.pick(BINOPS))
            parts.append(self.term(depth))
        return " ".join(parts)

    def matrix(self):
        env = self.pick(MATRIX_ENVS)
        rows, cols = self.r.randint(2, 4), self.r.randint(1, 4)
        cell = lambda: self.pick([self.letter(), self.number(), self.small(2),  # noqa: E731
                                  "0", "1", "\\cdots", "\\vdots", "\\ddots"])
        body = "\\\\".join("&".join(cell() for _ in range(cols)) for _ in range(rows))
        return "\\begin{" + env + "}" + body + "\\end{" + env + "}"

    def cases(self):
        n = self.r.randint(2, 3)
        rows = [self.expr(1) + "&" + self.pick(["\\text{if }", "", "\\text{for }"]) +
                self.letter() + self.pick(RELS[:6]) + self.pick([self.number(), self.letter()])
                for _ in range(n - 1)]
        rows.append(self.expr(1) + "&" + self.pick(["\\text{otherwise}", "\\text{else}",
                                                    self.letter() + "<0"]))
        return self.pick(["f(x)", self.letter(), "|" + self.letter() + "|"]) + "=" + \
            "\\begin{cases}" + "\\\\".join(rows) + "\\end{cases}"

    def aligned(self):
        env = self.pick(["aligned", "aligned", "gathered"])
        n = self.r.randint(2, 3)
        amp = "&" if env == "aligned" else ""
        rows = [self.expr(1) + amp + self.pick(RELS[:8]) + self.expr(1) for _ in range(n)]
        return "\\begin{" + env + "}" + "\\\\".join(rows) + "\\end{" + env + "}"

    def array(self):
        cols = self.r.randint(2, 4)
        spec = "".join(self.pick("lcr") for _ in range(cols))
        rows = self.r.randint(2, 3)
        body = "\\\\".join("&".join(self.small(2) for _ in range(cols)) for _ in range(rows))
        return "\\left(\\begin{array}{" + spec + "}" + body + "\\end{array}\\right)"

    def formula(self):
        r = self.r.random()
        if r < 0.1:
            return self.letter() + "=" + self.matrix()
        if r < 0.14:
            return self.matrix() + self.matrix()
        if r < 0.2:
            return self.cases()
        if r < 0.26:
            return self.aligned()
        if r < 0.29:
            return self.letter() + "=" + self.array()
        if r < 0.75:
            return self.expr() + self.pick(RELS) + self.expr()
        return self.expr()


def generate(rng):
    return Gen(rng).formula()


if __name__ == "__main__":
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 10):
        print(generate(rng))
