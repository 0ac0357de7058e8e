"""The array API standard's functions (tensor/composites.py, concat, and the standard's
signatures of clip, astype, to_device, from_dlpack, reshape, count_nonzero, the creation
functions and Tensor's attributes) against NumPy, over dtypes, 0-d and empty shapes and
non-contiguous views, on both devices; their gradients by central differences; and their
errors, which name the function."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    NP_DTYPES,
    assert_close,
    broadcastable_shapes,
    make_tensor,
    maybe_view,
    shapes,
    small_values,
)
from hypothesis import given
from hypothesis import strategies as st

import autograd
import tensor as T
from tensor import dtypes as dt
from tensor.axes import AxisError

pytestmark = pytest.mark.usefixtures("device")

ALL_DTYPES = NP_DTYPES + (dt.bfloat16,)


def _rng(seed):
    return np.random.default_rng(seed)


def _pair(rng, shape, d):
    """(NumPy values, tensor of dtype d holding them: contiguous or a non-contiguous view)."""
    return maybe_view(rng, small_values(rng, shape, d), d)


def _np(a, d):
    """The values as NumPy holds them in dtype d (bfloat16's are compared as float32)."""
    return np.asarray(a, dtype=np.float32 if d is dt.bfloat16 else d.np)


# ---------------------------------------------------------------- manipulation

@given(shapes(min_dims=1, max_dims=3), st.integers(1, 3), st.sampled_from(ALL_DTYPES),
       st.integers(0, 2**32 - 1), st.data())
def test_concat_matches_numpy(shape, k, d, seed, data):
    rng = _rng(seed)
    axis = data.draw(st.sampled_from([None] + list(range(-len(shape), len(shape)))))
    arrs, ts = [], []
    for _ in range(k):
        s = list(shape)
        if axis is not None:
            s[axis] = int(rng.integers(0, 3))
        a, t = _pair(rng, tuple(s), d)
        arrs.append(a)
        ts.append(t)
    got = T.concat(ts, axis=axis)
    assert_close(got, np.concatenate([_np(a, d) for a in arrs], axis=axis), dtype=d)


def test_concat_promotes_and_keeps_concatenate_spellings():
    a, b = T.tensor([1, 2], dtype="int8"), T.tensor([0.5])
    assert_close(T.concat((a, b)), np.concatenate([np.int8([1, 2]), [0.5]]))
    assert_close(T.concat([T.ones((2, 2)), T.zeros((1, 2))], axis=-2),
                 np.concatenate([np.ones((2, 2)), np.zeros((1, 2))], axis=-2))


@given(shapes(max_dims=4), st.sampled_from(ALL_DTYPES), st.integers(0, 2**32 - 1))
def test_permute_dims_matches_transpose_and_is_a_view(shape, d, seed):
    rng = _rng(seed)
    a, t = _pair(rng, shape, d)
    axes = tuple(int(i) - (len(shape) if rng.random() < 0.3 else 0) for i in rng.permutation(len(shape)))
    got = T.permute_dims(t, axes)
    assert_close(got, np.transpose(_np(a, d), axes), dtype=d)
    assert T.shares_memory(got, t) or got.numel() == 0


@given(shapes(min_dims=1, max_dims=3), st.sampled_from(ALL_DTYPES), st.integers(0, 2**32 - 1),
       st.data())
def test_unstack_matches_numpy(shape, d, seed, data):
    a, t = _pair(_rng(seed), shape, d)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    got = T.unstack(t, axis=axis)
    want = np.unstack(_np(a, d), axis=axis)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, dtype=d)


@given(broadcastable_shapes(3), st.sampled_from(ALL_DTYPES), st.integers(0, 2**32 - 1))
def test_broadcast_arrays_matches_numpy(shapes3, d, seed):
    rng = _rng(seed)
    pairs = [_pair(rng, s, d) for s in shapes3]
    got = T.broadcast_arrays(*(t for _, t in pairs))
    want = np.broadcast_arrays(*(_np(a, d) for a, _ in pairs))
    assert isinstance(got, list) and len(got) == 3   # the standard's List[array]
    for g, w, (_, t) in zip(got, want, pairs):
        assert_close(g, w, dtype=d)
        assert T.shares_memory(g, t) or g.numel() == 0


@given(st.lists(st.integers(0, 4), max_size=4), st.sampled_from(["xy", "ij"]),
       st.sampled_from(NP_DTYPES), st.integers(0, 2**32 - 1))
