"""Scales a real msprobe transformer sample up to LLM size, in real msprobe format.

    python3 bench/scale/scale_sample.py --case samples/gpt_statistics --nodes 100000 --out DIR \
        [--steps S] [--ranks R] [--culprit-layer C]

Reads the case's npu/ and bench/ dumps (step*/rank*/{construct,dump,stack}.json, task statistics or
structure), finds its decoder layers (module names containing `.layers.<n>.`) and writes
DIR/{npu,bench}/step<k>/rank<r>/ with as many decoder layers as it takes to reach about --nodes
graph nodes (construct.json and dump.json names) per step and rank, plus DIR/build.json,
DIR/compare.json, DIR/batch.json (when S or R > 1) and DIR/scale_info.json.

What is kept consistent, so that the output is what msprobe would have written for the deeper model:
  * names: a layer copy j of source layer s renames `.layers.<s>.` to `.layers.<j>.` in module names;
  * call counts: API names (`Functional.linear.<n>.forward`) are renumbered in execution order,
    per API, as msprobe counts them; a backward entry keeps its forward's number; optimizer ops are
    attributed to the layer whose parameters they update;
  * order and nesting: forward layers ascend, backward layers descend, each copy keeps its source
    layer's entries, parents (construct.json) and statistics; global entries stay where they were;
  * stack.json: the grouped format; a copy's names join its source names' stack group;
  * formatting: the files are byte-for-byte `json.dumps(obj, indent=1)` like msprobe's (so scaling a
    sample to its own size reproduces it exactly).
The culprit (the npu side's first entry differing from bench) stays the only divergence point: copies
before it come from layers before the source culprit layer, copy C (default: at the same relative
depth) is the culprit layer, copies after it come from the layers after it. Steps and ranks are
copies of the source ones (step k <- source step k mod S_src).

Standard library only; the output is streamed (memory grows with the sample and the layer count,
not with the node count).
"""

import argparse
import json
import os
import re
import sys

LAYER_RE = re.compile(r"\.layers\.(\d+)\.")
API_PREFIXES = {
    "Tensor",
    "Torch",
    "Functional",
    "NPU",
    "VF",
    "Aten",
    "Distributed",
    "MindSpeed",
    "Mint",
    "MintFunctional",
    "Primitive",
    "Jit",
}
GLOBAL = -1


class ScaleError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ScaleError(f"{path}: {e}") from None


def api_parts(name):
    """('Functional.linear', 11, 'forward') for an API dump name, else None."""
    parts = name.split(".")
    if len(parts) >= 4 and parts[0] in API_PREFIXES and parts[-2].isdigit() and parts[-1] in ("forward", "backward"):
        return ".".join(parts[:-2]), int(parts[-2]), parts[-1]
    return None


def numbered_dirs(path, prefix):
    names = [n for n in os.listdir(path) if re.fullmatch(prefix + r"\d+", n)]
    return sorted(names, key=lambda n: int(n[len(prefix) :]))


