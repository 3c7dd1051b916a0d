#!/bin/sh
# Builds the CUDA backend and runs the gpu suite on a machine with an NVIDIA
# GPU (docs/cuda.md). Without a GPU the parity tests skip with "no CUDA device";
# this script then fails, because on a GPU box a skip means something is wrong.
#
#   tests/gpu/run.sh [build-dir]        (default: build-gpu)
#
# Environment: CUDA_HOME (default /usr/local/cuda), JOBS (default: all cores).
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-gpu}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
jobs=${JOBS:-$(nproc)}

PATH="$cuda_home/bin:$PATH"
export PATH

if ! command -v nvcc >/dev/null 2>&1; then
  echo "run.sh: nvcc not found (set CUDA_HOME)" >&2
  exit 1
fi
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv
fi

cd "$src"
if [ -d "$build" ]; then
  meson setup --reconfigure "$build" -Dcuda=enabled
else
  meson setup "$build" -Dcuda=enabled
fi
ninja -C "$build" -j "$jobs" kernels/libformulate-cuda.so tests/gpu/test-cuda-host tests/gpu/test-cuda-ops

# --verbose shows each op's NMSE next to its bound.
meson test -C "$build" --suite gpu --verbose --no-rebuild
# Again with TF32 GEMMs for the f32 weights (the default outside the tests).
FE_TEST_TF32=1 meson test -C "$build" --suite gpu --no-rebuild

log="$build/meson-logs/testlog.txt"
if grep -q "# SKIP no CUDA device" "$log"; then
  echo "run.sh: the GPU tests were skipped:" >&2
  grep -m1 "# SKIP" "$log" >&2
  exit 1
fi
echo "run.sh: all GPU tests ran and passed"
