"""Shared hypothesis strategies and NumPy-comparison utilities for the property tests.

Other test files may import from here (`from helpers import ...`: pytest puts tests/ on sys.path).

Values always travel as NumPy arrays. For bfloat16, which NumPy lacks, the array is float32
holding values already rounded to bfloat16, so a tensor built from it holds exactly those values.

Hypothesis draws the structure of a case (shape, dtype, layout and a seed); the values come from
a NumPy generator seeded by hypothesis. Drawing every element through hypothesis costs ~10 ms per
small array, too slow for ~60 ops x 10 dtypes in CI; a seed keeps a case cheap and reproducible.

    a = draw(arrays_for(dtype, shape, domain))     # values for dtype, respecting a domain hint
    x = make_tensor(a, dtype)                      # a contiguous tensor holding them
    a2, y = draw(views(a, dtype))                  # a NON-contiguous tensor y holding a2
    assert_close(T.exp(y), np.exp(a2))             # dtype, shape and values, per-dtype tolerance
"""
from __future__ import annotations

import operator
import warnings

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensor as T
from tensor import dtypes as dt
from tensor.optable import loop_dtype

# ---------------------------------------------------------------- dtypes

DTYPE_NAMES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
               "float16", "bfloat16", "float32", "float64")
ALL_DTYPES = tuple(dt.dtype(n) for n in DTYPE_NAMES)
NP_DTYPES = tuple(d for d in ALL_DTYPES if d is not dt.bfloat16)  # the ones NumPy also has
FLOAT_DTYPES = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
INT_DTYPES = (dt.int8, dt.uint8, dt.int16, dt.uint16, dt.int32, dt.uint32, dt.int64, dt.uint64)


def dtypes(include_bf16: bool = True):
    """Strategy: one of the 13 dtypes (12 without bfloat16)."""
    return st.sampled_from(ALL_DTYPES if include_bf16 else NP_DTYPES)


def storage_np(d: dt.DType) -> np.dtype:
    """The NumPy dtype test values of dtype d travel in (float32 for bfloat16)."""
    return np.dtype(np.float32) if d is dt.bfloat16 else d.np


def seeds():
    return st.integers(0, 2**32 - 1)


# ---------------------------------------------------------------- bfloat16 in NumPy

def bf16_round(x) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), returned as float32.

    Bit arithmetic on the float32 pattern: add 0x7FFF plus the lowest kept bit, keep the top 16
    bits. NaN stays NaN; values past the largest bfloat16 become +-inf."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    r = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16) & 0xFFFFFFFF
    out = r.astype(np.uint32).view(np.float32).reshape(x.shape)
    return np.where(np.isnan(x), np.float32(np.nan), out).astype(np.float32)


def to_np(t) -> np.ndarray:
    """A NumPy copy of a tensor's values (bfloat16 goes through float32 first)."""
    assert isinstance(t, T.Tensor), f"expected a Tensor, got {type(t).__name__}"
    if t.dtype is dt.bfloat16:
        t = t.astype(dt.float32)
    return np.array(t.numpy(), copy=True)


DEVICE = "cpu"  # set by the `device` fixture (conftest.py) for device-parametrized tests


def make_tensor(a, d: dt.DType, device=None):
    """A fresh contiguous tensor of dtype d holding the values of a (never a view of a), on
    `device` (default: the test's device, DEVICE)."""
    a = np.asarray(a)
    dev = device or DEVICE
    if d is dt.bfloat16:
        t = T.asarray(np.array(a, dtype=np.float32)).astype(dt.bfloat16)
    else:
        t = T.asarray(np.array(a, dtype=d.np, copy=True))
    return t if dev == "cpu" else t.to(dev)


def small_values(rng, shape, d: dt.DType) -> np.ndarray:
    """Small values exactly representable in d (float32 carrying bfloat16)."""
    if d is dt.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    v = rng.integers(0 if d.kind == "u" else -50, 50, shape)
    if d.kind == "f":
        v = v / 4.0
    return np.asarray(v.astype(np.float32 if d is dt.bfloat16 else d.np))


def as_compute(a, d: dt.DType) -> np.ndarray:
    """Values of a converted as the library converts them to dtype d (bfloat16: via float32,
    then round to nearest even, as the cast kernels do), as a NumPy array."""
    a = np.asarray(a)
    if d is dt.bfloat16:
        return bf16_round(a.astype(np.float32))
    return a.astype(d.np)


