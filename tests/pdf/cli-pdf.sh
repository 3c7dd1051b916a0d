#!/bin/sh
# formulate-cli pdf: exit codes and one-line errors for the bad-input corpus,
# and the three output formats on a fixture. Usage: cli-pdf.sh FORMULATE_CLI SRCDIR
set -u
cli=$1
src=$2
bad=$src/tests/bad/pdf
fix=$src/tests/fixtures/pdf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

expect() { # expect CODE PATTERN ARGS...
  code=$1; pattern=$2; shift 2
  "$cli" pdf "$@" --detect-only -q >"$tmp/out" 2>"$tmp/err"
  rc=$?
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -ne "$code" ] || ! grep -q -- "$pattern" "$tmp/err" || [ "$lines" -ne 1 ]; then
    echo "FAIL: pdf $* -> rc $rc (want $code), stderr:"; cat "$tmp/err"; fail=1
  else
    echo "ok: pdf $* -> $rc: $(cat "$tmp/err")"
  fi
}

expect 3 "not a PDF file" "$bad/not-a-pdf.pdf"
expect 3 "empty file" "$bad/empty.pdf"
expect 3 "damaged or truncated" "$bad/truncated.pdf"
expect 3 "has no pages" "$bad/zero-pages.pdf"
# A scan one pixel wide (1 x 3300 px at 300 dpi: 0.24 x 792 pt).
expect 3 "unusable size" "$fix/scan/one-pixel-wide.pdf"
# Pages without a text layer are read from their pixels (app/document/fm-scan.c): a
# drawing alone has no formula, a page with nothing on it is blank; the
# JSON says which pages were analysed how.
expect_analysis() { # expect_analysis ANALYSIS FILE
  "$cli" pdf "$2" --detect-only -q -o "$tmp/an.json" 2>"$tmp/err"; rc=$?
  if [ $rc -ne 0 ] || ! grep -q "\"analysis\" : \"$1\"" "$tmp/an.json"; then
    echo "FAIL: pdf $2 -> rc $rc, want analysis $1:"; cat "$tmp/err"; grep analysis "$tmp/an.json"; fail=1
  else
    echo "ok: pdf $2 -> analysis $1"
  fi
}
expect_analysis blank "$bad/unrenderable.pdf"
expect_analysis blank "$fix/scan/blank-scan.pdf"
expect_analysis "text layer" "$fix/truth-1-00.pdf"
# A 20000 x 20000 px scan (400 M pixels once decoded; 49 KB on disk, made by
# tests/fixtures/pdf/scan/make-huge-scan.py) is refused before Poppler decodes
# it: a page note, and page 2 (a small blank image) is still read.
"$cli" pdf "$fix/scan/huge-scan.pdf" --detect-only -q -o "$tmp/huge.json" 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && grep -q '"note" : ".*page 1: page image too large: 20000 x 20000 pixels' "$tmp/huge.json" &&
   grep -q '"analysis" : "blank"' "$tmp/huge.json" && grep -q "page image too large" "$tmp/err"; then
  echo "ok: huge scan -> page note, other page read"
else
  echo "FAIL: huge scan -> rc $rc:"; cat "$tmp/err"; grep -E '"(note|analysis)"' "$tmp/huge.json"; fail=1
fi
expect 3 "page 1: page image too large: 20000 x 20000 pixels" "$fix/scan/huge-scan.pdf" --pages 1
# Pages are detected on worker threads (FM_DETECT_THREADS): the output is the
# same, page for page (a refused page first, two blank ones), as on one.
FM_DETECT_THREADS=1 "$cli" pdf "$fix/scan/huge-scan.pdf" --detect-only -q -o "$tmp/t1.json" 2>/dev/null
FM_DETECT_THREADS=3 "$cli" pdf "$fix/scan/huge-scan.pdf" --detect-only -q -o "$tmp/t3.json" 2>/dev/null
grep -v '_ms"' "$tmp/t1.json" > "$tmp/t1.txt"; grep -v '_ms"' "$tmp/t3.json" > "$tmp/t3.txt"
if cmp -s "$tmp/t1.txt" "$tmp/t3.txt" && [ "$(grep -c '"analysis" : "blank"' "$tmp/t3.json")" = 2 ]; then
  echo "ok: pages on 3 threads -> the same output as on 1"
else
  echo "FAIL: pages on 3 threads differ from 1:"; diff "$tmp/t1.txt" "$tmp/t3.txt"; fail=1
