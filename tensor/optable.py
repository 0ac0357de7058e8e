"""The op table: every primitive elementwise op, defined once.

An entry gives the op's name, arity, the loop kinds it has ('b' bool, 'i' signed, 'u' unsigned,
'f' float), its output rule, its C expression per kind (over the compute-typed values `a`, `b`),
its NumPy reference and a hint of the input domain for tests. Kernel generation (C and CUDA),
the public functions and Tensor methods, the NumPy property tests and the gradient checks all
iterate over this table, so an op added here is built and tested everywhere.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import dtypes as dt


@dataclass(frozen=True)
class Op:
    name: str
    arity: int
    kinds: str                      # loop kinds: subset of "biuf"
    c: dict                         # kind -> C expression; key "*" is the fallback
    ref: object = None              # NumPy reference (for tests)
    out_bool: bool = False          # output dtype is bool (comparisons, predicates)
    no_bool: bool = False           # a bool input is an error (NumPy's negative, subtract)
    int_to: dt.DType | None = None  # integer/bool inputs compute in this dtype (true_divide)
    bool_to: dt.DType | None = None  # bool inputs compute in this dtype
    domain: str = "any"             # test-input hint: any, positive, unit, gt_m1, nonzero_b, small_b
    aliases: tuple = field(default=())

    def expr(self, kind: str) -> str:
        return self.c.get(kind, self.c.get("*"))


def _f(name):  # libm function over the compute type (float or double)
    return {"f": f"SX_F1({name}, a)"}


_vec_erf = np.vectorize(math.erf, otypes=[np.float64])


def _float_loop(x):  # the float dtype NumPy's float-only ufuncs use for x (int8 -> float16)
    return np.sin(np.zeros(0, x.dtype)).dtype


def _erf_ref(x):
    x = np.asarray(x)
    ft = _float_loop(x)
    return _vec_erf(x.astype(ft).astype(np.float64)).astype(ft)


def _sigmoid_ref(x):
    x = np.asarray(x)
    ft = _float_loop(x)
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-x.astype(ft).astype(np.float64)))).astype(ft)


UNARY = [
    Op("negative", 1, "iuf", {"*": "-a"}, np.negative, no_bool=True, aliases=("neg",)),
    Op("positive", 1, "iuf", {"*": "a"}, np.positive, no_bool=True),
    Op("abs", 1, "biuf", {"f": "SX_F1(fabs, a)", "i": "(a < 0 ? -a : a)", "*": "a"}, np.abs,
       aliases=("absolute",)),
    Op("sign", 1, "iuf", {"f": "((a != a) ? a : (a > 0) - (a < 0))", "*": "(a > 0) - (a < 0)"},
       np.sign, no_bool=True),
    Op("exp", 1, "f", {"f": "SX_EXP(a)"}, np.exp, domain="exp"),
    Op("expm1", 1, "f", _f("expm1"), np.expm1, domain="exp"),
    Op("log", 1, "f", {"f": "SX_LOG(a)"}, np.log, domain="positive"),
    Op("log1p", 1, "f", _f("log1p"), np.log1p, domain="gt_m1"),
    Op("log2", 1, "f", _f("log2"), np.log2, domain="positive"),
    Op("log10", 1, "f", _f("log10"), np.log10, domain="positive"),
    Op("sqrt", 1, "f", _f("sqrt"), np.sqrt, domain="positive"),
    Op("square", 1, "iuf", {"*": "a * a"}, np.square),
    Op("reciprocal", 1, "iuf", {"f": "1 / a", "*": "(a == 0 ? 0 : 1 / a)"}, np.reciprocal,
       domain="nonzero"),
    Op("sin", 1, "f", _f("sin"), np.sin),
    Op("cos", 1, "f", _f("cos"), np.cos),
    Op("tan", 1, "f", _f("tan"), np.tan),
    Op("arcsin", 1, "f", _f("asin"), np.arcsin, domain="unit", aliases=("asin",)),
    Op("arccos", 1, "f", _f("acos"), np.arccos, domain="unit", aliases=("acos",)),
    Op("arctan", 1, "f", _f("atan"), np.arctan, aliases=("atan",)),
    Op("sinh", 1, "f", _f("sinh"), np.sinh, domain="exp"),
    Op("cosh", 1, "f", _f("cosh"), np.cosh, domain="exp"),
    Op("tanh", 1, "f", {"f": "SX_TANH(a)"}, np.tanh),
    Op("erf", 1, "f", _f("erf"), _erf_ref),
    Op("sigmoid", 1, "f", {"f": "SX_SIGMOID(a)"}, _sigmoid_ref),
    Op("floor", 1, "biuf", {"f": "SX_F1(floor, a)", "*": "a"}, np.floor),
    Op("ceil", 1, "biuf", {"f": "SX_F1(ceil, a)", "*": "a"}, np.ceil),
    Op("trunc", 1, "biuf", {"f": "SX_F1(trunc, a)", "*": "a"}, np.trunc),
    Op("rint", 1, "f", _f("rint"), np.rint),  # NumPy: ints go to the float loop (int8 -> float16)
    Op("logical_not", 1, "biuf", {"*": "a == 0"}, np.logical_not, out_bool=True),
    Op("bitwise_not", 1, "biu", {"b": "!a", "*": "~a"}, np.bitwise_not, aliases=("invert",)),
    Op("isnan", 1, "biuf", {"f": "a != a", "*": "0"}, np.isnan, out_bool=True),
    Op("isinf", 1, "biuf", {"f": "isinf(a) != 0", "*": "0"}, np.isinf, out_bool=True),
    Op("isfinite", 1, "biuf", {"f": "isfinite(a) != 0", "*": "1"}, np.isfinite, out_bool=True),
]

BINARY = [
    Op("add", 2, "biuf", {"b": "a | b", "*": "a + b"}, np.add),
    Op("subtract", 2, "iuf", {"*": "a - b"}, np.subtract, no_bool=True, aliases=("sub",)),
    Op("multiply", 2, "biuf", {"b": "a & b", "*": "a * b"}, np.multiply, aliases=("mul",)),
    Op("true_divide", 2, "f", {"f": "a / b"}, np.true_divide, int_to=dt.float64,
       aliases=("divide", "div")),
    Op("floor_divide", 2, "iuf", {"f": "SX_F2(sx_floordiv, a, b)", "i": "SX_FLOORDIV_I(a, b)",
                                  "u": "SX_FLOORDIV_U(a, b)"}, np.floor_divide, domain="nonzero_b"),
    Op("remainder", 2, "iuf", {"f": "SX_F2(sx_fmod_py, a, b)", "i": "SX_MOD_I(a, b)",
                               "u": "SX_MOD_U(a, b)"}, np.remainder, domain="nonzero_b",
       aliases=("mod",)),
    Op("power", 2, "iuf", {"f": "SX_F2(pow, a, b)", "*": "sx_ipow(a, b)"}, np.power,
       domain="power", aliases=("pow",)),
    Op("maximum", 2, "biuf", {"f": "((a > b || a != a) ? a : b)", "*": "(a > b ? a : b)"},
       np.maximum),
    Op("minimum", 2, "biuf", {"f": "((a < b || a != a) ? a : b)", "*": "(a < b ? a : b)"},
       np.minimum),
    Op("arctan2", 2, "f", {"f": "SX_F2(atan2, a, b)"}, np.arctan2, aliases=("atan2",)),
    Op("bitwise_and", 2, "biu", {"*": "a & b"}, np.bitwise_and),
    Op("bitwise_or", 2, "biu", {"*": "a | b"}, np.bitwise_or),
    Op("bitwise_xor", 2, "biu", {"*": "a ^ b"}, np.bitwise_xor),
    Op("left_shift", 2, "iu", {"*": "SX_LSHIFT(a, b)"}, np.left_shift, domain="shift"),
    Op("right_shift", 2, "iu", {"*": "SX_RSHIFT(a, b)"}, np.right_shift, domain="shift"),
    Op("equal", 2, "biuf", {"*": "a == b"}, np.equal, out_bool=True, aliases=("eq",)),
    Op("not_equal", 2, "biuf", {"*": "a != b"}, np.not_equal, out_bool=True, aliases=("ne",)),
    Op("less", 2, "biuf", {"*": "a < b"}, np.less, out_bool=True, aliases=("lt",)),
    Op("less_equal", 2, "biuf", {"*": "a <= b"}, np.less_equal, out_bool=True, aliases=("le",)),
    Op("greater", 2, "biuf", {"*": "a > b"}, np.greater, out_bool=True, aliases=("gt",)),
    Op("greater_equal", 2, "biuf", {"*": "a >= b"}, np.greater_equal, out_bool=True,
       aliases=("ge",)),
    Op("logical_and", 2, "biuf", {"*": "(a != 0) & (b != 0)"}, np.logical_and, out_bool=True),
    Op("logical_or", 2, "biuf", {"*": "(a != 0) | (b != 0)"}, np.logical_or, out_bool=True),
    Op("logical_xor", 2, "biuf", {"*": "(a != 0) != (b != 0)"}, np.logical_xor, out_bool=True),
]

OPS = {op.name: op for op in UNARY + BINARY}

KIND_OF = {"b": "b", "i": "i", "u": "u", "f": "f"}
# NumPy's loop search order; bfloat16 is only ever its own loop.
_SEARCH = (dt.bool_, dt.int8, dt.uint8, dt.int16, dt.int32, dt.int64, dt.float16, dt.float32,
           dt.float64)


def loop_dtype(op: Op, d: dt.DType) -> dt.DType:
    """The dtype an op computes in for input dtype d (NumPy's loop search); TypeError if none."""
    if d is dt.bool_ and (op.no_bool or op.bool_to is not None):
        if op.no_bool:
            raise TypeError(f"{op.name}: not supported for bool tensors"
                            + ("; use logical_not or ~" if op.name == "negative" else
                               "; use logical_xor or ^" if op.name == "subtract" else ""))
        return op.bool_to
    if op.int_to is not None and d.kind in "biu":
        return op.int_to
    if d.kind in op.kinds:
        return d
    if d is not dt.bfloat16:
        for cand in _SEARCH:
            if cand.kind in op.kinds and dt.can_cast(d, cand):
                return cand
    raise TypeError(f"{op.name}: unsupported dtype {d.name} (supported kinds: "
                    + ", ".join({"b": "bool", "i": "signed int", "u": "unsigned int",
                                 "f": "float"}[k] for k in op.kinds) + ")")


def binary_loop_dtype(op: Op, a, b) -> dt.DType:
    """The dtype a binary op computes in; a and b are DTypes or (weak) Python scalars.

    The promoted dtype's loop, except where two integer dtypes meet a float-only op: NumPy then
    searches with each input's own dtype, so arctan2(int8, uint8) is float16, not float32."""
    rd = dt.result_type(a, b)
    ld = loop_dtype(op, rd)
    if (ld.kind == "f" and rd.kind in "iu" and op.int_to is None
            and isinstance(a, dt.DType) and isinstance(b, dt.DType)):
        for cand in _SEARCH:
            if cand.kind in op.kinds and dt.can_cast(a, cand) and dt.can_cast(b, cand):
                return cand
    return ld
