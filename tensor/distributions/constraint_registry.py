"""biject_to and transform_to (PyTorch's constraint registries): for a constraint c, a Transform
from unconstrained reals onto c. biject_to(c) is a bijection (for HMC-style reparameterization);
transform_to(c) need only map onto c (for unconstrained optimization), e.g. softmax for the
simplex. Register more with `@biject_to.register(constraint_type)`."""
from __future__ import annotations

from . import constraints
from .transforms import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform
from .transforms_more import (
    CatTransform,
    CorrCholeskyTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StackTransform,
    StickBreakingTransform,
    identity_transform,
)

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint (its class, or one instance such as constraints.positive) -> factory(constraint)."""

    def __init__(self, name: str):
        self._name = name
        self._registry: dict = {}

    def register(self, constraint, factory=None):
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"{self._name}.register: expects a Constraint subclass or instance, got "
                            f"{constraint!r}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        for cls in type(constraint).__mro__:
            if cls in self._registry:
                return self._registry[cls](constraint)
        raise NotImplementedError(f"{self._name}: no transform is registered for the constraint "
                                  f"{constraint!r} ({type(constraint).__name__})")


biject_to = ConstraintRegistry("biject_to")
transform_to = ConstraintRegistry("transform_to")


def _real(c):
    return identity_transform


def _positive(c):
    return ExpTransform()


def _greater_than(c):
    return ComposeTransform([ExpTransform(), AffineTransform(c.lower_bound, 1)])


def _less_than(c):
    return ComposeTransform([ExpTransform(), AffineTransform(c.upper_bound, -1)])


def _interval(c):
    lo, hi = c.lower_bound, c.upper_bound
    if not hasattr(lo, "shape") and not hasattr(hi, "shape") and lo == 0 and hi == 1:
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lo, hi - lo)])


for _reg in (biject_to, transform_to):
    _reg.register(constraints._Real, _real)
    _reg.register(constraints._GreaterThan, lambda c: _positive(c) if _is_zero(c.lower_bound)
                  else _greater_than(c))
    _reg.register(constraints._GreaterThanEq, lambda c: _positive(c) if _is_zero(c.lower_bound)
                  else _greater_than(c))
    _reg.register(constraints._LessThan, _less_than)
    _reg.register(constraints._Interval, _interval)
    _reg.register(constraints._Independent, lambda c, r=_reg: IndependentTransform(
        r(c.base_constraint), c.reinterpreted_batch_ndims))
    _reg.register(constraints._Cat, lambda c, r=_reg: CatTransform([r(x) for x in c.cseq], c.dim, c.lengths))
    _reg.register(constraints._Stack, lambda c, r=_reg: StackTransform([r(x) for x in c.cseq], c.dim))


def _is_zero(b) -> bool:
    return not hasattr(b, "shape") and b == 0


biject_to.register(constraints._Simplex, lambda c: StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda c: SoftmaxTransform())
transform_to.register(constraints._LowerCholesky, lambda c: LowerCholeskyTransform())
transform_to.register(constraints._PositiveDefinite, lambda c: PositiveDefiniteTransform())
transform_to.register(constraints._PositiveSemidefinite, lambda c: PositiveDefiniteTransform())
biject_to.register(constraints._CorrCholesky, lambda c: CorrCholeskyTransform())
transform_to.register(constraints._CorrCholesky, lambda c: CorrCholeskyTransform())
