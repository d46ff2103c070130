"""msprobe 8.2.0's graph builder with its own SQLite writer: the early 8.2 .vis.db schema.

mindstudio-probe 8.2.0 ships the first .vis.db writer (`GraphBuilder.to_db`, `db_utils.node_to_db`,
`config_to_db`, `post_process_db`): stack_info inline in tb_nodes, no tb_stack table, no
is_distributed column. Its CLI does not call it yet (graph_service.py has `# output_db_path to_db`
as a comment beside each `GraphBuilder.to_json`), so `msprobe graph` 8.2.0 still writes JSON .vis;
8.2.1 calls it, with the tb_stack schema. This runs 8.2.0's own `graph -i compare.json` command with
`GraphBuilder.to_json` replaced by its `GraphBuilder.to_db` into one OUT/<build|compare>.vis.db (every
step and rank, as 8.2.1 does), then `post_process_db` (its indices). Nothing of the file is written
here: every row is msprobe 8.2.0's.

Run in bench/.venv-msprobe-8.2.0-graph (make_msprobe_fixtures.sh does):
    python msprobe820_db.py -i COMPARE_JSON -o OUT
"""

import argparse
import os
import sys

from msprobe.visualization import graph_service
from msprobe.visualization.builder.graph_builder import GraphBuilder
from msprobe.visualization.db_utils import post_process_db

written = set()


def to_db_instead(filename, config):
    kind = "compare" if config.graph_b else "build"
    path = os.path.join(os.path.dirname(filename), kind + ".vis.db")
    GraphBuilder.to_db(path, config)
    written.add(path)


def main():
    parser = argparse.ArgumentParser(prog="msprobe graph")
    graph_service._pt_graph_service_parser(parser)
    parser.set_defaults(framework="pytorch")  # what `-f pytorch` sets
    args = parser.parse_args(sys.argv[1:])
    GraphBuilder.to_json = staticmethod(to_db_instead)
    graph_service._pt_graph_service_command(args)
    # A batch builds in a process pool: the files its workers wrote.
    written.update(
        os.path.join(args.output_path, n)
        for n in ("build.vis.db", "compare.vis.db")
        if os.path.exists(os.path.join(args.output_path, n))
    )
    for path in sorted(written):
        post_process_db(path)
        print(path)
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
