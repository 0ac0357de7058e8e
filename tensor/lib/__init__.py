"""NumPy's numpy.lib namespace, the part NumPy scripts reach for: `tensor.lib.stride_tricks`
(sliding_window_view, as_strided with byte strides)."""
from . import stride_tricks

__all__ = ["stride_tricks"]
