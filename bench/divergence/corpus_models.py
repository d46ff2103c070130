"""Models, noise kernels and bugs of the divergence corpus (bench/divergence/make_corpus.py).

Run inside a venv with samples/versions.txt's torch 2.8.0 and mindstudio-probe 26.2.0:

    python corpus_models.py MODEL NOISE SIDE BUG DUMP_PATH

NOISE is how the npu side computes (applied to every linear/matmul/conv of the run, so every op after
the first one differs a little):
  none      fp32, the stock kernels (bit-identical runs)
  bf16lin   linear/matmul/conv take bf16-rounded operands and return fp32 (fp32 accumulation)
  order     fp32 with another summation order (the reduced dimension cut in 4 chunks, summed backwards)
  autocast  the whole forward under torch.autocast(cpu, bfloat16)
  bf16both  the model in bfloat16 on both sides; npu's linear/matmul accumulate in bf16 per chunk
SIDE bench runs without the noise (bf16both: with the stock bf16 kernels), npu with it. BUG is
"none" or one of BUGS; the reference run of a case is the npu run with BUG none.

Noise kernels call the raw ATen functions (torch._C), which msprobe does not hook: the dumped op is
the one the model called (Functional.linear, Torch.matmul), with its own inputs and outputs.
"""

import json
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import torch.nn.functional as F
from torch import nn

SEED = 1234
VF = torch._C._VariableFunctions
T = torch._C.TensorBase
RAW_LINEAR = torch._C._nn.linear
RAW_CONV2D = VF.conv2d
RAW_MATMUL = VF.matmul


def _cast(x, dtype):
    return T.to(x, dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x


def noisy_kernels(noise):
    """(linear, matmul, conv2d) replacements for the npu side's noise, or None."""
    if noise == "bf16lin":

        def r(x):
            return _cast(_cast(x, torch.bfloat16), torch.float32) if x is not None and x.dtype == torch.float32 else x

        def linear(x, w, b=None):
            return RAW_LINEAR(r(x), r(w), b)

        def matmul(a, b):
            return RAW_MATMUL(r(a), r(b))

        def conv2d(x, w, b=None, *args):
            return RAW_CONV2D(r(x), r(w), b, *args)

        return linear, matmul, conv2d
    if noise in ("order", "bf16both"):
        parts = 4

        def split(k):
            step = max(1, math.ceil(k / parts))
            return [(s, min(k, s + step)) for s in range(0, k, step)]

        def acc(terms, dtype):
            out = None
            for t in reversed(terms):  # another order than the stock kernel's
                t = _cast(t, dtype)
                out = t if out is None else VF.add(out, t)
            return out

        def linear(x, w, b=None):
            k = x.shape[-1]
            terms = [RAW_LINEAR(VF.narrow(x, -1, s, e - s), VF.narrow(w, -1, s, e - s)) for s, e in split(k)]
            y = acc(terms, x.dtype)
            return y if b is None else VF.add(y, b)

        def matmul(a, b):
            if a.dim() < 2 or b.dim() < 2:
                return RAW_MATMUL(a, b)
            k = a.shape[-1]
            terms = [RAW_MATMUL(VF.narrow(a, -1, s, e - s), VF.narrow(b, -2, s, e - s)) for s, e in split(k)]
            return acc(terms, a.dtype)

        def conv2d(x, w, b=None, *args):
            c = x.shape[1]
            if c < 2:
                return RAW_CONV2D(x, w, b, *args)
            terms = [
                RAW_CONV2D(VF.narrow(x, 1, s, e - s), VF.narrow(w, 1, s, e - s), None, *args) for s, e in split(c)
            ]
            y = acc(terms, x.dtype)
            return y if b is None else VF.add(y, VF.reshape(b, (1, -1, 1, 1)))

        return linear, matmul, conv2d
    return None


def _with_stock_backward(noisy_linear, noisy_matmul, noisy_conv2d):
    """The stock kernel's autograd graph with the noisy kernel's values: the stock output is
    overwritten in place (outside autograd), so a dumped op's backward has the stock grad_fn, the
    same gradients in the same order as the bench side's, computed from the noisy values."""

    def overwrite(stock, noisy_fn, *args):
        with torch.no_grad():
            T.copy_(stock, noisy_fn(*(T.detach(a) if isinstance(a, torch.Tensor) else a for a in args)))
        return stock

    def linear(x, w, b=None):
        return overwrite(RAW_LINEAR(x, w, b), noisy_linear, x, w, b)

    def matmul(a, b):
        return overwrite(RAW_MATMUL(a, b), noisy_matmul, a, b)

    def conv2d(x, w, b=None, *args):
        return overwrite(RAW_CONV2D(x, w, b, *args), noisy_conv2d, x, w, b, *args)

    return linear, matmul, conv2d


def install_noise(noise, side):
    """Replaces F.linear/torch.matmul/F.conv2d before msprobe wraps them (PrecisionDebugger)."""
    kernels = noisy_kernels(noise) if side == "npu" else None
    if kernels is None:
        return
    linear, matmul, conv2d = _with_stock_backward(*kernels)
    torch.nn.functional.linear = linear
    torch.matmul = matmul
    torch.nn.functional.conv2d = conv2d
    # nn.Conv2d calls F.conv2d through its module attribute: patched above.


# --------------------------------------------------------------------------- hand-written parts


class HandRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(var + self.eps) * self.weight


class HandLayerNorm(nn.Module):
    """LayerNorm written out; unbiased=True is the bug (torch's default variance)."""

    def __init__(self, dim, eps=1e-5, unbiased=False):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps
        self.unbiased = unbiased

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=self.unbiased)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class ScaledSiLU(torch.autograd.Function):
    """SiLU with a hand-written backward; grad_scale != 1 is the wrong-backward bug."""

    @staticmethod
    def forward(ctx, x, grad_scale):
        ctx.save_for_backward(x)
        ctx.grad_scale = grad_scale
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(x)
        return g * (s * (1 + x * (1 - s))) * ctx.grad_scale, None


