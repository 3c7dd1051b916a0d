#!/usr/bin/python3
"""LaTeX formula normaliser, tokenizer and detokeniser for formulate-v1.

One canonical token sequence per formula, so that the model never has to
guess between spellings that render the same (`x^2` / `x^{2}`, `\\le` /
`\\leq`, im2latex's `\\operatorname { s i n }` / author `\\sin`).

    normalize(raw, spaced=False) -> list of tokens   (raises NormalizeError)
    detokenize(tokens) -> str                         (docs/model.md rule)
    tokenize(canonical) -> list of tokens             (inverse of detokenize)

Invariants (tested in tests/data/):
    tokenize(detokenize(t)) == t
    normalize(detokenize(normalize(raw))) == normalize(raw)   (idempotent)

Token kinds: control words (`\\frac`), control symbols (`\\{`, `\\,`, `\\ `),
single characters, `\\begin{env}` / `\\end{env}` as one token, and
`\\left(`-style pairs (left/right/middle + a one-character or control-symbol
delimiter) as one token. A control-word delimiter stays two tokens
(`\\left`, `\\langle`) because the detokeniser puts no space between them
and the joined `\\left\\langle` would otherwise not round-trip.
Arguments are always braced (`\\frac{1}{2}`, `x_{i}`), sub- before
superscript, and spaces only survive inside text (as `\\ `).
"""

import re
import sys

NORMALIZER_VERSION = 5

SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]


class NormalizeError(Exception):
    """The formula cannot be normalised; .reason is a short counter key."""

    def __init__(self, reason, detail=""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


# --- command tables -------------------------------------------------------

FONT_CMDS = {"\\mathbf", "\\mathrm", "\\mathit", "\\mathsf", "\\mathtt", "\\mathcal",
             "\\mathbb", "\\mathfrak", "\\mathscr", "\\boldsymbol", "\\pmb", "\\mathnormal"}
ACCENT_CMDS = {"\\hat", "\\widehat", "\\tilde", "\\widetilde", "\\bar", "\\overline",
               "\\underline", "\\vec", "\\dot", "\\ddot", "\\dddot", "\\check", "\\breve",
               "\\acute", "\\grave", "\\mathring", "\\overrightarrow", "\\overleftarrow",
               "\\overleftrightarrow", "\\underrightarrow", "\\overbrace", "\\underbrace"}
# math-mode commands with a fixed number of mandatory arguments
ARITY = {"\\frac": 2, "\\dfrac": 2, "\\tfrac": 2, "\\cfrac": 2, "\\binom": 2,
         "\\dbinom": 2, "\\tbinom": 2, "\\stackrel": 2, "\\overset": 2, "\\underset": 2,
         "\\sqrt": 1, "\\xrightarrow": 1, "\\xleftarrow": 1,
         "\\mathop": 1, "\\mathbin": 1, "\\mathrel": 1, "\\mathord": 1, "\\mathopen": 1,
         "\\mathclose": 1, "\\mathpunct": 1, "\\phantom": 1, "\\vphantom": 1,
         "\\hphantom": 1, "\\boxed": 1, "\\substack": 1, "\\operatorname": 1,
         "\\mspace": 1, "\\hspace": 1, "\\smash": 1}
ARITY.update({c: 1 for c in FONT_CMDS | ACCENT_CMDS})
OPTIONAL_ARG = {"\\sqrt", "\\xrightarrow", "\\xleftarrow", "\\smash"}
# commands whose argument is typeset in text mode (spaces count there)
TEXT_CMDS = {"\\text", "\\textbf", "\\textit", "\\textsf", "\\texttt", "\\fbox"}
ENV_ARGS = {"array": 1, "alignedat": 1, "subarray": 1}
# split only works inside equation-like environments; for a standalone
# formula it renders exactly as aligned
ENV_SYNONYMS = {"split": "aligned"}
ENVS = {"matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix", "smallmatrix",
        "cases", "aligned", "alignedat", "gathered", "array", "subarray"}

# parameter assignments that draw nothing (the Lebl books end some displays
# with `\postdisplaypenalty=100`): dropped with their number
PENALTIES = {"\\postdisplaypenalty", "\\predisplaypenalty", "\\displaywidowpenalty"}

# old-style switches: {\bf x} -> \mathbf{x}
SWITCHES = {"\\bf": "\\mathbf", "\\rm": "\\mathrm", "\\it": "\\mathit", "\\cal": "\\mathcal",
            "\\sf": "\\mathsf", "\\tt": "\\mathtt", "\\mit": "\\mathit", "\\sl": "\\mathit"}

# spellings that render identically (or nearly: \lvert vs | only differs in
# atom class) are mapped to one
SYNONYMS = {"\\le": "\\leq", "\\ge": "\\geq", "\\ne": "\\neq", "\\rightarrow": "\\to",
            "\\gets": "\\leftarrow", "\\lbrace": "\\{", "\\rbrace": "\\}", "\\lbrack": "[",
            "\\rbrack": "]", "\\vert": "|", "\\lvert": "|", "\\rvert": "|", "\\Vert": "\\|",
            "\\lVert": "\\|", "\\rVert": "\\|", "\\dag": "\\dagger", "\\sp": "^", "\\sb": "_",
            "\\textup": "\\text", "\\textrm": "\\text", "\\mbox": "\\text",
            "\\textnormal": "\\text", "\\hbox": "\\text", "\\emph": "\\textit",
            "\\bm": "\\boldsymbol", "\\Bbb": "\\mathbb", "\\>": "\\:", "\\land": "\\wedge",
            "\\lor": "\\vee", "\\lnot": "\\neg", "\\thinspace": "\\,", "\\dotsc": "\\dots",
            "\\dotsb": "\\dots", "\\cdotp": "\\cdot", "\\bigtriangleup": "\\triangle",
            "\\coloneq": "\\coloneqq", "\\iff": "\\Longleftrightarrow"}

# operator names that have their own command: \operatorname{sin} -> \sin
NAMED_OPERATORS = {"arccos", "arcsin", "arctan", "arg", "cos", "cosh", "cot", "coth", "csc",
                   "deg", "det", "dim", "exp", "gcd", "hom", "inf", "ker", "lg", "lim",
                   "liminf", "limsup", "ln", "log", "max", "min", "Pr", "sec", "sin", "sinh",
                   "sup", "tan", "tanh"}

GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa "
         "varkappa lambda mu nu xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi "
         "chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega").split()
