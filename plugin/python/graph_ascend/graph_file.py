"""graph_ascend.open(path): a .vis (or msprobe's .vis.db / JSON .vis) read through graph-ascend-server.

The file is read by the same C++ readers the page uses: a private graph-ascend-server (the plugin's
ServerProcess, on a Unix socket in a private temporary folder) serves the file's folder, opens the file
into its index (msprobe's files converted once, as the page converts them) and answers the calls below
with its RPCs. Python holds a page of nodes at a time, never the whole graph. close() (or leaving the
`with` block, or the interpreter's exit) stops the server.
"""

from __future__ import annotations  # `X | None` annotations on Python 3.9

import atexit
import builtins
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from typing import Any, Callable, TypeVar

import grpc

from graph_ascend.records import (
    Divergence,
    GraphAscendError,
    Match,
    Node,
    NodeDetail,
    NodeNotFound,
    Side,
    listed_nodes,
    matches_of,
    node_detail,
)
from graph_ascend_plugin._proto import graph_service_pb2, vis_pb2
from graph_ascend_plugin.server_process import CallLost, CallRefused, ServerProcess, ServerUnavailable

PAGE = 10000  # nodes a call; the server answers at most 100000
OPEN_TIMEOUT_S = 3600.0  # a big .vis.db converts for minutes
_SIDES = {"npu": vis_pb2.SIDE_NPU, "bench": vis_pb2.SIDE_BENCH}
_FOREIGN = (".vis.db",)
T = TypeVar("T")


