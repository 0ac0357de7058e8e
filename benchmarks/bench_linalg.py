"""Linear algebra: tensor.linalg against NumPy's LAPACK (CPU) or PyTorch's cuSOLVER (CUDA), in
one run.

    python benchmarks/bench_linalg.py [--device cpu|cuda] [--smoke]

Cases (the issue's): solve, cholesky, qr, svd and eigh of one 512 x 512 float64 matrix and of a
batch of 1000 8 x 8 matrices. Median of 5 calls after one warm-up; ref/ours is a time ratio
(> 1: we are faster); the error column is our result's residual against the reference's
(relative to ||A||).
"""
from __future__ import annotations

import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

import numpy as np  # noqa: E402
from bench_train import device_bench_args, median_step_ms  # noqa: E402

import tensor as T  # noqa: E402

OPS = ("solve", "cholesky", "qr", "svd", "eigh")


def _inputs(rng, shape):
    a = rng.standard_normal(shape)
    n = shape[-1]
    spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return a + n ** 0.5 * np.eye(n), spd, rng.standard_normal(shape[:-1] + (1,))


def _call(mod, op, a, spd, b):
    """One call of `op` in namespace mod (tensor.linalg, numpy.linalg or torch.linalg)."""
    if op == "solve":
        return mod.solve(a, b)
    if op == "cholesky":
        return mod.cholesky(spd)
    if op == "qr":
        return mod.qr(a)
    if op == "svd":
        return mod.svd(a, full_matrices=False)
    return mod.eigh(spd)


def _residual(op, a, spd, b, out) -> float:
    """||A - reconstruction|| / ||A|| of our result (host arrays)."""
    g = [o.numpy() for o in out] if isinstance(out, tuple) else out.numpy()
    if op == "solve":
        return float(np.abs(a @ g - b).max() / np.abs(a).max() / max(np.abs(g).max(), 1))
    if op == "cholesky":
        r = g @ np.swapaxes(g, -1, -2) - spd
        return float(np.abs(r).max() / np.abs(spd).max())
    if op == "qr":
        return float(np.abs(g[0] @ g[1] - a).max() / np.abs(a).max())
    if op == "svd":
        return float(np.abs((g[0] * g[1][..., None, :]) @ g[2] - a).max() / np.abs(a).max())
    return float(np.abs(spd @ g[1] - g[1] * g[0][..., None, :]).max() / np.abs(spd).max())


def main(argv=None) -> list:
    a, torch, sync = device_bench_args(__doc__, argv)
    rng = np.random.default_rng(0)
    big, batch = ((512, 512), (1000, 8, 8)) if not a.smoke else ((24, 24), (10, 4, 4))
    rows = []
    for shape in (big, batch):
        host = _inputs(rng, shape)
        ours_in = [T.asarray(x, device=a.device) for x in host]
        label = f"{shape[0]}x{shape[1]}" if len(shape) == 2 else f"{shape[0]} of {shape[1]}x{shape[2]}"
        for op in OPS:
            ours = functools.partial(_call, T.linalg, op, *ours_in)
            ms = median_step_ms(ours, sync, 1, 5)
            err = _residual(op, *host, ours())
            rms = None
            if a.device == "cpu":
                rms = median_step_ms(functools.partial(_call, np.linalg, op, *host), lambda: None, 1, 5)
            elif torch is not None:
                t_in = [torch.from_numpy(x).cuda() for x in host]
                rms = median_step_ms(functools.partial(_call, torch.linalg, op, *t_in),
                                     torch.cuda.synchronize, 1, 5)
            rows.append((f"{op} {label} f64", ms, rms, err))
    ref = "numpy" if a.device == "cpu" else "torch"
    print(f"linalg on {a.device} ({T.get_num_threads()} threads); reference: {ref}")
    print(f"{'case':28s} {'ours ms':>9s} {ref + ' ms':>9s} {'ref/ours':>9s} {'residual':>10s}")
    for name, ms, rms, err in rows:
        r = f"{rms:9.3f} {rms / ms:9.2f}" if rms else f"{'':9s} {'':9s}"
        print(f"{name:28s} {ms:9.3f} {r} {err:10.1e}")
    return rows


if __name__ == "__main__":
    main()
