"""tensor.distributions against torch.distributions: KL pairs across families, transforms (shapes,
domains, caching, sign), constraints and dtype preservation. Each test here failed before its fix."""
import math

import numpy as np
import pytest

import tensor as T
import tensor.distributions as D
from tensor.distributions import constraints

torch = pytest.importorskip("torch")
TD = torch.distributions


def close(a, b, rtol=1e-7, atol=1e-10):
    a = a.numpy() if hasattr(a, "numpy") and not isinstance(a, np.ndarray) else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def ours(x, dtype=np.float64):
    return T.asarray(np.asarray(x, dtype=dtype))


def theirs(x, dtype=np.float64):
    return torch.tensor(np.asarray(x, dtype=dtype))


# ---- dtype ----------------------------------------------------------------------------------------

def test_studentt_variance_keeps_float32():
    # where(df > 1, inf, nan) of two Python floats was float64 and promoted the variance
    df = np.array([0.5, 1.5, 3.0], np.float32)
    d = D.StudentT(ours(df, np.float32), ours(0.0, np.float32), ours(2.0, np.float32))
    t = TD.StudentT(theirs(df, np.float32), theirs(0.0, np.float32), theirs(2.0, np.float32))
    assert d.variance.dtype == T.float32 and d.stddev.dtype == T.float32
    close(d.variance, t.variance)


# ---- KL across families ---------------------------------------------------------------------------

def _make(name, lib, shape, seed):
    r = np.random.default_rng(seed)
    M, a = (D, ours) if lib == "o" else (TD, theirs)
    pos = lambda: a(r.uniform(0.6, 2.5, shape))   # noqa: E731
    real = lambda: a(r.normal(size=shape))        # noqa: E731
    if name == "Normal":
        return M.Normal(real(), pos())
    if name == "Laplace":
        return M.Laplace(real(), pos())
    if name == "Exponential":
        return M.Exponential(pos())
    if name == "Gamma":
        return M.Gamma(pos(), pos())
    if name == "Beta":
        return M.Beta(pos(), pos())
    if name == "Uniform":   # inside [0, 1] in one element, past it in the others
        lo = np.array([0.0, 0.2, -0.5])[:shape[-1]] * np.ones(shape)
        hi = np.array([0.7, 1.0, 1.5])[:shape[-1]] * np.ones(shape)
        return M.Uniform(a(lo), a(hi))
    if name == "UniformPos":
        lo = r.uniform(0.0, 0.5, shape)
        lo.flat[0] = 0.0
        return M.Uniform(a(lo), a(lo + r.uniform(0.1, 2, shape)))
    if name == "Bernoulli":
        p = r.uniform(0.1, 0.9, shape)
        p.flat[0], p.flat[-1] = 0.0, 1.0
        return M.Bernoulli(a(p))
    if name == "Poisson":
        return M.Poisson(pos())
    if name == "Binomial":
        return M.Binomial(a(np.full(shape, 4.0)), a(r.uniform(0.1, 0.9, shape)))
    raise KeyError(name)


_CROSS = [("Normal", "Laplace"), ("Laplace", "Normal"), ("Gamma", "Normal"), ("Beta", "Normal"),
          ("Beta", "Exponential"), ("Beta", "Gamma"), ("Beta", "Uniform"), ("Uniform", "Beta"),
          ("UniformPos", "Exponential"), ("UniformPos", "Gamma"), ("Uniform", "Gamma"),
          ("Uniform", "Exponential"), ("Bernoulli", "Poisson"),
          ("Normal", "Beta"), ("Normal", "Exponential"), ("Normal", "Gamma"), ("Normal", "Uniform"),
          ("Laplace", "Beta"), ("Laplace", "Exponential"), ("Laplace", "Gamma"), ("Laplace", "Uniform"),
          ("Exponential", "Beta"), ("Exponential", "Uniform"), ("Gamma", "Beta"), ("Gamma", "Uniform"),
          ("Poisson", "Bernoulli"), ("Poisson", "Binomial")]


