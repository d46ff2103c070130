"""Shape checks for msprobe dump folders, shared by test_samples.py and test_scale.py.

Each check raises AssertionError naming the file and the offending key. The rules are those of
msprobe's dump format (docs/reference: builder §3.2-§3.4) as msprobe 26.x writes it.
"""

import json
import os
import re
import zipfile

API_PREFIXES = ("Tensor", "Torch", "Functional", "NPU", "VF", "Aten", "Distributed", "MindSpeed")
API_RE = re.compile(r"^({})\.[^.]+(\.[^.]+)*\.(0|[1-9]\d*)\.(forward|backward)$".format("|".join(API_PREFIXES)))
MODULE_RE = re.compile(r"^Module\.(.+\.)?[A-Za-z_][A-Za-z0-9_]*\.(forward|backward)\.(0|[1-9]\d*)$")
PARAMS_GRAD_RE = re.compile(r"^Module\.(.+\.)?[A-Za-z_][A-Za-z0-9_]*\.parameters_grad(\.\d+)?$")
STACK_LINE_RE = re.compile(r"^File .+, line \d+, in .+, \n .*$", re.DOTALL)
MD5_RE = re.compile(r"^[0-9a-f]{8}$")
STAT_KEYS = ("Max", "Min", "Mean", "Norm")
FORWARD_KEYS = {"input_args", "input_kwargs", "output", "parameters", "is_recompute"}
BACKWARD_KEYS = {"input", "output"}


def load_json(path):
    """json.load accepting msprobe's NaN/Infinity literals; a parse error names the file."""
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise AssertionError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None


def numbered(names, prefix):
    found = [n for n in names if re.fullmatch(prefix + r"(0|[1-9]\d*)", n)]
    return sorted(found, key=lambda n: int(n[len(prefix) :]))


def dump_layout(side_dir):
    """[(step folder, [rank or proc folders])] of one side, asserting msprobe's naming."""
    assert os.path.isdir(side_dir), f"{side_dir}: missing"
    entries = sorted(os.listdir(side_dir))
    steps = numbered(entries, "step")
    assert steps and steps == sorted(entries, key=lambda n: int(n[4:]) if n[4:].isdigit() else -1), (
        f"{side_dir}: expected only step<N> folders, found {entries}"
    )
    layout = []
    for step in steps:
        inner = sorted(os.listdir(os.path.join(side_dir, step)))
        ranks = numbered(inner, "rank") or [n for n in inner if re.fullmatch(r"proc\d+", n)]
        assert ranks and len(ranks) == len(inner), (
            f"{side_dir}/{step}: expected rank<N> or proc<pid> folders, found {inner}"
        )
        layout.append((step, ranks))
    return layout


def iter_leaves(value, path):
    """Yields (path, leaf) for every leaf (a dict with a string 'type') in a nested value."""
    if isinstance(value, dict):
        if isinstance(value.get("type"), str):
            yield path, value
            return
        for key, item in value.items():
            yield from iter_leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from iter_leaves(item, f"{path}.{i}")


def is_number_or_special(value):
    return value is None or isinstance(value, (int, float, bool))


def check_tensor_leaf(where, leaf, task, md5):
    assert isinstance(leaf.get("dtype"), str) and leaf["dtype"], f"{where}: tensor without dtype"
    shape = leaf.get("shape")
    assert isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape), (
        f"{where}: bad shape {shape!r}"
    )
    for key in STAT_KEYS:
        assert key in leaf, f"{where}: tensor without {key}"
        assert is_number_or_special(leaf[key]), f"{where}: {key} is {leaf[key]!r}"
    if md5:
        assert MD5_RE.match(str(leaf.get("md5", ""))), f"{where}: md5 mode but md5 is {leaf.get('md5')!r}"
    else:
        assert "md5" not in leaf, f"{where}: md5 present outside md5 mode"
    if task == "tensor":
        assert isinstance(leaf.get("data_name"), str) and leaf["data_name"].endswith((".pt", ".npy")), (
            f"{where}: task tensor but data_name is {leaf.get('data_name')!r}"
        )
    else:
        assert "data_name" not in leaf, f"{where}: data_name outside task tensor"