LETTERLIKE = GREEK + ("infty ell hbar partial nabla emptyset varnothing aleph beth imath "
                      "jmath wp Re Im prime top bot").split()
# control words with no arguments that the normaliser accepts; anything else
# is an unknown command and the formula is dropped
NOARG = set("\\" + w for w in LETTERLIKE + list(NAMED_OPERATORS) + (
    "to leq geq neq in notin ni subset supset subseteq supseteq subsetneq supsetneq "
    "cap cup setminus times otimes oplus ominus odot oslash circ bullet cdot cdots ldots "
    "dots vdots ddots pm mp div ast star dagger ddagger wedge vee neg forall exists nexists "
    "sim simeq approx cong equiv propto asymp doteq mid parallel perp models vdash dashv "
    "ll gg prec succ preceq succeq lesssim gtrsim leftarrow Leftarrow Rightarrow "
    "leftrightarrow Leftrightarrow longrightarrow longleftarrow Longrightarrow Longleftarrow "
    "longleftrightarrow Longleftrightarrow mapsto longmapsto hookrightarrow hookleftarrow "
    "uparrow downarrow Uparrow Downarrow updownarrow nearrow searrow nwarrow swarrow "
    "rightharpoonup leftharpoonup rightleftharpoons leadsto twoheadrightarrow "
    "sum prod coprod int iint iiint oint bigcup bigcap bigoplus bigotimes bigodot bigsqcup "
    "bigvee bigwedge biguplus amalg sqcup sqcap uplus triangle bigtriangledown "
    "triangleleft triangleright diamond Box boxtimes boxplus langle rangle lfloor rfloor "
    "lceil rceil backslash colon coloneqq quad qquad enspace not limits nolimits "
    "displaystyle textstyle scriptstyle scriptscriptstyle left right middle big Big bigg "
    "Bigg bigl bigr Bigl Bigr biggl biggr Biggl Biggr bigm Bigm over choose atop bmod "
    "pmod mod hline sharp flat natural clubsuit diamondsuit heartsuit spadesuit angle "
    "surd checkmark S P dag lhd rhd unlhd unrhd smallsetminus complement therefore because "
    "hfill").split())
