"""Constraints: what values a distribution's parameters and samples may take (PyTorch's
torch.distributions.constraints). `c.check(value)` is a bool tensor over the batch: an
elementwise constraint checks each element, an event constraint (simplex, a positive definite
matrix) reduces over its event dims."""
from __future__ import annotations

from . import _ops as T

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "greater_than", "greater_than_eq",
           "half_open_interval", "independent", "integer_interval", "interval", "less_than",
           "lower_cholesky", "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer",
           "one_hot",
           "positive", "positive_definite", "positive_integer", "positive_semidefinite", "real",
           "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval", "dependent_property"]


def _show(bound) -> str:
    """A bound for a repr: the number, or the shape of a tensor of them."""
    if isinstance(bound, T.Tensor):
        return f"{bound.item():g}" if bound.numel() == 1 else f"<tensor of shape {tuple(bound.shape)}>"
    return f"{bound}"


def _bounds(c) -> str:
    return f"lower_bound={_show(c.lower_bound)}, upper_bound={_show(c.upper_bound)}"


class Constraint:
    """A region of values. event_dim: how many rightmost dims one event of it spans."""
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A support that depends on other parameters (Binomial's {0..n}); it checks nothing."""

    def check(self, value):
        raise ValueError("dependent: this constraint cannot be checked")


def is_dependent(constraint) -> bool:
    return isinstance(constraint, _Dependent)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        ok = ((value == 0) | (value == 1)).all(axis=-1)
        return ok & (value.sum(axis=-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval({_bounds(self)})"


class _IntegerGreaterThanEq(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={_show(self.lower_bound)})"


class _Multinomial(Constraint):
    """Count vectors: nonnegative integers summing to at most upper_bound (PyTorch's check)."""
    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return ((value >= 0) & (value % 1 == 0)).all(axis=-1) & (value.sum(axis=-1) <= self.upper_bound)

    def __repr__(self):
        return f"Multinomial(upper_bound={_show(self.upper_bound)})"


class _Real(Constraint):
    def check(self, value):
        return value == value   # everything but NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"GreaterThan(lower_bound={_show(self.lower_bound)})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={_show(self.lower_bound)})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={_show(self.upper_bound)})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval({_bounds(self)})"


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (self.lower_bound <= value) & (value < self.upper_bound)

    def __repr__(self):
        return f"HalfOpenInterval({_bounds(self)})"


class _Independent(Constraint):
    """base_constraint over reinterpreted_batch_ndims more rightmost dims, all of which must hold."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims: int):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        ok = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if n:
            ok = ok.all(axis=tuple(range(-n, 0)))   # (a reshape to -1 fails on 0-size batches)
        return ok

    def __repr__(self):
        return f"Independent({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(axis=-1) & ((value.sum(axis=-1) - 1).abs() < 1e-6)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (T.tril(value) == value).all(axis=(-2, -1))


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        tri = (T.tril(value) == value).all(axis=(-2, -1))
        return tri & (T.diagonal(value, 0, -2, -1) > 0).all(axis=-1)


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: lower triangular, positive diagonal, rows of
    unit Euclidean norm."""
    event_dim = 2

    def check(self, value):
        tol = T.finfo(value.dtype).eps * value.shape[-1] * 10
        unit = (T.sqrt((value * value).sum(axis=-1)) - 1).abs() <= tol
        return _LowerCholesky().check(value) & unit.all(axis=-1)


class _Symmetric(Constraint):
    event_dim = 2

    def check(self, value):
        close = (value - value.swapaxes(-1, -2)).abs() <= 1e-6 * (1 + value.abs())
        return close.all(axis=(-2, -1))


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        """Symmetric, and its Cholesky factorization completes (PyTorch's test): a singular
        matrix whose zero eigenvalue comes out as +1e-16 is not positive definite."""
        sym = super().check(value)
        if value.shape[-1] == 0:
            return sym
        return sym & (T.linalg.cholesky_ex(value).info == 0)


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        sym = super().check(value)
        return sym & (T.linalg.eigvalsh(value) >= 0).all(axis=-1)


def _axis(dim: int, value, name: str) -> int:
    if not -value.ndim <= dim < value.ndim:
        raise ValueError(f"{name}: dim {dim} is out of range for a value of shape {tuple(value.shape)}")
    return dim % value.ndim


class _Cat(Constraint):
    """cseq[i] on the i-th slice of lengths[i] (default 1) along dim."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq, self.dim = list(cseq), int(dim)
        self.lengths = [1] * len(self.cseq) if lengths is None else [int(n) for n in lengths]
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"cat: {len(self.cseq)} constraints but {len(self.lengths)} lengths")

    is_discrete = property(lambda self: any(c.is_discrete for c in self.cseq))
    event_dim = property(lambda self: max(c.event_dim for c in self.cseq))

    def check(self, value):
        ax = _axis(self.dim, value, "cat")
        if value.shape[ax] != sum(self.lengths):
            raise ValueError(f"cat: dim {self.dim} of shape {tuple(value.shape)} must have size "
                             f"sum(lengths) = {sum(self.lengths)}")
        checks, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            idx = [slice(None)] * value.ndim
            idx[ax] = slice(start, start + n)
            checks.append(c.check(value[tuple(idx)]))
            start += n
        return T.concatenate(checks, axis=self.dim)


class _Stack(Constraint):
    """cseq[i] on value[..., i, ...] along dim."""

    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), int(dim)

    is_discrete = property(lambda self: any(c.is_discrete for c in self.cseq))
    @property
    def event_dim(self):
        """The parts' event dims, plus the stacked dim when it lies inside them (dim counted from
        the right past the parts' event dims)."""
        d = max(c.event_dim for c in self.cseq)
        return d + 1 if self.dim + d < 0 else d

    def check(self, value):
        ax = _axis(self.dim, value, "stack")
        if value.shape[ax] != len(self.cseq):
            raise ValueError(f"stack: dim {self.dim} of shape {tuple(value.shape)} must have size "
                             f"{len(self.cseq)} (one per constraint)")
        checks = []
        for i, c in enumerate(self.cseq):
            idx = [slice(None)] * value.ndim
            idx[ax] = i
            checks.append(c.check(value[tuple(idx)]))
        return T.stack(checks, axis=self.dim)


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        square = value.shape[-1] == value.shape[-2]
        return T.full(value.shape[:-2], square, dtype=T.bool_, device=value.device)


class dependent_property(property):
    """A property that is also a dependent constraint (a support that depends on the parameters,
    as Uniform's): `@constraints.dependent_property(is_discrete=False, event_dim=0)`."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        super().__init__(fn)
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, fn):
        return dependent_property(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)

    def check(self, value):
        raise ValueError("dependent_property: this constraint cannot be checked")


dependent = _Dependent()
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThanEq(0)
positive_integer = _IntegerGreaterThanEq(1)
integer_interval = _IntegerInterval
multinomial = _Multinomial
real = _Real()
real_vector = _Independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
independent = _Independent
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
positive_definite = _PositiveDefinite()
positive_semidefinite = _PositiveSemidefinite()
cat = _Cat
stack = _Stack
square = _Square()
symmetric = _Symmetric()
