"""Mixed precision: training-step time and peak memory in float32, bfloat16 autocast and float16
autocast with a GradScaler, ours and PyTorch's (its CPU or CUDA autocast), in one run.

    python benchmarks/bench_amp.py [--device cpu|cuda] [--quick | --smoke]

Cases: a matmul-bound MLP (4 x Linear(1024, 1024) + ReLU, batch 512: the products dominate),
the tiny GPT of benchmarks/tiny_gpt.py (2 layers, d_model 256, batch 32 x 128) and a bfloat16 /
float16 / float32 GEMM of 2048^3 by itself. A step is zero_grad, forward and loss under the
region, scaled backward, the scaler's step and update (a plain backward and step for float32
and bfloat16), then a synchronize; median of the steps after warm-up. Peak memory: the
allocator's peak during one step above what lives between steps (parameters and optimizer
state, gradients freed by zero_grad): activations, gradients, casts and temporaries; ours
only. torch/ours: time ratio, > 1 means we are faster.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

import numpy as np  # noqa: E402
import tiny_gpt as G  # noqa: E402
from bench_train import get_torch, median_step_ms  # noqa: E402

import nn  # noqa: E402
import tensor as T  # noqa: E402
from nn import functional as F  # noqa: E402
from nn.optim import AdamW  # noqa: E402

MODES = ("fp32", "bf16", "fp16")


def _mlp(lib, width: int, depth: int, device):
    """depth Linear(width, width) layers with ReLU between, in `lib`'s nn (ours or torch's)."""
    mods = nn if lib is T else lib.nn
    layers = []
    for _ in range(depth):
        layers += [mods.Linear(width, width), mods.ReLU()]
    return mods.Sequential(*layers[:-1]).to(device)


def _step(lib, model, opt, loss_fn, mode: str, device: str):
    """A training step closure for mode fp32 / bf16 / fp16 (scaled), in `lib` (T or torch)."""
    dtype = {"bf16": lib.bfloat16, "fp16": lib.float16}.get(mode)
    scaler = (lib.amp.GradScaler(device) if lib is not T else T.GradScaler(device)) \
        if mode == "fp16" else None

    def step():
        opt.zero_grad()
        if dtype is None:
            loss = loss_fn()
        else:
            with lib.autocast(device, dtype=dtype):
                loss = loss_fn()
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    return step


def _sync(lib, device):
    if device != "cuda":
        return lambda: None
    return T.cuda.synchronize if lib is T else lib.cuda.synchronize


def _peak(step, opt, device) -> tuple[float, float]:
    """(MiB at the step's peak above what lives between steps without gradients: parameters,
    optimizer state; that base in MiB)."""
    step()
    opt.zero_grad()
    T.reset_peak_memory_stats(device)
    base = T.memory_allocated(device)
    step()
    return (T.max_memory_allocated(device) - base) / 2 ** 20, base / 2 ** 20


def mlp_case(device, torch, width, depth, batch, warmup, reps):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((batch, width)).astype(np.float32)
    ys = rng.integers(0, width, batch)
    rows = []
    for mode in MODES:
        T.manual_seed(0)
        model = _mlp(T, width, depth, device)
        opt = AdamW(model.parameters(), lr=1e-4)
        x, y = T.asarray(xs, device=device), T.asarray(ys, device=device)
        step = _step(T, model, opt, lambda m=model, a=x, b=y: F.cross_entropy(m(a), b), mode, device)
        ms = median_step_ms(step, _sync(T, device), warmup, reps)
        peak, base = _peak(step, opt, device)
        tms = None
        if torch is not None:
            tm = _mlp(torch, width, depth, device)
            topt = torch.optim.AdamW(tm.parameters(), lr=1e-4)
            tx, ty = torch.from_numpy(xs).to(device), torch.from_numpy(ys).to(device)
            tstep = _step(torch, tm, topt, lambda m=tm, a=tx, b=ty, f=torch.nn.functional:
                          f.cross_entropy(m(a), b), mode, device)
            tms = median_step_ms(tstep, _sync(torch, device), warmup, reps)
        rows.append((f"MLP {depth}x{width} b{batch} {mode}", ms, peak, base, tms))
    return rows


def gpt_case(device, torch, cfg, warmup, reps):
    rows = []
    for mode in MODES:
        T.manual_seed(0)
        model = G.TinyGPT(cfg, device)
        opt = G.optimizer(model)
        idx, tgt = G.random_batch(cfg, device)
        step = _step(T, model, opt, lambda m=model, a=idx, b=tgt: G.loss(m, a, b), mode, device)
        ms = median_step_ms(step, _sync(T, device), warmup, reps)
        peak, base = _peak(step, opt, device)
        tms = None
        if torch is not None:
            tm = G.torch_gpt(cfg, device)
            G.copy_weights(model, tm)
            topt = G.torch_optimizer(tm)
            tidx, ttgt = G.torch_batch(idx, tgt, device)
            tstep = _step(torch, tm, topt, lambda m=tm, a=tidx, b=ttgt: G.torch_loss(m, a, b), mode, device)
            tms = median_step_ms(tstep, _sync(torch, device), warmup, reps)
        rows.append((f"GPT L{cfg.n_layers} d{cfg.d_model} b{cfg.batch}x{cfg.context} {mode}", ms,
                     peak, base, tms))
    return rows


def gemm_case(device, torch, n, reps):
    rows = []
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    for name, d in (("fp32", T.float32), ("bf16", T.bfloat16), ("fp16", T.float16)):
        x, y = T.asarray(a, device=device).astype(d), T.asarray(b, device=device).astype(d)
        ms = median_step_ms(lambda p=x, q=y: p @ q, _sync(T, device), 2, reps)
        tms = None
        if torch is not None:
            td = getattr(torch, {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}[name])
            tx, ty = torch.from_numpy(a).to(device, td), torch.from_numpy(b).to(device, td)
            tms = median_step_ms(lambda p=tx, q=ty: p @ q, _sync(torch, device), 2, reps)
        rows.append((f"GEMM {n}^3 {name} ({2 * n ** 3 / ms / 1e6:.0f} GFLOP/s)", ms, None, None, tms))
    return rows


def main(argv=None) -> list:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--quick", action="store_true", help="smaller models, fewer steps")
    ap.add_argument("--smoke", action="store_true", help="tiny: checks the script runs")
    a = ap.parse_args(argv)
    torch = get_torch(a.device)
    if a.smoke:
        width, depth, batch, reps, warmup, n = 32, 2, 8, 2, 1, 64
        cfg = G.SMOKE
    elif a.quick:
        width, depth, batch, reps, warmup, n = 512, 4, 256, 5, 2, 1024
        cfg = G.GPTConfig(n_layers=2, d_model=128, batch=16, context=64)
    else:
        width, depth, batch, reps, warmup, n = 1024, 4, 512, 10, 3, 2048
        cfg = G.GPTConfig()
    t0 = time.perf_counter()
    rows = (mlp_case(a.device, torch, width, depth, batch, warmup, reps)
            + gpt_case(a.device, torch, cfg, warmup, reps) + gemm_case(a.device, torch, n, reps))
    tv = getattr(torch, "__version__", None)
    print(f"mixed precision on {a.device}; torch: {tv or 'not installed'}")
    print(f"{'case':44s} {'ours ms':>9s} {'vs fp32':>8s} {'peak MiB':>9s} {'params+state':>15s} "
          f"{'torch/ours':>10s}")
    base_ms = {}
    for name, ms, peak, base, tms in rows:
        key = name.rsplit(" ", 1)[0] if "GEMM" not in name else "GEMM"
        base_ms.setdefault(key, ms)
        pk = f"{peak:9.1f}" if peak is not None else f"{'':9s}"
        bs = f"{base:15.1f}" if base is not None else f"{'':15s}"
        tr = f"{tms / ms:10.2f}" if tms else f"{'':10s}"
        print(f"{name:44s} {ms:9.2f} {base_ms[key] / ms:8.2f} {pk} {bs} {tr}")
    print(f"({time.perf_counter() - t0:.0f} s; peak: the allocator's peak during a step above the "
          "parameters and optimizer state; vs fp32: speedup over the case's float32 row)")
    return rows


if __name__ == "__main__":
    main()