fi
if "$cli" pdf "$fix/scan/truth-1-00-scan300.pdf" --detect-only -q -o "$tmp/scan.json" 2>"$tmp/err"; then
  expect_analysis pixels "$bad/no-text.pdf"
  expect_analysis pixels "$fix/scan/truth-1-00-scan300.pdf"
  grep -q '"display"' "$tmp/scan.json" || { echo "FAIL: scanned twin: no display found"; fail=1; }
  # An image-only PDF end to end: detected from pixels, every formula read
  # by the shipped model from the page's render (docs/scanned.md). One run:
  # 11 formulas through the model is the slowest step of this script.
  v1=$src/data/models/formulate-v1.safetensors
  if [ -f "$v1" ]; then
    if "$cli" pdf "$fix/scan/truth-1-00-scan300.pdf" --model "$v1" --device cpu -q -o "$tmp/scanrec.json" 2>"$tmp/err" &&
       grep -q '"analysis" : "pixels"' "$tmp/scanrec.json" && grep -q '"recognized" : true' "$tmp/scanrec.json" &&
       grep -q '"provenance" : "image"' "$tmp/scanrec.json" && grep -q '"latex" : ".*\\\\\(int\|sum\|frac\)' "$tmp/scanrec.json"; then
      echo "ok: image-only PDF detected and recognised with formulate-v1"
    else
      echo "FAIL: image-only PDF end to end:"; cat "$tmp/err"; grep -E '"(analysis|recognized|latex)"' "$tmp/scanrec.json"; fail=1
    fi
  else
    echo "skip: no data/models/formulate-v1.safetensors, image-only PDF not recognised"
  fi
else
  # A build without Tesseract says so for a page with ink.
  expect 3 "without Tesseract" "$bad/no-text.pdf"
fi
expect 6 "needs a password" "$bad/encrypted.pdf"
expect 6 "wrong password" "$bad/encrypted.pdf" --password wrong
expect 3 "is a directory" "$bad"
expect 3 "No such file" "$bad/does-not-exist.pdf"
expect 2 "outside 1-1" "$fix/truth-1-00.pdf" --pages 2-3
expect 2 "bad page selection" "$fix/truth-1-00.pdf" --pages x
expect 2 "unknown format" "$fix/truth-1-00.pdf" --format doc
if [ "$(id -u)" -ne 0 ]; then
  cp "$fix/truth-1-00.pdf" "$tmp/locked.pdf"; chmod 000 "$tmp/locked.pdf"
  expect 3 "ermission denied" "$tmp/locked.pdf"
fi

# Legal but enormous: must work within the render cap.
"$cli" pdf "$bad/huge-page.pdf" --detect-only -q >/dev/null || { echo "FAIL: huge page"; fail=1; }
"$cli" pdf "$bad/absurd-size.pdf" --detect-only -q >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "FAIL: absurd size rc $rc"; fail=1; }
"$cli" pdf "$bad/encrypted.pdf" --password secret --detect-only -q -o "$tmp/enc.json" || { echo "FAIL: right password"; fail=1; }
grep -q '"display"' "$tmp/enc.json" || { echo "FAIL: right password found nothing"; fail=1; }

# Outputs: atomic file, three formats.
for f in json tex md; do
  "$cli" pdf "$fix/truth-1-01.pdf" --detect-only -q --format $f -o "$tmp/out.$f" || { echo "FAIL: format $f"; fail=1; }
done
grep -q '"kind" : "inline"' "$tmp/out.json" || { echo "FAIL: json has no inline region"; fail=1; }
grep -q '\\begin{document}' "$tmp/out.tex" && grep -q '\\end{document}' "$tmp/out.tex" || { echo "FAIL: tex"; fail=1; }
grep -q '\$\$' "$tmp/out.md" && grep -q ' \$[^$]' "$tmp/out.md" || { echo "FAIL: md has no formulas"; fail=1; }
ls "$tmp" | grep -q '^out\.json\.' && { echo "FAIL: temporary file left behind"; fail=1; }

