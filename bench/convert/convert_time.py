#!/usr/bin/env python3
"""Time from "Convert" to the first graph on the page, through a real TensorBoard and the plugin.

    python3 bench/convert/convert_time.py [--nodes 100000] [--rounds 3] [--venv .venv]
                                          [--msprobe-rounds 1] [--msprobe-version 26.2.0-graph]

Scales samples/gpt_statistics to NODES nodes a side (bench/scale/scale_sample.py) into
/tmp/convert-bench/logdir/dumps, starts the venv's tensorboard on that log directory, and per round
calls the routes the page calls: ConvertStart (graph_visualize, compare of npu/ with bench/), the
ConvertProgress stream until CONVERT_DONE, then OpenFile of the first output and GetView of its NPU
root: the first graph. Prints the seconds of each part and the total per round.

Then the same through msprobe 26.2.0's own plugin and page routes (bench/reference/msprobe26_plugin.py,
venv made on first use by run_msprobe.sh): POST convertToGraph (its form's request: `msprobe
graph_visualize -tp npu -gp bench -o OUT -progress_log` as a child), its getConvertProgress event
stream until "done", then what its page calls to draw the result: load_meta_dir, loadGraphData,
loadGraphConfigInfo and changeNodeExpandState of the NPU root. Last line: the ratio of the best
totals. The scratch folder is removed at the end.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "reference"))
import msprobe26_plugin  # noqa: E402


def post(base, rpc, body, stream=False):
    req = urllib.request.Request(
        f"{base}/data/plugin/graph_ascend/api/{rpc}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=3600) as r:
        data = r.read().decode()
    if stream:
        return [json.loads(line) for line in data.splitlines() if line.strip()]
    return json.loads(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3, help="0: msprobe only")
    ap.add_argument("--venv", default=str(ROOT / ".venv"))
    ap.add_argument("--work", default="/tmp/convert-bench")
    ap.add_argument("--msprobe-rounds", type=int, default=1, help="0: graph-ascend only")
    ap.add_argument("--msprobe-version", default="26.2.0-graph",
                    help="bench/reference venv (26.2.0-graph: msprobe 26.2.0 without torch, which its "
                         "graph_visualize does not import)")
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    logdir = work / "logdir"
    shutil.rmtree(work, ignore_errors=True)
    (logdir / "dumps").mkdir(parents=True)
    subprocess.run(
        [sys.executable, str(ROOT / "bench/scale/scale_sample.py"), "--case", str(ROOT / "samples/gpt_statistics"),
         "--nodes", str(args.nodes), "--out", str(logdir / "dumps/scaled")],
        check=True, stdout=subprocess.DEVNULL,
    )
    try:
        ours = time_graph_ascend(args, logdir) if args.rounds > 0 else []
        theirs = []
        if args.msprobe_rounds > 0:
            msprobe26_plugin.install(args.msprobe_version)
            theirs = time_msprobe(args, logdir)
        if ours and theirs:
            print(f"Convert -> first graph at {args.nodes} nodes a side: graph-ascend {min(ours):.2f} s, "
                  f"msprobe {args.msprobe_version} {min(theirs):.2f} s (best rounds): msprobe takes "
                  f"{min(theirs) / min(ours):.1f}x as long", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def time_graph_ascend(args, logdir):
    """Rounds through graph-ascend's plugin; the Convert -> first graph seconds of each."""
    totals = []
    tensorboard = os.path.join(args.venv, "bin", "tensorboard")
    with msprobe26_plugin.tensorboard(tensorboard, logdir, lambda base: post(base, "Health", {})) as base:
        for round_ in range(args.rounds):
            session = f"bench{round_}"
            t0 = time.monotonic()
            job = post(base, "ConvertStart", {"session": session, "npu": "dumps/scaled/npu",
                                              "bench": "dumps/scaled/bench", "outputDir": f"out{round_}"})
            states = post(base, "ConvertProgress", {"session": session, "id": job["id"]}, stream=True)
            t1 = time.monotonic()
            last = states[-1]
            if last["state"] != "CONVERT_DONE":
                raise SystemExit(f"conversion ended {last['state']}: {last.get('errorMessage')}")
            path = last["outputs"][0]
            opened = post(base, "OpenFile", {"file": path}, stream=True)
            assert opened[-1]["done"], opened[-1]
            view = post(base, "GetView", {"view": {"session": session, "file": path, "side": "SIDE_NPU",
                                                   "microStep": -1}})
            t2 = time.monotonic()
            stages = sorted({s["stage"] for s in states})
            totals.append(t2 - t0)
            print(f"graph-ascend round {round_}: convert {t1 - t0:.2f} s (builder {last['seconds']:.2f} s, "
                  f"{len(states)} progress messages, stages {stages}), open + first view {t2 - t1:.2f} s "
                  f"({len(view['nodes'])} nodes drawn), Convert -> first graph {t2 - t0:.2f} s", flush=True)
    return totals


