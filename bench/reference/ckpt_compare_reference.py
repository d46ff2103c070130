"""msprobe 26.2.0's checkpoint compare beside graph-ascend ckpt_compare on the same checkpoints.

    python3 bench/reference/ckpt_compare_reference.py [--write] [--repeat N] [CASE_A CASE_B ...]

Runs `msprobe config_check -c A B -o OUT.json` (bench/.venv-msprobe-26.2.0 with megatron-core installed
--no-deps: msprobe's loader imports megatron, and torch.load needs megatron's enums) and
`graph-ascend ckpt_compare A B -o OUT.json` on each pair, compares the two results parameter by
parameter (same names, shapes and numel; l2 and cos within 1e-4 relative: msprobe computes in
float32) and prints wall time and peak RSS of both. --write stores msprobe's outputs as
samples/ckpt/msprobe/<case>.json (the tests read them). Without pairs it runs the sample cases.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def measure(cmd, env=None, cwd=None):
    """measure.py in its own process (its getrusage figure is per parent); returns its report line."""
    with tempfile.NamedTemporaryFile(suffix=".log") as log:
        p = subprocess.run([sys.executable, os.path.join(HERE, "measure.py"), "--log", log.name, "--", *cmd],
                           env=env, cwd=cwd, capture_output=True, text=True)
        report = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
        if p.returncode != 0:
            report += " log=" + open(log.name, errors="replace").read()[-400:].replace("\n", " | ")
        return report

CK = os.path.join(ROOT, "samples", "ckpt")
# case -> (A, B) for msprobe. msprobe cannot resolve latest_checkpointed_iteration.txt = "release"
# (it formats iter_{None:07d}), so it is given the release folder itself.
CASES = {
    "tp2pp2": ("tp2pp2_a", "tp2pp2_b"),
    "tp2pp2_vs_tp1pp1": ("tp2pp2_b", "tp1pp1_b"),
    "vpp": ("vpp_a/iter_0000002", "vpp_b/iter_0000004"),
    "ep": ("ep_a", "ep_b"),
    "release_vs_tp1pp1": ("release_b/release", "tp1pp1_b"),
}
OURS = {"release_vs_tp1pp1": ("release_b", "tp1pp1_b")}


def venv_python():
    venv = os.path.join(ROOT, "bench", ".venv-msprobe-26.2.0")
    subprocess.run([os.path.join(HERE, "run_msprobe.sh"), "--version", "26.2.0", "--install"], check=True)
    py = os.path.join(venv, "bin", "python")
    have = subprocess.run([py, "-c", "import megatron.core"], capture_output=True).returncode == 0
    if not have:
        req = os.path.join(HERE, "requirements-companions.txt")
        subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "-r", req], check=True)
    return venv


def run_msprobe(venv, a, b, out):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PATH=os.path.join(venv, "bin") + os.pathsep + os.environ["PATH"])
    cmd = [os.path.join(venv, "bin", "msprobe"), "config_check", "-c", a, b, "-o", out]
    return measure(cmd, env=env, cwd=tempfile.gettempdir())


def run_ours(a, b, out):
    cmd = [os.path.join(ROOT, "build", "bin", "graph-ascend"), "ckpt_compare", a, b, "-o", out, "--force"]
    return measure(cmd)


def differences(ours, ref, tolerance=1e-4):
    """Rows where the two results differ: names, shapes, numel, or l2 / cos beyond `tolerance` relative."""
    diffs = []
    if set(ours) != set(ref):
        diffs.append(f"names: only ours {sorted(set(ours) - set(ref))}, only msprobe {sorted(set(ref) - set(ours))}")
    worst = 0.0
    for name in set(ours) & set(ref):
        o, r = ours[name], ref[name]
        if o["shape"] != r["shape"] or o["numel"] != r["numel"]:
            diffs.append(f"{name}: shape {o['shape']} vs {r['shape']}")
        for m in ("l2", "cos"):
            if (o[m] is None) != (r[m] is None):
                diffs.append(f"{name}.{m}: {o[m]} vs {r[m]}")
            elif o[m] is not None:
                d = abs(o[m] - r[m]) / max(1.0, abs(r[m]))
                worst = max(worst, d)
                if d > tolerance:  # msprobe sums in float32: ~1e-5 on the samples, 6e-5 on 32M-element tensors
                    diffs.append(f"{name}.{m}: {o[m]} vs {r[m]}")
    return diffs, worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("pairs", nargs="*")
    args = ap.parse_args()
    venv = venv_python()
    pairs = [os.path.abspath(p) for p in args.pairs]
    cases = {f"pair{i // 2}": (pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)}
    if not cases:
        cases = {k: (os.path.join(CK, a), os.path.join(CK, b)) for k, (a, b) in CASES.items()}
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for case, (a, b) in cases.items():
            oa, ob = OURS.get(case, (None, None))
            oa, ob = (os.path.join(CK, oa), os.path.join(CK, ob)) if oa else (a, b)
            for r in range(args.repeat):
                ref_out, our_out = os.path.join(tmp, f"{case}.msprobe.json"), os.path.join(tmp, f"{case}.ours.json")
                if os.path.exists(ref_out):
                    os.unlink(ref_out)
                our_m = run_ours(oa, ob, our_out)
                ref_m = run_msprobe(venv, a, b, ref_out)
                print(f"case={case} msprobe: {ref_m}")
                print(f"case={case} graph-ascend: {our_m}")
            if not os.path.exists(ref_out) or not os.path.exists(our_out):
                print(f"case={case} FAILED: a result is missing")
                failed = True
                continue
            with open(ref_out) as f:
                ref = json.load(f)
            with open(our_out) as f:
                ours = json.load(f)
            diffs, worst = differences(ours, ref)
            print(f"case={case} params={len(ref)} worst_relative_difference={worst:.3g} differences={len(diffs)}")
            for d in diffs[:10]:
                print("  " + d)
            failed |= bool(diffs)
            if args.write and case in CASES:
                os.makedirs(os.path.join(CK, "msprobe"), exist_ok=True)
                with open(os.path.join(CK, "msprobe", f"{case}.json"), "w") as f:
                    json.dump(ref, f, indent=4, sort_keys=True)
                    f.write("\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
