"""Advanced indexing, nonzero, take / along-axis, index_add and scatter_add against NumPy.

Keys mix integer arrays (NumPy arrays, lists, tensors, non-contiguous tensors, 0-d), boolean
masks of any rank, Python bools, ints, slices, None and Ellipsis; inputs are every dtype and
non-contiguous views; writes go through views and must be seen by the base."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import bf16_round, make_tensor, shapes, small_values, synced, to_np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensor as T
from tensor import dtypes as dt
from tensor import indexing as I
from tensor import scatter as S

pytestmark = pytest.mark.usefixtures("device")

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ALL_DTYPES = tuple(dt.dtype(n) for n in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                          "int64", "uint64", "float16", "bfloat16", "float32", "float64"))
INDEX_DTYPES = (np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32, np.uint64)


# ---------------------------------------------------------------- helpers (self-contained)

def maybe_view(data, a: np.ndarray, d: dt.DType, label: str = "layout"):
    """(values, tensor): a contiguous tensor or a transposed / stepped / negative-step / broadcast view."""
    kind = data.draw(st.sampled_from(["contig", "transposed", "stepped", "negative", "broadcast"]), label)
    if a.ndim == 0 or kind == "contig":
        return a, make_tensor(a, d)
    if kind == "transposed":
        return a, make_tensor(np.ascontiguousarray(a.T), d).T
    if kind == "stepped":
        big = np.repeat(a, 2, axis=0)
        return a, make_tensor(big, d)[::2]
    if kind == "negative":
        return a, make_tensor(np.ascontiguousarray(a[::-1]), d)[::-1]
    b = np.broadcast_to(a[:1], a.shape)
    return b, T.broadcast_to(make_tensor(a[:1], d), a.shape)


def to_index(rng, a: np.ndarray):
    """The same index in one of the forms users pass: ndarray, list, tensor, odd-strided tensor."""
    form = rng.integers(0, 5)
    if form == 0 or a.ndim == 0 or (form == 1 and a.size == 0):  # [] would lose a mask's dtype
        return a
    if form == 1:
        return a.tolist()
    if form == 2:
        return T.asarray(a)
    if form == 3 and a.dtype != np.bool_:
        return T.asarray(np.ascontiguousarray(a[::-1]))[::-1]  # negative strides
    return T.asarray(np.asfortranarray(a))


@st.composite
def keys(draw, shape, allow_oob: bool = False):
    """(numpy key, our key): a random mix of basic and advanced entries for an array of shape."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    key, ours, d, ell = [], [], 0, False
    while d < len(shape) and draw(st.integers(0, 9)) < 9:
        n, kind = shape[d], draw(st.sampled_from(["slice", "int", "arr", "arr", "mask", "none",
                                                  "bool", "ell"]))
        if kind == "slice":
            k = slice(draw(st.sampled_from([None, 0, 1, -1])), draw(st.sampled_from([None, 2, -1])),
                      draw(st.sampled_from([None, 1, 2, -1, -2])))
        elif kind == "int" and n:
            k = int(rng.integers(-n, n))
        elif kind == "arr":
            bshape = draw(st.sampled_from([(), (2,), (3,), (2, 1), (1, 3), (0,)]))
            hi = n + (2 if allow_oob else 0)
            k = rng.integers(-n, hi, bshape) if n else np.zeros((0,), np.int64)
            k = k.astype(INDEX_DTYPES[rng.integers(0, 5)] if n < 100 and (k >= 0).all() else np.int64)
        elif kind == "mask":
            m = int(rng.integers(1, min(2, len(shape) - d) + 1))
            k = rng.random(shape[d:d + m]) < 0.5
        elif kind == "none":
            k = None
        elif kind == "bool":
            k = bool(rng.random() < 0.5)
        elif kind == "ell" and not ell:
            k, ell = Ellipsis, True
            d = len(shape) if draw(st.booleans()) else d
        else:
            k = slice(None)
        key.append(k)
        ours.append(to_index(rng, k) if isinstance(k, np.ndarray) else k)
        if isinstance(k, np.ndarray):
            d += k.ndim if k.dtype == np.bool_ else 1
        elif isinstance(k, int | slice) and not isinstance(k, bool):
            d += 1
    return tuple(key), tuple(ours)


