#!/bin/sh
# Runs one MPI rank of a test with caches of its own (processes sharing
# PoCL's cache have crashed): CLPRIM_CACHE_DIR and POCL_CACHE_DIR get the
# rank's number appended. A warm cache made by an earlier run (the
# mpi_warm fixture, $CLPRIM_MPI_WARM) is copied in first when the rank's
# own is missing, so that the ranks do not all build the same kernels.
#   mpi-rank.sh PROGRAM [ARGS...]
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}
# CLPRIM_MPI_SHARED_CACHE=1 (a one-rank run that fills the warm caches): the
# caches as given (ctest seeds them first from the one-device suites that
# build the same programs: seed-caches.sh).
[ "${CLPRIM_MPI_SHARED_CACHE:-}" = 1 ] && exec "$@"
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
