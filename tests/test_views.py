"""Views against NumPy: every view op computes NumPy's (shape, strides, offset) over the same
memory, with zero copies; writes through a view reach the base; bad inputs raise clear errors.

Most tests start from a NumPy array `a` (contiguous, transposed, stepped or negative-stepped)
and x = tensor.asarray(a), which views a's memory. Applying the same view op to both, the two
results must agree in values, shape, element strides, first-element address (data_ptr) and
contiguity, and the tensor result must share memory with x.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import ALL_DTYPES, assert_close, gen_values, make_view, seeds, shapes
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as T
from tensor import dtypes as dt

VIEW_DTYPES = (dt.int64, dt.float32, dt.uint8, dt.int16, dt.bool_, dt.float16)
MANY = settings(max_examples=max(10, settings().max_examples * 2))


@st.composite
def np_tensor_pairs(draw, min_dims=0, max_dims=4, min_side=0):
    """(a, x): a NumPy array in some layout and a tensor viewing the same memory."""
    shape = draw(shapes(min_dims, max_dims, min_side=min_side), label="shape")
    d = draw(st.sampled_from(VIEW_DTYPES), label="dtype")
    layout = draw(st.sampled_from(("c", "transposed", "stepped", "negative")), label="layout")
    rng = np.random.default_rng(draw(seeds(), label="seed"))
    vals = gen_values(rng, d, shape)
    nd = len(shape)
    if layout == "transposed" and nd > 1:
        perm = rng.permutation(nd)
        a = np.ascontiguousarray(vals.transpose(perm)).transpose(np.argsort(perm))
    elif layout == "stepped" and nd:
        big = np.zeros(tuple(2 * n + 1 for n in shape), d.np)
        key = tuple(slice(1, 1 + 2 * n, 2) for n in shape)
        big[key] = vals
        a = big[key]
    elif layout == "negative" and nd:
        a = np.ascontiguousarray(vals[(slice(None, None, -1),) * nd])[(slice(None, None, -1),) * nd]
    else:
        a = vals.copy()
    x = T.asarray(a)
    assert x.shape == a.shape and x.dtype is d
    if a.size:
        assert x.data_ptr() == a.ctypes.data, "asarray(ndarray) must view the array's memory"
        assert x.strides == tuple(s // a.itemsize for s in a.strides)
    return a, x


def check_view(v, vn, x, what=""):
    """v (our view of x) agrees with vn (NumPy's view of x's memory) in everything."""
    assert isinstance(v, T.Tensor), what
    assert v.shape == vn.shape, f"{what}: shape {v.shape} != {vn.shape}"
    assert_close(v, vn, x.dtype, what=what)
    if vn.size:
        assert v.data_ptr() == vn.ctypes.data, f"{what}: data_ptr differs from NumPy's"
        for n, s, sn in zip(v.shape, v.strides, vn.strides):
            if n > 1:
                assert s * v.itemsize == sn, f"{what}: strides {v.strides} vs NumPy {vn.strides}"
        assert T.shares_memory(v, x) and T.shares_memory(x, v), f"{what}: no shared memory"
    assert v.is_contiguous() == vn.flags.c_contiguous, (
        f"{what}: is_contiguous {v.is_contiguous()} vs NumPy {vn.flags.c_contiguous}")


# ---------------------------------------------------------------- permutations

@MANY
@given(pair=np_tensor_pairs(), data=st.data())
def test_transpose_permute_swapaxes_moveaxis(pair, data):
    a, x = pair
    nd = a.ndim
    check_view(x.T, a.T, x, "x.T")
    check_view(T.transpose(x), np.transpose(a), x, "transpose()")
    perm = data.draw(st.permutations(range(nd)), label="perm")
    neg = [p - nd if data.draw(st.booleans()) else p for p in perm]
    check_view(x.transpose(*neg) if nd else x.transpose(), np.transpose(a, perm), x, f"transpose{neg}")
    check_view(x.permute(neg), np.transpose(a, perm), x, f"permute({neg})")
    check_view(T.permute(x, *perm), np.transpose(a, perm), x, f"T.permute{perm}")
    if nd:
        i, j = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
        check_view(x.swapaxes(i, j), np.swapaxes(a, i, j), x, f"swapaxes({i}, {j})")
        check_view(T.swapaxes(x, i, j), np.swapaxes(a, i, j), x, "T.swapaxes")
        k = data.draw(st.integers(0, nd), label="n moved")
        src = data.draw(st.permutations(range(nd)))[:k]
        dst = data.draw(st.permutations(range(nd)))[:k]
        check_view(x.moveaxis(src, dst), np.moveaxis(a, src, dst), x, f"moveaxis({src}, {dst})")
        check_view(T.moveaxis(x, i, j), np.moveaxis(a, i, j), x, f"moveaxis({i}, {j})")
    if nd >= 2:
        check_view(x.mT, np.swapaxes(a, -1, -2), x, "mT")


# ---------------------------------------------------------------- basic indexing

def _index_item(draw, n):
    if n > 0 and draw(st.integers(0, 3)) == 0:
        return draw(st.integers(-n, n - 1))
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    return slice(draw(bound), draw(bound), draw(st.sampled_from((None, 1, 2, 3, -1, -2, -3))))


@st.composite
def basic_keys(draw, shape):
    """An index of ints, slices (any step, negative included, bounds past the ends), None and
    at most one Ellipsis, for a tensor of this shape."""
    nd = len(shape)
    used = draw(st.integers(0, nd), label="indexed dims")
    if draw(st.booleans(), label="ellipsis"):
        before = draw(st.integers(0, used))       # dims indexed before the ellipsis, the rest after
        after = used - before
        items = ([_index_item(draw, n) for n in shape[:before]] + [Ellipsis]
                 + [_index_item(draw, n) for n in shape[nd - after:]])
    else:
        items = [_index_item(draw, n) for n in shape[:used]]
    for _ in range(draw(st.integers(0, 2), label="newaxes")):
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


def np_view(a, key):
    """NumPy's view a[key], a 0-d array (not a scalar) when every dim is indexed by an int."""
    return a[key] if Ellipsis in key else a[key + (Ellipsis,)]


