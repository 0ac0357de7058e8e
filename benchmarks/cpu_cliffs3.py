#!/usr/bin/env python
"""CPU cliffs (round 3), one thread: float32 sin / cos (contiguous and a transposed view),
partition / argpartition, nonzero / count_nonzero / mask indexing, the float32 Frobenius norm,
float32 -> int32 astype, sort, nan_to_num. Time ratio ours / NumPy in one run (> 1: we are
slower). Sizes 2^18 elements or 512 x 512, float32 unless named.

    python benchmarks/cpu_cliffs3.py [--quick]

partition / argpartition are timed through tensor.sorting.partition_along (the selection) when
the CPU backend has partition_rows, and through T.partition otherwise (marked "sort").
Times: the minimum of repeated perf_counter runs after a warm-up (the first call compiles).
Always exits 0: the numbers are informational.
"""
import gc
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tensor as T  # noqa: E402
from tensor import sorting  # noqa: E402
from tensor.backend import cpu as cpu_backend  # noqa: E402


def tmin(f, budget):
    f()
    ts, t0 = [], time.perf_counter()
    while len(ts) < 3 or (time.perf_counter() - t0 < budget and len(ts) < 30):
        s = time.perf_counter()
        f()
        ts.append(time.perf_counter() - s)
    return min(ts)


def cases():
    rng = np.random.default_rng(0)
    v = rng.standard_normal(1 << 18).astype(np.float32)
    v64 = v.astype(np.float64)
    m = rng.standard_normal((512, 512)).astype(np.float32)
    mask = v > 0
    withnan = v.copy()
    withnan[::97] = np.nan
    tv, tv64, tm, tmask, tnan = (T.from_numpy(a) for a in (v, v64, m, mask, withnan))
    selecting = getattr(cpu_backend, "partition_rows", None) is not None
    how = "select" if selecting else "sort"

    def part(x, k, values):
        if selecting:
            return sorting.partition_along(x, [k], -1, values)
        return T.partition(x, k) if values else T.argpartition(x, k)

    yield "sin f32", lambda: T.sin(tv), lambda: np.sin(v)
    yield "cos f32 transposed", lambda: T.cos(tm.T), lambda: np.cos(m.T)
    yield "sin f64", lambda: T.sin(tv64), lambda: np.sin(v64)
    yield f"partition kth=100 ({how})", lambda: part(tv, 100, True), lambda: np.partition(v, 100)
    yield f"argpartition kth=100 ({how})", lambda: part(tv, 100, False), lambda: np.argpartition(v, 100)
    yield (f"partition median ({how})", lambda: part(tv, 1 << 17, True),
           lambda: np.partition(v, 1 << 17))
    yield (f"partition rows kth=10 (512,512) ({how})", lambda: part(tm, 10, True),
           lambda: np.partition(m, 10))
    yield "nonzero(mask)", lambda: T.nonzero(tmask), lambda: np.nonzero(mask)
    yield "count_nonzero(mask)", lambda: T.count_nonzero(tmask), lambda: np.count_nonzero(mask)
    yield "x[mask]", lambda: tv[tmask], lambda: v[mask]
    yield "linalg.norm (512,512)", lambda: T.linalg.norm(tm), lambda: np.linalg.norm(m)
    yield "astype int32", lambda: tv.astype(T.int32), lambda: v.astype(np.int32)
    yield "sort", lambda: T.sort(tv), lambda: np.sort(v)
    yield "nan_to_num", lambda: T.nan_to_num(tnan), lambda: np.nan_to_num(withnan)


def main():
    budget = 0.05 if "--quick" in sys.argv else 0.3
    default = T.get_num_threads()
    T.set_num_threads(1)
    print(f"{'case (1 thread)':44s} {'ours us':>9s} {'numpy us':>9s} {'ours/np':>8s}")
    try:
        for name, ours, ref in cases():
            gc.collect()
            gc.disable()
            a, b = tmin(ours, budget), tmin(ref, budget)
            gc.enable()
            print(f"{name:44s} {a * 1e6:9.1f} {b * 1e6:9.1f} {a / b:8.2f}", flush=True)
    finally:
        T.set_num_threads(default)


if __name__ == "__main__":
    main()
