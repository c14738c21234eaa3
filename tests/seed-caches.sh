#!/bin/sh
# Runs a test with its caches first seeded from suites that have finished:
# what those suites built (their clprim disk cache and PoCL kernel cache,
# under $CLPRIM_TEST_SEED as test_SUITE and pocl-test_SUITE) is copied into
# the test's own $CLPRIM_CACHE_DIR and $POCL_CACHE_DIR, so that the test does
# not compile again the kernels it shares with them. Processes sharing one
# PoCL cache have crashed, so each test keeps a folder of its own; ctest's
# DEPENDS orders the test after every run that writes into those suites'
# caches, so that no file is copied while it is written.
# Only caches that do not exist yet are seeded (a rerun keeps its own); each
# is filled beside its place and moved there whole.
#   seed-caches.sh "SUITE..." PROGRAM [ARGS...]
suites=$1; shift
if [ -n "${CLPRIM_TEST_SEED:-}" ]; then
  for var in CLPRIM_CACHE_DIR POCL_CACHE_DIR; do
    eval "dir=\${$var:-}"
    [ -n "$dir" ] && [ ! -d "$dir" ] || continue
    prefix=; [ "$var" = POCL_CACHE_DIR ] && prefix=pocl-
    tmp=$dir.seed$$
    mkdir -p "$tmp"
    for suite in $suites; do
      [ -d "$CLPRIM_TEST_SEED/${prefix}test_$suite" ] &&
        cp -Rn "$CLPRIM_TEST_SEED/${prefix}test_$suite/." "$tmp/" 2>/dev/null
    done
    mv "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
  done
fi
exec "$@"
