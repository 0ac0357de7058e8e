"""Interop fixes of hunt 4 (memory sharing and exchange with NumPy, DLPack and Python):

- NumPy scalars and arrays met by a tensor's operators join the tensor's device;
- deepcopy keeps tensors that share memory sharing it (PyTorch's), layout included;
- CUDA tensors expose __cuda_array_interface__;
- __dlpack__ honours dl_device (a copy there, or BufferError) and flags copies;
- == / != with objects that hold no numbers answer by identity (PyTorch's), divmod works.
"""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tensor as T
from tensor._dlpack import parse_capsule

pytestmark = pytest.mark.usefixtures("device")


# ---------------------------------------------------------------- NumPy operands on a device

def test_numpy_operands_join_the_tensors_device(device):
    """Caught: with the default device on the CPU, `x * np.float32(2)`, `np.float64(2) + x`,
    `x == np.float64(1)` and `x + np.ones(3)` on a CUDA tensor raised "tensors are on different
    devices" (the NumPy operand became a CPU tensor)."""
    T.set_default_device("cpu")   # (the fixture restores it) tensors moved by hand, as users do
    a = np.array([0.5, 1.0, 2.0])
    x = T.asarray(a).to(device)
    cases = [
        (lambda v: v * np.float32(2), a * np.float32(2)),
        (lambda v: np.float64(2) + v, np.float64(2) + a),
        (lambda v: v == np.float64(1), a == np.float64(1)),
        (lambda v: np.float64(1) < v, np.float64(1) < a),
        (lambda v: v + np.ones(3), a + np.ones(3)),
        (lambda v: v - np.array(2.0), a - np.array(2.0)),
        (lambda v: np.int64(3) ** v, np.int64(3) ** a),
        (lambda v: np.maximum(np.float64(1), v), np.maximum(np.float64(1), a)),
        (lambda v: v + [1.0, 2.0, 3.0], a + [1.0, 2.0, 3.0]),         # lists join it too
        (lambda v: (1, 0, 2) * v, (1, 0, 2) * a),
    ]
    for f, want in cases:
        r = f(x)
        assert isinstance(r, T.Tensor) and r.device == x.device
        np.testing.assert_array_equal(r.numpy(), want)
        assert r.dtype.name == want.dtype.name      # NumPy 2's promotion of NumPy scalars
    y = x.copy()
    y += np.float64(1)
    np.testing.assert_array_equal(y.numpy(), a + 1)


# ---------------------------------------------------------------- deepcopy

def test_deepcopy_keeps_memory_sharing_and_layout(device):
    """Caught: deepcopy({'a': a, 'v': a[2:5]}) gave two unrelated tensors, so a write through the
    copied base did not reach the copied view (PyTorch's deepcopy keeps them sharing)."""
    a = T.arange(10.0)
    box = copy.deepcopy({"a": a, "v": a[2:5], "t": a.reshape(2, 5).T, "b": T.broadcast_to(a[:3], (2, 3))})
    c = box["a"]
    assert not T.shares_memory(c, a)
    c[3] = 100.0
    assert box["v"].tolist() == [2.0, 100.0, 4.0]
    assert box["t"].strides == (1, 5) and box["t"][3, 0].item() == 100.0
    assert box["b"].flags.writeable is False and box["b"].strides == (0, 1)
    assert a[3].item() == 3.0                          # the original is untouched
    w = T.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    ws = copy.deepcopy([w, w])
    assert ws[0] is ws[1] and ws[0].requires_grad and ws[0].is_leaf
    np.testing.assert_array_equal(ws[0].grad.numpy(), [2.0, 2.0, 2.0])
    z = copy.copy(a[2:5])                               # copy.copy stays a compact copy (NumPy's)
    assert z.strides == (1,) and z.tolist() == [2.0, 3.0, 4.0] and not T.shares_memory(z, a)


def test_deepcopy_sharing_matches_torch():
    torch = pytest.importorskip("torch")
    base = np.arange(12.0)
    ours = T.asarray(base.copy())
    ref = torch.tensor(base.copy())
    mine = copy.deepcopy([ours, ours[4:8], ours.reshape(3, 4)[:, 1]])
    theirs = copy.deepcopy([ref, ref[4:8], ref.reshape(3, 4)[:, 1]])
    mine[0][5] = -1.0
    theirs[0][5] = -1.0
    for m, t in zip(mine, theirs):
        np.testing.assert_array_equal(m.numpy(), t.numpy())
        assert m.strides == t.stride()
    assert pickle.loads(pickle.dumps(ours[4:8])).tolist() == [4.0, 5.0, 6.0, 7.0]