class CustomAct(nn.Module):
    def __init__(self):
        super().__init__()
        self.grad_scale = 1.0

    def forward(self, x):
        return ScaledSiLU.apply(x, self.grad_scale)


class TanhGelu(nn.Module):
    """GELU, tanh approximation, written out (the hand-written activation bug)."""

    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x.pow(3))))


class ExactGelu(nn.Module):
    def forward(self, x):
        return F.gelu(x)


class Attention(nn.Module):
    def __init__(self, dim, heads, seq):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)
        self.mask_diagonal = 1  # 2: the causal mask off by one (a token sees the next one)
        self.rope_base = 10000.0
        self.softmax_dtype = None  # torch.bfloat16: softmax in low precision
        self.fp16_exp = False  # naive softmax in float16 (overflow)
        self.temperature = 1.0

    def rope(self, x):
        d = x.shape[-1]
        inv = 1.0 / (self.rope_base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
        pos = torch.arange(x.shape[-2], dtype=torch.float32)
        ang = torch.outer(pos, inv)
        cos, sin = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k = self.rope(q), self.rope(k)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (self.temperature / math.sqrt(d // self.heads))
        mask = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=self.mask_diagonal)
        if self.fp16_exp:
            e = torch.exp(scores.masked_fill(mask, -1e4).to(torch.float16))
            probs = (e / e.sum(-1, keepdim=True)).to(v.dtype)
        else:
            probs = F.softmax(scores.masked_fill(mask, -1e4), dim=-1, dtype=self.softmax_dtype).to(v.dtype)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, d)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, dim, heads, seq, act):
        super().__init__()
        self.norm1 = HandLayerNorm(dim)
        self.attn = Attention(dim, heads, seq)
        self.norm2 = HandLayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.act = act
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(self.act(self.fc1(self.norm2(x))))


class TinyGPT(nn.Module):
    """Hand-written GPT: hand-written LayerNorm, rotary attention with a causal mask, custom SiLU."""

    def __init__(self, vocab=32, dim=16, heads=2, seq=6, layers=2, act=CustomAct):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, seq, act()) for _ in range(layers)])
        self.norm = HandLayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


