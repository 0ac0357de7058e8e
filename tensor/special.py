"""tensor.special: torch.special's names. Most are the library's own functions under their
PyTorch spellings (expit is sigmoid, gammaln lgamma, psi digamma, gammainc igamma...); new here:
erfcx, ndtr, log_ndtr, ndtri, xlog1py and entr, in tensor ops (differentiable, either device;
float32 and 16-bit inputs are evaluated in float64 where a formula needs the range, and rounded
back once).

The Bessel functions bessel_j0 / j1 / y0 / y1, modified_bessel_i0 / i1 / k0 / k1,
scaled_modified_bessel_k0 / k1 (e^x K), spherical_bessel_j0, airy_ai and the orthogonal
polynomials chebyshev_polynomial_t / u / v / w, shifted_chebyshev_polynomial_t / u / v / w,
hermite_polynomial_h / he, laguerre_polynomial_l and legendre_polynomial_p(x, n) are op-table
kernels (tensor/optable_special.py, cuda_src/scalar/bessel.h), also published as tensor.<name>
with NumPy's dtype rules; here they follow PyTorch's: integer inputs compute in the default
float dtype, and a polynomial's n takes x's float dtype (x float32, n int64: float32). Values
follow PyTorch's at the edges too: J and Y give NaN at +-inf, Y and K NaN below 0 (-inf, inf at
+-0), airy_ai NaN at +-inf; a polynomial's n is truncated to an integer (n = 2.7 is 2) and a
negative or NaN n gives 0. The Bessel functions differentiate (J0' = -J1, ...); airy_ai and the
polynomials do not (as PyTorch's). A polynomial costs O(n) where its recurrence runs (|x| >= 1
for Chebyshev's, always for the others); past n = 2^16 that gives NaN instead (PyTorch's loop
has no bound: n = 1e15 hangs it).

>>> import tensor as T
>>> print(f"{T.special.ndtr(T.tensor(1.0)).item():.12f}")
0.841344746069
>>> print(f"{T.special.ndtri(T.tensor(0.975)).item():.9f}")
1.959963985
>>> print(f"{T.special.bessel_j0(T.tensor(1.0, dtype=T.float64)).item():.12f}")
0.765197686558
>>> T.special.chebyshev_polynomial_t(T.tensor([0.5, 2.0]), 3).tolist()
[-1.0, 26.0]
"""
from __future__ import annotations

import math

from . import dtypes as dt
from ._tensor import Tensor
from .convert import asarray
from .optable import T as P  # tensor's public (recorded) functions

__all__ = ["expit", "logit", "gammaln", "digamma", "psi", "polygamma", "multigammaln",
           "gammainc", "gammaincc", "zeta", "erf", "erfc", "erfinv", "erfcx", "ndtr", "log_ndtr",
           "ndtri", "xlogy", "xlog1py", "entr", "sinc", "round", "exp2", "expm1", "log1p",
           "logsumexp", "softmax", "log_softmax", "i0", "i0e", "i1", "i1e",
           "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
           "airy_ai", "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
           "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _float_in(x, op: str) -> tuple[Tensor, object]:
    """x as float64 (integers and bools promoted as PyTorch's special functions do, to the
    default float dtype) and the dtype to round the result back to."""
    x = x if isinstance(x, Tensor) else asarray(x)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"special.{op}: expects a real tensor, got {x.dtype.name}")
    out = x.dtype if x.dtype.kind == "f" else dt.get_default_dtype()
    return (x if x.dtype is dt.float64 else P.astype(x, dt.float64)), out


def _back(r: Tensor, dtype) -> Tensor:
    return r if r.dtype is dtype else P.astype(r, dtype)


def erfcx(input) -> Tensor:
    """exp(x^2) erfc(x), without the overflow and underflow of that product: the product
    where x < 5, a continued fraction (Laplace's) of erfc beyond (60 levels: 1e-16 there)."""
    x, out = _float_in(input, "erfcx")
    near = x < 5.0
    xs = P.where(near, x, 0.0)             # each branch sees only its own (safe) values
    xl = P.where(near, 5.0, x)
    t = xl
    for k in range(60, 0, -1):
        t = xl + (0.5 * k) / t
    far = 1.0 / (math.sqrt(math.pi) * t)
    return _back(P.where(near, P.exp(xs * xs) * P.erfc(xs), far), out)


