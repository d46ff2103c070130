"""Every command line of the user guides runs as written (issue 18).

The shell blocks of README.md, docs/MIGRATION.md and docs/zh/*.md run in
document order, as a reader follows the guide, in one scratch folder per
document that looks like the repository's root: `samples`, `tests` and
`build/bin` are links to the tree's, `graph-ascend` is on PATH (the wheel's
command is the built binary). Every command must exit 0 (or the status the
block states) and leave the files the block says it makes; a block written
as a console session (`$ command` then its output) must print that output,
line by line in order (`...` / `…` stand for anything, whitespace runs for
any whitespace).

A line `<!-- doc-test: DIRECTIVE; DIRECTIVE -->` right before a block
tells this test what the block needs (it is invisible on the rendered page):

    skip: REASON            the block is not run (needs an NPU, a release wheel, ...)
    omit WORD: REASON       command lines whose program is WORD are not run
    files DIR               links DIR's entries into the folder (a sample's compare.json, npu/, ...)
    link NAME=PATH          links NAME to the tree's PATH (a placeholder name such as msprobe_out/x.vis.db)
    creates GLOB ...        each glob matches a file after the block
    exit N                  the console block's commands exit N
"""

import dataclasses
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ["README.md", "docs/MIGRATION.md"] + sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "zh").glob("*.md")
)
SHELL_LANGS = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^```\s*([\w-]*)\s*$")
MARK = re.compile(r"^<!--\s*doc-test:(.*?)-->\s*$")
TIMEOUT_S = 900


@dataclasses.dataclass
class Block:
    doc: str
    line: int  # of the opening fence, 1-based
    lang: str
    lines: list
    directives: dict


def parse_directives(text: str, where: str) -> dict:
    d = {"omit": {}, "files": [], "link": {}, "creates": [], "exit": 0}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        word, _, rest = part.partition(" ")
        word = word.rstrip(":")
        rest = rest.strip()
        if word == "skip":
            d["skip"] = rest or "(no reason given)"
        elif word == "omit":
            program, _, reason = rest.partition(":")
            assert reason.strip(), f"{where}: omit {program} needs a reason"
            d["omit"][program.strip()] = reason.strip()
        elif word == "files":
            d["files"].append(rest)
        elif word == "link":
            name, _, target = rest.partition("=")
            d["link"][name.strip()] = target.strip()
        elif word == "creates":
            d["creates"] += rest.split()
        elif word == "exit":
            d["exit"] = int(rest)
        else:
            raise AssertionError(f"{where}: unknown doc-test directive {part!r}")
    return d


def shell_blocks(doc: str) -> list:
    """The blocks of `doc` that show shell commands, with their directives."""
    lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang, body = i, m.group(1), []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        console = any(line.startswith("$ ") for line in body)
        if lang not in SHELL_LANGS and not (lang == "" and console):
            continue
        mark = MARK.match(lines[start - 1]) if start > 0 else None
        where = f"{doc}:{start + 1}"
        directives = parse_directives(mark.group(1), where) if mark else parse_directives("", where)
        blocks.append(Block(doc, start + 1, "console" if console else lang, body, directives))
    return blocks


def program_of(command: str) -> str:
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    return os.path.basename(words[0]) if words else ""


def runnable_script(block: Block) -> str:
    """The block's lines without the omitted commands."""
    kept = []
    for line in block.lines:
        omitted = program_of(line) in block.directives["omit"]
        assert not (omitted and line.rstrip().endswith("\\")), f"{block.doc}:{block.line}: cannot omit a continued line"
        if not omitted:
            kept.append(line)
    return "\n".join(kept) + "\n"


def console_steps(block: Block) -> list:
    """(command, expected output lines) of a console block."""
    steps = []
    for line in block.lines:
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def line_pattern(expected: str):
    parts = re.split(r"(\.\.\.|…)", expected.strip())
    regex = "".join(".*" if p in ("...", "…") else r"\s+".join(map(re.escape, p.split())) for p in parts)
    # Whitespace next to an ellipsis or at a split point is optional.
    regex = regex.replace(r"\s+.*", r"\s*.*").replace(r".*\s+", r".*\s*")
    return re.compile(regex)


def missing_output(expected: list, actual: str) -> list:
    """Expected lines not found in `actual`, in order (an empty list when all are)."""
    out_lines = [line.strip() for line in actual.splitlines()]
    at, missing = 0, []
    for want in expected:
        if not want.strip() or want.strip() in ("...", "…"):
            continue
        pattern = line_pattern(want)
        for k in range(at, len(out_lines)):
            if pattern.fullmatch(out_lines[k]):
                at = k + 1
                break
        else:
            missing.append(want)
    return missing


class Folder:
    """The scratch folder of one document: the tree's root as a reader sees it."""

    def __init__(self, path: pathlib.Path, build_dir: pathlib.Path):
        self.path = path
        (path / "build").mkdir(parents=True)
        (path / "build" / "bin").symlink_to(build_dir / "bin")
        for name in ("samples", "tests"):
            (path / name).symlink_to(ROOT / name)
        shims = path.parent / (path.name + "-bin")
        shims.mkdir()
        (shims / "graph-ascend").symlink_to(build_dir / "bin" / "graph-ascend")
        # python3 is the test's own (the wheel's packages installed: README's "From Python" block).
        programs = os.pathsep.join([str(shims), os.path.dirname(sys.executable), os.environ.get("PATH", "")])
        self.env = {**os.environ, "PATH": programs, "LC_ALL": "C.UTF-8"}
        if os.geteuid() == 0:
            # CI runs as root; the guide's mpirun lines are written for a user (README says so).
            self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def link(self, name: str, target: pathlib.Path):
        dest = self.path / name
        if dest.is_symlink() and dest.resolve() == target.resolve():
            return
        assert not dest.exists(), f"{name} already exists in the scratch folder"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(target)

    def run(self, script: str):
        return subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=self.path,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )


def tail(text: str, n: int = 15) -> str:
    return "\n".join(text.splitlines()[-n:])


def run_block(folder: Folder, block: Block) -> list:
    """Runs one block; returns what went wrong (empty when nothing did)."""
    where = f"{block.doc}:{block.line}"
    d = block.directives
    for directory in d["files"]:
        for entry in sorted((ROOT / directory).iterdir()):
            folder.link(entry.name, entry)
    for name, target in d["link"].items():
        assert (ROOT / target).exists(), f"{where}: link target {target} does not exist"
        folder.link(name, ROOT / target)
    problems = []
    if block.lang == "console":
        for command, expected in console_steps(block):
            if program_of(command) in d["omit"]:
                continue
            r = folder.run(command)
            if r.returncode != d["exit"]:
                problems.append(f"{where}: `{command}` exited {r.returncode}, not {d['exit']}:\n{tail(r.stderr)}")
                continue
            missing = missing_output(expected, r.stdout + r.stderr)
            if missing:
                problems.append(
                    f"{where}: `{command}` did not print, in order:\n  "
                    + "\n  ".join(missing)
                    + f"\nit printed:\n{r.stdout}{r.stderr}"
                )
    else:
        r = folder.run(runnable_script(block))
        if r.returncode != 0:
            problems.append(f"{where}: the block exited {r.returncode}:\n{tail(r.stdout)}\n{tail(r.stderr)}")
    for pattern in d["creates"]:
        if not list(folder.path.glob(pattern)):
            problems.append(f"{where}: nothing matches {pattern} after the block")
    return problems


@pytest.mark.parametrize("doc", DOCS)
def test_every_command_of_the_guide_runs_as_written(doc, build_dir, tmp_path):
    if not (build_dir / "bin" / "graph-ascend").is_file():
        pytest.fail(f"{build_dir}/bin/graph-ascend is missing: build the C++ tree first (scripts/build.sh)")
    blocks = shell_blocks(doc)
    folder = Folder(tmp_path / "root", build_dir)
    problems, ran = [], 0
    for block in blocks:
        if "skip" in block.directives:
            continue
        problems += run_block(folder, block)
        ran += 1
    assert not problems, "\n\n".join(problems)
    assert ran > 0, f"{doc}: no block was run"


def test_console_output_is_matched_line_by_line():
    printed = "kind: compare, mode: statistics\nNPU: 697 nodes\n  matched 697,   unmatched 0\n"
    assert missing_output(["kind: compare, mode: statistics", "...", "matched 697, unmatched 0"], printed) == []
    assert missing_output(["NPU: 698 nodes"], printed) == ["NPU: 698 nodes"]
    # in order: a line printed before the previous match does not count
    assert missing_output(["NPU: 697 nodes", "kind: compare, mode: statistics"], printed) == [
        "kind: compare, mode: statistics"
    ]
    assert missing_output(["kind: … mode: statistics"], printed) == []


def test_directives_are_read():
    d = parse_directives("skip: needs an NPU", "x")
    assert d["skip"] == "needs an NPU"
    d = parse_directives("omit pip: a release wheel; files samples/gpt_statistics; creates out/*.vis out/a", "x")
    assert d["omit"] == {"pip": "a release wheel"} and d["files"] == ["samples/gpt_statistics"]
    assert d["creates"] == ["out/*.vis", "out/a"]
    with pytest.raises(AssertionError):
        parse_directives("frobnicate", "x")