def open(  # noqa: A001 - the API's name, as builtins.open is for files
    path: str | os.PathLike[str],
    *,
    graph: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> GraphFile:
    """Opens a graph-ascend .vis, or msprobe's .vis.db / JSON .vis (converted once into a cache).

    graph: the graph of a multi-graph .vis.db ("step0_rank1"); the first one when None.
    cache_dir: where msprobe's files are converted; default the graph service's own cache
    ($XDG_CACHE_HOME/graph-ascend, else ~/.cache/graph-ascend), shared with the page.
    Raises FileNotFoundError when there is no such file, GraphAscendError when it cannot be read.
    Use it in a `with` block, or call close(), to stop its graph service.
    """
    return GraphFile(path, graph=graph, cache_dir=cache_dir)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _cache_root() -> str:
    """The service's default cache root (plugin/service/foreign_files.h, DefaultCacheRoot)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return os.path.join(xdg, "graph-ascend") if xdg else os.path.join(os.path.expanduser("~"), ".cache", "graph-ascend")


def _starts_like_json(real: str) -> bool:
    """Whether the file starts like msprobe's JSON .vis (a .vis of ours starts with its magic bytes)."""
    try:
        with builtins.open(real, "rb") as f:
            return f.read(64).lstrip()[:1] == b"{"
    except OSError:
        return False


def _private_cache(folder: str) -> str:
    """A new empty folder outside `folder` (the service refuses a cache inside the folder it serves)."""
    for parent in (tempfile.gettempdir(), "/dev/shm", "/var/tmp", os.path.expanduser("~")):
        if os.path.isdir(parent) and not _inside(os.path.realpath(parent), folder):
            return tempfile.mkdtemp(prefix="graph-ascend-api-", dir=parent)
    return tempfile.mkdtemp(prefix="graph-ascend-api-")  # the service says why it cannot serve


class GraphFile:
    """One open graph file. Each method answers from the file as graph-ascend reads it (the same
    ranking and nodes as `graph-ascend info` and `graph-ascend check`)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        graph: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ):
        self.path = os.fspath(path)
        self._server: ServerProcess | None = None
        self._private_cache: str | None = None
        real = os.path.realpath(self.path)
        if not os.path.exists(real):
            raise FileNotFoundError(2, "No such file", self.path)
        if os.path.isdir(real):
            raise GraphAscendError(self.path, "is a folder, not a .vis or .vis.db file")
        folder, name = os.path.split(real)
        if not (name.endswith(".vis") or name.endswith(".vis.db")):
            raise GraphAscendError(self.path, "not a .vis or .vis.db file name")
        self._relative = name + (f"#{graph}" if graph else "")
        # The service converts msprobe's files into a cache that must lie outside the folder it serves; a
        # .vis gets a private one, so that no unsaved page edit kept in the shared cache is replayed here.
        shared = os.path.realpath(os.fspath(cache_dir)) if cache_dir else os.path.realpath(_cache_root())
        self._foreign = name.endswith(_FOREIGN) or _starts_like_json(real)  # msprobe's, converted
        if (cache_dir or self._foreign) and not _inside(shared, folder):
            cache = shared
        else:
            cache = self._private_cache = _private_cache(folder)
        atexit.register(self.close)
        self._session = uuid.uuid4().hex
        self._server = ServerProcess(folder, extra_args=["--cache-dir", cache, "--allow-convert", "off"])
        self._ranking: graph_service_pb2.DivergenceReply | None = None
        try:
            self._info = self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> graph_service_pb2.FileInfo:
        request = graph_service_pb2.FileRequest(file=self._relative)
        first, rest = self._call(
            lambda s: s.open_stream("OpenFile", request, OPEN_TIMEOUT_S, file=self._relative, reopen=True)
        )
        info = first.info if first is not None and first.done else None
        for progress in self._call(lambda s: list(rest)):
            if progress.done:
                info = progress.info
        if info is None:
            raise GraphAscendError(self.path, "the graph service ended the open without an answer")
        return info

    def _call(self, run: Callable[[ServerProcess], T], missing: type[GraphAscendError] = GraphAscendError) -> T:
        """Runs `run` on the server; its failures become GraphAscendError naming this file (`missing` for
        NOT_FOUND)."""
        if self._server is None:
            raise GraphAscendError(self.path, "the file is closed")
        try:
            return run(self._server)
        except grpc.RpcError as e:
            raise self._error(e, missing) from None
        except (ServerUnavailable, CallLost, CallRefused) as e:
            raise GraphAscendError(self.path, str(e)) from None

    def _error(self, e: grpc.RpcError, missing: type[GraphAscendError]) -> GraphAscendError:
        details = e.details() if hasattr(e, "details") else str(e)
        # The service names the file by its name in the served folder: name it as the caller did.
        for shown in (self._relative, self._relative.split("#", 1)[0]):  # a .vis.db's graph, or the file
            if details and details.startswith(shown):
                details = self.path + details[len(shown) :]
                break
        details = details or e.code().name
        return (missing if e.code() == grpc.StatusCode.NOT_FOUND else GraphAscendError)(self.path, details)

    def _unary(self, method: str, request: Any, missing: type[GraphAscendError] = GraphAscendError) -> Any:
        return self._call(lambda s: s.call(method, request, file=self._relative), missing)

    # ---- the file

    @property
    def kind(self) -> str:
        """"compare" (two runs) or "build" (one run)."""
        return "compare" if self._info.meta.kind == vis_pb2.GRAPH_COMPARE else "build"

    @property
    def meta(self) -> vis_pb2.FileMeta:
        """The file's FileMeta (proto/vis.proto): mode, dumps, flags, legend, tool version."""
        return self._info.meta

    def node_count(self, side: Side = "npu") -> int:
        """The nodes of a side (`graph-ascend info`'s "NPU: N nodes")."""
        summary = self._info.npu if self._side(side) == vis_pb2.SIDE_NPU else self._info.bench
        return summary.nodes

    def graphs(self) -> list[str]:
        """The graphs of a multi-graph .vis.db ("step0_rank0", "step0_rank1", ...), as the page lists them;
        open(path, graph=...) opens one. Empty for a file of one graph."""
        name = self._relative.split("#", 1)[0]
        runs = self._unary("ListRuns", graph_service_pb2.ListRunsRequest())
        return [r.path[len(name) + 1 :] for r in runs.files if r.path.startswith(name + "#")]

    # ---- the divergence

    def _divergence_reply(self) -> graph_service_pb2.DivergenceReply:
        if self._ranking is None:
            if self.kind != "compare":
                raise GraphAscendError(self.path, "is a build of one run, not a compare: it has no divergence")
            reply = self._unary("GetDivergence", graph_service_pb2.FileRequest(file=self._relative))
            if not reply.ranked and self._foreign:
                raise GraphAscendError(
                    self.path,
                    "msprobe's file converted without a divergence ranking: build the compare with graph-ascend "
                    "graph (or graph_visualize) and open its .vis",
                )
            if not reply.ranked:
                raise GraphAscendError(
                    self.path,
                    "holds no divergence ranking (written before graph-ascend ranked divergences): build it again "
                    "with graph-ascend graph",
                )
            self._ranking = reply
        return self._ranking

    def divergence(self) -> list[Divergence]:
        """The divergence ranking (docs/DIVERGENCE.md): the NPU nodes that diverge by themselves, in
        execution order, entry 0 the first divergence; empty when none diverges beyond noise.
        Raises GraphAscendError on a build or a file written before rankings existed."""
        return [Divergence.from_item(i) for i in self._divergence_reply().items]

    def first_divergence(self) -> Divergence | None:
        """Where the two runs first part (`graph-ascend check`'s answer), or None when there is no
        divergence beyond noise."""
        items = self._divergence_reply().items
        return Divergence.from_item(items[0]) if items else None

    # ---- nodes

    def _side_name(self, side: Side) -> Side:
        key = str(side).lower()
        if key not in _SIDES:
            raise ValueError(f"side must be 'npu' or 'bench', not {side!r}")
        if key == "bench" and self.kind != "compare":
            raise ValueError(f"{self.path} is a build of one run: it has no bench side")
        return key  # type: ignore[return-value]

    def _side(self, side: Side) -> int:
        return _SIDES[self._side_name(side)]

    def _pages(self, side: Side, matched_only: bool, page: int) -> Iterator[graph_service_pb2.ListNodesReply]:
        request = graph_service_pb2.ListNodesRequest(
            file=self._relative, side=self._side(side), limit=page, matched_only=matched_only
        )
        while True:
            reply = self._unary("ListNodes", request)
            yield reply
            if reply.next_offset >= reply.total:
                return
            request.offset = reply.next_offset

    def nodes(self, side: Side = "npu", *, page: int = PAGE) -> Iterator[Node]:
        """Every node of a side in node order (the root first), fetched `page` nodes a call."""
        key = self._side_name(side)  # a wrong side raises here, not at the first next()
        return (node for reply in self._pages(key, False, page) for node in listed_nodes(key, reply))

    def _listed(self, side: Side, name: str) -> Node:
        request = graph_service_pb2.ListNodesRequest(file=self._relative, side=self._side(side), names=[name])
        return next(listed_nodes(self._side_name(side), self._unary("ListNodes", request, NodeNotFound)))

    def node(self, side: Side, name: str) -> NodeDetail:
        """The node named `name` with its items and their statistics, its stack and, on a compare, its
        match's. Raises NodeNotFound (a KeyError) when the side has no such node."""
        listed = self._listed(side, name)
        side_value = self._side(side)
        view = graph_service_pb2.ViewKey(session=self._session, file=self._relative, side=side_value, micro_step=-1)
        reply = self._unary("GetNodeDetail", graph_service_pb2.NodeRequest(view=view, node=listed.index))
        matched = None
        if reply.HasField("matched"):
            peer = self._listed("bench" if listed.side == "npu" else "npu", reply.matched.name)
            matched = node_detail(peer, reply.matched_detail, reply.matched_stack)
        return node_detail(listed, reply.detail, reply.stack, matched)

    def matches(self, *, page: int = PAGE) -> Iterator[Match]:
        """The matched pairs of a compare, in NPU node order (none for a build)."""
        if self.kind != "compare":
            return
        for reply in self._pages("npu", True, page):
            yield from matches_of(reply)

    # ---- closing

    def close(self) -> None:
        """Stops the file's graph service (also at the interpreter's exit); later calls raise."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        if self._private_cache is not None:
            shutil.rmtree(self._private_cache, ignore_errors=True)
            self._private_cache = None
        atexit.unregister(self.close)

    def __enter__(self) -> GraphFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._server is None else self.kind
        return f"<graph_ascend.GraphFile {self.path!r} ({state})>"
