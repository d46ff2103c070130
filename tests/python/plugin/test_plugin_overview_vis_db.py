"""The rank overview through the plugin on msprobe's own batch .vis.db (issue 29 point 2).

A real msprobe 26.2.0 `graph_visualize` batch (samples/dist_gloo/batch.json, 2 steps x 2 ranks in one
file, tests/data/msprobe_outputs) under a name msprobe's -o gives it: GetOverview on any of its
listed graphs ("run.vis.db#step0_rank1") answers the four cells; it answered 404 "no such file".
"""

import shutil

import pytest
from plugin_harness import TensorBoard

DB = "dist_gloo_batch_26.2.0.vis.db"


@pytest.fixture(scope="module")
def board(tmp_path_factory, repo_root, plugin_installed):
    logdir = tmp_path_factory.mktemp("overview_db")
    (logdir / "msprobe26").mkdir()
    shutil.copyfile(repo_root / "tests" / "data" / "msprobe_outputs" / DB, logdir / "msprobe26" / DB)
    tb = TensorBoard(logdir)
    yield tb
    tb.stop()


def test_the_overview_of_a_multi_graph_vis_db_has_every_graph(board):
    files = [f["path"] for f in board.ok("ListRuns")["files"]]
    assert files == [f"msprobe26/{DB}#step{s}_rank{r}" for s in (0, 1) for r in (0, 1)]
    for asked in (files[0], files[3]):
        reply = board.ok("GetOverview", {"file": asked})
        assert reply["steps"] == ["step0", "step1"]
        assert reply["ranks"] == ["rank0", "rank1"]
        cells = reply["cells"]
        assert sorted(c["file"] for c in cells) == files
        for c in cells:
            assert not c.get("error"), c
            assert c["counted"] is True, c
        # The counts are the graph's own, as its file info gives them once opened.
        for c in cells:
            info = board.ok("GetFileInfo", {"file": c["file"]})
            npu = info["npu"]
            for level in ("Critical", "High", "Medium"):
                assert c.get(f"overflow{level}", 0) == npu.get(f"overflow{level}", 0), (c["file"], level)


def test_a_graph_the_db_does_not_hold_and_a_missing_db_answer_their_reason(board):
    status, body = board.api("GetOverview", {"file": f"msprobe26/{DB}#step7_rank0"})
    assert status != 200 and status != 404, body
    status, body = board.api("GetOverview", {"file": "msprobe26/gone.vis.db#step0_rank0"})
    assert status == 404, body
    assert "gone.vis.db" in str(body)
