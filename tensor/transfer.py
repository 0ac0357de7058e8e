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
from .backend import backend_for
from .device import CPU
from .device import device as parse_device


def to_device(x: Tensor, device) -> Tensor:
    """x on `device` (x itself when it is already there)."""
    dev = parse_device(device)
    src = x._storage.device
    if dev == src:
        return x
    if src is CPU:                     # host -> device
        out = ew.empty_tensor(x._shape, x._dtype, dev)
        backend_for(dev).copy_from_host(out, ew.contiguous(x))
        return out
    host = ew.empty_tensor(x._shape, x._dtype, CPU)
    backend_for(src).copy_to_host(host, ew.contiguous(x))   # (a staging copy on the device first)
    return host if dev is CPU else to_device(host, dev)
