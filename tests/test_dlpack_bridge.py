"""Tests for tensor/_dlpack.py (ctypes DLPack bridge), using NumPy as the
other side: NumPy both produces and consumes DLPack capsules."""

import ctypes
import gc
import importlib.util
import pathlib
import sys
import threading
import weakref

import numpy as np
import pytest

try:
    from tensor import _dlpack as dl
except ImportError:
    # The bridge is self-contained (ctypes + stdlib only).  While the rest of
    # the package is under construction its __init__ may fail to import;
    # test the bridge file on its own in that case.
    _path = pathlib.Path(__file__).resolve().parents[1] / "tensor" / "_dlpack.py"
    _spec = importlib.util.spec_from_file_location("_dlpack_standalone", _path)
    dl = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = dl
    _spec.loader.exec_module(dl)


# ---------------------------------------------------------------- helpers

def dl_dtype(dt):
    """numpy dtype -> (DLPack type code, bits)."""
    dt = np.dtype(dt)
    code = {"b": dl.kDLBool, "i": dl.kDLInt, "u": dl.kDLUInt,
            "f": dl.kDLFloat, "c": dl.kDLComplex}[dt.kind]
    return code, dt.itemsize * 8


class Owner:
    """Weak-referenceable stand-in for the library's storage object."""

    def __init__(self, arr):
        self.arr = arr


class Shim:
    """Minimal producer: what Tensor.__dlpack__ will look like."""

    def __init__(self, arr, owner=None, *, force_versioned=None,
                 read_only=False):
        self.arr = arr
        self.owner = arr if owner is None else owner
        self.force_versioned = force_versioned
        self.read_only = read_only
        self.calls = []

    def __dlpack__(self, stream=None, max_version=None, dl_device=None,
                   copy=None):
        self.calls.append(dict(stream=stream, max_version=max_version,
                               dl_device=dl_device, copy=copy))
        versioned = (max_version is not None
                     and tuple(max_version) >= (1, 0))
        if self.force_versioned is not None:
            versioned = self.force_versioned
        a = self.arr
        code, bits = dl_dtype(a.dtype)
        return dl.make_capsule(
            a.ctypes.data, a.shape,
            tuple(s // a.itemsize for s in a.strides),
            code, bits, dl.kDLCPU, 0, self.owner,
            versioned=versioned, read_only=self.read_only)

    def __dlpack_device__(self):
        return (dl.kDLCPU, 0)


def collect():
    for _ in range(3):
        gc.collect()


DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]


def sample(dtype, shape=(3, 4)):
    n = int(np.prod(shape))
    if np.dtype(dtype) == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    return (np.arange(n) * 3 % 7 + 1).astype(dtype).reshape(shape)


def layouts(dtype):
    """(name, view, base) with `view` sharing memory with `base`."""
    base = sample(dtype, (3, 4))
    flat = sample(dtype, (6,))
    return [
        ("contiguous", base, base),
        ("0d", np.array(sample(dtype, (1,))[0]), None),
        ("empty", np.empty((0, 3), dtype), None),
        ("empty_mid", base[:, 4:], base),
        ("transposed", base.T, base),
        ("flip", np.flip(base), base),
        ("flip_axis1_step", base[:, ::-2], base),
        ("broadcast", np.broadcast_to(flat[:4], (3, 4)), flat),
        ("sliced", base[1:, 1:3], base),
    ]


# ------------------------------------------------------------ struct layout

