"""Latency of graph-ascend-server on one .vis file: open time, then p50/p95 of
GetView, Expand, Collapse, Reveal, Search, Filter and GetNodeDetail, as the
plugin calls them (gRPC over a Unix socket, Python client).

    .venv/bin/python bench/service/bench_service.py --logdir DIR --file REL.vis \
        [--server build/bin/graph-ascend-server] [--rounds 200] [--seed 1] [--json OUT.json]

Starts its own server (cold: nothing cached), measures, stops it. The viewport of
every view request is a 1920x1080 screen at the page's default zoom (1.8), i.e.
1067x600 layout units, placed on the node of the request. Measures only; no
pass/fail (docs/PERFORMANCE.md has the figures and the bar).
"""

import argparse
import importlib
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import grpc
from grpc_tools import protoc
from proc_stats import child_pid, cpu_s, percentile, rss_mb, start_tensorboard, stop  # beside this script

ROOT = pathlib.Path(__file__).resolve().parents[2]
VIEW_W, VIEW_H = 1067, 600


def load_stubs(tmp):
    out = pathlib.Path(tmp) / "stubs"
    out.mkdir()
    proto = ROOT / "proto"
    args = [
        "protoc",
        f"-I{proto}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        str(proto / "vis.proto"),
        str(proto / "graph_service.proto"),
    ]
    if protoc.main(args) != 0:
        sys.exit("protoc failed")
    sys.path.insert(0, str(out))
    return importlib.import_module("graph_service_pb2"), importlib.import_module("graph_service_pb2_grpc")


