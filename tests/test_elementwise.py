"""Elementwise ops against NumPy, generated from the op table.

Every op in tensor.optable.UNARY / BINARY is tested here the moment it is added to the table:
for every dtype (the op's own loop, the loop the search upcasts to, or a TypeError where there is
none), on contiguous and non-contiguous inputs (transposed, stepped, negative-step, broadcast),
as a function, a method and (where Python has one) an operator. References: the op's NumPy
`ref` on the same values; NumPy itself decides the result dtype (NumPy 2 promotion, NEP 50 weak
Python scalars). bfloat16, which NumPy lacks, is checked against the op computed in float32 on
the same bfloat16 values, with bfloat16 tolerance, and our documented promotion rules.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import (
    ALL_DTYPES,
    BINARY_DUNDER,
    FLOAT_DTYPES,
    INPLACE_DUNDER,
    INT_DTYPES,
    NP_DTYPES,
    as_compute,
    assert_close,
    broadcastable_shapes,
    gen_values,
    make_tensor,
    make_view,
    np_quiet,
    ours_binary_dtype,
    ref_binary,
    ref_unary,
    scalar_strategy,
    seeds,
    shapes,
    to_np,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as T
from tensor import dtypes as dt
from tensor.optable import BINARY, OPS, UNARY, loop_dtype

pytestmark = pytest.mark.usefixtures("device")

# Tests that loop over all 10 dtypes inside one example run fewer examples: each example is
# already 10 cases (x 2 layouts x 2-3 call forms).
HEAVY = settings(max_examples=max(4, settings().max_examples // 2))

KNOWN_DOMAINS = {"any", "positive", "unit", "gt_m1", "ge1", "exp", "nonzero", "nonzero_b", "power",
                 "shift"}


def _ids(ops):
    return [op.name for op in ops]


def _expect_error_like(err):
    """The exception class we must raise where NumPy raised err."""
    for cls in (OverflowError, TypeError, ValueError, ZeroDivisionError):
        if isinstance(err, cls):
            return cls
    raise AssertionError(f"unexpected NumPy error {err!r}")


def _call_all(forms, args, expected, edt, err, what):
    for name, fn in forms:
        if err is not None:
            with pytest.raises(_expect_error_like(err)):
                fn(*args)
        else:
            assert_close(fn(*args), expected, edt, what=f"{what} [{name}]")


def _ref_or_error(fn, *args):
    try:
        return fn(*args), None
    except (TypeError, ValueError, OverflowError) as e:
        return (None, None), e


# ---------------------------------------------------------------- the table itself

def test_op_table_is_wired_everywhere():
    """Every op: a public function, a method, an in-place method, aliases bound to the same
    function; a callable NumPy reference; valid kinds and a known domain hint."""
    names = [op.name for op in UNARY + BINARY]
    assert len(set(names)) == len(names), "duplicate op names in the table"
    for op in UNARY + BINARY:
        assert set(op.kinds) <= set("biufc") and op.kinds, op.name
        assert op.domain in KNOWN_DOMAINS, (op.name, op.domain)
        assert callable(op.ref), op.name
        assert op.arity == (1 if op in UNARY else 2), op.name
        fn = getattr(T, op.name)
        assert fn.__name__ == op.name
        assert OPS[op.name] is op
        for alias in op.aliases:
            assert getattr(T, alias) is fn, f"tensor.{alias} is not tensor.{op.name}"
            assert callable(getattr(T.Tensor, alias)), alias
        assert callable(getattr(T.Tensor, op.name)), op.name
        assert callable(getattr(T.Tensor, op.name + "_")), op.name + "_"
        for k in op.kinds:
            assert op.expr(k), f"{op.name}: no C expression for kind {k}"


@pytest.mark.parametrize("op", UNARY + BINARY, ids=_ids(UNARY + BINARY))
def test_loop_rule_agrees_with_numpy(op):
    """loop_dtype (the table's dtype rule) gives NumPy's result dtype, or a TypeError where
    NumPy has no loop, for every NumPy dtype; the function then raises or returns that dtype."""
    for d in NP_DTYPES:
        zeros = [np.zeros(2, d.np)] * op.arity
        try:
            want = np_quiet(op.ref, *zeros).dtype.name
        except TypeError:
            want = None
        try:
            ld = loop_dtype(op, d)
            got = op.out_dtype(ld).name   # bool (comparisons), uint8 (bitwise_count)
        except TypeError as e:
            assert op.name in str(e) and d.name in str(e), str(e)
            got = None
        assert got == want, f"{op.name}({d.name}): loop rule gives {got}, NumPy {want}"
        x = T.zeros(2, dtype=d)
        if want is None:
            with pytest.raises(TypeError, match=op.name):
                getattr(T, op.name)(*[x] * op.arity)
        else:
            assert getattr(T, op.name)(*[x] * op.arity).dtype.name == want


# ---------------------------------------------------------------- unary

@pytest.mark.parametrize("op", UNARY, ids=_ids(UNARY))
def test_unary_unsupported_dtypes_raise(op):
    """Dtypes with no loop (e.g. bitwise_not of float, negative of bool) raise TypeError naming
    the op, as a function, a method and (for -x, ~x) an operator; the table says which."""
    dunder = {"negative": lambda x: -x, "bitwise_not": lambda x: ~x, "positive": lambda x: +x,
              "abs": abs}.get(op.name)
    for d in ALL_DTYPES:
        try:
            loop_dtype(op, d)
            assert d is not dt.bfloat16 or "f" in op.kinds, "bfloat16 only ever has its own loop"
            continue
        except TypeError:
            assert d is not dt.bfloat16 or "f" not in op.kinds
        x = T.ones(3, dtype=d)
        with pytest.raises(TypeError, match=op.name):
            getattr(T, op.name)(x)
        with pytest.raises(TypeError, match=op.name):
            getattr(x, op.name)()
        if dunder is not None:
            with pytest.raises(TypeError, match=op.name):
                dunder(x)


@pytest.mark.parametrize("op", UNARY, ids=_ids(UNARY))
@HEAVY
@given(shape=shapes(), seed=seeds())
def test_unary_matches_numpy(op, shape, seed):
    """op(x) == op.ref(x) for every supported dtype, contiguous and as a strided view, as
    tensor.<op>(x) and x.<op>(); the input is left untouched."""
    rng = np.random.default_rng(seed)
    dunder = {"negative": lambda x: -x, "positive": lambda x: +x, "abs": abs,
              "bitwise_not": lambda x: ~x}.get(op.name)
    for d in ALL_DTYPES:
        try:
            ld = loop_dtype(op, d)
        except TypeError:
            continue  # test_unary_unsupported_dtypes_raise
        a = gen_values(rng, d, shape, op.domain, compute=ld)
        for layout in ("contiguous", "view"):
            vals, x = (a, make_tensor(a, d)) if layout == "contiguous" else make_view(rng, a, d)
            if layout == "view" and x.ndim and all(n > 1 for n in shape):
                assert not x.is_contiguous(), f"views() gave a contiguous tensor {x.strides}"
            expected, edt = ref_unary(op, vals, d)
            what = f"{op.name}({d.name}, {layout}, shape={shape}, strides={x.strides})"
            assert_close(getattr(T, op.name)(x), expected, edt, what=what + " function")
            assert_close(getattr(x, op.name)(), expected, edt, what=what + " method")
            if dunder is not None:
                assert_close(dunder(x), expected, edt, what=what + " operator")
            assert_close(x, as_compute(vals, d) if d is dt.bfloat16 else vals, d,
                         what=what + ": input modified")


@pytest.mark.parametrize("op", UNARY, ids=_ids(UNARY))
def test_unary_out_and_inplace(op):
    """out= writes into a given tensor (same_kind cast allowed, else TypeError like NumPy's
    UFuncTypeError; wrong shape -> ValueError); x.<op>_() works in place when the result
    casts back to x's dtype, including on a strided view of a bigger tensor."""
    rng = np.random.default_rng(0)
    for d in ALL_DTYPES:
        try:
            ld = loop_dtype(op, d)
        except TypeError:
            continue
        od = op.out_dtype(ld)
        a = gen_values(rng, d, (3, 4), op.domain, compute=ld)
        expected, edt = ref_unary(op, a, d)
        x = make_tensor(a, d)
        out = T.empty((3, 4), dtype=od)
        r = getattr(T, op.name)(x, out=out)
        assert r is out
        assert_close(out, expected, edt, what=f"{op.name}({d.name}) out=")
        with pytest.raises(ValueError):
            getattr(T, op.name)(x, out=T.empty((4, 3), dtype=od))
        if od.kind == "f":  # same_kind: a float result goes into any float out, never an int one
            wide = T.empty((3, 4), dtype="float64")
            assert_close(getattr(T, op.name)(x, out=wide), expected, "float64",
                         rtol=2e-2 if od is dt.bfloat16 else 2e-3 if od is dt.float16 else 1e-5,
                         what=f"{op.name}({d.name}) out=float64")
            with pytest.raises(TypeError):
                getattr(T, op.name)(x, out=T.empty((3, 4), dtype="int32"))
        # in place through a transposed view of a bigger tensor
        base = make_tensor(np.ascontiguousarray(a.T), d)
        view = base.T
        if dt.can_cast(od, d, "same_kind"):
            r = getattr(view, op.name + "_")()
            assert r is view
            want = expected.astype(np.float32 if d is dt.bfloat16 else d.np) if od is not d else expected
            assert_close(view, want, d, what=f"{op.name}_({d.name}) in place on a view")
            assert_close(base, np.asarray(want).T, d, what=f"{op.name}_({d.name}) seen by the base")
        else:
            with pytest.raises(TypeError):
                getattr(view, op.name + "_")()
            assert_close(view, as_compute(a, d) if d is dt.bfloat16 else a, d,
                         what=f"{op.name}_({d.name}) failed in-place op must not write")


# ---------------------------------------------------------------- binary

def _binary_forms(op):
    forms = [("function", getattr(T, op.name)), ("method", lambda x, y: getattr(x, op.name)(y))]
    if op.name in BINARY_DUNDER:
        forms.append(("operator", BINARY_DUNDER[op.name]))
    return forms


@pytest.mark.parametrize("op", BINARY, ids=_ids(BINARY))
@HEAVY
@given(shapes2=broadcastable_shapes(2), seed=seeds())
def test_binary_same_dtype_broadcasting(op, shapes2, seed):
    """op(x, y) == op.ref(a, b) for two tensors of one dtype with broadcasting shapes, for
    every dtype, contiguous and as strided views, as function, method and operator."""
    rng = np.random.default_rng(seed)
    sa, sb = shapes2
    for d in ALL_DTYPES:
        try:
            ld = loop_dtype(op, d)
        except TypeError:
            continue  # test_binary_unsupported_dtypes_raise
        a = gen_values(rng, d, sa, op.domain, compute=ld, role="a")
        b = gen_values(rng, d, sb, op.domain, compute=ld, role="b")
        for layout in ("contiguous", "view"):
            if layout == "contiguous":
                (va, x), (vb, y) = (a, make_tensor(a, d)), (b, make_tensor(b, d))
            else:
                (va, x), (vb, y) = make_view(rng, a, d), make_view(rng, b, d)
            (expected, edt), err = _ref_or_error(ref_binary, op, va, d, vb, d)
            what = f"{op.name}({d.name}{list(sa)}, {d.name}{list(sb)}, {layout})"
            _call_all(_binary_forms(op), (x, y), expected, edt, err, what)


@pytest.mark.parametrize("op", BINARY, ids=_ids(BINARY))
def test_binary_unsupported_dtypes_raise(op):
    for d in ALL_DTYPES:
        try:
            loop_dtype(op, d)
            continue
        except TypeError:
            pass
        x = T.ones(3, dtype=d)
        with pytest.raises(TypeError, match=op.name):
            getattr(T, op.name)(x, x)
        if op.name in BINARY_DUNDER:
            with pytest.raises(TypeError, match=op.name):
                BINARY_DUNDER[op.name](x, x)


@pytest.mark.parametrize("op", BINARY, ids=_ids(BINARY))
def test_binary_mixed_dtypes_all_pairs(op):
    """Every ordered pair of the 10 dtypes: result dtype (NumPy 2 promotion; bfloat16 with
    ints/bool -> bfloat16, with float16 -> float32, with float64 -> float64) and values, with
    broadcasting, one operand a strided view; TypeError wherever NumPy (or, for bfloat16, our
    rules) has no loop."""
    rng = np.random.default_rng(12345)
    for da in ALL_DTYPES:
        for db in ALL_DTYPES:
            try:
                ld = ours_binary_dtype(op, da, db)
            except TypeError:
                ld = None
            comp = ld or dt.result_type(da, db)
            a = gen_values(rng, da, (2, 3), op.domain, compute=comp, role="a")
            b = gen_values(rng, db, (3,), op.domain, compute=comp, role="b")
            va, x = make_view(rng, a, da)
            y = make_tensor(b, db)
            (expected, edt), err = _ref_or_error(ref_binary, op, va, da, b, db)
            if da is not dt.bfloat16 and db is not dt.bfloat16:
                assert (err is None) == (ld is not None), (
                    f"{op.name}({da.name}, {db.name}): NumPy {'raises' if err else 'works'}, "
                    f"our rule gives {ld}")
            what = f"{op.name}({da.name}, {db.name})"
            _call_all([("function", getattr(T, op.name))], (x, y), expected, edt, err, what)


_KINDS = ("b", "i", "f")


@pytest.mark.parametrize("op", BINARY, ids=_ids(BINARY))
def test_binary_python_scalars_every_dtype(op):
    """tensor op scalar and scalar op tensor, for every dtype and Python bool/int/float: NumPy
    2's weak-scalar result dtype (NEP 50: the scalar adopts the tensor's dtype within its kind)
    and values, via the function and the (reflected) operator."""
    rng = np.random.default_rng(7)
    scalars = {"b": True, "i": 3, "f": 2.5}
    for d in ALL_DTYPES:
        for kind in _KINDS:
            for side in ("right", "left"):
                s = scalars[kind]
                if op.domain == "shift" and kind == "i":
                    s = 2
                t_role = "a" if side == "right" else "b"
                try:
                    comp = ours_binary_dtype(op, d, s)
                except TypeError:
                    comp = dt.result_type(d, s)
                a = gen_values(rng, d, (2, 3), op.domain, compute=comp, role=t_role)
                x = make_tensor(a, d)
                args, vals, dts = ((x, s), (a, s), (d, None)) if side == "right" else \
                    ((s, x), (s, a), (None, d))
                (expected, edt), err = _ref_or_error(ref_binary, op, vals[0], dts[0], vals[1], dts[1])
                what = f"{op.name}({'x, s' if side == 'right' else 's, x'}) x:{d.name} s:{s!r}"
                forms = [("function", getattr(T, op.name))]
                if side == "right":
                    forms.append(("method", lambda x_, s_: getattr(x_, op.name)(s_)))
                if op.name in BINARY_DUNDER:
                    forms.append(("operator", BINARY_DUNDER[op.name]))
                _call_all(forms, args, expected, edt, err, what)


@pytest.mark.parametrize("op", BINARY, ids=_ids(BINARY))
@given(data=st.data(), shape=shapes(), seed=seeds())
def test_binary_python_scalars_random(op, data, shape, seed):
    """Random dtype, scalar kind/value, side and layout; see the test above."""
    d = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    kind = data.draw(st.sampled_from(_KINDS), label="scalar kind")
    side = data.draw(st.sampled_from(("right", "left")), label="side")
    t_role, s_role = ("a", "b") if side == "right" else ("b", "a")
    s = data.draw(scalar_strategy(kind, d, op.domain, s_role), label="scalar")
    try:
        comp = ours_binary_dtype(op, d, s)
    except (TypeError, OverflowError):
        comp = d
    rng = np.random.default_rng(seed)
    a = gen_values(rng, d, shape, op.domain, compute=comp, role=t_role)
    va, x = make_view(rng, a, d) if rng.random() < 0.5 else (a, make_tensor(a, d))
    args, vals, dts = ((x, s), (va, s), (d, None)) if side == "right" else ((s, x), (s, va), (None, d))
    (expected, edt), err = _ref_or_error(ref_binary, op, vals[0], dts[0], vals[1], dts[1])
    forms = [("function", getattr(T, op.name))]
    if op.name in BINARY_DUNDER:
        forms.append(("operator", BINARY_DUNDER[op.name]))
    _call_all(forms, args, expected, edt, err, f"{op.name} {side} scalar {s!r} with {d.name}")


@pytest.mark.parametrize("d", INT_DTYPES, ids=lambda d: d.name)
def test_weak_int_scalar_out_of_range(d):
    """int8 tensor + 1000 raises OverflowError, as NumPy 2 does (the Python int adopts int8);
    comparisons with such ints work and give NumPy's answer (all True / all False)."""
    lo, hi = dt.iinfo_bounds(d)
    a = np.array([lo, 0, hi], dtype=d.np)
    x = T.asarray(a)
    for big in (hi + 1, lo - 1, 2**70, -(2**70)):
        with pytest.raises(OverflowError):
            np_quiet(np.add, a, big)
        for fn in (lambda v: x + v, lambda v: v - x, lambda v: T.multiply(x, v),
                   lambda v: T.maximum(v, x), lambda v: x.add(v)):
            with pytest.raises(OverflowError, match=str(big)):
                fn(big)
        for cmp in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
            assert_close(getattr(T, cmp)(x, big), getattr(np, cmp)(a, big), what=f"{cmp} {big}")
            assert_close(getattr(T, cmp)(big, x), getattr(np, cmp)(big, a), what=f"{cmp} {big}")


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_ops_read_a_mixed_scalar_as_bool(name):
    """NumPy's logical ufuncs read an operand of another dtype, a Python scalar included, as
    bool (their type resolver), not cast to the tensor's dtype: logical_and(float16 array,
    1e-300) is True although 1e-300 underflows to 0 in float16. bfloat16 follows the rule of
    NumPy's float16, on both devices; the property tests' reference (ref_binary) agrees. (A
    random hypothesis seed found logical_and(bfloat16, 3.93e-269) modelled with the cast.)"""
    op = OPS[name]
    scalars = [3.931738686585287e-269, 1e-300, 1e-50, 1e-40, -1e-45, 0.0, -0.0, 0.5, True, False,
               0, 3, -7, 300]
    for d in ALL_DTYPES:
        a = np.array([0, 1, 3, 0, 2], np.float32)
        x = make_tensor(a, d)
        model = np.float16 if d is dt.bfloat16 else d.np  # values exact in both
        for s in scalars:
            for args, np_args in (((x, s), (a.astype(model), s)), ((s, x), (s, a.astype(model)))):
                want = getattr(np, name)(*np_args)
                what = f"{name}({'x, s' if args[0] is x else 's, x'}) x:{d.name} s:{s!r}"
                assert_close(getattr(T, name)(*args), want, "bool", what=what)
            ref, rdt = ref_binary(op, a, d, s, None)
            assert rdt == "bool" and ref.tolist() == getattr(np, name)(a.astype(model), s).tolist(), \
                f"ref_binary {name} {d.name} {s!r}"


def test_numpy_scalars_and_arrays_are_strong_operands():
    """NumPy scalars and arrays are not weak: int8 tensor + np.float32(2) is float32, and
    ndarray op tensor defers to the tensor (a Tensor comes back)."""
    x = T.asarray(np.array([1, 2, 3], np.int8))
    for s in (np.float32(2.0), np.int16(300), np.float64(0.5), np.uint8(7)):
        want = np.array([1, 2, 3], np.int8) + s
        assert_close(x + s, want, what=repr(s))
        assert_close(T.add(s, x), s + np.array([1, 2, 3], np.int8), what=repr(s))
    r = np.ones(3, np.int16) * x
    assert isinstance(r, T.Tensor)
    assert_close(r, np.ones(3, np.int16) * np.array([1, 2, 3], np.int8))
    assert_close(T.add([1, 2], [[10], [20]]), np.add([1, 2], [[10], [20]]))
    assert_close(T.multiply([1.5, 2], 2), np.multiply([1.5, 2], 2))


@pytest.mark.parametrize("name", sorted(INPLACE_DUNDER))
@settings(max_examples=max(8, settings().max_examples))
@given(data=st.data(), seed=seeds())
def test_inplace_operators(name, data, seed):
    """x op= y writes into x itself (same object, same memory) with NumPy's 'same_kind' output
    rule: int8 += int16 wraps, int tensor += 1.5 raises TypeError (NumPy's UFuncTypeError),
    bool -= bool raises TypeError, a result that does not fit x's shape raises ValueError; a
    strided view updated in place updates its base."""
    op = OPS[name]
    d = data.draw(st.sampled_from(ALL_DTYPES), label="x dtype")
    other = data.draw(st.sampled_from(ALL_DTYPES + ("b", "i", "f")), label="y dtype or scalar kind")
    shape = data.draw(shapes(min_dims=1, max_dims=3), label="x shape")
    yshape = shape[data.draw(st.integers(0, len(shape)), label="y suffix"):]
    rng = np.random.default_rng(seed)
    if isinstance(other, str):
        y = data.draw(scalar_strategy(other, d, op.domain, "b"), label="scalar")
        b, db = y, None
    else:
        db = other
        try:
            comp = ours_binary_dtype(op, d, db)
        except TypeError:
            comp = dt.result_type(d, db)
        b = gen_values(rng, db, yshape, op.domain, compute=comp, role="b")
        y = make_tensor(b, db)
    a = gen_values(rng, d, shape, op.domain, compute=d, role="a")
    base_vals, x = make_view(rng, a, d) if rng.random() < 0.5 else (a, make_tensor(a, d))
    if not x.flags.writeable:
        x = x.copy()  # broadcast views are read-only (NumPy's rule; tests/test_readonly.py)
    ptr, before = x.data_ptr(), to_np(x)
    # the reference: NumPy in place when NumPy has the dtypes, else our documented rules
    err = expected = None
    if d is not dt.bfloat16 and db is not dt.bfloat16:
        a_np = np.array(base_vals, dtype=d.np)
        try:
            np_quiet(INPLACE_DUNDER[name], a_np, np.asarray(b, db.np) if db else b)
            expected = a_np
        except (TypeError, ValueError, OverflowError) as e:
            err = e
    else:
        try:
            (r, rdt) = ref_binary(op, base_vals, d, b, db)
            if not dt.can_cast(dt.dtype(rdt), d, "same_kind"):
                raise TypeError("same_kind")
            expected = as_compute(np.asarray(r, np.float64), d)
        except TypeError as e:
            err = e
    xid = id(x)
    if err is not None:
        with pytest.raises(_expect_error_like(err)):
            x = INPLACE_DUNDER[name](x, y)
        np.testing.assert_array_equal(to_np(x), before)  # nothing written
        return
    x2 = x.copy()
    x = INPLACE_DUNDER[name](x, y)
    assert id(x) == xid and x.data_ptr() == ptr, "x op= y must update x in place"
    assert_close(x, expected, d, what=f"{d.name} {name}= {db.name if db else repr(b)}")
    assert getattr(x2, name + "_")(y) is x2                      # the method form: x.add_(y)
    assert_close(x2, expected, d, what=f"{d.name}.{name}_({db.name if db else repr(b)})")


def test_inplace_overlapping_operands():
    """x[1:] += x[:-1] reads the old values (NumPy buffers overlapping operands)."""
    a = np.arange(10, dtype=np.int64)
    x = T.asarray(a.copy())
    x[1:] += x[:-1]
    a[1:] += a[:-1].copy()
    assert_close(x, a)
    b = np.arange(12.0).reshape(3, 4)
    y = T.asarray(b.copy())
    y[:, ::-1] *= y
    b[:, ::-1] *= b.copy()
    assert_close(y, b)


def test_inplace_on_views_updates_the_base():
    base = T.zeros((3, 4), dtype="int32")
    v = base.T[::2]            # shape (2, 3), strides (2, 4)
    v += T.asarray(np.array([1, 2, 3], np.int32))
    want = np.zeros((3, 4), np.int32)
    want.T[::2] += np.array([1, 2, 3], np.int32)
    assert_close(base, want)
    with pytest.raises(ValueError):
        v += T.ones((4, 2, 3), dtype="int32")      # the result does not fit v's shape


# ---------------------------------------------------------------- special cases

@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=lambda d: d.name)
def test_float_division_by_zero(d):
    """x / 0 -> +-inf or nan; x // 0 and x % 0 follow NumPy (inf/nan, nan)."""
    a = np.array([1.0, -1.0, 0.0, np.nan, np.inf, -2.5], np.float32)
    zeros = np.array([0.0, -0.0], np.float32)
    x = make_tensor(a.reshape(-1, 1), d)
    z = make_tensor(zeros, d)
    ref_t = np.float32 if d is dt.bfloat16 else d.np
    for name in ("true_divide", "floor_divide", "remainder"):
        want = np_quiet(getattr(np, name), a.reshape(-1, 1).astype(ref_t), zeros.astype(ref_t))
        assert_close(getattr(T, name)(x, z), want, d, what=f"{name} by zero ({d.name})")
        want_s = np_quiet(getattr(np, name), a.astype(ref_t), 0.0)
        assert_close(getattr(T, name)(x.reshape(-1), 0.0), want_s, d, what=f"{name} by 0.0")


