"""Differential fuzzer: random programs run on our tensors and on NumPy arrays side by side.

A hypothesis state machine keeps a pool of (tensor, array) pairs made the same way on both
sides -- fresh arrays, views of them (slices with any step, transposes, permutations, flips,
broadcasts, reshapes, as_strided within bounds), results of ops -- so they alias each other
exactly as the arrays do. Each step runs one random operation on both sides: an elementwise op
of the op table (function, operator, in-place operator or out=, operands from the pool or
Python scalars), a reduction, an assignment `x[key] = value` whose key and value may alias x
(ints, slices, masks, integer arrays), a copy or a cast. After every step: both raised
(compatible exception types; a write that raised left its target unchanged) or neither, and
every pair of the pool has the same shape, dtype, read-only-ness, memory sharing with every
other pair, and values (floats within the dtype's tolerance; the float values are then copied
from NumPy into the tensors, so rounding differences never compound).

Where we differ from NumPy on purpose, the reference is adjusted (each place says why): an axis
on a 0-d array is out of bounds (NumPy accepts 0 and -1), a bool array to a Python int power
is int64, integer 1 / 0 is 0, a value's leading size-1 dimensions may go into one element or a
mask selection, and an empty selection still checks the value's shape; copy() keeps the layout
(NumPy's order="K"); new results are compared in our layout, which NumPy's K order need not
share.

Left out on purpose: bfloat16 (NumPy has no such dtype; the op tests check it against float32
references), writes into a view whose elements overlap each other (we raise where NumPy
buffers; tests/test_aliasing.py checks that), float to integer casts of values the integer
cannot hold (undefined in C, platform-dependent in NumPy).

Profiles: "ci" runs a few short programs per device; `--hypothesis-profile=fuzz` long ones,
for about an hour (tests/conftest.py).
"""
from __future__ import annotations

import operator
import os
import warnings

import numpy as np
import pytest
from helpers import BINARY_DUNDER, INPLACE_DUNDER, NP_DTYPES, TOLERANCE, synced, to_np
from hypothesis import note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

import tensor as T
from tensor import dtypes as dt
from tensor import optable_special
from tensor.aliasing import internal_overlap
from tensor.optable import BINARY, UNARY

# torch.special's Bessel functions and polynomials are left out: their NumPy references are
# quadratures and series accurate near the tests' inputs only (tests/test_optable.py checks them
# there, tests/test_special_bessel.py against mpmath), and they allocate in proportion to |x|
# zeta too: for a negative q its reference takes the negative terms as they come, and for an odd
# s they cancel the positive ones (zeta(33, -0.5): 2^33 - 2^33 left 2^-19 of rounding where the
# kernel's pairing gives 1.5^-33; tests/test_lead_fixes6.py checks that case)
_SPECIAL = {op.name for op in optable_special.UNARY + optable_special.BINARY} | {"zeta"}
FUZZ_UNARY = [op for op in UNARY if op.name not in _SPECIAL]
FUZZ_BINARY = [op for op in BINARY if op.name not in _SPECIAL]

pytestmark = pytest.mark.usefixtures("device")

POOL_MAX = 10
REDUCTIONS = ("sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin")
VIEWS = ("slice", "index", "T", "permute", "flip", "broadcast", "reshape", "expand_dims",
         "squeeze", "as_strided")
_KINDS = (IndexError, ValueError, TypeError, OverflowError, ZeroDivisionError)


class Pair:
    """A tensor and the NumPy array it must equal; root: it owns its memory (not a view)."""

    __slots__ = ("ours", "ref", "root")

    def __init__(self, ours, ref, root=False):
        self.ours, self.ref, self.root = ours, ref, root


def _kinds(e: BaseException) -> set:
    return {k for k in _KINDS if isinstance(e, k)}


def _quiet(fn):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _describe(p: Pair) -> str:
    r = p.ref
    return (f"{r.dtype} {r.shape} strides {tuple(p.ours.strides)} offset {p.ours.offset}"
            f"{'' if r.flags.writeable else ' read-only'}: {np.array2string(r, threshold=20)}")


