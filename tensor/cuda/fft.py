"""CUDA FFT kernels (family "fft", cuda_src/fft.cuh): the backend's fft_c2c, the CPU's
(tensor/cpu/fft.py) algorithms on the device: one block per row, Stockham mixed radix, Bluestein
for lengths with prime factors past 16, in double precision. Long rows (FOUR_STEP), which one
block a row would leave on few SMs, take the four-step transform (rows of ~sqrt(n) between
transposes) and, for Bluestein, its two transforms of m through it. The plans (radices, roots of unity,
the Bluestein chirp and its filter's transform) are made on the host with NumPy and kept on the
device per (length, direction)."""
from __future__ import annotations

import ctypes as C
import math
from functools import cache

import numpy as np

from .. import dtypes as dt
from .._tensor import empty
from . import kernels as CK
from .launch import upload

BLOCK = 256   # SF_BLOCK
MAXP = 16     # SF_MAXP
_PLANS: dict = {}    # (device, n, inverse) -> the plan's device tensors and numbers
_PLANS_MAX = 32
# rows this long (smooth: no prime factor past MAXP) take the four-step transform (_four_step);
# from FOUR_STEP_FEW on when there are fewer rows than SMs
FOUR_STEP, FOUR_STEP_FEW = 1 << 17, 1 << 13


def entries(d: dt.DType) -> tuple[str, dict[str, str]]:
    s = d.sfx
    return '#include "fft.cuh"\n', {f"fft_c2c_{s}": (
        f'extern "C" __global__ void __launch_bounds__(SF_BLOCK) fft_c2c_{s}('
        f"const sx_{s}::T *x, sx_{s}::T *y, sf_c *work, int64_t batch, int64_t n, double scale, "
        "const int64_t *f, int nf, const sf_c *rt, int64_t m, const sf_c *chirp, "
        "const sf_c *bhat, const int64_t *mf, int mnf, const sf_c *mrt) "
        f"{{ sf_c2c<sx_{s}>(x, y, work, batch, n, scale, f, nf, rt, m, chirp, bhat, mf, mnf, "
        "mrt); }"), f"fft_tr_{s}": (
        f'extern "C" __global__ void __launch_bounds__(SF_BLOCK) fft_tr_{s}('
        f"const sx_{s}::T *x, sx_{s}::T *y, int64_t batch, int64_t R, int64_t C, "
        "const sf_c *wlo, const sf_c *whi, int64_t S) "
        f"{{ sf_transpose<sx_{s}>(x, y, batch, R, C, wlo, whi, S); }}"), f"fft_bs_{s}": (
        f'extern "C" __global__ void __launch_bounds__(SF_BLOCK) fft_bs_{s}('
        f"const sx_{s}::T *x, sx_{s}::T *y, sf_c *a, int64_t batch, int64_t n, int64_t m, "
        "const sf_c *tab, double scale, int mode) "
        f"{{ sf_bluestein_step<sx_{s}>(x, y, a, batch, n, m, tab, scale, mode); }}")}


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


@cache
def _smooth(n: int) -> bool:
    return all(r <= MAXP for r in _factors(n))


def _roots(n: int, sign: int, t=None) -> np.ndarray:
    """exp(sign 2 pi i t / n) as (re, im) pairs for the exponents t (default: 0 .. n-1)."""
    a = 2.0 * np.pi * (np.arange(n) if t is None else t) / n
    return np.stack([np.cos(a), sign * np.sin(a)], axis=1)


def _ptr(t) -> C.c_void_p:
    return C.c_void_p(0 if t is None else t.data_ptr())


def _bluestein_len(n: int) -> int:
    """m: the power of two >= 2n - 1 of Bluestein's transforms."""
    return 1 << (2 * n - 2).bit_length()


def _cached(key, make):
    """The plan under key, made by make() once (the cache is cleared when full)."""
    p = _PLANS.get(key)
    if p is None:
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        p = _PLANS[key] = make()
    return p


