#!/usr/bin/env python3
"""Makes the noisy divergence corpus (bench/divergence/corpus.tar.xz) with real msprobe dumps.

    python3 bench/divergence/make_corpus.py VENV_PYTHON [--jobs 2]

VENV_PYTHON is a Python with samples/versions.txt's torch 2.8.0 and mindstudio-probe 26.2.0 (and
transformers 4.57.1), e.g. made by samples/generate/generate.sh. Not part of CI (needs torch).

Every case is three real runs of one tiny model on CPU under msprobe (corpus_models.py):
  bench      the baseline: no noise, no bug
  npu        the noise of the case (every linear/matmul/conv of the run differs a little) and its bug
  reference  the same noise without the bug
The culprit is found without graph-ascend, by comparing the npu and the reference dump.json: both
compute bit for bit the same up to the bug, so the first API entry (in dump order) that is missing
from the reference or whose fields differ is where the bug enters (its enclosing module from
construct.json). Noise-only cases have no bug: the reference is the npu run, the culprit none.
The corpus keeps the npu and bench dumps of the compared step and a manifest.json.
Model gpt_dp is a 2-rank data-parallel job (corpus_gloo.py under VENV_PYTHON's torchrun, gloo on CPU)
with the bug on rank 1: its case keeps both ranks' dumps and is built as a batch (score.py).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))

# (model, noise, bug[:strength]); bug "none" = a noise-only case.
CASES = [
    ("llama", "bf16lin", "eps"), ("llama", "order", "eps"), ("llama", "autocast", "rope"),
    ("llama", "bf16lin", "rope:weak"), ("llama", "bf16both", "transpose"), ("llama", "order", "weight:weak"),
    ("llama", "bf16lin", "loss_scale"), ("llama", "order", "step1_eps"),
    ("qwen2", "autocast", "eps"), ("qwen2", "bf16lin", "weight"), ("qwen2", "order", "rope"),
    ("qwen2", "autocast", "loss_scale"), ("qwen2", "order", "transpose"),
    ("bert", "bf16lin", "eps"), ("bert", "order", "dropout"), ("bert", "bf16lin", "dropout:weak"),
    ("bert", "autocast", "transpose"), ("bert", "bf16both", "weight"),
    ("vit", "order", "eps"), ("vit", "autocast", "dropout"), ("vit", "bf16lin", "weight:weak"),
    ("vit", "bf16lin", "transpose"),
    ("moe", "bf16lin", "router"), ("moe", "order", "router:weak"), ("moe", "autocast", "router"),
    ("moe", "order", "weight"), ("moe", "bf16both", "eps"),
    ("cnn", "bf16lin", "eps"), ("cnn", "order", "weight"), ("cnn", "order", "eps:weak"),
    ("cnn", "order", "loss_scale"), ("cnn", "autocast", "weight"),
    ("gpt", "bf16lin", "mask"), ("gpt", "autocast", "mask"), ("gpt", "order", "softmax_lowp"),
    ("gpt", "bf16lin", "softmax_lowp"), ("gpt", "order", "fp16_overflow"), ("gpt", "bf16lin", "fp16_overflow"),
    ("gpt", "bf16lin", "custom_backward"), ("gpt", "order", "custom_backward:weak"),
    ("gpt", "autocast", "hand_norm"), ("gpt", "order", "hand_norm"), ("gpt", "bf16both", "rope"),
    ("gpt", "bf16both", "mask"), ("gpt", "bf16both", "eps"),
    ("gpt_gelu", "bf16lin", "hand_act"), ("gpt_gelu", "order", "hand_act"),
    # noise only
    ("llama", "bf16lin", "none"), ("qwen2", "autocast", "none"), ("bert", "order", "none"),
    ("vit", "bf16both", "none"), ("moe", "autocast", "none"), ("cnn", "bf16lin", "none"),
    ("gpt", "order", "none"), ("gpt", "bf16both", "none"), ("llama", "autocast", "none"),
    ("bert", "bf16lin", "none"),
    # MindSpore against PyTorch (noise "mindspore": the npu run is corpus_mindspore.py's twin, the
    # bench run the PyTorch twin; compared with the layer mapping of TWIN_MAPPING)
    ("twin_gpt", "mindspore", "eps"), ("twin_gpt", "mindspore", "mask"), ("twin_gpt", "mindspore", "softmax_lowp"),
    ("twin_llama", "mindspore", "weight"), ("twin_llama", "mindspore", "transpose"),
    ("twin_llama", "mindspore", "eps:weak"),
    ("twin_gpt", "mindspore", "none"), ("twin_llama", "mindspore", "none"),
    # a 2-rank data-parallel job on gloo (corpus_gloo.py): the bug on rank 1 only, scored as a batch
    ("gpt_dp", "bf16lin", "eps"), ("gpt_dp", "order", "weight"),
    ("gpt_dp", "bf16lin", "none"), ("gpt_dp", "order", "none"),
]

# The layer mapping a user writes to compare the MindSpore twin with the PyTorch one (graph -lm): the
# cells and modules share their names; mint.nn.Linear's dense primitive is PyTorch's linear.
TWIN_MAPPING = "Linear:\n  Dense: linear\n"


def case_name(model, noise, bug):
    return f"{model}-{noise}-{bug.replace(':', '_')}"


def steps_of(bug):
    return 2 if bug.startswith("step1") else 1


def run_key(model, noise, side, bug):
    """One real run; bench ignores the noise but bf16both's (its model is bf16 too)."""
    steps = steps_of(bug)
    if side == "bench":
        return (model, "bf16both" if noise == "bf16both" else "none", "bench", "none", steps)
    return (model, noise, "npu", bug, steps)


