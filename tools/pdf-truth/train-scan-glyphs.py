#!/usr/bin/python3
"""Train the glyph net of app/document/fm-scan.c: math or running text from a
scanned word's pixels, beside the word classifier's readings of what Tesseract
read.

  /usr/bin/python3 tools/pdf-truth/train-scan-words.py dump --context --glyphs \
      --cli build/app/formulate-cli --twins DIR... --out FEATURES_DIR
  /usr/bin/python3 tools/pdf-truth/train-scan-glyphs.py train --features FEATURES_DIR... \
      --held-out SEED... [--epochs 12] [--threads 2] --header app/document/fm-scan-glyphs.h

The dumps hold, per word, the second reading's inputs (its first reading among
them) and the word's glyph crop (fm-scan.c's word_glyphs: 24 x 96 pixels at
12 to the em). train fits a small convolutional net (three 3 x 3 layers, the
last one's maximum over the width, two dense layers) on the words of the
twins whose make-truth seed is not in --held-out, by Adam on the binary
cross-entropy; then, on the held-out twins, the logistic regression that
weighs its logit against the classifier's (for the single-letter words: the
first reading; for the others: the mean of the first and second readings'
logits, as fm-scan.c makes it) and prints the words' accuracy before and
after. Writes the net and the weights as a C header. Use twins of seeds the
bench never scores (docs/scanned.md lists them).
"""
import argparse
import glob
import os
import re
import sys

import numpy as np

ROWS, COLS = 24, 96
N_CONTEXT = 31
CHANNELS = (6, 12, 16)
HIDDEN = 32


def context_net(path):
    """The second reading's net (fm-scan-words-context.h) as a function of
    the 31 inputs: its logit."""
    text = open(path).read()

    def arr(name):
        body = re.search(r"fm_scan_context" + name + r"(?:\[\d+\])+ = \{(.*?)\};", text, re.S).group(1)
        return np.array([float(v.rstrip("f")) for v in re.findall(r"[-+0-9.eE]+f", body)])

    mean, scale, b1, w2 = arr("_mean"), arr("_scale"), arr("_b1"), arr("_w2")
    w1 = arr("_w1").reshape(len(b1), N_CONTEXT)
    b2 = float(re.search(r"fm_scan_context_b2 = ([-+0-9.eE]+)f", text).group(1))
    return lambda x: np.tanh((x - mean) / scale @ w1.T + b1) @ w2 + b2


def load(folders, context):
    """Every word the classifier reads (not numbers, citations, empty words):
    (seed, label, multi, z_prev, glyphs) per twin. z_prev is the logit
    fm-scan.c decides on before the glyph net: the first reading's for the
    single letters, the mean of the first and second readings' for the rest."""
    out = []
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, "*.tsv"))):
            gpath = path[:-4] + ".glyphs"
            if not os.path.exists(gpath):
                continue
            lines = [l.rstrip("\n").split("\t") for l in open(path, encoding="utf-8")]
            glyphs = np.fromfile(gpath, dtype=np.uint8).reshape(-1, ROWS, COLS)
            if len(glyphs) != len(lines):
                sys.exit(f"{path}: {len(lines)} rows, {len(glyphs)} glyph crops")
            seed = int(re.match(r"t(\d+)-", os.path.basename(path)).group(1))
            keep, lab, multi, feats = [], [], [], []
            for k, cols in enumerate(lines):
                label, fixed, classified = int(cols[0]), int(cols[6]), int(cols[7])
                word = cols[8 + N_CONTEXT]
                if label < 0 or fixed or word == "":
                    continue
                keep.append(k)
                lab.append(label)
                multi.append(classified)
                feats.append([float(c) for c in cols[8:8 + N_CONTEXT]])
            if not keep:
                continue
            feats = np.array(feats)
            multi = np.array(multi, dtype=bool)
            z1 = 6 * feats[:, 0]
            z = z1.copy()
            z[multi] = 0.5 * (z1[multi] + np.clip(context(feats[multi]), -9.2, 9.2))
            out.append((seed, np.array(lab, dtype=np.float32), multi, z, glyphs[keep]))
    return out


