"""The nn row kernels (softmax, log_softmax backward, layer_norm, forward and backward) in both
variants, uncached and cached (tensor/cuda/nn_kernels.py ROW_CACHE), on one GPU run.

    python benchmarks/bench_rows.py [--smoke] [--reps 20]

Per (op, shape, dtype): GB/s of each variant (bytes each kernel must move: read x (and g),
write y) as % of the device-to-device copy's, and cached/uncached as a time ratio (> 1: caching
is faster). Timed with CUDA events, median of --reps after a warm-up call. ROW_CACHE's default
is what these numbers chose.
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

from bench_cuda import _events_ms  # noqa: E402

import tensor as T  # noqa: E402
from tensor.cuda import nn_kernels as NK  # noqa: E402
from tensor.cuda import runtime as R  # noqa: E402


def _copy_gbs(n: int, reps: int) -> float:
    x, y = T.empty(n, dtype="float32", device="cuda"), T.empty(n, dtype="float32", device="cuda")
    st = R.device_state(0)
    ms = _events_ms(lambda: R.memcpy_dtod(st, y.data_ptr(), x.data_ptr(), 4 * n), reps)
    return 2 * 4 * n / ms / 1e6


def _cases(rows: int, L: int, dtn: str):
    """(name, kernel call, bytes moved) of the row kernels on (rows, L) of dtype dtn."""
    x = T.rand(rows, L, dtype="float32", device="cuda").astype(dtn)
    g = T.rand(rows, L, dtype="float32", device="cuda").astype(dtn)
    y, gx = T.empty_like(x), T.empty_like(x)
    w, b = T.ones(L, dtype=dtn, device="cuda"), T.zeros(L, dtype=dtn, device="cuda")
    stat = "float64" if dtn == "float64" else "float32"
    mean, rstd = T.empty(rows, dtype=stat, device="cuda"), T.empty(rows, dtype=stat, device="cuda")
    nb = x.dtype.itemsize * rows * L
    return [("softmax fwd", lambda: NK.softmax_fwd(x, y, rows, L, False), 2 * nb),
            ("log_softmax bwd", lambda: NK.softmax_bwd(y, g, gx, rows, L, True), 3 * nb),
            ("layer_norm fwd", lambda: NK.layer_norm_fwd(x, w, b, y, mean, rstd, rows, L, 1e-5),
             2 * nb),
            ("layer_norm bwd dx", lambda: NK.layer_norm_bwd(x, mean, rstd, g, w, gx, None, None,
                                                           rows, L, 1), 3 * nb)]


def main(argv=None) -> list[tuple]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny shapes (the CUDA emulator)")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args(argv)
    shapes = ([(8, 64), (4, 1500)] if a.smoke else
              [(8192, 4096), (16384, 2048), (32768, 1024), (65536, 512), (131072, 128)])
    reps = 2 if a.smoke else a.reps
    bw = _copy_gbs(1 << (12 if a.smoke else 26), reps)
    print(f"device: {T.cuda.get_device_name()}  copy {bw:.0f} GB/s  ROW_NC {NK.ROW_NC}")
    print(f"{'kernel':<34}{'uncached':>10}{'cached':>10}{'cached/uncached':>17}")
    out, saved = [], NK.ROW_CACHE
    try:
        for dtn in ("float32", "bfloat16"):
            for rows, L in shapes:
                for name, fn, nbytes in _cases(rows, L, dtn):
                    ms = {}
                    for cache in (False, True):
                        NK.ROW_CACHE = cache
                        ms[cache] = _events_ms(fn, reps)
                    pct = [100 * nbytes / ms[c] / 1e6 / bw for c in (False, True)]
                    label = f"{name} {rows}x{L} {dtn}"
                    print(f"{label:<34}{pct[0]:>9.0f}%{pct[1]:>9.0f}%{ms[False] / ms[True]:>17.2f}")
                    out.append((label, ms[False], ms[True]))
    finally:
        NK.ROW_CACHE = saved
    return out


if __name__ == "__main__":
    main()
