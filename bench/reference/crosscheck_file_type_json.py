#!/usr/bin/env python3
"""Cross-checks `graph_visualize --file_type json` against msprobe 26.2.0's on samples/parallel_merge.

Both tools merge the 4-rank tp=2 x pp=2 run and write each merged graph as a dump folder
(OUT/step<S>/rank<R>/construct.json, dump.json, stack.json), once as it is (one step, one merged
graph) and once as a job of two steps with DP 2 (the ranks copied; each tool writes one merged graph a
step, the first DP group's).
This compares the folders: construct.json parents, the dump.json entries (keys, categories, item
values, parallel_merge_info) and stack.json groups; then msprobe 26.2.0 reads graph-ascend's folders
back (graph_visualize -tp OURS) and its graphs are compared node for node with graph-ascend's graphs
of the same folders (crosscheck26.compare). Differences with a known cause (docs/COMPATIBILITY.md,
C26-filetype-json) are counted under "documented <tag>"; anything else is UNEXPLAINED (exit status 1).

    python3 bench/reference/crosscheck_file_type_json.py [--graph-ascend build/bin/graph-ascend] [--verbose]
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import crosscheck26  # noqa: E402  (its node comparison, for msprobe reading our folders back)
import run_msprobe  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(ROOT, "samples", "parallel_merge")
FLAGS = ["--rank_size", "4", "--tp", "2", "--pp", "2", "--file_type", "json"]
STATS = ("Max", "Min", "Mean", "Norm")
# docs/COMPATIBILITY.md C-merge-dup-api: with DP > 1, the other TP ranks' own API calls get a _rank<r> name.
DUP_API = re.compile(r"^Distributed\.\w+_rank\d+\.\d+\.(forward|backward)$")


def load(folder, name):
    with open(os.path.join(folder, name)) as f:
        return json.load(f)


def scalar_stats_added(ref_item, our_item):
    """26.2 copies a non-tensor argument's value into Max/Min/Mean/Norm."""
    if not isinstance(ref_item, dict) or not isinstance(our_item, dict) or ref_item.get("type") == "torch.Tensor":
        return False
    trimmed = {k: v for k, v in ref_item.items() if k not in STATS}
    return trimmed == our_item and any(k in ref_item for k in STATS)


def stats_differ_only(ref_item, our_item):
    if not isinstance(ref_item, dict) or not isinstance(our_item, dict):
        return False
    strip = lambda d: {k: v for k, v in d.items() if k not in STATS}  # noqa: E731
    return strip(ref_item) == strip(our_item)


def compare_entry(name, ref, our, rebuilt, counts, verbose):
    def note(tag, detail=""):
        counts[tag] += 1
        if verbose and tag.startswith("UNEXPLAINED"):
            print(f"  {tag}: {name} {detail}")

    for category in sorted(set(ref) | set(our)):
        if category == "parallel_merge_info":
            note("same parallel_merge_info" if ref.get(category) == our.get(category) else "UNEXPLAINED merge info")
            continue
        a, b = ref.get(category), our.get(category)
        if a == b:
            note("same category")
            continue
        if rebuilt:
            # 26.2 rebuilds an entry that is not in the main rank's dump (another stage's, renamed) from its graph items (_reconstruct_node_entry):
            # backward "input" as input_args, booleans as "True", dtype "<class 'int'>", shape [].
            note("documented C26-filetype-json (renamed entries rebuilt by 26.2)")
            continue
        if a == {} and b is None and category == "parameters":
            note("documented C26-filetype-json (empty parameters not kept)")
            continue
        if isinstance(a, dict) and isinstance(b, dict) and set(a) == set(b):
            pairs = [(a[k], b[k]) for k in a]
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            pairs = list(zip(a, b))
        else:
            note("UNEXPLAINED category", f"{category}: {json.dumps(a)[:200]} | {json.dumps(b)[:200]}")
            continue
        for x, y in pairs:
            if isinstance(x, list) and isinstance(y, list) and len(x) == len(y) == 1:
                x, y = x[0], y[0]
            if x == y:
                note("same item")
            elif (
                isinstance(x, dict)
                and x.get("class_type") == "torch.distributed.P2POp"
                and {k: v for k, v in x.items() if k != "tag"} == y
            ):
                note("documented C26-filetype-json (a P2POp's tag is not kept)")
            elif scalar_stats_added(x, y):
                note("documented C26-filetype-json (26.2 adds statistics to non-tensor arguments)")
            elif stats_differ_only(x, y) and (category in ("parameters", "input") or ".parameters_grad" in name):
                note(
                    "documented C26-filetype-json (26.2 keeps the main rank's statistics for parameters, "
                    "gradients and backward inputs)"
                )
            else:
                note("UNEXPLAINED item", f"{category}: {json.dumps(x)[:200]} | {json.dumps(y)[:200]}")


