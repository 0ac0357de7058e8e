"""Fusion benchmark: the expression D + (A + B) * C over float32 arrays of 2^10 .. 2^26
elements, eager, captured unfused (tensor.compile(fuse=False)) and captured fused (one
generated kernel), with torch eager where installed; then the other fusions at one size
(2^min(max-log2, 22) elements): a run into a reduction, a row-broadcast affine, a softmax
written with ops (row reductions heading runs), and a matmul with its epilogue (bias + GELU).

    python benchmarks/bench_fusion.py [--max-log2 26] [--budget 0.3]

Unfused, the three ops move 9N floats (each reads two arrays and writes one); fused, the
kernel reads A, B, C, D once and writes the result once: 5N. Arithmetic intensity = 3 flops per
element over the bytes moved. Every timing is the median of calls within about --budget
seconds per variant; fused/unfused is a speed ratio (> 1: fusion is faster).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import tensor as T  # noqa: E402


def expr(a, b, c, d):
    return d + (a + b) * c


def median_us(fn, budget: float) -> float:
    fn()
    times, t_end = [], time.perf_counter() + budget
    while len(times) < 3 or (time.perf_counter() < t_end and len(times) < 1000):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def _variants(fn, arrs: list, budget: float, torch, label: str) -> dict:
    """{variant: us} of fn on arrays arrs: eager, captured unfused and fused (checked equal to
    eager, bit for bit), torch eager where installed."""
    xs = [T.asarray(a) for a in arrs]
    unfused, fused = T.compile(fn, fuse=False), T.compile(fn)
    for f in (unfused, fused):   # eager, capture, then replays
        f(*xs)
        f(*xs)
    if not np.array_equal(fused(*xs).numpy(), fn(*xs).numpy()):
        raise AssertionError(f"fused result differs from eager: {label}")
    t = {"eager": median_us(lambda: fn(*xs), budget),
         "unfused": median_us(lambda: unfused(*xs), budget),
         "fused": median_us(lambda: fused(*xs), budget)}
    if torch is not None:
        ts = [torch.from_numpy(a) for a in arrs]
        t["torch"] = median_us(lambda: fn(*ts), budget)
    return t


def _row(k: int, budget: float, torch) -> tuple:
    """(log2 size, {variant: us}, fused GB/s, flop per byte fused) of one size."""
    n = 1 << k
    rng = np.random.default_rng(k)
    t = _variants(expr, [rng.standard_normal(n, dtype=np.float32) for _ in range(4)], budget, torch,
                  f"2^{k}")
    return (k, t, 5 * 4 * n / (t["fused"] * 1e3), 3 * n / (5 * 4 * n))


def _sq_sum(a, b):
    return T.square(a - b).sum() if isinstance(a, T.Tensor) else ((a - b) ** 2).sum()


def _affine(x, m, s, b):
    return (x - m) * s + b


def _softmax_by_hand(x):
    m = x.max(axis=-1, keepdims=True) if isinstance(x, T.Tensor) else x.amax(axis=-1, keepdims=True)
    e = (x - m).exp()
    return e / e.sum(axis=-1, keepdims=True)


def _linear_gelu(x, w, b):
    if isinstance(x, T.Tensor):
        from nn import functional as F
        return F.gelu(x @ w + b)
    import torch
    return torch.nn.functional.gelu(x @ w + b)


def other_rows(k: int, budget: float) -> list[tuple]:
    """[(name, {variant: us}, floats moved unfused, fused)] of the other fusions at 2^k
    elements (the matmul: rows x 256 @ 256 x 256, its product 2^k elements)."""
    try:
        import torch
    except ImportError:
        torch = None
    n, rng = 1 << k, np.random.default_rng(k)
    cols = 256
    rows_ = n // cols
    cases = [
        ("sum((a - b)^2)", _sq_sum, [(n,), (n,)], (6, 2)),   # sub 3N, square 2N, sum N
        ("(x - m) * s + b, rows", _affine, [(rows_, cols), (cols,), (cols,), (cols,)], (9, 2)),
        # max N, sub 2N, exp 2N, sum N, div 2N; fused: max+sub+exp (x read once: the row stays
        # in cache), sum+div (e read once): 4N
        ("softmax by hand, rows", _softmax_by_hand, [(rows_, cols)], (8, 4)),
        ("gelu(x @ w + b)", _linear_gelu, [(rows_, cols), (cols, cols), (cols,)], (4, 2)),
    ]
    return [(name, _variants(fn, [rng.standard_normal(sh, dtype=np.float32) for sh in shapes], budget,
                             torch, name), *moved) for name, fn, shapes, moved in cases]


def rows(max_log2: int = 26, budget: float = 0.3, step: int = 2) -> list[tuple]:
    try:
        import torch
    except ImportError:
        torch = None
    out = []
    for k in range(10, max_log2 + 1, step):
        out.append(_row(k, budget, torch))
    return out


def main(argv=None) -> list[tuple]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-log2", type=int, default=26)
    ap.add_argument("--budget", type=float, default=0.3, help="seconds per variant and size")
    a = ap.parse_args(argv)
    rs = rows(a.max_log2, a.budget)
    print(f"D + (A + B) * C, float32, {T.get_num_threads()} threads; times in us (medians)")
    print(f"{'size':>6s} {'eager':>10s} {'unfused':>10s} {'fused':>10s} {'torch':>10s} "
          f"{'fused/unfused':>14s} {'fused/eager':>12s} {'fused GB/s':>11s} {'flop/byte':>10s}")
    for k, t, gbs, ai in rs:
        tt = f"{t['torch']:10.1f}" if "torch" in t else f"{'-':>10s}"
        print(f"{'2^' + str(k):>6s} {t['eager']:10.1f} {t['unfused']:10.1f} {t['fused']:10.1f} {tt} "
              f"{t['unfused'] / t['fused']:14.2f} {t['eager'] / t['fused']:12.2f} {gbs:11.2f} {ai:10.3f}")
    print("fused/unfused, fused/eager: speed ratios (> 1: fused is faster); GB/s counts 5N floats")
    k = min(a.max_log2, 22)
    print(f"\nother fusions, 2^{k} elements, float32; times in us (medians); floats moved per element "
          "of the run, unfused -> fused (the matmul's own traffic not counted)")
    print(f"{'case':>24s} {'eager':>10s} {'unfused':>10s} {'fused':>10s} {'torch':>10s} "
          f"{'fused/unfused':>14s} {'moved':>8s}")
    for name, t, mu, mf in other_rows(k, a.budget):
        tt = f"{t['torch']:10.1f}" if "torch" in t else f"{'-':>10s}"
        print(f"{name:>24s} {t['eager']:10.1f} {t['unfused']:10.1f} {t['fused']:10.1f} {tt} "
              f"{t['unfused'] / t['fused']:14.2f} {f'{mu}N->{mf}N':>8s}")
    return rs


if __name__ == "__main__":
    main()
