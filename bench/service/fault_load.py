"""Load and fault injection through a real tensorboard with the GRAPH_ASCEND plugin (docs/RELIABILITY_SERVICE.md,
"Service"): HTTP clients on 127.0.0.1 call a mix of the page's routes while the graph-ascend-server child is
killed with SIGKILL or stopped with SIGSTOP; every failed request is counted.

    .venv/bin/python bench/service/fault_load.py --logdir DIR --file REL.vis [--clients 8]
        [--seconds 30] [--kills 3] [--stop-seconds 45] [--memory-requests 10000] [--json OUT.json]

Phases, each bounded in time and count: (1) load only, (2) load while the server is killed --kills times,
(3) load while the server is stopped for --stop-seconds, (4) --memory-requests requests with the RSS of
tensorboard and of the server before and after. Measures only (no pass/fail); only 127.0.0.1.
"""

import argparse
import json
import os
import pathlib
import signal
import threading
import time
import urllib.error
import urllib.request

from proc_stats import child_pid, percentile, rss_mb, start_tensorboard, stop  # beside this script

API = "/data/plugin/graph_ascend/api/"


class Board:
    """tensorboard --logdir DIR on a free port of 127.0.0.1; calls answer their HTTP status."""

    def __init__(self, logdir):
        self.proc, port = start_tensorboard(logdir)
        self.base = f"http://127.0.0.1:{port}"

    def call(self, rpc, message, timeout=180):
        req = urllib.request.Request(
            self.base + API + rpc,
            data=json.dumps(message).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                res.read()
                return res.status
        except urllib.error.HTTPError as e:
            e.read()
            return e.code
        except OSError:
            return -1

    def server_pid(self):
        return child_pid(self.proc.pid, "graph-ascend-server")

    def stop(self):
        stop(self.proc)


class Load:
    """`clients` threads calling a mix of routes until stop() or until `requests` calls were made in all."""

    def __init__(self, board, file, clients, requests=None):
        self.board, self.file, self.limit = board, file, requests
        self.latencies, self.errors, self.count = [], [], 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(clients)]
        self.started = time.monotonic()
        for t in self._threads:
            t.start()

    def _take(self):
        with self._lock:
            if self._stop.is_set() or (self.limit is not None and self.count >= self.limit):
                return False
            self.count += 1
            return True

    def _run(self, i):
        view = {"session": f"c{i}", "file": self.file, "side": "SIDE_NPU", "microStep": -1}
        calls = [
            ("GetFileInfo", {"file": self.file}),
            ("GetView", {"view": view, "viewport": {"x": 0, "y": 0, "width": 1067, "height": 600}}),
            ("Search", {"view": view, "query": "forward", "limit": 50}),
            ("Filter", {"view": view, "buckets": [0, 1, 2, 3, 4], "limit": 50}),
            ("GetNodeDetail", {"view": view, "node": 1}),
            ("ListRuns", {}),
        ]
        k = 0
        while self._take():
            rpc, message = calls[k % len(calls)]
            k += 1
            t0 = time.perf_counter()
            status = self.board.call(rpc, message)
            dt = time.perf_counter() - t0
            with self._lock:
                self.latencies.append(dt)
                if status != 200:
                    self.errors.append((rpc, status))

    def stop(self):
        self._stop.set()
        return self.join()

    def join(self):
        for t in self._threads:
            t.join()
        elapsed = time.monotonic() - self.started
        ms = [x * 1000 for x in self.latencies]
        return {
            "requests": len(self.latencies),
            "errors": len(self.errors),
            "error_kinds": sorted({f"{r} {s}" for r, s in self.errors}),
            "seconds": round(elapsed, 1),
            "per_second": round(len(ms) / elapsed, 1) if elapsed else 0,
            "p50_ms": round(percentile(ms, 50), 1),
            "p95_ms": round(percentile(ms, 95), 1),
            "p99_ms": round(percentile(ms, 99), 1),
            "max_ms": round(max(ms), 1) if ms else 0,
        }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--logdir", required=True)
    ap.add_argument("--file", required=True, help="a compare .vis relative to --logdir")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--stop-seconds", type=float, default=45)
    ap.add_argument("--memory-requests", type=int, default=10000)
    ap.add_argument("--json")
    args = ap.parse_args()
    board = Board(args.logdir)
    out = {"clients": args.clients, "file": args.file}
    try:
        if board.call("GetFileInfo", {"file": args.file}) != 200:
            sys.exit(f"{args.file}: GetFileInfo failed")

        load = Load(board, args.file, args.clients)
        time.sleep(args.seconds)
        out["load"] = load.stop()
        print("load:", out["load"], flush=True)

        load = Load(board, args.file, args.clients)
        pids = []
        for _ in range(args.kills):
            time.sleep(args.seconds / max(args.kills, 1))
            pid = board.server_pid()
            if pid:
                os.kill(pid, signal.SIGKILL)
                pids.append(pid)
        time.sleep(3)
        out["kill9"] = {**load.stop(), "kills": len(pids), "restarted": board.server_pid() not in pids}
        print("kill -9:", out["kill9"], flush=True)

        load = Load(board, args.file, args.clients)
        time.sleep(2)
        pid = board.server_pid()
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(args.stop_seconds)
        finally:
            os.kill(pid, signal.SIGCONT)
        time.sleep(5)
        out["sigstop"] = {**load.stop(), "stop_seconds": args.stop_seconds, "same_server": board.server_pid() == pid}
        print("SIGSTOP:", out["sigstop"], flush=True)

        server = board.server_pid()
        before = {"tensorboard_mb": round(rss_mb(board.proc.pid), 1), "server_mb": round(rss_mb(server), 1)}
        figures = Load(board, args.file, args.clients, requests=args.memory_requests).join()
        after = {"tensorboard_mb": round(rss_mb(board.proc.pid), 1), "server_mb": round(rss_mb(server), 1)}
        out["memory"] = {**figures, "before": before, "after": after}
        print("memory:", out["memory"], flush=True)
    finally:
        board.stop()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
