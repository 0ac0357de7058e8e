"""NumPy's polynomial functions over 1-d coefficient tensors, highest power first: polyval,
polyadd, polysub, polymul, polydiv, polyder, polyint, polyfit, roots and poly.

Compositions of the public (recorded) ops (convolve, lstsq, eigvals...), so they are
differentiable where their steps are; the lengths of the results (leading zeros dropped by
polydiv, roots' stripped zeros) are decided on the host.

>>> import tensor as T
>>> T.polyval(T.tensor([1.0, 0.0, -2.0]), T.tensor([0.0, 2.0])).tolist()
[-2.0, 2.0]
>>> [t.tolist() for t in T.polydiv(T.tensor([1.0, 2.0, 3.0]), T.tensor([1.0, 1.0]))]
[[1.0, 1.0], [2.0]]
"""
from __future__ import annotations

import operator

from . import dtypes as dt
from ._tensor import Tensor
from .convert import asarray
from .creation import arange, eye, zeros
from .linalg import _funcs as LA  # not the package, whose __getattr__ reaches public.py
from .numpy_extra2 import arrs, cast, host, is_scalar, pub
from .optable import T as P  # tensor's public (recorded) functions
from .sorting import tensor_arg


def _coeffs(p, op: str, dev=None) -> Tensor:
    t = tensor_arg(p, op, dev)
    if t.ndim == 0:
        t = P.reshape(t, (1,))
    if t.ndim != 1:
        raise ValueError(f"{op}: expects 1-d coefficients (highest power first), got shape {t.shape}")
    return t


@pub()
def polyval(p, x) -> Tensor:
    """The polynomial with coefficients p (highest power first) at x, by Horner's scheme."""
    p = _coeffs(p, "polyval", x.device if isinstance(x, Tensor) else None)
    x = tensor_arg(x, "polyval", p.device)
    arrs("polyval", p, x)
    y = P.multiply(x, 0)
    for i in range(p.shape[0]):
        y = P.add(P.multiply(y, x), P.getitem(p, i))
    return y


def _aligned(a1, a2, op: str):
    a1, a2 = arrs(op, a1, a2)
    a1, a2 = _coeffs(a1, op), _coeffs(a2, op)
    d = a1.shape[0] - a2.shape[0]
    if d > 0:
        a2 = P.pad(a2, [(d, 0)])
    elif d < 0:
        a1 = P.pad(a1, [(-d, 0)])
    return a1, a2


@pub()
def polyadd(a1, a2) -> Tensor:
    """The sum of two polynomials (the shorter padded with leading zeros)."""
    return P.add(*_aligned(a1, a2, "polyadd"))


@pub()
def polysub(a1, a2) -> Tensor:
    """The difference a1 - a2 of two polynomials."""
    return P.subtract(*_aligned(a1, a2, "polysub"))


@pub()
def polymul(a1, a2) -> Tensor:
    """The product of two polynomials (the convolution of their coefficients)."""
    a1, a2 = arrs("polymul", a1, a2)
    return P.convolve(_coeffs(a1, "polymul"), _coeffs(a2, "polymul"))


def _order(m, op: str) -> int:
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"{op}: order of derivative or integral must be positive, got {m}")
    return m


@pub()
def polyder(p, m: int = 1) -> Tensor:
    """The m-th derivative of polynomial p (empty once m exceeds the degree, as NumPy's)."""
    p = _coeffs(p, "polyder")
    for _ in range(_order(m, "polyder")):
        n = p.shape[0] - 1
        if n <= 0:
            return P.getitem(p, slice(0, 0))
        w = arange(n, 0, -1, dtype=dt.int64, device=p.device)
        p = P.multiply(P.getitem(p, slice(0, n)), w)
    return p


