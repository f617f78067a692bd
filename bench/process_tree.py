"""Peak memory of a command and of every process it starts, for the scale benches
(bench_dedup_scale.py, bench_dedup_datatrove.py, bench_stages_scale.py).

Usage:
    proc = subprocess.Popen(cmd)
    samples, largest = sampled(proc)           # [(s, MB largest, MB all)] every 0.2 s; own peak MB
    all_peak = max(s[2] for s in samples)
    print(load())                               # the 1-minute load average, beside the figures

The largest process's peak is its own high-water mark (/proc/PID/status VmHWM: no peak between
two samples is missed); the sum over all processes is sampled with psutil every 0.2 s (a peak
shorter than that may be missed).
"""
from __future__ import annotations

import os
import subprocess
import time

import psutil


def peak_rss_mb(pid: int) -> float:
    """The process's own peak resident memory (VmHWM: no peak between two samples is missed)."""
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1e3


def sampled(proc: subprocess.Popen, tick=None) -> tuple[list[tuple[float, float, float]], float]:
    """([(seconds, RSS MB of the largest process, of all of them)] every 0.2 s, the largest
    process's own peak RSS MB) of `proc` and its children until it ends; `tick(seconds)` after
    each sample."""
    root, started, samples, peak = psutil.Process(proc.pid), time.time(), [], 0.0
    while proc.poll() is None:
        rss = []
        for p in [root, *root.children(recursive=True)]:
            try:
                rss.append(p.memory_info().rss / 1e6)
                peak = max(peak, rss[-1], peak_rss_mb(p.pid))
            except (psutil.Error, OSError, StopIteration):   # it ended in between
                pass
        now = time.time() - started
        samples.append((now, max(rss, default=0.0), sum(rss)))
        if tick:
            tick(now)
        time.sleep(0.2)
    return samples or [(0.0, 0.0, 0.0)], peak


def load() -> str:
    """The 1-minute load average: the machine is shared, so it goes beside every figure."""
    return f"{os.getloadavg()[0]:.1f}"
