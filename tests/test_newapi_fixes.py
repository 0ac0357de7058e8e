"""Fixes from the bug hunt over the recently added NumPy / PyTorch APIs (numpy_extra*, array_extra,
torch_extra*, torch_index, math_extra, optable_math): each test asserts the values NumPy or
PyTorch give (written out, so CI needs no torch), and failed before its fix. PyTorch, where it
is installed, is a second reference in the tests that say so.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd
import tensor as T

NAN, INF = math.nan, math.inf


def _leaf(v, dtype=T.float64):
    return T.tensor(v, dtype=dtype, requires_grad=True)


# ---------------------------------------------------------------- 1. nan_to_num keeps the dtype

@pytest.mark.parametrize("d", [T.float16, T.bfloat16, T.float32, T.float64])
def test_nan_to_num_keeps_the_floating_dtype(d):
    x = T.tensor([1.0, NAN, INF, -INF]).astype(d)
    top = {T.float16: 65504.0, T.bfloat16: 3.3895313892515355e38,
           T.float32: 3.4028234663852886e38, T.float64: 1.7976931348623157e308}[d]
    r = T.nan_to_num(x)
    assert r.dtype is d
    assert r.tolist() == [1.0, 0.0, top, -top]
    r = T.nan_to_num(x, nan=2.0, posinf=3.0, neginf=-4.0)
    assert r.dtype is d and r.tolist() == [1.0, 2.0, 3.0, -4.0]
    c = T.nan_to_num(T.tensor([complex(NAN, INF)]).astype(T.complex64))
    assert c.dtype is T.complex64 and c.tolist() == [complex(0.0, np.finfo(np.float32).max)]


# ---------------------------------------------------------------- 2. isin between int64 and uint64

def test_isin_int64_with_uint64_compares_exactly():
    a = T.tensor(np.array([2**63 - 1, 2**62 + 1, -3, 7], dtype=np.int64))
    b = T.tensor(np.array([2**63 - 2, 2**62, 2**64 - 3, 7], dtype=np.uint64))
    assert T.isin(a, b).tolist() == [False, False, False, True]   # float64 merged the first two
    assert T.isin(a, b, invert=True).tolist() == [True, True, True, False]
    assert T.isin(b, a).tolist() == [False, False, False, True]   # 2**64 - 3 is not -3
    big = T.tensor(np.array([2**63 - 1, 2**64 - 1], dtype=np.uint64))
    assert T.isin(big, T.tensor(np.array([2**63 - 1, -1], dtype=np.int64))).tolist() == [True, False]
    assert T.isin(T.tensor(np.array([5, -1], dtype=np.int8)), big).tolist() == [False, False]
    assert T.isin(a, T.tensor(np.array([], dtype=np.uint64))).tolist() == [False] * 4


# ---------------------------------------------------------------- 3. unique(axis=) on 1-d

def test_unique_with_an_axis_on_1d_is_the_flat_unique():
    a = T.tensor([2.0, NAN, 1.0, NAN])
    v, i, inv, c = T.unique(a, axis=0, return_index=True, return_inverse=True, return_counts=True)
    assert str(v.tolist()) == "[1.0, 2.0, nan]"            # NumPy: NaNs merge (equal_nan)
    assert (i.tolist(), inv.tolist(), c.tolist()) == ([2, 0, 1], [1, 2, 0, 2], [1, 1, 2])
    assert T.unique(a, axis=-1, equal_nan=False, return_counts=True)[1].tolist() == [1, 1, 1, 1]
    z = T.tensor([1 + 1j, complex(NAN, 0), complex(0, NAN)])
    assert T.unique(z, dim=0, return_counts=True)[1].tolist() == [1, 2]
    with pytest.raises(T.AxisError, match="unique"):
        T.unique(a, axis=1)
    rows = T.tensor([[NAN, 1.0], [NAN, 1.0]])   # 2-d: slices holding NaN stay distinct (NumPy)
    assert T.unique(rows, axis=0).shape == (2, 2)


# ---------------------------------------------------------------- 4. ravel_multi_index

def test_ravel_multi_index_refuses_dims_past_int64():
    with pytest.raises(ValueError, match="ravel_multi_index: invalid dims"):
        T.ravel_multi_index((T.tensor([2**39]), T.tensor([0])), (2**40, 2**40))
    with pytest.raises(ValueError, match="unravel_index: invalid dims"):
        T.unravel_index(T.tensor([0]), (2**40, 2**40))
    top = (2**32, 2**31 - 1)   # just within int64
    assert T.ravel_multi_index((T.tensor([2**31]), T.tensor([5])), top).tolist() == [
        2**31 * (2**31 - 1) + 5]


# ---------------------------------------------------------------- 5. fmax / fmin gradients

def test_fmax_fmin_split_ties_as_maximum():
    a, b = _leaf([1.0, 2.0, NAN, 1.0, 3.0]), _leaf([1.0, 3.0, 1.0, NAN, 3.0])
    for fn, ga_want in ((T.fmax, [0.5, 0.0, 0.0, 1.0, 0.5]), (T.fmin, [0.5, 1.0, 0.0, 1.0, 0.5])):
        ga, gb = autograd.grad(fn(a, b).sum(), [a, b])
        assert ga.tolist() == ga_want, fn.__name__
        assert gb.tolist() == [1.0 - w for w in ga_want], fn.__name__
    x, y = _leaf([1.0, 2.0]), _leaf([1.0, 3.0])   # at ties, as maximum's
    assert [g.tolist() for g in autograd.grad(T.fmax(x, y).sum(), [x, y])] == \
        [g.tolist() for g in autograd.grad(T.maximum(x, y).sum(), [x, y])]
    _, t = autograd.jvp(T.fmax, (T.tensor([1.0, 2.0]), T.tensor([1.0, 1.0])),
                        (T.tensor([2.0, 2.0]), T.tensor([4.0, 4.0])))
    assert t.tolist() == [3.0, 2.0]
    f = _leaf([1.0, 2.0], T.float32)
    assert autograd.grad(T.fmin(f, 1.0).sum(), [f])[0].tolist() == [0.5, 0.0]


def test_fmax_fmin_ties_match_torch():
    torch = pytest.importorskip("torch")
    va, vb = [1.0, 2.0, -0.0, 5.0], [1.0, 3.0, 0.0, 4.0]
    for name in ("fmax", "fmin"):
        ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (va, vb))
        getattr(torch, name)(ta, tb).sum().backward()
        a, b = _leaf(va), _leaf(vb)
        ga, gb = autograd.grad(getattr(T, name)(a, b).sum(), [a, b])
        assert (ga.tolist(), gb.tolist()) == (ta.grad.tolist(), tb.grad.tolist()), name


# ---------------------------------------------------------------- 6. softmax with +inf

def test_softmax_of_a_slice_holding_inf_is_nan():
    x = T.tensor([[1.0, 2.0, INF], [-INF, 0.0, 0.0], [-INF, -INF, -INF]])
    s, ls = T.softmax(x, 1).tolist(), T.log_softmax(x, 1).tolist()
    assert all(math.isnan(v) for v in s[0] + ls[0] + s[2] + ls[2])   # PyTorch's
    assert s[1] == [0.0, 0.5, 0.5] and ls[1] == [-INF, -math.log(2.0), -math.log(2.0)]
    cols = T.softmax(x.astype(T.float32), 0)   # along axis 0: column 2 holds +inf
    assert cols.dtype is T.float32 and cols.tolist()[0][0] == 1.0
    assert all(math.isnan(r[2]) for r in cols.tolist())


def test_softmax_with_inf_matches_torch():
    torch = pytest.importorskip("torch")
    v = [[1.0, 2.0, INF], [-INF, 0.0, 1.0], [INF, -INF, 0.0], [-INF, -INF, -INF]]
    for name in ("softmax", "log_softmax"):
        ref = getattr(torch, name)(torch.tensor(np.array(v)), 1).numpy()
        np.testing.assert_allclose(getattr(T, name)(T.tensor(v), 1).numpy(), ref, rtol=1e-14, err_msg=name)


# ---------------------------------------------------------------- 7. digitize, trailing NaN bins

def test_digitize_accepts_bins_ending_in_nan():
    x = T.tensor([-1.0, 0.5, 2.0, NAN])
    assert T.digitize(x, T.tensor([0.0, 1.0, NAN])).tolist() == [0, 1, 2, 3]   # NumPy's
    assert T.digitize(x, T.tensor([0.0, 1.0, NAN]), right=True).tolist() == [0, 1, 2, 2]
    assert T.digitize(x, T.tensor([2.0, 1.0, NAN])).tolist() == [3, 3, 0, 0]
    assert T.digitize(x, T.tensor([NAN, NAN])).tolist() == [2, 2, 2, 0]
    with pytest.raises(ValueError, match="digitize: bins must be monotonically"):
        T.digitize(x, T.tensor([0.0, 2.0, 1.0]))


# ---------------------------------------------------------------- 8. addmm & co: alpha = 0, autocast

def _products(inf_at_product: bool):
    m = np.array([[INF, 1.0], [1.0, 1.0]]) if inf_at_product else np.ones((2, 2))
    v = np.array([INF, 1.0]) if inf_at_product else np.ones(2)
    c, c1 = T.tensor([[1.0, -2.0], [3.0, 4.0]]), T.tensor([1.0, -2.0])
    return {"addmm": (c, T.tensor(m), T.eye(2)), "addmv": (c1, T.tensor(m), T.ones(2)),
            "baddbmm": (c[None], T.tensor(m)[None], T.eye(2)[None]),
            "addbmm": (c, T.tensor(m)[None], T.eye(2)[None]), "addr": (c, T.tensor(v), T.ones(2))}


@pytest.mark.parametrize("name", ["addmm", "addmv", "baddbmm", "addbmm", "addr"])
def test_alpha_zero_ignores_the_product(name):
    fn = getattr(T, name)
    inp, a, b = _products(True)[name]
    want = (2.0 * inp.numpy()).tolist()
    assert fn(inp, a, b, alpha=0, beta=2).tolist() == want     # no inf * 0 = NaN
    assert fn(inp, a, b, alpha=0, beta=0).tolist() == np.zeros(inp.shape).tolist()
    inp, a, b = _products(False)[name]
    p = fn(T.zeros(inp.shape), a, b).numpy()
    nan_in = T.full(inp.shape, NAN)
    assert fn(nan_in, a, b, beta=0, alpha=3).tolist() == (3 * p).tolist()   # (it did already)
    i, x, y = (_leaf(t.tolist()) for t in (inp, a, b))
    gi, gx, gy = autograd.grad(fn(i, x, y, alpha=0, beta=2).sum(), [i, x, y])
    assert gi.tolist() == np.full(inp.shape, 2.0).tolist()
    assert not gx.numpy().any() and not gy.numpy().any()   # zero, as PyTorch's


def test_alpha_zero_on_integers_and_broadcast_input():
    ones = T.ones((2, 2), dtype=T.int64)
    assert T.addmm(ones, ones, ones, alpha=0, beta=3).tolist() == [[3, 3], [3, 3]]
    r = T.addmm(T.tensor([1.0, -0.0]), T.tensor([[INF], [NAN]]), T.ones((1, 2)), alpha=0)
    assert r.tolist() == [[1.0, -0.0], [1.0, -0.0]] and math.copysign(1, r.tolist()[0][1]) < 0


@pytest.mark.parametrize("name,low_on_cpu", [("addmm", True), ("baddbmm", True),
                                             ("addbmm", True), ("addmv", False), ("addr", False)])
def test_products_with_an_input_under_autocast(name, low_on_cpu):
    """PyTorch's CPU autocast runs addmm, addbmm, baddbmm (and mm, bmm) in bfloat16, casting
    every floating input together; addmv and addr stay in their inputs' dtypes."""
    fn = getattr(T, name)
    inp, a, b = _products(False)[name]
    inp, a, b = (t.astype(T.float32) for t in (inp, a, b))
    want = fn(inp, a, b, beta=0.5, alpha=2).numpy()
    with T.autocast("cpu"):
        r = fn(inp, a, b, beta=0.5, alpha=2)
        assert r.dtype is (T.bfloat16 if low_on_cpu else T.float32)
        np.testing.assert_allclose(r.astype(T.float32).numpy(), want, rtol=1e-2)
        if low_on_cpu:   # mixed 16- and 32-bit inputs: all cast to bfloat16
            assert fn(inp, a.astype(T.bfloat16), b).dtype is T.bfloat16
            assert fn(inp.astype(T.float16), a, b).dtype is T.bfloat16
            d = fn(inp.astype(T.float64), a.astype(T.float64), b.astype(T.float64))
            assert d.dtype is T.float64   # float64 is left alone
    with T.autocast("cpu"):
        assert T.mm(T.ones((2, 2)).astype(T.float32), T.ones((2, 2)).astype(T.bfloat16)).dtype \
            is T.bfloat16
        assert T.mv(T.ones((2, 2)).astype(T.float32), T.ones(2).astype(T.float32)).dtype \
            is T.float32   # not on PyTorch's CPU list
    x = _leaf(a.tolist(), T.float32)
    with T.autocast("cpu"):
        out = fn(inp, x, b)
    g = autograd.grad(out.astype(T.float32).sum(), [x])[0]
    assert g.dtype is T.float32 and g.shape == x.shape


