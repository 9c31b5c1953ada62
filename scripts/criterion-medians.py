#!/usr/bin/env python3
"""Prints the median ns/id of criterion benchmarks as a Markdown table.

Usage: scripts/criterion-medians.py GROUP [GROUP...]
Reads target/criterion/<group>/<bench>/new/estimates.json (criterion's own output) and
divides by the benchmark's throughput (elements per iteration) where one was declared.
"""
import json
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion"
print("| benchmark | median ns/id | ids/s |")
print("|---|---:|---:|")
for group in sys.argv[1:]:
    for bench in sorted((root / group).iterdir()):
        est = bench / "new" / "estimates.json"
        meta = bench / "new" / "benchmark.json"
        if not est.exists():
            continue
        median = json.loads(est.read_text())["median"]["point_estimate"]
        elements = 1
        if meta.exists():
            tp = json.loads(meta.read_text()).get("throughput") or {}
            elements = tp.get("Elements", 1)
        ns = median / elements
        print(f"| `{group}/{bench.name}` | {ns:.3f} | {1e9 / ns / 1e6:,.1f} M |")