def test_meshgrid_matches_numpy(lengths, indexing, d, seed):
    rng = _rng(seed)
    pairs = [_pair(rng, (n,), d) for n in lengths]
    got = T.meshgrid(*(t for _, t in pairs), indexing=indexing)
    want = np.meshgrid(*(a for a, _ in pairs), indexing=indexing)
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, dtype=d)


# ---------------------------------------------------------------- diff and the cumulative scans

@given(shapes(min_dims=1, max_dims=3), st.sampled_from(ALL_DTYPES), st.integers(0, 3),
       st.sampled_from(["none", "scalar", "array"]), st.sampled_from(["none", "scalar", "array"]),
       st.integers(0, 2**32 - 1), st.data())
def test_diff_matches_numpy(shape, d, n, pre, app, seed, data):
    if d is dt.bfloat16:
        n = min(n, 2)   # third differences of these values need more than bfloat16's 8 bits
    rng = _rng(seed)
    a, t = _pair(rng, shape, d)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    kw, nkw = {}, {}
    for name, kind in (("prepend", pre), ("append", app)):
        if kind == "scalar":
            v = small_values(rng, (), d)
            kw[name], nkw[name] = make_tensor(v, d), _np(v, d)
        elif kind == "array":
            s = list(shape)
            s[axis] = int(rng.integers(0, 3))
            v, vt = _pair(rng, tuple(s), d)
            kw[name], nkw[name] = vt, _np(v, d)
    got = T.diff(t, axis=axis, n=n, **kw)
    if n == 0:   # the standard's size M + N1 + N2 - n; NumPy ignores prepend/append for n=0
        pre_a = [_one(nkw["prepend"], a, axis)] if "prepend" in nkw else []
        app_a = [_one(nkw["append"], a, axis)] if "append" in nkw else []
        want = np.concatenate(pre_a + [_np(a, d)] + app_a, axis=axis)
    else:
        want = np.diff(_np(a, d), axis=axis, n=n, **nkw)
    assert_close(got, want, dtype=d)


def _one(v, a, axis):
    """diff's edge as NumPy broadcasts it: a scalar fills one slice along axis."""
    if v.ndim:
        return v
    s = list(a.shape)
    s[axis] = 1
    return np.broadcast_to(v, tuple(s))


def test_diff_is_a_method_with_scalar_edges_and_a_large_order():
    x = T.tensor([[1, 4, 9], [2, 3, 5]])
    assert_close(x.diff(), np.diff(np.array([[1, 4, 9], [2, 3, 5]])))
    assert_close(T.diff(x, axis=0, prepend=0), np.diff(x.numpy(), axis=0, prepend=0))
    assert_close(T.diff(x, n=5), np.diff(x.numpy(), n=5))     # (2, 0): past the axis length
    assert_close(T.diff(x, n=0), x.numpy())


def _scan_dtype(d):
    return d if d.kind == "f" else dt.uint64 if d.kind == "u" else dt.int64   # sum's rule (NumPy's)


@given(shapes(min_dims=0, max_dims=3), st.sampled_from(ALL_DTYPES), st.booleans(),
       st.sampled_from(["sum", "prod"]), st.sampled_from([None, "float64", "int64"]),
       st.integers(0, 2**32 - 1), st.data())
def test_cumulative_sum_and_prod_match_numpy(shape, d, initial, kind, dtype, seed, data):
    rng = _rng(seed)
    a = small_values(rng, shape, d)
    if kind == "prod" and d is not dt.bool_:
        a = np.clip(a, -2, 2)          # products that stay small and exact enough
    a, t = maybe_view(rng, a, d)
    axis = None if len(shape) <= 1 and data.draw(st.booleans()) else (
        data.draw(st.integers(-len(shape), len(shape) - 1)) if shape else None)
    ours = T.cumulative_sum if kind == "sum" else T.cumulative_prod
    ref = np.cumulative_sum if kind == "sum" else np.cumulative_prod
    got = ours(t, axis=axis, dtype=dtype, include_initial=initial)
    want_dtype = dt.dtype(dtype) if dtype else _scan_dtype(d)
    src = _np(a, d).astype(np.float32 if want_dtype is dt.bfloat16 else want_dtype.np)
    want = ref(src.reshape(-1) if src.ndim == 0 else src, axis=axis, include_initial=initial)
    assert_close(got, want, dtype=want_dtype)


def test_cumulative_default_dtypes():
    assert T.cumulative_sum(T.tensor([True, True])).dtype is T.int64
    assert T.cumulative_sum(T.tensor([1, 2], dtype="int16")).dtype is T.int64
    assert T.cumulative_prod(T.tensor([1.5], dtype="float16")).dtype is T.float16
    assert T.cumulative_sum(T.tensor([1, 2], dtype="int8"), dtype="float32").dtype is T.float32
    assert T.cumulative_sum(T.zeros((0,)), include_initial=True).tolist() == [0.0]


