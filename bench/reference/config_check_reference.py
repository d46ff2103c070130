"""msprobe 26.2.0's config_check compare beside graph-ascend config_check on the same two packs.

    python3 bench/reference/config_check_reference.py [--write] [BENCH_ZIP CMP_ZIP]

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


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    default = [os.path.join(ROOT, "samples", "config_check", f) for f in ("bench.zip", "cmp.zip")]
    bench, cmp = args if len(args) == 2 else default
    subprocess.run([os.path.join(HERE, "run_msprobe.sh"), "--version", "26.2.0", "--install"], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        ref_dir, our_dir = os.path.join(tmp, "msprobe"), os.path.join(tmp, "ours")
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        subprocess.run([os.path.join(VENV, "bin", "msprobe"), "config_check", "-c", bench, cmp, "-o", ref_dir],
                       env=env, cwd=tmp, check=True, capture_output=True)
        ref = read_xlsx(os.path.join(ref_dir, "result.xlsx"))
        ours = None
        binary = os.path.join(ROOT, "build", "bin", "graph-ascend")
        if subprocess.run([binary, "config_check", "-c", bench, cmp, "-o", our_dir]).returncode == 0:
            ours = read_xlsx(os.path.join(our_dir, "result.xlsx"))
        for sheet, rows in ref.items():
            mine = f" ours_rows={len(ours.get(sheet, [])) - 1}" if ours else ""
            print(f"sheet={sheet} msprobe_rows={len(rows) - 1}{mine}")
            if ours is None:
                continue
            mine = ours.get(sheet, [])
            for row in rows:
                if row not in mine:
                    print(f"  msprobe only: {row}")
            for row in mine:
                if row not in rows:
                    print(f"  ours only:    {row}")
        if "--write" in sys.argv:
            with open(os.path.join(ROOT, "samples", "config_check", "msprobe_result.json"), "w") as f:
                json.dump(ref, f, indent=1)
                f.write("\n")


if __name__ == "__main__":
    main()
