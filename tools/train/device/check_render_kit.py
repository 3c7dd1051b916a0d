#!/usr/bin/python3
"""Proof that the render kit renders what the system TeX renders (issue 13; docs/model.md
"Rendering on the device"):

    check_render_kit.py --folder work/device/render --render-crops build/tools/render-crops \\
        --samples 4000 --jobs 2 [--hide-system-tex yes]
    check_render_kit.py --tiny --render-crops build/tools/render-crops     # tests/train

1. the system's pdflatex renders N train samples (tools/data/build_dataset.py, seed S,
   the kit's corpus and vocabulary);
2. tools/train/device/step.py --render-only renders the same N from the kit folder as on
   the device: kit and corpus unpacked into a temporary folder, build_dataset.py run with
   the kit's wrappers first on PATH; with --hide-system-tex under bwrap, with tmpfs over
   /usr/share/texlive, /usr/share/texmf, /etc/texmf, /var/lib/texmf and /dev/null over
   /usr/bin/pdftex and /usr/bin/kpsewhich, so nothing of the system's TeX can be used;
3. compares the shards byte for byte (.img, .tok, .idx.npy), and runs the kit's pdftex
   and render-crops under LD_DEBUG=libs (in the same sandbox) to list every library
   loaded from outside the kit: only glibc's may be.

--tiny builds a kit first (the cm set-up only, a generated 150-formula corpus) so the
check needs no corpus and no work/data. Prints a JSON summary; exit 1 on any difference.
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
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tools", "data"))
sys.path.insert(0, HERE)

import render_kit  # noqa: E402

HIDE = ["--tmpfs", "/usr/share/texlive", "--tmpfs", "/usr/share/texmf", "--tmpfs", "/etc/texmf",
        "--tmpfs", "/var/lib/texmf", "--ro-bind", "/dev/null", "/usr/bin/pdftex",
        "--ro-bind", "/dev/null", "/usr/bin/kpsewhich"]
TINY_DOC = ("\\documentclass{article}\\usepackage{amsmath}\\begin{document}"
            "$x^2+\\frac{a}{b}$\\end{document}\n")


def sandbox(cmd, hide, setenv=None):
    """cmd under bwrap with the system's TeX hidden; setenv only for cmd (not for bwrap)."""
    if not hide:
        return (["env"] + ["%s=%s" % kv for kv in setenv.items()] if setenv else []) + cmd
    sets = [x for k, v in (setenv or {}).items() for x in ("--setenv", k, v)]
    return ["bwrap", "--dev-bind", "/", "/"] + HIDE + sets + ["--"] + cmd


