#!/usr/bin/python3
"""Train the word classifier of app/document/fm-scan.c (math or running text) on scanned twins.

  /usr/bin/python3 tools/pdf-truth/train-scan-words.py dump --cli build/app/formulate-cli \
      --twins DIR... --out FEATURES_DIR
  /usr/bin/python3 tools/pdf-truth/train-scan-words.py train --features FEATURES_DIR... \
      [--hidden 16] [--ensemble 5] [--seed 1] [--pos-weight W] [--edge LO,HI] [--patience N] \
      [--words all|multi|single] --header app/document/fm-scan-words.h
  /usr/bin/python3 tools/pdf-truth/train-scan-words.py eval --features FEATURES_DIR... \
      --header app/document/fm-scan-words.h [--multi app/document/fm-scan-words-multi.h]
  /usr/bin/python3 tools/pdf-truth/train-scan-words.py merge [--name fm_scan_words_multi] \
      --headers OLD.h NEW.h --header app/document/fm-scan-words.h

dump: runs `formulate-cli pdf TWIN --detect-only` on every TWIN.pdf of the
folders (scanned twins from scan-truth.py, with TWIN.truth.json beside them)
with FM_SCAN_FEATURES (every Tesseract word's features, as fm-scan.c computes
them) and FM_SCAN_WORDS=rules, and writes TWIN.tsv into FEATURES_DIR, each
word labelled: 1 when half its box or more lies in an inline or display truth
region, 0 when it lies in none, and left out (-1) when it lies in an equation
number's (numbers keep the rules' verdict in fm-scan.c); the last column is
the largest share of its box in one formula region (--edge reads it).

train: one-hidden-layer MLPs (tanh, sigmoid output; inputs standardised) by
full-batch Adam on the words of the training folders, with one twin in five
held out (by file) to pick the epoch, --ensemble of them from different
initialisations merged into one net (logits averaged); writes the weights as
a C header. eval: the word accuracy and math precision/recall of a
header's net and of the rules on dumped features. fm-scan.c has two
nets: fm-scan-words.h judges the words of one character and the one-letter
English words, fm-scan-words-multi.h (merge --name fm_scan_words_multi)
the others; train --words multi or single trains on those alone. merge: one net
averaging the logits of several headers' nets (an earlier header's twins
need not be at hand). Use
twins of seeds that the bench never scores (docs/scanned.md lists them).
"""
import argparse
import codecs
import glob
import json
import os
import string
import subprocess
import sys

N_FEATURES = 44
N_CONTEXT = 31  # the second reading's inputs (fm-scan.c's word_context_features)
FIXED = 7  # page, x0, y0, x1, y1, number, citation
ONE_CHAR = 32  # the input n_chars == 1
ENGLISH_LETTER = 42  # the input computed from the word's text (english_letter_word)


def english_letter_word(escaped):
    """1.0 when the word (as fm-scan.c dumps it, g_strescape'd) reads as a
    one-letter English word, "a", "A" or "I", with ASCII punctuation around it
    ("a," "(I" "A."), as fm-scan.c's word_english_letter computes it: the
    script-shape inputs alone took the letters x, a, b of formulas on JPEG'd
    pages for the article (scanwords3's net A, docs/scanned.md)."""
    text = codecs.escape_decode(escaped.encode("utf-8"))[0].decode("utf-8", "replace")
    core = text.strip(string.punctuation)
    return 1.0 if core in ("a", "A", "I") else 0.0


def overlap_fraction(w, r):
    ix = min(w[2], r[2]) - max(w[0], r[0])
    iy = min(w[3], r[3]) - max(w[1], r[1])
    if ix <= 0 or iy <= 0:
        return 0.0
    area = max((w[2] - w[0]) * (w[3] - w[1]), 1e-6)
    return ix * iy / area