class MoE(nn.Module):
    """A mixture of 4 experts with a top-2 softmax router."""

    def __init__(self, dim=16, experts=4):
        super().__init__()
        self.router = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim)) for _ in range(experts)]
        )
        self.temperature = 1.0  # the router change: another temperature

    def forward(self, x):
        probs = F.softmax(self.router(x) / self.temperature, dim=-1)
        top, idx = torch.topk(probs, 2, dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            w = (top * (idx == e).to(top.dtype)).sum(-1, keepdim=True)
            out = out + w * expert(x)
        return out


class MoENet(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.moe1 = MoE(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.moe2 = MoE(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids):
        x = self.embed(ids)
        x = x + self.moe1(self.norm1(x))
        x = x + self.moe2(self.norm2(x))
        return self.head(x)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.block3 = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = F.max_pool2d(self.block1(x), 2)
        x = self.block3(self.block2(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


# --------------------------------------------------------------------------- the MindSpore twins


class TwinLayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        mean = torch.mean(x, -1, keepdim=True)
        centred = x - mean
        var = torch.mean(centred * centred, -1, keepdim=True)
        return centred / torch.sqrt(var + self.eps) * self.weight + self.bias


class TwinRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        var = torch.mean(x * x, -1, keepdim=True)
        return x * torch.rsqrt(var + self.eps) * self.weight


class TwinGELU(nn.Module):
    def forward(self, x):
        return F.gelu(x)


class TwinSiLU(nn.Module):
    def forward(self, x):
        return F.silu(x)


class TwinEmbedding(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(vocab, dim))

    def forward(self, ids):
        return self.weight[ids]


class TwinAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)

    def split(self, t):
        b, s, d = t.shape
        return torch.transpose(t.reshape(b, s, self.heads, d // self.heads), 1, 2)

    def forward(self, x):
        import twin_spec as spec

        b, s, d = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, torch.transpose(k, -2, -1)) * (1.0 / math.sqrt(d // self.heads))
        scores = scores.masked_fill(torch.from_numpy(spec.causal_mask(1)), -1e4)
        probs = F.softmax(scores, dim=-1)
        out = torch.transpose(torch.matmul(probs, v), 1, 2).reshape(b, s, d)
        return self.proj(out)


class TwinBlock(nn.Module):
    def __init__(self, dim, heads, norm_kind, act):
        super().__init__()
        norm = TwinLayerNorm if norm_kind == "layer" else TwinRMSNorm
        self.norm1 = norm(dim)
        self.attn = TwinAttention(dim, heads)
        self.norm2 = norm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.act = TwinGELU() if act == "gelu" else TwinSiLU()
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(self.act(self.fc1(self.norm2(x))))


class TwinNet(nn.Module):
    """The PyTorch twin of corpus_mindspore.TwinNet (twin_spec.py): the same names, weights and batch.
    Its classes are named as the MindSpore cells are (LayerNorm, GELU, Embedding...)."""

    def __init__(self, variant):
        import twin_spec as spec

        super().__init__()
        norm_kind, act = spec.VARIANTS[variant]
        self.embed = TwinEmbedding(spec.VOCAB, spec.DIM)
        self.blocks = nn.ModuleList([TwinBlock(spec.DIM, spec.HEADS, norm_kind, act) for _ in range(spec.LAYERS)])
        self.norm = (TwinLayerNorm if norm_kind == "layer" else TwinRMSNorm)(spec.DIM)
        self.head = nn.Linear(spec.DIM, spec.VOCAB, bias=False)
        with torch.no_grad():
            for name, p in self.named_parameters():
                p.copy_(torch.from_numpy(spec.weight(name, tuple(p.shape))))

    def forward(self, ids):
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


# The classes as the MindSpore cells are named (the dump names carry the class).
for _cls, _name in ((TwinLayerNorm, "LayerNorm"), (TwinRMSNorm, "RMSNorm"), (TwinGELU, "GELU"), (TwinSiLU, "SiLU"),
                    (TwinEmbedding, "Embedding"), (TwinAttention, "Attention"), (TwinBlock, "Block"),
                    (TwinNet, "TwinNet")):
    _cls.__name__ = _cls.__qualname__ = _name


# --------------------------------------------------------------------------- models from configs


def hf_llama(kind):
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    cfg = dict(
        vocab_size=32,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32,
        tie_word_embeddings=False,
        attn_implementation="eager",
    )
    if kind == "qwen2":
        return Qwen2ForCausalLM(Qwen2Config(**cfg))
    return LlamaForCausalLM(LlamaConfig(**cfg))


def hf_bert():
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=3,
        attn_implementation="eager",
    )
    return BertForSequenceClassification(cfg)


def hf_vit():
    from transformers import ViTConfig, ViTForImageClassification

    cfg = ViTConfig(
        image_size=8,
        patch_size=4,
        num_channels=3,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=3,
        attn_implementation="eager",
    )
    return ViTForImageClassification(cfg)


MODELS = ["llama", "qwen2", "bert", "vit", "moe", "cnn", "gpt"]


def build(model_name):
    torch.manual_seed(SEED)
    if model_name in ("llama", "qwen2"):
        return hf_llama(model_name)
    if model_name == "bert":
        return hf_bert()
    if model_name == "vit":
        return hf_vit()
    if model_name == "moe":
        return MoENet()
    if model_name == "cnn":
        return SmallCNN()
    if model_name == "gpt":
        return TinyGPT()
    if model_name == "gpt_gelu":
        return TinyGPT(act=ExactGelu)
    if model_name.startswith("twin_"):
        return TwinNet(model_name)
    raise ValueError(model_name)


def batches(model_name, steps):
    if model_name.startswith("twin_"):
        import twin_spec as spec

        ids, target = spec.batch()
        return [(torch.from_numpy(ids), torch.from_numpy(target))] * steps
    g = torch.Generator().manual_seed(SEED + 1)
    out = []
    for _ in range(steps):
        if model_name in ("vit", "cnn"):
            size = 8
            out.append((torch.randn(2, 3, size, size, generator=g), torch.randint(0, 3, (2,), generator=g)))
        elif model_name == "bert":
            out.append((torch.randint(0, 32, (2, 6), generator=g), torch.randint(0, 3, (2,), generator=g)))
        else:
            ids = torch.randint(0, 32, (1, 6), generator=g)
            out.append((ids, ids))
    return out


def loss_of(model_name, model, inputs, target):
    if model_name in ("llama", "qwen2"):
        logits = model(input_ids=inputs).logits
    elif model_name == "bert":
        logits = model(input_ids=inputs).logits
    elif model_name == "vit":
        logits = model(pixel_values=inputs).logits
    else:
        logits = model(inputs)
    if model_name.startswith("twin_"):  # as corpus_mindspore.py computes it
        return F.nll_loss(F.log_softmax(logits.reshape(-1, logits.shape[-1]), -1), target.reshape(-1))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), target.reshape(-1))


# --------------------------------------------------------------------------- bugs

# bug -> (models it applies to, what it does). apply(model_name, model, step) changes the npu model
# before step `step` runs (step-1-only bugs act at step 1 and are undone at step 2).


def _layer_norm_modules(model):
    return [m for m in model.modules() if isinstance(m, (nn.LayerNorm, HandLayerNorm, nn.BatchNorm2d))] + [
        m for m in model.modules() if type(m).__name__.endswith("RMSNorm")
    ]


def bug_eps(model_name, model, strength):
    norms = _layer_norm_modules(model)
    target = norms[len(norms) // 2]
    new = {"strong": 1e-1, "weak": 1e-3}[strength]
    if hasattr(target, "variance_epsilon"):
        target.variance_epsilon = new
    else:
        target.eps = new


def _square_linears(model):
    return [
        (n, m)
        for n, m in model.named_modules()
        if isinstance(m, nn.Linear) and m.weight.shape[0] == m.weight.shape[1] and "head" not in n
    ]


def bug_transpose(model_name, model, strength):
    name, lin = _square_linears(model)[len(_square_linears(model)) // 2]
    with torch.no_grad():
        lin.weight.copy_(lin.weight.t().clone())


def bug_weight(model_name, model, strength):
    """A wrongly loaded weight: scaled by 1.5 (strong) or 1.01 (weak)."""
    lins = [m for n, m in model.named_modules() if isinstance(m, (nn.Linear, nn.Conv2d)) and "head" not in n]
    lin = lins[len(lins) // 2]
    with torch.no_grad():
        lin.weight.mul_({"strong": 1.5, "weak": 1.01}[strength])


def bug_mask(model_name, model, strength):
    model.blocks[1].attn.mask_diagonal = 2


def bug_rope(model_name, model, strength):
    if model_name == "gpt":
        model.blocks[1].attn.rope_base = {"strong": 100.0, "weak": 9000.0}[strength]
    else:  # transformers: the rotary embedding's inverse frequencies (computed once, a buffer)
        rot = model.model.rotary_emb
        base = {"strong": 100.0, "weak": 9000.0}[strength]
        d = rot.inv_freq.shape[0] * 2
        rot.inv_freq.copy_(1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)))


def bug_softmax_lowp(model_name, model, strength):
    model.blocks[1].attn.softmax_dtype = torch.bfloat16


def bug_fp16_overflow(model_name, model, strength):
    attn = model.blocks[1].attn
    attn.fp16_exp = True
    attn.temperature = 40.0


def bug_custom_backward(model_name, model, strength):
    model.blocks[1].act.grad_scale = {"strong": 2.0, "weak": 1.05}[strength]


def bug_dropout(model_name, model, strength):
    p = {"strong": 0.3, "weak": 0.05}[strength]
    drops = [m for m in model.modules() if isinstance(m, nn.Dropout)]
    drops[len(drops) // 2].p = p


def bug_router(model_name, model, strength):
    model.moe2.temperature = {"strong": 2.0, "weak": 1.05}[strength]


def bug_hand_norm(model_name, model, strength):
    model.blocks[1].norm2.unbiased = True


def bug_hand_act(model_name, model, strength):
    model.blocks[1].act = TanhGelu()


BUGS = {
    "eps": bug_eps,
    "transpose": bug_transpose,
    "weight": bug_weight,
    "mask": bug_mask,
    "rope": bug_rope,
    "softmax_lowp": bug_softmax_lowp,
    "fp16_overflow": bug_fp16_overflow,
    "custom_backward": bug_custom_backward,
    "dropout": bug_dropout,
    "router": bug_router,
    "hand_norm": bug_hand_norm,
    "hand_act": bug_hand_act,
    "loss_scale": None,  # the backward seed: loss.backward(gradient=2^k) without unscaling
    "step1_eps": None,  # bug_eps at step 1 only
}


# --------------------------------------------------------------------------- run


def write_config(path, dump_path):
    config = {
        "task": "statistics",
        "dump_path": dump_path,
        "rank": [],
        "step": [],
        "level": "mix",
        "async_dump": False,
        "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"},
    }
    with open(path, "w") as f:
        json.dump(config, f)


def run(model_name, noise, side, bug, dump_path):
    torch.set_num_threads(1)
    install_noise(noise, side)
    from msprobe.pytorch import PrecisionDebugger

    bug, _, strength = bug.partition(":")
    strength = strength or "strong"
    model = build(model_name)
    if noise == "bf16both":
        model = model.to(torch.bfloat16)
    steps = 2 if bug in ("step1_eps", "none_s2") else 1
    data = batches(model_name, steps)
    if side == "npu" and bug not in ("none", "none_s2", "loss_scale", "step1_eps"):
        BUGS[bug](model_name, model, strength)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model.train()
    autocast = noise == "autocast" and side == "npu"
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "config.json")
        write_config(config, os.path.abspath(dump_path))
        debugger = PrecisionDebugger(config_path=config)
        for step, (inputs, target) in enumerate(data):
            if side == "npu" and bug == "step1_eps" and step == 1:
                bug_eps(model_name, model, strength)
            if noise == "bf16both" and inputs.is_floating_point():
                inputs = inputs.to(torch.bfloat16)
            debugger.start(model, rank_id=0)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                loss = loss_of(model_name, model, inputs, target)
            if side == "npu" and bug == "loss_scale":
                loss.backward(gradient=torch.tensor({"strong": 1024.0, "weak": 1.02}[strength]))
            else:
                loss.backward()
            debugger.stop()
            optimizer.step()
            optimizer.zero_grad()
            debugger.step()


if __name__ == "__main__":
    run(*sys.argv[1:6])
