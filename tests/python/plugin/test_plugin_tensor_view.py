"""TensorView through the plugin's route (POST /data/plugin/graph_ascend/api/TensorView): the plugin
forwards, the service reads both runs' .pt files of a task "tensor" compare (samples/gpt_tensor,
copied into the log directory) and answers torch's numbers; a compare whose Bench dump lies outside
the log directory is refused, and nothing of the file outside is told."""

import shutil
import subprocess

import pytest
from plugin_harness import TensorBoard, rel

NODE = "Functional.embedding.0.backward"
ITEM = NODE + ".output.0"


def _compare(builder, root, npu, bench, out):
    config = out.parent / (out.name + ".json")
    config.write_text('{"npu_path": "%s", "bench_path": "%s"}' % (npu, bench))
    subprocess.run(
        [str(builder), "graph", "-i", str(config), "-o", str(out)], check=True, capture_output=True, timeout=300
    )


@pytest.fixture(scope="module")
def board(tmp_path_factory, repo_root, builder, plugin_installed):
    root = tmp_path_factory.mktemp("logdir")
    outside = tmp_path_factory.mktemp("outside")
    sample = repo_root / "samples" / "gpt_tensor"
    shutil.copytree(sample / "npu" / "step0" / "rank0", root / "dumps" / "npu")
    shutil.copytree(sample / "bench" / "step0" / "rank0", root / "dumps" / "bench")
    shutil.copytree(sample / "bench" / "step0" / "rank0", outside / "bench")
    _compare(builder, root, root / "dumps" / "npu", root / "dumps" / "bench", root / "inside")
    _compare(builder, root, root / "dumps" / "npu", outside / "bench", root / "escape")
    tb = TensorBoard(root)
    yield tb, root, outside
    tb.stop()


def _node(tb, file):
    tb.ok("GetFileInfo", {"file": file})
    hits = tb.ok("Search", {"view": {"session": "t", "file": file, "microStep": -1}, "query": NODE})["hits"]
    return next(h["index"] for h in hits if h["name"] == NODE)


def test_the_view_answers_torchs_numbers(board):
    tb, root, _ = board
    file = rel(root, "inside/*.vis")
    reply = tb.ok(
        "TensorView",
        {"file": file, "node": _node(tb, file), "item": ITEM, "topK": 3, "mask": {"kind": "value", "axis": 0}},
    )
    assert reply["npu"]["path"] == "dumps/npu/dump_tensor_data/" + ITEM + ".pt"
    assert reply["npu"]["shape"] == ["64", "16"]  # int64 as strings in protobuf's JSON mapping
    assert reply["maxAbs"] == pytest.approx(0.0381232388317585, rel=1e-12)
    assert [w["index"] for w in reply["worst"]] == [["2", "12"], ["2", "15"], ["2", "10"]]
    assert reply["worst"][0]["bench"] == pytest.approx(-0.07923020422458649, rel=1e-12)
    assert (reply["maskedRows"], reply["rows"], reply["compared"]) == ("61", "64", "48")


def test_a_dump_outside_the_log_directory_is_refused_alike_whether_or_not_it_exists(board):
    tb, root, outside = board
    file = rel(root, "escape/*.vis")
    request = {"file": file, "node": _node(tb, file), "item": ITEM}
    status, present = tb.api("TensorView", request)
    assert status == 409 and present["error"]["code"] == "FAILED_PRECONDITION", present
    assert "not reachable inside the log directory" in present["error"]["message"]
    shutil.rmtree(outside / "bench")
    status_absent, absent = tb.api("TensorView", request)
    assert (status_absent, absent) == (status, present)


def test_a_file_outside_the_log_directory_is_not_opened(board):
    tb, _, _ = board
    status, body = tb.api("TensorView", {"file": "../outside.vis", "item": ITEM})
    assert status == 400, body
