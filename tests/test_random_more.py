"""tensor.random beyond the fills (hunt 7): NumPy's Generator API of tensor/random_extra.py
(gamma family, exponential family, discrete counts, multivariate, choice / shuffle) checked
against SciPy's distributions with fixed seeds (KS or chi-square, p > 1e-4), their errors, the
same draws on the CUDA device, and fixes in tensor/random.py (array parameters of normal /
uniform, integers(endpoint=), seeds above 2**64)."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T

st = pytest.importorskip("scipy.stats")
N = 20000
P_MIN = 1e-4


def _ks(x, cdf):
    assert st.kstest(np.asarray(x).ravel(), cdf).pvalue > P_MIN


def _chi(x, pmf, lo, hi):
    x = np.asarray(x).ravel()
    ks = np.arange(lo, hi + 1)
    obs = np.array([(x == k).sum() for k in ks])
    exp = pmf(ks) * len(x)
    keep = exp > 5
    obs, exp = obs[keep], exp[keep]
    assert st.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > P_MIN


CONTINUOUS = [
    ("standard_gamma", (0.3,), lambda: st.gamma(0.3)),
    ("standard_gamma", (1.0,), lambda: st.gamma(1.0)),
    ("standard_gamma", (40.0,), lambda: st.gamma(40.0)),
    ("gamma", (2.0, 3.0), lambda: st.gamma(2.0, scale=3.0)),
    ("gamma", (0.05, 1.0), lambda: st.gamma(0.05)),
    ("beta", (0.5, 2.0), lambda: st.beta(0.5, 2.0)),
    ("beta", (0.2, 0.3), lambda: st.beta(0.2, 0.3)),
    ("chisquare", (3,), lambda: st.chi2(3)),
    ("exponential", (2.0,), lambda: st.expon(scale=2.0)),
    ("standard_exponential", (), lambda: st.expon()),
    ("laplace", (1.0, 2.0), lambda: st.laplace(1.0, 2.0)),
    ("logistic", (1.0, 2.0), lambda: st.logistic(1.0, 2.0)),
    ("lognormal", (0.5, 0.7), lambda: st.lognorm(0.7, scale=np.exp(0.5))),
]


@pytest.mark.parametrize("name,args,dist", CONTINUOUS, ids=lambda v: v if isinstance(v, str) else None)
def test_continuous_match_scipy(name, args, dist):
    x = getattr(T.random.default_rng(11), name)(*args, size=N)
    assert x.shape == (N,) and x.dtype == T.float64
    _ks(x.numpy(), dist().cdf)


@pytest.mark.parametrize("name,args,dist,lo,hi", [
    ("poisson", (3.5,), lambda: st.poisson(3.5), 0, 20),
    ("poisson", (70.0,), lambda: st.poisson(70.0), 30, 120),      # PTRS
    ("binomial", (20, 0.3), lambda: st.binom(20, 0.3), 0, 20),     # inversion
    ("binomial", (1000, 0.7), lambda: st.binom(1000, 0.7), 600, 800),   # BTRS, p > 1/2 flipped
    ("geometric", (0.3,), lambda: st.geom(0.3), 1, 40),
])
def test_discrete_match_scipy(name, args, dist, lo, hi):
    x = getattr(T.random.default_rng(5), name)(*args, size=N)
    assert x.dtype == T.int64
    _chi(x.numpy(), dist().pmf, lo, hi)


def test_standard_gamma_for_distributions():
    # tensor/distributions calls standard_gamma(alpha_tensor): alpha's shape, dtype and device
    a = T.asarray([[0.5, 1.0, 4.0]] * 2, dtype=T.float32)
    x = T.random.standard_gamma(a)
    assert x.shape == (2, 3) and x.dtype == T.float32 and bool(T.all(x > 0))
    assert T.random.standard_gamma(0.0, size=3).numpy().tolist() == [0.0, 0.0, 0.0]   # NumPy: 0
    g = T.random.Generator(3)
    np.testing.assert_array_equal(T.random.gamma(2.0, size=4, generator=g).numpy(),
                                  T.random.Generator(3).gamma(2.0, size=4).numpy())
    with pytest.raises(TypeError, match="generator"):
        T.random.gamma(2.0, generator=5)


def test_scalar_size_none_and_broadcast():
    g = T.random.default_rng(0)
    assert g.gamma(2.0).shape == () and g.poisson(3.0).shape == ()
    assert g.poisson([1.0, 50.0], size=(3, 2)).shape == (3, 2)
    assert g.beta(T.asarray([1.0, 2.0]), 3.0).shape == (2,)
    with pytest.raises(ValueError, match="broadcast"):
        g.gamma([1.0, 2.0], size=(3,))


def test_dirichlet_multinomial_multivariate_normal():
    g = T.random.default_rng(2)
    d = g.dirichlet([0.5, 1.0, 2.0], N).numpy()
    assert d.shape == (N, 3) and np.allclose(d.sum(1), 1.0)
    _ks(d[:, 0], st.beta(0.5, 3.0).cdf)
    m = g.multinomial(10, [0.2, 0.3, 0.5], size=N).numpy()
    assert m.shape == (N, 3) and (m.sum(1) == 10).all()
    _chi(m[:, 1], st.binom(10, 0.3).pmf, 0, 10)
    _chi(m[:, 2], st.binom(10, 0.5).pmf, 0, 10)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    x = g.multivariate_normal([1.0, 2.0], cov, N).numpy()
    assert x.shape == (N, 2)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.08)
    _ks((x[:, 0] - 1.0) / np.sqrt(2.0), st.norm().cdf)
    y = g.multivariate_normal([0.0, 0.0], [[1.0, 1.0], [1.0, 1.0]], 100).numpy()   # singular PSD
    np.testing.assert_allclose(y[:, 0], y[:, 1], atol=1e-7)


def test_choice_and_shuffle():
    g = T.random.default_rng(4)
    p = [0.1, 0.2, 0.3, 0.4, 0.0]
    c = g.choice(5, N, p=p).numpy()
    _chi(c, lambda k: np.asarray(p)[k], 0, 4)
    assert sorted(g.choice(10, 10, replace=False).numpy().tolist()) == list(range(10))
    w = g.choice(5, 3, replace=False, p=[0.1, 0.2, 0.3, 0.2, 0.2]).numpy()
    assert len(set(w.tolist())) == 3
    assert g.choice(T.arange(12).reshape(3, 4), 2, axis=1).shape == (3, 2)
    assert g.choice(5).shape == () and g.choice(5, (2, 3)).shape == (2, 3)
    x = T.arange(12).reshape(6, 2)
    g.shuffle(x)
    rows = x.numpy()
    assert sorted(rows[:, 0].tolist()) == [0, 2, 4, 6, 8, 10] and (rows[:, 1] == rows[:, 0] + 1).all()
    # without replacement with p: first draws follow p (the first pick of each draw)
    first = np.array([g.choice(3, 1, replace=False, p=[0.6, 0.3, 0.1]).numpy()[0] for _ in range(300)])
    assert abs((first == 0).mean() - 0.6) < 0.1


@pytest.mark.parametrize("call,match", [
    (lambda g: g.standard_gamma(-1.0), "shape"),
    (lambda g: g.gamma(1.0, -2.0), "scale"),
    (lambda g: g.beta(0.0, 1.0), "a must be positive"),
    (lambda g: g.exponential(-1.0), "scale"),
    (lambda g: g.poisson(-1.0), "lam"),
    (lambda g: g.binomial(5, 1.5), "p must be"),
    (lambda g: g.binomial(-1, 0.5), "n must be"),
    (lambda g: g.geometric(0.0), "p must be"),
    (lambda g: g.chisquare(0.0), "df"),
    (lambda g: g.dirichlet([1.0, -1.0]), "alpha"),
    (lambda g: g.multinomial(5, [0.6, 0.6, 0.1]), "sum"),
    (lambda g: g.choice(3, p=[0.5, 0.4, 0.3]), "do not sum to 1"),
    (lambda g: g.choice(3, p=[1.5, -0.5, 0.0]), "non-negative"),
    (lambda g: g.choice(3, 4, replace=False), "larger sample"),
    (lambda g: g.choice(3, 2, replace=False, p=[1.0, 0.0, 0.0]), "non-zero"),
    (lambda g: g.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]], check_valid="raise"),
     "positive-semidefinite"),
    (lambda g: g.lognormal(0.0, -1.0), "sigma"),
])
def test_bad_parameters_raise(call, match):
    with pytest.raises(ValueError, match=match):
        call(T.random.default_rng(0))


def test_same_draws_on_cuda(device):
    if device == "cpu":
        pytest.skip("compares the cuda draws with the cpu's")
    for name, args in [("standard_gamma", (0.5, (50,))), ("binomial", (30, 0.4, (40,))),
                       ("choice", (7, (5,))), ("geometric", (0.2, (30,))),
                       ("multivariate_normal", ([0.0, 1.0], [[1.0, 0.3], [0.3, 2.0]], (4,)))]:
        a = getattr(T.random.default_rng(5), name)(*args).numpy()
        b = getattr(T.random.default_rng(5), name)(*args, device="cuda")
        assert b.device.type == "cuda"
        np.testing.assert_allclose(b.numpy(), a, rtol=1e-12, atol=1e-15)
    lam = T.asarray([2.0, 40.0])
    np.testing.assert_array_equal(T.random.default_rng(5).poisson(lam.to("cuda"), (20, 2)).numpy(),
                                  T.random.default_rng(5).poisson(lam, (20, 2)).numpy())
    x = T.arange(6, device="cuda")
    T.random.default_rng(1).shuffle(x)
    y = T.arange(6)
    T.random.default_rng(1).shuffle(y)
    assert x.numpy().tolist() == y.numpy().tolist()


# ---------------------------------------------------------------- fixes in tensor/random.py

def test_normal_uniform_array_parameters():
    # caught: normal([0, 10], 1) raised TypeError (float() of a list); NumPy broadcasts
    g = T.random.default_rng(0)
    x = g.normal([0.0, 100.0], [1.0, 0.5], size=(N, 2)).numpy()
    _ks(x[:, 0], st.norm().cdf)
    _ks(x[:, 1], st.norm(100.0, 0.5).cdf)
    u = g.uniform([0.0, 10.0], 11.0, size=(N, 2)).numpy()
    _ks(u[:, 1], st.uniform(10.0, 1.0).cdf)
    assert (u[:, 0] >= 0).all() and (u[:, 0] < 11).all()
    h = g.uniform([0.0, 1.0], [1.0, 2.0], size=(N, 2), dtype=T.float16).numpy()
    assert (h < np.array([1.0, 2.0], np.float16)).all()   # float16 rounding never reaches high
    with pytest.raises(ValueError, match="scale"):
        g.normal([0.0], -1.0)
    with pytest.raises(ValueError, match="low <= high"):
        g.uniform([2.0], 1.0)


def test_integers_endpoint():
    # caught: integers(..., endpoint=True) was a TypeError
    g = T.random.default_rng(0)
    x = g.integers(3, endpoint=True, size=4000).numpy()
    assert set(x.tolist()) == {0, 1, 2, 3}
    top = g.integers(2**63 - 1, 2**63 - 1, endpoint=True, size=2).numpy()
    assert top.tolist() == [2**63 - 1] * 2
    assert set(g.integers(0, 255, size=3000, dtype=T.uint8, endpoint=True).numpy().tolist()) \
        == set(range(256))


def test_huge_seeds_are_distinct_streams():
    # caught: Generator(2**64 + k) silently drew Generator(k)'s numbers (the seed was masked)
    base = T.random.Generator(0).rand(4).numpy()
    for s in (2**64, 2**200, -2**70):
        assert not np.array_equal(T.random.Generator(s).rand(4).numpy(), base)
    assert not np.array_equal(T.random.Generator(2**70).rand(4).numpy(),
                              T.random.Generator(-2**70).rand(4).numpy())
    # seeds in [-2**63, 2**64) keep their (PyTorch-compatible) wrapping
    np.testing.assert_array_equal(T.random.Generator(-1).rand(3).numpy(),
                                  T.random.Generator(2**64 - 1).rand(3).numpy())
    g = T.random.Generator(2**100 + 7)
    state = g.get_state()
    a = g.gamma(2.0, size=5).numpy()
    g.set_state(state)
    np.testing.assert_array_equal(g.gamma(2.0, size=5).numpy(), a)


def test_integers_array_bounds_and_default_rng_passthrough():
    # caught: integers([1, 5], [3, 10]) was a TypeError (NumPy broadcasts the bounds);
    # default_rng(generator) was a TypeError (NumPy returns the generator itself)
    g = T.random.default_rng(0)
    assert T.random.default_rng(g) is g
    x = g.integers([1, 5], [3, 10], size=(N, 2)).numpy()
    _chi(x[:, 0], lambda k: np.where((k >= 1) & (k < 3), 0.5, 0.0), 1, 2)
    _chi(x[:, 1], lambda k: np.where((k >= 5) & (k < 10), 0.2, 0.0), 5, 9)
    big = g.integers([-2**63], [2**62], size=30000).numpy()   # span 3 * 2**62: no modulo bias
    assert abs((big < -2**63 + 2**62).mean() - 1 / 3) < 0.02
    u8 = g.integers(T.asarray([0, 250]), 255, dtype=T.uint8, endpoint=True, size=(2000, 2)).numpy()
    assert u8.dtype == np.uint8 and u8[:, 1].min() == 250 and u8[:, 1].max() == 255
    with pytest.raises(ValueError, match="empty range"):
        g.integers([3], [3])
    with pytest.raises(ValueError, match="uint8"):
        g.integers([0], [300], dtype=T.uint8)


def test_integers_array_bounds_on_cuda(device):
    lo, hi = T.asarray([0, -5], device=device), T.asarray([7, 5], device=device)
    a = T.random.default_rng(9).integers(lo, hi, size=(50, 2))
    b = T.random.default_rng(9).integers(lo.to("cpu"), hi.to("cpu"), size=(50, 2))
    assert a.device.type == device
    np.testing.assert_array_equal(a.numpy(), b.numpy())
