#!/usr/bin/python3
"""Train the gap net of app/document/fm-scan.c: whether a word-space gap in a
group of ink on a line of prose parts two formulas (or a formula and the
prose) or lies inside one formula.

  /usr/bin/python3 tools/pdf-truth/train-scan-gaps.py dump --cli build/app/formulate-cli \
      --twins DIR... --out GAPS_DIR [--jobs 2]
  /usr/bin/python3 tools/pdf-truth/train-scan-gaps.py train --gaps GAPS_DIR... \
      [--hidden 8] [--ensemble 3] [--held-out-share 0.2] --header app/document/fm-scan-gaps.h
  /usr/bin/python3 tools/pdf-truth/train-scan-gaps.py eval --gaps GAPS_DIR... \
      --header app/document/fm-scan-gaps.h

dump: runs `formulate-cli pdf TWIN --detect-only` on every TWIN.pdf of the
folders (scanned twins from scan-truth.py, TWIN.truth.json beside them) with
FM_SCAN_GAP_FEATURES=1 and FM_SCAN_GAPS=rules, which prints each gap's two
runs of ink (their boxes on the page, pt), the rules' cut and the gap's
inputs (fm-scan.c's gap_features); writes TWIN.tsv into GAPS_DIR, each gap
labelled against the truth's inline formulas: "two" (the runs lie in two
formulas: a cut), "same" (both in one: no cut), "edge" (one in a formula,
the other in none: a cut between a formula and the prose), "none".

train: one-hidden-layer MLPs (tanh, sigmoid output; inputs standardised) by
full-batch Adam on the "two", "edge" (--edge cut) and "same" gaps, with one twin in five
held out (by file) to pick the epoch, --ensemble of them from different
initialisations merged into one net (logits averaged); prints the held-out
accuracy of the net and of the rules per label and writes the net as a C
header (the word classifier's layout, fm-scan.c's WordNet). eval: the same
counts for a header's net. Use twins of seeds that the bench never scores
(docs/scanned.md lists them).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

N_FEATURES = 40
LABELS = {"two": 1, "edge": 1, "same": 0}


def share_in(box, region):
    """The share of box's area inside region."""
    ix = min(box[2], region[2]) - max(box[0], region[0])
    iy = min(box[3], region[3]) - max(box[1], region[1])
    if ix <= 0 or iy <= 0:
        return 0.0
    return ix * iy / max((box[2] - box[0]) * (box[3] - box[1]), 1e-6)


def label(regions, a, b):
    """two / same / edge / none for runs a and b (page boxes) against the
    page's inline truth regions."""
    def home(box):
        best, share = None, 0.5
        for i, r in enumerate(regions):
            s = share_in(box, r)
            if s >= share:
                best, share = i, s
        return best
    ra, rb = home(a), home(b)
    if ra is not None and rb is not None:
        return "same" if ra == rb else "two"
    if ra is not None or rb is not None:
        return "edge"
    return "none"


def dump_one(cli, pdf, out):
    name = os.path.splitext(os.path.basename(pdf))[0]
    truth_path = os.path.splitext(pdf)[0] + ".truth.json"
    if not os.path.exists(truth_path):
        return 0
    truth = json.load(open(truth_path))
    env = dict(os.environ, FM_SCAN_GAP_FEATURES="1", FM_SCAN_GAPS="rules", FM_DETECT_THREADS="1")
    run = subprocess.run([cli, "pdf", pdf, "--detect-only", "--format", "json", "-q", "-o", os.devnull],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
    rows = []
    for line in run.stderr.splitlines():
        at = line.find("gapf ")
        if at < 0:
            continue
        v = line[at + 5:].split()
        page = int(v[0])
        a = [float(x) for x in v[1:5]]
        b = [float(x) for x in v[5:9]]
        regions = [r["box"] for r in truth["regions"] if r["page"] == page and r["kind"] == "inline"]
        rows.append("\t".join([label(regions, a, b)] + v))
    with open(os.path.join(out, name + ".tsv"), "w") as fp:
        fp.write("\n".join(rows) + ("\n" if rows else ""))
    return len(rows)


def dump(args):
    os.makedirs(args.out, exist_ok=True)
    pdfs = [pdf for folder in args.twins for pdf in sorted(glob.glob(os.path.join(folder, "*.pdf")))]
    with ThreadPoolExecutor(args.jobs) as pool:
        counts = list(pool.map(lambda pdf: dump_one(args.cli, pdf, args.out), pdfs))
    print(f"{len(pdfs)} twins, {sum(counts)} gaps", file=sys.stderr)


def load(folders):
    """[(file, [(label, rules_cut, features)])] of the dumps."""
    files = []
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, "*.tsv"))):
            rows = []
            for line in open(path):
                v = line.rstrip("\n").split("\t")
                if len(v) < 11 + N_FEATURES:
                    continue
                rows.append((v[0], int(v[10]), [float(x) for x in v[11:11 + N_FEATURES]]))
            files.append((path, rows))
    return files


