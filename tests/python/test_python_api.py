"""The Python API (`import graph_ascend`, docs/PYTHON_API.md) against the command line's answers.

On compares built from the real msprobe dumps in samples/, graph_ascend.open(...) must say what
`graph-ascend info` and `graph-ascend check` say of the same file: the first divergence (and none
when the runs agree), the ranking in its order, the nodes and matched pairs of each side. A node's
items are the dump's own statistics. msprobe's .vis.db and JSON .vis (tests/data/msprobe_outputs,
written by real msprobe) open as `graph-ascend import` converts them. Bad input is one
GraphAscendError naming the file and the place, in the command line's words. The graph service a
file starts ends with it: on close, on leaving `with`, at the interpreter's exit.

scripts/test-python.sh installs the wheel's packages (plugin/python) into .venv first.
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

try:
    import graph_ascend
except ImportError as e:  # a plain failure, not a skip: the wheel ships the package
    pytest.fail(f"graph_ascend is not installed in this environment ({e}); run scripts/test-python.sh",
                pytrace=False)

ROOT = pathlib.Path(__file__).resolve().parents[2]
MSPROBE = ROOT / "tests" / "data" / "msprobe_outputs"


@pytest.fixture(scope="module")
def cli(build_dir) -> pathlib.Path:
    binary = build_dir / "bin" / "graph-ascend"
    if not binary.is_file():
        pytest.fail(f"{binary} is missing: build the C++ tree first (scripts/build.sh)")
    return binary


def run(cli, *args, cwd=None):
    return subprocess.run([str(cli), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=300)


def build(cli, config: pathlib.Path, out: pathlib.Path, cwd: pathlib.Path) -> pathlib.Path:
    r = run(cli, "graph", "-i", config, "-o", out, cwd=cwd)
    assert r.returncode == 0, r.stderr
    (vis,) = out.glob("*.vis")
    return vis


@pytest.fixture(scope="module")
def files(cli, tmp_path_factory) -> dict:
    """name -> a .vis built by the command line:
    cnn       cnn_statistics compare (statistics, the noise rule: 9 ranked, first batch_norm.6)
    gpt       gpt_statistics compare (a bf16 linear: dtype changed, no noise in its kind)
    md5       cnn_md5 compare (md5: the floor rule, no margins)
    same      cnn_statistics' NPU dump against itself: no divergence beyond noise
    cnn_build cnn_statistics build of one run
    """
    out = tmp_path_factory.mktemp("api")
    made = {}
    for name, case, config in [
        ("cnn", "cnn_statistics", "compare.json"),
        ("gpt", "gpt_statistics", "compare.json"),
        ("md5", "cnn_md5", "compare.json"),
        ("cnn_build", "cnn_statistics", "build.json"),
    ]:
        made[name] = build(cli, ROOT / "samples" / case / config, out / name, ROOT / "samples" / case)
    npu = ROOT / "samples" / "cnn_statistics" / "npu" / "step0" / "rank0"
    same = out / "same.json"
    same.write_text(json.dumps({"npu_path": str(npu), "bench_path": str(npu)}))
    made["same"] = build(cli, same, out / "same", out)
    return made


def info(cli, path) -> dict:
    """What `graph-ascend info` prints that the API also answers."""
    r = run(cli, "info", path)
    assert r.returncode == 0, r.stderr
    said = {"nodes": {}, "matched": {}, "first": None, "ranking": []}
    lines = r.stdout.splitlines()
    side = None
    for k, line in enumerate(lines):
        m = re.fullmatch(r"(NPU|Bench): (\d+) nodes", line)
        if m:
            side = m.group(1).lower()
            said["nodes"][side] = int(m.group(2))
        m = re.fullmatch(r"\s+matched (\d+), unmatched \d+", line)
        if m and side:
            said["matched"][side] = int(m.group(1))
        m = re.fullmatch(r"first divergence, in execution order: (\S+) \(.*", line)
        if m:
            said["first"] = m.group(1)
        m = re.fullmatch(r"divergence ranking \((\d+)\):", line)
        if m:
            said["ranking"] = [entry.strip() for entry in lines[k + 1 : k + 1 + int(m.group(1))]]
    return said


@pytest.mark.parametrize("name", ["cnn", "gpt", "md5", "same"])
def test_divergence_is_what_info_and_check_say(cli, files, name):
    said = info(cli, files[name])
    check = run(cli, "check", files[name])
    with graph_ascend.open(files[name]) as f:
        assert f.kind == "compare"
        first = f.first_divergence()
        ranking = f.divergence()
    # The ranking in its order: each `info` line is the entry's reason, then its name.
    assert len(ranking) == len(said["ranking"])
    for entry, line in zip(ranking, said["ranking"]):
        assert line.startswith(entry.reason), (entry, line)
        assert line[len(entry.reason) :].split()[0] == entry.name, (entry, line)
    if said["first"] is None:
        assert first is None and ranking == []
        assert check.returncode == 0, check.stdout + check.stderr
        assert "no divergence beyond noise" in check.stdout
        return
    assert first == ranking[0]
    assert first.name == said["first"]
    assert check.returncode == 1, check.stdout + check.stderr
    assert f": diverges at {first.name} (" in check.stdout
    # The margin as check prints it ("7.55e+05x the noise"); none under the floor rule (md5).
    if first.margin is None:
        assert "the noise" not in check.stdout
    elif first.margin < 1e6:
        assert f"{first.margin:.3g}x the noise" in check.stdout


def test_the_sample_divergences_are_named(files):
    # The samples' known culprits (samples/README.md), so that agreeing with the CLI means something.
    with graph_ascend.open(files["cnn"]) as f:
        first = f.first_divergence()
        assert (first.name, first.reason, first.reason_code) == (
            "Functional.batch_norm.6.forward",
            "outputs differ, inputs agree",
            "outputs",
        )
        assert first.margin > 1e5 and first.bench_index == first.npu_index
    with graph_ascend.open(files["gpt"]) as f:
        assert f.first_divergence().name == "Functional.linear.11.forward"
    with graph_ascend.open(files["same"]) as f:
        assert f.first_divergence() is None


@pytest.mark.parametrize("name", ["cnn", "gpt", "cnn_build"])
def test_nodes_and_matches_are_what_info_counts(cli, files, name):
    said = info(cli, files[name])
    with graph_ascend.open(files[name]) as f:
        sides = ["npu", "bench"] if f.kind == "compare" else ["npu"]
        assert f.kind == ("compare" if len(said["nodes"]) == 2 else "build")
        by_side = {}
        for side in sides:
            nodes = list(f.nodes(side))
            assert f.node_count(side) == len(nodes) == said["nodes"][side]
            # Pages of any size give the same nodes in the same order.
            assert [n.name for n in f.nodes(side, page=7)] == [n.name for n in nodes]
            assert [n.index for n in nodes] == list(range(len(nodes)))
            assert nodes[0].parent is None and nodes[0].depth == 0
            for n in nodes[1:]:
                assert n.side == side and nodes[n.parent].depth == n.depth - 1
            by_side[side] = nodes
        if f.kind == "build":
            assert list(f.matches()) == []
            with pytest.raises(ValueError, match="no bench side"):
                f.nodes("bench")
            return
        pairs = list(f.matches())
    assert len(pairs) == said["matched"]["npu"]
    npu, bench = by_side["npu"], by_side["bench"]
    for pair in pairs:
        assert npu[pair.npu_index].name == pair.npu and bench[pair.bench_index].name == pair.bench
        assert npu[pair.npu_index].matched_name == pair.bench
        assert bench[pair.bench_index].matched == pair.npu_index


def test_a_node_holds_its_dumped_items(files):
    dump = json.loads((ROOT / "samples" / "cnn_statistics" / "npu" / "step0" / "rank0" / "dump.json").read_text())
    name = "Functional.batch_norm.6.forward"
    entry = dump["data"][name]
    with graph_ascend.open(files["cnn"]) as f:
        detail = f.node("npu", name)
    assert detail.node.name == name and detail.node.type == "api"
    assert [i.state for i in detail.inputs] == ["input"] * len(entry["input_args"])
    for item, dumped in zip(detail.inputs + detail.outputs, entry["input_args"] + entry["output"]):
        for stat in ("Max", "Min", "Mean", "Norm"):
            if stat in dumped:
                assert item.statistics[stat] == dumped[stat], (item.key, stat)
        if "shape" in dumped:
            assert item.fields["shape"] == dumped["shape"]
    # The compare's metrics on the NPU item, and the Bench side's own node.
    assert detail.outputs[0].key == name + ".output.0"
    assert detail.outputs[0].metrics["MeanRelativeErr"] == pytest.approx(0.25)
    assert detail.matched is not None and detail.matched.node.side == "bench"
    assert detail.matched.node.name == name and detail.stack


def test_msprobe_files_open_as_import_converts_them(cli, tmp_path):
    cache = tmp_path / "cache"
    for k, (source, graph) in enumerate([
        (MSPROBE / "dist_gloo_compare_26.2.0.vis.db", None),
        (MSPROBE / "dist_gloo_compare_8.1.2.vis", None),
        (MSPROBE / "dist_gloo_batch_26.2.0.vis.db", "step1_rank1"),
    ]):
        out = tmp_path / f"imported{k}"  # a folder: one .vis per graph
        r = run(cli, "import", source, "-o", out)
        assert r.returncode == 0, r.stderr
        imported = sorted(out.glob("*_step1_rank1_*.vis" if graph else "*.vis"))
        assert len(imported) == 1, imported
        said = info(cli, imported[0])
        with graph_ascend.open(source, graph=graph, cache_dir=cache) as f, graph_ascend.open(imported[0]) as g:
            assert f.kind == g.kind == "compare"
            for side in ("npu", "bench"):
                assert f.node_count(side) == said["nodes"][side]
                assert [n.name for n in f.nodes(side)] == [n.name for n in g.nodes(side)]
            assert sum(1 for _ in f.matches()) == said["matched"]["npu"]
            name = next(n.name for n in f.nodes("npu") if n.type == "api")
            assert f.node("npu", name).items == g.node("npu", name).items
            # The ranking is the imported file's, when the conversion makes one.
            try:
                ranking = [d.name for d in f.divergence()]
            except graph_ascend.GraphAscendError as e:
                assert str(e).startswith(f"{source}: msprobe's file converted without a divergence ranking")
                assert said["ranking"] == [] and run(cli, "check", imported[0]).returncode == 2  # no ranking either
            else:
                assert ranking == [line[len(d.reason) :].split()[0] for d, line in zip(g.divergence(), said["ranking"])]
    assert list(cache.iterdir()), "the conversions went into the cache asked for"
    with graph_ascend.open(MSPROBE / "dist_gloo_batch_26.2.0.vis.db", cache_dir=cache) as f:
        assert f.graphs() == ["step0_rank0", "step0_rank1", "step1_rank0", "step1_rank1"]
    with graph_ascend.open(MSPROBE / "dist_gloo_compare_26.2.0.vis.db", cache_dir=cache) as f:
        assert f.graphs() == []


def cli_error(cli, path) -> str:
    r = run(cli, "info", path)
    assert r.returncode == 2 and r.stderr.startswith("graph-ascend: error: "), r.stderr
    return r.stderr.strip()[len("graph-ascend: error: ") :]


def test_bad_input_is_one_error_naming_the_file_and_place(cli, files, tmp_path):
    good = files["cnn"].read_bytes()
    truncated = tmp_path / "truncated.vis"
    truncated.write_bytes(good[: len(good) // 2])
    with pytest.raises(graph_ascend.GraphAscendError) as e:
        graph_ascend.open(truncated)
    assert e.value.path == str(truncated)
    assert str(e.value) == cli_error(cli, truncated)  # "<file>: byte N: truncated or damaged .vis file ..."
    assert re.match(re.escape(str(truncated)) + r": byte \d+: ", str(e.value))

    broken = tmp_path / "broken.vis"
    broken.write_text('{"NPU": {"root": "DefaultModel", "node": {')
    with pytest.raises(graph_ascend.GraphAscendError, match=re.escape(str(broken)) + r": line \d+, column \d+"):
        graph_ascend.open(broken, cache_dir=tmp_path / "cache")

    with pytest.raises(FileNotFoundError):
        graph_ascend.open(tmp_path / "missing.vis")
    (tmp_path / "notes.txt").write_text("not a graph")
    with pytest.raises(graph_ascend.GraphAscendError, match="not a .vis or .vis.db file name"):
        graph_ascend.open(tmp_path / "notes.txt")
    with pytest.raises(graph_ascend.GraphAscendError, match="is a folder"):
        graph_ascend.open(tmp_path)

    with graph_ascend.open(files["cnn"]) as f:
        with pytest.raises(graph_ascend.NodeNotFound) as missing:
            f.node("npu", "Functional.no_such.0.forward")
        assert isinstance(missing.value, KeyError)
        assert str(missing.value) == f"{files['cnn']}: NPU has no node named 'Functional.no_such.0.forward'"
        with pytest.raises(ValueError, match="side must be"):
            f.nodes("gpu")
    with graph_ascend.open(files["cnn_build"]) as f:
        with pytest.raises(graph_ascend.GraphAscendError, match="is a build of one run"):
            f.first_divergence()


def alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


def test_the_service_ends_with_the_file(files):
    with graph_ascend.open(files["cnn"]) as f:
        pid = f._server.pid
        assert alive(pid)
    assert not alive(pid)  # close() waits for the server to exit
    with pytest.raises(graph_ascend.GraphAscendError, match="closed"):
        f.first_divergence()
    f.close()  # twice is harmless

    # Never closed: the interpreter's exit stops the server and removes its private cache.
    script = textwrap.dedent(
        """
        import sys, graph_ascend
        f = graph_ascend.open(sys.argv[1])
        print(f._server.pid, f._private_cache, f.first_divergence().name, flush=True)
        """
    )
    r = subprocess.run([sys.executable, "-c", script, str(files["cnn"])], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    pid, cache, first = r.stdout.split()
    assert first == "Functional.batch_norm.6.forward"
    assert not alive(int(pid))
    assert not os.path.exists(cache)
