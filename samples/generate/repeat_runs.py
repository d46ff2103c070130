"""Three runs of one job that differ only by thread timing: the `repeat_runs` sample (issue 33 point 4).

Usage:  python repeat_runs.py OUT_DIR [K]       (K runs, default 3, each in its own process)
        python repeat_runs.py OUT_DIR --run I   (one run)

Writes OUT_DIR/run0 … run{K-1}, each msprobe's step0/rank0/{dump.json, construct.json, stack.json} of
one training step of the same model, same seed, same data. The model's `pool` module sums 16 chunks of
its input on a thread pool and adds the partial sums in the order the threads finish (a threaded
reduction, as a hand-written kernel or a data loader's worker pool would); float32 addition is not
associative, so the runs differ there, by a few ulps, and everything after it inherits the difference.
Every op before `pool` is bit-identical across runs.
"""

import json
import os
import subprocess
import random
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import numpy as np
import torch
import torch.nn.functional as F
from msprobe.pytorch import PrecisionDebugger
from torch import nn

SEED = 1234
_jitter = random.Random(int.from_bytes(os.urandom(8), "little"))  # thread timing is not seeded, on purpose


class ThreadedSum(torch.autograd.Function):
    """Sum over the batch, accumulated in thread completion order (numpy, so msprobe sees the module only)."""

    @staticmethod
    def forward(ctx, x):
        chunks = np.array_split(x.detach().numpy(), 16, axis=0)

        def part(c):
            time.sleep(_jitter.random() * 0.002)
            return c.sum(axis=0, dtype=np.float32)

        total = np.zeros(x.shape[1:], dtype=np.float32)
        with ThreadPoolExecutor(max_workers=8) as pool:
            for f in as_completed([pool.submit(part, c) for c in chunks]):
                total += f.result()
        ctx.batch = x.shape[0]
        return torch.from_numpy(total)

    @staticmethod
    def backward(ctx, grad):
        return grad.unsqueeze(0).expand(ctx.batch, *grad.shape).contiguous()


class Pool(nn.Module):
    def forward(self, x):
        return ThreadedSum.apply(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.norm = nn.LayerNorm(64)
        self.pool = Pool()
        self.head = nn.Linear(64, 4)

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        return self.head(self.pool(h))


def run_once(out, run):
    """One run of the job under msprobe: one training step, dumped to OUT/run<run>/step0/rank0."""
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    model = Net()
    g = torch.Generator().manual_seed(SEED + 1)
    x = torch.randn(256, 32, generator=g) * 10
    target = torch.randn(4, generator=g)
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump(
                {
                    "task": "statistics",
                    "dump_path": os.path.join(out, f"run{run}"),
                    "rank": [],
                    "step": [],
                    "level": "mix",
                    "async_dump": False,
                    "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"},
                },
                f,
            )
        debugger = PrecisionDebugger(config_path=config)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        debugger.start(model, rank_id=0)
        loss = F.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        debugger.stop()
        debugger.step()


def main():
    out = os.path.abspath(sys.argv[1])
    if len(sys.argv) > 3 and sys.argv[2] == "--run":
        run_once(out, int(sys.argv[3]))
        return 0
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    for run in range(k):
        subprocess.run([sys.executable, os.path.abspath(__file__), out, "--run", str(run)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
