"""Exchange with NumPy and Python (numpy(), __array__, tolist, item, conversions, repr) and
DLPack in both directions (zero-copy, strides, owner lifetime), plus allocator accounting."""
from __future__ import annotations

import gc
import importlib.util
import weakref

import numpy as np
import pytest

import tensor as T
from tensor.cpu.alloc import cpu_allocator

HAVE_ML_DTYPES = importlib.util.find_spec("ml_dtypes") is not None


# ---------------------------------------------------------------- numpy()

def test_numpy_shares_memory_both_ways():
    t = T.arange(12.0).reshape(3, 4)
    a = t.numpy()
    assert a.dtype == np.float64 and a.shape == (3, 4)
    assert a.ctypes.data == t.data_ptr()
    a[1, 2] = -5.0
    assert t[1, 2].item() == -5.0
    t[0, 0] = 42.0
    assert a[0, 0] == 42.0
    t.fill_(1.5)
    assert (a == 1.5).all()


@pytest.mark.parametrize("view", ["transpose", "step", "negative", "offset", "broadcast"])
def test_numpy_of_strided_views_shares_memory(view):
    base = T.arange(30, dtype="int32").reshape(5, 6)
    nbase = np.arange(30, dtype=np.int32).reshape(5, 6)
    f = {"transpose": lambda x: x.T, "step": lambda x: x[::2, 1::3], "negative": lambda x: x[::-1, ::-2],
         "offset": lambda x: x[2:, 3:], "broadcast": lambda x: x[1:2].broadcast_to((4, 6)) if isinstance(
             x, T.Tensor) else np.broadcast_to(x[1:2], (4, 6))}[view]
    v = f(base)
    a = v.numpy()
    np.testing.assert_array_equal(a, f(nbase))
    assert a.strides == tuple(s * 4 for s in v.strides)
    if view == "broadcast":
        assert 0 in a.strides
        base[1, 0] = 77  # one element of the base shows up in every broadcast row
        assert (a[:, 0] == 77).all()
        return
    a[0, 0] = -1
    assert v[0, 0].item() == -1
    v[-1, -1] = -2
    assert a[-1, -1] == -2
    assert (base.numpy() == -1).sum() == 1 and (base.numpy() == -2).sum() == 1


def test_numpy_keeps_storage_alive():
    t = T.arange(1000.0)
    a = t.numpy()
    del t
    gc.collect()
    T.ones(1000)  # memory that a freed block would be reused for
    assert a[999] == 999.0 and a.sum() == 999 * 1000 / 2


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "int64", "float16",
                                   "float32", "float64"])
def test_numpy_dtypes(dtype):
    ref = np.array([0, 1, 1, 0, 1]).astype(dtype)
    a = T.tensor(ref).numpy()
    assert a.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(a, ref)


def test_bfloat16_numpy():
    t = T.tensor([1.0, 2.5, -3.0], dtype="bfloat16")
    if HAVE_ML_DTYPES:
        a = t.numpy()
        assert a.dtype.name == "bfloat16" and a.astype(np.float32).tolist() == [1.0, 2.5, -3.0]
    else:
        with pytest.raises(TypeError) as e:
            t.numpy()
        assert "bfloat16" in str(e.value) and "astype" in str(e.value)
    # the Python conversions work either way
    assert t.tolist() == [1.0, 2.5, -3.0]
    assert t[1].item() == 2.5
    assert "bfloat16" in repr(t) and "2.5" in repr(t)


# ---------------------------------------------------------------- __array__ (NumPy 2 protocol)

