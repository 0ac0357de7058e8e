"""Lead's fixes of the twelfth session."""
import numpy as np
import pytest

import tensor as T


def test_numpy_reads_our_dtypes():
    assert np.dtype(T.float32) == np.float32 and np.dtype(T.complex64) == np.complex64
    assert np.zeros(2, T.int8).dtype == np.int8
    assert np.array([1, 2], dtype=T.uint16).dtype == np.uint16
    with pytest.raises(TypeError):
        np.dtype(T.bfloat16)   # no NumPy twin
    assert T.float32.dtype == np.float32


def test_numpy_text_forms_of_a_tensor():
    x = T.arange(6.0).reshape(2, 3)[:, ::2]
    assert np.array_repr(x) == "Tensor([[0., 2.],\n        [3., 5.]])"
    assert np.array_str(x) == np.array_str(x.numpy())


@pytest.mark.parametrize("make", [lambda: T.zeros(3), lambda: T.ones(3), lambda: T.full((2,), 3.0),
                                  lambda: T.tensor([1.0, 2.0]), lambda: T.eye(2), lambda: T.linspace(0, 1, 3),
                                  lambda: T.ones(2).astype(T.int32), lambda: T.ones(2).clone(),
                                  lambda: T.ones((2, 2)).T.copy(), lambda: T.arange(3.0)])
def test_a_new_tensor_has_version_0(make):
    t = make()
    assert t._version == 0   # PyTorch's: no in-place write yet
    t.add_(1)
    assert t._version == 1
