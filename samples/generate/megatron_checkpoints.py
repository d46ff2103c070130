"""Writes small Megatron-LM checkpoints with real torch.save, in Megatron's folder layout, for
`graph-ascend ckpt_compare` (samples/ckpt/).

The model is samples/generate/megatron_model.py's GPT (unsplit, one process), trained a few real SGD
steps on CPU; its state dict is split by hand the way Megatron stores it: tensor-parallel shards
(column-parallel linear_qkv / linear_fc1 / word_embeddings / output_layer along dim 0, row-parallel
linear_proj / linear_fc2 along dim 1, the rest replicated), pipeline stages numbering their layers
locally, virtual pipeline chunks as model0, model1, ..., expert-parallel ranks holding their local
experts. Each model_optim_rng.pt holds what Megatron's save_checkpoint writes besides the weights:
args (an argparse.Namespace with a megatron-core enum), checkpoint_version, iteration, optimizer
state and rng_state (Python, numpy and torch generator states).

Run in a venv with torch and megatron-core (installed --no-deps, as msprobe's loader needs):
    python samples/generate/megatron_checkpoints.py samples/ckpt
    python samples/generate/megatron_checkpoints.py --bench bench/out/ckpt 1024 8 32000   (large, for bench/)
"""

import argparse
import io
import os
import random
import shutil
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import megatron_model as mm  # noqa: E402

try:
    from megatron.core.transformer.enums import AttnBackend

    ATTN_BACKEND = AttnBackend.auto
except ImportError:  # the enum is decoration; msprobe's loader needs megatron anyway
    ATTN_BACKEND = None

CONFIG = {"hidden": 16, "heads": 4, "kv_heads": 2, "ffn": 32, "vocab": 64, "layers": 4, "eps": 1e-6}
COLUMN = ("linear_qkv", "linear_fc1", "word_embeddings.weight", "output_layer.weight")
ROW = ("linear_fc2.weight", "linear_proj.weight")


