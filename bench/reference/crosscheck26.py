#!/usr/bin/env python3
"""Cross-checks `graph-ascend graph_visualize` against msprobe 26.2.0's `graph_visualize`.

For every case below (every sample: build, compare, batch, with each flag that applies: -oc, -fm,
-lm; and the parallel merge layouts of crosscheck_merge.py), runs real msprobe 26.2.0
(bench/reference/run_msprobe.sh --version 26.2.0-graph: its graph builder needs no torch; the
tensor sample gpt_tensor runs in the 26.2.0 venv, whose torch loads the .pt files) with the
msprobe 26 flags the runner derives from the sample's compare.json / build.json / batch.json
(+ extra flags), reads its .vis.db with sqlite3, runs graph-ascend graph_visualize with the same
flags, reads each .vis through `graph-ascend export --grading 26`, and compares graph by graph
(steps and ranks in order):

  node set, hierarchy (up_node, sub_nodes in order), matches (the matched node), the 26 grading
  (precision_index 0 / 0.5 / 1), overflow levels (-oc), micro steps (micro_step_id) and cross-rank
  links (matched_distributed).

Differences with a known cause (docs/COMPATIBILITY.md, "msprobe 26") are counted under
"documented <tag>"; anything else is "UNEXPLAINED" and makes the exit status 1.

    python3 bench/reference/crosscheck26.py [--graph-ascend build/bin/graph-ascend] [--reuse]
        [--only SUBSTRING] [--verbose] [--markdown]
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
import crosscheck_merge  # noqa: E402  (the merge layouts it checks against 8.3.3)
import run_msprobe  # noqa: E402  (the same flag translation for both tools)

ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLES = os.path.join(ROOT, "samples")
OUT = os.path.join(ROOT, "bench", "out", "crosscheck26")
VERSION = "26.2.0-graph"

# Every sample, and each flag that applies to it: builds (-oc), compares (-fm, -oc), batches (-oc),
# layer mapping (-lm), the parallel merges of crosscheck_merge.py (its layouts, "@name").
SAMPLE_NAMES = [
    "cnn_statistics", "cnn_md5", "gpt_statistics", "gpt_tensor", "dist_gloo", "l1_api", "structure",
    "overflow_nan", "layer_mapping", "bert_pgrad", "renamed_act", "handwritten_norm", "rank_origin",
    "p2p_micro",
]  # fmt: skip
MERGE_LAYOUTS = ["compare", "build", "pp", "vpp", "tp", "full", "vpp-chunks"]


def all_cases():
    """(sample, config, extra flags): config is a file of samples/<sample>/ or "@layout" of crosscheck_merge."""
    cases = []
    for sample in SAMPLE_NAMES:
        cases += [(sample, "build.json", []), (sample, "build.json", ["-oc"])]
        if sample == "layer_mapping":
            lm = ["-lm", "{sample}/layer_mapping.yaml"]
            cases += [
                (sample, "compare.json", []),
                (sample, "compare.json", lm),
                (sample, "compare.json", lm + ["-oc"]),
            ]
        else:
            cases += [
                (sample, "compare.json", []),
                (sample, "compare.json", ["-fm"]),
                (sample, "compare.json", ["-oc"]),
            ]
        if os.path.exists(os.path.join(SAMPLES, sample, "batch.json")):
            cases += [(sample, "batch.json", []), (sample, "batch.json", ["-oc"])]
    cases += [("parallel_merge", "@" + layout, []) for layout in MERGE_LAYOUTS]
    cases += [("parallel_merge", "@compare", ["-oc"]), ("parallel_merge", "@build", ["-oc"])]
    return cases


CASES = all_cases()


def config_path(sample, config, merge_configs):
    return merge_configs[config[1:]] if config.startswith("@") else os.path.join(SAMPLES, sample, config)


def reference_version(sample):
    """msprobe 26.2.0's tensor compare loads .pt files with torch: the venv with torch for gpt_tensor."""
    return "26.2.0" if sample == "gpt_tensor" else VERSION


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, capture_output=True, text=True, **kw)


def case_name(sample, config, extra):
    flags = " ".join(os.path.basename(e) for e in extra)
    name = f"{sample} merge {config[1:]}" if config.startswith("@") else f"{sample}/{config}"
    return name + (f" {flags}" if flags else "")


