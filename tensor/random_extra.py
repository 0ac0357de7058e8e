"""The rest of NumPy's Generator API on tensor.random.Generator, built from its uniform and
normal fills with tensor ops (so every device draws them): standard_gamma / gamma
(Marsaglia-Tsang, shape < 1 by the U**(1/shape) boost), beta, chisquare, dirichlet,
standard_exponential / exponential, laplace, logistic, lognormal, geometric, poisson and
binomial (sequential inversion for small means, Hormann's transformed rejection PTRS / BTRS for
large), multinomial (counts, by conditional binomials), multivariate_normal (eigh of cov),
choice and shuffle.

Parameters broadcast as NumPy's: size=None gives the broadcast shape of the parameters (a
0-d tensor for scalars). Float results take `dtype` (default: a tensor parameter's float
dtype, else the default dtype); they are drawn in float64 and then cast. Counts are int64.

>>> import tensor as T
>>> g = T.random.default_rng(0)
>>> g.standard_gamma(2.0, size=(3,)).shape
(3,)
"""
from __future__ import annotations

import math
import operator

from . import dtypes as dt
from ._tensor import Tensor
from .convert import asarray
from .creation import _shape
from .device import device as parse_device

_PUBLIC = ("standard_gamma", "gamma", "beta", "chisquare", "dirichlet", "standard_exponential",
           "exponential", "laplace", "logistic", "lognormal", "geometric", "poisson", "binomial",
           "multinomial", "multivariate_normal", "choice", "shuffle")


class _Ops:
    """tensor's public ops (optable.T), then creation and views (imported late: no import circle)."""

    def __getattr__(self, name):
        from . import creation, manipulation, views
        from .optable import T
        for src in (creation, views, manipulation):
            if hasattr(src, name):
                return getattr(src, name)
        return getattr(T, name)


_OPS = _Ops()


def _T():
    return _OPS


def _size(size, op):
    """A shape from size=None (a scalar: ()), an int or a tuple."""
    return () if size is None else _shape(size, op)


def _params(op, names, values, device):
    """The parameters as float64 tensors on one device (a tensor parameter's, else `device`),
    plus that device and the float dtype of the first float tensor parameter (or None)."""
    dev = parse_device(device) if device is not None else None
    like = None
    for v in values:
        if isinstance(v, Tensor):
            if dev is None:
                dev = v.device
            elif v.device != dev:
                raise ValueError(f"{op}: parameters on {v.device} and {dev}: put them on one device")
            if like is None and v.dtype.kind == "f":
                like = v.dtype
    dev = dev if dev is not None else parse_device("cpu")
    out = []
    for name, v in zip(names, values):
        t = asarray(v, dtype=dt.float64, device=dev) if not isinstance(v, Tensor) else v.astype(dt.float64)
        if t.device != dev:
            t = t.to(dev)
        if t.dtype.kind == "c":
            raise TypeError(f"{op}: {name} must be real, got {t.dtype.name}")
        out.append(t)
    return out, dev, like


def _check(op, cond_bad, message):
    """Raise ValueError(op: message) when the boolean tensor cond_bad has a True (NaN counts as bad:
    callers pass `not (x >= 0)` forms)."""
    if cond_bad.numel() and bool(_T().any(cond_bad)):
        raise ValueError(f"{op}: {message}")


def _shape_of(op, size, params):
    T = _T()
    bshape = T.broadcast_shapes(*[tuple(p.shape) for p in params]) if params else ()
    if size is None:
        return tuple(bshape)
    shape = tuple(_size(size, op))
    try:
        if tuple(T.broadcast_shapes(shape, tuple(bshape))) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"{op}: parameters of shape {tuple(bshape)} do not broadcast to size "
                         f"{shape}") from None
    return shape


def _result(x, dtype, like):
    d = dt.dtype(dtype) if dtype is not None else (like or dt.get_default_dtype())
    if d.kind != "f":
        raise TypeError(f"random: dtype must be floating, got {d.name}")
    return x if x.dtype is d else x.astype(d)


def _u(g, shape, dev):
    """float64 uniforms in [0, 1)."""
    return g._fill(shape, dt.float64, "uniform", 0.0, 1.0, dev)


def _n(g, shape, dev):
    return g._fill(shape, dt.float64, "normal", 0.0, 1.0, dev)


