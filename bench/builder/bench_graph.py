#!/usr/bin/env python3
"""Times `graph-ascend graph` against `msprobe graph` on the same inputs.

    python3 bench/builder/bench_graph.py [--version 8.1.2] [--nodes 100000] [--skip-reference]
        [--reference-max-nodes N] [--baseline OTHER_GRAPH_ASCEND]

Inputs: the largest committed sample (samples/gpt_tensor/compare.json, a
tensor compare reading 536 .pt pairs), the sample with the most nodes
(samples/gpt_statistics/compare.json), and the gpt_statistics sample scaled
to --nodes nodes a side by bench/scale/scale_sample.py (generated into
bench/out/scale/ when missing). Both tools run under bench/reference/measure.py
(wall time, peak RSS of the whole process tree, CPU time of the tree); the
reference runs through bench/reference/run_msprobe.sh in its own venv.

Prints one line per tool and input and a markdown table with the ratios
(msprobe / graph-ascend): wall time, CPU time and peak memory. CPU time is the
steadier figure on a shared machine.

graph-ascend runs --repeat times per input (default 3) before msprobe and as
many times after it, and the run of median CPU time of them all is reported:
at 10^5 nodes a run takes under a second, so one run shows whatever else the
machine did in that second (on a shared VM the same binary takes 0.67 to
1.25 s CPU an hour apart); msprobe's run of minutes averages that out and
runs once, and the runs on both sides of it sample the machine it saw.

--baseline times a second graph-ascend binary (an earlier build) on the same
inputs in the same run, for before/after figures; --reference-max-nodes skips
msprobe on scaled inputs larger than N nodes a side (msprobe needs about 20 GB
at 10^6).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEASURE = os.path.join(ROOT, "bench", "reference", "measure.py")
FIGURES = re.compile(r"wall_s=([\d.]+) peak_rss_mb=([\d.]+).*?cpu_s=([\d.]+).*?exit=(-?\d+)")


def figures(text):
    m = None
    for m in FIGURES.finditer(text):
        pass
    if not m or m.group(4) != "0":
        raise RuntimeError("run failed:\n" + text[-2000:])
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def median_run(runs):
    """The run of median CPU time (a run of a second is at the mercy of a moment's load)."""
    runs = sorted(runs, key=lambda f: f[2])
    return runs[len(runs) // 2]


def run_ours(binary, config, flags, repeat=1):
    """`repeat` runs: (wall, peak, cpu) each."""
    runs = []
    for _ in range(repeat):
        out = tempfile.mkdtemp(prefix="bench-graph-")
        try:
            r = subprocess.run([sys.executable, MEASURE, "--", binary, "graph", "-i", config, "-o", out] + flags,
                               capture_output=True, text=True)
            runs.append(figures(r.stdout + r.stderr))
        finally:
            shutil.rmtree(out, ignore_errors=True)
    return runs


def run_reference(version, config, flags):
    out = tempfile.mkdtemp(prefix="bench-msprobe-")
    shutil.rmtree(out)
    try:
        cmd = [os.path.join(ROOT, "bench", "reference", "run_msprobe.sh"), "--version", version, config, out]
        if flags:
            cmd += ["--"] + flags
        r = subprocess.run(cmd, capture_output=True, text=True)
        return figures(r.stdout + r.stderr)
    finally:
        shutil.rmtree(out, ignore_errors=True)
        if os.path.exists(out + ".log"):
            os.unlink(out + ".log")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default="8.1.2", help="msprobe version for the reference (run_msprobe.sh)")
    ap.add_argument("--nodes", type=int, action="append", help="scaled input size (repeatable; default 100000)")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "graph-ascend"))
    ap.add_argument("--skip-reference", action="store_true", help="only time graph-ascend")
    ap.add_argument("--reference-max-nodes", type=int, default=0,
                    help="skip msprobe on scaled inputs of more nodes a side (0: no limit)")
    ap.add_argument("--baseline", help="another graph-ascend binary (an earlier build) to time beside")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs of graph-ascend per input before msprobe and again after it; the one of median CPU "
                    "time is reported (msprobe runs once)")
    args = ap.parse_args()
    inputs = [("samples/gpt_tensor (largest sample, tensor)", os.path.join(ROOT, "samples", "gpt_tensor", "compare.json")),
              ("samples/gpt_statistics", os.path.join(ROOT, "samples", "gpt_statistics", "compare.json"))]
    for n in args.nodes or [100000]:
        out = os.path.join(ROOT, "bench", "out", "scale", "gpt_%d" % n)
        if not os.path.exists(os.path.join(out, "compare.json")):
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "scale", "scale_sample.py"), "--case",
                            os.path.join(ROOT, "samples", "gpt_statistics"), "--nodes", str(n), "--out", out],
                           check=True)
        inputs.append(("scaled, %d nodes a side" % n, os.path.join(out, "compare.json"), n))
    rows = []
    baselines = []
    for label, config, *nodes in inputs:
        base_runs = []
        our_runs = []

        def time_ours():
            if args.baseline:
                base_runs.extend(run_ours(args.baseline, config, [], args.repeat))
            our_runs.extend(run_ours(args.binary, config, [], args.repeat))

        time_ours()
        ref = None
        too_big = args.reference_max_nodes and nodes and nodes[0] > args.reference_max_nodes
        if not args.skip_reference and not too_big:
            ref = run_reference(args.version, config, [])
            print("msprobe %-6s %-40s wall %.2f s  cpu %.2f s  peak %.0f MB" % (args.version, label, ref[0], ref[2],
                                                                               ref[1]), flush=True)
            time_ours()
        if args.baseline:
            base = median_run(base_runs)
            print("baseline      %-40s wall %.2f s  cpu %.2f s  peak %.0f MB  (median of %d runs)" % (
                label, base[0], base[2], base[1], len(base_runs)), flush=True)
            baselines.append((label, base))
        ours = median_run(our_runs)
        print("graph-ascend  %-40s wall %.2f s  cpu %.2f s  peak %.0f MB  (median of %d runs, cpu %.2f to %.2f s)" % (
            label, ours[0], ours[2], ours[1], len(our_runs), min(r[2] for r in our_runs),
            max(r[2] for r in our_runs)), flush=True)
        rows.append((label, ours, ref))
    print()
    print("| input | graph-ascend wall / CPU / peak | msprobe %s wall / CPU / peak | wall ratio | CPU ratio | memory ratio |"
          % args.version)
    print("|---|---|---|---|---|---|")
    for label, ours, ref in rows:
        mine = "%.2f s / %.2f s / %.0f MB" % (ours[0], ours[2], ours[1])
        if ref is None:
            print("| %s | %s | - | - | - | - |" % (label, mine))
            continue
        theirs = "%.1f s / %.1f s / %.0f MB" % (ref[0], ref[2], ref[1])
        print("| %s | %s | %s | %.0fx | %.0fx | %.1fx |" % (label, mine, theirs, ref[0] / max(ours[0], 1e-3),
                                                           ref[2] / max(ours[2], 1e-3), ref[1] / max(ours[1], 1e-3)))
    if baselines:
        print()
        print("| input | baseline wall / CPU / peak | graph-ascend wall / CPU / peak | CPU ratio (baseline / graph-ascend) |")
        print("|---|---|---|---|")
        for (label, base), (_, ours, _) in zip(baselines, rows):
            print("| %s | %.2f s / %.2f s / %.0f MB | %.2f s / %.2f s / %.0f MB | %.2fx |" % (
                label, base[0], base[2], base[1], ours[0], ours[2], ours[1], base[2] / max(ours[2], 1e-3)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
