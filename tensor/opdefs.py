"""The op table's vocabulary: the entry (Op), the derivative as data (Grad, d1, d2 and the
markers ZERO, NONE, NO_RULE, OWN), the late-bound public functions derivatives call (T), and
the small helpers entries share. tensor/optable.py and tensor/optable_math.py build their
entries from these (one module below both, so neither imports the other).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import dtypes as dt


class _Public:
    """tensor's public (recorded) functions, looked up when a derivative runs, so a backward
    pass is itself on the graph. tensor/public.py binds them once it has built them (the table
    is read first, by the kernel generators: importing the public functions here would be an
    import circle)."""
    _fns: dict = {}

    def bind(self, fns: dict) -> None:
        _Public._fns = fns

    def __getattr__(self, name):
        try:
            return self._fns[name]
        except KeyError:   # AttributeError, as getattr/hasattr/doctest's finder expect
            raise AttributeError(f"tensor has no public function {name!r}") from None


T = _Public()


@dataclass(frozen=True)
class Grad:
    """An op's derivative as data: tensor does not import autograd, which turns this into vjp
    (g * partial, summed to each operand's shape) and jvp (sum of tangent * partial) rules.

    d: one partial per operand: a constant, or f(x, out) (unary) / f(a, b, out) (binary) written
    with the public functions (T.cos...), so a backward pass is itself recorded (create_graph);
    a binary partial runs only for a tensor operand that needs it. save: what the partials read
    (operand indices, "out"). inplace, the in-place form op_: True shares the rule (sound only
    when it reads neither operand nor out: op_ overwrites them); OWN has a rule of its own in
    autograd; False has none (record() refuses it before writing when a gradient is needed).
    reads (binary): per operand, which of `save` its partial reads: then only what the partials
    of the operands needing a gradient read is kept (x * 2.0 keeps nothing, so a later write
    into x does not break backward, as in PyTorch)."""
    d: tuple
    save: tuple = ()
    inplace: bool | str = False
    reads: tuple | None = None


ZERO = "zero"  # unary, piecewise constant: zero gradient (PyTorch's floor, sign, round...)
NONE = "none"  # no float output (comparisons, predicates, bitwise): nothing to differentiate
# a float output without a derivative (PyTorch's not_implemented: nextafter): public.py declares
# it in NO_GRAD, so autograd raises where a gradient or tangent would pass through it
NO_RULE = "no rule"
OWN = "own"    # Grad.inplace: autograd writes op_'s rule by hand
X, OUT = 0, "out"


def d1(f, *save, inplace=False) -> Grad:
    return Grad((f,), save, inplace)


def d2(fa, fb, *save, inplace=False, reads=None) -> Grad:
    return Grad((fa, fb), save, inplace, reads)


_LN2, _LN10 = math.log(2.0), math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)


@dataclass(frozen=True)
class Op:
    name: str
    arity: int
    kinds: str                      # loop kinds: subset of "biufc"
    c: dict                         # kind (or dtype suffix) -> C expression; "*": fallback
    ref: object = None              # NumPy reference (for tests)
    out_bool: bool = False          # output dtype is bool (comparisons, predicates)
    real_out: bool = False          # a complex loop gives its parts' real dtype (abs)
    no_bool: bool = False           # a bool input is an error (NumPy's negative, subtract)
    int_to: dt.DType | None = None  # integer/bool inputs compute in this dtype (true_divide)
    bool_to: dt.DType | None = None  # bool inputs compute in this dtype
    out_to: dt.DType | None = None  # the output dtype of every loop (bitwise_count: uint8)
    domain: str = "any"             # test-input hint: any, positive, unit, gt_m1, nonzero_b, small_b
    aliases: tuple = field(default=())
    grad: Grad | str | None = None  # Grad, ZERO or NONE; None: undeclared (a test fails)

    def out_dtype(self, ld: dt.DType) -> dt.DType:
        """The output dtype of the loop over dtype ld."""
        if self.out_bool:
            return dt.bool_
        if self.out_to is not None:
            return self.out_to
        return dt.real_of(ld) if self.real_out else ld

    def expr(self, kind: str, sfx: str = "") -> str:
        """The C expression of the loop over dtype suffix sfx, of kind `kind`."""
        return self.c.get(sfx) or self.c.get(kind, self.c.get("*"))


def _f(name, cx=None):  # libm function over the compute type (float or double), and complex's
    return {"f": f"SX_F1({name}, a)", "c": cx} if cx else {"f": f"SX_F1({name}, a)"}


def one_at_zero(x):
    """x with 1 where x == 0: a partial divides (or takes the log) there without a NaN or inf,
    and masks the result itself."""
    return T.where(x == 0, 1.0, x)


_vec_erf = np.vectorize(math.erf, otypes=[np.float64])


def _float_loop(x):  # the float dtype NumPy's float-only ufuncs use for x (int8 -> float16)
    return np.sin(np.zeros(0, x.dtype)).dtype
