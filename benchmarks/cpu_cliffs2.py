#!/usr/bin/env python
"""CPU cliffs (round 2): topk, pad modes, concatenate / stack of many small tensors, one-element
overheads, float32 sin / cos / arctan, adaptive_avg_pool2d(x, 1). Ratios ours / NumPy and
ours / torch CPU (when importable), at 1 thread and at the default thread count, in one run.
> 1 = we are slower.

    python benchmarks/cpu_cliffs2.py [--quick]

Times: the minimum of repeated perf_counter runs after a warm-up (the first call compiles).
Always exits 0: the numbers are informational.
"""
import gc
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import nn.functional as NF  # noqa: E402
import tensor as T  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def tmin(f, budget):
    f()
    ts, t0 = [], time.perf_counter()
    while len(ts) < 3 or (time.perf_counter() - t0 < budget and len(ts) < 50):
        s = time.perf_counter()
        f()
        ts.append(time.perf_counter() - s)
    return min(ts)


def cases():
    rng = np.random.default_rng(0)
    v1m = rng.standard_normal(1 << 20).astype(np.float32)
    m = rng.standard_normal((1000, 1000)).astype(np.float32)
    img = rng.standard_normal((8, 64, 64, 64)).astype(np.float32)
    smalls = [rng.standard_normal(4).astype(np.float32) for _ in range(1000)]
    one = np.array([1.5], np.float32)
    tv, tm, ti, ts, t1 = T.from_numpy(v1m), T.from_numpy(m), T.from_numpy(img), \
        [T.from_numpy(s) for s in smalls], T.from_numpy(one)
    hv = hm = hi = hs = h1 = None
    if torch is not None:
        hv, hm, hi = torch.from_numpy(v1m), torch.from_numpy(m), torch.from_numpy(img)
        hs, h1 = [torch.from_numpy(s) for s in smalls], torch.from_numpy(one)

    def np_topk(a, k, axis=-1):
        a = np.moveaxis(a, axis, -1)
        p = np.argpartition(-a, k - 1, axis=-1)[..., :k]
        v = np.take_along_axis(a, p, -1)
        o = np.argsort(-v, axis=-1, kind="stable")
        return np.take_along_axis(v, o, -1), np.take_along_axis(p, o, -1)

    def loop(f, n=200):
        def g():
            for _ in range(n):
                f()
        return g

    th = torch is not None
    yield ("topk 10 of 1M", lambda: T.topk(tv, 10), lambda: np_topk(v1m, 10),
           th and (lambda: torch.topk(hv, 10)))
    yield ("topk 10 per row (1000,1000)", lambda: T.topk(tm, 10), lambda: np_topk(m, 10),
           th and (lambda: torch.topk(hm, 10)))
    yield ("topk 10 smallest axis 0 (1000,1000)", lambda: T.topk(tm, 10, 0, largest=False),
           lambda: np_topk(-m, 10, 0), th and (lambda: torch.topk(hm, 10, 0, largest=False)))
    for mode, nmode, tmode in (("reflect", "reflect", "reflect"), ("edge", "edge", "replicate"),
                               ("wrap", "wrap", "circular")):
        yield (f"pad {mode} 2 (1000,1000)", lambda mode=mode: T.pad(tm, 2, mode=mode),
               lambda nmode=nmode: np.pad(m, 2, mode=nmode),
               th and (lambda tmode=tmode: torch.nn.functional.pad(hm[None], (2, 2, 2, 2), mode=tmode)))
        yield (f"F.pad {tmode} 1 (8,64,64,64)",
               lambda tmode=tmode: NF.pad(ti, (1, 1, 1, 1), mode=tmode),
               lambda nmode=nmode: np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1)), mode=nmode),
               th and (lambda tmode=tmode: torch.nn.functional.pad(hi, (1, 1, 1, 1), mode=tmode)))
    yield ("concatenate 1000 x (4,)", lambda: T.concatenate(ts), lambda: np.concatenate(smalls),
           th and (lambda: torch.cat(hs)))
    yield ("stack 1000 x (4,)", lambda: T.stack(ts), lambda: np.stack(smalls),
           th and (lambda: torch.stack(hs)))
    yield ("200 x item()", loop(lambda: t1.item()), loop(lambda: one.item()),
           th and loop(lambda: h1.item()))
    yield ("200 x x[0]", loop(lambda: t1[0]), loop(lambda: one[0]), th and loop(lambda: h1[0]))
    yield ("200 x float(x)", loop(lambda: float(t1)), loop(lambda: float(one[0])),
           th and loop(lambda: float(h1)))
    for fn in ("sin", "cos", "arctan"):
        yield (f"{fn} 1M f32", lambda fn=fn: getattr(T, fn)(tv), lambda fn=fn: getattr(np, fn)(v1m),
               th and (lambda fn=fn: getattr(torch, fn)(hv)))
    yield ("adaptive_avg_pool2d(x, 1) (8,64,64,64)", lambda: NF.adaptive_avg_pool2d(ti, 1),
           lambda: img.mean(axis=(2, 3), keepdims=True),
           th and (lambda: torch.nn.functional.adaptive_avg_pool2d(hi, 1)))


def main():
    budget = 0.05 if "--quick" in sys.argv else 0.2
    default = T.get_num_threads()
    tdefault = torch.get_num_threads() if torch is not None else None
    print(f"{'case':42s} {'thr':>3s} {'ours ms':>9s} {'numpy ms':>9s} {'torch ms':>9s} "
          f"{'/np':>6s} {'/torch':>6s}")
    for threads in (1, default):
        T.set_num_threads(threads)
        if torch is not None:
            torch.set_num_threads(threads if threads == 1 else tdefault)
        for name, ours, ref, th in cases():
            gc.collect()
            gc.disable()
            a, b = tmin(ours, budget), tmin(ref, budget)
            c = tmin(th, budget) if th else float("nan")
            gc.enable()
            print(f"{name:42s} {threads:3d} {a * 1e3:9.3f} {b * 1e3:9.3f} {c * 1e3:9.3f} "
                  f"{a / b:6.2f} {a / c:6.2f}", flush=True)
        if default == 1:
            break
    T.set_num_threads(default)


if __name__ == "__main__":
    main()
