"""The `msadapter` sample: one small model run by MSAdapter's mindtorch on MindSpore, and by PyTorch.

Usage:  python msadapter.py mindtorch DUMP_PATH   (a venv with mindspore 2.7.0, mindnlp 0.5.1's
                                                  mindtorch and mindstudio-probe 26.2.0)
        python msadapter.py pytorch DUMP_PATH     (the samples venv: torch 2.8.0, mindstudio-probe 26.2.0)

The same file is PyTorch code on both sides: under mindtorch `import torch` is mindtorch (its torch
proxy), and msprobe's MindSpore PrecisionDebugger dumps it in mindtorch mode (framework "mindtorch",
PyTorch API names, mindspore.Tensor leaves). Both sides load the same weights and data from numpy.
The mindtorch side computes the softmax's exp in float16 (the npu side of the case): exp overflows
to inf for scores above 11.09, inf / inf gives NaN, and NaN runs on into the loss and the backward.
msprobe writes DUMP_PATH/step0/rank0/.
"""

import json
import os
import sys
import tempfile

SIDE = sys.argv[1]
if SIDE == "mindtorch":
    import mindtorch_shims  # before `import torch`: it makes `torch` mindtorch

import numpy as np
import torch
from torch import nn

if SIDE == "mindtorch":
    from msprobe.mindspore import PrecisionDebugger

    mindtorch_shims.after_msprobe_import()
else:
    from msprobe.pytorch import PrecisionDebugger

SEED = 1234


class NaiveSoftmax(nn.Module):
    """exp(x) / sum(exp(x)) without the max subtraction, computed in `compute_dtype`."""

    def __init__(self, compute_dtype):
        super().__init__()
        self.compute_dtype = compute_dtype

    def forward(self, scores):
        e = torch.exp(scores.to(self.compute_dtype))
        return (e / e.sum(dim=-1, keepdim=True)).to(scores.dtype)


class Net(nn.Module):
    def __init__(self, compute_dtype):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.ReLU()
        self.norm = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 4)
        self.softmax = NaiveSoftmax(compute_dtype)
        self.temperature = 24.0  # sharpens the scores so that float16 exp() overflows

    def forward(self, x):
        return self.softmax(self.fc2(self.norm(self.act(self.fc1(x)))) * self.temperature)


def load_weights(net):
    rng = np.random.RandomState(SEED)
    with torch.no_grad():
        for _, p in sorted(net.named_parameters()):
            p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, size=tuple(p.shape)).astype(np.float32)))


def main():
    out = sys.argv[2]
    net = Net(torch.float16 if SIDE == "mindtorch" else torch.float32)
    load_weights(net)
    rng = np.random.RandomState(SEED + 1)
    x = torch.tensor(rng.standard_normal((4, 8)).astype(np.float32))
    target = torch.tensor(np.eye(4, dtype=np.float32)[rng.randint(0, 4, size=4)])

    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "dump_path": out, "rank": [], "step": [], "level": "mix",
                       "statistics": {"scope": [], "list": [], "data_mode": ["all"],
                                      "summary_mode": "statistics"}}, f)
        debugger = PrecisionDebugger(config_path=config)

        def loss_fn(x, target):
            # the probability of the target class, negated: not (probs - target) ** 2, because on the CPU
            # mindtorch's tensor - tensor passes no gradient back (its grads come out zero)
            return -(net(x) * target).sum(dim=-1).mean()

        debugger.start(net, rank_id=0)
        if SIDE == "mindtorch":
            # mindtorch's Tensor.backward() does nothing: gradients come from its value_and_grad
            loss = torch.autograd.value_and_grad(loss_fn, list(net.parameters()))(x, target)
        else:
            loss = loss_fn(x, target)
            loss.backward()
        debugger.stop()
        debugger.step()
    print(SIDE, "loss", float(loss.item()), "fc1 weight grad sum", float(net.fc1.weight.grad.sum().item()))


if __name__ == "__main__":
    main()
