"""Devices. The CPU is always there; CUDA devices come with the CUDA backend.

>>> from tensor import device
>>> device("cpu")
device(type='cpu')
"""
from __future__ import annotations


class DeviceError(RuntimeError):
    """A device that was asked for is not available (no driver, no GPU, bad index)."""


class Device:
    __slots__ = ("type", "index", "_be")

    def __init__(self, type: str, index: int | None = None):  # noqa: A002 - PyTorch's name
        self.type, self.index = type, index
        self._be = None   # its backend module (tensor.backend.backend_for binds it on first use)

    def __reduce__(self):   # copies and pickles carry (type, index), not the backend module
        return (Device, (self.type, self.index))

    def __repr__(self) -> str:
        return f"device(type={self.type!r})" if self.index is None else \
            f"device(type={self.type!r}, index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if isinstance(other, str):
            try:
                other = device(other)
            except (ValueError, DeviceError):
                return False
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = Device("cpu")


_CUDA: dict = {}


def _cuda(spec: str, index: int | None) -> Device:
    """cuda / cuda:N, checked against the driver once per index (DeviceError says why not)."""
    d = _CUDA.get(index)
    if d is not None:
        return d
    from . import _hook
    if _hook.capture is not None:   # its backend would not be recorded: the capture gives up
        _hook.capture.host_read(f"a device first used during the capture ({spec})")
    from .backend import backend_for
    i = backend_for("cuda").open_device(spec, index)
    d = _CUDA.get(i) or Device("cuda", i)   # one Device object per GPU: `is` compares them
    _CUDA[i] = _CUDA[index] = d
    return d


_DEFAULT = [CPU]


def set_default_device(spec) -> None:
    """The device creation functions use when none is given (PyTorch's set_default_device):
    empty/zeros/ones/full/arange/linspace/eye/tensor/asarray and the random functions.

    >>> import tensor as T
    >>> T.set_default_device("cpu"); T.zeros(2).device
    device(type='cpu')
    """
    _DEFAULT[0] = CPU if spec is None else device(spec)


def get_default_device() -> Device:
    return _DEFAULT[0]


def device(spec=None) -> Device:
    """Parse 'cpu', 'cuda', 'cuda:1' or a Device; None means the default device (the CPU
    unless set_default_device chose another)."""
    if spec is None:
        return _DEFAULT[0]
    if isinstance(spec, Device):
        if spec.type == "cpu":
            return CPU
        return _cuda(str(spec), spec.index)
    if not isinstance(spec, str):
        raise TypeError(f"device: expected a string like 'cpu' or 'cuda:0', got {type(spec).__name__}")
    kind, _, idx = spec.partition(":")
    if kind == "cpu" and not idx:
        return CPU
    if kind == "cuda" and (not idx or idx.isdigit()):
        return _cuda(spec, int(idx) if idx else None)
    raise ValueError(f"device: unknown device {spec!r}; expected 'cpu', 'cuda' or 'cuda:N'")
