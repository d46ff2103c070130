#!/usr/bin/env python3
"""Moves manual-match configs between tb_graph_ascend 8.3.2 and graph-ascend, both ways.

    python3 bench/reference/config_roundtrip.py [--sample cnn_statistics]

Builds samples/<sample>/compare.json with build/bin/graph-ascend and exports it
to msprobe's JSON .vis (`graph-ascend export`) in a temporary log directory.

1. tb_graph_ascend (bench/.venv-tb-graph-ascend-8.3.2, made from
   requirements-tb-graph-ascend-8.3.2.txt) unmatches and rematches a pair
   through its own routes and saves the config (saveMatchedRelations).
2. graph-ascend (this repository's .venv: tensorboard + the GRAPH_ASCEND
   plugin) lists that config beside the file (ListMatchConfigs), unmatches the
   pair, applies the config (LoadMatches): the pair is matched again. It then
   saves its own config (SaveMatches) over tb_graph_ascend's.
3. A fresh tb_graph_ascend unmatches the pairs of graph-ascend's config and
   applies it (addMatchNodesByConfig): every pair is matched.
4. Colours: graph-ascend saves edited thresholds (SetLegend save), whose
   Colors object tb_graph_ascend takes as they are (updateColors, which writes
   them into the .vis); a fresh graph-ascend then opens that .vis with them.

Both files must be what Python's json.dump(indent=4, ensure_ascii=False)
writes, byte for byte the same for the same pairs. Prints one line per check; exit status 1 if any fails.
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
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIR = "Module.fc.Linear.forward.0"
TWIN = "Module.fc.Linear.backward.0"  # both tools (un)match the forward/backward twin too


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def post(url, body, headers=None):
    headers = {"Content-Type": "application/json", **(headers or {})}
    req = urllib.request.Request(url, json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return json.loads(e.read().decode())


class Tensorboard:
    def __init__(self, venv, logdir, ready):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(logdir, "..", "cache"))
        self.proc = subprocess.Popen([os.path.join(venv, "bin", "tensorboard"), "--logdir", logdir, "--host",
                                      "127.0.0.1", "--port", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        for _ in range(240):
            try:
                if ready(self):
                    return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise SystemExit(f"tensorboard of {venv} did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def tb_graph_ascend(venv, logdir, run, tag):
    meta = {"run": run, "tag": tag, "microStep": -1, "type": "json", "lang": "en"}

    def ready(tb):
        with urllib.request.urlopen(f"{tb.base}/data/plugin/graph_ascend/load_meta_dir?isSafeCheck=false",
                                    timeout=30) as r:
            r.read()
        query = f"run={run}&tag={tag}&type=json&lang=en"
        with urllib.request.urlopen(f"{tb.base}/data/plugin/graph_ascend/loadGraphData?{query}", timeout=120) as r:
            return b'"done": true' in r.read()

    tb = Tensorboard(venv, logdir, ready)

    def call(route, **body):
        return post(f"{tb.base}/data/plugin/graph_ascend/{route}", {"metaData": meta, **body})

    # Its unmatch needs the match lists loaded first (plugin reference §11.11), as its page does.
    call("loadGraphAllNodeList")
    return tb, call


def graph_ascend(logdir):
    tb = Tensorboard(os.path.join(ROOT, ".venv"), logdir, lambda tb: "version" in post(
        f"{tb.base}/data/plugin/graph_ascend/api/Health", {}))

    def call(rpc, **body):
        return post(f"{tb.base}/data/plugin/graph_ascend/api/{rpc}", body, {"Origin": tb.base})

    return tb, call


def exported_sample(cli, sample, tmp, vis):
    """samples/<sample>/compare.json built by graph-ascend and exported to msprobe's JSON .vis at `vis`."""
    out = os.path.join(tmp, "built")
    subprocess.run([cli, "graph", "-i", os.path.join(ROOT, "samples", sample, "compare.json"), "-o", out],
                   check=True, capture_output=True)
    os.makedirs(os.path.dirname(vis), exist_ok=True)
    built = glob.glob(os.path.join(out, "*.vis"))[0]
    subprocess.run([cli, "export", built, "-o", vis], check=True, capture_output=True)
    return vis


