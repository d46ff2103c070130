"""msprobe 26.2.0's config_check compare beside graph-ascend config_check on the same two packs.

    python3 bench/reference/config_check_reference.py [--write] [BENCH_ZIP CMP_ZIP]
    python3 bench/reference/config_check_reference.py --rules

--rules runs both on each case of tests/companions/testdata/config_check/rules.json (two packs
written here as zips) and prints, per case, the rows where msprobe's workbook differs from ours
with the docs/COMPATIBILITY.md entries the case expects to explain them.

Runs `msprobe config_check -c BENCH CMP -o DIR` (bench/.venv-msprobe-26.2.0) and
`graph-ascend config_check -c BENCH CMP -o DIR`, reads both result.xlsx files with openpyxl (in that
venv) and prints every sheet's rows side by side where they differ. --write stores msprobe's workbook
as JSON ({sheet: [header, row, ...]}) in samples/config_check/msprobe_result.json for the tests.
Defaults: samples/config_check/{bench,cmp}.zip.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.path.join(ROOT, "bench", ".venv-msprobe-26.2.0")
READ_XLSX = r"""
import json, sys, openpyxl
wb = openpyxl.load_workbook(sys.argv[1])
print(json.dumps({ws.title: [list(r) for r in ws.iter_rows(values_only=True)] for ws in wb.worksheets}, default=str))
"""


def read_xlsx(path):
    out = subprocess.run([os.path.join(VENV, "bin", "python"), "-c", READ_XLSX, path], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def compare(bench, cmp, tmp):
    """msprobe's and our workbooks of the same two packs ({sheet: rows}; ours None if it failed)."""
    ref_dir, our_dir = os.path.join(tmp, "msprobe"), os.path.join(tmp, "ours")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    subprocess.run([os.path.join(VENV, "bin", "msprobe"), "config_check", "-c", bench, cmp, "-o", ref_dir],
                   env=env, cwd=tmp, check=True, capture_output=True)
    ref = read_xlsx(os.path.join(ref_dir, "result.xlsx"))
    binary = os.path.join(ROOT, "build", "bin", "graph-ascend")
    ours = None
    if subprocess.run([binary, "config_check", "-c", bench, cmp, "-o", our_dir]).returncode == 0:
        ours = read_xlsx(os.path.join(our_dir, "result.xlsx"))
    return ref, ours


def print_differences(ref, ours):
    for sheet in list(ref) + [s for s in (ours or {}) if s not in ref]:
        rows = ref.get(sheet, [])
        mine = (ours or {}).get(sheet, [])
        print(f"sheet={sheet} msprobe_rows={max(len(rows) - 1, 0)} ours_rows={max(len(mine) - 1, 0)}")
        for row in rows:
            if row not in mine:
                print(f"  msprobe only: {row}")
        for row in mine:
            if row not in rows:
                print(f"  ours only:    {row}")


def rules():
    import zipfile

    cases = json.load(open(os.path.join(ROOT, "tests", "companions", "testdata", "config_check", "rules.json")))
    for name, case in cases.items():
        if name.startswith("_"):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            packs = []
            for side in ("bench", "cmp"):
                path = os.path.join(tmp, f"{side}.zip")
                with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                    for member, content in case[side].items():
                        z.writestr(member, content if isinstance(content, str) else json.dumps(content, indent=4))
                packs.append(path)
            print(f"case={name} expected differences: {', '.join(case['msprobe_differs']) or 'none'}")
            print_differences(*compare(*packs, tmp))


def main():
    if "--rules" in sys.argv:
        subprocess.run([os.path.join(HERE, "run_msprobe.sh"), "--version", "26.2.0", "--install"], check=True)
        return rules()
    args = [a for a in sys.argv[1:] if a != "--write"]
    default = [os.path.join(ROOT, "samples", "config_check", f) for f in ("bench.zip", "cmp.zip")]
    bench, cmp = args if len(args) == 2 else default
    subprocess.run([os.path.join(HERE, "run_msprobe.sh"), "--version", "26.2.0", "--install"], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        ref, ours = compare(bench, cmp, tmp)
        print_differences(ref, ours)
        if "--write" in sys.argv:
            with open(os.path.join(ROOT, "samples", "config_check", "msprobe_result.json"), "w") as f:
                json.dump(ref, f, indent=1)
                f.write("\n")


if __name__ == "__main__":
    main()
