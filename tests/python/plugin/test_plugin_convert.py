"""Conversions through the plugin's routes (docs/API.md, "Convert"): a real tensorboard on a log
directory holding raw msprobe sample dumps, the real graph-ascend-server and graph-ascend."""

import json
import shutil

import pytest
from plugin_harness import TensorBoard


@pytest.fixture(scope="module")
def dumps_tb(tmp_path_factory, repo_root, plugin_installed):
    root = tmp_path_factory.mktemp("convert_logdir")
    shutil.copytree(repo_root / "samples" / "gpt_statistics", root / "gpt")
    (root / "gpt" / "mapping.yaml").write_text("TransformerLayer:\n  mlp: feed_forward\n")
    board = TensorBoard(root)
    yield board, root
    board.stop()


def ndjson(data: bytes):
    return [json.loads(line) for line in data.decode().splitlines() if line.strip()]


def test_inputs_list_dump_folders_and_yaml(dumps_tb):
    tb, _ = dumps_tb
    body = tb.ok("ConvertInputs", {})
    assert body["allowed"] is True
    layouts = {d["path"]: d["layout"] for d in body["dumps"]}
    assert layouts["gpt/npu"] == "steps" and layouts["gpt/npu/step0/rank0"] == "files"
    assert body["mappingFiles"] == ["gpt/mapping.yaml"]


def test_convert_streams_progress_and_lists_the_result(dumps_tb):
    tb, root = dumps_tb
    request = {"session": "py1", "npu": "gpt/npu", "bench": "gpt/bench", "outputDir": "conv", "overflowCheck": True}
    plan = tb.ok("ConvertPlan", request)
    assert (plan["kind"], plan["files"]) == ("compare", 2)
    job = tb.ok("ConvertStart", request)
    status, headers, data = tb.request(
        "POST",
        "/data/plugin/graph_ascend/api/ConvertProgress",
        json.dumps({"session": "py1", "id": job["id"]}),
        {"Content-Type": "application/json"},
    )
    assert status == 200 and headers["Content-Type"].startswith("application/x-ndjson")
    states = ndjson(data)
    assert states[-1]["state"] == "CONVERT_DONE", states[-1]
    assert states[-1]["fraction"] == 1
    # The job's own history of stages: a fast conversion passes some between two progress messages.
    assert {"reading dumps", "comparing and writing"} <= set(states[-1]["stages"])
    outputs = states[-1]["outputs"]
    assert len(outputs) == 2 and all((root / o).is_file() for o in outputs)
    listed = {f["path"] for f in tb.ok("ListRuns", {})["files"]}
    assert set(outputs) <= listed


def test_convert_refuses_paths_out_of_the_log_directory(dumps_tb):
    tb, _ = dumps_tb
    for bad in ({"npu": "../gpt"}, {"npu": "/etc"}, {"npu": "gpt/npu", "outputDir": "../x"}):
        status, body = tb.api("ConvertStart", {"session": "py1", "outputDir": "o", **bad})
        assert status == 400 and body["error"]["code"] == "INVALID_ARGUMENT", body


def test_progress_of_another_session_is_not_found(dumps_tb):
    tb, _ = dumps_tb
    job = tb.ok("ConvertStart", {"session": "py2", "npu": "gpt/npu/step0", "outputDir": "mine"})
    status, _, data = tb.request(
        "POST",
        "/data/plugin/graph_ascend/api/ConvertProgress",
        json.dumps({"session": "someone-else", "id": job["id"]}),
        {"Content-Type": "application/json"},
    )
    assert status == 404, data
    done = ndjson(
        tb.request(
            "POST",
            "/data/plugin/graph_ascend/api/ConvertProgress",
            json.dumps({"session": "py2", "id": job["id"]}),
            {"Content-Type": "application/json"},
        )[2]
    )
    assert done[-1]["state"] == "CONVERT_DONE"
