#!/usr/bin/env python3
"""Time msprobe 26.2.0's own TensorBoard plugin (graph_ascend tab of the mindstudio-probe wheel)
opening one .vis.db, as its page opens a graph: load_meta_dir, loadGraphData, loadGraphConfigInfo,
then changeNodeExpandState on the NPU root (the first screen).

    python3 bench/service/open_in_msprobe26_plugin_time.py --db FILE.vis.db \
        [--venv bench/.venv-msprobe-26.2.0-graph] [--json OUT.json] \
        [--side-by-side [--rounds N] [--ga-python .venv/bin/python] [--server build/bin/graph-ascend-server]]

The file is hard-linked into a temporary log directory. Prints one line: wall times of the open and
of open + first screen, and the CPU and RSS of the tensorboard process. With --side-by-side, each of
N rounds times msprobe's plugin (a fresh tensorboard: it keeps nothing between runs) and then
graph-ascend's cold open of the same file (bench/service/open_first_view.py with a new empty
conversion cache: OpenFile, then GetView of both sides), one after the other on the same machine
and load, one line each, then the medians of both and their ratio. Measures only.
"""

import argparse
import json
import os
import pathlib
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from proc_stats import cpu_s, rss_mb, stop  # beside this script

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN = "run"


def call(base, route, body=None, **params):
    url = f"{base}/data/plugin/graph_ascend/{route}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=3600) as r:
        return json.loads(r.read().decode())


def graph_ascend_cold(args, src):
    """graph-ascend's cold open of `src` (an empty conversion cache), as open_first_view.py prints it."""
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="ga-cold-bench-"))
    try:
        logdir = tmp / "logdir"  # the cache must lie outside the log directory
        (logdir / RUN).mkdir(parents=True)
        try:
            os.link(src, logdir / RUN / src.name)
        except OSError:
            shutil.copyfile(src, logdir / RUN / src.name)
        bench = ROOT / "bench" / "service" / "open_first_view.py"
        figures = tmp / "figures.json"
        cmd = [args.ga_python, str(bench), "--logdir", str(logdir), "--file", f"{RUN}/{src.name}",
               "--cache", str(tmp / "cache"), "--server", args.server, "--json", str(figures)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"open_first_view.py: {out.stderr.strip()[-500:]}")
        return out.stdout.strip(), json.loads(figures.read_text())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--venv", default=str(ROOT / "bench" / ".venv-msprobe-26.2.0-graph"))
    ap.add_argument("--json")
    ap.add_argument("--side-by-side", action="store_true", help="also graph-ascend's cold open, round after round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ga-python", default=str(ROOT / ".venv" / "bin" / "python"))
    ap.add_argument("--server", default=str(ROOT / "build" / "bin" / "graph-ascend-server"))
    args = ap.parse_args()
    src = pathlib.Path(args.db).resolve()
    if not args.side_by_side:
        msprobe_round(args, src)
        return 0
    theirs, ours = [], []
    for i in range(args.rounds):
        theirs.append(msprobe_round(args, src)["open_and_first_screen_s"])
        line, figures = graph_ascend_cold(args, src)
        ours.append(figures["first_view_s"])
        print("graph-ascend, cold: " + line, flush=True)
    a, b = statistics.median(theirs), statistics.median(ours)
    print(
        f"median of {args.rounds} rounds, open + first screen: msprobe 26.2.0 plugin {a * 1000:.1f} ms, "
        f"graph-ascend cold {b * 1000:.1f} ms (graph-ascend / msprobe {b / a:.2f})",
        flush=True,
    )


def msprobe_round(args, src):
    tag = src.name[: -len(".vis.db")]
    with sqlite3.connect(f"file:{src}?immutable=1", uri=True) as db:
        step, rank = db.execute("SELECT step, rank FROM tb_nodes ORDER BY step, rank LIMIT 1").fetchone()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="ga-msprobe26-bench-"))
    try:
        (tmp / RUN).mkdir()
        try:
            os.link(src, tmp / RUN / src.name)
        except OSError:
            shutil.copyfile(src, tmp / RUN / src.name)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        tb = subprocess.Popen(
            [os.path.join(args.venv, "bin", "tensorboard"), "--logdir", str(tmp), "--host", "127.0.0.1",
             "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(600):
                try:
                    urllib.request.urlopen(base + "/data/plugins_listing", timeout=5).read()
                    break
                except OSError:
                    time.sleep(0.5)
            else:
                raise SystemExit("tensorboard did not start")
            cpu0 = cpu_s(tb.pid)
            t0 = time.perf_counter()
            listing = call(base, "load_meta_dir")
            if tag not in json.dumps(listing):
                raise SystemExit(f"the plugin does not list {src.name}: {json.dumps(listing)[:300]}")
            loaded = call(base, "loadGraphData", run=RUN, tag=tag, type="db", lang="en")
            if not loaded.get("success", False):
                raise SystemExit("loadGraphData: " + json.dumps(loaded)[:300])
            meta = {"run": RUN, "tag": tag, "type": "db", "lang": "en", "microStep": -1, "step": step, "rank": rank}
            call(base, "loadGraphConfigInfo", {"metaData": meta})
            open_s = time.perf_counter() - t0
            layout = call(base, "changeNodeExpandState",
                          {"nodeInfo": {"nodeName": "root", "nodeType": "NPU"}, "metaData": meta})
            first_screen_s = time.perf_counter() - t0
            if not layout.get("data", layout):
                raise SystemExit("changeNodeExpandState root: " + json.dumps(layout)[:300])
            result = {
                "file": str(src),
                "open_s": round(open_s, 4),
                "open_and_first_screen_s": round(first_screen_s, 4),
                "tensorboard_cpu_s": round(cpu_s(tb.pid) - cpu0, 2),
                "tensorboard_rss_mb": round(rss_mb(tb.pid), 1),
                "load_average": os.getloadavg()[0],
            }
        finally:
            stop(tb)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"msprobe 26.2.0 plugin: open {result['open_s']:.3f} s, open + first screen "
        f"{result['open_and_first_screen_s']:.3f} s, {result['tensorboard_cpu_s']:.2f} s tensorboard CPU, "
        f"RSS {result['tensorboard_rss_mb']:.0f} MB (load average {result['load_average']:.1f})",
        flush=True,
    )
    return result


if __name__ == "__main__":
    sys.exit(main())
