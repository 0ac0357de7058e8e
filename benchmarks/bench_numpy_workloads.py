#!/usr/bin/env python
"""NumPy-user workloads: the same script run with `xp = numpy` and with `xp = tensor` (CPU).

    python benchmarks/bench_numpy_workloads.py [--quick | --smoke] [--threads N]

Each workload is a short program as a NumPy user writes it (k-means with broadcasting, argmin,
bincount and np.add.at; image filtering with slicing, sliding windows, FFT blur and histogram
equalisation; a heat-equation stencil with slice assignment; a group-by with unique, argsort,
split and reduceat; a time-series pass with cumsum, maximum.accumulate and rolling windows). Every
workload's results are checked against NumPy's before timing. Times are medians of interleaved
repetitions after a warm-up (our first call compiles kernels). Ratio = numpy time / our time
(> 1: we are faster). NumPy's elementwise ops run on one thread: --threads 1 (the default) is
the like-for-like comparison. The script always exits 0: the ratios are informational.
"""
import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tensor as T  # noqa: E402

# ---------------------------------------------------------------- workloads (xp: numpy or tensor)


def kmeans(xp, pts, k=4, iters=8):
    X = xp.asarray(pts)
    C = X[xp.asarray(np.arange(k) * 7)]
    for _ in range(iters):
        d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=-1)
        lab = xp.argmin(d2, axis=1)
        counts = xp.bincount(lab, minlength=k)
        sums = xp.zeros((k, X.shape[1]), dtype=X.dtype)
        xp.add.at(sums, lab, X)
        C = sums / xp.maximum(counts, 1)[:, None]
    return C, counts


def image(xp, img):
    img = xp.asarray(img)
    gx = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]) \
        - (img[:-2, :-2] + 2 * img[1:-1, :-2] + img[2:, :-2])
    gy = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]) \
        - (img[:-2, :-2] + 2 * img[:-2, 1:-1] + img[:-2, 2:])
    mag = xp.hypot(gx, gy)
    win = xp.lib.stride_tricks.sliding_window_view(img, (3, 3))
    blur = win.mean(axis=(-2, -1))
    K = xp.zeros_like(img)
    K[:3, :3] = 1.0 / 9
    K = xp.roll(K, (-1, -1), axis=(0, 1))
    fblur = xp.fft.irfft2(xp.fft.rfft2(img) * xp.fft.rfft2(K), s=img.shape)
    q = xp.clip((img / img.max() * 255).astype(xp.uint8), 0, 255)
    cdf = xp.cumsum(xp.bincount(q.ravel(), minlength=256)).astype(xp.float64)
    cdf = (cdf - cdf.min()) / (cdf.max() - cdf.min())
    eq = xp.interp(q.ravel(), xp.arange(256), cdf).reshape(q.shape)
    return mag, blur, fblur, eq


def heat(xp, u0, steps=40):
    u = xp.asarray(u0).copy()
    u[0, :] = 0.0
    u[-1, :] = 1.0
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] += 0.2 * lap
    gy, gx = xp.gradient(u)
    return u, gx, gy


def groupby(xp, key, val):
    key, val = xp.asarray(key), xp.asarray(val)
    uk, inv, cnt = xp.unique(key, return_inverse=True, return_counts=True)
    means = xp.bincount(inv, weights=val) / cnt
    order = xp.argsort(key, kind="stable")
    ks, vs = key[order], val[order]
    starts = xp.concatenate([xp.zeros(1, dtype=ks.dtype), xp.flatnonzero(xp.diff(ks)) + 1])
    sums = xp.add.reduceat(vs, starts)
    top = xp.maximum.reduceat(vs, starts)
    return uk, cnt, means, sums, top


def timeseries(xp, r, w=20):
    r = xp.asarray(r)
    price = 100 * xp.exp(xp.cumsum(r))
    cs = xp.cumsum(xp.insert(price, 0, 0))
    ma = (cs[w:] - cs[:-w]) / w
    drawdown = price / xp.maximum.accumulate(price) - 1
    roll = xp.lib.stride_tricks.sliding_window_view(price, w).std(axis=-1)
    ret = xp.diff(xp.log(price))
    return ma, drawdown, roll, xp.percentile(ret, [1, 5, 50])


def workloads(scale):
    rng = np.random.default_rng(0)
    n_pts, side, grid, n_rows, n_ts = (int(v * scale) for v in (100_000, 512, 512, 400_000, 400_000))
    centers = np.array([[0.0, 0.0], [5, 5], [-5, 5], [5, -5]])
    pts = centers[rng.integers(0, 4, n_pts)] + rng.standard_normal((n_pts, 2))
    return [
        (f"k-means {n_pts} pts", kmeans, (pts,), 1e-9),
        (f"image {side}^2", image, (rng.random((side, side)),), 1e-9),
        (f"heat stencil {grid}^2", heat, (rng.random((grid, grid)),), 1e-9),
        (f"group-by {n_rows} rows", groupby,
         (rng.integers(0, 1000, n_rows), rng.standard_normal(n_rows)), 1e-8),
        (f"time series {n_ts}", timeseries, (0.0002 + 0.01 * rng.standard_normal(n_ts),), 1e-7),
    ]


# ---------------------------------------------------------------- timing and checks

def _host(v):
    if isinstance(v, (tuple, list)):
        return [_host(x) for x in v]
    return v.numpy() if isinstance(v, T.Tensor) else np.asarray(v)


def same(a, b, rtol) -> bool:
    a, b = _host(a), _host(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y, rtol) for x, y in zip(a, b))
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True)


def median_times(fns, budget, min_reps=3, max_reps=30):
    for fn in fns.values():
        fn()   # warm-up: kernel compilation
    est = sum(_once(fn) for fn in fns.values())
    reps = int(min(max_reps, max(min_reps, budget / max(est, 1e-9))))
    times = {k: [] for k in fns}
    gc.disable()
    try:
        for _ in range(reps):
            for k, fn in fns.items():
                times[k].append(_once(fn))
    finally:
        gc.enable()
    return {k: statistics.median(v) for k, v in times.items()}


def _once(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="quarter sizes, short budget")
    g.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition (a run check)")
    p.add_argument("--threads", type=int, default=1, help="our thread count (default 1, as NumPy's ops)")
    args = p.parse_args(argv)
    scale, budget = (0.02, 0.0) if args.smoke else (0.25, 0.5) if args.quick else (1.0, 2.0)
    T.set_num_threads(args.threads)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    print(f"numpy {np.__version__}; tensor threads {args.threads}; load average {load:.2f}")
    head = f"{'workload':28s} {'numpy ms':>10s} {'ours ms':>10s} {'ratio':>7s}  check"
    print(head + "\n" + "-" * len(head))
    rows = []
    for name, fn, data, rtol in workloads(scale):
        ok = same(fn(np, *data), fn(T, *data), rtol)
        t = median_times({"numpy": lambda fn=fn, data=data: fn(np, *data),
                          "ours": lambda fn=fn, data=data: fn(T, *data)},
                         budget, min_reps=1 if args.smoke else 3)
        ratio = t["numpy"] / t["ours"]
        rows.append((name, t["numpy"] * 1e3, t["ours"] * 1e3, ratio, ok))
        print(f"{name:28s} {t['numpy'] * 1e3:10.2f} {t['ours'] * 1e3:10.2f} {ratio:7.2f}  "
              f"{'same as numpy' if ok else 'DIFFERS FROM NUMPY'}")
    gm = statistics.geometric_mean([r[3] for r in rows])
    print(f"\ngeometric mean ratio (numpy time / ours): {gm:.2f}")
    return rows


if __name__ == "__main__":
    main()