def reference(sample, path, extra, out_dir, reuse):
    """msprobe 26.2.0's .vis.db for one case (run unless reused)."""
    found = sorted(glob.glob(os.path.join(out_dir, "*.vis.db")))
    if reuse and found:
        return found[0], ""
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [os.path.join(HERE, "run_msprobe.sh"), "--version", reference_version(sample), path, out_dir]
    r = run(cmd + (["--", *extra] if extra else []))
    found = sorted(glob.glob(os.path.join(out_dir, "*.vis.db")))
    return (found[0] if found else None), r.stdout + r.stderr


def ours(tool, path, extra, out_dir):
    """graph-ascend graph_visualize with the same flags; the exported graphs."""
    shutil.rmtree(out_dir, ignore_errors=True)
    cfg = run_msprobe.absolute_input(path)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = run_msprobe.msprobe_command("", "26.2.0", cfg, out_dir, tmp, extra)
    cmd[0] = tool
    r = run(cmd)
    if r.returncode != 0:
        return None, r.stderr
    graphs = []
    for vis in sorted(glob.glob(os.path.join(out_dir, "*.vis")), key=graph_order):
        exported = vis + ".json"
        e = run([tool, "export", vis, "-o", exported, "--grading", "26"])
        if e.returncode != 0:
            return None, e.stderr
        with open(exported) as f:
            doc = json.load(f)
        sides = {"NPU": doc["NPU"], "Bench": doc["Bench"]} if "NPU" in doc else {"NPU": doc}
        graphs.append((os.path.basename(vis), {side: our_nodes(g) for side, g in sides.items()}))
    return graphs, ""


def graph_order(path):
    """(step, rank, merged index) from a graph-ascend file name."""
    name = os.path.basename(path)
    num = lambda tag: int(m.group(1)) if (m := re.search(tag + r"(\d+)", name)) else 0  # noqa: E731
    return num("_step"), num("_rank"), num("_merged")


def our_nodes(g):
    """Ours as the .vis.db rows are: a node's micro step is its top-level ancestor's (the JSON export
    writes it on top-level nodes only, as msprobe 8.1 does; 26.2 writes it on every row)."""
    nodes = g["node"]

    def micro_step(name):
        while name in nodes and "micro_step_id" not in nodes[name]:
            up = nodes[name].get("upnode")
            if up in (None, "None", ""):
                return 0
            name = up
        return nodes[name].get("micro_step_id", 0) if name in nodes else 0

    out = {}
    for name, n in g["node"].items():
        data = n.get("data", {})
        out[name] = {
            "upnode": n.get("upnode") if n.get("upnode") not in ("None", None, "") else None,
            "subnodes": n.get("subnodes", []),
            "matched": (n.get("matched_node_link") or [None])[-1],
            "grade": data.get("precision_index"),
            "overflow": data.get("overflow_level"),
            "distributed": links(n.get("matched_distributed")),
            "micro_step": micro_step(name),
            "signature": signature(n),
        }
    return out


def signature(node):
    """The (type, dtype-free shape) of a node's items in dump order: what 8.1's match compares."""
    out = []
    for key in ("input_data", "output_data"):
        for item in (node.get(key) or {}).values():
            if isinstance(item, dict):
                out.append((item.get("type"), json.dumps(item.get("shape"))))
    return out


def links(md):
    """The cross-rank links of a matched_distributed value: {(type, peer rank, peer node)}."""
    if not md:
        return set()
    out = set()
    for d in md if isinstance(md, list) else [md]:
        for rank, info in (d.get("nodes_info") or {}).items():
            out.add((d.get("communications_type"), str(rank), info[1] if len(info) > 1 else None))
    return out


def reference_graphs(db_path):
    import sqlite3

    db = sqlite3.connect(db_path)
    rows = db.execute(
        "select step, rank, data_source, node_name, up_node, sub_nodes, matched_node_link, precision_index, "
        "overflow_level, matched_distributed, micro_step_id from tb_nodes"
    )
    graphs = {}
    for step, rank, source, name, up, subs, link, index, overflow, dist, micro in rows:
        side = "Bench" if source == "Bench" else "NPU"
        link = json.loads(link) if link else []
        graphs.setdefault((step, rank), {}).setdefault(side, {})[name] = {
            "upnode": up or None,
            "subnodes": json.loads(subs) if subs else [],
            "matched": link[-1] if link else None,
            "grade": index,
            "overflow": overflow or None,
            "distributed": links(json.loads(dist) if dist else None),
            "micro_step": micro or 0,
        }
    return [(f"step{s} rank{r}", graphs[(s, r)]) for s, r in sorted(graphs)]


