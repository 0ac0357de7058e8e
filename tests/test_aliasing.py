"""Operands that share memory with the tensor being written (issue 11, items 1 and 8).

A kernel that writes x while it reads an index, mask or value operand overlapping x must read
a stable copy of that operand (tensor/aliasing.py: stable), so results equal NumPy's, which
reads every operand as it was before the write. Index checks see the same copy, so no write
ever leaves x's memory. Writes into a tensor whose own elements share memory locations (an
as_strided view with a zero or folding stride) raise, as PyTorch's do.
"""
from __future__ import annotations

import numpy as np
import pytest
from helpers import to_np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as T
from tensor.aliasing import internal_overlap

SETTINGS = settings(max_examples=max(25, settings().max_examples))


def _np_put(a, idx, v):
    """NumPy's x[idx] = v with every operand read before the write."""
    a[np.array(idx, copy=True)] = np.array(v, copy=True)
    return a


# ---------------------------------------------------------------- item 1: the issue's cases

@pytest.mark.parametrize("big", [99, 1 << 40, -(1 << 62)])
def test_issue_index_aliases_destination(device, big):
    """x[x] = v: the index is x itself; once x[1] = 64 lands, a kernel re-reading the index
    would write v[1] at x[64] (another tensor's memory, or a segfault for 1 << 40)."""
    guard = T.full((64,), 7)                          # memory a wild write could reach
    for make in (lambda x: x, lambda x: x[:2], lambda x: x[::1]):
        x = T.tensor([1, 0])
        x[make(x)] = T.tensor([64, big])
        assert x.tolist() == _np_put(np.array([1, 0]), [1, 0], [64, big]).tolist() == [big, 64]
    x = T.tensor([1, 0])
    T.index_put_(x, (x,), T.tensor([64, big]))
    assert x.tolist() == [big, 64]
    x = T.tensor([1, 0, 2])
    x[x[:2]] = T.tensor([64, big])
    assert x.tolist() == [big, 64, 2]
    assert guard.tolist() == [7] * 64


@st.composite
def _aliased_put(draw):
    """(n, index view key, value kind): an int64 x of length n holding in-range indices, a
    key that views part of x as the index, and where the values come from."""
    n = draw(st.integers(1, 12), label="n")
    m = draw(st.integers(1, n), label="index length")
    step = draw(st.sampled_from([1, -1]), label="step")
    start = draw(st.integers(0, n - m), label="start")
    vals = draw(st.sampled_from(["fresh", "x reversed", "x itself", "huge"]), label="values")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    return n, m, step, start, vals, seed


@SETTINGS
@given(case=_aliased_put())
def test_put_with_index_and_value_aliasing_x(device, case):
    """x[view of x] = values (fresh, or views of x) against NumPy, for setitem and index_put_."""
    n, m, step, start, vals, seed = case
    rng = np.random.default_rng(seed)
    base = rng.integers(-n, n, n)
    sl = slice(start, start + m) if step == 1 else slice(start + m - 1, None if start == 0 else start - 1, -1)
    for how in ("setitem", "index_put_"):
        a, x = base.copy(), T.tensor(base)
        if vals == "fresh":
            v_np = rng.integers(-100, 100, m)
            v = T.tensor(v_np)
        elif vals == "huge":
            v_np = np.full(m, 1 << 40)
            v = T.tensor(v_np)
        elif vals == "x reversed":
            v_np, v = a[::-1][:m].copy(), x[::-1][:m]
        else:
            v_np, v = a[sl].copy(), x[sl]
        expected = _np_put(a, a[sl], v_np)
        if how == "setitem":
            x[x[sl]] = v
        else:
            T.index_put_(x, (x[sl],), v)
        np.testing.assert_array_equal(to_np(x), expected, err_msg=f"{how} {case}")


def test_index_aliasing_in_multi_axis_and_mask_keys(device):
    a = np.arange(12).reshape(3, 4) % 3
    x = T.tensor(a)
    x[x[0, :3], x[1, :3]] = x[2, :3] + 10            # two index arrays, both views of x
    e = a.copy()
    e[a[0, :3].copy(), a[1, :3].copy()] = a[2, :3] + 10
    np.testing.assert_array_equal(to_np(x), e)
    b = np.array([True, False, True, True])
    xb = T.tensor(b)
    xb[xb] = xb[::-1][xb]                             # a mask that is the destination itself
    eb = b.copy()
    eb[b.copy()] = b[::-1][b].copy()
    np.testing.assert_array_equal(to_np(xb), eb)
    c = np.arange(6) % 3
    xc = T.tensor(c)
    xc[xc > 0] = xc[:4]                               # the values are a view of x itself
    ec = c.copy()
    ec[c > 0] = c[:4].copy()
    np.testing.assert_array_equal(to_np(xc), ec)


