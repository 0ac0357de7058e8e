"""Python and NumPy protocols on Tensor: copy / deepcopy / pickle keep the device (deepcopy
also .grad and requires_grad), NumPy ufuncs (`ndarray op tensor`, `np.exp(t)`, in-place writes
into an ndarray), and format specs of 0-d tensors."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tensor as T

pytestmark = pytest.mark.usefixtures("device")


def test_copy_deepcopy_and_pickle_keep_the_device_and_values():
    for dtype in (T.float32, T.bfloat16, T.int64, T.complex128, T.bool):
        x = T.asarray(np.arange(6).reshape(2, 3) % 3).astype(dtype)
        want = x.astype(T.float64).numpy() if dtype is T.bfloat16 else x.numpy()
        for y in (copy.copy(x), copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
            assert y.device == x.device and y.dtype is dtype and y.shape == x.shape
            got = y.astype(T.float64).numpy() if dtype is T.bfloat16 else y.numpy()
            np.testing.assert_array_equal(got, want)
    y = copy.copy(x.mT)
    y[0, 0] = True                      # a copy: its own memory
    assert x.mT[0, 0].item() is False


def test_deepcopy_keeps_grad_and_shares_within_one_copy():
    w = T.ones(2, dtype=T.float64, requires_grad=True)
    (w * 2).sum().backward()
    box = copy.deepcopy({"a": w, "b": w})
    c = box["a"]
    assert c is box["b"] and c.requires_grad and c.is_leaf and c is not w
    np.testing.assert_array_equal(c.grad.numpy(), [2.0, 2.0])
    assert c.grad.device == w.device and pickle.loads(pickle.dumps(w)).requires_grad


def test_numpy_ufuncs_on_tensors():
    t = T.asarray([1.0, 2.0, 3.0])
    for r in (np.zeros(3) + t, np.exp(t), np.maximum(t, np.ones(3)), np.float64(2) * t):
        assert isinstance(r, T.Tensor) and r.device == t.device
    np.testing.assert_allclose(np.exp(t).numpy(), np.exp([1.0, 2.0, 3.0]))
    x = T.asarray([0.5, 1.0], dtype=T.float64).requires_grad_()
    y = np.sin(x)                                       # recorded: a gradient flows
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.0]))
    a = np.zeros(3)
    ref = a
    a += t                                              # NumPy's in-place: the array itself
    assert a is ref and a.tolist() == [1.0, 2.0, 3.0]
    b = np.zeros(3, dtype=np.int64)
    with pytest.raises(TypeError, match="same_kind"):   # NumPy's casting rule holds
        b += t
    assert np.add.reduce(t) == 6.0                      # other methods run in NumPy
    out = np.empty(3)
    np.multiply(t, 2, out=out)
    assert out.tolist() == [2.0, 4.0, 6.0]


def test_format_specs():
    assert f"{T.asarray(3.14159):.2f}" == "3.14" and f"{T.asarray(7):>3d}" == "  7"
    assert f"{T.asarray([1.0, 2.0])}" == str(T.asarray([1.0, 2.0]))
    with pytest.raises(TypeError, match="only 0-d tensors take a format spec"):
        f"{T.asarray([1.0]):.2f}"