def check_graph(ref_dir, our_dir, main_rank, counts, verbose):
    """Compares one merged graph's folder (construct, dump and stack files) of both tools."""
    ref_c, our_c = load(ref_dir, "construct.json"), load(our_dir, "construct.json")
    for name in sorted(set(ref_c) | set(our_c)):
        if name in our_c and name not in ref_c and DUP_API.match(name):
            counts["documented C-merge-dup-api (another TP rank's own API, renamed; 26.2 keeps one)"] += 1
        elif name not in our_c or name not in ref_c:
            counts["UNEXPLAINED construct key"] += 1
        elif ref_c[name] == our_c[name]:
            counts["same parent"] += 1
        elif ref_c[name] == "DefaultModel" and our_c[name] is None:
            counts["documented C26-filetype-json (top level: null, not the root's name)"] += 1
        else:
            counts["UNEXPLAINED parent"] += 1

    ref_d, our_d = load(ref_dir, "dump.json"), load(our_dir, "dump.json")
    for key in ("task", "level", "framework", "dump_data_dir", "is_merged"):
        counts["same header" if ref_d.get(key) == our_d.get(key) else "UNEXPLAINED header " + key] += 1
    for name in sorted(set(ref_d["data"]) | set(our_d["data"])):
        if name not in ref_d["data"]:
            # 26.2 drops the entries it cannot find in the main rank's dump and cannot rebuild.
            pgrad = ".parameters_grad" in name
            if pgrad:
                counts["documented C26-filetype-json (26.2 drops the other stages' parameter gradients)"] += 1
            elif DUP_API.match(name):
                counts["documented C-merge-dup-api (another TP rank's own API, renamed; 26.2 keeps one)"] += 1
            else:
                counts["UNEXPLAINED entry only ours"] += 1
        elif name not in our_d["data"]:
            counts["UNEXPLAINED entry only msprobe"] += 1
        else:
            compare_entry(name, ref_d["data"][name], our_d["data"][name], name not in main_rank, counts, verbose)

    def groups(stack):
        return {n: tuple(v[1]) for v in stack.values() for n in v[0]}

    ref_s, our_s = groups(load(ref_dir, "stack.json")), groups(load(our_dir, "stack.json"))
    renamed = {n for n in set(our_s) - set(ref_s) if DUP_API.match(n)}
    if ref_s == {n: v for n, v in our_s.items() if n not in renamed}:
        counts["same stack" if not renamed else "same stack but C-merge-dup-api's renamed APIs"] += 1
    else:
        counts["UNEXPLAINED stack.json"] += 1


def folders(out):
    """The step*/rank* folders a --file_type json run wrote, in order."""
    found = []
    for step in sorted(os.listdir(out)):
        for rank in sorted(os.listdir(os.path.join(out, step))):
            found.append(os.path.join(step, rank))
    return found


def multi_step_layout(work):
    """samples/parallel_merge's 4 ranks as a job of 8 (ranks 4-7 copies of 0-3: DP 2), in two steps
    (step1 a copy of step0). Both tools write one merged graph a step (the first DP group's)."""
    src = os.path.join(SAMPLE, "npu", "step0")
    top = os.path.join(work, "steps")
    for step in ("step0", "step1"):
        for r in range(8):
            shutil.copytree(os.path.join(src, f"rank{r % 4}"), os.path.join(top, step, f"rank{r}"))
    return top