def make_net(torch):
    nn = torch.nn

    class GlyphNet(nn.Module):
        def __init__(self):
            super().__init__()
            c1, c2, c3 = CHANNELS
            self.c1 = nn.Conv2d(1, c1, 3, padding=1)
            self.c2 = nn.Conv2d(c1, c2, 3, padding=1)
            self.c3 = nn.Conv2d(c2, c3, 3, padding=1)
            self.fc1 = nn.Linear(c3 * ROWS // 4, HIDDEN)
            self.fc2 = nn.Linear(HIDDEN, 1)

        def forward(self, x):
            F = torch.nn.functional
            x = F.max_pool2d(F.relu(self.c1(x)), 2)
            x = F.max_pool2d(F.relu(self.c2(x)), 2)
            x = F.relu(self.c3(x)).amax(dim=3)  # channels x rows: the word's length left out
            return self.fc2(F.relu(self.fc1(x.flatten(1)))).squeeze(1)

    return GlyphNet()


def logits(torch, net, glyphs, batch=2048):
    out = []
    with torch.no_grad():
        for i in range(0, len(glyphs), batch):
            x = torch.from_numpy(glyphs[i:i + batch]).float().div_(255).unsqueeze(1)
            out.append(net(x).numpy())
    return np.concatenate(out) if out else np.zeros(0)


def check_crop():
    """The test crop (fm-glyph-net.c's fm_glyph_net_check_crop): a pattern
    over the first 40 columns, paper after."""
    r, c = np.mgrid[0:ROWS, 0:COLS]
    return np.where(c < 40, ((r * 31 + c * 17) % 97) * 255 // 96, 0).astype(np.uint8)


def logits_of_check(net):
    import torch
    return float(logits(torch, net, check_crop()[None])[0])


def fit_weights(z_prev, z_glyph, y, steps=3000):
    """Logistic regression of y on (z_prev, z_glyph): (a, b, c)."""
    x = np.stack([z_prev, z_glyph, np.ones_like(z_prev)], 1)
    w = np.array([1.0, 0.0, 0.0])
    for _ in range(steps):  # Newton's method, a few unknowns
        p = 1 / (1 + np.exp(-(x @ w)))
        g = x.T @ (p - y)
        h = (x * (p * (1 - p))[:, None]).T @ x + 1e-6 * np.eye(3)
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def accuracy(z, y):
    return float(((z >= 0) == (y >= 0.5)).mean())


def train(args):
    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    files = load(args.features, context_net(args.context_header))
    held = set(args.held_out)
    tr = [f for f in files if f[0] not in held]
    ho = [f for f in files if f[0] in held]
    gx = np.concatenate([f[4] for f in tr])
    gy = np.concatenate([f[1] for f in tr])
    print(f"words: train {len(gy)} ({gy.mean():.3f} math) from {len(tr)} twins, "
          f"held-out {sum(len(f[1]) for f in ho)} from {len(ho)} twins", file=sys.stderr)
    hx = np.concatenate([f[4] for f in ho])
    hy = np.concatenate([f[1] for f in ho])
    hz = np.concatenate([f[3] for f in ho])
    hm = np.concatenate([f[2] for f in ho])
    net = make_net(torch)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.epochs * (len(gy) // args.batch + 1))
    rng = np.random.default_rng(args.seed)
    best, best_state = -1, None
    for epoch in range(args.epochs):
        net.train()
        order = rng.permutation(len(gy))
        total = 0.0
        for i in range(0, len(order), args.batch):
            sel = order[i:i + args.batch]
            x = torch.from_numpy(gx[sel]).float().div_(255).unsqueeze(1)
            # Shifts of a pixel or two and a contrast change: the crops of
            # other renderers and scanners are not placed the same way.
            dy, dx = rng.integers(-1, 2), rng.integers(-1, 3)
            x = torch.roll(x, shifts=(int(dy), int(dx)), dims=(2, 3))
            x = (x * float(rng.uniform(0.7, 1.3))).clamp_(0, 1)
            y = torch.from_numpy(gy[sel])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss) * len(sel)
        net.eval()
        hg = logits(torch, net, hx)
        acc = accuracy(hg, hy)
        print(f"epoch {epoch + 1}: train loss {total / len(gy):.4f}, held-out glyph net alone {acc:.4f}",
              file=sys.stderr)
        if acc > best:
            best, best_state = acc, {k: v.clone() for k, v in net.state_dict().items()}
    net.load_state_dict(best_state)
    net.eval()
    hg = logits(torch, net, hx)
    weights = {}
    lines = []
    for name, sel in (("single", ~hm), ("multi", hm)):
        w = fit_weights(hz[sel], hg[sel], hy[sel])
        weights[name] = w
        z = hz[sel] * w[0] + hg[sel] * w[1] + w[2]
        lines.append(f"{name}: {sel.sum()} held-out words, accuracy {accuracy(hz[sel], hy[sel]):.4f} -> "
                     f"{accuracy(z, hy[sel]):.4f} (glyph net alone {accuracy(hg[sel], hy[sel]):.4f}), "
                     f"z = {w[0]:.3f} z_words + {w[1]:.3f} z_glyphs + {w[2]:.3f}")
        print(lines[-1], file=sys.stderr)
    write_header(args, net, weights, len(gy), lines)


def write_header(args, net, weights, n_train, lines):
    def num(a):
        t = f"{float(a):.7g}"
        return (t if any(c in t for c in ".en") else t + ".0") + "f"

    def arr(name, t):
        a = t.detach().numpy().astype(np.float64).ravel()
        shape = "".join(f"[{d}]" for d in t.shape)
        body = ", ".join(num(v) for v in a)
        return f"static const float fm_scan_glyphs_{name}{'[' + str(a.size) + ']'} = {{ {body} }};  /* {shape} */"

    sd = net.state_dict()
    src = ["/* Generated by tools/pdf-truth/train-scan-glyphs.py: do not edit.",
           f" * {' '.join(sys.argv[1:])}",
           f" * words: train {n_train}; on the held-out twins:"]
    src += [f" *   {l}" for l in lines]
    src[-1] += " */"
    c1, c2, c3 = CHANNELS
    src += [f"#define FM_SCAN_GLYPHS_ROWS {ROWS}", f"#define FM_SCAN_GLYPHS_COLS {COLS}",
            f"#define FM_SCAN_GLYPHS_C1 {c1}", f"#define FM_SCAN_GLYPHS_C2 {c2}",
            f"#define FM_SCAN_GLYPHS_C3 {c3}", f"#define FM_SCAN_GLYPHS_HIDDEN {HIDDEN}"]
    for name in ("c1", "c2", "c3", "fc1", "fc2"):
        src.append(arr(name + "_w", sd[name + ".weight"]))
        src.append(arr(name + "_b", sd[name + ".bias"]))
    # A crop and its logit for the test that the C forward pass is this net's
    # (tests/test-scan.c: a layout slip changes it).
    src.append(f"static const float fm_scan_glyphs_check_logit = {num(logits_of_check(net))};"
               f"  /* fm_glyph_net_check_crop's */")
    for name, w in weights.items():
        src.append(f"static const float fm_scan_glyphs_{name}[3] = {{ {num(w[0])}, {num(w[1])}, {num(w[2])} }};"
                   f"  /* words' logit, glyph net's logit, bias */")
    with open(args.header, "w") as fp:
        fp.write("\n".join(src) + "\n")
    torch_path = os.path.splitext(args.header)[0] + ".pt" if args.save_torch else None
    if torch_path:
        import torch
        torch.save(sd, torch_path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--features", nargs="+", required=True)
    t.add_argument("--held-out", nargs="+", type=int, required=True,
                   help="make-truth seeds whose twins fit the weights and are scored, not trained on")
    t.add_argument("--context-header", default=os.path.join(os.path.dirname(__file__), "..", "..", "app",
                                                            "document", "fm-scan-words-context.h"))
    t.add_argument("--epochs", type=int, default=12)
    t.add_argument("--batch", type=int, default=256)
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--save-torch", action="store_true")
    t.add_argument("--header", required=True)
    args = ap.parse_args()
    if args.cmd == "train":
        train(args)


if __name__ == "__main__":
    main()
