"""Runs one sample case on CPU under msprobe's PrecisionDebugger and writes its dump.

Usage:  python run_case.py CASE SIDE DUMP_PATH
        torchrun --nproc_per_node N run_case.py CASE SIDE DUMP_PATH   (dist_gloo: N=2; parallel_merge npu: N=4)

SIDE is "bench" (the baseline) or "npu" (the run with one known, localised precision
difference). Both sides build the same model from the same seed and feed the same data, so
their dumps agree bit for bit up to the culprit. msprobe writes DUMP_PATH/step{N}/rank{R}/.

Nothing here fakes the dump format: every file under samples/ is written by msprobe itself.
See samples/README.md for the cases and their culprits.
"""

import argparse
import json
import math
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F
from msprobe.pytorch import PrecisionDebugger
from torch import nn

SEED = 1234


# --------------------------------------------------------------------------- msprobe config


def write_config(path, dump_path, task, level, summary_mode="statistics"):
    """msprobe's config.json (see msprobe's config.json template): every step, every rank."""
    config = {
        "task": task,
        "dump_path": dump_path,
        "rank": [],
        "step": [],
        "level": level,
        "async_dump": False,
        "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": summary_mode},
        "tensor": {"scope": [], "list": [], "data_mode": ["all"]},
    }
    with open(path, "w") as f:
        json.dump(config, f, indent=2)


# --------------------------------------------------------------------------- models


def make_resnet18(side):
    """torchvision's resnet18 with random weights. npu: layer2.0.bn2 has eps 0.1 instead of 1e-5."""
    import torchvision

    model = torchvision.models.resnet18(weights=None, num_classes=10)
    if side == "npu":
        model.layer2[0].bn2.eps = 0.1
    return model


class SmallCNN(nn.Module):
    """A compact CNN for the L1 and structure cases. npu: block2's BatchNorm eps is 0.1."""

    def __init__(self, side):
        super().__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.block2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)
        if side == "npu":
            self.block2[1].eps = 0.1

    def forward(self, x):
        x = F.max_pool2d(self.block1(x), 2)
        x = self.block2(x)
        return self.fc(torch.flatten(self.pool(x), 1))


class SignalNet(nn.Module):
    """A 1-D signal classifier for op_generate's standards (conv1d, softmax, half precision).

    A Conv1d, ReLU, a softmax over time used as attention weights for pooling, a Linear head. npu:
    the softmax runs in float16 (its input cast to half, the weights cast back), the culprit."""

    def __init__(self, side):
        super().__init__()
        self.conv = nn.Conv1d(2, 4, 3, padding=1)
        self.fc = nn.Linear(4, 3)
        self.half_softmax = side == "npu"

    def forward(self, x):
        h = F.relu(self.conv(x))
        scores = h.mean(dim=1)
        if self.half_softmax:
            weights = F.softmax(scores.half(), dim=-1).float()
        else:
            weights = F.softmax(scores, dim=-1)
        return self.fc((h * weights.unsqueeze(1)).sum(dim=-1))


def make_llama(side, layers, hidden, bf16_mlp_layer=None, eps_layer=None):
    """A LLaMA-style causal LM (Hugging Face transformers) built from a config, random weights.

    npu differences (one per case): bf16_mlp_layer runs that decoder layer's MLP under bf16
    autocast; eps_layer gives that layer's post_attention_layernorm eps 1e-2 instead of 1e-6.
    """
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=4 * hidden,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 8,
        num_key_value_heads=hidden // 16,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    if side == "npu" and eps_layer is not None:
        model.model.layers[eps_layer].post_attention_layernorm.variance_epsilon = 1e-2
    if side == "npu" and bf16_mlp_layer is not None:
        mlp = model.model.layers[bf16_mlp_layer].mlp
        plain_forward = mlp.forward

        def bf16_forward(*args, **kwargs):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return plain_forward(*args, **kwargs)

        mlp.forward = bf16_forward
    return model


