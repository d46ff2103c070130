"""Server restarts (issue 17, 4; issue 35, 2): clients keep calling a real tensorboard while its
graph-ascend-server is killed with SIGKILL or stopped with SIGSTOP. A call that had not reached the
server is sent again to the new one; a call in flight at the kill is not (test_plugin_lost_calls.py):
it answers 503, and its file 409 until the page opens it again. No other request may fail."""

import json
import os
import signal
import threading
import time

import grpc
import pytest
from plugin_harness import TensorBoard, process_alive, rel, wait_until


@pytest.fixture(scope="module")
def stats(logdir):
    return rel(logdir, "x/run/compare_*.vis")


class Load:
    """`clients` threads calling a mix of read-only routes until stopped; failures are kept."""

    def __init__(self, board, file, clients=4):
        self.board, self.file = board, file
        self.failures, self.done, self.lost, self.refused = [], 0, 0, 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(clients)]
        for t in self._threads:
            t.start()

    def _run(self, i):
        view = {"session": f"load{i}", "file": self.file, "side": "SIDE_NPU", "microStep": -1}
        calls = [
            ("GetFileInfo", {"file": self.file}),
            ("GetView", {"view": view, "viewport": {"x": 0, "y": 0, "width": 2000, "height": 1500}}),
            ("Search", {"view": view, "query": "conv", "limit": 50}),
            ("ListRuns", {}),
        ]
        while not self._stop.is_set():
            for rpc, message in calls:
                status, body = self.board.api(rpc, message)
                error = body.get("error", {}).get("message", "") if isinstance(body, dict) else ""
                with self._lock:
                    self.done += 1
                    if status == 503 and "; not retried" in error:
                        self.lost += 1  # in flight at the kill
                    elif status == 409 and "open the file again" in error:
                        self.refused += 1
                    elif status != 200:
                        self.failures.append((rpc, status, body))
                if status == 409 and "open the file again" in error:
                    self.reopen()  # as the page does: the user opens the file again

    def reopen(self):
        status, _headers, data = self.board.request(
            "POST", "/data/plugin/graph_ascend/api/OpenFile", json.dumps({"file": self.file}),
            {"Content-Type": "application/json"},
        )
        last = json.loads(data.decode().strip().splitlines()[-1])
        with self._lock:
            if "; not retried" in last.get("error", {}).get("message", ""):
                self.lost += 1  # the open itself was in flight at a kill
            elif status != 200 or not last.get("done"):
                self.failures.append(("OpenFile", status, data))

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(timeout=150)
        return self.failures


def kill_between_choice_and_send(server, times, restart_elsewhere=False):
    """Hooks `server._live` so that, on the test's own thread, the first `times` servers a call chooses are
    killed before it sends (the watchdog's own restarts go through unharmed); with restart_elsewhere another
    thread then restarts the server, closing the channel the call holds. Returns the killed pids' list."""
    live, caller, killed = server._live, threading.current_thread(), []

    def live_then_kill():
        stub, proc = live()
        if threading.current_thread() is caller and len(killed) < times:
            proc.kill()
            proc.wait()
            if restart_elsewhere:
                other = threading.Thread(target=live)  # a second client finds the server dead and restarts it
                other.start()
                other.join()
            killed.append(proc.pid)
        return stub, proc

    server._live = live_then_kill
    return killed


