"""PyTorch's random functions, in-place random fills, windows and Tensor-only methods, built from the public
(recorded) ops and the Philox generator (tensor/random.py). Its registries are torch_extra.py's too.

Sampling is not differentiable (as PyTorch's): inputs are detached; an in-place fill goes through the
recorded copy_, so autograd's in-place checks still apply.

>>> import tensor as T
>>> _ = T.manual_seed(0); sorted(T.randperm(5).tolist())
[0, 1, 2, 3, 4]
>>> [round(v, 6) for v in T.hann_window(4).tolist()]
[0.0, 0.5, 1.0, 0.5]
"""
from __future__ import annotations

import builtins
import itertools
import math
import operator

from . import dtypes as dt
from . import random as R
from ._tensor import Tensor
from .convert import asarray
from .creation import arange, empty, full, ones
from .device import device as parse_device
from .optable import T as P  # tensor's public (recorded) functions

COMPOSITES: dict = {}
NOT_METHODS: set = set()
METHODS: dict = {}


def _pub(*names, method: bool = True):
    def reg(fn):
        for n in names:
            COMPOSITES[n] = fn
            if not method:
                NOT_METHODS.add(n)
        return fn
    return reg


def _meth(fn):
    METHODS[fn.__name__] = fn
    return fn


def _gen(generator) -> R.Generator:
    if generator is None:
        return R.default_generator
    if not isinstance(generator, R.Generator):
        raise TypeError(f"generator must be a tensor.random.Generator, got {type(generator).__name__}")
    return generator


