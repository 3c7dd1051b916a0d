#!/usr/bin/env bash
# The shipped model's smoke test: the committed test-split renders in this folder
# (tools/eval/make-smoke-set.py picked them) must come out exactly as expected.json says,
# through the real formulate-cli on the CPU.
set -euo pipefail
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
model=$root/data/models/formulate-v1.safetensors
[ -f "$model" ] || { echo "no shipped model at $model"; exit 1; }
mapfile -t names < <(/usr/bin/python3 -c 'import json,sys; [print(k) for k in json.load(open(sys.argv[1]))["formulas"]]' "$here/expected.json")
[ ${#names[@]} -ge 3 ] || { echo "smoke set too small"; exit 1; }
fail=0
for n in "${names[@]}"; do
  want=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["formulas"][sys.argv[2]])' "$here/expected.json" "$n")
  got=$("$cli" recognize "$here/$n" --model "$model" --device cpu --em-px 20)
  if [ "$got" = "$want" ]; then
    echo "ok   $n: $got"
  else
    echo "FAIL $n"; echo "  want: $want"; echo "  got:  $got"; fail=1
  fi
done
exit $fail
