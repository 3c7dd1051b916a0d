#!/bin/bash
# Here (Debian 12, with the TeX packages of tools/data/README.md): the folder that lets a
# lent GPU machine (no TeX, no Poppler, no network) render fresh training data itself
# (issue 13; docs/model.md "Rendering on the device"):
#
#   tools/train/device/make-render-kit.sh [--data work/data] [--build build] [--out work/device/render]
#                                         [--probe-formulas 1200] [--reuse-probe]
#                                         [--pdf-crops work/data-pdf [--pdf-crops-mib M]]
#
# writes OUT (ignored by git; name it in the run call's carry):
#   render-kit.tar.xz  pdflatex/pdftex + kpsewhich (Debian texlive-binaries), the TeX files
#                      the 14 training font set-ups and the corpus open (pdflatex -recorder
#                      over a probe set: render_kit.py probe), pdflatex.fmt, pdftex.map, a
#                      texmf.cnf naming only the kit, render-crops, and the ldd closure of
#                      the three binaries except glibc's libraries; bin/ wrappers, env.sh
#   corpus.tar.xz      what build_dataset.py reads of ../shared/data/formulas
#   vocab.json, meta.json, val-00000.*.xz   the data set's vocabulary and a 512-sample val cut
#   pdf-*.xz, pdf-crops.json  with --pdf-crops: whole shards of tools/data/pdf_crops.py's PDF
#                      crops (no TeX there: made here), as many as M MiB hold (default: what
#                      the 64 MiB carry leaves beside the tree and the rest of OUT, less 1 MiB)
# and prints the sizes. tools/train/device/step.py --render-min R [--pdf-share F] uses it on the device.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
data=work/data; build=build; out=work/device/render; formulas=1200; reuse=0; crops=; crops_mib=0
corpus=$(dirname "$root")/shared/data/formulas
while [ $# -gt 0 ]; do
  case $1 in
    --data) data=$2; shift ;;
    --build) build=$2; shift ;;
    --out) out=$2; shift ;;
    --corpus) corpus=$2; shift ;;
    --probe-formulas) formulas=$2; shift ;;
    --reuse-probe) reuse=1 ;;
    --pdf-crops) crops=$2; shift ;;
    --pdf-crops-mib) crops_mib=$2; shift ;;
    *) echo "make-render-kit.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
py=/usr/bin/python3
work=$out.work
mkdir -p "$out" "$work"
[ -d "$build" ] || meson setup "$build" -Dbuildtype=debugoptimized -Dcuda=disabled -Dgui=disabled
nice -n 5 ninja -C "$build" -j2 tools/render-crops
if ldd "$build/tools/render-crops" | grep -q 'libasan\|libubsan'; then
  echo "make-render-kit.sh: $build/tools/render-crops is a sanitizer build; use a plain build dir (--build)" >&2
  exit 1
fi
if [ "$reuse" = 0 ] || [ ! -s "$work/probe/fls.txt" ]; then
  rm -rf "$work/probe"
  $py tools/train/device/render_kit.py probe --work "$work/probe" --corpus "$corpus" --formulas "$formulas"
fi
$py tools/train/device/render_kit.py assemble --work "$work/probe" --kit "$work/fmkit" \
  --render-crops "$build/tools/render-crops"
# xz -6: -9 saves little on the libraries and the format file
tar -C "$work" --owner=0 --group=0 -cf - fmkit | xz -6 -T2 > "$out/render-kit.tar.xz.part"
mv "$out/render-kit.tar.xz.part" "$out/render-kit.tar.xz"
cp "$work/fmkit/kit.json" "$out/render-kit.json"
(cd "$(dirname "$corpus")" && tar --owner=0 --group=0 -cf - \
   "$(basename "$corpus")"/im2latex100k/*.txt "$(basename "$corpus")"/texsrc/*.txt) | xz -6 -T2 > "$out/corpus.tar.xz"
$py tools/train/device/render_kit.py slice --data "$data" --out "$out" --init data/models/formulate-v1.safetensors
if [ -n "$crops" ]; then
  $py tools/train/device/render_kit.py crops --data "$crops" --out "$out" --mib "$crops_mib"
fi
du -b "$out"/* | sort -n
du -sh "$out"
