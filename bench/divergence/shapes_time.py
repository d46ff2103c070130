#!/usr/bin/env python3
"""Times `graph-ascend graph` on the cases of shapes.py and prints each unmatched case's CPU time against
the same shape fully matched (the bar: at most 2x; docs/SCALE.md, "Linear in the input's shape").

    bench/divergence/shapes.py --nodes 100000 --out /tmp/shapes
    bench/divergence/shapes_time.py build/bin/graph-ascend /tmp/shapes [--jobs 1]
"""
import argparse
import os
import subprocess
import sys
import tempfile

CASES = ("flat", "wide", "deep", "run")


def timed(binary, folder, jobs):
    """(CPU seconds, peak RSS in MB) of one compare."""
    with tempfile.TemporaryDirectory() as out, tempfile.NamedTemporaryFile("r") as t:
        cmd = ["/usr/bin/time", "-f", "%U %S %M", "-o", t.name, binary, "graph", "-i",
               os.path.join(folder, "compare.json"), "-o", out]
        if jobs:
            cmd += ["--jobs", str(jobs)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        user, system, peak = t.read().split()[-3:]
    return float(user) + float(system), int(peak) / 1024


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary")
    p.add_argument("shapes", help="shapes.py's --out folder")
    p.add_argument("--jobs", type=int, default=0, help="pass --jobs N to the builder")
    a = p.parse_args()
    worst = 0
    for case in CASES:
        if not os.path.isdir(os.path.join(a.shapes, case)):
            continue
        cpu, peak = timed(a.binary, os.path.join(a.shapes, case), a.jobs)
        cpu_u, peak_u = timed(a.binary, os.path.join(a.shapes, case + "_unmatched"), a.jobs)
        ratio = cpu_u / max(cpu, 1e-3)
        worst = max(worst, ratio)
        print("%-6s matched %6.2f CPU-s %5.0f MB   half unmatched %6.2f CPU-s %5.0f MB   ratio %.2f"
              % (case, cpu, peak, cpu_u, peak_u, ratio), flush=True)
    print("worst ratio %.2f (bar 2)" % worst)
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
