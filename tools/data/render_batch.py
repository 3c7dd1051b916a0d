#!/usr/bin/python3
"""Many formulas -> one pdflatex run (one formula per page, `preview` tight
boxes) -> render-crops (the app's Poppler+Cairo renderer) -> gray crops.

A formula that fails must not kill its batch: every page is bracketed by
\\typeout markers, errors in the log are attributed to the formula whose
marker precedes them (a fatal stop to the last formula started), and the
batch is recompiled without the culprits until the log is clean. The final
PDF then has exactly one page per surviving formula, in order.
"""

import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np

FONT_SETS = {
    # name: (lines before \documentclass, preamble lines)
    "cm": ("\\RequirePackage{fix-cm}", ""),
    "lm": ("", "\\usepackage[T1]{fontenc}\\usepackage{lmodern}"),
    "times": ("", "\\usepackage{mathptmx}"),
    "palatino": ("", "\\usepackage{mathpazo}"),
    "sans": ("\\RequirePackage{fix-cm}",
             "\\usepackage{sansmath}\\renewcommand{\\familydefault}{\\sfdefault}"
             "\\AtBeginDocument{\\sansmath}"),
    # Times and Palatino clones with their own math fonts (glyph shapes unlike
    # mathptmx/mathpazo's borrowed CM symbols): more variety of symbol shapes
    "txfonts": ("", "\\usepackage{txfonts}"),
    "pxfonts": ("", "\\usepackage{pxfonts}"),
    # texlive-fonts-extra: text+math families common in published papers and books
    "newtx": ("", "\\usepackage{newtxtext}\\usepackage{newtxmath}"),
    "newpx": ("", "\\usepackage{newpxtext}\\usepackage{newpxmath}"),
    "kpfonts": ("", "\\usepackage{kpfonts}"),
    "libertine": ("", "\\usepackage{libertine}\\usepackage[libertine]{newtxmath}"),
    "cmbright": ("", "\\usepackage{cmbright}"),
    "euler": ("", "\\usepackage{eulervm}"),
    "charter": ("", "\\usepackage[charter]{mathdesign}"),
    # never trained on: the unseen-font evaluation set (docs/data.md)
    "stix2": ("", "\\usepackage{stix2}"),
    "fourier": ("", "\\usepackage{fourier}"),
}
# the package each set-up needs beyond texlive-latex-base/-recommended
FONT_REQUIRES = {"cm": "fix-cm.sty", "lm": "lmodern.sty", "times": "mathptmx.sty",
                 "palatino": "mathpazo.sty", "sans": "sansmath.sty",
                 "txfonts": "txfonts.sty", "pxfonts": "pxfonts.sty",
                 "newtx": "newtxmath.sty", "newpx": "newpxmath.sty", "kpfonts": "kpfonts.sty",
                 "libertine": "libertine.sty", "cmbright": "cmbright.sty", "euler": "eulervm.sty",
                 "charter": "mathdesign.sty", "stix2": "stix2.sty", "fourier": "fourier.sty"}
FONT_NAMES = list(FONT_SETS)
STYLES = ["inline", "display"]
FONT_SIZES = [9, 10, 11, 12]

STATUS_OK, STATUS_BLANK, STATUS_TOO_BIG, STATUS_RENDER_ERROR = 0, 1, 2, 3

_MARK_RE = re.compile(r"^FMSTART (\d+)$")


def find_render_crops():
    env = os.environ.get("FM_RENDER_CROPS")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    for build in ("build-data", "build"):
        p = os.path.join(root, build, "tools", "render-crops")
        if os.access(p, os.X_OK):
            return p
    return shutil.which("render-crops")