@pytest.mark.parametrize("pn,qn", _CROSS)
def test_kl_cross_family_pairs_match_torch(pn, qn):
    # these pairs raised NotImplementedError (PyTorch registers each of them)
    for shape_p, shape_q in [((3,), (3,)), ((2, 3), (3,))]:
        p, q = _make(pn, "o", shape_p, 1), _make(qn, "o", shape_q, 2)
        tp, tq = _make(pn, "t", shape_p, 1), _make(qn, "t", shape_q, 2)
        kl = D.kl_divergence(p, q)   # (ours broadcasts; torch's masks need equal shapes)
        shape = torch.broadcast_shapes(tp.batch_shape, tq.batch_shape)
        ref = TD.kl_divergence(tp.expand(shape), tq.expand(shape))
        close(kl, ref, rtol=1e-9, atol=1e-12)


def test_kl_cross_family_against_monte_carlo():
    # a check that does not lean on PyTorch's formulas: E_p[log p - log q] over 200000 draws
    T.random.seed(3)
    pairs = [(D.Normal(ours(0.3), ours(0.8)), D.Laplace(ours(-0.2), ours(1.3))),
             (D.Beta(ours(2.0), ours(3.0)), D.Gamma(ours(2.5), ours(1.5))),
             (D.Uniform(ours(0.1), ours(0.7)), D.Beta(ours(0.7), ours(2.0))),
             (D.Uniform(ours(0.0), ours(2.0)), D.Gamma(ours(1.5), ours(0.5)))]
    for p, q in pairs:
        x = p.sample((200000,))
        d = (p.log_prob(x) - q.log_prob(x)).numpy()
        kl = float(D.kl_divergence(p, q))
        assert abs(d.mean() - kl) < 4 * d.std() / math.sqrt(d.size) + 1e-9, (type(p), type(q), d.mean(), kl)


def test_kl_categorical_onehot_mixed_is_refused():
    # OneHotCategorical subclasses Categorical here: the pair fell to Categorical's KL silently
    p = D.Categorical(ours([0.2, 0.8]))
    q = D.OneHotCategorical(ours([0.5, 0.5]))
    for a, b in [(p, q), (q, p)]:
        with pytest.raises(NotImplementedError, match="one-hot"):
            D.kl_divergence(a, b)
    assert float(D.kl_divergence(q, D.OneHotCategorical(ours([0.2, 0.8])))) > 0   # (still registered)


# ---- transforms -----------------------------------------------------------------------------------

def test_affine_transform_parameters_widen_the_batch():
    # batch_shape ignored the transform's (3,) loc: () with draws of (3,), and sample((2,)) raised
    loc, scale = [1.0, -2.0, 3.0], 0.5
    d = D.TransformedDistribution(D.Normal(ours(0.2), ours(1.5)), [D.AffineTransform(ours(loc), ours(scale))])
    t = TD.TransformedDistribution(TD.Normal(theirs(0.2), theirs(1.5)),
                                   [TD.AffineTransform(theirs(loc), theirs(scale))])
    assert d.batch_shape == tuple(t.batch_shape) == (3,)
    assert d.sample((2,)).shape == (2, 3) and d.rsample().shape == (3,)
    x = np.array([[0.5, -1.0, 2.0], [3.0, 0.0, -4.0]])
    close(d.log_prob(ours(x)), t.log_prob(theirs(x)))
    close(d.cdf(ours(x)), t.cdf(theirs(x)))
    e = d.expand((4, 3))
    assert e.batch_shape == (4, 3) and e.sample().shape == (4, 3)
    p = D.TransformedDistribution(D.Exponential(ours(1.0)), [D.PowerTransform(ours([0.5, 2.0]))])
    assert p.batch_shape == (2,) and p.sample((5,)).shape == (5, 2)


