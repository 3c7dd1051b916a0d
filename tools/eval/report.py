#!/usr/bin/python3
"""results.json of eval.py -> Markdown tables for data/models/README.md.

    /usr/bin/python3 tools/eval/report.py work/eval/results.json [--examples 8]

Prints the overall table (every set), the clean set's breakdowns, throughput,
the engine-vs-PyTorch agreement, and the clean set's worst failures (lowest
edit-distance score) as examples of known weaknesses."""

import argparse
import json
import os


def pct(v):
    return "%.2f" % (100 * v)


def row(name, a):
    cells = [name, str(a["n"]), pct(a["bleu4"]), "%.3f" % a["edit_distance"], pct(a["exact_match"])]
    if "image_match" in a:
        cells += [pct(a["image_match"]), pct(a["image_match_no_blank_columns"]), pct(a["pred_compiles"])]
    else:
        cells += ["–", "–", "–"]
    return "| " + " | ".join(cells) + " |"


HEAD = ("| set | n | BLEU-4 | edit dist. | exact % | image match % | image match, no blank cols % | compiles % |\n"
        "|---|---|---|---|---|---|---|---|")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--examples", type=int, default=8)
    args = ap.parse_args()
    res = json.load(open(args.results))
    print("Command: `%s`\n" % res["command"])
    mf = res.get("model_file", {})
    if "config" in mf:
        c = mf["config"]
        print("Model file: %s (%.2f MB); provenance: %s\n" % (
            os.path.basename(res["model"]), res.get("model_bytes", 0) / 1e6,
            ", ".join("%s=%s" % (k.replace("formulate.", ""), v) for k, v in sorted(mf.items())
                      if k != "config") or "none recorded"))
        print("Config: " + ", ".join("`%s`=%s" % (k, json.dumps(c[k])) for k in (
            "cnn_channels", "cnn_pool", "d_model", "n_heads", "d_ff", "enc_layers", "dec_layers",
            "vocab_size", "max_tokens", "em_px", "cc_median_em", "max_height", "max_width") if k in c) + "\n")
    print(HEAD)
    for name, s in res["sets"].items():
        print(row(name, s["overall"]))
    clean = res["sets"].get("clean")
    if clean:
        for key in ("font", "style", "source", "size_pt", "truth_length"):
            print("\nClean set by %s:\n" % key)
            print(HEAD.replace("| set |", "| %s |" % key, 1))
            for g, a in clean["by"][key].items():
                print(row(g, a))
    print("\nThroughput (engine on CPU, `--jobs` single-thread formulate-cli processes):\n")
    print("| set | images | wall s | images/s | engine ms/image | resized by the engine % |"
          " repetition guard stops | length-limit stops |")
    print("|---|---|---|---|---|---|---|---|")
    for name, s in res["sets"].items():
        t = s["throughput"]
        o = s["overall"]
        print("| %s | %d | %.1f | %.2f | %.1f | %s | %d | %d |" % (
            name, t["images"], t["wall_s"], t["images_per_s"], t["engine_ms_per_image"],
            pct(o.get("resized_fraction", 0.0)), o.get("repetition_stopped", 0),
            o.get("hit_length_limit", 0)))
    if clean:
        e = clean["engine"]
        print("\nEngine: %s, %s parameters, device %s, %s." % (
            os.path.basename(e.get("model", "?")), e.get("model_parameters"),
            e.get("device", {}).get("name"), e.get("gemm_path")))
    ag = res.get("agreement")
    if ag:
        print("\nEngine vs PyTorch greedy agreement: %d / %d = %s %% (twin: %.0f s)." %
              (ag["agree"], ag["n"], pct(ag["rate"]), ag["pytorch_seconds"]))
    if args.examples:
        base = os.path.splitext(args.results)[0] + "-clean.jsonl"
        if os.path.exists(base):
            recs = [json.loads(l) for l in open(base)]
            wrong = sorted((r for r in recs if not r["exact"]), key=lambda r: -r["ned"])
            print("\nWorst clean-set predictions (highest edit distance):\n")
            print("| # | font, size, style | truth | prediction | ED |")
            print("|---|---|---|---|---|")
            for r in wrong[:args.examples]:
                print("| %d | %s %dpt %s | `%s` | `%s` | %.2f |" % (
                    r["index"], r["font"], r["size_pt"], r["style"],
                    r["truth"].replace("|", "\\|"), (r["pred"] or "").replace("|", "\\|"), r["ned"]))


if __name__ == "__main__":
    main()
