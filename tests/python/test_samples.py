"""Checks every committed msprobe sample under samples/ (see samples/README.md).

The samples were written by real msprobe (samples/generate/); these tests do not regenerate them
(that needs torch and PyPI). They check that each case is well-formed msprobe output of the
expected kind, that its compare.json files point where they should, and that the npu side
diverges from bench exactly at the documented culprit.
"""

import json
import os
import re

import pytest
from samples_check import (
    STAT_KEYS,
    check_compare_json,
    check_dump_folder,
    dump_layout,
    first_difference,
    has_anomaly,
    iter_leaves,
    load_json,
)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = os.path.join(ROOT, "samples")
SIZE_LIMIT = 22 * 2**20  # raised from 20 MiB for p2p_micro (issue 9) and signal_l1 (issue 15)

# case -> what msprobe was asked for, the layout it wrote and the culprit (first npu entry that
# differs from bench in the first step and rank; for dist_gloo the rank-1 culprit, checked below).
CASES = {
    "cnn_statistics": {
        "task": "statistics",
        "level": "mix",
        "steps": 2,
        "ranks": 1,
        "culprit": "Functional.batch_norm.6.forward",
        "culprit_parent": "Module.layer2.0.bn2.BatchNorm2d.forward.0",
    },
    "cnn_md5": {
        "task": "statistics",
        "level": "mix",
        "steps": 2,
        "ranks": 1,
        "md5": True,
        "culprit": "Functional.batch_norm.6.forward",
        "culprit_parent": "Module.layer2.0.bn2.BatchNorm2d.forward.0",
    },
    "gpt_tensor": {
        "task": "tensor",
        "level": "mix",
        "steps": 1,
        "ranks": 1,
        "culprit": "Tensor.__add__.10.forward",
        "culprit_parent": "Module.model.layers.1.post_attention_layernorm.LlamaRMSNorm.forward.0",
    },
    "gpt_statistics": {
        "task": "statistics",
        "level": "mix",
        "steps": 2,
        "ranks": 1,
        "culprit": "Functional.linear.11.forward",
        "culprit_parent": "Module.model.layers.1.mlp.gate_proj.Linear.forward.0",
    },
    "dist_gloo": {
        "task": "statistics",
        "level": "mix",
        "steps": 2,
        "ranks": 2,
        "culprit": "Distributed.all_reduce.0.forward",
        "culprit_parent": None,
    },
    "rank_origin": {
        "task": "statistics",
        "level": "mix",
        "steps": 2,
        "ranks": 4,
        "culprit": "Distributed.all_gather.0.forward",
        "culprit_parent": None,
    },
    "p2p_micro": {
        "task": "statistics",
        "level": "mix",
        "steps": 1,
        "ranks": 2,
        "culprit": "Distributed.irecv.0.forward",
        "culprit_parent": None,
    },
    "l1_api": {
        "task": "statistics",
        "level": "L1",
        "steps": 1,
        "ranks": 1,
        "proc": True,
        "culprit": "Functional.batch_norm.1.forward",
        "culprit_parent": None,
    },
    # op_generate's conv1d and softmax (float16 on the npu side), APIs only.
    "signal_l1": {
        "task": "statistics",
        "level": "L1",
        "steps": 1,
        "ranks": 1,
        "culprit": "Functional.softmax.0.forward",
        "culprit_parent": None,
    },
    "structure": {
        "task": "structure",
        "level": "mix",
        "steps": 1,
        "ranks": 1,
        "proc": True,
        "culprit": None,
        "culprit_parent": None,
    },
    "overflow_nan": {
        "task": "statistics",
        "level": "mix",
        "steps": 1,
        "ranks": 1,
        "culprit": "Torch.exp.1.forward",
        "culprit_parent": "Module.blocks.1.softmax.NaiveSoftmax.forward.0",
    },
    # Two code bases (Megatron-style npu, Hugging Face bench): no shared names to diverge on.
    "layer_mapping": {
        "task": "statistics",
        "level": "mix",
        "steps": 1,
        "ranks": 1,
        "culprit": None,
        "culprit_parent": None,
        "same_structure": False,
    },
    # Divergence cases (docs/DIVERGENCE.md): the culprit is a renamed activation class (GELU vs
    # GELUActivation) and a hand-written LayerNorm; their names differ between the sides.
    "renamed_act": {
        "task": "statistics",
        "level": "mix",
        "steps": 1,
        "ranks": 1,
        "culprit": None,
        "culprit_parent": None,
        "same_structure": False,
    },
    "handwritten_norm": {
        "task": "statistics",
        "level": "mix",
        "steps": 1,
        "ranks": 1,
        "culprit": None,
        "culprit_parent": None,
        "same_structure": False,
    },
    # tp=2 x pp=2 npu job against an unsplit one-rank bench run.
    "parallel_merge": {
        "task": "statistics",
        "level": "mix",
        "steps": 1,
        "ranks": 4,
        "bench_ranks": 1,
        "culprit": None,
        "culprit_parent": None,
        "same_structure": False,
    },
    # A tiny BERT; npu's hand-written LayerNorm adds its own APIs (first: Tensor.mean.0.forward in
    # Module.embeddings.LayerNorm) and lists its parameter gradients in the other order.
    "bert_pgrad": {
        "task": "statistics",
        "level": "mix",
        "steps": 1,
        "ranks": 1,
        "culprit": None,
        "culprit_parent": None,
        "same_structure": False,
    },
}