def ndtr(input) -> Tensor:
    """The standard normal CDF, 0.5 erfc(-x / sqrt 2) (full relative accuracy in the lower
    tail)."""
    x, out = _float_in(input, "ndtr")
    return _back(0.5 * P.erfc(-x / _SQRT2), out)


def _log_ndtr64(x: Tensor) -> Tensor:
    low, high = x < -5.0, x > 0.0
    xl = P.where(low, x, -5.0)
    xh = P.where(high, x, 0.0)
    xm = P.where(low | high, 0.0, x)
    tail = math.log(0.5) + P.log(erfcx(-xl / _SQRT2)) - 0.5 * xl * xl
    upper = P.log1p(-0.5 * P.erfc(xh / _SQRT2))
    mid = P.log(0.5 * P.erfc(-xm / _SQRT2))
    return P.where(low, tail, P.where(high, upper, mid))


def log_ndtr(input) -> Tensor:
    """log of the standard normal CDF, finite far into the lower tail (log_ndtr(-40) = -804.6)
    and accurate near 0 from above (log1p of the upper tail)."""
    x, out = _float_in(input, "log_ndtr")
    return _back(_log_ndtr64(x), out)


def ndtri(input) -> Tensor:
    """The inverse of ndtr (the standard normal quantile): an erfinv start (an asymptotic one in
    the far tail), then Newton steps on log_ndtr(z) = log p, so p = 1e-300 keeps its digits.
    -inf at 0, inf at 1, NaN outside [0, 1]."""
    p, out = _float_in(input, "ndtri")
    q = P.where(p < 0.5, p, 1.0 - p)                 # the lower tail, q in [0, 0.5]
    ok = q > 0.0
    qs = P.where(ok, q, 0.25)
    lq = P.log(qs)
    far = qs < 1e-3
    a = -2.0 * P.where(far, lq, -10.0)
    z = P.where(far, -P.sqrt(a - P.log(a) - math.log(2.0 * math.pi)),
                _SQRT2 * P.erfinv(2.0 * P.where(far, 0.25, qs) - 1.0))
    for _ in range(4):
        ln = _log_ndtr64(z)                          # d/dz log ndtr = pdf / cdf
        z = z - (ln - lq) * P.exp(ln + 0.5 * z * z + _LOG_SQRT_2PI)
    z = P.where(ok, z, -math.inf)
    z = P.where(p < 0.5, z, 0.0 - z)   # 0.0 - z: ndtri(0.5) is +0
    return _back(P.where((p >= 0.0) & (p <= 1.0), z, math.nan), out)


def xlog1py(input, other) -> Tensor:
    """x * log1p(y), 0 where x == 0 unless y is NaN (as xlogy). Its derivative in x is
    log1p(y) at x == 0 too (PyTorch's): only a y whose log1p is not finite is set aside there."""
    x = input if isinstance(input, Tensor) else asarray(input)
    y = other if isinstance(other, Tensor) else asarray(other, device=x.device)
    odd = (x == 0) & ~P.isnan(y) & ~((y > -1.0) & (y < math.inf))
    return x * P.log1p(P.where(odd, 0.0, y)) + 0.0   # (+ 0.0: 0 * log1p(-0.5) is -0)


def entr(input) -> Tensor:
    """-x log x elementwise: 0 at 0, -inf below 0, NaN for NaN."""
    x = input if isinstance(input, Tensor) else asarray(input)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"special.entr: expects a real tensor, got {x.dtype.name}")
    if x.dtype.kind != "f":
        x = P.astype(x, dt.get_default_dtype())
    pos = x > 0
    xp = P.where(pos, x, 1.0)
    return P.where(pos, -xp * P.log(xp), P.where(x == 0, 0.0, P.where(x < 0, -math.inf, x)))


def multigammaln(input, p: int) -> Tensor:
    return P.mvlgamma(input, p)


def gammainc(input, other) -> Tensor:
    """The regularized lower incomplete gamma P(a, x) (PyTorch's igamma)."""
    return P.igamma(input, other)