def test_struct_layout_matches_dlpack_h():
    P = ctypes.sizeof(ctypes.c_void_p)
    assert P == 8, "tests assume a 64-bit platform"
    assert ctypes.sizeof(dl.DLDevice) == 8
    assert ctypes.sizeof(dl.DLDataType) == 4
    assert dl.DLDataType.lanes.offset == 2
    assert [(n, getattr(dl.DLTensor, n).offset) for n, _ in
            dl.DLTensor._fields_] == [
        ("data", 0), ("device", 8), ("ndim", 16), ("dtype", 20),
        ("shape", 24), ("strides", 32), ("byte_offset", 40)]
    assert ctypes.sizeof(dl.DLTensor) == 48
    assert dl.DLManagedTensor.manager_ctx.offset == 48
    assert dl.DLManagedTensor.deleter.offset == 56
    assert ctypes.sizeof(dl.DLManagedTensor) == 64
    assert ctypes.sizeof(dl.DLPackVersion) == 8
    assert [(n, getattr(dl.DLManagedTensorVersioned, n).offset) for n, _ in
            dl.DLManagedTensorVersioned._fields_] == [
        ("version", 0), ("manager_ctx", 8), ("deleter", 16), ("flags", 24),
        ("dl_tensor", 32)]
    assert ctypes.sizeof(dl.DLManagedTensorVersioned) == 80


# ------------------------------------------------------- export to NumPy

@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("versioned", [None, False], ids=["asked", "legacy"])
def test_export_to_numpy_all_layouts(dtype, versioned):
    for name, arr, _base in layouts(dtype):
        before = dl.live_exports()
        shim = Shim(arr, force_versioned=versioned)
        out = np.from_dlpack(shim)
        # NumPy 2 asks for a versioned capsule.
        assert shim.calls and shim.calls[0]["max_version"] == (1, 0), name
        assert dl.live_exports() == before + 1, name
        assert out.dtype == arr.dtype, name
        assert out.shape == arr.shape, name
        assert out.strides == arr.strides, name
        np.testing.assert_array_equal(out, arr, err_msg=name)
        if arr.size:
            assert np.shares_memory(out, arr), name
            assert out.__array_interface__["data"][0] == arr.ctypes.data
        del out   # plain refcounting releases it: no gc needed
        assert dl.live_exports() == before, name


def test_export_writes_visible_both_ways():
    a = np.zeros((4, 5), np.float32)
    out = np.from_dlpack(Shim(a))
    assert out.flags.writeable
    out[1, 2] = 7.5
    assert a[1, 2] == 7.5
    a[3, 4] = -1
    assert out[3, 4] == -1

    # negative strides: element 0 of the view is the last of the base
    f = np.flip(a)
    outf = np.from_dlpack(Shim(f))
    outf[0, 0] = 42
    assert a[-1, -1] == 42
    assert outf[-1, -1] == a[0, 0]

    # broadcast (stride 0): a write through the consumer hits the one
    # shared element
    row = np.arange(3.0)
    b = np.broadcast_to(row, (4, 3))
    outb = np.from_dlpack(Shim(b, force_versioned=True))
    assert outb.strides == (0, 8)
    np.testing.assert_array_equal(outb, b)


def test_export_read_only_flag():
    a = np.arange(6, dtype=np.int32)
    out = np.from_dlpack(Shim(a, read_only=True))
    assert not out.flags.writeable
    np.testing.assert_array_equal(out, a)
    with pytest.raises(ValueError):
        out[0] = 1
    with pytest.raises(ValueError, match="versioned"):
        dl.make_capsule(a.ctypes.data, a.shape, (1,), dl.kDLInt, 32,
                        dl.kDLCPU, 0, a, versioned=False, read_only=True)


def test_owner_lives_as_long_as_consumer():
    a = np.arange(10.0)
    owner = Owner(a)
    wr = weakref.ref(owner)
    shim = Shim(a, owner)
    out = np.from_dlpack(shim)
    del owner, shim
    collect()
    assert wr() is not None, "owner died while the consumer array lives"
    view = out[2:5]   # derived views keep the import alive too
    del out
    collect()
    assert wr() is not None
    np.testing.assert_array_equal(view, [2.0, 3.0, 4.0])
    del view
    collect()
    assert wr() is None, "owner leaked after the consumer was deleted"