def test_affine_transform_shapes_and_event_domain():
    a = D.AffineTransform(ours([1.0, 2.0, 3.0]), 2.0, event_dim=1)
    assert a.forward_shape((4, 3)) == (4, 3) and a.inverse_shape((1, 3)) == (1, 3)
    with pytest.raises(ValueError):
        a.forward_shape((5,))
    assert a.domain.event_dim == a.codomain.event_dim == 1
    assert D.AffineTransform(0.0, 2.0).domain.event_dim == 0
    d = D.TransformedDistribution(D.Normal(ours(np.zeros((2, 3))), ours(1.0)), [a])
    assert d.support.event_dim == 1 and d.event_shape == (3,)


def test_compose_transform_domain_covers_its_event_dims():
    # a later part acting on a vector makes the first part's domain a vector one (PyTorch's)
    cases = [([D.AffineTransform(1.0, -2.0), D.StickBreakingTransform()], 1, 1),
             ([D.StickBreakingTransform(), D.ExpTransform()], 1, 1),
             ([D.ReshapeTransform((6,), (2, 3)), D.ExpTransform()], 1, 2),
             ([D.ExpTransform(), D.ReshapeTransform((6,), (2, 3)), D.SoftmaxTransform()], 1, 2),
             ([D.CorrCholeskyTransform(), D.ExpTransform()], 1, 2)]
    for parts, dom, cod in cases:
        c = D.ComposeTransform(parts)
        tc = TD.ComposeTransform([_torch_twin(p) for p in parts])
        assert (c.domain.event_dim, c.codomain.event_dim) == (dom, cod) == \
            (tc.domain.event_dim, tc.codomain.event_dim), parts


def _torch_twin(p):
    if isinstance(p, D.ReshapeTransform):
        return TD.ReshapeTransform(p.in_shape, p.out_shape)
    if isinstance(p, D.AffineTransform):
        return TD.AffineTransform(p.loc, p.scale)
    return getattr(TD, type(p).__name__)()


def test_cat_stack_transform_domains():
    c = D.CatTransform([D.ExpTransform(), D.SigmoidTransform()], dim=-1, lengths=[2, 1])
    x = ours([[0.5, -1.0, 2.0]])
    y = c(x)
    assert bool(T.all(c.codomain.check(y))) and bool(T.all(c.domain.check(x)))
    assert c.codomain.check(ours([[1.0, 1.0, 2.0]])).tolist() == [[True, True, False]]
    s = D.StackTransform([D.ExpTransform(), D.identity_transform], dim=0)
    assert s.codomain.check(ours([[-1.0], [-1.0]])).tolist() == [[False], [True]]


def test_lower_cholesky_and_positive_definite_transforms_are_not_bijective():
    # they drop the strict upper triangle (PyTorch: bijective False); biject_to must not offer them
    assert D.LowerCholeskyTransform().bijective is False
    assert D.PositiveDefiniteTransform().bijective is False
    assert TD.LowerCholeskyTransform().bijective is False
    with pytest.raises(NotImplementedError):
        D.biject_to(constraints.lower_cholesky)


def test_transform_cache_returns_the_forward_input():
    # cache_size was refused (TypeError); with it, inv(y) of the last y is the x that made it
    for tr in [D.TanhTransform(cache_size=1), D.ExpTransform(cache_size=1),
               D.AffineTransform(1.0, 2.0, cache_size=1), D.PowerTransform(2.0, cache_size=1),
               D.ComposeTransform([D.TanhTransform(), D.AffineTransform(0.0, 3.0)], cache_size=1)]:
        x = ours([19.0, 25.0])   # tanh(x) rounds to 1: atanh could not recover x
        y = tr(x)
        assert tr.inv(y) is x and tr(x) is y
    t = D.ExpTransform(cache_size=1)
    y = t.inv(ours([2.0]))
    assert t(y).numpy().tolist() == [2.0]
    assert D.ExpTransform().with_cache(1)._cache_size == 1
    assert D.ExpTransform().inv.with_cache(1).inv._cache_size == 1
    with pytest.raises(ValueError, match="cache_size"):
        D.ExpTransform(cache_size=2)


