"""tensor.distributions, continued: the gamma family (Gamma, Chi2, Beta, Dirichlet, StudentT) and
TransformedDistribution with its transforms, against closed forms in NumPy and torch.distributions
(where installed). (tests/test_distributions.py has the rest; this file keeps both under the line
budget.)"""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_distributions import LOC, POS, RNG, SCALE, V, _lgamma, close, t

import tensor as T
import tensor.distributions as D

# ---------------------------------------------------------------- the gamma family

_digamma = np.vectorize(lambda x: _np_digamma(x))


def _np_digamma(x):
    """psi(x): recurrence up to x >= 6, then the asymptotic series (|error| < 1e-12)."""
    acc = 0.0
    while x < 6:
        acc -= 1 / x
        x += 1
    f = 1 / (x * x)
    return acc + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f / 240)))


GA, GB = RNG.random(4) * 3 + 0.3, RNG.random(4) * 2 + 0.4


def test_gamma_family_closed_forms():
    x = POS
    g = D.Gamma(t(GA), t(GB))
    close(g.log_prob(t(x)), GA * np.log(GB) + (GA - 1) * np.log(x) - GB * x - _lgamma(GA))
    close(g.entropy(), GA - np.log(GB) + _lgamma(GA) + (1 - GA) * _digamma(GA), 1e-9)
    close(g.mean, GA / GB)
    close(g.variance, GA / GB ** 2)
    c = D.Chi2(t(GA * 2))
    close(c.log_prob(t(x)), GA * np.log(0.5) + (GA - 1) * np.log(x) - 0.5 * x - _lgamma(GA))
    close(c.df, GA * 2)
    u = x / (x.max() + 1)
    b = D.Beta(t(GA), t(GB))
    lbeta = _lgamma(GA) + _lgamma(GB) - _lgamma(GA + GB)
    close(b.log_prob(t(u)), (GA - 1) * np.log(u) + (GB - 1) * np.log1p(-u) - lbeta, 1e-9)
    close(b.mean, GA / (GA + GB))
    close(b.entropy(), lbeta - (GA - 1) * _digamma(GA) - (GB - 1) * _digamma(GB)
          + (GA + GB - 2) * _digamma(GA + GB), 1e-9)
    conc = np.stack([GA, GB, GA + GB])           # batch (3,), K = 4
    w = np.abs(V)
    w /= w.sum(-1, keepdims=True)
    d = D.Dirichlet(t(conc))
    assert d.batch_shape == (3,) and d.event_shape == (4,)
    close(d.log_prob(t(w)), ((conc - 1) * np.log(w)).sum(-1) + _lgamma(conc.sum(-1))
          - _lgamma(conc).sum(-1), 1e-9)
    close(d.mean, conc / conc.sum(-1, keepdims=True))
    s = D.StudentT(t(GA * 3), t(LOC), t(SCALE))
    nu = GA * 3
    y = (V - LOC) / SCALE
    close(s.log_prob(t(V)), _lgamma((nu + 1) / 2) - _lgamma(nu / 2) - 0.5 * np.log(nu * np.pi) - np.log(SCALE)
          - (nu + 1) / 2 * np.log1p(y * y / nu), 1e-9)
    var = s.variance.numpy()
    np.testing.assert_allclose(var[nu > 2], (SCALE ** 2 * nu / (nu - 2))[nu > 2])
    assert np.all(np.isinf(var[(nu > 1) & (nu <= 2)]))
    close(D.kl_divergence(D.Gamma(t(GA), t(GB)), D.Gamma(t(GB), t(GA))),
          (GA - GB) * _digamma(GA) - _lgamma(GA) + _lgamma(GB) + GB * (np.log(GB) - np.log(GA))
          + GA * (GA - GB) / GB, 1e-9)


@pytest.fixture
def gamma_sampler(monkeypatch):
    """tensor.random.standard_gamma when the build has it; else a NumPy stand-in, so the
    sampling plumbing (shapes, implicit gradients, moments) is still tested."""
    if not hasattr(T.random, "standard_gamma"):
        gen = np.random.default_rng(2024)
        monkeypatch.setattr(T.random, "standard_gamma",
                            lambda a: T.tensor(gen.standard_gamma(a.numpy()), dtype=a.dtype), raising=False)
    T.random.seed(3)


