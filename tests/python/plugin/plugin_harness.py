"""Helpers of the plugin tests: a real tensorboard process and HTTP calls to the plugin."""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

TB_START_TIMEOUT_S = 90


def rel(logdir: pathlib.Path, pattern: str) -> str:
    """The relative path of the one file matching `pattern` under the log directory."""
    found = sorted(logdir.glob(pattern))
    assert len(found) == 1, (pattern, found)
    return found[0].relative_to(logdir).as_posix()


class TensorBoard:
    """A running `tensorboard --logdir` and helpers to call the plugin's routes."""

    def __init__(self, logdir: pathlib.Path, env=None):
        exe = pathlib.Path(sys.executable).parent / "tensorboard"
        # A cache folder of its own (converted files, edit journals), unless the test names one: nothing
        # of one test's server reaches another's, nor the user's ~/.cache.
        self._own_cache = None if "XDG_CACHE_HOME" in (env or {}) else tempfile.mkdtemp(prefix="ga-cache-")
        self.cache = pathlib.Path((env or {}).get("XDG_CACHE_HOME") or self._own_cache) / "graph-ascend"
        self.proc = subprocess.Popen(
            [str(exe), "--logdir", str(logdir), "--port", "0", "--host", "127.0.0.1"],
            env={**os.environ, "XDG_CACHE_HOME": str(self.cache.parent), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output = []
        self._port = None
        self._ready = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()
        if not self._ready.wait(TB_START_TIMEOUT_S) or self._port is None:
            self.stop()
            raise RuntimeError("tensorboard did not start:\n" + "".join(self.output))
        self.base = f"http://127.0.0.1:{self._port}"
        self.port = self._port

    def _drain(self):
        for line in self.proc.stdout:
            self.output.append(line)
            m = re.search(r"TensorBoard \S+ at http://[^:]+:(\d+)/", line)
            if m and self._port is None:
                self._port = int(m.group(1))
                self._ready.set()
        self._ready.set()

    def request(self, method, path, body=None, headers=None):
        data = body.encode() if isinstance(body, str) else body
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=120) as res:
                return res.status, dict(res.headers), res.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def api(self, rpc, message=None, raw=None):
        """POSTs to /data/plugin/graph_ascend/api/<rpc>; returns (status, parsed JSON)."""
        body = raw if raw is not None else json.dumps(message or {})
        status, headers, data = self.request(
            "POST", f"/data/plugin/graph_ascend/api/{rpc}", body, {"Content-Type": "application/json"}
        )
        return status, json.loads(data) if headers.get("Content-Type", "").startswith("application/json") else data

    def ok(self, rpc, message=None):
        status, body = self.api(rpc, message)
        assert status == 200, (rpc, status, body)
        return body

    def server_pids(self):
        """Pids of the graph-ascend-server children of this tensorboard."""
        pids = []
        for entry in pathlib.Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmd = (entry / "cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == self.proc.pid and cmd.endswith(b"graph-ascend-server"):
                pids.append(int(entry.name))
        return pids

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._own_cache:
            shutil.rmtree(self._own_cache, ignore_errors=True)


def wait_until(predicate, timeout=15.0, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # The process can vanish between the signal and the read (ESRCH or ENOENT).
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except (ProcessLookupError, FileNotFoundError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
