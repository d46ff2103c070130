"""graph-ascend op_generate -f mindspore's scripts, run for real with MindSpore on CPU.

The scripts need MindSpore, which the project's test venv does not carry: scripts/test-op-scripts.sh
makes a MindSpore venv and runs this file with GA_MINDSPORE_PYTHON set to its python; without it every
test here is skipped. The dump is tests/companions/testdata/op_generate/mindspore (see its README).
"""

import csv
import json
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DUMP = ROOT / "tests/companions/testdata/op_generate/mindspore/dump.json"
MS_PYTHON = os.environ.get("GA_MINDSPORE_PYTHON")
needs_ms = pytest.mark.skipif(not MS_PYTHON, reason="GA_MINDSPORE_PYTHON unset (scripts/test-op-scripts.sh sets it)")
DETAIL_HEADER = ["API Name", "Bench Dtype", "Tested Dtype", "Shape", "Cosine", "MaxAbsErr", "MaxRelativeErr",
                 "Status", "Message"]
RESULT_HEADER = ["API Name", "Forward Test Success", "Backward Test Success", "Message"]


def generate(build_dir, tmp_path, api, propagation="forward", mode="random_data", iterations=1):
    config = tmp_path / "config_op.json"
    config.write_text(json.dumps({
        "dump_json_path": str(DUMP), "api_name": api, "extract_api_path": str(tmp_path / f"{api}.json"),
        "propagation": propagation, "data_mode": mode, "random_seed": 1234, "iter_times": iterations,
    }))
    out = subprocess.run(
        [str(build_dir / "bin/graph-ascend"), "op_generate", "-i", str(config), "-o", str(tmp_path / "scripts")],
        check=False, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    return tmp_path / "scripts" / f"{api}.{propagation}.py"


def run(script, tmp_path):
    res = subprocess.run([MS_PYTHON, str(script), "--output", str(tmp_path / "out")], check=False,
                         capture_output=True, text=True, cwd=tmp_path)
    details = sorted((tmp_path / "out").glob("accuracy_checking_details_*.csv"))
    results = sorted((tmp_path / "out").glob("accuracy_checking_result_*.csv"))
    assert len(details) == 1 and len(results) == 1, res.stdout + res.stderr
    read = lambda p: list(csv.reader(p.read_text(encoding="utf-8-sig").splitlines()))  # noqa: E731
    return res, read(details[0]), read(results[0])


def apis():
    data = json.loads(DUMP.read_text())["data"]
    return data


@needs_ms
@pytest.mark.parametrize("api", ["MintFunctional.linear.0", "Functional.gelu.0",
                                 "MintFunctional.relu.0", "MintFunctional.softmax.0", "Mint.add.0"])
@pytest.mark.parametrize("mode", ["random_data", "real_data"])
def test_forward_script_runs_and_writes_both_csv_files(build_dir, tmp_path, api, mode):
    script = generate(build_dir, tmp_path, api, mode=mode)
    res, details, results = run(script, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "device under test: CPU" in res.stdout
    assert details[0] == DETAIL_HEADER and results[0] == RESULT_HEADER
    out = apis()[f"{api}.forward"]["output"]
    assert len(details) == 1 + len(out)
    for row, dumped in zip(details[1:], out):
        assert row[0].startswith(f"{api}.forward.output.")
        assert row[1] == {"Float32": "Float64", "Float16": "Float32"}[dumped["dtype"]]
        assert row[2] == dumped["dtype"]
        assert row[3] == str(tuple(dumped["shape"]))
        assert float(row[4]) > 0.99 and float(row[5]) < 1e-3 and row[7] == "pass"
    assert results[1] == [api, "pass", "", ""]


@needs_ms
def test_real_data_reproduces_the_dumped_output(build_dir, tmp_path):
    """In real_data mode the inputs are the dumped .npy files, so the tested output is the dumped one."""
    script = generate(build_dir, tmp_path, "MintFunctional.softmax.0", mode="real_data")
    code = (
        "import importlib.util, numpy as np, mindspore as ms\n"
        f"spec = importlib.util.spec_from_file_location('repro', {str(script)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "ms.set_device('CPU')\n"
        "rng = np.random.default_rng(0)\n"
        "args = m.place(m.build(m.SPEC['forward']['input_args'], True, rng), False)\n"
        "kwargs = m.place(m.build(m.SPEC['forward']['input_kwargs'], True, rng), False)\n"
        "out = m.run(m.resolve(m.SPEC['api']), args, kwargs, None)[0].asnumpy()\n"
        "print(repr(float(out.max())), repr(float(out.min())))\n"
    )
    res = subprocess.run([MS_PYTHON, "-c", code], check=False, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    got_max, got_min = (float(x) for x in res.stdout.split()[-2:])
    dumped = apis()["MintFunctional.softmax.0.forward"]["output"][0]
    assert got_max == pytest.approx(dumped["Max"], rel=1e-6)
    assert got_min == pytest.approx(dumped["Min"], rel=1e-6)


@needs_ms
def test_backward_script_compares_the_input_gradients(build_dir, tmp_path):
    script = generate(build_dir, tmp_path, "MintFunctional.softmax.0", propagation="backward")
    res, details, results = run(script, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert details[1][0] == "MintFunctional.softmax.0.backward.output.0"
    assert details[1][7] == "pass"
    assert results[1] == ["MintFunctional.softmax.0", "", "pass", ""]


@needs_ms
def test_iterations_append_rows_to_the_same_files(build_dir, tmp_path):
    script = generate(build_dir, tmp_path, "Mint.add.0", iterations=3)
    res, details, results = run(script, tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert len(results) == 4 and len(details) == 4


# A dump is untrusted input (issue 35, point 3): the script resolves only msprobe's listed APIs and
# loads .npy files as data, never unpickling them.
def probe(script, body):
    code = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('repro', {str(script)!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n" + body
    )
    res = subprocess.run([MS_PYTHON, "-c", code], check=False, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return res.stdout


@needs_ms
def test_the_script_runs_only_apis_of_msprobes_list(build_dir, tmp_path):
    script = generate(build_dir, tmp_path, "Mint.add.0")
    marker = tmp_path / "pwned"
    refused = ("mindspore.os.system", "mindspore.mint.nn.functional.ms.os.system", "mindspore.load_checkpoint",
               "mindspore.Tensor.__reduce_ex__")
    body = (
        "sys.argv = ['repro', '--output', " + repr(str(tmp_path / "out")) + "]\n"
        "out = {}\n"
        f"for api in {refused!r}:\n"
        "    try:\n"
        "        m.resolve(api)\n"
        "        out[api] = 'resolved'\n"
        "    except m.InputError as e:\n"
        "        out[api] = str(e)\n"
        "out['add'] = m.resolve('mindspore.mint.add') is m.ms.mint.add\n"
        "m.SPEC['api'] = 'mindspore.os.system'\n"
        f"m.SPEC['forward']['input_args'] = [{{'type': 'str', 'value': 'touch {marker}'}}]\n"
        "out['main'] = m.main(m.SPEC)\n"
        "print(json.dumps(out))\n"
    )
    out = json.loads(probe(script, body).splitlines()[-1])
    for api in refused:
        assert out[api] == f"{api!r} is not an API msprobe dumps (SUPPORTED_APIS): refused"
    assert out["add"] and out["main"] == 2
    assert not marker.exists()


@needs_ms
def test_a_pickled_npy_is_refused(build_dir, tmp_path):
    marker = tmp_path / "pwned"
    make = (
        "import numpy\n"
        "class Evil:\n"
        f"    def __reduce__(self): return (open, ({str(marker)!r}, 'w'))\n"
        f"numpy.save({str(tmp_path / 'evil.npy')!r}, numpy.array([Evil()], dtype=object), allow_pickle=True)\n"
    )
    made = subprocess.run([MS_PYTHON, "-c", make], check=False, capture_output=True, text=True)
    assert made.returncode == 0 and not marker.exists(), made.stderr
    script = generate(build_dir, tmp_path, "MintFunctional.softmax.0", mode="real_data")
    evil = json.dumps(str(tmp_path / "evil.npy"))
    text = re.sub(r'"[^"]*/MintFunctional\.softmax\.0\.forward\.input\.0\.npy"', evil, script.read_text())
    assert text != script.read_text()
    script.write_text(text)
    res = subprocess.run([MS_PYTHON, str(script), "--device", "cpu", "--output", str(tmp_path / "out")], check=False,
                         capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]  # MindSpore warns on stderr too
    assert len(errors) == 1 and "evil.npy" in errors[0] and "allow_pickle=False" in errors[0], res.stderr
    assert not marker.exists()
