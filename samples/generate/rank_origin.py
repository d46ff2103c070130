"""The rank_origin sample: 4 ranks on gloo, one of them perturbed, for the rank overview.

Usage:  torchrun --nproc_per_node 4 rank_origin.py SIDE DUMP_PATH

A tensor-parallel MLP: every rank sees the same batch, normalises it (LayerNorm), computes its
own column shard of the first layer, and the shards are exchanged with dist.all_gather before the
replicated second layer. SIDE "npu" gives rank 2's LayerNorm eps 1e-2 instead of 1e-5, so rank 2
first diverges at its Functional.layer_norm.0.forward while ranks 0, 1 and 3 first diverge at
Distributed.all_gather.0.forward, which brings them rank 2's shard (samples/README.md).

msprobe (PrecisionDebugger, task statistics, level mix) writes DUMP_PATH/step{N}/rank{R}/.
"""

import argparse
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F
from msprobe.pytorch import PrecisionDebugger
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_case import SEED, write_config  # noqa: E402

PERTURBED_RANK = 2
STEPS = 2


class ShardedMLP(nn.Module):
    """LayerNorm, a column shard of fc1 per rank, all_gather, a replicated fc2."""

    def __init__(self, side, rank, world, dim=8, shard=4, classes=4):
        super().__init__()
        eps = 1e-2 if (side == "npu" and rank == PERTURBED_RANK) else 1e-5
        # No affine LayerNorm and no biases: fewer dumped parameters keep the sample small.
        self.norm = nn.LayerNorm(dim, eps=eps, elementwise_affine=False)
        torch.manual_seed(SEED + rank)  # each rank's shard has its own weights
        self.fc1 = nn.Linear(dim, shard, bias=False)
        torch.manual_seed(SEED)  # fc2 is replicated: the same on every rank
        self.fc2 = nn.Linear(shard * world, classes, bias=False)
        self.rank, self.world = rank, world
        # Passed explicitly, as Megatron passes its tensor-parallel group: msprobe then dumps the
        # group's ranks, which is what links the collective across ranks (reference §8).
        self.tp_group = dist.new_group(ranks=list(range(world)))

    def forward(self, x):
        local = self.fc1(self.norm(x))
        parts = [torch.zeros_like(local) for _ in range(self.world)]
        dist.all_gather(parts, local.detach(), group=self.tp_group)
        parts[self.rank] = local  # the gradient flows through the rank's own shard, as in Megatron
        return self.fc2(torch.cat(parts, dim=-1))


def run(side, debugger):
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    model = ShardedMLP(side, rank, world)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(SEED + 1)
    for _ in range(STEPS):
        x = torch.randn(2, 8, generator=g)  # the same batch on every rank (tensor parallel)
        target = torch.tensor([1, 3])
        debugger.start(model)
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        debugger.stop()
        debugger.step()
    dist.barrier()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("side", choices=["bench", "npu"])
    parser.add_argument("dump_path")
    args = parser.parse_args()
    torch.set_num_threads(1)
    dump_path = os.path.abspath(args.dump_path)
    with tempfile.TemporaryDirectory() as tmp:
        config_path = os.path.join(tmp, "config.json")
        write_config(config_path, dump_path, "statistics", "mix")
        run(args.side, PrecisionDebugger(config_path=config_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
