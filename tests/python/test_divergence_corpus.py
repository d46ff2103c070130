"""The first divergence on the noisy corpus (bench/divergence/corpus.tar.xz, docs/DIVERGENCE.md):
bench/divergence/score.py builds every case with bin/graph-ascend and counts the cases where the
first divergence names the culprit, or says "no divergence beyond noise" when there is no bug. The
score must not fall below the figures in bench/divergence/score_floor.json (raise them when the rule
improves; never lower them to make a change pass)."""

import json
import subprocess
import sys


def test_score_does_not_fall(repo_root, build_dir):
    here = repo_root / "bench" / "divergence"
    floor = json.loads((here / "score_floor.json").read_text())
    run = subprocess.run(
        [sys.executable, str(here / "score.py"), str(build_dir / "bin" / "graph-ascend"),
         "--min-bugs", str(floor["bugs_right"]), "--min-none", str(floor["none_right"])],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    totals = [line for line in run.stdout.splitlines() if line.startswith(("bug cases:", "noise-only cases:"))]
    cases = sum(int(line.split("/")[1].split()[0]) for line in totals)
    assert cases == floor["cases"], f"the corpus holds {cases} cases, score_floor.json says {floor['cases']}"
