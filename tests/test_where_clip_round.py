"""where, clip and round against NumPy: random shapes, dtypes, layouts and Python scalars."""
from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import (
    ALL_DTYPES,
    as_compute,
    assert_close,
    bf16_round,
    broadcastable_shapes,
    gen_values,
    make_tensor,
    make_view,
    np_quiet,
    scalar_strategy,
    seeds,
    shapes,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as T
from tensor import dtypes as dt

pytestmark = pytest.mark.usefixtures("device")


@settings(max_examples=max(10, settings().max_examples * 2))
@given(data=st.data(), shapes3=broadcastable_shapes(3), seed=seeds())
def test_where_matches_numpy(data, shapes3, seed):
    """where(cond, a, b): 3-way broadcasting, any dtype pair (result_type of a and b, NEP 50 for
    Python scalars), a non-bool condition read as != 0, strided views."""
    rng = np.random.default_rng(seed)
    sc, sa, sb = shapes3
    cd = data.draw(st.sampled_from((dt.bool_, dt.bool_, dt.int32, dt.float32)), label="cond dtype")
    c = gen_values(rng, cd, sc)
    vc, cond = make_view(rng, c, cd) if rng.random() < 0.5 else (c, make_tensor(c, cd))
    operands, vals, dts = [], [], []
    kinds = [data.draw(st.sampled_from(ALL_DTYPES + ("b", "i", "f")), label=f"{lab} dtype")
             for lab in "ab"]
    # a Python int adopts the other operand's dtype: keep it in that range (see test_where_scalars)
    peer = next((k for k in kinds if not isinstance(k, str)), dt.int8)
    for shp, label, kind in ((sa, "a", kinds[0]), (sb, "b", kinds[1])):
        if isinstance(kind, str):
            s = data.draw(scalar_strategy(kind, peer), label=f"{label} scalar")
            operands.append(s)
            vals.append(s)
            dts.append(None)
        else:
            v = gen_values(rng, kind, shp)
            vv, t = make_view(rng, v, kind) if rng.random() < 0.5 else (v, make_tensor(v, kind))
            operands.append(t)
            vals.append(vv)
            dts.append(kind)
    if all(x is None for x in dts):
        return  # where(cond, scalar, scalar): covered in test_where_scalars
    if dt.bfloat16 in dts:
        rd = dt.result_type(*[o for o in operands])
        rt = np.float32 if rd is dt.bfloat16 else rd.np
        want = np.where(vc.astype(bool), *[as_compute(np.asarray(v), rd).astype(rt) for v in vals])
        wdt = rd
    else:
        nv = [v if d is None else np.asarray(v, d.np) for v, d in zip(vals, dts)]
        want = np.where(vc.astype(bool), *nv)
        wdt = want.dtype
    assert_close(T.where(cond, *operands), want, wdt, what=f"where({cd.name}, {dts})")


def test_where_scalars_and_errors():
    c = T.asarray(np.array([True, False, True]))
    assert_close(T.where(c, 1, 2.5), np.where([True, False, True], 1, 2.5))
    assert_close(T.where(c, 1, 2), np.where([True, False, True], 1, 2))
    assert_close(T.where(c, True, False), np.where([True, False, True], True, False))
    x8 = T.asarray(np.array([1, 2, 3], np.int8))
    assert_close(T.where(c, x8, 5), np.where([True, False, True], np.array([1, 2, 3], np.int8), 5))
    # NumPy silently wraps 1000 to int8 (-24) here; we refuse, like int8 + 1000 (OverflowError)
    with pytest.raises(OverflowError):
        T.where(c, x8, 1000)
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)|\(2,\).*\(3,\)"):
        T.where(c, T.ones(2), 0.0)


_BOUND = st.one_of(st.none(), st.sampled_from(("i", "f", "tensor")))