def both(ours_fn, ref_fn, what: str, target: Pair | None = None):
    """(ours, ref) when neither raised, None when both did (compatible types); else fail.
    target: the pair a write goes to. When both raise, ours must be unchanged (a failed op
    writes nothing), and NumPy's gets ours back (NumPy may have written part of it)."""
    note(f"step: {what}")
    if target is not None:
        before = to_np(target.ours).copy()
        res = both(ours_fn, ref_fn, what)
        if res is None:
            after = to_np(target.ours)
            assert np.array_equal(after, before, equal_nan=after.dtype.kind == "f"), (
                f"{what}: the op raised but changed its target\n before: {before!r}\n after: "
                f"{after!r}")
            if target.ref.flags.writeable:
                np.copyto(target.ref, before)
        return res
    try:
        ref, ref_err = _quiet(ref_fn), None
    except Exception as e:  # noqa: BLE001 - compared below
        ref, ref_err = None, e
    try:
        ours, ours_err = _quiet(lambda: synced(ours_fn())), None   # (a GPU's index errors)
    except Exception as e:  # noqa: BLE001
        ours, ours_err = None, e
    if ref_err is None and ours_err is None:
        return ours, ref
    if ref_err is not None and ours_err is not None:
        assert _kinds(ref_err) & _kinds(ours_err), (
            f"{what}: NumPy raised {type(ref_err).__name__}({ref_err}), we raised "
            f"{type(ours_err).__name__}({ours_err})")
        return None
    if ours_err is None:
        raise AssertionError(f"{what}: NumPy raised {type(ref_err).__name__}({ref_err}); we "
                             f"returned {ours!r:.300}")
    raise AssertionError(f"{what}: we raised {type(ours_err).__name__}({ours_err}); NumPy "
                         f"returned {ref!r:.300}") from ours_err


def _values(rng, shape, d: dt.DType) -> np.ndarray:
    if d is dt.bool_:
        return rng.random(shape) < 0.5
    if d.kind in "iu":
        lo, hi = (0, 60) if d.kind == "u" else (-40, 40)
        v = rng.integers(lo, hi, shape).astype(d.np)
        if v.size and rng.random() < 0.2:   # the dtype's extremes now and then
            info = np.iinfo(d.np)
            v.flat[rng.integers(v.size)] = info.min if rng.random() < 0.5 else info.max
        return v
    v = (rng.standard_normal(shape) * 8).astype(d.np)
    if v.size and rng.random() < 0.2:
        v.flat[rng.integers(v.size)] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0])
    if v.size and rng.random() < 0.3:
        v = np.round(v)   # integral values: ties and exact cases for floor/rint/remainder
    return v


def _close(o, r, what: str, tol: str | None = None) -> None:
    """o (tensor) equals r (array): shape, dtype, values (floats within the tolerance of dtype
    tol, by default o's)."""
    r = np.asarray(r)
    assert tuple(o.shape) == r.shape, f"{what}: shape {tuple(o.shape)}, NumPy {r.shape}"
    assert o.dtype.name == r.dtype.name, f"{what}: dtype {o.dtype.name}, NumPy {r.dtype.name}"
    g = to_np(o)
    if o.dtype.kind != "f":
        assert np.array_equal(g, r), f"{what}: values differ\n ours: {g!r}\nnumpy: {r!r}"
        return
    rtol, atol = TOLERANCE[tol or o.dtype.name]
    g64, r64 = g.astype(np.float64), r.astype(np.float64)
    same = (g64 == r64) | (np.isnan(g64) & np.isnan(r64))
    with np.errstate(all="ignore"):
        near = np.abs(g64 - r64) <= atol + rtol * np.abs(r64)
    ok = same | (near & np.isfinite(r64))
    assert ok.all(), f"{what}: values differ\n ours: {g!r}\nnumpy: {r!r}"


def _reciprocal(x, out=None):
    """Integer 1 / 0 is 0 here (as integer division by zero); NumPy leaves it undefined."""
    x = np.asarray(x)
    zero = x == 0   # now: out may be x itself
    r = np.reciprocal(x, out=out) if out is not None else np.array(np.reciprocal(x))
    if x.dtype.kind in "iub":
        np.copyto(r, 0, where=np.broadcast_to(zero, r.shape))
    return r