def _tensor(x, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a tensor, got {type(x).__name__}")
    return x


def _float_dtype(d, name: str) -> dt.DType:
    d = dt.get_default_dtype() if d is None else dt.dtype(d)
    if d.kind != "f":
        raise TypeError(f"{name}: expects a floating-point dtype, got {d.name}")
    return d


def _grad(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_() if requires_grad else t


def _host_any(t: Tensor) -> bool:
    return t.numel() > 0 and bool(P.any(t))


# ---------------------------------------------------------------- sampling functions

@_pub("seed", method=False)
def seed() -> int:
    """Reseed the default generator with a non-deterministic 64-bit seed and return it (PyTorch's torch.seed;
    tensor.random.seed(s) is NumPy's reseed-with-s)."""
    R.default_generator.manual_seed(None)
    return R.default_generator.seed


@_pub("initial_seed", method=False)
def initial_seed() -> int:
    """The seed the default generator was last seeded with (PyTorch's)."""
    return R.default_generator.seed


def _count(v, what: str, op: str) -> int:
    """v as a non-negative int (a length, a count), else a TypeError / ValueError naming op."""
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"{op}: {what} must be an int, got {type(v).__name__}") from None
    if v < 0:
        raise ValueError(f"{op}: {what} must be non-negative, got {v}")
    return v


@_pub("randperm", method=False)
def randperm(n, *, generator=None, dtype=dt.int64, device=None, requires_grad: bool = False):
    """A random permutation of 0 .. n-1 (int64 unless dtype says otherwise).

    >>> import tensor as T
    >>> sorted(T.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    n = _count(n, "n", "randperm")
    d = dt.dtype(dtype)
    if d.kind not in "iuf":   # PyTorch's NotImplementedError for bool and complex
        raise TypeError(f"randperm: dtype must be an integer or floating dtype, got {d.name}")
    top = dt.iinfo_bounds(d)[1] if d.kind in "iu" else 2 ** {
        "float16": 11, "bfloat16": 8, "float32": 24}.get(d.name, 53)   # its exact integers
    if n > 0 and n - 1 > top:   # past a float's exact integers the values would repeat
        raise ValueError(f"randperm: n={n} is too large for {d.name}")
    r = _gen(generator).permutation(n, device=parse_device(device))
    return _grad(r if d is dt.int64 else P.astype(r, d), requires_grad)


def _like(name, draw, doc):
    def f(input, *, dtype=None, device=None, requires_grad: bool = False, generator=None):
        x = _tensor(input, name)
        d = x.dtype if dtype is None else dt.dtype(dtype)
        if d.kind not in "fc":
            raise TypeError(f"{name}: expects a floating-point or complex dtype, got {d.name}")
        dev = x.device if device is None else parse_device(device)
        return _grad(getattr(_gen(generator), draw)(x.shape, dtype=d, device=dev), requires_grad)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc} samples with input's shape (its dtype and device unless given)."
    return _pub(name, method=False)(f)


rand_like = _like("rand_like", "rand", "Uniform [0, 1)")
randn_like = _like("randn_like", "randn", "Standard normal")


def _randint(gen, low, high, shape, d, dev, name):
    """Integers in [low, high) as dtype d (drawn as int64 / uint64; bool and floats cast)."""
    if d.kind == "c":
        raise TypeError(f"{name}: complex dtypes are not supported")
    if d.kind in "iu":
        lo, hi = dt.iinfo_bounds(d)
    elif d.kind == "b":
        lo, hi = 0, 1
    else:
        lo, hi = -(2 ** 63), 2 ** 63 - 1
    if high <= low:
        raise ValueError(f"{name}: empty range [{low}, {high})")
    if low < lo or high - 1 > hi:
        raise ValueError(f"{name}: range [{low}, {high}) does not fit {d.name}")
    draw = dt.uint64 if d is dt.uint64 else dt.int64
    r = gen.randint(low, high, shape, dtype=draw, device=dev)
    return r if d is draw else P.astype(r, d)


@_pub("randint_like", method=False)
def randint_like(input, low=0, high=None, *, dtype=None, device=None,
                 requires_grad: bool = False, generator=None):
    """Integers in [low, high) with input's shape, in input's dtype unless given (randint_like(x, high) is [0,
    high), as PyTorch's)."""
    x = _tensor(input, "randint_like")
    d = x.dtype if dtype is None else dt.dtype(dtype)
    dev = x.device if device is None else parse_device(device)
    if high is None:
        low, high = 0, low
    low, high = operator.index(low), operator.index(high)
    return _grad(_randint(_gen(generator), low, high, input.shape, d, dev, "randint_like"), requires_grad)


def _check_probs(p: Tensor, name: str) -> None:
    if _host_any(P.logical_not(P.isfinite(p))) or _host_any(P.less(p, 0)):
        raise ValueError(f"{name}: probabilities must be finite and non-negative")


@_pub("multinomial")
def multinomial(input, num_samples, replacement: bool = False, *, generator=None):
    """num_samples category indices per row of the (unnormalised) probabilities input (1-d or
    2-d), int64. Without replacement the indices of a row are distinct (the exponential race:
    the smallest Exp(1) / p_i, which picks successively in proportion to p), and each row needs
    num_samples categories of non-zero probability (PyTorch's documented requirement).

    >>> import tensor as T
    >>> T.multinomial(T.tensor([0.0, 1.0, 0.0]), 2, replacement=True).tolist()
    [1, 1]
    """
    p = _tensor(input, "multinomial").detach()
    if p.ndim not in (1, 2):
        raise ValueError(f"multinomial: probabilities must be 1-d or 2-d, got shape {p.shape}")
    if p.dtype.kind != "f":
        raise TypeError(f"multinomial: probabilities must be floating point, got {p.dtype.name}")
    k, n = operator.index(num_samples), p.shape[-1]
    if k <= 0:
        raise ValueError(f"multinomial: num_samples must be positive, got {k}")
    if n == 0:
        raise ValueError("multinomial: the distribution has no categories")
    if not replacement and k > n:
        raise ValueError(f"multinomial: cannot draw {k} samples from {n} categories without replacement")
    p2 = P.astype(P.reshape(p, (-1, n)), dt.float64)
    rows, dev, gen = p2.shape[0], p.device, _gen(generator)
    if rows == 0:
        return empty((0, k), dtype=dt.int64, device=dev)
    _check_probs(p2, "multinomial")
    pos = P.greater(p2, 0)
    if _host_any(P.logical_not(P.any(pos, axis=-1))):
        raise ValueError("multinomial: a row of probabilities sums to zero")
    few = None if replacement else P.nonzero(P.less(P.sum(pos, axis=-1), k))[0]
    if few is not None and few.shape[0]:   # PyTorch's documented requirement (it fills up
        r = int(few[0].item())             # from the zeros in an unspecified order)
        raise ValueError(f"multinomial: a row has fewer than num_samples={k} categories of non-zero "
                         f"probability (row {r} has {int(P.sum(pos[r]).item())}; without replacement)")
    if replacement:
        cdf = P.cumsum(p2, axis=-1)
        cdf = P.divide(cdf, cdf[:, -1:])
        # one sorted sequence for all rows: row r's cdf lives in [2r, 2r + 1]
        off = P.multiply(arange(rows, dtype=dt.float64, device=dev), 2.0)[:, None]
        u = gen.rand((rows, k), dtype=dt.float64, device=dev)
        idx = P.searchsorted(P.reshape(P.add(cdf, off), (-1,)), P.reshape(P.add(u, off), (-1,)), side="right")
        idx = P.subtract(P.reshape(idx, (rows, k)),
                         P.multiply(arange(rows, dtype=dt.int64, device=dev), n)[:, None])
        last = P.subtract(n - 1, P.argmax(P.flip(pos, -1), axis=-1, keepdims=True))
        out = P.minimum(idx, last)   # a rounding past the row's end: its last positive category
    else:
        e = P.negative(P.log(P.subtract(1.0, gen.rand((rows, n), dtype=dt.float64, device=dev))))
        keys = P.where(pos, P.divide(e, p2), math.inf)
        out = P.argsort(keys, axis=-1)[:, :k]
    return out[0] if p.ndim == 1 else out


@_pub("bernoulli")
def bernoulli(input, p=None, *, generator=None):
    """0 / 1 samples in input's (floating) dtype: 1 with probability input (or the scalar p)."""
    x = _tensor(input, "bernoulli").detach()
    if x.dtype.kind != "f":
        raise TypeError(f"bernoulli: input must be floating point, got {x.dtype.name}")
    return _bernoulli(x.shape, x.dtype, x.device, x if p is None else p, generator, "bernoulli")


def _bernoulli(shape, d, dev, p, generator, name):
    if isinstance(p, Tensor):
        p = p.detach()
        if p.dtype.kind != "f":
            raise TypeError(f"{name}: p must be floating point, got {p.dtype.name}")
        if _host_any(P.logical_not(P.logical_and(P.greater_equal(p, 0), P.less_equal(p, 1)))):
            raise ValueError(f"{name}: p must be in [0, 1]")
    elif not 0 <= p <= 1:
        raise ValueError(f"{name}: p must be in [0, 1], got {p}")
    g = dt.float64 if d is dt.float64 or (isinstance(p, Tensor) and p.dtype is dt.float64) \
        else dt.float32
    u = _gen(generator).rand(shape, dtype=g, device=dev)
    return P.astype(P.less(u, p), d)


def _lgamma1p(k: Tensor) -> Tensor:
    """log(k!) for k >= 0 (float64): Stirling's series at k + 9, shifted down by 8 factors."""
    z = P.add(k, 9.0)
    zi = P.reciprocal(z)
    z2 = P.multiply(zi, zi)
    series = P.multiply(zi, P.subtract(1 / 12, P.multiply(z2, P.subtract(1 / 360, P.multiply(z2, 1 / 1260)))))
    s = P.add(P.subtract(P.multiply(P.subtract(z, 0.5), P.log(z)), z), 0.5 * math.log(2 * math.pi) + 0.0)
    s = P.add(s, series)                       # log Gamma(k + 9) = log((k + 8)!)
    shift = P.log(P.prod(P.stack([P.add(k, float(j)) for j in range(1, 9)]), axis=0))
    return P.subtract(s, shift)


def _poisson_small(lam: Tensor, gen) -> Tensor:
    """Knuth's product of uniforms (rates < 10)."""
    limit, prod = P.exp(P.negative(lam)), ones(lam.shape, dtype=dt.float64, device=lam.device)
    k = P.multiply(lam, 0.0)
    while True:
        prod = P.multiply(prod, gen.rand(lam.shape, dtype=dt.float64, device=lam.device))
        more = P.greater(prod, limit)
        if not _host_any(more):
            return k
        k = P.add(k, P.astype(more, dt.float64))


def _poisson_large(lam: Tensor, gen) -> Tensor:
    """Hormann's transformed rejection (PTRS), as NumPy's, for rates >= 10."""
    dev, sl, ll = lam.device, P.sqrt(lam), P.log(lam)
    b = P.add(P.multiply(sl, 2.53), 0.931)
    a = P.add(P.multiply(b, 0.02483), -0.059)
    log_inv_alpha = P.log(P.add(P.divide(1.1328, P.subtract(b, 3.4)), 1.1239))
    vr = P.subtract(0.9277, P.divide(3.6224, P.subtract(b, 2.0)))
    out = P.multiply(lam, 0.0)
    todo = P.greater_equal(lam, 0.0)
    while _host_any(todo):
        u = P.subtract(gen.rand(lam.shape, dtype=dt.float64, device=dev), 0.5)
        v = gen.rand(lam.shape, dtype=dt.float64, device=dev)
        us = P.subtract(0.5, P.abs(u))
        k = P.floor(P.add(P.multiply(P.add(P.divide(P.multiply(a, 2.0), us), b), u), P.add(lam, 0.43)))
        quick = P.logical_and(P.greater_equal(us, 0.07), P.less_equal(v, vr))
        kk = P.maximum(k, 0.0)
        lhs = P.subtract(P.add(P.log(v), log_inv_alpha), P.log(P.add(P.divide(a, P.multiply(us, us)), b)))
        rhs = P.subtract(P.add(P.negative(lam), P.multiply(kk, ll)), _lgamma1p(kk))
        bad = P.logical_or(P.less(k, 0), P.logical_and(P.less(us, 0.013), P.greater(v, us)))
        ok = P.logical_or(quick, P.logical_and(P.logical_not(bad), P.less_equal(lhs, rhs)))
        ok = P.logical_and(ok, todo)
        out = P.where(ok, k, out)
        todo = P.logical_and(todo, P.logical_not(ok))
    return out


@_pub("poisson")
def poisson(input, generator=None):
    """Poisson samples with the rates in input, in input's (floating) dtype."""
    x = _tensor(input, "poisson").detach()
    if x.dtype.kind != "f":
        raise TypeError(f"poisson: rates must be floating point, got {x.dtype.name}")
    if x.numel() == 0:
        return P.copy(x)
    lam = P.astype(x, dt.float64)
    if _host_any(P.logical_not(P.greater_equal(lam, 0))) or _host_any(P.isinf(lam)):
        raise ValueError("poisson: rates must be finite and non-negative")
    gen, big = _gen(generator), P.greater_equal(lam, 10.0)
    out = _poisson_small(P.where(big, 0.0, lam), gen)
    if _host_any(big):
        out = P.where(big, _poisson_large(P.where(big, lam, 10.0), gen), out)
    return P.astype(out, x.dtype)


# ---------------------------------------------------------------- in-place random fills

def _fill(self, r: Tensor) -> Tensor:
    P.copy_(self, r if r.dtype is self.dtype else P.astype(r, self.dtype))
    return self


def _floating(self, name):
    _tensor(self, name)
    if self.dtype.kind != "f":
        raise TypeError(f"{name}: expects a floating-point tensor, got {self.dtype.name}")
    return dt.float64 if self.dtype is dt.float64 else dt.float32


@_meth
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    """Fill with uniform samples in [from, to) (PyTorch's; `from` may be given by keyword)."""
    from_ = kw.pop("from", from_)
    _floating(self, "uniform_")
    if kw:
        raise TypeError(f"uniform_: unexpected arguments {sorted(kw)}")
    if not from_ <= to:
        raise ValueError(f"uniform_: expects from <= to, got from={from_}, to={to}")
    return _fill(self, _gen(generator).uniform(from_, to, self.shape, self.dtype, self.device))


@_meth
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with N(mean, std^2) samples."""
    _floating(self, "normal_")
    if not std >= 0:
        raise ValueError(f"normal_: expects std >= 0, got {std}")
    return _fill(self, _gen(generator).normal(mean, std, self.shape, self.dtype, self.device))


@_meth
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0 / 1, 1 with probability p (a float, or a tensor broadcast to self)."""
    _tensor(self, "bernoulli_")
    if self.dtype.kind == "c":
        raise TypeError("bernoulli_: complex tensors are not supported")
    return _fill(self, _bernoulli(self.shape, self.dtype, self.device, p, generator, "bernoulli_"))


_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


@_meth
def random_(self, *args, generator=None, **kw):
    """Fill with integers: random_() over the dtype's range ([0, 2**mantissa digits] for floats), random_(to)
    in [0, to), random_(from, to) in [from, to) (to=None: the maximum)."""
    _tensor(self, "random_")
    if len(args) > 2:
        raise TypeError(f"random_: takes at most 2 positional arguments, got {len(args)}")
    if len(args) == 1 and "to" not in kw and "from" not in kw:
        args = (0, args[0])
    lo, hi = (list(args) + [None, None])[:2] if args else (0, None)
    lo, hi = kw.pop("from", lo), kw.pop("to", hi)
    if kw:
        raise TypeError(f"random_: unexpected arguments {sorted(kw)}")
    d = self.dtype
    if hi is None:
        if d.kind in "iu":
            hi = dt.iinfo_bounds(d)[1] + 1
        elif d.kind == "b":
            hi = 2
        elif d.kind == "f":
            hi = 2 ** _DIGITS[d.name] + 1
        else:
            raise TypeError(f"random_: complex tensors are not supported, got {d.name}")
    if d.kind == "f" and (hi - 1 > 2 ** _DIGITS[d.name] or lo < -(2 ** _DIGITS[d.name])):
        raise ValueError(f"random_: range [{lo}, {hi}) is not exactly representable in {d.name}")
    lo, hi = operator.index(lo), operator.index(hi)
    return _fill(self, _randint(_gen(generator), lo, hi, self.shape, d, self.device, "random_"))


def _u(self, generator) -> Tensor:
    return _gen(generator).rand(self.shape, dtype=dt.float64, device=self.device)


@_meth
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with Exp(lambd) samples: -log(1 - U) / lambd."""
    _floating(self, "exponential_")
    if not lambd > 0:
        raise ValueError(f"exponential_: expects lambd > 0, got {lambd}")
    u = _u(self, generator)
    return _fill(self, P.divide(P.negative(P.log1p(P.negative(u))), float(lambd)))


@_meth
def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    _tensor(self, "geometric_")
    if self.dtype.kind in "cb":
        raise TypeError(f"geometric_: not supported for {self.dtype.name}")
    if not 0 < p < 1:
        raise ValueError(f"geometric_: expects 0 < p < 1, got {p}")
    u = P.subtract(1.0, _u(self, generator))   # (0, 1]
    return _fill(self, P.maximum(P.ceil(P.divide(P.log(u), math.log1p(-p))), 1.0))


@_meth
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy(median, sigma) samples: median + sigma tan(pi (U - 1/2))."""
    _floating(self, "cauchy_")
    if not sigma > 0:
        raise ValueError(f"cauchy_: expects sigma > 0, got {sigma}")
    u = _u(self, generator)
    return _fill(self, P.add(P.multiply(P.tan(P.multiply(P.subtract(u, 0.5), math.pi)),
                                        float(sigma)), float(median)))


@_meth
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std^2)) samples."""
    _floating(self, "log_normal_")
    if not std > 0:
        raise ValueError(f"log_normal_: expects std > 0, got {std}")
    n = _gen(generator).normal(mean, std, self.shape, dt.float64, self.device)
    return _fill(self, P.exp(n))


# ---------------------------------------------------------------- creation

@_pub("as_tensor", method=False)
def as_tensor(data, dtype=None, device=None):
    """data as a tensor, sharing its memory when dtype and device allow (tensor.asarray)."""
    return asarray(data, dtype=dtype, device=device)


@_pub("scalar_tensor", method=False)
def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False):
    """A 0-d tensor of the number s (the default float dtype unless dtype says otherwise)."""
    if isinstance(s, Tensor) or not isinstance(s, int | float | bool | builtins.complex) and \
            not hasattr(s, "__float__"):
        raise TypeError(f"scalar_tensor: expects a Python number, got {type(s).__name__}")
    d = dt.get_default_dtype() if dtype is None else dtype
    return full((), s, dtype=d, device=device, requires_grad=requires_grad)


@_pub("empty_strided", method=False)
def empty_strided(size, stride, *, dtype=None, device=None, requires_grad: bool = False):
    """An uninitialised tensor of shape size with the given strides (in elements)."""
    size, stride = tuple(operator.index(s) for s in size), tuple(operator.index(s) for s in stride)
    if len(size) != len(stride):
        raise ValueError(f"empty_strided: size {size} and stride {stride} differ in length")
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise ValueError(f"empty_strided: negative size or stride in {size}, {stride}")
    n = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    buf = empty((n,), dtype=dtype, device=device)
    r = P.as_strided(buf, size, stride, 0)
    return r.requires_grad_() if requires_grad else r


# ---------------------------------------------------------------- windows

def _window(name, L, periodic, dtype, device, requires_grad, fn):
    L = _count(L, "window_length", name)
    d, dev = _float_dtype(dtype, name), parse_device(device)
    if L <= 1:
        return _grad(ones((L,), dtype=d, device=dev), requires_grad)
    m = float(L if periodic else L - 1)        # N - 1, N = L + 1 when periodic
    n = arange(L, dtype=dt.float64, device=dev)
    return _grad(P.astype(fn(n, m), d), requires_grad)


def _cos_sum(n, m, coefs):
    """sum_j (-1)^j a_j cos(2 pi j n / m)."""
    w = None
    for j, a in enumerate(coefs):
        term = float(a) if j == 0 else P.multiply(P.cos(P.multiply(n, 2 * math.pi * j / m)),
                                                  float(a) * (-1) ** j)
        w = term if w is None else P.add(w, term)
    return w


@_pub("hann_window", method=False)
def hann_window(window_length, periodic: bool = True, *, dtype=None, device=None,
                requires_grad: bool = False):
    """0.5 - 0.5 cos(2 pi n / (N - 1)); periodic=True drops the last point of L + 1."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, m: _cos_sum(n, m, (0.5, 0.5)))


