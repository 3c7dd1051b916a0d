#!/usr/bin/python3
"""The render kit: pdflatex + render-crops that run on a lent GPU machine with no TeX
(issue 13; docs/model.md "Rendering on the device"). Called by make-render-kit.sh.

    render_kit.py probe    --work DIR [--formulas N] [--fonts a,b]   # here, system TeX
    render_kit.py assemble --work DIR --kit DIR --render-crops BIN
    render_kit.py crops    --data work/data-pdf --out work/device/render [--mib M]

probe: renders a probe set in every font set-up x size x style with the system
pdflatex under `-recorder` (a `pdflatex` shim first on PATH appends each run's
.fls to DIR/fls.txt), through tools/data/render_batch.py, so the files recorded
are exactly those the pipeline opens. The probe set: corpus formulas chosen
greedily until every token of the corpus is in one, plus --formulas random corpus
formulas and generated ones (sub/superscript sizes, rare alphabets).

assemble: copies the recorded TeX files into KIT (texmf-dist, texmf, texmf-var,
texmf-config mirror Debian's four trees), every .tfm beside a recorded .tfm (a
font family's other design sizes: a glyph in a subscript of a formula the probe
did not have), writes ls-R databases and a texmf.cnf that names only KIT, and
copies pdftex, kpsewhich and render-crops with the ldd closure of each minus
glibc's own libraries. bin/ holds wrappers that set LD_LIBRARY_PATH for that one
binary only: the kit's libstdc++/libz must not reach the device's Python (torch,
numpy, PIL bring their own).

crops: whole xz shards of tools/data/pdf_crops.py's PDF crops into the kit folder
within a size budget (docs/model.md "PDF crops in the kit"); step.py --pdf-share
gives them their share of each epoch.
"""

import argparse
import functools
import glob
import json
import multiprocessing
import os
import random
import re
import shutil
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tools", "data"))

# Debian 12's TeX trees -> folders in the kit (kpathsea's TEXMF order is kept in texmf.cnf)
TREES = [("/usr/share/texlive/texmf-dist/", "texmf-dist"), ("/usr/share/texmf/", "texmf"),
         ("/var/lib/texmf/", "texmf-var"), ("/etc/texmf/", "texmf-config")]
# and the user's TEXMFVAR (~/.texlive2022/texmf-var): mktexpk writes bitmap fonts there
# when a set-up needs a font with no Type 1 version (newpx's text falls back to EC fonts,
# and Debian's cm-super is not installed); the device has no Metafont, so they travel.
USER_VAR_TREE = "texmf-uservar"
# glibc's own libraries: the device's glibc (2.39) is newer than Debian 12's (2.36)
GLIBC = ("libc.so", "libm.so", "libpthread.so", "libdl.so", "ld-linux", "librt.so",
         "libresolv.so", "libutil.so", "libanl.so", "linux-vdso")
# Any .tfm beside a recorded one is taken (other design sizes of a family), unless the
# folder is this large (newtx's and mathdesign's folders hold hundreds of encodings).
TFM_DIR_CAP = 1 << 20
PROBE_BATCH = 500     # formulas per probe pdflatex run

SHIM = """#!/bin/sh
# render_kit.py probe: pdflatex with -recorder; each run's file list goes to $FM_FLS_LOG
{real} -recorder "$@"
rc=$?
cat batch.fls >> "$FM_FLS_LOG" 2>/dev/null
exit $rc
"""


def probe_formulas(corpus, n_random, n_generated, seed):
    import build_dataset as B
    import generate_formulas
    import latex_tokens as lt
    items, _ = B.load_corpus(corpus)
    rng = random.Random(seed)
    rng.shuffle(items)
    chosen, seen = [], set()
    for norm, toks, src, kind in items:       # greedy: every token of the corpus once
        new = set(toks) - seen
        if new:
            chosen.append(norm)
            seen |= new
    n_cover = len(chosen)
    chosen += [it[0] for it in items[:n_random]]
    g = 0
    while g < n_generated:
        try:
            chosen.append(lt.detokenize(lt.normalize(generate_formulas.generate(rng))))
            g += 1
        except lt.NormalizeError:
            pass
    return chosen, n_cover, len(seen)