DELIM_WORDS = {"\\langle", "\\rangle", "\\lfloor", "\\rfloor", "\\lceil", "\\rceil",
               "\\uparrow", "\\downarrow", "\\Uparrow", "\\Downarrow", "\\updownarrow",
               "\\backslash"}
DELIM_CHARS = set("()[]|./<>") | {"\\{", "\\}", "\\|"}
# single tokens that form an ordinary atom: {x} -> x is safe
ORD_CMDS = FONT_CMDS | ACCENT_CMDS | TEXT_CMDS | {
    "\\frac", "\\dfrac", "\\tfrac", "\\cfrac", "\\binom", "\\dbinom", "\\tbinom", "\\sqrt",
    "\\boxed", "\\mathord"}
# control words that work in text mode
TEXT_WORDS = {"\\S", "\\P", "\\ldots", "\\dots"}
ORD_TOKENS = set("\\" + w for w in LETTERLIKE)

_RAW_RE = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.S)
_CANON_RE = re.compile(
    r"\\(?:begin|end)\{[A-Za-z*]+\}"
    r"|\\(?:left|right|middle)(?:\\[^A-Za-z]|[^\\A-Za-z\s])"
    r"|\\[A-Za-z]+|\\.|(\s+)|.", re.S)
_CONTROL_WORD_RE = re.compile(r"\\[A-Za-z]+\Z")


def is_control_word(tok):
    return bool(_CONTROL_WORD_RE.match(tok))


def detokenize(tokens):
    """Join tokens: no space, except one between a control word and a next
    token starting with a letter (docs/model.md)."""
    out = []
    prev = None
    for t in tokens:
        if prev is not None and t[:1].isascii() and t[:1].isalpha() and is_control_word(prev):
            out.append(" ")
        out.append(t)
        prev = t
    return "".join(out)


def tokenize(s):
    """Split a canonical (normalised) string back into tokens."""
    toks = []
    for m in _CANON_RE.finditer(s):
        if m.group(1) is None:
            toks.append(m.group(0))
    return toks


# --- parser -----------------------------------------------------------------
# Nodes: ("tok", t) | ("group", [nodes]) | ("cmd", name, opt|None, [args])
#        | ("script", "^"|"_", [nodes]) | ("env", name, spec|None, [nodes])