# ---------------------------------------------------------------- __cuda_array_interface__

def test_cuda_array_interface(device):
    """Caught: CUDA tensors had no __cuda_array_interface__ (Numba's and CuPy's exchange)."""
    x = T.arange(6.0).reshape(2, 3)
    if x.device.type != "cuda":
        assert not hasattr(x, "__cuda_array_interface__")   # as PyTorch's CPU tensors
        return
    cai = x.__cuda_array_interface__
    assert cai["shape"] == (2, 3) and cai["typestr"] == np.dtype(np.float64).str
    assert cai["data"] == (x.data_ptr(), False) and cai["strides"] is None
    assert cai["version"] == 3
    t = x.T.__cuda_array_interface__
    assert t["strides"] == (8, 24) and t["data"][0] == x.data_ptr()
    assert T.broadcast_to(x[0], (2, 3)).__cuda_array_interface__["data"][1] is True
    assert T.zeros(0).__cuda_array_interface__["data"] == (0, False)
    assert T.zeros(2, dtype=T.bool).__cuda_array_interface__["typestr"] == "|b1"
    with pytest.raises(TypeError, match="bfloat16"):
        _ = T.zeros(2, dtype=T.bfloat16).__cuda_array_interface__


# ---------------------------------------------------------------- __dlpack__(dl_device=...)

class _Capsule:
    """A DLPack producer handing out one capsule made beforehand."""

    def __init__(self, capsule, dev):
        self.capsule, self.dev = capsule, dev

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.dev


def test_dlpack_dl_device_is_honoured(device):
    """Caught: dl_device was ignored for CPU tensors (a host capsule for dl_device=(2, 0) or for
    an unknown device type) and a cuda:0 tensor asked for cuda:1 handed out cuda:0 memory."""
    x = T.arange(4.0)
    with pytest.raises(BufferError, match="dl_device"):
        x.__dlpack__(dl_device=(7, 0))
    with pytest.raises(BufferError, match="dl_device"):
        x.__dlpack__(dl_device=(1, 3))
    host = np.from_dlpack(_Capsule(x.__dlpack__(dl_device=(1, 0)), (1, 0)))
    assert host.tolist() == [0.0, 1.0, 2.0, 3.0]
    if x.device.type == "cuda":
        with pytest.raises(BufferError, match="copy=False"):
            x.__dlpack__(dl_device=(1, 0), copy=False)
        with pytest.raises(BufferError, match="cuda:7"):
            x.__dlpack__(dl_device=(2, 7))
        h = T.arange(3.0, device="cpu")
        v = parse_capsule(h.__dlpack__(dl_device=(2, 0), max_version=(1, 0)))
        assert v.device_type == 2 and v.is_copied and v.ptr != h.data_ptr()
        v.release()
    v = parse_capsule(x.__dlpack__(max_version=(1, 0), copy=True))
    assert v.is_copied and v.ptr != x.data_ptr()
    v.release()
    v = parse_capsule(x.__dlpack__(max_version=(1, 0)))
    assert not v.is_copied and v.ptr == x.data_ptr()
    v.release()


# ---------------------------------------------------------------- Python protocols

def test_eq_with_objects_that_hold_no_numbers(device):
    """Caught: `x == "auto"` raised TypeError (PyTorch: False, by Python's identity fallback)."""
    x = T.arange(3.0)
    assert (x == "auto") is False and (x != "auto") is True
    assert (x == {}) is False and (x == object()) is False
    assert "a" not in [x] and x not in ["a", None]
    assert (x == [0.0, 1.0, 5.0]).tolist() == [True, True, False]   # sequences still compare
    with pytest.raises(TypeError, match="str"):
        T.equal(x, "auto")                                      # the function still refuses
    with pytest.raises(TypeError):
        x < "auto"  # noqa: B015


def test_divmod_and_three_argument_pow(device):
    """Caught: divmod(tensor, 2) was unsupported (NumPy's arrays take it) and pow(t, 2, 5) failed
    with an internal signature error."""
    a = np.array([7.5, -3.0, 4.0])
    x = T.asarray(a)
    for got, want in ((divmod(x, 2), divmod(a, 2)), (divmod(7.0, x), divmod(7.0, a))):
        for g, w in zip(got, want):
            assert isinstance(g, T.Tensor)
            np.testing.assert_array_equal(g.numpy(), w)
    qi, ri = divmod(T.tensor([7, -7]), T.tensor([2, 2]))
    assert qi.tolist() == [3, -4] and ri.tolist() == [1, 1]
    with pytest.raises(TypeError, match="unsupported operand"):
        pow(T.tensor(3), 2, 5)
    assert (T.tensor(3) ** 2).item() == 9 and pow(T.tensor(3), 2).item() == 9


