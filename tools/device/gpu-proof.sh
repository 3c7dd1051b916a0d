#!/bin/bash
# On a lent GPU machine (docs/cuda.md "Running the GPU proof"): build the CUDA
# backend, run the gpu test suite (tests/gpu/run.sh) and, with --bench, the
# formulate-vs-PyTorch CUDA benchmark (bench/engine-gpu/run.sh).
#
# That machine (workplace image 'cuda', Ubuntu, torch 2.x, nvcc 13) may lack
# GLib's headers, pkg-config and gettext; tools/device/fetch-debs.sh (run here,
# on Debian 12) downloads the few Debian packages into .devdeps/, which the
# `run` call carries. They are unpacked under /tmp/devdeps, never over /.
#
#   bash tools/device/gpu-proof.sh [--build-only] [--bench] [--no-tests] [--compare DATA]
#
# --build-only compiles build-gpu and stops (run it beside a training call: the
# tests then run after training, since gpu-ops checks that device memory
# returns after unloading and another process's allocations would disturb it).
# --compare DATA recognises DATA's test split on the CPU and on cuda:0 with the
# shipped model (tools/eval/device_compare.py: token-identical count, exact
# match of each, VRAM before load / after load / after unloading, speeds) into
# $OUT/device-compare.json; DATA is made here by copying a dataset's vocab.json,
# meta.json and test-00000.{idx.npy,tok} and xz-compressing its .img.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
cd "$src"
bench=0; tests=1; build_only=0; compare=
while [ $# -gt 0 ]; do
  case $1 in
    --bench) bench=1 ;;
    --no-tests) tests=0 ;;
    --build-only) build_only=1 ;;
    --compare) compare=$2; shift ;;
    *) echo "gpu-proof.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

export PATH=/usr/local/cuda/bin:$PATH
echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv 2>&1
nvcc --version | tail -2; cc --version | head -1; meson --version; ninja --version

need_debs=0
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists glib-2.0 2>/dev/null; then need_debs=1; fi
if [ "$need_debs" = 1 ]; then
  echo "== no pkg-config/glib-2.0 here: unpacking .devdeps into /tmp/devdeps"
  root=/tmp/devdeps
  mkdir -p $root
  for f in .devdeps/*.deb; do dpkg -x "$f" $root; done
  export PATH=$root/usr/bin:$PATH
  export PKG_CONFIG_PATH=$root/usr/lib/x86_64-linux-gnu/pkgconfig:$root/usr/share/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$root
  # Only GLib and PCRE2 from Debian at run time: the machine's own zlib, libmount etc. stay.
  mkdir -p $root/runlibs
  cp -a $root/usr/lib/x86_64-linux-gnu/libglib-2.0.so* $root/usr/lib/x86_64-linux-gnu/libpcre2-8.so* $root/runlibs/
  export LD_LIBRARY_PATH=$root/runlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  [ -e $root/usr/bin/pkg-config ] || ln -sf pkgconf $root/usr/bin/pkg-config
fi
if ! command -v msgfmt >/dev/null 2>&1; then
  # Configure-time only: the translation targets are never built here.
  mkdir -p /tmp/devdeps/shim
  for p in msgfmt xgettext msgmerge msginit; do
    printf '#!/bin/sh\necho "%s (GNU gettext-tools) 0.21"\n' $p > /tmp/devdeps/shim/$p
    chmod +x /tmp/devdeps/shim/$p
  done
  export PATH=$PATH:/tmp/devdeps/shim
fi

status=0
if [ "$build_only" = 1 ]; then
  echo "== build only"
  { [ -d build-gpu ] || meson setup build-gpu -Dcuda=enabled -Dgui=disabled -Dgpu_archs=${CUDA_ARCHS:-90}; } &&
    ninja -C build-gpu -j "${JOBS:-12}" kernels/libformulate-cuda.so tests/gpu/test-cuda-host \
      tests/gpu/test-cuda-ops bench/engine-gpu/bench-engine-gpu tools/eval/eval-device-compare || status=$?
  echo "gpu-proof.sh: exit $status"
  exit $status
fi
[ -d build-gpu ] || meson setup build-gpu -Dcuda=enabled -Dgui=disabled -Dgpu_archs=${CUDA_ARCHS:-90} >/dev/null
if [ "$tests" = 1 ]; then
  echo "== tests/gpu/run.sh"
  JOBS=${JOBS:-16} sh tests/gpu/run.sh build-gpu || status=$?
  cp build-gpu/meson-logs/testlog.txt "${OUT:-/tmp}/gpu-testlog.txt" 2>/dev/null
fi
if [ -n "$compare" ]; then
  echo "== tools/eval/device_compare.py $compare"
  ninja -C build-gpu tools/eval/eval-device-compare >/dev/null &&
    python3 tools/eval/device_compare.py --data "$compare" --tool build-gpu/tools/eval/eval-device-compare \
      --model data/models/formulate-v1.safetensors --device cuda:0 \
      --out "${OUT:-/tmp}/device-compare.json" || status=$?
fi
if [ "$bench" = 1 ]; then
  echo "== bench/engine-gpu/run.sh"
  sh bench/engine-gpu/run.sh build-gpu || status=$?
fi
echo "gpu-proof.sh: exit $status"
exit $status