def case_path(case, *parts):
    return os.path.join(SAMPLES, case, *parts)


def folders(case, side):
    return [
        (step, rank, case_path(case, side, step, rank))
        for step, ranks in dump_layout(case_path(case, side))
        for rank in ranks
    ]


def read_text(path):
    with open(path) as f:
        return f.read()


def dump_data(folder):
    return load_json(os.path.join(folder, "dump.json"))["data"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_case_layout(case):
    spec = CASES[case]
    layouts = {side: dump_layout(case_path(case, side)) for side in ("npu", "bench")}
    for side, layout in layouts.items():
        assert [s for s, _ in layout] == [f"step{i}" for i in range(spec["steps"])], f"{case}/{side}: steps {layout}"
        for step, ranks in layout:
            if spec.get("proc"):
                assert len(ranks) == 1 and re.fullmatch(r"proc\d+", ranks[0]), f"{case}/{side}/{step}: {ranks}"
            else:
                want = spec["ranks"] if side == "npu" else spec.get("bench_ranks", spec["ranks"])
                assert ranks == [f"rank{r}" for r in range(want)], f"{case}/{side}/{step}: {ranks}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_dump_folders_are_msprobe_output(case):
    spec = CASES[case]
    for side in ("npu", "bench"):
        for _, _, folder in folders(case, side):
            check_dump_folder(folder, spec["task"], spec["level"], md5=spec.get("md5", False))


@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c].get("same_structure", True)))
def test_sides_have_the_same_structure(case):
    npu, bench = folders(case, "npu"), folders(case, "bench")
    assert len(npu) == len(bench)
    for (_, _, n), (_, _, b) in zip(npu, bench):
        assert list(dump_data(n)) == list(dump_data(b)), f"{n} and {b} hold different dump names"
        npu_construct = load_json(os.path.join(n, "construct.json"))
        bench_construct = load_json(os.path.join(b, "construct.json"))
        moved = [k for k in npu_construct if npu_construct[k] != bench_construct.get(k)]
        reordered = [x for x, y in zip(npu_construct, bench_construct) if x != y]
        assert set(npu_construct) == set(bench_construct)
        if case == "overflow_nan":
            # The npu side's float16 casts are real autograd nodes, bench's float32 casts are no-ops:
            # msprobe sees two backward calls in another order and under another module.
            assert moved == ["Tensor.to.2.backward"], moved
            assert reordered == ["Tensor.to.3.backward", "Tensor.__truediv__.1.backward"], reordered
        else:
            assert moved == [] and reordered == [], (moved, reordered)


