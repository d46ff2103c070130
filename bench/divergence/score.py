#!/usr/bin/env python3
"""Scores graph-ascend's first divergence on the noisy corpus (bench/divergence/corpus.tar.xz).

    python3 bench/divergence/score.py [build/bin/graph-ascend] [--corpus FILE] [--min-bugs N --min-none N]

For each case it compares the npu dump (noise + bug) with the bench dump (clean) by
`graph-ascend graph -i compare.json`, reads the first divergence from `graph-ascend info`, and
prints RIGHT or WRONG:
  a case with a bug   right when the first divergence is the culprit (manifest.json: found by
                      make_corpus.py from the npu and reference dumps, without graph-ascend) or one
                      of its enclosing modules other than the outermost (the whole model)
  a noise-only case   right when `info` says "no divergence beyond noise"
  a batch case        (a 2-rank job, "batch" in the manifest: every rank of the step is built) right
                      when the origin of the divergence (docs/OVERVIEW.md's rule: the ranks whose first
                      divergence is no communication from another diverging rank) is the culprit's rank
                      alone and its first divergence is right as above; noise-only: no rank diverges
Beside it, the naive rule: the first node in execution order (forward, then backward) whose
precision index falls in the worst colour bucket of the file (a noise-only case is then right
only when every node is in the best bucket). With --min-bugs/--min-none it exits 1 when the score
falls below them (the test in tests/python/test_divergence_corpus.py).
"""

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NONE_LINE = "no divergence beyond noise"


def first_divergence(info):
    """(name or None, the `info` line)."""
    for line in info.splitlines():
        if line.startswith("first divergence, in execution order: "):
            rest = line.split(": ", 1)[1]
            return (None if rest.startswith("none") else rest.split(" (")[0]), line
    return None, ""


def naive(nodes, colors):
    """The first node in execution order (forward, then backward) in the worst colour bucket."""
    buckets = sorted((v["value"] for v in colors.values() if isinstance(v.get("value"), list) and len(v["value"]) == 2), key=lambda b: b[0])

    def bucket(p):
        for i, (lo, hi) in enumerate(buckets):
            if lo <= p < hi or (i == len(buckets) - 1 and p == hi):
                return i
        return -1

    root = next(n for n, v in nodes.items() if v.get("upnode") not in nodes)
    pre, stack = [], [root]
    while stack:
        n = stack.pop()
        pre.append(n)
        stack.extend(reversed(nodes[n].get("subnodes", [])))
    pre = [n for n in pre if ".backward" not in n] + [n for n in pre if ".backward" in n]
    graded = [(n, bucket(nodes[n].get("data", {}).get("precision_index"))) for n in pre[1:]
              if isinstance(nodes[n].get("data", {}).get("precision_index"), (int, float))]
    worst = max((b for _, b in graded), default=0)
    if worst <= 0:
        return None
    return next(n for n, b in graded if b == worst)


def peers_of(info):
    """The ranks `info` says the first divergence (a communication) receives from."""
    for line in info.splitlines():
        if line.startswith("  it receives from rank"):
            return [int(r) for r in line.split(":")[0].split()[4:]]
    return []


def origins(ranks):
    """The ranks where the divergence starts, by docs/OVERVIEW.md's origin rule: {rank: (named, peers)}
    -> the diverging ranks whose first divergence is no communication from another diverging rank,
    traced breadth first through the communications."""
    traced = {r for r, (named, peers) in ranks.items() if named is not None and not peers}
    found = set(traced)
    grew = True
    while grew:
        grew = False
        for r, (named, peers) in sorted(ranks.items()):
            if named is not None and r not in traced and any(p in traced for p in peers):
                traced.add(r)
                grew = True
    # A diverging rank left over (its communication's peers do not diverge) is its own origin.
    return found | {r for r, (named, _) in ranks.items() if named is not None and r not in traced}


def right(named, case):
    if case["culprit"] is None:
        return named is None
    return named == case["culprit"] or named in case["modules"][:-1]


def build(cli, root, case, work):
    """graph -i compare.json for the case; the .vis files, or the error."""
    os.makedirs(work)
    with open(os.path.join(work, "compare.json"), "w") as f:
        json.dump({"npu_path": os.path.join(root, case["npu"]), "bench_path": os.path.join(root, case["bench"])}, f)
    # A case's own graph flags (a layer mapping for MindSpore against PyTorch), files in the corpus root.
    extra = [os.path.join(root, a) if a.endswith(".yaml") else a for a in case.get("graph_args", [])]
    run = subprocess.run([cli, "graph", "-i", "compare.json", "-o", "out"] + extra, cwd=work, capture_output=True,
                         text=True)
    if run.returncode != 0:
        return None, "graph failed: " + run.stderr.strip()
    return sorted(os.path.join(work, "out", f) for f in os.listdir(os.path.join(work, "out")) if f.endswith(".vis")), ""