# ---------------------------------------------------------------- tolerances and comparison

# (rtol, atol) per result dtype. float16 results match NumPy's float16 (both compute in float32
# and round); bfloat16 results are compared with a float32 reference over the same bfloat16
# inputs; float32 allows a few ulp for transcendentals (our libm differs from NumPy's SIMD code).
TOLERANCE = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1e-2, 1e-5),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-14),
}


def _dtype_name(d) -> str:
    if isinstance(d, dt.DType):
        return d.name
    if isinstance(d, str) and d in DTYPE_NAMES:
        return d
    return np.dtype(d).name


def assert_close(t, expected, dtype=None, rtol=None, atol=None, what: str = "") -> None:
    """Assert that tensor t equals `expected` (array-like) in dtype, shape and values.

    dtype: the dtype t must have (a name, DType or NumPy dtype); default: expected's NumPy
    dtype. Integers and bools compare exactly; floats within the tolerance of t's dtype, NaN
    equal to NaN and an infinity only to the same infinity."""
    assert isinstance(t, T.Tensor), f"{what}: expected a Tensor, got {type(t).__name__}"
    expected = np.asarray(expected)
    want = _dtype_name(dtype if dtype is not None else expected.dtype)
    assert t.dtype.name == want, f"{what}: dtype {t.dtype.name}, expected {want}"
    assert t.shape == expected.shape, f"{what}: shape {t.shape}, expected {expected.shape}"
    got = to_np(t)
    if t.dtype.kind != "f":
        ok = np.array_equal(got, expected.astype(got.dtype))
        assert ok, f"{what}: {t.dtype.name} values differ\n got: {got!r}\nwant: {expected!r}"
        return
    r0, a0 = TOLERANCE[t.dtype.name]
    rtol = r0 if rtol is None else rtol
    atol = a0 if atol is None else atol
    g = got.astype(np.float64)
    e = expected.astype(np.float64)
    nan_g, nan_e = np.isnan(g), np.isnan(e)
    assert np.array_equal(nan_g, nan_e), (
        f"{what}: NaN positions differ\n got: {got!r}\nwant: {expected!r}")
    inf_e = np.isinf(e)
    assert np.array_equal(g[inf_e], e[inf_e]), (
        f"{what}: infinities differ\n got: {got!r}\nwant: {expected!r}")
    rest = ~nan_e & ~inf_e
    with np.errstate(all="ignore"):
        err = np.abs(g[rest] - e[rest])
        bound = atol + rtol * np.abs(e[rest])
    bad = ~(err <= bound)
    assert not bad.any(), (
        f"{what}: {t.dtype.name} values differ beyond rtol={rtol}, atol={atol} at "
        f"{int(bad.sum())} of {bad.size} positions\n got: {got!r}\nwant: {expected!r}")


