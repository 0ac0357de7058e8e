"""The convolution and pooling kernels behind nn/conv.py and nn/_fused_ops.py (col2im, im2col,
max pooling's backward) against the compositions they replace, bit for bit, on both devices."""
from __future__ import annotations

import numpy as np
import pytest

import autograd
import tensor as T
from nn import conv as C
from nn import functional as F

# (N, C, H, W, kernel, stride, dilation, ((top, bottom), (left, right)))
CASES = [(2, 3, 5, 6, (3, 3), (1, 1), (1, 1), ((1, 1), (1, 1))),
         (2, 2, 7, 5, (3, 2), (2, 1), (1, 1), ((0, 2), (2, 0))),
         (1, 2, 6, 6, (2, 2), (2, 2), (2, 2), ((1, 1), (1, 1))),
         (3, 1, 4, 4, (3, 3), (1, 1), (1, 1), ((0, 0), (0, 0))),
         (1, 4, 9, 7, (2, 3), (3, 2), (1, 2), ((2, 1), (0, 3)))]


def _slabs(cols: np.ndarray, size, stride, dilation, padding) -> np.ndarray:
    """col2im as strided slab additions in (i, j) order on a zero canvas, then the crop."""
    c, kh, kw, n, oh, ow = cols.shape
    (sh, sw), (dh, dw), ((pt, pb), (pl, pr)) = stride, dilation, padding
    out = np.zeros((n, c, size[0] + pt + pb, size[1] + pl + pr), cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + sh * oh:sh, j * dw:j * dw + sw * ow:sw] += \
                cols[:, i, j].transpose(1, 0, 2, 3)
    return out[:, :, pt:pt + size[0], pl:pl + size[1]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES)
def test_col2im_is_the_slab_sum(device, dtype, case):
    n, c, h, w, k, s, d, p = case
    rng = np.random.default_rng(n * 7 + h)
    x = T.tensor(rng.standard_normal((n, c, h, w)), dtype=dtype)
    cols = C._im2col(x, k, s, p, d)
    g = rng.standard_normal(cols.shape).astype(dtype)
    got = C._col2im(T.tensor(g), (h, w), s, p, d)
    want = _slabs(g, (h, w), s, d, p)
    assert got.shape == want.shape and got.numpy().tobytes() == want.tobytes()
    # and im2col gathers the windows of the padded input
    xp = np.pad(x.numpy(), ((0, 0), (0, 0), p[0], p[1]))
    oh, ow = cols.shape[4:]
    for i in range(k[0]):
        for j in range(k[1]):
            win = xp[:, :, i * d[0]:i * d[0] + s[0] * oh:s[0], j * d[1]:j * d[1] + s[1] * ow:s[1]]
            np.testing.assert_array_equal(cols.numpy()[:, i, j], win.transpose(1, 0, 2, 3))


@pytest.mark.parametrize("kernel,stride", [((2, 2), (2, 2)), ((3, 3), (1, 1)), ((3, 2), (2, 1))])
def test_max_pool_backward_is_the_ordered_scatter(device, kernel, stride):
    """Overlapping windows send several gradients to one input: added in output order."""
    rng = np.random.default_rng(3)
    xv = np.round(rng.standard_normal((2, 3, 9, 8)), 1).astype(np.float32)   # ties included
    x = T.tensor(xv, requires_grad=True)
    y = F.max_pool2d(x, kernel, stride)
    assert y.grad_fn.name == "max_pool2d_fast"   # the kernel's path
    gv = rng.standard_normal(y.shape).astype(np.float32)
    y.backward(T.tensor(gv))
    _, idx = F.max_pool2d(T.tensor(xv), kernel, stride, return_indices=True)
    want = np.zeros((6, 72), np.float32)
    flat_i, flat_g = idx.numpy().reshape(6, -1), gv.reshape(6, -1)
    for p in range(6):
        for o in range(flat_i.shape[1]):
            want[p, flat_i[p, o]] += flat_g[p, o]
    assert x.grad.numpy().reshape(6, 72).tobytes() == want.tobytes()


def test_max_pool_double_backward_keeps_the_scatter():
    x = T.tensor(np.random.default_rng(0).standard_normal((1, 1, 4, 4)), requires_grad=True)
    y = F.max_pool2d(x, 2)
    g = T.ones(y.shape, dtype=T.float64, requires_grad=True)
    (gx,) = autograd.grad(y, [x], g, create_graph=True)
    assert gx.requires_grad
    (gg,) = autograd.grad(gx.sum(), [g])
    np.testing.assert_array_equal(gg.numpy(), np.ones((1, 1, 2, 2)))
