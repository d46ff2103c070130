"""The GRAPH_ASCEND TensorBoard plugin: routes that forward to graph-ascend-server.

Routes under /data/plugin/graph_ascend/ (docs/API.md):
  GET  /index.js          ES module TensorBoard loads; it sends the iframe to index.html
  GET  /index.html        the single-file frontend, or a plain page listing the runs
  POST /api/<Rpc>         the request message as JSON -> the reply message as JSON
  POST /api/OpenFile      newline-delimited JSON, one OpenProgress per line

The plugin holds no graph logic and reads no file of the log directory: the
server resolves and checks every path (never outside --logdir).

Requests from other web sites are refused (docs/API.md, "Security"): every
route answers only the host names TensorBoard was bound to and localhost
forms (DNS rebinding), and every API call must be `Content-Type:
application/json` (a cross-site page cannot send that without a CORS
preflight, which is never granted) and must not come from another origin
(`Origin` — scheme, host and port —, `Sec-Fetch-Site`).
"""

import ipaddress
import json
import logging
import os
import pathlib
import socket
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
# Error messages quote request fields; they are cut to this many characters.
MAX_MESSAGE_CHARS = 1000
# Extra host names to answer, comma-separated; "*" answers any Host (behind a trusted proxy).
ALLOWED_HOSTS_ENV = "GRAPH_ASCEND_ALLOWED_HOSTS"

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


def _clip(message: str) -> str:
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f"{message[:MAX_MESSAGE_CHARS]}... ({len(message)} characters)"


def _error(status: int, code: str, message: str, extra_headers=()):
    response = _respond(json.dumps({"error": {"code": code, "message": _clip(message)}}), status=status)
    for key, value in extra_headers:
        response.headers[key] = value
    return response


def _rpc_error(e: grpc.RpcError):
    code = e.code()
    return _error(HTTP_STATUS.get(code, 500), code.name, e.details() or code.name)


def _host_name(host_header: str) -> str:
    """The host of a Host / Origin netloc, lowercase, without port or IPv6 brackets."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def allowed_hosts(flags) -> set | None:
    """The host names to answer (None: any): localhost forms, the --host TensorBoard was bound to,
    this machine's names when bound to every interface, and $GRAPH_ASCEND_ALLOWED_HOSTS."""
    names = {"localhost", "127.0.0.1", "::1"}
    host = (getattr(flags, "host", None) or "").strip("[]").lower()
    if host:
        names.add(host)
    if getattr(flags, "bind_all", False) or host in ("0.0.0.0", "::"):
        names.update({socket.gethostname().lower(), socket.getfqdn().lower()})
    for extra in os.environ.get(ALLOWED_HOSTS_ENV, "").split(","):
        extra = extra.strip().lower()
        if extra == "*":
            return None
        if extra:
            names.add(_host_name(extra))
    return names


def _host_allowed(host_header: str, allowed) -> bool:
    if allowed is None:
        return True
    host = _host_name(host_header or "")
    if host in allowed or host.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(host)  # an address is no name a rebinding attacker controls
        return True
    except ValueError:
        return False


def _cross_site(request) -> str:
    """Why `request` comes from another web site ("" when it does not)."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        return f"Sec-Fetch-Site: {site}"
    origin = request.headers.get("Origin")
    if origin is not None and origin.lower() != f"{_served_scheme(request)}://{request.host or ''}".lower():
        return f"Origin {origin}"
    return ""


def _served_scheme(request) -> str:
    """The scheme the page was served on: TensorBoard's own (http unless it serves https), or the one a
    reverse proxy names in X-Forwarded-Proto (a header no cross-site page can add without a preflight)."""
    forwarded = request.headers.get("X-Forwarded-Proto", "").split(",", 1)[0].strip().lower()
    return forwarded if forwarded in ("http", "https") else request.scheme


def _file_of(text: str) -> str:
    """The file a request reads: its "file", or its view's ("" for none or bad JSON: the server says why)."""
    try:
        message = json.loads(text) if text else {}
    except ValueError:
        return ""
    if not isinstance(message, dict):
        return ""
    file = message.get("file")
    view = message.get("view")
    if not isinstance(file, str) and isinstance(view, dict):
        file = view.get("file")
    return file if isinstance(file, str) else ""


