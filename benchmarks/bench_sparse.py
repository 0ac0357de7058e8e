"""SpMM timing (not a test): a power-law random graph's adjacency (CSR, about 1M nonzeros)
times a dense (n, 64) float32 matrix, tensor.sparse against scipy.sparse on the CPU (and
against torch.sparse when installed), in one run; then scatter_reduce (sum and amax) of a
(200000, 64) float32 source into 20000 rows, against torch.scatter_reduce when installed.

    python benchmarks/bench_sparse.py [--nodes 100000] [--nnz 1000000] [--cols 64] [--reps 10]
    python benchmarks/bench_sparse.py --smoke     # tiny sizes, 2 reps (CI smoke test)

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
import warnings

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


def scatter_rows(src_rows: int, out_rows: int, cols: int, reps: int) -> list:
    """scatter_reduce(dim=0, include_self=False) of (src_rows, cols) into (out_rows, cols) by
    uniform random row ids, sum and amax; rows (name, ms, its time / ours) with our error
    against NumPy (np.add.at / np.maximum.at) printed."""
    import tensor as T
    rng = np.random.default_rng(2)
    src = rng.standard_normal((src_rows, cols)).astype(np.float32)
    ids = rng.integers(0, out_rows, src_rows)
    idx = np.ascontiguousarray(np.broadcast_to(ids[:, None], src.shape))
    S, Ix = T.asarray(src), T.asarray(idx)
    base = T.zeros((out_rows, cols), dtype=T.float32)
    try:
        import torch
        tS, tI, tbase = torch.from_numpy(src), torch.from_numpy(idx), torch.zeros(out_rows, cols)
    except ImportError:
        torch = None
    print(f"scatter_reduce: ({src_rows}, {cols}) float32 -> {out_rows} rows, include_self=False")
    rows = []
    for red in ("sum", "amax"):
        ours = best(lambda r=red: T.scatter_reduce(base, 0, Ix, S, r, include_self=False), reps)
        got = T.scatter_reduce(base, 0, Ix, S, red, include_self=False).numpy()
        if red == "sum":
            ref = np.zeros((out_rows, cols), np.float64)
            np.add.at(ref, ids, src.astype(np.float64))
        else:
            ref = np.full((out_rows, cols), -np.inf, np.float32)
            np.maximum.at(ref, ids, src)
            ref[np.isneginf(ref)] = 0.0
        err = float(np.abs(got - ref).max() / max(1.0, np.abs(ref).max()))
        rows.append((f"scatter_reduce {red} tensor", ours * 1e3, 1.0))
        print(f"  {red}: max relative difference vs numpy {err:.1e}")
        if torch is not None:
            t = best(lambda r=red: tbase.scatter_reduce(0, tI, tS, r, include_self=False), reps)
            rows.append((f"scatter_reduce {red} torch ({torch.get_num_threads()} threads)",
                         t * 1e3, t / ours))
    # the same reductions over sorted ids (segment_sum / segment_max), vs torch.segment_reduce
    order = np.argsort(ids, kind="stable")
    Ss, sid = T.asarray(src[order]), T.asarray(ids[order])
    lengths = np.bincount(ids, minlength=out_rows)
    if torch is not None:
        tSs, tl = torch.from_numpy(src[order]), torch.from_numpy(lengths)
    for red, fn in (("sum", T.segment_sum), ("max", T.segment_max)):
        ours = best(lambda f=fn: f(Ss, sid, num_segments=out_rows), reps)
        rows.append((f"segment_{red} (sorted ids) tensor", ours * 1e3, 1.0))
        if torch is not None:
            t = best(lambda r=red: torch.segment_reduce(tSs, r, lengths=tl, initial=0.0), reps)
            rows.append((f"segment_reduce {red} torch ({torch.get_num_threads()} threads)",
                         t * 1e3, t / ours))
    for name, ms, ratio in rows:
        print(f"{name:40s} {ms:9.2f} ms  its time / ours {ratio:5.2f}")
    return rows


def main(argv=None) -> list:
    """Rows (name, ms, its time / ours): the SpMM rows ("spmm ..."), then the scatter rows."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, default=100_000)
    p.add_argument("--nnz", type=int, default=1_000_000)
    p.add_argument("--cols", type=int, default=64)
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--smoke", action="store_true",
                   help="tiny sizes (2000 nodes, 20000 nonzeros, 8 columns), 2 reps")
    a = p.parse_args(argv)
    if a.smoke:
        a.nodes, a.nnz, a.cols, a.reps = 2000, 20_000, 8, 2
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
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta")
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
    rows = [(f"spmm {name}", t * 1e3, t / ours) for name, t in rows]
    if a.smoke:
        return rows + scatter_rows(2000, 200, 8, a.reps)
    return rows + scatter_rows(200_000, 20_000, 64, a.reps)


if __name__ == "__main__":
    main()