@pytest.mark.parametrize("d", (dt.bool_,) + INT_DTYPES, ids=lambda d: d.name)
def test_integer_division_by_zero(d):
    """int // 0 and int % 0 give 0 (NumPy, which also warns); int / 0 is float64 +-inf/nan."""
    lo, hi = dt.iinfo_bounds(d)
    a = np.array(sorted({lo, 0, 1, hi}), d.np)
    z = np.zeros_like(a)
    x, y = T.asarray(a), T.asarray(z)
    for name in ("floor_divide", "remainder", "true_divide"):
        (want, wdt), err = _ref_or_error(ref_binary, OPS[name], a, d, z, d)
        if err is not None:  # bool // bool has a loop in NumPy (int8)
            with pytest.raises(_expect_error_like(err)):
                getattr(T, name)(x, y)
            continue
        assert_close(getattr(T, name)(x, y), want, wdt, what=f"{name}({d.name}, 0)")
    if d is not dt.bool_:
        assert to_np(x // 0).tolist() == [0] * len(a)
        assert to_np(x % 0).tolist() == [0] * len(a)


def test_integer_edge_arithmetic_wraps_like_numpy():
    """INT_MIN // -1, INT_MIN % -1, abs(INT_MIN), -INT_MIN, shifts past the width."""
    for d in (dt.int8, dt.int16, dt.int32, dt.int64):
        lo, hi = dt.iinfo_bounds(d)
        a = np.array([lo, lo, hi, -1], d.np)
        b = np.array([-1, 1, -1, -1], d.np)
        x, y = T.asarray(a), T.asarray(b)
        for name in ("floor_divide", "remainder", "multiply", "subtract", "add"):
            want = np_quiet(getattr(np, name), a, b)
            assert_close(getattr(T, name)(x, y), want, what=f"{name} {d.name}")
        for name in ("negative", "abs", "square"):
            assert_close(getattr(T, name)(x), np_quiet(getattr(np, name), a), what=f"{name} {d.name}")
    for d in INT_DTYPES:  # shift counts at and past the bit width (and negative): NumPy's 0 / -1
        a = np.array([1, 5, -3 if d.kind == "i" else 3, 7, dt.iinfo_bounds(d)[0]], d.np)
        counts = [d.bits - 1, d.bits, d.bits + 3, 100] + ([-1, -100] if d.kind == "i" else [])
        for sh in counts:
            x, s = T.asarray(a), T.full(a.shape, sh, dtype=d)
            for name in ("left_shift", "right_shift"):
                want = np_quiet(getattr(np, name), a, np.full(a.shape, sh, d.np))
                assert_close(getattr(T, name)(x, s), want, what=f"{name} {d.name} by {sh}")
                assert_close(getattr(T, name)(x, sh), want, what=f"{name} {d.name} by scalar {sh}")


@pytest.mark.parametrize("d", [x for x in INT_DTYPES if x.kind == "i"], ids=lambda d: d.name)
def test_integer_negative_power_raises_as_numpy(d):
    """Integers to negative integer powers: NumPy raises ValueError after looking at the
    values (no integer holds 2 ** -1). So do we, on every device: a tensor exponent's values
    are checked (a min reduction) before the kernel runs; a scalar exponent, a scalar base,
    in-place and out= too; nothing is written. Non-negative exponents, a float base or a float
    exponent compute as NumPy's."""
    b_np = np.array([1, -1, -1, 2, -3, 0], d.np)
    e_np = np.array([1, 3, 2, 0, 2, 5], d.np)
    base, exp = T.asarray(b_np), T.asarray(e_np)
    neg = T.asarray(np.array([2, 1, 0, -1, 3, 1], d.np))
    msg = "Integers to negative integer powers are not allowed"
    with pytest.raises(ValueError, match=msg):
        np.power(b_np, np.array([2, -1], d.np).repeat(3))
    refused = {"tensor exponent": lambda: T.power(base, neg), "operator": lambda: base ** neg,
               "strided exponent": lambda: base ** T.asarray(np.repeat(neg.numpy(), 2))[::2],
               "scalar exponent": lambda: base ** -1, "scalar base": lambda: 2 ** neg,
               "method": lambda: base.pow(-2), "out=": lambda: T.power(base, neg, out=T.zeros_like(base))}
    for fn in refused.values():
        with pytest.raises(ValueError, match=msg):
            fn()
    x = T.asarray(b_np.copy())
    with pytest.raises(ValueError, match=msg):
        x **= neg
    assert x.tolist() == b_np.tolist(), "a refused in-place power wrote"
    assert_close(T.power(base, exp), np.power(b_np, e_np), d)
    assert_close(base ** 3, b_np ** 3, d)
    assert_close(base ** -1.0, np_quiet(np.power, b_np, -1.0))       # a float exponent: float loop
    assert_close(base.astype("float64") ** neg, np_quiet(np.power, b_np.astype(np.float64), neg.numpy()))
    assert_close(T.power(base, T.zeros((0,), dtype=d)[:, None]), np.power(b_np, np.zeros((0, 1), d.np)), d)


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=lambda d: d.name)
def test_nan_propagation_and_predicates(d):
    """maximum/minimum propagate NaN from either side; comparisons with NaN are False (!= is
    True); isnan/isinf/isfinite/sign/floor of specials."""
    vals = np.array([np.nan, 1.0, -np.inf, np.inf, -0.0, 0.5], np.float32)
    other = np.array([2.0, np.nan, np.nan, 1.0, 0.0, -0.5], np.float32)
    x, y = make_tensor(vals, d), make_tensor(other, d)
    rt = np.float32 if d is dt.bfloat16 else d.np
    for name in ("maximum", "minimum", "equal", "not_equal", "less", "greater_equal", "arctan2"):
        want = np_quiet(getattr(np, name), vals.astype(rt), other.astype(rt))
        assert_close(getattr(T, name)(x, y), want, "bool" if want.dtype == bool else d, what=name)
    for name in ("isnan", "isinf", "isfinite", "sign", "floor", "ceil", "trunc", "rint", "abs"):
        want = np_quiet(getattr(np, name), vals.astype(rt))
        assert_close(getattr(T, name)(x), want, "bool" if want.dtype == bool else d, what=name)


