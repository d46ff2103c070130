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
    python samples/generate/megatron_checkpoints.py --bench bench/out/ckpt 1024 8 32000
        [--tp 2 --pp 2 --ep 1 --experts 0 --dtype float32|bfloat16]      (large, for bench/; bench/ckpt/run.py)
"""

import argparse
import io
import os
import random
import shutil
import sys
import zipfile
import zlib
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


def chunk_starts(pp, vpp, stages):
    """First global layer of each model chunk (chunk v * pp + p), and the end: even unless `stages`
    gives each chunk's layer count (Megatron's uneven pipelines, decoder_first/last_pipeline_num_layers)."""
    counts = stages or [CONFIG["layers"] // (pp * vpp)] * (pp * vpp)
    assert len(counts) == pp * vpp and sum(counts) == CONFIG["layers"], counts
    starts = [0]
    for c in counts:
        starts.append(starts[-1] + c)
    return starts


def split(state, tp, pp, vpp, ep, experts, stages=None, only=None):
    """{(tp, pp, ep): {"model" or "model{v}": state dict}} in Megatron's layout (only the ranks
    `only` accepts, when given)."""
    starts = chunk_starts(pp, vpp, stages)
    ranks = {}
    for e in range(ep):
        for p in range(pp):
            for t in range(tp):
                if only and not only(t, p, e):
                    continue
                chunks = []
                for v in range(vpp):
                    chunk = v * pp + p
                    sd = OrderedDict()
                    for name, value in state.items():
                        li = layer_of(name)
                        if li is not None:
                            if not starts[chunk] <= li < starts[chunk + 1]:
                                continue
                            name = local_layer(name, li - starts[chunk])
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


def args_namespace(tp, pp, vpp, ep, experts, lr, seed, stages=None, dtype=None):
    return argparse.Namespace(
        tensor_model_parallel_size=tp,
        pipeline_model_parallel_size=pp,
        virtual_pipeline_model_parallel_size=vpp if vpp > 1 else None,
        expert_model_parallel_size=ep,
        num_experts=experts or None,
        num_layers=CONFIG["layers"],
        **({"decoder_first_pipeline_num_layers": stages[0], "decoder_last_pipeline_num_layers": stages[-1]}
           if stages else {}),
        hidden_size=CONFIG["hidden"],
        ffn_hidden_size=CONFIG["ffn"],
        num_attention_heads=CONFIG["heads"],
        padded_vocab_size=CONFIG["vocab"],
        lr=lr,
        seed=seed,
        bf16=dtype == torch.bfloat16,
        params_dtype=dtype or torch.float32,
        attention_backend=ATTN_BACKEND,
        data_path=["/data/tokens_text_document"],
    )


def save(root, iteration, state, tp=1, pp=1, vpp=1, ep=1, experts=0, lr=0.05, seed=1234, dtype=None, legacy=False,
         tracker=True, stages=None, args_experts=None, only=None, args_dtype=None):
    """Saves `state` as a Megatron checkpoint under root/iter_XXXXXXX (or root/release): every rank,
    or the ranks `only(t, p, e)` accepts. `args_experts` overrides num_experts in the args,
    `args_dtype` sets bf16 / params_dtype in them."""
    folder = "release" if iteration == "release" else f"iter_{iteration:07d}"
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    args = args_namespace(tp, pp, vpp, ep, experts if args_experts is None else args_experts, lr, seed, stages,
                          args_dtype)
    for (t, p, e), chunks in split(state, tp, pp, vpp, ep, experts, stages, only).items():
        rank = f"mp_rank_{t:02d}" + (f"_{p:03d}" if pp > 1 else "") + (f"_{e:03d}" if ep > 1 else "")
        if dtype is not None:
            chunks = [OrderedDict((k, v.to(dtype) if torch.is_tensor(v) else v) for k, v in c.items()) for c in chunks]
        if legacy:
            chunks = [OrderedDict((to_legacy(k), v) for k, v in c.items()) for c in chunks]
        params = [v for c in chunks for v in c.values() if torch.is_tensor(v)]
        opt = torch.optim.Adam([torch.nn.Parameter(v.float().clone()) for v in params[:2]], lr=lr)
        opt.state[opt.param_groups[0]["params"][0]] = {"step": torch.tensor(3.0), "exp_avg": torch.zeros(2)}
        # Megatron's order: args, checkpoint_version, iteration, model (or model0, model1...), optimizer, ...
        ckpt = {"args": args, "checkpoint_version": 3.0,
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


def bench_shapes(experts):
    """Parameter name -> shape of the GPT of CONFIG (on the meta device: nothing allocated), with each
    layer's MLP as a router and `experts` experts when experts > 0."""
    with torch.device("meta"):
        model = mm.GPTModel(CONFIG, mm.ParallelState())
    shapes = OrderedDict()
    for name, t in model.state_dict().items():
        if experts and ".mlp." in name:
            layer, leaf = name.split(".mlp.")
            if leaf == "linear_fc1.weight":
                shapes[f"{layer}.mlp.router.weight"] = (experts, CONFIG["hidden"])
            for e in range(experts):
                shapes[f"{layer}.mlp.experts.local_experts.{e}.{leaf}"] = tuple(t.shape)
        else:
            shapes[name] = tuple(t.shape)
    return shapes


