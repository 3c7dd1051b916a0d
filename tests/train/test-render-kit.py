#!/usr/bin/python3
"""The render kit for the lent GPU machine (tools/train/device/render_kit.py,
make-render-kit.sh, step.py --render-min; issue 13) built small and used as on the
device, so it cannot rot: a kit with the cm set-up only (pdflatex -recorder over a
generated corpus, the TeX files, render-crops and the ldd closure), unpacked into a
temporary folder, renders 20 train samples through step.py --render-only, under
bwrap with the system's TeX hidden when bwrap works; they must equal byte for byte
what the system's pdflatex renders for the same seed, and the kit's pdftex and
render-crops may load no library from outside the kit but glibc's
(tools/train/device/check_render_kit.py --tiny).
Skipped (exit 77) without pdflatex, kpsewhich, render-crops, bash or xz."""

import os
import shutil
import subprocess
import sys

ROOT = os.environ.get("FE_SOURCE_ROOT") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "data"))
import render_batch  # noqa: E402

render_crops = os.environ.get("FM_RENDER_CROPS") or render_batch.find_render_crops()
for prog in ("pdflatex", "pdftex", "kpsewhich", "bash", "xz", "tar", "ldd"):
    if not shutil.which(prog):
        print(f"SKIP: {prog} not installed (the kit copies the system's TeX: tools/data/README.md)")
        sys.exit(77)
if not render_crops or not os.access(render_crops, os.X_OK):
    print("SKIP: render-crops not built (needs poppler-glib and cairo)")
    sys.exit(77)
if "cm" not in render_batch.available_fonts():
    print("SKIP: fix-cm.sty not found (texlive-latex-base)")
    sys.exit(77)
try:
    import numpy  # noqa: F401
    import PIL  # noqa: F401
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "train", "device", "check_render_kit.py"),
                    "--tiny", "--render-crops", render_crops, "--samples", "20", "--shard-size", "10"],
                   cwd=ROOT, timeout=300)
sys.exit(r.returncode)
