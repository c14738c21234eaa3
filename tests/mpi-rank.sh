#!/bin/sh
# Runs one MPI rank of a test with caches of its own (processes sharing
# PoCL's cache have crashed): CLPRIM_CACHE_DIR and POCL_CACHE_DIR get the
# rank's number appended. A warm cache made by an earlier run (the
# mpi_warm fixture, $CLPRIM_MPI_WARM) is copied in first when the rank's
# own is missing, so that the ranks do not all build the same kernels.
#   mpi-rank.sh PROGRAM [ARGS...]
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}
# CLPRIM_MPI_SHARED_CACHE=1 (a one-rank run that fills the warm caches):
# the caches as given, first seeded (when $CLPRIM_MPI_SEED names ctest's
# cache folder) with what the one-device suites built there: the same
# programs, built once per CI run instead of twice. Copies only (-n: never
# over an entry), made after those suites ended (ctest DEPENDS).
if [ "${CLPRIM_MPI_SHARED_CACHE:-}" = 1 ]; then
  if [ -n "${CLPRIM_MPI_SEED:-}" ] && [ -n "${CLPRIM_CACHE_DIR:-}" ] && [ -n "${POCL_CACHE_DIR:-}" ]; then
    mkdir -p "$CLPRIM_CACHE_DIR" "$POCL_CACHE_DIR"
    for suite in reduce histogram scan select nth_element topk sort; do
      [ -d "$CLPRIM_MPI_SEED/test_$suite" ] &&
        cp -Rn "$CLPRIM_MPI_SEED/test_$suite/." "$CLPRIM_CACHE_DIR/" 2>/dev/null
      [ -d "$CLPRIM_MPI_SEED/pocl-test_$suite" ] &&
        cp -Rn "$CLPRIM_MPI_SEED/pocl-test_$suite/." "$POCL_CACHE_DIR/" 2>/dev/null
    done
  fi
  exec "$@"
fi
for var in CLPRIM_CACHE_DIR POCL_CACHE_DIR; do
  eval "base=\${$var:-}"
  [ -n "$base" ] || continue
  dir=$base-rank$rank
  if [ ! -d "$dir" ] && [ -n "${CLPRIM_MPI_WARM:-}" ]; then
    kind=clprim; [ "$var" = POCL_CACHE_DIR ] && kind=pocl
    [ -d "$CLPRIM_MPI_WARM/$kind" ] && cp -R "$CLPRIM_MPI_WARM/$kind" "$dir.tmp$$" &&
      mv "$dir.tmp$$" "$dir" 2>/dev/null
  fi
  export "$var=$dir"
done
exec "$@"
