#!/bin/sh
# Issue 18: formulate-cli against hostile input - each case an exit code and a
# one-line message naming the user's path. Usage: hostile-cli.sh FORMULATE_CLI SRCDIR
set -u
cli=$1
src=$2
bad=$src/tests/bad
fix=$src/tests/fixtures/pdf
model=$src/tests/fixtures/model/tiny.safetensors
img=$src/tests/model/data/formula-96dpi.png
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# The 127-byte password tools/make-hostile-inputs.py encrypted aes256.pdf with.
password=$(printf 'p%.0s' $(seq 100))$(printf '\303\251%.0s' $(seq 13))x
export LC_ALL=C.UTF-8

check() { # check DESCRIPTION CODE PATTERN -- ARGS...: one stderr line matching PATTERN
  desc=$1; code=$2; pattern=$3; shift 4
  "$cli" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -ne "$code" ] || ! grep -q -- "$pattern" "$tmp/err" || [ "$lines" -ne 1 ]; then
    echo "FAIL: $desc: rc $rc (want $code), stderr:"; cat "$tmp/err"; fail=1
  else
    echo "ok: $desc -> $rc: $(cat "$tmp/err")"
  fi
}
ok() { desc=$1; shift; if "$@"; then echo "ok: $desc"; else echo "FAIL: $desc"; fail=1; fi; }

# --- crashes -------------------------------------------------------------------------
for f in stride0-wrap stride0-expand overlap-strides offset-past-storage many-views; do
  pattern="stride 0"
  case $f in
    overlap-strides) pattern="overlapping strides" ;;
    offset-past-storage) pattern="reaches element" ;;
    many-views) pattern="more bytes than the archive holds" ;;
  esac
  check "model $f.pt (recognize)" 4 "$pattern" -- recognize "$img" --model "$bad/$f.pt"
  check "model $f.pt (pdf)" 4 "$pattern" -- pdf "$fix/punct.pdf" -q --model "$bad/$f.pt"
done
# FORMULATE_MODEL is the same path through the loader
FORMULATE_MODEL=$bad/stride0-wrap.pt "$cli" recognize "$img" >/dev/null 2>&1
ok "FORMULATE_MODEL=stride0-wrap.pt exits 4" [ $? -eq 4 ]

# Passwords past 127 bytes are cut as PDF 2.0 does (Poppler 22.12 crashed on them).
long=$(printf 'a%.0s' $(seq 200))
check "AES-256, 200-byte wrong password" 6 "wrong password" -- pdf "$bad/pdf/aes256.pdf" -q --detect-only --password "$long"
check "AES-256, 2000-byte password" 6 "wrong password" -- pdf "$bad/pdf/aes256.pdf" -q --detect-only --password "$(printf 'b%.0s' $(seq 2000))"
"$cli" pdf "$bad/pdf/aes256.pdf" -q --detect-only --password "$password" >"$tmp/aes.json"
ok "AES-256, its 127-byte UTF-8 password opens it" grep -q '"kind"' "$tmp/aes.json"
"$cli" pdf "$bad/pdf/aes256.pdf" -q --detect-only --password "${password}trailing bytes past 127" >"$tmp/aes2.json"
grep -v '_ms"' "$tmp/aes.json" >"$tmp/aes.regions"; grep -v '_ms"' "$tmp/aes2.json" >"$tmp/aes2.regions"
ok "AES-256, the password with bytes past 127 opens it too" cmp -s "$tmp/aes.regions" "$tmp/aes2.regions"
LC_ALL=C "$cli" pdf "$bad/pdf/aes256.pdf" -q --detect-only --password "$password" >/dev/null 2>&1
echo "note: under LC_ALL=C the UTF-8 password gives rc $? (GOption converts from the locale's charset)"

# --- lost or damaged files ------------------------------------------------------------
cp "$fix/punct.pdf" "$tmp/in.pdf"
check "-o the input" 1 "is the input file" -- pdf "$tmp/in.pdf" -q --detect-only -o "$tmp/in.pdf"
ln -s in.pdf "$tmp/link.pdf"
check "-o a symlink to the input" 1 "is the input file" -- pdf "$tmp/in.pdf" -q --detect-only -o "$tmp/link.pdf"
ln "$tmp/in.pdf" "$tmp/hard.pdf"
check "-o a hard link to the input" 1 "is the input file" -- pdf "$tmp/in.pdf" -q --detect-only -o "$tmp/hard.pdf"
ok "the input is intact" cmp -s "$tmp/in.pdf" "$fix/punct.pdf"
echo old >"$tmp/private.json"; chmod 600 "$tmp/private.json"
"$cli" pdf "$tmp/in.pdf" -q --detect-only -o "$tmp/private.json"
ok "a 0600 output stays 0600" [ "$(stat -c %a "$tmp/private.json")" = 600 ]
ok "and holds the export" grep -q '"format"' "$tmp/private.json"
ln -s private.json "$tmp/out-link.json"
"$cli" pdf "$tmp/in.pdf" -q --detect-only --format md -o "$tmp/out-link.json"
ok "a symlinked output stays a symlink" [ -L "$tmp/out-link.json" ]
ok "and its target holds the export" grep -q 'Formulate' "$tmp/private.json"
ln "$tmp/private.json" "$tmp/private-2.json"
"$cli" pdf "$tmp/in.pdf" -q --detect-only -o "$tmp/private.json"
ok "hard links to the output keep sharing it" [ "$(stat -c %i "$tmp/private.json")" = "$(stat -c %i "$tmp/private-2.json")" ]
mkfifo "$tmp/out.fifo"
cat "$tmp/out.fifo" >"$tmp/from-fifo" &
reader=$!
"$cli" pdf "$tmp/in.pdf" -q --detect-only -o "$tmp/out.fifo"
wait $reader
ok "-o a FIFO writes into it" grep -q '"format"' "$tmp/from-fifo"
ok "and leaves it a FIFO" [ -p "$tmp/out.fifo" ]
"$cli" pdf "$tmp/in.pdf" -q --detect-only -o /dev/null
ok "-o /dev/null leaves a character device" [ -c /dev/null ]
"$cli" pdf "$tmp/in.pdf" -q --detect-only -o /dev/stdout >"$tmp/via-stdout.json"
ok "-o /dev/stdout into a redirected file writes it" grep -q '"format"' "$tmp/via-stdout.json"
ok "and leaves no temporary file beside it" [ -z "$(ls "$tmp" | grep '^via-stdout\.json\.')" ]
check "-o a directory" 1 "is a directory" -- pdf "$tmp/in.pdf" -q --detect-only -o "$tmp"
ok "no temporary file left" [ -z "$(ls "$tmp" | grep '\.[A-Za-z0-9]\{6\}$')" ]