def _exp1(g, shape, dev):
    """Standard exponentials: -log(1 - U), finite since U < 1."""
    return -_T().log1p(-_u(g, shape, dev))


def _gamma_ge1(g, a, shape, dev):
    """Marsaglia-Tsang Gamma(a, 1) for a >= 1 (float64 tensor a of `shape`): every round draws a
    candidate for each element and keeps the first accepted one."""
    T = _T()
    d = a - 1.0 / 3.0
    c = 1.0 / T.sqrt(9.0 * d)
    out = T.zeros_like(a)
    done = T.zeros_like(a).astype(dt.bool_)
    for _ in range(200):   # each round rejects < 5% of the draws
        x = _n(g, shape, dev)
        v = 1.0 + c * x
        v3 = v * v * v
        u = _u(g, shape, dev)
        ok = T.logical_and(v > 0, T.log1p(-u) < 0.5 * x * x + d - d * v3 + d * T.log(T.where(v > 0, v3, 1.0)))
        new = T.logical_and(ok, T.logical_not(done))
        out = T.where(new, d * v3, out)
        done = T.logical_or(done, ok)
        if bool(T.all(done)):
            return out
    raise RuntimeError("standard_gamma: the rejection sampler did not converge")


def _log_standard_gamma(g, a, shape, dev):
    """log of Gamma(a, 1) draws (a > 0): exact in the tails that underflow a float64 draw."""
    T = _T()
    small = a < 1.0
    lg = T.log(_gamma_ge1(g, T.where(small, a + 1.0, a), shape, dev))
    # Gamma(a) = Gamma(a + 1) * U**(1/a): log U / a with U in (0, 1]
    boost = T.log1p(-_u(g, shape, dev)) / T.where(small, a, 1.0)
    return T.where(small, lg + boost, lg)


def standard_gamma(self, shape, size=None, dtype=None, out=None, *, device=None) -> Tensor:
    """Gamma(shape, 1) draws (NumPy's Generator.standard_gamma); shape >= 0, shape 0 gives 0."""
    if out is not None:
        raise NotImplementedError("standard_gamma: out= is not supported")
    (k,), dev, like = _params("standard_gamma", ("shape",), (shape,), device)
    _check("standard_gamma", ~(k >= 0), "shape must be non-negative (shape < 0 or NaN)")
    s = _shape_of("standard_gamma", size, [k])
    T = _T()
    k = T.broadcast_to(k, s)
    pos = k > 0
    x = T.exp(_log_standard_gamma(self, T.where(pos, k, 1.0), s, dev))
    return _result(T.where(pos, x, 0.0), dtype, like)


def gamma(self, shape, scale=1.0, size=None, *, dtype=None, device=None) -> Tensor:
    (k, th), dev, like = _params("gamma", ("shape", "scale"), (shape, scale), device)
    _check("gamma", ~(th >= 0), "scale must be non-negative (scale < 0 or NaN)")
    s = _shape_of("gamma", size, [k, th])
    return _result(self.standard_gamma(k, s, dtype=dt.float64, device=dev) * th, dtype, like)


def beta(self, a, b, size=None, *, dtype=None, device=None) -> Tensor:
    """Beta(a, b) as X / (X + Y), X ~ Gamma(a), Y ~ Gamma(b), in log space (tiny a, b stay exact)."""
    (a, b), dev, like = _params("beta", ("a", "b"), (a, b), device)
    _check("beta", ~(a > 0), "a must be positive (a <= 0 or NaN)")
    _check("beta", ~(b > 0), "b must be positive (b <= 0 or NaN)")
    s = _shape_of("beta", size, [a, b])
    T = _T()
    lx = _log_standard_gamma(self, T.broadcast_to(a, s), s, dev)
    ly = _log_standard_gamma(self, T.broadcast_to(b, s), s, dev)
    return _result(T.exp(lx - T.logaddexp(lx, ly)), dtype, like)


def chisquare(self, df, size=None, *, dtype=None, device=None) -> Tensor:
    (df,), dev, like = _params("chisquare", ("df",), (df,), device)
    _check("chisquare", ~(df > 0), "df must be positive (df <= 0 or NaN)")
    s = _shape_of("chisquare", size, [df])
    return _result(2.0 * self.standard_gamma(df / 2.0, s, dtype=dt.float64, device=dev), dtype, like)


