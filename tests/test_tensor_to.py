"""Tensor.to / .cuda / .cpu with PyTorch's whole argument set: a device as a string, Device or
CUDA index, another tensor's device and dtype, non_blocking and copy by keyword or position.
(`x.to(device, non_blocking=True)` is in most PyTorch training loops; it raised TypeError.)"""
import pytest

import tensor as T


def test_to_arguments(device):
    x = T.arange(3.0, device="cpu")
    other = T.ones(2, dtype=T.int32, device=device)
    y = x.to(device, non_blocking=True)
    assert y.device == other.device and y.tolist() == [0.0, 1.0, 2.0]
    z = x.to(other)
    assert (z.device, z.dtype, z.tolist()) == (other.device, T.int32, [0, 1, 2])
    w = x.to(device, T.float32, True)        # (device, dtype, non_blocking)
    assert (w.device, w.dtype) == (other.device, T.float32)
    assert x.to(device=device, dtype=T.float32, non_blocking=False, copy=True).dtype is T.float32
    if device == "cuda":
        assert x.to(0).device == other.device and x.cuda(0).device == other.device
        assert x.cuda(non_blocking=True).device == other.device
        assert x.cuda(T.device("cuda:0")).device == other.device
        assert y.cpu().device == x.device == T.device("cpu")
        assert y.to("cpu", non_blocking=True).tolist() == [0.0, 1.0, 2.0]


def test_copy_flag_positional_and_errors():
    x = T.ones(3)
    assert x.to("cpu") is x
    c = x.to("cpu", False, True)             # (device, non_blocking, copy)
    assert c is not x and c.tolist() == x.tolist()
    c[0] = 5.0
    assert x[0].item() == 1.0
    with pytest.raises(TypeError, match="at most two bool"):
        x.to(True, False, True)
