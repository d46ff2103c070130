"""graph-ascend op_generate's scripts, run for real with torch on CPU.

The scripts need torch, which the project's test venv does not carry: scripts/test-op-scripts.sh
makes a torch venv and runs this file with GA_TORCH_PYTHON set to its python; without it every
test here is skipped. Each case of tests/companions/testdata/op_generate/cases.tsv (APIs of the
samples/ dumps) is generated, run, and its printed metrics table checked.
"""

import csv
import json
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = ROOT / "tests/companions/testdata/op_generate/cases.tsv"
TORCH_PYTHON = os.environ.get("GA_TORCH_PYTHON")
needs_torch = pytest.mark.skipif(not TORCH_PYTHON, reason="GA_TORCH_PYTHON unset (scripts/test-op-scripts.sh sets it)")

# The first metric row each standard prints.
FIRST_METRIC = {
    "ulp": "max ULP error",
    "thousandth": "double-thousandths ratio",
    "benchmark": "small-value error ratio",
    "absolute": "inf/nan error ratio",
    "binary": "binary consistency error rate",
}


def cases():
    with open(CASES) as f:
        rows = [r for r in csv.reader(f, delimiter="\t") if r and not r[0].startswith("#")]
    return {r[0]: r for r in rows}


def generate(build_dir, tmp_path, dump, api, propagation, mode, seed=1234, iterations=1):
    config = tmp_path / "config_op.json"
    config.write_text(
        json.dumps(
            {
                "dump_json_path": str(ROOT / "samples" / dump),
                "api_name": api,
                "extract_api_path": str(tmp_path / f"{api}.json"),
                "propagation": propagation,
                "data_mode": mode,
                "random_seed": seed,
                "iter_times": iterations,
            }
        )
    )
    out = subprocess.run(
        [str(build_dir / "bin/graph-ascend"), "op_generate", "-i", str(config), "-o", str(tmp_path / "scripts")],
        check=False,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return tmp_path / "scripts" / f"{api}.{propagation}.py"


def probe(script, body):
    """Runs `body` with the script imported as module `m` (its main() not called); returns stdout."""
    code = (
        "import importlib.util, json\n"
        f"spec = importlib.util.spec_from_file_location('repro', {str(script)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n" + body
    )
    res = subprocess.run([TORCH_PYTHON, "-c", code], check=False, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return res.stdout


def run_script(script, *args):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    return subprocess.run(
        [TORCH_PYTHON, str(script), *args], check=False, capture_output=True, text=True, env=env, cwd=script.parent
    )


@needs_torch
@pytest.mark.parametrize("case", sorted(cases()))
def test_script_runs_and_prints_its_standard(build_dir, tmp_path, case):
    _, dump, api, propagation, mode, standard, result = cases()[case]
    script = generate(build_dir, tmp_path, dump, api, propagation, mode)
    out = run_script(script)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "device under test: cpu (neither CUDA nor an NPU was found)" in out.stdout
    assert f"standard: {standard}" in out.stdout
    assert FIRST_METRIC[standard] in out.stdout
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.stdout.splitlines() if line.startswith("| ")]
    assert rows[0] == ["metric", "value", "rule", "status"]  # one table per output, each with this header
    statuses = [r[3] for r in rows if r[0] != "metric"]
    assert statuses and set(statuses) <= {"pass", "error", "warning", "-", "needs --against"}, statuses
    # fp32 on CPU against the fp64 bench is well within every rule; half precision is not always.
    assert ("error" in statuses) == (result == "error")
    assert out.stdout.rstrip().endswith(f"result: {result}")


@needs_torch
def test_half_precision_metrics_use_their_dtypes_thresholds(build_dir, tmp_path):
    # bfloat16 Tensor.__mul__ under the absolute-threshold standard: rtol 2^-8 and small-value atol 1e-16
    # (msprobe's standard_config for bfloat16). The CPU rounds small products to bfloat16, so the
    # small-value rule fails, as msprobe's standard says it does against a float32 bench.
    _, dump, api, propagation, mode, _, _ = cases()["mul_bf16"]
    out = run_script(generate(build_dir, tmp_path, dump, api, propagation, mode)).stdout
    assert "device dtype torch.bfloat16, bench dtype torch.float32, standard: absolute" in out
    rows = {r[0]: r[1:] for r in ([c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()
                                  if line.startswith("| "))}
    assert rows["relative error ratio (rel err > 0.00390625)"][2] == "pass"
    small = rows["absolute error ratio (small values, abs err > 1e-16)"]
    assert float(small[0]) > 0 and small[2] == "error"
    # float16 softmax under the benchmark standard, one step up (float32) as the bench.
    _, dump, api, propagation, mode, _, _ = cases()["softmax_fp16"]
    out = run_script(generate(build_dir, tmp_path, dump, api, propagation, mode)).stdout
    assert "device dtype torch.float16, bench dtype torch.float32, standard: benchmark" in out


@needs_torch
def test_random_inputs_follow_the_dumped_statistics(build_dir, tmp_path):
    script = generate(
        build_dir, tmp_path, "l1_api/npu/step0/proc32258/dump.json", "Functional.conv2d.0", "forward", "random_data"
    )
    body = (
        "m.torch.manual_seed(1234)\n"
        "out = []\n"
        "for info, t in zip(m.SPEC['forward']['input_args'], m.build(m.SPEC['forward']['input_args'], False)):\n"
        "    if isinstance(t, m.torch.Tensor):\n"
        "        out.append([info['Min'], info['Max'], t.min().item(), t.max().item(), list(t.shape), info['shape'],\n"
        "                    str(t.dtype), info['dtype'], t.requires_grad, info['requires_grad']])\n"
        "print(json.dumps(out))\n"
    )
    tensors = json.loads(probe(script, body))
    assert len(tensors) == 3  # input, weight, bias
    for lo, hi, tmin, tmax, shape, dshape, dtype, ddtype, grad, dgrad in tensors:
        assert tmin == pytest.approx(lo, rel=1e-6) and tmax == pytest.approx(hi, rel=1e-6)
        assert shape == dshape and dtype == ddtype and grad == dgrad


@needs_torch
def test_real_data_reproduces_the_dumped_output(build_dir, tmp_path):
    # The dumped inputs through the same API on the same CPU give the dumped output bit for bit.
    script = generate(
        build_dir, tmp_path, "gpt_tensor/npu/step0/rank0/dump.json", "Functional.linear.0", "forward", "real_data"
    )
    body = (
        "fwd = m.SPEC['forward']\n"
        "out = m.run(m.resolve(m.SPEC['api']), m.build(fwd['input_args'], True), {}, None)\n"
        "dumped = m.real_tensor(fwd['output'][0])\n"
        "print(bool(m.torch.equal(out.detach(), dumped)))\n"
    )
    assert probe(script, body).strip() == "True"


@needs_torch
def test_against_a_reference_run_turns_benchmark_ratios_into_statuses(build_dir, tmp_path):
    script = generate(
        build_dir,
        tmp_path,
        "dist_gloo/npu/step0/rank0/dump.json",
        "Functional.layer_norm.0",
        "forward",
        "random_data",
        iterations=2,
    )
    first = run_script(script, "--save-metrics", str(tmp_path / "reference.json"))
    assert first.returncode == 0, first.stderr
    assert "needs --against" in first.stdout
    assert first.stdout.count("iteration ") == 2
    second = run_script(script, "--against", str(tmp_path / "reference.json"))
    assert second.returncode == 0, second.stderr
    assert "needs --against" not in second.stdout
    assert "(ratio 1)" in second.stdout  # the same seed on the same CPU: each metric equals the reference


@needs_torch
def test_a_missing_tensor_file_at_run_time_is_one_line_and_exit_2(build_dir, tmp_path):
    script = generate(
        build_dir, tmp_path, "gpt_tensor/npu/step0/rank0/dump.json", "Functional.linear.0", "forward", "real_data"
    )
    text = script.read_text()
    script.write_text(text.replace("Functional.linear.0.forward.input.0.pt", "gone.pt"))
    out = run_script(script)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "gone.pt" in out.stderr


# A dump is untrusted input (issue 35, point 3): its text never becomes a statement, its API name
# never reaches past msprobe's support list, its files are loaded only as data.
INJECTED = "\nimport pathlib; pathlib.Path('pwned').touch()\n#"
TENSOR = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": 1.0, "Min": -1.0,
          "requires_grad": False}


def write_dump(tmp_path, data, name="dump.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None,
                                "data": data}))
    return path


