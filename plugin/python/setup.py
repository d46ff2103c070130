"""graph-ascend TensorBoard plugin (the GRAPH_ASCEND tab).

The package is built from the source tree: the build generates the gRPC
stubs from ../../proto (grpcio-tools), copies the C++ graph-ascend-server
(GA_SERVER_BINARY, else ../../build/bin/graph-ascend-server) into
graph_ascend_plugin/_bin/ and, when the frontend was built, its single-file
frontend/dist/index.html into graph_ascend_plugin/static/. The wheel is
therefore platform specific, like tensorboard-data-server's.
"""

import os
import pathlib
import re
import shutil
import stat

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PACKAGE = HERE / "graph_ascend_plugin"
PROTOS = ("vis.proto", "graph_service.proto")


def _proto_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("GA_PROTO_DIR", ROOT / "proto"))


def _server_binary() -> pathlib.Path:
    if os.environ.get("GA_SERVER_BINARY"):
        return pathlib.Path(os.environ["GA_SERVER_BINARY"])
    build = pathlib.Path(os.environ.get("GA_BUILD_DIR", ROOT / "build"))
    return build / "bin" / "graph-ascend-server"


def generate_stubs() -> None:
    from grpc_tools import protoc  # a build requirement (pyproject.toml)

    out = PACKAGE / "_proto"
    out.mkdir(exist_ok=True)
    (out / "__init__.py").write_text('"""Generated from proto/ at build time; do not edit."""\n')
    protos = _proto_dir()
    args = ["protoc", f"-I{protos}", f"--python_out={out}", f"--grpc_python_out={out}"]
    args += [str(protos / p) for p in PROTOS]
    if protoc.main(args) != 0:
        raise SystemExit(f"protoc failed on {protos}")
    # protoc writes top-level imports ("import vis_pb2"); make them package-relative.
    for path in out.glob("*_pb2*.py"):
        text = path.read_text()
        text = re.sub(r"^import (\w+_pb2) as", r"from . import \1 as", text, flags=re.M)
        path.write_text(text)


def copy_server() -> None:
    binary = _server_binary()
    if not binary.is_file():
        raise SystemExit(
            f"graph-ascend-server not found at {binary}: build the C++ tree first "
            "(scripts/build.sh) or set GA_SERVER_BINARY"
        )
    dest = PACKAGE / "_bin"
    dest.mkdir(exist_ok=True)
    target = dest / "graph-ascend-server"
    shutil.copyfile(binary, target)
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def copy_frontend() -> None:
    page = ROOT / "frontend" / "dist" / "index.html"
    target = PACKAGE / "static" / "index.html"
    if page.is_file():
        shutil.copyfile(page, target)
    elif target.exists():
        target.unlink()  # a stale page from an earlier build


class BuildPy(build_py):
    def run(self):
        generate_stubs()
        copy_server()
        copy_frontend()
        super().run()
        server = pathlib.Path(self.build_lib) / "graph_ascend_plugin" / "_bin" / "graph-ascend-server"
        if server.exists():
            server.chmod(server.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(
    name="graph-ascend-plugin",
    version="0.1.0",
    description="GRAPH_ASCEND TensorBoard plugin: browse graph-ascend .vis files through a C++ graph service",
    packages=["graph_ascend_plugin", "graph_ascend_plugin._proto"],
    package_data={"graph_ascend_plugin": ["static/*", "_bin/graph-ascend-server"]},
    python_requires=">=3.9",
    install_requires=["tensorboard>=2.11", "grpcio>=1.74", "protobuf>=6.31", "werkzeug>=1.0"],
    entry_points={"tensorboard_plugins": ["graph_ascend = graph_ascend_plugin.plugin:GraphAscendPlugin"]},
    cmdclass={"build_py": BuildPy},
    distclass=BinaryDistribution,
    zip_safe=False,
)
