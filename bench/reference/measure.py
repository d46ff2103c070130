"""Runs a command and reports its wall time and peak memory, children included.

Usage: python3 measure.py [--interval S] [--log FILE] -- COMMAND [ARGS...]

msprobe builds and compares ranks in a multiprocessing pool, so the peak of one process
(what `/usr/bin/time -v` reports) understates the memory a run needs. This polls /proc every
--interval seconds and sums the resident set of the whole process tree; it also reports the
largest single process from getrusage(RUSAGE_CHILDREN), which is exact but per process, and the
CPU time (user + system) of the whole tree, steadier than wall time on a shared machine.
Prints, after the command ends:
    wall_s=<s> peak_rss_mb=<tree peak, polled> max_process_rss_mb=<largest process> cpu_s=<s> exit=<code>
Exits with the command's exit code. Standard library only (Linux /proc).
"""

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def children_of():
    """Map pid -> [child pids] for every process visible in /proc."""
    tree = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after the command name (which may contain spaces) start after the last ')'.
        fields = stat[stat.rindex(b")") + 2 :].split()
        tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss(root):
    tree = children_of()
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss_bytes(pid)
        stack.extend(tree.get(pid, ()))
    return total


class Measurement:
    def __init__(self, code, wall_s, peak_bytes, max_process_bytes, cpu_s):
        self.code, self.wall_s, self.cpu_s = code, wall_s, cpu_s
        self.peak_bytes, self.max_process_bytes = peak_bytes, max_process_bytes

    def report(self):
        return (
            f"wall_s={self.wall_s:.2f} peak_rss_mb={self.peak_bytes / 2**20:.1f} "
            f"max_process_rss_mb={self.max_process_bytes / 2**20:.1f} cpu_s={self.cpu_s:.2f} exit={self.code}"
        )


def run(command, log_path=None, cwd=None, env=None, interval=0.05):
    """Runs command to completion and measures it (children included, as far as they are waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log_path, "wb") if log_path else contextlib.nullcontext() as out:
        start = time.monotonic()
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT if out else None)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(interval)
        wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    max_process = after.ru_maxrss * 1024  # KiB on Linux; the largest child of this process so far
    return Measurement(proc.returncode, wall, max(peak, max_process), max_process, cpu)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--log", help="send the command's stdout and stderr to this file")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    result = run(command, args.log, interval=args.interval)
    print(result.report(), flush=True)
    return result.code


if __name__ == "__main__":
    sys.exit(main())
