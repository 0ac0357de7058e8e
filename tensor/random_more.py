"""More of NumPy's random API on tensor.random.Generator and as tensor.random.<name>: the
distributions NumPy scripts draw from that random_extra.py leaves out (weibull, pareto, power,
rayleigh, gumbel, standard_cauchy, standard_t, triangular, wald, negative_binomial),
Generator.permuted and Generator.bytes, the legacy module functions random / random_sample /
ranf / sample / standard_normal, and RandomState (NumPy's legacy seeded generator: here the
legacy method names over a Generator of its own).
Each distribution is a transform of the Generator's uniforms, normals or gammas, as NumPy
defines it (its streams differ: the values are compared by statistics, not one by one).

>>> import tensor as T
>>> g = T.random.default_rng(0)
>>> g.weibull(2.0, size=3).shape, T.random.RandomState(1).random_sample((2, 2)).shape
((3,), (2, 2))
"""
from __future__ import annotations

from . import dtypes as dt
from ._tensor import Tensor
from .random_extra import _T, _check, _exp1, _n, _params, _result, _shape_of, _u


def weibull(self, a, size=None, *, dtype=None, device=None):
    """E ** (1 / a), E standard exponential (0 where a == 0, as NumPy's)."""
    (a,), dev, like = _params("weibull", ("a",), (a,), device)
    _check("weibull", ~(a >= 0), "a must be non-negative (a < 0 or NaN)")
    s = _shape_of("weibull", size, [a])
    T = _T()
    x = T.power(_exp1(self, s, dev), 1.0 / T.where(a == 0, 1.0, a))
    return _result(T.where(a == 0, 0.0, x), dtype, like)


def pareto(self, a, size=None, *, dtype=None, device=None):
    """NumPy's Pareto II (Lomax) with scale 1: expm1(E / a)."""
    (a,), dev, like = _params("pareto", ("a",), (a,), device)
    _check("pareto", ~(a > 0), "a must be positive (a <= 0 or NaN)")
    s = _shape_of("pareto", size, [a])
    return _result(_T().expm1(_exp1(self, s, dev) / a), dtype, like)


def power(self, a, size=None, *, dtype=None, device=None):
    """The power distribution on [0, 1]: (1 - exp(-E)) ** (1 / a)."""
    (a,), dev, like = _params("power", ("a",), (a,), device)
    _check("power", ~(a > 0), "a must be positive (a <= 0 or NaN)")
    s = _shape_of("power", size, [a])
    T = _T()
    return _result(T.power(-T.expm1(-_exp1(self, s, dev)), 1.0 / a), dtype, like)


def rayleigh(self, scale=1.0, size=None, *, dtype=None, device=None):
    """scale * sqrt(2 E)."""
    (sc,), dev, like = _params("rayleigh", ("scale",), (scale,), device)
    _check("rayleigh", ~(sc >= 0), "scale must be non-negative (scale < 0 or NaN)")
    s = _shape_of("rayleigh", size, [sc])
    return _result(sc * _T().sqrt(2.0 * _exp1(self, s, dev)), dtype, like)


def gumbel(self, loc=0.0, scale=1.0, size=None, *, dtype=None, device=None):
    """loc - scale * log(E)."""
    (lo, sc), dev, like = _params("gumbel", ("loc", "scale"), (loc, scale), device)
    _check("gumbel", ~(sc >= 0), "scale must be non-negative (scale < 0 or NaN)")
    s = _shape_of("gumbel", size, [lo, sc])
    T = _T()
    e = _exp1(self, s, dev)
    e = T.where(e > 0, e, 2.0 ** -1074)   # E = 0 (U = 0) would give +inf
    return _result(lo - sc * T.log(e), dtype, like)


def standard_cauchy(self, size=None, *, dtype=None, device=None):
    """N1 / N2."""
    (_,), dev, like = _params("standard_cauchy", ("x",), (0.0,), device)
    s = _shape_of("standard_cauchy", size, [])
    return _result(_n(self, s, dev) / _n(self, s, dev), dtype, None)


def standard_t(self, df, size=None, *, dtype=None, device=None):
    """Student's t: N * sqrt(df / 2) / sqrt(G), G standard gamma with shape df / 2."""
    (df,), dev, like = _params("standard_t", ("df",), (df,), device)
    _check("standard_t", ~(df > 0), "df must be positive (df <= 0 or NaN)")
    s = _shape_of("standard_t", size, [df])
    T = _T()
    g = self.standard_gamma(T.broadcast_to(df / 2.0, s), dtype=dt.float64, device=dev)
    return _result(_n(self, s, dev) * T.sqrt(df / 2.0) / T.sqrt(g), dtype, like)


