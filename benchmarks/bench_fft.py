"""FFT: tensor.fft against NumPy's pocketfft (CPU) or PyTorch's cuFFT (CUDA), in one run.

    python benchmarks/bench_fft.py [--device cpu|cuda] [--smoke]

Cases: a 2^20-point complex64 fft (the issue's size), 1000 x 1000 (a composite length with a
factor 5^3), a prime length (Bluestein), a batch of 1024 rows of 1024, rfft of 2^20 float32 and a
2-D fft of 1024 x 1024. Median of 5 calls after one warm-up; ref/ours is a time ratio (> 1:
we are faster).
"""
from __future__ import annotations

import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]

import numpy as np  # noqa: E402
from bench_train import device_bench_args, median_step_ms  # noqa: E402

import tensor as T  # noqa: E402


def _run(kind: str, fft_module, x):
    """The case's transform of x by fft_module (tensor.fft, numpy.fft or torch.fft)."""
    return {"fft": fft_module.fft, "rfft": fft_module.rfft, "fft2": fft_module.fftn}[kind](x)


def cases(smoke: bool):
    k = 1 if not smoke else 0
    return [("fft 2^20 c64", (1, 2 ** 20 if k else 2 ** 10), "fft"),
            ("fft 1000x1000 c64 (one row)", (1, 10 ** 6 if k else 1000), "fft"),
            ("fft prime 1000003 c64", (1, 1000003 if k else 1009), "fft"),
            ("fft 1024 rows of 1024 c64", (1024 if k else 8, 1024), "fft"),
            ("rfft 2^20 f32", (1, 2 ** 20 if k else 2 ** 10), "rfft"),
            ("fft2 1024x1024 c64", (1024 if k else 32, 1024 if k else 32), "fft2")]


def main(argv=None) -> list:
    a, torch, sync = device_bench_args(__doc__, argv)
    rng = np.random.default_rng(0)
    rows = []
    for name, shape, kind in cases(a.smoke):
        re = rng.standard_normal(shape).astype(np.float32)
        host = re if kind == "rfft" else (re + 1j * rng.standard_normal(shape).astype(np.float32))
        x = T.asarray(host, device=a.device)
        ours_fn = functools.partial(_run, kind, T.fft, x)
        ms = median_step_ms(ours_fn, sync, 1, 5)
        err = None
        if a.device == "cpu":
            ref_fn = functools.partial(_run, kind, np.fft, host)
            rms = median_step_ms(ref_fn, lambda: None, 1, 5)
            want = ref_fn().astype(np.complex128)
            err = float(np.abs(ours_fn().numpy() - want).max() / np.abs(want).max())
        elif torch is not None:
            ref_fn = functools.partial(_run, kind, torch.fft, torch.from_numpy(host).cuda())
            rms = median_step_ms(ref_fn, torch.cuda.synchronize, 1, 5)
        else:
            rms = None
        rows.append((name, ms, rms, err))
    ref = "numpy" if a.device == "cpu" else "torch"
    print(f"FFT on {a.device} ({T.get_num_threads()} threads); reference: {ref}")
    print(f"{'case':32s} {'ours ms':>9s} {ref + ' ms':>9s} {'ref/ours':>9s} {'max rel err':>12s}")
    for name, ms, rms, err in rows:
        r = f"{rms:9.2f} {rms / ms:9.2f}" if rms else f"{'':9s} {'':9s}"
        e = f"{err:12.1e}" if err is not None else ""
        print(f"{name:32s} {ms:9.2f} {r} {e}")
    return rows


if __name__ == "__main__":
    main()