@MANY
@given(pair=np_tensor_pairs(), data=st.data())
def test_basic_indexing_matches_numpy(pair, data):
    a, x = pair
    key = data.draw(basic_keys(a.shape), label="key")
    vn = np_view(a, key)
    check_view(x[key], vn, x, f"x[{key}]")
    if len(key) == 1:
        check_view(x[key[0]], vn, x, f"x[{key[0]}]")


@MANY
@given(pair=np_tensor_pairs(min_dims=1), data=st.data())
def test_shares_memory_matches_numpy_may_share_memory(pair, data):
    a, x = pair
    k1 = data.draw(basic_keys(a.shape), label="key 1")
    k2 = data.draw(basic_keys(a.shape), label="key 2")
    v1, v2 = x[k1], x[k2]
    n1, n2 = np_view(a, k1), np_view(a, k2)
    assert T.shares_memory(v1, v2) == np.may_share_memory(n1, n2), (k1, k2)
    assert not T.shares_memory(x, x.copy())


def test_shares_memory_simple_cases():
    x = T.arange(10)
    assert T.shares_memory(x[:5], x[4:])
    assert not T.shares_memory(x[:5], x[5:])
    assert T.shares_memory(x[::2], x[1::2])            # interleaved: ranges overlap (NumPy too)
    assert not T.shares_memory(x, T.arange(10))
    assert not T.shares_memory(x[:0], x)


# ---------------------------------------------------------------- reshape / view

def _factor_shape(rng, numel):
    """A random shape with numel elements (1-4 dims, 1s sprinkled in)."""
    if numel == 0:
        k = int(rng.integers(1, 4))
        s = [int(v) for v in rng.integers(0, 4, size=k)]
        s[int(rng.integers(0, k))] = 0
        return tuple(s)
    factors, n, p = [], numel, 2
    while n > 1:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    k = int(rng.integers(0, 5))
    if k == 0:
        return () if numel == 1 else (numel,)
    dims = [1] * k
    for f in factors:
        dims[int(rng.integers(0, k))] *= f
    return tuple(dims)