@pytest.mark.parametrize("versioned", [False, True])
def test_unconsumed_capsule_releases_owner(versioned):
    before = dl.live_exports()
    a = np.arange(4)
    owner = Owner(a)
    wr = weakref.ref(owner)
    cap = dl.make_capsule(a.ctypes.data, a.shape, (1,), dl.kDLInt, 64,
                          dl.kDLCPU, 0, owner, versioned=versioned)
    name = "dltensor_versioned" if versioned else "dltensor"
    assert f'"{name}"' in repr(cap)
    del owner
    collect()
    assert wr() is not None, "capsule must keep its owner alive"
    assert dl.live_exports() == before + 1
    del cap
    collect()
    assert wr() is None, "dropping an unconsumed capsule leaked the owner"
    assert dl.live_exports() == before


def test_many_exports_do_not_leak():
    a = np.arange(8, dtype=np.float64)
    before = dl.live_exports()
    for i in range(500):
        out = np.from_dlpack(Shim(a, force_versioned=bool(i % 2)))
        assert out[3] == 3.0
        cap = dl.make_capsule(a.ctypes.data, a.shape, (1,), dl.kDLFloat,
                              64, dl.kDLCPU, 0, a, versioned=bool(i % 3))
        del out, cap
    collect()
    assert dl.live_exports() == before


def test_numpy_rejection_does_not_leak_or_crash(monkeypatch):
    """NumPy has no bfloat16: it rejects the capsule and drops it while its
    own error is pending.  The owner must still be released."""
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    a = np.zeros(4, np.uint16)
    owner = Owner(a)
    wr = weakref.ref(owner)
    before = dl.live_exports()

    class Bf16Shim(Shim):
        def __dlpack__(self, **kw):
            return dl.make_capsule(a.ctypes.data, a.shape, (1,),
                                   dl.kDLBfloat, 16, dl.kDLCPU, 0, owner,  # noqa: F821 - late-bound on purpose (deleted below)
                                   versioned=True)

    # NumPy's own error comes through: the capsule's destructor (csrc/capsule.c) sets it aside
    # while the Python body runs (before, ctypes reported it as unraisable and cleared it, and
    # NumPy raised SystemError: "returned NULL without setting an exception")
    with pytest.raises(RuntimeError, match="(?i)dtype"):
        np.from_dlpack(Bf16Shim(a))
    del owner
    collect()
    assert wr() is None
    assert dl.live_exports() == before
    assert dl.pop_lost_consumer_error() is None and not unraisable
    import tensor as T
    with pytest.raises(RuntimeError, match="(?i)dtype"):   # our own bfloat16 tensors too
        np.from_dlpack(T.ones(2, dtype="bfloat16"))
    assert not unraisable


def test_make_capsule_validates_arguments():
    a = np.arange(4)
    with pytest.raises(ValueError):
        dl.make_capsule(a.ctypes.data, (4,), (1, 1), dl.kDLInt, 64,
                        dl.kDLCPU, 0, a)
    with pytest.raises(ValueError):
        dl.make_capsule(a.ctypes.data, (-1,), (1,), dl.kDLInt, 64,
                        dl.kDLCPU, 0, a)
    with pytest.raises(ValueError):
        dl.make_capsule(a.ctypes.data, (4,), (1,), dl.kDLInt, 0,
                        dl.kDLCPU, 0, a)


# ----------------------------------------------------- import from NumPy

