"""Devices. The CPU is always there; CUDA devices come with the CUDA backend.

>>> from tensor import device
>>> device("cpu")
device(type='cpu')
"""
from __future__ import annotations


class DeviceError(RuntimeError):
    """A device that was asked for is not available (no driver, no GPU, bad index)."""


class Device:
    __slots__ = ("type", "index")

    def __init__(self, type: str, index: int | None = None):  # noqa: A002 - PyTorch's name
        self.type, self.index = type, index

    def __repr__(self) -> str:
        return f"device(type={self.type!r})" if self.index is None else \
            f"device(type={self.type!r}, index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (ValueError, DeviceError):
                return False
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = Device("cpu")


def _cuda_unavailable(spec: str) -> DeviceError:
    try:
        from cuda.bindings import driver  # noqa: F401
    except ImportError:
        why = "the cuda-python package (cuda.bindings) is not installed"
    else:
        import ctypes.util
        why = ("no NVIDIA driver was found (libcuda could not be located)"
               if ctypes.util.find_library("cuda") is None else
               "the CUDA backend is not part of this build yet")
    return DeviceError(f"device {spec!r}: CUDA is not available: {why}. Use device='cpu'.")


def device(spec=None) -> Device:
    """Parse 'cpu', 'cuda', 'cuda:1' or a Device; None means the CPU."""
    if spec is None:
        return CPU
    if isinstance(spec, Device):
        if spec.type == "cpu":
            return CPU
        raise _cuda_unavailable(str(spec))
    if not isinstance(spec, str):
        raise TypeError(f"device: expected a string like 'cpu' or 'cuda:0', got {type(spec).__name__}")
    kind, _, idx = spec.partition(":")
    if kind == "cpu" and not idx:
        return CPU
    if kind == "cuda" and (not idx or idx.isdigit()):
        raise _cuda_unavailable(spec)
    raise ValueError(f"device: unknown device {spec!r}; expected 'cpu', 'cuda' or 'cuda:N'")
