"""Times the Python API on one file: graph_ascend.open to its answer, the first divergence, one side
iterated, and the graph service's memory (docs/PERFORMANCE.md, "Python API").

    .venv/bin/python bench/service/python_api_open.py FILE.vis [--rounds 5]

Each round is a fresh interpreter-level open (a new private graph-ascend-server: its start is part of
the time) after `import graph_ascend`; the file is read from the page cache after the first round.
"""

import argparse
import os
import statistics
import time

import graph_ascend


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of the process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterate", action="store_true", help="also iterate the NPU side once a round")
    args = parser.parse_args()
    opens, firsts, walks, cpus = [], [], [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        f = graph_ascend.open(args.file)
        t1 = time.perf_counter()
        cpus.append(cpu_s(f._server.pid))
        first = f.first_divergence()
        t2 = time.perf_counter()
        opens.append(t1 - t0)
        firsts.append(t2 - t1)
        if args.iterate:
            count = sum(1 for _ in f.nodes("npu"))
            walks.append(time.perf_counter() - t2)
        memory = rss_mb(f._server.pid)
        f.close()
    print(f"{args.file}: {f.node_count('npu')} NPU nodes, {f.node_count('bench') if f.kind == 'compare' else 0} Bench")
    print(
        f"open (server start + OpenFile): median {statistics.median(opens):.2f} s, min {min(opens):.2f} s; "
        f"server CPU to the open's end: median {statistics.median(cpus):.2f} s"
    )
    print(f"first_divergence: median {statistics.median(firsts) * 1000:.0f} ms -> {first.name if first else None}")
    if walks:
        print(f"nodes('npu'), {count} nodes: median {statistics.median(walks):.2f} s")
    print(f"server RSS after open: {memory:.0f} MB")


if __name__ == "__main__":
    main()