@pub()
def polyint(p, m: int = 1, k=None) -> Tensor:
    """The m-th antiderivative of polynomial p; k the integration constants (one per
    integration, the first used first; a scalar for all; zeros when None)."""
    p = _coeffs(p, "polyint")
    m = _order(m, "polyint")
    if k is None:
        ks = [0] * m
    elif is_scalar(k) or (isinstance(k, Tensor) and k.ndim == 0):
        ks = [k] * m
    else:
        ks = list(k)
        if len(ks) != m:
            raise ValueError(f"polyint: k must be a scalar or a sequence of m={m} constants, got {len(ks)}")
    fd = dt.float_of(dt.promote_types(p.dtype, dt.int64))   # NumPy divides by an int64 arange
    for c in ks:
        n = p.shape[0]
        div = arange(n, 0, -1, dtype=fd, device=p.device)
        q = P.divide(p, div)
        p = P.concatenate([q, P.reshape(cast(tensor_arg(c, "polyint", p.device), q.dtype), (1,))])
    return p


@pub()
def polydiv(u, v) -> tuple:
    """(quotient, remainder) of polynomial long division u / v; the remainder's leading
    (near-)zeros are dropped, as NumPy's."""
    u, v = arrs("polydiv", u, v)
    u, v = _coeffs(u, "polydiv"), _coeffs(v, "polydiv")
    d = dt.float_of(dt.result_type(u, v))
    u, v = cast(u, d), cast(v, d)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    lead = P.getitem(v, 0)
    if not bool(P.not_equal(lead, 0)):
        raise ZeroDivisionError("polydiv: the divisor's leading coefficient is zero")
    qs, r = [], u
    for k in range(max(m - n + 1, 0)):
        c = P.divide(P.getitem(r, k), lead)
        qs.append(c)
        r = P.subtract(r, P.multiply(c, P.pad(v, [(k, m - n - k)])))
    q = P.stack(qs) if qs else zeros((1,), dtype=d, device=u.device)
    vals = host(P.abs(r))
    i = 0
    while i < len(vals) - 1 and vals[i] <= 1e-8:   # NumPy's allclose(r[0], 0, rtol=1e-14)
        i += 1
    return q, P.getitem(r, slice(i, None))