def dump(args):
    os.makedirs(args.out, exist_ok=True)
    for folder in args.twins:
        for pdf in sorted(glob.glob(os.path.join(folder, "*.pdf"))):
            name = os.path.splitext(os.path.basename(pdf))[0]
            truth_path = os.path.splitext(pdf)[0] + ".truth.json"
            if not os.path.exists(truth_path):
                continue
            raw = os.path.join(args.out, name + ".raw")
            if os.path.exists(raw):
                os.remove(raw)
            # --context: the second reading's inputs, from the first reading
            # of the nets this CLI was built with.
            env = dict(os.environ, FM_SCAN_CONTEXT=raw, FM_SCAN_WORDS="first") if args.context else \
                dict(os.environ, FM_SCAN_FEATURES=raw, FM_SCAN_WORDS="rules")
            # --glyphs (with --context): each word's glyph crop, in the rows'
            # order, into NAME.glyphs (train-scan-glyphs.py reads them).
            glyphs = os.path.join(args.out, name + ".glyphs")
            if args.glyphs:
                if os.path.exists(glyphs):
                    os.remove(glyphs)
                env["FM_SCAN_GLYPHS"] = glyphs
            n_in = N_CONTEXT if args.context else N_FEATURES
            subprocess.run([args.cli, "pdf", pdf, "--detect-only", "--format", "json", "-q",
                            "-o", os.devnull], env=env, check=False)
            truth = json.load(open(truth_path))["regions"]
            out = []
            for line in open(raw, encoding="utf-8", errors="replace"):
                cols = line.rstrip("\n").split("\t")
                if len(cols) < FIXED + n_in - 1:
                    if args.glyphs:
                        sys.exit(f"{raw}: a short row, the glyphs would not line up")
                    continue
                page = int(cols[0])
                box = [float(c) for c in cols[1:5]]
                label = 0
                for r in truth:
                    if r["page"] != page or overlap_fraction(box, r["box"]) < 0.5:
                        continue
                    label = -1 if r["kind"] == "number" else 1
                    break
                # The largest share of the box in a formula: words astride a
                # region's edge are the labels' noise (train --edge).
                share = max([overlap_fraction(box, r["box"]) for r in truth
                             if r["page"] == page and r["kind"] != "number"] + [0.0])
                out.append("\t".join([str(label)] + cols + [f"{share:.3f}"]))
            os.remove(raw)
            with open(os.path.join(args.out, name + ".tsv"), "w", encoding="utf-8") as fp:
                fp.write("\n".join(out) + ("\n" if out else ""))
            print(f"{name}: {len(out)} words", file=sys.stderr)


def single_letter_word(feats):
    """One character, or a one-letter English word with punctuation ("a,"):
    the words whose verdict the classifier's single-letter net keeps
    (fm-scan.c's word_for_single_net)."""
    return feats[ONE_CHAR] > 0.5 or feats[ENGLISH_LETTER] > 0.5


def load_rows(folders, row):
    """Every dump (*.tsv) of the folders as (path, rows): row(cols) of each
    line's tab-separated columns, the lines it returns None for left out;
    files with no row left out."""
    files = []
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, "*.tsv"))):
            rows = [r for r in (row(line.rstrip("\n").split("\t")) for line in open(path, encoding="utf-8"))
                    if r is not None]
            if rows:
                files.append((path, rows))
    return files


def load_context(folders):
    """The --context dumps: label, page, box, numbers-or-citation, whether the
    first reading classified the word, the inputs, the word, the share; the
    words the first reading classified alone (the second reads those)."""
    def row(cols):
        label, fixed, classified = int(cols[0]), int(cols[6]), int(cols[7])
        if label < 0 or fixed or not classified:
            return None
        return (label, [float(c) for c in cols[8:8 + N_CONTEXT]], float(cols[-1]))
    return load_rows(folders, row)


def load(folders, words="all"):
    def row(cols):
        label = int(cols[0])
        number, citation = int(cols[6]), int(cols[7])
        # label, the fixed columns, the inputs, the word, the share:
        # dumps made before the 43rd input hold 42 inputs, before
        # the 44th (the slant) 43, the missing ones 0; the text's
        # input is computed here from the word either way.
        n_in = len(cols) - 10
        word = cols[8 + n_in]
        share = float(cols[9 + n_in])
        # fm-scan.c classifies neither numbers, citations nor empty words.
        if label < 0 or number or citation or word == "":
            return None
        feats = [float(c) for c in cols[8:8 + min(n_in, N_FEATURES)]]
        feats += [0.0] * (N_FEATURES - len(feats))
        feats[ENGLISH_LETTER] = english_letter_word(word)
        if words != "all" and single_letter_word(feats) != (words == "single"):
            return None
        return (label, feats, share)
    return load_rows(folders, row)


