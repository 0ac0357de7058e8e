"""The op table's entries for PyTorch's torch.special Bessel functions, Airy's Ai and the
classical orthogonal polynomials: bessel_j0 / j1 / y0 / y1, modified_bessel_k0 / k1 and their
scaled forms (e^x K), spherical_bessel_j0 and airy_ai (unary), and the polynomials p(x, n)
(binary: Chebyshev's T, U, V, W and their shifted forms over [0, 1], Hermite's H and He,
Laguerre's L and Legendre's P). Entries as tensor/optable.py's (which appends these to UNARY /
BINARY); the C helpers they call are cuda_src/scalar/bessel.h, shared by both devices.

Each is published as a tensor function and method under PyTorch's name (tensor.bessel_j0(x),
x.bessel_j0()); tensor.special has them too, with PyTorch's dtype rules (integers to the
default float dtype; a polynomial's n taking x's float dtype). Derivatives: the Bessel
functions' closed forms (J0' = -J1, J1' = J0 - J1 / x, Y0' = -Y1, Y1' = Y0 - Y1 / x, K0' = -K1,
K1' = -K0 - K1 / x, the scaled forms', (sin x / x)'), none for airy_ai and the polynomials
(PyTorch has none either: NO_RULE).

The NumPy references (for the table's tests) take routes of their own: J_n by the trapezoidal
rule on Bessel's integral (1/pi) int_0^pi cos(n t - x sin t) dt (periodic: geometric
convergence); Y0, Y1 by Neumann's series over those J_2k; K by a finer trapezoidal rule than
the kernels'; Ai by Maclaurin's series on [-1, 1], K_1/3 above, and Gauss-Legendre quadrature of
J_1/3 + J_-1/3's integrals below; the polynomials by their recurrences, vectorized.

>>> import tensor as T
>>> x = T.tensor([0.0, 1.0], dtype=T.float64)
>>> [round(v, 12) for v in T.bessel_j0(x).tolist()], round(x[1].bessel_y0().item(), 12)
([1.0, 0.765197686558], 0.088256964216)
"""
from __future__ import annotations

import math
from functools import cache

import numpy as np

from .opdefs import NO_RULE, OUT, Op, T, X, _float_loop, d1, one_at_zero

_EULER = 0.5772156649015329


def _in_float64(fn):
    """A unary reference: fn over float64 values, rounded to x's float loop dtype."""
    def ref(x):
        x = np.asarray(x)
        ft = _float_loop(x)
        with np.errstate(all="ignore"):
            v = np.array(x.astype(ft).astype(np.float64), ndmin=1).ravel()
            return np.asarray(fn(v)).astype(ft).reshape(x.shape)
    return ref


def _binary_ref(fn):
    def ref(a, b):
        with np.errstate(all="ignore"):
            ft = np.arctan2(a, b).dtype   # a float-only binary ufunc's loop (NEP 50 scalars too)
            av, bv = (np.asarray(v, ft).astype(np.float64) for v in (a, b))
            av, bv = np.broadcast_arrays(av, bv)
            return np.asarray(fn(av.ravel(), bv.ravel())).reshape(av.shape).astype(ft)
    return ref


# ---------------------------------------------------------------- Bessel references

def _jn(n, x):
    """J_n(x) for finite x (rows: orders n, a 1-D array), Bessel's integral by the trapezoidal
    rule: its error is of the size of J_2m-n(x), negligible once m passes (|x| + n) / 2 + 30."""
    m = int(max(64.0, (np.max(np.abs(x), initial=0.0) + np.max(n)) / 2 + 40))
    t = np.linspace(0.0, math.pi, m + 1)
    w = np.full(m + 1, math.pi / m)
    w[[0, -1]] *= 0.5
    n = np.asarray(n, np.float64)[:, None, None]
    f = np.cos(n * t[None, None, :] - x[None, :, None] * np.sin(t)[None, None, :])
    return (f @ w) / math.pi


def _j_ref(order):
    def f(x):
        out = np.full(x.shape, np.nan)
        ok = np.isfinite(x)
        out[ok] = _jn([order], x[ok])[0]
        return out
    return f