def generate_from(build_dir, tmp_path, dump, api):
    config = tmp_path / "config_op.json"
    config.write_text(json.dumps({"dump_json_path": str(dump), "api_name": api,
                                  "extract_api_path": str(tmp_path / "extract.json")}))
    return subprocess.run(
        [str(build_dir / "bin/graph-ascend"), "op_generate", "-i", str(config), "-o", str(tmp_path / "scripts")],
        check=False, capture_output=True, text=True,
    )


def test_runtimes_load_dumped_files_only_as_data():
    runtimes = ROOT / "companions/op_generate"
    for name in ("pytorch_runtime.py", "mindspore_runtime.py"):
        text = (runtimes / name).read_text()
        for call in ("torch.load(", "numpy.load(", "np.load("):
            for at in [i for i in range(len(text)) if text.startswith(call, i)]:
                args = text[at:text.index(")", at)]
                assert "weights_only=True" in args or "allow_pickle=False" in args, f"{name}: {args}"
        assert "pickle.load" not in text and "allow_pickle=True" not in text and "weights_only=False" not in text
        assert "eval(" not in text and "exec(" not in text


def test_names_off_msprobes_list_make_no_script(build_dir, tmp_path):
    dump = write_dump(tmp_path, {
        "Torch.os.system.0.forward": {"input_args": [{"type": "str", "value": "touch pwned"}], "input_kwargs": {}},
        f"Torch.exp.0{INJECTED}.forward": {"input_args": [TENSOR], "input_kwargs": {}},
        "Torch.exp\rimport os.0.forward": {"input_args": [TENSOR], "input_kwargs": {}},
    })
    for api in ("Torch.os.system.0", f"Torch.exp.0{INJECTED}", "Torch.exp\rimport os.0"):
        out = generate_from(build_dir, tmp_path, dump, api)
        assert out.returncode == 2, out.stdout
        assert out.stderr.count("\n") == 1 and out.stderr.startswith(f"graph-ascend: error: {dump}: "), out.stderr
        assert not (tmp_path / "scripts").exists()