@MANY
@given(pair=np_tensor_pairs(), seed=seeds())
def test_reshape_and_view(pair, seed):
    """view() succeeds exactly when NumPy can reshape without a copy, and then shares memory;
    otherwise it raises a ValueError pointing at reshape()/contiguous(), and reshape() copies."""
    a, x = pair
    rng = np.random.default_rng(seed)
    shape = _factor_shape(rng, a.size)
    arg = list(shape)
    if a.size and arg and rng.random() < 0.4:
        arg[int(rng.integers(0, len(arg)))] = -1
    want = np.reshape(a, shape)
    try:
        vn = np.reshape(a, shape, copy=False)
    except ValueError:
        vn = None
    r = x.reshape(*arg) if rng.random() < 0.5 else T.reshape(x, tuple(arg))
    assert_close(r, want, x.dtype, what=f"reshape {a.shape} -> {arg}")
    if vn is not None:
        check_view(x.view(*arg), vn, x, f"view {a.shape} -> {arg}")
        check_view(r, vn, x, f"reshape {a.shape} -> {arg} (no copy needed)")
    else:
        with pytest.raises(ValueError, match=r"reshape.*contiguous"):
            x.view(*arg)
        assert not T.shares_memory(r, x) and r.is_contiguous()
    flat = x.ravel()           # contiguous, a view only when x is contiguous (NumPy, PyTorch)
    assert_close(flat, np.ravel(a), x.dtype, what="ravel")
    assert flat.is_contiguous()
    assert T.shares_memory(flat, x) == (np.may_share_memory(np.ravel(a), a) and a.size > 0)
    assert_close(T.ravel(x), np.ravel(a), x.dtype, what="T.ravel")


def test_reshape_errors():
    x = T.arange(12)
    with pytest.raises(ValueError, match=r"\(12,\).*\(5, 2\)"):
        x.reshape(5, 2)
    with pytest.raises(ValueError, match="one dimension can be -1"):
        x.reshape(-1, -1)
    with pytest.raises(ValueError):
        x.reshape(5, -1)
    with pytest.raises(ValueError):
        x.reshape(-3, 4)
    with pytest.raises(TypeError):
        x.reshape("a", 2)
    assert x.reshape((3, 4)).shape == x.reshape([3, 4]).shape == x.reshape(3, 4).shape == (3, 4)


@MANY
@given(pair=np_tensor_pairs(), data=st.data())
def test_flatten(pair, data):
    a, x = pair
    if a.ndim == 0:
        assert_close(x.flatten(), a.reshape(1), x.dtype)
        return
    s = data.draw(st.integers(-a.ndim, a.ndim - 1))
    e = data.draw(st.integers(-a.ndim, a.ndim - 1))
    s_, e_ = s % a.ndim, e % a.ndim
    if s_ > e_:
        with pytest.raises(ValueError):
            x.flatten(s, e)
        return
    shape = a.shape[:s_] + (math.prod(a.shape[s_:e_ + 1]),) + a.shape[e_ + 1:]
    assert_close(x.flatten(s, e), a.reshape(shape), x.dtype, what=f"flatten({s}, {e})")
    assert_close(T.flatten(x), a.reshape(-1), x.dtype, what="flatten()")


# ---------------------------------------------------------------- squeeze / unsqueeze / broadcast

@MANY
@given(pair=np_tensor_pairs(), data=st.data())
def test_squeeze_unsqueeze_expand_dims(pair, data):
    a, x = pair
    nd = a.ndim
    check_view(x.squeeze(), np.squeeze(a), x, "squeeze()")
    ones = [i for i, n in enumerate(a.shape) if n == 1]
    if ones:
        sub = data.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
        ax = tuple(i - nd if data.draw(st.booleans()) else i for i in sub)
        check_view(x.squeeze(ax if len(ax) > 1 else ax[0]), np.squeeze(a, ax), x, f"squeeze({ax})")
    big = [i for i, n in enumerate(a.shape) if n != 1]
    if big:
        with pytest.raises(ValueError, match="squeeze"):
            x.squeeze(big[0])
    k = data.draw(st.integers(1, 2))
    axes = data.draw(st.lists(st.integers(0, nd + k - 1), min_size=k, max_size=k, unique=True))
    axes = tuple(ax - (nd + k) if data.draw(st.booleans()) else ax for ax in axes)
    check_view(T.expand_dims(x, axes), np.expand_dims(a, axes), x, f"expand_dims({axes})")
    d = data.draw(st.integers(-nd - 1, nd))
    check_view(x.unsqueeze(d), np.expand_dims(a, d), x, f"unsqueeze({d})")
    check_view(x[None, ..., None], a[None, ..., None], x, "x[None, ..., None]")