def test_kill_9_under_load_loses_only_the_calls_in_flight(logdir, plugin_installed, stats):
    """Each kill loses at most the calls in flight (one per client); the rest are answered, and once the
    file is opened again every route answers."""
    board = TensorBoard(logdir)
    try:
        board.ok("GetFileInfo", {"file": stats})
        load = Load(board, stats)
        killed = []
        # Each kill waits for calls answered since the last (not for a time: a loaded machine answers fewer).
        for _ in range(3):
            answered = load.done
            assert wait_until(lambda: load.done >= answered + 6, timeout=120)
            pid = board.server_pids()[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            assert wait_until(lambda: not process_alive(pid))
            assert wait_until(lambda: board.server_pids() and board.server_pids()[0] not in killed, timeout=30)
        answered = load.done
        assert wait_until(lambda: load.done >= answered + 6, timeout=120)
        failures = load.stop()
        assert failures == [], failures[:3]
        assert load.done > 20
        assert load.lost <= 3 * 4  # at most one call per client and kill
        assert len(board.server_pids()) == 1
        load.reopen()
        assert board.ok("GetView", {"view": {"session": "after", "file": stats, "side": "SIDE_NPU", "microStep": -1}})
    finally:
        board.stop()


def test_a_call_that_meets_two_restarts_is_answered(logdir, plugin_installed, stats):
    """A slow call on a server that is killed again after its restart: the call is sent once more to
    each new server (the kills are timed by a hook on `_live`, between choosing a server and sending)."""
    from graph_ascend_plugin import server_process
    from graph_ascend_plugin._proto import graph_service_pb2

    server = server_process.ServerProcess(str(logdir))
    killed = kill_between_choice_and_send(server, times=2)
    try:
        request = graph_service_pb2.JsonCall(method="GetFileInfo", request_json=json.dumps({"file": stats}))
        reply = json.loads(server.call("CallJson", request).reply_json)
        assert len(killed) == 2 and server.starts == 3
        assert server.pid not in killed and process_alive(server.pid)
        assert reply["file"] == stats
    finally:
        server.close()


@pytest.mark.parametrize(
    "message",
    # The two texts grpcio 1.74 gives a call on a channel that close() shut: before the call starts, and
    # when close() lands while grpc sets the call up (seen 8 times in 513 calls racing a close; the kill -9
    # load test met it in CI and answered 503).
    ["Cannot invoke RPC on closed channel!", "Cannot invoke RPC: Channel closed!"],
)
def test_grpcs_closed_channel_refusals_are_retried(plugin_installed, message):
    from graph_ascend_plugin import server_process

    assert server_process.retryable(ValueError(message), None)
    assert not server_process.retryable(ValueError("bad request payload"), None)


def test_a_call_whose_channel_another_thread_closed_is_answered(logdir, plugin_installed, stats, monkeypatch):
    """Another client restarts the server between this call choosing it and sending (the kill -9 load test
    met it in CI): grpc refuses the closed channel with a ValueError, and the call is sent again to the new
    server instead of answering 503."""
    from graph_ascend_plugin import server_process
    from graph_ascend_plugin._proto import graph_service_pb2

    server = server_process.ServerProcess(str(logdir))
    restarted = kill_between_choice_and_send(server, times=1, restart_elsewhere=True)

    met = []
    retryable = server_process.retryable
    monkeypatch.setattr(server_process, "retryable", lambda e, *args: met.append(e) or retryable(e, *args))
    try:
        request = graph_service_pb2.JsonCall(method="GetFileInfo", request_json=json.dumps({"file": stats}))
        reply = json.loads(server.call("CallJson", request).reply_json)
        assert len(restarted) == 1 and server.starts == 2
        assert [type(e) for e in met] == [ValueError]  # grpc's own refusal of the closed channel
        assert reply["file"] == stats
    finally:
        server.close()


def test_a_stream_that_meets_two_restarts_is_answered(logdir, plugin_installed, stats):
    """The streaming path (OpenFile, as the page opens a file, plugin.py `_stream`): killed twice between
    choosing a server and reading the first message, the stream is opened again on each new server and
    the page gets every message, the last one the open file's info."""
    from graph_ascend_plugin import server_process
    from graph_ascend_plugin._proto import graph_service_pb2

    server = server_process.ServerProcess(str(logdir))
    killed = kill_between_choice_and_send(server, times=2)
    try:
        first, rest = server.open_stream("OpenFile", graph_service_pb2.FileRequest(file=stats))
        messages = [first, *rest]
        assert len(killed) == 2 and server.starts == 3
        assert server.pid not in killed and process_alive(server.pid)
        assert messages[-1].done and messages[-1].info.file == stats
        assert all(0 <= m.fraction <= 1 for m in messages)
    finally:
        server.close()


def test_a_stream_gives_up_after_call_attempts_sends(logdir, plugin_installed, stats):
    """A server killed before every send: after CALL_ATTEMPTS sends the stream gives up with the gRPC error
    (the route answers it as an HTTP error), it does not loop."""
    from graph_ascend_plugin import server_process
    from graph_ascend_plugin._proto import graph_service_pb2

    server = server_process.ServerProcess(str(logdir))
    sends = kill_between_choice_and_send(server, times=server_process.CALL_ATTEMPTS + 1)
    try:
        with pytest.raises(grpc.RpcError) as e:
            server.open_stream("OpenFile", graph_service_pb2.FileRequest(file=stats))
        assert e.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
        assert len(sends) == server_process.CALL_ATTEMPTS
    finally:
        server.close()


def test_a_stopped_server_is_waited_for_not_killed(logdir, plugin_installed, stats):
    """SIGSTOP for longer than the watchdog's patience for a silent server: a stopped one is never killed,
    and the calls waiting on it answer once it continues."""
    board = TensorBoard(logdir, env={"GRAPH_ASCEND_HUNG_SECONDS": "3"})
    try:
        board.ok("GetFileInfo", {"file": stats})
        pid = board.server_pids()[0]
        load = Load(board, stats, clients=2)
        assert wait_until(lambda: load.done >= 4, timeout=120)  # calls under way when it stops
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(12)  # four times the watchdog's patience: a lower bound, the test's point
        finally:
            os.kill(pid, signal.SIGCONT)
        answered = load.done
        assert wait_until(lambda: load.done >= answered + 4, timeout=120)  # the waiting calls answer
        failures = load.stop()
        assert failures == [], failures[:3]
        assert board.server_pids() == [pid]
        assert board.ok("Health")["openFiles"] >= 1
    finally:
        board.stop()