def report(title, labels, rules, net):
    """Held-out gaps per label: how often the rules and the net cut."""
    print(title, file=sys.stderr)
    for lab in ("two", "edge", "same", "none"):
        idx = [i for i, l in enumerate(labels) if l == lab]
        if not idx:
            continue
        rc = sum(rules[i] for i in idx)
        nc = sum(net[i] for i in idx)
        print(f"  {lab:5s} {len(idx):6d} gaps: rules cut {rc:6d}, net cut {nc:6d}", file=sys.stderr)


def net_forward(np, x, mean, scale, w1, b1, w2, b2):
    return np.tanh(((x - mean) / scale) @ w1.T + b1) @ w2 + b2


def train(args):
    import numpy as np
    import torch

    files = load(args.gaps)
    if not files:
        sys.exit("train-scan-gaps: no gaps in " + " ".join(args.gaps))
    labels = dict(LABELS)
    if args.edge == "skip":
        del labels["edge"]
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(files))
    n_val = max(1, int(len(files) * args.held_out_share))
    val_files = set(order[:n_val].tolist())

    def stack(sel, all_labels=False):
        rows = [row for i, (_, rs) in enumerate(files) if sel(i) for row in rs if all_labels or row[0] in labels]
        return (np.array([f for _, _, f in rows], dtype=np.float32),
                np.array([labels.get(l, 0) for l, _, _ in rows], dtype=np.float32),
                [l for l, _, _ in rows], [c for _, c, _ in rows])

    xt, yt, _, _ = stack(lambda i: i not in val_files)
    xv, yv, _, _ = stack(lambda i: i in val_files)
    xa, _, la, ra = stack(lambda i: i in val_files, True)
    mean = xt.mean(axis=0)
    scale = xt.std(axis=0)
    scale[scale < 1e-3] = 1.0
    tx, ty = torch.tensor((xt - mean) / scale), torch.tensor(yt)
    vx, vy = torch.tensor((xv - mean) / scale), torch.tensor(yv)
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(args.pos_weight))

    def fit(seed):
        torch.manual_seed(seed)
        model = torch.nn.Sequential(torch.nn.Linear(N_FEATURES, args.hidden), torch.nn.Tanh(),
                                    torch.nn.Linear(args.hidden, 1))
        opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=1e-4)
        best = (1e9, None, 0)
        for epoch in range(args.epochs):
            model.train()
            opt.zero_grad()
            loss_fn(model(tx).squeeze(1), ty).backward()
            opt.step()
            with torch.no_grad():
                vl = loss_fn(model(vx).squeeze(1), vy).item()
            if vl < best[0]:
                best = (vl, [p.detach().clone() for p in model.parameters()], epoch)
            elif epoch - best[2] > args.patience:
                break
        print(f"member seed {seed}: best epoch {best[2]}, held-out loss {best[0]:.4f}", file=sys.stderr)
        return best

    members = [fit(args.seed + m) for m in range(args.ensemble)]
    w1 = torch.cat([m[1][0] for m in members], 0).numpy()
    b1 = torch.cat([m[1][1] for m in members], 0).numpy()
    w2 = (torch.cat([m[1][2] for m in members], 1) / args.ensemble).numpy()[0]
    b2 = float(sum(m[1][3] for m in members)[0]) / args.ensemble
    z = net_forward(np, xa, mean, scale, w1, b1, w2, b2)
    net_cut = [int(v >= 0) for v in z]
    print(f"gaps: train {len(yt)} ({yt.mean():.3f} cut), held-out {len(yv)}", file=sys.stderr)
    report("held-out twins:", la, ra, net_cut)
    agree = lambda cuts: sum(1 for l, c in zip(la, cuts) if l in labels and c == labels[l])
    n_lab = sum(1 for l in la if l in labels)
    acc_net, acc_rules = agree(net_cut) / max(n_lab, 1), agree(ra) / max(n_lab, 1)
    print(f"held-out accuracy on two/edge/same: net {acc_net:.3f}, rules {acc_rules:.3f}", file=sys.stderr)

    def num(a):
        t = f"{float(a):.6g}"
        return (t if any(c in t for c in ".en") else t + ".0") + "f"
    fl = lambda v: ", ".join(num(a) for a in v)
    h = len(b1)
    src = [
        "/* Generated by tools/pdf-truth/train-scan-gaps.py: do not edit.",
        f" * {' '.join(sys.argv[1:])}",
        f" * gaps: train {len(yt)}, held-out {len(yv)}; held-out accuracy {acc_net:.3f}",
        f" * (the rules alone {acc_rules:.3f}). */",
        f"#define FM_SCAN_GAPS_N_FEATURES {N_FEATURES}",
        f"#define FM_SCAN_GAPS_N_HIDDEN {h}",
        f"static const float fm_scan_gaps_mean[{N_FEATURES}] = {{ {fl(mean)} }};",
        f"static const float fm_scan_gaps_scale[{N_FEATURES}] = {{ {fl(scale)} }};",
        f"static const float fm_scan_gaps_w1[{h}][{N_FEATURES}] = {{",
    ]
    src += [f"  {{ {fl(row)} }}," for row in w1]
    src += [
        "};",
        f"static const float fm_scan_gaps_b1[{h}] = {{ {fl(b1)} }};",
        f"static const float fm_scan_gaps_w2[{h}] = {{ {fl(w2)} }};",
        f"static const float fm_scan_gaps_b2 = {num(b2)};",
    ]
    with open(args.header, "w") as fp:
        fp.write("\n".join(src) + "\n")


