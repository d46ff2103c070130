"""A small Megatron-style GPT written by hand, with Megatron's module names and tensor/pipeline
parallelism done by hand on torch.distributed (gloo on CPU).

Names follow Megatron-LM's GPTModel: embedding.word_embeddings, decoder.layers.N.{input_layernorm,
self_attention.{linear_qkv, core_attention, linear_proj}, pre_mlp_layernorm, mlp.{linear_fc1,
linear_fc2}}, decoder.final_layernorm, output_layer. The math is LLaMA's (RMSNorm, rotary, GQA,
SwiGLU), so weights copied from a transformers LlamaForCausalLM give the same function
(samples/layer_mapping). Used by run_case.py for the layer_mapping and parallel_merge cases.
"""

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn


class ParallelState:
    """This rank's tensor-parallel group and pipeline stage (tp = pp = 1: one process)."""

    def __init__(self, tp_size=1, pp_size=1, tp_group=None, tp_rank=0, pp_rank=0, pp_prev=None, pp_next=None):
        self.tp_size, self.pp_size = tp_size, pp_size
        self.tp_group, self.tp_rank, self.pp_rank = tp_group, tp_rank, pp_rank
        self.pp_prev, self.pp_next = pp_prev, pp_next

    @property
    def pre_process(self):
        return self.pp_rank == 0

    @property
    def post_process(self):
        return self.pp_rank == self.pp_size - 1