# Markdown layout (docs/cli.md): tests/pdf/data/md-layout.pdf has two columns, a
# running head, page numbers, a hyphenated line end, numbered displays (3.1)
# whose radical sign, "det" and limits Poppler boxes outside the region, and
# text with Markdown's special characters. --detect-only writes each formula's
# text layer between the dollars, so this does not depend on a model.
md=$tmp/layout.md
"$cli" pdf "$src/tests/pdf/data/md-layout.pdf" --detect-only -q --format md -o "$md" || { echo "FAIL: md layout run"; fail=1; }
mdcheck() { # mdcheck DESCRIPTION COMMAND...: the command must succeed
  desc=$1; shift
  if "$@" >/dev/null 2>&1; then echo "ok: md: $desc"; else echo "FAIL: md: $desc"; fail=1; fi
}
mdnot() { desc=$1; shift; if "$@" >/dev/null 2>&1; then echo "FAIL: md: $desc"; fail=1; else echo "ok: md: $desc"; fi; }
# Text outside the formulas, for the checks below: $$..$$ lines and $..$ spans removed.
sed -e '/^\$\$.*\$\$$/d' -e 's/\\\$//g' -e 's/\$[^$]*\$/ MATH /g' "$md" >"$tmp/prose"
mdnot "no stray formula pieces (a line of only math glyphs)" \
  grep -xE '[[:space:]]*([√∞XΣ∑=+−()0-9n]|det|lim|n→∞|n=0|[0-9]+)([[:space:]]*([√∞XΣ∑=+−()0-9n]|det|lim))*[[:space:]]*' "$tmp/prose"
mdcheck "det and the radical sign inside their displays" grep -E '^\$\$.*√.*\\tag\{3\.1\}\$\$$' "$md"
mdcheck "det inside its display" grep -E '^\$\$.*det.*\$\$$' "$md"
mdcheck "limits inside their display" grep -E '^\$\$.*n=0.*\\tag\{3\.2\}\$\$$' "$md"
mdcheck "equation numbers become tag{}" grep -F '\tag{3.3}$$' "$md"
mdnot "no equation number left as text" grep -F '(3.' "$tmp/prose"
mdcheck "hyphenated line end joined" grep -F 'the quadratic equation below' "$md"
mdnot "no hyphen left at a joined line end" grep -E 'equa- ?tion|col- ?umn' "$md"
mdcheck "paragraphs end at blank lines" sh -c "awk 'p==1 && /^\$/ {p=2; next} p==2 {exit !/^A quadratic has/} /first paragraph of the left column\.\$/ {p=1; next} p==1 {exit 1} END {exit p!=2}' '$md'"
mdcheck "left column before right column" sh -c "awk '/LEFTEND/{l=NR} /RIGHTSTART/{r=NR} /RIGHTEND/{e=NR} /Second page/{s=NR} END{exit !(l && l<r && r<=e && e<s)}' '$md'"
mdnot "columns not mixed line by line" grep -E 'LEFTEND.*(RIGHT|Euler)|energy.*five constants' "$md"
mdnot "no running head" grep -F 'Running head' "$md"
mdnot "no page number lines" grep -xE '[0-9]+' "$md"
mdcheck "\$ in text escaped" grep -F 'The price is \$5 per copy' "$md"
mdcheck "* in text escaped" grep -F 'the stars are \*, all' "$md"
mdcheck "# at a paragraph start escaped" grep -E '^\\# is a hash sign' "$md"
mdnot "no space before punctuation after a formula" grep -E '\$ [,.;:!?]' "$md"
# A formula glued to a word (word$x$ or $x$word): walk the dollars of each line.
sed -e '/^\$\$/d' -e 's/\\\$//g' "$md" | awk '{
  n = split($0, c, ""); m = 0
  for (i = 1; i <= n; i++) if (c[i] == "$") {
    if (!m && i > 1 && c[i-1] ~ /[[:alnum:]]/) print
    if (m && i < n && c[i+1] ~ /[[:alnum:]]/) print
    m = !m
  } }' >"$tmp/glued"
mdnot "no formula glued to a word (word\$x\$, \$x\$word)" test -s "$tmp/glued"
mdcheck "an inline formula TeX broke across lines is one" grep -F 'at rest is $E = mc2$, and' "$md"
mdcheck "a heading per section" grep -xF '## 2 Second page' "$md"
# The committed detection fixtures: no line of the text layer's formula pieces
# left outside the formulas (a single symbol, a number, a limit).
for f in "$fix"/truth-1-0[0-4].pdf; do
  "$cli" pdf "$f" --detect-only -q --format md -o "$tmp/t.md" || { echo "FAIL: md $f"; fail=1; continue; }
  sed -e '/^\$\$.*\$\$$/d' -e '/^#/d' -e '/^---$/d' -e '/^$/d' "$tmp/t.md" | awk 'length($0) < 12' >"$tmp/short"
  if [ -s "$tmp/short" ]; then echo "FAIL: md $(basename "$f"): stray short lines:"; cat "$tmp/short"; fail=1; fi
