"""tensor.distributions: probability distributions with sampling (reparameterized where PyTorch's
are), log densities, moments and KL divergences, as torch.distributions, built on the library's
ops and autograd. Draws come from the global generator (tensor.random.seed) on the device of the
parameters.

>>> import tensor as T
>>> from tensor.distributions import Normal, kl_divergence
>>> p, q = Normal(0.0, 1.0), Normal(1.0, 2.0)
>>> round(float(kl_divergence(p, q)), 4)
0.4431
"""
from . import constraints, transforms
from .continuous import Cauchy, Exponential, Laplace, LogNormal, Normal, Uniform
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution, ExponentialFamily
from .gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .multivariate import Independent, MultivariateNormal
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
    TransformedDistribution,
)

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet", "Distribution",
           "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Independent", "Laplace", "LogNormal",
           "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "StudentT", "Uniform",
           "constraints", "kl_divergence", "register_kl", "transforms", "AffineTransform", "ComposeTransform",
           "ExpTransform", "SigmoidTransform", "TanhTransform", "Transform", "TransformedDistribution"]
