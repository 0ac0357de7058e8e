"""CUDA FFT kernels (family "fft", cuda_src/fft.cuh): the backend's fft_c2c, the CPU's
(tensor/cpu/fft.py) algorithms on the device: one block per row, Stockham mixed radix, Bluestein
for lengths with prime factors past 16, in double precision. The plans (radices, roots of unity,
the Bluestein chirp and its filter's transform) are made on the host with NumPy and kept on the
device per (length, direction)."""
from __future__ import annotations

import ctypes as C

import numpy as np

from .. import dtypes as dt
from .._tensor import empty
from . import kernels as CK
from .launch import upload

BLOCK = 256   # SF_BLOCK
MAXP = 16     # SF_MAXP
_PLANS: dict = {}    # (device, n, inverse) -> the plan's device tensors and numbers
_PLANS_MAX = 32


def entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    s = d.sfx
    return '#include "fft.cuh"\n', {f"fft_c2c_{s}": (
        f'extern "C" __global__ void __launch_bounds__(SF_BLOCK) fft_c2c_{s}('
        f"const sx_{s}::T *x, sx_{s}::T *y, sf_c *work, int64_t batch, int64_t n, double scale, "
        "const int64_t *f, int nf, const sf_c *rt, int64_t m, const sf_c *chirp, "
        "const sf_c *bhat, const int64_t *mf, int mnf, const sf_c *mrt) "
        f"{{ sf_c2c<sx_{s}>(x, y, work, batch, n, scale, f, nf, rt, m, chirp, bhat, mf, mnf, "
        "mrt); }")}


CK.register_family("fft", entries, [dt.complex64, dt.complex128])


def _factors(n: int) -> list:
    f = []
    for p in (4, 2):
        while n % p == 0:
            f.append(p)
            n //= p
    p = 3
    while p * p <= n:
        while n % p == 0:
            f.append(p)
            n //= p
        p += 2
    if n > 1:
        f.append(n)
    return f


def _roots(n: int, sign: int) -> np.ndarray:
    a = 2.0 * np.pi * np.arange(n) / n
    return np.stack([np.cos(a), sign * np.sin(a)], axis=1)


def _dev(a: np.ndarray, dtype, device):
    """A device tensor holding a (float64 (k, 2) pairs or int64), at least one element."""
    a = np.ascontiguousarray(a, dtype=np.float64 if dtype is dt.float64 else np.int64)
    return upload(a if a.size else np.zeros(1, a.dtype), dtype, device)


def _plan(n: int, inverse: bool, device):
    key = (device, n, inverse)
    p = _PLANS.get(key)
    if p is not None:
        return p
    sign = 1 if inverse else -1
    f = _factors(n)
    if all(r <= MAXP for r in f):
        p = (_dev(np.array(f, np.int64), dt.int64, device), len(f),
             _dev(_roots(n, sign), dt.float64, device), 0, None, None, None, 0, None)
    else:
        m = 1
        while m < 2 * n - 1:
            m *= 2
        k = np.arange(n, dtype=np.int64)
        ph = np.pi * ((k * k) % (2 * n)) / n            # k^2 reduced mod 2n: the exact phase
        chirp = np.exp(1j * sign * ph)
        b = np.zeros(m, np.complex128)
        b[:n] = np.conj(chirp)
        b[m - n + 1:] = np.conj(chirp[1:])[::-1]
        bhat = np.fft.fft(b)
        mf = _factors(m)
        c2 = lambda z: np.stack([z.real, z.imag], axis=1)   # noqa: E731
        p = (_dev(np.zeros(1, np.int64), dt.int64, device), 0, _dev(np.zeros((1, 2)), dt.float64, device),
             m, _dev(c2(chirp), dt.float64, device), _dev(c2(bhat), dt.float64, device),
             _dev(np.array(mf, np.int64), dt.int64, device), len(mf),
             _dev(_roots(m, -1), dt.float64, device))
    if len(_PLANS) >= _PLANS_MAX:
        _PLANS.clear()
    _PLANS[key] = p
    return p


def fft_c2c(x, y, inverse: bool, scale: float) -> None:
    """The CPU's fft_c2c on CUDA tensors (asynchronous)."""
    from . import runtime as R
    n = x.shape[-1]
    if n == 0 or x.numel() == 0:
        return
    batch = x.numel() // n
    f, nf, rt, m, chirp, bhat, mf, mnf, mrt = _plan(n, bool(inverse), x.device)
    grid = min(batch, R.device_state(x.device.index or 0).sm_count * 4)
    L = 2 * m if m else 2 * n
    work = empty((grid * L, 2), dt.float64, x.device)
    ptr = lambda t: C.c_void_p(0 if t is None else t.data_ptr())   # noqa: E731
    k = R.kernel("fft", x.dtype, f"fft_c2c_{x.dtype.sfx}", x.device)
    k(grid, BLOCK, ptr(x), ptr(y), ptr(work), C.c_int64(batch), C.c_int64(n), C.c_double(scale),
      ptr(f), C.c_int(nf), ptr(rt), C.c_int64(m), ptr(chirp), ptr(bhat), ptr(mf), C.c_int(mnf),
      ptr(mrt))