class _Parser:
    def __init__(self, raw, spaced):
        self.toks = [t if not t.isspace() else " " for t in _RAW_RE.findall(raw)]
        self.i = 0
        # im2latex separates every token by a space, also inside text, where the
        # spaces are artefacts and not the author's
        self.spaced = spaced

    def peek(self, skip_space=True):
        j = self.i
        while skip_space and j < len(self.toks) and self.toks[j] == " ":
            j += 1
        return self.toks[j] if j < len(self.toks) else None

    def next(self, skip_space=True):
        while skip_space and self.i < len(self.toks) and self.toks[self.i] == " ":
            self.i += 1
        if self.i >= len(self.toks):
            raise NormalizeError("parse", "unexpected end")
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, t):
        got = self.next()
        if got != t:
            raise NormalizeError("parse", f"expected {t!r}, got {got!r}")

    def read_name(self):
        """{name} after \\begin / \\end."""
        self.expect("{")
        name = ""
        while True:
            t = self.next()
            if t == "}":
                return name
            if not (t.isalpha() or t == "*"):
                raise NormalizeError("parse", "bad environment name")
            name += t

    def parse_list(self, stop):
        """Math list until a token in `stop` (not consumed) or end of input."""
        nodes = []
        while True:
            t = self.peek()
            if t is None:
                if None in stop:
                    return nodes
                raise NormalizeError("parse", "unbalanced")
            if t in stop:
                return nodes
            if t == "}" or (t == "\\end"):
                raise NormalizeError("parse", f"unexpected {t}")
            t = self.next()
            t = SYNONYMS.get(t, t)
            # LaTeX defines \neq as \not= (fontmath.ltx; unicode-math's \not
            # picks the same negated glyph): one spelling. \not\in and
            # \notin are kept apart: \notin centres its slash differently.
            if t in PENALTIES:
                self.skip_assignment()
                continue
            if t == "\\not" and self.peek() == "=":
                self.next()
                t = "\\neq"
            if t == "\\\\" and self.peek() == "[":
                nodes.extend(self.row_break())
                continue
            if t in SWITCHES:
                rest = self.parse_list(stop)
                nodes.append(("cmd", SWITCHES[t], None, [rest]))
                return nodes
            nodes.append(self.parse_atom(t))

    def skip_assignment(self):
        """`\\postdisplaypenalty=100`: an integer after an optional `=`, which
        sets a parameter and draws nothing."""
        if self.peek() == "=":
            self.next()
        if self.peek() in ("-", "+"):
            self.next()
        if self.peek() is None or not self.peek().isdigit():
            raise NormalizeError("parse", "penalty without a number")
        self.next()
        while self.peek(skip_space=False) is not None and self.peek(skip_space=False).isdigit():
            self.next(skip_space=False)

    def row_break(self):
        """`\\` before `[`: LaTeX reads `[...]` as a spacing argument (skipping
        spaces), and a non-length there is an error or even an endless loop.
        A real length (`\\[6pt]`) is cosmetic and dropped; otherwise `{}`
        keeps the bracket as a bracket."""
        j = self.i
        while j < len(self.toks) and self.toks[j] == " ":
            j += 1
        k = j + 1
        while k < len(self.toks) and self.toks[k] != "]" and k - j < 16:
            k += 1
        inner = "".join(self.toks[j + 1:k]).replace(" ", "")
        if k < len(self.toks) and self.toks[k] == "]" and \
                re.fullmatch(r"-?[0-9]*\.?[0-9]+(pt|em|ex|mm|cm|in|mu|bp)", inner):
            self.i = k + 1
            return [("tok", "\\\\")]
        return [("tok", "\\\\"), ("group", [])]

    def parse_atom(self, t):
        if t == "{":
            inner = self.parse_list({"}"})
            self.expect("}")
            return ("group", inner)
        if t in ("^", "_"):
            return ("script", t, self.parse_arg())
        if t in ("\\left", "\\right", "\\middle"):
            d = self.next()
            d = SYNONYMS.get(d, d)
            if d in DELIM_CHARS:
                return ("tok", t + d)
            if d in DELIM_WORDS:
                return ("group2", t, d)
            raise NormalizeError("bad_delimiter", d)
        if t == "\\begin":
            name = self.read_name()
            name = ENV_SYNONYMS.get(name, name)
            if name not in ENVS:
                raise NormalizeError("unknown_env", name)
            spec = None
            if name in ENV_ARGS:
                self.expect("{")
                spec = []
                while True:
                    c = self.next()
                    if c == "}":
                        break
                    if c == "{" or c.startswith("\\"):
                        raise NormalizeError("parse", "complex array spec")
                    spec.append(("tok", c))
            body = self.parse_list({"\\end"})
            self.expect("\\end")
            end_name = self.read_name()
            if ENV_SYNONYMS.get(end_name, end_name) != name:
                raise NormalizeError("parse", "mismatched \\end")
            return ("env", name, spec, body)
        if t in TEXT_CMDS:
            return ("cmd", t, None, [self.parse_text_arg()])
        if t == "\\operatorname" and self.peek() == "*":
            # \operatorname*{lim}: limits below in display
            self.next()
            return self.simplify_cmd("\\operatorname*", None, [self.parse_arg()])
        if t in ARITY:
            opt = None
            if t in OPTIONAL_ARG and self.peek() == "[":
                self.next()
                opt = self.parse_list({"]"})
                self.expect("]")
            args = [self.parse_arg() for _ in range(ARITY[t])]
            return self.simplify_cmd(t, opt, args)
        if t.startswith("\\") and is_control_word(t):
            if t not in NOARG:
                raise NormalizeError("unknown_command", t)
            return ("tok", t)
        if t in ("$", "#", "%"):
            raise NormalizeError("bad_char", t)
        if t == "]" or t == "[" or len(t) == 1 or t.startswith("\\"):
            if len(t) == 1 and not t.isascii():
                raise NormalizeError("bad_char", t)
            return ("tok", t)
        raise NormalizeError("parse", t)

    def parse_arg(self):
        t = self.next()
        t = SYNONYMS.get(t, t)
        if t == "{":
            inner = self.parse_list({"}"})
            self.expect("}")
            return inner
        if t in ("}", "^", "_", "&", "\\\\"):
            raise NormalizeError("parse", "missing argument")
        return [self.parse_atom(t)]

    def parse_text_arg(self):
        t = self.next()
        if t != "{":
            return [("tok", t)]
        nodes = []
        depth = 0
        pending_space = False
        while True:
            t = self.next(skip_space=False)
            if t == " ":
                pending_space = not self.spaced
                continue
            if t in ("\\ ", "~"):
                pending_space = not self.spaced or t == "\\ " or t == "~"
                continue
            if pending_space and nodes:
                nodes.append(("tok", "\\ "))
            pending_space = False
            if t == "}":
                if depth == 0:
                    if nodes and nodes[-1] == ("tok", "\\ "):
                        nodes.pop()
                    return nodes
                depth -= 1
            elif t == "{":
                depth += 1
            elif t in ("$", "#", "%", "\\(", "\\["):
                raise NormalizeError("bad_char", "math in text")
            elif t in ("^", "_", "&") or t.startswith("\\left") or t.startswith("\\right"):
                raise NormalizeError("bad_char", "math in text")
            elif t.startswith("\\") and is_control_word(t):
                if t not in TEXT_WORDS:
                    raise NormalizeError("bad_char", "math in text")
                # TeX eats the space that ends a control word
                while self.peek(skip_space=False) == " ":
                    self.i += 1
            nodes.append(("tok", t))

    def simplify_cmd(self, name, opt, args):
        if name in ("\\operatorname", "\\operatorname*", "\\mathop"):
            word = _plain_word(args[0], inside_mathrm=(name == "\\mathop"))
            if word is not None:
                if name == "\\mathop" and self.peek() == "\\nolimits":
                    self.next()
                if word in NAMED_OPERATORS:
                    return ("tok", "\\" + word)
                op = "\\operatorname*" if name == "\\operatorname*" else "\\operatorname"
                return ("cmd", op, None, [[("tok", c) for c in word]])
        return ("cmd", name, opt, args)


