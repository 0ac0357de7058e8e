"""The lead's fixes of the sixth hunt's session, each test naming what failed before."""
from __future__ import annotations

import numpy as np
import pytest

import tensor as T


def test_diff_takes_n_and_axis_positionally_and_dim(device):
    """diff(x, 2) raised TypeError (n and axis were keyword-only); NumPy and PyTorch take them
    positionally in this order, and PyTorch names the axis dim."""
    a = np.arange(24.0).reshape(4, 6) ** 2
    x = T.asarray(a, device=device)
    np.testing.assert_array_equal(T.diff(x, 2).numpy(), np.diff(a, 2))
    np.testing.assert_array_equal(T.diff(x, 1, 0).numpy(), np.diff(a, 1, 0))
    np.testing.assert_array_equal(T.diff(x, dim=0, n=2).numpy(), np.diff(a, 2, axis=0))
    np.testing.assert_array_equal(x.diff(1, 0).numpy(), np.diff(a, 1, 0))
    with pytest.raises(TypeError, match="diff: give axis or dim"):
        T.diff(x, axis=0, dim=1)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_copy_and_sparse(device, indexing):
    """meshgrid had neither copy= (NumPy's writable grids) nor sparse=."""
    xs = [np.arange(3.0), np.arange(2.0) + 10, np.arange(4.0) - 5]
    ts = [T.asarray(v, device=device) for v in xs]
    for sparse in (False, True):
        got = T.meshgrid(*ts, indexing=indexing, sparse=sparse, copy=True)
        want = np.meshgrid(*xs, indexing=indexing, sparse=sparse, copy=True)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g.numpy(), w)
    g = T.meshgrid(*ts, indexing=indexing, copy=True)
    g[0][0, 0, 0] = 99.0                   # writable, one element of its own memory
    assert int((g[0].numpy() == 99.0).sum()) == 1 and ts[0][0].item() == 0.0
    views = T.meshgrid(*ts, indexing=indexing)
    with pytest.raises(ValueError, match="read-only"):
        views[0][0, 0, 0] = 1.0
