"""Figures of a running process and of latency samples, shared by the service
benchmarks (standard library only, Linux /proc)."""

import os
import pathlib
import re
import subprocess
import sys
import threading


def percentile(values, p):
    """The p-th percentile, interpolated between the two nearest ranks."""
    values = sorted(values)
    if not values:
        return float("nan")
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def cpu_s(pid):
    """User + system CPU seconds of a process so far."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    """Resident memory of a process in MB; NaN when it has gone."""
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def child_pid(parent, name):
    """The pid of `parent`'s child process whose executable ends in `name`, or None."""
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and cmd.endswith(name.encode()):
            return int(entry.name)
    return None


def stop(proc, timeout=20):
    """SIGTERM, then SIGKILL after `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def start_tensorboard(logdir):
    """`tensorboard --logdir` of this Python on a free port of 127.0.0.1; returns (process, port)."""
    exe = pathlib.Path(sys.executable).parent / "tensorboard"
    proc = subprocess.Popen(
        [str(exe), "--logdir", str(logdir), "--port", "0", "--host", "127.0.0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    port = None
    for line in proc.stdout:
        m = re.search(r"TensorBoard \S+ at http://[^:]+:(\d+)/", line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        raise RuntimeError("tensorboard did not start")
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    return proc, port
