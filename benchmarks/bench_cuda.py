"""CUDA benchmark: our kernels against the device's copy bandwidth, PyTorch and CuPy, one run.

    python benchmarks/bench_cuda.py [--quick | --smoke]

Rows (targets from the CUDA issue):
  add / exp on 2^26 float32, contiguous (>= 90% of copy bandwidth) and transposed (>= 60%)
  sum over all / axis 0 / axis 1 of 8192x8192 float32 (>= 80% of copy bandwidth)
  float32 matmul 4096 (>= 70% of PyTorch's, TF32 off), bfloat16 matmul 8192 (>= 40%)
  1-element add, launch + dispatch overhead (<= 2x PyTorch's time)
Bandwidth = bytes read + written / time; the copy bandwidth is a device-to-device memcpy of the
same size measured in the same run. Times are medians of CUDA-event timings.
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import tensor as T

QUICK = "--quick" in sys.argv
SMOKE = "--smoke" in sys.argv   # tiny sizes: checks the script runs (tests, CPU emulator)


def _median_ms(fn, reps: int, event, elapsed, sync) -> float:
    """Median ms of fn() between two device events (after a warm-up call): event() makes a
    timing event with record()/synchronize(), elapsed(a, b) reads it, sync() waits for all."""
    fn()
    sync()
    out = []
    for _ in range(reps):
        a, b = event(), event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(elapsed(a, b))
    return statistics.median(out)


def _events_ms(fn, reps: int) -> float:
    return _median_ms(fn, reps, lambda: T.cuda.Event(enable_timing=True),
                      lambda a, b: a.elapsed_time(b), T.cuda.synchronize)


def _torch():
    try:
        import torch
        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            return torch
    except ImportError:
        pass
    return None


def _torch_ms(torch, fn, reps: int) -> float:
    return _median_ms(fn, reps, lambda: torch.cuda.Event(enable_timing=True),
                      lambda a, b: a.elapsed_time(b), torch.cuda.synchronize)


def _cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # noqa: BLE001 - not installed or no device
        return None


def _cupy_ms(cp, fn, reps: int) -> float:
    return _median_ms(fn, reps, cp.cuda.Event, cp.cuda.get_elapsed_time,
                      lambda: cp.cuda.Device().synchronize())


def main() -> None:
    if not T.cuda.is_available():
        print("bench_cuda: no CUDA device:", T.cuda.runtime.unavailable_reason())
        return
    from tensor.cuda import runtime as R
    torch, cp = _torch(), _cupy()
    reps = 2 if SMOKE else 5 if QUICK else 20
    n = 1 << (12 if SMOKE else 22 if QUICK else 26)
    side = 64 if SMOKE else 2048 if QUICK else 8192
    print(f"device: {T.cuda.get_device_name()}  torch: {torch.__version__ if torch else '-'}  "
          f"cupy: {cp.__version__ if cp else '-'}")
    rows = []

    x = T.rand(n, dtype="float32", device="cuda")
    y = T.rand(n, dtype="float32", device="cuda")
    dst = T.empty(n, dtype="float32", device="cuda")
    st = R.device_state(0)
    copy_ms = _events_ms(lambda: R.memcpy_dtod(st, dst.data_ptr(), x.data_ptr(), 4 * n), reps)
    bw = 2 * 4 * n / copy_ms / 1e6   # GB/s
    rows.append(("d2d copy 2^26 f32", copy_ms, f"{bw:.0f} GB/s", "", ""))

    def bw_row(name, fn, nbytes, target, tfn=None, cfn=None):
        ms = _events_ms(fn, reps)
        frac = nbytes / ms / 1e6 / bw
        tr = f"{_torch_ms(torch, tfn, reps) / ms:.2f}" if torch and tfn else ""
        cr = f"{_cupy_ms(cp, cfn, reps) / ms:.2f}" if cp and cfn else ""
        rows.append((name, ms, f"{frac:.0%} of copy (target {target})", tr, cr))

    tx = torch.rand(n, device="cuda") if torch else None
    ty = torch.rand(n, device="cuda") if torch else None
    cx = cp.random.rand(n, dtype=cp.float32) if cp else None
    cy = cp.random.rand(n, dtype=cp.float32) if cp else None
    bw_row("add 2^26 f32", lambda: x + y, 12 * n, ">=90%",
           (lambda: tx + ty) if torch else None, (lambda: cx + cy) if cp else None)
    bw_row("exp 2^26 f32", lambda: T.exp(x), 8 * n, ">=90%",
           (lambda: torch.exp(tx)) if torch else None, (lambda: cp.exp(cx)) if cp else None)
    s = 1 << (6 if SMOKE else 11 if QUICK else 13)
    xt, yt = x.reshape(s, n // s).T, y.reshape(s, n // s).T      # transposed views
    yc = y.reshape(n // s, s)                                       # row-major, xt's shape
    outc = T.empty((n // s, s), dtype="float32", device="cuda")
    ttx = tx.reshape(s, n // s).T if torch else None
    tty, tyc = (ty.reshape(s, n // s).T, ty.reshape(n // s, s)) if torch else (None, None)
    touc = torch.empty(n // s, s, device="cuda") if torch else None
    # operands in one (transposed) layout: the result takes it too (NumPy's K order)
    bw_row("add x.T + y.T 2^26", lambda: xt + yt, 12 * n, ">=60%",
           (lambda: ttx + tty) if torch else None, None)
    bw_row("exp x.T 2^26", lambda: T.exp(xt), 8 * n, ">=60%",
           (lambda: torch.exp(ttx)) if torch else None, None)
    # layouts differ: the tiled (shared-memory transpose) kernel
    bw_row("add x.T + y (row-major) 2^26", lambda: xt + yc, 12 * n, ">=60%",
           (lambda: ttx + tyc) if torch else None, None)
    bw_row("exp x.T -> row-major out", lambda: T.exp(xt, out=outc), 8 * n, ">=60%",
           (lambda: torch.exp(ttx, out=touc)) if torch else None, None)
    bw_row("x.T.contiguous() 2^26", lambda: xt.contiguous(), 8 * n, ">=60%",
           (lambda: ttx.contiguous()) if torch else None, None)

    m = T.rand(side, side, dtype="float32", device="cuda")
    tm = torch.rand(side, side, device="cuda") if torch else None
    cm = cp.random.rand(side, side, dtype=cp.float32) if cp else None
    nb = 4 * side * side
    for name, ax in (("sum all", None), ("sum axis 0", 0), ("sum axis 1", 1)):
        bw_row(f"{name} {side}^2 f32", lambda ax=ax: m.sum(axis=ax), nb, ">=80%",
               (lambda ax=ax: tm.sum() if ax is None else tm.sum(dim=ax)) if torch else None,
               (lambda ax=ax: cm.sum(axis=ax)) if cp else None)

    for dtn, size, target in (("float32", 64 if SMOKE else 1024 if QUICK else 4096, ">=70%"),
                              ("bfloat16", 64 if SMOKE else 2048 if QUICK else 8192, ">=40%")):
        a = T.rand(size, size, dtype="float32", device="cuda").astype(dtn)
        b = T.rand(size, size, dtype="float32", device="cuda").astype(dtn)
        ms = _events_ms(lambda a=a, b=b: a @ b, max(3, reps // 4))
        tf = 2 * size ** 3 / ms / 1e9
        ratio = ""
        if torch:
            tdt = getattr(torch, dtn)
            ta = torch.rand(size, size, device="cuda").to(tdt)
            tb = torch.rand(size, size, device="cuda").to(tdt)
            ratio = f"{_torch_ms(torch, lambda ta=ta, tb=tb: ta @ tb, max(3, reps // 4)) / ms:.2f}"
        rows.append((f"matmul {dtn} {size}", ms, f"{tf:.1f} TFLOP/s (target {target} of torch)", ratio, ""))

    one, one2 = T.ones(1, device="cuda"), T.ones(1, device="cuda")
    k = 10 if SMOKE else 200 if QUICK else 2000

    def per_op(fn, sync):
        fn()
        sync()
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        sync()
        return (time.perf_counter() - t0) / k * 1e3

    ms = per_op(lambda: one + one2, T.cuda.synchronize)
    tr = ""
    if torch:
        t1, t2 = torch.ones(1, device="cuda"), torch.ones(1, device="cuda")
        tr = f"{per_op(lambda: t1 + t2, torch.cuda.synchronize) / ms:.2f}"
    rows.append(("1-element add (host time)", ms, "target <= 2x torch's time", tr, ""))

    print(f"{'benchmark':32s} {'ours ms':>10s}  {'measure':38s} {'torch/ours':>10s} {'cupy/ours':>10s}")
    for name, ms_, meas, tr_, cr_ in rows:
        print(f"{name:32s} {ms_:10.4f}  {meas:38s} {tr_:>10s} {cr_:>10s}")
    print("torch/ours, cupy/ours: time ratios (> 1: we are faster). "
          f"numpy {np.__version__}")


if __name__ == "__main__":
    main()
