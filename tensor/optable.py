"""The op table: every primitive elementwise op, defined once.

An entry gives the op's name, arity, the loop kinds it has ('b' bool, 'i' signed, 'u' unsigned,
'f' float, 'c' complex: its C expressions call cuda_src/scalar/complex.h), its output rule,
its C expression per kind (over the compute-typed values `a`, `b`), its NumPy reference, a
hint of the input domain for tests, and its derivative (`grad`): the partials as data, or ZERO
(piecewise constant), NONE (no float output) or NO_RULE (a float output autograd refuses to
differentiate). A dtype whose math differs from its kind's (a 16-bit nextafter steps in its
own precision) has its own key in `c`, its suffix ("f16"). Kernel generation (C and CUDA), the
public functions and Tensor methods, the derivative rules (autograd builds them from `grad`),
the NumPy property tests and the gradient checks all iterate over this table, so an op added
here is built, differentiated and tested everywhere.
"""
from __future__ import annotations

import cmath
from functools import cache

import numpy as np

from . import dtypes as dt
from .opdefs import (  # noqa: F401  (re-exported: the table's users import them from here)
    _2_SQRTPI,
    _LN2,
    _LN10,
    NO_RULE,
    NONE,
    OUT,
    OWN,
    ZERO,
    Grad,
    Op,
    T,
    X,
    _f,
    _float_loop,
    _vec_erf,
    d1,
    d2,
    one_at_zero,
)


def _erf_ref(x):
    x = np.asarray(x)
    ft = _float_loop(x)
    return _vec_erf(x.astype(ft).astype(np.float64)).astype(ft)


def _sigmoid_ref(x):
    x = np.asarray(x)
    ft = _float_loop(x)
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-x.astype(ft).astype(np.float64)))).astype(ft)


def _wrapping(fn: str) -> dict:
    """The integer loops' expression: fn (scalar/types.h) wraps on overflow on both devices
    (plain + - * of signed ints is undefined on overflow in the CUDA kernels' C++)."""
    return {"i": f"{fn}(a, b)", "u": f"{fn}(a, b)"}