def dirichlet(self, alpha, size=None, *, dtype=None, device=None) -> Tensor:
    """Draws on the simplex: normalized Gamma(alpha_i) (in log space); shape size + (k,)."""
    (al,), dev, like = _params("dirichlet", ("alpha",), (alpha,), device)
    if al.ndim != 1:
        raise ValueError(f"dirichlet: alpha must be 1-dimensional, got shape {tuple(al.shape)}")
    _check("dirichlet", ~(al > 0), "alpha must be positive (alpha <= 0 or NaN)")
    s = tuple(_size(size, "dirichlet"))
    T = _T()
    full = s + tuple(al.shape)
    lg = _log_standard_gamma(self, T.broadcast_to(al, full), full, dev)
    return _result(T.exp(lg - T.logsumexp(lg, axis=-1, keepdims=True)), dtype, like)


def standard_exponential(self, size=None, dtype=None, method="inv", out=None, *, device=None) -> Tensor:
    if out is not None:
        raise NotImplementedError("standard_exponential: out= is not supported")
    if method not in ("inv", "zig"):
        raise ValueError(f"standard_exponential: method must be 'inv' or 'zig', got {method!r}")
    s = tuple(_size(size, "standard_exponential"))
    return _result(_exp1(self, s, parse_device(device or "cpu")), dtype, None)


def exponential(self, scale=1.0, size=None, *, dtype=None, device=None) -> Tensor:
    (sc,), dev, like = _params("exponential", ("scale",), (scale,), device)
    _check("exponential", ~(sc >= 0), "scale must be non-negative (scale < 0 or NaN)")
    s = _shape_of("exponential", size, [sc])
    return _result(_exp1(self, s, dev) * sc, dtype, like)


def laplace(self, loc=0.0, scale=1.0, size=None, *, dtype=None, device=None) -> Tensor:
    """loc + scale * (E1 - E2): the difference of two exponentials is Laplace(0, 1)."""
    (lo, sc), dev, like = _params("laplace", ("loc", "scale"), (loc, scale), device)
    _check("laplace", ~(sc >= 0), "scale must be non-negative (scale < 0 or NaN)")
    s = _shape_of("laplace", size, [lo, sc])
    return _result(lo + sc * (_exp1(self, s, dev) - _exp1(self, s, dev)), dtype, like)


def logistic(self, loc=0.0, scale=1.0, size=None, *, dtype=None, device=None) -> Tensor:
    """loc + scale * log(U / (1 - U)), U uniform in (0, 1)."""
    (lo, sc), dev, like = _params("logistic", ("loc", "scale"), (loc, scale), device)
    _check("logistic", ~(sc >= 0), "scale must be non-negative (scale < 0 or NaN)")
    s = _shape_of("logistic", size, [lo, sc])
    T = _T()
    u = _u(self, s, dev)
    u = T.where(u > 0, u, 0.5)   # U = 0 (probability 2**-53) would give -inf
    return _result(lo + sc * (T.log(u) - T.log1p(-u)), dtype, like)


def lognormal(self, mean=0.0, sigma=1.0, size=None, *, dtype=None, device=None) -> Tensor:
    (mu, sg), dev, like = _params("lognormal", ("mean", "sigma"), (mean, sigma), device)
    _check("lognormal", ~(sg >= 0), "sigma must be non-negative (sigma < 0 or NaN)")
    s = _shape_of("lognormal", size, [mu, sg])
    return _result(_T().exp(mu + sg * _n(self, s, dev)), dtype, like)


def geometric(self, p, size=None, *, device=None) -> Tensor:
    """Trials up to the first success (1, 2, ...): 1 + floor(log(V) / log(1 - p)), V in (0, 1]."""
    (p,), dev, _ = _params("geometric", ("p",), (p,), device)
    _check("geometric", ~_T().logical_and(p > 0, p <= 1), "p must be in (0, 1]")
    s = _shape_of("geometric", size, [p])
    T = _T()
    v = 1.0 - _u(self, s, dev)
    k = T.floor(T.log(v) / T.log1p(-p)) + 1.0
    return T.minimum(k, 9.2e18).astype(dt.int64)


