"""The .vis.db writer writes, table by table and row by row, what the whole-graph writer wrote (issue 29).

testdata/vis_db_rows.json holds the digests vis_db_rows.py made with the writer that read the whole
graph into memory, on the real samples (graph_visualize --output_format db, export --format db of a
.vis, both gradings) and on msprobe's own files of tests/data/msprobe_outputs. The streaming writer
must give the same digests: same tables, same schema, same rows in the same order.
"""

import json

import pytest

import vis_db_rows


def test_every_table_row_for_row_as_the_whole_graph_writer_wrote_it(build_dir, tmp_path):
    binary = build_dir / "bin" / "graph-ascend"
    if not binary.exists():
        pytest.skip(f"{binary} is not built")
    expected = json.loads(vis_db_rows.EXPECTED.read_text())
    seen = set()
    for case, db in vis_db_rows.cases(binary, tmp_path):
        seen.add(case)
        got, want = vis_db_rows.digest(db), expected[case]
        assert got["schema"] == want["schema"], f"{case}: the schema differs"
        assert sorted(got) == sorted(want), f"{case}: tables {sorted(got)}, expected {sorted(want)}"
        for table in sorted(t for t in want if t != "schema"):
            assert got[table]["rows"] == want[table]["rows"], f"{case}: {table}: row count"
            for i, (g, w) in enumerate(zip(got[table]["runs"], want[table]["runs"])):
                assert g == w, f"{case}: {table}: rows {i * vis_db_rows.RUN + 1}-{(i + 1) * vis_db_rows.RUN} differ"
    assert seen == set(expected)