def test_comparisons_produce_bool():
    x = T.arange(6).reshape(2, 3)
    for fn in (lambda: x < 3, lambda: x >= 2.5, lambda: x == x.T.T, lambda: 3 > x, lambda: x != True):  # noqa: E712
        r = fn()
        assert r.dtype is T.bool_
    assert (x < 3).tolist() == [[True, True, True], [False, False, False]]
    assert (x.astype("bfloat16") > 1.5).tolist() == [[False, False, True], [True, True, True]]


def test_math_constants_sanity():
    """A few exact values through every float dtype (guards the kernel source itself)."""
    for d in FLOAT_DTYPES:
        x = T.tensor([0.0, 1.0, 4.0], dtype=d)
        assert T.sqrt(x).tolist() == [0.0, 1.0, 2.0]
        assert T.exp(T.zeros(1, dtype=d)).tolist() == [1.0]
        assert T.log(T.ones(1, dtype=d)).tolist() == [0.0]
        assert math.isclose(T.sigmoid(T.zeros(1, dtype=d)).item(), 0.5)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_scalar_operands_keep_the_sign_of_zero(dtype):
    """0.0 and -0.0 compare (and hash) equal: a scalar cache once handed x // 0.0 the operand
    of an earlier x // -0.0."""
    a = np.array([-14.5, 3.0], dtype=dtype)
    x = T.asarray(a)
    with np.errstate(divide="ignore"):
        for b in (-0.0, 0.0, -0.0):
            np.testing.assert_array_equal((x // b).numpy(), a // b)
            np.testing.assert_array_equal(np.signbit((x * b).numpy()), np.signbit(a * b))
            np.testing.assert_array_equal((x / b).numpy(), a / b)


def test_two_python_scalars_give_a_tensor_on_the_default_device(device):
    """T.add(1.0, 1.7) is a 0-d tensor where T.asarray(1.0) would be: the default device."""
    r = T.add(1.0, 1.7)
    assert r.device == T.device(device) and r.shape == () and r.item() == 2.7
    assert T.maximum(2, 3).device == T.device(device) and T.maximum(2, 3).item() == 3


def test_none_operands_raise_or_compare_by_identity():
    """A None operand took the fast path's unary call: a CUDA launch with a missing argument
    (a crash) and a wrong-arity C call. Now arithmetic names the op; == / != compare by
    identity (False / True), as PyTorch's, so `x in (None, ...)` works."""
    x = T.arange(3.0)
    for f, name in ((lambda: x + None, "add"), (lambda: None * x, "multiply"),
                    (lambda: x < None, "less"), (lambda: T.maximum(x, None), "maximum")):
        with pytest.raises(TypeError, match=f"{name}: operands must be .* got None"):
            f()
    assert (x == None) is False and (x != None) is True  # noqa: E711
    assert x not in (None,) and 2.0 in x