@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c].get("same_structure", True)))
def test_culprit_is_the_first_divergence(case):
    spec = CASES[case]
    _, _, npu = folders(case, "npu")[0]
    _, _, bench = folders(case, "bench")[0]
    npu_data, bench_data = dump_data(npu), dump_data(bench)
    # md5 on CPU: msprobe hashes tensors on a worker thread after in-place ops may have changed
    # them (samples/README.md), so the md5 case's culprit is located by its statistics.
    culprit = first_difference(npu_data, bench_data, ignore_md5=spec.get("md5", False))
    assert culprit == spec["culprit"]
    if spec["culprit_parent"]:
        construct = load_json(os.path.join(npu, "construct.json"))
        assert construct[culprit] == spec["culprit_parent"]
    if culprit:
        names = list(npu_data)
        before = names[: names.index(culprit)]
        assert before, "the culprit should not be the very first entry"
        if not spec.get("md5"):
            assert all(json.dumps(npu_data[n]) == json.dumps(bench_data[n]) for n in before)


def test_md5_case_has_md5_on_every_tensor():
    for side in ("npu", "bench"):
        for _, _, folder in folders("cnn_md5", side):
            text = read_text(os.path.join(folder, "dump.json"))
            assert text.count('"type": "torch.Tensor"') == text.count('"md5": "'), folder


def test_md5_and_statistics_cases_are_the_same_run():
    """cnn_md5 is cnn_statistics with summary_mode md5: same names, same statistics."""
    stats = dump_data(case_path("cnn_statistics", "npu", "step0", "rank0"))
    md5 = dump_data(case_path("cnn_md5", "npu", "step0", "rank0"))
    assert list(stats) == list(md5)
    assert first_difference(stats, md5, ignore_md5=True) is None


def test_tensor_case_has_tensor_files():
    folder = case_path("gpt_tensor", "npu", "step0", "rank0")
    files = os.listdir(os.path.join(folder, "dump_tensor_data"))
    assert len(files) > 100
    assert "Tensor.__add__.10.forward.output.0.pt" in files


def test_distributed_case_links_ranks():
    for side in ("npu", "bench"):
        for step in ("step0", "step1"):
            rank0 = dump_data(case_path("dist_gloo", side, step, "rank0"))
            rank1 = dump_data(case_path("dist_gloo", side, step, "rank1"))
            send = rank0["Distributed.send.0.forward"]["input_kwargs"]
            recv = rank1["Distributed.recv.0.forward"]["input_kwargs"]
            assert send["dst"] == {"type": "int", "value": 1}
            assert recv["src"] == {"type": "int", "value": 0}
            assert send["tensor"]["shape"] == recv["tensor"]["shape"]
            assert rank1["Distributed.recv.0.forward"]["output"][0] == send["tensor"] | {"requires_grad": False}
            for rank in (rank0, rank1):
                reduces = [n for n in rank if n.startswith("Distributed.all_reduce.")]
                assert len(reduces) == 7, reduces  # one per parameter, one for the logged loss
                for name in reduces:
                    group = rank[name]["input_kwargs"]["group"]
                    assert group["type"] == "torch.ProcessGroup" and group["group_ranks"] == [0, 1]
            # all_reduce makes the gradients equal on both ranks
            assert (
                rank0["Distributed.all_reduce.0.forward"]["output"]
                == rank1["Distributed.all_reduce.0.forward"]["output"]
            )


def test_distributed_culprit_is_on_rank1():
    npu = dump_data(case_path("dist_gloo", "npu", "step0", "rank1"))
    bench = dump_data(case_path("dist_gloo", "bench", "step0", "rank1"))
    assert first_difference(npu, bench) == "Functional.layer_norm.0.forward"