UNARY = [
    Op("negative", 1, "iufc", {"c": "sx_cneg(a)", "i": "sx_wneg(a)", "*": "-a"}, np.negative, no_bool=True,
       aliases=("neg",),
       grad=d1(-1.0, inplace=True)),
    Op("positive", 1, "iufc", {"c": "a", "*": "a"}, np.positive, no_bool=True, grad=d1(1.0, inplace=True)),
    Op("abs", 1, "biufc", {"c": "sx_cabs(a)", "f": "SX_F1(fabs, a)", "i": "(a < 0 ? sx_wneg(a) : a)",
                           "*": "a"}, np.abs, aliases=("absolute",), real_out=True,
       grad=d1(lambda x, y: T.sign(x), X)),
    Op("sign", 1, "iufc", {"c": "sx_csign(a)", "f": "((a != a) ? a : (a > 0) - (a < 0))",
                           "*": "(a > 0) - (a < 0)"}, np.sign, no_bool=True, aliases=("sgn",),
       grad=ZERO),
    Op("exp", 1, "fc", {"c": "sx_cexp(a)", "f": "SX_EXP(a)"}, np.exp, domain="exp",
       grad=d1(lambda x, y: y, OUT)),
    Op("expm1", 1, "fc", _f("expm1", "sx_cexpm1(a)"), np.expm1, domain="exp",
       grad=d1(lambda x, y: y + 1.0, OUT)),
    Op("log", 1, "fc", {"c": "sx_clog(a)", "f": "SX_LOG(a)"}, np.log, domain="positive",
       grad=d1(lambda x, y: 1.0 / x, X)),
    Op("log1p", 1, "fc", _f("log1p", "sx_clog1p(a)"), np.log1p, domain="gt_m1",
       grad=d1(lambda x, y: 1.0 / (x + 1.0), X)),
    Op("log2", 1, "fc", _f("log2", "sx_clog2(a)"), np.log2, domain="positive",
       grad=d1(lambda x, y: 1.0 / (x * _LN2), X)),
    Op("log10", 1, "fc", _f("log10", "sx_clog10(a)"), np.log10, domain="positive",
       grad=d1(lambda x, y: 1.0 / (x * _LN10), X)),
    Op("sqrt", 1, "fc", _f("sqrt", "sx_csqrt(a)"), np.sqrt, domain="positive",
       grad=d1(lambda x, y: 0.5 / y, OUT)),
    Op("square", 1, "iufc", {"c": "sx_csquare(a)", "i": "sx_wmul(a, a)", "u": "sx_wmul(a, a)",
                              "*": "a * a"}, np.square,
       grad=d1(lambda x, y: 2.0 * x, X)),
    Op("reciprocal", 1, "iufc", {"c": "sx_crecip(a)", "f": "1 / a", "*": "(a == 0 ? 0 : 1 / a)"},
       np.reciprocal, domain="nonzero", grad=d1(lambda x, y: -(y * y), OUT)),
    Op("sin", 1, "fc", _f("sin", "sx_csin(a)"), np.sin, grad=d1(lambda x, y: T.cos(x), X)),
    Op("cos", 1, "fc", _f("cos", "sx_ccos(a)"), np.cos, grad=d1(lambda x, y: -T.sin(x), X)),
    Op("tan", 1, "fc", _f("tan", "sx_ctan(a)"), np.tan, grad=d1(lambda x, y: 1.0 + y * y, OUT)),
    Op("arcsin", 1, "fc", _f("asin", "sx_casin(a)"), np.arcsin, domain="unit", aliases=("asin",),
       grad=d1(lambda x, y: 1.0 / T.sqrt(1.0 - x * x), X)),
    Op("arccos", 1, "fc", _f("acos", "sx_cacos(a)"), np.arccos, domain="unit", aliases=("acos",),
       grad=d1(lambda x, y: -1.0 / T.sqrt(1.0 - x * x), X)),
    Op("arctan", 1, "fc", _f("atan", "sx_catan(a)"), np.arctan, aliases=("atan",),
       grad=d1(lambda x, y: 1.0 / (1.0 + x * x), X)),
    Op("arcsinh", 1, "fc", _f("asinh", "sx_casinh(a)"), np.arcsinh, aliases=("asinh",),
       grad=d1(lambda x, y: 1.0 / T.sqrt(x * x + 1.0), X)),
    Op("arccosh", 1, "fc", _f("acosh", "sx_cacosh(a)"), np.arccosh, domain="ge1", aliases=("acosh",),
       # two roots, not sqrt(x^2 - 1): the same for real x >= 1, and acosh's branch for complex x
       grad=d1(lambda x, y: 1.0 / (T.sqrt(x - 1.0) * T.sqrt(x + 1.0)), X)),
    Op("arctanh", 1, "fc", _f("atanh", "sx_catanh(a)"), np.arctanh, domain="unit", aliases=("atanh",),
       grad=d1(lambda x, y: 1.0 / ((1.0 - x) * (1.0 + x)), X)),
    Op("sinh", 1, "fc", _f("sinh", "sx_csinh(a)"), np.sinh, domain="exp", grad=d1(lambda x, y: T.cosh(x), X)),
    Op("cosh", 1, "fc", _f("cosh", "sx_ccosh(a)"), np.cosh, domain="exp", grad=d1(lambda x, y: T.sinh(x), X)),
    Op("tanh", 1, "fc", {"c": "sx_ctanh(a)", "f": "SX_TANH(a)"}, np.tanh,
       grad=d1(lambda x, y: 1.0 - y * y, OUT)),
    Op("erf", 1, "f", _f("erf"), _erf_ref, grad=d1(lambda x, y: _2_SQRTPI * T.exp(-(x * x)), X)),
    Op("sigmoid", 1, "f", {"f": "SX_SIGMOID(a)"}, _sigmoid_ref,
       grad=d1(lambda x, y: y * (1.0 - y), OUT)),
    Op("floor", 1, "biuf", {"f": "SX_F1(floor, a)", "*": "a"}, np.floor, grad=ZERO),
    Op("ceil", 1, "biuf", {"f": "SX_F1(ceil, a)", "*": "a"}, np.ceil, grad=ZERO),
    Op("trunc", 1, "biuf", {"f": "SX_F1(trunc, a)", "*": "a"}, np.trunc, aliases=("fix",), grad=ZERO),
    # NumPy: ints go to the float loop (int8 -> float16)
    Op("rint", 1, "fc", _f("rint", "sx_crint(a)"), np.rint, grad=ZERO),
    Op("logical_not", 1, "biufc", {"c": "!sx_cnonzero(a)", "*": "a == 0"}, np.logical_not, out_bool=True,
       grad=NONE),
    Op("bitwise_not", 1, "biu", {"b": "!a", "*": "~a"}, np.bitwise_not,
       aliases=("invert", "bitwise_invert"), grad=NONE),
    Op("isnan", 1, "biufc", {"c": "sx_cisnan(a)", "f": "a != a", "*": "0"}, np.isnan, out_bool=True,
       grad=NONE),
    Op("isinf", 1, "biufc", {"c": "sx_cisinf(a)", "f": "isinf(a) != 0", "*": "0"}, np.isinf, out_bool=True,
       grad=NONE),
    Op("isfinite", 1, "biufc", {"c": "sx_cisfinite(a)", "f": "isfinite(a) != 0", "*": "1"}, np.isfinite,
       out_bool=True, grad=NONE),
    # NumPy takes integers too (through its float loops): what x < 0 gives, without the casts
    Op("signbit", 1, "biuf", {"f": "SX_SIGNBIT(a)", "i": "a < 0", "*": "0"}, np.signbit,
       out_bool=True, grad=NONE),
    # the complex conjugate (the identity on real dtypes, as NumPy's conjugate; bool as int8)
    Op("conjugate", 1, "iufc", {"c": "sx_cconj(a)", "*": "a"}, np.conjugate, aliases=("conj",),
       grad=d1(1.0, inplace=True)),
    # the argument: atan2(imag, real); a real x gives 0 or pi by x's sign bit (NumPy's angle,
    # whose arctan2(0, x) reads a bool x as int64, so float64)
    Op("angle", 1, "fc", {"c": "sx_carg(a)",
                          "f": "(a != a ? a : SX_SIGNBIT(a) * 3.14159265358979323846)"},
       np.angle, real_out=True, bool_to=dt.float64, grad=ZERO),
]


