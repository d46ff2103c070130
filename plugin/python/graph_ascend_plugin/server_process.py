"""The graph-ascend-server child process and the gRPC channel to it.

The server runs as a child of TensorBoard on a Unix socket in a private
temporary directory (mode 0700). It holds the read end of a pipe on its
stdin and exits when that pipe closes, i.e. when TensorBoard exits however
it exits (it also asks the kernel for SIGTERM on parent death). The plugin
starts it on first use, checks it before each call and restarts it when it
died. A call that never reached a live server (its server was already gone
when it was sent, or a restart closed the channel before it was sent) is sent
again to the new server, up to CALL_ATTEMPTS times. A call that was in flight
when its server died is never sent again: the request may be what killed it
(a file that crashes the reader would otherwise kill one server per retry and
every other session's view state with it). It answers CallLost, and its file
is refused (CallRefused) until the user opens it again (OpenFile); unsaved
match edits survive the restart in the server's journal (match_journal.h).

A watchdog checks Health, which the server answers on a thread of its own.
Failures count per server process; a server that does not answer is given
time with growing pauses between checks (it may be stopped, swapping or busy)
and is killed only after HUNG_SECONDS without an answer, never while it is
stopped (SIGSTOP: it resumes where it was).
"""

from __future__ import annotations  # `X | None` annotations on Python 3.9

import atexit
import contextlib
import logging
import os
import pathlib
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time

import grpc

from graph_ascend_plugin._proto import graph_service_pb2, graph_service_pb2_grpc

logger = logging.getLogger(__name__)

BINARY_ENV = "GRAPH_ASCEND_SERVER_BINARY"
START_TIMEOUT_S = 20.0
CALL_TIMEOUT_S = 120.0
WATCH_INTERVAL_S = 2.0
WATCH_MAX_INTERVAL_S = 30.0
HEALTH_TIMEOUT_S = 10.0
HUNG_SECONDS = 180.0
HUNG_SECONDS_ENV = "GRAPH_ASCEND_HUNG_SECONDS"  # overrides HUNG_SECONDS
# auto (default: when the log directory is the user's), on or off: conversions from the page.
ALLOW_CONVERT_ENV = "GRAPH_ASCEND_ALLOW_CONVERT"
_MAX_MESSAGE = 256 << 20
# A call is sent at most this often: each retry follows a restart of the server it was sent to.
CALL_ATTEMPTS = 4


class ServerUnavailable(Exception):
    """The server could not be started; the message says why."""


class CallLost(Exception):
    """The server died while the call was in flight; the call was not sent again."""


class CallRefused(Exception):
    """The call names a file whose reading was in flight when a server died; it waits for an OpenFile."""


def ending(proc) -> str:
    """How `proc` ended, in words ("was killed by signal 9")."""
    code = proc.returncode if proc is not None else None
    if code is None:
        return "stopped"
    return f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"


def server_binary() -> pathlib.Path:
    """The server executable: $GRAPH_ASCEND_SERVER_BINARY, else the packaged one."""
    if os.environ.get(BINARY_ENV):
        return pathlib.Path(os.environ[BINARY_ENV])
    return pathlib.Path(__file__).resolve().parent / "_bin" / "graph-ascend-server"


def exited(proc: subprocess.Popen) -> bool:
    """Whether `proc` is gone (waiting briefly for it to be reaped)."""
    try:
        proc.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        return False
    return True


def retryable(error: Exception, proc, sent_alive: bool = False) -> bool:
    """Whether a call that failed with `error` on `proc` may be sent again to a new server: it never reached
    a live server. Its channel was closed by a restart before it was sent (grpc's ValueError), or its server
    was already gone when it was sent (`sent_alive` False) and it failed UNAVAILABLE or CANCELLED. A call
    sent while its server lived is never retried (lost()): the request may be what killed the server."""
    if isinstance(error, ValueError):
        # grpc says "Cannot invoke RPC on closed channel!" or, once close() ran, "Cannot invoke RPC: Channel closed!".
        return "closed" in str(error).lower()
    return not sent_alive and died_under(error, proc)