def check_entry(path, name, entry, task, md5, tensor_type="torch.Tensor"):
    """One dump.json data entry: name pattern, key set, leaves. Returns the tensor leaves."""
    where = f"{path}: data[{name!r}]"
    assert isinstance(entry, dict), f"{where}: not an object"
    if PARAMS_GRAD_RE.match(name):
        for param, leaves in entry.items():
            assert isinstance(leaves, list) and leaves, f"{where}.{param}: parameters_grad value is not a list"
    elif MODULE_RE.match(name) or API_RE.match(name):
        direction = name.split(".")[-1] if API_RE.match(name) else name.split(".")[-2]
        allowed = FORWARD_KEYS if direction == "forward" else BACKWARD_KEYS
        assert set(entry) <= allowed, f"{where}: unexpected keys {sorted(set(entry) - allowed)}"
        assert "output" in entry, f"{where}: no output"
    else:
        raise AssertionError(f"{where}: name is not a module, API or parameters_grad dump name")
    tensors = []
    for leaf_path, leaf in iter_leaves(entry, name):
        if leaf["type"] == tensor_type:
            check_tensor_leaf(f"{path}: {leaf_path}", leaf, task, md5)
            tensors.append(leaf)
    return tensors


def check_dump_folder(folder, task, level, md5=False, framework="pytorch"):
    """Checks one step/rank folder as msprobe writes it; returns (dump, construct, stack). framework
    "mindtorch": MSAdapter's, PyTorch's names with mindspore.Tensor leaves."""
    for name in ("dump.json", "construct.json", "stack.json"):
        assert os.path.isfile(os.path.join(folder, name)), f"{folder}: missing {name}"
    dump_path = os.path.join(folder, "dump.json")
    dump = load_json(dump_path)
    assert isinstance(dump, dict), f"{dump_path}: top level is not an object"
    for key in ("task", "level", "framework", "dump_data_dir", "data"):
        assert key in dump, f"{dump_path}: missing key {key!r}"
    assert dump["task"] == task, f"{dump_path}: task {dump['task']!r}, expected {task!r}"
    assert dump["level"] == level, f"{dump_path}: level {dump['level']!r}, expected {level!r}"
    assert dump["framework"] == framework, f"{dump_path}: framework {dump['framework']!r}"
    tensor_type = "torch.Tensor" if framework == "pytorch" else "mindspore.Tensor"
    data = dump["data"]
    assert isinstance(data, dict), f"{dump_path}: data is not an object"

    tensors = []
    for name, entry in data.items():
        tensors.extend(check_entry(dump_path, name, entry, task, md5, tensor_type))
    if task == "structure":
        assert data == {}, f"{dump_path}: task structure with data"
    else:
        assert tensors, f"{dump_path}: no tensor statistics at all"
    if task == "tensor":
        check_tensor_files(folder, tensors)
    else:
        assert not os.path.exists(os.path.join(folder, "dump_tensor_data")), (
            f"{folder}: tensor files outside task tensor"
        )

    construct_path = os.path.join(folder, "construct.json")
    construct = load_json(construct_path)
    check_construct(construct_path, construct, data, level)
    stack_path = os.path.join(folder, "stack.json")
    stack = load_json(stack_path)
    check_stack(stack_path, stack, data, construct)
    return dump, construct, stack


def check_tensor_files(folder, tensors):
    """Every data_name has its file in dump_tensor_data (a torch zip archive), and no file is stray."""
    tensor_dir = os.path.join(folder, "dump_tensor_data")
    assert os.path.isdir(tensor_dir), f"{folder}: task tensor without dump_tensor_data"
    files = set(os.listdir(tensor_dir))
    names = {leaf["data_name"] for leaf in tensors}
    assert names <= files, f"{tensor_dir}: missing {sorted(names - files)[:5]}"
    assert files <= names, f"{tensor_dir}: files no dump.json entry names: {sorted(files - names)[:5]}"
    for name in sorted(files):
        path = os.path.join(tensor_dir, name)
        if name.endswith(".pt"):
            assert zipfile.is_zipfile(path), f"{path}: not a torch.save zip archive"
            with zipfile.ZipFile(path) as archive:
                members = archive.namelist()
            assert any(m.endswith("/data.pkl") for m in members), f"{path}: no data.pkl in {members[:5]}"
        else:
            with open(path, "rb") as f:
                assert f.read(6) == b"\x93NUMPY", f"{path}: not an .npy file"