def train(args):
    import numpy as np
    import torch

    nf = N_CONTEXT if args.context else N_FEATURES
    files = load_context(args.features) if args.context else load(args.features, args.words)
    if not files:
        sys.exit("train-scan-words: no words in " + " ".join(args.features))
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(files))
    n_val = max(1, len(files) // 5)
    val_files = set(order[:n_val].tolist())
    lo, hi = args.edge

    def stack(sel, edge):
        rows = [row for i, (_, rs) in enumerate(files) if sel(i) for row in rs
                if not (edge and lo < row[2] < hi)]
        x = [f for _, f, _ in rows]
        y = [lab for lab, _, _ in rows]
        return np.array(x, dtype=np.float32), np.array(y, dtype=np.float32)

    xt, yt = stack(lambda i: i not in val_files, True)
    xv, yv = stack(lambda i: i in val_files, False)
    # Features left out: constant in training, so their weights stay 0.
    for k in args.drop:
        xt[:, k] = 0
        xv[:, k] = 0
    mean = xt.mean(axis=0)
    scale = xt.std(axis=0)
    scale[scale < 1e-3] = 1.0
    tx = torch.tensor((xt - mean) / scale)
    ty = torch.tensor(yt)
    vx = torch.tensor((xv - mean) / scale)
    vy = torch.tensor(yv)
    # --pos-weight weighs the math words' errors (a fifth of the words).
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(args.pos_weight))

    def fit(seed):
        torch.manual_seed(seed)
        model = torch.nn.Sequential(torch.nn.Linear(nf, args.hidden), torch.nn.Tanh(),
                                    torch.nn.Linear(args.hidden, 1))
        opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
        best = (1e9, None, 0)
        for epoch in range(args.epochs):
            model.train()
            opt.zero_grad()
            loss = loss_fn(model(tx).squeeze(1), ty)
            loss.backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                vl = loss_fn(model(vx).squeeze(1), vy).item()
            if vl < best[0]:
                best = (vl, [p.detach().clone() for p in model.parameters()], epoch)
            elif args.patience and epoch - best[2] > args.patience:
                break
        print(f"member seed {seed}: best epoch {best[2]}, held-out loss {best[0]:.4f}", file=sys.stderr)
        return best

    # An ensemble of nets from different initialisations, their logits
    # averaged: one net of all their hidden units with the output weights
    # divided by their number (the dev scores of single nets varied by
    # several points from one initialisation to the next).
    members = [fit(args.seed + m) for m in range(args.ensemble)]
    h = args.hidden * args.ensemble
    model = torch.nn.Sequential(torch.nn.Linear(nf, h), torch.nn.Tanh(), torch.nn.Linear(h, 1))
    with torch.no_grad():
        model[0].weight.copy_(torch.cat([m[1][0] for m in members], 0))
        model[0].bias.copy_(torch.cat([m[1][1] for m in members], 0))
        model[2].weight.copy_(torch.cat([m[1][2] for m in members], 1) / args.ensemble)
        model[2].bias.copy_(sum(m[1][3] for m in members) / args.ensemble)
        pv = torch.sigmoid(model(vx).squeeze(1)).numpy()
        pt = torch.sigmoid(model(tx).squeeze(1)).numpy()
        vloss = loss_fn(model(vx).squeeze(1), vy).item()
    best = (vloss, None, "-")
    # feature 2: the rules' running-text verdict; --context: the first reading's logit
    rules_v = (xv[:, 0] >= 0).astype(np.float32) if args.context else 1 - xv[:, 2]
    acc = lambda p, y: float(((p >= 0.5) == (y >= 0.5)).mean())
    print(f"words: train {len(yt)} ({yt.mean():.2f} math), held-out {len(yv)} ({yv.mean():.2f} math); "
          f"ensemble of {args.ensemble}, held-out loss {best[0]:.4f}", file=sys.stderr)
    print(f"accuracy math-vs-text: train {acc(pt, yt):.3f}, held-out {acc(pv, yv):.3f}; "
          f"rules on held-out {acc(rules_v, yv):.3f}", file=sys.stderr)
    w1, b1, w2, b2 = [p.detach().numpy() for p in model.parameters()]
    w1[:, args.drop] = 0  # fm-scan.c feeds the real values: their weights must be 0
    def num(a):
        t = f"{float(a):.6g}"
        return (t if any(c in t for c in ".en") else t + ".0") + "f"
    fl = lambda v: ", ".join(num(a) for a in v)
    n = "fm_scan_context" if args.context else "fm_scan_words"
    N = n.upper()
    src = [
        "/* Generated by tools/pdf-truth/train-scan-words.py: do not edit.",
        f" * {' '.join(sys.argv[1:])}",
        f" * words: train {len(yt)}, held-out {len(yv)}; held-out accuracy {acc(pv, yv):.3f}",
        f" * ({'the first reading' if args.context else 'the rules'} alone {acc(rules_v, yv):.3f}). */",
        f"#define {N}_N_FEATURES {nf}",
        f"#define {N}_N_HIDDEN {h}",
        f"static const float {n}_mean[{nf}] = {{ {fl(mean)} }};",
        f"static const float {n}_scale[{nf}] = {{ {fl(scale)} }};",
        f"static const float {n}_w1[{h}][{nf}] = {{",
    ]
    src += [f"  {{ {fl(row)} }}," for row in w1]
    src += [
        "};",
        f"static const float {n}_b1[{h}] = {{ {fl(b1)} }};",
        f"static const float {n}_w2[{h}] = {{ {fl(w2[0])} }};",
        f"static const float {n}_b2 = {num(b2[0])};",
    ]
    if args.context:
        src += ["/* Running text under this probability of math (the second reading). */",
                f"static const float fm_scan_context_threshold = {num(args.threshold)};"]
    else:
        src += [
            "/* Running text under this probability of math; a word's ink is math",
            " * evidence (a seed) from the second. */",
            f"static const float fm_scan_words_threshold = {num(args.threshold)};",
            f"static const float fm_scan_words_seed = {num(args.seed_threshold)};",
        ]
    with open(args.header, "w") as fp:
        fp.write("\n".join(src) + "\n")