def test_array_protocol_dtype_and_copy():
    t = T.arange(6, dtype="int32").reshape(2, 3)
    a = np.asarray(t)
    assert a.dtype == np.int32 and a.ctypes.data == t.data_ptr()  # no copy by default
    a[0, 0] = 9
    assert t[0, 0].item() == 9
    f = np.asarray(t, dtype=np.float32)
    assert f.dtype == np.float32 and f.tolist() == [[9.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    c = np.asarray(t, copy=True)
    c[0, 1] = 100
    assert t[0, 1].item() == 1 and c.ctypes.data != t.data_ptr()
    nc = np.asarray(t, copy=False)
    assert nc.ctypes.data == t.data_ptr()
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(t, dtype=np.float64, copy=False)
    assert np.array(t).ctypes.data != t.data_ptr()  # np.array copies
    assert np.asarray(t.T).strides == (4, 12)
    # NumPy functions that convert their inputs accept tensors
    cat = np.concatenate([t, t])
    assert cat.shape == (4, 3) and cat.sum() == 2 * (9 + 1 + 2 + 3 + 4 + 5)


# ---------------------------------------------------------------- Python conversions

def test_tolist_item_and_scalar_conversions():
    t = T.tensor([[1, 2], [3, 4]], dtype="int16")
    assert t.tolist() == [[1, 2], [3, 4]] and type(t.tolist()[0][0]) is int
    assert T.tensor([True, False]).tolist() == [True, False]
    assert T.tensor(2.5).tolist() == 2.5
    assert T.tensor([[7]]).item() == 7 and type(T.tensor([[7]]).item()) is int
    assert type(T.tensor(1.5, dtype="float32").item()) is float
    assert T.tensor(True).item() is True
    with pytest.raises(ValueError, match="one-element"):
        t.item()
    assert float(T.tensor([3], dtype="int8")) == 3.0
    assert int(T.tensor(7.9)) == 7
    assert bool(T.tensor([1.0])) is True and bool(T.tensor(0)) is False
    assert [1, 2, 3][T.tensor(1)] == 2  # __index__
    with pytest.raises(TypeError):
        [1, 2][T.tensor(1.0)]


def test_len_and_iteration():
    t = T.arange(6).reshape(3, 2)
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    assert [int(x) for x in T.arange(4)] == [0, 1, 2, 3]
    with pytest.raises(TypeError):
        len(T.tensor(1.0))
    with pytest.raises(TypeError):
        iter(T.tensor(1.0)).__next__()


def test_bool_of_many_elements_raises():
    with pytest.raises(ValueError, match="ambiguous"):
        bool(T.ones(2))
    with pytest.raises(ValueError, match="ambiguous"):
        if T.zeros(0):
            pass


def test_repr_and_str():
    t = T.tensor([[1.5, -2.0], [3.25, 4.0]], dtype="float32")
    r = repr(t)
    assert r.startswith("tensor(") and "dtype=float32" in r and "device=cpu" in r
    for v in ("1.5", "-2.", "3.25", "4."):
        assert v in r
    s = str(t)
    assert "3.25" in s and "dtype" not in s
    assert repr(T.tensor(7)) == "tensor(7, dtype=int64, device=cpu)"
    assert "dtype=bool" in repr(T.tensor([True]))
    big = repr(T.arange(5000))
    assert "..." in big and "4999" in big and len(big) < 1000  # summarised, not 5000 numbers
    assert repr(T.zeros(0, 3)).startswith("tensor([]")


# ---------------------------------------------------------------- DLPack

@pytest.mark.parametrize("view", ["contig", "transpose", "negative", "step"])
def test_numpy_from_dlpack_is_zero_copy(view):
    base = T.arange(24.0, dtype="float32").reshape(4, 6)
    f = {"contig": lambda x: x, "transpose": lambda x: x.T, "negative": lambda x: x[::-1, ::-1],
         "step": lambda x: x[1::2, ::3]}[view]
    v = f(base)
    a = np.from_dlpack(v)
    np.testing.assert_array_equal(a, f(np.arange(24.0, dtype=np.float32).reshape(4, 6)))
    assert a.strides == tuple(s * 4 for s in v.strides)
    v[0, 0] = 100.0  # writes through the tensor are seen by the array...
    assert a[0, 0] == 100.0
    del v, base
    gc.collect()
    T.zeros(24)
    assert a[0, 0] == 100.0  # ...and the array keeps the memory alive


def test_tensor_from_dlpack_is_zero_copy():
    a = np.arange(20, dtype=np.int64).reshape(4, 5)
    t = T.from_dlpack(a)
    assert t.dtype == T.int64 and t.shape == (4, 5) and t.data_ptr() == a.ctypes.data
    t[1, 1] = -7
    assert a[1, 1] == -7
    a[3, 4] = 99
    assert t[3, 4].item() == 99
    for view in (a.T, a[::-1, ::2], a[:, 1:4][::-2]):
        tv = T.from_dlpack(view)
        assert tv.strides == tuple(s // 8 for s in view.strides)
        np.testing.assert_array_equal(tv.numpy(), view)
        assert tv.numpy().ctypes.data == view.ctypes.data
    for dt in ("bool", "int8", "uint8", "int16", "int32", "float16", "float32", "float64",
               "complex64", "complex128"):
        x = np.arange(4).astype(dt)
        tx = T.from_dlpack(x)
        assert tx.dtype == T.dtypes.dtype(dt) and tx.tolist() == x.tolist()
        assert tx.data_ptr() == x.ctypes.data
    with pytest.raises(TypeError, match="from_dlpack"):
        T.from_dlpack([1, 2, 3])


class _Arr(np.ndarray):
    """An ndarray subclass: its instances can be weakly referenced."""


def test_from_dlpack_keeps_the_producer_alive():
    a = np.arange(1000, dtype=np.float64).view(_Arr)
    ref = weakref.ref(a)
    t = T.from_dlpack(a)
    del a
    gc.collect()
    assert ref() is not None  # the tensor holds the producer
    T.ones(1000)
    assert t[999].item() == 999.0 and t.sum().item() == 999 * 1000 / 2
    view = t[10:20]  # a view of the tensor keeps it alive too
    del t
    gc.collect()
    assert ref() is not None and view[0].item() == 10.0
    del view
    gc.collect()
    assert ref() is None  # released once the last tensor is gone


def test_dlpack_round_trip_and_device():
    t = T.arange(6, dtype="int16").reshape(2, 3)
    assert t.__dlpack_device__() == (1, 0)
    back = T.from_dlpack(np.from_dlpack(t))
    assert back.data_ptr() == t.data_ptr() and back.tolist() == t.tolist()
    assert T.from_dlpack(t) is t


# ---------------------------------------------------------------- allocator accounting

def test_memory_allocated_tracks_tensor_lifetime():
    alloc = cpu_allocator()
    gc.collect()
    before = alloc.memory_allocated()
    t = T.empty(10_000, dtype="float32")  # 40000 bytes -> 40448 after rounding to 512
    assert alloc.memory_allocated() == before + 40448
    u = t[::2]  # a view allocates nothing
    assert alloc.memory_allocated() == before + 40448
    del t
    gc.collect()
    assert alloc.memory_allocated() == before + 40448  # the view still holds the storage
    del u
    gc.collect()
    assert alloc.memory_allocated() == before
    n = np.ones(100_000)
    w = T.from_numpy(n)  # external memory is not the allocator's
    assert alloc.memory_allocated() == before
    del w


def test_copy_deepcopy_and_pickle_copy_values_and_dtype():
    import copy
    import pickle
    x = T.arange(6.0).reshape(2, 3).T
    for y in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        assert y.shape == x.shape and y.dtype == x.dtype and y.tolist() == x.tolist()
        assert not T.shares_memory(x, y)
    b = T.tensor([1.5, -2.0], dtype="bfloat16")
    rb = pickle.loads(pickle.dumps(b))
    assert rb.dtype == T.bfloat16 and rb.astype("float32").tolist() == [1.5, -2.0]
    w = T.ones(2).requires_grad_()
    assert copy.deepcopy(w).requires_grad and copy.deepcopy(w).is_leaf