def _extreme(greater: bool) -> Grad:
    """maximum/minimum: the larger (smaller) operand takes g; ties split it evenly."""
    def w(a, b):
        return (a > b if greater else a < b) + 0.5 * (a == b)
    return d2(lambda a, b, y: w(a, b), lambda a, b, y: 1.0 - w(a, b), 0, 1)


def _pow_da(a, b, y):
    """b a^(b - 1), and 0 where b == 0 (PyTorch's: a^-1 is inf at a == 0, and 0 * inf NaN);
    the base read there is 1, so no derivative of this one meets the infinity either."""
    if not hasattr(b, "dtype"):
        return T.where(T.isfinite(a), a, 0.0) * 0.0 if b == 0 else b * a ** (b - 1)
    zero = b == 0
    return T.where(zero, 0.0, b * T.where(zero, 1.0, a) ** (b - 1))


def _div_da(a, b, y):
    """1 / b; a Python-scalar b divides with IEEE semantics (1 / 0.0 = inf, as PyTorch's
    gradient of x / 0.0), never raising ZeroDivisionError."""
    if hasattr(b, "dtype"):
        return 1.0 / b
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.complex128(1.0) / np.complex128(b) if isinstance(b, complex) \
            else np.float64(1.0) / np.float64(b)
    return complex(r) if isinstance(b, complex) else float(r)


