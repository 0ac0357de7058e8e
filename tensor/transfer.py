"""Copies between devices: Tensor.to(device), .cuda(), .cpu().

Host -> device: the tensor is made contiguous on the host and copied with one async memcpy
on the current stream. Device -> host: the tensor is made contiguous on the device (a copy
kernel: the staging copy), then copied and the stream synchronized before the host reads.

>>> import tensor as T
>>> x = T.arange(3.0)
>>> x.to("cpu") is x
True
"""
from __future__ import annotations

from . import elementwise as ew
from ._tensor import Tensor
from .device import device as parse_device


def to_device(x: Tensor, device) -> Tensor:
    """x on `device` (x itself when it is already there)."""
    dev = parse_device(device)
    src = x._storage.device
    if dev == src:
        return x
    from .cuda import runtime as R
    if src.type == "cpu":              # host -> device
        h = ew.contiguous(x)
        out = ew.empty_tensor(x._shape, x._dtype, dev)
        R.memcpy_htod(R.device_state(dev.index), out.data_ptr(), h.data_ptr(), h.nbytes)
        return out
    d = ew.contiguous(x)               # device -> host (staging copy on the device)
    host = ew.empty_tensor(x._shape, x._dtype)
    R.memcpy_dtoh(R.device_state(src.index), host.data_ptr(), d.data_ptr(), d.nbytes)
    return host if dev.type == "cpu" else to_device(host, dev)