def probe_one(job):
    import render_batch as R
    work, font, size, forms = job
    styles = ["display" if i % 2 else "inline" for i in range(len(forms))]
    if size % 2:
        styles = styles[1:] + styles[:1]
    runs = []
    for start in range(0, len(forms), PROBE_BATCH):
        wd = os.path.join(work, "tex", "%s-%d-%d" % (font, size, start))
        keep, failed, pdf = R.compile_batch(wd, forms[start:start + PROBE_BATCH],
                                            styles[start:start + PROBE_BATCH], font, size)
        runs.append({"font": font, "size": size, "start": start, "kept": len(keep), "failed": len(failed)})
        shutil.rmtree(wd, ignore_errors=True)
    return runs


def cmd_probe(a):
    import render_batch as R
    os.makedirs(a.work, exist_ok=True)
    shim_dir = os.path.abspath(os.path.join(a.work, "shim"))
    os.makedirs(shim_dir, exist_ok=True)
    real = shutil.which("pdflatex")
    if not real:
        raise SystemExit("probe: no pdflatex on PATH (Debian texlive-latex-base etc.: tools/data/README.md)")
    with open(os.path.join(shim_dir, "pdflatex"), "w") as f:
        f.write(SHIM.format(real=real))
    os.chmod(os.path.join(shim_dir, "pdflatex"), 0o755)
    fls = os.path.join(a.work, "fls.txt")
    if os.path.exists(fls):
        os.remove(fls)
    os.environ["FM_FLS_LOG"] = os.path.abspath(fls)
    os.environ["PATH"] = shim_dir + os.pathsep + os.environ["PATH"]
    forms, n_cover, n_tok = probe_formulas(a.corpus, a.formulas, a.generated, a.seed)
    fonts = a.fonts.split(",") if a.fonts else [f for f in R.FONT_NAMES if f not in ("stix2", "fourier")]
    have = set(R.available_fonts())
    missing = [f for f in fonts if f not in have]
    if missing:
        raise SystemExit("probe: font set-ups not installed here: %s" % ", ".join(missing))
    stats = {"formulas": len(forms), "token_cover_formulas": n_cover, "tokens": n_tok, "runs": []}
    jobs = [(a.work, font, size, forms) for font in fonts for size in R.FONT_SIZES]
    with multiprocessing.Pool(a.jobs) as pool:
        for runs in pool.imap_unordered(probe_one, jobs):
            stats["runs"] += runs
            print("probe: %s %dpt done" % (runs[0]["font"], runs[0]["size"]), flush=True)
    with open(os.path.join(a.work, "probe.json"), "w") as f:
        json.dump(stats, f, indent=1)
    print("probe: %d formulas (%d cover all %d tokens) x %d font set-ups x %d sizes; %s" %
          (len(forms), n_cover, n_tok, len(fonts), len(R.FONT_SIZES), fls))
    return 0


def recorded_files(fls):
    files = set()
    with open(fls, encoding="latin-1") as f:
        for line in f:
            if line.startswith("INPUT /"):
                files.add(os.path.normpath(line[6:].strip()))
    return files


@functools.lru_cache(maxsize=None)
def user_var():
    r = subprocess.run(["kpsewhich", "-var-value", "TEXMFVAR"], capture_output=True, text=True)
    v = r.stdout.strip()
    return os.path.normpath(v) + "/" if v else None


def kit_path(path):
    trees = TREES + ([(user_var(), USER_VAR_TREE)] if user_var() else [])
    for prefix, tree in trees:
        if path.startswith(prefix):
            return os.path.join(tree, path[len(prefix):])
    return None


def write_ls_r(tree):
    """kpathsea's filename database (what mktexlsr writes), so lookups never scan disk."""
    lines = ["% ls-R -- filename database for kpathsea; do not change this line.", "./:"]
    top = sorted(os.listdir(tree))
    lines += top
    for dirpath, dirnames, filenames in sorted(os.walk(tree)):
        dirnames.sort()
        if dirpath == tree:
            continue
        lines += ["", "./" + os.path.relpath(dirpath, tree) + ":"]
        lines += sorted(dirnames + filenames)
    with open(os.path.join(tree, "ls-R"), "w") as f:
        f.write("\n".join(lines) + "\n")