def test_p2p_micro_case():
    """2 pipeline stages linked by dist.isend / dist.irecv, two micro-batches a step: what rank 0
    isends, rank 1 irecvs (and back); rank 1 parts at its layer_norm, rank 0 at the irecv of the
    gradient rank 1 sends back (issue 9)."""
    for side in ("npu", "bench"):
        ranks = [dump_data(case_path("p2p_micro", side, "step0", f"rank{r}")) for r in (0, 1)]
        for call in (0, 1):
            for sender, receiver in ((0, 1), (1, 0)):
                isend = ranks[sender][f"Distributed.isend.{call}.forward"]
                irecv = ranks[receiver][f"Distributed.irecv.{call}.forward"]
                assert isend["input_kwargs"]["dst"] == {"type": "int", "value": receiver}
                assert irecv["input_kwargs"]["src"] == {"type": "int", "value": sender}
                assert isend["output"][0] is None, "a Work handle is dumped as null"
                assert irecv["output"][0] == isend["input_args"][0]
        construct = load_json(os.path.join(case_path("p2p_micro", side, "step0", "rank0"), "construct.json"))
        assert [k for k in construct if k.startswith("Module.")] == [
            "Module.fc.Linear.forward.0", "Module.fc.Linear.backward.0",
            "Module.fc.Linear.forward.1", "Module.fc.Linear.backward.1",
        ]  # fmt: skip
    npu = dump_data(case_path("p2p_micro", "npu", "step0", "rank1"))
    bench = dump_data(case_path("p2p_micro", "bench", "step0", "rank1"))
    assert first_difference(npu, bench) == "Functional.layer_norm.0.forward"


def test_rank_origin_case():
    """4 ranks, rank 2's LayerNorm perturbed: rank 2 parts at its layer_norm, the others at the
    all_gather that brings them rank 2's shard (the rank overview's origin, docs/OVERVIEW.md)."""
    for rank in range(4):
        npu = dump_data(case_path("rank_origin", "npu", "step0", f"rank{rank}"))
        bench = dump_data(case_path("rank_origin", "bench", "step0", f"rank{rank}"))
        expected = "Functional.layer_norm.0.forward" if rank == 2 else "Distributed.all_gather.0.forward"
        assert first_difference(npu, bench) == expected, rank
        gathered_npu = npu["Distributed.all_gather.0.forward"]["output"][0]
        gathered_bench = bench["Distributed.all_gather.0.forward"]["output"][0]
        assert len(gathered_npu) == 4
        # Only rank 2's shard differs in what every rank gathers.
        differing = [i for i in range(4) if gathered_npu[i] != gathered_bench[i]]
        assert differing == [2], (rank, differing)


def test_overflow_case():
    npu = dump_data(case_path("overflow_nan", "npu", "step0", "rank0"))
    bench = dump_data(case_path("overflow_nan", "bench", "step0", "rank0"))
    assert not any(has_anomaly(entry) for entry in bench.values())
    flagged = [n for n, e in npu.items() if has_anomaly(e.get("output", []))]
    assert flagged[0] == "Torch.exp.1.forward"
    exp = npu["Torch.exp.1.forward"]
    assert not has_anomaly(exp["input_args"]) and exp["output"][0]["Max"] == float("inf")
    assert exp["output"][0]["dtype"] == "torch.float16"
    assert has_anomaly(npu["Tensor.__truediv__.1.forward"]["output"])  # inf / inf = NaN


def test_l1_and_structure_cases():
    for side in ("npu", "bench"):
        ((_, _, l1),) = folders("l1_api", side)
        assert load_json(os.path.join(l1, "construct.json")) == {}
        ((_, _, structure),) = folders("structure", side)
        construct = load_json(os.path.join(structure, "construct.json"))
        assert any(name.startswith("Module.block2.1.BatchNorm2d.forward") for name in construct)


@pytest.mark.parametrize("case", sorted(CASES))
def test_compare_json_files(case):
    spec = CASES[case]
    directory = case_path(case)
    check_compare_json(directory, "build.json", want_bench=False, want_kind="files")
    if case == "parallel_merge":
        return  # test_parallel_merge_case
    compare = check_compare_json(directory, "compare.json", want_bench=True, want_kind="files")
    npu_step = compare["npu_path"].split("/")[1]
    assert compare["bench_path"].split("/")[1] == npu_step
    batch = os.path.join(directory, "batch.json")
    if spec["steps"] > 1:
        check_compare_json(directory, "batch.json", want_bench=True, want_kind="steps")
    elif spec["ranks"] > 1:
        check_compare_json(directory, "batch.json", want_bench=True, want_kind="ranks")
    else:
        assert not os.path.exists(batch), f"{batch}: single step and rank, no batch mode"