def read_header(path):
    import re
    import numpy as np

    text = open(path).read()

    def arr(name):
        body = re.search("fm_scan_gaps" + name + r"(?:\[\d+\])+ = \{(.*?)\};", text, re.S).group(1)
        return np.array([float(v.rstrip("f")) for v in re.findall(r"[-+0-9.eE]+f", body)], dtype=np.float64)

    b1 = arr("_b1")
    b2 = float(re.search(r"fm_scan_gaps_b2 = ([-+0-9.eE]+)f", text).group(1))
    return arr("_mean"), arr("_scale"), arr("_w1").reshape(len(b1), N_FEATURES), b1, arr("_w2"), b2


def evaluate(args):
    import numpy as np

    net = read_header(args.header)
    rows = [row for _, rs in load(args.gaps) for row in rs]
    if not rows:
        sys.exit("train-scan-gaps: no gaps in " + " ".join(args.gaps))
    x = np.array([f for _, _, f in rows])
    z = net_forward(np, x, *net)
    report(f"{len(rows)} gaps:", [l for l, _, _ in rows], [c for _, c, _ in rows], [int(v >= 0) for v in z])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--cli", required=True)
    d.add_argument("--twins", nargs="+", required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--jobs", type=int, default=2)
    t = sub.add_parser("train")
    t.add_argument("--gaps", nargs="+", required=True)
    t.add_argument("--hidden", type=int, default=8)
    t.add_argument("--ensemble", type=int, default=3)
    t.add_argument("--epochs", type=int, default=3000)
    t.add_argument("--patience", type=int, default=300)
    t.add_argument("--edge", choices=("cut", "skip"), default="cut",
                   help="gaps between a formula and ink of no formula: taught as cuts, or left out")
    t.add_argument("--pos-weight", type=float, default=1.0)
    t.add_argument("--held-out-share", type=float, default=0.2)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--header", required=True)
    e = sub.add_parser("eval")
    e.add_argument("--gaps", nargs="+", required=True)
    e.add_argument("--header", required=True)
    args = ap.parse_args()
    {"dump": dump, "train": train, "eval": evaluate}[args.cmd](args)


if __name__ == "__main__":
    main()