class StepDump:
    """One source step/rank folder: its three files and each name's decoder layer."""

    def __init__(self, folder):
        self.folder = folder
        self.construct = load(os.path.join(folder, "construct.json"))
        dump = load(os.path.join(folder, "dump.json"))
        self.stack = load(os.path.join(folder, "stack.json"))
        if not isinstance(dump, dict) or not isinstance(dump.get("data"), dict):
            raise ScaleError(f"{folder}/dump.json: no 'data' object")
        if dump.get("task") == "tensor":
            raise ScaleError(f"{folder}/dump.json: task tensor is not scaled (tensor files); use a statistics case")
        self.header = {k: v for k, v in dump.items() if k != "data"}
        self.data = dump["data"]
        self.layer = {}
        self._assign_layers()
        self.layers = sorted({v for v in self.layer.values() if v != GLOBAL})

    def names(self):
        return list(dict.fromkeys(list(self.construct) + list(self.data)))

    def _module_layer(self, name):
        m = LAYER_RE.search(name) if name and not api_parts(name) else None
        return int(m.group(1)) if m else GLOBAL

    def _assign_layers(self):
        for name in self.names():
            if api_parts(name):
                self.layer[name] = self._module_layer(self.construct.get(name))
            else:
                self.layer[name] = self._module_layer(name)
        self._assign_optimizer_layers()

    def _assign_optimizer_layers(self):
        """Optimizer ops (parent 'optimizer') come in equal chunks per parameter, in parameter order."""
        ops = [n for n, p in self.construct.items() if p == "optimizer" and api_parts(n)]
        params = []  # (layer, shape) per parameter, from each module's first forward call
        for name, entry in self.data.items():
            if name.endswith(".forward.0") and not api_parts(name) and isinstance(entry, dict):
                for leaf in (entry.get("parameters") or {}).values():
                    params.append((self._module_layer(name), tuple(leaf.get("shape") or ()) if leaf else ()))
        if not ops or not params or len(ops) % len(params):
            return
        k = len(ops) // len(params)
        chunk_shapes = [self._chunk_shape(ops[i : i + k]) for i in range(0, len(ops), k)]
        layer_params = [p for p in params if p[0] != GLOBAL]
        layers = sorted({p[0] for p in layer_params})
        if not layers:
            return
        per_layer = len(layer_params) // len(layers)
        want = sorted(s for l, s in layer_params if l == layers[0])
        for pre in range(len(chunk_shapes) - per_layer * len(layers) + 1):
            groups = [chunk_shapes[pre + i * per_layer : pre + (i + 1) * per_layer] for i in range(len(layers))]
            if all(sorted(g) == want for g in groups):
                for i, layer in enumerate(layers):
                    for c in range(pre + i * per_layer, pre + (i + 1) * per_layer):
                        for op in ops[c * k : (c + 1) * k]:
                            self.layer[op] = layer
                return

    def _chunk_shape(self, ops):
        """The parameter shape a chunk of optimizer ops works on: their most common first-input
        shape (AdamW starts each parameter with a scalar step counter update)."""
        shapes = []
        for op in ops:
            args = (self.data.get(op) or {}).get("input_args") or [None]
            if isinstance(args[0], dict) and args[0].get("shape"):
                shapes.append(tuple(args[0]["shape"]))
        return max(set(shapes), key=shapes.count) if shapes else ()


def runs(names, layer_of):
    """Consecutive names grouped by layer: [(layer, [names])]."""
    result = []
    for name in names:
        layer = layer_of[name]
        if result and result[-1][0] == layer:
            result[-1][1].append(name)
        else:
            result.append((layer, [name]))
    return result


def blocks(names, layer_of, all_layers=None):
    """Splits names into segments: ('global', names) and ('layers', direction, {layer: names}).

    A layer block is a maximal sequence of layer runs with strictly ascending (forward, optimizer)
    or descending (backward) layer numbers. With all_layers, every block must hold all of them."""
    segments = []
    pending = []

    def flush():
        if not pending:
            return
        layers = [layer for layer, _ in pending]
        direction = 1 if len(layers) == 1 or layers[1] > layers[0] else -1
        if all_layers is not None and sorted(layers) != all_layers:
            raise ScaleError(f"layers {layers} interleave with other entries near {pending[0][1][0]!r}")
        segments.append(("layers", direction, dict(pending)))
        pending.clear()

    for layer, group in runs(names, layer_of):
        if layer == GLOBAL:
            flush()
            segments.append(("global", group))
            continue
        if pending:
            step = layer - pending[-1][0]
            direction = 1 if len(pending) == 1 else pending[1][0] - pending[0][0]
            if step == 0 or (len(pending) > 1 and (step > 0) != (direction > 0)):
                flush()
        pending.append((layer, group))
    flush()
    return segments