def trained_state(steps, seed=1234, lr=0.05):
    """The unsplit GPT's state dict after `steps` SGD steps on fixed random tokens."""
    torch.manual_seed(seed)
    model = mm.GPTModel(CONFIG, mm.ParallelState())
    weights = mm.full_weights(CONFIG, seed)
    mm.load_shard(model, CONFIG, weights, mm.ParallelState())
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    ids = torch.randint(0, CONFIG["vocab"], (2, 8), generator=torch.Generator().manual_seed(7))
    for _ in range(steps):
        logits = model(ids[:, :-1], 7)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, CONFIG["vocab"]), ids[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return OrderedDict((k, v.detach().clone()) for k, v in model.state_dict().items())


def add_experts(state, experts, seed):
    """Replaces each layer's dense MLP by a router and `experts` copies of it plus noise (MoE)."""
    g = torch.Generator().manual_seed(seed)
    out = OrderedDict()
    for name, t in state.items():
        if ".mlp." not in name:
            out[name] = t
            continue
        layer, leaf = name.split(".mlp.")
        if leaf == "linear_fc1.weight":
            out[f"{layer}.mlp.router.weight"] = torch.randn(experts, CONFIG["hidden"], generator=g) * 0.02
        for e in range(experts):
            out[f"{layer}.mlp.experts.local_experts.{e}.{leaf}"] = t + torch.randn(t.shape, generator=g) * 0.01
    return out


def tp_shard(name, t, tp, rank):
    if any(c in name for c in COLUMN):
        return t.chunk(tp, dim=0)[rank].clone()
    if any(r in name for r in ROW):
        return t.chunk(tp, dim=1)[rank].clone()
    return t.clone()


def layer_of(name):
    parts = name.split(".")
    return int(parts[2]) if name.startswith("decoder.layers.") else None


def local_layer(name, index):
    parts = name.split(".")
    parts[2] = str(index)
    return ".".join(parts)


def split(state, tp, pp, vpp, ep, experts):
    """{(tp, pp, ep): {"model" or "model{v}": state dict}} in Megatron's layout."""
    layers = CONFIG["layers"]
    per_chunk = layers // (pp * vpp)
    ranks = {}
    for e in range(ep):
        for p in range(pp):
            for t in range(tp):
                chunks = []
                for v in range(vpp):
                    chunk = v * pp + p
                    sd = OrderedDict()
                    for name, value in state.items():
                        li = layer_of(name)
                        if li is not None:
                            if li // per_chunk != chunk:
                                continue
                            name = local_layer(name, li % per_chunk)
                        elif name.startswith("embedding.") and chunk != 0:
                            continue
                        elif not name.startswith("embedding.") and chunk != pp * vpp - 1:
                            continue
                        if ".local_experts." in name:
                            idx = int(name.split(".local_experts.")[1].split(".")[0])
                            per_rank = experts // ep
                            if idx // per_rank != e:
                                continue
                            name = name.replace(f".local_experts.{idx}.", f".local_experts.{idx % per_rank}.")
                        sd[name] = tp_shard(name, value, tp, t)
                        # Transformer Engine layers carry an _extra_state next to their weights.
                        if name.endswith("linear_qkv.weight"):
                            sd[name.replace(".weight", "._extra_state")] = io.BytesIO(b"te-fp8-meta")
                    chunks.append(sd)
                ranks[(t, p, e)] = chunks
    return ranks


def args_namespace(tp, pp, vpp, ep, experts, lr, seed):
    return argparse.Namespace(
        tensor_model_parallel_size=tp,
        pipeline_model_parallel_size=pp,
        virtual_pipeline_model_parallel_size=vpp if vpp > 1 else None,
        expert_model_parallel_size=ep,
        num_experts=experts or None,
        num_layers=CONFIG["layers"],
        hidden_size=CONFIG["hidden"],
        ffn_hidden_size=CONFIG["ffn"],
        num_attention_heads=CONFIG["heads"],
        padded_vocab_size=CONFIG["vocab"],
        lr=lr,
        seed=seed,
        bf16=False,
        params_dtype=torch.float32,
        attention_backend=ATTN_BACKEND,
        data_path=["/data/tokens_text_document"],
    )


def save(root, iteration, state, tp=1, pp=1, vpp=1, ep=1, experts=0, lr=0.05, seed=1234, dtype=None, legacy=False,
         tracker=True):
    """Saves `state` as a Megatron checkpoint under root/iter_XXXXXXX (or root/release)."""
    folder = "release" if iteration == "release" else f"iter_{iteration:07d}"
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    for (t, p, e), chunks in split(state, tp, pp, vpp, ep, experts).items():
        rank = f"mp_rank_{t:02d}" + (f"_{p:03d}" if pp > 1 else "") + (f"_{e:03d}" if ep > 1 else "")
        if dtype is not None:
            chunks = [OrderedDict((k, v.to(dtype) if torch.is_tensor(v) else v) for k, v in c.items()) for c in chunks]
        if legacy:
            chunks = [OrderedDict((to_legacy(k), v) for k, v in c.items()) for c in chunks]
        params = [v for c in chunks for v in c.values() if torch.is_tensor(v)]
        opt = torch.optim.Adam([torch.nn.Parameter(v.float().clone()) for v in params[:2]], lr=lr)
        opt.state[opt.param_groups[0]["params"][0]] = {"step": torch.tensor(3.0), "exp_avg": torch.zeros(2)}
        # Megatron's order: args, checkpoint_version, iteration, model (or model0, model1...), optimizer, ...
        ckpt = {"args": args_namespace(tp, pp, vpp, ep, experts, lr, seed), "checkpoint_version": 3.0,
                "iteration": 0 if iteration == "release" else iteration}
        if vpp > 1:
            for v, c in enumerate(chunks):
                ckpt[f"model{v}"] = c
        else:
            ckpt["model"] = chunks[0]
        ckpt["optimizer"] = {"optimizer": opt.state_dict(), "param_groups": opt.state_dict()["param_groups"]}
        ckpt["opt_param_scheduler"] = {"max_lr": lr, "num_steps": 8}
        ckpt["rng_state"] = [
            {
                "random_rng_state": random.getstate(),
                "np_rng_state": np.random.get_state(),
                "torch_rng_state": torch.get_rng_state(),
                "rng_tracker_states": {},
            }
        ]
        os.makedirs(os.path.join(root, folder, rank), exist_ok=True)
        torch.save(ckpt, os.path.join(root, folder, rank, "model_optim_rng.pt"))
    if tracker:
        with open(os.path.join(root, "latest_checkpointed_iteration.txt"), "w") as f:
            f.write(str(iteration))


def to_legacy(name):
    """Megatron-LM's legacy (pre-mcore) names, as msprobe's name_mapping.yaml maps them back."""
    for mcore, legacy in (
        ("embedding.", "language_model.embedding."),
        ("decoder.", "language_model.encoder."),
        ("self_attention.linear_qkv", "self_attention.query_key_value"),
        ("self_attention.linear_proj", "self_attention.dense"),
        ("pre_mlp_layernorm", "post_attention_norm"),
        ("input_layernorm", "input_norm"),
        ("mlp.linear_fc1", "mlp.dense_h_to_4h"),
        ("mlp.linear_fc2", "mlp.dense_4h_to_h"),
        ("final_layernorm", "final_norm"),
        ("output_layer", "language_model.output_layer"),
    ):
        if name.startswith(mcore) or f".{mcore}" in name:
            name = name.replace(mcore, legacy, 1) if name.startswith(mcore) else name.replace(f".{mcore}", f".{legacy}")
    return name


def rewrite_member(path, member_suffix, transform):
    """Rewrites one member of a torch.save zip (transform(bytes) -> bytes, or None to drop it)."""
    with zipfile.ZipFile(path) as z:
        items = [(i, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for info, data in items:
            if info.filename.endswith(member_suffix):
                data = transform(data)
                if data is None:
                    continue
            z.writestr(info, data)


def bench_pair(out, hidden, layers, vocab):
    """Two large TP 2 x PP 2 checkpoints (random weights, b = a + noise) for bench/ timings; not committed."""
    CONFIG.update(hidden=hidden, heads=16, kv_heads=8, ffn=4 * hidden, vocab=vocab, layers=layers)
    model = mm.GPTModel(CONFIG, mm.ParallelState())
    g = torch.Generator().manual_seed(5)
    a = OrderedDict((k, torch.randn(v.shape, generator=g) * 0.02) for k, v in model.state_dict().items())
    b = OrderedDict((k, v + torch.randn(v.shape, generator=g) * 1e-4) for k, v in a.items())
    save(f"{out}/a", 1, a, tp=2, pp=2)
    save(f"{out}/b", 2, b, tp=2, pp=2)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--bench":
        # --bench OUT HIDDEN LAYERS VOCAB
        out, hidden, layers, vocab = sys.argv[2], *map(int, sys.argv[3:6])
        return bench_pair(out, hidden, layers, vocab)
    out = sys.argv[1] if len(sys.argv) > 1 else "samples/ckpt"
    if os.path.isdir(out):
        shutil.rmtree(out)
    a, b = trained_state(2), trained_state(4)
    # TP 2 x PP 2: two trainings two steps apart; and b in a TP 1 x PP 1 layout (same weights as tp2pp2_b).
    save(f"{out}/tp2pp2_a", 2, a, tp=2, pp=2)
    save(f"{out}/tp2pp2_b", 4, b, tp=2, pp=2)
    save(f"{out}/tp1pp1_b", 4, b)
    # Virtual pipeline: PP 2 x VPP 2 (model0, model1 in each stage file); tracker-less iteration folders.
    save(f"{out}/vpp_a", 2, a, pp=2, vpp=2, tracker=False)
    save(f"{out}/vpp_b", 4, b, pp=2, vpp=2, tracker=False)
    # MoE with expert parallelism: TP 2 x EP 2, 4 experts, bfloat16 weights.
    moe_a, moe_b = add_experts(a, 4, 11), add_experts(b, 4, 11)
    save(f"{out}/ep_a", 2, moe_a, tp=2, ep=2, experts=4, dtype=torch.bfloat16)
    save(f"{out}/ep_b", 4, moe_b, tp=2, ep=2, experts=4, dtype=torch.bfloat16)
    # A release checkpoint (latest_checkpointed_iteration.txt = "release") with legacy names.
    save(f"{out}/release_b", "release", b, legacy=True)
    # Bad inputs.
    bad = f"{out}/bad"
    save(f"{bad}/truncated", 2, a)
    rewrite_member(f"{bad}/truncated/iter_0000002/mp_rank_00/model_optim_rng.pt", "/data/0", lambda d: d[: len(d) // 2])
    save(f"{bad}/missing_member", 2, a)
    rewrite_member(f"{bad}/missing_member/iter_0000002/mp_rank_00/model_optim_rng.pt", "/data/1", lambda d: None)
    save(f"{bad}/missing_rank", 2, a, tp=2)
    shutil.rmtree(f"{bad}/missing_rank/iter_0000002/mp_rank_01")
    os.makedirs(f"{bad}/not_zip/iter_0000002/mp_rank_00")
    with open(f"{bad}/not_zip/iter_0000002/mp_rank_00/model_optim_rng.pt", "wb") as f:
        f.write(b"this is not a torch checkpoint\n")
    with open(f"{bad}/not_zip/latest_checkpointed_iteration.txt", "w") as f:
        f.write("2")


if __name__ == "__main__":
    main()
