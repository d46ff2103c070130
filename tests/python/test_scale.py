"""bench/scale/scale_sample.py: its output passes the same checks as the real samples."""

import collections
import filecmp
import os
import re
import subprocess
import sys

import pytest
from samples_check import (
    API_RE,
    check_compare_json,
    check_dump_folder,
    dump_layout,
    first_difference,
    load_json,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCALER = os.path.join(ROOT, "bench", "scale", "scale_sample.py")
CASE = os.path.join(ROOT, "samples", "gpt_statistics")


def scale(out, *args):
    return subprocess.run(
        [sys.executable, SCALER, "--case", CASE, "--out", str(out), *args], capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def scaled(tmp_path_factory):
    out = tmp_path_factory.mktemp("scaled")
    result = scale(out, "--nodes", "3000", "--steps", "3", "--ranks", "2")
    assert result.returncode == 0, result.stderr
    return out, load_json(os.path.join(out, "scale_info.json"))


def data_of(folder):
    return load_json(os.path.join(folder, "dump.json"))["data"]


def test_layout_and_format(scaled):
    out, _ = scaled
    for side in ("npu", "bench"):
        layout = dump_layout(os.path.join(out, side))
        assert layout == [(f"step{k}", ["rank0", "rank1"]) for k in range(3)]
        for step, ranks in layout:
            for rank in ranks:
                check_dump_folder(os.path.join(out, side, step, rank), "statistics", "mix")
    check_compare_json(str(out), "build.json", want_bench=False, want_kind="files")
    check_compare_json(str(out), "compare.json", want_bench=True, want_kind="files")
    check_compare_json(str(out), "batch.json", want_bench=True, want_kind="steps")


def test_reaches_the_node_target(scaled):
    out, info = scaled
    folder = os.path.join(out, "npu", "step0", "rank0")
    names = set(load_json(os.path.join(folder, "construct.json"))) | set(data_of(folder))
    assert info["nodes_per_graph"]["npu"] == len(names)
    assert abs(len(names) - 3000) <= len(names) / info["layers"]  # within about one layer
    layers = {int(m.group(1)) for n in names for m in [re.search(r"\.layers\.(\d+)\.", n)] if m}
    assert layers == set(range(info["layers"])) and info["layers"] > 10


def test_call_counts_are_consistent(scaled):
    out, _ = scaled
    folder = os.path.join(out, "npu", "step1", "rank0")
    construct = load_json(os.path.join(folder, "construct.json"))
    names = set(construct) | set(data_of(folder))
    counts = collections.defaultdict(set)
    for name in names:
        if API_RE.match(name):
            parts = name.split(".")
            counts[".".join(parts[:-2])].add(int(parts[-2]))
            if parts[-1] == "backward":
                assert ".".join(parts[:-1] + ["forward"]) in names, f"{name} has no forward call"
    for api, values in counts.items():
        assert values == set(range(len(values))), f"{api}: call counts are not 0..n-1"
    # Every layer copy holds the same kinds of calls, one decoder layer's worth.
    per_layer = collections.defaultdict(collections.Counter)
    for name, parent in construct.items():
        match = re.search(r"\.layers\.(\d+)\.", parent or name)
        if match and API_RE.match(name):
            per_layer[int(match.group(1))][re.sub(r"\.\d+\.(forward|backward)$", r".\1", name)] += 1
    kinds = {tuple(sorted(c.items())) for c in per_layer.values()}
    assert len(kinds) <= 2, "layers differ beyond the npu culprit layer's autocast"


def test_optimizer_scales_with_the_parameters(scaled):
    out, _ = scaled
    source = os.path.join(CASE, "npu", "step1", "rank0")
    scaled_folder = os.path.join(out, "npu", "step1", "rank0")

    def ops_per_param(folder):
        construct = load_json(os.path.join(folder, "construct.json"))
        ops = sum(1 for parent in construct.values() if parent == "optimizer")
        params = sum(
            len(e.get("parameters") or {})
            for n, e in data_of(folder).items()
            if n.startswith("Module.") and n.endswith(".forward.0")
        )
        return ops, params

    ops, params = ops_per_param(source)
    scaled_ops, scaled_params = ops_per_param(scaled_folder)
    assert scaled_params > params and scaled_ops * params == ops * scaled_params


def test_culprit_is_kept(scaled):
    out, info = scaled
    npu = data_of(os.path.join(out, "npu", "step0", "rank0"))
    bench = data_of(os.path.join(out, "bench", "step0", "rank0"))
    assert list(npu) == list(bench)
    assert first_difference(npu, bench) == info["culprit"]
    construct = load_json(os.path.join(out, "npu", "step0", "rank0", "construct.json"))
    layer = info["culprit_layer"]
    assert 0 < layer < info["layers"] - 1
    assert construct[info["culprit"]] == f"Module.model.layers.{layer}.mlp.gate_proj.Linear.forward.0"
    source = data_of(os.path.join(CASE, "npu", "step0", "rank0"))
    assert npu[info["culprit"]] == source[info["source_culprit"]]


def test_stack_groups_cover_the_copies(scaled):
    out, info = scaled
    folder = os.path.join(out, "npu", "step0", "rank0")
    stack = load_json(os.path.join(folder, "stack.json"))
    source = load_json(os.path.join(CASE, "npu", "step0", "rank0", "stack.json"))
    assert [g[1] for g in stack.values()] == [g[1] for g in source.values()]
    named = {n for g in stack.values() for n in g[0]}
    assert f"Module.model.layers.{info['layers'] - 1}.mlp.down_proj.Linear.forward.0" in named


def test_scaling_to_the_source_size_reproduces_it(tmp_path):
    result = scale(tmp_path, "--nodes", "1", "--steps", "2")
    assert result.returncode == 0, result.stderr
    for side in ("npu", "bench"):
        for step in ("step0", "step1"):
            for name in ("construct.json", "dump.json", "stack.json"):
                assert filecmp.cmp(
                    os.path.join(tmp_path, side, step, "rank0", name),
                    os.path.join(CASE, side, step, "rank0", name),
                    shallow=False,
                ), (side, step, name)


def test_refuses_tensor_and_layerless_cases(tmp_path):
    for case, message in (("gpt_tensor", "task tensor"), ("cnn_statistics", "no decoder layers")):
        result = subprocess.run(
            [
                sys.executable,
                SCALER,
                "--case",
                os.path.join(ROOT, "samples", case),
                "--nodes",
                "1000",
                "--out",
                str(tmp_path / case),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 1
        assert message in result.stderr and f"samples/{case}/npu/step0/rank0" in result.stderr, result.stderr
        assert not os.path.exists(tmp_path / case / "compare.json")


# bench/reference: the runner's input translation and the measurement of process trees.
sys.path.insert(0, os.path.join(ROOT, "bench", "reference"))
import measure
import run_msprobe


def test_reference_runner_resolves_paths_against_the_compare_json():
    config = run_msprobe.absolute_input(os.path.join(ROOT, "samples", "cnn_statistics", "compare.json"))
    assert config["npu_path"] == os.path.join(ROOT, "samples", "cnn_statistics", "npu", "step0", "rank0")
    assert config["bench_path"] == os.path.join(ROOT, "samples", "cnn_statistics", "bench", "step0", "rank0")
    command = run_msprobe.msprobe_command("/venv", "8.1.2", config, "/out", "/tmp", ["-oc"])
    assert command[:4] == ["/venv/bin/msprobe", "-f", "pytorch", "graph"] and command[-3:] == ["-o", "/out", "-oc"]


def test_reference_runner_translates_parallel_merge_for_graph_visualize():
    config = run_msprobe.absolute_input(os.path.join(ROOT, "samples", "parallel_merge", "compare.json"))
    command = run_msprobe.msprobe_command("/venv", "26.2.0", config, "/out", "/tmp", [])
    text = " ".join(command)
    assert command[1] == "graph_visualize"
    assert f"-tp {ROOT}/samples/parallel_merge/npu/step0" in text
    assert f"-gp {ROOT}/samples/parallel_merge/bench/step0" in text
    assert "--rank_size 4 1 --tp 2 1 --pp 2 1 --vpp 1 1" in text


def test_reference_runner_rejects_bad_input(tmp_path):
    bad = tmp_path / "compare.json"
    bad.write_text('{"npu_path": "npu",}')
    with pytest.raises(SystemExit, match="compare.json: line 1 column"):
        run_msprobe.absolute_input(str(bad))
    bad.write_text('{"npu_path": "missing"}')
    with pytest.raises(SystemExit, match="npu_path: not a directory"):
        run_msprobe.absolute_input(str(bad))


def test_measure_counts_child_processes(tmp_path):
    # The parent stays small; a child holds ~200 MiB: the tree peak must include it.
    child = "import time; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.5)"
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}], check=True)"
    result = measure.run([sys.executable, "-c", parent], str(tmp_path / "log"))
    assert result.code == 0 and result.wall_s > 0 and result.cpu_s > 0
    assert result.peak_bytes >= 200 * 2**20 and result.max_process_bytes >= 200 * 2**20
    assert "peak_rss_mb=" in result.report() and result.report().endswith("exit=0")