@_pub("hamming_window", method=False)
def hamming_window(window_length, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, device=None, requires_grad: bool = False):
    """alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, m: _cos_sum(n, m, (alpha, beta)))


@_pub("blackman_window", method=False)
def blackman_window(window_length, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, m: _cos_sum(n, m, (0.42, 0.5, 0.08)))


@_pub("bartlett_window", method=False)
def bartlett_window(window_length, periodic: bool = True, *, dtype=None, device=None,
                    requires_grad: bool = False):
    """1 - |2 n / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, m: P.subtract(1.0, P.abs(P.subtract(P.multiply(n, 2.0 / m), 1.0))))


@_pub("kaiser_window", method=False)
def kaiser_window(window_length, periodic: bool = True, beta: float = 12.0, *, dtype=None,
                  device=None, requires_grad: bool = False):
    """I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)."""
    beta = float(beta)
    if not beta >= 0 or math.isinf(beta):
        raise ValueError(f"kaiser_window: beta must be finite and non-negative, got {beta}")

    def kaiser(n, m):
        r = P.subtract(P.multiply(n, 2.0 / m), 1.0)
        arg = P.multiply(P.sqrt(P.maximum(P.subtract(1.0, P.multiply(r, r)), 0.0)), beta)
        return P.divide(P.i0(arg), P.i0(asarray(beta, dtype=dt.float64, device=n.device)))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, kaiser)


