"""The 2-rank data-parallel job of the divergence corpus (bench/divergence/make_corpus.py).

Run under torchrun (gloo on CPU) in the venv of corpus_models.py:

    torchrun --standalone --nproc_per_node 2 corpus_gloo.py NOISE SIDE BUG DUMP_PATH

Each rank trains corpus_models' hand-written GPT (model "gpt_dp") on its own batch; the parameter
gradients are averaged with all_reduce after backward, as a data-parallel job does by hand. The
npu side's noise is applied on both ranks (corpus_models.install_noise); the bug on rank BUG_RANK
only (a rank-local bug: a wrong config or a badly loaded checkpoint shard on one rank), so rank 0
first differs where it receives rank 1's gradients (Distributed.all_reduce). msprobe 26.2.0 dumps
each rank into DUMP_PATH/step0/rankN.
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus_models as cm
import torch
import torch.distributed as dist

BUG_RANK = 1


def run(noise, side, bug, dump_path):
    torch.set_num_threads(1)
    cm.install_noise(noise, side)
    from msprobe.pytorch import PrecisionDebugger

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    bug, _, strength = bug.partition(":")
    strength = strength or "strong"
    model = cm.build("gpt")
    if side == "npu" and bug != "none" and rank == BUG_RANK:
        cm.BUGS[bug]("gpt", model, strength)
    g = torch.Generator().manual_seed(cm.SEED + 1 + rank)  # each rank its own batch
    ids = torch.randint(0, 32, (1, 6), generator=g)
    # The group passed explicitly, as Megatron does: msprobe then dumps its ranks (group_ranks), which link
    # the collective across ranks (a default-group call is dumped without them).
    dp_group = dist.new_group(ranks=list(range(world)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model.train()
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "config.json")
        cm.write_config(config, os.path.abspath(dump_path))
        debugger = PrecisionDebugger(config_path=config)
        debugger.start(model)
        loss = cm.loss_of("gpt", model, ids, ids)
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM, group=dp_group)
            p.grad.div_(world)
        debugger.stop()
        optimizer.step()
        optimizer.zero_grad()
        debugger.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    run(*sys.argv[1:5])