def triangular(self, left, mode, right, size=None, *, dtype=None, device=None):
    """The triangular distribution on [left, right] peaking at mode (inverse of its CDF)."""
    (lf, md, rt), dev, like = _params("triangular", ("left", "mode", "right"), (left, mode, right), device)
    T = _T()
    _check("triangular", ~(lf <= md), "left must be <= mode")
    _check("triangular", ~(md <= rt), "mode must be <= right")
    _check("triangular", ~(lf < rt), "left must be < right")
    s = _shape_of("triangular", size, [lf, md, rt])
    base = rt - lf
    ratio = (md - lf) / base
    u = _u(self, s, dev)
    lower = lf + T.sqrt(u * (md - lf) * base)
    upper = rt - T.sqrt((1.0 - u) * (rt - md) * base)
    return _result(T.where(u <= ratio, lower, upper), dtype, like)


def wald(self, mean, scale, size=None, *, dtype=None, device=None):
    """The inverse Gaussian (Michael, Schucany and Haas' transform of a normal and a uniform)."""
    (mu, sc), dev, like = _params("wald", ("mean", "scale"), (mean, scale), device)
    _check("wald", ~(mu > 0), "mean must be positive (mean <= 0 or NaN)")
    _check("wald", ~(sc > 0), "scale must be positive (scale <= 0 or NaN)")
    s = _shape_of("wald", size, [mu, sc])
    T = _T()
    y = _n(self, s, dev) ** 2 * mu
    x = mu + mu / (2.0 * sc) * (y - T.sqrt(4.0 * sc * y + y * y))
    u = _u(self, s, dev)
    return _result(T.where(u <= mu / (mu + x), x, mu * mu / x), dtype, like)


def negative_binomial(self, n, p, size=None, *, device=None):
    """Failures before the n-th success: Poisson(Gamma(n, (1 - p) / p)), int64."""
    (nn, pp), dev, _ = _params("negative_binomial", ("n", "p"), (n, p), device)
    T = _T()
    _check("negative_binomial", ~(nn > 0), "n must be positive (n <= 0 or NaN)")
    _check("negative_binomial", ~T.logical_and(pp > 0, pp <= 1), "p must be in (0, 1]")
    s = _shape_of("negative_binomial", size, [nn, pp])
    lam = self.gamma(T.broadcast_to(nn, s), T.broadcast_to((1.0 - pp) / pp, s), dtype=dt.float64, device=dev)
    return self.poisson(lam)


def permuted(self, x, axis=None, out=None):
    """x with each 1-d slice along axis shuffled independently (axis None: the flattened x,
    reshaped back), as NumPy's Generator.permuted: by argsort of uniform keys."""
    T = _T()
    t = x if isinstance(x, Tensor) else T.asarray(x)
    flat = axis is None
    work = T.reshape(t, (-1,)) if flat else t
    a = -1 if flat else axis
    keys = self.random(tuple(work.shape), device=work.device)
    r = T.take_along_axis(work, T.argsort(keys, axis=a), axis=a)
    r = T.reshape(r, t.shape) if flat else r
    if out is not None:
        out[...] = r
        return out
    return r


def random_bytes(self, length):
    """NumPy's Generator.bytes(length): that many random bytes."""
    return self.randint(0, 256, (int(length),), dtype=dt.uint8).numpy().tobytes()


class RandomState:
    """NumPy's legacy RandomState(seed): the legacy method names (seed, rand, randn,
    randint, random_sample, ...) over a Generator of its own (a Philox stream: not NumPy's
    MT19937 values); every Generator method is reachable through it."""

    generator_cls = None   # tensor.random.Generator (attach sets it)

    def __init__(self, seed=None):
        self._generator = RandomState.generator_cls(seed)

    def seed(self, seed=None):
        self._generator.manual_seed(seed)

    def random_sample(self, size=None):
        return self._generator.random(size)

    ranf = sample = random_sample

    def __getattr__(self, name):
        if "_generator" not in self.__dict__:   # (copy / pickle probe before __init__)
            raise AttributeError(name)
        return getattr(self.__dict__["_generator"], name)


_PUBLIC = ("weibull", "pareto", "power", "rayleigh", "gumbel", "standard_cauchy", "standard_t",
           "triangular", "wald", "negative_binomial")


def attach(generator_cls, get_generator) -> dict:
    """Put the methods on generator_cls and return the module-level functions (drawing from
    get_generator(generator)), the legacy uniform names and RandomState."""
    funcs = {}
    for name in _PUBLIC:
        method = globals()[name]
        setattr(generator_cls, name, method)

        def f(*args, generator=None, _method=method, **kwargs):
            return _method(get_generator(generator), *args, **kwargs)
        f.__name__ = f.__qualname__ = name
        f.__doc__ = method.__doc__
        funcs[name] = f

    def random(size=None, dtype=None, device=None):
        """NumPy's legacy np.random.random(size): float uniforms in [0, 1) (float64)."""
        return get_generator(None).random(size, dtype=dtype, device=device)

    def standard_normal(size=None, dtype=None, device=None):
        return get_generator(None).standard_normal(size, dtype=dtype, device=device)
    for name in ("random", "random_sample", "ranf", "sample"):
        funcs[name] = random
    funcs["standard_normal"] = standard_normal

    generator_cls.permuted = permuted   # (Generator methods only, as NumPy's)
    generator_cls.bytes = random_bytes
    RandomState.generator_cls = generator_cls
    funcs["RandomState"] = RandomState
    return funcs
