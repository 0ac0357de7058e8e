#!/usr/bin/env python
"""CPU cliffs (round 4), one thread: a broad sweep of common NumPy-style calls (~140 cases),
ours against NumPy in one run. Time ratio ours / NumPy (> 1: we are slower; with --sorted the
table is printed again, worst first). Sizes 2^18 elements or 512 x 512, float32
unless named; the elementwise cases also run on float64 and on a non-contiguous view.

    python benchmarks/cpu_cliffs4.py [--quick] [--sorted] [-k SUBSTRING]

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

N = 1 << 18


def tmin(f, budget):
    f()
    ts, t0 = [], time.perf_counter()
    while len(ts) < 3 or (time.perf_counter() - t0 < budget and len(ts) < 30):
        s = time.perf_counter()
        f()
        ts.append(time.perf_counter() - s)
    return min(ts)


def _data():
    rng = np.random.default_rng(0)
    d = {}
    d["v"] = rng.standard_normal(N).astype(np.float32)
    d["v64"] = d["v"].astype(np.float64)
    d["pos"] = (np.abs(d["v"]) + 0.1).astype(np.float32)
    d["pos64"] = d["pos"].astype(np.float64)
    d["m"] = rng.standard_normal((512, 512)).astype(np.float32)
    d["m64"] = d["m"].astype(np.float64)
    d["i64"] = rng.integers(0, 1000, N).astype(np.int64)
    d["i32"] = d["i64"].astype(np.int32)
    d["small"] = rng.integers(0, 256, N).astype(np.int64)
    d["mask"] = d["v"] > 0
    d["bm"] = d["m"] > 0
    d["idx"] = rng.integers(0, N, N // 4).astype(np.int64)
    d["look"] = rng.integers(0, 2000, 1000).astype(np.int64)
    d["sortedv"] = np.sort(d["v"])
    d["q"] = rng.standard_normal(4096).astype(np.float32)
    d["nan"] = d["v"].copy()
    d["nan"][::97] = np.nan
    d["nan"][5::211] = np.inf
    d["rows"] = rng.integers(0, 512, (512, 512)).astype(np.int64)
    d["a64"] = rng.standard_normal(512).astype(np.float32)
    d["k1"] = rng.standard_normal((64, 64)).astype(np.float32)
    d["k2"] = rng.standard_normal((8, 8)).astype(np.float32)
    return d


def elementwise(d, t):
    v, v64, tv, tv64 = d["v"], d["v64"], t["v"], t["v64"]
    m, tm = d["m"], t["m"]
    p, p64, tp, tp64 = d["pos"], d["pos64"], t["pos"], t["pos64"]
    for name in ("sin", "cos", "tan", "exp", "tanh"):
        nf, tf = getattr(np, name), getattr(T, name)
        yield f"{name} f32", lambda tf=tf: tf(tv), lambda nf=nf: nf(v)
        yield f"{name} f64", lambda tf=tf: tf(tv64), lambda nf=nf: nf(v64)
        yield f"{name} f32 .T", lambda tf=tf: tf(tm.T), lambda nf=nf: nf(m.T)
    for name in ("log", "sqrt"):
        nf, tf = getattr(np, name), getattr(T, name)
        yield f"{name} f32", lambda tf=tf: tf(tp), lambda nf=nf: nf(p)
        yield f"{name} f64", lambda tf=tf: tf(tp64), lambda nf=nf: nf(p64)
    yield "power f32 ** 2.5", lambda: T.power(tp, 2.5), lambda: np.power(p, 2.5)
    yield "power f64 ** 2.5", lambda: T.power(tp64, 2.5), lambda: np.power(p64, 2.5)
    yield "power i64 ** 3", lambda: T.power(t["i64"], 3), lambda: np.power(d["i64"], 3)
    yield "add f32 .T + x", lambda: tm.T + tm, lambda: m.T + m
    yield "mul i64", lambda: t["i64"] * t["i64"], lambda: d["i64"] * d["i64"]
    yield "and bool", lambda: t["mask"] & t["mask"], lambda: d["mask"] & d["mask"]
    for dt in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        tdt, ndt = getattr(T, dt), getattr(np, dt)
        yield f"astype f32->{dt}", lambda tdt=tdt: tv.astype(tdt), lambda ndt=ndt: v.astype(ndt)
    yield "astype f64->int32", lambda: tv64.astype(T.int32), lambda: v64.astype(np.int32)
    yield "astype i64->int8", lambda: t["i64"].astype(T.int8), lambda: d["i64"].astype(np.int8)
    yield "astype i64->f32", lambda: t["i64"].astype(T.float32), lambda: d["i64"].astype(np.float32)
    yield "astype bool->f32", lambda: t["mask"].astype(T.float32), lambda: d["mask"].astype(np.float32)
    yield "astype f32->f64 .T", lambda: tm.T.astype(T.float64), lambda: m.T.astype(np.float64)
    yield "where", lambda: T.where(t["mask"], tv, 0.0), lambda: np.where(d["mask"], v, 0.0)
    yield "clip", lambda: T.clip(tv, -0.5, 0.5), lambda: np.clip(v, -0.5, 0.5)
    yield "clip i64", lambda: T.clip(t["i64"], 10, 500), lambda: np.clip(d["i64"], 10, 500)
    yield "round f32", lambda: T.round(tv), lambda: np.round(v)
    yield "round f32 decimals=2", lambda: T.round(tv, 2), lambda: np.round(v, 2)
    yield "nan_to_num", lambda: T.nan_to_num(t["nan"]), lambda: np.nan_to_num(d["nan"])


def _axes(name, tx, nx):
    nf, tf = getattr(np, name), getattr(T, name)
    for ax in (0, 1):
        yield f"{name} axis={ax}", lambda ax=ax: tf(tx, axis=ax), lambda ax=ax: nf(nx, axis=ax)


def reductions(d, t):
    m, tm, m64, tm64 = d["m"], t["m"], d["m64"], t["m64"]
    for name in ("sum", "mean", "std", "var", "prod", "argmin", "max"):
        yield from _axes(name, tm, m)
    yield "sum f64 axis=0", lambda: T.sum(tm64, axis=0), lambda: np.sum(m64, axis=0)
    yield "sum all", lambda: T.sum(t["v"]), lambda: np.sum(d["v"])
    yield "sum i64", lambda: T.sum(t["i64"]), lambda: np.sum(d["i64"])
    yield "std all", lambda: T.std(t["v"]), lambda: np.std(d["v"])
    bm, tbm = d["bm"], t["bm"]
    for name in ("any", "all"):
        yield from _axes(name, tbm, bm)
    for name in ("cumsum", "cumprod"):
        yield from _axes(name, tm, m)
    yield "cumsum i64", lambda: T.cumsum(t["i64"]), lambda: np.cumsum(d["i64"])
    yield "nansum", lambda: T.nansum(t["nan"]), lambda: np.nansum(d["nan"])
    yield "nanmax", lambda: T.nanmax(t["nan"]), lambda: np.nanmax(d["nan"])
    yield "nanmin", lambda: T.nanmin(t["nan"]), lambda: np.nanmin(d["nan"])
    tn2, n2 = t["nan"].reshape(512, 512), d["nan"].reshape(512, 512)
    yield "nanmax axis=0", lambda: T.nanmax(tn2, axis=0), lambda: np.nanmax(n2, axis=0)
    yield "nanmin axis=1", lambda: T.nanmin(tn2, axis=1), lambda: np.nanmin(n2, axis=1)
    n64, tn64 = d["nan"].astype(np.float64), t["nan"].astype(T.float64)
    yield "nanmax f64", lambda: T.nanmax(tn64), lambda: np.nanmax(n64)
    yield "nanmax .T axis=1", lambda: T.nanmax(tn2.T, axis=1), lambda: np.nanmax(n2.T, axis=1)
    yield "nanmin (8,8) axis=1", lambda: T.nanmin(tn2[:8, :8], axis=1), lambda: np.nanmin(n2[:8, :8], axis=1)
    yield "nanmean axis=1", lambda: T.nanmean(tm, axis=1), lambda: np.nanmean(m, axis=1)
    for name in ("nanargmax", "nanargmin"):
        nf, tf = getattr(np, name), getattr(T, name)
        yield name, lambda tf=tf: tf(t["nan"]), lambda nf=nf: nf(d["nan"])
        yield f"{name} axis=0", lambda tf=tf: tf(tn2, axis=0), lambda nf=nf: nf(n2, axis=0)
        yield f"{name} axis=1", lambda tf=tf: tf(tn2, axis=1), lambda nf=nf: nf(n2, axis=1)
    yield "nanargmax f64", lambda: T.nanargmax(tn64), lambda: np.nanargmax(n64)
    yield "nanargmax .T axis=1", lambda: T.nanargmax(tn2.T, axis=1), lambda: np.nanargmax(n2.T, axis=1)
    yield ("nanargmin (8,8) axis=1", lambda: T.nanargmin(tn2[:8, :8], axis=1),
           lambda: np.nanargmin(n2[:8, :8], axis=1))
    o, to = np.empty(512, np.float32), T.empty(512)
    yield "nanmax axis=0 out=", lambda: T.nanmax(tn2, axis=0, out=to), lambda: np.nanmax(n2, axis=0, out=o)
    with np.errstate(invalid="ignore"):   # (inf * 1j)
        c = (n2[:256] + 1j * n2[256:]).astype(np.complex64)
    tc = T.from_numpy(c)
    yield "nanmax c64 (256,512) axis=1", lambda: T.nanmax(tc, axis=1), lambda: np.nanmax(c, axis=1)


def sorting(d, t):
    v, tv = d["v"], t["v"]
    yield "sort f32", lambda: T.sort(tv), lambda: np.sort(v)
    yield "sort f64", lambda: T.sort(t["v64"]), lambda: np.sort(d["v64"])
    yield "sort i64", lambda: T.sort(t["i64"]), lambda: np.sort(d["i64"])
    yield "sort i32", lambda: T.sort(t["i32"]), lambda: np.sort(d["i32"])
    yield "sort rows (512,512)", lambda: T.sort(t["m"], axis=1), lambda: np.sort(d["m"], axis=1)
    yield "sort axis=0 (512,512)", lambda: T.sort(t["m"], axis=0), lambda: np.sort(d["m"], axis=0)
    yield "argsort f32", lambda: T.argsort(tv), lambda: np.argsort(v)
    yield ("argsort stable i64", lambda: T.argsort(t["i64"], kind="stable"),
           lambda: np.argsort(d["i64"], kind="stable"))
    yield "unique i64", lambda: T.unique(t["i64"]), lambda: np.unique(d["i64"])
    yield "unique f32", lambda: T.unique(tv), lambda: np.unique(v)
    yield ("unique i64 counts", lambda: T.unique(t["i64"], return_counts=True),
           lambda: np.unique(d["i64"], return_counts=True))
    yield ("searchsorted 4096", lambda: T.searchsorted(t["sortedv"], t["q"]),
           lambda: np.searchsorted(d["sortedv"], d["q"]))
    yield "isin i64", lambda: T.isin(t["i64"], t["look"]), lambda: np.isin(d["i64"], d["look"])
    yield "bincount", lambda: T.bincount(t["small"]), lambda: np.bincount(d["small"])
    yield ("bincount weights", lambda: T.bincount(t["small"], weights=tv),
           lambda: np.bincount(d["small"], weights=v))
    yield "histogram 64", lambda: T.histogram(tv, bins=64), lambda: np.histogram(v, bins=64)


def indexing(d, t):
    v, tv, idx, tidx = d["v"], t["v"], d["idx"], t["idx"]
    m, tm = d["m"], t["m"]
    yield "take", lambda: T.take(tv, tidx), lambda: np.take(v, idx)
    yield "x[idx]", lambda: tv[tidx], lambda: v[idx]
    yield "m[idx rows]", lambda: tm[t["look"] % 512], lambda: m[d["look"] % 512]
    yield ("take_along_axis", lambda: T.take_along_axis(tm, t["rows"], axis=1),
           lambda: np.take_along_axis(m, d["rows"], axis=1))
    yv, ny = T.from_numpy(v.copy()), v.copy()
    yield "put", lambda: T.put(yv, tidx, 1.0), lambda: np.put(ny, idx, 1.0)
    yield "x[idx] = 1", lambda: yv.__setitem__(tidx, 1.0), lambda: ny.__setitem__(idx, 1.0)
    yield "x[mask]", lambda: tv[t["mask"]], lambda: v[d["mask"]]
    yield "x[mask] = 0", lambda: yv.__setitem__(t["mask"], 0.0), lambda: ny.__setitem__(d["mask"], 0.0)
    yield "nonzero", lambda: T.nonzero(t["mask"]), lambda: np.nonzero(d["mask"])
    yield "nonzero 2d", lambda: T.nonzero(t["bm"]), lambda: np.nonzero(d["bm"])
    yield "argwhere", lambda: T.argwhere(t["bm"]), lambda: np.argwhere(d["bm"])


def manipulation(d, t):
    v, tv, m, tm = d["v"], t["v"], d["m"], t["m"]
    yield "roll 1d", lambda: T.roll(tv, 1000), lambda: np.roll(v, 1000)
    yield "roll axis=1", lambda: T.roll(tm, 7, axis=1), lambda: np.roll(m, 7, axis=1)
    yield "roll axis=0", lambda: T.roll(tm, 7, axis=0), lambda: np.roll(m, 7, axis=0)
    yield "pad constant", lambda: T.pad(tm, 3), lambda: np.pad(m, 3)
    yield "pad reflect", lambda: T.pad(tm, 3, mode="reflect"), lambda: np.pad(m, 3, mode="reflect")
    yield "pad edge", lambda: T.pad(tm, 3, mode="edge"), lambda: np.pad(m, 3, mode="edge")
    yield "flip", lambda: T.flip(tm, 0).copy(), lambda: np.flip(m, 0).copy()
    yield "concatenate axis=0", lambda: T.concatenate([tm, tm]), lambda: np.concatenate([m, m])
    yield ("concatenate axis=1", lambda: T.concatenate([tm, tm], axis=1),
           lambda: np.concatenate([m, m], axis=1))
    yield "stack", lambda: T.stack([tm, tm, tm]), lambda: np.stack([m, m, m])
    yield "stack axis=1", lambda: T.stack([tm, tm], axis=1), lambda: np.stack([m, m], axis=1)
    yield "repeat 3", lambda: T.repeat(tv, 3), lambda: np.repeat(v, 3)
    yield "repeat axis=0", lambda: T.repeat(tm, 2, axis=0), lambda: np.repeat(m, 2, axis=0)
    yield "tile (2,2)", lambda: T.tile(tm, (2, 2)), lambda: np.tile(m, (2, 2))
    yield "diff", lambda: T.diff(tv), lambda: np.diff(v)
    yield "diff axis=0", lambda: T.diff(tm, axis=0), lambda: np.diff(m, axis=0)
    yield "transpose copy", lambda: tm.T.copy(), lambda: m.T.copy()


def products(d, t):
    a, ta, m, tm = d["a64"], t["a64"], d["m"], t["m"]
    yield "outer 512", lambda: T.outer(ta, ta), lambda: np.outer(a, a)
    yield "kron 64x64,8x8", lambda: T.kron(t["k1"], t["k2"]), lambda: np.kron(d["k1"], d["k2"])
    yield "einsum ij->i", lambda: T.einsum("ij->i", tm), lambda: np.einsum("ij->i", m)
    yield "einsum ij,ij->", lambda: T.einsum("ij,ij->", tm, tm), lambda: np.einsum("ij,ij->", m, m)
    yield ("tensordot axes=2", lambda: T.tensordot(tm, tm, axes=2),
           lambda: np.tensordot(m, m, axes=2))
    yield "trace", lambda: T.trace(tm), lambda: np.trace(m)
    yield "diagonal copy", lambda: T.diagonal(tm).copy(), lambda: np.diagonal(m).copy()


def creation(d, t):
    yield "linspace", lambda: T.linspace(0, 1, N), lambda: np.linspace(0, 1, N)
    yield "arange f32", lambda: T.arange(N, dtype=T.float32), lambda: np.arange(N, dtype=np.float32)
    yield "arange i64", lambda: T.arange(N), lambda: np.arange(N)
    yield "eye 512", lambda: T.eye(512), lambda: np.eye(512)
    yield "tri 512", lambda: T.tri(512), lambda: np.tri(512)
    yield "tril 512", lambda: T.tril(t["m"]), lambda: np.tril(d["m"])
    yield "zeros", lambda: T.zeros(N), lambda: np.zeros(N)
    yield "full", lambda: T.full(N, 3.0), lambda: np.full(N, 3.0)
    g = np.random.default_rng(1)
    tg = T.random.default_rng(1)
    yield "random uniform f64", lambda: tg.random(N), lambda: g.random(N)
    yield "random normal f64", lambda: tg.standard_normal(N), lambda: g.standard_normal(N)
    yield "random integers", lambda: tg.integers(0, 100, N), lambda: g.integers(0, 100, N)
    yield ("random uniform f32", lambda: tg.random(N, dtype=T.float32),
           lambda: g.random(N, dtype=np.float32))


def cases():
    d = _data()
    t = {k: T.from_numpy(x) for k, x in d.items()}
    for group in (elementwise, reductions, sorting, indexing, manipulation, products, creation):
        yield from group(d, t)


def main():
    budget = 0.05 if "--quick" in sys.argv else 0.3
    sub = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else ""
    default = T.get_num_threads()
    T.set_num_threads(1)
    rows = []
    print(f"{'case (1 thread)':36s} {'ours us':>9s} {'numpy us':>9s} {'ours/np':>8s}")
    try:
        for name, ours, ref in cases():
            if sub and sub not in name:
                continue
            gc.collect()
            gc.disable()
            try:
                a, b = tmin(ours, budget), tmin(ref, budget)
            except Exception as e:  # informational: a missing feature is a row, not a crash
                print(f"{name:36s} error: {type(e).__name__}: {str(e)[:60]}", flush=True)
                continue
            finally:
                gc.enable()
            rows.append((name, a, b))
            print(f"{name:36s} {a * 1e6:9.1f} {b * 1e6:9.1f} {a / b:8.2f}", flush=True)
    finally:
        T.set_num_threads(default)
    if "--sorted" in sys.argv:
        print("\nworst first:")
        for name, a, b in sorted(rows, key=lambda r: -r[1] / r[2]):
            print(f"{name:36s} {a * 1e6:9.1f} {b * 1e6:9.1f} {a / b:8.2f}")


if __name__ == "__main__":
    main()