TEXMF_CNF = """% Formulate render kit (tools/train/device/render_kit.py): every tree is inside the
% kit, whose root the wrapper passes as $FMKIT. This file comes first in TEXMFCNF and
% overrides the variables below; the rest (memory sizes, search suffixes) is Debian's
% texmf.cnf, copied beside it as web2c/texmf.cnf (kpathsea: an earlier file wins).
TEXMFROOT = $FMKIT
TEXMFDIST = $FMKIT/texmf-dist
TEXMFMAIN = $FMKIT/texmf-dist
TEXMFDEBIAN = $FMKIT/texmf
TEXMFSYSVAR = $FMKIT/texmf-var
TEXMFSYSCONFIG = $FMKIT/texmf-config
TEXMFLOCAL = $FMKIT/texmf-config
TEXMFVAR = $FMKIT/texmf-var
TEXMFCONFIG = $FMKIT/texmf-config
TEXMFHOME = $FMKIT/texmf-config
TEXMF = {!!$FMKIT/texmf-config,!!$FMKIT/texmf-uservar,!!$FMKIT/texmf-var,!!$FMKIT/texmf,!!$FMKIT/texmf-dist}
TEXMFDBS = {!!$FMKIT/texmf-config,!!$FMKIT/texmf-uservar,!!$FMKIT/texmf-var,!!$FMKIT/texmf,!!$FMKIT/texmf-dist}
SYSTEXMF = $TEXMF
VARTEXFONTS = /tmp/fmkit-texfonts
TEXMFCACHE = /tmp/fmkit-texcache
% a missing file is an error (the formula is dropped), never a font made on the fly
MKTEXTEX = 0
MKTEXPK = 0
MKTEXTFM = 0
MKTEXFMT = 0
MKOCPTEX = 0
MKOFMTEX = 0
shell_escape = f
"""

WRAPPER = """#!/bin/sh
# render kit: {name} with the kit's libraries only (not exported to anything else)
k=$(cd "$(dirname "$0")/.." && pwd)
FMKIT=$k TEXMFCNF=$k/web2c-kit:$k/web2c FONTCONFIG_FILE=$k/fonts.conf \\
  LD_LIBRARY_PATH=$k/lib exec {exec_a}"$k/libexec/{real}" "$@"
"""

ENV_SH = """# . KIT/env.sh: pdflatex, kpsewhich and render-crops of the render kit first on PATH
# (tools/train/device/render_kit.py); no library path is exported.
FMKIT=$(cd "$(dirname "${BASH_SOURCE:-$0}")" && pwd)
export FMKIT
export PATH=$FMKIT/bin:$PATH
export TEXMFCNF=$FMKIT/web2c-kit:$FMKIT/web2c
export FM_RENDER_CROPS=$FMKIT/bin/render-crops
"""

