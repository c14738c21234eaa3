#!/bin/bash
# The figures of docs/PERFORMANCE.md in one device call: run on the GPU
# machine from the project root (see ../shared/device/README.md), e.g.
#   bash .device/gpu-env.sh bash scripts/bench-h100.sh
# with the anchors copied to .device/anchors (../shared/anchors). Builds in
# Release, then clprim-bench on NVIDIA at 2^28 and the CUB and torch anchors
# (scripts/torch-reduce-anchor.py: bincount, histc and index_add_).
set -uo pipefail
build=${BUILD:-/tmp/build}
out=${OUT:-/tmp/out}
mkdir -p "$out"
cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build $build -j"$(nproc)" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
B=$build/tools/clprim-bench
export CLPRIM_DEVICE=NVIDIA
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B --op scan --type int32 --min-log 28 --max-log 28 --reps 25
$B --op argmax --type float --min-log 28 --max-log 28 --reps 25
$B --op reduce_sum --type float --min-log 28 --max-log 28 --reps 25
$B --op select --type float --min-log 28 --max-log 28 --reps 25
$B --op histogram --type float --min-log 28 --max-log 28 --reps 25
$B --op histogram_keys --type uint32 --min-log 28 --max-log 28 --reps 25
$B --op reduce_by_key_dense --type double --min-log 28 --max-log 28 --reps 25
$B --op reduce_by_key --type double --min-log 28 --max-log 28 --reps 25
for op in nth_element nth_approx quantiles topk; do timeout 120 $B --op $op --type float --min-log 28 --max-log 28 --reps 20; done
cd .device/anchors
nvcc -O3 -arch=sm_90 -std=c++17 cub_anchor.cu -o /tmp/cub_anchor -lcurand 2>/dev/null && /tmp/cub_anchor 268435456
nvcc -O3 -arch=sm_90 -std=c++17 cub_reduce_anchor.cu -o /tmp/cub_reduce_anchor -lcurand 2>/dev/null && /tmp/cub_reduce_anchor 268435456
cd - >/dev/null
timeout 120 python3 scripts/torch-reduce-anchor.py 268435456
PYTHONUNBUFFERED=1 timeout 240 python3 .device/anchors/torch_anchor.py 268435456
} 2>&1 | tee "$out/bench-h100.txt"