class NaiveSoftmax(nn.Module):
    """exp(x) / sum(exp(x)) without the max subtraction, computed in `compute_dtype`.

    In float32 the scores used here stay far below exp's overflow; in float16 exp(x) overflows
    to inf for x > 11.09 and inf / inf gives NaN: the npu side of the overflow case.
    """

    def __init__(self, compute_dtype):
        super().__init__()
        self.compute_dtype = compute_dtype

    def forward(self, scores):
        e = torch.exp(scores.to(self.compute_dtype))
        return (e / e.sum(dim=-1, keepdim=True)).to(scores.dtype)


class AttentionBlock(nn.Module):
    def __init__(self, dim, compute_dtype):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.softmax = NaiveSoftmax(compute_dtype)
        self.proj = nn.Linear(dim, dim)
        self.temperature = 24.0  # sharpens the scores so that fp16 exp() overflows

    def forward(self, x):
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (self.temperature / math.sqrt(q.shape[-1]))
        return x + self.proj(torch.matmul(self.softmax(scores), v))


class OverflowNet(nn.Module):
    """Two attention blocks; npu: blocks.1's softmax runs in float16 and overflows."""

    def __init__(self, side, dim=16):
        super().__init__()
        self.embed = nn.Linear(8, dim)
        fp16 = torch.float16 if side == "npu" else torch.float32
        self.blocks = nn.ModuleList([AttentionBlock(dim, torch.float32), AttentionBlock(dim, fp16)])
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


class DistMLP(nn.Module):
    """Replica trained data-parallel on 2 ranks. npu: rank 1's norm has eps 1e-2 (instead of 1e-5)."""

    def __init__(self, side, rank):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32, eps=1e-2 if (side == "npu" and rank == 1) else 1e-5)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.norm(self.fc1(x))))


class FirstStage(nn.Module):
    """Pipeline stage on rank 0 of p2p_micro: a linear layer and a ReLU."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return F.relu(self.fc(x))


class LastStage(nn.Module):
    """Pipeline stage on rank 1 of p2p_micro: LayerNorm and the head. npu: eps 1e-2 (not 1e-5)."""

    def __init__(self, side):
        super().__init__()
        self.norm = nn.LayerNorm(8, eps=1e-2 if side == "npu" else 1e-5)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.norm(x))


class GELUActivation(nn.Module):
    """The exact GELU under transformers' class name (the bench side of renamed_act)."""

    def forward(self, x):
        return F.gelu(x)


class LayerNorm(nn.Module):
    """A hand-written LayerNorm (npu side of handwritten_norm). Its bug is real and common: the
    variance is torch's default unbiased one (divides by n - 1), where F.layer_norm divides by n."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class Block(nn.Module):
    def __init__(self, dim, norm, act):
        super().__init__()
        self.norm = norm
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.act = act
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.norm(x))))


class BlockNet(nn.Module):
    """Two residual MLP blocks; `blocks` gives each block's (norm, act)."""

    def __init__(self, blocks, dim=16):
        super().__init__()
        self.embed = nn.Linear(8, dim)
        self.blocks = nn.ModuleList([Block(dim, norm, act) for norm, act in blocks])
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


def make_renamed_act(side, dim=16):
    """bench: transformers' GELUActivation (exact) in both blocks. npu: torch's nn.GELU, exact in
    blocks.0 (renamed but equal) and tanh-approximated in blocks.1 (renamed and different)."""
    if side == "npu":
        acts = [nn.GELU(), nn.GELU(approximate="tanh")]
    else:
        acts = [GELUActivation(), GELUActivation()]
    return BlockNet([(nn.LayerNorm(dim), act) for act in acts], dim)


def make_handwritten_norm(side, dim=16):
    """bench: nn.LayerNorm (F.layer_norm) in both blocks. npu: blocks.1 uses the hand-written one."""
    norm1 = LayerNorm(dim) if side == "npu" else nn.LayerNorm(dim)
    return BlockNet([(nn.LayerNorm(dim), nn.GELU()), (norm1, nn.GELU())], dim)