def bwrap_works():
    try:
        return subprocess.run(["bwrap", "--dev-bind", "/", "/", "--tmpfs", "/var/lib/texmf", "--", "true"],
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def tiny_corpus(path, n=150):
    import generate_formulas
    import latex_tokens as lt
    rng = random.Random(11)
    forms = []
    while len(forms) < n:
        try:
            forms.append(lt.detokenize(lt.normalize(generate_formulas.generate(rng))))
        except lt.NormalizeError:
            pass
    os.makedirs(os.path.join(path, "texsrc"))
    with open(os.path.join(path, "texsrc", "lebl-ra.display.txt"), "w") as f:
        f.write("\n".join(forms[:n // 2]) + "\n")
    with open(os.path.join(path, "texsrc", "crowell-lm.inline.txt"), "w") as f:
        f.write("\n".join(forms[n // 2:]) + "\n")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stdout.write(r.stdout[-3000:] + r.stderr[-3000:])
        raise SystemExit("check_render_kit: %s exited %d" % (" ".join(cmd[:6]), r.returncode))
    return r.stdout


def build_tiny(tmp, render_crops):
    """A kit with the cm set-up only, its folder (kit, corpus, vocab) in tmp/folder."""
    corpus = os.path.join(tmp, "corpus")
    tiny_corpus(corpus)
    py = sys.executable
    run([py, os.path.join(HERE, "render_kit.py"), "probe", "--work", os.path.join(tmp, "probe"),
         "--corpus", corpus, "--fonts", "cm", "--formulas", "0", "--generated", "0", "--jobs", "2"])
    run([py, os.path.join(HERE, "render_kit.py"), "assemble", "--work", os.path.join(tmp, "probe"),
         "--kit", os.path.join(tmp, "src", "fmkit"), "--render-crops", render_crops])
    folder = os.path.join(tmp, "folder")
    os.makedirs(folder)
    # the shipped model's vocabulary: build_dataset.py would spend ~20 s making one
    with open(os.path.join(folder, "vocab.json"), "w") as f:
        json.dump(render_kit.model_vocab(os.path.join(ROOT, "data", "models", "formulate-v1.safetensors")), f)
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump({"splits": {"train": {"shards": []}}}, f)
    # xz -0: this is about the contents, not the carry size
    for name, src in (("render-kit.tar.xz", ("src", "fmkit")), ("corpus.tar.xz", (".", "corpus"))):
        tar = subprocess.Popen(["tar", "-C", os.path.join(tmp, src[0]), "-cf", "-", src[1]],
                               stdout=subprocess.PIPE)
        with open(os.path.join(folder, name), "wb") as f:
            subprocess.run(["xz", "-0", "-T2"], stdin=tar.stdout, stdout=f, check=True)
        tar.wait()
    shutil.rmtree(os.path.join(tmp, "src"))
    return folder, corpus


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folder", help="a folder made by make-render-kit.sh")
    ap.add_argument("--tiny", action="store_true", help="build a cm-only kit here first (tests)")
    ap.add_argument("--render-crops", required=True, help="render-crops for the system render")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--shard-size", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--hide-system-tex", choices=["yes", "no", "auto"], default="auto",
                    help="run the kit side under bwrap with the system's TeX hidden (auto: when bwrap works)")
    ap.add_argument("--keep", help="work in this folder and keep it")
    a = ap.parse_args(argv)
    hide = a.hide_system_tex == "yes" or (a.hide_system_tex == "auto" and bwrap_works())
    if a.hide_system_tex == "yes" and not bwrap_works():
        raise SystemExit("check_render_kit: bwrap does not work here (Debian bubblewrap)")
    tmp = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="fm-render-kit-")
    os.makedirs(tmp, exist_ok=True)
    try:
        return check(a, tmp, hide)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def check(a, tmp, hide):
    py = sys.executable
    t0 = time.monotonic()
    if a.tiny:
        folder, corpus = build_tiny(tmp, a.render_crops)
        fonts = ["--fonts", "cm"]
    else:
        folder = a.folder
        corpus = os.path.join(tmp, "corpus")
        os.makedirs(corpus, exist_ok=True)
        run(["tar", "-xJf", os.path.join(folder, "corpus.tar.xz"), "-C", corpus, "--strip-components=1"])
        fonts = []
    t_kit = time.monotonic() - t0
    # 1. the system's TeX
    sysdir = os.path.join(tmp, "sys")
    os.makedirs(sysdir, exist_ok=True)      # with --keep, a second check renders only what is missing
    shutil.copy(os.path.join(folder, "vocab.json"), sysdir)
    t1 = time.monotonic()
    run([py, os.path.join(ROOT, "tools", "data", "build_dataset.py"), "--out", sysdir, "--corpus", corpus,
         "--train-samples", str(a.samples), "--val-samples", "0", "--test-samples", "0",
         "--shard-size", str(a.shard_size), "--jobs", str(a.jobs), "--seed", str(a.seed),
         "--render-crops", a.render_crops] + fonts)
    t_sys = time.monotonic() - t1
    # 2. the kit, as on the device
    state, out, kt = (os.path.join(tmp, n) for n in ("state", "out", "kt"))
    for d in (state, out, kt, os.path.join(tmp, "ld")):
        shutil.rmtree(d, ignore_errors=True)
    t2 = time.monotonic()
    run(sandbox([py, os.path.join(HERE, "step.py"), folder, "--render-only", "--render-min", "30",
                 "--render-max-samples", str(a.samples), "--render-seed", str(a.seed),
                 "--render-jobs", str(a.jobs), "--render-shard-size", str(a.shard_size),
                 "--state", state, "--out", out, "--render-tmp", kt], hide), cwd=ROOT)
    t_kitrender = time.monotonic() - t2
    with open(os.path.join(out, "render.json")) as f:
        rinfo = json.load(f)
    # 3. byte for byte
    data = os.path.join(state, "data")
    same, differ = 0, []
    sys_shards = sorted(n[:-5] for n in os.listdir(sysdir) if n.startswith("train-") and n.endswith(".json"))
    for name in sys_shards:
        k = int(name.split("-")[1])
        for part in (".img", ".tok", ".idx.npy"):
            p_kit = os.path.join(data, "train-s%d-%05d%s" % (a.seed, k, part))
            with open(os.path.join(sysdir, name + part), "rb") as f1:
                b1 = f1.read()
            b2 = open(p_kit, "rb").read() if os.path.exists(p_kit) else None
            if b1 == b2:
                same += 1
            else:
                differ.append(name + part)
    # libraries from outside the kit, in the same sandbox
    kit = os.path.join(kt, "fmkit")
    probe_dir = os.path.join(tmp, "ld")
    os.makedirs(probe_dir)
    with open(os.path.join(probe_dir, "t.tex"), "w") as f:
        f.write(TINY_DOC)
    env = dict(LD_DEBUG="libs", LD_LIBRARY_PATH=os.path.join(kit, "lib"), FMKIT=kit,
               TEXMFCNF=os.path.join(kit, "web2c-kit") + ":" + os.path.join(kit, "web2c"),
               FONTCONFIG_FILE=os.path.join(kit, "fonts.conf"))
    outside = {}
    for binary, args in (("pdftex", ["-fmt=pdflatex", "-progname=pdflatex", "-interaction=batchmode", "t.tex"]),
                         ("render-crops", ["t.pdf", "10"])):
        r = subprocess.run(sandbox([os.path.join(kit, "libexec", binary)] + args, hide, env), cwd=probe_dir,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        libs = set(re.findall(r"calling init: (\S+)", r.stderr))
        if r.returncode != 0 or not libs:
            outside[binary] = ["exit %d" % r.returncode]
            continue
        bad = sorted(p for p in libs if not p.startswith(kit + "/lib/") and
                     not any(os.path.basename(p).startswith(g) for g in render_kit.GLIBC))
        outside[binary] = bad
        outside[binary + "_from_kit"] = sum(1 for p in libs if p.startswith(kit + "/lib/"))
    summary = {"hidden_system_tex": hide, "samples_system": sum(
        json.load(open(os.path.join(sysdir, n + ".json")))["samples"] for n in sys_shards),
        "samples_kit": rinfo["samples"], "shards": len(sys_shards), "files_identical": same,
        "files_differing": differ, "libraries_outside_kit": outside,
        "seconds": {"kit": round(t_kit, 1), "system_render": round(t_sys, 1),
                    "kit_render": round(t_kitrender, 1)},
        "kit_render": rinfo}
    print(json.dumps(summary, indent=1))
    ok = (not differ and same > 0 and rinfo["samples"] > 0 and
          all(not v for k, v in outside.items() if not k.endswith("_from_kit")))
    print("check_render_kit: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
