"""The rank overview at scale: a batch of RANKS rank pairs made from samples/rank_origin (each rank's
dump folder a symlink to a real msprobe dump of that sample: rank 2 the perturbed one, every other
rank one of ranks 0, 1, 3), built by `graph-ascend graph` in one process, then GetOverview timed
against graph-ascend-server as the plugin calls it (CallJson: the JSON the page receives).

    .venv/bin/python bench/overview/overview_scale.py [--ranks 1000] [--steps 2] [--work DIR]
        [--build build] [--rounds 20] [--page]

Prints one JSON object: build wall/CPU/peak RSS, the .vis bytes, the overview's cold time (first
call: every file's FileMeta read), warm times (cached), the reply's size and origin, and with --page
the page's open time of the overview (page_open.mjs, real tensorboard and Chromium). Measures only;
docs/PERFORMANCE.md has the figures.
"""

import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "bench" / "service"))
from bench_service import load_stubs, start_server  # noqa: E402
from proc_stats import percentile, start_tensorboard, stop  # noqa: E402

SAMPLE = ROOT / "samples" / "rank_origin"


def source_rank(rank):
    """The sample rank whose dump stands for `rank`: 2 is the perturbed one, the rest agree."""
    return 2 if rank == 2 else (0, 1, 3)[rank % 3]


def make_dumps(work, ranks, steps):
    for side in ("npu", "bench"):
        for step in range(steps):
            d = work / "dumps" / side / f"step{step}"
            d.mkdir(parents=True)
            for r in range(ranks):
                (d / f"rank{r}").symlink_to(SAMPLE / side / f"step{step % 2}" / f"rank{source_rank(r)}")
    batch = work / "dumps" / "batch.json"
    batch.write_text(json.dumps({"npu_path": "npu", "bench_path": "bench"}))
    return batch


def build(cli, batch, out):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([cli, "graph", "-i", str(batch), "-o", str(out)], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    files = sorted(out.glob("*.vis"))
    return {
        "build_wall_s": round(wall, 2),
        "build_cpu_s": round(cpu, 2),
        "build_peak_rss_mb": round(after.ru_maxrss / 1024, 1),
        "vis_files": len(files),
        "vis_bytes": sum(f.stat().st_size for f in files),
    }, files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--work", default="/tmp/overview/scale")
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--page", action="store_true", help="also time the page (needs the plugin installed in this venv)")
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    logdir = work / "logdir"
    out = logdir / f"ranks_{args.ranks}"
    result = {"ranks": args.ranks, "steps": args.steps}
    bin_dir = pathlib.Path(args.build) / "bin"
    built, files = build(str(bin_dir / "graph-ascend"), make_dumps(work, args.ranks, args.steps), out)
    result.update(built)

    with tempfile.TemporaryDirectory() as tmp:
        pb, pb_grpc = load_stubs(tmp)
        server, stub = start_server(pb, pb_grpc, str(bin_dir / "graph-ascend-server"), str(logdir), tmp)
        try:
            request = json.dumps({"file": str(files[0].relative_to(logdir))})

            def call():
                t = time.perf_counter()
                reply = stub.CallJson(pb.JsonCall(method="GetOverview", request_json=request), timeout=600)
                return (time.perf_counter() - t) * 1000, reply.reply_json

            cold_ms, text = call()
            warm = [call()[0] for _ in range(args.rounds)]
            reply = json.loads(text)
        finally:
            stop(server)
    result.update(
        {
            "overview_cold_ms": round(cold_ms, 1),
            "overview_warm_p50_ms": round(percentile(warm, 50), 1),
            "overview_warm_p95_ms": round(percentile(warm, 95), 1),
            "overview_json_bytes": len(text),
            "cells": len(reply["cells"]),
            "origin_step": reply["originStep"],
            "origin_ranks": reply["originRanks"],
        }
    )
    if args.page:
        tensorboard, port = start_tensorboard(logdir)
        try:
            env = dict(os.environ, GA_TB_URL=f"http://127.0.0.1:{port}", GA_RUN=out.name)
            page = subprocess.run(
                ["node", str(HERE / "page_open.mjs")], env=env, check=True, capture_output=True, text=True
            )
            result["page"] = json.loads(page.stdout)
        finally:
            stop(tensorboard)
    print(json.dumps(result, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