def test_products_under_autocast_match_torch():
    torch = pytest.importorskip("torch")
    for name, (inp, a, b) in _products(False).items():
        ts = [torch.tensor(t.astype(T.float32).numpy()) for t in (inp, a, b)]
        with torch.autocast("cpu", dtype=torch.bfloat16):
            ref = getattr(torch, name)(*ts, beta=0.5, alpha=2)
        with T.autocast("cpu", dtype=T.bfloat16):
            r = getattr(T, name)(*(t.astype(T.float32) for t in (inp, a, b)), beta=0.5, alpha=2)
        assert r.dtype.name == str(ref.dtype).removeprefix("torch."), name
        np.testing.assert_array_equal(r.astype(T.float32).numpy(), ref.float().numpy(), err_msg=name)


# ---------------------------------------------------------------- 9. index errors name the op

def test_index_errors_name_the_op():
    x = T.ones((3, 4))
    with pytest.raises(IndexError, match=r"^index_add: index 4 is out of bounds for axis 1 with size 4"):
        T.index_add(x, 1, T.tensor([1, 4]), T.ones((3, 2)))
    with pytest.raises(IndexError, match=r"^scatter_add: index 7 is out of bounds"):
        T.scatter_add(T.zeros(3), 0, T.tensor([7]), T.ones(1))
    with pytest.raises(IndexError, match=r"^index 4 is out of bounds"):   # x[key]: NumPy's words
        x[:, T.tensor([4])]
    xi = T.zeros(3, dtype=T.int64)
    with pytest.raises(TypeError, match="index_add: alpha must be an integer for an integer tensor"):
        T.index_add(xi, 0, T.tensor([1]), T.ones(1, dtype=T.int64), alpha=1.5)
    assert xi.tolist() == [0, 0, 0]
    assert T.index_add(xi, 0, T.tensor([1]), T.ones(1, dtype=T.int64), alpha=3).tolist() == [0, 3, 0]