def test_tanh_squashed_normal_log_prob_of_its_own_draws():
    # the SAC policy: with a cache, log_prob(draw) uses the pre-tanh draw, exact where tanh rounds to 1
    loc, scale = [0.0, 9.0, 20.0], [1.0, 0.5, 0.1]
    base = D.Normal(ours(loc), ours(scale))
    d = D.TransformedDistribution(base, [D.TanhTransform(cache_size=1)])
    for draw in ("rsample", "sample"):
        T.random.seed(5)
        x = getattr(base, draw)((5,)).numpy()
        T.random.seed(5)
        y = getattr(d, draw)((5,))
        assert (y.numpy()[:, 2] == 1.0).all()
        xt = torch.tensor(x)
        ref = TD.Normal(theirs(loc), theirs(scale)).log_prob(xt) - TD.TanhTransform().log_abs_det_jacobian(
            xt, torch.tanh(xt))
        close(d.log_prob(y), ref, rtol=1e-9)


def test_sign_is_undefined_for_a_folding_transform():
    # AbsTransform claimed sign +1, so TransformedDistribution.cdf returned the base cdf (Phi(y),
    # not 2 Phi(y) - 1) silently; PyTorch raises NotImplementedError
    d = D.TransformedDistribution(D.Normal(ours(0.0), ours(1.0)), [D.AbsTransform()])
    with pytest.raises(NotImplementedError, match="sign"):
        d.cdf(ours(0.5))
    with pytest.raises(NotImplementedError):
        _ = D.StickBreakingTransform().sign
    assert D.ComposeTransform([D.ExpTransform(), D.AffineTransform(0.0, -2.0)]).sign == -1
    assert D.SoftplusTransform().sign == 1 and D.identity_transform.sign == 1
    h = D.HalfNormal(ours(1.0))   # (its own cdf: 2 Phi(y) - 1)
    close(h.cdf(ours(0.5)), TD.HalfNormal(theirs(1.0)).cdf(theirs(0.5)))


# ---- constraints ----------------------------------------------------------------------------------

