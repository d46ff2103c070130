#!/usr/bin/env python3
"""Checks that msprobe 26.2.0's own TensorBoard plugin (hierarchy_plugin, tab "graph_ascend",
shipped in the mindstudio-probe wheel) opens a .vis.db written by graph-ascend.

    python3 bench/reference/open_in_msprobe26_plugin.py [--sample cnn_statistics] [--config compare.json]
                                                       [--msprobe-version 26.2.0]

Builds samples/<sample>/<config> with build/bin/graph-ascend, writes it as a .vis.db
(`graph-ascend export --format db`) into a temporary log directory, starts the tensorboard of
bench/.venv-msprobe-26.2.0 (run_msprobe.sh --install) on it, on loopback, and drives the plugin's
routes as its page does: load_meta_dir (the file must be listed), loadGraphData, loadGraphConfigInfo
(task, colours, ranks, steps), loadGraphAllNodeList (node counts must equal ours),
changeNodeExpandState on the root of each side (every root child laid out) and getNodeInfo on a
matched node (its inputs must be ours). Prints one line per check; exit status 1 if any fails.
"""

import argparse
import glob
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

from msprobe26_plugin import ROOT, get, install, post, serve


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", default="cnn_statistics")
    ap.add_argument("--config", default="compare.json")
    ap.add_argument("--graph-ascend", default=os.path.join(ROOT, "build", "bin", "graph-ascend"))
    ap.add_argument("--msprobe-version", default="26.2.0",
                    help="bench/reference venv; 26.2.0-graph (no torch) holds the same plugin")
    args = ap.parse_args()
    install(args.msprobe_version)
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(("ok    " if ok else "FAIL  ") + what, flush=True)
        failures += 0 if ok else 1

    with tempfile.TemporaryDirectory() as tmp:
        built = os.path.join(tmp, "built")
        subprocess.run([args.graph_ascend, "graph", "-i", os.path.join(ROOT, "samples", args.sample, args.config),
                        "-o", built], check=True, capture_output=True)
        vis = sorted(glob.glob(os.path.join(built, "**", "*.vis"), recursive=True))
        run_dir = os.path.join(tmp, "logdir", "exported")
        os.makedirs(run_dir)
        tag = "compare_graph_ascend"
        db_path = os.path.join(run_dir, tag + ".vis.db")
        subprocess.run([args.graph_ascend, "export", *vis, "--format", "db", "-o", db_path], check=True,
                       capture_output=True)
        db = sqlite3.connect(db_path)
        step, rank = db.execute("SELECT step, rank FROM tb_nodes ORDER BY step, rank LIMIT 1").fetchone()
        counts = dict(db.execute("SELECT data_source, COUNT(*) FROM tb_nodes WHERE step = ? AND rank = ? "
                                 "GROUP BY data_source", (step, rank)).fetchall())
        roots = {src: json.loads(sub) for src, sub in db.execute(
            "SELECT data_source, sub_nodes FROM tb_nodes WHERE step = ? AND rank = ? AND up_node = ''", (step, rank))}
        name, inputs = db.execute(
            "SELECT node_name, input_data FROM tb_nodes WHERE step = ? AND rank = ? AND data_source = 'NPU' "
            "AND matched_node_link <> '[]' AND input_data <> '{}' ORDER BY node_order LIMIT 1", (step, rank)).fetchone()
        task = db.execute("SELECT task FROM tb_config").fetchone()[0]
        db.close()

        with serve(os.path.join(tmp, "logdir"), args.msprobe_version) as base:
            meta = get(base, "load_meta_dir")
            check(tag in json.dumps(meta), "load_meta_dir lists the .vis.db: " + json.dumps(meta)[:200])
            loaded = get(base, "loadGraphData", run="exported", tag=tag, type="db", lang="en")
            check(loaded.get("success", False), "loadGraphData: " + json.dumps(loaded)[:200])
            meta_data = {"run": "exported", "tag": tag, "type": "db", "lang": "en", "microStep": -1,
                         "step": step, "rank": rank}
            config = post(base, "loadGraphConfigInfo", {"metaData": meta_data})
            cfg = config.get("data", config)
            check(cfg.get("task") == task and bool(cfg.get("colors")) and not cfg.get("isSingleGraph", False),
                  "loadGraphConfigInfo: task %s, %d colours, ranks %s, steps %s" % (
                      cfg.get("task"), len(cfg.get("colors") or {}), cfg.get("ranks"), cfg.get("steps")))
            nodes = post(base, "loadGraphAllNodeList", {"metaData": meta_data})
            data = nodes.get("data", nodes)
            npu_list, bench_list = data.get("npuNodeList", []), data.get("benchNodeList", [])
            check(len(npu_list) == counts.get("NPU") and len(bench_list) == counts.get("Bench", 0),
                  "loadGraphAllNodeList: %d/%d nodes, the db has %s/%s" % (
                      len(npu_list), len(bench_list), counts.get("NPU"), counts.get("Bench")))
            for side, source in (("NPU", "NPU"), ("Bench", "Bench")):
                layout = post(base, "changeNodeExpandState",
                              {"nodeInfo": {"nodeName": "root", "nodeType": side}, "metaData": meta_data})
                layout = layout.get("data", layout)
                children = roots.get(source, [])
                shown = [k for k in layout if k.split("___")[-1] in children]
                check(len(children) > 0 and len(shown) == len(children),
                      "changeNodeExpandState root (%s): %d of %d root children laid out" % (
                          side, len(shown), len(children)))
            info = post(base, "getNodeInfo", {"nodeInfo": {"nodeName": name, "nodeType": "NPU"}, "metaData": meta_data})
            info = info.get("data", info)
            npu = info.get("npu") or {}
            shown_inputs = npu.get("input_data") or {}
            if isinstance(shown_inputs, str):
                shown_inputs = json.loads(shown_inputs)
            check(sorted(shown_inputs.keys()) == sorted(json.loads(inputs).keys()),
                  "getNodeInfo %s: inputs as written (%d)" % (name, len(shown_inputs)))
    print("msprobe 26.2.0's plugin opened the graph-ascend .vis.db: %s" % ("yes" if failures == 0 else "NO"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
