"""concatenate / stack / split / roll / tile / repeat / pad / flips against NumPy, over every
dtype, 0-d and empty shapes, and non-contiguous (transposed, stepped, negative, broadcast) inputs."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import make_tensor, shapes, small_values, to_np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensor as T
from tensor import dtypes as dt
from tensor import manipulation as M

pytestmark = pytest.mark.usefixtures("device")

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ALL_DTYPES = tuple(dt.dtype(n) for n in ("bool", "int8", "uint8", "int16", "int32", "int64", "float16",
                                          "bfloat16", "float32", "float64"))
NP_DTYPES = tuple(d for d in ALL_DTYPES if d is not dt.bfloat16)


# ---------------------------------------------------------------- helpers (self-contained)

def maybe_view(data, a: np.ndarray, d: dt.DType):
    """(values, tensor): contiguous, transposed, stepped, negative-step or broadcast layout."""
    kind = data.draw(st.sampled_from(["contig", "transposed", "stepped", "negative", "broadcast"]))
    if a.ndim == 0 or kind == "contig":
        return a, make_tensor(a, d)
    if kind == "transposed":
        return a, make_tensor(np.ascontiguousarray(a.T), d).T
    if kind == "stepped":
        return a, make_tensor(np.repeat(a, 2, axis=0), d)[::2]
    if kind == "negative":
        return a, make_tensor(np.ascontiguousarray(a[::-1]), d)[::-1]
    return np.broadcast_to(a[:1], a.shape), T.broadcast_to(make_tensor(a[:1], d), a.shape)


def check(got, want, d: dt.DType | None = None):
    assert got.shape == want.shape, (got.shape, want.shape)
    if d is not None:
        assert got.dtype is d, (got.dtype, d)
    np.testing.assert_array_equal(to_np(got), want)


def seeded(data):
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))


# ---------------------------------------------------------------- joining

@SETTINGS
@given(st.data(), shapes(min_dims=1, max_dims=3), st.integers(1, 4))
def test_concatenate_promotes_and_matches_numpy(data, shape, k):
    rng = seeded(data)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    arrs, ts = [], []
    for _ in range(k):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        d = data.draw(st.sampled_from(NP_DTYPES))
        a, t = maybe_view(data, small_values(rng, tuple(s), d), d)
        arrs.append(a)
        ts.append(t)
    # the library promotes pairwise, left to right (NumPy's n-ary result_type can differ: int8,
    # uint8, float16 -> float16 there, float32 here), so the dtype is checked against ours
    res = dt.result_type(*ts)
    want = np.concatenate([a.astype(res.np) for a in arrs], axis=axis)
    check(M.concatenate(ts, axis=axis), want, res)
    check(M.cat(ts, dim=axis), want)
    check(M.concatenate(ts, axis=None), np.concatenate([a.astype(res.np) for a in arrs], axis=None))


@SETTINGS
@given(st.data(), shapes(max_dims=3), st.sampled_from(ALL_DTYPES), st.integers(1, 3))
def test_stack_family(data, shape, d, k):
    rng = seeded(data)
    pairs = [maybe_view(data, small_values(rng, shape, d), d) for _ in range(k)]
    arrs, ts = [p[0] for p in pairs], [p[1] for p in pairs]
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    check(M.stack(ts, axis=axis), np.stack(arrs, axis=axis), d)
    for ours, ref in ((M.hstack, np.hstack), (M.vstack, np.vstack), (M.dstack, np.dstack)):
        if ours is M.hstack and len(shape) == 0:
            continue  # hstack of 0-d: both concatenate 1-element rows; covered by atleast_1d below
        check(ours(ts), ref(arrs), d)
    for ours, ref in ((M.atleast_1d, np.atleast_1d), (M.atleast_2d, np.atleast_2d),
                      (M.atleast_3d, np.atleast_3d)):
        check(ours(ts[0]), ref(arrs[0]), d)


def test_concatenate_bfloat16_and_mixed():
    a = T.tensor([1.5, 2.0]).astype("bfloat16")
    assert M.concatenate([a, a]).dtype is dt.bfloat16
    r = M.concatenate([a, T.tensor([1], dtype="int8")])
    assert r.dtype is dt.bfloat16 and to_np(r).tolist() == [1.5, 2.0, 1.0]
    assert M.concatenate([a, T.tensor([3.0], dtype="float16")]).dtype is dt.float32
    assert M.concatenate([T.tensor([1]), T.tensor([2.5])], dtype="float32").tolist() == [1.0, 2.5]
    assert M.concatenate([[1, 2], np.array([3])]).tolist() == [1, 2, 3]


def test_join_errors():
    a, b = T.zeros((2, 3)), T.zeros((2, 4))
    with pytest.raises(ValueError, match=r"shapes \(2, 3\) \(index 0\) and \(2, 4\) \(index 1\) must match "
                                         r"except on axis 0, but differ along axis 1"):
        M.concatenate([a, b])
    with pytest.raises(ValueError, match=r"same rank.*\(2, 3\).*\(3,\)"):
        M.concatenate([a, T.zeros(3)])
    with pytest.raises(ValueError, match="axis 2 is out of bounds for a tensor of rank 2"):
        M.concatenate([a, a], axis=2)
    with pytest.raises(ValueError, match="axis -4 is out of bounds for a tensor of rank 3"):
        M.stack([a, a], axis=-4)
    with pytest.raises(ValueError, match="zero-dimensional"):
        M.concatenate([T.tensor(1), T.tensor(2)])
    with pytest.raises(ValueError, match="at least one"):
        M.concatenate([])
    with pytest.raises(ValueError, match=r"same shape.*\(2, 3\).*\(2, 4\)"):
        M.stack([a, b])


# ---------------------------------------------------------------- splitting

@SETTINGS
@given(st.data(), shapes(min_dims=1, max_dims=3), st.sampled_from(ALL_DTYPES))
def test_split_family_are_views(data, shape, d):
    rng = seeded(data)
    a, x = maybe_view(data, small_values(rng, shape, d), d)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = a.shape[axis]
    sections = data.draw(st.integers(1, 4))
    cuts = sorted(data.draw(st.lists(st.integers(-2, n + 2), max_size=3)))
    for got, want in ((M.array_split(x, sections, axis), np.array_split(a, sections, axis)),
                      (M.split(x, cuts, axis), np.split(a, cuts, axis))):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w, d)
            if g.numel():
                assert T.shares_memory(g, x)
    if n % sections == 0:
        for g, w in zip(M.split(x, sections, axis), np.split(a, sections, axis)):
            check(g, w, d)
    else:
        with pytest.raises(ValueError, match="equal sections"):
            M.split(x, sections, axis)
    for g, w in zip(M.unbind(x, axis), [np.take(a, i, axis) for i in range(n)]):
        check(g, w, d)
    chunks = M.chunk(x, sections, axis)
    size = max(-(-n // sections), 1)
    assert [c.shape[axis] for c in chunks] == [min(size, n - i) for i in range(0, n, size)] or (
        n == 0 and [c.shape[axis] for c in chunks] == [0])
    check(M.concatenate(chunks, axis), a, d)


def test_hsplit_vsplit_and_errors():
    a = np.arange(24).reshape(4, 6)
    x = T.asarray(a)
    for g, w in zip(M.hsplit(x, 3), np.hsplit(a, 3)):
        check(g, w)
    for g, w in zip(M.vsplit(x, [1, 3]), np.vsplit(a, [1, 3])):
        check(g, w)
    with pytest.raises(ValueError, match="larger than 0"):
        M.array_split(x, 0)
    with pytest.raises(ValueError, match="axis 1 of size 6 does not divide into 4"):
        M.split(x, 4, axis=1)


# ---------------------------------------------------------------- roll, tile, repeat

@SETTINGS
@given(st.data(), shapes(max_dims=3), st.sampled_from(ALL_DTYPES))
def test_roll(data, shape, d):
    rng = seeded(data)
    a, x = maybe_view(data, small_values(rng, shape, d), d)
    nd = len(shape)
    if nd == 0 or data.draw(st.booleans()):
        shift = data.draw(st.integers(-9, 9))
        check(M.roll(x, shift), np.roll(a, shift), d)
        return
    k = data.draw(st.integers(1, 3))
    axes = tuple(data.draw(st.integers(-nd, nd - 1)) for _ in range(k))
    shifts = tuple(data.draw(st.integers(-9, 9)) for _ in range(k))
    check(M.roll(x, shifts, axes), np.roll(a, shifts, axes), d)
    check(M.roll(x, shifts[0], axes), np.roll(a, shifts[0], axes), d)


@SETTINGS
@given(st.data(), shapes(max_dims=3), st.sampled_from(ALL_DTYPES))
def test_tile(data, shape, d):
    rng = seeded(data)
    a, x = maybe_view(data, small_values(rng, shape, d), d)
    reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4)))
    check(M.tile(x, reps), np.tile(a, reps), d)
    check(M.tile(x, 2), np.tile(a, 2), d)


@SETTINGS
@given(st.data(), shapes(max_dims=3), st.sampled_from(ALL_DTYPES))
def test_repeat(data, shape, d):
    rng = seeded(data)
    a, x = maybe_view(data, small_values(rng, shape, d), d)
    axis = None if not shape or data.draw(st.booleans()) else data.draw(
        st.integers(-len(shape), len(shape) - 1))
    r = data.draw(st.integers(0, 3))
    check(M.repeat(x, r, axis), np.repeat(a, r, axis), d)
    n = a.size if axis is None else a.shape[axis]
    counts = rng.integers(0, 4, n)
    check(M.repeat(x, T.asarray(counts), axis), np.repeat(a, counts, axis), d)
    check(M.repeat(x, counts.tolist() if n != 1 else [2], axis),
          np.repeat(a, counts.tolist() if n != 1 else [2], axis), d)


def test_repeat_errors():
    x = T.arange(3)
    with pytest.raises(ValueError, match="negative"):
        M.repeat(x, [1, -1, 2])
    with pytest.raises(ValueError, match="negative"):
        M.repeat(x, -1)
    with pytest.raises(ValueError, match=r"repeats of shape \(2,\)"):
        M.repeat(x, [1, 2])
    with pytest.raises(ValueError, match="negative"):
        M.tile(x, (-1,))
    # counts whose total passes int64 (it wrapped to 1 and the fill wrote past a 1-element index)
    for counts in ([2**63 - 1, 2**63 - 1, 3], [1, 2**62, 2**62]):
        with pytest.raises(ValueError, match=f"count {counts.index(max(counts))} is .*too large"):
            M.repeat(x, T.tensor(counts))


# ---------------------------------------------------------------- pad

@SETTINGS
@given(st.data(), shapes(max_dims=3), st.sampled_from(ALL_DTYPES),
       st.sampled_from(["constant", "edge", "wrap", "reflect", "symmetric"]))
def test_pad(data, shape, d, mode):
    rng = seeded(data)
    a, x = maybe_view(data, small_values(rng, shape, d), d)
    nd = len(shape)
    form = data.draw(st.sampled_from(["int", "pair", "per_axis", "dict"] if nd else ["int"]))
    w = st.integers(0, 7 if mode != "constant" else 3)
    if form == "int":
        width = data.draw(w)
    elif form == "pair":
        width = (data.draw(w), data.draw(w))
    elif form == "per_axis":
        width = tuple((data.draw(w), data.draw(w)) for _ in range(nd))
    else:
        width = {data.draw(st.integers(-nd, nd - 1)): data.draw(w)}
    grown = np.pad(np.zeros(shape, np.int8), width).shape
    if mode != "constant" and any(n == 0 and g != 0 for n, g in zip(shape, grown)):
        with pytest.raises(ValueError, match="can't extend empty axis"):
            M.pad(x, width, mode)
        return
    if mode == "constant":
        per_axis = [tuple((i, i + 1) for i in range(nd))] if nd else []
        cv = data.draw(st.sampled_from([0, 1, (2, 3)] + per_axis))
        check(M.pad(x, width, constant_values=cv), np.pad(a, width, constant_values=cv), d)
    else:
        check(M.pad(x, width, mode), np.pad(a, width, mode), d)


def test_pad_errors():
    x = T.zeros((2, 2))
    with pytest.raises(ValueError, match="negative"):
        M.pad(x, -1)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        M.pad(x, ((1, 2), (1, 2), (1, 2)))
    with pytest.raises(ValueError, match="mode 'bogus' is not supported"):
        M.pad(x, 1, mode="bogus")
    with pytest.raises(TypeError, match="integers"):
        M.pad(x, 1.5)


# ---------------------------------------------------------------- flips and rotations

@SETTINGS
@given(st.data(), shapes(min_dims=2, max_dims=3), st.sampled_from(ALL_DTYPES), st.integers(-5, 5))
def test_flips_and_rot90_are_views(data, shape, d, k):
    rng = seeded(data)
    a, x = maybe_view(data, small_values(rng, shape, d), d)
    axes = tuple(data.draw(st.permutations(range(-len(shape), 0)))[:2])
    for got, want in ((M.rot90(x, k, axes), np.rot90(a, k, axes)), (M.fliplr(x), np.fliplr(a)),
                      (M.flipud(x), np.flipud(a)), (M.flip(x, axes), np.flip(a, axes))):
        check(got, want, d)
        assert got.numel() == 0 or T.shares_memory(got, x)
    with pytest.raises(ValueError, match="axes must differ"):
        M.rot90(x, 1, (0, 0))


def test_docstring_examples():
    import doctest
    assert doctest.testmod(M).failed == 0