def test_index_add_scatter_add_put_along_axis_with_aliased_operands(device):
    """index_add_ / scatter_add_ / put_along_axis whose index and source are views of x."""
    a = np.array([2, 0, 1, 1, 3, 0])
    x = T.tensor(a)
    T.index_add_(x, 0, x[:4], x[2:])                  # index and source both overlap x
    e = a.copy()
    np.add.at(e, a[:4].copy(), a[2:].copy())
    np.testing.assert_array_equal(to_np(x), e)
    m = np.array([[1, 0, 2], [0, 2, 1]])
    x = T.tensor(m)
    T.scatter_add_(x, 1, x, x[::-1])                  # index = x, src = reversed rows of x
    e = m.copy()
    for i in range(2):
        np.add.at(e[i], m[i].copy(), m[::-1][i].copy())
    np.testing.assert_array_equal(to_np(x), e)
    x = T.tensor(m)
    T.put_along_axis(x, x, x[::-1], 1)
    e = m.copy()
    np.put_along_axis(e, m.copy(), m[::-1].copy(), 1)
    np.testing.assert_array_equal(to_np(x), e)


# ---------------------------------------------------------------- value operands overlapping

_CASES = {
    "shift right": (lambda x: x.__setitem__(slice(1, None), x[:-1]),
                    lambda a: a.__setitem__(slice(1, None), a[:-1])),
    "shift left": (lambda x: x.__setitem__(slice(None, -1), x[1:]),
                   lambda a: a.__setitem__(slice(None, -1), a[1:])),
    "reverse": (lambda x: x.__setitem__(Ellipsis, x[::-1]), lambda a: a.__setitem__(Ellipsis, a[::-1])),
    "transpose": (lambda x: x.__setitem__(Ellipsis, x.T), lambda a: a.__setitem__(Ellipsis, a.T)),
    "iadd transpose": (lambda x: x.__iadd__(x.T), lambda a: a.__iadd__(a.T)),
    "isub row": (lambda x: x.__isub__(x[1]), lambda a: a.__isub__(a[1])),
    "reversed iadd": (lambda x: x[::-1].__iadd__(x), lambda a: a[::-1].__iadd__(a)),
    "advanced from reversed": (lambda x: x.__setitem__([2, 0, 1], x[::-1]),
                               lambda a: a.__setitem__([2, 0, 1], a[::-1])),
    "mask from transpose": (lambda x: x.__setitem__(x > 4, x.T[x > 4]),
                            lambda a: a.__setitem__(a > 4, a.T[a > 4])),
    "copy_ transpose": (lambda x: x.copy_(x.T), lambda a: np.copyto(a, a.T)),
    "add out reversed": (lambda x: T.add(x[::-1], x, out=x), lambda a: np.add(a[::-1], a, out=a)),
    "negative out transposed": (lambda x: T.negative(x.T, out=x), lambda a: np.negative(a.T, out=a)),
    "maximum into slice": (lambda x: T.maximum(x[0], x[2], out=x[1]),
                           lambda a: np.maximum(a[0], a[2], out=a[1])),
    "clip_ by own rows": (lambda x: x.clip_(x[::-1], None), lambda a: np.clip(a, a[::-1], None, out=a)),
    "sum out into a row": (lambda x: T.sum(x, axis=0, out=x[0]), lambda a: np.sum(a, axis=0, out=a[0])),
    "cumsum of column": (lambda x: x.__setitem__((slice(None), 0), T.cumsum(x[:, 0], 0)),
                         lambda a: a.__setitem__((slice(None), 0), np.cumsum(a[:, 0]))),
    "matmul out": (lambda x: T.matmul(x, x.T, out=x), lambda a: np.matmul(a, a.T, out=a)),
    "fill_ from element": (lambda x: x.fill_(x[1, 1]), lambda a: a.fill(a[1, 1])),
    "setitem row from column": (lambda x: x.__setitem__(0, x[:, 2]), lambda a: a.__setitem__(0, a[:, 2])),
    "index_put_ accumulate shifted": (lambda x: T.index_put_(x, (slice(1, None),), x[:-1], True),
                                      lambda a: a[1:].__iadd__(a[:-1])),
}


@pytest.mark.parametrize("case", sorted(_CASES))
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative"])
def test_writes_reading_overlapping_operands_match_numpy(device, case, layout):
    ours, ref = _CASES[case]
    a = (np.arange(9.0).reshape(3, 3) * 7) % 10
    if layout == "transposed":
        x = T.asarray(np.ascontiguousarray(a.T)).T
    elif layout == "negative":
        x = T.asarray(np.ascontiguousarray(a[::-1, ::-1]))[::-1, ::-1]
    else:
        x = T.asarray(a.copy())
    assert x.tolist() == a.tolist()
    ours(x)
    e = a.copy()
    ref(e)
    np.testing.assert_array_equal(to_np(x), e, err_msg=f"{case} ({layout})")


