"""The MindSpore side of the corpus's cross-framework cases (bench/divergence/make_corpus.py).

Run inside a venv with MindSpore 2.10 (CPU) and mindstudio-probe 26.2.0:

    python corpus_mindspore.py MODEL BUG DUMP_PATH

MODEL is a twin of twin_spec.VARIANTS: the same tiny decoder as corpus_models.TwinNet (PyTorch), with
the same cell and parameter names and weights, written with mindspore.mint (the torch-like API). The
noise of such a case is MindSpore's own CPU kernels against PyTorch's; BUG is "none" or one of BUGS.
One step (forward, backward by value_and_grad) is dumped by msprobe in PyNative mode, level mix.
MindSpore 2.10's CPU softmax has no bfloat16 kernel ("Select CPU operator[Softmax] fail! Unsupported
data type!"), so the low-precision softmax bug computes it in float16.
"""

import json
import math
import os
import sys
import tempfile

import numpy as np
import mindspore as ms
from mindspore import mint, nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import twin_spec as spec  # noqa: E402

F = mint.nn.functional


class RMSNorm(nn.Cell):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = ms.Parameter(ms.Tensor(np.ones(dim, np.float32)), name="weight")
        self.eps = eps

    def construct(self, x):
        var = mint.mean(x * x, -1, keepdim=True)
        return x * mint.rsqrt(var + self.eps) * self.weight


class LayerNorm(nn.Cell):
    """Written out: MindSpore 2.10's CPU has no LayerNorm kernel for mint ("Create kernelmod for op
    LayerNormExt failed"); the PyTorch twin writes it out the same way."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = ms.Parameter(ms.Tensor(np.ones(dim, np.float32)), name="weight")
        self.bias = ms.Parameter(ms.Tensor(np.zeros(dim, np.float32)), name="bias")
        self.eps = eps

    def construct(self, x):
        mean = mint.mean(x, -1, keepdim=True)
        centred = x - mean
        var = mint.mean(centred * centred, -1, keepdim=True)
        return centred / mint.sqrt(var + self.eps) * self.weight + self.bias


class GELU(nn.Cell):
    """ops.gelu: mint's GELU has no CPU kernel ("The kernel GeluExt unregistered.")."""

    def construct(self, x):
        return ms.ops.gelu(x, approximate="none")


class SiLU(nn.Cell):
    def construct(self, x):
        return F.silu(x)


class Embedding(nn.Cell):
    """A lookup by indexing: MindSpore 2.10's CPU has no kernel for mint.nn.Embedding or mint.index_select
    ("RuntimeError: The kernel Embedding unregistered.", "... IndexSelect unregistered."); the PyTorch
    twin indexes the same way (Tensor.__getitem__ on both sides)."""

    def __init__(self, vocab, dim):
        super().__init__()
        self.weight = ms.Parameter(ms.Tensor(np.zeros((vocab, dim), np.float32)), name="weight")

    def construct(self, ids):
        return self.weight[ids]


def norm(kind, dim):
    return LayerNorm(dim) if kind == "layer" else RMSNorm(dim)


