#!/usr/bin/env bash
# Remakes static_graph/ with real MindSpore 2.10 and real msprobe 26.2.0 on CPU (static_cell_dump.py):
#   static_graph/graph_build_0.ir         save_graphs IR of the step
#   static_graph/cells/                   msprobe's static-graph cell dump (step0/rank: dump.json,
#                                         construct.json, stack.json with every stack empty, dump_tensor_data/)
#   static_graph/kernels/                 MindSpore's kernel dump (.npy) of the same step
# Needs python3 and PyPI. MindSpore comes from $GA_MINDSPORE_VENV (default .venv-mindspore, made from
# tests/python/requirements-mindspore.txt); msprobe 26.2.0 goes into a small venv of its own beside it
# ($GA_MINDSPORE_VENV-msprobe26) that sees MindSpore's packages through a .pth file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
venv="${GA_MINDSPORE_VENV:-$root/.venv-mindspore}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q -r "$root/tests/python/requirements-mindspore.txt"
probe="$venv-msprobe26"
if [ ! -x "$probe/bin/python" ]; then
  python3 -m venv "$probe"
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$probe/bin/python" -c "import sysconfig, pathlib; pathlib.Path(sysconfig.get_paths()['purelib'], 'mindspore_venv.pth').write_text('$site\n')"
fi
"$probe/bin/python" -m pip install -q --no-deps mindstudio-probe==26.2.0
# msprobe's own dependencies that its MindSpore dump imports (not its torch/onnx/tensorboard parts).
"$probe/bin/python" -m pip install -q "pandas<3" pyyaml tqdm openpyxl einops packaging pytz matplotlib
# MindSpore accepts only letters, digits, "-", "_" and "/" in a dump path.
work=$(mktemp -d /tmp/ga_static_dump_XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$work" && "$probe/bin/python" "$here/static_cell_dump.py" "$work/run" > "$work/log.txt" 2>&1) ||
  { tail -30 "$work/log.txt"; exit 1; }
out="$here/static_graph"
rm -rf "$out"
mkdir -p "$out/kernels"
cp "$(ls "$work"/run/ir/graph_build_0_*.ir | head -n 1)" "$out/graph_build_0.ir"
cp -r "$work/run/cells" "$out/cells"
mkdir -p "$out/kernels/rank_0" && cp -r "$work/run/kernels/rank_0/Net" "$out/kernels/rank_0/Net"
find "$out" -type f | sort | sed "s|$out/||"