def dumped_by_python(text):
    return text == json.dumps(json.loads(text), ensure_ascii=False, indent=4)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", default="cnn_statistics")
    ap.add_argument("--graph-ascend", default=os.path.join(ROOT, "build", "bin", "graph-ascend"))
    args = ap.parse_args()
    venv = os.path.join(ROOT, "bench", ".venv-tb-graph-ascend-8.3.2")
    if not os.path.exists(os.path.join(venv, "bin", "tensorboard")):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "-r",
                        os.path.join(ROOT, "bench", "reference", "requirements-tb-graph-ascend-8.3.2.txt")], check=True)
    results = []

    def check(ok, what):
        results.append(bool(ok))
        print(f"{'ok   ' if ok else 'FAIL '} {what}", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        logdir = os.path.join(tmp, "logdir")
        run, tag = "exported", "compare_graph_ascend"
        vis = exported_sample(args.graph_ascend, args.sample, tmp, os.path.join(logdir, run, tag + ".vis"))
        config = vis + ".config"

        # 1. tb_graph_ascend writes a config.
        tb, call = tb_graph_ascend(venv, logdir, run, tag)
        try:
            r = call("deleteMatchNodes", npuNodeName=PAIR, benchNodeName=PAIR, isUnMatchChildren=False)
            check(r.get("success") is True, f"tb_graph_ascend unmatches {PAIR}: {str(r)[:120]}")
            r = call("addMatchNodes", npuNodeName=PAIR, benchNodeName=PAIR, isMatchChildren=False)
            check(r.get("success") is True, f"tb_graph_ascend matches it again: {str(r)[:120]}")
            r = call("saveMatchedRelations")
            check(r.get("data") == tag + ".vis.config", f"tb_graph_ascend saves {r.get('data')}")
        finally:
            tb.stop()
        with open(config, encoding="utf-8") as f:
            theirs = f.read()
        check(json.loads(theirs) == {PAIR: PAIR, TWIN: TWIN} and dumped_by_python(theirs), f"its config: {theirs!r}")

        # 2. graph-ascend lists and applies it, then saves its own.
        file = f"{run}/{tag}.vis"
        ours_tb, api = graph_ascend(logdir)
        try:
            listed = api("ListMatchConfigs", file=file)
            paths = [c["path"] for c in listed.get("configs", [])]
            check(paths == [f"{file}.config"] and listed.get("own") == f"{file}.config",
                  f"graph-ascend lists it as its own config: {listed}")
            view = {"session": "roundtrip", "file": file, "side": "SIDE_NPU", "microStep": -1}
            hits = api("Search", view=view, query=f"^{PAIR.replace('.', '[.]')}$", regex=True)
            npu = hits["hits"][0]["index"]
            bench = api("Search", view=dict(view, side="SIDE_BENCH"), query=f"^{PAIR.replace('.', '[.]')}$",
                        regex=True)["hits"][0]["index"]
            r = api("Unmatch", file=file, npuNode=npu, benchNode=bench, withChildren=False)
            check(all(x["ok"] for x in r["results"]), f"graph-ascend unmatches {PAIR} (and its twin)")
            r = api("LoadMatches", file=file, config=f"{file}.config")
            check([(x["npu"], x["ok"]) for x in r.get("results", [])] == [(PAIR, True), (TWIN, True)],
                  f"graph-ascend applies tb_graph_ascend's config: {r.get('results')}")
            detail = api("GetNodeDetail", view=view, node=npu)
            check(detail["node"]["matched"] == bench, f"{PAIR} is matched again")
            saved = api("SaveMatches", file=file)
            check(saved.get("path") == f"{file}.config", f"graph-ascend saves {saved}")
        finally:
            ours_tb.stop()
        with open(config, encoding="utf-8") as f:
            ours = f.read()
        pairs = json.loads(ours)
        check(ours == theirs, f"graph-ascend's config has tb_graph_ascend's bytes: {ours!r}")

        # 3. A fresh tb_graph_ascend applies graph-ascend's config.
        tb, call = tb_graph_ascend(venv, logdir, run, tag)
        try:
            for npu_name, bench_name in pairs.items():
                call("deleteMatchNodes", npuNodeName=npu_name, benchNodeName=bench_name, isUnMatchChildren=False)
            r = call("addMatchNodesByConfig", configFile=tag + ".vis.config")
            results = (r.get("data") or {}).get("matchResult")
            check(r.get("success") is True and results == [True] * len(pairs),
                  f"tb_graph_ascend applies graph-ascend's config: {str(r)[:160]}")
        finally:
            tb.stop()

        # 4. Colours: graph-ascend's saved Colors object into tb_graph_ascend, and back through the .vis.
        ours_tb, api = graph_ascend(logdir)
        try:
            legend = api("GetFileInfo", file=file)["meta"]["legend"]
            legend[0].update(color="#123456", hi=0.25)
            legend[1].update(lo=0.25)
            info = api("SetLegend", file=file, legend=legend, save=True)
            with open(os.path.join(logdir, info["legendFile"]), encoding="utf-8") as f:
                colors = json.load(f)["Colors"]
            api("ResetLegend", file=file)
        finally:
            ours_tb.stop()
        check(list(colors)[0] == "#123456" and colors["#123456"]["value"] == [0, 0.25],
              f"graph-ascend saves the Colors object {list(colors.items())[0]}")
        tb, call = tb_graph_ascend(venv, logdir, run, tag)
        try:
            r = call("updateColors", colors=json.dumps(colors, ensure_ascii=False))
            check(r.get("success") is True, f"tb_graph_ascend takes it (updateColors): {str(r)[:120]}")
            shown = (call("loadGraphConfigInfo").get("data") or {}).get("colors") or {}
            check({k: v["value"] for k, v in shown.items()} == {k: v["value"] for k, v in colors.items()},
                  "tb_graph_ascend shows those intervals")
        finally:
            tb.stop()
        ours_tb, api = graph_ascend(logdir)
        try:
            reopened = api("GetFileInfo", file=file)
        finally:
            ours_tb.stop()
        legend = reopened.get("meta", {}).get("legend", [])
        check([(b["color"], b["unmatched"] or [b["lo"], b["hi"]]) for b in legend] ==
              [(k, True if isinstance(v["value"], str) or not v["value"] else v["value"]) for k, v in colors.items()],
              f"graph-ascend opens the .vis tb_graph_ascend rewrote, in those colours: {str(reopened)[:80]}")
    print(f"configs and colours move between tb_graph_ascend 8.3.2 and graph-ascend: {'yes' if all(results) else 'NO'}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
