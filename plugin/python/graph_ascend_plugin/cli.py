"""The `graph-ascend` command of the wheel: runs the packaged C++ executable.

The console script replaces itself with _bin/graph-ascend (exec), so the
exit status, signals and standard streams are the executable's own.
"""

import os
import pathlib
import stat
import sys

BINARY_ENV = "GRAPH_ASCEND_BINARY"


def cli_binary() -> pathlib.Path:
    """The graph-ascend executable: $GRAPH_ASCEND_BINARY, else the packaged one."""
    if os.environ.get(BINARY_ENV):
        return pathlib.Path(os.environ[BINARY_ENV])
    return pathlib.Path(__file__).resolve().parent / "_bin" / "graph-ascend"


def main() -> None:
    binary = cli_binary()
    if not binary.is_file():
        sys.exit(f"graph-ascend: the executable is missing at {binary} (reinstall the graph-ascend package)")
    if not os.access(binary, os.X_OK):
        try:  # an installer that dropped the mode bits
            binary.chmod(binary.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        except OSError as e:
            sys.exit(f"graph-ascend: {binary} is not executable: {e}")
    os.execv(binary, ["graph-ascend", *sys.argv[1:]])