def _inversion(g, first, ratio, top, shape, dev):
    """Counts by sequential inversion: pmf(0) = first, pmf(k + 1) = pmf(k) * ratio(k), stopping
    at `top` (a tensor bound, or None). For small means only (the loop runs to the largest draw)."""
    T = _T()
    u = _u(g, shape, dev)
    k = T.zeros_like(u)
    pmf = first
    cdf = first
    for _ in range(10000):
        more = u >= cdf
        if top is not None:
            more = T.logical_and(more, k < top)
        if not bool(T.any(more)):
            return k
        pmf = pmf * ratio(k)
        k = T.where(more, k + 1.0, k)
        cdf = T.where(more, cdf + pmf, cdf)
    return k


def _ptrs(g, lam, shape, dev):
    """Hormann's transformed rejection with squeeze (PTRS) for Poisson(lam), lam >= 10."""
    T = _T()
    slam = T.sqrt(lam)
    loglam = T.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    out = T.zeros_like(lam)
    done = T.zeros_like(lam).astype(dt.bool_)
    for _ in range(400):
        u = _u(g, shape, dev) - 0.5
        v = _u(g, shape, dev)
        us = 0.5 - T.abs(u)
        k = T.floor((2.0 * a / us + b) * u + lam + 0.43)
        quick = T.logical_and(us >= 0.07, v <= vr)
        bad = T.logical_or(k < 0, T.logical_and(us < 0.013, v > us))
        lhs = T.log(v) + T.log(inv_alpha) - T.log(a / (us * us) + b)
        rhs = -lam + k * loglam - T.lgamma(T.maximum(k, 0.0) + 1.0)
        ok = T.logical_or(quick, T.logical_and(T.logical_not(bad), lhs <= rhs))
        out = T.where(T.logical_and(ok, T.logical_not(done)), k, out)
        done = T.logical_or(done, ok)
        if bool(T.all(done)):
            return out
    raise RuntimeError("poisson: the rejection sampler did not converge")


def poisson(self, lam=1.0, size=None, *, device=None) -> Tensor:
    (lam,), dev, _ = _params("poisson", ("lam",), (lam,), device)
    _check("poisson", ~(lam >= 0), "lam must be non-negative (lam < 0 or NaN)")
    _check("poisson", lam > 1e17, "lam value too large (above 1e17)")
    s = _shape_of("poisson", size, [lam])
    T = _T()
    lam = T.broadcast_to(lam, s)
    big = lam >= 10.0
    small = _inversion(self, T.exp(-T.where(big, 0.0, lam)), lambda k: T.where(big, 0.0, lam) / (k + 1.0),
                       None, s, dev)
    if bool(T.any(big)):
        small = T.where(big, _ptrs(self, T.where(big, lam, 10.0), s, dev), small)
    return small.astype(dt.int64)


def _btrs(g, n, p, shape, dev):
    """Hormann's BTRS for Binomial(n, p), p <= 1/2 and n p >= 10."""
    T = _T()
    q = 1.0 - p
    spq = T.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    alpha = (2.83 + 5.1 / b) * spq
    vr = 0.92 - 4.2 / b
    m = T.floor((n + 1.0) * p)
    h = lambda x: T.lgamma(x + 1.0)  # noqa: E731
    out = T.zeros_like(p)
    done = T.zeros_like(p).astype(dt.bool_)
    for _ in range(400):
        u = _u(g, shape, dev) - 0.5
        v = _u(g, shape, dev)
        us = 0.5 - T.abs(u)
        k = T.floor((2.0 * a / us + b) * u + c)
        inside = T.logical_and(k >= 0, k <= n)
        quick = T.logical_and(us >= 0.07, v <= vr)
        kc = T.clip(k, T.zeros_like(n), n)
        lhs = T.log(v * alpha / (a / (us * us) + b))
        rhs = h(m) + h(n - m) - h(kc) - h(n - kc) + (kc - m) * T.log(p / q)
        ok = T.logical_and(inside, T.logical_or(quick, lhs <= rhs))
        out = T.where(T.logical_and(ok, T.logical_not(done)), k, out)
        done = T.logical_or(done, ok)
        if bool(T.all(done)):
            return out
    raise RuntimeError("binomial: the rejection sampler did not converge")