def _plain_word(nodes, inside_mathrm):
    """'sin' when nodes are the letters s,i,n (for \\mathop: \\mathrm{sin})."""
    if inside_mathrm:
        if len(nodes) != 1 or nodes[0][0] != "cmd" or nodes[0][1] != "\\mathrm":
            return None
        nodes = nodes[0][3][0]
    while len(nodes) == 1 and nodes[0][0] == "group":
        nodes = nodes[0][1]
    word = ""
    for n in nodes:
        if n[0] != "tok" or len(n[1]) != 1 or not n[1].isalpha():
            return None
        word += n[1]
    return word or None


def _is_ord_node(n):
    if n[0] == "tok":
        t = n[1]
        return (len(t) == 1 and t.isalnum()) or t in ORD_TOKENS
    if n[0] == "cmd":
        return n[1] in ORD_CMDS
    return False


def _clean(nodes, sole_ok=True):
    """Recursively canonicalise a node list."""
    out = []
    for n in nodes:
        kind = n[0]
        if kind == "group":
            inner = _clean(n[1])
            # {x} and {\mathbf{F}} are the atom itself; a group that is the
            # whole list (argument, cell, formula) changes nothing either
            if len(inner) == 1 and _is_ord_node(inner[0]):
                out.append(inner[0])
                continue
            out.append(("group", inner))
        elif kind == "cmd":
            opt = _clean(n[2]) if n[2] is not None else None
            out.append(("cmd", n[1], opt, [_clean(a) for a in n[3]]))
        elif kind == "script":
            out.append(("script", n[1], _clean(n[2])))
        elif kind == "env":
            body = _clean_cells(n[3])
            out.append(("env", n[1], n[2], body))
        else:
            out.append(n)
    if sole_ok:
        while len(out) == 1 and out[0][0] == "group":
            out = out[0][1]
    # x^a_b -> x_b^a (same rendering)
    for i in range(len(out) - 1):
        if out[i][0] == "script" and out[i][1] == "^" and \
                out[i + 1][0] == "script" and out[i + 1][1] == "_":
            out[i], out[i + 1] = out[i + 1], out[i]
    return _subscript_before_primes(out)


