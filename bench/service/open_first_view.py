#!/usr/bin/env python3
"""Time "open in the page" through the graph service: the RPCs the page makes when a file is chosen
(OpenFile with its progress stream, then GetView of the NPU and Bench sides), until the first view
has its nodes; then how long until node details answer (GetNodeDetail of the root: of a .vis.db
being converted, read from the file by name while its details are written behind the hierarchy;
before that change it waited for them).

    .venv/bin/python bench/service/open_first_view.py --logdir DIR --file run/x.vis.db \
        [--cache DIR] [--wrap "perf record -e cpu-clock -o FILE --"] [--node NAME]

--cache is the conversion cache (XDG_CACHE_HOME of the server): empty for a cold open, kept for a
warm one. With --wrap the server runs under that command (a profiler: `perf stat -e instructions:u
-o FILE --` where the machine has counters) and is stopped right after the first view, so what it
measures is the open (the details written behind it only for the moments before the stop). Prints
one line. Measures only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_service import VIEW_H, VIEW_W, load_stubs, open_file  # noqa: E402
from proc_stats import cpu_s, rss_mb  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--logdir", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--cache", help="XDG_CACHE_HOME for the server (default: a new empty one)")
    ap.add_argument("--wrap", help="a command to run the server under (a profiler); stopped after the first view")
    ap.add_argument("--server", default=os.path.join(ROOT, "build", "bin", "graph-ascend-server"))
    ap.add_argument("--node", help="also time GetNodeDetail of this NPU node (found by Search first)")
    ap.add_argument("--search", help="also time a Search of the NPU side for this text right after the first view")
    ap.add_argument("--json", help="also write the figures (seconds) to this file")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pb, pb_grpc = load_stubs(tmp)
        env = dict(os.environ, XDG_CACHE_HOME=args.cache or os.path.join(tmp, "cache"))
        sock = os.path.join(tmp, "s.sock")
        cmd = [args.server, "--logdir", args.logdir, "--socket", sock, "--die-after-stdin"]
        if args.wrap:
            cmd = args.wrap.split() + cmd
        server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        channel = grpc.insecure_channel("unix://" + sock, options=[("grpc.max_receive_message_length", 256 << 20)])
        stub = pb_grpc.GraphServiceStub(channel)
        stub.Health(pb.HealthRequest(), timeout=60, wait_for_ready=True)
        pid = server.pid
        if args.wrap:  # the server is the wrapper's child
            time.sleep(0.2)
            pid = int(subprocess.check_output(["pgrep", "-P", str(server.pid)]).split()[0])
        load = os.getloadavg()[0]
        cpu0 = cpu_s(pid)
        t0 = time.perf_counter()
        info = open_file(pb, stub, args.file)
        opened = time.perf_counter() - t0
        nodes = 0
        for side in (0, 1) if info.meta.kind == 1 else (0,):
            key = pb.ViewKey(session="page", file=args.file, side=side)
            reply = stub.GetView(
                pb.ViewRequest(view=key, viewport=pb.Rect(x=0, y=0, width=VIEW_W, height=VIEW_H)), timeout=600
            )
            nodes += len(reply.nodes)
        first_view = time.perf_counter() - t0
        view_cpu = cpu_s(pid) - cpu0
        rss = rss_mb(pid)
        searched = ""
        if args.search:
            key = pb.ViewKey(session="page", file=args.file, side=0, micro_step=-1)  # all, as the page asks
            asked = time.perf_counter()
            hits = stub.Search(pb.SearchRequest(view=key, query=args.search), timeout=600)
            searched = f"; Search '{args.search}' {time.perf_counter() - asked:.3f} s ({hits.total} hits)"
        if args.wrap:
            server.stdin.close()
            server.wait()
            print(
                f"{args.file}: load {load:.1f}; open {opened:.3f} s, first view ({nodes} nodes) {first_view:.3f} s, "
                f"{view_cpu:.2f} s server CPU, {rss:.0f} MB (under {args.wrap}){searched}"
            )
            return
        key = pb.ViewKey(session="page", file=args.file, side=0)
        asked = time.perf_counter()
        stub.GetNodeDetail(pb.NodeRequest(view=key, node=0), timeout=600)
        details = time.perf_counter() - t0
        call = time.perf_counter() - asked
        node_call = ""
        if args.node:
            hits = stub.Search(pb.SearchRequest(view=key, query=args.node), timeout=600)
            asked = time.perf_counter()
            reply = stub.GetNodeDetail(pb.NodeRequest(view=key, node=hits.hits[0].index), timeout=600)
            node_call = (
                f"; {args.node} at {time.perf_counter() - t0:.2f} s (the call {time.perf_counter() - asked:.3f} s, "
                f"{len(reply.detail.input) + len(reply.detail.output)} items, matched {reply.HasField('matched')}, "
                f"{len(reply.stack)} stack frames)"
            )
        total_cpu = cpu_s(pid) - cpu0
        server.stdin.close()
        server.wait()
        if args.json:
            figures = {"open_s": opened, "first_view_s": first_view, "server_cpu_s": view_cpu, "details_s": details}
            with open(args.json, "w") as f:
                json.dump(figures, f)
        print(
            f"{args.file}: load {load:.1f}; open {opened:.3f} s, first view ({nodes} nodes) {first_view:.3f} s wall, "
            f"{view_cpu:.2f} s server CPU, {rss:.0f} MB; node details answer at {details:.2f} s "
            f"(the call {call:.3f} s) "
            f"({total_cpu:.2f} s server CPU in all){node_call}{searched}"
        )


if __name__ == "__main__":
    try:
        main()
    except grpc.RpcError as e:
        sys.exit(f"open_first_view: {e.code().name}: {e.details()}")
