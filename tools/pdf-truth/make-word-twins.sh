#!/bin/bash
# tools/pdf-truth/make-word-twins.sh OUT FIRST LAST COUNT KIND... - training data for the
# scanned pages' word classifier (app/document/fm-scan-words*.h, docs/scanned.md
# "Training the word classifier"): for every make-truth seed S from FIRST to LAST, COUNT
# truth PDFs (the font set-up, engine and formula source by S mod 10, the front matter on
# every third seed), their scanned twins of each KIND (binary300, light300, binary150,
# mixed300, mixed150: scan-truth.py --degrade binary, --degrade binary --light or the
# default mix, at 300 or 150 dpi; scan seed S*10 + k, a k of its own per kind) and the
# twins' word features (train-scan-words.py dump). Writes OUT/truth/S, OUT/twins/KIND/S and
# OUT/feat/KIND (one folder per kind: the twins of a seed share their names across
# kinds). Seeds already made are kept. FORMULATE_CLI: the binary that dumps (default
# build/app/formulate-cli; the dump runs the rules alone, so any build with the same
# inputs serves). Use training seeds only (docs/scanned.md lists those scored).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 5 ] || { sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 2; }
out=$1; first=$2; last=$3; count=$4; shift 4
cli=${FORMULATE_CLI:-$root/build/app/formulate-cli}
py=/usr/bin/python3
ot=lm-math,termes-math,pagella-math,stix2-math,dejavu-math,xits-math,libertinus-math,fira-math,bonum-math
pf=txfonts,pxfonts,newtx,libertine,stix2,fourier,kpfonts,charter,euler
mkdir -p "$out/truth" "$out/twins" "$out/feat"
for s in $(seq "$first" "$last"); do
  case $((s % 10)) in
    0|6) opts="";;
    1) opts="--fonts $pf";;
    2) opts="--engine xelatex --fonts $ot";;
    4) opts="--engine lualatex --fonts $ot";;
    3) opts="--formulas corpus";;
    5) opts="--formulas corpus --fonts $pf";;
    7) opts="--formulas corpus --engine xelatex --fonts $ot";;
    9) opts="--formulas corpus --engine lualatex --fonts $ot";;
    8) opts="--formulas classes";;
  esac
  [ $((s % 3)) = 0 ] && opts="$opts --front-matter"
  truth=$out/truth/$s
  if [ ! -d "$truth" ]; then
    # shellcheck disable=SC2086
    $py "$root/tools/pdf-truth/make-truth.py" --out "$truth" --count "$count" --seed "$s" --prefix "t$s" \
      --first $(((s - 4000) / 10 * count)) $opts > "$out/truth/$s.log" 2>&1 || echo "make-truth seed $s failed (log: $out/truth/$s.log)" >&2
  fi
  for kind in "$@"; do
    dpi=${kind##*[a-z]}
    case ${kind%"$dpi"} in
      binary) degrade="--degrade binary"; k=0;;
      light) degrade="--degrade binary --light"; k=2;;
      mixed) degrade=""; k=4;;
      *) echo "unknown kind $kind" >&2; exit 2;;
    esac
    [ "$dpi" = 150 ] && k=$((k + 1))
    twins=$out/twins/$kind/$s
    if [ ! -d "$twins" ]; then
      # shellcheck disable=SC2086
      $py "$root/tools/pdf-truth/scan-truth.py" --in "$truth" --out "$twins" --dpi "$dpi" --seed $((s * 10 + k)) $degrade > /dev/null
    fi
    $py "$root/tools/pdf-truth/train-scan-words.py" dump --cli "$cli" --twins "$twins" --out "$out/feat/$kind" > /dev/null
  done
  echo "seed $s: $(date +%T)"
done