def read_header(path):
    """The net of a header that train or merge wrote: mean, scale, w1, b1, w2, b2,
    threshold, and the header's text from its threshold's comment on."""
    import re
    import numpy as np

    text = open(path).read()
    net = re.search(r"static const float (\w+)_b2 = ", text).group(1)  # the net's name (--name)

    def arr(name):
        body = re.search(net + name + r"(?:\[\d+\])+ = \{(.*?)\};", text, re.S).group(1)
        return np.array([float(v.rstrip("f")) for v in re.findall(r"[-+0-9.eE]+f", body)], dtype=np.float64)

    b1 = arr("_b1")
    b2 = float(re.search(net + r"_b2 = ([-+0-9.eE]+)f", text).group(1))
    thr = re.search(r"fm_scan_words_threshold = ([-+0-9.eE]+)f", text)  # not in a second net's header
    tail = text.find("/* Running text under")
    return (arr("_mean"), arr("_scale"), arr("_w1").reshape(len(b1), N_FEATURES),
            b1, arr("_w2"), b2, float(thr.group(1)) if thr else 0.5, text[tail:] if tail >= 0 else "")


def merge(args):
    """One net whose logit is the mean of the headers' nets' logits: their
    hidden units side by side, each net's standardisation folded into its
    first layer (mean 0, scale 1), the output weights divided by their
    number; threshold and seed from the last header. Keeps what an earlier
    header learnt from twins that are no longer at hand."""
    import numpy as np

    nets = [read_header(h) for h in args.headers]
    w1 = np.vstack([n[2] / n[1] for n in nets])
    b1 = np.concatenate([n[3] - (n[2] / n[1]) @ n[0] for n in nets])
    w2 = np.concatenate([n[4] for n in nets]) / len(nets)
    b2 = sum(n[5] for n in nets) / len(nets)

    def num(a):
        t = f"{float(a):.7g}"
        return (t if any(c in t for c in ".en") else t + ".0") + "f"

    fl = lambda v: ", ".join(num(a) for a in v)
    h = len(b1)
    src = ["/* Generated by tools/pdf-truth/train-scan-words.py: do not edit.",
           f" * {' '.join(sys.argv[1:])}: the logits of these nets averaged."]
    for path in args.headers:  # what each net was (each header's comment)
        comment = open(path).read().split("*/")[0].splitlines()[1:]
        src += [f" * {os.path.basename(path)}:"] + [(" *  " + line.lstrip(" *")).rstrip() for line in comment]
    src[-1] += " */"
    n, N = args.name, args.name.upper()
    src += [
           f"#define {N}_N_FEATURES {N_FEATURES}",
           f"#define {N}_N_HIDDEN {h}",
           f"static const float {n}_mean[{N_FEATURES}] = {{ {fl(np.zeros(N_FEATURES))} }};",
           f"static const float {n}_scale[{N_FEATURES}] = {{ {fl(np.ones(N_FEATURES))} }};",
           f"static const float {n}_w1[{h}][{N_FEATURES}] = {{"]
    src += [f"  {{ {fl(row)} }}," for row in w1]
    src += ["};",
            f"static const float {n}_b1[{h}] = {{ {fl(b1)} }};",
            f"static const float {n}_w2[{h}] = {{ {fl(w2)} }};",
            f"static const float {n}_b2 = {num(b2)};"]
    # The threshold and seed belong to the classifier, not to one of its
    # nets: a header of a second net (--name) leaves them out.
    tail = nets[-1][7] if n == "fm_scan_words" else ""
    with open(args.header, "w") as fp:
        fp.write("\n".join(src) + "\n" + tail)


