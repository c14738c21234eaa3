#!/bin/sh
# Runs a test program under Oclgrind with race and uninitialised-value checks
# and fails if Oclgrind reported anything: Oclgrind itself exits 0 on errors.
# Usage: oclgrind-check.sh OCLGRIND PROGRAM [ARGS...]
oclgrind=$1; shift
log=$(mktemp)
"$oclgrind" --data-races --uninitialized --check-api "$@" >"$log" 2>&1
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