# --------------------------------------------------------------------------- training loops


def train(model, batches, loss_fn, debugger, lr=0.05, rank_id=None):
    """Real training steps under msprobe: start, forward, backward, optimizer step, stop, step."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    model.train()
    for inputs, target in batches:
        debugger.start(model, rank_id=rank_id)
        loss = loss_fn(model(inputs), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        debugger.stop()
        debugger.step()


def image_batches(steps, batch, size):
    g = torch.Generator().manual_seed(SEED + 1)
    return [
        (torch.randn(batch, 3, size, size, generator=g), torch.randint(0, 10, (batch,), generator=g))
        for _ in range(steps)
    ]


def run_cnn(side, debugger):
    torch.manual_seed(SEED)
    model = make_resnet18(side)
    train(model, image_batches(2, 2, 32), F.cross_entropy, debugger, rank_id=0)


def run_small_cnn(side, debugger):
    torch.manual_seed(SEED)
    model = SmallCNN(side)
    # Single-process runs without rank_id: msprobe names the folder proc<pid> (kept as written).
    train(model, image_batches(1, 2, 16), F.cross_entropy, debugger, rank_id=None)


def run_signal(side, debugger):
    torch.manual_seed(SEED)
    model = SignalNet(side)
    g = torch.Generator().manual_seed(SEED + 1)
    batches = [(torch.randn(2, 2, 8, generator=g), torch.randint(0, 3, (2,), generator=g))]
    train(model, batches, F.cross_entropy, debugger, rank_id=0)


def run_llama(side, debugger, layers, steps, hidden, batch, seq, dump_optimizer, **culprit):
    """AdamW training steps of the LLaMA-style model on random token ids (labels = inputs).

    dump_optimizer=False stops the debugger before optimizer.step(): the tensor case keeps
    forward and backward but not AdamW's ~10 element-wise ops per parameter (size budget)."""
    torch.manual_seed(SEED)
    model = make_llama(side, layers, hidden, **culprit)
    g = torch.Generator().manual_seed(SEED + 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for _ in range(steps):
        ids = torch.randint(0, 4 * hidden, (batch, seq), generator=g)
        debugger.start(model, rank_id=0)
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        if not dump_optimizer:
            debugger.stop()
        optimizer.step()
        optimizer.zero_grad()
        if dump_optimizer:
            debugger.stop()
        debugger.step()


def run_overflow(side, debugger):
    torch.manual_seed(SEED)
    model = OverflowNet(side)
    g = torch.Generator().manual_seed(SEED + 1)
    batches = [(torch.randn(2, 6, 8, generator=g) * 4, torch.randint(0, 4, (2,), generator=g))]
    train(model, batches, F.cross_entropy, debugger, rank_id=0)


def run_block_net(make):
    def run(side, debugger):
        torch.manual_seed(SEED)
        model = make(side)
        g = torch.Generator().manual_seed(SEED + 1)
        batches = [(torch.randn(2, 6, 8, generator=g), torch.randint(0, 4, (2,), generator=g))]
        train(model, batches, F.cross_entropy, debugger, rank_id=0)

    return run


def run_dist(side, debugger):
    """Data parallel on gloo: rank 0 loads each batch and sends rank 1 its shard (send/recv),
    both ranks run forward/backward, gradients are averaged with all_reduce, the loss is
    all_reduced for logging."""
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(SEED)
    model = DistMLP(side, rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    dp_group = dist.new_group(ranks=list(range(world)))  # passed explicitly, as Megatron does
    g = torch.Generator().manual_seed(SEED + 1)
    for _ in range(2):
        debugger.start(model)
        if rank == 0:
            data = torch.randn(world, 4, 16, generator=g)
            for peer in range(1, world):
                dist.send(tensor=data[peer].contiguous(), dst=peer)
            x = data[0]
        else:
            x = torch.zeros(4, 16)  # zeros, not empty: keeps the dump deterministic
            dist.recv(tensor=x, src=0)
        target = (x.sum(dim=1) > 0).long() + 2 * (x[:, 0] > 0).long()
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM, group=dp_group)
            p.grad.div_(world)
        optimizer.step()
        optimizer.zero_grad()
        logged = loss.detach().clone()
        dist.all_reduce(logged, group=dp_group)
        debugger.stop()
        debugger.step()
    dist.barrier()
    dist.destroy_process_group()


def run_p2p_micro(side, debugger):
    """A 2-stage pipeline on gloo with 2 micro-batches per step (gradient accumulation): rank 0
    sends its activations with dist.isend, rank 1 receives them with dist.irecv and sends their
    gradient back the same way; one optimizer step after both micro-batches. msprobe sees a
    forward and a backward per micro-batch, so the step has 2 micro steps (issue 9)."""
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(SEED)
    model = FirstStage() if rank == 0 else LastStage(side)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(SEED + 1)
    debugger.start(model)
    for _ in range(2):
        x = torch.randn(2, 8, generator=g)  # drawn on both ranks: the generators stay in step
        target = torch.tensor([1, 3])
        if rank == 0:
            out = model(x)
            dist.isend(out.detach(), dst=1).wait()
            grad = torch.zeros_like(out)  # zeros, not empty: keeps the dump deterministic
            dist.irecv(grad, src=1).wait()
            out.backward(grad)
        else:
            act = torch.zeros(2, 8)
            dist.irecv(act, src=0).wait()
            act.requires_grad_()
            F.cross_entropy(model(act), target).backward()
            dist.isend(act.grad, dst=0).wait()
    # The dump stops before the optimizer step: msprobe 1.2's graph builder knows no "optimizer" node
    # and refuses a construct.json naming one (its older layouts are fixtures made from this sample).
    debugger.stop()
    debugger.step()
    optimizer.step()
    optimizer.zero_grad()
    dist.barrier()
    dist.destroy_process_group()


def _llama_from_megatron(config, weights):
    """transformers' LlamaForCausalLM holding the same weights as the Megatron-style model."""
    from transformers import LlamaConfig, LlamaForCausalLM

    model = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=config["vocab"],
            hidden_size=config["hidden"],
            intermediate_size=config["ffn"],
            num_hidden_layers=config["layers"],
            num_attention_heads=config["heads"],
            num_key_value_heads=config["kv_heads"],
            max_position_embeddings=64,
            rms_norm_eps=config["eps"],
            tie_word_embeddings=False,
        )
    )
    names = {
        "model.embed_tokens.weight": "embedding.word_embeddings.weight",
        "model.norm.weight": "decoder.final_layernorm.weight",
        "lm_head.weight": "output_layer.weight",
    }
    for i in range(config["layers"]):
        hf, mg = f"model.layers.{i}.", f"decoder.layers.{i}."
        names.update(
            {
                hf + "self_attn.q_proj.weight": mg + "q",
                hf + "self_attn.k_proj.weight": mg + "k",
                hf + "self_attn.v_proj.weight": mg + "v",
                hf + "mlp.gate_proj.weight": mg + "gate",
                hf + "mlp.up_proj.weight": mg + "up",
                hf + "self_attn.o_proj.weight": mg + "self_attention.linear_proj.weight",
                hf + "mlp.down_proj.weight": mg + "mlp.linear_fc2.weight",
                hf + "input_layernorm.weight": mg + "input_layernorm.weight",
                hf + "post_attention_layernorm.weight": mg + "pre_mlp_layernorm.weight",
            }
        )
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(weights[names[name]])
    return model


