#!/usr/bin/env python3
"""What a .vis.db costs against the .vis of the same compare: CPU seconds and peak RSS, side by side.

    python3 bench/builder/db_writer.py [--nodes 100000] [--rounds 3] [--binary build/bin/graph-ascend]
                                       [--old OLD_BINARY] [--work /tmp/db-writer-bench]

Scales samples/gpt_statistics to NODES nodes a side (bench/scale/scale_sample.py, kept in WORK between
runs), then per round runs, one process each, measured by wait4 (user + system CPU of the process and
its threads, peak RSS):

  vis      graph_visualize -tp npu -gp bench -o OUT                     (the .vis path: the reference)
  db       graph_visualize -tp npu -gp bench -o OUT --output_format db  (the .vis.db of the same compare)
  export   export OUT/<the .vis> --format db -o FILE.vis.db             (a .vis into a .vis.db)

and prints the best round of each (least CPU) with its ratios to the vis path. Issue 29's bar: db at
most 3x the CPU and 2.5x the peak RSS of vis. --old runs db and export with another binary too (the
writer before the streaming one, built from an older commit) for the before/after figures.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def measure(argv, cwd):
    """(CPU seconds, peak RSS in MB, stdout) of one run of argv."""
    out = tempfile.TemporaryFile()
    p = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read().decode()
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(map(str, argv))}: exit {p.returncode}: {err}")
    out.seek(0)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read().decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--binary", default=str(ROOT / "build" / "bin" / "graph-ascend"))
    ap.add_argument("--old", help="a second binary whose db and export are measured too")
    ap.add_argument("--work", default="/tmp/db-writer-bench")
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    case = work / f"gpt_{args.nodes}"
    if not (case / "scale_info.json").exists():
        subprocess.run([sys.executable, str(ROOT / "bench/scale/scale_sample.py"), "--case",
                        str(ROOT / "samples/gpt_statistics"), "--nodes", str(args.nodes), "--out", str(case)],
                       check=True, stdout=subprocess.DEVNULL)
    binaries = [("", pathlib.Path(args.binary).resolve())]
    if args.old:
        binaries.append((" (old)", pathlib.Path(args.old).resolve()))
    best = {}

    def keep(name, cpu, rss):
        if name not in best or cpu < best[name][0]:
            best[name] = (cpu, rss)

    for r in range(args.rounds):
        out = case / "out"
        shutil.rmtree(out, ignore_errors=True)
        cpu, rss, stdout = measure([binaries[0][1], "graph_visualize", "-tp", "npu", "-gp", "bench", "-o",
                                    out / "vis"], case)
        keep("vis", cpu, rss)
        vis = stdout.split()[0]
        for tag, binary in binaries:
            cpu, rss, _ = measure([binary, "graph_visualize", "-tp", "npu", "-gp", "bench", "-o", out / "db",
                                   "--output_format", "db"], case)
            keep("db" + tag, cpu, rss)
            cpu, rss, _ = measure([binary, "export", vis, "--format", "db", "-o", out / "export.vis.db"], case)
            keep("export" + tag, cpu, rss)
            if not tag:  # the size of this binary's file, not --old's
                size = (out / "export.vis.db").stat().st_size
            shutil.rmtree(out / "db")
            os.unlink(out / "export.vis.db")
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    shutil.rmtree(case / "out", ignore_errors=True)
    vis_cpu, vis_rss = best["vis"]
    print(f"{args.nodes} nodes a side (gpt_statistics scaled), best of {args.rounds} rounds by CPU; "
          f".vis.db {size / 1e6:.1f} MB")
    print(f"{'path':<14} {'CPU s':>8} {'peak RSS MB':>12} {'CPU / vis':>10} {'RSS / vis':>10}")
    for name, (cpu, rss) in best.items():
        print(f"{name:<14} {cpu:>8.2f} {rss:>12.0f} {cpu / vis_cpu:>9.2f}x {rss / vis_rss:>9.2f}x")


if __name__ == "__main__":
    main()