def np_quiet(fn, *args, **kwargs):
    """Call a NumPy reference with floating-point warnings silenced (x/0, log(0), ...)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


# ---------------------------------------------------------------- shapes

_MAX_SIDE = {0: 1, 1: 8, 2: 6, 3: 4, 4: 3}  # keeps every drawn array at <= 81 elements


@st.composite
def shapes(draw, min_dims: int = 0, max_dims: int = 4, min_side: int = 0, max_side: int | None = None):
    """Shapes with 0-4 dimensions: 0-d and empty dimensions included, small enough to be fast."""
    nd = draw(st.integers(min_dims, max_dims))
    hi = max(_MAX_SIDE[nd] if max_side is None else max_side, 1)
    lo = max(min_side, 1)
    # mostly non-empty sides; an empty one (when min_side allows) about one time in 3*hi
    side = st.sampled_from(list(range(lo, hi + 1)) * 3 + [min_side])
    return tuple(draw(st.lists(side, min_size=nd, max_size=nd)))


def broadcastable_shapes(num_shapes: int = 2, min_dims: int = 0, max_dims: int = 4):
    """Strategy: a tuple of mutually broadcastable shapes (size-1 and missing dims included)."""
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims,
                                             max_dims=max_dims, min_side=0, max_side=3).map(
        lambda b: b.input_shapes)


# ---------------------------------------------------------------- values per op domain

_SPECIAL_F = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])


def value_spec(d: dt.DType, domain: str = "any", compute: dt.DType | None = None, role: str = "a"):
    """What an op input of dtype d may hold, from the op table's domain hint.

    domain: any, positive, unit, gt_m1, ge1, exp, nonzero, nonzero_b, power, shift. role: 'a' (first
    operand) or 'b' (second; nonzero_b, power and shift constrain it). compute: the dtype the op
    runs in (integers fed to a float loop stay small; shift counts stay below its bit width).
    Returns ('b', only_true) | ('i', lo, hi, nonzero) | ('f', lo, hi, nonzero, specials)."""
    compute = compute or d
    nonzero = (domain == "nonzero" and role == "a") or (domain == "nonzero_b" and role == "b")
    if role == "b" and domain not in ("nonzero_b", "power", "shift"):
        domain = "any"
    if role == "a" and domain in ("nonzero_b", "shift"):
        domain = "any"
    if d is dt.bool_:
        return ("b", nonzero)
    if d.kind in "iu":
        lo, hi = dt.iinfo_bounds(d)
        if domain == "shift":
            bits = (compute if compute.kind in "iu" else d).bits
            return ("i", 0, min(hi, bits - 1), False)
        if domain == "power":  # NumPy: integers to negative integer powers are an error
            return ("i", 0, min(hi, 6), False) if role == "b" else ("i", max(lo, -5), min(hi, 5), False)
        lim = {"positive": (1, 100), "unit": (-1, 1), "gt_m1": (0, 100), "ge1": (1, 100),
               "exp": (-8, 8)}.get(domain)
        if lim is None and compute.kind == "f":
            lim = (-100, 100)  # an integer input to a float loop: keep transcendentals tame
        if lim is not None:
            lo, hi = max(lo, lim[0]), min(hi, lim[1])
        return ("i", lo, hi, nonzero)
    if domain == "power":
        return ("f", -3.0, 3.0, False, False) if role == "b" else ("f", 0.125, 10.0, False, False)
    if nonzero or domain == "nonzero":
        return ("f", 0.125, 50.0, True, False)
    lim = {"positive": (1e-3, 100.0), "unit": (-1.0, 1.0), "gt_m1": (-0.99, 100.0),
           "ge1": (1.0, 100.0), "exp": (-8.0, 8.0)}.get(domain)
    if lim is not None:
        return ("f", lim[0], lim[1], False, False)
    return ("f", -50.0, 50.0, False, True)


def gen_values(rng: np.random.Generator, d: dt.DType, shape, domain: str = "any",
               compute: dt.DType | None = None, role: str = "a", specials: bool = True) -> np.ndarray:
    """A NumPy array of test values for dtype d (float32 holding bfloat16 values for bfloat16).

    Integers mix small values, the whole range (wrap-around) and the edges (min, max, 0, +-1);
    floats mix uniform values, multiples of 0.5 (ties for rint/round/floor) and, in the 'any'
    domain, NaN, +-inf and +-0."""
    spec = value_spec(d, domain, compute, role)
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    if spec[0] == "b":
        v = np.ones(n, bool) if spec[1] else rng.random(n) < 0.5
        return v.reshape(shape)
    pick = rng.random(n)
    if spec[0] == "i":
        _, lo, hi, nonzero = spec
        it = np.uint64 if hi > 2**63 - 1 else np.int64   # uint64's range is past int64's
        full = rng.integers(lo, hi, size=n, endpoint=True, dtype=it)
        small = rng.integers(max(lo, -10), min(hi, 10), size=n, endpoint=True, dtype=it)
        edges = np.array(sorted({lo, hi, max(lo, min(hi, 0)), max(lo, min(hi, 1)),
                                 max(lo, min(hi, -1))}), dtype=it)
        v = np.where(pick < 0.4, small, np.where(pick < 0.8, full, rng.choice(edges, size=n)))
        if nonzero:
            v = np.where(v == 0, 1 if hi >= 1 else -1, v)
        return v.astype(d.np).reshape(shape)
    _, lo, hi, nonzero, spec_ok = spec
    if nonzero:
        v = np.exp(rng.uniform(np.log(lo), np.log(hi), size=n)) * rng.choice([-1.0, 1.0], size=n)
    elif lo > 0:
        v = np.exp(rng.uniform(np.log(lo), np.log(hi), size=n))
    else:
        v = rng.uniform(lo, hi, size=n)
        half = np.clip(np.round(rng.uniform(lo, hi, size=n) * 2) / 2, lo, hi)
        v = np.where(pick < 0.25, half, v)
        if spec_ok and specials:
            v = np.where(pick > 0.85, rng.choice(_SPECIAL_F, size=n), v)
    v = v.reshape(shape)
    if d is dt.bfloat16:
        return bf16_round(v.astype(np.float32))
    return v.astype(d.np)


def arrays_for(d: dt.DType, shape, domain: str = "any", compute: dt.DType | None = None,
               role: str = "a", specials: bool = True):
    """Strategy: NumPy arrays of test values for dtype d (see gen_values)."""
    return seeds().map(
        lambda s: gen_values(np.random.default_rng(s), d, shape, domain, compute, role, specials))


def scalar_strategy(kind: str, d: dt.DType, domain: str = "any", role: str = "b"):
    """Strategy: a Python scalar of kind 'b', 'i' or 'f' for an op with a tensor of dtype d.

    Ints stay inside d's range when d is an integer dtype (they adopt d's dtype: NEP 50)."""
    probe = {"b": dt.bool_, "i": d if d.kind in "iu" else dt.int8, "f": dt.float32}[kind]
    spec = value_spec(probe, domain, probe, role)
    if spec[0] == "b":
        return st.just(True) if spec[1] else st.booleans()
    if spec[0] == "i":
        s = st.integers(spec[1], spec[2])
        return s.filter(bool) if spec[3] else s
    _, lo, hi, nonzero, _ = spec
    s = st.floats(lo, hi, allow_nan=False, allow_subnormal=False)
    return s | s.map(operator.neg) if nonzero else s


# ---------------------------------------------------------------- non-contiguous views

def make_view(rng: np.random.Generator, a, d: dt.DType):
    """(expected, tensor): a tensor of dtype d that is NOT contiguous, holding `expected`.

    The tensor is built with tensor ops over a bigger, differently laid-out buffer, so it has
    odd strides: permuted axes (transpose), steps > 1 (a[::2] of a bigger array), negative steps
    (::-1, ::-2) and broadcast axes (stride 0, via broadcast_to/expand of a smaller array).
    expected equals a, except along broadcast axes, where it repeats a's first entry (a broadcast
    view cannot hold arbitrary values). 0-d tensors are always contiguous and come back as is;
    so can tensors whose only odd axes have size 1 (contiguity ignores those)."""
    a = np.asarray(a)
    nd = a.ndim
    if nd == 0:
        return a.copy(), make_tensor(a, d)
    bcast = [bool(b) for b in rng.random(nd) < 0.25]
    lead = a.shape[0] >= 1 and bool(rng.random() < 0.25)   # broadcast a missing leading axis
    small = a[tuple(slice(0, 1) if b else slice(None) for b in bcast)]
    if lead:
        small = np.asarray(small[0])
    k = small.ndim
    perm = [int(i) for i in rng.permutation(k)]
    steps = [int(s) for s in rng.choice([1, 1, 2, 3, -1, -2], size=k)]
    starts = [int(s) for s in rng.integers(0, 3, size=k)]
    odd = (k > 1 and perm != sorted(perm)) or any(s != 1 for s in steps) or any(bcast) or lead
    if not odd:
        steps[int(rng.integers(0, k))] = int(rng.choice([2, -1, -2]))
    stored = np.array(small.transpose(perm), order="C")   # small, with its axes permuted ...
    big_shape, key = [], []
    for n, s, o in zip(stored.shape, steps, starts):       # ... at every s-th place of a bigger buffer
        big_shape.append(o + abs(s) * max(n, 1) + 1)
        if s > 0:
            key.append(slice(o, o + s * n, s))
        else:
            first = o + abs(s) * (n - 1) if n else o
            stop = first - abs(s) * n
            key.append(slice(first, None if stop < 0 else stop, s))
    key = tuple(key)
    big = np.full(tuple(big_shape), True if d is dt.bool_ else 7, dtype=storage_np(d))
    big[key] = stored
    t = make_tensor(big, d)[key]                               # stepped / negative-stepped view
    if k > 1:
        t = t.permute(*[int(i) for i in np.argsort(perm)])     # transposed view; values == small
    if lead or any(bcast):
        t = T.broadcast_to(t, a.shape) if rng.random() < 0.5 else t.expand(*a.shape)
    assert t.shape == a.shape, (t.shape, a.shape)
    return np.broadcast_to(small, a.shape).copy(), t


def views(a, d: dt.DType):
    """Strategy: (expected, tensor) with a non-contiguous tensor of dtype d (see make_view)."""
    return seeds().map(lambda s: make_view(np.random.default_rng(s), a, d))


def maybe_view(rng: np.random.Generator, a, d: dt.DType, p_view: float = 0.5):
    """A contiguous tensor, or with probability p_view a non-contiguous view: (values, tensor)."""
    if rng.random() < p_view:
        return make_view(rng, a, d)
    return np.asarray(a), make_tensor(a, d)


# ---------------------------------------------------------------- references

def result_dtype_unary(op, d: dt.DType) -> dt.DType:
    """The documented output dtype of a unary op for input dtype d (TypeError if unsupported)."""
    ld = loop_dtype(op, d)
    return dt.bool_ if op.out_bool else ld


def _bf16_spacing(v: np.ndarray) -> np.ndarray:
    """spacing over bfloat16 values (in float32): the next bfloat16 away from zero (+-0 step
    up to the smallest subnormal, as NumPy's spacing), minus the value; NaN at +-inf."""
    b = v.view(np.uint32) >> 16
    nxt = np.where((b & 0x7FFF) == 0, 1, b + 1).astype(np.uint32) << 16
    with np.errstate(invalid="ignore"):
        return nxt.view(np.float32) - v


def ref_unary(op, a, d: dt.DType):
    """(expected values, expected dtype name) of op over values a of dtype d.

    NumPy dtypes: op.ref on the NumPy array itself, so NumPy's own loop choice decides the
    dtype. bfloat16: op.ref in float32 over the (exactly representable) bfloat16 values."""
    if d is dt.bfloat16:
        if op.name == "spacing":   # the step of bfloat16 itself, which float32's spacing is not
            return _bf16_spacing(np.asarray(a, np.float32)), "bfloat16"
        return np_quiet(op.ref, np.asarray(a, np.float32)), result_dtype_unary(op, d).name
    r = np.asarray(np_quiet(op.ref, np.asarray(a, d.np)))
    return r, r.dtype.name


def ours_binary_dtype(op, a, b) -> dt.DType:
    """Our loop dtype for op(a, b): a and b are DTypes or Python scalars (weak, NEP 50)."""
    from tensor.optable import binary_loop_dtype
    return binary_loop_dtype(op, a, b)


LOGICAL_BINARY = frozenset(("logical_and", "logical_or", "logical_xor"))


def ref_binary(op, a, da, b, db):
    """(expected values, expected dtype name) of op(a, b).

    da, db: DTypes of the operands, or None for a Python scalar. Without bfloat16, NumPy decides
    everything (NEP 50 weak scalars included). With bfloat16, our promotion picks the loop dtype
    and op.ref computes in float32 (bfloat16 loops) over inputs rounded to bfloat16."""
    if da is not dt.bfloat16 and db is not dt.bfloat16:
        aa = a if da is None else np.asarray(a, da.np)
        bb = b if db is None else np.asarray(b, db.np)
        r = np.asarray(np_quiet(op.ref, aa, bb))
        return r, r.dtype.name
    if op.name in LOGICAL_BINARY and da is not db:
        # NumPy's logical ufuncs read operands of different dtypes (a Python scalar included)
        # as bool, not in the promoted dtype: logical_and(float16 array, 1e-300) is True; the
        # library does the same for bfloat16
        def as_bool(x, d):
            return (np.asarray(x) if d is None else as_compute(x, d)) != 0
        return np.asarray(op.ref(as_bool(a, da), as_bool(b, db))), "bool"
    ld = ours_binary_dtype(op, a if da is None else da, b if db is None else db)
    comp = np.float32 if ld is dt.bfloat16 else ld.np

    def conv(x):
        return as_compute(np.asarray(x), ld).astype(comp)

    r = np.asarray(np_quiet(op.ref, conv(a), conv(b)))
    return r, ("bool" if op.out_bool else ld.name)


BINARY_DUNDER = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "true_divide": operator.truediv, "floor_divide": operator.floordiv, "remainder": operator.mod,
    "power": operator.pow, "bitwise_and": operator.and_, "bitwise_or": operator.or_,
    "bitwise_xor": operator.xor, "left_shift": operator.lshift, "right_shift": operator.rshift,
    "equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
    "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge,
}
INPLACE_DUNDER = {
    "add": operator.iadd, "subtract": operator.isub, "multiply": operator.imul,
    "true_divide": operator.itruediv, "floor_divide": operator.ifloordiv,
    "remainder": operator.imod, "power": operator.ipow, "bitwise_and": operator.iand,
    "bitwise_or": operator.ior, "bitwise_xor": operator.ixor, "left_shift": operator.ilshift,
    "right_shift": operator.irshift,
}


