#!/usr/bin/env python
"""Autograd benchmark: training steps of a deep MLP, with and without activation checkpointing.

    python benchmarks/bench_autograd.py [--quick] [--depth 32] [--width 1024] [--batch 256]
                                        [--steps 3] [--segments N] [--threads N]

The MLP is written with raw tensor ops (h = relu(h @ W + b), relu as T.maximum(h, 0.0)), float32,
loss = mean(out^2); a step is forward, backward and a plain SGD update under no_grad. Two copies
of the same initial parameters train side by side, one without checkpointing and one with
checkpoint_sequential over `segments` chunks (default round(sqrt(depth))), their steps
alternating (median times reported); their losses must agree bitwise.

Memory (tensor.max_memory_allocated, reset before each step): the gradients are kept from the
warm-up step and zeroed in place, so at the start of a measured step the allocator holds the
parameters, their gradients and the batch; the step's peak minus that baseline is the
activation peak (what the graph keeps plus the backward's temporaries). "held" is what the
graph keeps at the end of the forward pass. Targets (informational, the script exits 0):
activation peak with checkpointing <= 1/3 of the plain one, at <= 1.5x the time per step.
PyTorch (when importable) runs the same MLP for the backward/forward time ratio.
"""
import argparse
import gc
import math
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import autograd  # noqa: E402
import tensor as T  # noqa: E402
from autograd.checkpoint import checkpoint_sequential  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

MiB = float(1 << 20)


def make_params(depth, width, seed=0):
    rng = np.random.default_rng(seed)
    ps = []
    for _ in range(depth):
        w = (rng.standard_normal((width, width)) * math.sqrt(2.0 / width)).astype(np.float32)
        ps.append((T.asarray(w).requires_grad_(), T.zeros(width, dtype="float32").requires_grad_()))
    return ps


def layers_of(params):
    return [lambda h, w=w, b=b: T.maximum(h @ w + b, 0.0) for w, b in params]


def stepper(params, x, segments, lr):
    """A training step (checkpoint_sequential over `segments` chunks, or none when 0) that
    returns (loss, fwd s, bwd s, total s, activation peak bytes, bytes held after forward).
    The warm-up step runs here: it compiles the kernels and creates the .grad tensors."""
    layers = layers_of(params)
    flat = [p for wb in params for p in wb]
    inv_n = 1.0 / x.numel()

    def forward():
        if segments:
            out = checkpoint_sequential(layers, segments, x)
        else:
            out = x
            for f in layers:
                out = f(out)
        return (out * out).sum() * inv_n

    def update():
        with autograd.no_grad():
            for p in flat:
                p -= lr * p.grad
                p.grad.zero_()

    def step():
        gc.collect()
        base = T.memory_allocated()
        T.reset_peak_memory_stats()
        t0 = time.perf_counter()
        loss = forward()
        t1 = time.perf_counter()
        held = T.memory_allocated() - base
        loss.backward()
        t2 = time.perf_counter()
        peak = T.max_memory_allocated() - base
        update()
        t3 = time.perf_counter()
        return loss.item(), t1 - t0, t2 - t1, t3 - t0, peak, held

    step()
    return step