@needs_torch
def test_dump_text_never_becomes_a_statement(build_dir, tmp_path):
    # Newlines and quotes everywhere the dump has text: keys, values, the dump file's own name.
    tensor = dict(TENSOR, md5=f"'\"{INJECTED}", **{f"key{INJECTED}": f"\r{INJECTED}\\"})
    entry = {"input_args": [tensor], "input_kwargs": {}, "output": [dict(tensor)], f"x{INJECTED}": [INJECTED]}
    dump = write_dump(tmp_path, {"Torch.exp.0.forward": entry}, name=f"dump{INJECTED}.json")
    out = generate_from(build_dir, tmp_path, dump, "Torch.exp.0")
    assert out.returncode == 0, out.stderr
    script = tmp_path / "scripts/Torch.exp.0.forward.py"
    header = "# Reproduces Torch.exp.0 (forward) from the dump, written by graph-ascend op_generate."
    assert header in script.read_text()
    res = run_script(script)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.rstrip().endswith("result: pass")
    assert not (script.parent / "pwned").exists()
    # The dumped strings come back as they were.
    spec = json.loads(probe(script, "print(json.dumps(m.SPEC))"))
    assert spec["forward"] == entry and spec["source"] == dump.name


@needs_torch
def test_the_script_runs_only_apis_of_msprobes_list(build_dir, tmp_path):
    # Defence in depth: even a SPEC that names torch.os.system (a generator bug) runs nothing.
    dump = write_dump(tmp_path, {"Torch.exp.0.forward": {"input_args": [TENSOR], "input_kwargs": {}}})
    assert generate_from(build_dir, tmp_path, dump, "Torch.exp.0").returncode == 0
    script = tmp_path / "scripts/Torch.exp.0.forward.py"
    marker = tmp_path / "pwned"
    refused = ("torch.os.system", "torch.nn.functional.torch.load", "torch.load", "torch.Tensor.__reduce_ex__")
    body = (
        "import sys\n"
        "sys.argv = ['repro']\n"
        "out = {}\n"
        f"for api in {refused!r}:\n"
        "    try:\n"
        "        m.resolve(api)\n"
        "        out[api] = 'resolved'\n"
        "    except m.InputError as e:\n"
        "        out[api] = str(e)\n"
        "out['vector_norm'] = m.resolve('torch.linalg.vector_norm') is m.torch.linalg.vector_norm\n"
        "out['linear'] = m.resolve('torch.nn.functional.linear') is m.torch.nn.functional.linear\n"
        "m.SPEC['api'] = 'torch.os.system'\n"
        f"m.SPEC['forward']['input_args'] = [{{'type': 'str', 'value': 'touch {marker}'}}]\n"
        "out['main'] = m.main(m.SPEC)\n"
        "print(json.dumps(out))\n"
    )
    out = json.loads(probe(script, body).splitlines()[-1])
    for api in refused:
        assert out[api] == f"{api!r} is not an API msprobe dumps (SUPPORTED_APIS): refused"
    assert out["vector_norm"] and out["linear"]
    assert out["main"] == 2
    assert not marker.exists()


@needs_torch
def test_a_dumped_file_that_would_run_code_is_refused(build_dir, tmp_path):
    # torch.load(weights_only=True) and numpy.load(allow_pickle=False): a pickle whose object would
    # create the marker on loading is refused, in one line, and the marker never appears.
    marker = tmp_path / "pwned"
    make = (
        "import sys, numpy, torch\n"
        "class Evil:\n"
        f"    def __reduce__(self): return (open, ({str(marker)!r}, 'w'))\n"
        f"torch.save({{'t': Evil()}}, {str(tmp_path / 'evil.pt')!r})\n"
        f"numpy.save({str(tmp_path / 'evil.npy')!r}, numpy.array([Evil()], dtype=object), allow_pickle=True)\n"
    )
    made = subprocess.run([TORCH_PYTHON, "-c", make], check=False, capture_output=True, text=True)
    assert made.returncode == 0 and not marker.exists(), made.stderr
    for evil in ("evil.pt", "evil.npy"):
        script = generate(
            build_dir, tmp_path, "gpt_tensor/npu/step0/rank0/dump.json", "Functional.linear.0", "forward", "real_data"
        )
        text = re.sub(r'"[^"]*/Functional\.linear\.0\.forward\.input\.0\.pt"', json.dumps(str(tmp_path / evil)),
                      script.read_text())
        script.write_text(text)
        out = run_script(script)
        assert out.returncode == 2, out.stdout + out.stderr
        assert out.stderr.count("\n") == 1 and evil in out.stderr, out.stderr
        assert not marker.exists()
