"""Counts the user actions from opening a sample's compare in the page to the culprit's detail.

Usage: python bench/divergence/count_actions.py [build/bin/graph-ascend]

For each sample with a known culprit (samples/README.md) it builds the compare with bin/graph-ascend,
reads `info` and the exported hierarchy, and counts, with the page as it opens a file (root
expanded, its children collapsed):

  before  the page had no pointer to the culprit: the shortest path is to expand each collapsed
          ancestor of it (one double click each) and click it, which assumes the user already
          knows where it is (from `info`: the old rule named the culprit in the cases marked so);
          with the name from `info` the other path is: run `info`, "/", type the name, Enter = 4.
  after   one click on "First divergence" (or the key G) when the ranking's first entry is the
          culprit; otherwise "after" falls back to the "before" paths.

Prints a Markdown table (the one in docs/DIVERGENCE.md). Reads only samples/; writes in a
temporary directory.
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# sample, compare file, extra flags, culprit (samples/README.md)
CASES = [
    ("cnn_statistics", "compare.json", [], "Functional.batch_norm.6.forward"),
    ("cnn_md5", "compare.json", [], "Functional.batch_norm.6.forward"),
    ("gpt_statistics", "compare.json", [], "Functional.linear.11.forward"),
    ("gpt_tensor", "compare.json", [], "Tensor.__add__.10.forward"),
    ("overflow_nan", "compare.json", [], "Torch.exp.1.forward"),
    ("l1_api", "compare.json", [], "Functional.batch_norm.1.forward"),
    ("renamed_act", "compare.json", [], "Module.blocks.1.act.GELU.forward.0"),
    ("handwritten_norm", "compare.json", [], "Module.blocks.1.norm.LayerNorm.forward.0"),
]


def run(cli, *args):
    return subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout


def first_divergence(info):
    for line in info.splitlines():
        if line.startswith("first divergence, in execution order: "):
            return line.split(": ", 1)[1].split(" (")[0]
    return ""


def old_rule(nodes, md5):
    """The former `info` rule: the first leaf in pre-order whose index is not the best value."""
    root = next(n for n, v in nodes.items() if v.get("upnode") not in nodes)
    stack = [root]
    while stack:
        n = stack.pop()
        kids = nodes[n].get("subnodes", [])
        p = nodes[n].get("data", {}).get("precision_index")
        if n != root and not kids and p is not None and (p < 1 if md5 else p > 0):
            return n
        stack.extend(reversed(kids))
    return ""


def main():
    cli = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build/bin/graph-ascend")
    print("| sample | culprit | collapsed ancestors | former `info` rule names | before | after |")
    print("|---|---|---|---|---|---|")
    for sample, compare, flags, culprit in CASES:
        folder = os.path.join(ROOT, "samples", sample)
        if not os.path.exists(os.path.join(folder, compare)):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([cli, "graph", "-i", compare, "-o", tmp, *flags], cwd=folder, check=True, capture_output=True)
            vis = next(os.path.join(tmp, f) for f in sorted(os.listdir(tmp)) if f.endswith(".vis"))
            info = run(cli, "info", vis)
            run(cli, "export", vis, "-o", os.path.join(tmp, "graph.json"))
            with open(os.path.join(tmp, "graph.json")) as f:
                nodes = json.load(f)["NPU"]["node"]
        depth, up = 0, nodes[culprit].get("upnode")
        while up in nodes and nodes[up].get("upnode") in nodes:
            depth += 1  # the root's children start collapsed; the root itself is expanded
            up = nodes[up].get("upnode")
        found = first_divergence(info) == culprit
        old = old_rule(nodes, "md5" in info.split("mode: ")[1].split(",")[0])
        # Before: run `info` in a terminal, then search for the name it gave ("/", type it, Enter)
        # when it was the culprit,
        # else expand the ancestors one by one and click (knowing the path).
        before = min(4, depth + 1) if old == culprit else depth + 1
        after = "1" if found else f"{before} (ranking first: `{first_divergence(info)}`)"
        print(f"| `{sample}` | `{culprit}` | {depth} | {'the culprit' if old == culprit else f'`{old}`'} | {before} | {after} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
