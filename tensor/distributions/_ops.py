"""The namespace the distributions call as `T.`: tensor's public (recorded, differentiable)
functions, then creation, dtypes, conversion and the random and linalg modules. (A module inside
tensor/ cannot import the package `tensor` itself without an import circle.)"""
from __future__ import annotations

from .. import array_api, convert, creation, dtypes, linalg, random, special, views  # noqa: F401  (T.linalg ...)
from .._tensor import Tensor  # noqa: F401  (T.Tensor)
from ..optable import T as _PUB

_SOURCES = (dtypes, creation, convert, views, array_api)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        value = getattr(_PUB, name)
    except AttributeError:
        for src in _SOURCES:
            if hasattr(src, name):
                value = getattr(src, name)
                break
        else:
            raise AttributeError(f"tensor.distributions: no tensor function {name!r}") from None
    globals()[name] = value
    return value
