#!/usr/bin/python3
"""Picks a few test-split formulas that the shipped model recognises exactly (per an
eval.py run) and commits them as the CI smoke set: tests/smoke/<name>.png + expected.json.

    /usr/bin/python3 tools/eval/eval.py --no-render --out work/eval/results.json
    /usr/bin/python3 tools/eval/make-smoke-set.py work/eval/results-clean.jsonl [--n 8]

The picks spread over font set-ups and inline/display and prefer longer formulas, so a
broken engine or a swapped model cannot pass by luck. Rerun it whenever the model changes.
"""
import argparse, json, os, sys

from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
from dataset_reader import Dataset  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", help="results-clean.jsonl of eval.py")
    ap.add_argument("--data", default=os.path.join(ROOT, "work", "data"))
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "smoke"))
    args = ap.parse_args()

    rows = [json.loads(l) for l in open(args.results)]
    exact = [r for r in rows if r["exact"] and r["truth_tokens"] >= 8]
    exact.sort(key=lambda r: -r["truth_tokens"])
    picks, seen = [], set()
    for r in exact:  # first pass: one per (font, style)
        if (r["font"], r["style"]) not in seen:
            seen.add((r["font"], r["style"]))
            picks.append(r)
    for r in exact:
        if len(picks) >= args.n:
            break
        if r not in picks:
            picks.append(r)
    picks = picks[:args.n]
    if len(picks) < 3:
        sys.exit(f"only {len(picks)} exact predictions with >= 8 tokens: not enough for a smoke set")

    ds = Dataset(args.data, "test")
    os.makedirs(args.out, exist_ok=True)
    for f in os.listdir(args.out):
        if f.endswith(".png"):
            os.remove(os.path.join(args.out, f))
    expected = {}
    for r in sorted(picks, key=lambda r: r["index"]):
        image, ids, info = ds[r["index"]]
        name = f"test-{r['index']:04d}-{info['font']}-{info['style']}.png"
        Image.fromarray(image).save(os.path.join(args.out, name), optimize=True)
        expected[name] = r["truth"]
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump({"em_px": 20, "formulas": expected}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(expected)} smoke images in {args.out}")


if __name__ == "__main__":
    main()