@pytest.mark.parametrize("make,mean,var", [
    (lambda: D.Gamma(t([0.4, 3.0]), t([2.0, 0.5])), [0.2, 6.0], [0.1, 12.0]),
    (lambda: D.Chi2(t([3.0])), [3.0], [6.0]),
    (lambda: D.Beta(t([2.0, 0.5]), t([3.0, 0.5])), [0.4, 0.5], [0.04, 0.125]),
    (lambda: D.StudentT(t([6.0]), t([1.0]), t([2.0])), [1.0], [6.0]),
], ids=["Gamma", "Chi2", "Beta", "StudentT"])
def test_gamma_family_sample_moments(gamma_sampler, make, mean, var):
    d = make()
    s = d.sample((40000,))
    assert s.shape == (40000,) + d.batch_shape
    np.testing.assert_allclose(s.numpy().mean(0), mean, rtol=0.05, atol=0.02)
    np.testing.assert_allclose(s.numpy().var(0), var, rtol=0.1, atol=0.01)
    dr = D.Dirichlet(t([[1.0, 2.0, 3.0]])).sample((20000,)).numpy()
    assert dr.shape == (20000, 1, 3)
    np.testing.assert_allclose(dr.sum(-1), 1.0)
    np.testing.assert_allclose(dr.mean(0)[0], [1 / 6, 2 / 6, 3 / 6], atol=0.01)


def test_gamma_rsample_implicit_gradient(gamma_sampler):
    """d x / d alpha of a Gamma(alpha, 1) draw at a fixed quantile, against mpmath-checked values
    (PyTorch's float64 approximation agrees to ~1e-4; this one to ~1e-10)."""
    alpha = T.tensor([0.1, 0.5, 1.0, 3.0, 30.0], requires_grad=True)
    x = D.Gamma(alpha, 1.0).rsample()
    x.sum().backward()
    from tensor.distributions.gamma import _standard_gamma_grad
    al = np.array([0.1, 0.5, 1.0, 3.0, 30.0])
    close(alpha.grad, _standard_gamma_grad(T.tensor(al), x.detach()).numpy())
    exact = _standard_gamma_grad(T.tensor(al), t([1e-3, 0.2, 1.5, 2.0, 33.0]))
    close(exact, [0.06490724738374096, 0.7940505663308434, 1.4309374423012802, 0.8565714220978067,
                  1.054254683510781], 1e-9)
    # through the rate: x / rate, an ordinary derivative; and the mean's gradient ~ E[dx/da] = 1/rate
    a = T.tensor([2.0], requires_grad=True)
    r = T.tensor([4.0], requires_grad=True)
    D.Gamma(a, r).rsample((20000,)).mean().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.25], rtol=0.03)
    np.testing.assert_allclose(r.grad.numpy(), [-2.0 / 16], rtol=0.03)
    c = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    D.Dirichlet(c).rsample((4,))[..., 0].sum().backward()
    assert np.all(np.isfinite(c.grad.numpy())) and c.grad.numpy()[0] > 0


@pytest.mark.parametrize("name,kw", [
    ("Gamma", dict(concentration=GA, rate=GB)), ("Chi2", dict(df=GA)),
    ("Beta", dict(concentration1=GA, concentration0=GB)),
    ("Dirichlet", dict(concentration=np.stack([GA, GB]))),
    ("StudentT", dict(df=GA * 2, loc=LOC, scale=SCALE)),
])
def test_gamma_family_against_torch(name, kw):
    torch = pytest.importorskip("torch")
    ours = getattr(D, name)(**{k: t(v) for k, v in kw.items()})
    ref = getattr(torch.distributions, name)(**{k: torch.tensor(v) for k, v in kw.items()})
    value = ref.sample((3,))
    close(ours.log_prob(T.tensor(value.numpy())), ref.log_prob(value).numpy(), 1e-8)
    for q in ("mean", "variance", "mode"):
        np.testing.assert_allclose(getattr(ours, q).numpy(), getattr(ref, q).numpy(), rtol=1e-9, atol=1e-12)
    close(ours.entropy(), ref.entropy().numpy(), 1e-9)
    if name in ("Gamma", "Chi2"):
        close(ours.cdf(T.tensor(value.numpy())), ref.cdf(value).numpy(), 1e-9)
    other = getattr(D, name)(**{k: t(v[::-1].copy()) for k, v in kw.items()})
    tother = getattr(torch.distributions, name)(**{k: torch.tensor(v[::-1].copy()) for k, v in kw.items()})
    if name != "StudentT":
        close(D.kl_divergence(ours, other), torch.distributions.kl_divergence(ref, tother).numpy(), 1e-9)
    if name == "Gamma":
        e, te = D.Exponential(t(GB)), torch.distributions.Exponential(torch.tensor(GB))
        close(D.kl_divergence(e, ours), torch.distributions.kl_divergence(te, ref).numpy(), 1e-9)
        close(D.kl_divergence(ours, e), torch.distributions.kl_divergence(ref, te).numpy(), 1e-9)


# ---------------------------------------------------------------- transforms

