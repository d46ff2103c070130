#!/usr/bin/env python3
"""A synthetic batch of R ranks for the shard benchmark (docs/PERFORMANCE.md, "Shards").

Every rank is a real msprobe dump of samples/dist_gloo (step 0; rank r takes the files of rank r % 2)
with its communication arguments renumbered for an R-rank job: ranks talk in groups of 8 (the
all_reduce group_ranks / group_id), and each even rank sends to the odd rank after it (send dst,
recv src). The bench side is the bench run; the npu side is the bench run again for every rank
but one, `--perturbed` (default 3), which takes the npu run's real dump (its LayerNorm eps 1e-2).

    bench/shards/make_batch.py --ranks 1000 --out /tmp/shards/batch1000
"""
import argparse
import json
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "dist_gloo")
GROUP = 8


def renumber(value, rank, ranks):
    """Rewrites group and peer arguments of one dump entry for `rank`, in place."""
    if isinstance(value, dict):
        if value.get("type") == "torch.ProcessGroup" and "group_ranks" in value:
            first = rank // GROUP * GROUP
            value["group_ranks"] = list(range(first, min(first + GROUP, ranks)))
            value["group_id"] = "g%07d" % (rank // GROUP)
        for v in value.values():
            renumber(v, rank, ranks)
    elif isinstance(value, list):
        for v in value:
            renumber(v, rank, ranks)


def write_rank(src, dst, rank, ranks):
    os.makedirs(dst)
    with open(os.path.join(src, "dump.json")) as f:
        dump = json.load(f)
    peer = rank + 1 if rank % 2 == 0 else rank - 1
    for name, entry in dump["data"].items():
        if not name.startswith("Distributed."):
            continue
        renumber(entry, rank, ranks)
        for key in ("dst", "src"):
            arg = entry.get("input_kwargs", {}).get(key)
            if isinstance(arg, dict) and arg.get("type") == "int":
                arg["value"] = peer
        for out in entry.get("output", []):
            if isinstance(out, dict) and out.get("type") == "int":
                out["value"] = peer
    with open(os.path.join(dst, "dump.json"), "w") as f:
        json.dump(dump, f, indent=1)
    for name in ("construct.json", "stack.json"):
        shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=1000)
    p.add_argument("--perturbed", type=int, default=3)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if a.ranks % 2:
        p.error("--ranks must be even (ranks send in pairs)")
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    for rank in range(a.ranks):
        src_rank = "rank%d" % (rank % 2)
        bench_src = os.path.join(SAMPLE, "bench", "step0", src_rank)
        npu_src = os.path.join(SAMPLE, "npu", "step0", src_rank) if rank == a.perturbed else bench_src
        for side, src in (("npu", npu_src), ("bench", bench_src)):
            write_rank(src, os.path.join(a.out, side, "step0", "rank%d" % rank), rank, a.ranks)
    with open(os.path.join(a.out, "batch.json"), "w") as f:
        json.dump({"npu_path": "npu", "bench_path": "bench"}, f)
    print(os.path.join(a.out, "batch.json"))


if __name__ == "__main__":
    main()
