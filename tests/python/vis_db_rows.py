#!/usr/bin/env python3
"""The rows of every .vis.db graph-ascend writes from the real samples and msprobe's own files, as digests.

    python3 tests/python/vis_db_rows.py BINARY [--write]

Writes each case's .vis.db with BINARY (graph_visualize --output_format db of a sample, export --format db
of a .vis it wrote or of a file in tests/data/msprobe_outputs) and digests its tables row by row: per table
the row count and a SHA-256 of each run of 64 rows (in rowid order, every value with its SQLite type), so
that a difference is placed within 64 rows. Prints the digests as JSON, or with --write stores them in
testdata/vis_db_rows.json, the expectation test_vis_db_rows.py holds the current writer to. That file was
made by the writer that first read the whole graph into memory (before the streaming writer of issue 29),
so it pins the rows to what that writer wrote.
"""

import hashlib
import json
import pathlib
import sqlite3
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXPECTED = pathlib.Path(__file__).resolve().parent / "testdata" / "vis_db_rows.json"
RUN = 64

# (case, how): graph_visualize -tp NPU [-gp BENCH] --output_format db.
VISUALIZE = [
    ("gpt_statistics compare", ["-tp", "samples/gpt_statistics/npu", "-gp", "samples/gpt_statistics/bench"]),
    ("gpt_statistics build", ["-tp", "samples/gpt_statistics/npu"]),
    ("gpt_tensor compare", ["-tp", "samples/gpt_tensor/npu", "-gp", "samples/gpt_tensor/bench"]),
    ("cnn_md5 compare", ["-tp", "samples/cnn_md5/npu", "-gp", "samples/cnn_md5/bench"]),
    ("dist_gloo batch", ["-tp", "samples/dist_gloo/npu", "-gp", "samples/dist_gloo/bench"]),
    ("p2p_micro batch", ["-tp", "samples/p2p_micro/npu", "-gp", "samples/p2p_micro/bench"]),
    ("overflow_nan compare -oc", ["-tp", "samples/overflow_nan/npu", "-gp", "samples/overflow_nan/bench", "-oc"]),
    ("layer_mapping compare -lm",
     ["-tp", "samples/layer_mapping/npu", "-gp", "samples/layer_mapping/bench", "-lm",
      "samples/layer_mapping/layer_mapping.yaml"]),
    ("l1_api compare", ["-tp", "samples/l1_api/npu", "-gp", "samples/l1_api/bench"]),
    ("bert_pgrad compare", ["-tp", "samples/bert_pgrad/npu", "-gp", "samples/bert_pgrad/bench"]),
]
# graph -i SAMPLE/compare.json, then export --format db of the .vis files it wrote (both gradings).
GRAPH_EXPORT = ["gpt_statistics", "cnn_statistics", "p2p_micro", "rank_origin", "signal_l1", "handwritten_norm"]
# export --format db of msprobe's own files (read whole: they are not .vis files).
FOREIGN = ["dist_gloo_compare_26.2.0.vis.db", "dist_gloo_batch_8.3.3.vis.db", "p2p_micro_batch_8.2.0.vis.db",
           "dist_gloo_compare_8.1.2.vis", "p2p_micro_compare_1.2.0.vis"]


def digest(db_path):
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    out = {}
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    for table in tables:
        runs, count, h = [], 0, hashlib.sha256()
        for row in con.execute(f"SELECT * FROM {table} ORDER BY rowid"):
            h.update(repr([(type(v).__name__, v) for v in row]).encode())
            count += 1
            if count % RUN == 0:
                runs.append(h.hexdigest()[:16])
                h = hashlib.sha256()
        if count % RUN:
            runs.append(h.hexdigest()[:16])
        out[table] = {"rows": count, "runs": runs}
    out["schema"] = hashlib.sha256(
        repr(con.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()).encode()
    ).hexdigest()[:16]
    con.close()
    return out


def run(binary, args):
    r = subprocess.run([str(binary)] + [str(a) for a in args], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{args}: {r.stderr}")
    return [line for line in r.stdout.splitlines() if line]


def cases(binary, work):
    """Yields (case, db path) for every case, writing the dbs under `work`."""
    work = pathlib.Path(work)
    for name, args in VISUALIZE:
        out = work / name.replace(" ", "_")
        dbs = run(binary, ["graph_visualize"] + args + ["--output_format", "db", "-o", out])
        yield name, dbs[0]
    for sample in GRAPH_EXPORT:
        out = work / f"{sample}_graph"
        vis = run(binary, ["graph", "-i", f"samples/{sample}/compare.json", "-o", out])
        for grading in ([], ["--grading", "26"]):
            db = out / f"export{''.join(grading)}.vis.db"
            run(binary, ["export"] + vis + ["--format", "db"] + grading + ["-o", db])
            yield f"{sample} graph, export --format db {' '.join(grading)}".strip(), db
    for f in FOREIGN:
        db = work / f"{f}.export.vis.db"
        run(binary, ["export", f"tests/data/msprobe_outputs/{f}", "--format", "db", "-o", db])
        yield f"{f} export --format db", db


def main():
    binary = pathlib.Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as work:
        result = {name: digest(db) for name, db in cases(binary, work)}
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    if "--write" in sys.argv:
        EXPECTED.parent.mkdir(exist_ok=True)
        EXPECTED.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