# ---------------------------------------------------------------- vecdot

@given(broadcastable_shapes(2, max_dims=3), st.integers(1, 4), st.sampled_from(ALL_DTYPES),
       st.sampled_from(ALL_DTYPES), st.integers(0, 2**32 - 1), st.data())
def test_vecdot_matches_numpy(batch, k, d1, d2, seed, data):
    rng = _rng(seed)
    where = data.draw(st.integers(1, 2))         # the contracted axis: last or second to last
    s1, s2 = list(batch[0]), list(batch[1])
    if where == 2 and (not s1 or not s2):
        where = 1
    s1.insert(len(s1) + 1 - where, k)
    s2.insert(len(s2) + 1 - where, k)
    a1, t1 = _pair(rng, tuple(s1), d1)
    a2, t2 = _pair(rng, tuple(s2), d2)
    got = T.vecdot(t1, t2, axis=-where)
    res = dt.result_type(d1, d2)
    n1 = _np(a1, d1).astype(np.float32 if res is dt.bfloat16 else res.np)
    n2 = _np(a2, d2).astype(np.float32 if res is dt.bfloat16 else res.np)
    want = np.vecdot(n1.astype(np.float64) if res.kind == "f" else n1,
                     n2.astype(np.float64) if res.kind == "f" else n2, axis=-where)
    assert_close(got, want, dtype=res, rtol=2e-2 if res.itemsize == 2 else None,
                 atol=0.1 if res.itemsize == 2 and res.kind == "f" else None)


def test_vecdot_one_vector_against_a_stack():
    rng = _rng(1)
    a, b = rng.standard_normal((3, 4, 5)), rng.standard_normal(5)
    for x, y in ((a, b), (b, a)):
        assert_close(T.vecdot(T.tensor(x), T.tensor(y)), np.vecdot(x, y))
    assert_close(T.vecdot(T.tensor(b), T.tensor(b)), np.vecdot(b, b))   # 0-d


# ---------------------------------------------------------------- gradients

def _f64(rng, shape):
    return T.tensor(rng.standard_normal(shape), dtype=T.float64, requires_grad=True)


def test_gradients_of_the_composites():
    rng = _rng(0)
    x, y, p = _f64(rng, (3, 4)), _f64(rng, (4,)), _f64(rng, (3, 2))
    checks = [
        (lambda a, b: T.concat([a, b.reshape(1, 4)], axis=0), (x, y)),
        (lambda a, b: T.concat([a, b], axis=None), (x, y)),
        (lambda a: T.permute_dims(a, (1, 0)), (x,)),
        (lambda a: T.stack([u * (i + 1) for i, u in enumerate(T.unstack(a, axis=1))]), (x,)),
        (lambda a, b: [u * 1.0 for u in T.broadcast_arrays(a, b)], (x, y)),
        (lambda a, b: [u * 1.0 for u in T.meshgrid(a, b, indexing="xy")], (x[0], y)),
        (lambda a: T.diff(a, n=2), (x,)),
        (lambda a, b: T.diff(a, axis=-1, prepend=b, append=b), (x, p)),
        (lambda a: T.cumulative_sum(a, axis=0, include_initial=True), (x,)),
        (lambda a: T.cumulative_prod(a, axis=-1, include_initial=True), (x,)),
        (lambda a, b: T.vecdot(a, b), (x, y)),
        (lambda a, b: T.vecdot(b, a), (x, y)),
        (lambda a: T.vecdot(a, a, axis=-2), (x,)),
        (lambda a: T.clip(a, min=-0.5, max=0.5), (x,)),
        (lambda a: T.clip(a), (x,)),
        (lambda a: T.astype(a, T.float64, copy=True, device="cpu"), (x,)),
    ]
    for fn, args in checks:
        assert autograd.gradcheck(fn, args), fn
    assert autograd.gradgradcheck(lambda a: T.diff(a) * T.diff(a), (x,))


def test_composites_record_the_public_steps():
    x = T.tensor([1.0, 4.0, 9.0], requires_grad=True)
    y = T.cumulative_sum(x, include_initial=True)
    assert y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 2.0, 1.0]