PGRAD = re.compile(r"\.parameters_grad\.(\d+)$")
DUP_API = re.compile(r"^Distributed\.\w+_rank\d+\.\d+\.(forward|backward)$")


def pgrad_call(name, ref_parent, our_parent):
    """26.2 hangs every P.parameters_grad.N under P's last backward call, graph-ascend under P.backward.N."""
    m = PGRAD.search(name)
    if not m or not ref_parent or not our_parent:
        return False
    module = name[: m.start()]
    return our_parent == f"{module}.backward.{m.group(1)}" and ref_parent.startswith(module + ".backward.")


def tag(kind, name, ref, our, other=None):
    """The docs/COMPATIBILITY.md tag of one difference, or None. `other`: our graph of the other side."""
    if kind == "parent" and pgrad_call(name, ref["upnode"], our["upnode"]):
        return "C26-pgrad-call"
    if kind == "micro step" and PGRAD.search(name) and pgrad_call(name, ref["upnode"], our["upnode"]):
        return "C26-pgrad-call"  # it moves with its parent
    if kind == "children":
        kept = lambda subs: [c for c in subs if not PGRAD.search(c)]  # noqa: E731
        if kept(ref["subnodes"]) == kept(our["subnodes"]):
            return "C26-pgrad-call"
        plain = [re.sub(r"_rank\d+(?=\.\d+\.(forward|backward)$)", "", c) for c in our["subnodes"]]
        if ref["subnodes"] in ([c for c in our["subnodes"] if not DUP_API.match(c)], plain):
            return "C-merge-dup-api"  # DP > 1: another TP rank's own API call, renamed, where 26.2 keeps one
    if kind == "match" and our.get("matched") is None and ref.get("matched") and other is not None:
        peer = other.get(ref["matched"])
        if peer is not None and peer["signature"] != our["signature"]:
            return "C26-match-shape"  # 26.2 pairs by name and ancestors alone
    if kind in ("match", "grade") and PGRAD.search(name) and ref.get("matched") is None and our.get("matched"):
        return "C26-lm-pgrad"  # -lm: 26.2's mapping has no entry for a mapped module's gradients
    if kind == "grade" and ".output." in name:
        # 26.2 grades every row of a module named "….output.…" as an output, and pairs parameter
        # gradients by position (bert_pgrad lists them in another order on each side).
        return "C26-pgrad-order" if PGRAD.search(name) else "C26-output-name"
    if kind == "grade" and name.startswith("Apis_Between_Modules") and our["grade"] is None and ref["grade"] == 0:
        return "C26-structure-collection"  # a structure compare: 26.2 grades the collection, none of its children
    return None


def refused(sample, log):
    """The tag of a case msprobe 26.2.0 refuses, or None."""
    if sample == "l1_api" and "construct.json' is empty" in log:
        return "C-L1"
    return None


