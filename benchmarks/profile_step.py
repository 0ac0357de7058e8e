"""Where a training step's host time goes: cProfile of the tiny GPT (or the digits MLP) step.

    python benchmarks/profile_step.py [--device cuda|cpu] [--model gpt|mlp] [--top 30]

Prints the step's wall time (median of 10 after 3 warm-ups, with a device synchronize) and the
functions with the most time of their own over 10 profiled steps. On a GPU the kernels run
asynchronously, so this is the host's share: dispatch, argument packing, launches, autograd.
On the CUDA emulator (no GPU) the emulator's cuLaunchKernel runs the kernels themselves and
dominates the table; the printed host share leaves those runs out (the rest of the host path is
the GPU's, except the real driver's launch cost).
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "examples"), HERE]

import numpy as np  # noqa: E402
import tiny_gpt as G  # noqa: E402

import tensor as T  # noqa: E402


def make_step(model_name: str, device: str):
    T.manual_seed(0)
    if model_name == "gpt":
        cfg = G.GPTConfig(vocab=64, context=16, d_model=32, n_heads=2, n_layers=2, batch=8)
        model = G.TinyGPT(cfg, device)
        x, y = G.random_batch(cfg, device)
        opt, loss_fn = G.optimizer(model), G.loss
    else:
        from train_digits import make_mlp

        from nn import functional as F
        from nn.optim import Adam
        rng = np.random.default_rng(0)
        model = make_mlp().to(device)
        x = T.asarray(rng.random((32, 1, 8, 8), dtype=np.float32), device=device)
        y = T.asarray(rng.integers(0, 10, 32), device=device)
        opt, loss_fn = Adam(model.parameters(), lr=2e-3), lambda m, a, b: F.cross_entropy(m(a), b)

    def step():
        opt.zero_grad()
        loss_fn(model, x, y).backward()
        opt.step()
    return step


def _zero() -> float:
    return 0.0


def _emulator_clock(device: str):
    """On the CUDA emulator: its seconds spent running kernels so far (a function), else _zero."""
    from tensor.cuda import runtime as R
    if device != "cuda" or not R.emulated():
        return _zero
    from tensor.cuda.emulator import driver
    return driver.exec_seconds


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if T.cuda.is_available() else "cpu")
    ap.add_argument("--model", choices=["gpt", "mlp"], default="gpt")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--steps", type=int, default=10)
    a = ap.parse_args(argv)
    step = make_step(a.model, a.device)
    sync = T.cuda.synchronize if a.device == "cuda" else (lambda: None)
    for _ in range(3):
        step()
    sync()
    busy = _emulator_clock(a.device)
    times, host = [], []
    for _ in range(a.steps):
        t0, k0 = time.perf_counter(), busy()
        step()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
        host.append(times[-1] - (busy() - k0) * 1e3)
    print(f"{a.model} step on {a.device}: {statistics.median(times):.2f} ms (median of {a.steps})"
          + (f"; host share {statistics.median(host):.2f} ms (the emulator's kernel runs left "
             "out)" if busy is not _zero else ""))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(a.steps):
        step()
    sync()
    prof.disable()
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(a.top)


if __name__ == "__main__":
    main()