def test_versions_are_recorded():
    text = read_text(os.path.join(SAMPLES, "versions.txt"))
    assert re.search(r"^mindstudio-probe==\d+\.\d+", text, re.MULTILINE)
    assert re.search(r"^torch==\d+\.\d+", text, re.MULTILINE)
    generated = set()
    for case in CASES:
        text = read_text(
            os.path.join(SAMPLES, case, "npu", "step0", os.listdir(case_path(case, "npu", "step0"))[0], "stack.json")
        )
        generated.add(re.search(r"samples/generate/(run_case|rank_origin)\.py", text) is not None)
    assert generated == {True}, "every sample's stacks should come from its generator under samples/generate/"


def test_samples_fit_the_size_budget():
    total = 0
    for dirpath, dirnames, filenames in os.walk(SAMPLES):
        dirnames[:] = [d for d in dirnames if d not in (".venv", ".venv-mindtorch")]
        total += sum(os.stat(os.path.join(dirpath, f)).st_blocks * 512 for f in filenames)
    assert total < SIZE_LIMIT, f"samples/ takes {total / 2**20:.1f} MiB on disk"


def test_readme_names_every_case():
    text = read_text(os.path.join(SAMPLES, "README.md"))
    for case, spec in CASES.items():
        assert f"`{case}`" in text
        if spec["culprit"]:
            assert spec["culprit"] in text, f"README does not name {case}'s culprit"


def read_layer_mapping(path):
    """The sample's layer_mapping.yaml: {class: {npu name: bench name}} (plain two-level mapping)."""
    mapping, current = {}, None
    for line in read_text(path).splitlines():
        line = line.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not line.startswith(" "):
            assert line.endswith(":"), line
            current = mapping.setdefault(line[:-1], {})
        else:
            key, value = (part.strip() for part in line.split(":", 1))
            current[key] = value
    return mapping


def module_paths(data):
    """'decoder.layers.0.self_attention' -> class name, from Module.<path>.<Class>.forward.<n> names."""
    paths = {}
    for name in data:
        parts = name.split(".")
        if parts[0] == "Module" and parts[-2] == "forward":
            paths[".".join(parts[1:-3])] = parts[-3]
    return paths


def test_layer_mapping_case():
    npu = module_paths(dump_data(case_path("layer_mapping", "npu", "step0", "rank0")))
    bench = module_paths(dump_data(case_path("layer_mapping", "bench", "step0", "rank0")))
    assert npu["decoder.layers.1.self_attention.linear_qkv"] == "ColumnParallelLinear"
    assert bench["model.layers.1.self_attn.q_proj"] == "Linear"
    assert not set(npu) & set(bench) - {"", "rotary_pos_emb"}, "the two code bases should share no module path"
    mapping = read_layer_mapping(case_path("layer_mapping", "layer_mapping.yaml"))
    classes = set(npu.values()) | {"TopLayer"}
    for parent_class, entries in mapping.items():
        assert parent_class in classes, f"yaml key {parent_class} is no npu class"
        for src in entries:
            parents = [p for p, c in npu.items() if c == parent_class] if parent_class != "TopLayer" else [""]
            assert any(f"{p}.{src}".strip(".") in npu for p in parents), f"{parent_class}: {src} is no npu child"

    # Mapping every npu module path through the yaml (longest source first) lands on a bench module.
    def convert(path):
        segments, out, node = path.split("."), [], ""
        i = 0
        while i < len(segments):
            cls = npu.get(node, "TopLayer") if node else "TopLayer"
            for src, dst in sorted(mapping.get(cls, {}).items(), key=lambda kv: -kv[0].count(".")):
                n = src.count(".") + 1
                if segments[i : i + n] == src.split("."):
                    out.append(dst)
                    node = ".".join(filter(None, [node] + segments[i : i + n]))
                    i += n
                    break
            else:
                out.append(segments[i])
                node = ".".join(filter(None, [node, segments[i]]))
                i += 1
        return ".".join(out)

    mapped = {path: convert(path) for path in npu if path}
    assert mapped["decoder.layers.1.mlp.linear_fc2"] == "model.layers.1.mlp.down_proj"
    assert mapped["decoder.final_layernorm"] == "model.norm"
    unmatched = sorted(p for p, b in mapped.items() if b not in bench)
    assert unmatched == [
        "decoder.layers.0.self_attention.core_attention",
        "decoder.layers.1.self_attention.core_attention",
        "embedding",
    ], unmatched
    # Same weights, same math: the loss agrees.
    npu_loss = dump_data(case_path("layer_mapping", "npu", "step0", "rank0"))["Functional.cross_entropy.0.forward"]
    bench_loss = dump_data(case_path("layer_mapping", "bench", "step0", "rank0"))["Functional.cross_entropy.0.forward"]
    assert npu_loss["output"][0]["Max"] == pytest.approx(bench_loss["output"][0]["Max"], rel=1e-5)


