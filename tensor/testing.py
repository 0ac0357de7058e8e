"""NumPy's numpy.testing assertions for tensors: the arguments (tensors, or lists / tuples of
them) read on the host, then NumPy's own assertion, so its messages and tolerances are kept.

>>> import tensor as T
>>> T.testing.assert_allclose(T.asarray([1.0, 2.0]), [1.0, 2.0 + 1e-9])
"""
from __future__ import annotations

import functools

import numpy.testing as _npt

from ._tensor import Tensor


def _host(v):
    if isinstance(v, Tensor):
        return v.numpy()
    if isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
        return type(v)(_host(x) for x in v)
    return v


def _wrap(name: str):
    npfn = getattr(_npt, name)

    @functools.wraps(npfn)
    def check(actual, desired, *args, **kwargs):
        return npfn(_host(actual), _host(desired), *args, **kwargs)
    return check


assert_allclose = _wrap("assert_allclose")
assert_array_equal = _wrap("assert_array_equal")
assert_equal = _wrap("assert_equal")
assert_array_almost_equal = _wrap("assert_array_almost_equal")
assert_almost_equal = _wrap("assert_almost_equal")
assert_array_less = _wrap("assert_array_less")
assert_array_almost_equal_nulp = _wrap("assert_array_almost_equal_nulp")
assert_raises = _npt.assert_raises
assert_raises_regex = _npt.assert_raises_regex
assert_warns = _npt.assert_warns