done
# The tex export compiles whatever the recogniser writes: the fixture model's
# random weights write nonsense LaTeX, and the shipped model when present.
if command -v pdflatex >/dev/null 2>&1; then
  for model in "$src/tests/fixtures/model/tiny.safetensors" "$src/data/models/formulate-v1.safetensors"; do
    [ -f "$model" ] || continue
    for f in "$src/tests/pdf/data/md-layout.pdf" "$fix/truth-1-01.pdf" "$fix/truth-1-04.pdf"; do
      "$cli" pdf "$f" --model "$model" --device cpu -q --format tex -o "$tmp/c.tex" || { echo "FAIL: tex $f"; fail=1; continue; }
      if (cd "$tmp" && pdflatex -interaction=nonstopmode -halt-on-error -no-shell-escape c.tex >/dev/null 2>&1); then
        echo "ok: tex of $(basename "$f") with $(basename "$model") compiles"
      else
        echo "FAIL: tex of $f with $model does not compile:"; grep -A3 '^!' "$tmp/c.log"; fail=1
      fi
    done
  done
else
  echo "skip: no pdflatex, tex not compiled"
fi
# By default the image model reads every formula and the text layer checks it
# (docs/text-layer.md); --image-only leaves the text layer out, --text-layer
# asks it first.
tiny=$src/tests/fixtures/model/tiny.safetensors
"$cli" pdf "$fix/truth-1-01.pdf" -q --pages 1 --device cpu --model "$tiny" -o "$tmp/both.json" || { echo "FAIL: default recognition"; fail=1; }
grep -q '"text_reader" *: *true' "$tmp/both.json" && grep -q '"provenance" *: *"text layer' "$tmp/both.json" \
  && echo "ok: the text layer checks the image model by default" || { echo "FAIL: the default did not ask the text layer"; fail=1; }
"$cli" pdf "$fix/truth-1-01.pdf" -q --pages 1 --device cpu --model "$tiny" --image-only -o "$tmp/img.json" || { echo "FAIL: --image-only run"; fail=1; }
grep -q '"text_reader" *: *false' "$tmp/img.json" && ! grep -q '"provenance" *: *"text layer' "$tmp/img.json" \
  && echo "ok: --image-only leaves the text layer out" || { echo "FAIL: --image-only asked the text layer"; fail=1; }
"$cli" pdf "$fix/truth-1-01.pdf" -q --pages 1 --device cpu --model "$tiny" --text-layer -o "$tmp/txt.json" || { echo "FAIL: --text-layer run"; fail=1; }
grep -q '"text_reader" *: *true' "$tmp/txt.json" && grep -q '"provenance" *: *"text layer"' "$tmp/txt.json" \
  && echo "ok: --text-layer reads the text layer" || { echo "FAIL: --text-layer"; fail=1; }
"$cli" pdf "$fix/truth-1-01.pdf" -q --text-layer --image-only >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] && echo "ok: --text-layer with --image-only is a usage error" || { echo "FAIL: --text-layer --image-only exit $rc"; fail=1; }
"$cli" pdf "$fix/truth-1-01.pdf" -q --combined --image-only >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] && echo "ok: --combined with --image-only is a usage error" || { echo "FAIL: --combined --image-only exit $rc"; fail=1; }
# The model loads while the first pages are detected: one that cannot be
# loaded still stops the run before anything is recognised or written (exit
# 4, its one line on stderr), with the pages' detection already under way.
printf 'not a model' > "$tmp/broken.safetensors"
rm -f "$tmp/broken.json"
"$cli" pdf "$fix/truth-1-01.pdf" -q --device cpu --model "$tmp/broken.safetensors" -o "$tmp/broken.json" 2>"$tmp/err"; rc=$?
if [ "$rc" = 4 ] && [ ! -e "$tmp/broken.json" ] && [ "$(wc -l < "$tmp/err")" = 1 ] && grep -q broken.safetensors "$tmp/err"; then
  echo "ok: a model that cannot be loaded: exit 4, one line, nothing written"
else
  echo "FAIL: broken model: exit $rc, $(wc -l < "$tmp/err") lines on stderr, output $( [ -e "$tmp/broken.json" ] && echo written || echo absent)"; cat "$tmp/err"; fail=1
fi
exit $fail
