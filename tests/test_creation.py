"""Creation functions against NumPy: filled tensors, ranges, identity and triangles, and the
copy rules of asarray / array / tensor / from_numpy / numpy()."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from helpers import (
    ALL_DTYPES,
    NP_DTYPES,
    as_compute,
    assert_close,
    gen_values,
    make_tensor,
    make_view,
    seeds,
    shapes,
    to_np,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor as T
from tensor import dtypes as dt

MANY = settings(max_examples=max(10, settings().max_examples * 2))


# ---------------------------------------------------------------- filled tensors

@pytest.mark.parametrize("d", ALL_DTYPES, ids=lambda d: d.name)
def test_zeros_ones_full_empty_every_dtype(d):
    for shape in ((), (0,), (2, 3), (1, 0, 2)):
        assert_close(T.zeros(shape, dtype=d), np.zeros(shape), d)
        assert_close(T.ones(shape, dtype=d), np.ones(shape), d)
        assert_close(T.full(shape, 1 if d is dt.bool_ else 3, dtype=d),
                     np.full(shape, 1 if d is dt.bool_ else 3), d)
        e = T.empty(shape, dtype=d)
        assert e.shape == shape and e.dtype is d and e.is_contiguous()
    assert T.zeros(2, 3, dtype=d).shape == T.zeros((2, 3), dtype=d).shape == (2, 3)
    assert T.ones([4], dtype=d).shape == (4,)
    assert T.empty(5, dtype=d).shape == (5,)


def test_default_dtypes_follow_numpy():
    assert T.zeros(3).dtype is T.float64 and T.ones(3).dtype is T.float64
    assert T.empty(3).dtype is T.float64
    for fill in (7, 2.5, True, -3):
        assert T.full((2,), fill).dtype.name == np.full((2,), fill).dtype.name, fill
        assert T.full((2,), fill).tolist() == np.full((2,), fill).tolist()
    assert_close(T.full((2, 2), 1.5, dtype="int32"), np.full((2, 2), 1.5, dtype=np.int32))
    assert_close(T.full((3,), T.tensor([1, 2, 3])), np.array([1, 2, 3]))   # a tensor broadcast in


def test_shape_errors():
    with pytest.raises(ValueError, match="negative dimensions"):
        T.zeros((2, -1))
    with pytest.raises(ValueError, match="negative dimensions"):
        T.full(-3, 1.0)
    with pytest.raises(TypeError, match="shape"):
        T.ones((2.5, 3))
    with pytest.raises(TypeError, match="shape"):
        T.zeros("abc")
    with pytest.raises(TypeError, match="unsupported data type"):
        T.zeros(3, dtype="complex256")


@MANY
@given(shape=shapes(), seed=seeds(), data=st.data())
def test_like_functions(shape, seed, data):
    """*_like keep shape and dtype (of contiguous and strided inputs), or take a new dtype."""
    d = data.draw(st.sampled_from(ALL_DTYPES), label="dtype")
    rng = np.random.default_rng(seed)
    a = gen_values(rng, d, shape)
    _, x = make_view(rng, a, d) if rng.random() < 0.5 else (a, make_tensor(a, d))
    assert_close(T.zeros_like(x), np.zeros(shape), d)
    assert_close(T.ones_like(x), np.ones(shape), d)
    assert_close(T.full_like(x, 1), np.ones(shape), d)
    e = T.empty_like(x)
    assert e.shape == x.shape and e.dtype is d
    other = data.draw(st.sampled_from(ALL_DTYPES), label="other dtype")
    assert_close(T.zeros_like(x, dtype=other), np.zeros(shape), other)
    assert_close(T.full_like(x, 0, dtype=other), np.zeros(shape), other)
    assert T.empty_like(x, dtype=other).dtype is other
    assert T.zeros_like(x).device == x.device


# ---------------------------------------------------------------- arange / linspace

@MANY
@given(start=st.integers(-20, 20), stop=st.integers(-20, 20), step=st.integers(-5, 5).filter(bool),
       data=st.data())
def test_arange_integers(start, stop, step, data):
    assert_close(T.arange(start, stop, step), np.arange(start, stop, step), what="arange ints")
    assert_close(T.arange(stop), np.arange(stop), what="arange(stop)")
    d = data.draw(st.sampled_from(tuple(x for x in NP_DTYPES if x is not dt.bool_)))
    lo, hi = dt.iinfo_bounds(d) if d.kind in "iu" else (-(2**31), 2**31)
    if lo <= min(start, stop) and max(start, stop) <= hi:
        assert_close(T.arange(start, stop, step, dtype=d), np.arange(start, stop, step, dtype=d.np),
                     what=f"arange dtype={d.name}")
    assert_close(T.arange(start, stop, step, dtype="bfloat16"),
                 as_compute(np.arange(start, stop, step), dt.bfloat16), "bfloat16")


# NumPy's 64-bit integer ranges: uint64 past int64, steps either way, values wrapping past the
# dtype's end (as NumPy's do, for every integer dtype), one value with any step
WIDE_RANGES = [((2**63, 2**63 + 5), "uint64"), ((2**64 - 3, 2**64), "uint64"),
               ((2**64 - 3, 2**64 + 2), "uint64"), ((2**64 - 1, 2**63, -2**62), "uint64"),
               ((2**64 - 1, 0, -2**63), "uint64"), ((0, 2**64, 2**63), "uint64"),
               ((2**63 + 1, 2**63 - 2, -1), "uint64"), ((5, -3, -2), "uint64"),
               ((2**63 - 2, 2**63 + 2), "int64"), ((0, 2**64, 2**62), "int64"), ((250, 260), "uint8"),
               ((10, 0, -3), "uint8"), ((0, 300, 100), "int8"), ((2**64 - 1, 2**70, 2**80), "uint64")]


@pytest.mark.usefixtures("device")
@pytest.mark.parametrize("args,d", WIDE_RANGES, ids=[f"{a}-{d}" for a, d in WIDE_RANGES])
def test_arange_64bit_integer_ranges_match_numpy(args, d):
    want = np.arange(*args, dtype=d)
    got = T.arange(*args, dtype=d)
    assert got.dtype.name == d and got.shape == want.shape
    np.testing.assert_array_equal(to_np(got), want)


@pytest.mark.usefixtures("device")
def test_arange_integer_bounds_raise_as_numpy():
    """Start, and the second value when there is one, must fit the dtype (NumPy's rule: both
    raise OverflowError); without a dtype every value must fit the int64 inferred."""
    cases = [((-1, 3), "uint64", "Python integer -1 out of bounds for uint64"),
             ((2**64, 2**64 + 2), "uint64", "Python integer 18446744073709551616 out of bounds for uint64"),
             ((250, 300, 10), "uint8", r"the second value 260 \(start \+ step\) is out of bounds for uint8"),
             ((0, 2**64, 2**63), "int64", "the second value 9223372036854775808"),
             ((2**63, 2**63 + 2), "int64", "Python integer 9223372036854775808 out of bounds for int64")]
    for args, d, msg in cases:
        with pytest.raises(OverflowError):
            np.arange(*args, dtype=d)
        with pytest.raises(OverflowError, match=f"^arange: {msg}"):
            T.arange(*args, dtype=d)
    with pytest.raises(OverflowError, match="out of bounds for int64, the dtype of an integer range"):
        T.arange(2**63 - 2, 2**63 + 2)
    with pytest.raises(OverflowError, match="out of bounds for int64, in which bool ranges"):
        T.arange(2**63 - 1, 2**63 + 1, dtype="bool")


@MANY
@given(start=st.floats(-10, 10), stop=st.floats(-10, 10),
       step=st.floats(0.05, 3) | st.floats(-3, -0.05), dtype=st.sampled_from((None, "float32", "float16")))
def test_arange_floats(start, stop, step, dtype):
    """Float arguments: float64 (NumPy's dtype rule) and NumPy's length ceil((stop-start)/step).

    Values: within 1 ulp (of the dtype) of the exact start + i*step. NumPy rounds start and
    delta=(start+step)-start to the dtype first and accumulates in it, so for float16 and float32
    its values drift by several ulps; ours do not."""
    want = np.arange(start, stop, step, dtype=dtype)
    got = T.arange(start, stop, step, dtype=dtype)
    assert got.shape == want.shape and got.dtype.name == want.dtype.name
    exact = np.array([float(Fraction(start) + i * Fraction(step)) for i in range(len(want))])
    ulp = np.spacing(np.abs(exact).astype(want.dtype)).astype(np.float64)
    err = np.abs(to_np(got).astype(np.float64) - exact)
    assert (err <= ulp).all(), f"arange drifts: {to_np(got)} vs exact {exact}"
    if dtype is None:  # float64: NumPy's delta is exact to an ulp or two
        assert_close(got, want, rtol=1e-12, atol=1e-12, what="arange vs NumPy")


def test_arange_dtype_rules_and_errors():
    assert T.arange(5).dtype is T.int64
    assert T.arange(5.0).dtype is T.float64
    assert T.arange(0, 5, 0.5).dtype is T.float64
    assert T.arange(1, 2, 1, dtype="float32").dtype is T.float32
    assert T.arange(True).dtype.name == "int64"
    assert T.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert T.arange(5, 0, -2).tolist() == [5, 3, 1]
    assert T.arange(5, 10).tolist() == [5, 6, 7, 8, 9]
    assert T.arange(3, 3).shape == (0,) and T.arange(5, 0).shape == (0,)
    with pytest.raises(ValueError, match="step"):
        T.arange(0, 5, 0)
    with pytest.raises(TypeError):
        T.arange("5")
    with pytest.raises(TypeError):
        T.arange(T.tensor(5))


@MANY
@given(start=st.integers(-50, 50) | st.floats(-50, 50), stop=st.integers(-50, 50) | st.floats(-50, 50),
       num=st.integers(0, 20), endpoint=st.booleans(),
       dtype=st.sampled_from((None, "float32", "float64", "int64", "int16")))
def test_linspace(start, stop, num, endpoint, dtype):
    """NumPy's linspace, endpoint both ways; integer dtypes floor (NumPy 2), not truncate."""
    want = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    got = T.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    assert_close(got, want, atol=1e-12 if dtype in (None, "float64") else None,
                 what=f"linspace({start}, {stop}, {num}, endpoint={endpoint}, dtype={dtype})")
    if endpoint and num > 1 and dtype in (None, "float64"):
        assert got[-1].item() == stop


def test_linspace_errors():
    with pytest.raises(ValueError, match="num"):
        T.linspace(0, 1, -1)
    assert T.linspace(0, 1, 0).shape == (0,)
    assert T.linspace(2, 3, 1).tolist() == [2.0]


# ---------------------------------------------------------------- eye, tril, triu

@MANY
@given(n=st.integers(0, 6), m=st.none() | st.integers(0, 6), k=st.integers(-7, 7),
       d=st.sampled_from(ALL_DTYPES))
def test_eye(n, m, k, d):
    assert_close(T.eye(n, m, k, dtype=d), np.eye(n, m, k), d, what=f"eye({n}, {m}, {k})")
    assert T.eye(n).dtype is T.float64


@MANY
@given(shape=shapes(min_dims=2, max_dims=4), k=st.integers(-4, 4), seed=seeds(),
       d=st.sampled_from(ALL_DTYPES))
def test_tril_triu_batched(shape, k, seed, d):
    rng = np.random.default_rng(seed)
    a = gen_values(rng, d, shape)
    vals, x = make_view(rng, a, d) if rng.random() < 0.5 else (a, make_tensor(a, d))
    assert_close(T.tril(x, k), np.tril(vals, k), d, what=f"tril k={k}")
    assert_close(T.triu(x, k), np.triu(vals, k), d, what=f"triu k={k}")
    assert_close(T.tril(x), np.tril(vals), d)
    assert not T.shares_memory(T.tril(x), x)


def test_tril_triu_need_two_dims():
    # NumPy treats a 1-D input as a row of a 2-D matrix; here that is an error by design.
    for fn in (T.tril, T.triu):
        with pytest.raises(ValueError, match="rank >= 2"):
            fn(T.arange(3))


# ---------------------------------------------------------------- from data: copy rules

def test_asarray_shares_numpy_memory():
    a = np.arange(6.0).reshape(2, 3)
    t = T.asarray(a)
    assert t.data_ptr() == a.ctypes.data and t.dtype is T.float64
    a[0, 1] = 42.0
    assert t[0, 1].item() == 42.0
    t[1, 2] = -1.0
    assert a[1, 2] == -1.0
    tt = T.asarray(a.T[::-1])                       # a strided, negative-stride NumPy view
    assert tt.strides == (-1, 3) and tt.tolist() == a.T[::-1].tolist()
    a[0, 0] = 9.0
    assert tt[2, 0].item() == 9.0
    # a dtype change or copy=True copies; copy=False refuses to
    c = T.asarray(a, dtype="float32")
    a[0, 0] = 1.0
    assert c.dtype is T.float32 and c[0, 0].item() == 9.0
    c2 = T.asarray(a, copy=True)
    a[0, 0] = 2.0
    assert c2[0, 0].item() == 1.0
    with pytest.raises(ValueError, match="copy=False"):
        T.asarray(a, dtype="int32", copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        T.asarray([1, 2], copy=False)


def test_asarray_of_a_tensor():
    x = T.arange(4)
    assert T.asarray(x) is x
    assert T.asarray(x, dtype="int64") is x
    y = T.asarray(x, dtype="float32")
    assert y.dtype is T.float32 and not T.shares_memory(x, y)
    z = T.asarray(x, copy=True)
    assert z is not x and not T.shares_memory(x, z) and z.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="copy=False"):
        T.asarray(x, dtype="int8", copy=False)


def test_array_and_tensor_copy():
    a = np.array([1, 2, 3], dtype=np.int16)
    for make in (T.array, T.tensor):
        t = make(a)
        a[0] = 100
        assert t.tolist()[0] == 1, make.__name__
        assert t.dtype is T.int16
        a[0] = 1
    x = T.arange(3)
    assert not T.shares_memory(T.tensor(x), x) and not T.shares_memory(T.array(x), x)
    assert T.array(a, copy=False).data_ptr() == a.ctypes.data


@pytest.mark.parametrize("data", [
    [1, 2, 3], [1.0, 2], [True, False], [[1, 2], [3, 4]], [[1, 2.5]], [True, 2], [], 3, 2.5,
    True, -7, [[[1]], [[2]]], [[True], [False]], (1, 2), [np.int8(1), np.int8(2)],
    [np.float32(1.5)], [1, 2**62],
], ids=repr)
def test_dtype_inference_from_python_data(data):
    """tensor/asarray/array infer NumPy's dtype from lists, tuples, nested lists and scalars."""
    want = np.array(data)
    for make in (T.tensor, T.asarray, T.array):
        t = make(data)
        assert_close(t, want, want.dtype, what=f"{make.__name__}({data!r})")


def test_data_with_explicit_dtype_and_errors():
    assert_close(T.tensor([1, 2], dtype="float16"), np.array([1, 2], np.float16))
    assert_close(T.tensor([1.5, -2.5], dtype="bfloat16"), np.array([1.5, -2.5], np.float32), "bfloat16")
    assert_close(T.tensor([[1.7, -1.7]], dtype="int32"), np.array([[1.7, -1.7]]).astype(np.int32))
    with pytest.raises(ValueError, match="ragged|cannot"):   # NumPy's and PyTorch's type
        T.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        T.tensor("abc")
    with pytest.raises(TypeError, match="unsupported"):
        T.tensor([1], dtype="float128")


def test_default_float_dtype_for_python_floats():
    old = T.get_default_dtype()
    try:
        T.set_default_dtype("float32")
        assert T.tensor([1.5, 2]).dtype is T.float32
        assert T.zeros(2).dtype is T.float32 and T.eye(2).dtype is T.float32
        assert T.tensor(np.array([1.5])).dtype is T.float64   # an array keeps its dtype
        assert T.tensor([1, 2]).dtype is T.int64
        with pytest.raises(TypeError, match="float32 or float64"):
            T.set_default_dtype("int32")
    finally:
        T.set_default_dtype(old)
    assert T.tensor([1.5]).dtype is T.float64


def test_asarray_of_odd_numpy_arrays():
    """Non-native byte order and unsupported-dtype arrays convert by value (a copy); a read-only
    array is shared as a read-only tensor (NumPy's asarray), and copy=True gives a writeable copy."""
    be = np.arange(5, dtype=">i4")
    assert_close(T.asarray(be), np.arange(5, dtype=np.int32))
    ro = np.arange(4.0)
    ro.flags.writeable = False
    t = T.asarray(ro)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert t.data_ptr() == ro.ctypes.data and not t.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        t[0] = 5.0                                   # writing must not touch the read-only array
    c = T.asarray(ro, copy=True)
    c[0] = 5.0
    assert ro[0] == 0.0 and c.tolist() == [5.0, 1.0, 2.0, 3.0]
    u64 = np.arange(3, dtype=np.uint64)
    assert T.asarray(u64).tolist() == [0, 1, 2]
    obj = np.array([1, 2], dtype=object)
    assert T.asarray(obj).tolist() == [1, 2]


def test_from_numpy_shares_and_checks_type():
    a = np.zeros((2, 2), np.float32)
    t = T.from_numpy(a)
    t[0, 0] = 3.0
    assert a[0, 0] == 3.0
    with pytest.raises(TypeError, match="numpy.ndarray"):
        T.from_numpy([1, 2])


@pytest.mark.parametrize("d", [x for x in ALL_DTYPES if x is not dt.bfloat16], ids=lambda d: d.name)
def test_numpy_round_trip_shares_memory(d):
    rng = np.random.default_rng(1)
    a = gen_values(rng, d, (3, 4), specials=False)
    x = make_tensor(a, d)
    n = x.numpy()
    assert n.dtype == d.np and n.shape == (3, 4)
    np.testing.assert_array_equal(n, a)
    assert n.ctypes.data == x.data_ptr()
    n[1, 2] = n[0, 0]
    assert to_np(x)[1, 2] == to_np(x)[0, 0]
    v = x.T[::-1]
    nv = v.numpy()
    assert nv.strides == tuple(s * x.itemsize for s in v.strides)
    np.testing.assert_array_equal(nv, to_np(x).T[::-1])
    np.testing.assert_array_equal(np.asarray(x), n)          # __array__
    assert x.tolist() == n.tolist()
    y = T.asarray(n)
    assert y.data_ptr() == x.data_ptr()


def test_bfloat16_numpy_needs_ml_dtypes():
    x = T.tensor([1.0, 2.5], dtype="bfloat16")
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        with pytest.raises(TypeError, match="bfloat16.*astype"):
            x.numpy()
    else:
        assert x.numpy().dtype.name == "bfloat16"
    assert x.tolist() == [1.0, 2.5] and x.astype("float32").numpy().tolist() == [1.0, 2.5]


def test_repr_shows_dtype_and_device():
    for d in ALL_DTYPES:
        r = repr(T.ones((2, 2), dtype=d))
        assert r.startswith("tensor(") and f"dtype={d.name}" in r and "device=cpu" in r, r
    assert "[[0, 1, 2]," in repr(T.arange(6).reshape(2, 3))
    assert str(T.arange(3)) == "[0 1 2]"
    assert "dtype=float64" in repr(T.zeros(()))


def test_device_arguments():
    assert T.zeros(2, device="cpu").device == "cpu"
    assert T.tensor([1], device="cpu").device.type == "cpu"
    with pytest.raises(ValueError, match="unknown device"):
        T.zeros(2, device="tpu")


def test_pytorch_dtype_shorthand_methods():
    x = T.arange(3)
    assert x.float().dtype == T.float32 and x.double().dtype == T.float64
    assert x.half().dtype == T.float16 and x.bfloat16().dtype == T.bfloat16
    assert x.int().dtype == T.int32 and x.short().dtype == T.int16 and x.char().dtype == T.int8
    assert x.byte().dtype == T.uint8 and x.bool().tolist() == [False, True, True]
    assert x.long() is x  # already int64: no copy, as PyTorch