def test_imatmul_is_differentiable(device):
    """Caught: `y @= x` on a tensor in a graph raised at backward ("a tensor saved by 'matmul'
    ... was modified by an in-place operation"): the product saved y, which the write changed."""
    w0 = np.array([[1.0, 2.0], [-1.0, 0.5]])
    x0 = np.array([[0.5, -1.0], [2.0, 1.0]])
    for case in ("x", "y", "y.T"):
        w = T.asarray(w0).requires_grad_()
        x = T.asarray(x0).requires_grad_()
        y = w * 1.0
        other = {"x": x, "y": y, "y.T": y.T}[case]
        want = (w0 @ {"x": x0, "y": w0, "y.T": w0.T}[case])
        y @= other
        np.testing.assert_allclose(y.detach().numpy(), want)
        (y * y).sum().backward()
        g = 2 * want                                     # d(sum y**2)/dy
        gw = {"x": g @ x0.T, "y": g @ w0.T + w0.T @ g, "y.T": g @ w0 + g.T @ w0}[case]
        np.testing.assert_allclose(w.grad.numpy(), gw)
        if case == "x":
            np.testing.assert_allclose(x.grad.numpy(), w0.T @ g)
    a = T.asarray(x0.copy())
    b = a
    a @= a                                               # no autograd: in place, NumPy's values
    assert b is a
    np.testing.assert_allclose(a.numpy(), x0 @ x0)


def test_errors_on_arrays_made_from_our_capsules_are_not_lost():
    """Caught: NumPy (or PyTorch) freeing an array made from our capsule while an exception was
    pending (an operation on the temporary raised) called our deleter with the error set; the
    ctypes callback cleared it, and the caller got "SystemError: error return without exception
    set" instead of NumPy's ValueError / IndexError."""
    ro = T.broadcast_to(T.arange(3.0, device="cpu"), (2, 3))
    with pytest.raises(ValueError, match="read-only"):
        np.from_dlpack(ro)[0, 0] = 1.0
    with pytest.raises(IndexError):
        np.from_dlpack(T.arange(3.0, device="cpu"))["a"]
    a = np.from_dlpack(T.arange(3.0, device="cpu"))                     # the ordinary path still frees it
    assert a.tolist() == [0.0, 1.0, 2.0]
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError):
        torch.from_dlpack(T.arange(3.0, device="cpu"))[("a",)]


def test_ufunc_at_writes_into_the_tensor_or_refuses(device):
    """Caught: np.add.at(t, ...) on a read-only tensor (a broadcast view) wrote into it (NumPy's
    ufunc.at skips the writeable check), and on a CUDA tensor it wrote into a host copy: the
    tensor silently stayed unchanged."""
    t = T.zeros(3)
    ro = T.broadcast_to(T.zeros(3), (2, 3))
    with pytest.raises(ValueError, match="read-only"):
        np.add.at(ro, ([0], [0]), 1.0)
    assert ro.tolist() == [[0.0, 0.0, 0.0]] * 2
    if t.numpy().__array_interface__["data"][0] == t.data_ptr():   # host memory: in place
        np.add.at(t, [0, 0, 2], 1.0)
        a = np.zeros(3)
        np.add.at(a, [0, 0, 2], 1.0)
        np.testing.assert_array_equal(t.numpy(), a)
    else:
        with pytest.raises(TypeError, match="index_add_"):
            np.add.at(t, [0, 0, 2], 1.0)
        assert t.tolist() == [0.0, 0.0, 0.0]


def test_array_protocol_converts_bfloat16_to_an_asked_dtype(device):
    """Caught: np.asarray(bf16_tensor, dtype=np.float32) raised "NumPy has no bfloat16" although
    a NumPy dtype was asked for (without ml_dtypes installed)."""
    b = T.tensor([1.5, -2.25, 3.0], dtype=T.bfloat16)
    np.testing.assert_array_equal(np.asarray(b, dtype=np.float32), [1.5, -2.25, 3.0])
    np.testing.assert_array_equal(np.array(b[::2], dtype=np.float64), [1.5, 3.0])
    with pytest.raises(ValueError, match="copy=False"):
        np.array(b, dtype=np.float32, copy=False)