# ---------------------------------------------------------------- 10. randperm dtype, narrow start

def test_randperm_refuses_bool_and_inexact_dtypes():
    for d in (T.bool_, T.complex64):
        with pytest.raises(TypeError, match="randperm: dtype must be an integer or floating"):
            T.randperm(5, dtype=d)
    with pytest.raises(ValueError, match="randperm: n=2050 is too large for float16"):
        T.randperm(2050, dtype=T.float16)
    assert sorted(T.randperm(2049, dtype=T.float16).tolist()) == list(range(2049))
    assert sorted(T.randperm(257, dtype=T.bfloat16).tolist()) == list(range(257))
    assert sorted(T.randperm(6, dtype=T.uint8).tolist()) == list(range(6))


def test_narrow_takes_only_a_0d_integer_start_tensor():
    x = T.arange(6)
    for bad in (T.tensor(1.7), T.tensor([1]), T.tensor(True)):
        with pytest.raises(TypeError, match="narrow: start must be an int or a 0-d integer"):
            T.narrow(x, 0, bad, 2)
    assert T.narrow(x, 0, T.tensor(1), 2).tolist() == [1, 2]
    assert x.narrow(0, T.tensor(-2, dtype=T.int32), 2).tolist() == [4, 5]


# ---------------------------------------------------------------- 11. multinomial message