@pub()
def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov: bool = False):
    """The least-squares polynomial of degree deg through the points (x, y) (y may be 2-d:
    one fit per column), highest power first; full=True also returns (residuals, rank,
    singular values, rcond), as NumPy's. w weights the residuals. cov=True (without full) also
    returns the coefficients' covariance, scaled by residuals / (len(x) - deg - 1), or not scaled
    with cov="unscaled"; shape (deg+1, deg+1), or for a 2-d y (deg+1, deg+1, K) (K = 1 unscaled)."""
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError(f"polyfit: expected deg >= 0, got {deg}")
    x, y = arrs("polyfit", x, y)
    if x.ndim != 1 or x.shape[0] == 0:
        raise TypeError(f"polyfit: expected non-empty 1-d x, got shape {x.shape}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TypeError(f"polyfit: expected y of shape ({x.shape[0]},) or ({x.shape[0]}, K), got {y.shape}")
    d = dt.float_of(dt.result_type(x, y, 0.0))
    x, y = cast(x, d), cast(y, d)
    if rcond is None:
        rcond = x.shape[0] * (2.0 ** -52 if d is dt.float64 else 2.0 ** -23)
    lhs = P.vander(x, deg + 1)
    rhs = y
    if w is not None:
        w = cast(tensor_arg(w, "polyfit", x.device), d)
        if w.shape != x.shape:
            raise TypeError(f"polyfit: expected w of shape {x.shape}, got {w.shape}")
        lhs = P.multiply(lhs, P.expand_dims(w, 1))
        rhs = P.multiply(rhs, w if rhs.ndim == 1 else P.expand_dims(w, 1))
    scale = P.sqrt(P.sum(P.multiply(lhs, lhs), axis=0))
    scale = P.where(P.equal(scale, 0), 1.0, scale)
    sol = LA.lstsq(P.divide(lhs, scale), rhs, rcond=rcond)
    c = P.divide(sol[0], scale if sol[0].ndim == 1 else P.expand_dims(scale, 1))
    if full:
        return c, sol[1], sol[2], sol[3], rcond
    if cov:
        return c, _polyfit_cov(P.divide(lhs, scale), scale, rhs, sol, cov)
    return c


def _polyfit_cov(a: Tensor, scale: Tensor, rhs: Tensor, sol, cov) -> Tensor:
    """polyfit's covariance of the coefficients: inv(a.T a) of the column-scaled design matrix a,
    unscaled by scale, times residuals / (points - coefficients) unless cov == "unscaled"."""
    n, order = a.shape
    base = P.divide(LA.inv(P.matmul(P.matrix_transpose(a), a)), P.outer(scale, scale))
    if isinstance(cov, str) and cov == "unscaled":
        return base if rhs.ndim == 1 else P.expand_dims(base, 2)   # NumPy's (deg+1, deg+1, 1)
    if n <= order:
        raise ValueError(f"polyfit: the number of data points ({n}) must exceed deg + 1 ({order}) "
                         "to scale the covariance matrix; use cov='unscaled'")
    resid = sol[1]
    if resid.numel() == 0:   # rank-deficient: lstsq gives no residuals, compute them
        r = P.subtract(rhs, P.matmul(a, sol[0]))
        resid = P.sum(P.multiply(r, r), axis=0)
    fac = P.divide(resid, n - order)
    if rhs.ndim == 1:
        return P.multiply(base, P.reshape(fac, ()))
    return P.multiply(P.expand_dims(base, 2), fac)


def _nonzero_at(p: Tensor) -> list:
    return [i for i, v in enumerate(host(P.not_equal(p, 0))) if v]


@pub()
def roots(p) -> Tensor:
    """The roots of polynomial p (highest power first): the eigenvalues of its companion matrix,
    with a zero root for each trailing zero coefficient; complex128 / complex64 results, real
    ones when every root is real (NumPy's eigvals rule)."""
    p = _coeffs(p, "roots")
    nz = _nonzero_at(p)
    if not nz:
        return P.getitem(cast(p, dt.float_of(p.dtype)), slice(0, 0))
    trailing = p.shape[0] - nz[-1] - 1
    p = cast(P.getitem(p, slice(nz[0], nz[-1] + 1)), dt.float_of(p.dtype))
    n = p.shape[0]
    if n > 1:
        top = P.reshape(P.negative(P.divide(P.getitem(p, slice(1, None)), P.getitem(p, 0))), (1, n - 1))
        comp = P.concatenate([top, eye(n - 2, n - 1, dtype=p.dtype, device=p.device)])
        r = LA.eigvals(comp)
        if r.dtype.kind == "c" and p.dtype.kind != "c" and not bool(P.any(P.not_equal(P.imag(r), 0))):
            r = P.real(r)
    else:
        r = zeros((0,), dtype=p.dtype, device=p.device)
    if trailing:
        r = P.concatenate([r, zeros((trailing,), dtype=r.dtype, device=r.device)])
    return r


@pub()
def poly(seq_of_zeros) -> Tensor:
    """The coefficients (highest power first, leading 1) of the monic polynomial with the given
    roots; a square matrix gives its characteristic polynomial. Complex roots in conjugate pairs
    give real coefficients."""
    a = tensor_arg(seq_of_zeros, "poly")
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.shape[0] != 0:
        a = LA.eigvals(a)
    elif a.ndim != 1:
        raise ValueError(f"poly: input must be 1-d or a non-empty square 2-d tensor, got shape {a.shape}")
    d = dt.float_of(a.dtype)
    one = asarray(1, dtype=d, device=a.device)
    c = P.reshape(one, (1,))
    for i in range(a.shape[0]):
        c = P.convolve(c, P.stack([one, P.negative(cast(P.getitem(a, i), d))]))
    if d.kind == "c":
        r = host(a)
        if sorted(r, key=lambda z: (z.real, z.imag)) == sorted(
                (z.conjugate() for z in r), key=lambda z: (z.real, z.imag)):
            c = P.real(c)
    return c
