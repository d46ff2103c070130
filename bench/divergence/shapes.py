#!/usr/bin/env python3
"""Dumps whose shape stresses the divergence ranking and the match: many nodes beside each other (flat and
wide), long unmatched runs and deep chains, each beside the same shape fully matched (docs/SCALE.md,
"Linear in the input's shape").

Each case is a compare of two msprobe dumps (task statistics, json.dump(indent=1) as msprobe writes them)
of N API calls, one input and one output tensor each, whose NPU side differs from the bench side in one
call's output (so that the ranking has something to find):

  flat         level L1: N top-level APIs
  wide         level mix: one module holding N APIs
  deep         level mix: a chain of N/2 modules nested in one another, one API in each
  run          level L1: N top-level APIs

and in the unmatched variant (`CASE_unmatched`) half of the NPU calls have names the bench side does not
have: every other call (flat, wide, deep) or one run of N/2 calls in the middle (run).

    bench/divergence/shapes.py --nodes 100000 --out /tmp/shapes    # OUT/<case>{,_unmatched}/compare.json
"""
import argparse
import json
import os

CASES = ("flat", "wide", "deep", "run")


def tensor(value):
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 8], "Max": value + 1.0,
            "Min": value - 1.0, "Mean": value, "Norm": abs(value) * 5.0 + 1.0, "requires_grad": False}


def unmatched_at(case, k, n, unmatched):
    if not unmatched:
        return False
    if case == "run":
        return n // 4 <= k < n // 4 + n // 2
    return k % 2 == 1


def write_side(case, n, unmatched, npu, folder):
    """One side: dump.json, construct.json, stack.json."""
    os.makedirs(folder, exist_ok=True)
    data, construct = {}, {}
    parent = None
    for k in range(n):
        if case == "deep" and k % 2 == 0:
            module = "Module.chain.%d.Block.forward.0" % (k // 2)
            construct[module] = parent
            data[module] = {"input_args": [tensor(k * 1e-3)], "input_kwargs": {}, "output": [tensor(k * 1e-3 + 1)]}
            parent = module
        op = "relu"
        if npu and unmatched_at(case, k, n, unmatched):
            op = "gelu"  # a call the bench side does not make
        name = "Functional.%s.%d.forward" % (op, k)
        out = k * 1e-3 + 1
        if npu and k == n // 8:
            out += 0.5  # the divergence
        data[name] = {"input_args": [tensor(k * 1e-3)], "input_kwargs": {}, "output": [tensor(out)]}
        if case == "wide":
            construct[name] = "Module.wide.Wide.forward.0"
        elif case == "deep":
            construct[name] = parent
    if case == "wide":
        construct["Module.wide.Wide.forward.0"] = None
        data["Module.wide.Wide.forward.0"] = {"input_args": [tensor(0)], "input_kwargs": {}, "output": [tensor(1)]}
    level = "L1" if case in ("flat", "run") else "mix"
    with open(os.path.join(folder, "dump.json"), "w") as f:
        json.dump({"task": "statistics", "level": level, "framework": "pytorch", "dump_data_dir": None,
                   "data": data}, f, indent=1)
    with open(os.path.join(folder, "construct.json"), "w") as f:
        json.dump(construct if level == "mix" else {}, f, indent=1)
    with open(os.path.join(folder, "stack.json"), "w") as f:
        json.dump({}, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=100000, help="API calls a side (default 100000)")
    p.add_argument("--out", required=True)
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated, of " + ", ".join(CASES))
    a = p.parse_args()
    for case in a.cases.split(","):
        for unmatched in (False, True):
            folder = os.path.join(a.out, case + ("_unmatched" if unmatched else ""))
            write_side(case, a.nodes, unmatched, True, os.path.join(folder, "npu"))
            write_side(case, a.nodes, unmatched, False, os.path.join(folder, "bench"))
            with open(os.path.join(folder, "compare.json"), "w") as f:
                json.dump({"npu_path": "npu", "bench_path": "bench"}, f)
            print(folder)


if __name__ == "__main__":
    main()
