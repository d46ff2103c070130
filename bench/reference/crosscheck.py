#!/usr/bin/env python3
"""Cross-checks graph-ascend against real msprobe on the committed samples.

For each compare.json / build.json / batch.json under samples/, runs msprobe's
graph builder (bench/reference/run_msprobe.sh, JSON-era 8.1.2 by default) and
`graph-ascend graph` + `graph-ascend export`, then compares, file by file:
node sets, hierarchy (upnode and subnodes), match pairs (matched_node_link),
precision indices, overflow levels, micro steps, stacks and every item value.

    python3 bench/reference/crosscheck.py [--version 8.1.2] [--only CASE] [-- EXTRA_FLAGS]

Prints one line per output file and a markdown summary table (pasted into
docs/COMPATIBILITY.md). Exit status 1 if any difference is found that is not
a documented one (see DOCUMENTED below).
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Keys msprobe 8.1.x does not write (it strips requires_grad from items and
# has no requires_grad comparison); the REF snapshot and graph-ascend do.
VERSION_ONLY_KEYS = {"8.1.2": {"requires_grad", "Requires_grad Consistent"}}


PGRAD_CALL = re.compile(r"\.parameters_grad\.\d+$")


def documented(category, example):
    """The docs/COMPATIBILITY.md entry a difference falls under, or None."""
    text = json.dumps(example)
    if "node only in graph-ascend" in category and PGRAD_CALL.search(example):
        return "C-pgrad"
    if category.endswith("subnodes"):
        name, ref, ours = example
        if ref == [] and name == "DefaultModel":
            return "C-L1"
        if [c for c in ours if not PGRAD_CALL.search(c)] == ref:
            return "C-pgrad"
    if category.endswith("item values"):
        name, item, ref, ours = example
        if item.rsplit(".", 1)[-1] in ("src", "dst", "group_src", "group_dst"):
            return "C-rank-arg"
        changed = {k for k in set(ref) | set(ours) if ref.get(k) != ours.get(k)}
        if changed == {"MaxRelativeErr"}:
            return "C-float64"
        if " " in ref.values():
            return "C-column-shift"
    if "node only in graph-ascend" in category:
        top = example.split(".")[0]
        return "C-L1" if top in ("Functional", "Tensor", "Torch", "Distributed", "Apis_Between_Modules") else None
    return None


def load(path):
    with open(path) as f:
        return json.load(f)


def graphs(doc):
    if "NPU" in doc:
        return {"NPU": doc["NPU"], "Bench": doc["Bench"]}
    return {"NPU": doc}


def close(a, b):
    if a is None or b is None:
        return a is b
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)))


def compare_docs(ref, ours, ignore_keys):
    """Returns {category: [count, first example]}."""
    diffs = {}

    def note(cat, example):
        tag = documented(cat, example)
        if tag:
            cat = "documented " + tag
        entry = diffs.setdefault(cat, [0, example])
        entry[0] += 1

    for key in ("MicroSteps", "task", "OverflowCheck", "Colors", "ToolTip"):
        if ref.get(key) != ours.get(key):
            note("top-level " + key, (ref.get(key), ours.get(key)))
    rg, og = graphs(ref), graphs(ours)
    stats = {}
    for side, rgraph in rg.items():
        rn, on = rgraph["node"], og[side]["node"]
        stats[side] = len(rn)
        for name in set(rn) - set(on):
            note(side + " node missing in graph-ascend", name)
        for name in set(on) - set(rn):
            note(side + " node only in graph-ascend", name)
        for name, a in rn.items():
            b = on.get(name)
            if b is None:
                continue
            for field in ("upnode", "subnodes", "node_type", "matched_node_link", "stack_info"):
                if a.get(field) != b.get(field):
                    note(side + " " + field, (name, a.get(field), b.get(field)))
            if a.get("micro_step_id") != b.get("micro_step_id"):
                note(side + " micro_step_id", (name, a.get("micro_step_id"), b.get("micro_step_id")))
            for k in ("precision_index", "overflow_level", "Result"):
                if not close(a["data"].get(k), b["data"].get(k)):
                    note(side + " " + k, (name, a["data"].get(k), b["data"].get(k)))
            if a.get("matched_distributed") != b.get("matched_distributed"):
                note(side + " matched_distributed", (name, a.get("matched_distributed"), b.get("matched_distributed")))
            for io in ("input_data", "output_data"):
                if list(a[io]) != list(b[io]):
                    note(side + " item keys", (name, io, list(a[io]), list(b[io])))
                    continue
                for item, av in a[io].items():
                    x = {k: v for k, v in av.items() if k not in ignore_keys}
                    y = {k: v for k, v in b[io][item].items() if k not in ignore_keys}
                    if x != y:
                        note(side + " item values", (name, item, x, y))
    return diffs, stats


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, capture_output=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default="8.1.2")
    ap.add_argument("--only", action="append", help="case folder name (repeatable)")
    ap.add_argument("--graph-ascend", default=os.path.join(ROOT, "build", "bin", "graph-ascend"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "crosscheck"))
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--all-variants", action="store_true",
                    help="also run -f, -lm, -oc and -cs on the samples they apply to")
    ap.add_argument("extra", nargs="*", help="flags for both tools, e.g. -oc")
    args = ap.parse_args()
    ignore = VERSION_ONLY_KEYS.get(args.version, set())
    configs = sorted(glob.glob(os.path.join(ROOT, "samples", "*", "*.json")))
    configs = [c for c in configs if os.path.basename(c) in ("compare.json", "build.json", "batch.json")]
    if args.only:
        configs = [c for c in configs if os.path.basename(os.path.dirname(c)) in args.only]
    runs = [(c, args.extra) for c in configs]
    if args.all_variants:
        yaml = os.path.join(ROOT, "samples", "layer_mapping", "layer_mapping.yaml")
        for c in configs:
            case, kind = os.path.basename(os.path.dirname(c)), os.path.basename(c)
            if kind != "build.json" and case in ("cnn_statistics", "gpt_statistics", "layer_mapping", "dist_gloo"):
                runs.append((c, ["-f"]))
            if case == "layer_mapping" and kind == "compare.json":
                runs.append((c, ["-lm", yaml]))
            if case in ("overflow_nan", "cnn_statistics", "dist_gloo"):
                runs.append((c, ["-oc"]))
            if case == "gpt_statistics" and kind != "batch.json":
                runs.append((c, ["-cs"]))
    rows = []
    failed = False
    for config, extra in runs:
        args.extra = extra
        case = os.path.basename(os.path.dirname(config))
        label = case + "/" + os.path.basename(config)
        tag = "-".join([case, os.path.basename(config)[:-5]] + [os.path.basename(a).strip("-") for a in args.extra])
        label = label + ("" if not args.extra else " " + " ".join(
            os.path.basename(a) if os.path.isabs(a) else a for a in args.extra))
        ref_dir = os.path.join(args.out, "ref-" + args.version, tag)
        our_dir = os.path.join(args.out, "ours", tag)
        shutil.rmtree(ref_dir, ignore_errors=True)
        shutil.rmtree(our_dir, ignore_errors=True)
        cmd = [os.path.join(ROOT, "bench", "reference", "run_msprobe.sh"), "--version", args.version, config, ref_dir]
        if args.extra:
            cmd += ["--"] + args.extra
        r = run(cmd)
        ref_files = sorted(glob.glob(os.path.join(ref_dir, "*.vis")))
        o = run([args.graph_ascend, "graph", "-i", config, "-o", our_dir] + args.extra)
        our_files = sorted(glob.glob(os.path.join(our_dir, "*.vis")))
        if not ref_files or o.returncode != 0:
            msg = "msprobe failed: " + (r.stdout + r.stderr).strip().splitlines()[-1][:200] if not ref_files else ""
            msg += (" graph-ascend: " + o.stderr.strip()[:200]) if o.returncode != 0 else (
                " graph-ascend wrote %d file(s)" % len(our_files))
            rows.append((label, "-", "-", msg))
            print(label, "|", msg)
            continue
        strip = lambda p: re.sub(r"_\d{14}\.vis$", "", os.path.basename(p))
        ours_by = {strip(p): p for p in our_files}
        for ref_file in ref_files:
            key = strip(ref_file)
            if key not in ours_by:
                rows.append((label + " " + key, "-", "-", "no matching graph-ascend file"))
                failed = True
                continue
            exported = ours_by[key] + ".json"
            e = run([args.graph_ascend, "export", ours_by[key], "-o", exported])
            if e.returncode != 0:
                rows.append((label + " " + key, "-", "-", "export failed: " + e.stderr.strip()))
                failed = True
                continue
            diffs, stats = compare_docs(load(ref_file), load(exported), ignore)
            nodes = "/".join(str(v) for v in stats.values())
            summary = "identical" if not diffs else "; ".join("%s: %d" % (k, v[0]) for k, v in sorted(diffs.items()))
            failed |= any(not k.startswith("documented") for k in diffs)
            rows.append((label + " " + key, nodes, str(sum(v[0] for v in diffs.values())), summary))
            print(label, key, "|", nodes, "|", summary)
            if args.verbose:
                for k, v in sorted(diffs.items()):
                    print("   ", k, str(v[1])[:400])
    print()
    print("| sample / output | nodes (NPU/Bench) | differences | what differs |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