def compare(ref_graph, our_graph):
    """Counter of differences: 'documented TAG: what' or 'UNEXPLAINED: what'."""
    diffs, examples = Counter(), {}

    def note(what, example, t):
        key = f"documented {t}: {what}" if t else f"UNEXPLAINED: {what}"
        diffs[key] += 1
        examples.setdefault(key, example)

    # Nodes 26.2 pairs although their items differ in type or shape (C26-match-shape): their grades
    # differ too, and so do those of the API collections holding them.
    shape_only = set()
    r_npu, o_npu, o_bench = ref_graph.get("NPU", {}), our_graph.get("NPU", {}), our_graph.get("Bench", {})
    for name in set(r_npu) & set(o_npu):
        if tag("match", name, r_npu[name], o_npu[name], o_bench) == "C26-match-shape":
            shape_only.add(name)
            if o_npu[name]["upnode"] and o_npu[name]["upnode"].startswith("Apis_Between_Modules"):
                shape_only.add(o_npu[name]["upnode"])

    for side in ("NPU", "Bench"):
        r, o = ref_graph.get(side, {}), our_graph.get(side, {})
        other = our_graph.get("Bench" if side == "NPU" else "NPU", {})
        for name in sorted(set(r) - set(o)):
            note(f"{side} node only in msprobe", name, None)
        for name in sorted(set(o) - set(r)):
            note(f"{side} node only in graph-ascend", name, "C-merge-dup-api" if DUP_API.match(name) else None)
        for name in sorted(set(r) & set(o)):
            a, b = r[name], o[name]
            if a["upnode"] != b["upnode"]:
                note(f"{side} parent", f"{name}: {a['upnode']} / {b['upnode']}", tag("parent", name, a, b))
            if a["subnodes"] != b["subnodes"]:
                note(f"{side} children", name, tag("children", name, a, b))
            if a["matched"] != b["matched"]:
                note(f"{side} match", f"{name}: {a['matched']} / {b['matched']}", tag("match", name, a, b, other))
            ga, gb = a["grade"], b["grade"]
            if side == "NPU" and ((ga is None) != (gb is None) or (ga is not None and float(ga) != float(gb))):
                t = "C26-match-shape" if name in shape_only else tag("grade", name, a, b)
                note("grade", f"{name}: {ga} / {gb}", t)
            if a["overflow"] != b["overflow"]:
                note(f"{side} overflow level", f"{name}: {a['overflow']} / {b['overflow']}", None)
            if a["micro_step"] != b["micro_step"]:
                note(
                    f"{side} micro step",
                    f"{name}: {a['micro_step']} / {b['micro_step']}",
                    tag("micro step", name, a, b),
                )
            if a["distributed"] != b["distributed"]:
                note(
                    f"{side} cross-rank links", f"{name}: {sorted(a['distributed'])} / {sorted(b['distributed'])}", None
                )
    return diffs, examples


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph-ascend", default=os.path.join(ROOT, "build", "bin", "graph-ascend"))
    p.add_argument("--reuse", action="store_true", help="reuse msprobe outputs under bench/out/crosscheck26")
    p.add_argument("--only", default="")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--markdown", action="store_true", help="print the summary table for docs/COMPATIBILITY.md")
    args = p.parse_args()

    table, unexplained = [], 0
    merge_dir = tempfile.mkdtemp(prefix="crosscheck26_merge_")
    merge_configs = crosscheck_merge.layouts(merge_dir)
    for sample, config, extra in CASES:
        extra = [e.format(sample=os.path.join(SAMPLES, sample)) for e in extra]
        name = case_name(sample, config, extra)
        if args.only not in name:
            continue
        slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")
        path = config_path(sample, config, merge_configs)
        db, log = reference(sample, path, extra, os.path.join(OUT, slug, "msprobe"), args.reuse)
        graphs, err = ours(args.graph_ascend, path, extra, os.path.join(OUT, slug, "ours"))
        if db is None and graphs is not None and refused(sample, log):
            table.append((name, "-", "-", f"documented {refused(sample, log)}: msprobe 26.2.0 writes nothing"))
            continue
        if db is None or graphs is None:
            if db is None and graphs is None:
                table.append((name, "-", "-", "both refuse: " + err.strip().splitlines()[-1]))
                continue
            unexplained += 1
            which = "msprobe 26.2.0 wrote nothing" if db is None else "graph-ascend failed: " + err.strip()
            table.append((name, "-", "-", "UNEXPLAINED: " + which))
            if args.verbose:
                print(log[-2000:] if db is None else err)
            continue
        ref = reference_graphs(db)
        if len(ref) != len(graphs):
            unexplained += 1
            table.append((name, "-", "-", f"UNEXPLAINED: {len(ref)} graphs in msprobe, {len(graphs)} in graph-ascend"))
            continue
        for (rname, rg), (oname, og) in zip(ref, graphs):
            diffs, examples = compare(rg, og)
            nodes = "/".join(
                f"{len(rg.get(s, {}))}:{len(og.get(s, {}))}" for s in ("NPU", "Bench") if s in rg or s in og
            )
            what = "; ".join(f"{k}: {v}" for k, v in sorted(diffs.items())) or "identical"
            unexplained += sum(v for k, v in diffs.items() if k.startswith("UNEXPLAINED"))
            table.append((f"{name} {rname}", nodes, sum(diffs.values()), what))
            if args.verbose:
                for k, ex in sorted(examples.items()):
                    print(f"  {name} {rname}: {k}  e.g. {ex}")
    shutil.rmtree(merge_dir, ignore_errors=True)
    if args.markdown:
        print("| case / graph | nodes msprobe:ours (NPU/Bench) | differences | what differs |")
        print("|---|---|---|---|")
    for row in table:
        print(("| " + " | ".join(str(c) for c in row) + " |") if args.markdown else "  ".join(str(c) for c in row))
    print(f"unexplained differences: {unexplained}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