# ---------------------------------------------------------------- CUDA compile checks

CUDA_ARCHS = ("sm_80", "sm_90", "sm_100")   # every CUDA kernel is compiled for these in the tests


def nvrtc_offsetof(nvrtc) -> str:
    """A preamble defining SX_OFFSETOF(type, member) as a constant expression NVRTC accepts in a
    static_assert: its __builtin_offsetof from NVRTC 13.4 on (older ones reject the name), before
    that the null-pointer form, which EDG's __INTADDR__ makes a constant."""
    if nvrtc.version() >= (13, 4):
        return "#define SX_OFFSETOF(t, m) __builtin_offsetof(t, m)\n"
    return "#define SX_OFFSETOF(t, m) ((unsigned long long)__INTADDR__(&(((t *)0)->m)))\n"


def nvrtc_or_skip():
    """tensor.cuda.nvrtc, or skip the test (with the install line) when NVRTC is missing."""
    import pytest
    pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-python (cuda.bindings.nvrtc) is not "
                        'installed: pip install "cuda-python>=13" "nvidia-cuda-nvrtc>=13"')
    from tensor.cuda import nvrtc
    try:
        nvrtc.version()
    except nvrtc.NVRTCNotFoundError as e:
        pytest.skip(str(e))
    return nvrtc


