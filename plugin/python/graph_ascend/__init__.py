"""graph_ascend: graph-ascend's compare files from Python, for notebooks and scripts.

    import graph_ascend

    with graph_ascend.open("out/compare_20250101120000.vis") as f:
        first = f.first_divergence()      # None: no divergence beyond noise
        if first is not None:
            print(first.name, first.reason, first.margin)
        for node in f.nodes("npu"):       # a page at a time, never the whole graph
            ...
        detail = f.node("npu", first.name)  # its items and their statistics

The file is read by graph-ascend's own C++ readers in a private graph-ascend-server, the service the
GRAPH_ASCEND page uses; msprobe's .vis.db and JSON .vis are converted once, as the page does.
docs/PYTHON_API.md describes every call.
"""

from graph_ascend.graph_file import GraphFile, open
from graph_ascend.records import (
    Divergence,
    FieldValue,
    GraphAscendError,
    Item,
    Match,
    Node,
    NodeDetail,
    NodeNotFound,
    Side,
)

__all__ = [
    "Divergence",
    "FieldValue",
    "GraphAscendError",
    "GraphFile",
    "Item",
    "Match",
    "Node",
    "NodeDetail",
    "NodeNotFound",
    "Side",
    "open",
]
