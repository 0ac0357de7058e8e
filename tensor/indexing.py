"""Indexing: basic (views) and advanced (integer arrays, boolean masks), read and write."""
from __future__ import annotations

from ._tensor import Tensor
from . import elementwise as ew
from .views import basic_index


def _is_basic(k) -> bool:
    return k is None or k is Ellipsis or isinstance(k, slice) or (
        isinstance(k, int) and not isinstance(k, bool)) or (
        hasattr(k, "__index__") and not isinstance(k, Tensor) and not hasattr(k, "shape"))


def getitem(x: Tensor, key):
    if not isinstance(key, tuple):
        key = (key,)
    if all(_is_basic(k) for k in key):
        return basic_index(x, key)
    raise NotImplementedError("advanced indexing")


def setitem(x: Tensor, key, value) -> None:
    if not isinstance(key, tuple):
        key = (key,)
    if all(_is_basic(k) for k in key):
        ew.copy_into(basic_index(x, key), ew.as_operand(value))
        return
    raise NotImplementedError("advanced indexing")