def _dev(a: np.ndarray, dtype, device):
    """A device tensor holding a (float64 (k, 2) pairs or int64), at least one element."""
    a = np.ascontiguousarray(a, dtype=np.float64 if dtype is dt.float64 else np.int64)
    return upload(a if a.size else np.zeros(1, a.dtype), dtype, device)


def _plan(n: int, inverse: bool, device):
    def make():
        if _smooth(n):
            f = _factors(n)
            return (_dev(np.array(f, np.int64), dt.int64, device), len(f),
                    _dev(_roots(n, 1 if inverse else -1), dt.float64, device), 0, None, None,
                    None, 0, None)
        m, chirp, bhat = _chirp_plan(n, inverse, device)
        mf = _factors(m)
        return (_dev(np.zeros(1, np.int64), dt.int64, device), 0,
                _dev(np.zeros((1, 2)), dt.float64, device), m, chirp, bhat,
                _dev(np.array(mf, np.int64), dt.int64, device), len(mf),
                _dev(_roots(m, -1), dt.float64, device))
    return _cached((device, n, inverse), make)


def _chirp_plan(n: int, inverse: bool, device):
    """Bluestein's (m, chirp, bhat) for length n: m the power of two >= 2n - 1, the chirp
    exp(-+i pi k^2 / n) (n) and the transform of its filter (m), on the device."""
    def make():
        m = _bluestein_len(n)
        k = np.arange(n, dtype=np.int64)
        ph = np.pi * ((k * k) % (2 * n)) / n            # k^2 reduced mod 2n: the exact phase
        chirp = np.exp(1j * (1 if inverse else -1) * ph)
        b = np.zeros(m, np.complex128)
        b[:n] = np.conj(chirp)
        b[m - n + 1:] = np.conj(chirp[1:])[::-1]
        c2 = lambda z: np.stack([z.real, z.imag], axis=1)   # noqa: E731
        return m, _dev(c2(chirp), dt.float64, device), _dev(c2(np.fft.fft(b)), dt.float64, device)
    return _cached((device, n, inverse, "chirp"), make)