def time_msprobe(args, logdir):
    """Rounds through msprobe 26.2's own plugin, as its page's convert form drives it."""
    totals = []
    with msprobe26_plugin.serve(logdir, args.msprobe_version) as base:
        for round_ in range(args.msprobe_rounds):
            out = f"msprobe_out{round_}"
            t0 = time.monotonic()
            started = msprobe26_plugin.post(base, "convertToGraph", {
                "npu_path": "dumps/scaled/npu", "bench_path": "dumps/scaled/bench", "output_path": out,
                "is_print_compare_log": False, "overflow_check": False, "fuzzy_match": False})
            if not started.get("success"):
                raise SystemExit(f"msprobe convertToGraph refused: {started}")
            states = []
            for event in msprobe26_plugin.events(base, "getConvertProgress"):
                states.append(event)
                if event.get("status") in ("done", "error"):
                    break
            t1 = time.monotonic()
            if not states or states[-1].get("status") != "done":
                raise SystemExit(f"msprobe conversion ended {states[-1] if states else 'without a message'}")
            dbs = sorted((logdir / out).glob("*.vis.db"))
            if not dbs:
                raise SystemExit(f"msprobe reported done but wrote no .vis.db in {logdir / out}")
            tag = dbs[0].name[: -len(".vis.db")]
            meta = msprobe26_plugin.get(base, "load_meta_dir")
            if tag not in json.dumps(meta):
                raise SystemExit(f"msprobe's load_meta_dir does not list {tag}: {json.dumps(meta)[:300]}")
            loaded = msprobe26_plugin.get(base, "loadGraphData", timeout=3600, run=out, tag=tag, type="db", lang="en")
            if not loaded.get("success", False):
                raise SystemExit(f"msprobe's loadGraphData failed: {json.dumps(loaded)[:300]}")
            meta_data = {"run": out, "tag": tag, "type": "db", "lang": "en", "microStep": -1, "step": 0, "rank": 0}
            config = msprobe26_plugin.post(base, "loadGraphConfigInfo", {"metaData": meta_data}, timeout=3600)
            cfg = config.get("data", config)
            meta_data["step"] = (cfg.get("steps") or [0])[0]
            meta_data["rank"] = (cfg.get("ranks") or [0])[0]
            layout = msprobe26_plugin.post(base, "changeNodeExpandState",
                          {"nodeInfo": {"nodeName": "root", "nodeType": "NPU"}, "metaData": meta_data}, timeout=3600)
            layout = layout.get("data", layout)
            t2 = time.monotonic()
            if not layout:
                raise SystemExit(f"msprobe's changeNodeExpandState of the NPU root laid out nothing: {layout}")
            totals.append(t2 - t0)
            print(f"msprobe {args.msprobe_version} round {round_}: convert {t1 - t0:.2f} s ({len(states)} "
                  f"progress messages, last {states[-1]}), open + first view {t2 - t1:.2f} s ({len(layout)} "
                  f"nodes laid out, {dbs[0].stat().st_size / 2**20:.0f} MiB .vis.db), "
                  f"Convert -> first graph {t2 - t0:.2f} s", flush=True)
    return totals



if __name__ == "__main__":
    main()