def run_both(fn_np, fn_ours):
    """(numpy result or exception type, our result or exception type)."""
    out = []
    for f in (fn_np, fn_ours):
        try:
            out.append(synced(f()))
        except (IndexError, ValueError, TypeError) as e:
            out.append(type(e))
    return out


# ---------------------------------------------------------------- getitem / setitem

@SETTINGS
@given(st.data(), st.sampled_from(ALL_DTYPES), shapes(max_dims=4))
def test_getitem_matches_numpy(data, d, shape):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a, x = maybe_view(data, small_values(rng, shape, d), d)
    nkey, key = data.draw(keys(shape, allow_oob=True))
    want, got = run_both(lambda: a[nkey], lambda: x[key])
    if isinstance(want, type) or isinstance(got, type):
        assert got is want or (isinstance(got, type) and issubclass(got, want)), (nkey, want, got)
        return
    assert got.dtype is d and got.shape == want.shape, (nkey, got.shape, want.shape)
    np.testing.assert_array_equal(to_np(got), want)
    basic = all(k is None or k is Ellipsis or isinstance(k, slice) or type(k) is int for k in key)
    if got.numel():
        assert T.shares_memory(got, x) == basic, (nkey, basic)  # a view exactly for basic keys


def _write_view(data, base: np.ndarray, t):
    """The same non-broadcast view of a NumPy base and of a tensor holding the same values."""
    kind = data.draw(st.sampled_from(["contig", "transposed", "stepped", "negative"]))
    if kind == "transposed":
        return base.T, t.T
    if kind == "stepped" and base.ndim:
        return base[::2], t[::2]
    if kind == "negative" and base.ndim:
        return base[::-1], t[::-1]
    return base, t


@SETTINGS
@given(st.data(), st.sampled_from(ALL_DTYPES), shapes(max_dims=4))
def test_setitem_through_views_matches_numpy(data, d, shape):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    base = small_values(rng, shape, d)
    t_base = make_tensor(base, d)
    a, x = _write_view(data, base, t_base)
    nkey, key = data.draw(keys(a.shape))
    try:
        res_shape = a[nkey].shape
    except IndexError:
        return
    cut = data.draw(st.integers(0, len(res_shape)))
    vshape = tuple(1 if data.draw(st.booleans()) else n for n in res_shape[cut:])
    if data.draw(st.integers(0, 3)) == 0:
        v = 3 if d is not dt.bool_ else True
        a[nkey], x[key] = v, v
    else:
        vd = data.draw(st.sampled_from([d, dt.float64, dt.int16]))
        vals = small_values(rng, vshape, vd)
        want_vals = bf16_round(vals) if d is dt.bfloat16 else vals
        a[nkey] = want_vals.astype(base.dtype) if d.kind != "b" else want_vals.astype(bool)
        x[key] = make_tensor(vals, vd) if data.draw(st.booleans()) else vals
    np.testing.assert_array_equal(to_np(t_base), base)


def test_repeated_indices_last_write_wins():
    x = T.zeros(5, dtype="int64")
    x[[1, 1, 1, 3]] = T.tensor([7, 8, 9, 4])
    assert x.tolist() == [0, 9, 0, 4, 0]
    # rows wide enough that the scatter splits the inner dimension between threads
    rng = np.random.default_rng(0)
    v = rng.random((6, 3, 5000))
    y = T.zeros((4, 3, 5000))
    y[[2, 0, 2, 2, 1, 0]] = v
    np.testing.assert_array_equal(to_np(y)[[0, 1, 2]], v[[5, 4, 3]])
    m = T.zeros((3, 3), dtype="int32")
    m[[0, 0], [1, 1]] = T.tensor([5, 6], dtype="int32")
    m[T.tensor([[True, False, False]] * 3)] = T.tensor([1, 2, 3], dtype="int32")
    assert m.tolist() == [[1, 6, 0], [2, 0, 0], [3, 0, 0]]