@MANY
@given(pair=np_tensor_pairs(max_dims=3), data=st.data())
def test_broadcast_to_and_expand(pair, data):
    a, x = pair
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2), label="new leading dims")
    target = tuple(lead) + tuple(data.draw(st.integers(0, 3)) if n == 1 else n for n in a.shape)
    vn = np.broadcast_to(a, target)
    v = T.broadcast_to(x, target)
    check_view(v, vn, x, f"broadcast_to {a.shape} -> {target}")
    for n, s, n0 in zip(v.shape[len(lead):], v.strides[len(lead):], a.shape):
        if n0 == 1 and n > 1:
            assert s == 0
    check_view(x.broadcast_to(target), vn, x, "x.broadcast_to")
    sizes = list(lead) + [-1 if (n0 == n and data.draw(st.booleans())) else n
                          for n0, n in zip(a.shape, target[len(lead):])]
    check_view(x.expand(*sizes), vn, x, f"expand{tuple(sizes)}")
    other = T.zeros(target, dtype="int8")
    check_view(x.expand_as(other), vn, x, "expand_as")
    bad = [i for i, n in enumerate(a.shape) if n >= 2]
    if bad:
        t2 = list(target)
        t2[len(lead) + bad[0]] += 1
        msg = rf"{_re(a.shape)}.*{_re(tuple(t2))}"
        with pytest.raises(ValueError, match=msg):
            T.broadcast_to(x, tuple(t2))
        with pytest.raises(ValueError, match=msg):
            x.expand(*t2)
    if a.ndim:
        with pytest.raises(ValueError, match="fewer dimensions"):
            T.broadcast_to(x, a.shape[1:])


def _re(shape):
    import re
    return re.escape(str(tuple(shape)))


def test_broadcast_shapes_errors_name_all_shapes():
    assert T.broadcast_shapes((2, 1), (3,), ()) == (2, 3)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        T.broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4,\)"):
        T.ones((2, 3)) + T.ones(4)


# ---------------------------------------------------------------- diagonal, flip, as_strided

@MANY
@given(pair=np_tensor_pairs(min_dims=2), data=st.data())
def test_diagonal(pair, data):
    a, x = pair
    nd = a.ndim
    a1 = data.draw(st.integers(-nd, nd - 1))
    a2 = data.draw(st.integers(-nd, nd - 1).filter(lambda v: v % nd != a1 % nd))
    off = data.draw(st.integers(-5, 5))
    check_view(x.diagonal(off, a1, a2), np.diagonal(a, off, a1, a2), x, f"diagonal({off}, {a1}, {a2})")
    check_view(T.diagonal(x), np.diagonal(a), x, "diagonal()")
    with pytest.raises(ValueError, match="axis1 and axis2"):
        x.diagonal(0, a1, a1)


def test_diagonal_writes_reach_the_base():
    a = np.zeros((3, 4, 5))
    x = T.asarray(a)
    x.diagonal(1, 0, 2).fill_(7)
    want = np.zeros((3, 4, 5))
    i = np.arange(3)
    want[i, :, i + 1] = 7
    np.testing.assert_array_equal(a, want)
    with pytest.raises(ValueError, match="rank >= 2"):
        T.arange(3).diagonal()


@MANY
@given(pair=np_tensor_pairs(), data=st.data())
def test_flip(pair, data):
    a, x = pair
    nd = a.ndim
    check_view(T.flip(x), np.flip(a) if nd else a[...], x, "flip()")  # NumPy: a scalar for 0-d
    if nd:
        axes = tuple(data.draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd,
                                        unique_by=lambda v: v % nd)))
        check_view(x.flip(axes), np.flip(a, axes), x, f"flip({axes})")
        check_view(x.flip(axes[0]), np.flip(a, axes[0]), x, f"flip({axes[0]})")


