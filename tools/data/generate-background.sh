#!/bin/sh
# Generate or resume the dataset in the background at low priority:
#   tools/data/generate-background.sh [TARGET_TRAIN_SAMPLES]   (default 250000)
# First val + test + a 50k train chunk (so training can start), then extends
# to the target. Resumable: running it again redoes only missing shards.
# Log: work/data/gen.log. Needs build-data/tools/render-crops (or FM_RENDER_CROPS).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${FM_DATA_OUT:-$repo/work/data}
target=${1:-250000}
mkdir -p "$out"
(
  first=50000
  [ "$target" -lt "$first" ] && first=$target
  nice -n 10 /usr/bin/python3 "$here/build_dataset.py" --out "$out" --jobs 2 \
    --train-samples "$first" &&
  nice -n 10 /usr/bin/python3 "$here/build_dataset.py" --out "$out" --jobs 2 \
    --train-samples "$target"
) >> "$out/gen.log" 2>&1 &
echo "generating in the background (pid $!), log: $out/gen.log"