def _binomial64(g, n, p, shape, dev):
    """float64 Binomial(n, p) counts for float64 tensors n (integral, >= 0), p in [0, 1] of `shape`."""
    T = _T()
    flip = p > 0.5
    pp = T.where(flip, 1.0 - p, p)
    big = n * pp >= 10.0
    ps = T.where(big, 0.0, pp)
    qs = 1.0 - ps
    first = T.exp(n * T.log1p(-ps))
    ratio = lambda k: (n - k) / (k + 1.0) * ps / qs  # noqa: E731
    k = _inversion(g, first, ratio, n, shape, dev)
    if bool(T.any(big)):
        k = T.where(big, _btrs(g, T.where(big, n, 20.0), T.where(big, pp, 0.5), shape, dev), k)
    return T.where(flip, n - k, k)


def binomial(self, n, p, size=None, *, device=None) -> Tensor:
    (nn, p), dev, _ = _params("binomial", ("n", "p"), (n, p), device)
    T = _T()
    _check("binomial", ~(nn >= 0), "n must be non-negative (n < 0)")
    _check("binomial", nn != T.floor(nn), "n must be an integer")
    _check("binomial", ~T.logical_and(p >= 0, p <= 1), "p must be in [0, 1] (p < 0, p > 1 or NaN)")
    s = _shape_of("binomial", size, [nn, p])
    return _binomial64(self, T.broadcast_to(nn, s), T.broadcast_to(p, s), s, dev).astype(dt.int64)


def multinomial(self, n, pvals, size=None, *, device=None) -> Tensor:
    """Counts over k = len(pvals) outcomes of n trials (NumPy's form): shape size + (k,), drawn as
    conditional binomials; pvals must be non-negative with sum(pvals[:-1]) <= 1 (the last takes
    the rest)."""
    (nn, pv), dev, _ = _params("multinomial", ("n", "pvals"), (n, pvals), device)
    T = _T()
    if pv.ndim != 1 or pv.shape[0] == 0:
        raise ValueError(f"multinomial: pvals must be a non-empty 1-d sequence, got shape {tuple(pv.shape)}")
    _check("multinomial", ~(pv >= 0), "pvals must be non-negative (pvals < 0 or NaN)")
    _check("multinomial", ~(pv <= 1), "pvals must be <= 1")
    _check("multinomial", T.sum(pv[:-1]) > 1.0 + 1e-12, "sum(pvals[:-1]) > 1.0")
    _check("multinomial", ~(nn >= 0), "n must be non-negative")
    _check("multinomial", nn != T.floor(nn), "n must be an integer")
    s = _shape_of("multinomial", size, [nn])
    left = T.broadcast_to(nn, s)
    rest = T.ones_like(left)
    cols = []
    k = pv.shape[0]
    for i in range(k - 1):
        pi = T.clip(pv[i] / T.where(rest > 0, rest, 1.0), 0.0, 1.0) * T.ones_like(left)
        pi = T.where(rest > 0, pi, 0.0)
        c = _binomial64(self, left, pi, s, dev)
        cols.append(c)
        left = left - c
        rest = rest - pv[i]
    cols.append(left)
    return T.stack(cols, axis=-1).astype(dt.int64)


def multivariate_normal(self, mean, cov, size=None, check_valid="warn", tol=1e-8, method="eigh", *,
                        dtype=None, device=None) -> Tensor:
    """mean + A z with A A^T = cov (A from eigh; method="cholesky" for a positive definite cov)."""
    (mu, cv), dev, like = _params("multivariate_normal", ("mean", "cov"), (mean, cov), device)
    T = _T()
    if mu.ndim != 1:
        raise ValueError(f"multivariate_normal: mean must be 1-dimensional, got shape {tuple(mu.shape)}")
    k = mu.shape[0]
    if tuple(cv.shape) != (k, k):
        raise ValueError(f"multivariate_normal: mean of shape ({k},) needs cov of shape ({k}, {k}), "
                         f"got {tuple(cv.shape)}")
    if check_valid not in ("warn", "raise", "ignore"):
        raise ValueError("multivariate_normal: check_valid must be 'warn', 'raise' or 'ignore'")
    from .linalg import _funcs as linalg
    if method == "cholesky":
        A = linalg.cholesky(cv)
    elif method in ("eigh", "svd"):
        w, V = linalg.eigh(cv)
        if check_valid != "ignore":
            bad = bool(T.any(w < -tol * T.maximum(T.max(T.abs(w)), 1.0))) or \
                bool(T.any(T.abs(cv - T.swapaxes(cv, 0, 1)) > tol * T.maximum(T.max(T.abs(cv)), 1.0)))
            if bad:
                msg = "multivariate_normal: covariance is not symmetric positive-semidefinite."
                if check_valid == "raise":
                    raise ValueError(msg)
                import warnings
                warnings.warn(msg, RuntimeWarning, stacklevel=2)
        A = V * T.sqrt(T.maximum(w, 0.0))
    else:
        raise ValueError(f"multivariate_normal: method must be 'eigh', 'svd' or 'cholesky', got {method!r}")
    s = tuple(_size(size, "multivariate_normal"))
    z = _n(self, s + (k,), dev)
    return _result(mu + T.matmul(z, T.swapaxes(A, 0, 1)), dtype, like)