def test_aliasing_through_numpy_is_detected():
    """Operands that reach x's memory through another storage object (NumPy's view of x, or
    from_numpy of it) are copied as well: overlap is decided by addresses."""
    x = T.tensor([1, 0, 3, 2])
    x[x.numpy()] = T.tensor([10, 11, 12, 13])
    assert x.tolist() == _np_put(np.array([1, 0, 3, 2]), [1, 0, 3, 2], [10, 11, 12, 13]).tolist()
    y = T.arange(9.0).reshape(3, 3)
    y += T.from_numpy(y.numpy().T)
    e = np.arange(9.0).reshape(3, 3)
    e += e.T.copy()
    np.testing.assert_array_equal(y.numpy(), e)
    z = T.arange(5)
    z[1:] = z.numpy()[:-1]
    assert z.tolist() == [0, 0, 1, 2, 3]
    a = np.arange(6.0)
    assert T.shares_memory(T.from_numpy(a[:4]), T.from_numpy(a[3:]))
    assert not T.shares_memory(T.from_numpy(a[:3]), T.from_numpy(a[3:]))


# ---------------------------------------------------------------- item 8: internal overlap

@st.composite
def _layouts(draw):
    nd = draw(st.integers(1, 4), label="ndim")
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=nd, max_size=nd), label="shape"))
    strides = tuple(draw(st.lists(st.integers(-7, 7), min_size=nd, max_size=nd), label="strides"))
    return shape, strides


@settings(max_examples=max(300, settings().max_examples))
@given(layout=_layouts())
def test_internal_overlap_is_exact(layout):
    """internal_overlap agrees with enumerating every element's offset."""
    shape, strides = layout
    n = int(np.prod(shape))
    lo = sum((m - 1) * s for m, s in zip(shape, strides) if s < 0 and m)
    x = T.zeros(200, dtype="int8")
    v = T.as_strided(x, shape, strides, offset=-lo if n else 0)
    offs = np.zeros(1, np.int64)
    for m, s in zip(shape, strides):
        offs = (offs[:, None] + np.arange(m) * s).ravel()
    assert internal_overlap(v) == (n > 0 and np.unique(offs).size < n), (shape, strides)


_OVERLAP_WRITES = {
    "iadd": lambda y: y.__iadd__(1),
    "exp out": lambda y: T.exp(T.ones(y.shape), out=y),
    "setitem": lambda y: y.__setitem__(Ellipsis, 5.0),
    "setitem advanced": lambda y: y.__setitem__([0], 5.0),
    "fill_": lambda y: y.fill_(2.0),
    "copy_": lambda y: y.copy_(T.arange(float(y.numel())).reshape(y.shape)),
    "clip_": lambda y: y.clip_(10.0, 20.0),
    "index_put_": lambda y: T.index_put_(y, (T.tensor([0]),), 3.0),
    "index_add_": lambda y: T.index_add_(y, 0, [0], T.ones((1,) + y.shape[1:])),
    "sum out": lambda y: T.sum(T.ones((2,) + y.shape), axis=0, out=y),
}


@pytest.mark.parametrize("write", sorted(_OVERLAP_WRITES))
@pytest.mark.parametrize("layout", [((3,), (0,)), ((3, 2), (1, 1)), ((2, 3), (2, 1)), ((4,), (0,))])
def test_writes_into_self_overlapping_views_raise(device, write, layout):
    """as_strided views whose elements share memory refuse writes (PyTorch's rule; NumPy's
    buffered result cannot be had from a parallel kernel) and leave the memory unchanged."""
    x = T.arange(8.0)
    y = T.as_strided(x, *layout)
    assert y.flags.writeable                          # as NumPy's as_strided: the flag stays on
    with pytest.raises(ValueError, match="more than one element of the written-to tensor refers "
                                         "to a single memory location"):
        _OVERLAP_WRITES[write](y)
    assert x.tolist() == [float(i) for i in range(8)]


@pytest.mark.parametrize("layout", [((3, 2), (2, 3)), ((2, 2, 2), (1, 4, 2)), ((3,), (-2,))])
def test_writes_into_odd_but_disjoint_views_work(device, layout):
    """A folding-looking layout whose elements are in fact disjoint is written as NumPy does."""
    shape, strides = layout
    x = T.arange(8.0)
    a = np.arange(8.0)
    off = sum((n - 1) * -s for n, s in zip(shape, strides) if s < 0)
    y = T.as_strided(x, shape, strides, offset=off)
    yn = np.lib.stride_tricks.as_strided(a[off:], shape, tuple(s * 8 for s in strides))
    y += T.arange(float(y.numel())).reshape(shape)
    yn += np.arange(float(yn.size)).reshape(shape)
    np.testing.assert_array_equal(to_np(x), a)
    y[...] = 1.5
    yn[...] = 1.5
    np.testing.assert_array_equal(to_np(x), a)