def _y_ref(order):
    """Neumann's series: Y0 = 2/pi ((log(x/2) + gamma) J0 - 2 sum (-1)^k J_2k / k),
    Y1 = 2/pi (-J0 / x + (log(x/2) + gamma) J1 + sum (-1)^k (J_2k-1 - J_2k+1) / k)."""
    def f(x):
        out = np.where(x == 0, -np.inf, np.nan)
        ok = np.isfinite(x) & (x > 0)
        v = x[ok]
        if v.size:
            kmax = int(np.max(v) / 2 + 30)
            j = _jn(np.arange(2 * kmax + 2), v)
            k = np.arange(1, kmax + 1)[:, None]
            sg = np.where(k % 2, -1.0, 1.0)
            lg = np.log(v / 2) + _EULER
            if order == 0:
                r = lg * j[0] - 2.0 * np.sum(sg * j[2:2 * kmax + 1:2] / k, axis=0)
            else:
                r = -j[0] / v + lg * j[1] + np.sum(sg * (j[1:2 * kmax:2] - j[3:2 * kmax + 2:2]) / k, axis=0)
            out[ok] = 2.0 / math.pi * r
        return out
    return f


def _kscaled(nu, x):
    """e^x K_nu(x), x > 0 finite: int_0^T exp(-2 x sinh^2(t/2)) cosh(nu t) dt, step 1/50."""
    top = 2.0 * np.arcsinh(np.sqrt(30.0 / x))
    m = int(np.ceil(np.max(top, initial=1.0) * 50.0))
    s = np.linspace(0.0, 1.0, m + 1)
    t = top[:, None] * s[None, :]
    f = np.exp(-2.0 * x[:, None] * np.sinh(0.5 * t) ** 2) * np.cosh(nu * t)
    return (f.sum(axis=1) - 0.5 * f[:, 0] - 0.5 * f[:, -1]) * top / m


def _k_ref(order, scaled):
    def f(x):
        out = np.where(x == 0, np.inf, np.where(x == np.inf, 0.0, np.nan))
        ok = np.isfinite(x) & (x > 0)
        v = x[ok]
        if v.size:
            r = _kscaled(float(order), v)
            out[ok] = r if scaled else r * np.exp(-v)
        return out
    return f


def _sj0_ref(x):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 1.0, np.where(np.isinf(x), 0.0, np.sin(x) / x))


@cache
def _gauss(n: int):
    return np.polynomial.legendre.leggauss(n)


_AI0, _AIP0 = 0.3550280538878172, -0.2588194037928068   # Ai(0), Ai'(0)


def _airy_ref(x):
    out = np.full(x.shape, np.nan)
    ok = np.isfinite(x)
    mid = ok & (np.abs(x) <= 1.0)
    v = x[mid]
    f, g, tf, tg = np.ones_like(v), v.copy(), np.ones_like(v), v.copy()
    for k in range(1, 30):   # Maclaurin: Ai = Ai(0) f + Ai'(0) g
        tf = tf * v ** 3 / ((3 * k - 1) * (3 * k))
        tg = tg * v ** 3 / ((3 * k) * (3 * k + 1))
        f, g = f + tf, g + tg
    out[mid] = _AI0 * f + _AIP0 * g
    hi = ok & (x > 1.0)
    v = x[hi]
    zeta = 2.0 / 3.0 * v ** 1.5
    with np.errstate(all="ignore"):
        out[hi] = np.sqrt(v / 3.0) / math.pi * np.exp(-zeta) * _kscaled(1.0 / 3.0, zeta)
    lo = ok & (x < -1.0)
    z = -x[lo]
    zeta = 2.0 / 3.0 * z ** 1.5
    # Ai(-z) = 2 sqrt(z) / (3 pi) (int_0^pi cos(t/3) cos(zeta sin t) dt
    #                              + sqrt(3)/2 int_0^inf exp(-zeta sinh t) sinh(t/3) dt)
    u, w = _gauss(100 * int(3 + np.max(zeta, initial=0.0) / 60))   # (x = -50: 700 nodes)
    t = 0.5 * math.pi * (u + 1.0)
    i1 = (np.cos(t / 3.0)[None, :] * np.cos(zeta[:, None] * np.sin(t)[None, :])) @ w * (0.5 * math.pi)
    top = np.arcsinh(45.0 / zeta)
    u, w = _gauss(120)
    t = 0.5 * top[:, None] * (u[None, :] + 1.0)
    i2 = (np.exp(-zeta[:, None] * np.sinh(t)) * np.sinh(t / 3.0)) @ w * (0.5 * top)
    out[lo] = 2.0 * np.sqrt(z) / (3.0 * math.pi) * (i1 + 0.5 * math.sqrt(3.0) * i2)
    return out