def torch_ratio(depth, width, batch, steps):
    """PyTorch's backward/forward time ratio on the same MLP (None when not importable), timed
    in a child process: in this one our OpenMP threads would compete with torch's."""
    if torch is None:
        return None
    cmd = [sys.executable, os.path.abspath(__file__), "--threads", str(T.get_num_threads()),
           "--_torch", f"{depth},{width},{batch},{steps}"]
    return float(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def _torch_child(depth, width, batch, steps):
    torch.set_num_threads(T.get_num_threads())
    g = torch.Generator().manual_seed(0)
    ws = [(torch.randn(width, width, generator=g) * math.sqrt(2.0 / width)).requires_grad_()
          for _ in range(depth)]
    bs = [torch.zeros(width, requires_grad=True) for _ in range(depth)]
    x = torch.randn(batch, width, generator=g)
    fw, bw = [], []
    for i in range(steps + 1):
        t0 = time.perf_counter()
        h = x
        for w, b in zip(ws, bs):
            h = torch.clamp_min(h @ w + b, 0.0)
        loss = (h * h).mean()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        for p in ws + bs:
            p.grad = None
        if i:
            fw.append(t1 - t0)
            bw.append(t2 - t1)
    return statistics.median(bw) / statistics.median(fw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run, seconds)")
    ap.add_argument("--depth", type=int)
    ap.add_argument("--width", type=int)
    ap.add_argument("--batch", type=int)
    ap.add_argument("--steps", type=int, default=3, help="measured steps per mode (after 1 warm-up)")
    ap.add_argument("--segments", type=int, help="checkpoint segments (default round(sqrt(depth)))")
    ap.add_argument("--threads", type=int, help="tensor.set_num_threads")
    ap.add_argument("--_torch", help=argparse.SUPPRESS)  # child: time torch only
    a = ap.parse_args()
    if a.threads:
        T.set_num_threads(a.threads)
    if a._torch:
        print(_torch_child(*(int(v) for v in a._torch.split(","))))
        return
    depth = a.depth or (8 if a.quick else 32)
    width = a.width or (256 if a.quick else 1024)
    batch = a.batch or (64 if a.quick else 256)
    segments = a.segments or max(1, round(math.sqrt(depth)))
    lr = 1e-3

    x = T.asarray(np.random.default_rng(1).standard_normal((batch, width)).astype(np.float32))
    pbytes = depth * (width * width + width) * 4
    act_layer = batch * width * 4
    print(f"MLP: depth {depth}, width {width}, batch {batch}, float32, {T.get_num_threads()} "
          f"threads; parameters {pbytes / MiB:.1f} MiB (+ as much for their gradients), one "
          f"activation {act_layer / MiB:.2f} MiB; checkpoint_sequential with {segments} segments")
    # both modes from the same initial parameters; their steps alternate, so that load from
    # other processes hits both alike
    steps = {"plain": stepper(make_params(depth, width), x, 0, lr),
             "checkpoint": stepper(make_params(depth, width), x, segments, lr)}
    results = {k: [] for k in steps}
    for _ in range(a.steps):
        for k, step in steps.items():
            results[k].append(step())
    med = {k: [statistics.median(c) for c in zip(*v)] for k, v in results.items()}
    print(f"{'mode':<12}{'step ms':>10}{'fwd ms':>10}{'bwd ms':>10}{'bwd/fwd':>9}"
          f"{'act peak MiB':>14}{'held MiB':>10}")
    for k, (_loss, fw, bw, tot, peak, held) in med.items():
        print(f"{k:<12}{tot * 1e3:>10.1f}{fw * 1e3:>10.1f}{bw * 1e3:>10.1f}{bw / fw:>9.2f}"
              f"{peak / MiB:>14.1f}{held / MiB:>10.1f}")
    same = [r[0] for r in results["plain"]] == [r[0] for r in results["checkpoint"]]
    print(f"losses per step: plain {[round(r[0], 6) for r in results['plain']]}; identical with "
          f"checkpointing (bitwise): {same}")
    p, c = med["plain"], med["checkpoint"]
    mem_ratio, time_ratio = c[4] / p[4], c[3] / p[3]
    ok_mem, ok_time = mem_ratio <= 1 / 3, time_ratio <= 1.5
    print(f"checkpoint / plain: activation peak {mem_ratio:.3f} (target <= 0.333: "
          f"{'met' if ok_mem else 'MISSED'}), held after forward {c[5] / p[5]:.3f}, time per step "
          f"{time_ratio:.2f}x (target <= 1.5x: {'met' if ok_time else 'MISSED'})")
    print(f"peak over held (backward temporaries, recomputed segments): plain "
          f"{(p[4] - p[5]) / MiB:.1f} MiB, checkpoint {(c[4] - c[5]) / MiB:.1f} MiB")
    ratio = torch_ratio(depth, width, batch, max(a.steps, 5))
    if ratio is None:
        print("torch: not importable, skipping the backward/forward comparison with PyTorch")
    else:
        print(f"backward/forward time: ours {p[2] / p[1]:.2f}, torch {ratio:.2f}")


if __name__ == "__main__":
    main()
