#!/usr/bin/env python
"""Recurrent layers against PyTorch's CPU build: nn.LSTM / nn.GRU / nn.RNN (tanh), float32,
one thread on both sides (STRIDEX_NUM_THREADS=1, torch.set_num_threads(1)).

    python benchmarks/bench_rnn.py [--quick] [--repeat 3]

Each case times the forward alone and forward + backward (loss = sum of the output and of the
final hidden state) with the same weights on both sides; the best of `repeat` runs is kept and
the table prints ours / torch ratios. Without torch only our times are printed.
"""
import argparse
import os
import sys
import time

os.environ.setdefault("STRIDEX_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import nn  # noqa: E402
import tensor as T  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

CASES = [  # (mode, seq, batch, input, hidden)
    ("LSTM", 200, 16, 64, 64),
    ("LSTM", 50, 64, 128, 256),
    ("GRU", 200, 16, 64, 64),
    ("GRU", 50, 64, 128, 256),
    ("RNN_TANH", 200, 8, 32, 32),
    ("RNN_TANH", 100, 32, 128, 128),
]
QUICK = [("LSTM", 100, 8, 32, 32), ("GRU", 100, 8, 32, 32), ("RNN_TANH", 100, 8, 32, 32)]


def build(mode, inp, hid):
    cls = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN_TANH": nn.RNN}[mode]
    ours = cls(inp, hid)
    ref = None
    if torch is not None:
        ref = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU, "RNN_TANH": torch.nn.RNN}[mode](inp, hid)
        with torch.no_grad():
            for name, p in ref.named_parameters():
                p.copy_(torch.from_numpy(np.asarray(getattr(ours, name).numpy())))
    return ours, ref


def best(fn, repeat):
    fn()                                   # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def run_ours(model, x, backward):
    def go():
        out, h = model(x)
        if backward:
            h = h[0] if isinstance(h, tuple) else h
            (out.sum() + h.sum()).backward()
    return go


def run_torch(model, x, backward):
    def go():
        if backward:
            out, h = model(x)
            h = h[0] if isinstance(h, tuple) else h
            (out.sum() + h.sum()).backward()
        else:
            with torch.no_grad():
                model(x)
    return go


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if torch is not None:
        torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"{'case':34s} {'fwd ms':>9s} {'ratio':>7s} {'fwd+bwd ms':>11s} {'ratio':>7s}")
    for mode, seq, batch, inp, hid in (QUICK if a.quick else CASES):
        T.manual_seed(0)
        ours, ref = build(mode, inp, hid)
        xn = rng.standard_normal((seq, batch, inp)).astype(np.float32)
        x = T.asarray(xn)
        row = []
        for backward in (False, True):
            if backward:
                t = best(run_ours(ours, x, True), a.repeat)
            else:
                import autograd
                with autograd.no_grad():
                    t = best(run_ours(ours, x, False), a.repeat)
            r = None
            if ref is not None:
                r = t / best(run_torch(ref, torch.from_numpy(xn), backward), a.repeat)
            row.append((t, r))
        label = f"{mode} L={seq} N={batch} in={inp} H={hid}"
        cells = [f"{t * 1e3:9.1f} " + (f"{r:7.1f}x" if r is not None else "      -") for t, r in row]
        print(f"{label:34s} " + " ".join(cells), flush=True)


if __name__ == "__main__":
    main()
