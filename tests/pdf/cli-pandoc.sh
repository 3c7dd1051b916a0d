#!/bin/sh
# formulate-cli pdf --format docx|html (issue 16): through pandoc when it is
# on PATH; without it a one-line usage error (exit 2). Usage: cli-pandoc.sh
# FORMULATE_CLI SRCDIR
set -u
cli=$1
src=$2
pdf=$src/tests/pdf/data/md-layout.pdf
tiny=$src/tests/fixtures/model/tiny.safetensors
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# Without pandoc (a PATH where it cannot be): refused before any work.
for f in docx html; do
  env PATH=/nonexistent "$cli" pdf "$pdf" --detect-only -q --format $f -o "$tmp/none.$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" = 2 ] && grep -q "needs pandoc" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -e "$tmp/none.$f" ]; then
    ok "no pandoc: --format $f -> 2: $(cat "$tmp/err")"
  else
    bad "no pandoc: --format $f -> rc $rc, stderr:"; cat "$tmp/err"
  fi
done

# A pandoc that exits before reading its input: more Markdown than a pipe
# holds (64 KiB) must give its exit status, not a silent death by SIGPIPE
# (exit 141, which the CLI had).
if command -v pdfunite >/dev/null 2>&1; then
  mkdir "$tmp/fake"
  printf '#!/bin/sh\necho "fake pandoc refuses" >&2\nexit 3\n' >"$tmp/fake/pandoc"
  chmod +x "$tmp/fake/pandoc"
  set --
  for i in $(seq 40); do set -- "$@" "$pdf"; done
  pdfunite "$@" "$tmp/long.pdf"
  "$cli" pdf "$tmp/long.pdf" --detect-only -q --format md -o "$tmp/long.md"
  size=$(wc -c <"$tmp/long.md")
  env PATH="$tmp/fake:$PATH" "$cli" pdf "$tmp/long.pdf" --detect-only -q --format html -o "$tmp/long.html" 2>"$tmp/err"
  rc=$?
  if [ "$size" -gt 65536 ] && [ "$rc" = 1 ] && grep -q "pandoc failed (exit 3)" "$tmp/err" && [ ! -e "$tmp/long.html" ]; then
    ok "pandoc exiting early on $size bytes of Markdown -> 1: $(cat "$tmp/err")"
  else
    bad "pandoc exiting early on $size bytes of Markdown -> rc $rc, stderr:"; cat "$tmp/err"
  fi
else
  echo "skip: pdfunite (poppler-utils) missing: the early-exiting pandoc case is not checked"
fi

if ! command -v pandoc >/dev/null 2>&1; then
  echo "skip: pandoc is not installed (apt install pandoc): docx and html output not checked"
  exit $fail
fi

# document.xml of a .docx (a zip): unzip when present, else Python's zipfile.
docx_xml() {
  if command -v unzip >/dev/null 2>&1; then unzip -p "$1" word/document.xml
  else python3 -c 'import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read("word/document.xml").decode())' "$1"
  fi
}
# Formulas in our Markdown: $$…$$ and $…$ (an escaped \$ is text).
md_formulas() {
  sed 's/\\\$//g' "$1" | grep -o '\$\$[^$]*\$\$\|\$[^$][^$]*\$' | wc -l
}

"$cli" pdf "$pdf" --detect-only -q --format md -o "$tmp/l.md" || bad "md run"
n=$(md_formulas "$tmp/l.md")
[ "$n" -ge 10 ] || bad "md-layout has only $n formulas"

"$cli" pdf "$pdf" --detect-only -q --format docx -o "$tmp/l.docx" 2>"$tmp/err" || { bad "docx run"; cat "$tmp/err"; }
docx_xml "$tmp/l.docx" >"$tmp/doc.xml" || bad "docx is not a zip with word/document.xml"
m=$(grep -o '<m:oMath>' "$tmp/doc.xml" | wc -l)
[ "$m" = "$n" ] && ok "docx: $m native equations (<m:oMath>), one per formula" || bad "docx: $m <m:oMath> for $n formulas"
grep -q 'the quadratic equation below' "$tmp/doc.xml" && ok "docx: the text is there" || bad "docx: text missing"
grep -o '<m:t>[^<]*</m:t>' "$tmp/doc.xml" | grep -q '3\.1' \
  && ok "docx: equation number 3.1 kept" || bad "docx: equation number 3.1 lost"
# Standard output is a pipe here: docx may go there.
"$cli" pdf "$pdf" --detect-only -q --format docx >"$tmp/pipe.docx" && docx_xml "$tmp/pipe.docx" | grep -q '<m:oMath' \
  && ok "docx to a pipe" || bad "docx to a pipe"

"$cli" pdf "$pdf" --detect-only -q --format html -o "$tmp/l.html" 2>"$tmp/err" || { bad "html run"; cat "$tmp/err"; }
m=$(grep -o '<math' "$tmp/l.html" | wc -l)
[ "$m" = "$n" ] && ok "html: $m MathML <math>, one per formula" || bad "html: $m <math> for $n formulas"
grep -q '<title>Markdown layout fixture</title>' "$tmp/l.html" && ok "html: the PDF's title" || bad "html: no title"

# Formulas pandoc cannot parse (the fixture model's random LaTeX): each stays
# as its TeX with one warning, the others still become MathML. Image only: with
# the text layer a reading that is no formula gives way to the glyphs' reading
# (fm-reading-shape.c), and the fixture's formulas all parse.
"$cli" pdf "$pdf" -q --device cpu --model "$tiny" --image-only --format md -o "$tmp/r.md" || bad "recognised md run"
"$cli" pdf "$pdf" -q --device cpu --model "$tiny" --image-only --format html -o "$tmp/r.html" 2>"$tmp/err"
rc=$?
n=$(md_formulas "$tmp/r.md")
m=$(grep -o '<math' "$tmp/r.html" | wc -l)
w=$(grep -c 'formulate-cli: pandoc: \[WARNING\] Could not convert TeX math' "$tmp/err")
if [ "$rc" = 0 ] && [ "$w" -ge 1 ] && [ $((m + w)) = "$n" ]; then
  ok "unparseable formulas kept: $m MathML + $w as TeX = $n formulas"
else
  bad "unparseable formulas: rc $rc, $m MathML + $w warnings for $n formulas"; cat "$tmp/err"
fi
exit $fail