FONTS_CONF = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<!-- render kit: the PDFs embed every font; no system fonts, cache in /tmp -->
<fontconfig><cachedir>/tmp/fmkit-fontconfig</cachedir></fontconfig>
"""


def ldd_closure(binary, with_opened_on_use=True):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    libs = []
    for line in out.splitlines():
        parts = line.split()
        if "=>" in parts:
            name, path = parts[0], parts[parts.index("=>") + 1]
            if not path.startswith("/"):
                raise SystemExit("assemble: %s: %s not found" % (binary, name))
            if not any(name.startswith(g) for g in GLIBC):
                libs.append((name, path))
    return libs + (opened_on_use(binary) if with_opened_on_use else [])


# Libraries our programs open by soname on first use (app/document/fm-poppler.c,
# fm-lazy-library.c): ldd does not list them, so the closure adds each one the
# binary names and that library's own closure. (Tesseract, opened the same way,
# is never reached by render-crops, and its 57 libraries would double the kit.)
OPENED_ON_USE = re.compile(rb"libpoppler-glib\.so\.\d+")


def opened_on_use(binary):
    with open(binary, "rb") as f:
        names = sorted(set(m.group(0).decode() for m in OPENED_ON_USE.finditer(f.read())))
    if not names:
        return []
    cache = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    libs = []
    for name in names:
        paths = [line.split("=>")[1].strip() for line in cache.splitlines()
                 if line.strip().startswith(name + " ") and "x86-64" in line]
        if not paths:
            raise SystemExit("assemble: %s opens %s, which is not installed" % (binary, name))
        libs.append((name, paths[0]))
        libs += ldd_closure(paths[0], with_opened_on_use=False)
    return libs


class FontCloser:
    """What pdftex needs to use a font: its .tfm, then either its .vf and (recursively)
    the fonts the .vf names, or the .pfb/.pfa and .enc of its line in pdftex.map.
    closure(name) -> list of system paths, or None when some part is missing."""

    def __init__(self, maps):
        self.map = {}
        for m in maps:
            with open(m, encoding="latin-1") as f:
                for line in f:
                    w = line.split()
                    if w and not line.startswith(("%", "#")):
                        self.map.setdefault(w[0], [x.lstrip("<[") for x in w[1:] if x.startswith("<")])
        self.memo = {}

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def find(name):
        r = subprocess.run(["kpsewhich", "-progname=pdflatex", name], capture_output=True, text=True)
        p = r.stdout.strip()
        return os.path.normpath(p) if r.returncode == 0 and p else None

    @staticmethod
    def vf_fonts(path):
        """Font names a virtual font refers to (its fnt_def commands after the preamble)."""
        with open(path, "rb") as f:
            b = f.read()
        if len(b) < 3 or b[0] != 247:
            return None
        i = 3 + b[2] + 8
        names = []
        while i < len(b) and 243 <= b[i] <= 246:
            i += 1 + (b[i] - 242) + 12
            a, l = b[i], b[i + 1]
            names.append(b[i + 2 + a:i + 2 + a + l].decode("latin-1"))
            i += 2 + a + l
        return names

    def closure(self, name, depth=0):
        if name in self.memo:
            return self.memo[name]
        self.memo[name] = None          # a cycle counts as missing
        tfm = self.find(name + ".tfm")
        if not tfm or depth > 4:
            return None
        need = [tfm]
        vf = self.find(name + ".vf")
        if vf:
            refs = self.vf_fonts(vf)
            if refs is None:
                return None
            need.append(vf)
            for r in refs:
                sub = self.closure(r, depth + 1)
                if sub is None:
                    return None
                need += sub
        else:
            files = [x for x in self.map.get(name, []) if x.endswith((".pfb", ".pfa", ".enc"))]
            if not any(x.endswith((".pfb", ".pfa")) for x in files):
                return None
            for x in files:
                p = self.find(x)
                if not p:
                    return None
                need.append(p)
        self.memo[name] = need
        return need


def cmd_assemble(a):
    kit = a.kit
    if os.path.exists(kit):
        shutil.rmtree(kit)
    os.makedirs(kit)
    files = recorded_files(os.path.join(a.work, "fls.txt"))
    want = {}
    unknown = []
    for p in sorted(files):
        kp = kit_path(p)
        if kp is None:
            unknown.append(p)
        else:
            want[kp] = p
    if unknown:
        raise SystemExit("assemble: recorded files outside Debian's TeX trees: %s" % unknown[:10])
    n_recorded = len(want)
    # the other design sizes of every recorded font family, each only with all it needs
    # (its .vf and the fonts that names, or its map entry's .pfb and .enc): a .tfm whose
    # glyphs pdftex cannot embed is a fatal error at the end of the run that costs the
    # whole batch, while a missing .tfm costs only the formula that uses it
    closer = FontCloser([p for p in files if p.endswith("pdftex.map")])
    n_fonts = 0
    recorded_tfm = sorted(p for p in files if p.endswith(".tfm"))
    siblings = []
    for d, ext in sorted({(os.path.dirname(p), ".tfm" if p.endswith(".tfm") else "pk")
                          for p in files if p.endswith((".tfm", "pk"))}):
        tfms = glob.glob(os.path.join(d, "*" + ext))
        if sum(os.path.getsize(t) for t in tfms) > TFM_DIR_CAP:
            continue
        for t in sorted(tfms):
            t = os.path.normpath(t)
            if ext == "pk":
                want.setdefault(kit_path(t), t)
            elif kit_path(t) not in want:
                siblings.append(t)
    # a recorded .tfm too: pdftex reads a font's .tfm when the preamble declares it
    # (mathdesign's and newtx's bold math) but its .vf/.pfb only when a glyph ships out
    unresolved = []
    pks = {os.path.basename(p).split(".")[0] for p in want.values() if p.endswith("pk")}
    for t in recorded_tfm + siblings:
        recorded = kit_path(t) in want
        need = closer.closure(os.path.basename(t)[:-4])
        if need is None and recorded and os.path.basename(t)[:-4] not in pks:
            unresolved.append(os.path.basename(t))
        if need is not None:
            n_fonts += not recorded
            for q in need:
                want.setdefault(kit_path(q), q)
    added_pfb = n_fonts
    size = 0
    for kp, p in sorted(want.items()):
        dst = os.path.join(kit, kp)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(p, dst)
        size += os.path.getsize(dst)
    for tree in [t for _, t in TREES] + [USER_VAR_TREE]:
        os.makedirs(os.path.join(kit, tree), exist_ok=True)
        write_ls_r(os.path.join(kit, tree))
    # texmf.cnf: our paths first, Debian's file for everything else
    os.makedirs(os.path.join(kit, "web2c-kit"))
    with open(os.path.join(kit, "web2c-kit", "texmf.cnf"), "w") as f:
        f.write(TEXMF_CNF)
    os.makedirs(os.path.join(kit, "web2c"))
    shutil.copyfile("/usr/share/texlive/texmf-dist/web2c/texmf.cnf", os.path.join(kit, "web2c", "texmf.cnf"))
    with open(os.path.join(kit, "fonts.conf"), "w") as f:
        f.write(FONTS_CONF)
    # binaries and their libraries
    for d in ("bin", "libexec", "lib"):
        os.makedirs(os.path.join(kit, d))
    pdftex = os.path.realpath(shutil.which("pdftex") or "/usr/bin/pdftex")
    kpsewhich = os.path.realpath(shutil.which("kpsewhich") or "/usr/bin/kpsewhich")
    bins = {"pdftex": pdftex, "kpsewhich": kpsewhich, "render-crops": os.path.realpath(a.render_crops)}
    libs = {}
    for name, path in bins.items():
        shutil.copyfile(path, os.path.join(kit, "libexec", name))
        os.chmod(os.path.join(kit, "libexec", name), 0o755)
        for lname, lpath in ldd_closure(path):
            libs[lname] = lpath
    for lname, lpath in sorted(libs.items()):
        shutil.copyfile(lpath, os.path.join(kit, "lib", lname))
    # pdflatex: pdftex under that name finds pdflatex.fmt (kpathsea's progname is argv[0])
    for name, real, exec_a in (("pdflatex", "pdftex", "-a pdflatex "), ("pdftex", "pdftex", "-a pdftex "),
                               ("kpsewhich", "kpsewhich", ""), ("render-crops", "render-crops", "")):
        p = os.path.join(kit, "bin", name)
        # dash's exec has no -a: the wrapper runs under bash
        with open(p, "w") as f:
            f.write(WRAPPER.format(name=name, real=real, exec_a=exec_a).replace("#!/bin/sh", "#!/bin/bash"))
        os.chmod(p, 0o755)
    with open(os.path.join(kit, "env.sh"), "w") as f:
        f.write(ENV_SH)
    info = {"tex_files": len(want), "tex_files_recorded": n_recorded, "sibling_fonts_added": added_pfb,
            # recorded fonts with no .vf, .pfb or bitmap here: a glyph of one would be a
            # fatal pdftex error in the kit (the probe never shipped one out)
            "recorded_fonts_unresolved": sorted(unresolved),
            "tex_bytes": size, "libraries": sorted(libs),
            "lib_bytes": sum(os.path.getsize(os.path.join(kit, "lib", n)) for n in libs),
            "binaries": {n: p for n, p in bins.items()}}
    with open(os.path.join(kit, "kit.json"), "w") as f:
        json.dump(info, f, indent=1)
    print("assemble: %d TeX files (%d recorded), %.1f MB; %d libraries, %.1f MB" %
          (len(want), n_recorded, size / 1e6, len(libs), info["lib_bytes"] / 1e6))
    return 0


def model_vocab(path):
    """The vocabulary in a model file's safetensors header (no torch needed)."""
    import struct
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
    return json.loads(header["__metadata__"]["formulate.vocab"])