def _atan2_grads() -> Grad:
    """d/da b / (a^2 + b^2), d/db -a / (a^2 + b^2); both 0 at (0, 0) (PyTorch's), where the
    quotient was 0 / 0."""
    def den(a, b):
        return one_at_zero(a * a + b * b)
    return d2(lambda a, b, y: b / den(a, b), lambda a, b, y: -a / den(a, b), 0, 1)


def _pow_db(a, b, y):
    """y log a, taken as 0 at a == 0 (where log a is -inf); log in the dtype the power ran in
    (a real negative base with a complex exponent: log|a| + i pi, not NaN)."""
    if y.dtype.kind == "c" and not hasattr(a, "dtype"):
        return y * (cmath.log(a) if a != 0 else 0.0)
    if y.dtype.kind == "c" and a.dtype.kind != "c":
        a = T.astype(a, y.dtype)
    return T.where(a == 0, 0.0, y * T.log(one_at_zero(a)))


BINARY = [
    Op("add", 2, "biufc", {"c": "sx_cadd(a, b)", "b": "a | b", **_wrapping("sx_wadd"), "*": "a + b"}, np.add,
       grad=d2(1.0, 1.0, inplace=True)),
    Op("subtract", 2, "iufc", {"c": "sx_csub(a, b)", **_wrapping("sx_wsub"), "*": "a - b"},
       np.subtract, no_bool=True, aliases=("sub",), grad=d2(1.0, -1.0, inplace=True)),
    Op("multiply", 2, "biufc", {"c": "sx_cmul(a, b)", "b": "a & b", **_wrapping("sx_wmul"), "*": "a * b"},
       np.multiply, aliases=("mul",),
       grad=d2(lambda a, b, y: b, lambda a, b, y: a, 0, 1, inplace=OWN, reads=((1,), (0,)))),
    Op("true_divide", 2, "fc", {"c": "sx_cdiv(a, b)", "f": "a / b"}, np.true_divide, int_to=dt.float64,
       aliases=("divide", "div"),
       grad=d2(_div_da, lambda a, b, y: -(y / b), 1, OUT, inplace=OWN)),
    # piecewise constant, written as zero partials: g * 0 (NaN where g is not finite)
    Op("floor_divide", 2, "iuf", {"f": "SX_F2(sx_floordiv, a, b)", "i": "SX_FLOORDIV_I(a, b)",
                                  "u": "SX_FLOORDIV_U(a, b)"}, np.floor_divide, domain="nonzero_b",
       grad=d2(0.0, 0.0)),
    Op("remainder", 2, "iuf", {"f": "SX_F2(sx_fmod_py, a, b)", "i": "SX_MOD_I(a, b)",
                               "u": "SX_MOD_U(a, b)"}, np.remainder, domain="nonzero_b",
       aliases=("mod",), grad=d2(1.0, lambda a, b, y: -T.floor_divide(a, b), 0, 1)),
    Op("fmod", 2, "iuf", {"f": "SX_F2(fmod, a, b)", "i": "SX_FMOD_I(a, b)", "u": "SX_MOD_U(a, b)"},
       np.fmod, domain="nonzero_b", grad=d2(1.0, lambda a, b, y: -T.trunc(a / b), 0, 1)),
    Op("power", 2, "iufc", {"c": "sx_cpow(a, b)", "f": "SX_F2(pow, a, b)", "u": "sx_upow(a, b)",
                            "*": "sx_ipow(a, b)"}, np.power, domain="power", aliases=("pow",),
       grad=d2(_pow_da, _pow_db, 0, 1, OUT)),
    Op("maximum", 2, "biuf", {"f": "((a > b || a != a) ? a : b)", "*": "(a > b ? a : b)"},
       np.maximum, grad=_extreme(True)),
    Op("minimum", 2, "biuf", {"f": "((a < b || a != a) ? a : b)", "*": "(a < b ? a : b)"},
       np.minimum, grad=_extreme(False)),
    Op("arctan2", 2, "f", {"f": "SX_F2(atan2, a, b)"}, np.arctan2, aliases=("atan2",),
       grad=_atan2_grads()),
    # d/da: the signs' agreement; out carries b's sign bit (b may be a Python scalar)
    Op("copysign", 2, "f", {"f": "SX_F2(copysign, a, b)"}, np.copysign,
       grad=d2(lambda a, b, y: T.copysign(1.0, a) * T.copysign(1.0, y), 0.0, 0, OUT)),
    Op("hypot", 2, "f", {"f": "SX_F2(hypot, a, b)"}, np.hypot,
       grad=d2(lambda a, b, y: a / y, lambda a, b, y: b / y, 0, 1, OUT)),
    Op("logaddexp", 2, "f", {"f": "SX_LOGADDEXP(a, b)"}, np.logaddexp,
       # exp(a - y) as sigmoid(a - b): 1 and 0 (not exp(inf - inf)) where a or b is +inf
       grad=d2(lambda a, b, y: T.sigmoid(a - b), lambda a, b, y: T.sigmoid(b - a), 0, 1)),
    # float32/64 step with libm's (CUDA's) nextafter; the 16-bit floats on their own bits
    Op("nextafter", 2, "f", {"f": "SX_F2(nextafter, a, b)", "f16": "sx_nextafter_f16(a, b)",
                             "bf16": "sx_nextafter_bf16(a, b)"}, np.nextafter, grad=NO_RULE),
    Op("bitwise_and", 2, "biu", {"*": "a & b"}, np.bitwise_and, grad=NONE),
    Op("bitwise_or", 2, "biu", {"*": "a | b"}, np.bitwise_or, grad=NONE),
    Op("bitwise_xor", 2, "biu", {"*": "a ^ b"}, np.bitwise_xor, grad=NONE),
    Op("left_shift", 2, "iu", {"*": "SX_LSHIFT(a, b)"}, np.left_shift, domain="shift",
       aliases=("bitwise_left_shift",), grad=NONE),
    Op("right_shift", 2, "iu", {"*": "SX_RSHIFT(a, b)"}, np.right_shift, domain="shift",
       aliases=("bitwise_right_shift",), grad=NONE),
    Op("equal", 2, "biufc", {"c": "sx_ceq(a, b)", "*": "a == b"}, np.equal, out_bool=True, aliases=("eq",),
       grad=NONE),
    Op("not_equal", 2, "biufc", {"c": "sx_cne(a, b)", "*": "a != b"}, np.not_equal, out_bool=True,
       aliases=("ne",), grad=NONE),
    Op("less", 2, "biuf", {"*": "a < b"}, np.less, out_bool=True, aliases=("lt",), grad=NONE),
    Op("less_equal", 2, "biuf", {"*": "a <= b"}, np.less_equal, out_bool=True, aliases=("le",),
       grad=NONE),
    Op("greater", 2, "biuf", {"*": "a > b"}, np.greater, out_bool=True, aliases=("gt",),
       grad=NONE),
    Op("greater_equal", 2, "biuf", {"*": "a >= b"}, np.greater_equal, out_bool=True,
       aliases=("ge",), grad=NONE),
    Op("logical_and", 2, "biufc", {"c": "sx_cnonzero(a) & sx_cnonzero(b)", "*": "(a != 0) & (b != 0)"},
       np.logical_and, out_bool=True, grad=NONE),
    Op("logical_or", 2, "biufc", {"c": "sx_cnonzero(a) | sx_cnonzero(b)", "*": "(a != 0) | (b != 0)"},
       np.logical_or, out_bool=True, grad=NONE),
    Op("logical_xor", 2, "biufc", {"c": "sx_cnonzero(a) != sx_cnonzero(b)", "*": "(a != 0) != (b != 0)"},
       np.logical_xor, out_bool=True, grad=NONE),
]