def gammaincc(input, other) -> Tensor:
    """The regularized upper incomplete gamma Q(a, x) (PyTorch's igammac)."""
    return P.igammac(input, other)


def logsumexp(input, dim, keepdim: bool = False) -> Tensor:
    return P.logsumexp(input, dim, keepdim)


def round(input, decimals: int = 0) -> Tensor:
    return P.round(input, decimals)


def _alias(name: str, target: str):
    def f(*args, **kwargs):
        return getattr(P, target)(*args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.special.{name}: tensor.{target}."
    return f


expit, logit, gammaln = _alias("expit", "sigmoid"), _alias("logit", "logit"), _alias("gammaln", "lgamma")
digamma, psi, polygamma = _alias("digamma", "digamma"), _alias("psi", "digamma"), _alias("polygamma",
                                                                                        "polygamma")
zeta, erf, erfc, erfinv = (_alias(n, n) for n in ("zeta", "erf", "erfc", "erfinv"))
xlogy, sinc, exp2, expm1, log1p = (_alias(n, n) for n in ("xlogy", "sinc", "exp2", "expm1", "log1p"))
softmax, log_softmax = _alias("softmax", "softmax"), _alias("log_softmax", "log_softmax")
i0, i0e, i1, i1e = (_alias(n, n) for n in ("i0", "i0e", "i1", "i1e"))


def _real_float(x, op: str) -> Tensor:
    """x as a float tensor: integers and bools in the default float dtype (PyTorch's)."""
    x = x if isinstance(x, Tensor) else asarray(x)
    if x.dtype.kind not in "biuf":
        raise TypeError(f"special.{op}: expects a real tensor, got {x.dtype.name}")
    return x if x.dtype.kind == "f" else P.astype(x, dt.get_default_dtype())


def _unary(name: str, target: str):
    def f(input) -> Tensor:
        return getattr(P, target)(_real_float(input, name))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"torch.special.{name}: tensor.{target}, integer inputs in the default float "
                 "dtype (PyTorch's).")
    return f


def _poly_dtype(x, n, op: str):
    """PyTorch's result dtype of a polynomial (x, n): a float operand's dtype (the wider of two
    float tensors'), else the default float dtype."""
    ds = []
    for v in (x, n):
        if isinstance(v, Tensor):
            if v.dtype.kind not in "biuf":
                raise TypeError(f"special.{op}: expects real tensors, got {v.dtype.name}")
            if v.dtype.kind == "f":
                ds.append(v.dtype)
        elif not isinstance(v, (bool, int, float)):
            raise TypeError(f"special.{op}: expects tensors or real numbers, got {type(v).__name__}")
    if len(ds) == 2:
        return dt.result_type(*ds)
    return ds[0] if ds else dt.get_default_dtype()


def _poly(name: str):
    def f(input, n) -> Tensor:
        d = _poly_dtype(input, n, name)
        dev = next((v.device for v in (input, n) if isinstance(v, Tensor)), None)
        x, m = (P.astype(v, d) if isinstance(v, Tensor) and v.dtype is not d else v for v in (input, n))
        if not isinstance(x, Tensor):
            x = asarray(x, dtype=d, device=dev)
        return getattr(P, name)(x, m)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"torch.special.{name}(input, n): tensor.{name} with PyTorch's dtype rule (n, a "
                 "tensor or a number, in x's float dtype; integers in the default float dtype).")
    return f


bessel_j0, bessel_j1, bessel_y0, bessel_y1, spherical_bessel_j0, airy_ai = (
    _unary(n, n) for n in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0",
                           "airy_ai"))
modified_bessel_i0 = _unary("modified_bessel_i0", "i0")
modified_bessel_i1 = _unary("modified_bessel_i1", "i1")
modified_bessel_k0, modified_bessel_k1, scaled_modified_bessel_k0, scaled_modified_bessel_k1 = (
    _unary(n, n) for n in ("modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                           "scaled_modified_bessel_k1"))
(chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
 shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
 shifted_chebyshev_polynomial_w) = (_poly(f"{p}chebyshev_polynomial_{k}") for p in ("", "shifted_")
                                    for k in "tuvw")
hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p = (
    _poly(n) for n in ("hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
                       "legendre_polynomial_p"))