def available_fonts():
    """Font set-ups whose packages this TeX installation has (Debian's lmodern
    is only a Recommends of texlive-base)."""
    have = []
    for name in FONT_NAMES:
        r = subprocess.run(["kpsewhich", FONT_REQUIRES[name]], capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip():
            have.append(name)
    return have


class PreambleError(RuntimeError):
    pass


def tex_document(formulas, styles, font, size_pt):
    """The .tex source: one preview page per formula."""
    before, preamble = FONT_SETS[font]
    lines = [before,
             "\\documentclass{article}",
             "\\usepackage{amsmath,amssymb,amsfonts,mathrsfs,mathtools}",
             preamble,
             "\\usepackage[active,tightpage]{preview}",
             "\\setlength\\PreviewBorder{2pt}",
             "\\pagestyle{empty}",
             "\\begin{document}",
             # a glyph missing from the font set is an error, not a blank
             "\\tracinglostchars=3",
             "\\fontsize{%g}{%g}\\selectfont" % (size_pt, size_pt * 1.2)]
    for i, (f, st) in enumerate(zip(formulas, styles)):
        math = ("$\\displaystyle " if st == "display" else "$") + f + "$"
        lines.append("\\typeout{FMSTART %d}" % i)
        lines.append("\\begin{preview}" + math + "\\end{preview}")
    lines.append("\\typeout{FMSTART %d}" % len(formulas))
    lines.append("\\end{document}")
    return "\n".join(lines) + "\n"


def _run_pdflatex(workdir, formulas, styles, font, size_pt):
    """Returns (set of failing indices, fatal index or None, pdf path)."""
    tex = os.path.join(workdir, "batch.tex")
    with open(tex, "w") as f:
        f.write(tex_document(formulas, styles, font, size_pt))
    pdf = os.path.join(workdir, "batch.pdf")
    if os.path.exists(pdf):
        os.unlink(pdf)
    # batchmode: errors are logged and skipped, nothing waits for a terminal.
    # A batch takes seconds; a formula that sends TeX into a loop raises
    # subprocess.TimeoutExpired (handled by compile_batch).
    subprocess.run(["pdflatex", "-interaction=batchmode", "batch.tex"],
                   cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=batch_timeout(len(formulas)))
    failed = set()
    current = None
    last_started = None
    finished = False
    with open(os.path.join(workdir, "batch.log"), "rb") as f:
        for raw in f:
            line = raw.decode("latin-1").rstrip("\n")
            m = _MARK_RE.match(line)
            if m:
                current = int(m.group(1))
                last_started = current
                if current == len(formulas):
                    finished = True
                continue
            if line.startswith("! ") or line.startswith("Missing character"):
                if current is None:
                    raise PreambleError("pdflatex preamble (%s): %s" % (font, line))
                if current < len(formulas):
                    failed.add(current)
    fatal = None
    if not finished:
        fatal = last_started if last_started is not None and last_started < len(formulas) else 0
    return failed, fatal, pdf


def batch_timeout(n):
    return 30 + 0.5 * n


def _find_hangs(workdir, idx, formulas, styles, font, size_pt):
    """Indices in idx whose formula makes pdflatex run past its time, by
    bisection (the log is buffered, so its last marker may be stale)."""
    try:
        _run_pdflatex(workdir, [formulas[i] for i in idx], [styles[i] for i in idx], font,
                      size_pt)
        return []
    except subprocess.TimeoutExpired:
        if len(idx) == 1:
            return list(idx)
        mid = len(idx) // 2
        return (_find_hangs(workdir, idx[:mid], formulas, styles, font, size_pt) +
                _find_hangs(workdir, idx[mid:], formulas, styles, font, size_pt))


def compile_batch(workdir, formulas, styles, font, size_pt, max_rounds=8):
    """Compile; returns (kept indices into formulas, failed indices, pdf path or None)."""
    os.makedirs(workdir, exist_ok=True)
    keep = list(range(len(formulas)))
    failed_all = []
    for _ in range(max_rounds):
        if not keep:
            return [], failed_all, None
        try:
            failed, fatal, pdf = _run_pdflatex(workdir, [formulas[i] for i in keep],
                                               [styles[i] for i in keep], font, size_pt)
        except subprocess.TimeoutExpired:
            hangs = _find_hangs(workdir, keep, formulas, styles, font, size_pt)
            sys.stderr.write("pdflatex timed out on: %s\n" % [formulas[i] for i in hangs])
            failed_all.extend(hangs)
            keep = [k for k in keep if k not in hangs]
            continue
        if fatal is not None:
            failed.add(fatal)
        if not failed and os.path.exists(pdf):
            return keep, failed_all, pdf
        failed_all.extend(keep[j] for j in sorted(failed))
        keep = [k for j, k in enumerate(keep) if j not in failed]
    return [], failed_all + keep, None


def read_records(stream):
    """Yields (page, status, image or None, cc_median_px) from render-crops output."""
    head = struct.Struct("<iiiif")
    while True:
        b = stream.read(head.size)
        if not b:
            return
        if len(b) != head.size:
            raise IOError("truncated render-crops record")
        page, status, w, h, cc = head.unpack(b)
        img = None
        if status == STATUS_OK:
            data = stream.read(w * h)
            if len(data) != w * h:
                raise IOError("truncated render-crops image")
            img = np.frombuffer(data, dtype=np.uint8).reshape(h, w)
        yield page, status, img, cc


def render_pdf(pdf, size_pt, render_crops, em_px=20, max_w=1536, max_h=256):
    proc = subprocess.run([render_crops, "--em-px", str(em_px), "--max-width", str(max_w),
                           "--max-height", str(max_h), pdf, "%g" % size_pt],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        raise RuntimeError("render-crops failed: " + proc.stderr.decode(errors="replace"))
    import io
    return list(read_records(io.BytesIO(proc.stdout)))


def render_formulas(workdir, formulas, styles, font, size_pt, render_crops=None, raster=None, **kw):
    """Returns a list, one entry per formula: (status string, image, cc_px).
    status: 'ok', 'compile', 'blank', 'too_big', 'render'.
    raster=(rasteriser, dpi, antialias) (rasterise.draw_setting): the 'ok' images
    are redrawn by that program instead (status and cc_px stay render-crops'),
    and each entry gets a 4th element, True where the redraw replaced the image."""
    render_crops = render_crops or find_render_crops()
    keep, failed, pdf = compile_batch(workdir, formulas, styles, font, size_pt)
    out = [("compile", None, 0.0)] * len(formulas)
    if pdf is None:
        return out
    recs = render_pdf(pdf, size_pt, render_crops, **kw)
    if len(recs) != len(keep):
        raise RuntimeError("page count %d != formulas %d" % (len(recs), len(keep)))
    names = {STATUS_OK: "ok", STATUS_BLANK: "blank", STATUS_TOO_BIG: "too_big",
             STATUS_RENDER_ERROR: "render"}
    for (page, status, img, cc), idx in zip(recs, keep):
        out[idx] = (names.get(status, "render"), img, cc)
    if raster:
        import rasterise
        pages = rasterise.rasterise_pages(pdf, len(keep), raster, workdir)
        for page, idx in zip(pages, keep):
            st, img, cc = out[idx]
            other = None
            if st == "ok":
                other = rasterise.crop_and_scale(page, size_pt, raster[1], kw.get("em_px", 20),
                                                 kw.get("max_h", 256), kw.get("max_w", 1536))
            out[idx] = (st, img if other is None else other, cc, other is not None)
    return out


if __name__ == "__main__":
    # quick look: render_batch.py FONT SIZE OUTDIR < formulas.txt -> OUTDIR/NNNN.png
    from PIL import Image
    font, size, outdir = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    forms = [l.strip() for l in sys.stdin if l.strip()]
    res = render_formulas(os.path.join(outdir, "tex"), forms, ["display"] * len(forms),
                          font, size)
    for i, (st, img, cc) in enumerate(res):
        print(i, st, None if img is None else img.shape, round(cc, 2))
        if img is not None:
            Image.fromarray(img).save(os.path.join(outdir, "%04d.png" % i))
