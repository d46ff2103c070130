"""Time of Match / Unmatch with children on the largest first-level subtree of a compare .vis, and how long
a GetView of another client waits meanwhile (the file's exclusive lock), straight over gRPC.

    .venv/bin/python bench/service/match_time.py --logdir DIR --file REL.vis \
        [--server build/bin/graph-ascend-server] [--rounds 20] [--json OUT.json]

Each round unmatches the subtree with children, then matches it again, while a second thread calls
GetView in a loop. Measures only (docs/RELIABILITY_SERVICE.md).
"""

import argparse
import collections
import json
import pathlib
import shutil
import tempfile
import threading
import time

from bench_service import load_stubs, start_server  # beside this script
from proc_stats import percentile


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--logdir", required=True)
    ap.add_argument("--file", required=True)
    default_server = pathlib.Path(__file__).resolve().parents[2] / "build/bin/graph-ascend-server"
    ap.add_argument("--server", default=str(default_server))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--root", action="store_true", help="the whole graph (the root with children)")
    ap.add_argument("--json")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ga-match-")
    try:
        pb, pb_grpc = load_stubs(tmp)
        server, stub = start_server(pb, pb_grpc, args.server, args.logdir, tmp)
        key = pb.ViewKey(session="m", file=args.file, side=0, micro_step=-1)
        hits = stub.Search(pb.SearchRequest(view=key, query="^", regex=True, limit=10000), timeout=600).hits
        sizes = collections.Counter(h.ancestors[1] if len(h.ancestors) > 1 else h.name for h in hits)
        top, size = sizes.most_common(1)[0]
        node = next(h.index for h in hits if h.name == top)
        if args.root:
            top, size, node = "(root)", len(hits) + 1, 0
        detail = stub.GetNodeDetail(pb.NodeRequest(view=key, node=node), timeout=60)
        bench = detail.node.matched
        request = pb.MatchRequest(file=args.file, npu_node=node, bench_node=bench, with_children=True)

        waits, stop = [], threading.Event()

        def viewer():
            other = pb.ViewKey(session="v", file=args.file, side=key.side, micro_step=-1)
            while not stop.is_set():
                t0 = time.perf_counter()
                stub.GetView(pb.ViewRequest(view=other), timeout=600)
                waits.append(time.perf_counter() - t0)

        t = threading.Thread(target=viewer, daemon=True)
        t.start()
        times = {"Unmatch": [], "Match": []}
        pairs = 0
        for _ in range(args.rounds):
            for rpc in ("Unmatch", "Match"):
                t0 = time.perf_counter()
                reply = getattr(stub, rpc)(request, timeout=600)
                times[rpc].append(time.perf_counter() - t0)
                pairs = max(pairs, len(reply.results))
        stop.set()
        t.join()
        server.stdin.close()
        server.wait(timeout=10)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out = {"server": args.server, "file": args.file, "subtree": top, "subtree_nodes": size, "pairs": pairs}
    for rpc, values in times.items():
        ms = [v * 1000 for v in values]
        out[rpc] = {"p50_ms": round(percentile(ms, 50), 1), "max_ms": round(max(ms), 1)}
    ms = [v * 1000 for v in waits]
    out["GetView_meanwhile"] = {"calls": len(ms), "p50_ms": round(percentile(ms, 50), 1), "max_ms": round(max(ms), 1)}
    print(json.dumps(out, indent=1))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
