"""Requests that do not come from the plugin's own page are refused (issue 17, 6), and what a
request sends is bounded (issue 17, 5): a real tensorboard, raw HTTP.

The browser side of CSRF (a hostile page on another port in Chromium) is
frontend/tests/csrf.spec.ts.
"""

import http.client
import json

import pytest
from plugin_harness import rel

API = "/data/plugin/graph_ascend/api"


@pytest.fixture(scope="module")
def stats(logdir):
    return rel(logdir, "x/run/compare_*.vis")


def legend(tb, file):
    return tb.ok("GetFileInfo", {"file": file})["meta"]["legend"]


def new_legend(file):
    return json.dumps({"file": file, "legend": [{"color": "#123456", "lo": 0, "hi": 1, "name": "forged"}]})


def raw(tb, method, path, body=b"", headers=()):
    """One request over a fresh connection with exactly these headers (no defaults added)."""
    conn = http.client.HTTPConnection("127.0.0.1", tb.port, timeout=120)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for key, value in headers:
            conn.putheader(key, value)
        if body:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        res = conn.getresponse()
        return res.status, res.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"],
)
def test_api_takes_only_json_bodies(tb, stats, content_type):
    before = legend(tb, stats)
    headers = [("Host", f"127.0.0.1:{tb.port}")]
    if content_type:
        headers.append(("Content-Type", content_type))
    status, data = raw(tb, "POST", f"{API}/SetLegend", new_legend(stats).encode(), headers)
    assert status == 415, data
    assert json.loads(data)["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert legend(tb, stats) == before


@pytest.mark.parametrize(
    "header",
    [
        ("Origin", "http://127.0.0.1:1"),
        ("Origin", "http://evil.example"),
        ("Origin", "null"),
        # The right host and port on a scheme TensorBoard does not serve (issue 35, 10).
        ("Origin", "https://127.0.0.1:{port}"),
        ("Origin", "ws://127.0.0.1:{port}"),
        ("Origin", "127.0.0.1:{port}"),
        ("Sec-Fetch-Site", "cross-site"),
        ("Sec-Fetch-Site", "same-site"),
    ],
)
def test_cross_site_api_calls_are_refused(tb, stats, header):
    before = legend(tb, stats)
    header = (header[0], header[1].format(port=tb.port))
    headers = [("Host", f"127.0.0.1:{tb.port}"), ("Content-Type", "application/json"), header]
    status, data = raw(tb, "POST", f"{API}/SetLegend", new_legend(stats).encode(), headers)
    assert status == 403, data
    assert "cross-site" in json.loads(data)["error"]["message"]
    assert legend(tb, stats) == before


def test_same_origin_calls_pass(tb):
    headers = [
        ("Host", f"127.0.0.1:{tb.port}"),
        ("Content-Type", "application/json; charset=utf-8"),
        ("Origin", f"http://127.0.0.1:{tb.port}"),
        ("Sec-Fetch-Site", "same-origin"),
    ]
    status, data = raw(tb, "POST", f"{API}/Health", b"{}", headers)
    assert status == 200, data
    assert json.loads(data)["version"]


def test_an_https_origin_passes_behind_a_proxy_that_says_https(tb):
    """A reverse proxy ending TLS names the scheme in X-Forwarded-Proto (no cross-site page can add it
    without a preflight): its https origin is the page's own."""
    headers = [
        ("Host", f"127.0.0.1:{tb.port}"),
        ("Content-Type", "application/json"),
        ("Origin", f"https://127.0.0.1:{tb.port}"),
        ("X-Forwarded-Proto", "https"),
    ]
    status, data = raw(tb, "POST", f"{API}/Health", b"{}", headers)
    assert status == 200, data
    headers[2] = ("Origin", f"http://127.0.0.1:{tb.port}")  # and the http origin is then another one
    status, data = raw(tb, "POST", f"{API}/Health", b"{}", headers)
    assert status == 403, data


@pytest.mark.parametrize("host", ["evil.example", "evil.example:6006", "127.0.0.1.evil.example"])
def test_unknown_host_names_are_refused_on_every_route(tb, host):
    headers = [("Host", host)]
    for method, path, body, extra in [
        ("GET", "/data/plugin/graph_ascend/index.html", b"", []),
        ("GET", "/data/plugin/graph_ascend/index.js", b"", []),
        ("POST", f"{API}/ListRuns", b"{}", [("Content-Type", "application/json")]),
    ]:
        status, data = raw(tb, method, path, body, headers + extra)
        assert status == 403, (host, path, data)
        assert b"GRAPH_ASCEND_ALLOWED_HOSTS" in data


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "app.localhost", "10.1.2.3"])
def test_localhost_forms_and_addresses_are_answered(tb, host):
    headers = [("Host", f"{host}:{tb.port}"), ("Content-Type", "application/json")]
    status, data = raw(tb, "POST", f"{API}/ListRuns", b"{}", headers)
    assert status == 200, (host, data)


def test_allowed_hosts_are_configurable(logdir, plugin_installed):
    from plugin_harness import TensorBoard

    board = TensorBoard(logdir, env={"GRAPH_ASCEND_ALLOWED_HOSTS": "graphs.example.org, other.example"})
    try:
        headers = [("Content-Type", "application/json")]
        assert raw(board, "POST", f"{API}/Health", b"{}", headers + [("Host", "graphs.example.org:80")])[0] == 200
        assert raw(board, "POST", f"{API}/Health", b"{}", headers + [("Host", "evil.example")])[0] == 403
    finally:
        board.stop()


def test_a_chunked_body_is_cut_at_the_limit_without_being_read_in_full(tb):
    """64 MiB sent chunked (no Content-Length): refused once 16 MiB are in, TensorBoard's memory does not
    grow by the body."""

    def rss_kib():
        for line in open(f"/proc/{tb.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    before = rss_kib()
    conn = http.client.HTTPConnection("127.0.0.1", tb.port, timeout=120)
    chunk = b"[" + b"0," * (1 << 19) + b"0]"  # 1 MiB
    status = None
    try:
        conn.putrequest("POST", f"{API}/Health")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        for _ in range(64):
            conn.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        conn.send(b"0\r\n\r\n")
        res = conn.getresponse()
        status, data = res.status, res.read()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed before taking the rest
    finally:
        conn.close()
    if status is not None:
        assert status == 400 and b"larger than" in data, (status, data)
    assert rss_kib() - before < 40 * 1024
    assert tb.ok("Health")


def test_long_echoed_fields_are_cut_and_answered_400(tb, stats):
    status, body = tb.api("GetFileInfo", {"file": "a" * 20000 + ".vis"})
    assert status == 400, body
    assert len(body["error"]["message"]) < 1200
    status, body = tb.api("SetLegend", {"file": stats, "legend": [{"color": "#" + "F" * 20000, "lo": 0, "hi": 1}]})
    assert status == 400, body
    assert body["error"]["code"] == "INVALID_ARGUMENT"
    assert len(body["error"]["message"]) < 1200
    status, body = tb.api("NoSuchRpc" + "x" * 20000, {})
    assert status == 404 and len(body["error"]["message"]) < 1200


def test_viewports_past_int32_are_refused(tb, stats):
    view = {"session": "vp", "file": stats, "side": "SIDE_NPU", "microStep": -1}
    status, body = tb.api("GetView", {"view": view, "viewport": {"x": 2147483647, "y": 0, "width": 100, "height": 100}})
    assert status == 400 and "viewport" in body["error"]["message"], body