class _CopyToTensorParallel(torch.autograd.Function):
    """Identity forward; all_reduce of the input gradient over the TP group (Megatron's
    copy_to_tensor_model_parallel_region)."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


class _ReduceFromTensorParallel(torch.autograd.Function):
    """all_reduce forward over the TP group; identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.clone()
        dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ColumnParallelLinear(nn.Module):
    """Output features split over the TP ranks (weight [out / tp, in])."""

    def __init__(self, in_features, out_features, state):
        super().__init__()
        self.state = state
        self.weight = nn.Parameter(torch.empty(out_features // state.tp_size, in_features))

    def forward(self, x):
        if self.state.tp_size > 1:
            x = _CopyToTensorParallel.apply(x, self.state.tp_group)
        return F.linear(x, self.weight)


class RowParallelLinear(nn.Module):
    """Input features split over the TP ranks (weight [out, in / tp]); the partial outputs are summed."""

    def __init__(self, in_features, out_features, state):
        super().__init__()
        self.state = state
        self.weight = nn.Parameter(torch.empty(out_features, in_features // state.tp_size))

    def forward(self, x):
        y = F.linear(x, self.weight)
        if self.state.tp_size > 1:
            y = _ReduceFromTensorParallel.apply(y, self.state.tp_group)
        return y


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(dtype)


class RotaryEmbedding(nn.Module):
    def __init__(self, head_dim, theta=10000.0):
        super().__init__()
        inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, seq_len):
        positions = torch.arange(seq_len).float()
        freqs = torch.outer(positions, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class DotProductAttention(nn.Module):
    """Causal attention over this rank's heads; k/v heads repeated for grouped-query attention."""

    def __init__(self, heads, kv_heads):
        super().__init__()
        self.groups = heads // kv_heads

    def forward(self, q, k, v):
        k = k.repeat_interleave(self.groups, dim=1)
        v = v.repeat_interleave(self.groups, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class SelfAttention(nn.Module):
    def __init__(self, config, state):
        super().__init__()
        hidden, self.head_dim = config["hidden"], config["hidden"] // config["heads"]
        self.heads = config["heads"] // state.tp_size
        self.kv_heads = config["kv_heads"] // state.tp_size
        qkv = (config["heads"] + 2 * config["kv_heads"]) * self.head_dim
        self.linear_qkv = ColumnParallelLinear(hidden, qkv, state)
        self.core_attention = DotProductAttention(self.heads, self.kv_heads)
        self.linear_proj = RowParallelLinear(hidden, hidden, state)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        qkv = self.linear_qkv(x)
        q, k, v = qkv.split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim], dim=-1
        )
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        out = self.core_attention(q, k, v).transpose(1, 2).reshape(b, s, self.heads * self.head_dim)
        return self.linear_proj(out)


class MLP(nn.Module):
    """SwiGLU: linear_fc1 holds [gate; up] for this rank's share of the FFN width."""

    def __init__(self, config, state):
        super().__init__()
        self.linear_fc1 = ColumnParallelLinear(config["hidden"], 2 * config["ffn"], state)
        self.linear_fc2 = RowParallelLinear(config["ffn"], config["hidden"], state)

    def forward(self, x):
        gate, up = self.linear_fc1(x).chunk(2, dim=-1)
        return self.linear_fc2(F.silu(gate) * up)


class TransformerLayer(nn.Module):
    def __init__(self, config, state):
        super().__init__()
        self.input_layernorm = RMSNorm(config["hidden"], config["eps"])
        self.self_attention = SelfAttention(config, state)
        self.pre_mlp_layernorm = RMSNorm(config["hidden"], config["eps"])
        self.mlp = MLP(config, state)

    def forward(self, x, cos, sin):
        x = x + self.self_attention(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.pre_mlp_layernorm(x))


class TransformerBlock(nn.Module):
    def __init__(self, config, state, num_layers):
        super().__init__()
        self.layers = nn.ModuleList(TransformerLayer(config, state) for _ in range(num_layers))
        if state.post_process:
            self.final_layernorm = RMSNorm(config["hidden"], config["eps"])

    def forward(self, x, cos, sin):
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.final_layernorm(x) if hasattr(self, "final_layernorm") else x


class LanguageModelEmbedding(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config["vocab"], config["hidden"])

    def forward(self, ids):
        return self.word_embeddings(ids)


class GPTModel(nn.Module):
    """One pipeline stage of the GPT (all of it when pp = 1). Layers are numbered locally per stage,
    as Megatron's module lists are."""

    def __init__(self, config, state):
        super().__init__()
        self.state = state
        layers = config["layers"] // state.pp_size
        if state.pre_process:
            self.embedding = LanguageModelEmbedding(config)
        self.rotary_pos_emb = RotaryEmbedding(config["hidden"] // config["heads"])
        self.decoder = TransformerBlock(config, state, layers)
        if state.post_process:
            self.output_layer = ColumnParallelLinear(config["hidden"], config["vocab"], ParallelState())

    def forward(self, ids_or_hidden, seq_len):
        x = self.embedding(ids_or_hidden) if self.state.pre_process else ids_or_hidden
        cos, sin = self.rotary_pos_emb(seq_len)
        x = self.decoder(x, cos, sin)
        return self.output_layer(x) if self.state.post_process else x


def full_weights(config, seed):
    """Unsplit weights of the whole model, by Megatron name, from a seeded LLaMA-style init."""
    g = torch.Generator().manual_seed(seed)
    hidden, ffn, vocab = config["hidden"], config["ffn"], config["vocab"]
    head_dim = hidden // config["heads"]
    kv = config["kv_heads"] * head_dim

    def normal(*shape):
        return torch.randn(*shape, generator=g) * 0.02

    weights = {
        "embedding.word_embeddings.weight": normal(vocab, hidden),
        "decoder.final_layernorm.weight": torch.ones(hidden),
        "output_layer.weight": normal(vocab, hidden),
    }
    for i in range(config["layers"]):
        p = f"decoder.layers.{i}."
        weights[p + "q"], weights[p + "k"], weights[p + "v"] = (
            normal(hidden, hidden),
            normal(kv, hidden),
            normal(kv, hidden),
        )
        weights[p + "gate"], weights[p + "up"] = normal(ffn, hidden), normal(ffn, hidden)
        weights[p + "self_attention.linear_proj.weight"] = normal(hidden, hidden)
        weights[p + "mlp.linear_fc2.weight"] = normal(hidden, ffn)
        weights[p + "input_layernorm.weight"] = torch.ones(hidden)
        weights[p + "pre_mlp_layernorm.weight"] = torch.ones(hidden)
    return weights


def load_shard(model, config, weights, state):
    """Copies this rank's shard of the full weights into a (TP/PP-split) GPTModel."""
    tp, r = state.tp_size, state.tp_rank
    layers = config["layers"] // state.pp_size
    first = state.pp_rank * layers

    def part(t, dim):
        return t.chunk(tp, dim=dim)[r]

    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.startswith("decoder.layers."):
                local, rest = name[len("decoder.layers.") :].split(".", 1)
                p = f"decoder.layers.{first + int(local)}."
                if rest == "self_attention.linear_qkv.weight":
                    value = torch.cat([part(weights[p + "q"], 0), part(weights[p + "k"], 0), part(weights[p + "v"], 0)])
                elif rest == "mlp.linear_fc1.weight":
                    value = torch.cat([part(weights[p + "gate"], 0), part(weights[p + "up"], 0)])
                elif rest in ("self_attention.linear_proj.weight", "mlp.linear_fc2.weight"):
                    value = part(weights[p + rest], 1)
                else:
                    value = weights[p + rest]
            else:
                value = weights[name]
            param.copy_(value)