def _power(a, b, out=None):
    """A bool array to a Python int power is int64 here, as `bool + int` is in NumPy too (NumPy's
    power alone picks int8)."""
    def widen(x, other):
        if isinstance(x, np.ndarray) and x.dtype == bool and type(other) is int:
            return x.astype(np.int64)
        return x
    return np.power(widen(a, b), widen(b, a), out=out)


def _ref(op):
    """The NumPy reference of op, with the documented differences above."""
    return {"reciprocal": _reciprocal, "power": _power}.get(op.name, op.ref)


def _np_setitem(a: np.ndarray, key, v) -> None:
    """a[key] = v, where a value's leading size-1 dimensions may also go into a single element
    or a boolean-mask selection (PyTorch's rule, and ours; NumPy 2 refuses those two), and a
    value that fits no mask selection, or an empty selection, is a shape mismatch (ValueError,
    as PyTorch's)."""
    try:
        sel, vs = a[key], np.asarray(v)
    except IndexError:   # the assignment below raises its own error (a shape mismatch first)
        sel = None
    if isinstance(sel, np.ndarray) and sel.size == 0:   # NumPy checks no shapes then; we do
        lead = next((i for i, n in enumerate(vs.shape) if n != 1), vs.ndim)
        vs = vs.reshape(vs.shape[min(lead, max(vs.ndim - sel.ndim, 0)):])
        if vs.ndim > sel.ndim or any(m not in (1, n) for m, n in zip(vs.shape[::-1], sel.shape[::-1])):
            raise ValueError(f"shape mismatch: {vs.shape} into an empty selection {sel.shape}")
    try:
        try:
            a[key] = v
        except (ValueError, TypeError):
            v = np.asarray(v)
            lead = next((i for i, n in enumerate(v.shape) if n != 1), v.ndim)
            if not lead:
                raise
            a[key] = v.reshape(v.shape[lead:])
    except TypeError as e:
        if "boolean array indexing" in str(e):
            raise ValueError(str(e)) from e
        raise


def _fits_int(values: np.ndarray, d: dt.DType) -> bool:
    """Whether float values convert to integer dtype d without undefined behaviour."""
    if d.kind not in "iu" or values.dtype.kind != "f" or values.size == 0:
        return True
    info = np.iinfo(d.np)
    v = values.astype(np.float64)
    return bool(np.isfinite(v).all() and (v > info.min - 1).all() and (v < info.max + 1).all())


