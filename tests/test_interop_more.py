"""Interop fixes of hunt 7: nn.save/nn.load keep memory sharing, T.tensor of PyTorch bfloat16
tensors (and lists of bfloat16 tensors), from_dlpack of misaligned memory and of bool bytes
other than 0 / 1."""
import ctypes
import io
import json
import zipfile

import numpy as np
import pytest

import nn
import tensor as T
from nn.serialization import CheckpointError


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    nn.save(obj, buf)
    buf.seek(0)
    return nn.load(buf, **kw)


# ------------------------------------------------------------- nn.save keeps sharing

def test_save_keeps_views_of_one_base(device):   # (conftest's fixture: cpu and cuda)
    # caught: each tensor was saved as its own array, so after loading, a write into the base
    # no longer reached its views (PyTorch's save stores the storage once and keeps sharing)
    base = T.arange(12.0, device=device).reshape(3, 4)
    obj = {"base": base, "row": base[1], "colrev": base[:, ::-2], "same": base,
           "t": (base.T,), "other": T.ones(2, device=device)}
    ref = base.numpy().copy()
    r = _roundtrip(obj, map_location=device)
    np.testing.assert_array_equal(r["base"].numpy(), ref)
    np.testing.assert_array_equal(r["row"].numpy(), ref[1])
    np.testing.assert_array_equal(r["colrev"].numpy(), ref[:, ::-2])
    np.testing.assert_array_equal(r["t"][0].numpy(), ref.T)
    assert r["base"].device.type == device and r["row"].device.type == device
    r["base"][1, 3] = 100.0
    ref[1, 3] = 100.0
    np.testing.assert_array_equal(r["row"].numpy(), ref[1])
    np.testing.assert_array_equal(r["colrev"].numpy(), ref[:, ::-2])
    np.testing.assert_array_equal(r["same"].numpy(), ref)
    np.testing.assert_array_equal(r["t"][0].numpy(), ref.T)
    np.testing.assert_array_equal(r["other"].numpy(), np.ones(2))


def test_save_shared_mixed_dtypes_and_small_span():
    big = T.arange(100_000, dtype=T.float32)
    obj = {"a": big[10:13], "b": big[12:14], "cplx": T.arange(6.0)[1:],
           "bf": T.ones(4, dtype=T.bfloat16) * 1.5}
    obj["bf2"] = obj["bf"][1:]
    obj["pair"] = T.view_as_real(T.ones(3, dtype=T.complex64) * (1 + 2j))   # float32 view of complex
    obj["cpx"] = T.view_as_complex(obj["pair"]) if hasattr(T, "view_as_complex") else obj["pair"]
    buf = io.BytesIO()
    nn.save(obj, buf)
    assert len(buf.getvalue()) < 8000   # only the bytes the views span, not the whole base
    buf.seek(0)
    r = nn.load(buf)
    np.testing.assert_array_equal(r["a"].numpy(), [10, 11, 12])
    np.testing.assert_array_equal(r["cplx"].numpy(), np.arange(1.0, 6.0))
    r["a"][2] = -1.0
    assert r["b"].tolist() == [-1.0, 13.0]
    assert r["bf2"].dtype is T.bfloat16 and r["bf2"].tolist() == [1.5, 1.5, 1.5]
    np.testing.assert_array_equal(r["pair"].numpy(), [[1.0, 2.0]] * 3)
    r["pair"][0, 1] = 5.0
    assert r["cpx"].numpy()[0] in (1 + 5j, 5.0)
    r["bf"][1] = 4.0
    assert r["bf2"].tolist() == [4.0, 1.5, 1.5]


def test_save_without_sharing_keeps_v1_format():
    buf = io.BytesIO()
    nn.save({"a": T.ones(2), "b": T.zeros(3)}, buf)
    tree = json.loads(str(np.load(io.BytesIO(buf.getvalue()))["__tree__"]))
    assert tree["format"] == "stridex-state-v1"


def _rewrite_tree(data: bytes, edit) -> io.BytesIO:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            raw = src.read(info)
            if info.filename == "__tree__.npy":
                tree = json.loads(str(np.load(io.BytesIO(raw))))
                edit(tree)
                b = io.BytesIO()
                np.save(b, np.array(json.dumps(tree)))
                raw = b.getvalue()
            z.writestr(info.filename, raw)
    out.seek(0)
    return out