def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True, *, device=None):
    """Samples of a (an int n: range(n); else a tensor/array along `axis`), NumPy's rules."""
    T = _T()
    if isinstance(a, Tensor) or not isinstance(a, int | float) and not hasattr(a, "__index__"):
        pop = a if isinstance(a, Tensor) else asarray(a, device=device)
        if pop.ndim == 0:
            raise ValueError("choice: a must be a positive integer unless it has at least one dimension")
        axis = operator.index(axis)
        if not -pop.ndim <= axis < pop.ndim:
            raise ValueError(f"choice: axis {axis} is out of bounds for a of {pop.ndim} dimensions")
        n = pop.shape[axis]
        dev = pop.device
    else:
        pop, n = None, operator.index(a)
        if n < 0:
            raise ValueError(f"choice: a must be non-negative, got {n}")
        dev = parse_device(device or "cpu")
    s = None if size is None else tuple(_size(size, "choice"))
    m = 1 if s is None else math.prod(s)
    if n == 0 and m > 0:
        raise ValueError("choice: a cannot be empty unless no samples are taken")
    if p is not None:
        (pt,), _, _ = _params("choice", ("p",), (p,), dev)
        if pt.ndim != 1:
            raise ValueError("choice: p must be 1-dimensional")
        if pt.shape[0] != n:
            raise ValueError(f"choice: a and p must have the same size ({n} != {pt.shape[0]})")
        _check("choice", ~(pt >= 0), "probabilities are not non-negative")
        tot = float(T.sum(pt))
        if not abs(tot - 1.0) <= 1e-8 * max(1, n) ** 0.5:
            raise ValueError(f"choice: probabilities do not sum to 1 (sum = {tot!r})")
    if replace:
        if p is None:
            idx = self.randint(0, max(n, 1), (m,), device=dev)
        else:
            cdf = T.cumsum(pt, axis=0)
            cdf = cdf / cdf[-1]
            idx = T.searchsorted(cdf, _u(self, (m,), dev), side="right")
            idx = T.minimum(idx, n - 1).astype(dt.int64)
    else:
        if m > n:
            raise ValueError(f"choice: cannot take a larger sample ({m}) than the population ({n}) "
                             "when replace is False")
        if p is None:
            idx = self.permutation(n, device=dev)[:m]
        else:
            if int(T.sum(pt > 0)) < m:
                raise ValueError("choice: fewer non-zero entries in p than size")
            # the m smallest E_i / p_i (E exponential): sequential draws without replacement
            keys = _exp1(self, (n,), dev) / pt
            idx = T.argsort(keys)[:m]
    out_shape = () if s is None else s
    if pop is None:
        return idx.reshape(out_shape) if s is not None else idx.reshape(())
    from .indexing import take
    taken = take(pop, idx.to(pop.device), axis=axis)
    shp = tuple(pop.shape[:axis % pop.ndim]) + out_shape + tuple(pop.shape[axis % pop.ndim + 1:])
    return taken.reshape(shp)