def _read_body(request):
    """The body, read at most MAX_BODY_BYTES + 1 bytes at a time; None when larger (never read in full)."""
    if (request.content_length or 0) > MAX_BODY_BYTES:
        return None
    stream, chunks, total = request.stream, [], 0
    while True:
        chunk = stream.read(min(1 << 16, MAX_BODY_BYTES + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_BODY_BYTES:
            return None


def _refused(request, allowed):
    """The answer to a request from elsewhere than this TensorBoard's own pages, else None."""
    if not _host_allowed(request.host, allowed):
        return _error(
            403,
            "PERMISSION_DENIED",
            f"host {request.host!r} is not one TensorBoard serves (set {ALLOWED_HOSTS_ENV} to add names)",
        )
    return None


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
        self._allowed_hosts = allowed_hosts(context.flags)

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
        refused = _refused(request, self._allowed_hosts)
        if refused is not None:
            return refused
        return _respond((STATIC_DIR / "index.js").read_bytes(), content_type="application/javascript")

    @wrappers.Request.application
    def _serve_index_html(self, request):
        refused = _refused(request, self._allowed_hosts)
        if refused is not None:
            return refused
        page = STATIC_DIR / "index.html"
        if not page.is_file():
            page = STATIC_DIR / "runs.html"
        return _respond(page.read_bytes(), content_type="text/html; charset=utf-8")

    @wrappers.Request.application
    def _serve_api(self, request):
        refused = _refused(request, self._allowed_hosts)
        if refused is not None:
            return refused
        name = request.path.rsplit("/api/", 1)[-1]
        method = _SERVICE.methods_by_name.get(name)
        if method is None or name == "CallJson":
            return _error(404, "NOT_FOUND", f"no such API method: {name!r}")
        if request.method != "POST":
            return _error(405, "METHOD_NOT_ALLOWED", f"use POST for /api/{name}", [("Allow", "POST")])
        if request.mimetype != "application/json":
            return _error(
                415,
                "UNSUPPORTED_MEDIA_TYPE",
                f"/api/{name} takes Content-Type: application/json, not {request.mimetype!r}",
            )
        why = _cross_site(request)
        if why:
            return _error(403, "PERMISSION_DENIED", f"cross-site request refused ({why})")
        if self._server is None:
            return _error(503, "UNAVAILABLE", "TensorBoard was started without --logdir")
        body = _read_body(request)
        if body is None:
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
            call = graph_service_pb2.JsonCall(method=name, request_json=text)
            reply = self._server.call("CallJson", call, file=_file_of(text))
        except grpc.RpcError as e:
            return _rpc_error(e)
        except (server_process.ServerUnavailable, server_process.CallLost) as e:
            return _error(503, "UNAVAILABLE", str(e))
        except server_process.CallRefused as e:
            return _error(409, "FAILED_PRECONDITION", str(e))
        return _respond(reply.reply_json)

    def _stream(self, name, req):
        """Newline-delimited JSON: one reply message per line; an error ends the stream with {"error": ...}."""
        # Errors before the first message still get an HTTP status; restarts before it are retried.
        # OpenFile is the user opening the file: a file lost with a dead server is read again.
        file = getattr(req, "file", "") if name == "OpenFile" else ""
        first, replies = self._server.open_stream(name, req, file=file, reopen=name == "OpenFile")
        if first is None:
            return _respond("", content_type="application/x-ndjson")

        def lines():
            yield (_to_json(first) + "\n").encode()
            try:
                for reply in replies:
                    yield (_to_json(reply) + "\n").encode()
            except grpc.RpcError as e:
                error = {"code": e.code().name, "message": _clip(e.details() or "")}
                yield (json.dumps({"error": error}) + "\n").encode()
            except server_process.CallLost as e:
                error = {"code": "UNAVAILABLE", "message": _clip(str(e))}
                yield (json.dumps({"error": error}) + "\n").encode()

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