def died_under(error: Exception, proc) -> bool:
    """Whether `error` is the call's server dying (UNAVAILABLE, or CANCELLED "Channel closed!" when a restart
    closed the channel under it) and `proc` is gone."""
    return (
        isinstance(error, grpc.RpcError)
        and error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
        and proc is not None
        and exited(proc)
    )


def dying(pid: int) -> bool:
    """Whether the process is on its way out though not yet reaped: a SIGKILL pending, or its main thread
    already a zombie while other threads exit. A call sent to it never reaches a live server."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            if f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X"):
                return True
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                pending = line.startswith((b"SigPnd:", b"ShdPnd:")) and int(line.split()[1], 16)
                if pending and pending & (1 << (signal.SIGKILL - 1)):
                    return True
    except (OSError, IndexError, ValueError):
        return True  # gone
    return False


def stopped(pid: int) -> bool:
    """Whether the process is stopped (SIGSTOP, a debugger): it answers nothing until continued."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


class ServerProcess:
    """Owns one graph-ascend-server child serving `logdir`."""

    def __init__(self, logdir: str, binary: pathlib.Path | None = None, extra_args: list[str] | None = None):
        """`extra_args`: more server flags (the Python API's --cache-dir and --allow-convert off)."""
        self._logdir = logdir
        self._binary = pathlib.Path(binary) if binary else server_binary()
        self._extra_args = list(extra_args or [])
        self._lock = threading.Lock()
        self._proc = None
        self._tmpdir = None
        self._channel = None
        self._stub = None
        self._starts = 0
        self._closed = False
        self._watchdog = None
        # file -> why it is refused: a call naming it was in flight when a server died (until an OpenFile).
        self._lost_files = {}
        self._in_flight = {}  # id -> (method, file, pid): calls sent to a live server and not yet answered
        self._calls = 0
        atexit.register(self.close)

    @property
    def pid(self):
        proc = self._proc
        return proc.pid if proc is not None else None

    @property
    def starts(self) -> int:
        return self._starts

    def calls_in_flight(self) -> list:
        """(method, file, pid) of each call sent to a live server and not answered yet."""
        with self._lock:
            return list(self._in_flight.values())

    def lost_files(self) -> dict:
        """The files refused until opened again, and why."""
        with self._lock:
            return dict(self._lost_files)

    def stub(self) -> graph_service_pb2_grpc.GraphServiceStub:
        """A stub to a live server, starting or restarting it when needed."""
        return self._live()[0]

    def _live(self):
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                if self._proc is not None:
                    logger.warning(
                        "graph-ascend-server (pid %d) exited with %s; restarting",
                        self._proc.pid,
                        self._proc.returncode,
                    )
                self._start_locked()
            return self._stub, self._proc

    def call(self, method: str, request, timeout: float = CALL_TIMEOUT_S, file: str = ""):
        """Calls a unary RPC, sending it again to a fresh server each time the one it went to was gone before
        it was sent (at most CALL_ATTEMPTS sends). `file`: the file the call reads ("" for none): refused with
        CallRefused while it is lost; lost (CallLost) when its server dies while the call is in flight."""

        def send():
            stub, proc = self._live()
            return proc, lambda: getattr(stub, method)(request, timeout=timeout)

        # A JSON bridge call is named by the method it carries.
        return self._retried(send, getattr(request, "method", "") if method == "CallJson" else method, file)

    def stream(self, method: str, request, timeout: float = CALL_TIMEOUT_S):
        """Starts a server-streaming RPC; returns its iterator and the process it talks to."""
        stub, proc = self._live()
        return getattr(stub, method)(request, timeout=timeout), proc

    def open_stream(self, method: str, request, timeout: float = CALL_TIMEOUT_S, file: str = "", reopen=False):
        """Starts a server-streaming RPC and reads its first message, sending it again to a fresh server each
        time the one it went to was gone before it was sent (at most CALL_ATTEMPTS sends), as call() does.
        Returns (first, rest): first is None for a stream without messages. A server that dies after the
        stream was sent loses it (CallLost, raised by `rest` after the first message) and `file` with it.
        `reopen` (OpenFile, the user opening the file): a lost `file` is read again."""
        if reopen:
            with self._lock:
                self._lost_files.pop(file, None)
        state = {}  # the process of the last send

        def send():
            replies, proc = self.stream(method, request, timeout=timeout)
            state["proc"] = proc

            def first():
                try:
                    return next(replies), replies
                except StopIteration:
                    return None, iter(())

            return proc, first

        first, rest = self._retried(send, method, file)
        return first, self._rest(rest, method, file, state["proc"])

    def _rest(self, replies, method, file, proc):
        """The stream's messages after the first; its server dying meanwhile loses it."""
        try:
            yield from replies
        except grpc.RpcError as e:
            if died_under(e, proc):
                raise self._lost(method, file, proc) from e
            raise

    def _lost(self, method, file, proc) -> CallLost:
        """Records that the call on `file` was in flight when `proc` died; the error to answer."""
        what = f"reading {file}" if file else f"answering {method}"
        message = f"the graph service (pid {proc.pid}) {ending(proc)} while {what}; not retried"
        if file:
            with self._lock:
                self._lost_files[file] = message
            message += " (open the file again to retry)"
        logger.error("graph-ascend-server: %s", message)
        return CallLost(message)

    def _retried(self, send, method="", file=""):
        """Runs `send()` -> (proc, run) then run(), again after each failure before the call reached a live
        server (CALL_ATTEMPTS in all). A call sent to a live server that then died is CallLost, never sent
        again. A closed channel met on the last attempt is ServerUnavailable; other errors go to the caller."""
        with self._lock:
            refused = self._lost_files.get(file) if file else None
        if refused:
            raise CallRefused(f"{refused}; open the file again (or reload the page) to read it")
        for attempt in range(CALL_ATTEMPTS):
            proc, sent_alive = None, False
            try:
                proc, run = send()
                # From here on a live server may be working on it.
                sent_alive = proc is not None and proc.poll() is None and not dying(proc.pid)
                with self._in_flight_as(method, file, proc if sent_alive else None):
                    return run()
            except (grpc.RpcError, ValueError) as e:
                if sent_alive and died_under(e, proc):
                    raise self._lost(method, file, proc) from e
                if attempt + 1 < CALL_ATTEMPTS and retryable(e, proc, sent_alive):
                    continue
                if isinstance(e, ValueError):
                    raise ServerUnavailable("graph-ascend-server restarted during the call") from e
                raise
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def _in_flight_as(self, method, file, proc):
        """Lists the call in calls_in_flight() while it runs on the live `proc` (None: not listed)."""
        if proc is None:
            yield
            return
        with self._lock:
            self._calls += 1
            call_id = self._calls
            self._in_flight[call_id] = (method, file, proc.pid)
        try:
            yield
        finally:
            with self._lock:
                del self._in_flight[call_id]

    def _watch(self) -> None:
        """Health-checks the server: restarts it when it died; kills one that has not answered for
        HUNG_SECONDS (and is not stopped) so that it is restarted. Pauses grow while it does not answer."""
        watched, silent_since, interval = None, None, WATCH_INTERVAL_S
        hung_seconds = float(os.environ.get(HUNG_SECONDS_ENV) or HUNG_SECONDS)
        while not self._closed:
            time.sleep(interval)
            proc, stub = self._proc, self._stub
            if self._closed or proc is None:
                continue
            if proc is not watched:  # a new process: nothing carries over from the last one
                watched, silent_since, interval = proc, None, WATCH_INTERVAL_S
            if proc.poll() is not None:
                try:
                    self.stub()
                except ServerUnavailable as e:
                    logger.error("graph-ascend-server restart failed: %s", e)
                continue
            try:
                stub.Health(graph_service_pb2.HealthRequest(), timeout=HEALTH_TIMEOUT_S)
                silent_since, interval = None, WATCH_INTERVAL_S
            except (grpc.RpcError, ValueError) as e:
                if proc is not self._proc:
                    continue  # restarted meanwhile
                now = time.monotonic()
                silent_since = silent_since or now
                interval = min(interval * 2, WATCH_MAX_INTERVAL_S)
                if stopped(proc.pid):
                    logger.warning("graph-ascend-server (pid %d) is stopped; waiting for it", proc.pid)
                    silent_since = now
                    continue
                logger.warning("graph-ascend-server (pid %d) health check failed: %s", proc.pid, e)
                if now - silent_since >= hung_seconds:
                    silent = now - silent_since
                    logger.error("graph-ascend-server (pid %d) has not answered for %.0f s; killing it", proc.pid, silent)
                    proc.kill()

    def _runnable_binary(self) -> pathlib.Path:
        binary = self._binary
        if not binary.is_file():
            raise ServerUnavailable(
                f"graph-ascend-server not found at {binary} (reinstall the plugin or set {BINARY_ENV})"
            )
        if os.access(binary, os.X_OK):
            return binary
        try:  # package managers sometimes drop the executable bit
            binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
            return binary
        except OSError:
            copy = pathlib.Path(self._tmpdir) / "graph-ascend-server"
            shutil.copyfile(binary, copy)
            copy.chmod(0o700)
            return copy

    def _start_locked(self) -> None:
        self._stop_locked()
        self._tmpdir = tempfile.mkdtemp(prefix="graph-ascend-")
        socket_path = os.path.join(self._tmpdir, "server.sock")
        log_path = os.path.join(self._tmpdir, "server.log")
        binary = self._runnable_binary()
        args = [str(binary), "--logdir", self._logdir, "--socket", socket_path, "--die-after-stdin"]
        if os.environ.get(ALLOW_CONVERT_ENV):
            args += ["--allow-convert", os.environ[ALLOW_CONVERT_ENV]]
        args += self._extra_args
        with open(log_path, "wb") as log:
            self._proc = subprocess.Popen(
                args,
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                close_fds=True,
            )
        self._starts += 1
        deadline = time.monotonic() + START_TIMEOUT_S
        # Probing before the socket exists only feeds grpc's reconnect back-off (seconds):
        # wait for the socket file first, and keep the back-off short.
        while not os.path.exists(socket_path):
            self._check_started(log_path, deadline)
            time.sleep(0.02)
        options = [
            ("grpc.max_receive_message_length", _MAX_MESSAGE),
            ("grpc.max_send_message_length", 64 << 20),
            ("grpc.initial_reconnect_backoff_ms", 50),
            ("grpc.min_reconnect_backoff_ms", 50),
            ("grpc.max_reconnect_backoff_ms", 500),
        ]
        self._channel = grpc.insecure_channel("unix://" + socket_path, options=options)
        self._stub = graph_service_pb2_grpc.GraphServiceStub(self._channel)
        while True:
            self._check_started(log_path, deadline)
            try:
                self._stub.Health(graph_service_pb2.HealthRequest(), timeout=1.0, wait_for_ready=True)
                logger.info("graph-ascend-server pid %d serving %s", self._proc.pid, self._logdir)
                if self._watchdog is None:
                    self._watchdog = threading.Thread(target=self._watch, name="graph-ascend-watchdog", daemon=True)
                    self._watchdog.start()
                return
            except grpc.RpcError:
                time.sleep(0.02)

    def _check_started(self, log_path: str, deadline: float) -> None:
        """Raises ServerUnavailable when the starting server exited or did not come up in time."""
        if self._proc.poll() is not None:
            code = self._proc.returncode
            message = self._read_log(log_path)
            self._stop_locked()
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            raise ServerUnavailable(f"graph-ascend-server {how} at start; its output: {message}")
        if time.monotonic() > deadline:
            self._stop_locked()
            raise ServerUnavailable(f"graph-ascend-server did not answer within {START_TIMEOUT_S:.0f} s")

    @staticmethod
    def _read_log(path: str) -> str:
        try:
            with open(path, "rb") as f:
                return f.read()[-2000:].decode("utf-8", "replace").strip() or "(no output)"
        except OSError:
            return "(no output)"

    def _stop_locked(self) -> None:
        if self._channel is not None:
            self._channel.close()
        self._channel = None
        self._stub = None
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def close(self) -> None:
        self._closed = True
        with self._lock:
            self._stop_locked()
        atexit.unregister(self.close)  # closed once: a program opening many files keeps no reference to each
