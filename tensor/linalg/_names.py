"""`T`: the names tensor.linalg calls, as `tensor.T...` would give them, without importing the
`tensor` package itself (a module-level import circle): the public recorded ops through
optable's late-bound table, and the creation functions and inspection helpers they need."""
from __future__ import annotations

from ..array_api import finfo
from ..convert import asarray
from ..creation import arange, eye, ones, ones_like, zeros, zeros_like
from ..optable import T as _P
from ..views import broadcast_shapes

_EXTRA = {"arange": arange, "asarray": asarray, "broadcast_shapes": broadcast_shapes, "eye": eye,
          "finfo": finfo, "ones": ones, "ones_like": ones_like, "zeros": zeros,
          "zeros_like": zeros_like}


class _Names:
    def __getattr__(self, name):
        f = _EXTRA.get(name)
        return f if f is not None else getattr(_P, name)


T = _Names()
