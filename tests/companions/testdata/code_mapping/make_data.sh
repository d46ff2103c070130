#!/usr/bin/env bash
# Remakes the code_mapping test data with real MindSpore on CPU, then msprobe 8.3.3's code_mapping on it:
#   mindspore_cpu/graph_build_0.ir     save_graphs IR of one training step (MindSpore 2.10 CPU writes
#                                      graph_build_0_*.ir; it writes no anf_after_graph_build*.ir)
#   mindspore_cpu/dump/rank_0/Net/0/0/ the CPU tensor dump (.npy) of that step
#   statistic/rank_0/Net/0/0/statistic.csv  MindSpore refuses a statistic dump on CPU ("storing statistic
#                                      dump is only supported on GPU and Ascend"), so this file is written
#                                      from the real .npy files in the documented statistic.csv layout
#   msprobe-8.3.3/                     msprobe's outputs on the same files (the golden files)
# Needs python3 and PyPI (the venv is $GA_MINDSPORE_VENV, default .venv-mindspore, ~3 GB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
venv="${GA_MINDSPORE_VENV:-$root/.venv-mindspore}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q -r "$here/requirements-mindspore.txt"
# MindSpore accepts only letters, digits, "-", "_" and "/" in the dump path.
work=$(mktemp -d /tmp/ga_code_mapping_XXXXXX)
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" "$here/train_step.py" "$work/run" tensor > "$work/log.txt" 2>&1 || { tail -20 "$work/log.txt"; exit 1; }
rm -rf "$here/mindspore_cpu" "$here/statistic" "$here/msprobe-8.3.3"
mkdir -p "$here/mindspore_cpu/dump/rank_0/Net/0/0" "$here/statistic/rank_0/Net/0/0" "$here/msprobe-8.3.3"
cp "$(ls "$work"/run/ir/graph_build_0_*.ir | head -n 1)" "$here/mindspore_cpu/graph_build_0.ir"
cp "$work"/run/dump/rank_0/Net/0/0/*.npy "$here/mindspore_cpu/dump/rank_0/Net/0/0/"
"$venv/bin/python" - "$here/mindspore_cpu/dump/rank_0/Net/0/0" "$here/statistic/rank_0/Net/0/0/statistic.csv" <<'PY'
import csv, os, sys
import numpy as np
src, out = sys.argv[1], sys.argv[2]
with open(out, "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    # MindSpore's statistic.csv header and rows end with a comma.
    w.writerow(["Op Type", "Op Name", "Task ID", "Stream ID", "Timestamp", "IO", "Slot", "Data Size", "Data Type",
                "Shape", "Max Value", "Min Value", "L2Norm Value", ""])
    for name in sorted(os.listdir(src)):
        op_type, op_name, task, stream, ts, io, slot, _fmt, _dtype = name[:-4].split(".")
        a = np.load(os.path.join(src, name))
        flat = a.astype(np.float64).reshape(-1) if a.size else np.zeros(1)
        w.writerow([op_type, op_name, task, stream, ts, io, slot, a.nbytes, str(a.dtype), str(tuple(a.shape)),
                    flat.max(), flat.min(), float(np.sqrt((flat ** 2).sum())), ""])
PY
# msprobe -f mindspore imports MindSpore, so its 8.3.3 runs in the same venv (it needs numpy<2 and pandas<2.1,
# which MindSpore 2.10 accepts; the install order keeps MindSpore's own pins for the dump above).
"$venv/bin/python" -m pip install -q --no-deps mindstudio-probe==8.3.3
"$venv/bin/python" -m pip install -q "numpy<2" "pandas<2.1" openpyxl matplotlib pyyaml tqdm twisted==25.5.0
msprobe="$venv/bin/msprobe"
if [ -x "$msprobe" ]; then
  (cd "$work" && "$msprobe" -f mindspore code_mapping --ir "$here/mindspore_cpu/graph_build_0.ir" \
    --dump_data "$here/mindspore_cpu/dump" --output "$work/npy_out" > msprobe_npy.log 2>&1)
  cp "$work"/npy_out/code_mapping_*.csv "$here/msprobe-8.3.3/code_mapping_npy.csv"
  cp -r "$here/statistic" "$work/statistic"
  (cd "$work" && "$msprobe" -f mindspore code_mapping --ir "$here/mindspore_cpu/graph_build_0.ir" \
    --dump_data "$work/statistic" --output "$work/stat_out" > msprobe_stat.log 2>&1)
  cp "$work/statistic/rank_0/Net/0/0/statistic.csv" "$here/msprobe-8.3.3/statistic.csv"
else
  echo "make_data: $msprobe missing: no golden files" >&2
fi
