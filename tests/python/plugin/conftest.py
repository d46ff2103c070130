"""Fixtures of the plugin tests: a log directory of .vis files that the
graph-ascend builder makes from the real msprobe dumps in samples/, and a real
`tensorboard --logdir` process with the installed graph_ascend plugin.

scripts/test-python.sh installs the plugin (pip install plugin/python) first.
"""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest
from plugin_harness import TensorBoard


def _builder(build_dir: pathlib.Path) -> pathlib.Path:
    builder = build_dir / "bin" / "graph-ascend"
    if not builder.is_file():
        pytest.fail(f"{builder} is missing: build the C++ tree first (scripts/build.sh)")
    return builder


def _build(builder, repo_root, case, config, out, *flags):
    cwd = repo_root / "samples" / case
    subprocess.run(
        [str(builder), "graph", "-i", config, "-o", str(out), *flags],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return sorted(out.glob("*.vis"))


@pytest.fixture(scope="session")
def builder(build_dir):
    return _builder(build_dir)


@pytest.fixture(scope="session")
def logdir(tmp_path_factory, repo_root, builder):
    """The log directory:
    x/run/compare_*.vis           cnn_statistics compare
    y/run/compare_*.vis           cnn_md5 compare (same folder name as x/run)
    dist/compare_step*_rank*_*.vis   dist_gloo batch compare (2 steps x 2 ranks)
    overflow/build_*.vis          overflow_nan build with -oc
    bad/notes.vis (JSON), bad/truncated.vis, bad/readme.txt, bad/escape.vis (symlink out)
    """
    root = tmp_path_factory.mktemp("logdir")
    outside = tmp_path_factory.mktemp("outside")
    _build(builder, repo_root, "cnn_statistics", "compare.json", root / "x" / "run")
    _build(builder, repo_root, "cnn_md5", "compare.json", root / "y" / "run")
    _build(builder, repo_root, "dist_gloo", "batch.json", root / "dist")
    _build(builder, repo_root, "overflow_nan", "build.json", root / "overflow", "-oc")
    bad = root / "bad"
    bad.mkdir()
    (bad / "notes.vis").write_text(json.dumps({"NPU": {"root": "DefaultModel", "node": {}}}))
    good = next((root / "x" / "run").glob("*.vis")).read_bytes()
    (bad / "truncated.vis").write_bytes(good[: len(good) // 2])
    (bad / "readme.txt").write_text("not a graph")
    secret = outside / "secret.vis"
    secret.write_bytes(good)
    (bad / "escape.vis").symlink_to(secret)
    return root


@pytest.fixture(scope="session")
def plugin_installed():
    try:
        import graph_ascend_plugin.plugin  # noqa: F401
    except ImportError as e:
        pytest.fail(f"the plugin is not installed in this environment ({e}); run scripts/test-python.sh")
    assert shutil.which("tensorboard", path=str(pathlib.Path(sys.executable).parent))


@pytest.fixture(scope="session")
def tb(logdir, plugin_installed):
    board = TensorBoard(logdir)
    yield board
    board.stop()
