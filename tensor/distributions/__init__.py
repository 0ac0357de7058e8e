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
from . import kl_cross as _kl_cross  # noqa: F401  (registers the cross-family KL pairs)
from . import kl_more as _kl_more  # noqa: F401  (registers the KL pairs of the modules below)
from .constraint_registry import biject_to, transform_to
from .continuous import Cauchy, Exponential, Laplace, LogNormal, Normal, Uniform
from .continuous_more import ContinuousBernoulli, FisherSnedecor, GeneralizedPareto, VonMises
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .discrete_more import (
    ExpRelaxedCategorical,
    LogitRelaxedBernoulli,
    Multinomial,
    NegativeBinomial,
    OneHotCategoricalStraightThrough,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from .distribution import Distribution, ExponentialFamily
from .gamma import Beta, Chi2, Dirichlet, Gamma, StudentT
from .kl import kl_divergence, register_kl
from .matrix import LKJCholesky, Wishart
from .mixture import LowRankMultivariateNormal, MixtureSameFamily
from .multivariate import Independent, MultivariateNormal
from .transformed import (
    Gumbel,
    HalfCauchy,
    HalfNormal,
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    Pareto,
    Weibull,
)
from .transforms import (
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    TanhTransform,
    Transform,
    TransformedDistribution,
)
from .transforms_more import (
    AbsTransform,
    CatTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    identity_transform,
)

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli",
           "Dirichlet", "Distribution", "ExpRelaxedCategorical", "Exponential", "ExponentialFamily",
           "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy",
           "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace",
           "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "Uniform", "VonMises", "Weibull",
           "Wishart", "biject_to", "constraints", "kl_divergence", "register_kl", "transform_to",
           "transforms", "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "TransformedDistribution", "identity_transform"]
