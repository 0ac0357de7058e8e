"""CUDA benchmark: our kernels against the device's copy bandwidth, PyTorch and CuPy, one run.

    python benchmarks/bench_cuda.py [--quick | --smoke] [--md table.md] [--no-train]

Rows (targets from the CUDA issue):
  add / exp on 2^26 float32, contiguous (>= 90% of copy bandwidth) and transposed (>= 60%)
  sum over all / axis 0 / axis 1 of 8192x8192 float32 (>= 80% of copy bandwidth)
  softmax / layer_norm / cross_entropy over the rows of 8192x4096, float32 and bfloat16
    (nn.functional's fused kernels; row reductions: >= 80% of copy bandwidth)
  float32 matmul 4096 (>= 70% of PyTorch's, TF32 off), bfloat16 and float16 matmul 8192 (>= 40%)
  argsort over the last axis of 100000x256 float32 (the shared-memory sort of short rows) and
    of 64x65536 (the radix path), against torch.argsort(stable=True) (torch.sort's indices)
  1-element add, launch + dispatch overhead (<= 2x PyTorch's time)
  training steps (bench_train.py): the digits MLP at batch 32 and 1024, a tiny GPT
Bandwidth = bytes read + written / time; the copy bandwidth is a device-to-device memcpy of the
same size measured in the same run. Times are medians of CUDA-event timings (the training steps:
of synchronized wall times). torch/ours and cupy/ours are time ratios: > 1 means we are faster.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import tensor as T  # noqa: E402
from nn import functional as F  # noqa: E402


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


class Bench:
    """The run's settings, peers and rows (name, ours ms, measure, torch/ours, cupy/ours)."""

    def __init__(self, smoke: bool, quick: bool) -> None:
        self.smoke, self.quick = smoke, quick
        self.torch, self.cp = _torch(), _cupy()
        self.reps = 2 if smoke else 5 if quick else 20
        self.rows: list[tuple] = []
        self.bw = 0.0   # the device's d2d copy bandwidth, GB/s (copy_row sets it)

    def size(self, smoke: int, quick: int, full: int) -> int:
        return smoke if self.smoke else quick if self.quick else full

    def bw_row(self, name, fn, nbytes, target, tfn=None, cfn=None) -> None:
        """A bandwidth-bound op: its fraction of the copy bandwidth, and the peers' time ratios;
        tfn / cfn (None when the peer is missing) do the same with torch / cupy."""
        ms = _events_ms(fn, self.reps)
        frac = nbytes / ms / 1e6 / self.bw
        tr = f"{_torch_ms(self.torch, tfn, self.reps) / ms:.2f}" if self.torch and tfn else ""
        cr = f"{_cupy_ms(self.cp, cfn, self.reps) / ms:.2f}" if self.cp and cfn else ""
        self.rows.append((name, ms, f"{frac:.0%} of copy (target {target})", tr, cr))


def copy_row(b: Bench, n: int) -> None:
    from tensor.cuda import runtime as R
    x = T.empty(n, dtype="float32", device="cuda")
    dst = T.empty(n, dtype="float32", device="cuda")
    st = R.device_state(0)
    ms = _events_ms(lambda: R.memcpy_dtod(st, dst.data_ptr(), x.data_ptr(), 4 * n), b.reps)
    b.bw = 2 * 4 * n / ms / 1e6   # GB/s
    b.rows.append(("d2d copy 2^26 f32", ms, f"{b.bw:.0f} GB/s", "", ""))


