"""The GRAPH_ASCEND plugin inside a real tensorboard, driven over HTTP.

Every route of docs/API.md is called on .vis files that the builder made
from the msprobe samples; answers are checked against the builder's own
`graph-ascend info` and against the file's names and legend.
"""

import json
import re
import signal
import subprocess

import pytest
from plugin_harness import process_alive, rel, wait_until

API = "/data/plugin/graph_ascend/api"


@pytest.fixture(scope="module")
def stats(logdir):
    return rel(logdir, "x/run/compare_*.vis")


@pytest.fixture(scope="module")
def md5(logdir):
    return rel(logdir, "y/run/compare_*.vis")


@pytest.fixture(scope="module")
def overflow(logdir):
    return rel(logdir, "overflow/build_*.vis")


def view(file, session="s1", side="SIDE_NPU", micro=-1):
    return {"session": session, "file": file, "side": side, "microStep": micro}


def builder_info(builder, path):
    """Counts printed by `graph-ascend info`."""
    text = subprocess.run([str(builder), "info", str(path)], check=True, capture_output=True, text=True).stdout
    out = {"buckets": {}, "overflow": {}}
    m = re.search(r"^NPU: (\d+) nodes\n(?:\s+matched (\d+), unmatched (\d+))?", text, re.MULTILINE)
    out["npu"] = tuple(int(x) for x in m.groups() if x is not None)
    for color, count in re.findall(r"^\s+(#[0-9A-Fa-f]{6})\s+\S+\s+(\d+)$", text, re.MULTILINE):
        out["buckets"][color] = int(count)
    m = re.search(r"overflow: critical (\d+), high (\d+), medium (\d+)", text)
    if m:
        out["overflow"] = dict(zip(("critical", "high", "medium"), (int(x) for x in m.groups())))
    return out


def all_names(tb, file, side="SIDE_NPU"):
    """Every node under the root, by a regex that matches any name."""
    body = tb.ok("Search", {"view": view(file, side=side), "query": "^", "regex": True, "limit": 10000})
    assert body["total"] == len(body["hits"])
    return body["hits"]


# ---------------------------------------------------------------- TensorBoard integration


def test_plugin_is_listed_as_an_iframe_plugin(tb):
    status, _, data = tb.request("GET", "/data/plugins_listing")
    assert status == 200
    entry = json.loads(data)["graph_ascend"]
    assert entry["enabled"] is True
    assert entry["loading_mechanism"] == {"type": "IFRAME", "module_path": "/data/plugin/graph_ascend/index.js"}


def test_static_routes_carry_the_csp(tb):
    status, headers, data = tb.request("GET", "/data/plugin/graph_ascend/index.js")
    assert status == 200
    assert headers["Content-Type"].startswith("application/javascript")
    assert "index.html" in data.decode()
    status, headers, data = tb.request("GET", "/data/plugin/graph_ascend/index.html")
    assert status == 200
    assert headers["Content-Type"].startswith("text/html")
    csp = headers["Content-Security-Policy"]
    assert "script-src 'unsafe-inline'" in csp and "connect-src 'self'" in csp
    assert headers["X-Frame-Options"] == "SAMEORIGIN"
    assert b"<script" in data  # a single file: its script is inline
    status, _, _ = tb.request("GET", "/data/plugin/graph_ascend/other.js")
    assert status == 404


# ---------------------------------------------------------------- runs and files


def test_list_runs_names_every_vis_by_relative_path(tb, logdir):
    files = tb.ok("ListRuns")["files"]
    paths = [f["path"] for f in files]
    on_disk = sorted(p.relative_to(logdir).as_posix() for p in logdir.rglob("*.vis") if p.name != "escape.vis")
    assert sorted(paths) == on_disk
    assert "bad/escape.vis" not in paths  # a symlink out of the log directory
    x = next(f for f in files if f["path"].startswith("x/run/"))
    y = next(f for f in files if f["path"].startswith("y/run/"))
    assert x["group"] != y["group"] and x["group"].startswith("x/run/") and y["group"].startswith("y/run/")
    dist = [f for f in files if f["dir"] == "dist"]
    assert len(dist) == 4
    assert len({f["group"] for f in dist}) == 1
    assert sorted((f["step"], f["rank"]) for f in dist) == [
        ("step0", "rank0"),
        ("step0", "rank1"),
        ("step1", "rank0"),
        ("step1", "rank1"),
    ]
    assert all(f["kind"] == "compare" for f in dist)
    assert next(f for f in files if f["dir"] == "overflow")["kind"] == "build"