class Plan:
    """Which source layer each of the new layers copies, and where the culprit goes."""

    def __init__(self, source_layers, culprit_layer, new_layers, culprit_at):
        self.count = new_layers
        if culprit_layer is None or culprit_layer not in source_layers:
            self.culprit_at = None
            self.source = [source_layers[j % len(source_layers)] for j in range(new_layers)]
            return
        before = [l for l in source_layers if l < culprit_layer]
        after = [l for l in source_layers if l > culprit_layer]
        if culprit_at is None:
            span = max(len(source_layers) - 1, 1)
            culprit_at = round(source_layers.index(culprit_layer) / span * (new_layers - 1))
        culprit_at = min(max(culprit_at, 0), new_layers - 1)
        if not before:
            culprit_at = 0
        if not after:
            culprit_at = new_layers - 1
        self.culprit_at = culprit_at
        self.source = [
            before[j % len(before)]
            if j < culprit_at
            else culprit_layer
            if j == culprit_at
            else after[(j - culprit_at - 1) % len(after)]
            for j in range(new_layers)
        ]


class Renamer:
    """New names for one scaled step: module layer numbers and API call counts in execution order."""

    def __init__(self, step, plan):
        self.step = step
        self.plan = plan
        self.next_count = {}
        self.global_map = {}  # (api, old count) -> new count, for names outside the layers
        self.base = {}  # (first block, layer copy, api) -> first new count of that copy
        # For each layer name (layer, api, old count): the block it first appears in, and its rank
        # among the counts of that api the layer uses first in that block.
        self.first_block = {}
        self.rank = {}
        self.width = {}

    def prepare(self, order):
        """order: [(block id, layer or GLOBAL, source names)] in execution order."""
        counts = {}
        for block_id, layer, names in order:
            if layer == GLOBAL:
                continue
            for name in names:
                parts = api_parts(name)
                if parts and (layer, parts[0], parts[1]) not in self.first_block:
                    self.first_block[(layer, parts[0], parts[1])] = block_id
                    counts.setdefault((block_id, layer, parts[0]), []).append(parts[1])
        for key, values in counts.items():
            values = sorted(set(values))
            self.width[key] = len(values)
            for i, value in enumerate(values):
                self.rank[(key, value)] = i

    def assign(self, name, copy, layer):
        parts = api_parts(name)
        if not parts:
            return
        api, old, _ = parts
        if copy == GLOBAL:
            if (api, old) not in self.global_map:
                self.global_map[(api, old)] = self._take(api, 1)
            return
        block_id = self.first_block[(layer, api, old)]
        key = (block_id, copy, api)
        if key not in self.base:
            self.base[key] = self._take(api, self.width[(block_id, layer, api)])

    def _take(self, api, n):
        first = self.next_count.get(api, 0)
        self.next_count[api] = first + n
        return first

    def rename(self, name, copy, layer):
        if name is None:
            return None
        parts = api_parts(name)
        if parts:
            api, old, direction = parts
            if copy == GLOBAL or self.step.layer.get(name, GLOBAL) == GLOBAL:
                new = self.global_map[(api, old)]
            else:
                block_id = self.first_block[(layer, api, old)]
                new = self.base[(block_id, copy, api)] + self.rank[((block_id, layer, api), old)]
            return f"{api}.{new}.{direction}"
        if copy != GLOBAL and LAYER_RE.search(name):
            return LAYER_RE.sub(f".layers.{copy}.", name, count=1)
        return name


def expand(segments, plan):
    """Yields (copy, source layer, source names) in the scaled execution order."""
    for segment in segments:
        if segment[0] == "global":
            yield GLOBAL, GLOBAL, segment[1]
            continue
        _, direction, by_layer = segment
        copies = range(plan.count) if direction > 0 else range(plan.count - 1, -1, -1)
        for j in copies:
            source = plan.source[j]
            if source in by_layer:
                yield j, source, by_layer[source]