@pytest.mark.parametrize("key, msg", [
    (([0, 1, 7],), "index 7 is out of bounds for axis 0 with size 5"),
    (([0, 1], [2, 9]), "index 9 is out of bounds for axis 1 with size 4"),
    (([0, -6], [9, 0]), "index -6 is out of bounds for axis 0 with size 5"),
    ((slice(None), [3, -5]), "index -5 is out of bounds for axis 1 with size 4"),
    ((np.ones((5, 4), bool), [5]), "too many indices"),
    ((1, [0, 4]), "index 4 is out of bounds for axis 1 with size 4"),
])
def test_out_of_bounds_raises_before_any_write(key, msg):
    base = np.arange(20.0).reshape(5, 4)
    x = T.asarray(base.copy())
    with pytest.raises(IndexError, match=msg):
        x[key] = T.arange(2.0) if len(key) == 2 and not isinstance(key[0], np.ndarray) else 1.0
        synced()
    np.testing.assert_array_equal(x.numpy(), base)
    with pytest.raises(IndexError, match=msg):
        synced(x[key])
    with pytest.raises(IndexError, match=msg):
        np.asarray(base)[key]  # the message is NumPy's


@pytest.mark.parametrize("key, exc, msg", [
    ((0, 0, 0), IndexError, "too many indices"),
    (([0], 0, 0), IndexError, "too many indices for array: array is 2-dimensional, but 3 were indexed"),
    ((np.array([1.0]),), IndexError, "arrays used as indices must be of integer"),
    ((np.array([True, False]),), IndexError, "boolean index did not match indexed array along axis 0"),
    (([0, 1], [0, 1, 2]), IndexError, r"shape mismatch: indexing arrays could not be broadcast"),
    ((Ellipsis, Ellipsis), IndexError, "an index can only have a single ellipsis"),
    ((1.5,), IndexError, "only integers, slices"),
    ((T.tensor([0.0]),), IndexError, "integer \\(or boolean\\) type"),
])
def test_bad_keys(key, exc, msg):
    x = T.arange(12).reshape(3, 4)
    with pytest.raises(exc, match=msg):
        x[key]


def test_bad_value_shape():
    x = T.zeros((3, 4))
    with pytest.raises(ValueError, match=r"value array of shape \(3,\) could not be broadcast to "
                                         r"indexing result of shape \(3, 2\)"):
        x[:, [0, 1]] = T.ones(3)


def test_advanced_reads_copy_basic_reads_view():
    x = T.arange(12).reshape(3, 4)
    assert T.shares_memory(x[1, 1:], x)
    for key in ([0, 1], T.tensor(1), (T.tensor(1), slice(1, None)), x > 3, True):
        assert not T.shares_memory(x[key], x), key
    assert x[T.tensor(1)].tolist() == [4, 5, 6, 7]
    assert x[np.int64(2), 3].item() == 11
    assert x[True].shape == (1, 3, 4) and x[False].shape == (0, 3, 4)


def test_index_dtypes_and_noncontiguous_index():
    base = np.arange(30).reshape(5, 6)
    x = T.asarray(base)
    for d in ("int8", "uint8", "int16", "int32", "int64"):
        idx = T.tensor([[4, 0], [1, 3]], dtype=d)
        np.testing.assert_array_equal(x[idx.T, 1:3].numpy(), base[np.array([[4, 0], [1, 3]]).T, 1:3])
    idx = T.broadcast_to(T.tensor([2, 0]), (3, 2))  # stride-0 index
    np.testing.assert_array_equal(x[idx, idx].numpy(), base[[[2, 0]] * 3, [[2, 0]] * 3])