def _gpt_loss(logits, ids):
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


LM_CONFIG = {"vocab": 128, "hidden": 32, "heads": 4, "kv_heads": 2, "ffn": 64, "layers": 2, "eps": 1e-6}


def run_layer_mapping(side, debugger):
    """One GPT, two code bases: npu = Megatron-style names (hand-written), bench = Hugging Face
    LlamaForCausalLM; same weights and data, same math up to fused vs split linears."""
    import megatron_model as mm

    torch.manual_seed(SEED)
    weights = mm.full_weights(LM_CONFIG, SEED)
    if side == "npu":
        model = mm.GPTModel(LM_CONFIG, mm.ParallelState())
        mm.load_shard(model, LM_CONFIG, weights, model.state)
    else:
        model = _llama_from_megatron(LM_CONFIG, weights)
    ids = torch.randint(0, LM_CONFIG["vocab"], (2, 8), generator=torch.Generator().manual_seed(SEED + 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    debugger.start(model, rank_id=0)
    if side == "npu":
        loss = _gpt_loss(model(ids, ids.shape[1]), ids)
    else:
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    debugger.stop()
    debugger.step()


PM_CONFIG = {"vocab": 64, "hidden": 32, "heads": 4, "kv_heads": 2, "ffn": 64, "layers": 2, "eps": 1e-6}


def run_parallel_merge(side, debugger):
    """npu: torchrun with 4 ranks, tp=2 x pp=2 (Megatron order tp-cp-ep-dp-pp: ranks 0,1 = stage 0,
    ranks 2,3 = stage 1), activations and their gradients passed with batch_isend_irecv;
    bench: the same model unsplit in one process."""
    import megatron_model as mm

    torch.manual_seed(SEED)
    weights = mm.full_weights(PM_CONFIG, SEED)
    ids = torch.randint(0, PM_CONFIG["vocab"], (2, 8), generator=torch.Generator().manual_seed(SEED + 1))
    if side == "bench":
        model = mm.GPTModel(PM_CONFIG, mm.ParallelState())
        mm.load_shard(model, PM_CONFIG, weights, model.state)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        debugger.start(model, rank_id=0)
        _gpt_loss(model(ids, ids.shape[1]), ids).backward()
        optimizer.step()
        optimizer.zero_grad()
        debugger.stop()
        debugger.step()
        return

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    tp, pp = 2, 2
    assert world == tp * pp, "parallel_merge npu side runs with torchrun --nproc_per_node 4"
    tp_groups = [dist.new_group(ranks=[s * tp + r for r in range(tp)]) for s in range(pp)]
    state = mm.ParallelState(
        tp_size=tp,
        pp_size=pp,
        tp_group=tp_groups[rank // tp],
        tp_rank=rank % tp,
        pp_rank=rank // tp,
        pp_prev=rank - tp,
        pp_next=rank + tp,
    )
    model = mm.GPTModel(PM_CONFIG, state)
    mm.load_shard(model, PM_CONFIG, weights, state)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    shape = (ids.shape[0], ids.shape[1], PM_CONFIG["hidden"])

    def exchange(op, tensor, peer):
        for request in dist.batch_isend_irecv([dist.P2POp(op, tensor, peer)]):
            request.wait()

    debugger.start(model)
    if state.pre_process:
        hidden = model(ids, ids.shape[1])
        exchange(dist.isend, hidden.detach().contiguous(), state.pp_next)
        grad = torch.zeros(shape)
        exchange(dist.irecv, grad, state.pp_next)
        torch.autograd.backward(hidden, grad)
    else:
        hidden = torch.zeros(shape)
        exchange(dist.irecv, hidden, state.pp_prev)
        hidden.requires_grad_()
        _gpt_loss(model(hidden, ids.shape[1]), ids).backward()
        exchange(dist.isend, hidden.grad.contiguous(), state.pp_prev)
    optimizer.step()
    optimizer.zero_grad()
    debugger.stop()
    debugger.step()
    dist.barrier()
    dist.destroy_process_group()


class HandLayerNorm(nn.LayerNorm):
    """nn.LayerNorm written out by hand (named "LayerNorm" in the dump, like the module it replaces).

    Its backward produces bias's gradient before weight's (the add runs last in forward), while
    F.layer_norm hands both out at once, weight first: msprobe dumps parameter gradients in
    arrival order, so the two runs list them in a different order."""

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


HandLayerNorm.__name__ = "LayerNorm"
HandLayerNorm.__qualname__ = "LayerNorm"


def run_bert_pgrad(side, debugger):
    """A tiny BERT (transformers BertModel from a config: `attention.output.*` modules) trained one
    SGD step on random tokens. npu: every LayerNorm is HandLayerNorm (same math; its parameter
    gradients arrive in the other order)."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(SEED)
    config = BertConfig(
        vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=16, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )
    model = BertModel(config, add_pooling_layer=False)
    if side == "npu":
        for parent in list(model.modules()):
            for name, child in list(parent.named_children()):
                if type(child) is nn.LayerNorm:
                    hand = HandLayerNorm(child.normalized_shape, eps=child.eps)
                    hand.load_state_dict(child.state_dict())
                    setattr(parent, name, hand)
    g = torch.Generator().manual_seed(SEED + 1)
    ids = torch.randint(0, 64, (2, 6), generator=g)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model.train()
    debugger.start(model, rank_id=0)
    out = model(input_ids=ids).last_hidden_state
    out.pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
    debugger.stop()
    debugger.step()


# --------------------------------------------------------------------------- cases

# case -> (task, level, summary_mode, runner)
CASES = {
    "cnn_statistics": ("statistics", "mix", "statistics", run_cnn),
    "cnn_md5": ("statistics", "mix", "md5", run_cnn),
    "gpt_tensor": (
        "tensor",
        "mix",
        "statistics",
        lambda s, d: run_llama(s, d, layers=2, steps=1, hidden=16, batch=1, seq=4, dump_optimizer=False, eps_layer=1),
    ),
    "gpt_statistics": (
        "statistics",
        "mix",
        "statistics",
        lambda s, d: run_llama(
            s, d, layers=3, steps=2, hidden=32, batch=2, seq=8, dump_optimizer=True, bf16_mlp_layer=1
        ),
    ),
    "dist_gloo": ("statistics", "mix", "statistics", run_dist),
    "p2p_micro": ("statistics", "mix", "statistics", run_p2p_micro),
    "l1_api": ("statistics", "L1", "statistics", run_small_cnn),
    "structure": ("structure", "mix", "statistics", run_small_cnn),
    "overflow_nan": ("statistics", "mix", "statistics", run_overflow),
    "layer_mapping": ("statistics", "mix", "statistics", run_layer_mapping),
    "parallel_merge": ("statistics", "mix", "statistics", run_parallel_merge),
    "bert_pgrad": ("statistics", "mix", "statistics", run_bert_pgrad),
    "renamed_act": ("statistics", "mix", "statistics", run_block_net(make_renamed_act)),
    "handwritten_norm": ("statistics", "mix", "statistics", run_block_net(make_handwritten_norm)),
    "signal_l1": ("statistics", "L1", "statistics", run_signal),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case", choices=sorted(CASES))
    parser.add_argument("side", choices=["bench", "npu"])
    parser.add_argument("dump_path")
    args = parser.parse_args()

    torch.set_num_threads(1)  # deterministic and light: bench and npu agree bit for bit up to the culprit
    task, level, summary_mode, runner = CASES[args.case]
    dump_path = os.path.abspath(args.dump_path)
    with tempfile.TemporaryDirectory() as tmp:
        config_path = os.path.join(tmp, "config.json")
        write_config(config_path, dump_path, task, level, summary_mode)
        debugger = PrecisionDebugger(config_path=config_path)
        runner(args.side, debugger)
    return 0


if __name__ == "__main__":
    sys.exit(main())