def shuffle(self, x, axis=0) -> None:
    """Shuffle the tensor x in place along `axis` (NumPy: along the first axis by default)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"shuffle: x must be a tensor, got {type(x).__name__}")
    if x.ndim == 0:
        raise ValueError("shuffle: x must have at least one dimension")
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"shuffle: axis {axis} is out of bounds for x of {x.ndim} dimensions")
    from .indexing import take
    perm = self.permutation(x.shape[axis], device=x.device)
    x[...] = take(x, perm, axis=axis)


def _affine(g, op, a, b, size, dtype, device):
    """uniform(low, high) / normal(loc, scale) with array parameters: low + (high - low) U, loc + scale Z."""
    T = _T()
    (a, b), dev, like = _params(op, ("low", "high") if op == "uniform" else ("loc", "scale"), (a, b), device)
    if op == "uniform":
        _check(op, ~(b >= a), "need low <= high (or a NaN bound)")
        _check(op, ~T.isfinite(b - a), "the bounds and high - low must be finite")
    else:
        _check(op, ~(b >= 0), "scale must be non-negative (or NaN)")
        _check(op, ~T.logical_and(T.isfinite(a), T.isfinite(b)), "loc and scale must be finite")
    s = _shape_of(op, size, [a, b])
    if op == "normal":
        return _result(a + b * _n(g, s, dev), dtype, like)
    x = _result(a + (b - a) * _u(g, s, dev), dtype, like)
    lo, hi = T.broadcast_to(a, s).astype(x.dtype), T.broadcast_to(b, s).astype(x.dtype)
    # a draw rounded up to high (float16: 1 in ~2**12) becomes the largest value below it
    return T.where(T.logical_or(x < hi, hi <= lo), x, T.maximum(lo, T.nextafter(hi, lo)))


def _integers_array(g, low, high, size, dtype, device):
    """integers / randint with array bounds (NumPy broadcasts them): low + w mod (high - low) on
    64-bit words w, words in the biased low run (w < 2**64 mod span) redrawn, so uniform exactly."""
    T = _T()
    dev = parse_device(device) if device is not None else next(
        (v.device for v in (low, high) if isinstance(v, Tensor)), parse_device("cpu"))
    lo = asarray(low, device=dev)
    hi = asarray(high, device=dev)
    if lo.dtype.kind not in "iu" or hi.dtype.kind not in "iu":
        raise TypeError(f"randint: array bounds must be integers, got {lo.dtype.name} and {hi.dtype.name}")
    d = dt.dtype(dtype) if dtype is not None else dt.int64
    if d.kind not in "iu":
        raise TypeError(f"randint: array bounds need an integer dtype, got {d.name}")
    lo64, hi64 = lo.astype(dt.int64), hi.astype(dt.int64)
    lim_lo, lim_hi = dt.iinfo_bounds(d)
    if bool(T.any(hi64 <= lo64)):
        raise ValueError("randint: empty range: every high must exceed its low")
    if bool(T.any(lo64 < max(lim_lo, -2**63))) or bool(T.any(hi64 - 1 > min(lim_hi, 2**63 - 1))):
        raise ValueError(f"randint: bounds do not fit {d.name}'s [{lim_lo}, {lim_hi}]")
    s = _shape_of("randint", size, [lo64, hi64])
    span = T.broadcast_to((hi64 - lo64).astype(dt.uint64), s)   # wraps right for spans >= 2**63
    cut = T.remainder(0 - span, span)   # 2**64 mod span
    w = g.randint(0, 2**64, s, dtype=dt.uint64, device=dev)
    for _ in range(200):
        bad = w < cut
        if not bool(T.any(bad)):
            break
        w = T.where(bad, g.randint(0, 2**64, s, dtype=dt.uint64, device=dev), w)
    out = (T.broadcast_to(lo64, s).astype(dt.uint64) + T.remainder(w, span)).astype(dt.int64)
    return out.astype(d)


def attach(generator_cls, get_generator) -> dict:
    """Put the methods on generator_cls (tensor.random.Generator) and return the module-level
    functions {name: f(*args, generator=None, **kwargs)}, which draw from get_generator(generator)."""
    funcs = {}
    for name in _PUBLIC:
        method = globals()[name]
        setattr(generator_cls, name, method)

        def f(*args, generator=None, _method=method, _name=name, **kwargs):
            if generator is not None and not isinstance(generator, generator_cls):
                raise TypeError(f"{_name}: generator must be a tensor.random.Generator, got "
                                f"{type(generator).__name__}")
            return _method(get_generator(generator), *args, **kwargs)
        f.__name__ = f.__qualname__ = name
        f.__doc__ = method.__doc__
        funcs[name] = f
    return funcs
