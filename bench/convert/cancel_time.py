"""Time of ConvertCancel for a conversion in its reading stage, on a real graph-ascend-server.

    .venv/bin/python bench/convert/cancel_time.py [--build build] [--nodes 100000] [--rounds 5]

Starts BUILD/bin/graph-ascend-server (--allow-convert on, --builder BUILD/bin/graph-ascend) on a log
directory holding the scaled samples/gpt_statistics compare (bench/scale), and per round: ConvertStart,
ConvertList until the job's stage is "reading dumps", then ConvertCancel, which answers once the job
is final (at most 3 s). Prints each round's seconds and whether the builder's log ends with its own
"stopped by SIGTERM" line or the service's SIGKILL line. Run it with the venv where the plugin is
installed (its generated gRPC stubs); --build of another tree compares two servers.
"""

import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import grpc
from graph_ascend_plugin._proto import graph_service_pb2 as pb
from graph_ascend_plugin._proto import graph_service_pb2_grpc as rpc

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--nodes", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    bin_dir = pathlib.Path(args.build) / "bin"
    work = pathlib.Path(tempfile.mkdtemp(prefix="cancel-bench-"))
    server = None
    try:
        logdir = work / "logdir"
        logdir.mkdir()
        subprocess.run(
            [sys.executable, str(ROOT / "bench/scale/scale_sample.py"), "--case", str(ROOT / "samples/gpt_statistics"),
             "--nodes", str(args.nodes), "--out", str(logdir / "scaled")],
            check=True, stdout=subprocess.DEVNULL)
        sock = work / "s.sock"
        server = subprocess.Popen(
            [str(bin_dir / "graph-ascend-server"), "--logdir", str(logdir), "--socket", str(sock), "--cache-dir",
             str(work / "cache"), "--allow-convert", "on", "--builder", str(bin_dir / "graph-ascend")],
            stderr=subprocess.DEVNULL)
        channel = grpc.insecure_channel(f"unix:{sock}")
        grpc.channel_ready_future(channel).result(timeout=60)
        stub = rpc.GraphServiceStub(channel)
        for i in range(args.rounds):
            request = pb.ConvertRequest(session="bench", npu="scaled/npu", bench="scaled/bench", output_dir=f"out{i}")
            job = stub.ConvertStart(request)
            while True:
                listed = stub.ConvertList(pb.ConvertListRequest(session="bench")).jobs
                if next(j for j in listed if j.id == job.id).stage == "reading dumps":
                    break
                time.sleep(0.005)
            start = time.monotonic()
            done = stub.ConvertCancel(pb.ConvertJobRequest(session="bench", id=job.id))
            seconds = time.monotonic() - start
            ended = "SIGKILL" if any("SIGKILL" in line for line in done.log) else (
                "its own SIGTERM handler" if any("stopped by SIGTERM" in line for line in done.log) else "no line")
            state = pb.ConvertState.Name(done.state)
            print(f"round {i}: {seconds:.3f} s to {state}; the builder's end: {ended}")
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