class Program(RuleBasedStateMachine):
    """One random program; `dev` is the device our tensors live on."""

    dev = T.device("cpu")

    def __init__(self):
        super().__init__()
        self.pool: list[Pair] = []
        self.rng = np.random.default_rng(0)

    # ------------------------------------------------------------ helpers
    def _add(self, ours, ref, root=False) -> None:
        if root:   # a new array: in our layout (NumPy keeps an input's order, K; ours is C)
            ref = np.asarray(ref)
            if ours.is_contiguous() and not ref.flags.c_contiguous:
                ref = np.ascontiguousarray(ref).reshape(ref.shape)
        self.pool.append(Pair(ours, ref, root))
        if len(self.pool) > POOL_MAX:
            del self.pool[0]

    def _pick(self, data, pred=None) -> Pair | None:
        cands = [p for p in self.pool if pred is None or pred(p)]
        if not cands:
            return None
        p = data.draw(st.sampled_from(cands))
        note(f"  pick pool[{self.pool.index(p)}]: {_describe(p)}")
        return p

    def _tensor(self, a: np.ndarray):
        return T.asarray(np.array(a, copy=True), device=self.dev)

    def _writable(self, p: Pair) -> bool:
        """Whether a write into p is a comparable case (not a self-overlapping view)."""
        return not internal_overlap(p.ours)

    def _new(self, data, shape=None, d=None) -> Pair:
        d = d or data.draw(st.sampled_from(NP_DTYPES), label="dtype")
        if shape is None:
            nd = data.draw(st.integers(0, 3), label="ndim")
            shape = tuple(data.draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 5, 2, 3]),
                                             min_size=nd, max_size=nd), label="shape"))
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
        a = _values(rng, shape, d)
        return Pair(self._tensor(a), a, True)

    # ------------------------------------------------------------ rules
    @initialize(data=st.data())
    def start(self, data):
        for _ in range(2):
            p = self._new(data)
            self._add(p.ours, p.ref, True)

    @rule(data=st.data())
    def fresh(self, data):
        p = self._new(data)
        self._add(p.ours, p.ref, True)

    @rule(data=st.data())
    def view(self, data):
        p = self._pick(data)
        kind = data.draw(st.sampled_from(VIEWS), label="view")
        o, r = p.ours, p.ref
        nd = r.ndim
        if kind in ("slice", "index"):
            key = []
            for n in r.shape:
                if kind == "index" and n and data.draw(st.booleans()):
                    key.append(data.draw(st.integers(-n, n - 1)))
                    continue
                lo = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
                hi = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
                step = data.draw(st.sampled_from([None, 1, 2, 3, -1, -2]))
                key.append(slice(lo, hi, step))
            key = tuple(key)
            res = both(lambda: o[key], lambda: r[key], f"view {key}")
        elif kind == "T":
            res = both(lambda: o.T, lambda: r.T, "T")
        elif kind == "permute":
            axes = data.draw(st.permutations(range(nd)))
            res = both(lambda: T.transpose(o, *axes), lambda: np.transpose(r, axes), f"transpose {axes}")
        elif kind == "flip":
            ax = data.draw(st.one_of(st.none(), st.integers(-nd, nd - 1))) if nd else None
            res = both(lambda: T.flip(o, ax), lambda: np.flip(r, ax), f"flip {ax}")
        elif kind == "broadcast":
            lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2)))
            tail = tuple(data.draw(st.sampled_from([n, 3])) if n == 1 else n for n in r.shape)
            shape = lead + tail
            res = both(lambda: T.broadcast_to(o, shape), lambda: np.broadcast_to(r, shape),
                       f"broadcast_to {shape}")
        elif kind == "reshape":
            shape = list(data.draw(st.permutations(r.shape))) if nd else []
            if data.draw(st.booleans()):
                shape = [-1] + [n for n in shape if n != 1][1:]
            shape = tuple(shape)
            res = both(lambda: o.reshape(shape), lambda: r.reshape(shape), f"reshape {shape}")
        elif kind == "expand_dims":
            ax = data.draw(st.integers(-nd - 1, nd))
            res = both(lambda: T.expand_dims(o, ax), lambda: np.expand_dims(r, ax), f"expand_dims {ax}")
        elif kind == "squeeze":
            ax = data.draw(st.one_of(st.none(), st.integers(-max(nd, 1), max(nd, 1) - 1)))
            res = both(lambda: T.squeeze(o, ax), lambda: np.squeeze(r, ax), f"squeeze {ax}")
        else:
            res = self._as_strided(data, p)
        if res is not None:
            ours, ref = res
            same_layout = tuple(o.strides) == tuple(n // max(r.itemsize, 1) for n in r.strides)
            if not isinstance(ref, np.ndarray) or (kind == "reshape" and not same_layout):
                # NumPy gives a scalar (a copy) for x[()] of 0-d; a reshape copies or not by the
                # layout, and results of ops may be laid out otherwise than NumPy's (see _add)
                _close(ours, ref, f"{kind}")
                return
            self._add(ours, ref)
            assert T.shares_memory(ours, o) == np.may_share_memory(ref, r), f"{kind}: sharing"

    def _as_strided(self, data, p: Pair):
        """An in-bounds as_strided view of a C-contiguous pair (strides may overlap)."""
        if (not p.ref.flags.c_contiguous or not p.ours.is_contiguous() or p.ref.size == 0
                or not p.ref.flags.writeable):
            return None
        n = p.ref.size
        nd = data.draw(st.integers(1, 3))
        shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd)))
        strides = tuple(data.draw(st.lists(st.integers(0, 4), min_size=nd, max_size=nd)))
        if sum((s - 1) * t for s, t in zip(shape, strides)) >= n:
            return None
        isz = p.ref.itemsize
        flat = p.ref.reshape(-1)
        return both(lambda: T.as_strided(p.ours, shape, strides),
                    lambda: np.lib.stride_tricks.as_strided(flat, shape, [t * isz for t in strides]),
                    f"as_strided {shape} {strides}")

    def _scalar(self, data):
        return data.draw(st.one_of(st.booleans(), st.integers(-300, 300),
                                   st.sampled_from([0, 1, 2, -1, 7]),
                                   st.floats(-50, 50, allow_nan=False, width=32),
                                   st.sampled_from([0.5, -2.5, float("inf"), float("nan")])),
                         label="scalar")

    @rule(data=st.data())
    def unary(self, data):
        op = data.draw(st.sampled_from(FUZZ_UNARY), label="unary")
        p = self._pick(data)
        fn = getattr(T, op.name)
        form = data.draw(st.sampled_from(["call", "out"]) if isinstance(op.ref, np.ufunc)
                         else st.just("call"), label="form")
        if form == "call":
            res = both(lambda: fn(p.ours), lambda: _ref(op)(p.ref), op.name)
            if res is not None:
                _close(*res, f"{op.name}({p.ref.dtype})")
                self._add(*res, root=True)
            return
        q = self._pick(data, self._writable)
        what = f"{op.name}(out=) {p.ref.dtype} -> {q.ref.dtype}"
        if both(lambda: fn(p.ours, out=q.ours), lambda: _ref(op)(p.ref, out=q.ref), what, q):
            self._after_out(q, lambda: _ref(op)(p.ref), what)

    @rule(data=st.data())
    def binary(self, data):
        op = data.draw(st.sampled_from(FUZZ_BINARY), label="binary")
        a = self._pick(data)
        b = self._pick(data) if data.draw(st.booleans()) else None
        bo, br = (b.ours, b.ref) if b is not None else (self._scalar(data),) * 2
        pa = a   # the pair of the first operand (an in-place target)
        if data.draw(st.booleans(), label="swap"):
            (ao, ar), (bo, br), pa = (bo, br), (a.ours, a.ref), b
        else:
            ao, ar = a.ours, a.ref
        forms = ["call"] + (["operator"] if op.name in BINARY_DUNDER else [])
        if isinstance(ao, T.Tensor):
            forms += (["out"] if isinstance(op.ref, np.ufunc) else []) + (   # xlogy: not a ufunc
                ["inplace"] if op.name in INPLACE_DUNDER else [])
        form = data.draw(st.sampled_from(forms), label="form")
        what = f"{op.name} {form} {getattr(ar, 'dtype', type(ar).__name__)}, {getattr(br, 'dtype', br)}"
        if form == "call":
            fn = getattr(T, op.name)
            res = both(lambda: fn(ao, bo), lambda: _ref(op)(ar, br), what)
        elif form == "operator":
            f = BINARY_DUNDER[op.name]
            rf = _ref(op) if op.name == "power" else f
            res = both(lambda: f(ao, bo), lambda: rf(ar, br), what)
        elif form == "inplace":
            if internal_overlap(ao):
                return
            f = INPLACE_DUNDER[op.name]
            both(lambda: f(ao, bo), lambda: f(ar, br), what, pa)
            return
        else:
            q = self._pick(data, self._writable)
            fn = getattr(T, op.name)
            if both(lambda: fn(ao, bo, out=q.ours), lambda: _ref(op)(ar, br, out=q.ref),
                    what + " out=", q):
                self._after_out(q, lambda: _ref(op)(ar, br), what + " out=")
            return
        if res is not None:
            _close(*res, what)
            self._add(*res, root=True)

    @rule(data=st.data())
    def reduce(self, data):
        name = data.draw(st.sampled_from(REDUCTIONS), label="reduction")
        p = self._pick(data)
        nd = p.ref.ndim
        axis = data.draw(st.one_of(
            st.none(), st.integers(-nd - 1, nd),
            st.lists(st.integers(-nd, max(nd - 1, 0)), max_size=3).map(tuple)), label="axis")
        keep = data.draw(st.booleans(), label="keepdims")
        if nd == 0 and axis not in (None, ()):
            # NumPy lets axis 0 / -1 reduce a 0-d array (a legacy quirk); the array API, and we,
            # say the axis is out of bounds
            note(f"step: {name}(axis={axis}) of a 0-d tensor")
            with pytest.raises((IndexError, TypeError)):
                getattr(T, name)(p.ours, axis=axis, keepdims=keep)
            return
        np_fn = ref_fn = getattr(np, name)
        if p.ref.dtype == np.float16 and name in ("sum", "prod", "mean"):
            # NumPy accumulates float16 in float16; we (as PyTorch) in float32, rounding once
            def ref_fn(x, axis=None, keepdims=False):
                r = np_fn(x.astype(np.float32), axis=axis, keepdims=keepdims)
                return np.asarray(r).astype(np.float16)
        res = both(lambda: getattr(T, name)(p.ours, axis=axis, keepdims=keep),
                   lambda: np.asarray(ref_fn(p.ref, axis=axis, keepdims=keep)),
                   f"{name}(axis={axis}, keepdims={keep}) of {p.ref.dtype} {p.ref.shape}")
        if res is None:
            return
        ours, ref = res
        if name in ("sum", "mean", "prod") and ref.dtype.kind == "f" and p.ref.size:
            self._close_accumulated(ours, ref, p.ref, name, axis, keep)
        else:
            _close(ours, ref, f"{name} {axis}")
        self._add(ours, ref, root=True)

    def _after_out(self, q: Pair, plain, what: str) -> None:
        """An out= result computed in a narrower float dtype than out's (exp of int16 runs in
        float32): compared within that dtype's tolerance, then NumPy's values copied into ours,
        so out's own, tighter tolerance holds from here on."""
        try:
            computed = np.asarray(_quiet(plain)).dtype
        except Exception:  # noqa: BLE001 - no narrower computation to allow for
            return
        if computed.kind == "f" and q.ref.dtype.kind == "f" and computed.itemsize < q.ref.itemsize:
            _close(q.ours, q.ref, what, tol=computed.name)
            q.ours[...] = T.asarray(q.ref, device=self.dev)

    @staticmethod
    def _close_accumulated(ours, ref, x, name, axis, keep):
        """Sums and products add rounding with every term, in an order that is ours, not
        NumPy's: compare within n ulps of the terms' magnitude."""
        assert tuple(ours.shape) == ref.shape and ours.dtype.name == ref.dtype.name, name
        g, r = to_np(ours).astype(np.float64), ref.astype(np.float64)
        with np.errstate(all="ignore"):
            mag = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=keep)
            if name == "prod":
                mag = np.abs(r)
            n = max(x.size, 1)
            eps = np.finfo(ref.dtype).eps
            bound = 4 * n * eps * np.nan_to_num(mag, posinf=np.inf) + TOLERANCE[ref.dtype.name][1]
            ok = (g == r) | (np.isnan(g) & np.isnan(r)) | (np.abs(g - r) <= bound)
        assert ok.all(), f"{name} axis={axis}: values differ\n ours: {g!r}\nnumpy: {r!r}"

    @rule(data=st.data())
    def setitem(self, data):
        t = self._pick(data, self._writable)
        if t is None:
            return
        shape = t.ref.shape
        kind = data.draw(st.sampled_from(["int", "slices", "mask", "array", "ellipsis"]), label="key")
        if kind == "int" and shape:
            k = data.draw(st.integers(1, len(shape)))
            key = tuple(data.draw(st.integers(-n - 1, n)) for n in shape[:k])
            kt = kr = key
        elif kind == "slices" and shape:
            key = tuple(slice(data.draw(st.integers(-n, n)), None, data.draw(st.sampled_from([1, 2, -1])))
                        for n in shape)
            kt = kr = key
        elif kind == "mask":
            m = self._pick(data, lambda p: p.ref.dtype == bool and p.ref.shape == shape)
            if m is None:   # a mask computed from t itself: it aliases t's values
                kt, kr = t.ours > 0, _quiet(lambda: t.ref > 0)
            else:   # ours reads the whole mask before writing (tensor/scatter.py's _scatter);
                # NumPy reads a mask that aliases the destination as it writes (x.flip()[x] = 0
                # sees its own writes): the reference gets a copy of the mask
                kt, kr = m.ours, m.ref.copy()
        elif kind == "array" and shape:
            ix = self._pick(data, lambda p: p.ref.dtype.kind in "iu" and p.ref.dtype != bool)
            if ix is None:
                return
            kt, kr = ix.ours, ix.ref   # may be t itself or a view of it: x[x] = ...
        else:
            kt = kr = Ellipsis
        src = data.draw(st.sampled_from(["scalar", "pool"]), label="value")
        if src == "scalar":
            vt = vr = self._scalar(data)
            if t.ref.dtype.kind in "iub" and isinstance(vr, float) and not np.isfinite(vr):
                return
        else:
            v = self._pick(data)
            vt, vr = v.ours, v.ref
            if not _fits_int(np.asarray(vr), dt.dtype(t.ref.dtype)):
                return
        if (isinstance(vr, float) and t.ref.dtype.kind in "iu"
                and not _fits_int(np.asarray(vr), dt.dtype(t.ref.dtype))):
            return
        if any(isinstance(k, np.ndarray) and k.dtype == np.uint64 and k.size and k.max() >= 2**63
               for k in (kr if isinstance(kr, tuple) else (kr,))):
            # a uint64 index past int64: ours is out of bounds (IndexError); NumPy wraps it to a
            # negative index or fails to convert it (OverflowError), depending on the path
            return
        key = kr if kind in ("int", "slices", "ellipsis") else f"{kind} {np.asarray(kr)!r}"
        both(lambda: operator.setitem(t.ours, kt, vt), lambda: _np_setitem(t.ref, kr, vr),
             f"setitem {t.ref.dtype}{shape}[{key}] = {src} {vr!r}", t)

    @rule(data=st.data())
    def cast(self, data):
        p = self._pick(data)
        d = data.draw(st.sampled_from(NP_DTYPES), label="to")
        if not _fits_int(p.ref, d):
            return
        form = data.draw(st.sampled_from(["astype", "copy", "contiguous"]), label="form")
        if form == "astype":
            res = both(lambda: p.ours.astype(d), lambda: p.ref.astype(d.np), f"astype {d.name}")
        elif form == "copy":
            # copy() keeps the layout (as PyTorch's clone; NumPy's ndarray.copy is C by default)
            res = both(lambda: p.ours.copy(), lambda: p.ref.copy(order="K"), "copy")
        else:
            res = both(lambda: p.ours.contiguous(), lambda: np.require(p.ref, requirements="C"), "contiguous")
        if res is not None:
            _close(*res, form)
            if form == "contiguous" and p.ours.is_contiguous() != p.ref.flags.c_contiguous:
                return   # the layouts differ (see _add): one copies where the other does not
            self._add(*res, root=form != "contiguous")

    # ------------------------------------------------------------ after every step
    @invariant()
    def pools_agree(self):
        for i, p in enumerate(self.pool):
            _close(p.ours, p.ref, f"pool[{i}] {p.ref.dtype} {p.ref.shape}")
            assert p.ours.flags.writeable == p.ref.flags.writeable, f"pool[{i}]: writeable"
            for j in range(i):
                q = self.pool[j]
                assert T.shares_memory(p.ours, q.ours) == np.may_share_memory(p.ref, q.ref), (
                    f"pool[{i}] and pool[{j}]: memory sharing")
        for p in self.pool:   # the same float values on both sides from here on
            if p.root and p.ref.dtype.kind == "f" and p.ours.flags.writeable and p.ref.size:
                p.ours[...] = T.asarray(p.ref, device=self.dev)


def test_differential_fuzz(device):
    machine = type("Program_" + device.replace(":", "_"), (Program,), {"dev": T.device(device)})
    base = settings()
    cuda = device != "cpu"
    more = 1 if os.environ.get("STRIDEX_SANITIZE") else 5   # ~0.1 s a program on the CPU
    run_state_machine_as_test(machine, settings=settings(
        base, max_examples=max(2, base.max_examples // 4 if cuda else base.max_examples * more),
        stateful_step_count=base.stateful_step_count))
