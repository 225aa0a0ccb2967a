"""CPU seconds of this host's processes, by process name, while a block runs
(Linux /proc; elsewhere an empty result).

    with ProcessCpu() as cpu:
        work()
    cpu.seconds()   # {"driver": 12.1, "ray::MapWorker": 830.4, "raylet": 3.2, ...}

A thread reads /proc/<pid>/stat (utime + stime, all threads) of every process
every `interval` seconds and at the end; a process's CPU is its last reading
minus its first (0 for one started during the block), so a process that exits
between two readings loses at most `interval` seconds of its CPU. Names: "driver"
(this process), Ray's process titles up to a "(" or "." ("ray::MapWorker",
"ray::IDLE", "ray::_StatsActor"), "pool worker" (multiprocessing's spawned children), else
the executable's base name ("raylet", "gcs_server", "python3").
"""

import os
import threading

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _name(pid, argv):
    if pid == os.getpid():
        return "driver"
    first = argv[0].decode(errors="replace") if argv and argv[0] else "?"
    if first.startswith("ray::"):
        return first.split("(")[0].split(".")[0].split()[0]
    if any(b"multiprocessing" in a for a in argv):
        return "pool resource tracker" if any(b"resource_tracker" in a for a in argv) \
            else "pool worker"
    return os.path.basename(first.split()[0]) if first.strip() else "?"


def _readings():
    """{(pid, start time): (name, CPU ticks)} of the processes now."""
    out = {}
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return out
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[(int(pid), fields[19])] = (_name(int(pid), argv), int(fields[11]) + int(fields[12]))
    return out


class ProcessCpu:
    def __init__(self, interval=0.5):
        self.interval = interval
        self._stop = threading.Event()
        self._first = self._last = {}

    def _read(self):
        """A reading into _last; a process keeps its latest name ("ray::IDLE"
        becomes "ray::MapWorker") but not "?" (an exiting one has no command
        line)."""
        for key, (name, ticks) in _readings().items():
            if name == "?" and key in self._last:
                name = self._last[key][0]
            self._last[key] = (name, ticks)

    def _watch(self):
        while not self._stop.wait(self.interval):
            self._read()

    def __enter__(self):
        self._first = _readings()
        self._last = dict(self._first)
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._read()

    def seconds(self):
        """{name: CPU seconds during the block}, largest first."""
        out = {}
        for key, (name, ticks) in self._last.items():
            used = ticks - self._first.get(key, (name, 0))[1]
            out[name] = out.get(name, 0) + used / _TICK
        return dict(sorted(((k, round(v, 2)) for k, v in out.items() if v > 0),
                           key=lambda kv: -kv[1]))
