"""What the Python API answers: plain, immutable records made from the graph service's replies.

Each record is built from one reply message when it is asked for, so iterating a side of 10^6 nodes
holds one page of them at a time, never the whole graph.
"""

from __future__ import annotations  # `X | None` annotations on Python 3.9

import json
from dataclasses import dataclass, field
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple, Union

from graph_ascend_plugin._proto import graph_service_pb2, vis_pb2

Side = Literal["npu", "bench"]
# A dump field's value: None (null), bool, int, float (NaN and +-Inf too), str, or a list/dict (shapes, lists).
FieldValue = Union[None, bool, int, float, str, list, dict]


class GraphAscendError(Exception):
    """A file that cannot be read or answered: `path` is the file, the message says where and what.

    str(error) is one line: "<file>: <place>: <what is wrong>", as the command line prints it.
    """

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}" if path and not message.startswith(path) else message)
        self.path = path


class NodeNotFound(GraphAscendError, KeyError):
    """node(side, name) named a node the side does not have."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


NODE_TYPES = {
    vis_pb2.NODE_MODULE: "module",
    vis_pb2.NODE_API: "api",
    vis_pb2.NODE_MULTI_COLLECTION: "multi collection",
    vis_pb2.NODE_API_COLLECTION: "api collection",
}
OVERFLOW_LEVELS = {
    vis_pb2.OVERFLOW_NONE: "none",
    vis_pb2.OVERFLOW_MEDIUM: "medium",
    vis_pb2.OVERFLOW_HIGH: "high",
    vis_pb2.OVERFLOW_CRITICAL: "critical",
}
ITEM_STATES = {
    vis_pb2.STATE_INPUT: "input",
    vis_pb2.STATE_OUTPUT: "output",
    vis_pb2.STATE_PARAMETERS: "parameters",
    vis_pb2.STATE_PARAMETERS_GRAD: "parameters_grad",
}
# DivergenceReason without its DIVERGENCE_ prefix, lowercase: "outputs", "md5", "dtype_shape", ...
REASONS = {v.number: v.name[len("DIVERGENCE_") :].lower() for v in vis_pb2.DivergenceReason.DESCRIPTOR.values}
# The statistics fields of a dumped item (msprobe's names).
STATISTICS = ("Max", "Min", "Mean", "Norm")


@dataclass(frozen=True)
class Divergence:
    """One entry of a compare's divergence ranking (docs/DIVERGENCE.md), on the NPU side.

    name: the NPU node; reason: why it counts, in words ("outputs differ, inputs agree");
    margin: its output change in times the noise of its kind (the noise rule), None under the
    floor rule (md5, tensor, files before the noise rule) and for unmatched entries.
    """

    name: str
    reason: str
    margin: float | None
    reason_code: str  # "outputs", "md5", "dtype_shape", "overflow", "unmatched"
    input_error: float
    output_error: float
    floor: float
    note: str
    npu_index: int
    bench_index: int | None  # its match on the Bench side

    @staticmethod
    def from_item(item: graph_service_pb2.DivergenceItem) -> Divergence:
        return Divergence(
            name=item.name,
            reason=item.reason_text,
            margin=item.margin if item.has_margin else None,
            reason_code=REASONS.get(item.reason, str(item.reason)),
            input_error=item.input_error,
            output_error=item.output_error,
            floor=item.floor,
            note=item.note,
            npu_index=item.npu_node,
            bench_index=item.bench_node if item.bench_node >= 0 else None,
        )


class Node(NamedTuple):
    """One node of a side, as the hierarchy index holds it (no items: see GraphFile.node).

    A named tuple, so that a side of 10^6 nodes iterates in seconds; its field `index` hides tuple.index.
    """

    side: Side
    index: int  # type: ignore[assignment]  # node index on its side; 0 is the root
    name: str
    type: str  # "module", "api", "api collection", "multi collection"
    parent: int | None  # None for the root
    depth: int
    micro_step: int | None
    child_count: int
    precision_index: float | None  # None: not compared (a build, unmatched, no statistics)
    grade_index: float | None  # msprobe 26's grade (0 / 0.5 / 1), None without
    overflow: str  # "none", "medium", "high", "critical"
    matched: int | None  # the node index of its match on the other side
    matched_name: str | None


def listed_nodes(side: Side, reply: graph_service_pb2.ListNodesReply) -> Iterator[Node]:
    """The nodes of a ListNodes reply, read column by column (each column converted at once)."""
    types = [NODE_TYPES.get(t, str(t)) for t in reply.node_type]
    overflow = [OVERFLOW_LEVELS.get(o, str(o)) for o in reply.overflow]
    columns = zip(
        reply.index,
        reply.name,
        types,
        reply.parent,
        reply.depth,
        reply.micro_step,
        reply.child_count,
        reply.precision_index,
        reply.grade_index,
        overflow,
        reply.matched,
        reply.matched_name,
    )
    for index, name, kind, parent, depth, micro, children, precision, grade, over, matched, peer in columns:
        yield Node(
            side,
            index,
            name,
            kind,
            parent if parent >= 0 else None,
            depth,
            micro if micro >= 0 else None,
            children,
            None if precision != precision else precision,
            None if grade != grade else grade,
            over,
            matched if matched >= 0 else None,
            peer if matched >= 0 else None,
        )


class Match(NamedTuple):
    """A matched pair of a compare: an NPU node and its Bench node."""

    npu: str
    bench: str
    npu_index: int
    bench_index: int
    precision_index: float | None


def matches_of(reply: graph_service_pb2.ListNodesReply) -> Iterator[Match]:
    """The pairs of a ListNodes reply of matched NPU nodes."""
    for npu, bench, i, j, precision in zip(
        reply.name, reply.matched_name, reply.index, reply.matched, reply.precision_index
    ):
        yield Match(npu, bench, i, j, None if precision != precision else precision)


def field_value(value: vis_pb2.Value) -> FieldValue:
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null":
        return None
    if kind == "json":
        return json.loads(value.json)
    return getattr(value, kind)


@dataclass(frozen=True)
class Item:
    """One dumped leaf of a node: an input, output, parameter or parameter gradient.

    fields: the dump's fields in dump order (type, dtype, shape, Max, Min, Mean, Norm, md5, ...);
    metrics: the compare's metrics of an NPU item of a matched pair, a number where it has one,
    else msprobe's text ("N/A", "unsupported").
    """

    key: str  # "Module.fc.Linear.forward.0.input.0"
    state: str  # "input", "output", "parameters", "parameters_grad"
    is_null: bool
    fields: dict[str, FieldValue]
    metrics: dict[str, float | str] = field(default_factory=dict)

    @property
    def statistics(self) -> dict[str, float]:
        """Max, Min, Mean and Norm, those the item has as numbers (NaN and +-Inf included)."""
        out = {}
        for name in STATISTICS:
            v = self.fields.get(name)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out[name] = float(v)
            elif isinstance(v, str):
                try:
                    out[name] = float(v)
                except ValueError:
                    pass
        return out

    @staticmethod
    def from_proto(item: vis_pb2.Item) -> Item:
        metrics: dict[str, float | str] = {}
        for m in item.metric:
            metrics[m.name] = m.value if m.has_value else m.text
        return Item(
            key=item.key,
            state=ITEM_STATES.get(item.state, str(item.state)),
            is_null=item.is_null,
            fields={f.name: field_value(f.value) for f in item.field},
            metrics=metrics,
        )


@dataclass(frozen=True)
class NodeDetail:
    """A node with its items (GraphFile.node): inputs, outputs, its call stack and, on a compare, its match's."""

    node: Node
    inputs: list[Item]  # args, kwargs, parameters, parameter gradients
    outputs: list[Item]
    stack: list[str]
    md5_result: str  # md5 mode: "pass" / "Different", else ""
    suggestions: dict[str, str]
    matched: NodeDetail | None  # the other side's node and items

    @property
    def items(self) -> list[Item]:
        """inputs then outputs."""
        return self.inputs + self.outputs


def node_detail(
    node: Node, detail: vis_pb2.NodeDetail, stack: Any, matched: NodeDetail | None = None
) -> NodeDetail:
    return NodeDetail(
        node=node,
        inputs=[Item.from_proto(i) for i in detail.input],
        outputs=[Item.from_proto(i) for i in detail.output],
        stack=list(stack),
        md5_result=detail.md5_result,
        suggestions=dict(detail.suggestions),
        matched=matched,
    )