@MANY
@given(n=st.integers(1, 30), data=st.data())
def test_as_strided_bounds_checked(n, data):
    """Within the storage: NumPy's as_strided (strides in elements here, bytes there); past
    either end: ValueError naming the reach and the storage size."""
    base = np.arange(n, dtype=np.int32)
    x = T.asarray(base)
    k = data.draw(st.integers(0, 3))
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=k, max_size=k)))
    strides = tuple(data.draw(st.lists(st.integers(-3, 3), min_size=k, max_size=k)))
    off = data.draw(st.integers(0, n - 1))
    lo = off + sum((m - 1) * s for m, s in zip(shape, strides) if s < 0)
    hi = off + sum((m - 1) * s for m, s in zip(shape, strides) if s > 0)
    if 0 in shape or (lo >= 0 and hi < n):
        v = T.as_strided(x, shape, strides, off)
        vn = np.lib.stride_tricks.as_strided(base[off:], shape, [s * 4 for s in strides])
        check_view(v, vn, x, f"as_strided({shape}, {strides}, {off})")
        check_view(x.as_strided(shape, strides, off), vn, x, "x.as_strided")
    else:
        with pytest.raises(ValueError, match="outside the storage"):
            T.as_strided(x, shape, strides, off)
    with pytest.raises(ValueError):
        T.as_strided(x, (2, 2), (1,))


def test_as_strided_refuses_strides_and_offsets_past_int64():
    """Accepted before (a size-1 or size-0 axis reaches nothing), then repr, + and tolist
    failed with a bare OverflowError."""
    x = T.arange(10.0)
    for shape, strides, off in [((1, 2), (2**70, 1), 0), ((1, 2), (2**63 - 1, 1), 0),
                                ((0, 3), (1, 1), 2**70), ((2,), (1,), -1)]:
        with pytest.raises(ValueError, match="as_strided: .*within int64"):
            T.as_strided(x, shape, strides, off)
    with pytest.raises(TypeError):
        T.as_strided(x, (2,), (1.5,))
    assert T.as_strided(x, (1, 2), (2**40, 1), 3).tolist() == [[3.0, 4.0]]


# ---------------------------------------------------------------- writes through views

def test_writes_through_views_reach_the_base():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    x = T.asarray(a)
    x.T[0, 1] = 5
    assert a[1, 0] == 5 and x[1, 0].item() == 5
    want = a.copy()
    x[::2, 1:] = T.tensor([10, 20, 30])               # a (3,) value broadcast over (2, 3)
    want[::2, 1:] = [10, 20, 30]
    np.testing.assert_array_equal(a, want)
    x[..., ::-1][1] = T.arange(4)                      # negative step, then an int
    want[..., ::-1][1] = np.arange(4)
    np.testing.assert_array_equal(a, want)
    x[:, None, 2] = -1                                 # None in the key, Python scalar value
    want[:, 2] = -1
    np.testing.assert_array_equal(a, want)
    x[2] = [7, 8, 9, 10]                               # a list value
    want[2] = [7, 8, 9, 10]
    np.testing.assert_array_equal(a, want)
    x[0, :2] = 2.7                                     # float into int: NumPy's truncating cast
    want[0, :2] = 2.7
    np.testing.assert_array_equal(a, want)
    x.T[1:3, ::2] = T.tensor([[1.9], [-1.9]])
    want.T[1:3, ::2] = np.array([[1.9], [-1.9]])
    np.testing.assert_array_equal(a, want)
    with pytest.raises(ValueError):
        x[0] = T.ones(3)                               # (3,) does not broadcast to (4,)


@MANY
@given(pair=np_tensor_pairs(min_dims=1), data=st.data())
def test_setitem_random_views(pair, data):
    a, x = pair
    key = data.draw(basic_keys(a.shape), label="key")
    region = np_view(a, key)
    shp = region.shape[data.draw(st.integers(0, len(region.shape))):]
    val = gen_values(np.random.default_rng(0), x.dtype, shp)
    want = a.copy()
    want[key] = val
    x[key] = T.asarray(val)
    np.testing.assert_array_equal(a, want)


def test_strided_view_of_bfloat16_values():
    """Views are dtype-agnostic; a bfloat16 view reads the same values as a float32 one."""
    rng = np.random.default_rng(3)
    for d in ALL_DTYPES:
        a = gen_values(rng, d, (3, 4, 2))
        vals, v = make_view(rng, a, d)
        assert_close(v, vals, d, what=d.name)
        assert_close(v.T[::-1], vals.T[::-1], d, what=d.name)
        assert_close(v.contiguous(), vals, d, what=d.name)