# ---------------------------------------------------------------- other Tensor methods
# (PyTorch's methods with no T.function; they call the public functions, torch_extra's too)

@_meth
def masked_fill_(self, mask, value):
    """Write value where mask (broadcast to self) is true; returns self."""
    r = self.masked_fill(mask, value)
    if r.shape != self.shape:
        raise ValueError(f"masked_fill_: mask of shape {mask.shape} does not broadcast to the "
                         f"tensor's shape {self.shape}")
    return _fill(self, r)


def _new(name, fill):
    def m(self, *size, dtype=None, device=None, requires_grad: bool = False):
        size = size[0] if len(size) == 1 and not isinstance(size[0], int | Tensor) else size
        d = self.dtype if dtype is None else dtype
        dev = self.device if device is None else device
        return _grad(fill(tuple(operator.index(s) for s in size), d, dev), requires_grad)
    m.__name__ = m.__qualname__ = name
    m.__doc__ = f"A tensor of shape size filled by {name}, of self's dtype and device unless given."
    METHODS[name] = m


_new("new_zeros", lambda s, d, dev: P.zero_(empty(s, dtype=d, device=dev)))
_new("new_ones", lambda s, d, dev: ones(s, dtype=d, device=dev))
_new("new_empty", lambda s, d, dev: empty(s, dtype=d, device=dev))


