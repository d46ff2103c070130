"""graph-ascend-server while a long request runs (issue 17, 3 and 4a): Health is answered, and SIGTERM
ends the process cleanly (exit 0, socket and temporary files gone) without waiting for the request.

The long request is the first OpenFile of a big msprobe JSON .vis: the server converts it into its
cache directory (formats reader, then the .vis writer) before it answers. The file is a real
sample scaled to about 30,000 nodes a side by bench/scale/scale_sample.py, built by graph-ascend
and exported to msprobe's JSON .vis by graph-ascend export, so that the conversion lasts seconds
on any machine.
"""

import pathlib
import shutil
import signal
import subprocess
import sys
import threading

import grpc
import pytest
from plugin_harness import process_alive, wait_until

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCALED_NODES = 30000


@pytest.fixture(scope="module")
def big_json_vis(tmp_path_factory, builder):
    """A log directory holding one big msprobe JSON .vis (compare)."""
    work = tmp_path_factory.mktemp("big")
    scaler = ROOT / "bench" / "scale" / "scale_sample.py"
    case = ROOT / "samples" / "gpt_statistics"
    run = {"check": True, "capture_output": True, "timeout": 900}
    subprocess.run(
        [sys.executable, str(scaler), "--case", str(case), "--nodes", str(SCALED_NODES), "--out", str(work / "dump")],
        **run,
    )
    subprocess.run([str(builder), "graph", "-i", str(work / "dump" / "compare.json"), "-o", str(work / "vis")], **run)
    logdir = work / "logdir"
    logdir.mkdir()
    vis = next((work / "vis").glob("compare_*.vis"))
    subprocess.run([str(builder), "export", str(vis), "-o", str(logdir / "big.vis")], **run)
    shutil.rmtree(work / "dump")
    yield logdir
    shutil.rmtree(work)  # some 300 MB


class Server:
    """bin/graph-ascend-server on a Unix socket, with its own cache directory."""

    def __init__(self, build_dir, logdir, work):
        from graph_ascend_plugin._proto import graph_service_pb2_grpc

        self.cache = work / "cache"
        self.socket = work / "server.sock"
        self.log = open(work / "server.log", "w+")
        server = build_dir / "bin" / "graph-ascend-server"
        self.proc = subprocess.Popen(
            [str(server), "--logdir", str(logdir), "--socket", str(self.socket), "--cache-dir", str(self.cache)],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        assert wait_until(self.socket.exists, timeout=30), self.output()
        self.channel = grpc.insecure_channel("unix://" + str(self.socket))
        self.stub = graph_service_pb2_grpc.GraphServiceStub(self.channel)

    def output(self):
        self.log.seek(0)
        return self.log.read()

    def close(self):
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()


class Opening:
    """An OpenFile call read on its own thread: the messages as they arrive, then how it ended."""

    def __init__(self, stub, pb2, file):
        self.messages, self.error = [], None
        self.busy = threading.Event()  # the server said it is converting
        self.ended = threading.Event()
        self._call = stub.OpenFile(pb2.FileRequest(file=file), timeout=900)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for m in self._call:
                self.messages.append(m)
                if m.stage == "converting":
                    self.busy.set()
        except grpc.RpcError as e:
            self.error = e
        finally:
            self.busy.set()
            self.ended.set()

    def done(self):
        return any(m.done for m in self.messages)


def cache_entries(cache):
    return sorted(p.name for p in cache.rglob("*")) if cache.exists() else []


def test_health_answers_while_a_long_open_runs_and_sigterm_ends_it(
    big_json_vis, build_dir, plugin_installed, tmp_path
):
    from graph_ascend_plugin._proto import graph_service_pb2 as pb2

    logdir_before = sorted(p.name for p in big_json_vis.rglob("*"))
    server = Server(build_dir, big_json_vis, tmp_path)
    try:
        assert server.stub.Health(pb2.HealthRequest(), timeout=30).open_files == 0
        opening = Opening(server.stub, pb2, "big.vis")
        assert opening.busy.wait(120), server.output()
        assert not opening.ended.is_set(), (opening.error, server.output())

        # Health is answered while the open runs, and says the file is not open yet.
        health = server.stub.Health(pb2.HealthRequest(), timeout=60)
        assert health.logdir and health.open_files == 0
        assert not opening.done(), "the open finished before Health was asked: the file is too small"

        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=120) == 0, server.output()
        assert opening.ended.wait(60)
        # The open never finished: the process left while its handler was busy.
        assert not opening.done()
        assert opening.error is not None
        assert opening.error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED), opening.error
        assert not server.socket.exists()
        assert not [n for n in cache_entries(server.cache) if ".tmp-" in n], cache_entries(server.cache)
        assert sorted(p.name for p in big_json_vis.rglob("*")) == logdir_before
    finally:
        server.close()


def test_sigterm_while_a_conversion_is_written_leaves_no_temporary_file(
    big_json_vis, build_dir, plugin_installed, tmp_path
):
    """SIGTERM once the conversion writes its temporary directory; a new server then converts the file."""
    from graph_ascend_plugin._proto import graph_service_pb2 as pb2

    first = Server(build_dir, big_json_vis, tmp_path)
    try:
        opening = Opening(first.stub, pb2, "big.vis")
        assert opening.busy.wait(120), first.output()
        def writing():
            return [n for n in cache_entries(first.cache) if ".tmp-" in n]

        assert wait_until(writing, timeout=600, interval=0.02), (opening.error, first.output())
        first.proc.send_signal(signal.SIGTERM)
        assert first.proc.wait(timeout=120) == 0, first.output()
        assert not [n for n in cache_entries(first.cache) if ".tmp-" in n], cache_entries(first.cache)
    finally:
        first.close()
    assert not process_alive(first.proc.pid)
    second = Server(build_dir, big_json_vis, tmp_path)
    try:
        info = second.stub.GetFileInfo(pb2.FileRequest(file="big.vis"), timeout=900)
        assert info.npu.nodes > SCALED_NODES // 2, info
        assert not [n for n in cache_entries(second.cache) if ".tmp-" in n]
    finally:
        second.close()