def read_back(msprobe, tool, our_dir, work, counts, verbose):
    """msprobe 26.2.0 reads graph-ascend's merged dump folders as a dump (graph_visualize -tp): its
    graphs, node for node, are graph-ascend's graphs of the same folders (crosscheck26's comparison)."""
    ref_out, our_out = os.path.join(work, "read-msprobe"), os.path.join(work, "read-ours")
    r = subprocess.run(
        [msprobe, "graph_visualize", "-tp", our_dir, "-o", ref_out], check=False, capture_output=True, text=True
    )
    dbs = sorted(glob.glob(os.path.join(ref_out, "*.vis.db")))
    if not dbs:
        counts["UNEXPLAINED msprobe 26.2.0 cannot read our merged dump"] += 1
        if verbose:
            print(r.stdout[-2000:], r.stderr[-2000:])
        return
    ref = crosscheck26.reference_graphs(dbs[0])
    cfg = {"npu_path": our_dir}
    with tempfile.TemporaryDirectory() as tmp:
        cmd = run_msprobe.msprobe_command("", "26.2.0", cfg, our_out, tmp, [])
    cmd[0] = tool
    subprocess.run(cmd, check=True, capture_output=True)
    ours = []
    for vis in sorted(glob.glob(os.path.join(our_out, "*.vis")), key=crosscheck26.graph_order):
        subprocess.run([tool, "export", vis, "-o", vis + ".json", "--grading", "26"], check=True, capture_output=True)
        with open(vis + ".json") as f:
            ours.append(crosscheck26.our_nodes(json.load(f)))
    if len(ref) != len(ours):
        counts[f"UNEXPLAINED read back: {len(ref)} graphs in msprobe, {len(ours)} in graph-ascend"] += 1
        return
    for (name, rg), og in zip(ref, ours):
        diffs, examples = crosscheck26.compare(rg, {"NPU": og})
        counts[f"read back by msprobe 26.2.0: graphs with {len(og)} nodes"] += 1
        for k, v in diffs.items():
            counts[f"read back {k}"] += v
            if verbose:
                print(f"  read back {name}: {k} e.g. {examples[k]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph-ascend", default=os.path.join(ROOT, "build", "bin", "graph-ascend"))
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ga-filetype-json-")
    try:
        # The runner makes the venv; msprobe is then run on the ranks folder itself (as a user would).
        subprocess.run([os.path.join(HERE, "run_msprobe.sh"), "--version", "26.2.0-graph", "--install"], check=True)
        msprobe = os.path.join(ROOT, "bench", ".venv-msprobe-26.2.0-graph", "bin", "msprobe")
        with open(os.path.join(SAMPLE, "npu", "step0", "rank0", "dump.json")) as f:
            main_rank = set(json.load(f)["data"])
        runs = [
            ("one step, one merged graph", os.path.join(SAMPLE, "npu", "step0"), FLAGS),
            (
                "two steps of a DP-2 job",
                multi_step_layout(work),
                ["--rank_size", "8", "--tp", "2", "--pp", "2", "--file_type", "json"],
            ),
        ]
        status = 0
        for label, target, flags in runs:
            counts = Counter()
            slug = label.replace(" ", "-").replace(",", "")  # msprobe refuses paths with spaces
            ref_dir, our_dir = os.path.join(work, slug, "msprobe"), os.path.join(work, slug, "ours")
            r = subprocess.run(
                [msprobe, "graph_visualize", "-tp", target, "-o", ref_dir, *flags],
                check=False,
                capture_output=True,
                text=True,
            )
            if not os.path.isdir(ref_dir) or not folders(ref_dir):
                sys.exit(f"msprobe 26.2.0 wrote no merged dump:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
            subprocess.run(
                [args.graph_ascend, "graph_visualize", "-tp", target, "-o", our_dir, *flags],
                check=True,
                capture_output=True,
            )
            ref_f, our_f = folders(ref_dir), folders(our_dir)
            if ref_f != our_f:
                counts[f"UNEXPLAINED folders: msprobe {ref_f}, graph-ascend {our_f}"] += 1
            for folder in sorted(set(ref_f) & set(our_f)):
                counts["merged graph folders"] += 1
                check_graph(
                    os.path.join(ref_dir, folder), os.path.join(our_dir, folder), main_rank, counts, args.verbose
                )
            read_back(msprobe, args.graph_ascend, our_dir, os.path.join(work, slug), counts, args.verbose)
            print(f"{label} ({' '.join(flags)}): folders {' '.join(our_f)}")
            for tag, n in sorted(counts.items()):
                print(f"{n:6d}  {tag}")
            bad = sum(n for tag, n in counts.items() if tag.startswith("UNEXPLAINED") or "UNEXPLAINED" in tag)
            print("no unexplained difference" if bad == 0 else f"{bad} UNEXPLAINED")
            status |= 1 if bad else 0
        return status
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