@_meth
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False):
    """A tensor of shape size filled with fill_value, of self's dtype and device unless given."""
    t = empty(tuple(size), dtype=self.dtype if dtype is None else dtype,
              device=self.device if device is None else device)
    return _grad(P.fill_(t, fill_value), requires_grad)


@_meth
def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False):
    """A copy of data as a tensor of self's dtype and device unless given."""
    t = data.detach() if isinstance(data, Tensor) else data
    t = asarray(t, dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device, copy=True)
    return _grad(t, requires_grad)


def _simple_method(name, fn, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    METHODS[name] = fn


_simple_method("type_as", lambda self, other: P.astype(self, _tensor(other, "type_as").dtype, False),
               "self cast to other's dtype (itself when it already is).")
_simple_method("view_as", lambda self, other: P.view(self, _tensor(other, "view_as").shape),
               "A view of self with other's shape.")
_simple_method("reshape_as", lambda self, other: P.reshape(self, _tensor(other, "reshape_as").shape),
               "self reshaped to other's shape (a view when possible).")
_simple_method("nelement", lambda self: self.numel(), "The number of elements (numel).")
_simple_method("get_device", lambda self: (self.device.index or 0) if self.is_cuda else -1,
               "The CUDA device index, or -1 for a CPU tensor.")


def _in_place(name, fn):
    def m(self, *args, **kw):
        r = fn(self, *args, **kw)
        if r.shape != self.shape:
            raise ValueError(f"{name}: the result's shape {r.shape} differs from the tensor's "
                             f"{self.shape} (an in-place op cannot broadcast self)")
        return _fill(self, r)
    m.__name__ = m.__qualname__ = name
    m.__doc__ = f"In-place {name[:-1]}: the result written into self (recorded copy_)."
    METHODS[name] = m


_in_place("addcmul_", lambda x, t1, t2, *, value=1: P.addcmul(x, t1, t2, value=value))
_in_place("addcdiv_", lambda x, t1, t2, *, value=1: P.addcdiv(x, t1, t2, value=value))
_in_place("lerp_", lambda x, end, weight: P.lerp(x, end, weight))
_in_place("tril_", lambda x, diagonal=0: P.tril(x, diagonal))
_in_place("triu_", lambda x, diagonal=0: P.triu(x, diagonal))


@_meth
def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None):
    """PyTorch's x.norm: the p-norm of all elements (dim=None) or over dim (an int or tuple); 'fro' is the
    2-norm, 'nuc' the nuclear norm over two dims."""
    from .linalg._funcs import matrix_norm, vector_norm
    x = _tensor(self, "norm")
    if x.dtype.kind not in "fc":
        raise TypeError(f"norm: expects a floating-point or complex tensor, got {x.dtype.name}")
    if dtype is not None:
        x = P.astype(x, dtype, False)
    dims = (dim,) if isinstance(dim, int) else (None if dim is None else tuple(dim))
    if p == "nuc":
        if dims is None and x.ndim != 2:
            raise ValueError(f"norm: p='nuc' with dim=None needs a 2-D tensor, got shape {x.shape}")
        dims = (0, 1) if dims is None else dims
        if len(dims) != 2:
            raise ValueError(f"norm: p='nuc' needs two dims, got {dim}")
        r = matrix_norm(P.moveaxis(x, dims, (-2, -1)), ord="nuc", keepdims=keepdim)
        return P.moveaxis(r, (-2, -1), dims) if keepdim else r
    if isinstance(p, str) and p != "fro":
        raise ValueError(f"norm: unsupported p={p!r} (a number, 'fro' or 'nuc')")
    if p == "fro" and dims is not None and len(dims) > 2:
        raise ValueError(f"norm: p='fro' takes one or two dims, got {dim}")
    return vector_norm(x, axis=dims, keepdims=keepdim, ord=2 if p in ("fro", None) else p)