@pytest.mark.parametrize("bad", [
    lambda spec: spec.__setitem__(4, 10**6),       # offset past the memory
    lambda spec: spec.__setitem__(4, -50),         # before it
    lambda spec: spec.__setitem__(2, [10**6]),     # shape past it
    lambda spec: spec.__setitem__(3, [-10]),        # negative stride reaching before it
    lambda spec: spec.__setitem__(0, "__storage__/9"),
    lambda spec: spec.__setitem__(1, "nope"),
    lambda spec: spec.__setitem__(2, "x"),
])
def test_damaged_view_nodes_raise(bad):
    base = T.arange(8.0)
    buf = io.BytesIO()
    nn.save({"a": base, "b": base[2:4]}, buf)

    def edit(tree):
        spec = dict(tree["root"]["dict"])["b"]["view"]
        bad(spec)
    with pytest.raises(CheckpointError):
        nn.load(_rewrite_tree(buf.getvalue(), edit))


# ------------------------------------------------------------- T.tensor of bfloat16 tensors

def test_tensor_of_torch_bfloat16():
    torch = pytest.importorskip("torch")
    # caught: T.tensor went through NumPy, which PyTorch cannot give bfloat16 ("Got unsupported
    # ScalarType BFloat16"), although T.asarray (DLPack) could
    x = torch.tensor([1.5, -2.25, 3.0], dtype=torch.bfloat16)
    t = T.tensor(x)
    assert t.dtype is T.bfloat16 and t.tolist() == x.float().tolist()
    assert T.tensor(x, dtype=T.float32).tolist() == x.float().tolist()
    t[0] = 7.0
    assert x[0].item() == 1.5   # a copy
    s = T.tensor([x[0], x[1]])
    assert s.dtype is T.bfloat16 and s.tolist() == [1.5, -2.25]
    assert T.tensor([[x, x]]).shape == (1, 2, 3)
    with pytest.raises(ValueError, match="tensor: cannot convert"):   # ragged, as NumPy
        T.tensor([x, x[:2]])


def test_tensor_of_list_of_our_bfloat16_tensors():
    # caught: TypeError "NumPy has no bfloat16"
    vals = [0.5, 1.5, -3.0]
    t = T.tensor([T.tensor(v, dtype=T.bfloat16) for v in vals])
    assert t.dtype is T.bfloat16 and t.tolist() == vals
    g = T.tensor([T.ones(2, dtype=T.bfloat16, requires_grad=True)] * 2)
    assert g.shape == (2, 2) and not g.requires_grad


# ------------------------------------------------------------- from_dlpack fix-ups

class _Producer:
    """A DLPack producer of a NumPy array's memory read as another dtype (as a library that does
    not check alignment or bool bytes would export it)."""
    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return (1, 0)


def test_from_dlpack_misaligned_copies_or_raises():
    # caught: the tensor shared memory whose float64 elements were not 8-byte aligned (the
    # kernels assume aligned elements); from_numpy refuses such arrays
    raw = np.zeros(8 * 5 + 1, np.uint8)
    want = np.array([1.5, -2.0, 3.25, 0.0, 7.0])
    raw[1:] = want.view(np.uint8)
    a = raw[1:].view(np.float64)
    t = T.from_dlpack(_Producer(a))
    assert t.data_ptr() % 8 == 0
    np.testing.assert_array_equal(t.numpy(), want)
    np.testing.assert_array_equal(T.from_dlpack(_Producer(a[::-2])).numpy(), want[::-2])
    with pytest.raises(ValueError, match="aligned"):
        T.from_dlpack(_Producer(a), copy=False)


def test_from_dlpack_noncanonical_bool_bytes():
    # caught: bytes 2 read as True by tolist but summed as 2 by the kernels
    b = np.array([0, 2, 1, 255], np.uint8)
    t = T.from_dlpack(_Producer(b.view(np.bool_)))
    assert t.tolist() == [False, True, True, True]
    assert int(t.sum()) == 3
    assert (~t).tolist() == [True, False, False, False]
    assert T.from_dlpack(_Producer(b.view(np.bool_)), copy=True).astype(T.uint8).tolist() == [0, 1, 1, 1]
    with pytest.raises(ValueError, match="0 and 1"):
        T.from_dlpack(_Producer(b.view(np.bool_)), copy=False)
    ok = np.array([True, False])
    shared = T.from_dlpack(ok)   # canonical bools still share memory
    assert shared.data_ptr() == ok.ctypes.data


def test_from_dlpack_still_zero_copy_and_keeps_owner():
    a = np.arange(6.0)
    t = T.from_dlpack(a)
    assert t.data_ptr() == a.ctypes.data
    addr = ctypes.addressof(ctypes.c_char.from_buffer(a))
    del a
    assert t.data_ptr() == addr and t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_tensor_of_bfloat16_list_keeps_device(device):
    xs = [T.tensor([1.5, 2.0], dtype=T.bfloat16, device=device)] * 2
    t = T.tensor(xs)
    assert t.device.type == device and t.dtype is T.bfloat16 and t.tolist() == [[1.5, 2.0]] * 2
    assert T.tensor(xs, dtype=T.float64).dtype is T.float64