def bench_tensor(name, shape, side, dtype):
    """One parameter of the large pair: a ~ N(0, 0.02), b = a + N(0, 1e-4), seeded by the name so that
    each stage is made on its own (the whole model is never in memory)."""
    seed = zlib.crc32(name.encode())
    a = torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * 0.02
    if side == "b":
        a += torch.randn(shape, generator=torch.Generator().manual_seed(seed + 1)) * 1e-4
    return a.to(dtype)


def bench_pair(out, hidden, layers, vocab, tp=2, pp=2, ep=1, experts=0, dtype="float32"):
    """Two large checkpoints a, b (random weights, b = a + noise) for bench/ timings; not committed.
    Written stage by stage (one pipeline stage of one expert rank in memory at a time)."""
    CONFIG.update(hidden=hidden, heads=16, kv_heads=8, ffn=4 * hidden, vocab=vocab, layers=layers)
    torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    shapes = bench_shapes(experts)
    starts = chunk_starts(pp, 1, None)
    per_rank = experts // ep if experts else 0
    for side, iteration in (("a", 1), ("b", 2)):
        for e in range(ep):
            for p in range(pp):
                state = OrderedDict()
                for name, shape in shapes.items():
                    li = layer_of(name)
                    if li is not None and not starts[p] <= li < starts[p + 1]:
                        continue
                    if li is None and p != (0 if name.startswith("embedding.") else pp - 1):
                        continue
                    if ".local_experts." in name:
                        if int(name.split(".local_experts.")[1].split(".")[0]) // per_rank != e:
                            continue
                    state[name] = bench_tensor(name, shape, side, torch_dtype)
                save(f"{out}/{side}", iteration, state, tp=tp, pp=pp, ep=ep, experts=experts, args_dtype=torch_dtype,
                     only=lambda t, pr, er, p=p, e=e: pr == p and er == e)
                del state


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--bench":
        ap = argparse.ArgumentParser(prog="megatron_checkpoints.py --bench")
        ap.add_argument("out")
        ap.add_argument("sizes", nargs=3, type=int, metavar="HIDDEN LAYERS VOCAB")
        ap.add_argument("--tp", type=int, default=2)
        ap.add_argument("--pp", type=int, default=2)
        ap.add_argument("--ep", type=int, default=1)
        ap.add_argument("--experts", type=int, default=0)
        ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
        a = ap.parse_args(sys.argv[2:])
        return bench_pair(a.out, *a.sizes, tp=a.tp, pp=a.pp, ep=a.ep, experts=a.experts, dtype=a.dtype)
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
    # An uneven pipeline: PP 3 with 1, 2 and 1 layers (decoder_first/last_pipeline_num_layers = 1).
    save(f"{out}/pp3_uneven_b", 4, b, pp=3, stages=[1, 2, 1])
    # Bad inputs.
    bad = f"{out}/bad"
    save(f"{bad}/truncated", 2, a)
    rewrite_member(f"{bad}/truncated/iter_0000002/mp_rank_00/model_optim_rng.pt", "/data/0", lambda d: d[: len(d) // 2])
    save(f"{bad}/missing_member", 2, a)
    rewrite_member(f"{bad}/missing_member/iter_0000002/mp_rank_00/model_optim_rng.pt", "/data/1", lambda d: None)
    save(f"{bad}/missing_rank", 2, a, tp=2)
    shutil.rmtree(f"{bad}/missing_rank/iter_0000002/mp_rank_01")
    # EP 2 whose args do not say how many experts there are: both expert ranks give local experts 0, 1.
    save(f"{bad}/ep_no_num_experts", 2, moe_a, ep=2, experts=4, args_experts=0, dtype=torch.bfloat16)
    os.makedirs(f"{bad}/not_zip/iter_0000002/mp_rank_00")
    with open(f"{bad}/not_zip/iter_0000002/mp_rank_00/model_optim_rng.pt", "wb") as f:
        f.write(b"this is not a torch checkpoint\n")
    with open(f"{bad}/not_zip/latest_checkpointed_iteration.txt", "w") as f:
        f.write("2")


if __name__ == "__main__":
    main()
