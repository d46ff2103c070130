#!/usr/bin/env python3
"""Checks that tb_graph_ascend 8.x (the reference TensorBoard plugin, from PyPI)
opens a graph-ascend result exported to msprobe's JSON .vis.

    python3 bench/reference/open_in_tb_graph_ascend.py [--version 8.1.2] [--sample cnn_statistics]

Builds samples/<sample>/compare.json with build/bin/graph-ascend, exports it
(`graph-ascend export`) into a temporary log directory, starts the reference
venv's tensorboard (bench/.venv-msprobe-<version>, created by
run_msprobe.sh --install, which carries tb-graph-ascend) on it, and drives the
plugin's own routes the way its page does: load_meta_dir, loadGraphData
(the SSE stream must end with done), loadGraphConfigInfo,
loadGraphAllNodeList (node counts must equal the export's),
changeNodeExpandState on the root of both sides (the root's children must
come back laid out) and getNodeInfo on a matched node (its inputs must be the
export's). Prints one line per check; exit status 1 if any fails.
"""

import argparse
import glob
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def get(base, route, **params):
    query = urllib.parse.urlencode({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in params.items()})
    with urllib.request.urlopen(f"{base}/data/plugin/graph_ascend/{route}?{query}", timeout=120) as r:
        return r.read().decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default="8.1.2")
    ap.add_argument("--sample", default="cnn_statistics")
    ap.add_argument("--graph-ascend", default=os.path.join(ROOT, "build", "bin", "graph-ascend"))
    args = ap.parse_args()
    venv = os.path.join(ROOT, "bench", ".venv-msprobe-" + args.version)
    subprocess.run([os.path.join(ROOT, "bench", "reference", "run_msprobe.sh"), "--version", args.version,
                    "--install"], check=True)
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(("ok    " if ok else "FAIL  ") + what, flush=True)
        failures += 0 if ok else 1

    with tempfile.TemporaryDirectory() as tmp:
        built = os.path.join(tmp, "built")
        subprocess.run([args.graph_ascend, "graph", "-i", os.path.join(ROOT, "samples", args.sample, "compare.json"),
                        "-o", built], check=True, capture_output=True)
        vis = glob.glob(os.path.join(built, "*.vis"))[0]
        run_dir = os.path.join(tmp, "logdir", "exported")
        os.makedirs(run_dir)
        exported = os.path.join(run_dir, "compare_graph_ascend.vis")
        subprocess.run([args.graph_ascend, "export", vis, "-o", exported], check=True, capture_output=True)
        with open(exported) as f:
            doc = json.load(f)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        tb = subprocess.Popen([os.path.join(venv, "bin", "tensorboard"), "--logdir", os.path.join(tmp, "logdir"),
                               "--host", "127.0.0.1", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(240):
                try:
                    meta = json.loads(get(base, "load_meta_dir", isSafeCheck=False))
                    break
                except OSError:
                    time.sleep(0.5)
            else:
                raise SystemExit("tensorboard with tb_graph_ascend did not start")
            tags = json.dumps(meta)
            check("compare_graph_ascend" in tags, "load_meta_dir lists the exported file: " + tags[:160])
            run, tag = "exported", "compare_graph_ascend"
            stream = get(base, "loadGraphData", run=run, tag=tag)
            events = [json.loads(line[5:]) for line in stream.splitlines() if line.startswith("data:")]
            check(any(e.get("done") for e in events) and not any(e.get("error") for e in events),
                  "loadGraphData parses the file (last event %s)" % (events[-1] if events else None))
            config = json.loads(get(base, "loadGraphConfigInfo", run=run, tag=tag))
            cfg = config.get("data", config)
            check(cfg.get("task") == doc["task"] and bool(cfg.get("colors")) and not cfg.get("isSingleGraph", False),
                  "loadGraphConfigInfo: task %s, %d colours" % (cfg.get("task"), len(cfg.get("colors") or {})))
            nodes = json.loads(get(base, "loadGraphAllNodeList", run=run, tag=tag, microStep=-1))
            data = nodes.get("data", nodes)
            npu_list, bench_list = data.get("npuNodeList", []), data.get("benchNodeList", [])
            check(len(npu_list) == len(doc["NPU"]["node"]) and len(bench_list) == len(doc["Bench"]["node"]),
                  "loadGraphAllNodeList: %d/%d nodes, export has %d/%d" % (
                      len(npu_list), len(bench_list), len(doc["NPU"]["node"]), len(doc["Bench"]["node"])))
            meta_data = {"run": run, "tag": tag, "microStep": -1, "type": "json"}
            for side in ("NPU", "Bench"):
                layout = json.loads(get(base, "changeNodeExpandState", nodeInfo={"nodeName": "root", "nodeType": side},
                                        metaData=meta_data))
                layout = layout.get("data", layout)
                root = doc[side]["node"][doc[side]["root"]]
                shown = [k for k in layout if k.split("___")[-1] in root["subnodes"]]
                check(len(shown) == len(root["subnodes"]),
                      "changeNodeExpandState root (%s): %d of %d root children laid out" % (
                          side, len(shown), len(root["subnodes"])))
            name = next(k for k, v in doc["NPU"]["node"].items() if v["matched_node_link"] and v["input_data"])
            info = json.loads(get(base, "getNodeInfo", nodeInfo={"nodeName": name, "nodeType": "NPU"},
                                  metaData=meta_data))
            info = info.get("data", info)
            npu = info.get("npu") or {}
            check(sorted((npu.get("input_data") or {}).keys()) == sorted(doc["NPU"]["node"][name]["input_data"].keys()),
                  "getNodeInfo %s: inputs as exported" % name)
        finally:
            tb.terminate()
            tb.wait()
    print("tb_graph_ascend %s opened the exported graph: %s" % (args.version, "yes" if failures == 0 else "NO"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
