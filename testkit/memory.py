"""The memory and CPU of a process's descendants, sampled from /proc while a run goes on (Linux).

A local Spark run's work happens in processes this one started: the JVM (driver and executor in
one, in local mode) and PySpark's Python workers. ``bench/quilts_scale.py`` and
``bench/ingest_memory.py`` record their peaks beside a run's figures; the tests that bound a
worker's memory read the same sampler.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path


class MemorySampler(threading.Thread):
    """Peak RSS of this process's descendants every 0.2 s: the JVM, and the Python workers.

    ``start()`` it before the run and set ``stop_flag`` (then ``join()``) after; ``peak`` holds
    ``jvm_rss``, ``python_workers_rss`` (their sum) and ``python_worker_max_rss`` (the largest
    single Python descendant) in bytes, ``cpu`` each descendant's CPU seconds and ``timeline``
    (perf_counter, CPU seconds so far: all, the JVM's, the Python workers') per sample.
    """

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = {"jvm_rss": 0, "python_workers_rss": 0, "python_worker_max_rss": 0}
        self.cpu: dict[int, float] = {}  # pid -> latest utime + stime (s) of every descendant seen
        self.kind: dict[int, str] = {}  # pid -> "jvm" or "python_workers"
        self.timeline: list[tuple[float, float, float, float]] = []
        self.stop_flag = threading.Event()

    @staticmethod
    def processes() -> dict[int, tuple[int, str, int, float]]:
        """pid -> (parent pid, command, RSS bytes, CPU seconds) of every process /proc shows."""
        procs = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
                rss = int(Path(f"/proc/{entry}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
                fields = stat.rsplit(")", 1)[1].split()
                cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                continue
            procs[int(entry)] = (ppid, cmd, rss, cpu)
        return procs

    def sample(self) -> None:
        """One sample: the descendants' RSS by kind into ``peak``, their CPU into ``timeline``."""
        procs = self.processes()
        me = os.getpid()
        jvm = workers = 0
        for pid, (_, cmd, rss, cpu) in procs.items():
            p, seen = procs[pid][0], 0
            while p not in (me, 0, 1) and p in procs and seen < 10:
                p, seen = procs[p][0], seen + 1
            if p != me or pid == me:
                continue
            self.cpu[pid] = max(self.cpu.get(pid, 0.0), cpu)
            if cmd.endswith("java"):
                jvm += rss
                self.kind[pid] = "jvm"
            elif "python" in cmd:
                workers += rss
                self.kind[pid] = "python_workers"
                self.peak["python_worker_max_rss"] = max(self.peak["python_worker_max_rss"], rss)
        mine = os.times()
        by_kind = {"jvm": 0.0, "python_workers": 0.0}
        for pid, kind in self.kind.items():
            by_kind[kind] += self.cpu[pid]
        self.timeline.append((time.perf_counter(), sum(self.cpu.values()) + mine.user + mine.system,
                              by_kind["jvm"], by_kind["python_workers"]))
        self.peak["jvm_rss"] = max(self.peak["jvm_rss"], jvm)
        self.peak["python_workers_rss"] = max(self.peak["python_workers_rss"], workers)

    def run(self) -> None:
        """Sample every 0.2 s until ``stop_flag`` is set."""
        while not self.stop_flag.is_set():
            self.sample()
            time.sleep(0.2)
