"""The GRAPH_ASCEND TensorBoard plugin: routes that forward to graph-ascend-server.

Routes under /data/plugin/graph_ascend/ (docs/API.md):
  GET  /index.js          ES module TensorBoard loads; it sends the iframe to index.html
  GET  /index.html        the single-file frontend, or a plain page listing the runs
  POST /api/<Rpc>         the request message as JSON -> the reply message as JSON
  POST /api/OpenFile      newline-delimited JSON, one OpenProgress per line

The plugin holds no graph logic and reads no file of the log directory: the
server resolves and checks every path (never outside --logdir).
"""

import json
import logging
import os
import pathlib
import threading
import time

import grpc
from google.protobuf import json_format
from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from graph_ascend_plugin import server_process
from graph_ascend_plugin._proto import graph_service_pb2

logger = logging.getLogger(__name__)

PLUGIN_NAME = "graph_ascend"
STATIC_DIR = pathlib.Path(__file__).resolve().parent / "static"
MAX_BODY_BYTES = 16 << 20

# The plugin serves its own page, so it sets its own CSP: the page is one
# file with inline script and style (plugin reference §2.1).
SECURITY_HEADERS = [
    (
        "Content-Security-Policy",
        (
            "default-src 'self'; connect-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            "img-src 'self' data:; font-src data:; object-src 'none'; base-uri 'self'"
        ),
    ),
    ("X-Frame-Options", "SAMEORIGIN"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
]

HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.DATA_LOSS: 409,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 503,
}

_SERVICE = graph_service_pb2.DESCRIPTOR.services_by_name["GraphService"]


def _message_class(descriptor):
    return getattr(graph_service_pb2, descriptor.name)


def _to_json(message) -> str:
    return json_format.MessageToJson(message, always_print_fields_with_no_presence=True, indent=None)


def _respond(body, status=200, content_type="application/json"):
    response = wrappers.Response(body, status=status, content_type=content_type)
    for key, value in SECURITY_HEADERS:
        response.headers[key] = value
    return response


def _error(status: int, code: str, message: str, extra_headers=()):
    response = _respond(json.dumps({"error": {"code": code, "message": message}}), status=status)
    for key, value in extra_headers:
        response.headers[key] = value
    return response


def _rpc_error(e: grpc.RpcError):
    code = e.code()
    return _error(HTTP_STATUS.get(code, 500), code.name, e.details() or code.name)


class GraphAscendPlugin(base_plugin.TBPlugin):
    """Serves the GRAPH_ASCEND tab over TensorBoard's --logdir."""

    plugin_name = PLUGIN_NAME

    def __init__(self, context):
        logdir = context.logdir or getattr(context.flags, "logdir", "") or ""
        self._logdir = os.path.abspath(os.path.expanduser(logdir)) if logdir else ""
        self._server = server_process.ServerProcess(self._logdir) if self._logdir else None
        self._active = False
        self._active_checked = 0.0
        self._active_lock = threading.Lock()

    # ---- TensorBoard plugin contract

    def get_plugin_apps(self):
        return {
            "/index.js": self._serve_index_js,
            "/index.html": self._serve_index_html,
            "/api/*": self._serve_api,
        }

    def is_active(self):
        """True once a .vis or .vis.db file exists under the log directory (bounded scan, re-checked every 10 s)."""
        if not self._logdir:
            return False
        with self._active_lock:
            if self._active or time.monotonic() - self._active_checked < 10:
                return self._active
            self._active_checked = time.monotonic()
            self._active = _has_vis(self._logdir, limit=20000)
            return self._active

    def frontend_metadata(self):
        return base_plugin.FrontendMetadata(es_module_path="/index.js", disable_reload=True)

    # ---- routes

    @wrappers.Request.application
    def _serve_index_js(self, request):
        return _respond((STATIC_DIR / "index.js").read_bytes(), content_type="application/javascript")

    @wrappers.Request.application
    def _serve_index_html(self, request):
        page = STATIC_DIR / "index.html"
        if not page.is_file():
            page = STATIC_DIR / "runs.html"
        return _respond(page.read_bytes(), content_type="text/html; charset=utf-8")

    @wrappers.Request.application
    def _serve_api(self, request):
        name = request.path.rsplit("/api/", 1)[-1]
        method = _SERVICE.methods_by_name.get(name)
        if method is None or name == "CallJson":
            return _error(404, "NOT_FOUND", f"no such API method: {name!r}")
        if request.method != "POST":
            return _error(405, "METHOD_NOT_ALLOWED", f"use POST for /api/{name}", [("Allow", "POST")])
        if self._server is None:
            return _error(503, "UNAVAILABLE", "TensorBoard was started without --logdir")
        if (request.content_length or 0) > MAX_BODY_BYTES:
            return _error(400, "INVALID_ARGUMENT", f"request body larger than {MAX_BODY_BYTES} bytes")
        body = request.get_data(cache=False)
        if len(body) > MAX_BODY_BYTES:
            return _error(400, "INVALID_ARGUMENT", f"request body larger than {MAX_BODY_BYTES} bytes")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as e:
            return _error(400, "INVALID_ARGUMENT", f"request body is not UTF-8: {e}")
        try:
            if method.server_streaming:
                req = _message_class(method.input_type)()
                try:
                    json_format.Parse(text or "{}", req)
                except json_format.ParseError as e:
                    return _error(400, "INVALID_ARGUMENT", f"bad {method.input_type.name} JSON: {e}")
                return self._stream(name, req)
            # Unary methods: the server converts JSON in C++ (CallJson); the bytes pass through.
            reply = self._server.call("CallJson", graph_service_pb2.JsonCall(method=name, request_json=text))
        except grpc.RpcError as e:
            return _rpc_error(e)
        except server_process.ServerUnavailable as e:
            return _error(503, "UNAVAILABLE", str(e))
        return _respond(reply.reply_json)

    def _stream(self, name, req):
        """Newline-delimited JSON: one reply message per line; an error ends the stream with {"error": ...}."""
        for attempt in range(2):
            replies, proc = self._server.stream(name, req)
            try:
                first = next(replies)  # errors before the first message still get an HTTP status
                break
            except StopIteration:
                return _respond("", content_type="application/x-ndjson")
            except grpc.RpcError as e:
                if attempt == 0 and e.code() == grpc.StatusCode.UNAVAILABLE and server_process.exited(proc):
                    continue
                raise

        def lines():
            yield (_to_json(first) + "\n").encode()
            try:
                for reply in replies:
                    yield (_to_json(reply) + "\n").encode()
            except grpc.RpcError as e:
                yield (json.dumps({"error": {"code": e.code().name, "message": e.details()}}) + "\n").encode()

        response = wrappers.Response(lines(), content_type="application/x-ndjson", direct_passthrough=True)
        for key, value in SECURITY_HEADERS:
            response.headers[key] = value
        return response


def _has_vis(logdir: str, limit: int) -> bool:
    seen = 0
    for _dirpath, _dirnames, filenames in os.walk(logdir):
        for name in filenames:
            if name.endswith((".vis", ".vis.db")):
                return True
        seen += len(filenames) + 1
        if seen > limit:
            return False
    return False