def _np_softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def test_tanh_squashed_normal_closed_form():
    """The policy-gradient case: y = tanh(x), x ~ N(mu, sigma): log p(y) = log N(atanh y) - log(1 - y^2)."""
    d = D.TransformedDistribution(D.Normal(t(LOC), t(SCALE)), [D.TanhTransform()])
    assert d.batch_shape == (4,) and d.event_shape == () and d.has_rsample
    y = np.tanh(V)
    x = np.arctanh(y)
    want = -(x - LOC) ** 2 / (2 * SCALE ** 2) - np.log(SCALE) - 0.5 * math.log(2 * math.pi) - np.log1p(-y * y)
    close(d.log_prob(t(y)), want, 1e-8)
    # a large pre-activation: the stable log|dy/dx| = 2 (log 2 - x - softplus(-2x)) stays finite
    big = D.TanhTransform().log_abs_det_jacobian(t([30.0, -30.0]), None).numpy()
    close(big, 2 * (math.log(2) - np.array([30.0, -30.0]) - _np_softplus(np.array([-60.0, 60.0]))))
    assert np.all(np.isfinite(big))
    T.random.seed(1)
    mu = T.tensor(LOC, requires_grad=True)
    s = D.TransformedDistribution(D.Normal(mu, t(SCALE)), D.TanhTransform()).rsample((5,))
    assert s.shape == (5, 4) and float(T.abs(s).max().item()) <= 1
    s.sum().backward()
    assert mu.grad.shape == (4,) and np.all(mu.grad.numpy() > 0)


def test_affine_exp_is_lognormal():
    d = D.TransformedDistribution(D.Normal(t(np.zeros(4)), 1.0),
                                  [D.AffineTransform(t(LOC), t(SCALE)), D.ExpTransform()])
    ref = D.LogNormal(t(LOC), t(SCALE))
    close(d.log_prob(t(POS)), ref.log_prob(t(POS)).numpy())
    close(d.cdf(t(POS)), ref.cdf(t(POS)).numpy())
    close(d.icdf(t(np.full(4, 0.3))), ref.icdf(t(np.full(4, 0.3))).numpy(), 1e-9)
    flip = D.TransformedDistribution(D.Normal(0.0, 1.0), D.AffineTransform(0.0, -1.0))
    close(flip.cdf(t([0.5])), [0.5 * (1 + math.erf(0.5 / math.sqrt(2)))])   # decreasing map: 1 - F
    comp = D.ComposeTransform([D.AffineTransform(1.0, 2.0), D.SigmoidTransform()])
    x = t(V[0])
    close(comp.inv(comp(x)), V[0], 1e-9)
    close(comp.log_abs_det_jacobian(x, comp(x)),
          math.log(2) - _np_softplus(-(1 + 2 * V[0])) - _np_softplus(1 + 2 * V[0]))
    with pytest.raises(TypeError, match="Transform instances"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), [math.exp])


@pytest.mark.parametrize("which", ["tanh", "sigmoid-independent", "affine-event"])
def test_transformed_against_torch(which):
    torch = pytest.importorskip("torch")
    TD = torch.distributions
    mu, sg = torch.tensor(LOC), torch.tensor(SCALE)
    if which == "tanh":
        ours = D.TransformedDistribution(D.Normal(t(LOC), t(SCALE)), [D.TanhTransform()])
        ref = TD.TransformedDistribution(TD.Normal(mu, sg), [TD.transforms.TanhTransform()])
        v = np.tanh(V)
    elif which == "sigmoid-independent":
        ours = D.TransformedDistribution(D.Independent(D.Normal(t(LOC), t(SCALE)), 1), [D.SigmoidTransform()])
        ref = TD.TransformedDistribution(TD.Independent(TD.Normal(mu, sg), 1),
                                         [TD.transforms.SigmoidTransform()])
        v = 1 / (1 + np.exp(-V))
    else:
        ours = D.TransformedDistribution(D.Normal(t(np.zeros(4)), 1.0),
                                         [D.AffineTransform(t(LOC), t(SCALE), event_dim=1)])
        ref = TD.TransformedDistribution(TD.Normal(torch.zeros(4), 1.0),
                                         [TD.transforms.AffineTransform(mu, sg, event_dim=1)])
        v = V
    assert ours.batch_shape == tuple(ref.batch_shape) and ours.event_shape == tuple(ref.event_shape)
    close(ours.log_prob(t(v)), ref.log_prob(torch.tensor(v)).numpy(), 1e-8)
    assert ours.sample((2,)).shape == tuple(ref.sample((2,)).shape)
    assert ours.expand((3,) + ours.batch_shape).batch_shape == (3,) + ours.batch_shape
