"""Starts msprobe 26.2.0's own TensorBoard plugin (hierarchy_plugin, tab "graph_ascend") and calls its routes.

Shared by open_in_msprobe26_plugin.py (does it open our .vis.db) and bench/convert/convert_time.py (its
convert form, timed). The venv is made by `run_msprobe.sh --version VERSION --install`.
"""

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def venv_of(version):
    return os.path.join(ROOT, "bench", ".venv-msprobe-" + version)


def install(version):
    subprocess.run([os.path.join(ROOT, "bench", "reference", "run_msprobe.sh"), "--version", version, "--install"],
                   check=True)


def get(base, route, timeout=120, **params):
    query = urllib.parse.urlencode(params)
    with urllib.request.urlopen(f"{base}/data/plugin/graph_ascend/{route}?{query}", timeout=timeout) as r:
        return json.loads(r.read().decode())


def post(base, route, body, timeout=120):
    req = urllib.request.Request(f"{base}/data/plugin/graph_ascend/{route}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


def events(base, route, timeout=3600):
    """Yields the JSON `data:` events of a text/event-stream route as they arrive."""
    with urllib.request.urlopen(f"{base}/data/plugin/graph_ascend/{route}", timeout=timeout) as r:
        for line in r:
            line = line.decode().strip()
            if line.startswith("data:"):
                yield json.loads(line[len("data:"):])


@contextlib.contextmanager
def tensorboard(executable, logdir, ready, env=None):
    """Runs a tensorboard on logdir (loopback, a free port) until the block ends; yields its base URL once
    ready(base) answers. Also used for graph-ascend's own plugin (bench/convert/convert_time.py)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    tb = subprocess.Popen([executable, "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                ready(base)
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise SystemExit(f"{executable} on {logdir} did not start")
        yield base
    finally:
        tb.terminate()
        tb.wait()


def serve(logdir, version="26.2.0"):
    """tensorboard() of the venv of msprobe VERSION, ready when its plugin lists the log directory.

    The venv's bin/ leads PATH: the plugin's convert route runs `msprobe` found there.
    """
    venv = venv_of(version)
    env = dict(os.environ, PATH=os.path.join(venv, "bin") + os.pathsep + os.environ.get("PATH", ""))
    return tensorboard(os.path.join(venv, "bin", "tensorboard"), logdir, lambda base: get(base, "load_meta_dir"), env)
