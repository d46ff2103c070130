"""Runs the reference `msprobe graph` on one of our compare.json files; see run_msprobe.sh.

Called by run_msprobe.sh with the venv ready:
  run_msprobe.py --venv DIR --version V COMPARE_JSON [OUTDIR] [-- EXTRA_MSPROBE_ARGS...]

Our compare.json files hold paths relative to their own directory; msprobe resolves them
against its working directory, so this writes a temporary copy with absolute paths (8.x) or
passes absolute paths on the command line (26.x, which replaced compare.json by flags:
graph_visualize -tp/-gp/--rank_size/--tp/--pp/--vpp/--order). Prints the measurement line of
measure.py, one `output=FILE` line per result file and msprobe's [ERROR] log lines; exits
non-zero if msprobe failed or wrote nothing.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(ROOT, "bench", "out", "reference")


def default_name(compare_json):
    path = os.path.abspath(compare_json)
    return f"{os.path.basename(os.path.dirname(path))}-{os.path.splitext(os.path.basename(path))[0]}"


def absolute_input(compare_json):
    with open(compare_json) as f:
        try:
            config = json.load(f)
        except json.JSONDecodeError as e:
            raise SystemExit(f"{compare_json}: line {e.lineno} column {e.colno}: {e.msg}")
    if not isinstance(config, dict) or not config.get("npu_path"):
        raise SystemExit(f"{compare_json}: missing key npu_path")
    base = os.path.dirname(os.path.abspath(compare_json))
    for key in ("npu_path", "bench_path"):
        if config.get(key):
            config[key] = os.path.normpath(os.path.join(base, config[key]))
            if not os.path.isdir(config[key]):
                raise SystemExit(f"{compare_json}: {key}: not a directory: {config[key]}")
    return config


# `msprobe -f pytorch graph` without its torch check: the parser and command the CLI calls.
GRAPH_ONLY_8X = (
    "import argparse, sys\n"
    "from msprobe.visualization.graph_service import _pt_graph_service_command, _pt_graph_service_parser\n"
    "parser = argparse.ArgumentParser(prog='msprobe graph')\n"
    "_pt_graph_service_parser(parser)\n"
    "parser.set_defaults(framework='pytorch')  # what `-f pytorch` sets\n"
    "_pt_graph_service_command(parser.parse_args(sys.argv[1:]))\n"
)


def msprobe_command(venv, version, config, outdir, tmpdir, extra):
    msprobe = os.path.join(venv, "bin", "msprobe")
    if version.startswith(("8.", "1.")):
        path = os.path.join(tmpdir, "compare.json")
        with open(path, "w") as f:
            json.dump(config, f, indent=2)
        if version.endswith("-graph"):
            return [os.path.join(venv, "bin", "python"), "-c", GRAPH_ONLY_8X, "-i", path, "-o", outdir, *extra]
        return [msprobe, "-f", "pytorch", "graph", "-i", path, "-o", outdir, *extra]
    command = [msprobe, "graph_visualize", "-tp", config["npu_path"], "-o", outdir]
    if config.get("bench_path"):
        command += ["-gp", config["bench_path"]]
    merge = config.get("parallel_merge") or {}
    if merge.get("npu"):
        sides = [merge["npu"]] + ([merge["bench"]] if config.get("bench_path") else [])
        for key, default in (("rank_size", None), ("tp", None), ("pp", None), ("vpp", 1)):
            command += [f"--{key}", *[str(side.get(key, default)) for side in sides]]
        command += ["--order", *[side.get("order", "tp-cp-ep-dp-pp") for side in sides]]
    return command + extra


def prepare_outdir(outdir, explicit):
    if os.path.isdir(outdir) and os.listdir(outdir):
        if explicit:
            raise SystemExit(f"{outdir}: output directory is not empty")
        shutil.rmtree(outdir)
    os.makedirs(outdir, exist_ok=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("compare_json")
    parser.add_argument("outdir", nargs="?")
    argv, extra = sys.argv[1:], []
    if "--" in argv:
        argv, extra = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    args = parser.parse_args(argv)

    config = absolute_input(args.compare_json)
    outdir = os.path.abspath(
        args.outdir or os.path.join(DEFAULT_OUT, f"{default_name(args.compare_json)}-{args.version}")
    )
    prepare_outdir(outdir, explicit=args.outdir is not None)
    log_path = outdir + ".log"
    with tempfile.TemporaryDirectory() as tmpdir:
        command = msprobe_command(args.venv, args.version, config, outdir, tmpdir, extra)
        print("command=" + " ".join(command), flush=True)
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        result = measure.run(command, log_path, cwd=tmpdir, env=env)

    outputs = sorted(os.path.join(outdir, n) for n in os.listdir(outdir) if ".vis" in n)
    with open(log_path, errors="replace") as f:
        errors = [line.rstrip() for line in f if "[ERROR]" in line and "CANN environment" not in line]
    for line in errors[:20]:
        print("msprobe_error=" + line)
    for path in outputs:
        print(f"output={path} bytes={os.path.getsize(path)}")
    print(f"log={log_path}")
    print(result.report(), flush=True)
    if result.code != 0:
        return result.code
    if not outputs:
        print("error=msprobe wrote no .vis/.vis.db file", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