def read_vis(cli, vis):
    """(info's first divergence, its line, the ranks it receives from, the naive rule's node)."""
    info = subprocess.run([cli, "info", vis], capture_output=True, text=True, check=True).stdout
    exported_path = vis[:-len(".vis")] + ".json"
    subprocess.run([cli, "export", vis, "-o", exported_path], capture_output=True, check=True)
    with open(exported_path) as f:
        exported = json.load(f)
    named, line = first_divergence(info)
    return named, line, peers_of(info), naive(exported["NPU"]["node"], exported["Colors"])


def score_case(cli, root, name, case, out_dir):
    """(name, right, what it named, info's line, naive right, what the naive rule named)."""
    files, error = build(cli, root, case, os.path.join(out_dir, name))
    if files is None:
        return name, False, None, error, False, None
    if not case.get("batch"):
        named, line, _, naive_named = read_vis(cli, files[0])
        return name, right(named, case), named, line, right(naive_named, case), naive_named
    # A batch: each rank of the step. Right when the origin (docs/OVERVIEW.md) is the culprit's rank alone
    # and that rank's first divergence is the culprit; the other ranks first differ at a communication
    # from it, or not at all. The naive rule has no notion of ranks: it is judged on the culprit's rank.
    ranks, lines = {}, []
    for vis in files:
        rank = int(os.path.basename(vis).split("_rank")[1].split("_")[0])
        if f"_{case['step']}_" not in os.path.basename(vis):
            continue
        named, line, peers, naive_named = read_vis(cli, vis)
        ranks[rank] = (named, peers, naive_named)
        lines.append(f"rank{rank} {line}")
    culprit_rank = case.get("culprit_rank")
    found = origins({r: (named, peers) for r, (named, peers, _) in ranks.items()})
    if culprit_rank is None:
        ok = not found
        naive_ok = all(n is None for _, _, n in ranks.values())
        named = ", ".join(f"rank{r} {ranks[r][0]}" for r in sorted(found)) or None
        naive_named = ", ".join(f"rank{r} {n}" for r, (_, _, n) in sorted(ranks.items()) if n) or None
    else:
        named_at, _, naive_at = ranks.get(culprit_rank, (None, [], None))
        ok = found == {culprit_rank} and right(named_at, case)
        naive_ok = right(naive_at, case)
        named = ", ".join(f"rank{r} {ranks[r][0]}" for r in sorted(found)) or None
        naive_named = f"rank{culprit_rank} {naive_at}"
    return name, ok, named, "; ".join(lines), naive_ok, naive_named


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli", nargs="?", default=os.path.join(ROOT, "build/bin/graph-ascend"))
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.tar.xz"))
    ap.add_argument("--min-bugs", type=int, default=0)
    ap.add_argument("--min-none", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(args.corpus) as tar:
            tar.extractall(tmp, filter="data")
        root = os.path.join(tmp, "corpus")
        with open(os.path.join(root, "manifest.json")) as f:
            manifest = json.load(f)
        runs = os.path.join(tmp, "runs")
        os.makedirs(runs)
        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda kv: score_case(cli, root, kv[0], kv[1], runs), sorted(manifest.items())))
    totals = {"bugs": [0, 0, 0], "none": [0, 0, 0]}  # right, naive right, cases
    by_noise = {}  # noise -> the same per kind of noise (a batch case counted under "gloo " + its noise)
    for name, ok, named, line, naive_ok, naive_named in results:
        case = manifest[name]
        kind = "none" if case["culprit"] is None else "bugs"
        noise = ("gloo " if case.get("batch") else "") + case["noise"]
        for t in (totals[kind], by_noise.setdefault(noise, {"bugs": [0, 0, 0], "none": [0, 0, 0]})[kind]):
            t[0] += ok
            t[1] += naive_ok
            t[2] += 1
        culprit = case["culprit"] or "none"
        if case.get("culprit_rank") is not None:
            culprit = f"rank{case['culprit_rank']} {culprit}"
        print(f"{'RIGHT' if ok else 'WRONG'} {name}: {named or 'none'} (culprit {culprit}); "
              f"naive {'right' if naive_ok else 'wrong'}: {naive_named or 'none'}")
        if not ok:
            print(f"      {line}")
    print("per noise: bug cases right / noise-only cases none (naive rule)")
    for noise, t in sorted(by_noise.items()):
        b, n = t["bugs"], t["none"]
        print(f"  {noise:<18} {b[0]}/{b[2]} {n[0]}/{n[2]}  (naive {b[1]}/{b[2]} {n[1]}/{n[2]})")
    b, n = totals["bugs"], totals["none"]
    print(f"bug cases:        {b[0]}/{b[2]} right (naive rule {b[1]}/{b[2]})")
    print(f"noise-only cases: {n[0]}/{n[2]} say none (naive rule {n[1]}/{n[2]})")
    if b[0] < args.min_bugs or n[0] < args.min_none:
        print(f"score fell: bugs {b[0]} < {args.min_bugs} or none {n[0]} < {args.min_none}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
