"""Writes verl's precision-debugger layout from a tiny PPO-style run on CPU, through verl's own dumping code.

Usage:  python rl_stages.py SIDE DUMP_ROOT      (needs verl 0.9.1 and mindstudio-probe 26.2.0 beside torch)

verl's PrecisionDebuggerProfiler (verl/utils/profiler/precision_debugger_profile.py) wraps each profiled
stage method of a worker: it keeps one msprobe PrecisionDebugger, sets its `service.config.dump_path` to
DUMP_ROOT/step_{global_step}/{stage}, calls `start(model)`, runs the stage, `stop()`s and resets the
service; msprobe then writes DUMP_ROOT/step_{N}/{stage}/step0/rank0/. This script puts that very
decorator (`annotate(role=stage)`) on the stage methods of a tiny worker: a policy, a frozen reference
copy, one PPO-style update per step, on one gloo rank (verl's workers run under torch.distributed).
A full verl trainer (ray, a vLLM/SGLang rollout, GPUs) is not run: see samples/README.md.

Stages (verl's names): actor_compute_log_prob (actor forward under no_grad), ref_compute_log_prob
(the frozen reference under no_grad), actor_update (forward, a PPO loss with a KL term towards the
reference log-probs, backward, SGD step). SIDE "npu" gives the reference model's LayerNorm eps 1e-2
instead of 1e-5, so in step_1 actor_compute_log_prob agrees with bench, ref_compute_log_prob first
differs at its layer_norm and actor_update first differs where the KL term reads the reference
log-probs; the same in step_2 (that term's gradient does not depend on the reference log-probs, so the
actors stay equal). Nothing here writes dump files: msprobe does.
"""

import copy
import json
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

SEED = 1234
VOCAB, HIDDEN, BATCH, SEQ = 16, 8, 2, 4
STEPS = (1, 2)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.fc = nn.Linear(HIDDEN, HIDDEN)
        self.norm = nn.LayerNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens):
        return self.head(self.norm(torch.relu(self.fc(self.embed(tokens)))))


def log_probs(model, tokens):
    logits = model(tokens[:, :-1])
    return torch.gather(F.log_softmax(logits, dim=-1), 2, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)


def make_worker(profiler, actor, ref, optimizer):
    """A worker as verl's: the models where verl looks for them, stage methods wrapped by its profiler."""

    class Worker:
        def __init__(self):
            self.actor_module, self.ref_module, self.global_step = actor, ref, 0

        @profiler.annotate(role="actor_compute_log_prob")
        def compute_log_prob(self, tokens):
            with torch.no_grad():
                return log_probs(self.actor_module, tokens)

        @profiler.annotate(role="ref_compute_log_prob")
        def compute_ref_log_prob(self, tokens):
            with torch.no_grad():
                return log_probs(self.ref_module, tokens)

        @profiler.annotate(role="actor_update")
        def update_actor(self, tokens, old, ref_lp, advantages):
            optimizer.zero_grad()
            lp = log_probs(self.actor_module, tokens)
            ratio = torch.exp(lp - old)
            kl = lp - ref_lp
            loss = -(ratio * advantages).mean() + 0.1 * kl.mean()
            loss.backward()
            optimizer.step()
            return loss.item()

    return Worker()


def main():
    from verl.utils.profiler.config import PrecisionDebuggerToolConfig
    from verl.utils.profiler.precision_debugger_profile import PrecisionDebuggerProfiler

    side, root = sys.argv[1], os.path.abspath(sys.argv[2])
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("gloo", rank=0, world_size=1)
    actor = Policy()
    ref = copy.deepcopy(actor).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    if side == "npu":
        ref.norm.eps = 1e-2
    optimizer = torch.optim.SGD(actor.parameters(), lr=0.1)

    # msprobe's config.json, as verl's guide says: no dump_path (verl sets it per stage).
    config = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({"task": "statistics", "rank": [], "step": [], "level": "L1", "async_dump": False,
               "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"}},
              config)
    config.close()
    profiler = PrecisionDebuggerProfiler(
        PrecisionDebuggerToolConfig(config_path=config.name, strict=True), rank=0, save_path=root
    )
    worker = make_worker(profiler, actor, ref, optimizer)

    generator = torch.Generator().manual_seed(SEED)
    for step in STEPS:
        worker.global_step = step
        tokens = torch.randint(0, VOCAB, (BATCH, SEQ), generator=generator)
        advantages = torch.randn(BATCH, SEQ - 1, generator=generator)
        old = worker.compute_log_prob(tokens)
        ref_lp = worker.compute_ref_log_prob(tokens)
        loss = worker.update_actor(tokens, old, ref_lp, advantages)
        print(f"{side} step_{step} loss {loss:.6f}")
    os.unlink(config.name)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
