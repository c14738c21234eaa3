#!/usr/bin/env python3
"""Reads clprim-bench output with CLPRIM_TRACE=1 (stderr merged) and prints,
for each result line, the median time of each traced command name."""
import sys, statistics, collections
pending = collections.defaultdict(list)
for line in sys.stdin:
    if line.startswith("clprim trace:"):
        parts = line.split()
        pending[parts[2]].append(float(parts[3]))
        continue
    if " ms " in line and "n=2^" in line:
        print(line.rstrip())
        for name, ts in pending.items():
            print(f"    {name:28s} x{len(ts):4d}  median {statistics.median(ts):9.4f} ms")
        pending.clear()
    else:
        print(line.rstrip())