# special functions, NaN-ignoring extremes, gcd / lcm ...: entries of the same kind, kept in
# their own module for the file's length
from . import optable_math as _math  # noqa: E402  (it builds its entries with Op, d1, d2 above)
from . import optable_special as _special  # noqa: E402  (torch.special's Bessel functions, polynomials)

UNARY += _math.UNARY + _special.UNARY
BINARY += _math.BINARY + _special.BINARY
OPS = {op.name: op for op in UNARY + BINARY}


def cast_expr(s: dt.DType, t: dt.DType) -> str:
    """The C expression (over `a`, a value of s's compute type) that the cast kernel s -> t
    stores with t's conversion: real to complex puts a zero imaginary part; complex to real
    keeps the real part (NumPy's cast, without its ComplexWarning) and to bool tests both;
    float to integer goes through sx_f2i64 / sx_f2u64 (cuda_src/scalar/types.h), so NaN and
    out-of-range values convert alike on every device and at every position; a 64-bit integer
    to float16 / bfloat16 through sx_i64_f_odd / sx_u64_f_odd, so that it rounds once."""
    if s.kind in "fc" and t.kind in "iu":   # defined for NaN and out-of-range values alike
        if s.kind == "f" and s.itemsize <= 4 and t.itemsize <= 4:   # (computed in float)
            return f"sx_f2lo{8 * t.itemsize}f(a)"   # sx_f2i64's low bits, in 32-bit lanes: vectorises
        v = "a.re" if s.kind == "c" else "a"
        return f"sx_f2u64({v})" if t is dt.uint64 else f"sx_f2i64({v})"
    if s.itemsize == 8 and s.kind in "iu" and t in (dt.float16, dt.bfloat16):
        # through a float rounded to odd: the store's rounding is then the only one (a plain
        # int64 -> double -> 16 bits rounded twice)
        return f"sx_{s.kind}64_f_odd(a)"
    if s.kind != "c" and t.kind != "c":
        return "a"
    if t.kind == "c":
        mk, rt = ("sx_cf_make", "float") if t is dt.complex64 else ("sx_cd_make", "double")
        return (("a" if s is t else f"{mk}(({rt})a.re, ({rt})a.im)") if s.kind == "c"
                else f"{mk}(({rt})(a), 0)")
    return "sx_cnonzero(a)" if t is dt.bool_ else "a.re"