def test_positive_definite_rejects_singular_matrices():
    # eigvalsh's +1e-16 for a zero eigenvalue passed as positive definite
    m = np.array([[[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                  [[1e-20, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]],
                  [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, -1.0]]])
    assert constraints.positive_definite.check(ours(m)).tolist() == [False, True, False]
    assert constraints.positive_definite.check(ours(m)).tolist() == \
        torch.distributions.constraints.positive_definite.check(theirs(m)).tolist()
    with pytest.raises(ValueError, match="covariance_matrix"):
        D.MultivariateNormal(ours([0.0, 0.0, 0.0]), covariance_matrix=ours(m[0]), validate_args=True)


def test_transform_to_positive_semidefinite():
    t = D.transform_to(constraints.positive_semidefinite)
    x = ours(np.random.default_rng(0).normal(size=(2, 3, 3)))
    y = t(x)
    assert bool(T.all(constraints.positive_semidefinite.check(y)))


def test_event_constraints_on_empty_batches():
    # reshape(..., -1) of a 0-size batch raised inside validation
    d = D.Dirichlet(ours(np.ones((0, 3))), validate_args=True)
    assert d.sample((2,)).shape == (2, 0, 3) and d.log_prob(ours(np.full((0, 3), 1 / 3))).shape == (0,)
    m = D.MultivariateNormal(ours(np.zeros((0, 2))), ours(np.eye(2)), validate_args=True)
    assert m.log_prob(ours(np.zeros((2, 1, 2)))).shape == (2, 0)
    i = D.Independent(D.Normal(ours(np.zeros((0, 3))), ours(1.0)), 1, validate_args=True)
    assert i.log_prob(ours(np.zeros((0, 3)))).shape == (0,) and i.entropy().shape == (0,)
    assert constraints.lower_cholesky.check(ours(np.zeros((0, 2, 2)))).shape == (0,)


# ---- numerics at extreme parameters ---------------------------------------------------------------

def test_geometric_entropy_of_tiny_probs():
    # entropy went through logits clipped at eps: 1.2e5 instead of 28.6 for p = 1e-12 in float32
    p = np.array([1e-12, 1e-8, 0.3, 1.0])
    ref = np.array([-(x * math.log(x) + (1 - x) * math.log1p(-x)) / x if x < 1 else 0.0 for x in p])
    for dt, rtol in [(np.float64, 1e-12), (np.float32, 1e-6)]:
        h = D.Geometric(ours(p, dt)).entropy()
        assert h.dtype == (T.float32 if dt == np.float32 else T.float64)
        np.testing.assert_allclose(h.numpy(), ref, rtol=rtol, atol=1e-12)
    lg = np.array([-50.0, -3.0, 4.0])   # from logits: the exact p = sigmoid(logits)
    q = 1 / (1 + np.exp(-lg))
    ref = -(q * np.log(q) + (1 - q) * np.log1p(-q)) / q
    np.testing.assert_allclose(D.Geometric(logits=ours(lg)).entropy().numpy(), ref, rtol=1e-12)


def test_lbeta_and_digamma_step_for_large_arguments():
    from tensor.distributions._special import digamma_half_step, lbeta
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    a = np.array([0.5, 0.5, 1e-3, 3.0, 29.9, 30.0, 1e6, 5e14, 1e3, 7.5, 1e10])
    b = np.array([0.5, 5e14, 1e-3, 4.0, 40.0, 2.5, 1e6, 0.5, 1e-2, 1e5, 1e10])
    ref = np.array([float(mpmath.log(mpmath.beta(mpmath.mpf(x), mpmath.mpf(y)))) for x, y in zip(a, b)])
    np.testing.assert_allclose(lbeta(ours(a), ours(b)).numpy(), ref, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(lbeta(ours(a, np.float32), ours(b, np.float32)).numpy(), ref, rtol=3e-7)
    assert lbeta(ours([2.0], np.float32), 0.5).dtype == T.float32
    x = np.array([1e-3, 0.5, 3.0, 29.9, 30.0, 150.0, 1e4, 1e8, 5e14])
    ref = np.array([float(mpmath.digamma(mpmath.mpf(v) + 0.5) - mpmath.digamma(mpmath.mpf(v))) for v in x])
    np.testing.assert_allclose(digamma_half_step(ours(x)).numpy(), ref, rtol=1e-13)


def test_studentt_with_a_large_df_is_the_normal():
    # lgamma(df/2) - lgamma((df+1)/2) cancelled to rounding noise: log_prob off by 4 at df = 1e15
    # (float64) and by units at df = 1e6 (float32); entropy likewise
    for dt, df in [(np.float64, 1e15), (np.float32, 1e7)]:
        d = D.StudentT(ours([df], dt), ours(0.3, dt), ours(2.0, dt))
        n = TD.Normal(theirs(0.3), theirs(2.0))
        x = np.array([[0.5], [3.0], [-7.0]])
        close(d.log_prob(ours(x, dt)).astype(T.float64), n.log_prob(theirs(x)), rtol=1e-6)
        close(d.entropy().astype(T.float64), n.entropy().expand(1), rtol=1e-6)
        assert d.log_prob(ours(x, dt)).dtype == d.entropy().dtype == d.df.dtype
    d = D.StudentT(ours([0.7, 3.0, 45.0, 1e4]))   # ordinary dfs: still PyTorch's values and gradients
    t = TD.StudentT(theirs([0.7, 3.0, 45.0, 1e4]))
    close(d.log_prob(ours(1.3)), t.log_prob(theirs(1.3)), rtol=1e-12)
    close(d.entropy(), t.entropy(), rtol=1e-10)
    df = T.tensor(np.array([0.7, 3.0, 45.0]), requires_grad=True)
    (D.StudentT(df).log_prob(ours(1.3)).sum() + D.StudentT(df).entropy().sum()).backward()
    mp = pytest.importorskip("mpmath")   # (PyTorch's own gradient is off by 2e-9 here: its digamma)
    mp.mp.dps = 30

    def both(v):
        x = mp.mpf("1.3")
        lb = mp.log(mp.beta(v / 2, mp.mpf(0.5)))
        lp = -(v + 1) / 2 * mp.log1p(x * x / v) - mp.log(v) / 2 - lb
        return lp + (v + 1) / 2 * (mp.digamma((v + 1) / 2) - mp.digamma(v / 2)) + mp.log(v) / 2 + lb
    ref = [float(mp.diff(both, mp.mpf(v))) for v in ("0.7", "3", "45")]
    close(df.grad, np.array(ref), rtol=1e-12)


def test_beta_and_fisher_snedecor_with_large_concentrations():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    a, b, x = 1e4, 1e4, 0.5
    ref = float((a - 1) * mpmath.log(x) + (b - 1) * mpmath.log(1 - x) - mpmath.log(mpmath.beta(a, b)))
    got = float(D.Beta(ours(a, np.float32), ours(b, np.float32)).log_prob(ours(x, np.float32)))
    assert abs(got - ref) < 2e-3   # (the xlogy terms' own float32 rounding; the lgammas were off by 8e-3)
    d1 = d2 = 1e8
    h1, h2 = d1 / 2, d2 / 2
    lb = mpmath.log(mpmath.beta(h1, h2))
    ref = float(h1 * mpmath.log(d1 / d2) - (h1 + h2) * mpmath.log1p(d1 / d2) - lb)
    close(D.FisherSnedecor(ours(d1), ours(d2)).log_prob(ours(1.0)), np.array(ref), rtol=1e-9)


# ---- sampling -------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,p", [(7.0, 0.2), (30.0, 0.5), (45.0, 0.9), (400.0, 0.3)])
def test_binomial_draws_follow_the_pmf(n, p):
    # chi-square of 40000 draws against the exact pmf (from log_prob), both samplers' regimes
    T.random.seed(11)
    d = D.Binomial(ours(n), ours(p))
    x = d.sample((40000,)).numpy()
    assert (x == np.floor(x)).all() and x.min() >= 0 and x.max() <= n
    ks = np.arange(int(n) + 1)
    expected = np.exp(d.log_prob(ours(ks.astype(np.float64))).numpy()) * x.size
    counts = np.bincount(x.astype(int), minlength=ks.size)
    keep = expected > 5
    chi2 = ((counts[keep] - expected[keep]) ** 2 / expected[keep]).sum()
    dof = keep.sum() - 1
    assert chi2 < dof + 5 * math.sqrt(2 * dof), (chi2, dof)   # (about 5 sigma of the chi-square)


def test_binomial_sampling_cost_does_not_grow_with_total_count():
    # draws were sums of total_count Bernoulli draws: total_count = 1e9 asked for 8e12 bytes
    T.random.seed(12)
    n = np.array([[0.0], [5.0], [1e6], [1e9]])
    p = np.array([0.0, 1e-6, 0.4, 0.97, 1.0])
    d = D.Binomial(ours(n), ours(p))
    x = d.sample((4000,)).numpy()
    assert x.shape == (4000, 4, 5) and (x >= 0).all() and (x <= n).all() and (x == np.floor(x)).all()
    mean, var = (n * p), n * p * (1 - p)
    se = np.sqrt(var / x.shape[0])
    assert (np.abs(x.mean(0) - mean) <= 5 * se + 1e-12).all()
    ok = var > 1
    np.testing.assert_allclose(x.var(0)[ok], var[ok], rtol=0.15)
    assert x[:, 3, 0].max() == 0 and x[:, 3, 4].min() == 1e9   # p = 0 and p = 1 exactly
    f = D.Binomial(ours([3.0, 50.0], np.float32), ours([0.1, 0.5], np.float32)).sample((2,))
    assert f.dtype == T.float32 and f.shape == (2, 2)


def test_gamma_and_poisson_with_large_parameters():
    # a log(rate x) - lgamma(a) and k log(rate) - lgamma(k + 1): each term ~a log a, their
    # difference lost units in float32 (Gamma(1e6, 1e6).log_prob(1) was 7, not 5.99)
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    for a, r, x in [(30.0, 2.0, 15.0), (1e6, 1e6, 1.0), (1e3, 2.0, 400.0)]:
        ref = float(a * mp.log(r) + (a - 1) * mp.log(x) - r * x - mp.loggamma(a))
        ref_h = float(a - mp.log(r) + mp.loggamma(a) + (1 - a) * mp.digamma(a))
        ref_ih = float(a + mp.log(r) + mp.loggamma(a) - (1 + a) * mp.digamma(a))
        for dt, tol in [(np.float64, 1e-12), (np.float32, 3e-6)]:
            g = D.Gamma(ours([a], dt), ours(r, dt))
            assert abs(float(g.log_prob(ours(x, dt))[0]) - ref) < tol * max(1, abs(ref)) * 10
            assert abs(float(g.entropy()[0]) - ref_h) < tol * max(1, abs(ref_h)) * 10
            assert abs(float(D.InverseGamma(ours([a], dt), ours(r, dt)).entropy()[0]) - ref_ih) < \
                tol * max(1, abs(ref_ih)) * 10
    for k, lam in [(30.0, 30.0), (1e4, 1e4), (1e10, 1e10), (100.0, 3.0)]:
        ref = float(k * mp.log(lam) - lam - mp.loggamma(k + 1))
        for dt, tol in [(np.float64, 1e-12), (np.float32, 3e-6)]:
            got = float(D.Poisson(ours([lam], dt)).log_prob(ours(k, dt))[0])
            assert abs(got - ref) < tol * max(1, abs(ref)) * 10, (k, lam, dt, got, ref)
    # the same values and gradients as PyTorch's in float64 on both sides of the switch (a, k = 30)
    a = np.array([0.5, 29.0, 30.0, 75.0, 400.0])
    x = np.array([0.0, 20.0, 31.0, 60.0, 390.0])
    oa, orate = T.tensor(a, requires_grad=True), T.tensor(np.full(5, 1.1), requires_grad=True)
    ta = torch.tensor(a, requires_grad=True)
    trate = torch.tensor(np.full(5, 1.1), requires_grad=True)
    og, tg = D.Gamma(oa, orate), TD.Gamma(ta, trate)
    ox, tx = ours(x[1:]), theirs(x[1:])
    close(og.log_prob(ours(x)), tg.log_prob(theirs(x)), rtol=1e-11)
    (og.log_prob(ox.reshape((4, 1))).sum() + og.entropy().sum()).backward()
    (tg.log_prob(tx.reshape(4, 1)).sum() + tg.entropy().sum()).backward()
    close(oa.grad, ta.grad, rtol=1e-9)
    close(orate.grad, trate.grad, rtol=1e-9)
    lam = T.tensor(np.array([3.0, 29.0, 31.0, 500.0]), requires_grad=True)
    tlam = torch.tensor([3.0, 29.0, 31.0, 500.0], dtype=torch.float64, requires_grad=True)
    k = np.array([[0.0], [29.0], [30.0], [480.0]])
    lp, tlp = D.Poisson(lam).log_prob(ours(k)), TD.Poisson(tlam).log_prob(theirs(k))
    close(lp, tlp, rtol=1e-11)
    lp.sum().backward()
    tlp.sum().backward()
    close(lam.grad, tlam.grad, rtol=1e-10)


def test_binomial_and_negative_binomial_with_large_counts():
    # lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) + k log p + (n - k) log q: terms ~n log n
    # whose sum is ~log n; float32 lost units (1e-2 at n = 1e3, 1 at n = 1e6), float64 1e-10
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40

    def ref_b(k, n, p):
        return float(mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1) + k * mp.log(p)
                     + (n - k) * mp.log1p(-mp.mpf(p)))

    def ref_nb(k, r, p):
        return float(mp.loggamma(r + k) - mp.loggamma(k + 1) - mp.loggamma(r) + k * mp.log(p)
                     + r * mp.log1p(-mp.mpf(p)))
    for dt, tol in [(np.float64, 1e-13), (np.float32, 4e-6)]:
        for k, n, p in [(3.0, 10.0, 0.2), (400.0, 1000.0, 0.3), (5e5, 1e6, 0.5), (2.0, 1e6, 1e-6)]:
            for kw in ({"probs": ours(p, dt)}, {"logits": ours(math.log(p / (1 - p)), dt)}):
                got = float(D.Binomial(ours(n, dt), **kw).log_prob(ours(k, dt)))
                ref = ref_b(k, n, p)
                assert abs(got - ref) <= tol * max(10, abs(ref)), (k, n, p, dt, got, ref)
        for k, r, p in [(3.0, 10.0, 0.2), (400.0, 1000.0, 0.3), (100.0, 0.5, 0.9), (2e3, 3e3, 0.4)]:
            got = float(D.NegativeBinomial(ours(r, dt), ours(p, dt)).log_prob(ours(k, dt)))
            ref = ref_nb(k, r, p)
            assert abs(got - ref) <= tol * max(10, abs(ref)), (k, r, p, dt, got, ref)
    # values and gradients as PyTorch's in float64 on both sides of the switch
    n, pr = np.array([10.0, 29.0, 40.0, 1000.0]), np.array([0.2, 0.45, 0.3, 0.7])
    k = np.array([[3.0], [20.0], [29.0], [700.0]])
    op, tp = T.tensor(pr, requires_grad=True), torch.tensor(pr, requires_grad=True)
    a = D.Binomial(ours(n), op, validate_args=False).log_prob(ours(k))
    b = TD.Binomial(theirs(n), tp, validate_args=False).log_prob(theirs(k))
    ok = np.isfinite(b.detach().numpy())
    close(a.numpy()[ok], b.detach().numpy()[ok], rtol=1e-11)
    T.where(ours(ok.astype(np.float64)) > 0, a, 0.0).sum().backward()
    b[torch.tensor(ok)].sum().backward()
    close(op.grad, tp.grad, rtol=1e-10)
    orr, trr = T.tensor(n, requires_grad=True), torch.tensor(n, requires_grad=True)
    a = D.NegativeBinomial(orr, ours(pr * 0.9)).log_prob(ours(k))
    b = TD.NegativeBinomial(trr, theirs(pr * 0.9)).log_prob(theirs(k))
    close(a, b, rtol=1e-11)
    a.sum().backward()
    b.sum().backward()
    close(orr.grad, trr.grad, rtol=1e-10)


def test_exponential_families_are_exponential_family_instances():
    # ExponentialFamily was a marker nothing derived from: isinstance(Normal(...), it) was False
    import inspect
    ours_ef = sorted(n for n in D.__all__ if inspect.isclass(getattr(D, n))
                     and issubclass(getattr(D, n), D.ExponentialFamily))
    torch_ef = sorted(n for n in dir(TD) if inspect.isclass(getattr(TD, n))
                      and issubclass(getattr(TD, n), TD.ExponentialFamily))
    assert ours_ef == torch_ef
    assert isinstance(D.Normal(ours(0.0), ours(1.0)), D.ExponentialFamily)
    assert not isinstance(D.Laplace(ours(0.0), ours(1.0)), D.ExponentialFamily)


def test_mixture_refuses_a_one_hot_mixing_distribution():
    # OneHotCategorical passed the Categorical check (a subclass here): sample() then failed deep
    # inside with a broadcast error; PyTorch refuses it when built
    comp = D.Normal(ours([0.0, 10.0]), ours([1.0, 1.0]))
    with pytest.raises(ValueError, match="MixtureSameFamily: mixture_distribution must be a Categorical"):
        D.MixtureSameFamily(D.OneHotCategorical(ours([0.3, 0.7])), comp)
    m = D.MixtureSameFamily(D.Categorical(ours([0.3, 0.7])), comp)
    assert m.sample((4,)).shape == (4,)