@settings(max_examples=max(10, settings().max_examples * 2))
@given(data=st.data(), shape=shapes(), seed=seeds())
def test_clip_matches_numpy(data, shape, seed):
    """clip(x, lo, hi) with lo/hi None, Python scalars or broadcast tensors, NaN propagating,
    lo > hi giving hi (NumPy's minimum(maximum(x, lo), hi)); x.clip and clamp are the same."""
    rng = np.random.default_rng(seed)
    d = data.draw(st.sampled_from(tuple(x for x in ALL_DTYPES if x is not dt.bool_)), label="dtype")
    a = gen_values(rng, d, shape)
    va, x = make_view(rng, a, d) if rng.random() < 0.5 else (a, make_tensor(a, d))
    bounds, nbounds = [], []
    for label in ("lo", "hi"):
        k = data.draw(_BOUND, label=label)
        if k is None:
            bounds.append(None)
            nbounds.append(None)
        elif k == "tensor":
            v = gen_values(rng, d, shape[len(shape) // 2:], specials=False)
            bounds.append(make_tensor(v, d))
            nbounds.append(v)
        else:
            s = data.draw(scalar_strategy(k, d), label=label + " scalar")
            bounds.append(s)
            nbounds.append(s)
    if bounds[0] is None and bounds[1] is None:   # the standard's (and NumPy 2.1's): a copy
        r = T.clip(x, None, None)
        assert_close(r, va, d, what="clip without bounds")
        assert not T.shares_memory(r, x) or r.numel() == 0
        return
    if d is dt.bfloat16:
        rd = dt.result_type(*([x] + [b for b in bounds if b is not None]))
        rt = np.float32 if rd is dt.bfloat16 else rd.np
        conv = [None if v is None else as_compute(np.asarray(v), rd).astype(rt) for v in nbounds]
        want = np_quiet(np.clip, va.astype(rt), *conv)
        wdt = rd
    else:
        want = np_quiet(np.clip, va, *[None if v is None else (np.asarray(v, d.np) if isinstance(
            b, T.Tensor) else v) for v, b in zip(nbounds, bounds)])
        wdt = np.asarray(want).dtype
    assert_close(T.clip(x, *bounds), want, wdt, what=f"clip {d.name} {nbounds}")
    assert_close(x.clip(*bounds), want, wdt, what="x.clip")
    assert_close(T.clamp(x, *bounds), want, wdt, what="clamp")


def test_clip_out_of_range_python_ints():
    """NumPy 2: a bound past the dtype's range that cannot bind is fine; one that binds raises."""
    a = np.array([1, -128, 127, 5], np.int8)
    x = T.asarray(a)
    assert_close(T.clip(x, -1000, 1000), np.clip(a, -1000, 1000))
    assert_close(T.clip(x, 3, 1000), np.clip(a, 3, 1000))
    assert_close(T.clip(x, -1000, None), np.clip(a, -1000, None))
    for lo, hi in ((1000, None), (None, -1000)):
        with pytest.raises(OverflowError):
            np.clip(a, lo, hi)
        with pytest.raises(OverflowError):
            T.clip(x, lo, hi)


@settings(max_examples=max(10, settings().max_examples * 2))
@given(data=st.data(), shape=shapes(), seed=seeds())
def test_round_matches_numpy(data, shape, seed):
    """round(x, decimals) as NumPy's round: half to even, scaled by 10**decimals (divided first
    for negative decimals), ints unchanged for decimals >= 0 and rounded to tens etc. below."""
    rng = np.random.default_rng(seed)
    d = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    decimals = data.draw(st.integers(-3, 3), label="decimals")
    a = gen_values(rng, d, shape)
    if d.kind == "f":
        a = (a * rng.choice([1, 10, 0.01], size=a.shape)).astype(a.dtype)
        if d is dt.bfloat16:
            a = bf16_round(a)
    va, x = make_view(rng, a, d) if rng.random() < 0.5 else (a, make_tensor(a, d))
    if d is dt.bool_ and decimals != 0:
        with pytest.raises(TypeError):
            np.round(va, decimals)
        with pytest.raises(TypeError):
            T.round(x, decimals)
        return
    if d is dt.bfloat16:  # emulate the bfloat16 steps: scale, rint, unscale, each rounded
        f = np.float32(10.0 ** abs(decimals))
        with np.errstate(all="ignore"):
            if decimals == 0:
                want = np.rint(va)
            elif decimals > 0:
                want = bf16_round(bf16_round(np.rint(bf16_round(va * f))) / f)
            else:
                want = bf16_round(bf16_round(np.rint(bf16_round(va / f))) * f)
        wdt = d
    else:
        want = np_quiet(np.round, va, decimals)
        wdt = want.dtype
    assert_close(T.round(x, decimals), want, wdt, what=f"round({d.name}, {decimals})")
    assert_close(x.round(decimals), want, wdt, what="x.round")
    assert_close(T.around(x, decimals), want, wdt, what="around")


def test_round_ties_to_even():
    x = T.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.675, 0.125])
    assert T.round(x).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 3.0, 0.0]
    assert_close(T.round(x, 2), np.round(np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.675, 0.125]), 2))
    assert_close(T.round(T.tensor([15, 25, -35], dtype="int16"), -1),
                 np.round(np.array([15, 25, -35], np.int16), -1))




def test_clip_checks_out_as_clip():
    """out=[1] raised AttributeError, and with no bounds a float result went into an int8 out."""
    x = T.tensor([0.5, 2.0])
    with pytest.raises(TypeError, match="clip: out must be a Tensor, got list"):
        T.clip(x, 0, 1, out=[1])
    for lo in (None, 0):
        with pytest.raises(TypeError, match="clip: cannot cast the result dtype float64 to the output "
                                            "dtype int8"):
            T.clip(x, lo, None, out=T.zeros(2, dtype="int8"))
    o = T.zeros(2)
    assert T.clip(x, 0, 1, out=o) is o and o.tolist() == [0.5, 1.0]


def test_round_past_float64s_range_of_decimals():
    """10**decimals overflowed: a bare OverflowError (NumPy gives NaN)."""
    x = T.tensor([1.5, -2.25, math.inf])
    assert T.round(x, 309).tolist() == [1.5, -2.25, math.inf]
    r = T.round(x[:2], -400).tolist()
    assert r == [0.0, -0.0] and math.copysign(1, r[1]) == -1
    assert T.round(T.tensor([15]), -400).tolist() == [0]
