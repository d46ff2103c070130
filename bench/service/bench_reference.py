"""The same measurements as bench_service.py, on tb_graph_ascend's own backend
(the reference TensorBoard plugin, PyPI tb-graph-ascend) opening the
reference's output for the same dump (msprobe's JSON .vis or .vis.db).

    python3 bench/service/bench_reference.py --vis bench/out/reference/gpt_100000-compare-8.1.2/compare_*.vis \
        [--venv bench/.venv-tb-graph-ascend] [--rounds 200] [--seed 1] [--json OUT.json]

The venv is created on first use (pip install tb-graph-ascend==8.3.2, which pulls tensorboard).
Starts `tensorboard --logdir TMP` from it with the file hard-linked into TMP/run/, then drives the
routes the reference page calls (plugin reference §5): loadGraphData (SSE) + loadGraphConfigInfo +
changeNodeExpandState(root) to open; changeNodeExpandState to expand, collapse and reveal;
loadGraphAllNodeList for search (the reference filters names in the browser); /screen for the
precision filter; getNodeInfo for details. Measures only.
"""

import argparse
import json
import os
import pathlib
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from proc_stats import percentile, rss_mb, stop  # beside this script

ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCE = "tb-graph-ascend==8.3.2"
# The run directory; not "run", which the reference also uses as a key of its own state.
RUN = "graph"


def ensure_venv(venv: pathlib.Path):
    if not (venv / "bin" / "tensorboard").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", REFERENCE], check=True)


class Board:
    def __init__(self, venv, logdir):
        self.proc = subprocess.Popen(
            [str(venv / "bin" / "tensorboard"), "--logdir", str(logdir), "--port", "0", "--host", "127.0.0.1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self.port = None
        ready = threading.Event()

        def drain():
            for line in self.proc.stdout:
                m = re.search(r"TensorBoard \S+ at http://[^:]+:(\d+)/", line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=drain, daemon=True).start()
        if not ready.wait(120) or self.port is None:
            raise RuntimeError("tensorboard did not start")
        self.base = f"http://127.0.0.1:{self.port}/data/plugin/graph_ascend"

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=3600) as r:
            return r.read()

    def post(self, path, body):
        req = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=3600) as r:
            return json.loads(r.read())

    def stop(self):
        stop(self.proc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vis", required=True, help="the reference's output file (.vis JSON or .vis.db)")
    ap.add_argument("--venv", default=str(ROOT / "bench" / ".venv-tb-graph-ascend"))
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    venv = pathlib.Path(args.venv)
    ensure_venv(venv)
    src = pathlib.Path(args.vis).resolve()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="ga-ref-bench-"))
    try:
        (tmp / RUN).mkdir()
        target = tmp / RUN / src.name
        try:
            os.link(src, target)
        except OSError:
            shutil.copyfile(src, target)
        board = Board(venv, tmp)
        try:
            result = run(board, src, args)
        finally:
            board.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print_table(result)