@_meth
def split(self, split_size_or_sections, dim: int = 0):
    """PyTorch's x.split: pieces of split_size along dim (the last may be smaller), or of the listed sizes,
    which must add up to the dim's size (T.split is NumPy's)."""
    x = _tensor(self, "split")
    if x.ndim == 0:
        raise ValueError("split: expects a tensor with at least one dimension")
    a = dim % x.ndim if -x.ndim <= dim < x.ndim else None
    if a is None:
        raise IndexError(f"split: dim {dim} is out of range for shape {x.shape}")
    n, s = x.shape[a], split_size_or_sections
    if isinstance(s, int):
        if s < 0 or (s == 0 and n):
            raise ValueError(f"split: split_size must be positive, got {s}")
        sizes = [s] * (n // s) + ([n % s] if n % s else []) if s else [0]
    else:
        sizes = [operator.index(v) for v in s]
        if sum(sizes) != n or min(sizes, default=0) < 0:
            raise ValueError(f"split: sizes {sizes} do not add up to dim {a}'s size {n}")
    cuts = list(itertools.accumulate(sizes))[:-1]
    return tuple(P.split(x, cuts, axis=a))


def _mh(self):
    if self.ndim < 2:
        raise ValueError(f"mH: expects a tensor of rank >= 2, got shape {self.shape}")
    m = P.matrix_transpose(self)
    return P.conj(m) if self.dtype.kind == "c" else m


def _h(self):
    if self.ndim not in (0, 2):
        raise ValueError(f"H: expects a 2-d (or 0-d) tensor, got shape {self.shape}; use mH")
    return _mh(self) if self.ndim == 2 else (P.conj(self) if self.dtype.kind == "c" else self)


METHODS["mH"] = property(_mh, doc="The conjugate transpose of the last two dimensions.")
METHODS["H"] = property(_h, doc="The conjugate transpose of a matrix.")
