#!/bin/bash
# The figures of docs/PERFORMANCE.md in one run, on a machine with an NVIDIA
# GPU (its OpenCL ICD registered, nvcc and torch installed), from the
# project root, with $ANCHORS the folder of the anchor programs
# (cub_anchor.cu, cub_reduce_anchor.cu, cub_sort_anchor.cu, torch_anchor.py):
#   ANCHORS=path/to/anchors bash scripts/bench-gpu.sh
# Builds clprim-bench in Release while nvcc builds the CUB anchors, then, with
# CLPRIM_DEVICE=NVIDIA: clprim-bench --op all at 2^28 (int32 and float),
# reduce-by-key with double values, the CUB anchors and torch's. Results go
# to $OUT (bench-all.txt, the anchors' .txt files, progress.txt).
set -uo pipefail
out=${OUT:-/tmp/out}; build=${BUILD:-/tmp/build-bench}; mkdir -p "$out"
t0=$(date +%s); el() { echo "$(( $(date +%s) - t0 ))s"; }
left() { echo $(( ${DEADLINE:-570} - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
A=${ANCHORS:?set ANCHORS to the folder of the anchor programs}
for a in cub_anchor cub_reduce_anchor cub_sort_anchor; do
  ( timeout 240 nvcc -O3 -arch=sm_90 -std=c++17 $A/$a.cu -o /tmp/$a -lcurand > "$out/nvcc-$a.log" 2>&1 ) &
done
( timeout 240 nvcc -O3 -arch=sm_90 -std=c++17 --extended-lambda $A/cub_ops_anchor.cu -o /tmp/cub_ops_anchor -lcurand > "$out/nvcc-cub_ops_anchor.log" 2>&1 ) &
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCLPRIM_MPI=OFF -DCLPRIM_BUILD_TESTS=OFF > "$out/cmake.log" 2>&1 &&
  cmake --build "$build" -j8 --target clprim-bench > "$out/build.log" 2>&1 || { tail -30 "$out/cmake.log" "$out/build.log"; exit 1; }
echo "built $(el)" | tee -a "$out/progress.txt"
B=$build/tools/clprim-bench
export CLPRIM_DEVICE=NVIDIA CLPRIM_CACHE_DIR=${CLPRIM_CACHE_DIR:-/tmp/cache-bench}
timeout $(( $(left) - 200 )) $B --op all --min-log 28 --max-log 28 --reps 20 > "$out/bench-all.txt" 2> "$out/bench-all.err"
echo "bench all rc=$? $(el)" | tee -a "$out/progress.txt"
for op in reduce_by_key reduce_by_key_dense; do
  timeout 30 $B --op $op --type double --min-log 28 --max-log 28 --reps 20 > "$out/bench-$op-double.txt" 2>&1
done
wait
echo "anchors built $(el)" | tee -a "$out/progress.txt"
for a in cub_anchor cub_reduce_anchor cub_sort_anchor cub_ops_anchor; do
  [ "$(left)" -lt 20 ] && break
  [ -x /tmp/$a ] && timeout $(( $(left) < 60 ? $(left) : 60 )) /tmp/$a 268435456 > "$out/$a.txt" 2>&1
  echo "$a rc=$? $(el)" | tee -a "$out/progress.txt"
done
[ "$(left)" -gt 30 ] && PYTHONUNBUFFERED=1 timeout $(( $(left) - 5 )) python3 $A/torch_anchor.py 268435456 > "$out/torch.txt" 2>&1
echo "torch rc=$? $(el)" | tee -a "$out/progress.txt"
