#!/usr/bin/env bash
# Regenerates the real msprobe dumps under samples/ (not part of CI: needs PyPI, ~6 GB venv).
#
#   samples/generate/generate.sh            # every case
#   samples/generate/generate.sh cnn_md5 …  # only these cases
#
# Creates the throwaway venv samples/.venv from samples/generate/requirements.txt, pinned further by
# constraints.txt (the full pip freeze of the generating venv; Python 3.11:
# the pinned mindstudio-probe wheel is cp311), runs each case's bench and npu side on CPU under
# msprobe's PrecisionDebugger straight into samples/<case>/{bench,npu}/, then writes the
# compare.json files (write_compare_json.py) and samples/versions.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
samples=$(dirname "$here")
# GA_SAMPLES_VENV=DIR runs the cases in that venv as it is, installing nothing (it needs the torch and
# mindstudio-probe of versions.txt, and what the chosen cases import); versions.txt is then left alone.
venv="${GA_SAMPLES_VENV:-$samples/.venv}"
py=${PYTHON:-python3.11}
command -v "$py" >/dev/null || py=python3

all_cases=(cnn_statistics cnn_md5 gpt_tensor gpt_statistics dist_gloo l1_api structure overflow_nan
  layer_mapping parallel_merge bert_pgrad renamed_act handwritten_norm rank_origin p2p_micro signal_l1 rl_stages msadapter)
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("${all_cases[@]}")

if [ -z "${GA_SAMPLES_VENV:-}" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
  fi
  stamp="$venv/.requirements.sha"
  want=$(cat "$here/requirements.txt" "$here/constraints.txt" | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "generate: installing samples/generate/requirements.txt into samples/.venv"
    "$venv/bin/python" -m pip install -q -r "$here/requirements.txt" -c "$here/constraints.txt"
    echo "$want" >"$stamp"
  fi
fi

# Single-threaded and deterministic; no accelerator is used or needed.
export OMP_NUM_THREADS=1 CUDA_VISIBLE_DEVICES=""
port=29511
# msadapter's npu side runs MSAdapter's mindtorch on MindSpore, in a venv of its own
# (samples/generate/mindtorch-requirements.txt, then mindnlp 0.5.1 --no-deps); GA_MINDTORCH_VENV=DIR uses DIR.
mindtorch_python() {
  local v="${GA_MINDTORCH_VENV:-$samples/.venv-mindtorch}"
  if [ -z "${GA_MINDTORCH_VENV:-}" ] && [ ! -x "$v/bin/python" ]; then
    # stdout is the python path this function answers: the installs print elsewhere.
    "$py" -m venv "$v" >&2
    "$v/bin/python" -m pip install -q -r "$here/mindtorch-requirements.txt" >&2
    "$v/bin/python" -m pip install -q --no-deps mindnlp==0.5.1 >&2
  fi
  echo "$v/bin/python"
}
run_side() { # case side
  local case=$1 side=$2 out="$samples/$1/$2"
  rm -rf "$out"
  mkdir -p "$samples/$case"
  echo "generate: $case $side"
  case $case in
    dist_gloo|p2p_micro)
      "$venv/bin/torchrun" --nproc_per_node 2 --master_addr 127.0.0.1 --master_port $port \
        "$here/run_case.py" "$case" "$side" "$out" ;;
    rl_stages)
      "$venv/bin/python" "$here/rl_stages.py" "$side" "$out" ;;
    msadapter)
      if [ "$side" = npu ]; then
        "$(mindtorch_python)" "$here/msadapter.py" mindtorch "$out"
      else
        "$venv/bin/python" "$here/msadapter.py" pytorch "$out"
      fi ;;
    rank_origin)
      "$venv/bin/torchrun" --nproc_per_node 4 --master_addr 127.0.0.1 --master_port $port \
        "$here/rank_origin.py" "$side" "$out" ;;
    parallel_merge)
      if [ "$side" = npu ]; then
        "$venv/bin/torchrun" --nproc_per_node 4 --master_addr 127.0.0.1 --master_port $port \
          "$here/run_case.py" "$case" "$side" "$out"
      else
        "$venv/bin/python" "$here/run_case.py" "$case" "$side" "$out"
      fi ;;
    *)
      "$venv/bin/python" "$here/run_case.py" "$case" "$side" "$out" ;;
  esac
}

log_dir=$(mktemp -d)
for case in "${cases[@]}"; do
  for side in bench npu; do
    if ! run_side "$case" "$side" >"$log_dir/$case-$side.log" 2>&1; then
      echo "generate: $case $side failed, log:" >&2
      tail -40 "$log_dir/$case-$side.log" >&2
      exit 1
    fi
  done
  "$venv/bin/python" "$here/write_compare_json.py" "$samples/$case"
done
rm -rf "$log_dir"

[ -n "${GA_SAMPLES_VENV:-}" ] && { du -sh "$samples" --exclude=.venv; exit 0; }
{
  echo "# Environment that generated the dumps under samples/ (samples/generate/generate.sh)."
  echo "python $("$venv/bin/python" -c 'import platform; print(platform.python_version())')"
  echo "platform $(uname -srm)"
  "$venv/bin/python" -c 'import torch; print("torch.__version__", torch.__version__)'
  echo "msprobe -V: $("$venv/bin/msprobe" -V 2>/dev/null | grep -m1 '^msprobe ')"
  "$venv/bin/python" -m pip freeze --all | sort -f
} >"$samples/versions.txt"
du -sh "$samples" --exclude=.venv
