"""A captured step's device work replayed through graphs (tensor/replay.py calls run()): on
CUDA, CUDA Graphs (the backend's record_graph; backends without graphs set it to None).

The program's steps are cut into segments: runs of calls on the graph device's backend (kernel
launches and device copies over the program's static memory) and the steps in between that
must run as they are (islands of host work such as an optimizer's loop, random draws re-based
on their generator each replay, calls whose result the host checks, other devices' calls). The
first replay records each run of two or more such calls into a graph (with its own memory pool
for the calls' scratch memory) and launches it; later replays launch the graph: one driver call
instead of one Python backend call and launch per kernel. A step that cannot be recorded (it copies
host memory to the device, as attention's offsets, or synchronizes) runs eagerly and the run is
recorded around it. STRIDEX_CUDA_GRAPHS=0 turns graphs off (every step eagerly, as on the CPU).
"""
from __future__ import annotations

import os

_MIN_RUN = 2   # shorter runs gain nothing from a graph


def enabled() -> bool:
    return os.environ.get("STRIDEX_CUDA_GRAPHS", "1") != "0"


def graph_device(pools: dict):
    """(device, backend) whose calls a program may record into graphs: the one device of the
    capture (pools: Device -> its pool) whose backend has graphs, else (None, None)."""
    from .backend import backend_for
    devs = [d for d in pools if getattr(backend_for(d), "record_graph", None) is not None]
    return (devs[0], backend_for(devs[0])) if len(devs) == 1 else (None, None)


def _segment(first: int, end: int, graphable: bool) -> list:
    """[first, end, None: to record | "eager"]: runs too short to gain run eagerly."""
    return [first, end, None if graphable and end - first >= _MIN_RUN else "eager"]


def _segments(graphable: list) -> list:
    out, i, n = [], 0, len(graphable)
    while i < n:
        j = i
        while j < n and graphable[j] == graphable[i]:
            j += 1
        out.append(_segment(i, j, graphable[i]))
        i = j
    return out


def will_record(graphable: list) -> bool:
    """Whether a program's replay records graphs: graphs on, and a run of steps long enough."""
    return enabled() and any(seg[2] is None for seg in _segments(graphable))


def run(prog, base) -> None:
    """Replay prog's steps, its CUDA runs as graphs (recorded at the first replay)."""
    if prog.segments is None:
        prog.segments = _segments(prog.graphable)
    segs, steps, i = prog.segments, prog.steps, 0
    while i < len(segs):
        first, end, g = segs[i]
        if g is None:
            bad = _record(prog, segs[i], base)
            if bad is not None:   # that step cannot be recorded: it runs eagerly, the rest of
                parts = [_segment(bad, bad + 1, False)]   # the run is recorded around it
                if bad > first:
                    parts.insert(0, _segment(first, bad, True))
                if end > bad + 1:
                    parts.append(_segment(bad + 1, end, True))
                segs[i:i + 1] = parts
                continue
            g = segs[i][2]
        if g == "eager":
            for st in steps[first:end]:
                prog.step(st, base)
        else:
            g()   # the graph's replay
        i += 1


def _record(prog, seg, base):
    """Record seg's steps into a graph (they do not run while recorded): None when done, else
    the index of the step that could not be recorded (a host copy, a synchronization)."""
    at = [seg[0]]

    def steps():
        for k in range(seg[0], seg[1]):
            at[0] = k
            prog.step(prog.steps[k], base)
    replay, err = prog.graph_be.record_graph(prog.graph_dev, steps)
    if replay is None:
        return at[0]
    seg[2] = replay
    return None
