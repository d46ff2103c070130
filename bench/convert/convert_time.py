#!/usr/bin/env python3
"""Time from "Convert" to the first graph on the page, through a real TensorBoard and the plugin.

    python3 bench/convert/convert_time.py [--nodes 100000] [--rounds 3] [--venv .venv]

Scales samples/gpt_statistics to NODES nodes a side (bench/scale/scale_sample.py) into
/tmp/convert-bench/logdir/dumps, starts the venv's tensorboard on that log directory, and per round
calls the routes the page calls: ConvertStart (graph_visualize, compare of npu/ with bench/), the
ConvertProgress stream until CONVERT_DONE, then OpenFile of the first output and GetView of its NPU
root: the first graph. Prints the seconds of each part and the total per round; the scratch folder
is removed at the end.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]


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
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--venv", default=str(ROOT / ".venv"))
    ap.add_argument("--work", default="/tmp/convert-bench")
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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tb = subprocess.Popen(
        [os.path.join(args.venv, "bin", "tensorboard"), "--logdir", str(logdir), "--host", "127.0.0.1",
         "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                post(base, "Health", {})
                break
            except OSError:
                time.sleep(0.5)
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
            print(f"round {round_}: convert {t1 - t0:.2f} s (builder {last['seconds']:.2f} s, "
                  f"{len(states)} progress messages, stages {stages}), open + first view {t2 - t1:.2f} s "
                  f"({len(view['nodes'])} nodes drawn), Convert -> first graph {t2 - t0:.2f} s", flush=True)
    finally:
        tb.terminate()
        tb.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