def _check_view_matches(v, arr):
    code, bits = dl_dtype(arr.dtype)
    assert v.ptr == arr.ctypes.data
    assert v.shape == arr.shape
    if arr.size:  # NumPy normalises strides of empty arrays
        assert v.strides == tuple(s // arr.itemsize for s in arr.strides)
    assert (v.dtype_code, v.bits, v.lanes) == (code, bits, 1)
    assert (v.device_type, v.device_id) == (dl.kDLCPU, 0)
    assert v.itemsize == arr.itemsize
    assert v.ndim == arr.ndim and v.size == arr.size


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_parse_numpy_capsules(dtype, max_version):
    for name, arr, _base in layouts(dtype):
        if max_version is None:
            if not arr.flags.writeable:   # broadcast_to is read-only
                with pytest.raises(BufferError):
                    arr.__dlpack__()
                continue
            cap = arr.__dlpack__()
        else:
            cap = arr.__dlpack__(max_version=max_version)
        v = dl.parse_capsule(cap)
        try:
            assert v.versioned == (max_version is not None), name
            assert v.version == (None if max_version is None else (1, 0))
            assert v.read_only == (not arr.flags.writeable), name
            _check_view_matches(v, arr)
            # the capsule was renamed so NumPy's destructor won't free it
            used = "used_dltensor_versioned" if v.versioned else "used_dltensor"
            assert f'"{used}"' in repr(cap)
            # read the memory back through the pointer: proves ptr/strides
            if arr.size:
                iface = {"data": (v.ptr, True), "shape": v.shape,
                         "typestr": arr.dtype.str,
                         "strides": tuple(s * v.itemsize for s in v.strides),
                         "version": 3}
                holder = type("H", (), {"__array_interface__": iface})()
                np.testing.assert_array_equal(np.asarray(holder), arr)
        finally:
            v.release()


class Sub(np.ndarray):
    """ndarray subclass: weak-referenceable."""


def test_release_keeps_numpy_producer_alive_until_then():
    a = np.arange(6.0).view(Sub)
    wr = weakref.ref(a)
    rc0 = sys.getrefcount(a)
    cap = a.__dlpack__(max_version=(1, 0))
    assert sys.getrefcount(a) == rc0 + 1   # NumPy's manager_ctx holds `a`
    v = dl.parse_capsule(cap)
    assert sys.getrefcount(a) == rc0 + 1
    del cap
    collect()
    assert sys.getrefcount(a) == rc0 + 1   # renamed: capsule didn't free
    v.release()
    assert sys.getrefcount(a) == rc0       # deleter ran
    v.release()                            # ... exactly once
    v.release()
    assert sys.getrefcount(a) == rc0
    assert v.released

    cap = a.__dlpack__()
    v = dl.parse_capsule(cap)
    ptr = v.ptr
    del a, cap
    collect()
    assert wr() is not None, "producer freed before release()"
    assert ctypes.c_double.from_address(ptr + 8).value == 1.0
    v.release()
    collect()
    assert wr() is None


def test_view_del_releases():
    a = np.arange(3).view(Sub)
    wr = weakref.ref(a)
    v = dl.parse_capsule(a.__dlpack__(max_version=(1, 0)))
    del a
    collect()
    assert wr() is not None
    del v   # never released explicitly
    collect()
    assert wr() is None


def test_view_context_manager_and_concurrent_release():
    a = np.arange(3.0)
    rc0 = sys.getrefcount(a)
    with dl.parse_capsule(a.__dlpack__()) as v:
        assert sys.getrefcount(a) == rc0 + 1
    assert v.released and sys.getrefcount(a) == rc0

    for _ in range(20):
        v = dl.parse_capsule(a.__dlpack__(max_version=(1, 0)))
        barrier = threading.Barrier(8)

        def worker(barrier=barrier, v=v):
            barrier.wait()
            v.release()
        ts = [threading.Thread(target=worker) for _ in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert sys.getrefcount(a) == rc0


def test_parse_null_strides_means_c_contiguous():
    buf = np.arange(24, dtype=np.int32)
    mt = dl.DLManagedTensor()
    shape = (ctypes.c_int64 * 3)(2, 3, 4)
    mt.dl_tensor.data = buf.ctypes.data - 8
    mt.dl_tensor.byte_offset = 8
    mt.dl_tensor.device = dl.DLDevice(dl.kDLCPU, 0)
    mt.dl_tensor.ndim = 3
    mt.dl_tensor.dtype = dl.DLDataType(dl.kDLInt, 32, 1)
    mt.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    mt.dl_tensor.strides = None
    # no deleter (NULL is allowed) and a capsule without destructor
    cap = dl._PyCapsule_New(ctypes.addressof(mt),
                            dl._NAME_ADDR[b"dltensor"], None)
    v = dl.parse_capsule(cap)
    assert v.strides == (12, 4, 1)
    assert v.ptr == buf.ctypes.data and v.byte_offset == 8
    assert v.shape == (2, 3, 4)
    v.release()   # NULL deleter: no-op


# ------------------------------------------------------- round trip / errors

@pytest.mark.parametrize("versioned", [False, True])
def test_roundtrip_own_capsule(versioned, monkeypatch):
    calls = []
    real = dl._release_export
    monkeypatch.setattr(dl, "_release_export",
                        lambda addr: (calls.append(addr), real(addr)))
    a = np.zeros((2, 3), np.uint16)   # pretend storage for bf16 data
    owner = Owner(a)
    wr = weakref.ref(owner)
    cap = dl.make_capsule(a.ctypes.data + 2, (3, 2), (1, 3), dl.kDLBfloat,
                          16, dl.kDLCPU, 0, owner, versioned=versioned,
                          read_only=versioned)
    del owner
    v = dl.parse_capsule(cap)
    assert (v.dtype_code, v.bits, v.lanes) == (dl.kDLBfloat, 16, 1)
    assert v.ptr == a.ctypes.data + 2 and v.byte_offset == 0
    assert v.shape == (3, 2) and v.strides == (1, 3)
    assert v.read_only == versioned
    assert v.version == ((1, 0) if versioned else None)
    del cap
    collect()
    assert wr() is not None and calls == []
    v.release()
    v.release()
    assert len(calls) == 1
    collect()
    assert wr() is None


def test_cuda_device_fields_roundtrip():
    owner = Owner(None)
    cap = dl.make_capsule(0x7F0000000100, (4,), (1,), dl.kDLFloat, 32,
                          dl.kDLCUDA, 3, owner, versioned=True)
    v = dl.parse_capsule(cap)
    assert (v.device_type, v.device_id) == (dl.kDLCUDA, 3)
    assert v.ptr == 0x7F0000000100
    v.release()


def test_consuming_twice_raises():
    a = np.arange(5.0)
    for cap in (a.__dlpack__(), a.__dlpack__(max_version=(1, 0)),
                dl.make_capsule(a.ctypes.data, (5,), (1,), dl.kDLFloat, 64,
                                dl.kDLCPU, 0, a)):
        v = dl.parse_capsule(cap)
        with pytest.raises(ValueError, match="already consumed"):
            dl.parse_capsule(cap)
        v.release()
        with pytest.raises(ValueError, match="already consumed"):
            dl.parse_capsule(cap)

    # a capsule consumed by NumPy cannot be consumed by us, and vice versa
    cap = dl.make_capsule(a.ctypes.data, (5,), (1,), dl.kDLFloat, 64,
                          dl.kDLCPU, 0, a, versioned=True)

    class Once:
        def __dlpack__(self, **kw):
            return cap

        def __dlpack_device__(self):
            return (dl.kDLCPU, 0)
    out = np.from_dlpack(Once())
    with pytest.raises(ValueError, match="already consumed"):
        dl.parse_capsule(cap)
    with pytest.raises((ValueError, TypeError, BufferError)):
        np.from_dlpack(Once())
    np.testing.assert_array_equal(out, a)


def test_parse_rejects_non_capsules():
    with pytest.raises(TypeError):
        dl.parse_capsule(object())
    with pytest.raises(TypeError):
        dl.parse_capsule(np.arange(3))
    import datetime
    other = datetime.datetime_CAPI   # a capsule with an unrelated name
    with pytest.raises(ValueError, match="not a DLPack capsule"):
        dl.parse_capsule(other)


def test_parse_rejects_unknown_major_version():
    a = np.arange(3)
    cap = dl.make_capsule(a.ctypes.data, (3,), (1,), dl.kDLInt, 64,
                          dl.kDLCPU, 0, a, versioned=True)
    addr = dl._PyCapsule_GetPointer(cap, b"dltensor_versioned")
    dl.DLManagedTensorVersioned.from_address(addr).version.major = 2
    before = dl.live_exports()
    with pytest.raises(ValueError, match="version"):
        dl.parse_capsule(cap)
    assert "\"dltensor_versioned\"" in repr(cap)   # not consumed
    del cap
    collect()
    assert dl.live_exports() == before - 1