def test_parallel_merge_case():
    config = check_compare_json(case_path("parallel_merge"), "compare.json", want_bench=True, want_kind="ranks")
    merge = config["parallel_merge"]
    assert merge["npu"]["rank_size"] == 4 and merge["npu"]["tp"] == 2 and merge["npu"]["pp"] == 2
    assert merge["bench"]["rank_size"] == 1 and merge["bench"]["tp"] == 1 and merge["bench"]["pp"] == 1
    ranks = [dump_data(case_path("parallel_merge", "npu", "step0", f"rank{r}")) for r in range(4)]
    bench = dump_data(case_path("parallel_merge", "bench", "step0", "rank0"))
    qkv = "Module.decoder.layers.0.self_attention.linear_qkv.ColumnParallelLinear.forward.0"
    full = bench[qkv]["parameters"]["weight"]["shape"]
    for r, data in enumerate(ranks):
        stage = r // 2
        assert ("Module.embedding.word_embeddings.Embedding.forward.0" in data) == (stage == 0)
        assert ("Module.output_layer.ColumnParallelLinear.forward.0" in data) == (stage == 1)
        assert not any(".layers.1." in name for name in data), "pipeline stages number their layers locally"
        assert data[qkv]["parameters"]["weight"]["shape"] == [full[0] // 2, full[1]]
        for name in (n for n in data if n.startswith("Distributed.all_reduce.")):
            assert data[name]["input_kwargs"]["group"]["group_ranks"] == [2 * stage, 2 * stage + 1]
        peers = {
            op["peer"]
            for name, entry in data.items()
            if name.startswith("Distributed.batch_isend_irecv.")
            for op in entry["input_args"][0]
        }
        assert peers == {r + 2 if stage == 0 else r - 2}
    # Same weights and data: the split job's loss (last stage) equals the unsplit one.
    loss = bench["Functional.cross_entropy.0.forward"]["output"][0]["Max"]
    for data in ranks[2:]:
        assert data["Functional.cross_entropy.0.forward"]["output"][0]["Max"] == pytest.approx(loss, rel=1e-5)


def test_repeat_runs_case():
    """Three real runs of one job (separate processes) that part only at the threaded reduction."""
    runs = [dump_data(os.path.join(SAMPLES, "repeat_runs", f"run{i}", "step0", "rank0")) for i in range(3)]
    assert list(runs[0]) == list(runs[1]) == list(runs[2]), "the same calls in the same order"
    names = list(runs[0])
    first = next(n for n in names if not runs[0][n] == runs[1][n] == runs[2][n])
    assert first == "Module.pool.Pool.forward.0"
    assert names.index(first) == 5
    stack = read_text(os.path.join(SAMPLES, "repeat_runs", "run0", "step0", "rank0", "stack.json"))
    assert "samples/generate/repeat_runs.py" in stack
    assert json.loads(read_text(os.path.join(SAMPLES, "repeat_runs", "runs.json")))["runs"] == ["run0", "run1", "run2"]


# rl_stages: verl's step_<N>/<stage>/step0/rank0 (issue 33), outside CASES' step<N>/rank<N> layout. The reference
# model is the culprit: in both steps its stage diverges at its layer_norm and the update where the KL term reads
# the reference log-probs; the actor's own log-probs agree (samples/README.md).
RL_STAGES = {
    "actor_compute_log_prob": None,
    "ref_compute_log_prob": "Functional.layer_norm.0.forward",
    "actor_update": "Tensor.__sub__.1.forward",
}


@pytest.mark.parametrize("step", ["step_1", "step_2"])
def test_rl_stages_layout_and_culprits(step):
    for side in ("npu", "bench"):
        assert sorted(os.listdir(case_path("rl_stages", side))) == ["step_1", "step_2"]
        assert sorted(os.listdir(case_path("rl_stages", side, step))) == sorted(RL_STAGES)
    for stage, culprit in RL_STAGES.items():
        folders = {side: case_path("rl_stages", side, step, stage, "step0", "rank0") for side in ("npu", "bench")}
        for folder in folders.values():
            assert dump_layout(os.path.dirname(os.path.dirname(folder))) == [("step0", ["rank0"])]
            check_dump_folder(folder, "statistics", "L1")
        assert first_difference(dump_data(folders["npu"]), dump_data(folders["bench"])) == culprit, stage


def test_msadapter_case():
    """A real MSAdapter dump: msprobe's MindSpore debugger in mindtorch mode around mindnlp's mindtorch, and
    PyTorch on the same model and weights (issue 33 point 3, samples/README.md)."""
    npu, bench = (case_path("msadapter", side, "step0", "rank0") for side in ("npu", "bench"))
    for side in ("npu", "bench"):
        assert dump_layout(case_path("msadapter", side)) == [("step0", ["rank0"])]
    dump, _, _ = check_dump_folder(npu, "statistics", "mix", framework="mindtorch")
    check_dump_folder(bench, "statistics", "mix")
    leaves = [leaf for entry in dump["data"].values() for _, leaf in iter_leaves(entry, "")]
    # Tensors are MindSpore's, and so is the dtype argument of the casts (`.to(torch.float16)`).
    assert {leaf["type"] for leaf in leaves} == {"mindspore.Tensor", "mindspore.dtype", "int", "float", "bool"}
    tensors = [leaf for leaf in leaves if leaf["type"] == "mindspore.Tensor"]
    assert {leaf["dtype"] for leaf in tensors} == {"mindspore.float32", "mindspore.float16"}
    # Ran by mindtorch (its Module's call in every stack) from the generator.
    stack = read_text(os.path.join(npu, "stack.json"))
    assert "site-packages/mindtorch/nn/modules/module.py" in stack
    assert "samples/generate/msadapter.py" in stack
    npu_data, bench_data = dump_data(npu), dump_data(bench)
    # The same calls under the same names, but for the float16 casts PyTorch does not dump.
    assert [n for n in npu_data if n not in bench_data] == [
        "Tensor.to.0.forward", "Tensor.to.1.forward", "Tensor.to.1.backward", "Tensor.to.0.backward"
    ]
    assert [n for n in bench_data if n not in npu_data] == []
    # The same weights and data: fc1 on MindSpore's CPU kernel gives PyTorch's Max, Min and Norm exactly (the
    # Mean, which each framework's statistics compute with its own reduction, to a few ulps).
    out = [data["Functional.linear.0.forward"]["output"][0] for data in (npu_data, bench_data)]
    for key in STAT_KEYS:
        assert out[0][key] == (out[1][key] if key != "Mean" else pytest.approx(out[1][key], rel=1e-6)), key
    # The float16 exp overflows on the mindtorch side only.
    assert npu_data["Torch.exp.0.forward"]["output"][0]["Max"] == float("inf")
    assert has_anomaly(npu_data) and not has_anomaly(bench_data)
