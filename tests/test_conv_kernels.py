"""The convolution and pooling kernels behind nn/conv.py and nn/_fused_ops.py (col2im, im2col,
max pooling's backward) against the compositions they replace, bit for bit, on both devices."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd
import nn
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
    assert y.grad_fn.op == "max_pool2d_fast"   # the kernel's path
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


def test_max_pool_maximum_equal_to_the_padding_value_stays_in_the_input(device):
    """A padding cell won every tie with a maximum equal to the padding value (0 for unsigned,
    -inf for floats): its index pointed into the padding and its gradient was dropped.
    Expected values: PyTorch's."""
    _, idx = F.max_pool2d(T.zeros((1, 1, 3, 3), dtype=T.uint8), 3, 1, 1, return_indices=True)
    assert idx.reshape(-1).tolist() == [0, 0, 1, 0, 0, 1, 3, 3, 4]
    x = T.full((1, 1, 3), -math.inf, dtype=T.float64).requires_grad_()
    y, idx = F.max_pool1d(x, 3, 1, 1, return_indices=True)
    assert idx.tolist() == [[[0, 0, 1]]]
    y.sum().backward()
    assert x.grad.tolist() == [[[2.0, 1.0, 0.0]]]
    x = T.tensor([[[[-math.inf, 1.0], [-math.inf, -math.inf]]]], dtype=T.float64).requires_grad_()
    y, idx = F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
    assert idx.reshape(-1).tolist() == [1, 1, 2, 3]
    assert y.reshape(-1).tolist() == [1.0, 1.0, -math.inf, -math.inf]
    y.sum().backward()
    assert x.grad.reshape(-1).tolist() == [0.0, 2.0, 1.0, 1.0]
    x = T.full((1, 1, 2, 2), -math.inf, dtype=T.float64).requires_grad_()
    y, idx = F.max_pool2d(x, 3, 1, 1, return_indices=True)
    y.sum().backward()
    assert idx.reshape(-1).tolist() == [0, 0, 0, 0] and x.grad.reshape(-1).tolist() == [4.0, 0, 0, 0]


def test_window_arguments_are_checked(device):
    """unfold with a negative stride ran forever; zero strides divided by zero; zero or
    negative dilation, padding and transposed-convolution strides gave garbage."""
    x = T.ones((1, 1, 4, 4))
    bad = [lambda: F.unfold(x, 2, stride=-1), lambda: F.unfold(x, 2, stride=0),
           lambda: F.unfold(x, 2, dilation=0), lambda: F.unfold(x, 2, padding=-1), lambda: F.unfold(x, 5),
           lambda: F.fold(T.ones((1, 4, 9)), (4, 4), 2, stride=0),
           lambda: F.fold(T.ones((1, 4, 9)), (1, 1), 2),
           lambda: F.conv_transpose2d(x, T.ones((1, 1, 3, 3)), stride=-1),
           lambda: F.conv_transpose2d(x, T.ones((1, 1, 3, 3)), dilation=0),
           lambda: nn.MaxPool2d(2, stride=0)(x)]
    for f in bad:
        with pytest.raises(ValueError, match="positive|non-negative|smaller than the kernel"):
            f()


def test_embedding_max_norm_with_the_infinity_norm(device):
    w = T.tensor([[3.0, -4.0], [0.1, 0.2]], dtype=T.float64)
    out = F.embedding(T.tensor([0, 1]), w, max_norm=1.0, norm_type=math.inf)
    np.testing.assert_allclose(out.numpy(), [[0.75, -1.0], [0.1, 0.2]], rtol=1e-6)   # max |x| was taken as 1
    np.testing.assert_allclose(w.numpy(), [[0.75, -1.0], [0.1, 0.2]], rtol=1e-6)   # renormed in place
