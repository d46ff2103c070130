"""Writes a sample case's compare.json files from the dump folders msprobe wrote.

Usage: python write_compare_json.py samples/<case>

Paths inside the files are relative to the case folder (the compare.json's own directory):
  build.json    npu only, the first step's first rank folder         -> single build
  compare.json  that folder vs the bench folder of the same step      -> single compare
  batch.json    npu/ vs bench/ (or npu/step0 vs bench/step0 for one   -> msprobe's batch dispatch
                step), only when the case has several steps or ranks
Rank folders are rank<N>, or proc<pid> for single-process runs without a rank (the pid differs
between the two sides, so such cases get no batch.json).
parallel_merge: compare.json pairs the whole 4-rank npu step with the 1-rank bench step and
carries msprobe's parallel_merge section (tp=2, pp=2 against an unsplit run).
rl_stages (verl's step_<N>/<stage> folders above msprobe's layout): batch.json pairs npu/ with bench/.
msadapter: self.json pairs the npu (mindtorch) dump with itself.
"""

import json
import os
import re
import sys

PARALLEL = {
    "npu": {"rank_size": 4, "tp": 2, "pp": 2, "vpp": 1, "order": "tp-cp-ep-dp-pp"},
    "bench": {"rank_size": 1, "tp": 1, "pp": 1, "vpp": 1, "order": "tp-cp-ep-dp-pp"},
}


def numbered(names, prefix):
    found = [n for n in names if re.fullmatch(prefix + r"\d*", n)]
    return sorted(found, key=lambda n: int(n[len(prefix) :] or 0))


def layout(side_dir):
    """[(step, [rank folders])] as msprobe wrote them."""
    steps = numbered(os.listdir(side_dir), "step")
    if not steps:
        raise SystemExit(f"{side_dir}: no step folders")
    result = []
    for step in steps:
        entries = os.listdir(os.path.join(side_dir, step))
        ranks = numbered(entries, "rank") + sorted(n for n in entries if re.fullmatch(r"proc\d+", n))
        if not ranks:
            raise SystemExit(f"{side_dir}/{step}: no rank or proc folders")
        result.append((step, ranks))
    return result


def write(path, content):
    with open(path, "w") as f:
        json.dump(content, f, indent=2)
        f.write("\n")


def main():
    case_dir = os.path.abspath(sys.argv[1])
    case = os.path.basename(case_dir)
    if case == "rl_stages":
        # verl's step_<N>/<stage>/step0/rank0: the batch of every stage, and one stage alone.
        stage = "step_1/actor_update/step0/rank0"
        write(os.path.join(case_dir, "batch.json"), {"npu_path": "npu", "bench_path": "bench"})
        write(os.path.join(case_dir, "compare.json"), {"npu_path": f"npu/{stage}", "bench_path": f"bench/{stage}"})
        write(os.path.join(case_dir, "build.json"), {"npu_path": f"npu/{stage}"})
        return
    npu = layout(os.path.join(case_dir, "npu"))
    bench = layout(os.path.join(case_dir, "bench"))
    step, npu_ranks = npu[0]
    bench_ranks = dict(bench)[step]
    write(os.path.join(case_dir, "build.json"), {"npu_path": f"npu/{step}/{npu_ranks[0]}"})
    if case == "parallel_merge":
        write(
            os.path.join(case_dir, "compare.json"),
            {"npu_path": f"npu/{step}", "bench_path": f"bench/{step}", "parallel_merge": PARALLEL},
        )
        return
    write(
        os.path.join(case_dir, "compare.json"),
        {"npu_path": f"npu/{step}/{npu_ranks[0]}", "bench_path": f"bench/{step}/{bench_ranks[0]}"},
    )
    if case == "msadapter":
        npu_path = f"npu/{step}/{npu_ranks[0]}"
        write(os.path.join(case_dir, "self.json"), {"npu_path": npu_path, "bench_path": npu_path})
    uses_proc = npu_ranks[0].startswith("proc")
    if not uses_proc and (len(npu) > 1 or len(npu_ranks) > 1):
        root = "" if len(npu) > 1 else f"/{step}"
        write(os.path.join(case_dir, "batch.json"), {"npu_path": f"npu{root}", "bench_path": f"bench{root}"})


if __name__ == "__main__":
    main()