# ---------------------------------------------------------------- polynomial references

_MAX_STEPS = 2 ** 16   # the kernels' bound on a recurrence: NaN past it


def _degree(n):
    """PyTorch's int64 cast of n; -1 (a 0 result) for NaN, negative or out-of-range n."""
    t = np.trunc(n)
    return np.where((t >= 0) & (t < 2.0 ** 63), t, -1.0)


def _recur(x, n, q, kind):
    """q_n by the three-term recurrence from q_0 = 1, q_1 = q (where n >= 2)."""
    p = np.ones_like(x)
    top = int(np.max(np.where(n > _MAX_STEPS, 0.0, n), initial=0.0))
    for k in range(2, top + 1):
        if kind == "cheb":
            r = (x + x) * q - p
        elif kind == "h":
            r = (x + x) * q - (2.0 * k - 2.0) * p
        elif kind == "he":
            r = x * q - (k - 1.0) * p
        elif kind == "l":
            r = ((2.0 * k - 1.0 - x) * q - (k - 1.0) * p) / k
        else:
            r = ((2.0 * k - 1.0) * x * q - (k - 1.0) * p) / k
        live = n >= k
        p, q = np.where(live, q, p), np.where(live, r, q)
    return np.where(n > _MAX_STEPS, np.nan, q)


def _cheb_ref(kind, shifted=False):
    def f(x, n):
        if shifted:
            x = x + x - 1.0
        n = _degree(n)
        odd = n % 2 == 1
        q1 = {"t": x, "u": x + x, "v": x + x - 1.0, "w": x + x + 1.0}[kind]
        r = np.where(n == 0, 1.0, np.where(n == 1, q1, _recur(x, n, q1, "cheb")))
        th = np.arccos(np.clip(x, -1.0, 1.0))
        trig = {"t": lambda: np.cos(n * th), "u": lambda: np.sin((n + 1) * th) / np.sin(th),
                "v": lambda: np.cos((n + 0.5) * th) / np.cos(0.5 * th),
                "w": lambda: np.sin((n + 0.5) * th) / np.sin(0.5 * th)}[kind]()
        r = np.where((np.abs(x) < 1) & (n > (6 if kind == "t" else 8)), trig, r)
        pos = {"t": 1.0, "u": n + 1.0, "v": 1.0, "w": 2 * n + 1.0}[kind]
        neg = {"t": 1.0, "u": n + 1.0, "v": 2 * n + 1.0, "w": 1.0}[kind] * np.where(odd, -1.0, 1.0)
        r = np.where(x == 1, pos, np.where(x == -1, neg, r))
        return np.where(n < 0, 0.0, r)
    return f


def _poly_ref(kind):
    def f(x, n):
        n = _degree(n)
        q1 = {"h": x + x, "he": x, "l": 1.0 - x, "p": x}[kind]
        r = np.where(n == 0, 1.0, np.where(n == 1, q1, _recur(x, n, q1, kind)))
        if kind == "l":
            r = np.where(x == 0, 1.0, r)
        if kind == "p":
            r = np.where(np.abs(x) == 1, np.where((x > 0) | (n % 2 == 0), 1.0, -1.0), r)
        return np.where(n < 0, 0.0, r)
    return f


# ---------------------------------------------------------------- derivatives

def _j1_d(x, y):   # J0 - J1 / x, 1/2 at 0
    return T.where(x == 0, 0.5, T.bessel_j0(x) - y / one_at_zero(x))


