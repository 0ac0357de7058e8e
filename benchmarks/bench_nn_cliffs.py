#!/usr/bin/env python
"""nn.functional speed cliffs against PyTorch's CPU build, one thread on both sides
(STRIDEX_NUM_THREADS=1, torch.set_num_threads(1)): ctc_loss, grid_sample, bicubic
interpolate, max_pool2d and nn.MultiheadAttention, float32.

    python benchmarks/bench_nn_cliffs.py [--repeat 3] [--only ctc,grid,...]

Each case times the forward alone and forward + backward (loss = sum of the output), best of
`repeat` runs, and prints ours / torch ratios. Without torch only our times are printed.
"""
import argparse
import os
import sys
import time

os.environ.setdefault("STRIDEX_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import nn  # noqa: E402
import nn.functional as F  # noqa: E402
import tensor as T  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None


def best(fn, grad, repeat):
    fn(grad)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(grad)
        ts.append(time.perf_counter() - t0)
    return min(ts) * 1e3


def ctc_case(lib, rng):
    t, n, c, s = 100, 16, 30, 20
    x = rng.standard_normal((t, n, c)).astype(np.float32)
    tg = rng.integers(1, c, (n, s))
    il, tl = [t] * n, list(rng.integers(s // 2, s + 1, n))
    if lib == "torch":
        xs = torch.tensor(x, requires_grad=True)
        tgt = torch.tensor(tg)

        def run(grad):
            lp = torch.log_softmax(xs, 2)
            loss = torch.nn.functional.ctc_loss(lp, tgt, il, tl)
            if grad:
                loss.backward()
        return run
    xs = T.tensor(x, requires_grad=True)
    tgt = T.tensor(tg)

    def run(grad):
        lp = F.log_softmax(xs, 2)
        loss = F.ctc_loss(lp, tgt, il, tl)
        if grad:
            loss.backward()
    return run


def grid_case(mode, align):
    def make(lib, rng):
        x = rng.standard_normal((8, 16, 64, 64)).astype(np.float32)
        g = rng.uniform(-1.1, 1.1, (8, 64, 64, 2)).astype(np.float32)
        if lib == "torch":
            xs, gs = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)

            def run(grad):
                y = torch.nn.functional.grid_sample(xs, gs, mode=mode, align_corners=align)
                if grad:
                    y.sum().backward()
            return run
        xs, gs = T.tensor(x, requires_grad=True), T.tensor(g, requires_grad=True)

        def run(grad):
            y = F.grid_sample(xs, gs, mode=mode, align_corners=align)
            if grad:
                y.sum().backward()
        return run
    return make


def bicubic_case(lib, rng):
    x = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    if lib == "torch":
        xs = torch.tensor(x, requires_grad=True)

        def run(grad):
            y = torch.nn.functional.interpolate(xs, scale_factor=2, mode="bicubic")
            if grad:
                y.sum().backward()
        return run
    xs = T.tensor(x, requires_grad=True)

    def run(grad):
        y = F.interpolate(xs, scale_factor=2, mode="bicubic")
        if grad:
            y.sum().backward()
    return run


def maxpool_case(lib, rng):
    x = rng.standard_normal((32, 64, 56, 56)).astype(np.float32)
    mod = torch.nn.functional if lib == "torch" else F
    xs = (torch.tensor if lib == "torch" else T.tensor)(x, requires_grad=True)

    def run(grad):
        y = mod.max_pool2d(xs, 3, 2, 1)
        if grad:
            y.sum().backward()
    return run


def mha_case(lib, rng):
    x = rng.standard_normal((16, 64, 256)).astype(np.float32)
    if lib == "torch":
        torch.manual_seed(0)
        m = torch.nn.MultiheadAttention(256, 8, batch_first=True)
        xs = torch.tensor(x, requires_grad=True)
    else:
        m = nn.MultiheadAttention(256, 8, batch_first=True)
        xs = T.tensor(x, requires_grad=True)

    def run(grad):
        y, _ = m(xs, xs, xs)
        if grad:
            y.sum().backward()
    return run


CASES = {
    "ctc T100 N16 C30 S20": ctc_case,
    "grid bilinear align=F": grid_case("bilinear", False),
    "grid bilinear align=T": grid_case("bilinear", True),
    "grid nearest align=F": grid_case("nearest", False),
    "grid nearest align=T": grid_case("nearest", True),
    "bicubic x2 (8,16,32,32)": bicubic_case,
    "max_pool2d k3s2p1 (32,64,56,56)": maxpool_case,
    "MHA N16 L64 E256 h8": mha_case,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated name prefixes (ctc, grid, ...)")
    a = ap.parse_args()
    keys = [k.strip() for k in a.only.split(",") if k.strip()]
    print(f"{'case':34s} {'fwd ms':>9s} {'ratio':>7s} {'fwd+bwd ms':>11s} {'ratio':>7s}")
    for name, make in CASES.items():
        if keys and not any(name.startswith(k) for k in keys):
            continue
        row = []
        ours = make("ours", np.random.default_rng(0))
        theirs = make("torch", np.random.default_rng(0)) if torch is not None else None
        for grad in (False, True):
            o = best(ours, grad, a.repeat)
            r = best(theirs, grad, a.repeat) if theirs else float("nan")
            row += [o, o / r]
        print(f"{name:34s} {row[0]:9.2f} {row[1]:6.1f}x {row[2]:11.2f} {row[3]:6.1f}x", flush=True)


if __name__ == "__main__":
    main()
