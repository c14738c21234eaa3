#!/bin/bash
# mpi-two-gpu.sh: clprim_mpi on the GPUs of one host (two H200s, or G of
# them: GPUS=G, default every GPU nvidia-smi lists), in one call of at most
# 10 minutes (docs/SCALING.md, "Two H200s of one host"). From the project
# root on a machine whose NVIDIA OpenCL driver is registered with the ICD
# loader and where cmocka is installed:
#     MPI_DEBS=... ANCHORS=... bash scripts/mpi-two-gpu.sh
# Both optional: $MPI_DEBS, a folder of Debian 12's Open MPI packages and
# what they need (installed only when the machine has no mpirun), and
# $ANCHORS, the folder that holds the CUB sort anchor (cub_sort_anchor.cu).
# Every step runs under `timeout` and logs to $OUT/<step>.log; $OUT/steps.log
# has each step's command, exit status and the seconds since the start.
# Order: correctness (test_mpi, one rank per GPU), the sort's scaling, the
# mixed job (2 NVIDIA + 2 PoCL ranks), the selection's scaling, the anchors,
# then diagnostics while time is left. The NCCL_* variables of the machine
# are left as they are (mpirun and torchrun pass the environment on).
# For a trial elsewhere: BUILD_DIR (default /tmp/build-mpi), N30 and N29
# (the sizes, default 2^30 and 2^29).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
root=$(pwd)
B=${BUILD_DIR:-/tmp/build-mpi}
N30=${N30:-1073741824}
N29=${N29:-536870912}
START=$(date +%s)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's default binds each of 2 ranks to one core: the ranks' host work
# (staging, PoCL's threads) would share it. No binding.
MPIRUN="mpirun --bind-to none"

elapsed() { echo $(($(date +%s) - START)); }
note() { echo "== [$(elapsed) s] $*" | tee -a "$OUT/steps.log"; }
# run NAME SECONDS COMMAND...: output to $OUT/NAME.log; status to steps.log
run() {
  local name=$1 limit=$2
  shift 2
  note "$name (limit ${limit} s): $*"
  timeout -k 10 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "   $name: exit $rc at $(elapsed) s" | tee -a "$OUT/steps.log"
  tail -n 4 "$OUT/$name.log" | sed 's/^/   | /' | tee -a "$OUT/steps.log"
  return $rc
}
# time_left SECONDS: whether that many seconds remain of the 9 minutes
time_left() { [ $(($(elapsed) + $1)) -le 540 ]; }

# ---- the machine
{
  date -u
  git -C "$root" rev-parse HEAD 2>/dev/null
  uname -a
  grep PRETTY_NAME /etc/os-release
  nproc
  free -g | head -2
  nvidia-smi -L
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv
  nvidia-smi topo -m
  env | grep -E '^(NCCL|CUDA|OMPI|UCX)_' | sort
  clinfo -l
} >"$OUT/machine.log" 2>&1
G=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
[ "$G" -ge 1 ] 2>/dev/null || G=2
note "machine: $(grep -c '^GPU ' "$OUT/machine.log") GPUs listed by nvidia-smi; $G ranks, one per GPU"
LOG30=$(awk -v n="$N30" 'BEGIN { print int(log(n) / log(2) + 0.5) }')

# ---- Open MPI: the machine's, else Debian 12's packages from $MPI_DEBS
install_open_mpi() {
  local debs=() deb name
  for deb in "${MPI_DEBS:-/nonexistent}"/*.deb; do
    [ -e "$deb" ] || continue
    name=$(dpkg-deb -f "$deb" Package)
    # Already there (also as Ubuntu's 64-bit-time "t64" rename): keep it.
    if dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q 'ok installed' ||
      dpkg-query -W -f='${Status}' "${name}t64" 2>/dev/null | grep -q 'ok installed'; then
      continue
    fi
    debs+=("$deb")
  done
  echo "installing ${#debs[@]} packages: ${debs[*]##*/}"
  # --force-depends: compilers and documentation that the packages name
  # (gfortran, automake, jquery) are not needed to build and run C.
  dpkg -i --force-depends "${debs[@]}" || true
  ldconfig
  if ! mpirun --version >/dev/null 2>&1; then
    echo "mpirun does not run yet: again, overwriting files of other packages"
    dpkg -i --force-depends --force-overwrite "${debs[@]}" || true
    ldconfig
  fi
  mpirun --version
}
if ! command -v mpirun >/dev/null 2>&1 || ! command -v mpicc >/dev/null 2>&1; then
  export -f install_open_mpi # for `timeout`, which runs programs, not functions
  export root
  run open-mpi 120 bash -c install_open_mpi