# NumPy's loop search order; bfloat16 is only ever its own loop.
_SEARCH = (dt.bool_, dt.int8, dt.uint8, dt.int16, dt.uint16, dt.int32, dt.uint32, dt.int64,
           dt.uint64, dt.float16, dt.float32, dt.float64)


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
                                 "f": "float", "c": "complex"}[k] for k in op.kinds) + ")")


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


@cache
def ew_specs(d: dt.DType) -> dict:
    """The elementwise kernels whose loop takes dtype d, which both backends generate (and fuse)
    from: name -> (arity, input suffixes, output suffix, C expression over `a` (and `b`)): the
    table's ops, the casts from d to every dtype, and `where` (arity 3: a bool condition, then
    two values of d; no expression: it copies)."""
    k, s = d.kind, d.sfx
    specs = {}
    for op in UNARY + BINARY:
        if k in op.kinds:
            specs[f"{op.name}_{s}"] = (op.arity, (s,) * op.arity, op.out_dtype(d).sfx, f"({op.expr(k, s)})")
    for t in dt.ALL:
        specs[f"cast_{s}_{t.sfx}"] = (1, (s,), t.sfx, f"({cast_expr(d, t)})")
    specs[f"where_{s}"] = (3, ("b8", s, s), s, None)
    return specs