def run(board, src, args):
    rng = random.Random(args.seed)
    times = {}

    def timed(op, fn, *a):
        if op not in times:
            print(f"bench_reference: {op} ...", file=sys.stderr, flush=True)
        t = time.perf_counter()
        out = fn(*a)
        times.setdefault(op, []).append((time.perf_counter() - t) * 1000)
        return out

    is_db = src.name.endswith(".vis.db")
    tag = src.name[: -len(".vis.db")] if is_db else src.name[: -len(".vis")]
    meta = {"run": RUN, "tag": tag, "type": "db" if is_db else "json", "lang": "en", "microStep": -1}

    t0 = time.perf_counter()
    listing = json.loads(board.get("/load_meta_dir"))  # the page lists runs first; it fills the run table
    if RUN not in (listing.get("data") or {}):
        raise RuntimeError(f"the reference does not list the file: {listing}")
    query = urllib.parse.urlencode({"run": RUN, "tag": tag, "type": meta["type"], "lang": "en"})
    stream = board.get(f"/loadGraphData?{query}").decode()
    if not is_db and '"done": true' not in stream:
        raise RuntimeError("loadGraphData did not finish: " + stream[-500:])
    open_ms = (time.perf_counter() - t0) * 1000
    config = board.post("/loadGraphConfigInfo", {"metaData": meta})
    if "data" not in config:
        raise RuntimeError(f"loadGraphConfigInfo: {config}")
    config = config["data"]
    if is_db:
        meta["rank"] = (config.get("ranks") or [0])[0]
        meta["step"] = (config.get("steps") or [0])[0]
    root = timed(
        "GetView",
        board.post,
        "/changeNodeExpandState",
        {"metaData": meta, "nodeInfo": {"nodeName": "root", "nodeType": "NPU"}},
    )
    browsable_ms = (time.perf_counter() - t0) * 1000
    rss_after_open = rss_mb(board.proc.pid)

    names = timed("Search", board.post, "/loadGraphAllNodeList", {"metaData": meta})["data"]["npuNodeList"]

    def expand(name, op):
        return timed(
            op,
            board.post,
            "/changeNodeExpandState",
            {"metaData": meta, "nodeInfo": {"nodeName": name, "nodeType": "NPU"}},
        )["data"]

    def plain(n):
        return n[4:] if n.startswith(("N___", "B___")) else n

    visible = root["data"]
    for i in range(args.rounds):
        cands = [plain(k) for k, v in visible.items() if v.get("nodeType") != 1 and not v.get("expand")]
        if not cands or i % 20 == 19:
            expanded = [plain(k) for k, v in visible.items() if v.get("expand") and not v.get("isRoot")]
            if expanded:
                visible = expand(rng.choice(expanded), "Collapse")
                continue
        if not cands:
            break
        visible = expand(rng.choice(cands), "Expand")

    board.post("/changeNodeExpandState", {"metaData": meta, "nodeInfo": {"nodeName": "root", "nodeType": "NPU"}})
    for _ in range(args.rounds):
        expand(rng.choice(names), "Reveal")

    for _ in range(max(1, args.rounds // 10)):
        timed("Search", board.post, "/loadGraphAllNodeList", {"metaData": meta})

    colors = config.get("colors") or {}
    ranges = [v["value"] for v in colors.values() if isinstance(v.get("value"), list) and len(v["value"]) == 2]
    for i in range(args.rounds):
        values = [ranges[i % len(ranges)]] if ranges and i % 3 != 1 else [-1]
        timed("Filter", board.post, "/screen", {"metaData": meta, "type": "precision", "values": values})

    for _ in range(args.rounds):
        timed(
            "GetNodeDetail",
            board.post,
            "/getNodeInfo",
            {"metaData": meta, "nodeInfo": {"nodeName": rng.choice(names), "nodeType": "NPU"}},
        )

    ops = {
        op: {
            "n": len(v),
            "p50_ms": round(percentile(v, 50), 2),
            "p95_ms": round(percentile(v, 95), 2),
            "max_ms": round(max(v), 2),
        }
        for op, v in times.items()
    }
    return {
        "file": str(src),
        "file_bytes": src.stat().st_size,
        "nodes_per_side": len(names),
        "open_ms": round(open_ms, 1),
        "load_average": os.getloadavg()[0],
        "open_and_first_view_ms": round(browsable_ms, 1),
        "tensorboard_rss_mb_after_open": round(rss_after_open, 1),
        "tensorboard_rss_mb_at_end": round(rss_mb(board.proc.pid), 1),
        "ops": ops,
    }


def print_table(r):
    print(
        f"reference tb_graph_ascend on {r['file']}: {r['nodes_per_side']} nodes a side, {r['file_bytes'] / 1e6:.1f} MB"
    )
    print(
        f"  load average {r['load_average']:.1f}; open {r['open_ms']:.0f} ms, "
        f"open + first view {r['open_and_first_view_ms']:.0f} ms, tensorboard RSS {r['tensorboard_rss_mb_after_open']:.0f} MB after open"
    )
    print(f"  {'op':<14}{'n':>6}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}")
    for op, s in r["ops"].items():
        print(f"  {op:<14}{s['n']:>6}{s['p50_ms']:>10.2f}{s['p95_ms']:>10.2f}{s['max_ms']:>10.2f}")


if __name__ == "__main__":
    main()