def test_clip_bound_tensors_get_gradients():
    lo = T.tensor([0.0, 2.0], dtype=T.float64, requires_grad=True)
    x = T.tensor([1.0, 1.0], dtype=T.float64, requires_grad=True)
    T.clip(x, lo).sum().backward()
    assert lo.grad.tolist() == [0.0, 1.0] and x.grad.tolist() == [1.0, 0.0]
    for kw in ("max", "a_max"):   # by keyword, either spelling: still on the graph
        w = T.tensor([0.5, 3.0], dtype=T.float64, requires_grad=True)
        T.clip(x, **{kw: w}).sum().backward()
        assert w.grad.tolist() == [1.0, 0.0], kw


# ---------------------------------------------------------------- the standard's signatures

def test_creation_and_reshape_take_a_tuple_separate_ints_or_shape():
    for f in (T.zeros, T.ones, T.empty):
        assert f((2, 3)).shape == f(2, 3).shape == f(shape=(2, 3)).shape == (2, 3)
        assert f(4).shape == f(shape=4).shape == (4,) and f(()).shape == f().shape == ()
        with pytest.raises(TypeError, match=f.__name__):
            f(2, shape=(2,))
    assert T.full((2, 3), 1.5).shape == T.full(shape=(2, 3), fill_value=1).shape == (2, 3)
    x = T.arange(6.0)
    assert x.reshape(2, 3).shape == x.reshape((2, 3)).shape == T.reshape(x, shape=(2, 3)).shape
    c = T.reshape(x, (3, 2), copy=True)
    assert c.shape == (3, 2) and not T.shares_memory(c, x)
    v = T.reshape(x, (3, 2), copy=False)
    assert T.shares_memory(v, x)
    with pytest.raises(ValueError, match="reshape: .*copy=False"):
        T.reshape(x.reshape(2, 3).T, (6,), copy=False)
    with pytest.raises(TypeError, match="reshape"):
        T.reshape(x, 6, shape=(6,))


def test_clip_keywords_are_the_standards_and_numpys():
    a = np.array([-3.0, 0.5, 7.0])
    x = T.tensor(a)
    assert_close(T.clip(x, min=-1, max=1), np.clip(a, min=-1, max=1))
    assert_close(T.clip(x, a_min=-1), np.clip(a, a_min=-1, a_max=None))
    assert_close(T.clip(x, None, 2.0), np.clip(a, None, 2.0))
    assert_close(T.clip(x), np.clip(a))
    assert_close(x.clamp(min=0.0), np.clip(a, 0.0, None))
    y = x.copy()
    y.clip_(max=0.0)
    assert_close(y, np.clip(a, None, 0.0))
    with pytest.raises(TypeError, match="clip: give min or a_min"):
        T.clip(x, 0.0, a_min=1.0)


def test_astype_to_device_from_dlpack_keywords(device):
    x = T.arange(4.0)
    assert T.astype(x, x.dtype, copy=False) is x
    y = T.astype(x, "int32", device="cpu")
    assert y.dtype is T.int32 and y.device.type == "cpu"
    assert T.astype(x, "float64", copy=False, device=device) is x
    assert T.to_device(x, "cpu", stream=None).device.type == "cpu"
    with pytest.raises(TypeError, match="to_device: stream"):
        T.to_device(x, "cpu", stream=5)
    a = np.arange(3.0)
    t = T.from_dlpack(a)
    assert t.data_ptr() == a.ctypes.data
    assert T.from_dlpack(a, copy=True).data_ptr() != a.ctypes.data
    assert T.from_dlpack(a, copy=False, device="cpu").data_ptr() == a.ctypes.data
    assert T.from_dlpack(t, copy=True).tolist() == [0.0, 1.0, 2.0]
    if device != "cpu":
        g = T.from_dlpack(a, device=device)
        assert g.device.type == device and g.tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(ValueError, match="from_dlpack: .*copy=False"):
            T.from_dlpack(a, device=device, copy=False)


def test_count_nonzero_returns_a_0d_int64_tensor_on_the_device(device):
    a = np.array([[0, 1, 2], [0, 0, 3]])
    c = T.count_nonzero(T.tensor(a))
    assert isinstance(c, T.Tensor) and c.shape == () and c.dtype is T.int64
    assert c.device.type == device and int(c) == np.count_nonzero(a)
    assert T.count_nonzero(T.zeros((0, 3))).item() == 0
    assert_close(T.count_nonzero(T.tensor(a), keepdims=True), np.count_nonzero(a, keepdims=True))
    assert_close(T.count_nonzero(T.tensor(a), axis=(0, 1)), np.int64(3))