def test_open_file_streams_progress_then_the_info(tb, stats):
    status, headers, data = tb.request(
        "POST", f"{API}/OpenFile", json.dumps({"file": stats}), {"Content-Type": "application/json"}
    )
    assert status == 200
    assert headers["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in data.decode().splitlines()]
    fractions = [m["fraction"] for m in lines]
    assert fractions == sorted(fractions)
    assert not any(m.get("done") for m in lines[:-1])
    assert lines[-1]["done"] is True
    assert lines[-1]["info"] == tb.ok("GetFileInfo", {"file": stats})


def test_file_info_agrees_with_the_builder(tb, logdir, builder, stats, overflow):
    info = tb.ok("GetFileInfo", {"file": stats})
    expected = builder_info(builder, logdir / stats)
    npu = info["npu"]
    assert (npu["nodes"], npu["matched"], npu["unmatched"]) == expected["npu"]
    legend = info["meta"]["legend"]
    counts = {legend[b["bucket"]]["color"]: b["count"] for b in npu["buckets"]}
    assert counts == expected["buckets"]
    assert info["meta"]["kind"] == "GRAPH_COMPARE" and info["meta"]["mode"] == "MODE_STATISTICS"

    info = tb.ok("GetFileInfo", {"file": overflow})
    expected = builder_info(builder, logdir / overflow)
    assert "bench" not in info or info["bench"]["nodes"] == 0
    got = {k: info["npu"][f"overflow{k.capitalize()}"] for k in ("critical", "high", "medium")}
    assert got == expected["overflow"]


# ---------------------------------------------------------------- views


def test_views_expand_collapse_reveal_per_session(tb, stats):
    root_view = tb.ok("GetView", {"view": view(stats, "tab-a")})
    nodes = root_view["nodes"]
    root = nodes[0]
    assert root["index"] == 0 and root["parent"] == -1 and root["expanded"]
    assert root_view["totalVisible"] == len(nodes)
    assert all(n["parent"] == 0 for n in nodes[1:])
    target = next(n for n in nodes[1:] if n["expandable"])
    expanded = tb.ok("Expand", {"view": view(stats, "tab-a"), "node": target["index"]})
    assert expanded["focus"] == target["index"]
    kids = [n for n in expanded["nodes"] if n["parent"] == target["index"]]
    assert kids and expanded["totalVisible"] == root_view["totalVisible"] + len(kids)
    box = next(n for n in expanded["nodes"] if n["index"] == target["index"])
    for k in kids:  # boxes nest
        assert box["x"] <= k["x"] and k["x"] + k["width"] <= box["x"] + box["width"]
        assert box["y"] < k["y"] and k["y"] + k["height"] <= box["y"] + box["height"]
    # Another tab still sees the root only.
    assert tb.ok("GetView", {"view": view(stats, "tab-b")})["totalVisible"] == root_view["totalVisible"]
    assert tb.ok("GetView", {"view": view(stats, "tab-a")})["totalVisible"] == expanded["totalVisible"]
    collapsed = tb.ok("Collapse", {"view": view(stats, "tab-a"), "node": target["index"]})
    assert collapsed["totalVisible"] == root_view["totalVisible"]

    # Reveal the deepest node: each ancestor is shown expanded.
    hits = all_names(tb, stats)
    deepest = max(hits, key=lambda h: len(h["ancestors"]))
    revealed = tb.ok("Reveal", {"view": view(stats, "tab-c"), "node": deepest["index"]})
    shown = {n["name"]: n for n in revealed["nodes"]}
    assert deepest["name"] in shown
    for a in deepest["ancestors"]:
        assert shown[a]["expanded"], a


def test_viewport_cuts_the_reply(tb, stats):
    hits = all_names(tb, stats)
    deepest = max(hits, key=lambda h: len(h["ancestors"]))
    full = tb.ok("Reveal", {"view": view(stats, "vp"), "node": deepest["index"]})
    rect = {"x": 0, "y": 0, "width": full["width"], "height": 60}
    cut = tb.ok("GetView", {"view": view(stats, "vp"), "viewport": rect})
    assert cut["totalVisible"] == full["totalVisible"]
    assert 0 < len(cut["nodes"]) < len(full["nodes"])
    for n in cut["nodes"]:
        assert n["y"] < 60 and n["y"] + n["height"] > 0


# ---------------------------------------------------------------- search and filters


@pytest.mark.parametrize(
    "query,regex,ci",
    [
        ("conv2d", False, False),
        ("CONV2D", False, True),
        ("Module.layer1", False, False),
        (r"^Functional\.conv2d\.\d+\.forward$", True, False),
        (r"BATCHNORM2D\.(forward|backward)", True, True),
    ],
)
def test_search_matches_what_python_finds(tb, stats, query, regex, ci):
    names = [h["name"] for h in all_names(tb, stats)]
    flags = re.IGNORECASE if ci else 0
    pattern = re.compile(query if regex else re.escape(query), flags)
    expected = [n for n in names if pattern.search(n)]
    body = tb.ok("Search", {"view": view(stats), "query": query, "regex": regex, "caseInsensitive": ci, "limit": 10000})
    assert [h["name"] for h in body["hits"]] == expected
    assert body["total"] == len(expected) > 0
    page = tb.ok(
        "Search", {"view": view(stats), "query": query, "regex": regex, "caseInsensitive": ci, "offset": 1, "limit": 2}
    )
    assert [h["name"] for h in page["hits"]] == expected[1:3]


def test_search_hits_carry_their_ancestor_path(tb, stats):
    by_name = {h["name"]: h for h in all_names(tb, stats)}
    for hit in list(by_name.values())[:50]:
        detail = tb.ok("GetNodeDetail", {"view": view(stats), "node": hit["index"]})
        assert detail["node"]["ancestors"] == hit["ancestors"]
        if hit["ancestors"][1:]:
            parent = by_name[hit["ancestors"][-1]]
            assert detail["node"]["parent"] == parent["index"]


def test_filters_by_bucket_agree_with_the_file_summary(tb, stats):
    info = tb.ok("GetFileInfo", {"file": stats})
    for b in info["npu"]["buckets"]:
        body = tb.ok("Filter", {"view": view(stats), "buckets": [b["bucket"]], "limit": 10000})
        assert body["total"] == b["count"]
        assert all(h["bucket"] == b["bucket"] for h in body["hits"])
    leaves = tb.ok("Filter", {"view": view(stats), "buckets": [0, 1, 2, 3, 4], "leavesOnly": True, "limit": 10000})
    for h in leaves["hits"][:30]:
        detail = tb.ok("GetNodeDetail", {"view": view(stats), "node": h["index"]})
        assert detail["node"]["childCount"] == 0


def test_overflow_filter_agrees_with_the_builder(tb, logdir, builder, overflow):
    expected = builder_info(builder, logdir / overflow)["overflow"]
    for level in ("critical", "high", "medium"):
        body = tb.ok("Filter", {"view": view(overflow), "overflow": [f"OVERFLOW_{level.upper()}"], "limit": 10000})
        assert body["total"] == expected[level]
        assert all(h["overflow"] == f"OVERFLOW_{level.upper()}" for h in body["hits"])


# ---------------------------------------------------------------- details and matching


def test_node_detail_has_both_sides(tb, stats):
    hit = tb.ok("Search", {"view": view(stats), "query": "Functional.conv2d.0.forward"})["hits"][0]
    detail = tb.ok("GetNodeDetail", {"view": view(stats), "node": hit["index"]})
    assert detail["node"]["name"] == "Functional.conv2d.0.forward"
    assert detail["node"]["matchedName"] == "Functional.conv2d.0.forward"
    assert detail["detail"]["input"] and detail["detail"]["output"]
    metrics = {m["name"] for m in detail["detail"]["output"][0]["metric"]}
    assert {"MaxRelativeErr", "NormRelativeErr"} <= metrics
    assert detail["matched"]["name"] == "Functional.conv2d.0.forward"
    assert detail["matchedDetail"]["output"]
    assert detail["stack"] and all(isinstance(s, str) for s in detail["stack"])
    bench = tb.ok("GetNodeDetail", {"view": view(stats, side="SIDE_BENCH"), "node": detail["node"]["matched"]})
    assert bench["matched"]["index"] == hit["index"]


def test_manual_match_reproduces_the_builders_verdict(tb, logdir, stats):
    """Unmatch an automatic pair, match it again by hand: same metrics, same precision index. Exactly the pair
    picked: its backward twin keeps its own match (issue 30 point 1)."""
    hit = tb.ok(
        "Search", {"view": view(stats), "query": "^Module\\.layer1\\.0\\.conv1\\.Conv2d\\.forward\\.0$", "regex": True}
    )["hits"][0]
    before = tb.ok("GetNodeDetail", {"view": view(stats), "node": hit["index"]})
    bench_index = before["node"]["matched"]
    pair = {"file": stats, "npuNode": hit["index"], "benchNode": bench_index}

    un = tb.ok("Unmatch", pair)
    assert [r["npu"] for r in un["results"]] == ["Module.layer1.0.conv1.Conv2d.forward.0"]
    assert all(r["ok"] for r in un["results"])
    assert un["info"]["npu"]["unmatched"] == 1
    unmatched = tb.ok("Filter", {"view": view(stats), "unmatched": True})
    assert sorted(h["name"] for h in unmatched["hits"]) == sorted(r["npu"] for r in un["results"])
    bench_unmatched = tb.ok("Filter", {"view": view(stats, side="SIDE_BENCH"), "unmatched": True})
    assert bench_unmatched["total"] == 1
    cleared = tb.ok("GetNodeDetail", {"view": view(stats), "node": hit["index"]})
    assert "matched" not in cleared and cleared["node"]["matched"] == -1
    assert not any(item["metric"] for item in cleared["detail"]["output"])

    again = tb.ok("Match", pair)
    assert all(r["ok"] for r in again["results"])
    assert again["results"][0]["precisionIndex"] == pytest.approx(before["node"]["precisionIndex"])
    after = tb.ok("GetNodeDetail", {"view": view(stats), "node": hit["index"]})
    assert after["node"]["precisionIndex"] == before["node"]["precisionIndex"]
    assert after["node"]["bucket"] == before["node"]["bucket"]
    assert after["detail"]["output"] == before["detail"]["output"]
    assert after["detail"]["input"] == before["detail"]["input"]
    assert again["info"]["npu"]["unmatched"] == 0
    assert again["info"]["manualMatches"] == 1

    # Saved beside the .vis in the reference's format, and loaded again.
    saved = tb.ok("SaveMatches", {"file": stats})
    assert saved == {"path": stats + ".config", "matches": 1}
    config = json.loads((logdir / saved["path"]).read_text())
    assert config == {"Module.layer1.0.conv1.Conv2d.forward.0": "Module.layer1.0.conv1.Conv2d.forward.0"}
    tb.ok("Unmatch", pair)
    loaded = tb.ok("LoadMatches", {"file": stats})
    assert [r["ok"] for r in loaded["results"]] == [True]
    assert loaded["info"]["npu"]["unmatched"] == 0 and loaded["info"]["matchesSaved"] is True


def test_matching_errors(tb, stats, overflow):
    hits = all_names(tb, stats)
    a, b = hits[0]["index"], hits[5]["index"]
    body = tb.ok("Match", {"file": stats, "npuNode": a, "benchNode": b})
    assert body["results"][0]["ok"] is False and "already matched" in body["results"][0]["error"]
    status, body = tb.api("Match", {"file": overflow, "npuNode": 1, "benchNode": 1})
    assert status == 409 and body["error"]["code"] == "FAILED_PRECONDITION"
    status, body = tb.api("LoadMatches", {"file": stats, "config": "../outside.config"})
    assert status == 400


def test_set_legend_recolours_and_validates(tb, md5):
    info = tb.ok("GetFileInfo", {"file": md5})
    legend = info["meta"]["legend"]
    assert legend  # md5: equal / different / unmatched
    new = [{"color": "#00FF00", "lo": 0.0, "hi": 0.5, "name": "low"}, {"color": "#FF0000", "lo": 0.5, "hi": 1.0}]
    after = tb.ok("SetLegend", {"file": md5, "legend": new})
    assert [b["color"] for b in after["meta"]["legend"]] == ["#00FF00", "#FF0000"]
    colored = sum(b["count"] for b in after["npu"]["buckets"])
    assert colored > 0
    status, body = tb.api("SetLegend", {"file": md5, "legend": [{"color": "javascript:alert(1)", "lo": 0, "hi": 1}]})
    assert status == 400 and "legend[0]" in body["error"]["message"]
    tb.ok("SetLegend", {"file": md5, "legend": legend})
    assert tb.ok("GetFileInfo", {"file": md5})["npu"]["buckets"] == info["npu"]["buckets"]


# ---------------------------------------------------------------- bad requests


@pytest.mark.parametrize(
    "rpc,message,status,code",
    [
        ("GetFileInfo", {"file": "nowhere/compare.vis"}, 404, "NOT_FOUND"),
        ("GetFileInfo", {"file": "../etc/passwd.vis"}, 400, "INVALID_ARGUMENT"),
        ("GetFileInfo", {"file": "x/../../secret.vis"}, 400, "INVALID_ARGUMENT"),
        ("GetFileInfo", {"file": "/etc/hostname.vis"}, 400, "INVALID_ARGUMENT"),
        ("GetFileInfo", {"file": "bad/escape.vis"}, 400, "INVALID_ARGUMENT"),
        ("GetFileInfo", {"file": "bad/readme.txt"}, 400, "INVALID_ARGUMENT"),
        ("GetFileInfo", {"file": "bad/notes.vis"}, 409, "DATA_LOSS"),
        ("GetFileInfo", {"file": "bad/truncated.vis"}, 409, "DATA_LOSS"),
        ("GetFileInfo", {"file": ""}, 400, "INVALID_ARGUMENT"),
        ("GetFileInfo", {"fiel": "x.vis"}, 400, "INVALID_ARGUMENT"),
    ],
)
def test_bad_file_requests(tb, rpc, message, status, code):
    got, body = tb.api(rpc, message)
    assert (got, body["error"]["code"]) == (status, code), body
    assert body["error"]["message"]


def test_bad_requests_name_what_is_wrong(tb, stats):
    status, body = tb.api("GetView", raw="{not json")
    assert status == 400 and body["error"]["code"] == "INVALID_ARGUMENT"
    status, body = tb.api("Expand", {"view": view(stats), "node": 10**7})
    assert status == 404 and "does not exist" in body["error"]["message"]
    status, body = tb.api("GetView", {"view": view(stats, session="")})
    assert status == 400
    status, body = tb.api("GetView", {"view": view(stats, micro=99)})
    assert status == 400 and "micro step" in body["error"]["message"]
    status, body = tb.api("Search", {"view": view(stats), "query": "(", "regex": True})
    assert status == 400 and "regular expression" in body["error"]["message"]
    status, body = tb.api("NoSuchRpc", {})
    assert status == 404
    status, body = tb.api("CallJson", {"method": "ListRuns"})  # the bridge is not a route
    assert status == 404
    status, body = tb.api("GetView", {"view": view(stats), "viewe": 1})
    assert status == 400 and "viewe" in body["error"]["message"]
    status, _headers, data = tb.request("GET", f"{API}/ListRuns")
    assert status == 405 and json.loads(data)["error"]["code"] == "METHOD_NOT_ALLOWED"
    status, body = tb.api("OpenFile", {"file": "bad/truncated.vis"})
    assert status == 409 and "bad/truncated.vis" in body["error"]["message"]
    assert str(stats) not in body["error"]["message"]


# ---------------------------------------------------------------- the server process


def test_killed_server_is_restarted_and_the_next_request_answers(tb, stats):
    tb.ok("Health")
    pids = tb.server_pids()
    assert len(pids) == 1
    old = pids[0]
    import os

    os.kill(old, signal.SIGKILL)
    assert wait_until(lambda: not process_alive(old))
    info = tb.ok("GetFileInfo", {"file": stats})  # reopened by the new server
    assert info["file"] == stats
    new = tb.server_pids()
    assert len(new) == 1 and new[0] != old
    assert tb.ok("Health")["openFiles"] >= 1


def test_server_exits_with_tensorboard(logdir, plugin_installed):
    from plugin_harness import TensorBoard

    board = TensorBoard(logdir)
    try:
        board.ok("Health")
        pids = board.server_pids()
        assert len(pids) == 1
    finally:
        board.stop(signal.SIGKILL)  # no atexit: the server must notice on its own
    assert wait_until(lambda: not process_alive(pids[0]), timeout=20)