class StepScaler:
    def __init__(self, step, plan):
        self.step = step
        self.plan = plan
        all_layers = step.layers
        self.construct_segments = blocks(list(step.construct), step.layer, all_layers)
        self.data_segments = blocks(list(step.data), step.layer, all_layers)
        self.renamer = Renamer(step, plan)
        order = []
        for block_id, segment in enumerate(self.construct_segments):
            if segment[0] == "layers":
                order.extend((block_id, layer, names) for layer, names in segment[2].items())
        extra = len(self.construct_segments)
        for block_id, segment in enumerate(self.data_segments):
            if segment[0] == "layers":
                order.extend((extra + block_id, layer, names) for layer, names in segment[2].items())
        self.renamer.prepare(order)
        for segments in (self.construct_segments, self.data_segments):
            for copy, layer, names in expand(segments, plan):
                for name in names:
                    self.renamer.assign(name, copy, layer)

    def node_count(self):
        """Graph nodes of the scaled step: distinct construct.json and dump.json names."""
        return node_count(self.step, self.plan)

    def write(self, folder):
        os.makedirs(folder, exist_ok=True)
        rename = self.renamer.rename
        with open(os.path.join(folder, "construct.json.tmp"), "w") as f:
            f.write("{")
            first = True
            for copy, layer, group in expand(self.construct_segments, self.plan):
                for name in group:
                    parent = self.step.construct[name]
                    parent_copy = (
                        copy if parent is not None and self.step.layer.get(parent, GLOBAL) != GLOBAL else GLOBAL
                    )
                    f.write(
                        ("\n" if first else ",\n")
                        + " "
                        + json.dumps(rename(name, copy, layer))
                        + ": "
                        + json.dumps(rename(parent, parent_copy, layer) if parent else parent)
                    )
                    first = False
            f.write("\n}" if not first else "}")
        with open(os.path.join(folder, "dump.json.tmp"), "w") as f:
            header = json.dumps(self.step.header, indent=1)
            f.write(header[:-2] + ',\n "data": {')
            first = True
            rendered = {}
            for copy, layer, group in expand(self.data_segments, self.plan):
                for name in group:
                    if name not in rendered:
                        rendered[name] = json.dumps(self.step.data[name], indent=1).replace("\n", "\n  ")
                    f.write(
                        ("\n" if first else ",\n")
                        + "  "
                        + json.dumps(rename(name, copy, layer))
                        + ": "
                        + rendered[name]
                    )
                    first = False
            f.write("\n }\n}" if not first else "}\n}")
        with open(os.path.join(folder, "stack.json.tmp"), "w") as f:
            f.write("{")
            first = True
            for key, group in self.step.stack.items():
                if not (isinstance(group, list) and len(group) == 2 and isinstance(group[0], list)):
                    f.write(
                        ("\n" if first else ",\n")
                        + " "
                        + json.dumps(key)
                        + ": "
                        + json.dumps(group, indent=1).replace("\n", "\n ")
                    )
                    first = False
                    continue
                members = blocks(group[0], self.step.layer)
                f.write(("\n" if first else ",\n") + " " + json.dumps(key) + ": [\n  [")
                inner_first = True
                for copy, layer, names in expand(members, self.plan):
                    for name in names:
                        f.write(("\n" if inner_first else ",\n") + "   " + json.dumps(rename(name, copy, layer)))
                        inner_first = False
                f.write("\n  ],\n  " if not inner_first else "],\n  ")
                f.write(json.dumps(group[1], indent=1).replace("\n", "\n  ") + "\n ]")
                first = False
            f.write("\n}" if not first else "}")
        for name in ("construct.json", "dump.json", "stack.json"):
            os.replace(os.path.join(folder, name + ".tmp"), os.path.join(folder, name))


def first_difference(npu, bench):
    for name, entry in npu.data.items():
        if name in bench.data and json.dumps(entry) != json.dumps(bench.data[name]):
            return name
    return None


def side_layout(case, side):
    root = os.path.join(case, side)
    if not os.path.isdir(root):
        raise ScaleError(f"{root}: missing")
    steps = numbered_dirs(root, "step")
    if not steps:
        raise ScaleError(f"{root}: no step<N> folders")
    layout = []
    for step in steps:
        ranks = numbered_dirs(os.path.join(root, step), "rank")
        if not ranks:
            raise ScaleError(f"{root}/{step}: no rank<N> folders")
        layout.append((step, ranks))
    return layout


