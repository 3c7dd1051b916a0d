#!/bin/sh
# bench/engine-gpu: formulate's CUDA backend against PyTorch eager CUDA on the
# same formulate-v1 network (random weights, docs/model.md default size), at
# batch 1, 8, 32 and 128. Needs an NVIDIA GPU, nvcc, and a python3 with a CUDA
# build of torch (PYTHON=...). Prints a table; the last line is
#   speedup_vs_pytorch_cuda_b32: X.XX   (formulate images/s / PyTorch images/s)
#
#   bench/engine-gpu/run.sh [build-dir]            (default: build-gpu)
#
# Environment: CUDA_HOME (/usr/local/cuda), PYTHON (python3), STEPS (64 decode
# steps per image), HEIGHT x WIDTH (64 x 512 input), PRECISION (fp16),
# BATCHES ("1 8 32 128").
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build-gpu}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
python=${PYTHON:-python3}
steps=${STEPS:-64}
height=${HEIGHT:-64}
width=${WIDTH:-512}
precision=${PRECISION:-fp16}
batches=${BATCHES:-1 8 32 128}
PATH="$cuda_home/bin:$PATH"
export PATH

cd "$src"
if [ ! -d "$build" ]; then
  meson setup "$build" -Dcuda=enabled
fi
ninja -C "$build" kernels/libformulate-cuda.so bench/engine-gpu/bench-engine-gpu

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" tools/bench/pytorch_peer_gpu.py make-model "$work/v1.safetensors" >/dev/null
"$python" tools/bench/pytorch_peer_gpu.py make-images "$work/images.f32" 32 "$height" "$width" >/dev/null

# shellcheck disable=SC2086 # word splitting of the batch list is intended
"$python" tools/bench/pytorch_peer_gpu.py run "$work/v1.safetensors" "$work/images.f32" \
  "$height" "$width" "$steps" $batches | tee "$work/torch.txt"
# shellcheck disable=SC2086
FE_CUDA_MODULE="$build/kernels/libformulate-cuda.so" BENCH_MODE=recognize \
  "$build/bench/engine-gpu/bench-engine-gpu" "$work/v1.safetensors" "$work/images.f32" \
  "$height" "$width" "$steps" cuda:0 "$precision" $batches | tee "$work/fe.txt"

rate() { # file batch [prefix] -> images/s
  sed -n "s/^${3:-}batch=$2 images_per_s=\([0-9.]*\).*/\1/p" "$1"
}
echo
echo "formulate-v1 ${height}x${width}, $steps greedy steps per image, $precision"
echo "(serial: fe_state_encode + decode per image; batched: fe_recognize, up to 32 rows a step)"
printf '%-6s %14s %18s %19s %9s\n' batch "pytorch img/s" "formulate serial" "formulate batched" speedup
b32=""
for b in $batches; do
  t=$(rate "$work/torch.txt" "$b")
  f=$(rate "$work/fe.txt" "$b")
  r=$(rate "$work/fe.txt" "$b" "recognize ")
  best=$(awk -v f="$f" -v r="${r:-0}" 'BEGIN { print (r > f ? r : f) }')
  s=$(awk -v f="$best" -v t="$t" 'BEGIN { printf "%.2f", f / t }')
  printf '%-6s %14s %18s %19s %9s\n' "$b" "$t" "$f" "${r:-n/a}" "$s"
  if [ "$b" = 32 ]; then b32=$s; fi
done
echo "speedup_vs_pytorch_cuda_b32: ${b32:-n/a}"
