"""Writes two config_check packs with real msprobe 26.2.0 (ConfigChecker) around a tiny torch training
run, for `graph-ascend config_check` (samples/config_check/).

The two runs differ in exactly: one environment variable (HCCL_DETERMINISTIC true / false), the learning
rate in the launch script (1e-4 / 2e-4), the seed (1234 / 42: weights, data and so the statistics
differ) and one package version (peft 0.13.0 / 0.13.2, installed --no-deps on PYTHONPATH). Each run
is started with a clean environment (env -i) so that no variable of this machine lands in the pack.

    python3 samples/generate/config_check_packs.py [OUT_DIR] [--bad-only]   (needs bench/.venv-msprobe-26.2.0)
Then `bench/reference/config_check_reference.py --write` stores msprobe's own compare of the two.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.path.join(ROOT, "bench", ".venv-msprobe-26.2.0")

TRAIN_SH = """#!/bin/bash
# Launch script of the tiny run (msprobe parses it for the static hyperparameters).
export HCCL_DETERMINISTIC={det}
GPT_ARGS="
    --num-layers 2
    --hidden-size 8
    --lr {lr}
    --bf16
    --weight-decay 0.1
"
torchrun --nproc_per_node 1 train.py $GPT_ARGS --seed {seed} --micro-batch-size 2 --use-flash-attn
"""

TRAIN_PY = r"""
import sys
import torch
from msprobe.core.config_check import ConfigChecker

seed, lr, out, script = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
ConfigChecker.apply_patches("pytorch")
torch.manual_seed(seed)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
ConfigChecker(model=model, shell_path=[script], output_zip_path=out, fmk="pytorch")
opt = torch.optim.SGD(model.parameters(), lr=lr)
for step in range(2):
    x = torch.randn(2, 8)
    y = torch.randint(0, 2, (2,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""

RUNS = {
    "bench": {"det": "true", "lr": "1e-4", "seed": 1234, "peft": "0.13.0"},
    "cmp": {"det": "false", "lr": "2e-4", "seed": 42, "peft": "0.13.2"},
}


def write_bad_packs(out):
    """Bad inputs, from the bench pack: a zip that is no pack, a pack whose env is cut short, a non-zip."""
    bad = os.path.join(out, "bad")
    os.makedirs(bad, exist_ok=True)
    with zipfile.ZipFile(os.path.join(bad, "not_a_pack.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("README.txt", "a zip, but not a config_check pack\n")
    with zipfile.ZipFile(os.path.join(out, "bench.zip")) as src, \
            zipfile.ZipFile(os.path.join(bad, "truncated_env.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            data = src.read(info.filename)
            z.writestr(info, data[: len(data) // 2] if info.filename == "env" else data)
    with open(os.path.join(bad, "not_a_zip.zip"), "wb") as f:
        f.write(b"PK but not really a zip\n")


def main():
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "samples", "config_check"))
    os.makedirs(out, exist_ok=True)
    if "--bad-only" in sys.argv:
        write_bad_packs(out)
        return
    py = os.path.join(VENV, "bin", "python")
    for name, run in RUNS.items():
        with tempfile.TemporaryDirectory() as work:
            site = os.path.join(work, "site")
            subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--target", site, f"peft=={run['peft']}"],
                           check=True)
            script = os.path.join(work, "train.sh")
            with open(script, "w") as f:
                f.write(TRAIN_SH.format(**run))
            with open(os.path.join(work, "train.py"), "w") as f:
                f.write(TRAIN_PY)
            shutil.copy(script, os.path.join(out, f"{name}_train.sh"))
            pack = os.path.join(out, f"{name}.zip")
            if os.path.exists(pack):
                os.unlink(pack)
            env = {"PATH": os.path.join(VENV, "bin") + ":/usr/bin:/bin", "HOME": work, "PYTHONPATH": site,
                   "ASCEND_HOME_PATH": "/usr/local/Ascend", "HCCL_DETERMINISTIC": run["det"],
                   "CUDA_VISIBLE_DEVICES": ""}
            subprocess.run(["env", "-i", *[f"{k}={v}" for k, v in env.items()], py, "train.py", str(run["seed"]),
                            run["lr"], pack, script], cwd=work, check=True)
    write_bad_packs(out)


if __name__ == "__main__":
    main()