def node_count(step, plan):
    per_layer = {}
    for layer in step.layer.values():
        per_layer[layer] = per_layer.get(layer, 0) + 1
    return per_layer.get(GLOBAL, 0) + sum(per_layer.get(source, 0) for source in plan.source)


def layers_for(step, nodes):
    """Layer count whose scaled step has about `nodes` names (never fewer layers than the source)."""
    in_layers = sum(1 for v in step.layer.values() if v != GLOBAL)
    per_layer = max(1, in_layers / len(step.layers))
    return max(len(step.layers), round((nodes - (len(step.layer) - in_layers)) / per_layer))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--case", required=True, help="sample case folder with npu/ and bench/ (e.g. samples/gpt_statistics)"
    )
    parser.add_argument("--nodes", type=int, required=True, help="target graph nodes per side, per step and rank")
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--culprit-layer", type=int, help="layer index of the culprit in the output")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ScaleError as e:
        print(f"scale_sample: error: {e}", file=sys.stderr)
        return 1


def run(args):
    case = os.path.abspath(args.case)
    npu_layout = side_layout(case, "npu")
    bench_layout = side_layout(case, "bench")
    first_step, first_ranks = npu_layout[0]
    npu0 = StepDump(os.path.join(case, "npu", first_step, first_ranks[0]))
    bench0 = StepDump(os.path.join(case, "bench", first_step, dict(bench_layout)[first_step][0]))
    if not npu0.layers:
        raise ScaleError(f"{npu0.folder}: no decoder layers (module names with '.layers.<n>.')")
    culprit_name = first_difference(npu0, bench0)
    culprit_layer = npu0.layer.get(culprit_name) if culprit_name else None
    new_layers = layers_for(npu0, args.nodes)
    plan = Plan(npu0.layers, culprit_layer if culprit_layer != GLOBAL else None, new_layers, args.culprit_layer)

    out = os.path.abspath(args.out)
    info = {
        "source": case,
        "layers": new_layers,
        "source_layers": npu0.layers,
        "steps": args.steps,
        "ranks": args.ranks,
        "culprit_layer": plan.culprit_at,
        "source_culprit": culprit_name,
        "nodes_per_graph": {},
    }
    for side, layout in (("npu", npu_layout), ("bench", bench_layout)):
        for k in range(args.steps):
            src_step, src_ranks = layout[k % len(layout)]
            for r in range(args.ranks):
                src_rank = src_ranks[r % len(src_ranks)]
                step = StepDump(os.path.join(case, side, src_step, src_rank))
                if step.layers != npu0.layers:
                    raise ScaleError(f"{step.folder}: layers {step.layers} differ from {npu0.folder}")
                scaler = StepScaler(step, plan)
                scaler.write(os.path.join(out, side, f"step{k}", f"rank{r}"))
                if k == 0 and r == 0:
                    info["nodes_per_graph"][side] = scaler.node_count()
                    if side == "npu" and culprit_name:
                        info["culprit"] = scaler.renamer.rename(
                            culprit_name,
                            plan.culprit_at if culprit_layer not in (None, GLOBAL) else GLOBAL,
                            culprit_layer,
                        )
    write_json(os.path.join(out, "build.json"), {"npu_path": "npu/step0/rank0"})
    write_json(os.path.join(out, "compare.json"), {"npu_path": "npu/step0/rank0", "bench_path": "bench/step0/rank0"})
    if args.steps > 1:
        write_json(os.path.join(out, "batch.json"), {"npu_path": "npu", "bench_path": "bench"})
    elif args.ranks > 1:
        write_json(os.path.join(out, "batch.json"), {"npu_path": "npu/step0", "bench_path": "bench/step0"})
    write_json(os.path.join(out, "scale_info.json"), info)
    print(json.dumps(info))
    return 0


def write_json(path, content):
    with open(path + ".tmp", "w") as f:
        json.dump(content, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    sys.exit(main())