def test_large_indices_use_threads_and_report_the_first_bad_index():
    rng = np.random.default_rng(5)
    a = rng.random((2000, 40))
    x = T.asarray(a)
    i, j = rng.integers(-2000, 2000, 40000), rng.integers(-40, 40, 40000)
    np.testing.assert_array_equal(x[T.asarray(i), T.asarray(j)].numpy(), a[i, j])  # threaded offsets
    np.testing.assert_array_equal(x[T.asarray(i[:1000])].numpy(), a[i[:1000]])      # threaded row gather
    flat = a.ravel()
    np.testing.assert_array_equal(T.asarray(flat)[T.asarray(i)].numpy(), flat[i])  # threaded take
    bad_i, bad_j = i.copy(), j.copy()
    bad_i[39000], bad_i[35000] = 90001, 90000
    bad_j[39000], bad_j[35000] = -99, 50
    with pytest.raises(IndexError, match="index 90000 is out of bounds for axis 0 with size 2000"):
        synced(x[T.asarray(bad_i), T.asarray(bad_j)])  # the first array with a bad index is reported
    with pytest.raises(IndexError, match="index 50 is out of bounds for axis 1 with size 40"):
        synced(x[T.asarray(i), T.asarray(bad_j)])
    with pytest.raises(IndexError, match="index 90000 is out of bounds for axis 0 with size 80000"):
        synced(T.asarray(flat)[T.asarray(bad_i)])


# ---------------------------------------------------------------- nonzero family

@SETTINGS
@given(st.data(), st.sampled_from(ALL_DTYPES), shapes(min_dims=1, max_dims=4))
def test_nonzero_argwhere_count_nonzero(data, d, shape):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    v = small_values(rng, shape, d)
    if d.kind == "f" and v.size:
        v.flat[0] = -0.0
        v.flat[-1] = np.nan
    a, x = maybe_view(data, v, d)
    got = I.nonzero(x)
    want = np.nonzero(a)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype is dt.int64
        np.testing.assert_array_equal(g.numpy(), w)
    np.testing.assert_array_equal(I.argwhere(x).numpy(), np.argwhere(a))
    n = I.count_nonzero(x)   # a 0-d int64 tensor (the array API standard's), not an int
    assert n.shape == () and n.dtype is dt.int64 and n.item() == np.count_nonzero(a)
    axis = data.draw(st.sampled_from([0, -1, (0, -1)] if a.ndim > 1 else [0, -1]))
    keep = data.draw(st.booleans())
    c = I.count_nonzero(x, axis=axis, keepdims=keep)
    np.testing.assert_array_equal(c.numpy(), np.count_nonzero(a, axis=axis, keepdims=keep))


def test_nonzero_0d_and_large():
    with pytest.raises(ValueError, match="0d"):
        I.nonzero(T.tensor(1))
    assert I.argwhere(T.tensor(1)).shape == (1, 0) and I.argwhere(T.tensor(0)).shape == (0, 0)
    m = np.random.default_rng(1).random((300, 400)) < 0.3  # big enough for the threaded fill
    for g, w in zip(I.nonzero(T.asarray(m)), np.nonzero(m)):
        np.testing.assert_array_equal(g.numpy(), w)
    a = np.arange(120000.0)
    np.testing.assert_array_equal(T.asarray(a)[T.asarray(m.ravel()[:120000])].numpy(), a[m.ravel()[:120000]])


# ---------------------------------------------------------------- take and along-axis

@SETTINGS
@given(st.data(), st.sampled_from(ALL_DTYPES), shapes(min_dims=1, max_dims=3, min_side=1))
def test_take(data, d, shape):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a, x = maybe_view(data, small_values(rng, shape, d), d)
    axis = data.draw(st.sampled_from([None, 0, -1]))
    n = a.size if axis is None else a.shape[axis]
    ishape = data.draw(st.sampled_from([(), (3,), (2, 2), (0,)]))
    idx = rng.integers(-n, n, ishape)
    got = I.take(x, to_index(rng, idx) if ishape else int(idx), axis=axis)
    np.testing.assert_array_equal(to_np(got), np.take(a, idx, axis=axis))
    with pytest.raises(IndexError, match=f"index {n} is out of bounds"):
        synced(I.take(x, [0, n], axis=axis))