def evaluate(args):
    """Word accuracy, math precision/recall of a header's net (and of the rules)
    on dumped features: whether a header still fits what fm-scan.c dumps."""
    import numpy as np

    def net(path):
        mean, scale, w1, b1, w2, b2, thr, _ = read_header(path)
        return lambda x: 1 / (1 + np.exp(-(np.tanh((x - mean) / scale @ w1.T + b1) @ w2 + b2))), thr

    rows = [row for _, rs in load(args.features) for row in rs]
    x = np.array([f for _, f, _ in rows])
    y = np.array([lab for lab, _, _ in rows]) >= 0.5
    single, thr = net(args.header)
    p = single(x)
    if args.multi:  # fm-scan.c's second net for the words that are not single letters
        multi = np.array([not single_letter_word(f) for f in x])
        p[multi] = net(args.multi)[0](x[multi])
    for name, m in (("net", p >= thr), ("rules", x[:, 2] < 0.5)):
        tp = float((m & y).sum())
        print(f"{name}: words {len(y)} ({y.mean():.3f} math), accuracy {(m == y).mean():.4f}, "
              f"math P {tp / max(m.sum(), 1):.4f} R {tp / max(y.sum(), 1):.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--cli", required=True)
    d.add_argument("--twins", nargs="+", required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--glyphs", action="store_true",
                   help="with --context: each word's glyph crop into NAME.glyphs (train-scan-glyphs.py)")
    d.add_argument("--context", action="store_true",
                   help="dump the second reading's inputs (FM_SCAN_CONTEXT) instead of the first's")
    t = sub.add_parser("train")
    t.add_argument("--features", nargs="+", required=True)
    t.add_argument("--hidden", type=int, default=16)
    t.add_argument("--epochs", type=int, default=1500)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--ensemble", type=int, default=5)
    t.add_argument("--threshold", type=float, default=0.5)
    t.add_argument("--seed-threshold", type=float, default=0.8)
    t.add_argument("--drop", type=lambda v: [int(k) for k in v.split(",") if k], default=[],
                   help="feature indices (comma-separated) the model does not use")
    t.add_argument("--patience", type=int, default=0,
                   help="stop a member after this many epochs without a better held-out loss (0: never)")
    t.add_argument("--pos-weight", type=float, default=1.0,
                   help="weight of the math words in the loss")
    t.add_argument("--edge", type=lambda v: [float(k) for k in v.split(",")], default=[1.0, 0.0],
                   help="LO,HI: leave out of training the words whose largest share in a formula "
                        "lies strictly between LO and HI (labels astride a region edge)")
    t.add_argument("--words", choices=["all", "multi", "single"], default="all",
                   help="train on every word, on the words of more than one character that are "
                        "not a one-letter English word (multi), or on those (single)")
    t.add_argument("--context", action="store_true",
                   help="train the second reading (app/document/fm-scan-words-context.h) on "
                        "dump --context folders")
    t.add_argument("--header", required=True)
    e = sub.add_parser("eval")
    e.add_argument("--features", nargs="+", required=True)
    e.add_argument("--header", required=True)
    e.add_argument("--multi", help="the net for the words of more than one character "
                                   "(app/document/fm-scan-words-multi.h)")
    m = sub.add_parser("merge")
    m.add_argument("--headers", nargs="+", required=True)
    m.add_argument("--name", default="fm_scan_words",
                   help="the C name of the merged net (fm_scan_words_multi: fm-scan.c's net for "
                        "the words of more than one character)")
    m.add_argument("--header", required=True)
    args = ap.parse_args()
    {"dump": dump, "train": train, "eval": evaluate, "merge": merge}[args.cmd](args)


if __name__ == "__main__":
    main()