def sort_values(rng, d: dt.DType, shape) -> np.ndarray:
    """Values of d for sorting tests: many duplicates and every special value d has (float32
    carries bfloat16: all of these are exact in it)."""
    if d is dt.bool_:
        return rng.random(shape) < 0.5
    if d.kind == "f":
        pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 3.0, 0.25, -0.25])
    else:
        info = np.iinfo(d.np)
        pool = np.array([info.min, info.max, 0, 1, 2, -1 if info.min < 0 else 3, 7], d.np)
    return pool[rng.integers(0, len(pool), shape)].astype(storage_np(d))


def run_ranks(script: str, n: int = 2, timeout: float = 120.0, env: dict | None = None) -> list:
    """Run `script` (Python source) on n MPI ranks (`mpiexec -n n`, the mpich wheel's) with a
    time limit; fail with every rank's output unless all exit 0. Returns each rank's stdout
    lines, all ranks together (print the rank where it matters). Skips without mpi4py/mpiexec."""
    import os
    import subprocess
    import sys
    import tempfile

    import pytest
    pytest.importorskip("mpi4py", reason="the distributed tests need mpi4py and the mpich wheel: "
                        "pip install 'stridex[distributed]'")
    from tensor.distributed.run import _find_mpiexec
    exe = _find_mpiexec()
    if exe is None:
        pytest.skip("mpiexec not found (pip install mpich)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(script)
    e = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""),
             STRIDEX_CUDA_EMULATOR=os.environ.get("STRIDEX_CUDA_EMULATOR", "0"),
             OMP_NUM_THREADS="1", STRIDEX_NUM_THREADS="1")
    e.update(env or {})
    try:
        r = subprocess.run([exe, "-n", str(n), sys.executable, f.name],
                           env=e, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as t:
        raise AssertionError(f"{n} ranks did not finish within {timeout} s:\n"
                             f"{(t.stdout or b'')!s:.3000}\n{(t.stderr or b'')!s:.3000}") from None
    finally:
        os.unlink(f.name)
    if r.returncode != 0:
        raise AssertionError(f"mpiexec -n {n} exited with {r.returncode}:\n--- stdout\n"
                             f"{r.stdout[-4000:]}\n--- stderr\n{r.stderr[-4000:]}")
    return r.stdout.splitlines()


def synced(result=None):
    """result, once the deferred device index checks have reported: on a GPU a bad index
    raises at the next host synchronization, not in the op (tensor/cuda/checks.py), so an
    error test wraps the op in synced() to see the error where NumPy and the CPU raise it."""
    import sys
    checks = sys.modules.get("tensor.cuda.checks")
    for index in list(checks._slabs) if checks is not None else ():
        if checks.pending(index):
            T.cuda.synchronize(index)   # a device synchronization reads every waiting check
    return result