def elementwise_rows(b: Bench, n: int) -> None:
    torch, cp = b.torch, b.cp
    x = T.rand(n, dtype="float32", device="cuda")
    y = T.rand(n, dtype="float32", device="cuda")
    tx = torch.rand(n, device="cuda") if torch else None
    ty = torch.rand(n, device="cuda") if torch else None
    cx = cp.random.rand(n, dtype=cp.float32) if cp else None
    cy = cp.random.rand(n, dtype=cp.float32) if cp else None
    b.bw_row("add 2^26 f32", lambda: x + y, 12 * n, ">=90%",
             (lambda: tx + ty) if torch else None, (lambda: cx + cy) if cp else None)
    b.bw_row("exp 2^26 f32", lambda: T.exp(x), 8 * n, ">=90%",
             (lambda: torch.exp(tx)) if torch else None, (lambda: cp.exp(cx)) if cp else None)
    s = b.size(1 << 6, 1 << 11, 1 << 13)
    xt, yt = x.reshape(s, n // s).T, y.reshape(s, n // s).T      # transposed views
    yc = y.reshape(n // s, s)                                       # row-major, xt's shape
    outc = T.empty((n // s, s), dtype="float32", device="cuda")
    ttx = tx.reshape(s, n // s).T if torch else None
    tty, tyc = (ty.reshape(s, n // s).T, ty.reshape(n // s, s)) if torch else (None, None)
    touc = torch.empty(n // s, s, device="cuda") if torch else None
    # operands in one (transposed) layout: the result takes it too (NumPy's K order)
    b.bw_row("add x.T + y.T 2^26", lambda: xt + yt, 12 * n, ">=60%",
             (lambda: ttx + tty) if torch else None)
    b.bw_row("exp x.T 2^26", lambda: T.exp(xt), 8 * n, ">=60%",
             (lambda: torch.exp(ttx)) if torch else None)
    # layouts differ: the tiled (shared-memory transpose) kernel
    b.bw_row("add x.T + y (row-major) 2^26", lambda: xt + yc, 12 * n, ">=60%",
             (lambda: ttx + tyc) if torch else None)
    b.bw_row("exp x.T -> row-major out", lambda: T.exp(xt, out=outc), 8 * n, ">=60%",
             (lambda: torch.exp(ttx, out=touc)) if torch else None)
    b.bw_row("x.T.contiguous() 2^26", lambda: xt.contiguous(), 8 * n, ">=60%",
             (lambda: ttx.contiguous()) if torch else None)


def reduction_rows(b: Bench) -> None:
    torch, cp = b.torch, b.cp
    side = b.size(64, 2048, 8192)
    m = T.rand(side, side, dtype="float32", device="cuda")
    tm = torch.rand(side, side, device="cuda") if torch else None
    cm = cp.random.rand(side, side, dtype=cp.float32) if cp else None
    for name, ax in (("sum all", None), ("sum axis 0", 0), ("sum axis 1", 1)):
        b.bw_row(f"{name} {side}^2 f32", lambda ax=ax: m.sum(axis=ax), 4 * side * side, ">=80%",
                 (lambda ax=ax: tm.sum() if ax is None else tm.sum(dim=ax)) if torch else None,
                 (lambda ax=ax: cm.sum(axis=ax)) if cp else None)


def _to_torch(torch, x: T.Tensor):
    """x's values as a torch CUDA tensor of the same dtype (bfloat16 goes through float32,
    exactly: NumPy has no bfloat16)."""
    wide = x.astype("float32") if x.dtype.kind == "f" else x
    return torch.from_numpy(np.asarray(wide.to("cpu"))).to("cuda", getattr(torch, x.dtype.name))


def nn_rows(b: Bench) -> None:
    """Fused row ops of nn.functional against torch.nn.functional on the same shapes and values.
    Bytes: softmax and layer_norm read and write every element, cross_entropy reads the logits."""
    r, c = b.size(64, 2048, 8192), b.size(48, 4096, 4096)
    tF = b.torch.nn.functional if b.torch else None
    for dtn, short in (("float32", "f32"), ("bfloat16", "bf16")):
        x = T.rand(r, c, dtype="float32", device="cuda").astype(dtn)
        w, bias = T.rand(c, dtype="float32", device="cuda").astype(dtn), T.zeros(c, dtype=dtn, device="cuda")
        tgt = T.randint(0, c, size=(r,), device="cuda")
        nb = x.dtype.itemsize * r * c
        ours = {"softmax": lambda x=x: F.softmax(x, dim=-1),
                "layer_norm": lambda x=x, w=w, bias=bias: F.layer_norm(x, (c,), w, bias),
                "cross_entropy": lambda x=x, tgt=tgt: F.cross_entropy(x, tgt)}
        theirs = dict.fromkeys(ours)
        if b.torch:
            tx, tw, tb, tt = (_to_torch(b.torch, t) for t in (x, w, bias, tgt))
            theirs = {"softmax": lambda tx=tx: tF.softmax(tx, dim=-1),
                      "layer_norm": lambda tx=tx, tw=tw, tb=tb: tF.layer_norm(tx, (c,), tw, tb),
                      "cross_entropy": lambda tx=tx, tt=tt: tF.cross_entropy(tx, tt)}
        for op, fn in ours.items():
            moved = nb if op == "cross_entropy" else 2 * nb
            b.bw_row(f"{op} rows {r}x{c} {short}", fn, moved, ">=80%", theirs[op])


def gemm_rows(b: Bench) -> None:
    torch = b.torch
    big = b.size(64, 2048, 8192)
    for dtn, size, target in (("float32", b.size(64, 1024, 4096), ">=70%"),
                              ("bfloat16", big, ">=40%"), ("float16", big, ">=40%")):
        a = T.rand(size, size, dtype="float32", device="cuda").astype(dtn)
        c = T.rand(size, size, dtype="float32", device="cuda").astype(dtn)
        reps = max(3, b.reps // 4)
        ms = _events_ms(lambda a=a, c=c: a @ c, reps)
        tf = 2 * size ** 3 / ms / 1e9
        ratio = ""
        if torch:
            tdt = getattr(torch, dtn)
            ta = torch.rand(size, size, device="cuda").to(tdt)
            tc = torch.rand(size, size, device="cuda").to(tdt)
            ratio = f"{_torch_ms(torch, lambda ta=ta, tc=tc: ta @ tc, reps) / ms:.2f}"
        b.rows.append((f"matmul {dtn} {size}", ms, f"{tf:.1f} TFLOP/s (target {target} of torch)",
                       ratio, ""))


def sort_rows(b: Bench) -> None:
    """Stable argsort along the last axis: many short rows (one block sorts several in shared
    memory) and a few long ones (global radix passes); the measure is elements sorted per second."""
    torch = b.torch
    for rows, L, path in ((b.size(64, 20000, 100000), 256, "smem"),
                          (b.size(2, 16, 64), b.size(4100, 65536, 65536), "radix")):
        x = T.rand(rows, L, dtype="float32", device="cuda")
        ms = _events_ms(lambda x=x: T.argsort(x, axis=-1), b.reps)
        ratio = ""
        if torch:
            tx = _to_torch(torch, x)
            tms = _torch_ms(torch, lambda tx=tx: torch.argsort(tx, dim=-1, stable=True), b.reps)
            ratio = f"{tms / ms:.2f}"
        b.rows.append((f"argsort {rows}x{L} f32 ({path})", ms, f"{rows * L / ms / 1e6:.2f} Gelem/s",
                       ratio, ""))


def latency_row(b: Bench) -> None:
    """Host time per 1-element add: Python dispatch + launch (calls queue; one sync at the end)."""
    one, one2 = T.ones(1, device="cuda"), T.ones(1, device="cuda")
    k = b.size(10, 200, 2000)

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
    if b.torch:
        t1, t2 = b.torch.ones(1, device="cuda"), b.torch.ones(1, device="cuda")
        tr = f"{per_op(lambda: t1 + t2, b.torch.cuda.synchronize) / ms:.2f}"
    b.rows.append(("1-element add (host time)", ms, "target <= 2x torch's time", tr, ""))


def train_rows(b: Bench) -> None:
    import bench_train
    b.rows.extend(bench_train.rows("cuda", b.torch, b.smoke, b.quick))


def print_table(b: Bench) -> None:
    print(f"{'benchmark':36s} {'ours ms':>10s}  {'measure':38s} {'torch/ours':>10s} {'cupy/ours':>10s}")
    for name, ms_, meas, tr_, cr_ in b.rows:
        print(f"{name:36s} {ms_:10.4f}  {meas:38s} {tr_:>10s} {cr_:>10s}")
    print("torch/ours, cupy/ours: time ratios (> 1: we are faster). "
          f"numpy {np.__version__}")


def write_markdown(b: Bench, path: str, header: str) -> None:
    with open(path, "a") as f:
        f.write(f"\n{header}\n\n| benchmark | ours ms | measure | torch/ours | cupy/ours |\n"
                "| --- | ---: | --- | ---: | ---: |\n")
        for name, ms_, meas, tr_, cr_ in b.rows:
            f.write(f"| {name} | {ms_:.4f} | {meas} | {tr_} | {cr_} |\n")
    print(f"markdown table appended to {path}")


def main(argv=None) -> Bench | None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer reps")
    ap.add_argument("--smoke", action="store_true",
                    help="tiny sizes: checks the script runs (tests, emulator)")
    ap.add_argument("--md", default=None, help="also append the table in markdown to this file")
    ap.add_argument("--no-train", action="store_true", help="skip the training-step rows")
    a = ap.parse_args(argv)
    if not T.cuda.is_available():
        print("bench_cuda: no CUDA device:", T.cuda.runtime.unavailable_reason())
        return None
    b = Bench(a.smoke, a.quick)
    header = (f"device: {T.cuda.get_device_name()}  torch: {b.torch.__version__ if b.torch else '-'}  "
              f"cupy: {b.cp.__version__ if b.cp else '-'}")
    print(header)
    for what, peer in (("torch", b.torch), ("cupy", b.cp)):
        if peer is None:
            print(f"{what}: not importable or no device: its column stays empty")
    n = 1 << b.size(12, 22, 26)
    copy_row(b, n)
    elementwise_rows(b, n)
    reduction_rows(b)
    nn_rows(b)
    gemm_rows(b)
    sort_rows(b)
    latency_row(b)
    if not a.no_train:
        train_rows(b)
    print_table(b)
    if a.md:
        write_markdown(b, a.md, header)
    return b


if __name__ == "__main__":
    main()