def test_tensor_attributes_of_the_standard():
    x = T.arange(24.0).reshape(2, 3, 4)
    assert x.mT.shape == (2, 4, 3) and x.ndim == 3 and x.size == 24 and x.device.type in ("cpu", "cuda")
    assert [10, 20, 30][T.tensor(1)] == 20 and complex(T.tensor(2.0)) == 2 + 0j
    with pytest.raises(TypeError):
        [1, 2][T.tensor(1.0)]
    a = np.arange(9.0).reshape(3, 3)
    y = T.tensor(a)
    y @= T.tensor(a)
    b = a.copy()
    b @= a
    assert_close(y, b)
    z = T.ones((2, 3))
    with pytest.raises(ValueError, match="matmul"):
        z @= T.ones((3, 4))


# ---------------------------------------------------------------- errors name the function

@pytest.mark.parametrize("call, exc, name", [
    (lambda: T.concat([]), ValueError, "concat"),
    (lambda: T.concat(T.zeros((2, 2))), TypeError, "concat"),
    (lambda: T.concat([T.zeros((2, 2)), T.zeros((3, 3))], axis=0), ValueError, "concat"),
    (lambda: T.concat([T.zeros(2)], axis=1), AxisError, "concat"),
    (lambda: T.permute_dims(T.zeros((2, 3)), (0, 0)), ValueError, "permute_dims"),
    (lambda: T.permute_dims(T.zeros((2, 3)), (0,)), ValueError, "permute_dims"),
    (lambda: T.permute_dims(T.zeros((2, 3)), 1), TypeError, "permute_dims"),
    (lambda: T.unstack(T.tensor(1.0)), ValueError, "unstack"),
    (lambda: T.unstack(T.zeros((2, 3)), axis=2), AxisError, "unstack"),
    (lambda: T.broadcast_arrays(T.zeros(2), T.zeros(3)), ValueError, "broadcast_arrays"),
    (lambda: T.meshgrid(T.zeros((2, 2))), ValueError, "meshgrid"),
    (lambda: T.meshgrid(T.zeros(2), indexing="xz"), ValueError, "meshgrid"),
    (lambda: T.diff(T.zeros(3), n=-1), ValueError, "diff"),
    (lambda: T.diff(T.tensor(1.0)), ValueError, "diff"),
    (lambda: T.diff(T.zeros(3), axis=1), AxisError, "diff"),
    (lambda: T.diff(T.zeros((2, 3)), prepend=T.zeros((3, 3))), ValueError, "diff: prepend"),
    (lambda: T.diff(T.zeros((2, 3)), append=T.zeros(3)), ValueError, "diff: append"),
    (lambda: T.cumulative_sum(T.zeros((2, 3))), ValueError, "cumulative_sum"),
    (lambda: T.cumulative_prod(T.zeros((2, 3)), axis=2), AxisError, "cumulative_prod"),
    (lambda: T.vecdot(T.zeros((2, 3)), T.zeros((2, 4))), ValueError, "vecdot"),
    (lambda: T.vecdot(T.zeros((2, 3)), T.zeros((4, 3))), ValueError, "vecdot"),
    (lambda: T.vecdot(T.tensor(1.0), T.zeros(3)), ValueError, "vecdot"),
    (lambda: T.vecdot(T.zeros(3), T.zeros(3), axis=-2), AxisError, "vecdot"),
])
def test_bad_input_errors_name_the_function(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


@pytest.mark.parametrize("d", ["bool", "int8", "uint8", "int64", "float16", "float32", "float64"])
def test_complex_parts_of_real_tensors(d):
    """conj and real copy a real tensor, imag gives zeros of its dtype (NumPy's answers)."""
    a = np.array([[1, 0, 3], [0, 5, 1]]).astype(d)
    x = T.asarray(a).T   # a non-contiguous view
    for fn, ref in ((T.conj, np.conj), (T.real, np.real), (T.imag, np.imag)):
        r = fn(x)
        assert r.dtype == ref(a).dtype and not T.shares_memory(r, x)   # np.conj(bool): int8
        np.testing.assert_array_equal(r.numpy(), ref(a.T))


def test_complex_parts_gradients():
    x = T.tensor([0.5, -2.0], dtype=T.float64, requires_grad=True)
    (T.real(x) * 3.0 + T.conj(x)).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_take_along_axis_default_axis_is_last():
    a = np.arange(12).reshape(3, 4)
    idx = np.array([[3, 0], [1, 1], [2, 0]])
    np.testing.assert_array_equal(T.take_along_axis(T.asarray(a), T.asarray(idx)).numpy(),
                                  np.take_along_axis(a, idx, axis=-1))