def cmd_slice(a):
    """vocab.json, meta.json and a val cut (pack.py's) for step.py --render-min: the train
    shards are made on the device."""
    sys.path.insert(0, HERE)
    import pack
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.data, "meta.json")) as f:
        meta = json.load(f)
    with open(os.path.join(a.data, "vocab.json")) as f:
        vocab = json.load(f)
    if a.init:
        if model_vocab(a.init) != vocab:
            raise SystemExit("slice: %s/vocab.json is not %s's vocabulary" % (a.data, a.init))
    for n in os.listdir(a.out):
        if n.startswith("val-"):
            os.remove(os.path.join(a.out, n))
    n_val = pack.cut_shard(a.data, meta["splits"]["val"]["shards"][0], a.out, "val-00000", a.val_samples)
    for part in pack.SHARD_PARTS:
        p = os.path.join(a.out, "val-00000" + part)
        pack.compress_file((p, p + ".xz"))
        os.remove(p)
    shutil.copy(os.path.join(a.data, "vocab.json"), a.out)
    meta["splits"] = {"train": {"shards": [], "samples": 0},
                      "val": {"shards": ["val-00000"], "samples": n_val}}
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("slice: vocab (%d tokens), meta and %d val samples in %s" % (len(vocab), n_val, a.out))
    return 0