@SETTINGS
@given(st.data(), st.sampled_from(ALL_DTYPES), shapes(min_dims=1, max_dims=3, min_side=1))
def test_take_and_put_along_axis(data, d, shape):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a, x = maybe_view(data, small_values(rng, shape, d), d)
    axis = data.draw(st.sampled_from([0, -1, None]))
    if axis is None:
        ishape, n = (data.draw(st.integers(0, 5)),), a.size
    else:
        n = a.shape[axis]
        ishape = [1 if data.draw(st.booleans()) else s for s in a.shape]
        ishape[axis] = data.draw(st.integers(0, 4))
    idx = rng.integers(-n, n, tuple(ishape))
    got = I.take_along_axis(x, T.asarray(idx), axis)
    np.testing.assert_array_equal(to_np(got), np.take_along_axis(a, idx, axis))
    base = small_values(rng, shape, d)
    t = make_tensor(base, d)
    vals = small_values(rng, np.broadcast_shapes(idx.shape, got.shape), d)
    S.put_along_axis(t, T.asarray(idx), make_tensor(vals, d), axis)
    ref = base.copy()
    np.put_along_axis(ref, idx, vals, axis)
    # repeated indices: NumPy's last write wins too
    np.testing.assert_array_equal(to_np(t), ref)


# ---------------------------------------------------------------- index_add, scatter_add, index_put_

def _seq_add_ref(ref: np.ndarray, key, src: np.ndarray, d: dt.DType) -> np.ndarray:
    """np.add.at, with bfloat16 rounding after each sequential add."""
    if d is not dt.bfloat16:
        np.add.at(ref, key, src.astype(ref.dtype))
        return ref
    flat_idx = np.arange(ref.size).reshape(ref.shape)[key]
    src = np.broadcast_to(src, flat_idx.shape)
    for i, s in zip(flat_idx.ravel(), src.ravel()):
        at = np.unravel_index(i, ref.shape)  # ref may be a view: write through it
        ref[at] = bf16_round(np.float32(ref[at]) + np.float32(s))
    return ref


@SETTINGS
@given(st.data(), st.sampled_from(ALL_DTYPES), shapes(min_dims=1, max_dims=3, min_side=1))
def test_index_add_matches_add_at(data, d, shape):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    base = small_values(rng, shape, d)
    t_base = make_tensor(base, d)
    a, x = _write_view(data, base, t_base)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    idx = rng.integers(-n, n, data.draw(st.integers(0, 7)))  # duplicates likely
    sshape = list(a.shape)
    sshape[axis] = idx.size
    src = small_values(rng, tuple(sshape), d)
    s_np, s_t = maybe_view(data, src, d, "source layout")
    alpha = 2 if d.kind in "iuf" and data.draw(st.booleans()) else 1
    before = to_np(t_base)
    out = S.index_add(x, axis, to_index(rng, idx), s_t, alpha=alpha)
    np.testing.assert_array_equal(to_np(t_base), before)  # the out-of-place one copies
    S.index_add_(x, axis, T.asarray(idx), s_t, alpha=alpha)
    scaled = (s_np * alpha).astype(s_np.dtype) if alpha != 1 else s_np
    key = (slice(None),) * (axis % a.ndim) + (idx,)
    want = _seq_add_ref(a.copy(), key, scaled, d)
    np.testing.assert_array_equal(to_np(out), want)
    _seq_add_ref(a, key, scaled, d)
    np.testing.assert_array_equal(to_np(t_base), base)  # written through the view


def test_index_add_deterministic_parallel_and_errors():
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 4, 50)
    src = rng.random((50, 8192)).astype(np.float32)
    want = np.zeros((4, 8192), np.float32)
    np.add.at(want, idx, src)
    got = S.index_add_(T.zeros((4, 8192), dtype="float32"), 0, T.asarray(idx), T.asarray(src))
    np.testing.assert_array_equal(got.numpy(), want)  # same sequential order: bitwise equal
    x = T.zeros((3, 2))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        synced(S.index_add_(x, 0, [0, 3], T.ones((2, 2))))
    assert x.tolist() == [[0.0, 0.0]] * 3
    with pytest.raises(ValueError, match=r"source of shape \(2, 3\) does not match \(2, 2\)"):
        S.index_add_(x, 0, [0, 1], T.ones((2, 3)))
    with pytest.raises(ValueError, match="index must be 1-d"):
        S.index_add_(x, 0, [[0, 1]], T.ones((2, 2)))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for a tensor of rank 2"):
        S.index_add_(x, 2, [0], T.ones((3, 1)))


