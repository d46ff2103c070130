"""graph-ascend config_check's result.xlsx opened by a real xlsx reader (openpyxl).

The workbook is written by our own Office Open XML writer (companions/xlsx), so the C++ tests only
see its zip members; here openpyxl, the reader msprobe's users open results with in Python (and
pandas' engine for .xlsx), loads the workbook made from the real packs in samples/config_check and
must find the sheets, the header rows, the known differences with their types, and the same rows
as result.json.
"""

import json
import subprocess

import openpyxl

SHEETS = ["summary", "env", "pip", "dataset", "weights", "hyperparameters", "random"]


def run_check(build_dir, repo_root, out):
    packs = repo_root / "samples" / "config_check"
    subprocess.run(
        [str(build_dir / "bin" / "graph-ascend"), "config_check", "-c", str(packs / "bench.zip"),
         str(packs / "cmp.zip"), "-o", str(out)],
        check=True, capture_output=True, text=True,
    )
    return openpyxl.load_workbook(out / "result.xlsx")


def rows(sheet):
    return [list(r) for r in sheet.iter_rows(values_only=True)]


def test_sheets_headers_and_known_differences(build_dir, repo_root, tmp_path):
    wb = run_check(build_dir, repo_root, tmp_path / "result")
    assert wb.sheetnames == SHEETS
    reference = json.loads((repo_root / "samples" / "config_check" / "msprobe_result.json").read_text())
    for name in SHEETS:
        header = rows(wb[name])[0]
        assert header == reference[name][0], name
        assert all(c.font.b for c in wb[name][1]), f"{name}: header not bold"
    assert rows(wb["summary"])[1:] == [["env", "error"], ["pip", "error"], ["dataset", "error"],
                                       ["weights", "error"], ["hyperparameters", "error"], ["random", "pass"]]
    # The known differences of the two runs, typed as msprobe's workbook types them.
    assert rows(wb["env"])[1] == ["HCCL_DETERMINISTIC", "HCCL_DETERMINISTIC", "true", "false", "error"]
    assert rows(wb["pip"])[1] == ["peft", "0.13.0", "0.13.2", "error"]
    assert rows(wb["hyperparameters"])[1] == ["hyperparameters_static.json", "lr", "lr", "1e-4", "2e-4",
                                              "pure name", "error"]
    weight = rows(wb["weights"])[1]
    assert weight[:4] == [0, 0, "0.bias", False]
    assert isinstance(weight[4], float) and weight[4] > 0
    assert rows(wb["random"])[1][-1] is True


def test_workbook_holds_what_result_json_holds(build_dir, repo_root, tmp_path):
    out = tmp_path / "result"
    wb = run_check(build_dir, repo_root, out)
    result = json.loads((out / "result.json").read_text())
    assert list(result) == wb.sheetnames
    for name, want in result.items():
        # An empty string is an empty cell in the workbook (as pandas writes it).
        want = [[None if c == "" else c for c in r] for r in want]
        got = rows(wb[name])
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert g[: len(w)] == w and all(c is None for c in g[len(w):]), (name, g, w)