CARRY_MIB = 64


def tree_bytes():
    """What a run call carries besides the named paths: git's tracked files
    (the untracked, not ignored ones too, but a clean checkout has none)."""
    names = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, check=True).stdout
    return sum(os.path.getsize(os.path.join(ROOT, n)) for n in names.decode().split("\0")
               if n and os.path.isfile(os.path.join(ROOT, n)))


def cmd_crops(a):
    """Whole shards of tools/data/pdf_crops.py's `pdf` split, xz-compressed into the kit folder
    (pdf-NNNNN.{idx.npy,img,tok}.xz, named in pdf-crops.json) until the size budget is spent:
    the device has no TeX, so PDF crops are made here and carried (step.py --pdf-share)."""
    sys.path.insert(0, HERE)
    import pack
    with open(os.path.join(a.data, "vocab.json")) as f:
        vocab = json.load(f)
    with open(os.path.join(a.out, "vocab.json")) as f:
        if json.load(f) != vocab:
            raise SystemExit("crops: %s/vocab.json differs from the kit's %s/vocab.json" % (a.data, a.out))
    for n in os.listdir(a.out):
        if n.startswith("pdf-"):
            os.remove(os.path.join(a.out, n))
    other = sum(os.path.getsize(os.path.join(a.out, n)) for n in os.listdir(a.out))
    if a.mib > 0:
        budget = int(a.mib * (1 << 20))
    else:
        # the 64 MiB carry: tree + this folder + what else the call names (--reserve-mib)
        budget = int((CARRY_MIB - a.reserve_mib) * (1 << 20)) - tree_bytes() - other
    with open(os.path.join(a.data, "meta.json")) as f:
        shards = json.load(f)["splits"]["pdf"]["shards"]
    cache = os.path.join(a.out + ".work", "crops-cache")
    os.makedirs(cache, exist_ok=True)
    used, chosen, samples = 0, [], 0
    for name in shards:
        files = [pack.compress_file((os.path.join(a.data, name + p), os.path.join(cache, name + p + ".xz")))
                 for p in pack.SHARD_PARTS]
        size = sum(os.path.getsize(p) for p in files)
        if used + size > budget:
            break
        for p in files:
            shutil.copy(p, os.path.join(a.out, os.path.basename(p)))
        used += size
        chosen.append(name)
        samples += pack.shard_samples(a.data, name)
    info = {"shards": chosen, "samples": samples, "bytes": used, "budget_bytes": budget,
            "bytes_per_sample": round(used / samples, 1) if samples else None,
            "source": os.path.abspath(a.data)}
    with open(os.path.join(a.out, "pdf-crops.json"), "w") as f:
        json.dump(info, f, indent=1)
    print("crops: %d shards, %d samples, %.2f MiB of a %.2f MiB budget (%s bytes a sample)"
          % (len(chosen), samples, used / (1 << 20), budget / (1 << 20), info["bytes_per_sample"]))
    return 0 if chosen or not shards else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("probe")
    p.add_argument("--work", required=True)
    p.add_argument("--corpus", default=os.path.join(os.path.dirname(ROOT), "shared", "data", "formulas"))
    p.add_argument("--formulas", type=int, default=1500, help="random corpus formulas besides the token cover")
    p.add_argument("--generated", type=int, default=300)
    p.add_argument("--fonts", default=None)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--jobs", type=int, default=2)
    p = sub.add_parser("assemble")
    p.add_argument("--work", required=True)
    p.add_argument("--kit", required=True)
    p.add_argument("--render-crops", required=True)
    p = sub.add_parser("slice")
    p.add_argument("--data", required=True, help="the dataset the model was trained on (its vocab.json)")
    p.add_argument("--out", required=True)
    p.add_argument("--init", help="check that this model file has the data set's vocabulary")
    p.add_argument("--val-samples", type=int, default=512)
    p = sub.add_parser("crops")
    p.add_argument("--data", required=True, help="a tools/data/pdf_crops.py directory (split pdf)")
    p.add_argument("--out", required=True, help="the kit folder (work/device/render)")
    p.add_argument("--mib", type=float, default=0.0, help="size budget; 0: what the 64 MiB carry leaves")
    p.add_argument("--reserve-mib", type=float, default=1.0,
                   help="with --mib 0: room kept for other carried paths and tree changes")
    a = ap.parse_args(argv)
    return {"probe": cmd_probe, "assemble": cmd_assemble, "slice": cmd_slice, "crops": cmd_crops}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