@SETTINGS
@given(st.data(), st.sampled_from(ALL_DTYPES), shapes(min_dims=1, max_dims=3, min_side=1))
def test_scatter_add(data, d, shape):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    base = small_values(rng, shape, d)
    x = make_tensor(base, d)
    axis = data.draw(st.integers(0, len(shape) - 1))
    ishape = tuple(data.draw(st.integers(0, n)) if i != axis else data.draw(st.integers(0, 4))
                   for i, n in enumerate(shape))
    sshape = tuple(m + data.draw(st.integers(0, 1)) for m in ishape)
    idx = rng.integers(0, shape[axis], ishape)
    src = small_values(rng, sshape, d)
    out = S.scatter_add(x, axis, T.asarray(idx), make_tensor(src, d))
    key = tuple(idx if i == axis else np.arange(m).reshape([-1 if j == i else 1 for j in range(len(shape))])
                for i, m in enumerate(ishape))
    want = _seq_add_ref(base.copy(), key, src[tuple(slice(0, m) for m in ishape)], d)
    np.testing.assert_array_equal(to_np(out), want)
    np.testing.assert_array_equal(to_np(x), base)


@SETTINGS
@given(st.data(), shapes(min_dims=1, max_dims=3))
def test_index_put_accumulate(data, shape):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    base = small_values(rng, shape, dt.int32)
    x = make_tensor(base, dt.int32)
    nkey, key = data.draw(keys(shape))
    try:
        rshape = base[nkey].shape
    except IndexError:
        return
    v = small_values(rng, rshape, dt.int32)
    S.index_put_(x, key, T.asarray(v), accumulate=True)
    np.add.at(base, nkey, v)
    np.testing.assert_array_equal(x.numpy(), base)


def test_advanced_writes_refuse_complex_into_real_and_cross_kind_adds():
    """Every advanced write path dropped the imaginary parts silently (a basic setitem raises),
    and the accumulating ones truncated floats added into integers (np.add.at refuses)."""
    c = T.asarray(np.array([1 + 2j, 3 + 4j]))
    mask = T.tensor([True, True, False])

    def writes(x):
        yield lambda: x.__setitem__([0, 1], c)
        yield lambda: x.__setitem__(mask, c)
        yield lambda: x.__setitem__([0, 1], np.array([1 + 2j, 3 + 4j]))
        yield lambda: T.index_put_(x, ([0, 1],), c)
        yield lambda: T.index_put_(x, ([0, 1],), c, True)
        yield lambda: T.index_add_(x, 0, [0, 1], c)
        yield lambda: T.scatter_add_(x, 0, T.tensor([0, 1]), c)
        yield lambda: T.put_along_axis(x, T.tensor([0, 1]), c, 0)
        yield lambda: x.masked_fill(T.tensor([True, False, True]), 1 + 2j)
        yield lambda: x.masked_fill(T.tensor([True, False, True]), c[0])
    x = T.zeros(3)
    for w in writes(x):
        with pytest.raises(TypeError, match="imaginary|complex"):
            w()
    assert x.tolist() == [0.0, 0.0, 0.0]
    xi = T.zeros(3, dtype="int64")
    for w in (lambda: T.index_put_(xi, ([0, 1, 2],), T.tensor([1.5, 2.5, 3.5]), True),
              lambda: T.index_put_(xi, ([0, 1, 2],), 1.5, True),
              lambda: T.index_add_(xi, 0, [0, 1], T.tensor([1.5, 2.5]))):
        with pytest.raises(TypeError, match="same_kind"):
            w()
    assert xi.tolist() == [0, 0, 0]
    T.index_put_(xi, ([0, 0, 2],), 2, True)               # a Python int adds into integers
    T.index_put_(xi, ([1],), T.tensor([7], dtype="int8"), True)
    assert xi.tolist() == [4, 7, 2]
    xi[[0, 1]] = T.tensor([1.7, -2.2])                     # plain assignment casts, as NumPy's
    assert xi.tolist() == [1, -2, 2]