def _subscript_before_primes(out):
    """x''_1 -> x_1'': a prime is TeX's ^{\\prime} on the same nucleus, so
    both orders draw the same boxes (checked with pdfLaTeX in CM, newtx,
    fourier, STIX Two, mathptmx), like x^a_b and x_b^a. Sub first also makes
    x'^2_1 (= x^{\\prime 2}_1) a valid x_1'^2 after the swap above."""
    i = 0
    while i < len(out):
        j = i
        while j < len(out) and out[j] == ("tok", "'"):
            j += 1
        if j > i and i > 0 and j < len(out) and out[j][0] == "script" and out[j][1] == "_" and \
                out[i - 1][0] != "script":
            out[i:j + 1] = [out[j]] + out[i:j]
            j += 1
        i = j + 1 if j == i else j
    return out


def _clean_cells(body):
    cells, cur, seps = [], [], []
    for n in body:
        if n[0] == "tok" and n[1] in ("&", "\\\\"):
            cells.append(cur)
            seps.append(n)
            cur = []
        else:
            cur.append(n)
    cells.append(cur)
    out = []
    for k, cell in enumerate(cells):
        lead = []
        while cell and cell[0] == ("tok", "\\hline"):
            lead.append(cell.pop(0))
        out.extend(lead + _clean(cell))
        if k < len(seps):
            out.append(seps[k])
    # a final \\ before \end adds no row
    while out and out[-1] == ("tok", "\\\\"):
        out.pop()
    return out


def _emit(nodes, out):
    for n in nodes:
        kind = n[0]
        if kind == "tok":
            out.append(n[1])
        elif kind == "group2":
            out.append(n[1])
            out.append(n[2])
        elif kind == "group":
            out.append("{")
            _emit(n[1], out)
            out.append("}")
        elif kind == "script":
            out.append(n[1])
            out.append("{")
            _emit(n[2], out)
            out.append("}")
        elif kind == "cmd":
            if n[1].endswith("*"):          # \operatorname* is two tokens
                out.extend((n[1][:-1], "*"))
            else:
                out.append(n[1])
            if n[2] is not None:
                out.append("[")
                _emit(n[2], out)
                out.append("]")
            for a in n[3]:
                out.append("{")
                _emit(a, out)
                out.append("}")
        elif kind == "env":
            out.append("\\begin{" + n[1] + "}")
            if n[2] is not None:
                out.append("{")
                _emit(n[2], out)
                out.append("}")
            _emit(n[3], out)
            out.append("\\end{" + n[1] + "}")
    return out


def normalize(raw, spaced=False):
    """Canonical token list of a math-mode formula. `spaced`: the input is
    im2latex-style (every token separated by a space, also inside text)."""
    p = _Parser(raw.strip(), spaced)
    nodes = p.parse_list({None})
    toks = _emit(_clean(nodes), [])
    if not toks:
        raise NormalizeError("empty")
    return toks


def normalize_string(raw, spaced=False):
    return detokenize(normalize(raw, spaced))


def main(argv):
    """Normalise stdin lines (for inspection): prints the canonical string or
    '# DROP reason' per line."""
    spaced = "--spaced" in argv
    for line in sys.stdin:
        try:
            print(normalize_string(line, spaced))
        except NormalizeError as e:
            print(f"# DROP {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