# --- hangs and limits -----------------------------------------------------------------
mkfifo "$tmp/in.fifo"
check "a FIFO as the PDF" 3 "not a regular file" -- pdf "$tmp/in.fifo" -q --detect-only
ln -s /dev/zero "$tmp/zero.pdf"
check "a /dev/zero symlink as the PDF" 3 "not a regular file" -- pdf "$tmp/zero.pdf" -q --detect-only
check "a FIFO as the model" 4 "not a regular file" -- recognize "$img" --model "$tmp/in.fifo"
cp "$bad/no-sidecar.pt" "$tmp/fifo-sidecar.pt"; mkfifo "$tmp/fifo-sidecar.json"
check "a FIFO as the .pt sidecar" 4 "sidecar .*fifo-sidecar.json: not a regular file" -- recognize "$img" --model "$tmp/fifo-sidecar.pt"
check "a FIFO as the PNG" 3 "not a regular file" -- recognize "$tmp/in.fifo" --model "$model"
check "a model whose config asks for 65536 x 65536 images" 4 "pixel limit" -- recognize "$img" --model "$bad/huge-input.safetensors"
check "a blank image" 7 "no ink in image" -- recognize "$bad/png/blank.png" --model "$model"

# Lazy decoding in batches of 32: 40 images with a blank one in the middle print
# 40 lines in order, the blank one empty, and exit 7.
set --
for i in $(seq 40); do
  if [ "$i" -eq 33 ]; then set -- "$@" "$bad/png/blank.png"; else set -- "$@" "$img"; fi
done
"$cli" recognize "$@" --model "$model" >"$tmp/many" 2>"$tmp/err"; rc=$?
good=no
[ $rc -eq 7 ] && [ "$(wc -l <"$tmp/many")" -eq 40 ] && [ -z "$(sed -n 33p "$tmp/many")" ] && \
  [ "$(sort -u "$tmp/many" | grep -c .)" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && good=yes
ok "40 images across two batches, blank 33rd: 40 lines, rc $rc" [ $good = yes ]

# --- exit codes and messages ----------------------------------------------------------
check "pdf --device foo" 2 "unknown device 'foo'" -- pdf "$fix/punct.pdf" -q --device foo
check "pdf --device foo --detect-only" 2 "unknown device 'foo'" -- pdf "$fix/punct.pdf" -q --detect-only --device foo
if [ -w /dev/full ]; then
  for args in "--version" "--help" "--list-devices"; do
    "$cli" $args >/dev/full 2>"$tmp/err"; rc=$?
    good=no; [ $rc -eq 1 ] && grep -q "cannot write to standard output" "$tmp/err" && good=yes
    ok "$args to /dev/full exits 1 and says so" [ $good = yes ]
  done
  "$cli" recognize "$img" --model "$model" >/dev/full 2>"$tmp/err"; rc=$?
  good=no; [ $rc -eq 1 ] && grep -q "cannot write to standard output" "$tmp/err" && good=yes
  ok "recognize to /dev/full exits 1 and says so" [ $good = yes ]
  check "pdf -o /dev/full" 1 "/dev/full: cannot write: No space left" -- pdf "$fix/punct.pdf" -q --detect-only -o /dev/full
fi
"$cli" pdf "$bad/pdf/broken-fonts.pdf" -q --detect-only >"$tmp/fonts.json" 2>"$tmp/err"; rc=$?
good=no
[ $rc -eq 0 ] && [ "$(grep -vc '^formulate-cli: poppler: ' "$tmp/err")" -eq 0 ] && \
  [ "$(grep -c 'some font thing failed' "$tmp/err")" -eq 2 ] && grep -q "more times" "$tmp/err" && good=yes
ok "Poppler's own stderr lines carry our prefix, repeats counted (rc $rc)" [ $good = yes ]
check "a directory as the PNG" 3 "is a directory" -- recognize "$bad/png" --model "$model"
cp "$fix/punct.pdf" "$tmp/$(printf 'caf\351.pdf')"
"$cli" pdf "$tmp/$(printf 'caf\351.pdf')" -q --detect-only >"$tmp/latin1.json"
ok "JSON with a non-UTF-8 file name is valid UTF-8" /usr/bin/python3 -c \
  'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$tmp/latin1.json"
cp "$img" "$tmp/$(printf 'caf\351.png')"
"$cli" recognize "$tmp/$(printf 'caf\351.png')" --model "$model" --json >"$tmp/latin1-rec.json"
ok "recognize --json with a non-UTF-8 file name is valid UTF-8" /usr/bin/python3 -c \
  'import json,sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$tmp/latin1-rec.json"

exit $fail