def start_server(pb, pb_grpc, binary, logdir, tmp):
    """graph-ascend-server on a Unix socket in `tmp`, as the plugin starts it; returns (process, stub)."""
    sock = os.path.join(tmp, "s.sock")
    server = subprocess.Popen(
        [binary, "--logdir", logdir, "--socket", sock, "--die-after-stdin"],
        stdin=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    channel = grpc.insecure_channel("unix://" + sock, options=[("grpc.max_receive_message_length", 256 << 20)])
    stub = pb_grpc.GraphServiceStub(channel)
    stub.Health(pb.HealthRequest(), timeout=30, wait_for_ready=True)
    return server, stub


class Bench:
    def __init__(self, pb, grpc_mod, stub, file, rng):
        self.pb, self.stub, self.file, self.rng = pb, stub, file, rng
        self.times = {}

    def timed(self, op, fn, *args):
        t = time.perf_counter()
        reply = fn(*args, timeout=600)
        self.times.setdefault(op, []).append((time.perf_counter() - t) * 1000)
        return reply

    def key(self, session, side=0):
        return self.pb.ViewKey(session=session, file=self.file, side=side, micro_step=-1)

    def viewport_at(self, reply, node):
        box = next((n for n in reply.nodes if n.index == node), None)
        y = box.y if box else 0
        x = box.x if box else 0
        return self.pb.Rect(x=max(0, x - VIEW_W // 2), y=max(0, y - VIEW_H // 3), width=VIEW_W, height=VIEW_H)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logdir", required=True)
    ap.add_argument("--file", required=True, help="the .vis, relative to --logdir")
    ap.add_argument("--server", default=str(ROOT / "build" / "bin" / "graph-ascend-server"))
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument(
        "--http",
        action="store_true",
        help="go through a real `tensorboard --logdir` with the installed plugin (JSON over HTTP) instead of gRPC",
    )
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="ga-bench-")
    try:
        pb, pb_grpc = load_stubs(tmp)
        if args.http:
            board = TensorBoardStub(pb, args.logdir)
            try:
                board.Health(pb.HealthRequest(), timeout=60)
                result = run(pb, board, args, board.server_pid())
            finally:
                board.stop()
            result["via"] = "tensorboard HTTP"
            print_table(result)
            if args.json:
                pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
            return
        server, stub = start_server(pb, pb_grpc, args.server, args.logdir, tmp)
        result = run(pb, stub, args, server.pid)
        server.stdin.close()
        server.wait(timeout=10)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_table(result)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


class Js:
    """Attribute access to a JSON answer by the proto field names (`total_visible` -> "totalVisible")."""

    def __init__(self, value):
        self._v = value

    def __getattr__(self, name):
        head, *rest = name.split("_")
        v = self._v.get(head + "".join(w.capitalize() for w in rest))
        if isinstance(v, dict):
            return Js(v)
        if isinstance(v, list):
            return [Js(x) if isinstance(x, dict) else x for x in v]
        return v

    def __len__(self):
        return len(self._v)


class TensorBoardStub:
    """The GraphService methods over the plugin's HTTP routes of a real tensorboard (docs/API.md)."""

    def __init__(self, pb, logdir):
        from google.protobuf import json_format

        self.pb, self.json_format = pb, json_format
        self.proc, port = start_tensorboard(logdir)
        self.base = f"http://127.0.0.1:{port}/data/plugin/graph_ascend/api/"
        self.replies = {
            m.name: getattr(pb, m.output_type.name) for m in pb.DESCRIPTOR.services_by_name["GraphService"].methods
        }

    def server_pid(self):
        pid = child_pid(self.proc.pid, "graph-ascend-server")
        if pid is None:
            raise RuntimeError("no graph-ascend-server child")
        return pid

    def __getattr__(self, name):
        def call(request, timeout=600):
            body = self.json_format.MessageToJson(request).encode()
            req = urllib.request.Request(
                self.base + name, data=body, method="POST", headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=timeout) as res:
                data = res.read()
            # What a page does with the answer: JSON.parse (json.loads here); fields are read lazily.
            if name == "OpenFile":
                return [Js(json.loads(line)) for line in data.splitlines() if line]
            return Js(json.loads(data))

        return call

    def stop(self):
        stop(self.proc, timeout=30)


def open_file(pb, stub, file):
    """OpenFile as the page calls it: its progress stream read to the end; the FileInfo of `done`."""
    info = None
    for msg in stub.OpenFile(pb.FileRequest(file=file), timeout=600):
        if msg.done:
            info = msg.info
    return info


def run(pb, stub, args, pid):
    rng = random.Random(args.seed)
    b = Bench(pb, None, stub, args.file, rng)

    # Open, cold: the stream until done, then the first screen of the root.
    cpu0 = cpu_s(pid)
    t0 = time.perf_counter()
    info = open_file(pb, stub, args.file)
    open_ms = (time.perf_counter() - t0) * 1000
    open_cpu_s = cpu_s(pid) - cpu0
    root_view = b.timed(
        "GetView",
        stub.GetView,
        pb.ViewRequest(view=b.key("main"), viewport=pb.Rect(x=0, y=0, width=VIEW_W, height=VIEW_H)),
    )
    browsable_ms = (time.perf_counter() - t0) * 1000
    rss_after_open = rss_mb(pid)

    # All node names once (for random targets): a regex that matches every name.
    everything = stub.Search(pb.SearchRequest(view=b.key("main"), query="^", regex=True, limit=1), timeout=600)
    n_nodes = info.npu.nodes

    # Expand: walk down from the root, expanding a random collapsed visible node on screen each time;
    # collapse every 20 steps to keep the view a browsing session's size.
    reply = root_view
    for i in range(args.rounds):
        cands = [n for n in reply.nodes if n.expandable and not n.expanded]
        if not cands or i % 20 == 19:
            expanded = [n for n in reply.nodes if n.expanded and n.index != 0]
            if expanded:
                node = rng.choice(expanded).index
                reply = b.timed(
                    "Collapse",
                    stub.Collapse,
                    pb.NodeRequest(view=b.key("main"), node=node, viewport=b.viewport_at(reply, node)),
                )
                continue
            reply = root_view
            cands = [n for n in reply.nodes if n.expandable and not n.expanded]
        node = rng.choice(cands).index
        reply = b.timed(
            "Expand", stub.Expand, pb.NodeRequest(view=b.key("main"), node=node, viewport=b.viewport_at(reply, node))
        )
        reply = b.timed(
            "GetView", stub.GetView, pb.ViewRequest(view=b.key("main"), viewport=b.viewport_at(reply, node))
        )

    # Reveal: jump to random nodes one after the other in one tab (ancestors pile up as a user's would).
    for _ in range(args.rounds):
        node = rng.randrange(1, n_nodes)
        try:
            r = b.timed(
                "Reveal",
                stub.Reveal,
                pb.NodeRequest(
                    view=b.key("reveal"),
                    node=node,
                    viewport_from_node=True,
                    viewport=pb.Rect(x=-VIEW_W // 2, y=-VIEW_H // 3, width=VIEW_W, height=VIEW_H),
                ),
            )
        except grpc.RpcError:
            continue  # an orphan of the dump
        del r

    # Search: substring, case-insensitive, regex; first page of 200 like the page asks.
    # Every query differs from the ones before (the server keeps recent results for paging), in six
    # shapes: dense and rare substrings, case-insensitive, two regexes, no hit. Then the next page
    # of a result, as the page asks when the list scrolls.
    shapes = [
        lambda: (f"linear.{rng.randrange(100)}", False, False),
        lambda: (f"layers.{rng.randrange(1000)}.", False, False),
        lambda: (f"NORM.{rng.randrange(100)}", False, True),
        lambda: (rf"layers\.{rng.randrange(100)}\d*\.mlp", True, False),
        lambda: (rf"^Functional\.linear\.{rng.randrange(1, 100)}\d*\.forward$", True, False),
        lambda: (f"no-such-name-{rng.randrange(10**9)}", False, False),
    ]
    seen = set()
    for i in range(args.rounds):
        q, regex, ci = shapes[i % len(shapes)]()
        for _ in range(1000):
            if (q, regex, ci) not in seen:
                break
            q, regex, ci = shapes[i % len(shapes)]()
        seen.add((q, regex, ci))
        first = b.timed(
            "Search",
            stub.Search,
            pb.SearchRequest(view=b.key("main"), query=q, regex=regex, case_insensitive=ci, limit=200),
        )
        if first.total > 200:
            b.timed(
                "Search next page",
                stub.Search,
                pb.SearchRequest(view=b.key("main"), query=q, regex=regex, case_insensitive=ci, offset=200, limit=200),
            )

    # Filter: each bucket, unmatched, overflow levels.
    legend = len(info.meta.legend)
    for i in range(args.rounds):
        kind = i % 3
        if kind == 0 and legend:
            req = pb.FilterRequest(view=b.key("main"), buckets=[i % legend], limit=200)
        elif kind == 1:
            req = pb.FilterRequest(view=b.key("main"), unmatched=True, limit=200)
        else:
            req = pb.FilterRequest(view=b.key("main"), overflow=[1, 2, 3], limit=200)
        b.timed("Filter", stub.Filter, req)

    for _ in range(args.rounds):
        b.timed("GetNodeDetail", stub.GetNodeDetail, pb.NodeRequest(view=b.key("main"), node=rng.randrange(0, n_nodes)))

    ops = {}
    for op, values in b.times.items():
        ops[op] = {
            "n": len(values),
            "p50_ms": round(percentile(values, 50), 2),
            "p95_ms": round(percentile(values, 95), 2),
            "max_ms": round(max(values), 2),
        }
    return {
        "file": args.file,
        "nodes_per_side": n_nodes,
        "file_bytes": os.path.getsize(os.path.join(args.logdir, args.file)),
        "open_ms": round(open_ms, 1),
        "open_server_cpu_s": round(open_cpu_s, 2),
        "load_average": os.getloadavg()[0],
        "open_and_first_view_ms": round(browsable_ms, 1),
        "server_rss_mb_after_open": round(rss_after_open, 1),
        "server_rss_mb_at_end": round(rss_mb(pid), 1),
        "searchable_names": everything.total,
        "ops": ops,
    }


def print_table(r):
    print(f"{r['file']}: {r['nodes_per_side']} nodes a side, {r['file_bytes'] / 1e6:.1f} MB")
    print(
        f"  load average {r['load_average']:.1f}; open {r['open_ms']:.0f} ms "
        f"({r['open_server_cpu_s']:.2f} s server CPU), open + first view {r['open_and_first_view_ms']:.0f} ms, "
        f"server RSS {r['server_rss_mb_after_open']:.0f} MB after open, {r['server_rss_mb_at_end']:.0f} MB at end"
    )
    print(f"  {'op':<14}{'n':>6}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}")
    for op, s in r["ops"].items():
        print(f"  {op:<14}{s['n']:>6}{s['p50_ms']:>10.2f}{s['p95_ms']:>10.2f}{s['max_ms']:>10.2f}")


if __name__ == "__main__":
    main()