fi
{
  mpirun --version
  ompi_info --parsable 2>/dev/null | grep -E '^mca:(btl|pml|plm):[a-z0-9_]+:version' | cut -d: -f1-3
} >"$OUT/open-mpi-info.log" 2>&1
note "$(head -1 "$OUT/open-mpi-info.log")"

# ---- the CUB anchor builds in the background meanwhile (nvcc takes a minute)
if [ -f "${ANCHORS:-/nonexistent}/cub_sort_anchor.cu" ] && command -v nvcc >/dev/null 2>&1; then
  (timeout 300 nvcc -O3 -arch=sm_90 -std=c++17 "$ANCHORS/cub_sort_anchor.cu" \
    -o /tmp/cub_sort_anchor -lcurand >"$OUT/cub-build.log" 2>&1) &
  CUB_BUILD=$!
fi

# ---- build (Release, with MPI)
run configure 90 cmake -S "$root" -B "$B" -DCMAKE_BUILD_TYPE=Release -DCLPRIM_MPI=ON
run build 180 cmake --build "$B" -j32 --target test_mpi clprim-bench-mpi clprim-bench ||
  { note "the build failed: see build.log"; exit 1; }

# ---- 1. test_mpi, one rank per GPU (clprim_mpi's rule: local rank l takes
# GPU l mod G); each rank prints its device and PCI bus. Caches per rank
# (tests/mpi-rank.sh appends -rankN). Meanwhile one PoCL rank fills a warm
# cache for the PoCL ranks of the mixed job (copied to them by mpi-rank.sh).
WARM=/tmp/cache-warm
(CLPRIM_DEVICE=pocl CLPRIM_CACHE_DIR=$WARM/clprim POCL_CACHE_DIR=$WARM/pocl \
  CLPRIM_MPI_SHARED_CACHE=1 timeout 240 $MPIRUN -np 1 sh "$root/tests/mpi-rank.sh" \
  "$B/tests/test_mpi" >"$OUT/pocl-warm.log" 2>&1) &
WARM_JOB=$!
export CLPRIM_CACHE_DIR=/tmp/cache/clprim POCL_CACHE_DIR=/tmp/cache/pocl
run test-mpi-${G}gpu 200 $MPIRUN -np $G sh "$root/tests/mpi-rank.sh" "$B/tests/test_mpi"
grep -E '^test_mpi: rank' "$OUT/test-mpi-${G}gpu.log" | tee -a "$OUT/steps.log"
# The benchmarks should have the CPU to themselves: wait for the warm-up,
# but not past 100 s more (then it goes on beside the sort's benchmark).
for _ in $(seq 100); do kill -0 $WARM_JOB 2>/dev/null || break; sleep 1; done
kill -0 $WARM_JOB 2>/dev/null && note "PoCL warm-up still running (beside the sort benchmark)"

# ---- 2. the sort's scaling: 2^30 floats on G ranks (strong) and 2^29 per
# rank (weak: the same run when G = 2), on 1 rank 2^30 and 2^29 (weak's
# one-GPU share). Median of 5 (each call moves GiBs through the host); the
# bench adds the exchange's floor with the same counts, in the same job.
BENCH="sh $root/tests/mpi-rank.sh $B/tools/clprim-bench-mpi"
run sort-${G}gpu-2p30 150 $MPIRUN -np $G $BENCH --op sort --n $N30 --reps 5
run sort-1gpu-2p30 90 $MPIRUN -np 1 $BENCH --op sort --n $N30 --reps 5
run sort-1gpu-2p29 90 $MPIRUN -np 1 $BENCH --op sort --n $N29 --reps 5
[ "$G" -ne 2 ] && run sort-${G}gpu-weak-2p29 150 $MPIRUN -np $G $BENCH --op sort \
  --n $N29 --weak --reps 5