class Attention(nn.Cell):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = mint.nn.Linear(dim, dim, bias=False)
        self.k = mint.nn.Linear(dim, dim, bias=False)
        self.v = mint.nn.Linear(dim, dim, bias=False)
        self.proj = mint.nn.Linear(dim, dim, bias=False)
        self.mask_diagonal = 1
        self.softmax_dtype = None

    def split(self, t):
        b, s, d = t.shape
        return mint.transpose(t.reshape(b, s, self.heads, d // self.heads), 1, 2)

    def construct(self, x):
        b, s, d = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = mint.matmul(q, mint.transpose(k, -2, -1)) * (1.0 / math.sqrt(d // self.heads))
        scores = scores.masked_fill(ms.Tensor(spec.causal_mask(self.mask_diagonal)), -1e4)
        if self.softmax_dtype is not None:
            probs = F.softmax(scores.astype(self.softmax_dtype), dim=-1).astype(v.dtype)
        else:
            probs = F.softmax(scores, dim=-1)
        out = mint.transpose(mint.matmul(probs, v), 1, 2).reshape(b, s, d)
        return self.proj(out)


class Block(nn.Cell):
    def __init__(self, dim, heads, norm_kind, act):
        super().__init__()
        self.norm1 = norm(norm_kind, dim)
        self.attn = Attention(dim, heads)
        self.norm2 = norm(norm_kind, dim)
        self.fc1 = mint.nn.Linear(dim, 2 * dim)
        self.act = GELU() if act == "gelu" else SiLU()
        self.fc2 = mint.nn.Linear(2 * dim, dim)

    def construct(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(self.act(self.fc1(self.norm2(x))))


class TwinNet(nn.Cell):
    def __init__(self, variant):
        super().__init__()
        norm_kind, act = spec.VARIANTS[variant]
        self.embed = Embedding(spec.VOCAB, spec.DIM)
        self.blocks = nn.CellList([Block(spec.DIM, spec.HEADS, norm_kind, act) for _ in range(spec.LAYERS)])
        self.norm = norm(norm_kind, spec.DIM)
        self.head = mint.nn.Linear(spec.DIM, spec.VOCAB, bias=False)

    def construct(self, ids):
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


def load_weights(net):
    for p in net.get_parameters():
        p.set_data(ms.Tensor(spec.weight(p.name, tuple(p.shape))))


def _eps(net, strength):
    target = net.blocks[1].norm2
    new = {"strong": 1e-1, "weak": 1e-3}[strength]
    target.eps = new


def _mask(net, strength):
    net.blocks[1].attn.mask_diagonal = 2


def _weight(net, strength):
    w = net.blocks[1].fc1.weight
    w.set_data(w * {"strong": 1.5, "weak": 1.01}[strength])


def _transpose(net, strength):
    w = net.blocks[1].attn.proj.weight
    w.set_data(mint.transpose(w, 0, 1).copy())


def _softmax_lowp(net, strength):
    net.blocks[1].attn.softmax_dtype = ms.float16


BUGS = {"eps": _eps, "mask": _mask, "weight": _weight, "transpose": _transpose, "softmax_lowp": _softmax_lowp,
        "loss_scale": None}


def write_config(path, dump_path):
    config = {
        "task": "statistics",
        "dump_path": dump_path,
        "rank": [],
        "step": [],
        "level": "mix",
        "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"},
    }
    with open(path, "w") as f:
        json.dump(config, f)


class _CpuNorm:
    """mint as msprobe's statistics see it, with a norm that runs on the CPU. MindSpore 2.10's CPU has
    no kernel for mint.norm ("RuntimeError: The kernel LinalgVectorNorm unregistered." when msprobe
    writes the Norm of the first tensor); numpy computes the same float32 L2 norm."""

    def __getattr__(self, name):
        return getattr(mint, name)

    @staticmethod
    def norm(x):
        return np.linalg.norm(x.asnumpy().reshape(-1)).astype(np.float32)


def run(model_name, bug, dump_path):
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(1234)
    from msprobe.core.dump.data_dump.data_processor import mindspore_processor
    from msprobe.mindspore import PrecisionDebugger

    mindspore_processor.mint = _CpuNorm()

    bug, _, strength = bug.partition(":")
    strength = strength or "strong"
    net = TwinNet(model_name)
    load_weights(net)
    if BUGS.get(bug) is not None:
        BUGS[bug](net, strength)
    net.set_train(True)
    ids, target = (ms.Tensor(a) for a in spec.batch())
    params = net.trainable_params()

    def loss_fn(ids, target):
        logits = net(ids)
        # log_softmax + nll_loss: mint's has no CPU kernel ("The kernel LogSoftmaxExt unregistered."), and
        # msprobe's PyTorch hook of a fused cross_entropy records another backward tensor than MindSpore's.
        return ms.ops.nll_loss(ms.ops.log_softmax(logits.reshape(-1, spec.VOCAB), -1), target.reshape(-1))

    # loss_scale: the backward seed is 1024 (a scaled loss whose gradients are never unscaled)
    sens = 1024.0 if bug == "loss_scale" else 1.0
    grad_fn = ms.grad(lambda i, t: loss_fn(i, t) * sens if sens != 1.0 else loss_fn(i, t), None, params)
    optimizer = nn.SGD(params, learning_rate=0.05)
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "config.json")
        write_config(config, os.path.abspath(dump_path))
        debugger = PrecisionDebugger(config_path=config)
        debugger.start(net, rank_id=0)
        grads = grad_fn(ids, target)
        debugger.stop()
        optimizer(grads)
        debugger.step()


if __name__ == "__main__":
    run(*sys.argv[1:4])