def _bluestein(x, y, batch: int, n: int, m: int, inverse: bool, scale: float, sms: int) -> None:
    """Rows of a length with a prime factor past MAXP through two transforms of m (a power of
    two, long: four-step) in double precision, as sf_c2c does in one block a row."""
    from . import runtime as R
    _, chirp, bhat = _chirp_plan(n, inverse, x.device)
    a = empty((batch * m,), dt.complex128, x.device)
    b = empty((batch * m,), dt.complex128, x.device)
    k = R.kernel("fft", x.dtype, f"fft_bs_{x.dtype.sfx}", x.device)
    p, i64 = _ptr, C.c_int64
    grid = min(-(-batch * m // BLOCK), sms * 8)
    k(grid, BLOCK, p(x), p(y), p(a), i64(batch), i64(n), i64(m), p(chirp), C.c_double(1.0),
      C.c_int(0))
    _rows(a, b, batch, m, False, 1.0, sms)
    k(grid, BLOCK, p(x), p(y), p(b), i64(batch), i64(n), i64(m), p(bhat), C.c_double(1.0),
      C.c_int(1))
    _rows(b, a, batch, m, False, 1.0, sms)
    k(grid, BLOCK, p(x), p(y), p(a), i64(batch), i64(n), i64(m), p(chirp), C.c_double(scale),
      C.c_int(2))


def _long(n: int, batch: int, sms: int) -> bool:
    """Whether rows of n take the multi-launch paths (see FOUR_STEP)."""
    return n >= FOUR_STEP or (n >= FOUR_STEP_FEW and batch < sms)


def _four_step_plan(n: int, inverse: bool, device):
    """(n1, n2, S, wlo, whi) of the four-step transform of length n = n1 n2 (n1 the divisor
    nearest sqrt(n) below it): the twiddles W^t = whi[t // S] wlo[t % S], S = ceil(sqrt(n))."""
    def make():
        n1 = math.isqrt(n)
        while n % n1:
            n1 -= 1
        sq = math.isqrt(n - 1) + 1
        sign = 1 if inverse else -1
        lo = _roots(n, sign, np.arange(sq, dtype=np.int64))
        hi = _roots(n, sign, (np.arange(-(-n // sq), dtype=np.int64) * sq) % n)   # u S mod n
        return n1, n // n1, sq, _dev(lo, dt.float64, device), _dev(hi, dt.float64, device)
    return _cached((device, n, inverse, "four"), make)


def _four_step(x, y, batch: int, n: int, inverse: bool, scale: float, sms: int) -> None:
    """Rows of n = n1 n2 in five launches over every SM (one block per row leaves a GPU
    idle: one row of 2^20 took 12.8 ms on an H200, 1024 rows of 1024 0.14 ms): with x[j] as
    the n1 x n2 matrix X[j1][j2] (j = n2 j1 + j2), the transforms of its columns (rows of n1
    after a transpose), the twiddles W^(j2 k1), those of its rows (n2), and the output
    y[k1 + n1 k2] read transposed."""
    from . import runtime as R
    n1, n2, sq, lo, hi = _four_step_plan(n, inverse, x.device)
    tmp = empty((batch * n,), x.dtype, x.device)
    k = R.kernel("fft", x.dtype, f"fft_tr_{x.dtype.sfx}", x.device)
    grid = min(batch * (-(-n1 // 32)) * (-(-n2 // 32)), sms * 8)
    p, i64, none = _ptr, C.c_int64, C.c_void_p(0)
    k(grid, BLOCK, p(x), p(y), i64(batch), i64(n1), i64(n2), none, none, i64(1))
    _rows(y, tmp, batch * n2, n1, inverse, 1.0, sms)
    k(grid, BLOCK, p(tmp), p(y), i64(batch), i64(n2), i64(n1), p(lo), p(hi), i64(sq))
    _rows(y, tmp, batch * n1, n2, inverse, scale, sms)
    k(grid, BLOCK, p(tmp), p(y), i64(batch), i64(n1), i64(n2), none, none, i64(1))


def fft_c2c(x, y, inverse: bool, scale: float) -> None:
    """The CPU's fft_c2c on CUDA tensors (asynchronous)."""
    from . import runtime as R
    n = x.shape[-1]
    if n == 0 or x.numel() == 0:
        return
    if x.data_ptr() == y.data_ptr():   # the four-step path's transposes cannot work in place
        raise ValueError("fft_c2c: the output must not be the input (CUDA)")
    sms = R.device_state(x.device.index or 0).sm_count
    _rows(x, y, x.numel() // n, n, bool(inverse), scale, sms)


def _rows(x, y, batch: int, n: int, inverse: bool, scale: float, sms: int) -> None:
    """y = scale * the DFTs of the `batch` contiguous rows of n in x."""
    from . import runtime as R
    if _long(n, batch, sms) and _smooth(n):
        return _four_step(x, y, batch, n, inverse, scale, sms)
    if not _smooth(n) and _long(m := _bluestein_len(n), batch, sms):
        return _bluestein(x, y, batch, n, m, inverse, scale, sms)
    f, nf, rt, m, chirp, bhat, mf, mnf, mrt = _plan(n, bool(inverse), x.device)
    grid = min(batch, sms * 4)
    L = 2 * m if m else 2 * n
    work = empty((grid * L, 2), dt.float64, x.device)
    ptr = _ptr
    k = R.kernel("fft", x.dtype, f"fft_c2c_{x.dtype.sfx}", x.device)
    k(grid, BLOCK, ptr(x), ptr(y), ptr(work), C.c_int64(batch), C.c_int64(n), C.c_double(scale),
      ptr(f), C.c_int(nf), ptr(rt), C.c_int64(m), ptr(chirp), ptr(bhat), ptr(mf), C.c_int(mnf),
      ptr(mrt))
