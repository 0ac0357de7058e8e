"""SpMM timing (not a test): a power-law random graph's adjacency (CSR, about 1M nonzeros)
times a dense (n, 64) float32 matrix, tensor.sparse against scipy.sparse on the CPU (and
against torch.sparse when installed), in one run.

    python benchmarks/bench_sparse.py [--nodes 100000] [--nnz 1000000] [--cols 64] [--reps 10]

The graph: each edge's source drawn with probability proportional to (i + 1)^-alpha (a few
hub rows with tens of thousands of entries, most rows short or empty), destination uniform.
Our CPU kernel (tensor/cpu/csrc/sparse.h) runs rows in chunks balanced by nnz over all
threads (STRIDEX_NUM_THREADS); SciPy's csr @ dense is single-threaded.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def graph(nodes: int, nnz: int, alpha: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = (np.arange(nodes) + 1.0) ** -alpha
    src = rng.choice(nodes, size=nnz, p=w / w.sum())
    dst = rng.integers(0, nodes, nnz)
    return src.astype(np.int64), dst.astype(np.int64), rng.standard_normal(nnz).astype(np.float32)


def _threads() -> int:
    from tensor.cpu import kernels
    return kernels._num_threads


def best(fn, reps: int) -> float:
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def main(argv=None) -> list:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, default=100_000)
    p.add_argument("--nnz", type=int, default=1_000_000)
    p.add_argument("--cols", type=int, default=64)
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--reps", type=int, default=10)
    a = p.parse_args(argv)
    import tensor as T
    src, dst, val = graph(a.nodes, a.nnz, a.alpha)
    A = T.sparse.sparse_coo_tensor(np.stack([src, dst]), T.asarray(val),
                                   (a.nodes, a.nodes)).to_sparse_csr()
    lens = np.diff(A.crow_indices().numpy())
    B = np.random.default_rng(1).standard_normal((a.nodes, a.cols)).astype(np.float32)
    Bt = T.asarray(B)
    print(f"graph: {a.nodes} nodes, {A.nnz} nonzeros after coalescing, longest row {lens.max()}, "
          f"empty rows {int((lens == 0).sum())}; dense {B.shape} float32; "
          f"threads {_threads()}")
    rows = []
    ours = best(lambda: A @ Bt, a.reps)
    rows.append(("tensor.sparse", ours))
    ref = None
    try:
        import scipy.sparse  # noqa: F401
        M = T.sparse.to_scipy(A)
        ref = M @ B
        rows.append(("scipy.sparse", best(lambda: M @ B, a.reps)))
    except ImportError:
        print("scipy not installed: no SciPy column")
    try:
        import torch
        tA = torch.sparse_csr_tensor(torch.from_numpy(A.crow_indices().numpy()),
                                     torch.from_numpy(A.col_indices().numpy()),
                                     torch.from_numpy(A.values().numpy()), (a.nodes, a.nodes),
                                     check_invariants=True)
        tB = torch.from_numpy(B)
        rows.append((f"torch.sparse ({torch.get_num_threads()} threads)",
                     best(lambda: tA @ tB, a.reps)))
    except ImportError:
        pass
    if ref is not None:
        err = np.abs((A @ Bt).numpy() - ref).max() / max(1.0, np.abs(ref).max())
        print(f"max relative difference vs scipy: {err:.2e}")
    for name, t in rows:
        gf = 2.0 * A.nnz * a.cols / t / 1e9
        print(f"{name:32s} {t * 1e3:9.2f} ms  {gf:6.2f} GFLOP/s  its time / ours {t / ours:5.2f}")
    return rows


if __name__ == "__main__":
    main()