def test_masked_fill_casts_the_value_not_the_tensor():
    """The fill went through where(), which promoted int64 with a float value to float64 and
    rounded every element above 2**53 (masked or not)."""
    x = T.tensor([2**53 + 1, 2**62 + 3, 5])
    assert x.masked_fill(T.tensor([False, False, True]), 0.5).tolist() == [2**53 + 1, 2**62 + 3, 0]
    h = T.zeros(3, dtype="float16").masked_fill(T.tensor([True, False, False]), T.tensor(2.0))
    assert h.dtype is T.float16 and h.tolist() == [2.0, 0.0, 0.0]
    with pytest.raises(OverflowError):
        T.zeros(2, dtype="int8").masked_fill(T.tensor([True, False]), 300)


def test_index_put_takes_pytorchs_list_of_index_tensors():
    i, j = T.tensor([0, 1]), T.tensor([1, 2])
    want = np.zeros((3, 3))
    want[[0, 1], [1, 2]] = 1
    x = T.zeros((3, 3))
    np.testing.assert_array_equal(to_np(T.index_put_(x, [i, j], T.tensor(1.0))), want)
    np.testing.assert_array_equal(to_np(T.zeros((3, 3)).index_put_((i, j), T.tensor(1.0))), want)
    np.testing.assert_array_equal(to_np(T.index_put_(T.zeros(3), [0, 2], 1.0)), [1, 0, 1])  # NumPy's
    w = T.ones((3, 3), requires_grad=True)
    y = w * 1
    y.index_put_([T.tensor([0]), T.tensor([1])], T.tensor(5.0))
    y.sum().backward()
    np.testing.assert_array_equal(to_np(w.grad), 1 - (np.arange(9).reshape(3, 3) == 1))


def test_where_with_the_condition_alone_is_nonzero():
    a = np.array([[0, 1], [2, 0]])
    got = T.where(T.asarray(a))
    assert [to_np(t).tolist() for t in got] == [t.tolist() for t in np.where(a)]
    with pytest.raises(TypeError, match="both x and y"):
        T.where(T.asarray(a), 1)


def test_docstring_examples():
    import doctest
    assert doctest.testmod(I).failed == 0 and doctest.testmod(S).failed == 0


def test_masks_of_many_size_one_axes():
    """A mask's size-1 axes do not count against the kernels' 32-axis limit (40 of them had
    overflowed the CPU kernel's coordinate array); more than 32 real axes raise."""
    m = T.ones((1,) * 40, dtype="bool")
    got = I.nonzero(m)
    assert len(got) == 40 and all(to_np(c).tolist() == [0] for c in got)
    a = np.arange(6.0).reshape((2,) + (1,) * 38 + (3,))
    x = T.asarray(a)
    np.testing.assert_array_equal(to_np(x[x > 2]), a[a > 2])
    np.testing.assert_array_equal(to_np(I.argwhere(x > 2)), np.argwhere(a > 2))
    x[x > 2] = -1.0
    a[a > 2] = -1.0
    np.testing.assert_array_equal(to_np(x), a)


def test_membership_shapes_and_value_devices():
    x = T.arange(6).reshape(2, 3)
    assert 4 in x and 7 not in x
    with pytest.raises(TypeError, match=r"broadcast_to: shape must be a sequence of integers"):
        T.broadcast_to(T.arange(3.0), (2.5, 3))
    assert T.broadcast_to(T.arange(3.0), 3).shape == (3,)
    assert T.broadcast_to(T.arange(3.0), (np.int64(2), 3)).shape == (2, 3)
    assert all(type(n) is int for n in T.broadcast_to(T.arange(3.0), (np.int64(2), 3)).shape)
    with pytest.raises(TypeError, match="masked_fill: the mask must be a bool tensor, got float64"):
        T.zeros(3).masked_fill(T.tensor([0.5, 0.0, 1.0]), 1.0)
    f = T.zeros(3).masked_fill(T.tensor([True, False, True]), T.tensor(3.0, device="cpu"))
    assert to_np(f).tolist() == [3.0, 0.0, 3.0]
    with pytest.raises(ValueError, match="imaginary part of a real tensor"):
        T.arange(3.0).imag[0] = 1
    with pytest.raises(ValueError, match="scatter_reduce_: assignment destination is read-only"):
        T.zeros(3).expand(2, 3).scatter_reduce_(1, T.zeros((2, 3), dtype="int64"), T.ones((2, 3)),
                                                "sum")
