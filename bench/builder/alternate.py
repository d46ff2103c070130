#!/usr/bin/env python3
"""Times two or more graph-ascend binaries on one input, run after run in turn.

    python3 bench/builder/alternate.py RUNS BINARY [BINARY...] [--input CONFIG]

Each round runs every binary once (`graph -i CONFIG -o TMP`), so a change in
the machine's speed falls on all of them alike; prints per binary the mean,
median, minimum and standard deviation of CPU time (user + system, from
rusage) and the median wall time. For before/after figures of a change whose
effect is a few per cent, which single runs (0.7 to 1.3 s CPU at 10^5 on a
shared VM) cannot show. Default input: the 10^5-node scaled compare.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", type=int)
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--input", default=os.path.join(ROOT, "bench", "out", "scale", "gpt_100000", "compare.json"))
    args = ap.parse_args()
    if not os.path.exists(args.input):
        sys.exit("no input %s (bench/builder/bench_graph.py generates the scaled ones)" % args.input)
    runs = {b: [] for b in args.binaries}
    work = tempfile.mkdtemp(prefix="alternate-")
    try:
        for _ in range(args.runs):
            for b in args.binaries:
                out = os.path.join(work, "out")
                shutil.rmtree(out, ignore_errors=True)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.monotonic()
                subprocess.run([b, "graph", "-i", args.input, "-o", out], stdout=subprocess.DEVNULL, check=True)
                wall = time.monotonic() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                runs[b].append((cpu, wall))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for b, r in runs.items():
        cpu = [c for c, _ in r]
        wall = [w for _, w in r]
        sd = statistics.stdev(cpu) if len(cpu) > 1 else 0.0
        print("%s: cpu mean %.3f median %.3f min %.3f sd %.3f s; wall median %.3f s (%d runs)" % (
            b, statistics.mean(cpu), statistics.median(cpu), min(cpu), sd, statistics.median(wall), len(r)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