def run_dir(key):
    model, noise, side, bug, steps = key
    return f"{side}-{model}-{noise}-{bug.replace(':', '_')}-s{steps}"


def do_run(python, key, out_root, ms_python=None):
    model, noise, side, bug, steps = key
    out = os.path.join(out_root, run_dir(key))
    if os.path.exists(os.path.join(out, "done")):
        return out
    shutil.rmtree(out, ignore_errors=True)
    # step1_eps's bug is named for the runner; its reference is the 2-step run without a bug.
    bug_arg = "none_s2" if bug == "none" and steps == 2 else bug
    env = dict(os.environ, OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    if model == "gpt_dp":  # two processes on gloo; --standalone picks a free port (runs go in parallel)
        torchrun = os.path.join(os.path.dirname(python), "torchrun")
        argv = [torchrun, "--standalone", "--nproc_per_node", "2", os.path.join(HERE, "corpus_gloo.py"), noise, side,
                bug_arg, out]
    elif noise == "mindspore":
        if ms_python is None:
            raise RuntimeError(f"{run_dir(key)}: needs --ms-python (MindSpore 2.10 and msprobe 26.2.0)")
        argv = [ms_python, os.path.join(HERE, "corpus_mindspore.py"), model, bug_arg, out]
    else:
        argv = [python, os.path.join(HERE, "corpus_models.py"), model, noise, side, bug_arg, out]
    log = subprocess.run(
        argv,
        env=env, capture_output=True, text=True,
    )
    if log.returncode != 0:
        raise RuntimeError(f"{run_dir(key)} failed:\n{log.stderr[-3000:]}")
    open(os.path.join(out, "done"), "w").close()
    return out


# ------------------------------------------------------------------ the independent culprit check


def leaves(value, path, out):
    """Every dumped leaf (a tensor's dtype/shape/statistics, a scalar's value) under path."""
    if isinstance(value, dict):
        if "type" in value:
            out.append((path, json.dumps(value, sort_keys=True)))
        else:
            for k in sorted(value):
                leaves(value[k], f"{path}.{k}", out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            leaves(v, f"{path}.{i}", out)
    else:
        out.append((path, json.dumps(value)))


def first_difference(npu_dump, ref_dump):
    """The first API entry of npu (dump order) missing from ref or with any field different."""
    npu = json.load(open(npu_dump))["data"]
    ref = json.load(open(ref_dump))["data"]
    module_hit = None
    for name, entry in npu.items():
        other = ref.get(name)
        same = False
        if other is not None:
            a, b = [], []
            leaves(entry, "", a)
            leaves(other, "", b)
            same = a == b
        if same:
            continue
        if name.startswith("Module.") or ".parameters_grad" in name:
            module_hit = module_hit or name
            continue
        return name
    return module_hit


def enclosing_modules(construct_path, name):
    construct = json.load(open(construct_path))
    chain = []
    parent = construct.get(name)
    while parent and parent not in chain:
        chain.append(parent)
        parent = construct.get(parent)
    return chain


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("python")
    ap.add_argument("--ms-python", help="a Python with MindSpore 2.10 and msprobe 26.2.0 (the mindspore cases)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default="/tmp/ga-divergence-corpus")
    ap.add_argument("--out", default=os.path.join(HERE, "corpus.tar.xz"))
    ap.add_argument("--pack-done", action="store_true", help="run nothing; pack the cases whose runs are done")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    keys = set()
    for model, noise, bug in CASES:
        keys.add(run_key(model, noise, "bench", bug))
        keys.add(run_key(model, noise, "npu", bug))
        keys.add(run_key(model, noise, "npu", "none") if steps_of(bug) == 1 else (model, noise, "npu", "none_s2", 2))
    def done(key):
        return os.path.exists(os.path.join(args.work, run_dir(key), "done"))

    if args.pack_done:
        keys = {k for k in keys if done(k)}
    with ThreadPoolExecutor(args.jobs) as pool:
        for key, _ in zip(sorted(keys), pool.map(lambda k: do_run(args.python, k, args.work, args.ms_python), sorted(keys))):
            print("ran", run_dir(key), flush=True)

    manifest = {}
    stored = set()
    for model, noise, bug in CASES:
        step = steps_of(bug) - 1
        npu_key = run_key(model, noise, "npu", bug)
        bench_key = run_key(model, noise, "bench", bug)
        ref_key = run_key(model, noise, "npu", "none") if step == 0 else (model, noise, "npu", "none_s2", 2)
        if not all(k in keys for k in (npu_key, bench_key, ref_key)):
            continue
        # A batch (the gloo job) compares every rank of the step; its culprit is on the bug's rank.
        ranks = [0, 1] if model == "gpt_dp" else [0]
        culprit_rank = 1 if model == "gpt_dp" else 0
        rel = f"step{step}/rank{culprit_rank}"
        npu_dir = os.path.join(args.work, run_dir(npu_key), rel)
        ref_dir = os.path.join(args.work, run_dir(ref_key), rel)
        culprit = None if bug == "none" else first_difference(f"{npu_dir}/dump.json", f"{ref_dir}/dump.json")
        if bug != "none" and culprit is None:
            print(f"warning: {case_name(model, noise, bug)}: the bug changed nothing in the dump", flush=True)
        case = manifest[case_name(model, noise, bug)] = {
            "model": model, "noise": noise, "bug": bug,
            "npu": f"runs/{run_dir(npu_key)}/{rel}", "bench": f"runs/{run_dir(bench_key)}/{rel}",
            "culprit": culprit,
            "modules": enclosing_modules(f"{npu_dir}/construct.json", culprit) if culprit else [],
        }
        if len(ranks) > 1:
            case.update(npu=f"runs/{run_dir(npu_key)}", bench=f"runs/{run_dir(bench_key)}", batch=True,
                        step=f"step{step}", culprit_rank=culprit_rank if culprit else None)
        if noise == "mindspore":
            case["graph_args"] = ["-lm", "twin_mapping.yaml"]
        stored.update((k, f"step{step}/rank{r}") for k in (npu_key, bench_key) for r in ranks)
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "corpus")
        for key, rel in stored:
            src = os.path.join(args.work, run_dir(key), rel)
            dst = os.path.join(root, "runs", run_dir(key), rel)
            os.makedirs(dst)
            for f in ("dump.json", "construct.json", "stack.json"):
                shutil.copy(os.path.join(src, f), dst)
        with open(os.path.join(root, "twin_mapping.yaml"), "w") as f:
            f.write(TWIN_MAPPING)
        with open(os.path.join(root, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
        with tarfile.open(args.out, "w:xz", preset=9) as tar:
            tar.add(root, arcname="corpus", filter=lambda ti: setattr(ti, "mtime", 0) or ti)
    bugs = sum(1 for c in manifest.values() if c["bug"] != "none")
    print(f"{len(manifest)} cases ({bugs} with a bug), {os.path.getsize(args.out)} bytes in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