note "PoCL warm-up: waiting"
wait $WARM_JOB
note "PoCL warm-up: exit $? ($(grep -c PASSED "$OUT/pocl-warm.log") PASSED lines)"
# The NVIDIA entries too, for the mixed job's GPU ranks.
mkdir -p $WARM/clprim
cp -Rn /tmp/cache/clprim-rank0/. $WARM/clprim/ 2>/dev/null

# ---- 3. the mixed job: 2 NVIDIA ranks (local ranks 0, 1: GPUs 0, 1) and 2
# PoCL ranks (CLPRIM_DEVICE=pocl), caches copied from the warm ones: a job
# of unequal devices.
CLPRIM_MPI_WARM=$WARM CLPRIM_CACHE_DIR=/tmp/cache-mixed/clprim \
  POCL_CACHE_DIR=/tmp/cache-mixed/pocl \
  run test-mpi-mixed 180 $MPIRUN --oversubscribe -np 2 sh "$root/tests/mpi-rank.sh" "$B/tests/test_mpi" \
  : -np 2 env CLPRIM_DEVICE=pocl sh "$root/tests/mpi-rank.sh" "$B/tests/test_mpi"
grep -E '^test_mpi: rank' "$OUT/test-mpi-mixed.log" | tee -a "$OUT/steps.log"

# ---- 4. selection, top-k, histogram: strong 2^30 on G and 1 ranks, weak's
# one-GPU share 2^29 on 1 rank (and 2^29 per rank on G when G != 2);
# median of 20.
SEL="--op nth_element,quantiles,topk,histogram --q 99 --k 1000 --reps 20"
run select-${G}gpu-2p30 90 $MPIRUN -np $G $BENCH $SEL --n $N30
run select-1gpu-2p30 90 $MPIRUN -np 1 $BENCH $SEL --n $N30
run select-1gpu-2p29 90 $MPIRUN -np 1 $BENCH $SEL --n $N29
[ "$G" -ne 2 ] && run select-${G}gpu-weak-2p29 90 $MPIRUN -np $G $BENCH $SEL --n $N29 --weak

# ---- 5. anchors: one GPU sorting 2^30 floats (clprim, CUB); NCCL moving
# the bytes each rank's sort sends (1 GiB per rank at 2^30 on 2 ranks).
CLPRIM_DEVICE=nvidia run anchor-clprim-sort 60 "$B/tools/clprim-bench" --op sort_keys \
  --type float --min-log $LOG30 --max-log $LOG30 --reps 20
if [ -n "${CUB_BUILD:-}" ]; then
  wait $CUB_BUILD
  [ -x /tmp/cub_sort_anchor ] && run anchor-cub-sort 90 /tmp/cub_sort_anchor $N30
fi
if time_left 60; then
  run anchor-torch-nccl 90 python3 -m torch.distributed.run --nproc_per_node=$G \
    "$root/scripts/torch-allgather-anchor.py" --bytes $((N30 / G * 4 * (G - 1) / G)) --reps 20
fi

# ---- 6. diagnostics while time is left: the exchange's transport. The
# sort at 2^30 on 2 ranks with Open MPI's shared-memory transport forced
# (vader) and with its single-copy mechanism off (two copies through a
# shared segment), to tell what MPI chose by default.
if time_left 60; then
  run sort-${G}gpu-vader 90 $MPIRUN --mca pml ob1 --mca btl self,vader -np $G $BENCH \
    --op sort --n $N30 --reps 5
fi
if time_left 60; then
  run sort-${G}gpu-vader-nocma 90 $MPIRUN --mca pml ob1 --mca btl self,vader \
    --mca btl_vader_single_copy_mechanism none -np $G $BENCH --op sort --n $N30 --reps 5
fi
note "done"
