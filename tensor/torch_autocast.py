"""Autocast for PyTorch's matrix products with an added input (addmm, addmv, addbmm, baddbmm,
addr) and mm, bmm, mv (tensor/torch_extra.py): PyTorch runs them as one lower-precision op, so
inside a region every floating input (not float64) is cast together to the region's dtype and
the result is 16-bit, where the composition alone would meet a float32 input and a 16-bit
product. PyTorch's CPU list leaves out mv, addmv and addr: on the CPU those run in their inputs'
dtypes, the product inside them too.

>>> import tensor as T
>>> a = T.ones((2, 2), dtype=T.float32)
>>> with T.autocast("cpu"):
...     r, v = T.addmm(a, a, a), T.addmv(a[0], a, a[0])
>>> r.dtype.name, v.dtype.name
('bfloat16', 'float32')
"""
from __future__ import annotations

import inspect

from . import amp
from ._tensor import Tensor


def autocast_class(cpu: bool):
    """PyTorch's autocast class for a product: lower precision (floating inputs but float64 cast
    together to the region's dtype, as the table's matmul) on CUDA, and on the CPU where cpu is
    True; else (mv, addmv, addr on the CPU) their inputs' dtypes, the inner matmul's too."""
    def deco(fn):
        low = amp.autocast_op("matmul")(fn)

        def run(input, *args, **kwargs):
            dev = input.device.type if isinstance(input, Tensor) else None
            if dev is None or not amp.is_autocast_enabled(dev):
                return fn(input, *args, **kwargs)
            if cpu or dev != "cpu":
                return low(input, *args, **kwargs)
            with amp.suspended():
                return fn(input, *args, **kwargs)
        run.__name__, run.__qualname__, run.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        run.__signature__ = inspect.signature(fn)   # not functools.wraps: no __wrapped__ on a composite
        return run
    return deco