def check_construct(path, construct, data, level):
    assert isinstance(construct, dict), f"{path}: top level is not an object"
    for child, parent in construct.items():
        assert parent is None or isinstance(parent, str), f"{path}: [{child!r}] parent is {parent!r}"
        assert parent in (None, "") or parent in construct, f"{path}: [{child!r}] parent {parent!r} is not a key"
    if level == "L1":
        assert construct == {}, f"{path}: level L1 with a hierarchy"
        assert all(API_RE.match(n) for n in data), f"{path}: level L1 dump.json holds module entries"
        return
    assert construct, f"{path}: level {level} with an empty hierarchy"
    for name in data:
        if not PARAMS_GRAD_RE.match(name):
            assert name in construct, f"{path}: dump.json name {name!r} is not in construct.json"


def check_stack(path, stack, data, construct):
    """The grouped stack format: {"0": [[names], [lines]], ...} with consecutive keys."""
    assert isinstance(stack, dict), f"{path}: top level is not an object"
    assert list(stack) == [str(i) for i in range(len(stack))], f"{path}: keys are not 0..{len(stack) - 1}"
    seen = set()
    for key, group in stack.items():
        assert isinstance(group, list) and len(group) == 2, f"{path}: [{key}] is not [names, lines]"
        names, lines = group
        assert isinstance(names, list) and names, f"{path}: [{key}] has no names"
        assert isinstance(lines, list) and lines, f"{path}: [{key}] has no lines"
        for name in names:
            assert name in data or name in construct, f"{path}: [{key}] names unknown {name!r}"
            assert name not in seen, f"{path}: {name!r} in two stack groups"
            seen.add(name)
        for line in lines:
            assert isinstance(line, str) and STACK_LINE_RE.match(line), f"{path}: [{key}] bad line {line!r}"


def first_difference(npu_data, bench_data, ignore_md5=False):
    """Name of the first npu entry (in dump order) whose content differs from bench."""

    def strip(value):
        if not ignore_md5:
            return value
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "md5"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    for name, entry in npu_data.items():
        if json.dumps(strip(entry)) != json.dumps(strip(bench_data.get(name))):
            return name
    return None


def has_anomaly(value):
    """NaN or +-inf in a leaf's Max/Min/Mean (msprobe's overflow rule, builder §7)."""
    return any(
        str(leaf.get(k)).lower() in ("nan", "inf", "-inf")
        for _, leaf in iter_leaves(value, "")
        for k in ("Max", "Min", "Mean")
    )


def classify_dir(path):
    """msprobe graph's input classification (builder §2.4): 'files', 'ranks' or 'steps'."""
    entries = os.listdir(path)
    assert entries, f"{path}: empty"
    if "dump_tensor_data" in entries or all(os.path.isfile(os.path.join(path, e)) for e in entries):
        return "files"
    dirs = [e for e in entries if os.path.isdir(os.path.join(path, e))]
    if all(re.fullmatch(r"rank\d*", d) for d in dirs):
        return "ranks"
    if all(re.fullmatch(r"step\d+", d) for d in dirs):
        return "steps"
    raise AssertionError(f"{path}: neither a dump folder nor rank*/step* folders")


def check_compare_json(case_dir, name, want_bench, want_kind):
    """A compare.json in the case folder: relative existing paths, msprobe layout of kind want_kind."""
    path = os.path.join(case_dir, name)
    config = load_json(path)
    assert isinstance(config, dict) and config.get("npu_path"), f"{path}: no npu_path"
    keys = ["npu_path"] + (["bench_path"] if want_bench else [])
    assert ("bench_path" in config) == want_bench, f"{path}: bench_path presence should be {want_bench}"
    resolved = {}
    for key in keys:
        value = config[key]
        assert not os.path.isabs(value), f"{path}: {key} must be relative to the file, got {value!r}"
        full = os.path.normpath(os.path.join(case_dir, value))
        assert full.startswith(os.path.normpath(case_dir) + os.sep), f"{path}: {key} leaves the case folder"
        assert os.path.isdir(full), f"{path}: {key} {value!r} is not a directory"
        assert classify_dir(full) == want_kind, f"{path}: {key} {value!r} is not a {want_kind} folder"
        resolved[key] = full
    if want_bench and want_kind != "files":
        assert sorted(os.listdir(resolved["npu_path"])) == sorted(os.listdir(resolved["bench_path"])) or config.get(
            "parallel_merge"
        ), f"{path}: npu and bench folders differ"
    return config
