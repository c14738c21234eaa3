#!/bin/sh
# clprim-tune in quick mode at a small size (the reduce and histogram sweeps:
# every value's output must equal the tables', else its exit status is 1)
# writes the device's tuning file in the cache folder; clprim-info then
# lists a file's rows as the tuning file's, and the file it read.
#   tune.sh CLPRIM_TUNE CLPRIM_INFO WORK_FOLDER
set -e
tune=$1 info=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
export CLPRIM_CACHE_DIR="$work/cache"
"$tune" --quick --families reduce,histogram --n 100000
file=$(ls "$CLPRIM_CACHE_DIR"/tuning-*.txt)
cat "$file"
grep -q "^# clprim-tune --quick" "$file"
grep -q "^# sum, int32: .* ms with the tables, .* ms tuned$" "$file"
grep -q "^# sum, uint64: .* ms with the tables, .* ms tuned$" "$file"
grep -q "^# histogram, 256 bins, int32: .* ms with the tables, .* ms tuned$" "$file"
printf '%s\n' "reduce key_bytes=4 items=8  # by hand" "sort key_bytes=8 value_bytes=none wg=128" \
  "sort nope=1" >"$file"
"$info" --no-self-test >"$work/info.txt" 2>"$work/info-stderr.txt"
cat "$work/info.txt" "$work/info-stderr.txt"
grep -q "^  reduce, 4-byte keys: items=8 -- tuning file$" "$work/info.txt"
grep -q "^  sort, 8-byte keys, keys alone: wg=128 -- tuning file$" "$work/info.txt"
grep -q "^  tuning file     $file$" "$work/info.txt"
grep -q "line 3: a knob the family does not have" "$work/info-stderr.txt"
echo "tune.sh: passed"