# ---------------------------------------------------------------- contiguous

@MANY
@given(pair=np_tensor_pairs())
def test_contiguous_copies_only_when_needed(pair):
    a, x = pair
    assert x.is_contiguous() == a.flags.c_contiguous
    c = x.contiguous()
    assert c.is_contiguous()
    assert_close(c, a, x.dtype)
    if x.is_contiguous():
        assert c is x
    else:
        assert c is not x and not T.shares_memory(c, x)
        assert c.strides == tuple(s // a.itemsize for s in np.array(a, order="C").strides)
    assert (T.contiguous(x) is x) == x.is_contiguous()


def test_is_contiguous_ignores_size_one_dims_and_empty():
    x = T.zeros((3, 1, 4))
    assert x[:, :, :].is_contiguous()
    assert x.permute(1, 0, 2).is_contiguous()          # moving a size-1 axis keeps the layout
    assert not x.permute(2, 1, 0).is_contiguous()
    assert x[:, :, :0].is_contiguous() and x[::2][:0].is_contiguous()
    assert not x[:, :, ::2].is_contiguous()
    assert T.zeros(()).is_contiguous() and T.zeros(5)[2].is_contiguous()


# ---------------------------------------------------------------- errors

def test_bad_axis_errors_name_the_axis_and_rank():
    x = T.zeros((2, 3))
    calls = {
        "swapaxes": lambda: x.swapaxes(0, 2),
        "moveaxis": lambda: x.moveaxis(-3, 0),
        "squeeze": lambda: x.squeeze(2),
        "expand_dims": lambda: T.expand_dims(x, 3),
        "unsqueeze": lambda: x.unsqueeze(-4),
        "diagonal": lambda: x.diagonal(0, 0, 2),
        "flip": lambda: x.flip(2),
        "permute": lambda: x.permute(0, 2),
        "transpose": lambda: x.transpose(1, 5),
        "flatten": lambda: x.flatten(0, 2),
    }
    # the op in the message: the one called, or the one it is built on
    said = {"unsqueeze": ("unsqueeze", "expand_dims"), "transpose": ("transpose", "permute")}
    for name, fn in calls.items():
        # (expand_dims/unsqueeze count the rank of their result, as NumPy)
        with pytest.raises(T.AxisError, match=r"axis -?\d+ is out of bounds for a tensor of rank [23]"
                           ) as ei:
            fn()
        assert isinstance(ei.value, ValueError) and isinstance(ei.value, IndexError), name
        assert str(ei.value).startswith(said.get(name, (name,))), (name, str(ei.value))
    with pytest.raises(ValueError, match="repeated axis"):
        x.permute(0, 0)
    with pytest.raises(ValueError, match="don't match"):
        x.permute(0, 1, 2)
    with pytest.raises(ValueError, match="repeated axis"):
        x.flip((0, -2))
    with pytest.raises(TypeError, match="axis must be an integer"):
        x.swapaxes(0.5, 1)
    with pytest.raises(ValueError, match="rank >= 2"):
        _ = T.arange(3).mT


def test_index_errors():
    x = T.zeros((2, 3))
    with pytest.raises(IndexError, match=r"index 2 is out of bounds for axis 0 with size 2"):
        x[2]
    with pytest.raises(IndexError, match=r"index -4 is out of bounds for axis 1 with size 3"):
        x[0, -4]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError):
        x[5] = 1.0
    with pytest.raises(IndexError):
        T.zeros(())[0]
    assert x[1, -3].shape == () and x[-2:, 1].shape == (2,)


def test_pytorch_t_and_masked_fill():
    x = T.arange(6).reshape(2, 3)
    assert x.t().shape == (3, 2) and T.shares_memory(x, x.t())
    m = x.masked_fill(x > 2, -1)
    assert m.dtype == x.dtype and m.tolist() == [[0, 1, 2], [-1, -1, -1]]
    with pytest.raises(ValueError, match="rank <= 2"):
        T.zeros((2, 2, 2)).t()
