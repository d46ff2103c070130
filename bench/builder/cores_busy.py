#!/usr/bin/env python3
"""How many cores `graph-ascend graph` keeps busy, phase by phase.

    python3 bench/builder/cores_busy.py [--binary B] [--interval S] -- GRAPH_ARGS...
    python3 bench/builder/cores_busy.py -- -i bench/out/scale/gpt_1000000/compare.json -o /tmp/out

Runs the builder with -v, samples the process's CPU ticks (user + system, all
threads) from /proc/PID/stat every --interval seconds, and prints per sample
the cores in use (2.00 = both of a 2-core machine) under the phase the -v log
was in. Ends with each phase's wall time, CPU time and mean cores in use, and
the whole run's. Standard library only (Linux /proc).
"""

import argparse
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "bin", "graph-ascend"))
    ap.add_argument("--interval", type=float, default=0.25)
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    if not args:
        ap.error("give the graph arguments after --")
    start = time.monotonic()
    proc = subprocess.Popen([a.binary, "graph", "-v"] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    phase = ["start"]
    # The -v log names what was just done; the work until the next line is the next phase.
    names = {"start": "read and build both sides", "read": "match", "matched": "compare and write"}

    def follow():
        for line in proc.stderr:
            words = line.split()
            if len(words) > 1 and words[0] == "graph-ascend:":
                phase[0] = words[1]

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    samples = []  # (t, cpu, phase)
    last_t, last_cpu = 0.0, 0.0
    while proc.poll() is None:
        time.sleep(a.interval)
        cpu = cpu_seconds(proc.pid)
        if cpu is None:
            break
        t = time.monotonic() - start
        label = names.get(phase[0], "finish")
        samples.append((t, cpu, label))
        print("%6.2f s  %4.2f cores  %s" % (t, (cpu - last_cpu) / max(t - last_t, 1e-9), label), flush=True)
        last_t, last_cpu = t, cpu
    proc.wait()
    reader.join()
    wall = time.monotonic() - start
    if proc.returncode != 0:
        print("graph-ascend failed with exit %d" % proc.returncode, file=sys.stderr)
        return 1
    print()
    totals = {}
    order = []
    prev_t, prev_cpu = 0.0, 0.0
    for t, cpu, label in samples:
        if label not in totals:
            totals[label] = [0.0, 0.0]
            order.append(label)
        totals[label][0] += t - prev_t
        totals[label][1] += cpu - prev_cpu
        prev_t, prev_cpu = t, cpu
    for label in order:
        w, c = totals[label]
        print("%-26s %6.2f s wall  %6.2f s CPU  %4.2f cores" % (label, w, c, c / max(w, 1e-9)))
    print("%-26s %6.2f s wall  %6.2f s CPU  %4.2f cores (sampled to %.2f s)" % (
        "whole run", wall, prev_cpu, prev_cpu / max(prev_t, 1e-9), prev_t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
