#!/bin/sh
# Runs a test program under Oclgrind with its bounds, race and API checks
# (with --uninitialized also its uninitialised-value check, which makes a run
# about 3.5 times as long) and fails if Oclgrind reported anything: Oclgrind
# itself exits 0 on errors.
# Usage: oclgrind-check.sh [--uninitialized] OCLGRIND PROGRAM [ARGS...]
checks="--data-races --check-api"
if [ "$1" = --uninitialized ]; then checks="$checks --uninitialized"; shift; fi
oclgrind=$1; shift
log=$(mktemp)
"$oclgrind" $checks "$@" >"$log" 2>&1
status=$?
cat "$log"
# Oclgrind's report lines (src/plugins/*: MemCheck, RaceDetector, Uninitialized,
# InteractiveDebugger, and the API checks).
if grep -E -q "Invalid (read|write)|data race|Uninitiali[sz]ed (value|address)|Work-group divergence|Oclgrind - OpenCL runtime error|Unaligned address|Attempting to|not aligned|barrier divergence" "$log"; then
  echo "oclgrind-check: Oclgrind reported errors (above)" >&2
  status=1
fi
rm -f "$log"
exit $status
