#!/usr/bin/env python
"""nn benchmark: time per training step of small networks, ours against PyTorch's CPU build.

    python benchmarks/bench_nn.py [--quick] [--threads 1,2] [--plot out.png]

A step is what a training loop does per batch: zero_grad, forward, cross_entropy, backward,
Adam step. Cases:

  digits-mlp   64-128-128-10 MLP (ReLU), batch 64        (examples/train_digits.py's MLP)
  digits-cnn   Conv2d(1,16,3,p=1)-ReLU-MaxPool2d(2)-Conv2d(16,32,3,p=1)-ReLU-MaxPool2d(2)-
               Linear(128,10) on 1x8x8 images, batch 64  (examples/train_digits.py's CNN)
  wide-mlp     784-1024-1024-10 MLP, batch 128
  adam-4M      optimizer step alone: Adam over one 4M-element float32 parameter
               (ours: the fused kernel; torch: its default for CPU tensors)

Inputs are random (the same NumPy arrays for both libraries), float32. Each library runs its
own process (ours here, torch in a child) so the two OpenMP runtimes never compete for cores,
with the same thread count; per case: warm-up steps (ours compiles its kernels), then steps
timed one by one for about `--budget` seconds; the median is reported. Target (informational,
the script exits 0): ours <= 2x PyTorch's time per step.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

CASES = ["digits-mlp", "digits-cnn", "wide-mlp", "adam-4M"]
TARGET = 2.0


def case_data(name: str, quick: bool):
    """(input array, int64 labels, model spec) for a case, from a fixed seed."""
    rng = np.random.default_rng(0)
    if name == "digits-mlp":
        return rng.random((64, 64), dtype=np.float32), rng.integers(0, 10, 64), [64, 128, 128, 10]
    if name == "digits-cnn":
        return rng.random((64, 1, 8, 8), dtype=np.float32), rng.integers(0, 10, 64), "cnn"
    if name == "wide-mlp":
        w = 512 if quick else 1024
        return rng.standard_normal((128, 784), dtype=np.float32), rng.integers(0, 10, 128), [784, w, w, 10]
    n = 1 << (20 if quick else 22)
    return rng.standard_normal(n, dtype=np.float32), None, "adam"


def time_steps(step, budget: float, warmup: int = 3, min_steps: int = 5) -> float:
    for _ in range(warmup):
        step()
    times, start = [], time.perf_counter()
    while len(times) < min_steps or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
        if len(times) >= 2000:
            break
    return statistics.median(times)


def make_model(nn, spec):
    """The case's network from `nn` (ours or torch.nn: the same constructors)."""
    if spec == "cnn":
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(128, 10))
    layers = []
    for a, b in zip(spec[:-1], spec[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


# ---- ours ------------------------------------------------------------------------------------

def ours_step(name: str, quick: bool):
    import nn
    import tensor as T
    from nn import functional as F
    from nn.optim import Adam

    x, y, spec = case_data(name, quick)
    T.manual_seed(0)
    if spec == "adam":
        p = T.asarray(x).requires_grad_()
        p.grad = T.asarray(x * 0.5)
        return Adam([p], lr=1e-3).step
    model = make_model(nn, spec)
    opt = Adam(model.parameters(), lr=1e-3)
    xt, yt = T.asarray(x), T.asarray(y)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(xt), yt).backward()
        opt.step()
    return step


# ---- torch -----------------------------------------------------------------------------------

def torch_step(name: str, quick: bool):
    import torch
    from torch import nn

    x, y, spec = case_data(name, quick)
    torch.manual_seed(0)
    if spec == "adam":
        p = torch.from_numpy(x.copy()).requires_grad_()
        p.grad = torch.from_numpy(x * 0.5)
        return torch.optim.Adam([p], lr=1e-3).step
    model = make_model(nn, spec)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    loss_fn = nn.functional.cross_entropy

    def step():
        opt.zero_grad()
        loss_fn(model(xt), yt).backward()
        opt.step()
    return step


def run_torch(threads: int, quick: bool, budget: float) -> dict | None:
    """Time torch in a child process; None when torch is not importable."""
    cmd = [sys.executable, os.path.abspath(__file__), "--_torch", str(threads), "--budget", str(budget)]
    if quick:
        cmd.append("--quick")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        if "No module named 'torch'" in r.stderr:
            return None
        raise RuntimeError(f"torch child failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def torch_child(threads: int, quick: bool, budget: float) -> None:
    import torch
    torch.set_num_threads(threads)
    print(json.dumps({c: time_steps(torch_step(c, quick), budget) for c in CASES}))


# ---- report ----------------------------------------------------------------------------------

def print_table(rows) -> None:
    print(f"{'case':<12} {'threads':>7} {'ours ms':>10} {'torch ms':>10} {'ours/torch':>10}  target")
    for case, th, ours, theirs in rows:
        if theirs is None:
            print(f"{case:<12} {th:>7} {ours * 1e3:>10.3f} {'-':>10} {'-':>10}  (no torch)")
            continue
        r = ours / theirs
        ok = "ok" if r <= TARGET else f"MISS (> {TARGET:g}x)"
        print(f"{case:<12} {th:>7} {ours * 1e3:>10.3f} {theirs * 1e3:>10.3f} {r:>10.2f}  {ok}")


def plot(rows, path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install matplotlib)")
        return
    rows = [r for r in rows if r[3] is not None]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    labels = [f"{c}\n{t} thr" for c, t, _, _ in rows]
    ax.bar(range(len(rows)), [o / t for _, _, o, t in rows], color="tab:blue")
    ax.axhline(TARGET, color="tab:red", ls="--", label=f"target {TARGET:g}x")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylabel("time per step, ours / torch")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot saved to {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller wide-mlp and adam cases, short budget")
    ap.add_argument("--threads", default=None, help="comma-separated thread counts (default: 1 and all)")
    ap.add_argument("--budget", type=float, default=None, help="seconds of timed steps per case")
    ap.add_argument("--plot", default=None, help="save a bar chart of the ratios to this path")
    ap.add_argument("--_torch", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    budget = a.budget if a.budget is not None else (0.3 if a.quick else 1.5)
    if a._torch is not None:
        torch_child(a._torch, a.quick, budget)
        return
    import tensor as T
    ncpu = os.cpu_count() or 1
    threads = ([int(t) for t in a.threads.split(",")] if a.threads
               else sorted({1, ncpu}))
    rows = []
    for th in threads:
        T.set_num_threads(th)
        ours = {c: time_steps(ours_step(c, a.quick), budget) for c in CASES}
        theirs = run_torch(th, a.quick, budget)
        rows += [(c, th, ours[c], theirs[c] if theirs else None) for c in CASES]
    print(f"time per training step (median), {ncpu} CPUs, ours vs PyTorch CPU, Adam:")
    print_table(rows)
    if a.plot:
        plot(rows, a.plot)


if __name__ == "__main__":
    main()
