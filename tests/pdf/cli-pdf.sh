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
expect 3 "no text layer" "$bad/no-text.pdf"
expect 3 "no text layer" "$bad/unrenderable.pdf"
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
exit $fail