def _sj0_d(x, y):
    """(x cos x - sin x) / x^2 = (cos x - j0(x)) / x; its Taylor series below |x| = 1/4, where
    that difference cancels."""
    small = T.abs(x) < 0.25
    xs = T.where(small, x, 0.0)
    xl = T.where(small, 1.0, x)
    x2 = xs * xs
    series = xs * (-1.0 / 3 + x2 * (1.0 / 30 + x2 * (-1.0 / 840 + x2 * (1.0 / 45360 - x2 / 3991680))))
    return T.where(small, series, (T.cos(xl) - T.spherical_bessel_j0(xl)) / xl)


def _u(name):
    return {"f": f"SX_BS({name}, a)"}


def _b(name):
    return {"f": f"SX_BS2({name}, a, b)"}


UNARY = [
    Op("bessel_j0", 1, "f", _u("bessel_j0"), _in_float64(_j_ref(0)),
       grad=d1(lambda x, y: -T.bessel_j1(x), X)),
    Op("bessel_j1", 1, "f", _u("bessel_j1"), _in_float64(_j_ref(1)), grad=d1(_j1_d, X, OUT)),
    Op("bessel_y0", 1, "f", _u("bessel_y0"), _in_float64(_y_ref(0)), domain="positive",
       grad=d1(lambda x, y: -T.bessel_y1(x), X)),
    Op("bessel_y1", 1, "f", _u("bessel_y1"), _in_float64(_y_ref(1)), domain="positive",
       grad=d1(lambda x, y: T.bessel_y0(x) - y / x, X, OUT)),
    Op("modified_bessel_k0", 1, "f", _u("bessel_k0"), _in_float64(_k_ref(0, False)), domain="positive",
       grad=d1(lambda x, y: -T.modified_bessel_k1(x), X)),
    Op("modified_bessel_k1", 1, "f", _u("bessel_k1"), _in_float64(_k_ref(1, False)), domain="positive",
       grad=d1(lambda x, y: -T.modified_bessel_k0(x) - y / x, X, OUT)),
    # (K e^x)' = (K' + K) e^x
    Op("scaled_modified_bessel_k0", 1, "f", _u("bessel_k0e"), _in_float64(_k_ref(0, True)),
       domain="positive", grad=d1(lambda x, y: y - T.scaled_modified_bessel_k1(x), X, OUT)),
    Op("scaled_modified_bessel_k1", 1, "f", _u("bessel_k1e"), _in_float64(_k_ref(1, True)),
       domain="positive",
       grad=d1(lambda x, y: y - T.scaled_modified_bessel_k0(x) - y / x, X, OUT)),
    Op("spherical_bessel_j0", 1, "f", _u("spherical_j0"), _in_float64(_sj0_ref), grad=d1(_sj0_d, X)),
    # (the table's tests keep x in [-8, 8], where the reference has all its digits; far out,
    # its quadrature's nodes carry zeta * 1e-16 of phase: tests/test_special_bessel.py goes there)
    Op("airy_ai", 1, "f", _u("airy_ai"), _in_float64(_airy_ref), domain="exp", grad=NO_RULE),
]

BINARY = [
    Op(f"{pre}chebyshev_polynomial_{k}", 2, "f", _b(f"{pre}chebyshev_{k}"),
       _binary_ref(_cheb_ref(k, bool(pre))), grad=NO_RULE)
    for pre in ("", "shifted_") for k in "tuvw"
] + [
    Op("hermite_polynomial_h", 2, "f", _b("hermite_h"), _binary_ref(_poly_ref("h")), grad=NO_RULE),
    Op("hermite_polynomial_he", 2, "f", _b("hermite_he"), _binary_ref(_poly_ref("he")), grad=NO_RULE),
    Op("laguerre_polynomial_l", 2, "f", _b("laguerre_l"), _binary_ref(_poly_ref("l")), grad=NO_RULE),
    Op("legendre_polynomial_p", 2, "f", _b("legendre_p"), _binary_ref(_poly_ref("p")), grad=NO_RULE),
]
