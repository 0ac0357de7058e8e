#!/usr/bin/env python
"""Attention benchmark: nn.functional.scaled_dot_product_attention, ours (the fused CPU kernels)
against PyTorch's CPU SDPA, and the peak memory of our forward + backward.

    python benchmarks/bench_attention.py [--quick] [--threads N]

Cases (float32, batch 1, E = 64 unless said): L = S in {1024, 2048, 4096}, 8 heads at 1024 and
2048, 2 heads at 4096; causal and not. Per case: forward alone and forward + backward (the sum
of the output as loss), median of timed runs after a warm-up, in milliseconds, and the time
ratio ours / torch (lower is better).

Memory: tensor.max_memory_allocated on the CPU after reset_peak_memory_stats, around one
forward + backward with q, k, v already allocated, against the size of one L x S float32
matrix (what a materialising path holds at least once, per head): the fused path's peak is
a few (L, E) buffers, so it grows linearly in L.

Informational: the script always exits 0; timings never go into tests/.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def _inputs(L: int, heads: int, e: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, heads, L, e), dtype=np.float32) for _ in range(3)]


def peak_memory(L: int, heads: int = 2, e: int = 64, causal: bool = False) -> int:
    """Bytes our forward + backward allocates at its peak, beyond q, k, v themselves."""
    import tensor as T
    from nn.functional import scaled_dot_product_attention as sdpa
    q, k, v = (T.asarray(x).requires_grad_() for x in _inputs(L, heads, e))
    sdpa(q[:, :, :8], k[:, :, :8], v[:, :, :8]).sum().backward()   # compile, warm caches
    q.grad = k.grad = v.grad = None
    base = T.memory_allocated("cpu")
    T.reset_peak_memory_stats("cpu")
    sdpa(q, k, v, is_causal=causal).sum().backward()
    return T.max_memory_allocated("cpu") - base


def _time(fn, budget: float, warmup: int = 1, min_runs: int = 3) -> float:
    for _ in range(warmup):
        fn()
    times, start = [], time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def ours(L, heads, e, causal, budget):
    import tensor as T
    from nn.functional import scaled_dot_product_attention as sdpa
    q, k, v = (T.asarray(x).requires_grad_() for x in _inputs(L, heads, e))

    qd, kd, vd = q.detach(), k.detach(), v.detach()

    def fwd():   # detached inputs: nothing is recorded
        sdpa(qd, kd, vd, is_causal=causal)

    def both():
        sdpa(q, k, v, is_causal=causal).sum().backward()
    return _time(fwd, budget), _time(both, budget)


def theirs(L, heads, e, causal, budget):
    try:
        import torch
    except ImportError:
        return None, None
    q, k, v = (torch.from_numpy(x).requires_grad_() for x in _inputs(L, heads, e))
    F = torch.nn.functional

    def fwd():
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def both():
        F.scaled_dot_product_attention(q, k, v, is_causal=causal).sum().backward()
    return _time(fwd, budget), _time(both, budget)


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1024 and 2048 only, shorter budget")
    ap.add_argument("--threads", type=int, default=0, help="threads for both (default: all)")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script runs")
    a = ap.parse_args(argv)
    import tensor as T
    n = a.threads or os.cpu_count() or 1
    T.set_num_threads(n)
    try:
        import torch
        torch.set_num_threads(n)
    except ImportError:
        pass
    cases = [(1024, 8), (2048, 8), (4096, 2)]
    if a.quick:
        cases = cases[:2]
    if a.smoke:
        cases = [(128, 2)]
    budget = 0.2 if a.smoke else (1.0 if a.quick else 3.0)
    rows = []
    print(f"threads {n}; float32, batch 1, E = 64; times in ms (median), ratio ours/torch "
          "(lower is better)")
    print(f"{'case':<24}{'fwd ours':>10}{'torch':>9}{'x':>7}{'fwd+bwd ours':>14}{'torch':>9}{'x':>7}")
    for L, h in cases:
        for causal in (False, True):
            f0, b0 = ours(L, h, 64, causal, budget)
            f1, b1 = theirs(L, h, 64, causal, budget)
            name = f"L=S={L} H={h}{' causal' if causal else ''}"
            r = [name, f0, f1, b0, b1]
            rows.append(r)
            fmt = (lambda x: f"{x:9.1f}" if x is not None else f"{'-':>9}")
            ratio = (lambda x, y: f"{x / y:7.2f}" if y else f"{'-':>7}")
            print(f"{name:<24}{f0:10.1f}{fmt(f1)}{ratio(f0, f1)}{b0:14.1f}{fmt(b1)}{ratio(b0, b1)}")
    print("\npeak memory of our forward + backward (beyond q, k, v), float32, E = 64:")
    for L, h in ([(128, 2)] if a.smoke else [(1024, 2), (2048, 2), (4096, 2)]):
        peak = peak_memory(L, heads=h)
        mat = L * L * 4
        print(f"  L=S={L:<5} H={h}: {peak / 2**20:8.2f} MiB   (one L x S float32 matrix: "
              f"{mat / 2**20:7.1f} MiB; peak / matrix = {peak / mat:.4f})")
        rows.append([f"peak L={L}", peak, mat])
    return rows


if __name__ == "__main__":
    main()