def test_multinomial_without_replacement_names_the_short_row():
    p = T.tensor([[1.0, 1.0, 1.0], [0.1, 0.0, 0.6]])
    with pytest.raises(ValueError, match=r"multinomial: a row has fewer than num_samples=3 "
                                         r"categories of non-zero probability \(row 1 has 2;"):
        T.multinomial(p, 3)
    assert sorted(T.multinomial(p[0], 3).tolist()) == [0, 1, 2]
    assert T.multinomial(p, 3, replacement=True).shape == (2, 3)


# ---------------------------------------------------------------- 12. apply_along_axis, 0-length axis

def test_apply_along_axis_over_an_empty_axis():
    r = T.apply_along_axis(lambda v: v * 2, 0, T.zeros((0, 3)))
    assert r.shape == (0, 3)   # NumPy's
    s = T.apply_along_axis(lambda v: v.sum(), 1, T.zeros((2, 0, 3)))
    assert s.shape == (2, 3) and s.tolist() == [[0.0] * 3] * 2
    with pytest.raises(ValueError, match="apply_along_axis: Cannot apply_along_axis"):
        T.apply_along_axis(lambda v: v, 1, T.zeros((0, 3)))


# ---------------------------------------------------------------- smaller divergences

def test_smaller_numpy_divergences():
    with pytest.raises(TypeError, match="interp: left and right must be real"):
        T.interp(T.tensor([0.5]), T.tensor([0.0, 1.0]), T.tensor([0.0, 1.0]), left=1j)
    with pytest.raises(TypeError, match="interp: left and right must be real"):
        T.interp(T.tensor([0.5]), T.tensor([0.0, 1.0]), T.tensor([0.0, 1.0]), right=T.tensor(1j))
    assert T.interp(T.tensor([2.0]), T.tensor([0.0, 1.0]), T.tensor([0.0, 1j]), right=2j).tolist() == [2j]
    assert T.choose(T.tensor([True, False]), [T.tensor([1, 2]), T.tensor([3, 4])]).tolist() == [3, 2]
    with pytest.raises(T.AxisError, match="sort_complex"):
        T.sort_complex(T.tensor(1.0))
    with pytest.raises(T.AxisError, match="insert"):
        T.insert(T.tensor(1.0), 0, 5.0, axis=0)
    with pytest.raises(TypeError, match="ldexp: the exponent must be an integer tensor"):
        T.ldexp(T.tensor([1.0]), T.tensor(np.array([2], dtype=np.uint64)))
    assert T.ldexp(T.tensor([1.0]), T.tensor(np.array([2], dtype=np.uint32))).tolist() == [4.0]
